//! A host in memory: the vault and the store as maps. The benchmark and the
//! tests drive the engine on it; it is a real host, not a mock: the driver checks
//! and applies every edit against its files as it would against a disk.

use super::Host;
use crate::edits::StoreWrite;
use crate::handedit::VaultEvent;
use crate::NoteFile;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default, Clone)]
pub struct Memory {
    /// The vault's files by path.
    pub notes: BTreeMap<String, String>,
    /// The store's files by path under `.datanotes/`.
    pub store: BTreeMap<String, String>,
    /// Notes moved to the trash, by their path in the vault.
    pub trash: BTreeMap<String, String>,
    /// Every store file the engine asked for, in order.
    pub asked: Vec<String>,
    /// Paths whose writes fail (a file held by another program).
    pub held: BTreeSet<String>,
    /// Store writes fail (a full disk, a read-only folder).
    pub store_fails: bool,
    /// The disk fills up with the next note written: store writes fail from then on.
    pub fills_up: bool,
    /// Record what a file watcher would see (`seen`); off, no copies are made.
    pub watch: bool,
    /// What a file watcher would report of the edits made, in order.
    pub seen: Vec<VaultEvent>,
    /// The modification time given to the files written.
    pub mtime: i64,
    /// Each vault file's modification time, by path, as a disk keeps it: set
    /// by `write` (to `mtime`), kept by `rename`. A file not in it has none (0).
    pub mtimes: BTreeMap<String, i64>,
}

impl Memory {
    pub fn new(notes: BTreeMap<String, String>) -> Memory {
        Memory { notes, ..Memory::default() }
    }

    /// Writes, appends to or deletes a store file (infallible: the tests' way in).
    pub fn keep(&mut self, w: &StoreWrite) {
        if w.delete {
            self.store.remove(&w.path);
        } else if w.append {
            self.store.entry(w.path.clone()).or_default().push_str(&w.text);
        } else {
            self.store.insert(w.path.clone(), w.text.clone());
        }
    }

    fn see(&mut self, ev: impl FnOnce() -> VaultEvent) {
        if self.watch {
            self.seen.push(ev());
        }
    }

    fn free(&self, path: &str) -> Result<(), String> {
        if self.held.contains(path) {
            return Err("the file is held by another program".into());
        }
        Ok(())
    }
}

impl Host for Memory {
    fn read(&mut self, path: &str) -> Result<Option<String>, String> {
        Ok(self.notes.get(path).cloned())
    }

    fn read_note(&mut self, path: &str) -> Result<Option<NoteFile>, String> {
        let mtime = self.mtimes.get(path).copied().unwrap_or(0);
        Ok(self.notes.get(path).map(|text| NoteFile { path: path.to_string(), text: text.clone(), mtime }))
    }

    fn write(&mut self, path: &str, text: &str) -> Result<(), String> {
        self.free(path)?;
        self.store_fails |= std::mem::take(&mut self.fills_up);
        let old = self.notes.insert(path.to_string(), text.to_string());
        let mtime = self.mtime;
        self.mtimes.insert(path.to_string(), mtime);
        self.see(|| {
            let (path, text) = (path.to_string(), text.to_string());
            match old {
                Some(_) => VaultEvent::Modified { path, text, mtime },
                None => VaultEvent::Created { path, text, mtime },
            }
        });
        Ok(())
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        self.free(from)?;
        let text = self.notes.remove(from).ok_or("no such file")?;
        let mtime = self.mtime;
        self.see(|| VaultEvent::Renamed { from: from.into(), to: to.into(), text: text.clone(), mtime });
        self.notes.insert(to.to_string(), text);
        // A rename keeps the file's modification time.
        if let Some(m) = self.mtimes.remove(from) {
            self.mtimes.insert(to.to_string(), m);
        }
        Ok(())
    }

    fn trash(&mut self, path: &str) -> Result<(), String> {
        self.free(path)?;
        let text = self.notes.remove(path).ok_or("no such file")?;
        self.mtimes.remove(path);
        self.trash.insert(path.to_string(), text);
        self.see(|| VaultEvent::Removed { path: path.into() });
        Ok(())
    }

    fn remove(&mut self, path: &str) -> Result<(), String> {
        self.free(path)?;
        self.notes.remove(path).ok_or("no such file")?;
        self.mtimes.remove(path);
        self.see(|| VaultEvent::Removed { path: path.into() });
        Ok(())
    }

    fn read_store(&mut self, path: &str) -> Option<String> {
        self.asked.push(path.to_string());
        self.store.get(path).cloned()
    }

    fn write_store(&mut self, w: &StoreWrite) -> Result<(), String> {
        if self.store_fails {
            return Err("no space left on device".into());
        }
        self.free(&w.path)?;
        self.keep(w);
        Ok(())
    }
}
