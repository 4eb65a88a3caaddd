//! A journal entry completed in place. Every write's entry is written twice:
//! pending before its first note, done after its last, and the two texts
//! differ by the status alone. The done one was a whole new file (a spare
//! filled, swapped in, the old inode taken back): about 4% of a write's CPU
//! under load. When the file holds exactly the pending text the queue put
//! there, the status's value is overwritten where it stands:
//! `pending"` becomes `done"` and three spaces, which JSON reads as the same
//! entry. One write of 8 bytes within one 512-byte sector, which a disk
//! writes whole: a kill or a power cut finds the entry pending or done, as
//! before, and the answer still waits for the sync that makes it last.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

const PENDING: &str = "\"status\":\"pending\"";
const DONE: &str = "\"status\":\"done\"";
/// What replaces `pending"`: as long, so that nothing after it moves.
const PATCH: &[u8] = b"done\"   ";
const SECTOR: usize = 512;
/// Entries remembered at most (a write's entry is forgotten once done; only
/// writes whose done entry never came stay, and are forgotten by the lot).
const AT_MOST: usize = 1_000;

/// The journal entries a queue left pending on disk, as written: what
/// `patch_for` may count on (a hint, checked again by `write`).
#[derive(Default)]
pub struct Pending(Mutex<HashMap<PathBuf, Box<str>>>);

/// Where `done` can be written over `pending` in place: the offset of the
/// status's value, when the two differ by their status alone, the pending
/// mark is there once, and the bytes to write lie within one sector.
pub fn offset(pending: &str, done: &str) -> Option<u64> {
    let at = pending.find(PENDING)?;
    let (head, tail) = (&pending[..at], &pending[at + PENDING.len()..]);
    let same = tail.find(PENDING).is_none()
        && done.len() == head.len() + DONE.len() + tail.len()
        && done.starts_with(head)
        && done[head.len()..].starts_with(DONE)
        && done.ends_with(tail);
    let value = at + "\"status\":\"".len();
    (same && value / SECTOR == (value + PATCH.len() - 1) / SECTOR).then_some(value as u64)
}

impl Pending {
    /// Where `text`, about to be written whole at `file`, can be written in
    /// place instead, and the text the file must then hold. `earlier`: what
    /// an earlier op of the queue leaves there, if one writes it (None
    /// inside: not a whole text); else what the queue last put there counts,
    /// if it remembers.
    pub fn patch_for(&self, file: &Path, earlier: Option<Option<&str>>, text: &str) -> Option<(u64, Box<str>)> {
        if let Some(was) = earlier {
            let was = was?;
            return offset(was, text).map(|at| (at, was.into()));
        }
        let on_disk = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let was = on_disk.get(file)?;
        offset(was, text).map(|at| (at, was.clone()))
    }

    /// `file` now holds `text` (None: something else, or unknown).
    pub fn now_holds(&self, file: &Path, text: Option<&str>) {
        let mut on_disk = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match text.filter(|t| t.contains(PENDING)) {
            Some(t) => {
                if on_disk.len() >= AT_MOST {
                    on_disk.clear();
                }
                on_disk.insert(file.to_path_buf(), t.into());
            }
            None => {
                on_disk.remove(file);
            }
        }
    }
}

/// Writes the done status over the pending one at `offset` (see `offset`),
/// when the file holds `pending`, byte for byte: what this process remembers
/// of a file is only a hint. False when it was not done (the file holds
/// something else, or cannot be opened for writing as a swap would not
/// need): the entry is then written whole, as before. Synced unless `syncs`
/// defers it.
#[cfg(unix)]
pub fn write(file: &Path, offset: u64, pending: &str, syncs: &crate::durable::Syncs) -> bool {
    use std::io::Read;
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let patched = || -> std::io::Result<bool> {
        let mut f = std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NOFOLLOW).open(file)?;
        let mut held = Vec::with_capacity(pending.len() + 1);
        (&mut f).take(pending.len() as u64 + 1).read_to_end(&mut held)?;
        if held != pending.as_bytes() {
            return Ok(false);
        }
        f.write_all_at(PATCH, offset)?;
        if syncs.must_sync() {
            f.sync_data()?;
        }
        Ok(true)
    };
    patched().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_done_entry_is_written_in_place_only_when_it_differs_by_its_status_within_one_sector() {
        let pending = r#"{"format":1,"migration_id":"a","status":"pending","changes":[]}"#;
        let done = pending.replace("\"pending\"", "\"done\"");
        let at = offset(pending, &done).expect("differs by its status alone") as usize;
        let mut patched = pending.as_bytes().to_vec();
        patched[at..at + PATCH.len()].copy_from_slice(PATCH);
        let read: serde_json::Value = serde_json::from_slice(&patched).unwrap();
        assert_eq!(read, serde_json::from_str::<serde_json::Value>(&done).unwrap(), "JSON reads the same entry");

        // Anything else changed too: written whole.
        assert_eq!(offset(pending, &done.replace("\"a\"", "\"b\"")), None);
        assert_eq!(offset(pending, &format!("{done}\n")), None);
        assert_eq!(offset(pending, pending), None, "not a completion");
        assert_eq!(offset(&done, &done), None);
        // A note's text holding the mark is escaped in JSON; a second mark
        // unescaped (a hand-made entry) leaves the place in doubt.
        let twice = r#"{"status":"pending","x":{"status":"pending"}}"#;
        assert_eq!(offset(twice, &twice.replacen("pending", "done", 1)), None);
        // The value across a sector's end: a torn write could mix the two.
        let padded = format!("{{\"pad\":\"{}\",\"status\":\"pending\"}}", "x".repeat(490));
        let value = padded.find(PENDING).unwrap() + "\"status\":\"".len();
        assert!(value < SECTOR && value + PATCH.len() > SECTOR, "{value}");
        assert_eq!(offset(&padded, &padded.replace("\"pending\"", "\"done\"")), None);
    }
}
