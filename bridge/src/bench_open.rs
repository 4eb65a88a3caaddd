//! `datanotes bench --notes FILE`: the native engine opening the notes of a JSON
//! file ([{path, text, mtime}], as the plugin hands them to its wasm engine), so
//! that `scripts/bench-wasm.mjs` compares the two on the same notes in one run:
//! open time (first and second in this process) and memory (the growth of the
//! process's resident set while the engine opens and holds the notes).

use datanotes_core::{Engine, NoteFile};
use serde_json::{json, Value};
use std::time::Instant;

/// The resident set (VmRSS) in bytes, where /proc says it (Linux); None elsewhere.
fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn notes(json: &str) -> Result<Vec<NoteFile>, String> {
    NoteFile::list_from_json(json).map_err(|e| format!("not a JSON list of {{path, text, mtime}}: {e}"))
}

pub fn run(file: &str) -> Result<Value, String> {
    let json = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
    let bytes = json.len();
    let now = crate::now_ms();
    // Memory: what parsing the notes and opening them adds (the JSON is the host's).
    let before = rss();
    let files = notes(&json)?;
    let t = Instant::now();
    let engine = Engine::open_listed(files, vec![], now);
    let first = t.elapsed();
    let held = rss().zip(before).map(|(a, b)| a.saturating_sub(b));
    drop(engine);
    let files = notes(&json)?;
    let t = Instant::now();
    let engine = Engine::open_listed(files, vec![], now);
    let second = t.elapsed();
    drop(engine);
    let mb = |b: u64| (b as f64 / 1e5).round() / 10.0;
    Ok(json!({
        "notes_mb": mb(bytes as u64),
        "first_open_ms": first.as_millis() as u64,
        "second_open_ms": second.as_millis() as u64,
        "memory_mb": held.map(mb),
        "memory_x_notes": held.map(|h| (h as f64 / bytes as f64 * 10.0).round() / 10.0),
    }))
}
