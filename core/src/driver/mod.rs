//! The order of calls of `engine.rs`, written once: open → upkeep → reconcile,
//! then per call (Need → provide → again) and (Apply → store → edits → finish →
//! maybe a rollback, applied the same way). Every Rust host drives the engine
//! through these functions over its own [`Host`]; the plugin's TypeScript host
//! (`plugin/src/host.ts`) follows them step for step, and a test runs one script
//! through both.
//!
//! The driver also checks each edit against the file as it is now (the text the
//! engine planned from, or no file where one is to be created), so that a host
//! only reads and writes files and a concurrent change is caught the same way by
//! every host.

use crate::edits::{hash, Edit, EditError, StoreWrite};
use crate::engine::{Apply, Engine, Outcome, Step};
use crate::owed::Behind;
use serde_json::Value;

/// How many rounds of "read these store files" one call may ask for: a read
/// asks for a table's log, then the blobs it names, a table after another (a
/// restore of the database). Each round must ask for a file it was not given.
pub const NEED_ROUNDS: usize = 64;

/// What the driver needs of a host: the vault's files (paths relative to the
/// vault, `/`-separated) and the store's (relative to `.datanotes/`). Each
/// error is the file system's own words; the driver names the file.
pub trait Host {
    /// A vault file's text now, or None when there is none.
    fn read(&mut self, path: &str) -> Result<Option<String>, String>;
    /// A note's text with its modification time (ms since the epoch; 0 when the
    /// host keeps none), as the engine takes notes in (`read_notes`): it keeps
    /// the mtime with what it derived from the text (the notes' cache vouches
    /// for a note by its size and mtime) and dates a change it finds by it. A
    /// host should take the mtime before the text: a change in between then
    /// looks newer than the text, and the cache never vouches for a stale one.
    fn read_note(&mut self, path: &str) -> Result<Option<crate::NoteFile>, String> {
        Ok(self.read(path)?.map(|text| crate::NoteFile { path: path.to_string(), text, mtime: 0 }))
    }
    /// Creates or replaces a vault file whole, making its folders as needed.
    fn write(&mut self, path: &str, text: &str) -> Result<(), String>;
    /// Moves a vault file, making the target's folders; links are left alone.
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String>;
    /// Moves a vault file to the vault's trash.
    fn trash(&mut self, path: &str) -> Result<(), String>;
    /// Deletes a vault file.
    fn remove(&mut self, path: &str) -> Result<(), String>;
    /// A store file's text, or None when it is absent or unreadable.
    fn read_store(&mut self, path: &str) -> Option<String>;
    /// Writes, appends to or deletes a store file, durably.
    fn write_store(&mut self, write: &StoreWrite) -> Result<(), String>;

    /// Writes store files in order, all durable when it returns; on failure, how
    /// many are in (durably) and the error. A host may share one flush among them
    /// rather than pay one per file.
    fn write_stores(&mut self, files: &[&StoreWrite]) -> Result<(), (usize, String)> {
        files.iter().enumerate().try_for_each(|(i, w)| self.write_store(w).map_err(|e| (i, e)))
    }

    /// Whether this host writes many notes as one batch (`stage`, `sync`, `put`)
    /// rather than each durably on its own (`write`).
    fn stages(&self) -> bool {
        false
    }
    /// Writes `text` where no reader sees it yet, for `put` to move to `path`.
    fn stage(&mut self, path: &str, _text: &str) -> Result<(), String> {
        Err(format!("{path}: this host does not stage"))
    }
    /// Makes every staged text durable, with one flush for all.
    fn sync(&mut self) -> Result<(), String> {
        Ok(())
    }
    /// Moves the staged text of `path` into its place (atomically).
    fn put(&mut self, path: &str) -> Result<(), String> {
        Err(format!("{path}: this host does not stage"))
    }
    /// Forgets what was staged for `path` and not put.
    fn unstage(&mut self, _path: &str) {}
}

/// After open: the store's upkeep, then what changed while no engine ran, carried
/// to its end. Its log holds a line for each store write that failed.
pub fn start(engine: &mut Engine, host: &mut impl Host, now_ms: i64) -> Outcome {
    let upkeep = engine.take_upkeep();
    let mut log = vec![];
    if let Err(e) = write_store(host, &upkeep) {
        log.push(format!("WARN the store could not be written: {e}"));
    }
    let mut out = drive(engine, host, "reconcile", |e| e.reconcile(now_ms));
    log.append(&mut out.log);
    if let Some(cache) = engine.take_cache() {
        if let Err(e) = host.write_stores(&[&cache]) {
            log.push(format!("WARN the notes' cache could not be written (the next open reads every note): {}", e.1));
        }
    }
    out.log = log;
    out
}

/// One operation to its end: the store files it needs are read, a write's store
/// is written first, then its edits, then `finish` (a rollback is applied the
/// same way). The last outcome is the answer; its store is written.
pub fn call(engine: &mut Engine, host: &mut impl Host, op: &str, args: &Value, actor: &str, now_ms: i64) -> Outcome {
    drive(engine, host, op, |e| e.call(op, args.clone(), actor, now_ms))
}

