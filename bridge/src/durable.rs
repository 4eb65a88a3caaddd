//! Many files made durable by one flush. A write of 3,000 notes used to pay a
//! flush (fsync) and a rename per note and per store file, and one flush per
//! line of the change feed: seconds, where the work itself takes milliseconds.
//! Now the texts are written beside their files, flushed together, then renamed
//! into place, and flushed again so the renames last: every file is still whole
//! and durable before anything counts on it, for the cost of two flushes.
//!
//! Under group commit (`serve`, `mcp`) the writes of a call are not synced one
//! by one at all: `Syncs` says so to every write, and `Commit` has the calls
//! that finish together share one sync of the file system.

use crate::fate::{Fate, Fates};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// Whether the writes of a vault wait for the disk one by one, or are left to
/// a group sync (see `Commit`); and whether one was left since the last call.
/// The default syncs every write at once.
#[derive(Default)]
pub struct Syncs {
    /// Group commit: a call's answer waits for one `syncfs` shared with the
    /// calls that arrived with it.
    defer: AtomicBool,
    /// Writes were made whose sync was deferred.
    dirty: AtomicBool,
}

impl Syncs {
    /// Defers syncs from now on, on Linux, where one `syncfs` makes every write
    /// of the vault's file system durable at once.
    pub fn defer(&self) {
        if cfg!(target_os = "linux") {
            self.defer.store(true, Ordering::SeqCst);
        }
    }

    /// Runs `f` with every write made and synced at once, as `call` makes them,
    /// then defers again what was deferred: the engine's open after a queue
    /// given up (see `shared`) must not write through the queue that just
    /// failed. Only under the engine's lock with the queue empty, where nothing
    /// else writes.
    pub fn direct<R>(&self, f: impl FnOnce() -> R) -> R {
        let was = self.defer.swap(false, Ordering::SeqCst);
        let r = f();
        if was {
            self.defer.store(true, Ordering::SeqCst);
        }
        r
    }

    /// Whether syncs are deferred (and writes queued, see `queue`).
    pub fn deferring(&self) -> bool {
        self.defer.load(Ordering::Relaxed)
    }

    /// A write was left for the next group sync.
    pub fn dirty(&self) {
        self.dirty.store(true, Ordering::SeqCst);
    }

    /// Whether a sync was deferred since the last call (a write queued, under
    /// the engine's lock: this call's).
    pub fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::SeqCst)
    }

    /// Whether a sync was deferred since the last call; clears it.
    pub fn take_dirty(&self) -> bool {
        self.dirty.swap(false, Ordering::SeqCst)
    }

    /// Whether a write must wait for the disk now: not when syncs are
    /// deferred, in which case the write is left for the next group sync.
    pub fn must_sync(&self) -> bool {
        if self.defer.load(Ordering::Relaxed) {
            self.dirty.store(true, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// Makes `files`, and every rename made in the vault's file system,
    /// durable, unless syncs are deferred (see `flush_now`).
    pub fn flush<'p>(&self, vault: &Path, files: impl IntoIterator<Item = &'p PathBuf>) -> std::io::Result<()> {
        if !self.must_sync() {
            return Ok(());
        }
        flush_now(vault, files)
    }
}

/// Writes `text` to `path` (created or emptied) without waiting for the disk.
pub fn write_unsynced(path: &Path, text: &str) -> std::io::Result<()> {
    fs::File::create(path)?.write_all(text.as_bytes())
}

/// Makes `files`, and every rename made in the vault's file system, durable,
/// whether syncs are deferred or not: the group sync itself. On Linux one
/// `syncfs` of the vault's file system does it (it also flushes what other
/// programs wrote there, which costs them nothing). Elsewhere each file and
/// its folder are flushed.
pub fn flush_now<'p>(vault: &Path, files: impl IntoIterator<Item = &'p PathBuf>) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let _ = files;
        let dir = fs::File::open(vault)?;
        // SAFETY: syncfs only reads the descriptor, which `dir` keeps open.
        if unsafe { libc::syncfs(dir.as_raw_fd()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = vault;
        let mut folders = std::collections::HashSet::new();
        for f in files {
            if f.exists() {
                fs::File::open(f)?.sync_all()?;
            }
            if let Some(dir) = f.parent() {
                folders.insert(dir.to_path_buf());
            }
        }
        for dir in folders {
            // Windows cannot open a folder to flush it; its renames are journaled.
            if let Ok(d) = fs::File::open(&dir) {
                let _ = d.sync_all();
            }
        }
        Ok(())
    }
}

/// Group commit: calls that wrote carry out their queued writes (see `queue`)
/// once the engine's lock is released, then wait for one sync of the file
/// system that covers them; the first to wait makes it for all whose writes
/// were carried out before it began, and those who come meanwhile share the
/// next. Each answer still goes out only once its writes are durable, and 20
/// clients share a sync where each paid 5 to 7.
#[derive(Default)]
pub struct Commit {
    state: Mutex<CommitState>,
    synced_cv: Condvar,
}

