//! The writes of `serve` and `mcp`, queued in order while the engine's lock is
//! held and carried out once it is released (group commit, see `shared`).
//!
//! A write used to do all its disk work under the engine's lock, two flushes of
//! its own included (the note's new text, and the journal entry completed, each
//! flushed before being swapped in: see `spare`): about 1.7 ms each, so 20
//! clients got about 600 writes a second however the disk was shared. Now a
//! call fills the note's spare and queues what it would write; after the lock
//! is released, the call carries out the queue (its own writes and those of the
//! calls before it): every new text written, one flush, then the swaps, renames
//! and appends in the order the engine made them, then the flush its answer
//! waits for. The next call runs in the engine meanwhile.
//!
//! The order on disk is the engine's, so a kill at any moment leaves what a
//! kill left before: anything not queued (a rename, a note made, a batch
//! staged) carries out the queue first, and so does a read of a file with a
//! write waiting. A power cut finds every swapped-in text whole, as before.

use crate::disk::{remove_if_there, store_file, Stamp, STORE, TMP_SUFFIX};
use crate::done_in_place;
use datanotes_core::edits::StoreWrite;
use datanotes_core::owed::Behind;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

/// One write waiting.
enum Op {
    /// A store file written whole, appended to, or deleted.
    Store { vault: PathBuf, write: StoreWrite },
    /// A note's new text, in a spare filled under the lock, to swap in; `was`
    /// is what the engine found there before planning it.
    Note { vault: PathBuf, spare: PathBuf, note: PathBuf, was: Vec<u8> },
}

#[derive(Default)]
struct Queue {
    ops: Vec<Op>,
    /// The files with a write waiting or under way, and how many.
    files: HashMap<PathBuf, usize>,
    /// Calls whose writes are queued, numbered in the engine's order.
    sealed: u64,
}

static QUEUE: LazyLock<Mutex<Queue>> = LazyLock::new(Mutex::default);
/// The notes the queue swapped in last, as the file system then described them
/// (inode, modification time, size): see `own`.
static OWN: LazyLock<Mutex<HashMap<PathBuf, Stamp>>> = LazyLock::new(Mutex::default);
/// A note's stamps kept at most (the oldest are forgotten: read back then).
const OWN_AT_MOST: usize = 10_000;

fn stamp(path: &Path) -> Option<Stamp> {
    fs::symlink_metadata(path).ok().map(|m| crate::disk::stamp(&m))
}

/// Whether `note` is as this process's queue last swapped it in: the watcher's
/// event is then the engine's own write, which the engine knows, and the note
/// need not be read back under the engine's lock. Any other change (a person's
/// edit, in place or through another file) gives another inode or change time;
/// only an edit in place, of the same size, within the same tick of the
/// file system's clock as the swap would pass, and the next event or open
/// finds it (as the notes' cache would).
pub fn own(note: &Path) -> bool {
    let Some(now) = stamp(note) else { return false };
    OWN.lock().unwrap_or_else(PoisonError::into_inner).get(note) == Some(&now)
}

fn swapped_in(note: &Path) {
    let Some(s) = stamp(note) else { return };
    let mut own = OWN.lock().unwrap_or_else(PoisonError::into_inner);
    if own.len() >= OWN_AT_MOST {
        own.clear();
    }
    own.insert(note.to_path_buf(), s);
}

/// Held while a queue is carried out.
static RUNNING: Mutex<()> = Mutex::new(());
/// The calls up to this one have their writes carried out.
static DONE: AtomicU64 = AtomicU64::new(0);

fn queue() -> MutexGuard<'static, Queue> {
    QUEUE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether writes are queued rather than made at once: under group commit.
pub fn on() -> bool {
    crate::durable::deferring()
}

/// Whether `file` has a write waiting or under way: a read waits for it (`run`).
pub fn holds(file: &Path) -> bool {
    queue().files.contains_key(file)
}

impl Op {
    fn file(&self) -> PathBuf {
        match self {
            Op::Store { vault, write } => vault.join(STORE).join(&write.path),
            Op::Note { note, .. } => note.clone(),
        }
    }
}

