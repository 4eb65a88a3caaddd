//! The index as the store keeps it, so that an engine that opens searches at
//! once rather than embedding every note again: `semantic/index.<device>.jsonl`
//! (each device its own: it is derived, and two devices never write one file).
//! A header line (format, model, dimensions), then a line per note embedded —
//! its path, hash, model id and passages' vectors (int8 with a scale, base64) —
//! or a line for a note gone. Later lines count over earlier ones, so a search
//! or a write appends what changed and the whole file is written again only when
//! its lines far outnumber the notes. Never trusted blindly: a line is used only
//! for a note whose hash and passages it matches, made by this model; a file of
//! another format or model is built again.

use super::search::Doc;
use super::{Index, Model, Quantized};
use crate::fxhash::FxHashMap as HashMap;
use serde_json::{json, Value};

pub const FORMAT: u64 = 1;

/// The stored index of this device (None: one device, no id).
pub fn path(device: Option<&str>) -> String {
    match device {
        Some(d) => format!("semantic/index.{d}.jsonl"),
        None => "semantic/index.jsonl".to_string(),
    }
}

/// Whether a store file is a stored index (of any device).
pub fn is_file(path: &str) -> bool {
    path.starts_with("semantic/")
}

/// A stored index, read: each note's hash and passages' vectors.
pub struct Stored {
    notes: HashMap<String, (String, Vec<Quantized>)>,
    dims: usize,
    /// Its lines (to tell when it is worth writing anew).
    pub lines: usize,
}

/// Reads a stored index made by `model`; Err says why it must be built again.
pub fn read(text: &str, model: &Model) -> Result<Stored, String> {
    let mut lines = text.lines();
    let header: Value = lines.next().and_then(|l| serde_json::from_str(l).ok()).unwrap_or_default();
    if header["format"].as_u64() != Some(FORMAT) {
        return Err(format!("the stored index is not of format {FORMAT}"));
    }
    if header["id"].as_str() != Some(model.id.as_str()) || header["dims"].as_u64() != Some(model.dims() as u64) {
        return Err(format!("the stored index was made by another model than {} {}", model.name, model.id));
    }
    let mut s = Stored { notes: HashMap::default(), dims: model.dims(), lines: 1 };
    for line in lines {
        s.lines += 1;
        // A line cut short (a kill mid-append) or not this model's is left out.
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        let Some(path) = v["path"].as_str() else { continue };
        if v["gone"] == true {
            s.notes.remove(path);
            continue;
        }
        let vectors = v["v"].as_str().and_then(|b| vectors(b, s.dims));
        match (v["hash"].as_str(), vectors) {
            (Some(hash), Some(vs)) if v["m"].as_str() == Some(model.id.as_str()) => {
                s.notes.insert(path.to_string(), (hash.to_string(), vs));
            }
            _ => {
                s.notes.remove(path);
            }
        }
    }
    Ok(s)
}

impl Stored {
    /// The note at `path` as stored, when stored as of `hash`: its vectors
    /// are moved out (the stored index is read once, into the index).
    pub fn take(&mut self, path: &str, hash: &str, text: &str) -> Option<Doc> {
        if self.notes.get(path)?.0 != hash {
            return None;
        }
        let (_, vs) = self.notes.remove(path)?;
        Doc::with_vectors(path, text, vs, self.dims)
    }
}

pub fn header(model: &Model) -> String {
    let h = json!({"format": FORMAT, "model": model.name, "id": model.id, "dims": model.dims()});
    format!("{h}\n")
}

/// The line of a note as embedded.
pub fn line(doc: &Doc, hash: &str, model: &Model) -> String {
    let mut bytes = Vec::with_capacity(doc.passages.len() * (4 + model.dims()));
    for p in &doc.passages {
        bytes.extend_from_slice(&p.vector.scale.to_le_bytes());
        bytes.extend(p.vector.values.iter().map(|v| *v as u8));
    }
    let l = json!({"path": doc.path, "hash": hash, "m": model.id, "v": base64(&bytes)});
    format!("{l}\n")
}

/// The line of a note gone.
pub fn gone(path: &str) -> String {
    format!("{}\n", json!({"path": path, "gone": true}))
}

/// The whole index, written anew.
pub fn whole(index: &Index, model: &Model) -> String {
    let mut out = header(model);
    for d in &index.corpus.docs {
        if let Some(h) = index.hash(&d.path) {
            out.push_str(&line(d, &h.hex(), model));
        }
    }
    out
}

fn vectors(b64: &str, dims: usize) -> Option<Vec<Quantized>> {
    let bytes = unbase64(b64)?;
    if dims == 0 || bytes.len() % (4 + dims) != 0 {
        return None;
    }
    let v = bytes
        .chunks_exact(4 + dims)
        .map(|c| Quantized {
            scale: f32::from_le_bytes([c[0], c[1], c[2], c[3]]),
            values: c[4..].iter().map(|b| *b as i8).collect(),
        })
        .collect();
    Some(v)
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (a few lines rather than a crate for one use).
fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Each byte's value in base64, or 255.
const DECODE: [u8; 256] = {
    let mut t = [255u8; 256];
    let mut i = 0;
    while i < 64 {
        t[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    t
};

fn unbase64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text {
        let v = DECODE[*c as usize];
        if v == 255 {
            return None;
        }
        let v = v as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_round_trips() {
        for n in 0..20 {
            let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            assert_eq!(super::unbase64(&super::base64(&bytes)).unwrap(), bytes);
        }
        assert_eq!(super::base64(b"any carnal pleas"), "YW55IGNhcm5hbCBwbGVhcw==");
    }
}
