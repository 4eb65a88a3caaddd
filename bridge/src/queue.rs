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

use crate::done_in_place::{self, Pending};
use crate::fate::{Fate, Fates};
use crate::files::{remove_if_there, reserve, stamp, write_whole_unsynced, Stamp, STORE, TMP_SUFFIX};
use crate::spare::Swap;
use crate::store::{Store, StoreFiles};
use datanotes_core::edits::StoreWrite;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// One write waiting, of the call `call` (numbered as `seal` numbers them).
struct Queued {
    call: u64,
    op: Op,
}

/// A write.
enum Op {
    /// A store file written whole, appended to, or deleted.
    Store(StoreWrite),
    /// A note's new text, in a spare filled under the lock, to swap in; `was`
    /// is what the engine found there before planning it.
    Note { spare: PathBuf, note: PathBuf, was: Vec<u8> },
}

impl Op {
    /// The file it writes, in the store at `store`.
    fn file(&self, store: &Path) -> PathBuf {
        match self {
            Op::Store(write) => store.join(&write.path),
            Op::Note { note, .. } => note.clone(),
        }
    }
}

/// The writes waiting, in order.
#[derive(Default)]
struct Waiting {
    ops: Vec<Queued>,
    /// The files with a write waiting or under way, and how many.
    files: HashMap<PathBuf, usize>,
    /// Calls whose writes are queued, numbered in the engine's order.
    sealed: u64,
    /// The last call with something on disk (a write carried out, or made at
    /// once: `direct`): given up, it is cut short rather than rolled back.
    begun: u64,
}

impl Waiting {
    /// Queues a write of the call under way, the next to be sealed.
    fn push(&mut self, store: &Path, op: Op) {
        *self.files.entry(op.file(store)).or_default() += 1;
        self.ops.push(Queued { call: self.sealed + 1, op });
    }

    /// `ops` are carried out (or given up).
    fn settled(&mut self, store: &Path, ops: &[Queued]) {
        for Queued { op, .. } in ops {
            let file = op.file(store);
            if let Some(n) = self.files.get_mut(&file) {
                *n -= 1;
                if *n == 0 {
                    self.files.remove(&file);
                }
            }
        }
    }
}

/// A note's stamps kept at most (the oldest are forgotten: read back then).
const OWN_AT_MOST: usize = 10_000;

/// The write queue of one store, and what it remembers of what it wrote.
#[derive(Default)]
pub struct Queue {
    waiting: Mutex<Waiting>,
    /// The notes the queue swapped in last, as the file system then described
    /// them (inode, change time, size): see `own`.
    own: Mutex<HashMap<PathBuf, Stamp>>,
    /// Held while a queue is carried out.
    running: Mutex<()>,
    /// The calls up to this one have their writes carried out.
    done: AtomicU64,
    /// The journal entries it left pending (see `done_in_place`).
    pending: Pending,
}

fn stamp_of(path: &Path) -> Option<Stamp> {
    fs::symlink_metadata(path).ok().map(|m| stamp(&m))
}

/// Where carrying out a queue stopped: the writes before `put` are carried
/// out, none from it on; `error` is the disk's word.
struct Stop {
    put: usize,
    error: String,
}

impl Queue {
    fn waiting(&self) -> MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `note` is as this queue last swapped it in: the watcher's event
    /// is then the engine's own write, which the engine knows, and the note
    /// need not be read back under the engine's lock. Any other change (a
    /// person's edit, in place or through another file) gives another inode or
    /// change time; only an edit in place, of the same size, within the same
    /// tick of the file system's clock as the swap would pass, and the next
    /// event or open finds it (as the notes' cache would).
    pub fn own(&self, note: &Path) -> bool {
        let Some(now) = stamp_of(note) else { return false };
        self.own.lock().unwrap_or_else(PoisonError::into_inner).get(note) == Some(&now)
    }

    fn swapped_in(&self, note: &Path) {
        let Some(s) = stamp_of(note) else { return };
        let mut own = self.own.lock().unwrap_or_else(PoisonError::into_inner);
        if own.len() >= OWN_AT_MOST {
            own.clear();
        }
        own.insert(note.to_path_buf(), s);
    }

    /// Whether `file` has a write waiting or under way: a read waits for it (`run`).
    pub fn holds(&self, file: &Path) -> bool {
        self.waiting().files.contains_key(file)
    }