impl Queue {
    fn push(&mut self, op: Op) {
        *self.files.entry(op.file()).or_default() += 1;
        self.ops.push(op);
        crate::durable::dirty();
    }

    /// `ops` are carried out (or given up).
    fn settled(&mut self, ops: &[Op]) {
        for op in ops {
            let file = op.file();
            if let Some(n) = self.files.get_mut(&file) {
                *n -= 1;
                if *n == 0 {
                    self.files.remove(&file);
                }
            }
        }
    }
}

/// Queues a store file's write.
pub fn store(vault: &Path, write: StoreWrite) {
    queue().push(Op::Store { vault: vault.to_path_buf(), write });
}

/// Queues a note's new text, already in `spare`, to be swapped in.
pub fn note(vault: &Path, spare: PathBuf, note: PathBuf, was: Vec<u8>) {
    queue().push(Op::Note { vault: vault.to_path_buf(), spare, note, was });
}

/// Closes a call's writes (under the engine's lock): the number `done` reaches
/// once they are on disk.
pub fn seal() -> u64 {
    let mut q = queue();
    q.sealed += 1;
    q.sealed
}

/// The calls whose writes are all carried out (not yet flushed).
pub fn done() -> u64 {
    DONE.load(Ordering::SeqCst)
}

/// Carries out the queue, in order. On failure what is left stays queued, in
/// order, to be tried again.
pub fn run() -> Result<(), String> {
    run_for(u64::MAX)
}

/// As `run`, unless the writes of the call `ticket` (see `seal`) are carried
/// out meanwhile, by whoever ran the queue: then the calls waiting to run it
/// leave it to the first whose writes are still queued, which carries out
/// all that came since in one go.
pub fn run_for(ticket: u64) -> Result<(), String> {
    if done() >= ticket {
        return Ok(());
    }
    let _running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    if done() >= ticket {
        return Ok(());
    }
    let (ops, sealed) = {
        let mut q = queue();
        (std::mem::take(&mut q.ops), q.sealed)
    };
    let carried = carry_out(&ops);
    let mut q = queue();
    if let Err((k, e)) = carried {
        q.settled(&ops[..k]);
        let mut rest: Vec<Op> = ops.into_iter().skip(k).collect();
        rest.append(&mut q.ops);
        q.ops = rest;
        return Err(e);
    }
    q.settled(&ops);
    DONE.fetch_max(sealed, Ordering::SeqCst);
    Ok(())
}

/// Empties the queue after `run` failed twice: the store writes, for the engine
/// to owe (it writes them before its next write and says so meanwhile); the
/// notes are swapped in, as the engine holds them and the answers say (a full
/// disk stops the records, whose new files take room, rather than a note's
/// swap, whose spare is full already). Also: the calls whose writes these were
/// (see `seal`), for `lost`.
pub fn give_up() -> (Vec<StoreWrite>, RangeInclusive<u64>) {
    let _running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    let mut q = queue();
    let calls = done() + 1..=q.sealed;
    let ops = std::mem::take(&mut q.ops);
    q.settled(&ops);
    let mut owed = vec![];
    let flushed = ops.iter().find_map(|op| match op {
        Op::Note { vault, .. } => Some(crate::durable::flush_now(vault, std::iter::empty()).is_ok()),
        Op::Store { .. } => None,
    });
    for op in ops {
        match op {
            Op::Store { write, .. } => owed.push(write),
            Op::Note { vault, spare, note, was } => {
                let store = vault.join(STORE);
                let failed = match flushed {
                    Some(true) => swap_note(&store, &spare, &note, &was).err(),
                    _ => {
                        crate::spare::give_back(&store, spare);
                        Some("its new text could not be flushed".into())
                    }
                };
                if let Some(e) = failed {
                    eprintln!(
                        "datanotes: warning: {} was not written ({e}): the engine reads it again",
                        note.display()
                    );
                }
            }
        }
    }
    DONE.fetch_max(q.sealed, Ordering::SeqCst);
    (owed, calls)
}

/// What the last queues given up left unrecorded, and for which calls.
static LOST: Mutex<Vec<(RangeInclusive<u64>, Behind)>> = Mutex::new(Vec::new());
/// Given-up queues remembered at most (a call asks right after its own).
const LOST_AT_MOST: usize = 16;

