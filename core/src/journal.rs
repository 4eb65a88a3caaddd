//! The journal: one entry per write to rows or to the schema, with the texts it
//! replaced, so that it can be listed and undone. Kept in the store as
//! `journal/<migration_id>.json`, written `pending` before the first note is
//! touched and completed after the last.

use crate::edits::StoreWrite;
use crate::names;
use crate::time;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

pub const DIR: &str = "journal/";

/// Texts longer than this are kept in the blobs (by SHA-256, shared with the
/// log's) and named by their hash in the journal, so that a version of a big
/// note is stored once, not again in each entry that touched it.
pub const INLINE_MAX: usize = 16 * 1024;

/// One note the operation changed: where it was, where it is, its text before and
/// after (None: absent, unless `before_blob`/`after_blob` names it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    pub before: Option<String>,
    pub after: Option<String>,
    /// The hash of a long `before` kept in the blobs (`before` is then None
    /// until read back for an undo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_blob: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_blob: Option<String>,
    /// The note went to the trash (rather than being archived by a move).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trashed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryStatus {
    /// Written before the first note was touched; the write has not finished.
    Pending,
    Done,
    /// The write failed and the engine rolled it back.
    RolledBack,
    /// The write failed and its rollback could not finish.
    RollbackIncomplete,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub format: u32,
    pub migration_id: String,
    pub op: String,
    pub summary: String,
    #[serde(default)]
    pub table: Option<String>,
    pub executed_at: String,
    pub executed_ms: i64,
    pub by: String,
    pub status: EntryStatus,
    pub notes_changed: usize,
    pub files_changed: usize,
    #[serde(default)]
    pub files_failed: usize,
    #[serde(default)]
    pub undone: bool,
    #[serde(default)]
    pub undone_by: Option<String>,
    #[serde(default)]
    pub undoes: Option<String>,
    /// A rollback of a write that failed: it cannot be undone.
    #[serde(default)]
    pub rollback: bool,
    /// The operations of a batch: {op, summary}.
    #[serde(default)]
    pub members: Option<Vec<serde_json::Value>>,
    pub changes: Vec<Change>,
    #[serde(default)]
    pub schema_before: Option<String>,
    #[serde(default)]
    pub schema_after: Option<String>,
    /// For an engine write that follows hand edits (repair_links): the moves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<Vec<serde_json::Value>>,
    /// A table the write renamed (old, new): its log moved with it, and moves back
    /// on undo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub renamed: Option<(String, String)>,
    /// An accept_proposal: the proposal and the (write, path) pairs it took
    /// (`{"name", "picked": [[n, path]]}`), which stand as accepted while the
    /// entry stands (proposals.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<serde_json::Value>,
    /// The writing device's seal (seal.rs): an entry without a valid one is
    /// another device's claim, undone only as the tables' logs bear it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<String>,
}

/// A long text out of its place into the blobs: its hash named instead.
fn shed(text: &mut Option<String>, blob: &mut Option<String>) {
    if text.as_ref().is_some_and(|t| t.len() > INLINE_MAX) {
        *blob = text.take().map(|t| crate::edits::hash(&t));
    }
}

impl Change {
    /// The blobs its long texts go to: (hash, text).
    pub fn long_texts(&self) -> impl Iterator<Item = (String, &str)> {
        [&self.before, &self.after]
            .into_iter()
            .filter_map(|t| t.as_deref().filter(|t| t.len() > INLINE_MAX).map(|t| (crate::edits::hash(t), t)))
    }

    /// Its texts in the blobs, not yet read back: their hashes.
    pub fn unread_blobs(&self) -> impl Iterator<Item = &String> {
        [(&self.before, &self.before_blob), (&self.after, &self.after_blob)]
            .into_iter()
            .filter_map(|(t, b)| b.as_ref().filter(|_| t.is_none()))
    }
}

