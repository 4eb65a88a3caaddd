//! A write whose edits the host is applying: planned by an operation, finished
//! when the host reports its edits, or rolled back when one of them failed.

use crate::edits::{hash, Edit, EditError, StoreWrite};
use crate::error::Failure;
use crate::feed::Feed;
use crate::handedit::known::Known;
use crate::index::Index;
use crate::journal::Journal;
use crate::journal::{Entry, EntryStatus};
use crate::log::commit::Commits;
use crate::schema::{Schema, METASTORE};
use crate::semantic::meaning::Meaning;
use crate::settings::Settings;
use crate::step::{Apply, Outcome, Status, Step};
use crate::store::Store;
use crate::texthash::TextHash;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// A write whose edits the host is applying.
pub(crate) struct Pending {
    pub(crate) op: String,
    answer: Value,
    /// The journal entry, written pending; completed when the edits are done.
    entry: Option<Entry>,
    pub(crate) edits: Vec<Edit>,
    /// The texts before the write, by path (None: the file did not exist).
    originals: BTreeMap<String, Option<String>>,
    schema_before: Option<(Schema, String)>,
    /// Set once the write failed and the host is applying the rollback.
    failed: Option<Vec<Value>>,
    /// During a rollback: the edit of the write each rollback edit takes back.
    forward: Vec<Edit>,
    /// The log's commits, written once the edits are done.
    commits: Commits,
    /// The operation rewrites plain notes (a link repair): the feed reports them.
    plain_repair: bool,
}

/// What a write in flight changes as it starts and ends: the index (put back
/// when it fails), the store's records of it (the journal, the logs, the
/// feed, the meaning index) and what this device last knew of the notes.
pub(crate) struct Writing<'a> {
    pub index: &'a mut Index,
    pub store: &'a mut Store,
    pub journal: &'a mut Journal,
    pub feed: &'a mut Feed,
    pub known: &'a mut Option<Known>,
    pub meaning: &'a mut Meaning,
    pub settings: &'a Settings,
    pub pending: &'a mut Option<Pending>,
}