#[derive(Default)]
struct CommitState {
    /// All calls up to this one are durable (numbered by `Queue::seal`).
    synced: u64,
    syncing: bool,
}

impl Commit {
    /// Returns once the call `ticket` is durable: a sync of the vault's file
    /// system (`flush`) that began once `done` (the calls whose writes are
    /// carried out) reached it. Calls whose sync failed get that fate in `fates`.
    pub fn wait(&self, ticket: u64, done: impl Fn() -> u64, flush: impl Fn() -> std::io::Result<()>, fates: &Fates) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        while s.synced < ticket {
            if s.syncing {
                s = self.synced_cv.wait(s).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            s.syncing = true;
            let target = done();
            drop(s);
            let done = flush();
            s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            s.syncing = false;
            // The calls go on rather than wait for good, and are answered so.
            if let Err(e) = done {
                eprintln!(
                    "datanotes: WARN the disk did not confirm the last writes ({e}): their calls are not answered ok"
                );
                fates.set(s.synced + 1..=target, Fate::Unconfirmed(e.to_string()));
            }
            s.synced = s.synced.max(target);
            self.synced_cv.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, AtomicUsize};
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    #[test]
    fn calls_that_finish_together_share_one_sync_and_none_returns_before_it() {
        let commit = Arc::new(Commit::default());
        let fates = Arc::new(Fates::default());
        let finished = Arc::new(AtomicU64::new(0));
        let ticket = |f: &AtomicU64| f.fetch_add(1, Ordering::SeqCst) + 1;
        let flushes = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(Barrier::new(10));
        let threads: Vec<_> = (0..10)
            .map(|_| {
                let (commit, fates, flushes, barrier, f) =
                    (commit.clone(), fates.clone(), flushes.clone(), barrier.clone(), finished.clone());
                std::thread::spawn(move || {
                    let t = ticket(&f);
                    barrier.wait();
                    let flush = || {
                        std::thread::sleep(Duration::from_millis(30));
                        flushes.fetch_add(1, Ordering::SeqCst);
                        Ok(())
                    };
                    commit.wait(t, || f.load(Ordering::SeqCst), flush, &fates);
                    // Returned only once a sync that began after the ticket ended.
                    assert!(flushes.load(Ordering::SeqCst) >= 1);
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(flushes.load(Ordering::SeqCst), 1, "ten calls, one sync");

        // A call finished while a sync runs waits for the next one.
        let t1 = ticket(&finished);
        let (c, f, fs1) = (commit.clone(), finished.clone(), fates.clone());
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let first = std::thread::spawn(move || {
            let flush = || {
                started_tx.send(()).unwrap();
                std::thread::sleep(Duration::from_millis(50));
                Ok(())
            };
            c.wait(t1, || f.load(Ordering::SeqCst), flush, &fs1)
        });
        started_rx.recv().unwrap();
        let t2 = ticket(&finished);
        let seen = AtomicUsize::new(0);
        let flush = || {
            seen.fetch_add(1, Ordering::SeqCst);
            Ok(())
        };
        commit.wait(t2, || finished.load(Ordering::SeqCst), flush, &fates);
        first.join().unwrap();
        assert_eq!(seen.load(Ordering::SeqCst), 1, "the second call made a sync of its own");
        assert_eq!(fates.of(t2), None);
    }

    #[test]
    fn issue_52_point_5_calls_whose_sync_failed_are_not_answered_ok() {
        let (commit, fates) = (Commit::default(), Fates::default());
        commit.state.lock().unwrap().synced = 10;
        let eio = || Err(std::io::Error::from_raw_os_error(5));
        commit.wait(12, || 12, eio, &fates);
        for t in [11, 12] {
            assert!(matches!(fates.of(t), Some(Fate::Unconfirmed(e)) if e.contains("os error 5")), "{t}");
        }
        assert_eq!(fates.of(10), None, "synced before");
        commit.wait(13, || 13, || Ok(()), &fates);
        assert_eq!(fates.of(13), None);
    }

    #[test]
    fn deferred_syncs_mark_the_call_dirty_and_direct_writes_sync_at_once() {
        let syncs = Syncs::default();
        assert!(syncs.must_sync() && !syncs.is_dirty(), "the default syncs every write");
        syncs.defer();
        if !cfg!(target_os = "linux") {
            return;
        }
        assert!(!syncs.must_sync() && syncs.is_dirty());
        assert!(syncs.take_dirty() && !syncs.is_dirty());
        assert!(syncs.direct(|| syncs.must_sync()), "synced at once inside direct");
        assert!(syncs.deferring(), "deferred again after it");
    }
}