    /// Queues a store file's write; its sync is left for the group sync.
    pub fn store(&self, s: &Store, write: StoreWrite) {
        self.waiting().push(s.dir(), Op::Store(write));
        s.syncs.dirty();
    }

    /// Queues a note's new text, already in `spare`, to be swapped in.
    pub fn note(&self, s: &Store, spare: PathBuf, note: PathBuf, was: Vec<u8>) {
        self.waiting().push(s.dir(), Op::Note { spare, note, was });
        s.syncs.dirty();
    }

    /// Closes a call's writes (under the engine's lock): the number `done`
    /// reaches once they are on disk.
    pub fn seal(&self) -> u64 {
        let mut w = self.waiting();
        w.sealed += 1;
        w.sealed
    }

    /// The calls whose writes are all carried out (not yet flushed).
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::SeqCst)
    }

    /// A write is made at once rather than queued (the queue carried out
    /// first): the call under way has something on disk from now on (see
    /// `abandon`).
    pub fn direct(&self) {
        let mut w = self.waiting();
        w.begun = w.begun.max(w.sealed + 1);
    }

    /// Carries out the queue, in order. On failure what is left stays queued,
    /// in order, to be tried again.
    pub fn run(&self, s: &Store) -> Result<(), String> {
        self.run_for(s, u64::MAX)
    }

    /// As `run`, unless the writes of the call `ticket` (see `seal`) are
    /// carried out meanwhile, by whoever ran the queue: then the calls waiting
    /// to run it leave it to the first whose writes are still queued, which
    /// carries out all that came since in one go.
    pub fn run_for(&self, s: &Store, ticket: u64) -> Result<(), String> {
        if self.done() >= ticket {
            return Ok(());
        }
        let _running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if self.done() >= ticket {
            return Ok(());
        }
        let (ops, sealed) = {
            let mut w = self.waiting();
            (std::mem::take(&mut w.ops), w.sealed)
        };
        let carried = self.carry_out(s, &ops);
        let mut w = self.waiting();
        let put = carried.as_ref().map_or_else(|stop| stop.put, |()| ops.len());
        w.settled(s.dir(), &ops[..put]);
        if let Some(last) = ops[..put].last() {
            w.begun = w.begun.max(last.call);
        }
        let Err(stop) = carried else {
            self.done.fetch_max(sealed, Ordering::SeqCst);
            return Ok(());
        };
        // The calls before the first write left are carried out whole.
        if let Some(first) = ops.get(put) {
            self.done.fetch_max(first.call - 1, Ordering::SeqCst);
        }
        let mut rest: Vec<Queued> = ops.into_iter().skip(put).collect();
        rest.append(&mut w.ops);
        w.ops = rest;
        Err(stop.error)
    }

    /// Gives up the queue after `run` failed twice, `error` the disk's word:
    /// nothing left in it is carried out (a note's new text stays in its
    /// spare, which goes back to the pool), so that nothing stands on disk
    /// that its records do not name. The engine, which holds those writes,
    /// must read the vault again (`shared`). The calls whose writes these were
    /// get their fate in `fates`: the first cut short if something of it
    /// stands already, else rolled back, and every later one rolled back.
    pub fn abandon(&self, s: &Store, fates: &Fates, error: &str) {
        let _running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let mut w = self.waiting();
        let ops = std::mem::take(&mut w.ops);
        w.settled(s.dir(), &ops);
        let first = ops.first().map(|o| o.call);
        for Queued { op, .. } in ops {
            if let Op::Note { spare, .. } = op {
                s.spares.give_back(spare);
            }
        }
        if let Some(first) = first.filter(|&c| c <= w.sealed) {
            let gone = if w.begun >= first { Fate::CutShort } else { Fate::RolledBack };
            fates.set(first..=first, gone(error.to_string()));
            fates.set(first + 1..=w.sealed, Fate::RolledBack(error.to_string()));
        }
        self.done.fetch_max(w.sealed, Ordering::SeqCst);
    }

    /// Writes every new text, flushes once, then swaps, renames, appends and
    /// deletes in order. A text that cannot be written ahead (a full disk)
    /// stops the queue before its call: the calls before are carried out
    /// whole, nothing of it, so that no call stands in part for want of room.
    fn carry_out(&self, s: &Store, ops: &[Queued]) -> Result<(), Stop> {
        if ops.is_empty() {
            return Ok(());
        }
        let (mut ahead, failed) = self.write_all_ahead(s, ops);
        let end = match &failed {
            Some((k, _)) => ops[..*k].iter().rposition(|q| q.call != ops[*k].call).map_or(0, |i| i + 1),
            None => ops.len(),
        };
        forget(s, &mut ahead[end..]);
        ahead.truncate(end);
        // Swapped in or renamed only once their texts are on the disk, so that a
        // power cut cannot leave a file holding a spare's older bytes.
        let texts = ops.iter().zip(&ahead).any(|(q, a)| matches!(q.op, Op::Note { .. }) || !matches!(a, Ahead::None));
        if texts {
            if let Err(e) = crate::durable::flush_now(s.vault(), std::iter::empty()) {
                forget(s, &mut ahead);
                return Err(Stop { put: 0, error: e.to_string() });
            }
        }
        // The store's folders checked again: a link may have taken one's place
        // since the texts were written.
        let mut checks = StoreFiles::default();
        for k in 0..end {
            let a = std::mem::replace(&mut ahead[k], Ahead::None);
            if let Err(error) = self.put(s, &mut checks, &ops[k].op, a) {
                forget(s, &mut ahead[k..]);
                return Err(Stop { put: k, error });
            }
        }
        failed.map_or(Ok(()), |(_, error)| Err(Stop { put: end, error }))
    }

    /// Every store file's new text written beside it, and the room for every
    /// append taken, in order, up to the first that cannot be: the texts
    /// written, and that failure.
    fn write_all_ahead(&self, s: &Store, ops: &[Queued]) -> (Vec<Ahead>, Option<(usize, String)>) {
        let mut ahead: Vec<Ahead> = Vec::with_capacity(ops.len());
        let mut batch = Batch::default();
        for q in ops {
            if let Op::Store(write) = &q.op {
                if write.append {
                    *batch.to_append.entry(write.path.as_str()).or_default() += write.text.len() as u64;
                }
            }
        }
        for (k, q) in ops.iter().enumerate() {
            let a = match &q.op {
                Op::Note { .. } => Ahead::None,
                Op::Store(write) => match self.write_ahead(s, &mut batch, write, k) {
                    Ok(a) => a,
                    Err(e) => return (ahead, Some((k, e))),
                },
            };
            ahead.push(a);
        }
        (ahead, None)
    }

    /// A store file's new text written beside it (a spare; a temporary file for
    /// one that must stay owner-only, or where spares cannot be used); nothing
    /// for a deletion, nor for an append, whose room is taken
    /// (`files::reserve`). `k` (the op's place) names a temporary file.
    fn write_ahead<'a>(&self, s: &Store, b: &mut Batch<'a>, w: &'a StoreWrite, k: usize) -> Result<Ahead, String> {
        let named = |e: &dyn std::fmt::Display| format!("{STORE}/{}: {e}", w.path);
        let full = b.checks.file(s, &w.path, !w.delete).map_err(|e| named(&e))?;
        if w.delete {
            b.made.remove(&full);
        }
        let journal = w.path.starts_with(datanotes_core::journal::DIR);
        let was = if journal {
            b.left.insert(full.clone(), (!w.delete && !w.append).then_some(w.text.as_str()))
        } else {
            None
        };
        if w.append {
            if let Some(len) = b.to_append.remove(w.path.as_str()) {
                reserve(&full, len).map_err(|e| named(&e))?;
            }
            return Ok(Ahead::None);
        }
        if w.delete {
            return Ok(Ahead::None);
        }
        #[cfg(unix)]
        if let Some((at, pending)) = journal.then(|| self.pending.patch_for(&full, was, &w.text)).flatten() {
            return Ok(Ahead::Done(at, pending));
        }
        // A new file too is a spare written over, renamed into place rather than
        // swapped: spares are made ahead, off the writes' path (see
        // `Pool::keep_ready`).
        let secret = datanotes_core::webhook::is_file(&w.path);
        if !secret {
            if let Some(spare) = s.spares.fill(&w.text) {
                if b.made.contains(&full) || fs::symlink_metadata(&full).is_ok_and(|m| m.is_file()) {
                    return Ok(Ahead::Spare(spare));
                }
                b.made.insert(full.clone());
                return Ok(Ahead::Fresh(spare));
            }
        }
        let name = full.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        let tmp = full.with_file_name(format!(".{name}.{k}{TMP_SUFFIX}"));
        write_whole_unsynced(&tmp, &w.text, secret).map_err(|e| named(&e))?;
        b.made.insert(full.clone());
        Ok(Ahead::Temp(tmp))
    }

    /// Puts one op's text in place (its text written ahead, if any).
    fn put(&self, s: &Store, checks: &mut StoreFiles, op: &Op, ahead: Ahead) -> Result<(), String> {
        let put = self.put_text(s, checks, op, ahead);
        if let Op::Store(write) = op {
            if write.path.starts_with(datanotes_core::journal::DIR) {
                let whole = (put.is_ok() && !write.delete && !write.append).then_some(write.text.as_str());
                self.pending.now_holds(&s.dir().join(&write.path), whole);
            }
        }
        put
    }

    fn put_text(&self, s: &Store, checks: &mut StoreFiles, op: &Op, ahead: Ahead) -> Result<(), String> {
        let write = match op {
            Op::Note { spare, note, was } => return self.swap_note(s, spare, note, was),
            Op::Store(write) => write,
        };
        let named = |e: &dyn std::fmt::Display| format!("{STORE}/{}: {e}", write.path);
        let full = match checks.file(s, &write.path, !write.delete) {
            Ok(full) => full,
            Err(e) => {
                forget(s, &mut [ahead]);
                return Err(named(&e));
            }
        };
        match ahead {
            #[cfg(unix)]
            Ahead::Done(at, pending) => {
                if done_in_place::write(&full, at, &pending, &s.syncs) {
                    return Ok(());
                }
                // Not done in place: written whole, as any store file outside the queue.
                s.write_file(write)
            }
            Ahead::Spare(spare) => s.put_spare(spare, &full).map_err(|e| named(&e)),
            Ahead::Fresh(spare) => fs::rename(&spare, &full).map_err(|e| {
                s.spares.give_back(spare);
                named(&e)
            }),
            Ahead::Temp(tmp) => fs::rename(&tmp, &full).map_err(|e| {
                let _ = fs::remove_file(&tmp);
                named(&e)
            }),
            Ahead::None => {
                let done = if write.delete { remove_if_there(&full) } else { s.append(&full, &write.text) };
                done.map_err(|e| named(&e))
            }
        }
    }

    /// Swaps a note's new text in. A person's edit made since the engine read
    /// the note (in the millisecond between) is put back at once, for the
    /// watcher to report as a hand edit over the write, rather than lost in
    /// the spare.
    fn swap_note(&self, s: &Store, spare: &Path, note: &Path, was: &[u8]) -> Result<(), String> {
        let named = |e: std::io::Error| format!("{}: {e}", note.display());
        s.spares.folder_ok().map_err(named)?;
        let swapped = crate::spare::swap(spare, note).map_err(named)?;
        match swapped {
            Swap::Swapped if fs::read(spare).is_ok_and(|old| old != was) => {
                crate::spare::swap(spare, note).map_err(named)?;
                eprintln!("datanotes: warning: {} was edited while it was written: the edit is kept", note.display());
            }
            Swap::Swapped => self.swapped_in(note),
            // The note went meanwhile: it stays gone.
            Swap::Moved => {
                fs::rename(note, spare).map_err(named)?;
            }
            Swap::OtherDevice => {
                let text = fs::read_to_string(spare).map_err(named)?;
                s.write_whole(note, &text, false).map_err(named)?;
            }
            _ => {}
        }
        s.spares.give_back(spare.to_path_buf());
        Ok(())
    }
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