impl Entry {
    /// The entry's file. Long texts are named by their hash: `blob_writes` gives
    /// them to the store first.
    pub fn store_write(&mut self, key: &crate::seal::Key) -> StoreWrite {
        self.seal = key.seal(&self.sealed_form());
        let mut text = serde_json::to_string(&self.shed()).unwrap_or_default();
        text.push('\n');
        StoreWrite::put(format!("{DIR}{}.json", self.migration_id), text)
    }

    /// What its seal covers: the entry as kept, less the seal, with the status
    /// it was first written with (a host completes an entry in place).
    fn sealed_form(&self) -> Entry {
        let mut e = self.shed();
        e.seal = None;
        e.status = EntryStatus::Pending;
        e
    }

    /// Whether this device's key sealed it (as kept: long texts in the blobs).
    pub fn sealed_by(&self, key: &crate::seal::Key) -> bool {
        key.verifies(&self.sealed_form(), self.seal.as_deref())
    }

    /// The entry with its long texts named by hash, as it is kept (on disk, and
    /// in memory once written, so that a big note's versions do not stay in it).
    pub fn shed(&self) -> Entry {
        let mut e = self.clone();
        e.shed_texts();
        e
    }

    /// Leaves its long texts to the blobs, in place.
    pub fn shed_texts(&mut self) {
        for c in &mut self.changes {
            shed(&mut c.before, &mut c.before_blob);
            shed(&mut c.after, &mut c.after_blob);
        }
    }

    /// The hashes of the texts it keeps in the blobs.
    pub fn blobs(&self) -> impl Iterator<Item = &String> {
        self.changes.iter().flat_map(|c| c.before_blob.iter().chain(c.after_blob.iter()))
    }

    /// The blobs of its long texts that the store lacks: written before the entry.
    pub fn blob_writes(&self, store: &mut crate::store::Store) -> Vec<StoreWrite> {
        let mut out = vec![];
        for c in &self.changes {
            for (h, text) in c.long_texts() {
                let p = crate::log::blob_path(&h);
                if !store.exists(&p) {
                    let w = StoreWrite::put(p, text.to_string());
                    store.wrote(&w);
                    out.push(w);
                }
            }
        }
        out
    }

    /// The fields list_migrations shows.
    pub fn listing(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "migration_id": self.migration_id, "op": self.op, "summary": self.summary,
            "table": self.table, "executed_at": self.executed_at,
            "notes_changed": self.notes_changed, "files_changed": self.files_changed,
            "undone": self.undone, "files_failed": self.files_failed, "by": self.by,
        });
        if let Some(u) = &self.undoes {
            v["undoes"] = u.clone().into();
        }
        // The device whose engine wrote it (its id names it), once devices sync one vault.
        if let Some(d) = crate::trust::entry_device(&self.migration_id) {
            v["device"] = d.into();
        }
        if let Some(m) = &self.members {
            v["members"] = m.clone().into();
        }
        if self.status != EntryStatus::Done {
            v["status"] = serde_json::to_value(&self.status).unwrap_or_default();
        }
        if self.rollback {
            v["rollback"] = true.into();
        }
        v
    }
}

/// An entry read from the store, as far as it can be believed: refused (why,
/// for the log and check_table) when it names what no engine writes; its
/// time brought back to now when it claims the future, so that a forged entry
/// cannot sort first and be what "undo the last write" takes.
fn believed(mut e: Entry, path: &str, now_ms: i64) -> Result<(Entry, Option<String>), String> {
    if let Some(why) = entry_problem(&e) {
        return Err(format!("{path} is left out of the journal: {why}, which no engine writes"));
    }
    let mut clamped = None;
    if crate::trust::ahead_of(e.executed_ms, now_ms) {
        clamped = Some(format!(
            "{path} claims a time ahead of this device's clock ({}): it is listed as made now",
            e.executed_at
        ));
        e.executed_ms = now_ms;
        e.executed_at = time::iso(now_ms);
    }
    Ok((e, clamped))
}

