//! `datanotes bench --notes FILE`: the native engine opening the notes of a JSON
//! file ([{path, text, mtime}], as the plugin hands them to its wasm engine), so
//! that `scripts/bench-wasm.mjs` compares the two on the same notes in one run:
//! open time (first and second in this process) and memory (the growth of the
//! process's resident set while the engine opens and holds the notes).

use datanotes_core::{Engine, NoteFile};
use serde_json::{json, Value};
use std::time::Instant;

extern "C" {
    /// mimalloc's (the binary's allocator, linked in through the mimalloc crate).
    fn mi_collect(force: bool);
}

/// The resident set (VmRSS) in bytes, where /proc says it (Linux); None elsewhere.
/// What the allocator holds freed is given back first: mimalloc does so on its
/// own a little later, and the open's scratch memory is not what the engine holds.
fn rss() -> Option<u64> {
    // SAFETY: mi_collect takes no pointer; it only returns free pages to the system.
    unsafe { mi_collect(true) };
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
    let now = crate::clock::now_ms();
    // Memory: what parsing the notes and opening them adds (the JSON is the host's).
    let before = rss();
    let files = notes(&json)?;
    let t = Instant::now();
    let mut engine = Engine::open_with_cache(files, vec![], None, vec![], now);
    let first = t.elapsed();
    // As every host does after an open: the notes' cache written.
    drop(engine.take_cache());
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

/// The binary's open of a vault of about `rows` notes on disk, through the
/// notes' cache: the first (no cache: every note read and parsed), a reopen with
/// nothing changed, and one with 1,000 notes changed; each as `datanotes call`
/// opens (texts read only when a turn needs them), with its steps timed and the
/// resident memory the engine holds.
/// `DATANOTES_BENCH_KEEP=DIR` builds the vault in DIR and keeps it, to profile
/// a reopen of it (`datanotes call --vault DIR ...` under perf).
pub fn cache(rows: usize) -> Value {
    let keep = std::env::var_os("DATANOTES_BENCH_KEEP").map(std::path::PathBuf::from);
    let temp = || std::env::temp_dir().join(format!("datanotes-bench-cache-{}-{rows}", std::process::id()));
    let dir = keep.clone().unwrap_or_else(temp);
    let _ = std::fs::remove_dir_all(&dir);
    let result = cache_in(&dir, rows).unwrap_or_else(|e| json!({"error": e}));
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

fn cache_in(dir: &std::path::Path, rows: usize) -> Result<Value, String> {
    let files = crate::bench_vault::vault(rows);
    // Written an hour ago: older than the cache by far, as a vault is.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let write = |f: &NoteFile| -> std::io::Result<()> {
        let p = dir.join(&f.path);
        std::fs::create_dir_all(p.parent().unwrap_or(dir))?;
        std::fs::write(&p, &f.text)?;
        std::fs::File::options().write(true).open(&p)?.set_modified(old)
    };
    files.iter().try_for_each(write).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.join(crate::files::STORE)).map_err(|e| e.to_string())?;
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    let open = |what: &str| -> Result<Value, String> {
        let before = rss();
        let mut laps = crate::engine::Laps::default();
        let t = Instant::now();
        let disk = crate::disk::Disk::new(dir, None);
        let engine = crate::engine::open_timed(&disk, crate::engine::private_webhooks(false), &mut laps)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let held = rss().zip(before).map(|(a, b)| a.saturating_sub(b) as f64 / 1e6);
        let steps: serde_json::Map<String, Value> = laps.laps.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
        let unread = engine.unread().len();
        drop(engine);
        // Against this vault's notes (about 220 bytes each), not the films of
        // scripts/bench-wasm.mjs (about 400): a note's index costs about the
        // same whatever its size.
        let x = held.map(|mb| (mb * 1e6 / bytes as f64 * 10.0).round() / 10.0);
        Ok(
            json!({"what": what, "ms": ms.round(), "steps": steps, "unread": unread, "memory_mb": held.map(f64::round), "memory_x_notes": x}),
        )
    };
    let first = open("first open: no cache")?;
    let again = open("reopen, nothing changed")?;
    // 1,000 films edited by hand while closed, at `skip`: their new texts, an
    // mtime a second later.
    let edit = |skip: usize, mark: &str| -> Result<(), String> {
        for f in files.iter().filter(|f| f.path.contains("/film/")).skip(skip).take(1000) {
            let changed = NoteFile { text: f.text.replace("Notes on film", mark), ..f.clone() };
            write(&changed).map_err(|e| e.to_string())?;
            let later = old + std::time::Duration::from_secs(1);
            let h = std::fs::File::options().write(true).open(dir.join(&f.path)).map_err(|e| e.to_string())?;
            h.set_modified(later).map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    edit(0, "Notes on the film")?;
    // The film table's first commit keeps a blob of each of its rows: every film read.
    let first_commit = open("reopen, 1,000 notes changed: the table's first commit")?;
    edit(1000, "Notes about film")?;
    let changed = open("reopen, 1,000 notes changed")?;
    Ok(
        json!({"notes": files.len(), "notes_mb": (bytes as f64 / 1e5).round() / 10.0, "opens": [first, again, first_commit, changed]}),
    )
}
