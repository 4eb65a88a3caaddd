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
//!
//! The disk may refuse what the engine planned (a full disk, a failed sync, a
//! store folder replaced) once the call's answer is made. Every text is
//! written ahead of any swap or rename, so a full disk stops a call before
//! anything of it stands: the calls before it are carried out whole, it and
//! those after it not at all. What the queue could not carry out is given up
//! (`abandon`), never carried out in part and left unrecorded: the engine then
//! reads the vault again, and each call is answered by what stands (`fate`).

use crate::disk::{remove_if_there, Stamp, StoreFiles, STORE, TMP_SUFFIX};
use crate::done_in_place;
use crate::fate::{self, Fate};
use datanotes_core::edits::StoreWrite;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

/// One write waiting, of the call `call` (numbered as `seal` numbers them).
struct Queued {
    call: u64,
    op: Op,
}

/// A write.
enum Op {
    /// A store file written whole, appended to, or deleted.
    Store { vault: PathBuf, write: StoreWrite },
    /// A note's new text, in a spare filled under the lock, to swap in; `was`
    /// is what the engine found there before planning it.
    Note { vault: PathBuf, spare: PathBuf, note: PathBuf, was: Vec<u8> },
}

#[derive(Default)]
struct Queue {
    ops: Vec<Queued>,
    /// The files with a write waiting or under way, and how many.
    files: HashMap<PathBuf, usize>,
    /// Calls whose writes are queued, numbered in the engine's order.
    sealed: u64,
    /// The last call with something on disk (a write carried out, or made at
    /// once: `direct`): given up, it is cut short rather than rolled back.
    begun: u64,
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

    fn vault(&self) -> &Path {
        match self {
            Op::Store { vault, .. } | Op::Note { vault, .. } => vault,
        }
    }
}

impl Queue {
    /// Queues a write of the call under way, the next to be sealed.
    fn push(&mut self, op: Op) {
        *self.files.entry(op.file()).or_default() += 1;
        self.ops.push(Queued { call: self.sealed + 1, op });
        crate::durable::dirty();
    }

