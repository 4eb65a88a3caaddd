//! The vault on disk as this process holds it (`Disk`): the OS lock, the store
//! with its spare files and its syncs, the write queue of group commit and the
//! fates of the calls it gave up; one value, made once by the command that
//! opens the vault (`call`, `init`, `serve`, `mcp`) and handed down. Each turn
//! of the engine (a call, a tick, a report) drives it through a `Turn`: the
//! notes written whole (a temporary file or a spare, then a rename or a swap),
//! trashed into the vault's `.trash/`, the store written durably. The rules
//! on links and whole-file writes are `files`'s; what is read, and how, is
//! `read`'s.

use crate::durable::{flush_now, write_unsynced, Commit};
use crate::fate::{Fate, Fates};
use crate::files::{inside, is_link_error, read_no_follow, temp_of, through_link, Folders, STORE};
use crate::lock::{Held, Locked};
use crate::queue::Queue;
use crate::store::{Store, StoreFiles};
use datanotes_core::driver::Host;
use datanotes_core::edits::StoreWrite;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

pub struct Disk {
    store: Store,
    queue: Queue,
    /// What became of the calls whose writes the disk refused after their
    /// answers were made (see `fate`).
    fates: Fates,
    commit: Commit,
    /// The OS lock on the vault, held as long as this is (None: a vault this
    /// process does not hold, as the bench's).
    _held: Option<Held>,
}

impl Disk {
    /// The vault at `vault`, with the OS lock `held` on it, if this process
    /// holds it: every write to the store then checks that the store is still
    /// the folder locked. Writes are synced one by one until `group_commit`.
    pub fn new(vault: &Path, held: Option<Held>) -> Disk {
        let locked = held.as_ref().map_or_else(|| Locked::not_held(vault.join(STORE)), Held::locked);
        Disk {
            store: Store::new(vault, locked),
            queue: Queue::default(),
            fates: Fates::default(),
            commit: Commit::default(),
            _held: held,
        }
    }

    pub fn vault(&self) -> &Path {
        self.store.vault()
    }

    /// The driver's host for one turn of the engine.
    pub fn turn(&self) -> Turn<'_> {
        Turn {
            disk: self,
            staged: HashMap::new(),
            folders: Folders::default(),
            checks: StoreFiles::default(),
            touched: false,
            last_read: None,
        }
    }

    /// Group commit from now on (`serve`, `mcp`): writes are queued and
    /// carried out after the engine's lock (`carry_out`), synced together
    /// (`wait_durable`), and spares are made ahead on a thread of their own.
    pub fn group_commit(&self) {
        self.store.syncs.defer();
        self.store.spares.keep_ready();
    }

    /// Whether writes are queued rather than made at once: under group commit.
    fn queueing(&self) -> bool {
        self.store.syncs.deferring()
    }

    /// Whether `file` has a queued write waiting or under way.
    pub fn queued(&self, file: &Path) -> bool {
        self.queue.holds(file)
    }

    /// Whether `note` is as the queue last swapped it in (see `Queue::own`).
    pub fn own(&self, note: &Path) -> bool {
        self.queue.own(note)
    }

    /// Carries out the queued writes, in order.
    pub fn run_queue(&self) -> Result<(), String> {
        self.queue.run(&self.store)
    }

    /// Under the engine's lock, once a call is done: its ticket when it left
    /// writes to queue or to sync, for `carry_out` and `wait_durable`.
    pub fn seal_call(&self) -> Option<u64> {
        self.store.syncs.take_dirty().then(|| self.queue.seal())
    }

    /// Whether a write of this turn was left for the group sync.
    pub fn unsynced(&self) -> bool {
        self.store.syncs.is_dirty()
    }

    /// Carries out the queue up to the call `ticket`, after the engine's lock
    /// (see `Queue::run_for`).
    pub fn carry_out(&self, ticket: u64) -> Result<(), String> {
        self.queue.run_for(&self.store, ticket)
    }

    /// Gives up the queue (see `Queue::abandon`).
    pub fn abandon(&self, error: &str) {
        self.queue.abandon(&self.store, &self.fates, error)
    }

    /// Returns once the call `ticket` is durable (a group sync, `Commit`):
    /// its fate when the disk refused its writes.
    pub fn wait_durable(&self, ticket: u64) -> Option<Fate> {
        let flush = || flush_now(self.vault(), std::iter::empty());
        self.commit.wait(ticket, || self.queue.done(), flush, &self.fates);
        self.fates.of(ticket)
    }

    /// Runs `f` with every write made and synced at once (see `Syncs::direct`).
    pub fn direct<R>(&self, f: impl FnOnce() -> R) -> R {
        self.store.syncs.direct(f)
    }

    /// Removes the free spares, which hold old texts of notes (vacuum_table).
    pub fn forget_spares(&self) {
        self.store.spares.forget();
    }
}

