//! Search by meaning's part of the engine: the model, and the notes made
//! ready for search, kept up as notes change and in the store
//! (semantic/stored.rs). Derived from the notes: nothing is journaled.

use super::{search, stored, Index, Model, Synced};
use crate::edits::StoreWrite;
use crate::error::OpResult;
use crate::index::Index as Notes;
use crate::store::Store;
use std::sync::Arc;

/// How bringing the index up to date went: its counts, and the stored index's
/// write, if any, and why it was built again, if it was.
pub struct Brought {
    pub counts: Synced,
    pub write: Option<StoreWrite>,
    pub rebuilt: Option<String>,
}

/// Search by meaning's state: the model the host gave (the plugin's, from
/// the store; natively the vendored one when none), and the notes ready for
/// search, once a search or a sync made them ready.
#[derive(Default)]
pub struct Meaning {
    model: Option<Arc<Model>>,
    index: Option<Index>,
}

impl Meaning {
    /// The model: the one the host gave, else (natively) the vendored one.
    pub fn model(&self) -> Option<Arc<Model>> {
        #[cfg(not(target_arch = "wasm32"))]
        return Some(self.model.clone().unwrap_or_else(Model::builtin));
        #[cfg(target_arch = "wasm32")]
        return self.model.clone();
    }

    /// Takes the host's model; the notes made ready with another are made
    /// ready again.
    pub fn set_model(&mut self, model: Model) {
        if self.model.as_ref().is_none_or(|m| m.id != model.id) {
            self.index = None;
        }
        self.model = Some(Arc::new(model));
    }

    /// The notes ready for search, once `bring` made them ready.
    pub fn index(&self) -> Option<&Index> {
        self.index.as_ref()
    }

    /// The index brought up to date with the vault's notes, from what this
    /// engine holds, else from the stored index (which it asks the host for);
    /// the stored index is appended to, or written anew when `whole`, when it
    /// cannot be read, or when its lines far outnumber the notes. `tables`:
    /// only their rows are brought up to date (None: every note).
    pub fn bring(
        &mut self,
        notes: &Notes,
        store: &mut Store,
        model: &Model,
        whole: bool,
        tables: Option<&[String]>,
    ) -> OpResult<Brought> {
        let path = stored::path(store.device());
        let listed = store.exists(&path);
        let (mut from_store, mut rebuilt) = (None, None);
        if self.index.is_none() && listed {
            store.require([&path])?;
            match stored::read(store.text(&path).unwrap_or_default(), model) {
                Ok(s) => from_store = Some(s),
                Err(why) => rebuilt = Some(why),
            }
        }
        let schema = &notes.schema;
        let in_scope =
            |p: &str| tables.is_none_or(|ts| schema.table_of_path(p).is_some_and(|t| ts.iter().any(|x| x == t)));
        let notes = notes.vault.notes.iter().filter(|(p, _)| in_scope(p));
        let notes = notes.map(|(p, n)| (&**p, n.hash, n.text()));
        let (mut index, counts, changed) = Index::sync(self.index.take(), from_store.as_mut(), model, notes, in_scope);
        if let Some(s) = &from_store {
            index.stored_lines = s.lines;
        }
        let lines = index.stored_lines + changed.len();
        let write = if whole || !listed || rebuilt.is_some() || lines > 2 * counts.notes + 64 {
            index.stored_lines = 1 + index.corpus.docs.len();
            Some(StoreWrite::put(&path, stored::whole(&index, model)))
        } else if changed.is_empty() {
            None
        } else {
            index.stored_lines = lines;
            let text = changed.iter().map(|p| stored_line(&index, p, model)).collect::<String>();
            Some(StoreWrite::append(&path, text))
        };
        // Its text was read once: the index holds what it said.
        store.listed(&path);
        self.index = Some(index);
        Ok(Brought { counts, write, rebuilt })
    }

    /// Brings the stored index up to date with the notes the vault touched
    /// since, when the `semanticIndex` setting says so: after a write, and after
    /// a round of hand edits. Without the index in memory, the touched notes are
    /// embedded and appended all the same (a later line counts over an earlier).
    pub fn keep_up(&mut self, notes: &mut Notes, store: &mut Store, on: bool) -> Vec<StoreWrite> {
        let touched = notes.vault.take_touched();
        if !on || touched.is_empty() {
            return vec![];
        }
        let Some(model) = self.model() else { return vec![] };
        let mut text = String::new();
        let mut paths: Vec<String> = touched.into_iter().collect();
        paths.sort();
        for p in &paths {
            let note = notes.vault.notes.get(p.as_str()).map(|n| (n.hash, n.text()));
            match self.index.as_mut() {
                Some(index) => text.extend(index.update(&model, p, note)),
                None => text.push_str(&match note {
                    Some((hash, t)) => stored::line(&search::Doc::new(&model, p, t), &hash.hex(), &model),
                    None => stored::gone(p),
                }),
            }
        }
        if text.is_empty() {
            return vec![];
        }
        if let Some(index) = self.index.as_mut() {
            index.stored_lines += text.lines().count();
        }
        let path = stored::path(store.device());
        let write = if store.exists(&path) {
            StoreWrite::append(&path, text)
        } else {
            StoreWrite::put(&path, stored::header(&model) + &text)
        };
        store.listed(&path);
        vec![write]
    }
}

/// A note's line in the stored index: as indexed, or gone.
fn stored_line(index: &Index, path: &str, model: &Model) -> String {
    match (index.corpus.get(path), index.hash(path)) {
        (Some(d), Some(h)) => stored::line(d, &h.hex(), model),
        _ => stored::gone(path),
    }
}
