//! What the engine last knew of the vault: each note's path and the SHA-256 of its
//! text, kept in the store as `known.jsonl` (a snapshot, then one line per change).
//! When an engine opens a vault, the notes that differ from it were changed while
//! no engine ran, and are reported as hand edits.
//!
//! What a device last knew is its own: with a device id the file is
//! `known.<device>.jsonl`, so devices syncing one vault each find what changed
//! since they last looked, and never write one file with two texts.

use crate::edits::StoreWrite;
use crate::fxhash::FxHashMap;
use crate::store::Store;
use crate::texthash::TextHash;
use serde::{Deserialize, Serialize};

pub const FILE: &str = "known.jsonl";

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Line {
    p: String,
    h: Option<String>,
}

#[derive(Debug, Default, Clone)]
pub struct Known {
    pub hashes: FxHashMap<String, TextHash>,
    /// Lines in the file (a snapshot is rewritten when they far outnumber the notes).
    pub lines: usize,
    /// The file, under the store.
    pub path: String,
}

/// A line as the engine writes it, `{"p":"…","h":"…"}` with no escape in the
/// path, read without serde (100k of them at every open); None for any other,
/// which serde reads.
fn fast_line(line: &str) -> Option<Line> {
    let rest = line.strip_prefix("{\"p\":\"")?;
    // The first quote, backslash or control character: a path's end only if a quote.
    let end = crate::notecache::string_end(rest.as_bytes())?;
    let (p, rest) = (&rest[..end], rest[end..].strip_prefix("\",\"h\":")?);
    let h = match rest {
        "null}" => None,
        _ => Some(rest.strip_prefix('"')?.strip_suffix("\"}")?),
    };
    // A hash is hex: anything else is serde's to read (or refuse).
    if h.is_some_and(|h| !h.bytes().all(|b| b.is_ascii_alphanumeric())) {
        return None;
    }
    Some(Line { p: p.to_string(), h: h.map(str::to_string) })
}

/// The file that holds what `device` last knew.
pub fn path(device: Option<&str>) -> String {
    device.map_or_else(|| FILE.to_string(), |d| format!("known.{d}.jsonl"))
}

impl Known {
    /// Reads what `device` last knew; else, the first time a device opens a store
    /// kept before devices, what the store knew then (to be written whole under
    /// the device's name: `path` is not in the store yet). None when there is
    /// neither (a vault never opened).
    pub fn load(store: &Store, device: Option<&str>) -> Option<Known> {
        let own = path(device);
        let text = store.text(&own).or_else(|| store.text(FILE))?;
        Some(Known::read(own, text))
    }

    /// What the file's `text` says, kept as the file at `path` (under the store).
    /// A host may read this device's own file while it lists the vault, on a
    /// thread of its own (100k lines take about 35 ms), and give it to
    /// `Engine::set_device_with`.
    pub fn read(path: String, text: &str) -> Known {
        let mut k = Known { path, ..Known::default() };
        // About 110 bytes a line: the map made once, not grown line by line.
        k.hashes.reserve(text.len() / 110);
        for line in text.lines() {
            let Some(l) = fast_line(line).or_else(|| serde_json::from_str::<Line>(line).ok()) else { continue };
            k.lines += 1;
            // A hash that is not one (a hand-edited line) is none of any text:
            // the note is then found changed, its old text unknown.
            match l.h {
                Some(h) => k.hashes.insert(l.p, TextHash::from_hex(&h).unwrap_or_default()),
                None => k.hashes.remove(&l.p),
            };
        }
        k
    }

