//! Search by meaning, offline: a static embedding model (potion-base-8M,
//! Model2Vec, MIT, Minish Lab; core/assets/semantic, made by
//! scripts/semantic-model.py) turns a text into a vector as the mean of its
//! tokens' vectors — a table lookup, no ML runtime — and a lexical score (BM25)
//! keeps exact names and rare words in reach; the two rankings are fused
//! (search.rs). English only. The binary carries the model; the plugin's wasm
//! engine is given it by its host from the vault's store (`MODEL_FILE`), and
//! refuses the operations without it (ops/semantic.rs). The index is kept in
//! the store too (stored.rs), each device its own.

pub mod meaning;
pub mod search;
pub mod stored;
pub mod tokenizer;

use crate::texthash::TextHash;
use sha2::Digest;
use tokenizer::Vocab;

/// The format of the vectors: magic, rows, dims, scales, int8 rows.
const MAGIC: &[u8] = b"DNSEMB1\n";
/// The format of a model in one file, as a vault's store holds it for the
/// plugin (`datanotes install-model`): magic, its name and a new line, the
/// vocabulary's length (u32) and text, then the vectors.
const FILE_MAGIC: &[u8] = b"DNMODEL1\n";
/// Where a vault's store holds the model (relative to `.datanotes/`).
pub const MODEL_FILE: &str = "models/potion-base-8M.dnmodel";
/// The name of the model this project vendors.
pub const MODEL_NAME: &str = "potion-base-8M";

#[cfg(not(target_arch = "wasm32"))]
const BUILTIN: (&str, &[u8]) =
    (include_str!("../../assets/semantic/vocab.txt"), include_bytes!("../../assets/semantic/potion-base-8M.i8"));

pub struct Model {
    pub name: String,
    /// The first 16 hex digits of the vectors' SHA-256: an index made with
    /// other vectors is not this model's.
    pub id: String,
    pub vocab: Vocab,
    dims: usize,
    scales: Vec<f32>,
    rows: Vec<i8>,
}

impl Model {
    /// The model from its vocabulary (vocab.txt) and vectors (the .i8 file).
    pub fn parse(name: &str, vocab: &str, vectors: &[u8]) -> Result<Model, String> {
        let bad = || "the semantic model's vectors are damaged: not a DNSEMB1 file".to_string();
        let body = vectors.strip_prefix(MAGIC).ok_or_else(bad)?;
        let u32_at = |i: usize| body.get(i..i + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
        let (rows, dims) = (u32_at(0).ok_or_else(bad)?, u32_at(4).ok_or_else(bad)?);
        let scales_at = 8;
        let rows_at = rows.checked_mul(4).and_then(|n| n.checked_add(scales_at)).ok_or_else(bad)?;
        if rows.checked_mul(dims).and_then(|n| n.checked_add(rows_at)) != Some(body.len()) || dims == 0 {
            return Err(bad());
        }
        let scales =
            body[scales_at..rows_at].chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        let vocab = Vocab::parse(vocab);
        if vocab.len() != rows {
            return Err(format!("the semantic model has {rows} vectors for {} tokens", vocab.len()));
        }
        let id = crate::texthash::hex(&sha2::Sha256::digest(vectors)[..8]);
        let rows = body[rows_at..].iter().map(|b| *b as i8).collect();
        Ok(Model { name: name.to_string(), id, vocab, dims, scales, rows })
    }

    /// A model in one file (`FILE_MAGIC`), as `file` makes it.
    pub fn from_file(bytes: &[u8]) -> Result<Model, String> {
        let bad = |why: &str| format!("the model file is damaged ({why}): install it again");
        let body = bytes.strip_prefix(FILE_MAGIC).ok_or_else(|| bad("not a DNMODEL1 file"))?;
        let nl = body.iter().position(|b| *b == b'\n').ok_or_else(|| bad("no name"))?;
        let name = std::str::from_utf8(&body[..nl]).map_err(|_| bad("its name"))?;
        let rest = &body[nl + 1..];
        let len = rest.get(..4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
        let vocab = len.and_then(|n| rest.get(4..4 + n)).ok_or_else(|| bad("cut short"))?;
        let vocab = std::str::from_utf8(vocab).map_err(|_| bad("its vocabulary"))?;
        Model::parse(name, vocab, &rest[4 + vocab.len()..])
    }

    /// The one file of a model (see `from_file`).
    pub fn file(name: &str, vocab: &str, vectors: &[u8]) -> Vec<u8> {
        let mut out = FILE_MAGIC.to_vec();
        out.extend_from_slice(name.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(&(vocab.len() as u32).to_le_bytes());
        out.extend_from_slice(vocab.as_bytes());
        out.extend_from_slice(vectors);
        out
    }

    /// The model this project vendors (native builds only: the plugin's wasm is
    /// kept small, and is given the model by its host from the vault's store).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn builtin() -> std::sync::Arc<Model> {
        static MODEL: std::sync::OnceLock<std::sync::Arc<Model>> = std::sync::OnceLock::new();
        MODEL
            .get_or_init(|| {
                std::sync::Arc::new(
                    Model::parse(MODEL_NAME, BUILTIN.0, BUILTIN.1).expect("the vendored model is whole"),
                )
            })
            .clone()
    }

    /// The vendored model as one file, for a vault's store.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn builtin_file() -> Vec<u8> {
        Model::file(MODEL_NAME, BUILTIN.0, BUILTIN.1)
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
        unit(sum)
    }
}

/// A vector scaled to length 1 (all zeros stay zeros).
pub(crate) fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// The cosine of two vectors of length 1 (or zero).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// A vector of length 1 as int8 values and their scale: a quarter of the
/// memory, and what the stored index holds, so a note read back from it ranks
/// exactly as when it was embedded.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantized {
    pub scale: f32,
    pub values: Vec<i8>,
}