/// `calls`' store writes were given up, as `behind` says.
pub fn lost_for(calls: RangeInclusive<u64>, behind: Behind) {
    let mut lost = LOST.lock().unwrap_or_else(PoisonError::into_inner);
    if lost.len() >= LOST_AT_MOST {
        lost.remove(0);
    }
    lost.push((calls, behind));
}

/// What of the call `ticket`'s store writes was not recorded, if its queue
/// was given up (whoever carried it out): its answer says so.
pub fn lost(ticket: u64) -> Option<Behind> {
    let lost = LOST.lock().unwrap_or_else(PoisonError::into_inner);
    lost.iter().rev().find(|(calls, _)| calls.contains(&ticket)).map(|(_, b)| b.clone())
}

/// A whole file's new text, written ahead of its swap or rename.
enum Ahead {
    None,
    /// To swap with the file.
    Spare(PathBuf),
    /// To rename into the place of a file that is not there yet.
    Fresh(PathBuf, PathBuf),
    Temp(PathBuf, PathBuf),
    /// A journal entry completed in place: its status's value at this offset
    /// (see `done_in_place`).
    #[cfg(unix)]
    Done(u64, Box<str>),
}

/// Writes every new text, flushes once, then swaps, renames, appends and
/// deletes in order. On failure: how many ops are done, and why.
fn carry_out(ops: &[Op]) -> Result<(), (usize, String)> {
    let Some(vault) = ops.first().map(|op| match op {
        Op::Store { vault, .. } | Op::Note { vault, .. } => vault.clone(),
    }) else {
        return Ok(());
    };
    let mut ahead: Vec<Ahead> = Vec::with_capacity(ops.len());
    let mut flush = false;
    // A text that cannot be written ahead stops the queue there: what comes
    // before it is still carried out, in order, as a write made at once would.
    let mut failed = None;
    // Store files this queue makes before it writes them again (a journal
    // entry written pending, then done): the second write is a swap.
    let mut made: HashSet<PathBuf> = HashSet::new();
    // What the ops before leave in the journal's files (None: unknown).
    let mut left: HashMap<PathBuf, Option<&str>> = HashMap::new();
    for (k, op) in ops.iter().enumerate() {
        let a = match op {
            Op::Note { .. } => Ahead::None,
            Op::Store { vault, write } => match write_ahead(vault, write, k, &mut made, &mut left) {
                Ok(a) => a,
                Err(e) => {
                    failed = Some((k, e));
                    break;
                }
            },
        };
        flush |= matches!(op, Op::Note { .. }) || !matches!(a, Ahead::None);
        ahead.push(a);
    }
    // Swapped in or renamed only once their texts are on the disk, so that a
    // power cut cannot leave a file holding a spare's older bytes.
    if flush {
        if let Err(e) = crate::durable::flush_now(&vault, std::iter::empty()) {
            forget(&vault, &mut ahead);
            return Err((0, e.to_string()));
        }
    }
    for k in 0..ahead.len() {
        let a = std::mem::replace(&mut ahead[k], Ahead::None);
        if let Err(e) = put(&ops[k], a) {
            forget(&vault, &mut ahead[k..]);
            return Err((k, e));
        }
    }
    failed.map_or(Ok(()), Err)
}

