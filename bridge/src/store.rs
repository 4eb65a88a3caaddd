//! The store this process writes (a vault's `.datanotes/`): its folder as
//! locked, its spare files, and whether its writes wait for the disk one by
//! one; and its files written through them, durably.

use crate::durable::{write_unsynced, Syncs};
use crate::files::{append, inside, remove_if_there, temp_of, write_whole, Folders, STORE};
use crate::lock::Locked;
use crate::spare::Pool;
use datanotes_core::edits::StoreWrite;
use std::fs;
use std::path::{Path, PathBuf};

pub struct Store {
    vault: PathBuf,
    locked: Locked,
    pub spares: Pool,
    pub syncs: Syncs,
}

impl Store {
    /// The store of `vault`, as `locked` (see `Held::locked`; `Locked::not_held`
    /// for a vault this process does not hold).
    pub fn new(vault: &Path, locked: Locked) -> Store {
        Store { vault: vault.to_path_buf(), spares: Pool::new(locked.clone()), locked, syncs: Syncs::default() }
    }

    pub fn vault(&self) -> &Path {
        &self.vault
    }

    /// The store's folder.
    pub fn dir(&self) -> &Path {
        self.locked.store()
    }

    /// A store file's path, its folders checked free of links (see `Folders`)
    /// and, with `create`, made; refused when the store is no longer the folder
    /// this process locked (`Locked::check`). Checked at every call, never
    /// remembered for the process: anyone who can write to the vault can put a
    /// link in a store folder's place while the engine runs.
    pub fn file(&self, rel: &str, create: bool) -> Result<PathBuf, String> {
        StoreFiles::default().file(self, rel, create)
    }

    /// Replaces an existing file whole through a spare (see `Pool::replace`).
    pub fn replace(&self, path: &Path, text: &str) -> Option<std::io::Result<()>> {
        self.spares.replace(path, text, &self.syncs)
    }

    /// Puts a spare's text at `path` (see `Pool::put`).
    pub fn put_spare(&self, spare: PathBuf, path: &Path) -> std::io::Result<()> {
        self.spares.put(spare, path, &self.syncs)
    }

    /// Appends to a file, synced before the answer goes out.
    pub fn append(&self, path: &Path, text: &str) -> std::io::Result<()> {
        append(path, text, &self.syncs)
    }

    /// Writes a file whole (see `files::write_whole`), synced before the
    /// answer goes out.
    pub fn write_whole(&self, path: &Path, text: &str, owner_only: bool) -> std::io::Result<()> {
        write_whole(path, text, owner_only, &self.syncs)
    }

    /// Writes one store file durably: deleted, appended to, or written whole.
    pub fn write_file(&self, f: &StoreWrite) -> Result<(), String> {
        let full = self.file(&f.path, !f.delete)?;
        let named = |e: std::io::Error| format!("{STORE}/{}: {e}", f.path);
        if f.delete {
            remove_if_there(&full).map_err(named)?;
        } else if f.append {
            self.append(&full, &f.text).map_err(named)?;
        } else {
            // Webhooks hold their signing secrets.
            let secret = datanotes_core::webhook::is_file(&f.path);
            let done = if secret { None } else { self.replace(&full, &f.text) };
            done.unwrap_or_else(|| self.write_whole(&full, &f.text, secret)).map_err(named)?;
        }
        Ok(())
    }

    /// Writes store files in order, durably; on failure, how many are in and
    /// the error. Neighbouring appends to one file are one append (a write's
    /// feed events are one line each); neighbouring whole files and deletions
    /// are one group, flushed together (see `write_group`).
    pub fn write_files(&self, files: &[&StoreWrite]) -> Result<(), (usize, String)> {
        let mut i = 0;
        while i < files.len() {
            let f = files[i];
            let n = if f.append {
                let n = files[i..].iter().take_while(|g| g.append && g.path == f.path).count();
                let text = files[i..i + n].iter().map(|g| g.text.as_str()).collect();
                self.write_file(&StoreWrite { path: f.path.clone(), text, delete: false, append: true })
                    .map_err(|e| (i, e))?;
                n
            } else {
                let n = group_len(&files[i..]);
                if n == 1 {
                    self.write_file(f).map_err(|e| (i, e))?;
                } else {
                    self.write_group(&files[i..i + n]).map_err(|(k, e)| (i + k, e))?;
                }
                n
            };
            i += n;
        }
        Ok(())
    }

    /// Whole writes and deletions: every text written beside its file, one
    /// flush, the renames and deletions in order, one flush. Done again whole,
    /// a group comes to the same files, so a failure anywhere may say "none
    /// are in".
    fn write_group(&self, files: &[&StoreWrite]) -> Result<(), (usize, String)> {
        let named = |f: &StoreWrite, e: &dyn std::fmt::Display| format!("{STORE}/{}: {e}", f.path);
        let vault = &self.vault;
        let mut temps: Vec<(PathBuf, Option<PathBuf>)> = Vec::with_capacity(files.len());
        let staged = files.iter().try_for_each(|f| {
            let full = self.file(&f.path, !f.delete)?;
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
        let written = temps.iter().filter_map(|(_, t)| t.as_ref());
        if let Err(e) = staged.and_then(|()| self.syncs.flush(vault, written).map_err(|e| e.to_string())) {
            clean(&temps);
            return Err((0, e));
        }
        for (k, (full, tmp)) in temps.iter().enumerate() {
            let done = match tmp {
                Some(tmp) => fs::rename(tmp, full),
                None => remove_if_there(full),
            };
            if let Err(e) = done {
                clean(&temps[k..]);
                let _ = self.syncs.flush(vault, temps[..k].iter().map(|(f, _)| f));
                return Err((k, named(files[k], &e)));
            }
        }
        self.syncs.flush(vault, temps.iter().map(|(f, _)| f)).map_err(|e| (0, e.to_string()))
    }
}

/// How many whole writes and deletions lead `files`, each of a file of its own;
/// the webhooks' file (written owner-only) goes alone.
fn group_len(files: &[&StoreWrite]) -> usize {
    let mut seen = std::collections::HashSet::new();
    let alone = |f: &StoreWrite| f.append || f.path == datanotes_core::webhook::FILE;
    files.iter().take_while(|f| !alone(f) && seen.insert(f.path.as_str())).count().max(1)
}

/// Store files' paths as `Store::file` checks them, for one call or one batch
/// of writes: each check made once in it (a few `lstat`s).
#[derive(Default)]
pub struct StoreFiles {
    folders: Folders,
    ours: bool,
}

impl StoreFiles {
    pub fn file(&mut self, store: &Store, rel: &str, create: bool) -> Result<PathBuf, String> {
        let full = inside(store.dir(), rel)?;
        if !self.ours {
            store.locked.check()?;
            self.ours = true;
        }
        self.folders.check(&store.vault, &full, create)?;
        Ok(full)
    }
}
