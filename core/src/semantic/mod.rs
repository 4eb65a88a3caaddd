//! Search by meaning, offline: a static embedding model (potion-base-8M,
//! Model2Vec, MIT, Minish Lab; core/assets/semantic, made by
//! scripts/semantic-model.py) turns a text into a vector as the mean of its
//! tokens' vectors — a table lookup, no ML runtime — and a lexical score (BM25)
//! keeps exact names and rare words in reach; the two rankings are fused
//! (search.rs). English only. Native builds only: the plugin's wasm engine
//! refuses the operations (ops/semantic.rs).

pub mod search;
pub mod tokenizer;

use tokenizer::Vocab;

/// The format of the model file: magic, rows, dims, scales, int8 rows.
const MAGIC: &[u8] = b"DNSEMB1\n";

pub struct Model {
    pub vocab: Vocab,
    dims: usize,
    scales: Vec<f32>,
    rows: Vec<i8>,
}

impl Model {
    /// The model from its vocabulary (vocab.txt) and vectors (the .i8 file).
    pub fn parse(vocab: &str, vectors: &[u8]) -> Result<Model, String> {
        let bad = || "the semantic model's vectors are damaged: not a DNSEMB1 file".to_string();
        let body = vectors.strip_prefix(MAGIC).ok_or_else(bad)?;
        let u32_at = |i: usize| body.get(i..i + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
        let (rows, dims) = (u32_at(0).ok_or_else(bad)?, u32_at(4).ok_or_else(bad)?);
        let scales_at = 8;
        let rows_at = scales_at + rows * 4;
        if body.len() != rows_at + rows * dims {
            return Err(bad());
        }
        let scales =
            body[scales_at..rows_at].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        let vocab = Vocab::parse(vocab);
        if vocab.len() != rows {
            return Err(format!("the semantic model has {rows} vectors for {} tokens", vocab.len()));
        }
        Ok(Model { vocab, dims, scales, rows: body[rows_at..].iter().map(|b| *b as i8).collect() })
    }

    /// The model this project vendors (native builds only: the plugin's wasm is
    /// kept small, and this module is not in it).
    pub fn builtin() -> &'static Model {
        static MODEL: std::sync::OnceLock<Model> = std::sync::OnceLock::new();
        MODEL.get_or_init(|| {
            let vocab = include_str!("../../assets/semantic/vocab.txt");
            let vectors = include_bytes!("../../assets/semantic/potion-base-8M.i8");
            Model::parse(vocab, vectors).expect("the vendored model is whole")
        })
    }

    pub fn dims(&self) -> usize {
        self.dims
    }

    /// A text's vector: the mean of its tokens' vectors (`[UNK]` left out),
    /// of length 1; all zeros for a text with no known token.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let ids: Vec<u32> = self.vocab.encode(text).into_iter().filter(|i| *i != self.vocab.unk).collect();
        let mut sum = vec![0f32; self.dims];
        for id in &ids {
            let i = *id as usize;
            let scale = self.scales[i];
            for (s, q) in sum.iter_mut().zip(&self.rows[i * self.dims..(i + 1) * self.dims]) {
                *s += *q as f32 * scale;
            }
        }
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            sum.iter_mut().for_each(|x| *x /= norm);
        }
        sum
    }
}

/// The cosine of two vectors of length 1 (or zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Every note of the vault ready for search, each as of its hash: brought up to
/// date by embedding only the notes added or changed since.
pub struct Index {
    pub corpus: search::Corpus,
    hashes: std::collections::HashMap<String, String>,
}

/// What bringing the index up to date did.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct Synced {
    pub notes: usize,
    pub passages: usize,
    pub embedded: usize,
    pub unchanged: usize,
    pub removed: usize,
}

impl Index {
    /// The index of `notes` (path, hash, text), from `old`: only the notes
    /// added or changed since are embedded, the ones gone taken out.
    pub fn sync<'a>(
        old: Option<Index>,
        model: &Model,
        notes: impl Iterator<Item = (&'a str, &'a str, &'a str)>,
    ) -> (Index, Synced) {
        let mut index = old.unwrap_or(Index { corpus: search::Corpus::default(), hashes: Default::default() });
        let mut counts = Synced::default();
        let mut seen = std::collections::HashSet::new();
        for (path, hash, text) in notes {
            seen.insert(path);
            counts.notes += 1;
            if index.hashes.get(path).is_some_and(|h| h == hash) {
                counts.unchanged += 1;
            } else {
                counts.embedded += 1;
                index.corpus.put(search::Doc::new(model, path, text));
                index.hashes.insert(path.to_string(), hash.to_string());
            }
        }
        let gone: Vec<String> = index.hashes.keys().filter(|p| !seen.contains(p.as_str())).cloned().collect();
        counts.removed = gone.len();
        for p in gone {
            index.corpus.remove(&p);
            index.hashes.remove(&p);
        }
        counts.passages = index.corpus.docs.iter().map(|d| d.passages.len()).sum();
        (index, counts)
    }
}