/// The vault on disk as the driver's host, for one turn of the engine: notes
/// written whole (a temporary file, then a rename), trashed into the vault's
/// `.trash/`, the store synced. Many notes or store files written at once
/// share their flushes (see `durable`).
pub struct Turn<'a> {
    disk: &'a Disk,
    /// Notes staged for `put`: their temporary files (or spares) by vault path.
    staged: HashMap<String, Staged>,
    folders: Folders,
    checks: StoreFiles,
    /// A note was written, moved or removed in this call: its store writes
    /// from now on are its records, which the queue carries out whole or not
    /// at all (see `write_stores`).
    touched: bool,
    /// The note last read and its bytes: under group commit, what its queued
    /// write expects to replace (see `Queue::swap_note`).
    last_read: Option<(String, Vec<u8>)>,
}

impl Turn<'_> {
    fn store(&self) -> &Store {
        &self.disk.store
    }

    fn vault(&self) -> &Path {
        self.disk.vault()
    }

    /// Carries out the queued writes (group commit): before a write that is
    /// not queued, so that the disk sees every write in the engine's order.
    fn queued_first(&self) -> Result<(), String> {
        if self.disk.queueing() {
            self.disk.run_queue()?;
            self.disk.queue.direct();
        }
        Ok(())
    }

    /// Under group commit, queues a note's new text in a spare (see `queue`);
    /// false when the note is new or spares cannot be had here.
    fn queue_note(&mut self, path: &str, full: &Path, text: &str) -> bool {
        if !self.disk.queueing() || !fs::symlink_metadata(full).is_ok_and(|m| m.is_file()) {
            return false;
        }
        let Some(spare) = self.store().spares.fill(text) else { return false };
        let was = match self.last_read.take() {
            Some((p, bytes)) if p == path => bytes,
            _ => fs::read(full).unwrap_or_default(),
        };
        self.disk.queue.note(self.store(), spare, full.to_path_buf(), was);
        true
    }

    /// A note's path on disk, its folders free of links and, with `create`, made.
    fn real(&mut self, rel: &str, create: bool) -> Result<PathBuf, String> {
        let vault = self.disk.vault();
        let full = inside(vault, rel)?;
        self.folders.check(vault, &full, create)?;
        Ok(full)
    }
}

/// A note's text staged beside it, or in a spare (see `spare`).
enum Staged {
    Temp(PathBuf),
    Spare(PathBuf),
}

impl Staged {
    fn file(&self) -> &PathBuf {
        match self {
            Staged::Temp(p) | Staged::Spare(p) => p,
        }
    }
}

impl Drop for Turn<'_> {
    /// Staged texts never put (a call cut short) leave no temporary file behind;
    /// spares stay for the next batch.
    fn drop(&mut self) {
        for s in self.staged.values() {
            if let Staged::Temp(tmp) = s {
                let _ = fs::remove_file(tmp);
            }
        }
    }
}

