//! Spare files for writing notes and store files whole (Linux). A file written
//! the classic way (a new temporary file, renamed over it) costs the file system
//! a new inode and frees the old one; ext4 then searches its bitmaps past the
//! recently freed inodes, and 3,000 notes written that way took 1.5 to 2 seconds
//! on this project's machine, growing with each batch. Instead the new text goes
//! into a spare file kept under `.datanotes/spare/`, is flushed, and the spare and
//! the file are swapped in one atomic step (`renameat2` with RENAME_EXCHANGE): the
//! file holds the new text whole, and the spare now holds the old inode, ready
//! for the next write. No inode is made or freed, and 3,000 notes take about
//! 0.15 s. A batch flushes all its spares at once (`Turn::sync`); a single write
//! flushes its own. Where the swap is not supported the caller falls back to a
//! temporary file and a rename.

use crate::durable::Syncs;
use crate::files::{is_full, through_link, write_whole, STORE};
use crate::lock::Locked;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

/// The folder of the spares, in the store.
pub const DIR: &str = "spare";

/// Empty spares kept ready by `keep_ready`: it makes more when fewer are free,
/// up to `MADE_UP_TO`.
const READY_AT_LEAST: usize = 64;
const MADE_UP_TO: usize = 256;

/// The spares of one store, kept between calls so that the folder is listed
/// once, and the thread that makes empty ones ahead (`keep_ready`), which ends
/// with the pool.
pub struct Pool {
    ready: Arc<Ready>,
    maker: Mutex<Option<JoinHandle<()>>>,
}

/// What the pool and its maker share.
struct Ready {
    locked: Locked,
    spares: Mutex<Spares>,
    /// The maker's wake-up: the free spares ran low, or the pool goes.
    wake: Mutex<Wake>,
    cv: Condvar,
}

#[derive(Default)]
struct Wake {
    low: bool,
    stop: bool,
}

