//! Ranking notes for a query: by meaning (the cosine of the query's vector and
//! the best of a note's passages), by words (BM25 over the notes' normalised
//! words), and both fused: each score over the best note's (so 0–1), then
//! weight × meaning + (1 − weight) × words. The weight is the caller's, or set
//! by the query (`weight_for`): a query of words is ranked by meaning with the
//! words' score as a tie-break; one with a code or number gives words as much
//! weight.

use super::{tokenizer, Model, Quantized};
use crate::fxhash::FxHashMap as HashMap;

/// BM25's term saturation and length normalisation (the usual values).
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// The weight of meaning for a query of words the model knows: the words'
/// score then only breaks near ties (a paraphrase shares no word with the note
/// it means, and the notes that share its words are often about something else).
pub const MEANING_WEIGHT: f64 = 0.97;
/// The weight of meaning for a query holding a code or number: words count as much.
pub const NAMES_WEIGHT: f64 = 0.5;
/// Words a passage holds at most: a long note is searched passage by passage.
const PASSAGE_WORDS: usize = 120;

/// A note as the search holds it.
pub struct Doc {
    pub path: String,
    pub passages: Vec<Passage>,
    /// Its words (for BM25): word -> count, and how many.
    terms: HashMap<String, u32>,
    len: u32,
}

/// A stretch of a note, and its vector.
pub struct Passage {
    pub text: String,
    pub vector: Quantized,
}

/// What ranks the notes a search looks through: kept up as notes come, change
/// and go, so that one changed note costs its own embedding only.
#[derive(Default)]
pub struct Corpus {
    pub docs: Vec<Doc>,
    /// Each note's place in `docs`.
    at: HashMap<String, usize>,
    /// How many notes hold each word.
    df: HashMap<String, u32>,
    /// The words of all notes.
    total_len: u64,
}

/// A note found, with its scores and the passage that matched best.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Hit {
    pub path: String,
    pub score: f32,
    pub semantic: f32,
    pub lexical: f32,
    pub passage: String,
}

/// A text's words as BM25 counts them: normalised as the model's tokenizer
/// does, punctuation left out.
pub fn terms(text: &str) -> Vec<String> {
    let normal = tokenizer::normalize(text);
    let split = normal.split(|c: char| c.is_whitespace() || (c.is_ascii_punctuation() && c != '-'));
    split.map(|w| w.trim_matches('-')).filter(|w| !w.is_empty()).map(str::to_string).collect()
}

/// A note's passages: its paragraphs, joined up to `PASSAGE_WORDS` words, and
/// cut there when one is longer.
pub fn passages(text: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    let mut current: Vec<&str> = vec![];
    for para in text.split("\n\n") {
        let words: Vec<&str> = para.split_whitespace().collect();
        if !current.is_empty() && current.len() + words.len() > PASSAGE_WORDS {
            out.push(current.join(" "));
            current.clear();
        }
        for w in words {
            current.push(w);
            if current.len() == PASSAGE_WORDS {
                out.push(current.join(" "));
                current.clear();
            }
        }
    }
    if !current.is_empty() || out.is_empty() {
        out.push(current.join(" "));
    }
    out
}

/// What of a note is searched: its front matter's values (not the engine's
/// `table` and `id`, nor the keys' YAML), then its body.
pub fn searchable(text: &str) -> String {
    let Some(rest) = text.strip_prefix("---\n") else { return text.to_string() };
    let Some(end) = rest.find("\n---") else { return text.to_string() };
    let mut out = String::with_capacity(text.len());
    for line in rest[..end].lines() {
        let (key, value) = line.split_once(':').unwrap_or(("", line));
        if matches!(key.trim(), "table" | "id") {
            continue;
        }
        let value = value.trim().trim_start_matches('-').trim().trim_matches('"');
        if !value.is_empty() {
            out.push_str(value);
            out.push('\n');
        }
    }
    let body = rest[end + 4..].trim_start_matches(['-', '\n']);
    out.push('\n');
    out.push_str(body);
    out
}

impl Doc {
    pub fn new(model: &Model, path: &str, text: &str) -> Doc {
        let text = &searchable(text);
        let passages =
            passages(text).into_iter().map(|p| Passage { vector: Quantized::new(&model.embed(&p)), text: p }).collect();
        Doc::with(path, text, passages)
    }