impl Writing<'_> {
    /// Takes a planned write: the engine's index already holds its result; the
    /// host now applies the edits.
    pub(crate) fn plan(
        &mut self,
        answer: Value,
        tx: crate::tx::Tx,
        mut entry: Option<Entry>,
        mut commits: Commits,
        plain_repair: bool,
    ) -> Step {
        let edits = tx.edits.clone();
        let mut store = std::mem::take(&mut commits.blobs);
        if let Some(e) = &mut entry {
            store.extend(e.blob_writes(self.store));
            store.push(e.store_write(&self.journal.key));
        }
        if edits.is_empty() {
            let mut out = Outcome { store, ..Outcome::done(answer) };
            out.store.extend(crate::log::commit::committed(self.store, commits));
            if let Some(mut e) = entry {
                e.status = EntryStatus::Done;
                out.store.extend(self.complete(e, plain_repair));
            }
            return Step::Done(out);
        }
        *self.pending = Some(Pending {
            op: tx.op.clone(),
            plain_repair,
            commits,
            forward: vec![],
            entry,
            answer: answer.clone(),
            edits: edits.clone(),
            originals: tx.originals,
            schema_before: tx.schema_before,
            failed: None,
        });
        Step::Apply(Apply { answer, edits, store, log: vec![] })
    }

    /// The results of a write's edits (see `Engine::finish`).
    pub(crate) fn finish_write(&mut self, results: &[Result<(), EditError>]) -> Step {
        let Some(mut p) = self.pending.take() else {
            return Step::Done(Outcome::failed(&Failure::internal(
                "finish",
                "finish was called with no write under way",
            )));
        };
        let not_tried = Err(EditError::NotTried);
        let mid = p.entry.as_ref().map(|e| e.migration_id.clone());
        if let Some(mut failed) = p.failed.take() {
            // These are the results of the rollback. A file it could not put back
            // stays as the write left it: the index says so, for undo_migration.
            let mut all_back = true;
            for (i, (e, r)) in p.edits.iter().zip(results.iter().chain(std::iter::repeat(&not_tried))).enumerate() {
                if let Err(msg) = r {
                    all_back = false;
                    failed.push(json!({"path": e.path(), "error": format!("not rolled back: {}", msg.reason())}));
                    if let Some(fwd) = p.forward.get(i) {
                        self.redo_in_index(fwd);
                    }
                }
            }
            let n = failed.len();
            return Step::Done(self.rolled_back_outcome(&p.op, p.entry.take(), mid, failed, n, all_back));
        }
        let first_bad = p.edits.iter().enumerate().find_map(|(i, _)| match results.get(i) {
            Some(Ok(())) => None,
            Some(Err(m)) => Some((i, m.reason())),
            None => Some((i, "not reported".to_string())),
        });
        let Some((bad, msg)) = first_bad else {
            // The journal entry marked done comes last: a store that fails on the
            // way leaves it pending, and the next open reports the write.
            let mut out = Outcome::done(p.answer);
            out.store.extend(self.know_edits(&p.edits));
            out.store.extend(crate::log::commit::committed(self.store, p.commits));
            if let Some(mut e) = p.entry {
                e.status = EntryStatus::Done;
                out.store.extend(self.complete(e, p.plain_repair));
            }
            // Derived, so after the journal: a disk that fails here fails no write.
            out.store.extend(self.meaning.keep_up(self.index, self.store, self.settings.semantic_index));
            return Step::Done(out);
        };
        // Put the index back as it was, then undo the edits that were made, last first.
        self.index.restore(&p.originals, p.schema_before.take());
        let mut state = p.originals.clone();
        let mut pairs: Vec<(Edit, Edit)> = vec![];
        for e in &p.edits[..bad] {
            if let Some(inv) = inverse(e, &state) {
                pairs.push((inv, e.clone()));
            }
            forward(e, &mut state);
        }
        pairs.reverse();
        let (rollback, fwd): (Vec<Edit>, Vec<Edit>) = pairs.into_iter().unzip();
        let failed = vec![json!({"path": p.edits[bad].path(), "error": msg})];
        if rollback.is_empty() {
            return Step::Done(self.rolled_back_outcome(&p.op, p.entry.take(), mid, failed, 1, true));
        }
        let op = p.op.clone();
        *self.pending = Some(Pending {
            op: op.clone(),
            plain_repair: p.plain_repair,
            entry: p.entry,
            answer: Value::Null,
            edits: rollback.clone(),
            forward: fwd,
            originals: BTreeMap::new(),
            schema_before: None,
            failed: Some(failed),
            commits: Commits::default(),
        });
        Step::Apply(Apply {
            answer: json!({"ok": false, "op": op, "rolling_back": true}),
            edits: rollback,
            store: vec![],
            log: vec![],
        })
    }

    /// Records in `known` the notes a finished write changed.
    fn know_edits(&mut self, edits: &[Edit]) -> Option<StoreWrite> {
        let vault = &self.index.vault;
        let hash_of = |p: &str| vault.get(p).map(|n| n.hash);
        let mut changes: Vec<(String, Option<TextHash>)> = vec![];
        for e in edits {
            match e {
                Edit::Write { path, .. } if path.ends_with(".md") => changes.push((path.clone(), hash_of(path))),
                Edit::Move { from, to, .. } => {
                    changes.push((from.clone(), None));
                    changes.push((to.clone(), hash_of(to)));
                }
                Edit::Trash { path, .. } | Edit::Delete { path, .. } => changes.push((path.clone(), None)),
                _ => {}
            }
        }
        self.known.as_mut()?.record(changes.iter().map(|(p, h)| (p.as_str(), *h)))
    }

    /// The answer of a write that failed, and the journal's record of it.
    fn rolled_back_outcome(
        &mut self,
        op: &str,
        entry: Option<Entry>,
        migration_id: Option<String>,
        failed: Vec<Value>,
        files_failed: usize,
        all_back: bool,
    ) -> Outcome {
        let store = match entry {
            Some(entry) => self.rolled_back(entry, files_failed, all_back),
            None => vec![],
        };
        let answer = rolled_back_answer(op, migration_id, failed, all_back);
        Outcome { status: Status::RolledBack, store, ..Outcome::done(answer) }
    }

    /// The index after an edit the host made and could not take back.
    fn redo_in_index(&mut self, e: &Edit) {
        match e {
            Edit::Write { path, text, .. } if path != METASTORE => {
                self.index.vault.insert(&self.index.schema, path.clone(), text.clone(), 0)
            }
            Edit::Move { from, to, .. } => {
                if let Some(n) = self.index.vault.remove(from) {
                    let (text, mtime) = n.into_text();
                    self.index.vault.insert(&self.index.schema, to.clone(), text, mtime);
                }
            }
            Edit::Trash { path, .. } => {
                self.index.vault.remove(path);
            }
            _ => {}
        }
    }

    /// Records a finished write; an undo marks what it undid.
    fn complete(&mut self, mut e: Entry, plain_repair: bool) -> Vec<StoreWrite> {
        let mut store = self.feed.engine_write(&self.index.schema, &e, plain_repair);
        if let Some(p) = &e.proposal {
            store.extend(self.feed.push(crate::proposals::accepted_event(&e, p)));
        }
        // The feed had the texts; the entry is written and kept without the long
        // ones (hashed once here, not by each of store_write and put).
        e.shed_texts();
        if let Some(target) = e.undoes.clone() {
            let key = self.journal.key.clone();
            if let Some(t) = self.journal.get_mut(&target) {
                t.undone = true;
                t.undone_by = Some(e.migration_id.clone());
                // A write cut short, or whose rollback stopped, is settled once undone.
                if t.status != EntryStatus::Done {
                    t.status = EntryStatus::Done;
                }
                let again = t.undoes.clone();
                store.push(t.store_write(&key));
                // Undoing an undo is a redo: the operation it undid stands again.
                if let Some(first) = again.and_then(|a| self.journal.get_mut(&a)) {
                    first.undone = false;
                    first.undone_by = None;
                    store.push(first.store_write(&key));
                }
            }
        }
        store.push(e.store_write(&self.journal.key));
        self.journal.put(e);
        store
    }

    /// Records a write that failed: undone by a rollback entry that cannot itself
    /// be undone; when the rollback did not finish, the write stays open to undo.
    fn rolled_back(&mut self, mut e: Entry, failed: usize, all_back: bool) -> Vec<StoreWrite> {
        e.shed_texts();
        e.files_failed = failed;
        e.status = if all_back { EntryStatus::RolledBack } else { EntryStatus::RollbackIncomplete };
        let mut store = vec![];
        if all_back {
            let id = format!("{}-rollback", e.migration_id);
            e.undone = true;
            e.undone_by = Some(id.clone());
            let mut rb = Entry {
                migration_id: id,
                op: "rollback".into(),
                summary: format!("roll back {}", e.migration_id),
                undoes: Some(e.migration_id.clone()),
                rollback: true,
                status: EntryStatus::Done,
                notes_changed: 0,
                files_changed: 0,
                files_failed: 0,
                undone: false,
                undone_by: None,
                members: None,
                changes: vec![],
                schema_before: None,
                schema_after: None,
                cause: None,
                renamed: None,
                proposal: None,
                ..e.clone()
            };
            store.push(e.store_write(&self.journal.key));
            self.journal.put(e);
            store.push(rb.store_write(&self.journal.key));
            self.journal.put(rb);
            return store;
        }
        store.push(e.store_write(&self.journal.key));
        self.journal.put(e);
        store
    }
}