/// What is due at `now_ms` (the round of hand edits, link repair, recompute, webhook
/// deliveries), carried to its end as a call is.
pub fn tick(engine: &mut Engine, host: &mut impl Host, now_ms: i64) -> Outcome {
    drive(engine, host, "tick", |e| e.tick(now_ms))
}

/// Carries a turn to its end. The log lines of every step are kept in the
/// outcome returned.
fn drive(engine: &mut Engine, host: &mut impl Host, op: &str, turn: impl FnMut(&mut Engine) -> Step) -> Outcome {
    // Records an earlier write still owes go first; while they cannot, the engine
    // refuses writes.
    let _ = keep(engine, host, &[]);
    let step = ask(engine, host, turn);
    carry(engine, host, op, step)
}

/// Writes the store writes the engine still owes, then `files`, in order; what
/// cannot be written the engine keeps (`owe`), and the host is told so.
///
/// A derived file (the semantic index) is never owed: it is built again. One the
/// store cannot take is left out and the writes after it go on, so that it never
/// holds up the journal behind it; after the first record that fails, the records
/// left are owed, the derived files among them dropped.
pub fn keep(engine: &mut Engine, host: &mut impl Host, files: &[StoreWrite]) -> Result<(), Behind> {
    let owed = engine.take_owed();
    let mut all: Vec<&StoreWrite> = owed.iter().chain(files).collect();
    loop {
        let Err((i, e)) = host.write_stores(&all) else { return Ok(()) };
        if derived(all[i]) {
            all.drain(..=i);
            continue;
        }
        let rest = all[i..].iter().filter(|w| !derived(w)).map(|w| (*w).clone()).collect();
        return Err(engine.owe(rest, &e));
    }
}

/// A store file built again from the notes when it is lost (see `keep`).
fn derived(w: &StoreWrite) -> bool {
    crate::semantic::stored::is_file(&w.path)
}

/// Runs a turn, and again while it asks for store files (read from the host and
/// handed over), `NEED_ROUNDS` times at most, and not when it asks again for the
/// very files it was just given: the step it comes to.
pub fn ask(engine: &mut Engine, host: &mut impl Host, mut turn: impl FnMut(&mut Engine) -> Step) -> Step {
    let mut step = turn(engine);
    let mut last: Vec<String> = vec![];
    for _ in 0..NEED_ROUNDS {
        match &step {
            Step::Need(paths) | Step::ReadNotes(paths) if *paths == last => return step,
            Step::Need(paths) => {
                let files = paths.iter().map(|p| (p.clone(), host.read_store(p))).collect();
                engine.provide(files);
            }
            Step::ReadNotes(paths) => read_notes(engine, host, paths),
            _ => break,
        }
        let (Step::Need(paths) | Step::ReadNotes(paths)) = step else { break };
        last = paths;
        step = turn(engine);
    }
    step
}

/// Reads the notes an engine opened from the store's cache has not read, and
/// hands them over with their mtimes; a note gone since the open is gone from
/// the index too.
pub fn read_notes(engine: &mut Engine, host: &mut impl Host, paths: &[String]) {
    let (mut files, mut gone) = (vec![], vec![]);
    for p in paths {
        match host.read_note(p) {
            Ok(Some(note)) => files.push(note),
            Ok(None) => gone.push(p.clone()),
            // Left unread: the turn asks again, then says it could not have it.
            Err(_) => {}
        }
    }
    engine.read_notes(files, gone);
}

/// Carries a step to its end: while it is a write, its store is written, then
/// its edits applied in order, then `finish` told (which may plan a rollback,
/// carried the same way); the last outcome's store is written.
pub fn carry(engine: &mut Engine, host: &mut impl Host, op: &str, mut step: Step) -> Outcome {
    let mut log = vec![];
    loop {
        match step {
            Step::Need(paths) | Step::ReadNotes(paths) => return Outcome { log, ..engine.need_unmet(op, &paths) },
            Step::Done(mut out) => {
                // Only a turn that adds records says they wait; the others were
                // refused (writes) or need none (reads).
                if let (Err(behind), false) = (keep(engine, host, &out.store), out.store.is_empty()) {
                    out.log.push(behind.log.clone());
                    behind.annotate(&mut out.answer);
                }
                log.append(&mut out.log);
                out.log = log;
                return out;
            }
            Step::Apply(Apply { edits, store, log: mut lines, .. }) => {
                log.append(&mut lines);
                if let Err(e) = write_store(host, &store) {
                    return Outcome { log, ..engine.store_failed(op, &e) };
                }
                let results = apply_all(host, &edits);
                step = engine.finish(&results);
            }
        }
    }
}