impl Ready {
    /// Runs `f` on the spares.
    fn with<R>(&self, f: impl FnOnce(&mut Spares) -> R) -> R {
        f(&mut self.spares.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Refuses spares while the store is not the one this process locked, or
    /// their folder is a link (put there while the engine runs): a swap would
    /// move a note's old text, and a fill write a new one, wherever it leads.
    /// Checked at each fill and swap, a few `lstat`s.
    fn folder_ok(&self) -> std::io::Result<()> {
        self.locked.check().map_err(std::io::Error::other)?;
        match fs::symlink_metadata(self.locked.store().join(DIR)) {
            Ok(m) if m.file_type().is_symlink() => {
                Err(std::io::Error::other(through_link(&format!("{STORE}/{DIR}"), Path::new(DIR))))
            }
            _ => Ok(()),
        }
    }

    /// Makes empty spares until the pool holds `MADE_UP_TO`, then sleeps until
    /// a take leaves few, or a minute (a folder that could not be written to
    /// may be writable again), or the pool goes.
    fn make_ahead(&self) {
        loop {
            let names = self.with(Spares::reserve_names);
            let mut made = Vec::with_capacity(names.len());
            for p in names {
                // Checked before each: the folder may be swapped for a link while
                // the round runs (up to 256 files, milliseconds or more).
                if self.folder_ok().is_err() {
                    break;
                }
                if make_empty(&p).is_ok() {
                    made.push(p);
                }
            }
            let none_made = made.is_empty();
            self.with(|p| p.free().extend(made));
            let mut wake = self.wake.lock().unwrap_or_else(PoisonError::into_inner);
            if !wake.stop && (!wake.low || none_made) {
                let minute = std::time::Duration::from_secs(60);
                wake = self.cv.wait_timeout(wake, minute).unwrap_or_else(PoisonError::into_inner).0;
            }
            if wake.stop {
                return;
            }
            wake.low = false;
        }
    }
}

impl Pool {
    /// The spares of the store `locked` names, listed when the first is needed.
    pub fn new(locked: Locked) -> Pool {
        let spares = Mutex::new(Spares::new(locked.store()));
        let ready = Ready { locked, spares, wake: Mutex::default(), cv: Condvar::new() };
        Pool { ready: Arc::new(ready), maker: Mutex::new(None) }
    }

    /// A spare to write over, and wakes the maker when that leaves few.
    fn take(&self) -> Option<(PathBuf, bool)> {
        let (taken, low) = self.ready.with(Spares::take);
        if low {
            self.ready.wake.lock().unwrap_or_else(PoisonError::into_inner).low = true;
            self.ready.cv.notify_all();
        }
        taken
    }

    /// Keeps empty spares ready, made on a thread of their own. Every write
    /// through the queue makes new store files (a journal entry, a log commit),
    /// and making a file is the dearest thing a write asks of ext4: 20 to 550
    /// µs of kernel time on this project's machine (more when many inodes were
    /// freed in the last minutes), against 20 to 40 µs for a rename. Taken from
    /// the pool, a new file is a spare written over and renamed into place; the
    /// cost of making it is paid off the writes' path, between them.
    pub fn keep_ready(&self) {
        let mut maker = self.maker.lock().unwrap_or_else(PoisonError::into_inner);
        if maker.is_some() {
            return;
        }
        let ready = self.ready.clone();
        match std::thread::Builder::new().name("datanotes-spares".into()).spawn(move || ready.make_ahead()) {
            Ok(handle) => *maker = Some(handle),
            Err(e) => eprintln!("datanotes: warning: spares are made as they are needed ({e})"),
        }
    }

    /// See `Ready::folder_ok`.
    pub fn folder_ok(&self) -> std::io::Result<()> {
        self.ready.folder_ok()
    }

    /// Replaces an existing file whole through a spare (written, synced,
    /// swapped in); None when spares cannot be used, for the caller to write a
    /// temporary file instead. Not for files that must stay owner-only: a
    /// spare has the default mode.
    pub fn replace(&self, path: &Path, text: &str, syncs: &Syncs) -> Option<std::io::Result<()>> {
        // A new file frees nothing: a spare would only move there.
        if !fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
            return None;
        }
        let spare = self.fill(text)?;
        // Synced even under group commit: a swap is not ordered after the data
        // written into a file's existing blocks, so a power cut could otherwise
        // leave the note holding a spare's older bytes.
        if let Err(e) = fs::File::open(&spare).and_then(|f| f.sync_data()) {
            self.give_back(spare);
            return Some(Err(e));
        }
        Some(self.put(spare, path, syncs))
    }

    /// A spare holding `text` (a free one written over, or a new one), not yet
    /// flushed; None when spares cannot be used here. The pool is locked only
    /// to take a name: its files are written outside, and a write in the queue
    /// does not wait for the engine's fill of a note's spare, nor the other way.
    pub fn fill(&self, text: &str) -> Option<PathBuf> {
        self.folder_ok().ok()?;
        loop {
            let (p, new) = self.take()?;
            if new {
                fs::create_dir_all(p.parent()?).ok()?;
            }
            match write_over(&p, text) {
                Ok(()) => return Some(p),
                Err(_) if new => return None,
                // A full disk fails every spare alike: the pool stays for later.
                Err(e) if is_full(&e) => {
                    self.give_back(p);
                    return None;
                }
                // A spare that cannot be written (an old note's inode made
                // read-only): it goes, and the next is tried.
                Err(_) => drop(fs::remove_file(&p)),
            }
        }
    }

    /// A spare back among the free ones (a big one is removed instead).
    pub fn give_back(&self, p: PathBuf) {
        match fs::symlink_metadata(&p) {
            Ok(m) if m.is_file() && m.len() <= KEEP_AT_MOST => self.ready.with(|s| s.free().push(p)),
            _ => drop(fs::remove_file(&p)),
        }
    }

    /// Removes the free spares (they hold old texts of notes), for
    /// vacuum_table: history a person drops must not linger there.
    pub fn forget(&self) {
        self.ready.with(|p| {
            for sp in p.free().drain(..) {
                let _ = fs::remove_file(sp);
            }
        });
    }

    /// Puts a staged spare's text at `path` (see `swap`), and keeps what comes
    /// out of it.
    pub fn put(&self, spare: PathBuf, path: &Path, syncs: &Syncs) -> std::io::Result<()> {
        // The swap itself is a change of folders: under group commit, the call's
        // answer waits for the sync that makes it last.
        let _ = syncs.must_sync();
        if let Err(e) = self.folder_ok() {
            self.give_back(spare);
            return Err(e);
        }
        match swap(&spare, path) {
            Ok(Swap::Swapped) => {
                self.give_back(spare);
                Ok(())
            }
            Ok(Swap::Moved) => Ok(()),
            Ok(Swap::Unsupported) => {
                self.ready.with(|p| p.works = false);
                Ok(())
            }
            // Written the classic way beside the note: a temporary file, a rename.
            Ok(Swap::OtherDevice) => {
                let text = fs::read_to_string(&spare);
                self.give_back(spare);
                write_whole(path, text?, false, syncs)
            }
            Err(e) => {
                self.give_back(spare);
                Err(e)
            }
        }
    }
}

impl Drop for Pool {
    /// The maker ends with the pool (it may be making a round: it finishes it).
    fn drop(&mut self) {
        self.ready.wake.lock().unwrap_or_else(PoisonError::into_inner).stop = true;
        self.ready.cv.notify_all();
        if let Some(maker) = self.maker.lock().unwrap_or_else(PoisonError::into_inner).take() {
            let _ = maker.join();
        }
    }
}

fn make_empty(p: &Path) -> std::io::Result<()> {
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NOFOLLOW);
    opts.open(p).map(drop)
}