#[derive(Debug, Default, Clone)]
pub struct Journal {
    /// Oldest first.
    pub entries: Vec<Entry>,
    /// This device's key, which seals the entries it writes.
    pub key: crate::seal::Key,
    index: HashMap<String, usize>,
    /// The last id made with a counter, and the counter: writes within one
    /// second (hundreds under load) count on from it instead of from 2.
    last_counted: Option<(String, u32)>,
}

impl Journal {
    /// Reads the journal's files; entries older than `retention_days` before `now`
    /// are dropped (their files are returned to delete), damaged files reported.
    pub fn load(
        files: &[(String, String)],
        now_ms: i64,
        retention_days: u32,
    ) -> (Journal, Vec<StoreWrite>, Vec<String>, Vec<String>) {
        let mut entries = vec![];
        let mut drop = vec![];
        let mut warnings = vec![];
        // Entries not believed as they are (trust.rs): for check_table too.
        let mut distrusted = vec![];
        let horizon = now_ms - retention_days as i64 * 86_400_000;
        for (path, text) in files.iter().filter(|(p, _)| p.starts_with(DIR)) {
            match serde_json::from_str::<Entry>(text) {
                // A sync tool's copy of an entry (`<id>.sync-conflict-….json`): the entry is its own file.
                Ok(e) if *path != format!("{DIR}{}.json", e.migration_id) => warnings.push(format!(
                    "{path} is a copy of the journal entry {} (a sync tool made it): left out; delete it",
                    e.migration_id
                )),
                Ok(e) => match believed(e, path, now_ms) {
                    Err(why) => distrusted.push(why),
                    Ok((e, clamped)) => {
                        distrusted.extend(clamped);
                        if now_ms > 0 && e.executed_ms < horizon && e.status != EntryStatus::Pending {
                            drop.push(StoreWrite::delete(path.clone()))
                        } else {
                            entries.push(e)
                        }
                    }
                },
                Err(err) => warnings.push(format!("{path} cannot be read ({err}): left out of the journal")),
            }
        }
        let mut j = Journal { entries, index: HashMap::new(), last_counted: None, key: Default::default() };
        j.sort();
        for e in j.entries.iter().filter(|e| e.status == EntryStatus::Pending) {
            warnings.push(format!(
                "{} ({}) was cut short before it finished: some notes may be written, others not. undo_migration {{\"migration_id\": \"{}\"}} puts them back.",
                e.migration_id, e.summary, e.migration_id
            ));
        }
        warnings.extend(distrusted.iter().cloned());
        (j, drop, warnings, distrusted)
    }

    /// An entry file another device's engine wrote, brought by a sync while the
    /// engine runs. Taken when it is new, or when it moved on from what is held
    /// (finished, or undone there); never when it is behind, as the engine's own
    /// file seen again would be. A warning when it cannot be read.
    pub fn arrived(&mut self, path: &str, text: &str, now_ms: i64) -> Option<String> {
        let (e, clamped) = match serde_json::from_str::<Entry>(text) {
            Ok(e) if path == format!("{DIR}{}.json", e.migration_id) => match believed(e, path, now_ms) {
                Ok(taken) => taken,
                Err(why) => return Some(why),
            },
            Ok(_) => return None,
            Err(err) => return Some(format!("{path} cannot be read ({err}): left out of the journal")),
        };
        match self.get(&e.migration_id) {
            None => {
                self.put(e);
                self.sort();
            }
            Some(held) if held.status == EntryStatus::Pending && e.status != EntryStatus::Pending => self.put(e),
            Some(held) if !held.undone && e.undone => self.put(e),
            Some(_) => {}
        }
        clamped
    }

    /// Oldest first (ties by id), and indexed.
    fn sort(&mut self) {
        self.entries.sort_by(|a, b| (a.executed_ms, &a.migration_id).cmp(&(b.executed_ms, &b.migration_id)));
        self.reindex();
    }