impl Host for Turn<'_> {
    fn read(&mut self, path: &str) -> Result<Option<String>, String> {
        let full = self.real(path, false)?;
        let queueing = self.disk.queueing();
        if queueing && self.disk.queued(&full) {
            self.disk.run_queue()?;
        }
        match read_no_follow(&full) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                if queueing {
                    self.last_read = Some((path.to_string(), bytes));
                }
                Ok(Some(text))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) if is_link_error(&e) => Err(through_link(path, Path::new(path))),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The mtime is taken before the text (the driver's rule): a change in
    /// between looks newer than the text, and the notes' cache never vouches
    /// for a stale one. A hand edit the engine finds is dated by it.
    fn read_note(&mut self, path: &str) -> Result<Option<datanotes_core::NoteFile>, String> {
        let mtime = crate::read::mtime_of(fs::symlink_metadata(self.real(path, false)?).ok());
        Ok(self.read(path)?.map(|text| datanotes_core::NoteFile { path: path.to_string(), text, mtime }))
    }

    // A rename onto a link replaces the link itself: only folders can lead out.
    fn write(&mut self, path: &str, text: &str) -> Result<(), String> {
        let full = self.real(path, true)?;
        self.touched = true;
        if self.queue_note(path, &full, text) {
            return Ok(());
        }
        self.queued_first()?;
        match self.store().replace(&full, text) {
            Some(done) => done,
            None => self.store().write_whole(&full, text, false),
        }
        .map_err(|e| e.to_string())
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        self.touched = true;
        self.queued_first()?;
        let (f, t) = (self.real(from, false)?, self.real(to, true)?);
        fs::rename(&f, &t).map_err(|e| e.to_string())
    }

    fn trash(&mut self, path: &str) -> Result<(), String> {
        self.touched = true;
        self.queued_first()?;
        let f = self.real(path, false)?;
        let mut to = format!(".trash/{path}");
        let mut i = 2;
        while self.vault().join(&to).exists() {
            to = format!(".trash/{path} {i}");
            i += 1;
        }
        let t = self.real(&to, true)?;
        fs::rename(&f, &t).map_err(|e| e.to_string())
    }

    fn remove(&mut self, path: &str) -> Result<(), String> {
        self.touched = true;
        self.queued_first()?;
        fs::remove_file(self.real(path, false)?).map_err(|e| e.to_string())
    }

    fn read_store(&mut self, path: &str) -> Option<String> {
        let f = self.checks.file(&self.disk.store, path, false).ok()?;
        if self.disk.queueing() && self.disk.queued(&f) {
            self.disk.run_queue().ok()?;
        }
        String::from_utf8(read_no_follow(&f).ok()?).ok()
    }

    fn write_store(&mut self, w: &StoreWrite) -> Result<(), String> {
        self.write_stores(&[w]).map_err(|(_, e)| e)
    }

    fn write_stores(&mut self, files: &[&StoreWrite]) -> Result<(), (usize, String)> {
        let (disk, store) = (self.disk, &self.disk.store);
        if !disk.queueing() {
            return store.write_files(files);
        }
        // Before any note is touched (a write's journal entry), checked as they
        // are queued, under the engine's lock: a store folder that cannot take
        // them (a link put there, the store replaced) refuses the write with
        // nothing touched, as without the queue. After, the queue checks them
        // again and gives up the call whole.
        for (i, w) in files.iter().enumerate() {
            if !self.touched {
                let checked = self.checks.file(store, &w.path, false);
                checked.map_err(|e| (i, format!("{STORE}/{}: {e}", w.path)))?;
            }
            disk.queue.store(store, (*w).clone());
        }
        Ok(())
    }

    fn stages(&self) -> bool {
        true
    }

    fn stage(&mut self, path: &str, text: &str) -> Result<(), String> {
        self.touched = true;
        self.queued_first()?;
        let full = self.real(path, true)?;
        if let Some(spare) = self.store().spares.fill(text) {
            self.staged.insert(path.to_string(), Staged::Spare(spare));
            return Ok(());
        }
        let tmp = temp_of(&full);
        self.staged.insert(path.to_string(), Staged::Temp(tmp.clone()));
        write_unsynced(&tmp, text).map_err(|e| e.to_string())
    }

    fn sync(&mut self) -> Result<(), String> {
        // Never deferred: the swaps that follow must find the texts on disk (see
        // Pool::replace).
        flush_now(self.vault(), self.staged.values().map(Staged::file)).map_err(|e| e.to_string())
    }

    fn put(&mut self, path: &str) -> Result<(), String> {
        let staged = self.staged.remove(path).ok_or_else(|| format!("{path} was not staged"))?;
        let full = self.real(path, false)?;
        match staged {
            Staged::Temp(tmp) => fs::rename(&tmp, full).map_err(|e| {
                let _ = fs::remove_file(&tmp);
                e.to_string()
            }),
            Staged::Spare(spare) => self.store().put_spare(spare, &full).map_err(|e| e.to_string()),
        }
    }

    fn unstage(&mut self, path: &str) {
        match self.staged.remove(path) {
            Some(Staged::Temp(tmp)) => drop(fs::remove_file(tmp)),
            Some(Staged::Spare(spare)) => self.store().spares.give_back(spare),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The binary hands the engine a note's mtime as the plugin does (a
    /// hand edit found in a turn is dated by it, not by 1970).
    #[test]
    fn a_note_read_in_a_turn_comes_with_its_mtime() {
        let vault = std::env::temp_dir().join(format!("datanotes-disk-mtime-{}", std::process::id()));
        let _ = fs::remove_dir_all(&vault);
        fs::create_dir_all(vault.join(STORE)).unwrap();
        let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_791_823_961_000);
        let f = fs::File::create(vault.join("a.md")).unwrap();
        std::io::Write::write_all(&mut &f, b"text\n").unwrap();
        f.set_modified(at).unwrap();
        drop(f);
        let disk = Disk::new(&vault, None);
        let mut turn = disk.turn();
        let note = turn.read_note("a.md").unwrap().unwrap();
        assert_eq!((note.text.as_str(), note.mtime), ("text\n", 1_791_823_961_000));
        assert!(turn.read_note("gone.md").unwrap().is_none());
        drop(turn);
        fs::remove_dir_all(&vault).unwrap();
    }
}