/// A store file's new text written beside it (a spare; a temporary file for one
/// that must stay owner-only, or where spares cannot be used); nothing for an
/// append or a deletion. `made`: the files the queue makes before this op; `k`
/// (the op's place) names a temporary file.
fn write_ahead<'a>(
    vault: &Path,
    w: &'a StoreWrite,
    k: usize,
    made: &mut HashSet<PathBuf>,
    left: &mut HashMap<PathBuf, Option<&'a str>>,
) -> Result<Ahead, String> {
    let named = |e: &dyn std::fmt::Display| format!("{STORE}/{}: {e}", w.path);
    let full = store_file(vault, &w.path, !w.delete).map_err(|e| named(&e))?;
    if w.delete {
        made.remove(&full);
    }
    let journal = w.path.starts_with(datanotes_core::journal::DIR);
    let was =
        if journal { left.insert(full.clone(), (!w.delete && !w.append).then_some(w.text.as_str())) } else { None };
    if w.delete || w.append {
        return Ok(Ahead::None);
    }
    #[cfg(unix)]
    if let Some((at, pending)) = journal.then(|| done_in_place::patch_for(&full, was, &w.text)).flatten() {
        return Ok(Ahead::Done(at, pending));
    }
    // A new file too is a spare written over, renamed into place rather than
    // swapped: spares are made ahead, off the writes' path (see
    // `spare::keep_ready`).
    let secret = datanotes_core::webhook::is_file(&w.path);
    if !secret {
        if let Some(spare) = crate::spare::fill(&vault.join(STORE), &w.text) {
            if made.contains(&full) || fs::symlink_metadata(&full).is_ok_and(|m| m.is_file()) {
                return Ok(Ahead::Spare(spare));
            }
            made.insert(full.clone());
            return Ok(Ahead::Fresh(spare, full));
        }
    }
    let name = full.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let tmp = full.with_file_name(format!(".{name}.{k}{TMP_SUFFIX}"));
    crate::disk::write_whole_unsynced(&tmp, &w.text, secret).map_err(|e| named(&e))?;
    made.insert(full.clone());
    Ok(Ahead::Temp(tmp, full))
}

/// Texts written ahead that will not be put: spares back, temporary files gone.
fn forget(vault: &Path, ahead: &mut [Ahead]) {
    for a in ahead {
        match std::mem::replace(a, Ahead::None) {
            Ahead::None => {}
            Ahead::Spare(s) | Ahead::Fresh(s, _) => crate::spare::give_back(&vault.join(STORE), s),
            Ahead::Temp(tmp, _) => drop(fs::remove_file(tmp)),
            #[cfg(unix)]
            Ahead::Done(..) => {}
        }
    }
}

/// Puts one op's text in place (its text written ahead, if any).
fn put(op: &Op, ahead: Ahead) -> Result<(), String> {
    let put = put_text(op, ahead);
    if let Op::Store { vault, write } = op {
        if write.path.starts_with(datanotes_core::journal::DIR) {
            let whole = (put.is_ok() && !write.delete && !write.append).then_some(write.text.as_str());
            done_in_place::now_holds(&vault.join(STORE).join(&write.path), whole);
        }
    }
    put
}

fn put_text(op: &Op, ahead: Ahead) -> Result<(), String> {
    match (op, ahead) {
        #[cfg(unix)]
        (Op::Store { vault, write }, Ahead::Done(at, pending)) => {
            let full = store_file(vault, &write.path, false)?;
            if done_in_place::write(&full, at, &pending) {
                return Ok(());
            }
            // Not done in place: written whole, as any store file outside the queue.
            crate::disk::write_store_file(vault, write)
        }
        (Op::Note { vault, spare, note, was }, _) => swap_note(&vault.join(STORE), spare, note, was),
        (Op::Store { vault, write }, Ahead::Spare(spare)) => {
            let full = store_file(vault, &write.path, true)?;
            crate::spare::put(&vault.join(STORE), spare, &full).map_err(|e| format!("{STORE}/{}: {e}", write.path))
        }
        (Op::Store { vault, write }, Ahead::Fresh(spare, full)) => fs::rename(&spare, &full).map_err(|e| {
            crate::spare::give_back(&vault.join(STORE), spare);
            format!("{STORE}/{}: {e}", write.path)
        }),
        (Op::Store { write, .. }, Ahead::Temp(tmp, full)) => fs::rename(&tmp, &full).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            format!("{STORE}/{}: {e}", write.path)
        }),
        (Op::Store { vault, write }, Ahead::None) => {
            let full = store_file(vault, &write.path, !write.delete)?;
            let done = if write.delete { remove_if_there(&full) } else { crate::disk::append(&full, &write.text) };
            done.map_err(|e| format!("{STORE}/{}: {e}", write.path))
        }
    }
}