impl Quantized {
    pub fn new(v: &[f32]) -> Quantized {
        let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
        let values = v.iter().map(|x| if scale > 0.0 { (x / scale).round() as i8 } else { 0 }).collect();
        Quantized { scale, values }
    }

    /// The cosine with a vector of length 1. Eight sums side by side: one sum
    /// waits on each addition before the next (floats are not reordered), and
    /// this is what a search does for every passage of every note.
    pub fn cosine(&self, v: &[f32]) -> f32 {
        let mut acc = [0f32; 8];
        let (q8, v8) = (self.values.chunks_exact(8), v.chunks_exact(8));
        let (q_rest, v_rest) = (q8.remainder(), v8.remainder());
        for (q, x) in q8.zip(v8) {
            for i in 0..8 {
                acc[i] += q[i] as f32 * x[i];
            }
        }
        let rest: f32 = q_rest.iter().zip(v_rest).map(|(q, x)| *q as f32 * x).sum();
        (acc.iter().sum::<f32>() + rest) * self.scale
    }
}

/// Every note of the vault ready for search, each as of its hash: brought up to
/// date by embedding only the notes added or changed since.
#[derive(Default)]
pub struct Index {
    pub corpus: search::Corpus,
    hashes: crate::fxhash::FxHashMap<String, TextHash>,
    /// The lines of the stored index (stored.rs) as this engine last wrote it.
    pub stored_lines: usize,
}

/// What bringing the index up to date did.
#[derive(Debug, Default, Clone, Copy, serde::Serialize)]
pub struct Synced {
    pub notes: usize,
    pub passages: usize,
    pub embedded: usize,
    /// Read back from the stored index.
    pub stored: usize,
    pub unchanged: usize,
    pub removed: usize,
}

impl Index {
    /// The index of `notes` (path, hash, text), from `old` and what the store
    /// holds: only the notes added or changed since both are embedded, the ones
    /// gone taken out (among those `in_scope` takes: the notes given are some
    /// tables' rows, say). Answers the counts and the paths embedded or
    /// removed (what the stored index lacks).
    pub fn sync<'a>(
        old: Option<Index>,
        mut stored: Option<&mut stored::Stored>,
        model: &Model,
        notes: impl Iterator<Item = (&'a str, TextHash, &'a str)>,
        in_scope: impl Fn(&str) -> bool,
    ) -> (Index, Synced, Vec<String>) {
        let mut index = old.unwrap_or_default();
        let mut counts = Synced::default();
        let mut seen = vec![];
        let mut changed = vec![];
        for (path, hash, text) in notes {
            seen.push(path);
            counts.notes += 1;
            if index.hashes.get(path) == Some(&hash) {
                counts.unchanged += 1;
                continue;
            }
            let kept = stored.as_mut().and_then(|s| s.take(path, &hash.hex(), text));
            match kept {
                Some(d) => {
                    counts.stored += 1;
                    index.corpus.put(d);
                }
                None => {
                    counts.embedded += 1;
                    index.corpus.put(search::Doc::new(model, path, text));
                    changed.push(path.to_string());
                }
            }
            index.hashes.insert(path.to_string(), hash);
        }
        // Every note given is indexed now: when the index holds as many, none
        // is gone (a search after a search walks the notes once, no more).
        let gone: Vec<String> = if index.hashes.len() == seen.len() {
            vec![]
        } else {
            let seen: crate::fxhash::FxHashSet<&str> = seen.into_iter().collect();
            index.hashes.keys().filter(|p| !seen.contains(p.as_str()) && in_scope(p)).cloned().collect()
        };
        counts.removed = gone.len();
        for p in gone {
            index.corpus.remove(&p);
            index.hashes.remove(&p);
            changed.push(p);
        }
        counts.passages = index.corpus.docs.iter().map(|d| d.passages.len()).sum();
        (index, counts, changed)
    }

    /// Brings one note up to date: `note` is its hash and text now (None: it is
    /// gone). Answers its line for the stored index when it changed.
    pub fn update(&mut self, model: &Model, path: &str, note: Option<(TextHash, &str)>) -> Option<String> {
        match note {
            Some((hash, _)) if self.hash(path) == Some(hash) => None,
            Some((hash, text)) => {
                let d = search::Doc::new(model, path, text);
                let line = stored::line(&d, &hash.hex(), model);
                self.corpus.put(d);
                self.hashes.insert(path.to_string(), hash);
                Some(line)
            }
            None => {
                self.hashes.remove(path)?;
                self.corpus.remove(path);
                Some(stored::gone(path))
            }
        }
    }

    /// The hash a note was indexed as.
    pub fn hash(&self, path: &str) -> Option<TextHash> {
        self.hashes.get(path).copied()
    }
}