/// The edit that takes `e` back, given the files' texts just before it.
fn inverse(e: &Edit, before: &BTreeMap<String, Option<String>>) -> Option<Edit> {
    let was = |p: &str| before.get(p).cloned().flatten();
    Some(match e {
        Edit::Write { path, text, expect: None } => Edit::Delete { path: path.clone(), expect: hash(text) },
        Edit::Write { path, text, expect: Some(_) } => {
            Edit::Write { path: path.clone(), text: was(path)?, expect: Some(hash(text)) }
        }
        Edit::Move { from, to, expect } => Edit::Move { from: to.clone(), to: from.clone(), expect: expect.clone() },
        Edit::Trash { path, .. } => Edit::Write { path: path.clone(), text: was(path)?, expect: None },
        Edit::Delete { .. } => return None,
    })
}

/// The files' texts after an edit.
fn forward(e: &Edit, state: &mut BTreeMap<String, Option<String>>) {
    match e {
        Edit::Write { path, text, .. } => {
            state.insert(path.clone(), Some(text.clone()));
        }
        Edit::Move { from, to, .. } => {
            let t = state.insert(from.clone(), None).flatten();
            state.insert(to.clone(), t);
        }
        Edit::Trash { path, .. } | Edit::Delete { path, .. } => {
            state.insert(path.clone(), None);
        }
    }
}

fn rolled_back_answer(op: &str, migration_id: Option<String>, failed: Vec<Value>, all_back: bool) -> Value {
    let error = if all_back {
        format!("{op} could not finish and was rolled back: nothing is left changed.\nHint: Free the file (failed says what stopped it: a program holding it, a full disk, a symbolic link) and send the operation again.")
    } else {
        let id = migration_id.clone().unwrap_or_default();
        format!("{op} could not finish and its rollback could not finish either: the files in failed are left as the write made them.\nHint: Close the program that holds the files, call undo_migration {{\"migration_id\": \"{id}\"}}, then send the operation again.")
    };
    let mut v = json!({"ok": false, "op": op, "migration_id": migration_id, "failed": failed, "rolled_back": all_back, "notes_changed": 0, "error": error});
    if v["migration_id"].is_null() {
        v.as_object_mut().map(|m| m.remove("migration_id"));
    }
    v
}