/// Swaps a note's new text in. A person's edit made since the engine read the
/// note (in the millisecond between) is put back at once, for the watcher to
/// report as a hand edit over the write, rather than lost in the spare.
fn swap_note(store: &Path, spare: &Path, note: &Path, was: &[u8]) -> Result<(), String> {
    use crate::spare::Swap;
    let named = |e: std::io::Error| format!("{}: {e}", note.display());
    crate::spare::folder_ok(store).map_err(named)?;
    let swapped = crate::spare::swap(spare, note).map_err(named)?;
    match swapped {
        Swap::Swapped if fs::read(spare).is_ok_and(|old| old != was) => {
            crate::spare::swap(spare, note).map_err(named)?;
            eprintln!("datanotes: warning: {} was edited while it was written: the edit is kept", note.display());
        }
        Swap::Swapped => swapped_in(note),
        // The note went meanwhile: it stays gone.
        Swap::Moved => {
            fs::rename(note, spare).map_err(named)?;
        }
        Swap::OtherDevice => {
            let text = fs::read_to_string(spare).map_err(named)?;
            crate::disk::write_atomic(note, &text).map_err(named)?;
        }
        _ => {}
    }
    let spare = spare.to_path_buf();
    crate::spare::give_back(store, spare);
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// One test, as the queue is the process's.
    #[test]
    fn point_14_queued_writes_go_to_disk_in_order_and_a_hand_edit_made_meanwhile_is_kept() {
        let vault = std::env::temp_dir().join(format!("datanotes-queue-{}", std::process::id()));
        let _ = fs::remove_dir_all(&vault);
        let store = vault.join(STORE);
        fs::create_dir_all(&store).unwrap();
        let note = vault.join("Charade.md");
        fs::write(&note, "old\n").unwrap();
        // Spares made ahead (see spare::keep_ready): a new store file is one of
        // them, written and renamed into place; the queue makes no file.
        fs::create_dir_all(store.join(crate::spare::DIR)).unwrap();
        let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&fs::metadata(p).unwrap());
        let ready: Vec<u64> = (0..8)
            .map(|n| {
                let p = store.join(crate::spare::DIR).join(format!("s{n}"));
                fs::write(&p, "").unwrap();
                inode(&p)
            })
            .collect();
        let fill = |text: &str| crate::spare::fill(&store, text).unwrap();
        let read = |p: &Path| fs::read_to_string(p).unwrap();

        // An entry written pending, the note, a new file, the entry done, a line
        // of the feed.
        super::store(&vault, StoreWrite::put("journal/a.json", "pending\n"));
        super::note(&vault, fill("new\n"), note.clone(), b"old\n".to_vec());
        super::store(&vault, StoreWrite::put("commit.json", "commit\n"));
        super::store(&vault, StoreWrite::put("journal/a.json", "done\n"));
        super::store(&vault, StoreWrite::append("feed/1.jsonl", "{\"seq\":1}\n"));
        let call = seal();
        assert!(holds(&note) && holds(&store.join("journal/a.json")));
        assert_eq!(read(&note), "old\n", "nothing is written before the queue is carried out");
        run().unwrap();
        assert!(done() >= call);
        assert!(!holds(&note) && !holds(&store.join("journal/a.json")));
        assert_eq!(read(&note), "new\n");
        assert!(own(&note), "the watcher's event for it is the engine's own write");
        assert_eq!(read(&store.join("journal/a.json")), "done\n");
        assert!(ready.contains(&inode(&store.join("commit.json"))), "a spare made ahead");
        assert_eq!(read(&store.join("feed/1.jsonl")), "{\"seq\":1}\n");
        let left: Vec<_> = fs::read_dir(store.join("journal")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left, ["a.json"], "no temporary file is left");

        // An entry done after pending, in the same queue and in the next:
        // completed in place (the same file, its status's value written over).
        let pending = |id: &str| format!("{{\"migration_id\":\"{id}\",\"status\":\"pending\",\"changes\":[]}}\n");
        let done_entry = |id: &str| pending(id).replace("\"pending\"", "\"done\"");
        let entry = |id: &str| store.join(format!("journal/{id}.json"));
        let json = |p: &Path| serde_json::from_str::<serde_json::Value>(&read(p)).unwrap();
        super::store(&vault, StoreWrite::put("journal/c.json", pending("c")));
        super::note(&vault, fill("third\n"), note.clone(), b"new\n".to_vec());
        super::store(&vault, StoreWrite::put("journal/c.json", done_entry("c")));
        super::store(&vault, StoreWrite::put("journal/d.json", pending("d")));
        seal();
        run().unwrap();
        assert_eq!(json(&entry("c")), serde_json::from_str::<serde_json::Value>(&done_entry("c")).unwrap());
        assert!(read(&entry("c")).contains("\"status\":\"done\"   ,"), "completed in place: {}", read(&entry("c")));
        let d = inode(&entry("d"));
        super::store(&vault, StoreWrite::put("journal/d.json", done_entry("d")));
        seal();
        run().unwrap();
        assert_eq!(inode(&entry("d")), d, "the same file");
        assert_eq!(json(&entry("d")), serde_json::from_str::<serde_json::Value>(&done_entry("d")).unwrap());
        // What the queue remembers is a hint: a file that holds something
        // else (an entry another way wrote) is written whole, never patched.
        super::store(&vault, StoreWrite::put("journal/e.json", pending("e")));
        seal();
        run().unwrap();
        fs::write(entry("e"), done_entry("e")).unwrap();
        super::store(&vault, StoreWrite::put("journal/e.json", done_entry("e")));
        seal();
        run().unwrap();
        assert_eq!(read(&entry("e")), done_entry("e"));
        // Nor through a link put in its place: the link is replaced, its
        // target left as it was.
        super::store(&vault, StoreWrite::put("journal/f.json", pending("f")));
        seal();
        run().unwrap();
        let target = vault.join("elsewhere.json");
        fs::rename(entry("f"), &target).unwrap();
        std::os::unix::fs::symlink(&target, entry("f")).unwrap();
        super::store(&vault, StoreWrite::put("journal/f.json", done_entry("f")));
        seal();
        run().unwrap();
        assert!(fs::symlink_metadata(entry("f")).unwrap().is_file());
        assert_eq!(read(&entry("f")), done_entry("f"));
        assert_eq!(read(&target), pending("f"), "nothing written through the link");

        // A person's edit between the engine's read and the swap stays, for
        // the watcher to report.
        super::note(&vault, fill("engine\n"), note.clone(), b"new\n".to_vec());
        fs::write(&note, "hand\n").unwrap();
        assert!(!own(&note), "a person's edit is read back");
        seal();
        run().unwrap();
        assert_eq!(read(&note), "hand\n");

        // A write that cannot be made (a file where its folder must be) stops
        // the queue there: what comes before it is done, in order; the store
        // writes from it on are then owed, in order, and the notes among them
        // swapped in (the engine holds their new texts, and its answers say so).
        fs::write(store.join("log"), "not a folder").unwrap();
        super::store(&vault, StoreWrite::put("journal/b.json", "pending\n"));
        super::note(&vault, fill("first\n"), note.clone(), b"hand\n".to_vec());
        super::store(&vault, StoreWrite::put("log/1.json", "commit\n"));
        super::store(&vault, StoreWrite::put("journal/b.json", "done\n"));
        super::note(&vault, fill("second\n"), note.clone(), b"first\n".to_vec());
        let call = seal();
        let e = run().unwrap_err();
        assert!(e.contains("log/1.json"), "{e}");
        assert_eq!(read(&store.join("journal/b.json")), "pending\n", "done up to the failure");
        assert_eq!(read(&note), "first\n");
        assert!(holds(&note), "its second write still queued");
        let (owed, calls) = give_up();
        let owed: Vec<String> = owed.into_iter().map(|w| w.path).collect();
        assert_eq!(owed, ["log/1.json", "journal/b.json"]);
        assert_eq!(read(&note), "second\n", "swapped in though its records are owed");
        assert!(calls.contains(&call) && !calls.contains(&(call - 1)), "{calls:?}");
        let behind = Behind { log: String::new(), not_recorded: owed, warning: "full".into() };
        lost_for(calls, behind.clone());
        assert_eq!(lost(call), Some(behind), "the call's answer says what was lost");
        assert_eq!(lost(call - 1), None);
        assert!(!holds(&note));
        assert!(done() >= queue().sealed);
        fs::remove_dir_all(&vault).unwrap();
    }
}