/// Texts written ahead that will not be put: spares back, temporary files gone.
fn forget(s: &Store, ahead: &mut [Ahead]) {
    for a in ahead {
        match std::mem::replace(a, Ahead::None) {
            Ahead::None => {}
            Ahead::Spare(spare) | Ahead::Fresh(spare) => s.spares.give_back(spare),
            Ahead::Temp(tmp) => drop(fs::remove_file(tmp)),
            #[cfg(unix)]
            Ahead::Done(..) => {}
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::lock::Locked;

    /// A vault with one note (`old`), its store's spare folder holding 8
    /// empty spares (as `Pool::keep_ready` makes them), a store and a queue
    /// of its own: the spares' inodes, the store and the queue.
    fn vault(name: &str) -> (PathBuf, Vec<u64>, Store, Queue) {
        let vault = std::env::temp_dir().join(format!("datanotes-queue-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&vault);
        let store = vault.join(STORE);
        fs::create_dir_all(store.join(crate::spare::DIR)).unwrap();
        fs::write(vault.join("Charade.md"), "old\n").unwrap();
        let ready = (0..8)
            .map(|n| {
                let p = store.join(crate::spare::DIR).join(format!("s{n}"));
                fs::write(&p, "").unwrap();
                inode(&p)
            })
            .collect();
        (vault.clone(), ready, Store::new(&vault, Locked::not_held(store)), Queue::default())
    }

    fn inode(p: &Path) -> u64 {
        std::os::unix::fs::MetadataExt::ino(&fs::metadata(p).unwrap())
    }

    fn read(p: &Path) -> String {
        fs::read_to_string(p).unwrap()
    }

    #[test]
    fn point_14_queued_writes_go_to_disk_in_order_and_a_hand_edit_made_meanwhile_is_kept() {
        let (vault, ready, s, q) = vault("order");
        let (store, note) = (vault.join(STORE), vault.join("Charade.md"));
        let fill = |text: &str| s.spares.fill(text).unwrap();
        // An entry written pending, the note, a new file, the entry done, a line
        // of the feed.
        q.store(&s, StoreWrite::put("journal/a.json", "pending\n"));
        q.note(&s, fill("new\n"), note.clone(), b"old\n".to_vec());
        q.store(&s, StoreWrite::put("commit.json", "commit\n"));
        q.store(&s, StoreWrite::put("journal/a.json", "done\n"));
        q.store(&s, StoreWrite::append("feed/1.jsonl", "{\"seq\":1}\n"));
        let call = q.seal();
        assert!(q.holds(&note) && q.holds(&store.join("journal/a.json")));
        assert_eq!(read(&note), "old\n", "nothing is written before the queue is carried out");
        q.run(&s).unwrap();
        assert!(q.done() >= call);
        assert!(!q.holds(&note) && !q.holds(&store.join("journal/a.json")));
        assert_eq!(read(&note), "new\n");
        assert!(q.own(&note), "the watcher's event for it is the engine's own write");
        assert_eq!(read(&store.join("journal/a.json")), "done\n");
        // Spares made ahead: a new store file is one of them, written and
        // renamed into place; the queue makes no file.
        assert!(ready.contains(&inode(&store.join("commit.json"))), "a spare made ahead");
        assert_eq!(read(&store.join("feed/1.jsonl")), "{\"seq\":1}\n");
        let left: Vec<_> = fs::read_dir(store.join("journal")).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(left, ["a.json"], "no temporary file is left");

        // A person's edit between the engine's read and the swap stays, for
        // the watcher to report.
        q.note(&s, fill("engine\n"), note.clone(), b"new\n".to_vec());
        fs::write(&note, "hand\n").unwrap();
        assert!(!q.own(&note), "a person's edit is read back");
        q.seal();
        q.run(&s).unwrap();
        assert_eq!(read(&note), "hand\n");
        fs::remove_dir_all(&vault).unwrap();
    }

    #[test]
    fn point_14_a_journal_entry_done_after_pending_is_completed_in_place_only_over_its_pending_text() {
        let (vault, _, s, q) = vault("in-place");
        let (store, note) = (vault.join(STORE), vault.join("Charade.md"));
        let pending = |id: &str| format!("{{\"migration_id\":\"{id}\",\"status\":\"pending\",\"changes\":[]}}\n");
        let done_entry = |id: &str| pending(id).replace("\"pending\"", "\"done\"");
        let entry = |id: &str| store.join(format!("journal/{id}.json"));
        let json = |p: &Path| serde_json::from_str::<serde_json::Value>(&read(p)).unwrap();
        let carry = |writes: &[(&str, String)]| {
            for (id, text) in writes {
                q.store(&s, StoreWrite::put(format!("journal/{id}.json"), text.clone()));
            }
            q.seal();
            q.run(&s).unwrap();
        };
        // In the same queue (a note's write between) and in the next:
        // completed in place (the same file, its status's value written over).
        q.store(&s, StoreWrite::put("journal/c.json", pending("c")));
        q.note(&s, s.spares.fill("third\n").unwrap(), note.clone(), b"old\n".to_vec());
        carry(&[("c", done_entry("c")), ("d", pending("d"))]);
        assert_eq!(json(&entry("c")), serde_json::from_str::<serde_json::Value>(&done_entry("c")).unwrap());
        assert!(read(&entry("c")).contains("\"status\":\"done\"   ,"), "completed in place: {}", read(&entry("c")));
        let d = inode(&entry("d"));
        carry(&[("d", done_entry("d"))]);
        assert_eq!(inode(&entry("d")), d, "the same file");
        assert_eq!(json(&entry("d")), serde_json::from_str::<serde_json::Value>(&done_entry("d")).unwrap());
        // What the queue remembers is a hint: a file that holds something
        // else (an entry another way wrote) is written whole, never patched.
        carry(&[("e", pending("e"))]);
        fs::write(entry("e"), done_entry("e")).unwrap();
        carry(&[("e", done_entry("e"))]);
        assert_eq!(read(&entry("e")), done_entry("e"));
        // Nor through a link put in its place: the link is replaced, its
        // target left as it was.
        carry(&[("f", pending("f"))]);
        let target = vault.join("elsewhere.json");
        fs::rename(entry("f"), &target).unwrap();
        std::os::unix::fs::symlink(&target, entry("f")).unwrap();
        carry(&[("f", done_entry("f"))]);
        assert!(fs::symlink_metadata(entry("f")).unwrap().is_file());
        assert_eq!(read(&entry("f")), done_entry("f"));
        assert_eq!(read(&target), pending("f"), "nothing written through the link");
        fs::remove_dir_all(&vault).unwrap();
    }

    #[test]
    fn point_14_a_queue_the_disk_refuses_is_given_up_and_leaves_nothing_unrecorded() {
        let (vault, _, s, q) = vault("given-up");
        let (store, note) = (vault.join(STORE), vault.join("Charade.md"));
        let fates = Fates::default();
        let fill = |text: &str| s.spares.fill(text).unwrap();
        // A write that cannot be made (a file where its folder must be) stops
        // the queue before its call: the calls before it are carried out
        // whole, nothing of it or of those after.
        fs::write(store.join("log"), "not a folder").unwrap();
        q.store(&s, StoreWrite::put("journal/a2.json", "pending\n"));
        q.note(&s, fill("first\n"), note.clone(), b"old\n".to_vec());
        q.store(&s, StoreWrite::put("journal/a2.json", "done\n"));
        let a = q.seal();
        q.store(&s, StoreWrite::put("journal/b.json", "pending\n"));
        q.note(&s, fill("second\n"), note.clone(), b"first\n".to_vec());
        q.store(&s, StoreWrite::put("log/1.json", "commit\n"));
        q.store(&s, StoreWrite::put("journal/b.json", "done\n"));
        let b = q.seal();
        let e = q.run(&s).unwrap_err();
        assert!(e.contains("log/1.json"), "{e}");
        assert_eq!(read(&store.join("journal/a2.json")), "done\n", "the call before, whole");
        assert_eq!(read(&note), "first\n");
        assert!(q.done() >= a && q.done() < b);
        assert!(!store.join("journal/b.json").exists(), "nothing of the call that failed");
        assert!(q.holds(&note), "its write still queued, to be tried again");
        q.store(&s, StoreWrite::put("journal/g.json", "pending\n"));
        let c = q.seal();
        // Given up: nothing more is carried out, and each call's fate is said.
        q.abandon(&s, &fates, "full");
        assert_eq!(read(&note), "first\n", "never swapped in unrecorded");
        assert!(!store.join("journal/b.json").exists(), "b");
        assert!(!store.join("journal/g.json").exists(), "c");
        assert_eq!(fates.of(b), Some(Fate::RolledBack("full".into())));
        assert_eq!(fates.of(c), Some(Fate::RolledBack("full".into())));
        assert_eq!(fates.of(a), None);
        assert!(!q.holds(&note));
        assert!(q.done() >= c);

        // A call with something on disk already (a write made at once, after
        // the queue) is cut short when given up.
        q.store(&s, StoreWrite::put("journal/h.json", "pending\n"));
        q.run(&s).unwrap();
        q.direct();
        q.store(&s, StoreWrite::put("log/2.json", "commit\n"));
        let d = q.seal();
        assert!(q.run(&s).is_err());
        q.abandon(&s, &fates, "full");
        assert_eq!(read(&store.join("journal/h.json")), "pending\n");
        assert_eq!(fates.of(d), Some(Fate::CutShort("full".into())));
        fs::remove_dir_all(&vault).unwrap();
    }
}
