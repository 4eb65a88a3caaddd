//! The store's files as the engine knows them: which exist (the host lists them at
//! open), and the texts it has read. A read that needs a file the engine has not
//! seen asks the host for it (Status::Need) and is called again.

use crate::edits::StoreWrite;
use crate::error::{Failure, Kind, OpResult};
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Default, Clone)]
pub struct Store {
    /// Every store file that exists, by path relative to the store.
    pub listing: BTreeSet<String>,
    /// Texts read or written (None: asked for and absent).
    texts: HashMap<String, Option<String>>,
}

impl Store {
    pub fn new(files: Vec<(String, Option<String>)>) -> Store {
        let mut s = Store::default();
        for (p, t) in files {
            s.listing.insert(p.clone());
            if t.is_some() {
                s.texts.insert(p, t);
            }
        }
        s
    }

    /// Files the host read because the engine asked.
    pub fn provide(&mut self, files: Vec<(String, Option<String>)>) {
        for (p, t) in files {
            if t.is_some() {
                self.listing.insert(p.clone());
            }
            self.texts.insert(p, t);
        }
    }

    pub fn exists(&self, path: &str) -> bool {
        self.listing.contains(path)
    }

    /// Fails with Need unless every listed file among `paths` has been read.
    pub fn require<'a, I: IntoIterator<Item = &'a String>>(&self, op: &str, paths: I) -> OpResult<()> {
        let missing: Vec<String> =
            paths.into_iter().filter(|p| self.listing.contains(*p) && !self.texts.contains_key(*p)).cloned().collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(Failure {
            kind: Kind::Need,
            op: op.to_string(),
            reasons: missing,
            hint: String::new(),
            docs: None,
            details: None,
        })
    }

    /// The text of a file read before (None when absent or not read).
    pub fn text(&self, path: &str) -> Option<&str> {
        self.texts.get(path).and_then(|t| t.as_deref())
    }

    /// Records a file the engine writes.
    pub fn wrote(&mut self, w: &StoreWrite) {
        if w.delete {
            self.listing.remove(&w.path);
            self.texts.remove(&w.path);
        } else {
            self.listing.insert(w.path.clone());
            // Blobs are the notes' texts: the vault holds the current ones.
            if !w.path.starts_with(crate::log::BLOBS) {
                self.texts.insert(w.path.clone(), Some(w.text.clone()));
            }
        }
    }

    /// Listed files under a folder.
    pub fn under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a String> + 'a {
        self.listing.range(prefix.to_string()..).take_while(move |p| p.starts_with(prefix))
    }
}