    /// A note whose passages' vectors were made before (the stored index):
    /// None when the note does not cut into as many passages of `dims`.
    pub fn with_vectors(path: &str, text: &str, vectors: Vec<Quantized>, dims: usize) -> Option<Doc> {
        let text = &searchable(text);
        let texts = passages(text);
        if texts.len() != vectors.len() || vectors.iter().any(|v| v.values.len() != dims) {
            return None;
        }
        let passages = texts.into_iter().zip(vectors).map(|(text, vector)| Passage { text, vector }).collect();
        Some(Doc::with(path, text, passages))
    }

    /// The note's vector: its passages' mean.
    pub fn vector(&self) -> Vec<f32> {
        let mut sum = vec![0f32; self.passages.first().map_or(0, |p| p.vector.values.len())];
        for p in &self.passages {
            for (s, q) in sum.iter_mut().zip(&p.vector.values) {
                *s += *q as f32 * p.vector.scale;
            }
        }
        super::unit(sum)
    }

    fn with(path: &str, text: &str, passages: Vec<Passage>) -> Doc {
        let mut terms_of: HashMap<String, u32> = HashMap::default();
        let mut len = 0;
        for t in terms(text) {
            *terms_of.entry(t).or_default() += 1;
            len += 1;
        }
        Doc { path: path.to_string(), passages, terms: terms_of, len }
    }
}

impl Corpus {
    pub fn new(docs: Vec<Doc>) -> Corpus {
        let mut c = Corpus::default();
        for d in docs {
            c.put(d);
        }
        c
    }

    fn count(&mut self, d: &Doc, add: bool) {
        for t in d.terms.keys() {
            let n = self.df.entry(t.clone()).or_default();
            if add {
                *n += 1;
            } else {
                *n = n.saturating_sub(1);
            }
        }
        if add {
            self.total_len += d.len as u64;
        } else {
            self.total_len = self.total_len.saturating_sub(d.len as u64);
        }
    }

    /// Adds a note, or puts it in the place of the one at its path.
    pub fn put(&mut self, d: Doc) {
        self.count(&d, true);
        match self.at.get(&d.path) {
            Some(&i) => {
                let old = std::mem::replace(&mut self.docs[i], d);
                self.count(&old, false);
            }
            None => {
                self.at.insert(d.path.clone(), self.docs.len());
                self.docs.push(d);
            }
        }
    }

    /// Takes a note out.
    pub fn remove(&mut self, path: &str) {
        let Some(i) = self.at.remove(path) else { return };
        let old = self.docs.swap_remove(i);
        self.count(&old, false);
        if let Some(moved) = self.docs.get(i) {
            self.at.insert(moved.path.clone(), i);
        }
    }

    pub fn get(&self, path: &str) -> Option<&Doc> {
        self.at.get(path).map(|i| &self.docs[*i])
    }