    /// `ops` are carried out (or given up).
    fn settled(&mut self, ops: &[Queued]) {
        for Queued { op, .. } in ops {
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

/// A write is made at once rather than queued (the queue carried out first):
/// the call under way has something on disk from now on (see `abandon`).
pub fn direct() {
    let mut q = queue();
    q.begun = q.begun.max(q.sealed + 1);
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
    let put = carried.as_ref().map_or_else(|stop| stop.put, |()| ops.len());
    q.settled(&ops[..put]);
    if let Some(last) = ops[..put].last() {
        q.begun = q.begun.max(last.call);
    }
    let Err(stop) = carried else {
        DONE.fetch_max(sealed, Ordering::SeqCst);
        return Ok(());
    };
    // The calls before the first write left are carried out whole.
    if let Some(first) = ops.get(put) {
        DONE.fetch_max(first.call - 1, Ordering::SeqCst);
    }
    let mut rest: Vec<Queued> = ops.into_iter().skip(put).collect();
    rest.append(&mut q.ops);
    q.ops = rest;
    Err(stop.error)
}

/// Gives up the queue after `run` failed twice, `error` the disk's word:
/// nothing left in it is carried out (a note's new text stays in its spare,
/// which goes back to the pool), so that nothing stands on disk that its
/// records do not name. The engine, which holds those writes, must read the
/// vault again (`shared`). The calls whose writes these were get their
/// fate: the first cut short if something of it stands already, else rolled
/// back, and every later one rolled back.
pub fn abandon(error: &str) {
    let _running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    let mut q = queue();
    let ops = std::mem::take(&mut q.ops);
    q.settled(&ops);
    let first = ops.first().map(|o| o.call);
    for Queued { op, .. } in ops {
        if let Op::Note { vault, spare, .. } = op {
            crate::spare::give_back(&vault.join(STORE), spare);
        }
    }
    if let Some(first) = first.filter(|&c| c <= q.sealed) {
        let gone = if q.begun >= first { Fate::CutShort } else { Fate::RolledBack };
        fate::set(first..=first, gone(error.to_string()));
        fate::set(first + 1..=q.sealed, Fate::RolledBack(error.to_string()));
    }
    DONE.fetch_max(q.sealed, Ordering::SeqCst);
}

/// A whole file's new text, written ahead of its swap or rename.
enum Ahead {
    None,
    /// To swap with the file.
    Spare(PathBuf),
    /// To rename into the place of a file that is not there yet.
    Fresh(PathBuf),
    Temp(PathBuf),
    /// A journal entry completed in place: its status's value at this offset
    /// (see `done_in_place`).
    #[cfg(unix)]
    Done(u64, Box<str>),
}

/// Where carrying out a queue stopped: the writes before `put` are carried
/// out, none from it on; `error` is the disk's word.
struct Stop {
    put: usize,
    error: String,
}

/// Writes every new text, flushes once, then swaps, renames, appends and
/// deletes in order. A text that cannot be written ahead (a full disk) stops
/// the queue before its call: the calls before are carried out whole, nothing
/// of it, so that no call stands in part for want of room.
fn carry_out(ops: &[Queued]) -> Result<(), Stop> {
    let Some(vault) = ops.first().map(|q| q.op.vault().to_path_buf()) else { return Ok(()) };
    let (mut ahead, failed) = write_all_ahead(ops);
    let end = match &failed {
        Some((k, _)) => ops[..*k].iter().rposition(|q| q.call != ops[*k].call).map_or(0, |i| i + 1),
        None => ops.len(),
    };
    forget(&vault, &mut ahead[end..]);
    ahead.truncate(end);
    // Swapped in or renamed only once their texts are on the disk, so that a
    // power cut cannot leave a file holding a spare's older bytes.
    let texts = ops.iter().zip(&ahead).any(|(q, a)| matches!(q.op, Op::Note { .. }) || !matches!(a, Ahead::None));
    if texts {
        if let Err(e) = crate::durable::flush_now(&vault, std::iter::empty()) {
            forget(&vault, &mut ahead);
            return Err(Stop { put: 0, error: e.to_string() });
        }
    }
    // The store's folders checked again: a link may have taken one's place
    // since the texts were written.
    let mut checks = StoreFiles::default();
    for k in 0..end {
        let a = std::mem::replace(&mut ahead[k], Ahead::None);
        if let Err(error) = put(&mut checks, &ops[k].op, a) {
            forget(&vault, &mut ahead[k..]);
            return Err(Stop { put: k, error });
        }
    }
    failed.map_or(Ok(()), |(_, error)| Err(Stop { put: end, error }))
}

/// Every store file's new text written beside it, and the room for every
/// append taken, in order, up to the first that cannot be: the texts
/// written, and that failure.
fn write_all_ahead(ops: &[Queued]) -> (Vec<Ahead>, Option<(usize, String)>) {
    let mut ahead: Vec<Ahead> = Vec::with_capacity(ops.len());
    let mut batch = Batch::default();
    for q in ops {
        if let Op::Store { write, .. } = &q.op {
            if write.append {
                *batch.to_append.entry(write.path.as_str()).or_default() += write.text.len() as u64;
            }
        }
    }
    for (k, q) in ops.iter().enumerate() {
        let a = match &q.op {
            Op::Note { .. } => Ahead::None,
            Op::Store { vault, write } => match write_ahead(&mut batch, vault, write, k) {
                Ok(a) => a,
                Err(e) => return (ahead, Some((k, e))),
            },
        };
        ahead.push(a);
    }
    (ahead, None)
}

/// What writing a queue's texts ahead knows of it so far.
#[derive(Default)]
struct Batch<'a> {
    checks: StoreFiles,
    /// Store files this queue makes before it writes them again (a journal
    /// entry written pending, then done): the second write is a swap.
    made: HashSet<PathBuf>,
    /// What the ops before leave in the journal's files (None: unknown).
    left: HashMap<PathBuf, Option<&'a str>>,
    /// The bytes the queue appends to each file, its room taken at the first.
    to_append: HashMap<&'a str, u64>,
}

/// A store file's new text written beside it (a spare; a temporary file for one
/// that must stay owner-only, or where spares cannot be used); nothing for a
/// deletion, nor for an append, whose room is taken (`disk::reserve`). `k`
/// (the op's place) names a temporary file.
fn write_ahead<'a>(b: &mut Batch<'a>, vault: &Path, w: &'a StoreWrite, k: usize) -> Result<Ahead, String> {
    let named = |e: &dyn std::fmt::Display| format!("{STORE}/{}: {e}", w.path);
    let full = b.checks.file(vault, &w.path, !w.delete).map_err(|e| named(&e))?;
    if w.delete {
        b.made.remove(&full);
    }
    let journal = w.path.starts_with(datanotes_core::journal::DIR);
    let was =
        if journal { b.left.insert(full.clone(), (!w.delete && !w.append).then_some(w.text.as_str())) } else { None };
    if w.append {
        if let Some(len) = b.to_append.remove(w.path.as_str()) {
            crate::disk::reserve(&full, len).map_err(|e| named(&e))?;
        }
        return Ok(Ahead::None);
    }
    if w.delete {
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
            if b.made.contains(&full) || fs::symlink_metadata(&full).is_ok_and(|m| m.is_file()) {
                return Ok(Ahead::Spare(spare));
            }
            b.made.insert(full.clone());
            return Ok(Ahead::Fresh(spare));
        }
    }
    let name = full.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let tmp = full.with_file_name(format!(".{name}.{k}{TMP_SUFFIX}"));
    crate::disk::write_whole_unsynced(&tmp, &w.text, secret).map_err(|e| named(&e))?;
    b.made.insert(full.clone());
    Ok(Ahead::Temp(tmp))
}

/// Texts written ahead that will not be put: spares back, temporary files gone.
fn forget(vault: &Path, ahead: &mut [Ahead]) {
    for a in ahead {
        match std::mem::replace(a, Ahead::None) {
            Ahead::None => {}
            Ahead::Spare(s) | Ahead::Fresh(s) => crate::spare::give_back(&vault.join(STORE), s),
            Ahead::Temp(tmp) => drop(fs::remove_file(tmp)),
            #[cfg(unix)]
            Ahead::Done(..) => {}
        }
    }
}