/// A spare larger than this after a swap (the old text of a big note) is removed
/// rather than kept, so that the spares never hold much of the disk.
const KEEP_AT_MOST: u64 = 256 * 1024;

/// The spares of one vault: those free to take, and the name of the next one made.
struct Spares {
    dir: PathBuf,
    free: Option<Vec<PathBuf>>,
    next: u64,
    /// False once the file system refused a swap: temporary files from then on.
    works: bool,
}

impl Spares {
    fn new(store: &Path) -> Spares {
        Spares { dir: store.join(DIR), free: None, next: 0, works: cfg!(target_os = "linux") }
    }

    /// Listed once, when the first is needed.
    fn free(&mut self) -> &mut Vec<PathBuf> {
        if self.free.is_none() {
            // A planted link would have notes' old texts written wherever it leads.
            if fs::symlink_metadata(&self.dir).is_ok_and(|m| m.file_type().is_symlink()) {
                self.works = false;
            }
            let mut found = vec![];
            if let Ok(entries) = fs::read_dir(&self.dir) {
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().to_string();
                    if let Some(n) = name.strip_prefix('s').and_then(|n| n.parse::<u64>().ok()) {
                        if e.file_type().is_ok_and(|t| t.is_file()) {
                            self.next = self.next.max(n + 1);
                            found.push(e.path());
                        }
                    }
                }
            }
            self.free = Some(found);
        }
        self.free.as_mut().expect("listed above")
    }

    /// A spare to write over: a free one, or a new name (true); None when
    /// spares cannot be used here. With it, whether fewer than
    /// `READY_AT_LEAST` are left free (the maker is then woken).
    fn take(&mut self) -> (Option<(PathBuf, bool)>, bool) {
        self.free();
        if !self.works {
            return (None, false);
        }
        if let Some(p) = self.free().pop() {
            let low = self.free().len() < READY_AT_LEAST;
            return (Some((p, false)), low);
        }
        let p = self.dir.join(format!("s{}", self.next));
        self.next += 1;
        (Some((p, true)), false)
    }

    /// The names of the spares to make for the pool to hold `MADE_UP_TO`
    /// (none where spares cannot be used), reserved.
    fn reserve_names(&mut self) -> Vec<PathBuf> {
        let free = self.free().len();
        if !self.works || free >= READY_AT_LEAST || fs::create_dir_all(&self.dir).is_err() {
            return vec![];
        }
        let first = self.next;
        self.next += (MADE_UP_TO - free) as u64;
        (first..self.next).map(|n| self.dir.join(format!("s{n}"))).collect()
    }
}