/// Applies edits in order, stopping at the first that fails: the rest are not
/// tried. On a host that stages, a run of note writes is written first, made
/// durable by one flush, then put in place one by one, each once its file is
/// found as planned: as durable as one flush per note, at a fraction of the cost.
fn apply_all(host: &mut impl Host, edits: &[Edit]) -> Vec<Result<(), EditError>> {
    let mut results = Vec::with_capacity(edits.len());
    let mut rest = edits;
    while !rest.is_empty() && results.last().is_none_or(|r: &Result<(), EditError>| r.is_ok()) {
        let run = if host.stages() { write_run(rest) } else { 0 };
        if run > 1 {
            results.extend(write_staged(host, &rest[..run]));
        } else {
            results.push(apply(host, &rest[0]));
        }
        rest = &rest[run.max(1)..];
    }
    results.resize_with(edits.len(), || Err(EditError::NotTried));
    results
}

/// How many writes lead `edits`, each to a path of its own (a second write of a
/// path must see the first in place).
fn write_run(edits: &[Edit]) -> usize {
    let mut seen = std::collections::HashSet::new();
    edits.iter().take_while(|e| matches!(e, Edit::Write { path, .. } if seen.insert(path.as_str()))).count()
}

/// A run of writes (see `write_run`) staged, synced, then put in order, as if
/// written one by one: a write that cannot be staged fails where it stands,
/// after those before it are put. What is not put is unstaged.
fn write_staged(host: &mut impl Host, run: &[Edit]) -> Vec<Result<(), EditError>> {
    let writes: Vec<(&str, &str, Option<&str>)> = run
        .iter()
        .filter_map(|e| match e {
            Edit::Write { path, text, expect } => Some((path.as_str(), text.as_str(), expect.as_deref())),
            _ => None,
        })
        .collect();
    let mut staged = 0;
    let mut failure = None;
    for (path, text, _) in &writes {
        if let Err(m) = host.stage(path, text) {
            failure = Some(io(path, m));
            break;
        }
        staged += 1;
    }
    let mut results = Vec::with_capacity(writes.len());
    if staged > 0 {
        if let Err(m) = host.sync() {
            writes[..staged].iter().for_each(|w| host.unstage(w.0));
            results.push(Err(io(writes[0].0, m)));
            staged = 0;
        }
    }
    for (path, _, expect) in &writes[..staged] {
        let r = as_planned(host, path, *expect).and_then(|()| host.put(path).map_err(|m| io(path, m)));
        let failed = r.is_err();
        results.push(r);
        if failed {
            break;
        }
    }
    // What is not put, the write that failed included, leaves nothing staged.
    let put = results.iter().filter(|r| r.is_ok()).count();
    writes[put..staged].iter().for_each(|w| host.unstage(w.0));
    if let (Some(f), true) = (failure, results.iter().all(|r| r.is_ok())) {
        results.push(Err(f));
    }
    results.resize_with(writes.len(), || Err(EditError::NotTried));
    results
}

fn write_store(host: &mut impl Host, files: &[StoreWrite]) -> Result<(), String> {
    host.write_stores(&files.iter().collect::<Vec<_>>()).map_err(|(_, e)| e)
}

/// Applies one edit, once the file is found as the engine planned.
pub fn apply(host: &mut impl Host, e: &Edit) -> Result<(), EditError> {
    match e {
        Edit::Write { path, text, expect } => {
            as_planned(host, path, expect.as_deref())?;
            host.write(path, text).map_err(|m| io(path, m))
        }
        Edit::Move { from, to, expect } => {
            expect_text(host, from, expect)?;
            absent(host, to)?;
            host.rename(from, to).map_err(|m| io(from, m))
        }
        Edit::Trash { path, expect } => {
            expect_text(host, path, expect)?;
            host.trash(path).map_err(|m| io(path, m))
        }
        Edit::Delete { path, expect } => {
            expect_text(host, path, expect)?;
            host.remove(path).map_err(|m| io(path, m))
        }
    }
}

fn io(path: &str, message: String) -> EditError {
    EditError::Io { path: path.to_string(), message }
}

/// Fails unless the file a write replaces holds the text whose hash is `expect`,
/// or, for a write that creates it, unless no file stands there.
fn as_planned(host: &mut impl Host, path: &str, expect: Option<&str>) -> Result<(), EditError> {
    match expect {
        Some(h) => expect_text(host, path, h),
        None => absent(host, path),
    }
}

/// Fails unless `path` holds the text whose hash is `expect`.
fn expect_text(host: &mut impl Host, path: &str, expect: &str) -> Result<(), EditError> {
    match host.read(path) {
        Ok(Some(text)) if hash(&text) == expect => Ok(()),
        Ok(Some(_)) => Err(EditError::Changed { path: path.into() }),
        Ok(None) => Err(EditError::Missing { path: path.into() }),
        Err(message) => Err(EditError::Io { path: path.into(), message }),
    }
}

/// Fails when a file stands at `path`.
fn absent(host: &mut impl Host, path: &str) -> Result<(), EditError> {
    match host.read(path) {
        Ok(None) => Ok(()),
        Ok(Some(_)) => Err(EditError::Exists { path: path.into() }),
        Err(message) => Err(EditError::Io { path: path.into(), message }),
    }
}

mod memory;
pub use memory::Memory;