/// Puts one op's text in place (its text written ahead, if any).
fn put(checks: &mut StoreFiles, op: &Op, ahead: Ahead) -> Result<(), String> {
    let put = put_text(checks, op, ahead);
    if let Op::Store { vault, write } = op {
        if write.path.starts_with(datanotes_core::journal::DIR) {
            let whole = (put.is_ok() && !write.delete && !write.append).then_some(write.text.as_str());
            done_in_place::now_holds(&vault.join(STORE).join(&write.path), whole);
        }
    }
    put
}

fn put_text(checks: &mut StoreFiles, op: &Op, ahead: Ahead) -> Result<(), String> {
    let (vault, write) = match op {
        Op::Note { vault, spare, note, was } => return swap_note(&vault.join(STORE), spare, note, was),
        Op::Store { vault, write } => (vault, write),
    };
    let named = |e: &dyn std::fmt::Display| format!("{STORE}/{}: {e}", write.path);
    let full = match checks.file(vault, &write.path, !write.delete) {
        Ok(full) => full,
        Err(e) => {
            forget(vault, &mut [ahead]);
            return Err(named(&e));
        }
    };
    match ahead {
        #[cfg(unix)]
        Ahead::Done(at, pending) => {
            if done_in_place::write(&full, at, &pending) {
                return Ok(());
            }
            // Not done in place: written whole, as any store file outside the queue.
            crate::disk::write_store_file(vault, write)
        }
        Ahead::Spare(spare) => crate::spare::put(&vault.join(STORE), spare, &full).map_err(|e| named(&e)),
        Ahead::Fresh(spare) => fs::rename(&spare, &full).map_err(|e| {
            crate::spare::give_back(&vault.join(STORE), spare);
            named(&e)
        }),
        Ahead::Temp(tmp) => fs::rename(&tmp, &full).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            named(&e)
        }),
        Ahead::None => {
            let done = if write.delete { remove_if_there(&full) } else { crate::disk::append(&full, &write.text) };
            done.map_err(|e| named(&e))
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

        given_up_leaves_nothing_unrecorded(&vault, &note);
        fs::remove_dir_all(&vault).unwrap();
    }

    /// Part of the test above (the queue is the process's): a queue the disk
    /// refuses, then given up.
    fn given_up_leaves_nothing_unrecorded(vault: &Path, note: &Path) {
        let store = vault.join(STORE);
        let fill = |text: &str| crate::spare::fill(&store, text).unwrap();
        let read = |p: &Path| fs::read_to_string(p).unwrap();
        let (vault, note) = (vault.to_path_buf(), note.to_path_buf());
        // A write that cannot be made (a file where its folder must be) stops
        // the queue before its call: the calls before it are carried out
        // whole, nothing of it or of those after.
        fs::write(store.join("log"), "not a folder").unwrap();
        super::store(&vault, StoreWrite::put("journal/a2.json", "pending\n"));
        super::note(&vault, fill("first\n"), note.clone(), b"hand\n".to_vec());
        super::store(&vault, StoreWrite::put("journal/a2.json", "done\n"));
        let a = seal();
        super::store(&vault, StoreWrite::put("journal/b.json", "pending\n"));
        super::note(&vault, fill("second\n"), note.clone(), b"first\n".to_vec());
        super::store(&vault, StoreWrite::put("log/1.json", "commit\n"));
        super::store(&vault, StoreWrite::put("journal/b.json", "done\n"));
        let b = seal();
        let e = run().unwrap_err();
        assert!(e.contains("log/1.json"), "{e}");
        assert_eq!(read(&store.join("journal/a2.json")), "done\n", "the call before, whole");
        assert_eq!(read(&note), "first\n");
        assert!(done() >= a && done() < b);
        assert!(!store.join("journal/b.json").exists(), "nothing of the call that failed");
        assert!(holds(&note), "its write still queued, to be tried again");
        super::store(&vault, StoreWrite::put("journal/g.json", "pending\n"));
        let c = seal();
        // Given up: nothing more is carried out, and each call's fate is said.
        abandon("full");
        assert_eq!(read(&note), "first\n", "never swapped in unrecorded");
        assert!(!store.join("journal/b.json").exists(), "b");
        assert!(!store.join("journal/g.json").exists(), "c");
        assert_eq!(fate::of(b), Some(Fate::RolledBack("full".into())));
        assert_eq!(fate::of(c), Some(Fate::RolledBack("full".into())));
        assert_eq!(fate::of(a), None);
        assert!(!holds(&note));
        assert!(done() >= c);

        // A call with something on disk already (a write made at once, after
        // the queue) is cut short when given up.
        super::store(&vault, StoreWrite::put("journal/h.json", "pending\n"));
        run().unwrap();
        direct();
        super::store(&vault, StoreWrite::put("log/2.json", "commit\n"));
        let d = seal();
        assert!(run().is_err());
        abandon("full");
        assert_eq!(read(&store.join("journal/h.json")), "pending\n");
        assert_eq!(fate::of(d), Some(Fate::CutShort("full".into())));
    }
}