    fn line(p: &str, h: Option<TextHash>) -> String {
        let mut s = serde_json::to_string(&Line { p: p.to_string(), h: h.map(|h| h.to_string()) }).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Records changes; returns the store write that appends them.
    pub fn record<'a>(&mut self, changes: impl IntoIterator<Item = (&'a str, Option<TextHash>)>) -> Option<StoreWrite> {
        let mut text = String::new();
        for (p, h) in changes {
            if self.hashes.get(p) == h.as_ref() {
                continue;
            }
            match h {
                Some(h) => self.hashes.insert(p.to_string(), h),
                None => self.hashes.remove(p),
            };
            text.push_str(&Known::line(p, h));
            self.lines += 1;
        }
        (!text.is_empty()).then(|| StoreWrite::append(self.path.clone(), text))
    }

    /// The whole file anew (at `path`), from these notes.
    pub fn snapshot<'a>(path: String, notes: impl IntoIterator<Item = (&'a str, TextHash)>) -> (Known, StoreWrite) {
        let mut k = Known { path, ..Known::default() };
        let mut pairs: Vec<(&str, TextHash)> = notes.into_iter().collect();
        pairs.sort_unstable();
        let mut text = String::with_capacity(pairs.len() * 110);
        for (p, h) in pairs {
            text.push_str(&Known::line(p, Some(h)));
            k.hashes.insert(p.to_string(), h);
            k.lines += 1;
        }
        let w = StoreWrite::put(k.path.clone(), text);
        (k, w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_line_is_read_without_serde_as_serde_reads_it_or_left_to_serde() {
        let h = TextHash::from_hex(&"ab".repeat(32));
        let mut lines: Vec<String> = ["n.md", "a/Café 🎬.md", "q\"uote.md", "tab\t.md", "back\\slash.md", ""]
            .iter()
            .flat_map(|p| [Known::line(p, h), Known::line(p, None)])
            .map(|l| l.trim_end().to_string())
            .collect();
        lines.extend(
            [
                r#"{"p":"n.md","h":"ab"}"#,
                r#"{"p":"n.md", "h":"ab"}"#,
                r#"{"h":"ab","p":"n.md"}"#,
                r#"{"p":"n.md","h":"a\u0062"}"#,
                r#"{"p":"n.md","h":"ab"} "#,
                r#"{"p":"n.md","h":"ab""#,
                r#"{"p":"n.md","h":"a b"}"#,
                r#"{"p":"n.md","h":nul}"#,
                r#"{"p":"n.md","h":1}"#,
                "{\"p\":\"n\u{1}.md\",\"h\":null}",
            ]
            .map(str::to_string),
        );
        let mut fast = 0;
        for l in &lines {
            let by_serde = serde_json::from_str::<Line>(l).ok();
            if let Some(line) = fast_line(l) {
                fast += 1;
                assert_eq!(Some(line), by_serde, "{l}");
            }
        }
        // The engine's lines without an escape, and the short hash.
        assert_eq!(fast, 7, "{lines:#?}");
    }

    #[test]
    fn hashes_are_read_back_as_written_and_one_that_is_none_names_no_text() {
        let (a, b) = (TextHash::of("a"), TextHash::of("b"));
        let (k, w) = Known::snapshot("known.jsonl".into(), [("b.md", b), ("a.md", a)]);
        let read = Known::read("known.jsonl".into(), &w.text);
        assert_eq!(read.hashes, k.hashes);
        assert_eq!((read.hashes["a.md"], read.lines), (a, 2));
        assert!(w.text.starts_with(&format!("{{\"p\":\"a.md\",\"h\":\"{a}\"}}\n")), "{}", w.text);
        // Edited by hand: a hash cut short, one in capitals, a path removed.
        let text = format!(
            "{}{{\"p\":\"a.md\",\"h\":\"{}\"}}\n{{\"p\":\"b.md\",\"h\":\"{}\"}}\n{{\"p\":\"c.md\",\"h\":\"{a}\"}}\n{{\"p\":\"c.md\",\"h\":null}}\n",
            w.text,
            &a.to_string()[..40],
            b.to_string().to_uppercase()
        );
        let read = Known::read("known.jsonl".into(), &text);
        assert_eq!(read.hashes.len(), 2);
        assert_eq!(read.hashes["a.md"], TextHash::default(), "a hash that is not one matches no text");
        assert_ne!(TextHash::of(""), TextHash::default());
        assert_eq!(read.hashes["b.md"], b);
    }
}
