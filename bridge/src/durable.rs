//! Many files made durable by one flush. A write of 3,000 notes used to pay a
//! flush (fsync) and a rename per note and per store file, and one flush per
//! line of the change feed: seconds, where the work itself takes milliseconds.
//! Now the texts are written beside their files, flushed together, then renamed
//! into place, and flushed again so the renames last: every file is still whole
//! and durable before anything counts on it, for the cost of two flushes.

use crate::disk::{store_file, temp_of, write_store_file, STORE};
use datanotes_core::edits::StoreWrite;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Group commit (see `shared::Commit`): the writes of a call are not synced one
/// by one; the call's answer waits for one `syncfs` shared with the calls that
/// arrived with it.
static DEFER: AtomicBool = AtomicBool::new(false);
/// Writes were made whose sync was deferred.
static DIRTY: AtomicBool = AtomicBool::new(false);

/// Defers syncs from now on, on Linux, where one `syncfs` makes every write of
/// the vault's file system durable at once.
pub fn defer_syncs() {
    if cfg!(target_os = "linux") {
        DEFER.store(true, Ordering::SeqCst);
    }
}

/// Runs `f` with every write made and synced at once, as `call` makes them,
/// then defers again what was deferred: the engine's open after a queue given
/// up (see `shared`) must not write through the queue that just failed. Only
/// under the engine's lock with the queue empty, where nothing else writes.
pub fn direct<R>(f: impl FnOnce() -> R) -> R {
    let was = DEFER.swap(false, Ordering::SeqCst);
    let r = f();
    if was {
        DEFER.store(true, Ordering::SeqCst);
    }
    r
}

/// Whether syncs are deferred (and writes queued, see `queue`).
pub fn deferring() -> bool {
    DEFER.load(Ordering::Relaxed)
}

/// A write was left for the next group sync.
pub fn dirty() {
    DIRTY.store(true, Ordering::SeqCst);
}

/// Whether a sync was deferred since the last call (a write queued, under the
/// engine's lock: this call's).
pub fn is_dirty() -> bool {
    DIRTY.load(Ordering::SeqCst)
}

/// Whether a sync was deferred since the last call; clears it.
pub fn take_dirty() -> bool {
    DIRTY.swap(false, Ordering::SeqCst)
}

/// Whether a write must wait for the disk now: not when syncs are deferred, in
/// which case the write is left for the next group sync.
pub fn must_sync() -> bool {
    if DEFER.load(Ordering::Relaxed) {
        DIRTY.store(true, Ordering::SeqCst);
        return false;
    }
    true
}

/// Writes `text` to `path` (created or emptied) without waiting for the disk.
pub fn write_unsynced(path: &Path, text: &str) -> std::io::Result<()> {
    fs::File::create(path)?.write_all(text.as_bytes())
}

/// Makes `files`, and every rename made in the vault's file system, durable. On
/// Linux one `syncfs` of the vault's file system does it (it also flushes what
/// other programs wrote there, which costs them nothing). Elsewhere each file
/// and its folder are flushed.
pub fn flush<'p>(vault: &Path, files: impl IntoIterator<Item = &'p PathBuf>) -> std::io::Result<()> {
    if !must_sync() {
        return Ok(());
    }
    flush_now(vault, files)
}

/// As `flush`, whether syncs are deferred or not: the group sync itself.
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

/// Writes store files in order, durably; on failure, how many are in and the
/// error. Neighbouring appends to one file are one append (a write's feed
/// events are one line each); neighbouring whole files and deletions are one
/// group, flushed together (see `write_group`).
pub fn write_store_files(vault: &Path, files: &[&StoreWrite]) -> Result<(), (usize, String)> {
    let mut i = 0;
    while i < files.len() {
        let f = files[i];
        let n = if f.append {
            let n = files[i..].iter().take_while(|g| g.append && g.path == f.path).count();
            let text = files[i..i + n].iter().map(|g| g.text.as_str()).collect();
            write_store_file(vault, &StoreWrite { path: f.path.clone(), text, delete: false, append: true })
                .map_err(|e| (i, e))?;
            n
        } else {
            let n = group_len(&files[i..]);
            if n == 1 {
                write_store_file(vault, f).map_err(|e| (i, e))?;
            } else {
                write_group(vault, &files[i..i + n]).map_err(|(k, e)| (i + k, e))?;
            }
            n
        };
        i += n;
    }
    Ok(())
}

/// How many whole writes and deletions lead `files`, each of a file of its own;
/// the webhooks' file (written owner-only) goes alone.
fn group_len(files: &[&StoreWrite]) -> usize {
    let mut seen = std::collections::HashSet::new();
    let alone = |f: &StoreWrite| f.append || f.path == datanotes_core::webhook::FILE;
    files.iter().take_while(|f| !alone(f) && seen.insert(f.path.as_str())).count().max(1)
}

/// Whole writes and deletions: every text written beside its file, one flush,
/// the renames and deletions in order, one flush. Done again whole, a group
/// comes to the same files, so a failure anywhere may say "none are in".
fn write_group(vault: &Path, files: &[&StoreWrite]) -> Result<(), (usize, String)> {
    let named = |f: &StoreWrite, e: &dyn std::fmt::Display| format!("{STORE}/{}: {e}", f.path);
    let mut temps: Vec<(PathBuf, Option<PathBuf>)> = Vec::with_capacity(files.len());
    let staged = files.iter().try_for_each(|f| {
        let full = store_file(vault, &f.path, !f.delete)?;
        if f.delete {
            temps.push((full, None));
            return Ok(());
        }
        let tmp = temp_of(&full);
        temps.push((full, Some(tmp.clone())));
        write_unsynced(&tmp, &f.text).map_err(|e| named(f, &e))
    });
    let clean = |temps: &[(PathBuf, Option<PathBuf>)]| {
        temps.iter().filter_map(|(_, t)| t.as_ref()).for_each(|t| drop(fs::remove_file(t)));
    };
    if let Err(e) =
        staged.and_then(|()| flush(vault, temps.iter().filter_map(|(_, t)| t.as_ref())).map_err(|e| e.to_string()))
    {
        clean(&temps);
        return Err((0, e));
    }
    for (k, (full, tmp)) in temps.iter().enumerate() {
        let done = match tmp {
            Some(tmp) => fs::rename(tmp, full),
            None => crate::disk::remove_if_there(full),
        };
        if let Err(e) = done {
            clean(&temps[k..]);
            let _ = flush(vault, temps[..k].iter().map(|(f, _)| f));
            return Err((k, named(files[k], &e)));
        }
    }
    flush(vault, temps.iter().map(|(f, _)| f)).map_err(|e| (0, e.to_string()))
}