    fn reindex(&mut self) {
        self.index = self.entries.iter().enumerate().map(|(i, e)| (e.migration_id.clone(), i)).collect();
    }

    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.index.get(id).map(|i| &self.entries[*i])
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Entry> {
        self.index.get(id).copied().map(move |i| &mut self.entries[i])
    }

    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.migration_id.as_str())
    }

    /// A new id: UTC time, operation, a slug of the summary, the device (two
    /// devices writing in one second name their entries apart), and a counter
    /// when the id is taken.
    pub fn new_id(&mut self, now_ms: i64, op: &str, summary: &str, device: Option<&str>) -> String {
        let mut base = format!("{}-{op}-{}", time::compact(now_ms), names::slug(summary, 30));
        if let Some(d) = device {
            base = format!("{base}.{d}");
        }
        if !self.index.contains_key(&base) {
            return base;
        }
        let from = match &self.last_counted {
            Some((b, n)) if *b == base => n + 1,
            _ => 2,
        };
        let n = (from..).find(|n| !self.index.contains_key(&format!("{base}-{n}"))).unwrap_or(from);
        let id = format!("{base}-{n}");
        self.last_counted = Some((base, n));
        id
    }

    /// Adds or replaces an entry, its long texts left to the blobs (see
    /// `INLINE_MAX`).
    pub fn put(&mut self, mut e: Entry) {
        e.shed_texts();
        match self.index.get(&e.migration_id) {
            Some(i) => self.entries[*i] = e,
            None => {
                self.index.insert(e.migration_id.clone(), self.entries.len());
                self.entries.push(e);
            }
        }
    }
}

/// Why a journal entry read from the store cannot be believed, if it cannot:
/// a path it names is not a note the engine could have written, a blob name
/// is not a hash, a table it renamed is not a table's name, or its id would
/// not be its own file's name.
pub fn entry_problem(e: &Entry) -> Option<String> {
    if !crate::trust::is_id(&e.migration_id) {
        return Some(format!("its id {:?} is not an id the engine makes", e.migration_id));
    }
    for c in &e.changes {
        for p in std::iter::once(&c.path).chain(c.from.iter()) {
            if let Some(why) = crate::trust::note_path_problem(p) {
                return Some(format!("it names a change to {why}"));
            }
        }
        if let Some(h) = c.before_blob.iter().chain(c.after_blob.iter()).find(|h| !crate::trust::is_hash(h)) {
            return Some(format!("it names the blob {h:?}, which is not a SHA-256"));
        }
    }
    if let Some((old, new)) = &e.renamed {
        if let Some(t) = [old, new].into_iter().find(|t| !crate::schema::valid_qualified(t)) {
            return Some(format!("it renames {t:?}, which is not a table's name"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn entry(id: &str) -> Entry {
        serde_json::from_value(serde_json::json!({
            "format": 1, "migration_id": id, "op": "update_row", "summary": "update film",
            "executed_at": "", "executed_ms": 0, "by": "t", "status": "done",
            "notes_changed": 0, "files_changed": 0, "changes": [],
        }))
        .unwrap()
    }

    #[test]
    fn ids_made_in_one_second_count_on_and_never_repeat() {
        let mut j = Journal::default();
        let mut made = std::collections::BTreeSet::new();
        for _ in 0..300 {
            let id = j.new_id(1_000, "update_row", "update film", Some("a"));
            assert!(made.insert(id.clone()), "{id} made twice");
            j.put(entry(&id));
        }
        assert!(made.contains("19700101T000001-update_row-update-film.a"), "{made:?}");
        assert!(made.contains("19700101T000001-update_row-update-film.a-300"));
        // An id taken by another way (a synced entry) is stepped over.
        j.put(entry("19700101T000001-update_row-update-film.a-302"));
        assert_eq!(
            j.new_id(1_000, "update_row", "update film", Some("a")),
            "19700101T000001-update_row-update-film.a-301"
        );
        j.put(entry("19700101T000001-update_row-update-film.a-301"));
        assert_eq!(
            j.new_id(1_000, "update_row", "update film", Some("a")),
            "19700101T000001-update_row-update-film.a-303"
        );
    }
}