/// Writes `text` over a file's bytes without emptying it first: emptying frees
/// its blocks and costs as much as a new file. Links are refused. The file is
/// cut after the text only when it was longer: a truncate that shrinks makes
/// ext4 write out the pages just written, and most spares are empty or as long
/// as the note's text that came back into them (it was about 3% of serve's
/// time in the load test).
fn write_over(p: &Path, text: &str) -> std::io::Result<()> {
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NOFOLLOW);
    let mut f = opts.open(p)?;
    f.write_all(text.as_bytes())?;
    let len = text.len() as u64;
    if f.metadata()?.len() > len {
        f.set_len(len)?;
    }
    Ok(())
}

/// What a swap of a spare with a note gave.
pub enum Swap {
    /// The note holds the spare's text; the spare holds the note's old inode.
    Swapped,
    /// There was no note: the spare was renamed into its place.
    Moved,
    /// The file system cannot swap: the spare was renamed into the note's place.
    Unsupported,
    /// The note is on another file system (a mount inside the vault): nothing
    /// was done.
    OtherDevice,
}

/// Puts the spare's text at `note` in one atomic step.
pub fn swap(spare: &Path, note: &Path) -> std::io::Result<Swap> {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let (a, b) = (CString::new(spare.as_os_str().as_bytes())?, CString::new(note.as_os_str().as_bytes())?);
        // SAFETY: both are NUL-terminated paths that outlive the call.
        let r =
            unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
        if r == 0 {
            return Ok(Swap::Swapped);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ENOENT) if spare.exists() => fs::rename(spare, note).map(|()| Swap::Moved),
            Some(libc::EINVAL | libc::ENOSYS | libc::EOPNOTSUPP) => fs::rename(spare, note).map(|()| Swap::Unsupported),
            Some(libc::EXDEV) => Ok(Swap::OtherDevice),
            _ => Err(e),
        }
    }
    #[cfg(not(target_os = "linux"))]
    fs::rename(spare, note).map(|()| Swap::Unsupported)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("datanotes-spare-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(d.join("store")).unwrap();
        d
    }

    fn pool(store: &Path) -> Pool {
        Pool::new(Locked::not_held(store.to_path_buf()))
    }

    #[test]
    fn a_swap_puts_the_new_text_in_place_and_keeps_the_old_inode_as_a_spare() {
        let d = dir("swap");
        let note = d.join("Charade.md");
        fs::write(&note, "a longer old text\n").unwrap();
        let pool = pool(&d.join("store"));
        let spare = pool.fill("new\n").unwrap();
        assert!(matches!(swap(&spare, &note).unwrap(), Swap::Swapped));
        assert_eq!(fs::read_to_string(&note).unwrap(), "new\n");
        assert_eq!(fs::read_to_string(&spare).unwrap(), "a longer old text\n");
        pool.give_back(spare.clone());
        // Written over, shorter: nothing of the old text is left past the new one.
        let again = pool.fill("x").unwrap();
        assert_eq!(again, spare);
        assert_eq!(fs::read_to_string(&again).unwrap(), "x");
        // No note yet: the spare becomes it.
        let new_note = d.join("New.md");
        assert!(matches!(swap(&again, &new_note).unwrap(), Swap::Moved));
        assert_eq!(fs::read_to_string(&new_note).unwrap(), "x");
        assert!(!again.exists());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_spare_written_over_holds_the_new_text_alone_whether_it_was_longer_or_shorter() {
        let d = dir("over");
        let p = d.join("s1");
        for (old, new) in
            [("a much longer old text\n", "new\n"), ("old\n", "a much longer new text\n"), ("same\n", "text\n")]
        {
            fs::write(&p, old).unwrap();
            write_over(&p, new).unwrap();
            assert_eq!(fs::read_to_string(&p).unwrap(), new);
        }
        write_over(&d.join("s2"), "made\n").unwrap();
        assert_eq!(fs::read_to_string(d.join("s2")).unwrap(), "made\n");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn point_14_spares_are_made_ahead_empty_and_made_again_once_few_are_left() {
        let d = dir("ready");
        let store = d.join("store");
        let pool = pool(&store);
        let free = || pool.ready.with(|p| p.free().len());
        let wait_for = |n: usize| {
            let t = std::time::Instant::now();
            while free() < n {
                assert!(t.elapsed().as_secs() < 20, "{} spares made, {n} awaited", free());
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        };
        pool.keep_ready();
        wait_for(MADE_UP_TO);
        for e in fs::read_dir(store.join(DIR)).unwrap().flatten() {
            assert_eq!(e.metadata().unwrap().len(), 0, "{:?} is empty", e.path());
        }
        // Taken down to fewer than READY_AT_LEAST: the maker makes more, under
        // new names, and leaves the taken ones be.
        let taken: Vec<PathBuf> = (0..=MADE_UP_TO - READY_AT_LEAST).map(|_| pool.fill("text").unwrap()).collect();
        wait_for(MADE_UP_TO - 1);
        let free_now: Vec<PathBuf> = pool.ready.with(|p| p.free().clone());
        assert!(taken.iter().all(|t| !free_now.contains(t) && fs::read_to_string(t).unwrap() == "text"));
        assert_eq!(fs::read_dir(store.join(DIR)).unwrap().count(), free_now.len() + taken.len());
        // The maker ends with its pool, and makes nothing after.
        drop(pool);
        let left = fs::read_dir(store.join(DIR)).unwrap().count();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(fs::read_dir(store.join(DIR)).unwrap().count(), left);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_note_on_another_file_system_is_written_beside_itself() {
        use std::os::unix::fs::MetadataExt;
        let other = Path::new("/dev/shm");
        let d = dir("device");
        if !other.is_dir() || fs::metadata(other).unwrap().dev() == fs::metadata(&d).unwrap().dev() {
            eprintln!("no second file system here: skipped");
            return;
        }
        let note = other.join(format!("datanotes-spare-{}.md", std::process::id()));
        fs::write(&note, "old\n").unwrap();
        let pool = pool(&d.join("store"));
        let spare = pool.fill("new\n").unwrap();
        assert!(matches!(swap(&spare, &note).unwrap(), Swap::OtherDevice));
        pool.put(spare.clone(), &note, &Syncs::default()).unwrap();
        assert_eq!(fs::read_to_string(&note).unwrap(), "new\n");
        assert!(spare.exists(), "the spare stays in the pool");
        fs::remove_file(&note).unwrap();
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_big_old_text_is_not_kept_and_spares_are_never_written_through_a_link() {
        let d = dir("big");
        let note = d.join("Big.md");
        fs::write(&note, "x".repeat(KEEP_AT_MOST as usize + 1)).unwrap();
        let pool1 = pool(&d.join("store"));
        let spare = pool1.fill("small\n").unwrap();
        swap(&spare, &note).unwrap();
        pool1.give_back(spare.clone());
        assert!(!spare.exists(), "the big old text went");

        let d2 = dir("link");
        std::os::unix::fs::symlink(&d, d2.join("store").join(DIR)).unwrap();
        let pool2 = pool(&d2.join("store"));
        assert!(pool2.fill("text").is_none());
        // Checked at each fill, not once: the folder put back, spares work again.
        fs::remove_file(d2.join("store").join(DIR)).unwrap();
        let spare = pool2.fill("text").expect("a spare in the store's own folder");
        assert!(spare.starts_with(d2.join("store").join(DIR)));
        fs::remove_dir_all(&d).unwrap();
        fs::remove_dir_all(&d2).unwrap();
    }
}