    /// The query's words that some note holds, each with its weight (BM25's
    /// idf), worked out once a query rather than once a note.
    fn idfs<'q>(&self, query: &'q [String]) -> Vec<(&'q str, f32)> {
        let n = self.docs.len() as f32;
        let idf = |df: f32| ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
        query
            .iter()
            .filter_map(|q| self.df.get(q).filter(|df| **df > 0).map(|df| (q.as_str(), idf(*df as f32))))
            .collect()
    }

    fn bm25(&self, idfs: &[(&str, f32)], d: &Doc) -> f32 {
        let avg_len = (self.total_len as f32 / (self.docs.len() as f32).max(1.0)).max(1.0);
        let mut score = 0.0;
        for (q, idf) in idfs {
            let Some(tf) = d.terms.get(*q) else { continue };
            let tf = *tf as f32;
            score += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * d.len as f32 / avg_len));
        }
        score
    }

    /// The `limit` best notes for `query`; `weight` is meaning's (1: meaning
    /// alone, 0: words alone; None: as the query calls for, `weight_for`).
    pub fn search(&self, model: &Model, query: &str, weight: Option<f32>, limit: usize) -> Vec<Hit> {
        self.search_in(model, query, weight, limit, |_| true)
    }

    /// As `search`, among the notes whose path `keep` takes.
    pub fn search_in(
        &self,
        model: &Model,
        query: &str,
        weight: Option<f32>,
        limit: usize,
        keep: impl Fn(&str) -> bool,
    ) -> Vec<Hit> {
        let w = weight.unwrap_or_else(|| weight_for(query));
        self.rank(&model.embed(query), &terms(query), w, limit, keep)
    }

    /// The `limit` notes nearest in meaning to the note at `path` (itself left
    /// out), among those `keep` takes; None when no such note is indexed.
    pub fn similar(&self, path: &str, limit: usize, keep: impl Fn(&str) -> bool) -> Option<Vec<Hit>> {
        let v = self.get(path)?.vector();
        Some(self.rank(&v, &[], 1.0, limit, |p| p != path && keep(p)))
    }

    /// The `limit` best notes for a query's vector and words, `w` meaning's weight.
    fn rank(&self, qv: &[f32], qt: &[String], w: f32, limit: usize, keep: impl Fn(&str) -> bool) -> Vec<Hit> {
        let idfs = self.idfs(qt);
        // Scores first; the hits' texts only for the notes kept.
        let mut scored: Vec<Scored> = self
            .docs
            .iter()
            .enumerate()
            .filter(|(_, d)| keep(&d.path))
            .map(|(doc, d)| {
                let (passage, semantic) = d
                    .passages
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (i, p.vector.cosine(qv)))
                    .fold((0, f32::MIN), |best, (i, s)| if s > best.1 { (i, s) } else { best });
                Scored { doc, passage, semantic, lexical: self.bm25(&idfs, d), score: 0.0 }
            })
            .collect();
        // Each score over the best one's: a cosine keeps its own scale (a few
        // notes all close to the query stay close, not stretched from 0 to 1).
        let hi_s = scored.iter().fold(0f32, |hi, h| hi.max(h.semantic));
        let hi_l = scored.iter().fold(0f32, |hi, h| hi.max(h.lexical));
        for h in scored.iter_mut() {
            let s = if hi_s > 0.0 { h.semantic.max(0.0) / hi_s } else { 0.0 };
            let l = if hi_l > 0.0 { h.lexical / hi_l } else { 0.0 };
            h.score = w * s + (1.0 - w) * l;
        }
        // Whether `a` ranks before `b`: the higher score, then the path.
        let before = |a: &Scored, b: &Scored| {
            b.score.total_cmp(&a.score).then_with(|| self.docs[a.doc].path.cmp(&self.docs[b.doc].path)).is_lt()
        };
        // The best `limit`, kept in order as the notes pass: no sort of them
        // all (nor a sort's code in the plugin's wasm for this one list).
        let mut top: Vec<Scored> = Vec::with_capacity(limit + 1);
        for h in scored {
            if top.len() == limit && top.last().is_none_or(|last| !before(&h, last)) {
                continue;
            }
            let at = top.partition_point(|t| before(t, &h));
            top.insert(at, h);
            top.truncate(limit);
        }
        top.into_iter()
            .map(|h| {
                let d = &self.docs[h.doc];
                Hit {
                    path: d.path.clone(),
                    score: h.score,
                    semantic: h.semantic,
                    lexical: h.lexical,
                    passage: d.passages.get(h.passage).map(|p| p.text.clone()).unwrap_or_default(),
                }
            })
            .collect()
    }
}

/// A note's scores while a search ranks them.
struct Scored {
    doc: usize,
    passage: usize,
    semantic: f32,
    lexical: f32,
    score: f32,
}

/// The weight of meaning for `query` (see the module's comment): a code or
/// number (a word with a digit: INV-2291, 12V, 2026) is read by the model as
/// pieces of digits, averaged into nothing of its own, so words weigh as much.
pub fn weight_for(query: &str) -> f32 {
    if has_code(query) {
        NAMES_WEIGHT as f32
    } else {
        MEANING_WEIGHT as f32
    }
}

/// Whether a query holds a code or number (a word with a digit).
pub fn has_code(query: &str) -> bool {
    terms(query).iter().any(|t| t.bytes().any(|b| b.is_ascii_digit()))
}
