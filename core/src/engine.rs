//! The engine: what the host hands it at start, the calls it answers, the edits
//! it plans and the results it is told.

use crate::edits::{hash, Edit, StoreWrite};
use crate::error::{Failure, Kind};
use crate::feed::Feed;
use crate::history::Commits;
use crate::journal::{Entry, EntryStatus, Journal};
use crate::log::TableState;
use crate::ops;
use crate::schema::{Schema, METASTORE};
use crate::settings::{self, Settings};
use crate::store::Store;
use crate::vault::Vault;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};

/// A file of the store as the host lists it at open: its path under `.datanotes/`
/// and its text, or None for a file the host lists without reading (the log's
/// files and the blobs; the engine asks for those it needs).
#[derive(Debug, Clone)]
pub struct StoreFile(pub String, pub Option<String>);

impl From<(String, String)> for StoreFile {
    fn from((p, t): (String, String)) -> Self {
        StoreFile(p, Some(t))
    }
}

impl From<(String, Option<String>)> for StoreFile {
    fn from((p, t): (String, Option<String>)) -> Self {
        StoreFile(p, t)
    }
}

/// A file of the vault as the host reads it.
#[derive(Debug, Clone)]
pub struct NoteFile {
    pub path: String,
    pub text: String,
    pub mtime: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Done (HTTP 200).
    Done,
    /// The host must apply `edits`, then call `finish` with their results.
    Apply,
    BadInput,
    Refused,
    RolledBack,
    Internal,
    /// The host must read the store files in `Outcome::need`, hand them to
    /// `provide`, and make the same call again.
    Need,
}

impl Status {
    pub fn http(self) -> u16 {
        match self {
            Status::Done | Status::Apply => 200,
            Status::BadInput => 400,
            Status::Refused => 409,
            Status::RolledBack => 503,
            Status::Internal | Status::Need => 500,
        }
    }

    pub fn exit_code(self) -> i32 {
        match self {
            Status::Done | Status::Apply => 0,
            Status::BadInput => 2,
            _ => 1,
        }
    }
}

/// What a call gives back: the answer, and for a write the edits to apply and the
/// store files to write.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub status: Status,
    pub answer: Value,
    pub edits: Vec<Edit>,
    pub store: Vec<StoreWrite>,
    /// Store files to read (Status::Need), relative to the store.
    pub need: Vec<String>,
    /// Lines for the host's log (warnings: what hand edits broke).
    pub log: Vec<String>,
    /// Webhook deliveries to make (from `tick`); report each with `delivered`.
    pub deliveries: Vec<crate::webhook::Delivery>,
}

impl Outcome {
    pub fn done(answer: Value) -> Outcome {
        Outcome {
            status: Status::Done,
            answer,
            edits: vec![],
            store: vec![],
            need: vec![],
            log: vec![],
            deliveries: vec![],
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "status": format!("{:?}", self.status).to_lowercase(),
            "http": self.status.http(),
            "answer": self.answer,
            "edits": self.edits,
            "store": self.store,
            "need": self.need,
            "log": self.log,
            "deliveries": self.deliveries,
        })
    }

    pub fn failed(f: &Failure) -> Outcome {
        let status = match f.kind {
            Kind::BadInput => Status::BadInput,
            Kind::Refused => Status::Refused,
            Kind::RolledBack => Status::RolledBack,
            Kind::Internal => Status::Internal,
            Kind::Need => {
                return Outcome { status: Status::Need, need: f.reasons.clone(), ..Outcome::done(Value::Null) }
            }
        };
        Outcome {
            status,
            answer: f.to_json(),
            edits: vec![],
            store: vec![],
            need: vec![],
            log: vec![],
            deliveries: vec![],
        }
    }
}

/// A write whose edits the host is applying.
struct Pending {
    op: String,
    answer: Value,
    /// The journal entry, written pending; completed when the edits are done.
    entry: Option<Entry>,
    edits: Vec<Edit>,
    /// The texts before the write, by path (None: the file did not exist).
    originals: BTreeMap<String, Option<String>>,
    schema_before: Option<(Schema, String)>,
    /// Set once the write failed and the host is applying the rollback.
    failed: Option<Vec<Value>>,
    /// During a rollback: the edit of the write each rollback edit takes back.
    forward: Vec<Edit>,
    /// The log's commits, written once the edits are done.
    commits: Commits,
}

pub struct Engine {
    pub(crate) schema: Schema,
    /// The text of metastore.yaml as the vault holds it.
    pub(crate) metastore: Option<String>,
    pub(crate) vault: Vault,
    pub(crate) settings: Settings,
    /// Why metastore.yaml cannot be read, when it cannot.
    pub(crate) schema_error: Option<String>,
    pub(crate) warnings: Vec<String>,
    pub(crate) journal: Journal,
    pub(crate) store: Store,
    pub(crate) feed: Feed,
    pub(crate) hand: crate::handedit::HandState,
    pub(crate) hooks: crate::webhook::Hooks,
    /// What the engine last knew of each note (None until `reconcile` ran once).
    pub(crate) known: Option<crate::known::Known>,
    /// Bytes from the host to make secrets with.
    pub(crate) entropy: Vec<u8>,
    /// Ids made so far (row ids stay unique even within one millisecond).
    pub(crate) ids: u64,
    /// Each table's last whole checkpoint, once read or written.
    pub(crate) full_cache: HashMap<String, (u64, TableState)>,
    /// Store files the host must write after open (journal entries past retention).
    upkeep: Vec<StoreWrite>,
    pending: Option<Pending>,
}

impl Engine {
    /// Indexes the vault. `store` holds the store's files (path relative to
    /// `.datanotes/`, text). Nothing in the notes can stop the engine from opening:
    /// what it cannot read is reported.
    pub fn open(files: Vec<NoteFile>, store: Vec<(String, String)>) -> Engine {
        Engine::open_at(files, store, 0)
    }

    /// As `open`, at the host's time `now_ms`: journal entries older than the
    /// retention are dropped (`upkeep` lists their files to delete).
    pub fn open_at(files: Vec<NoteFile>, store: Vec<(String, String)>, now_ms: i64) -> Engine {
        Engine::open_listed(files, store.into_iter().map(StoreFile::from).collect(), now_ms)
    }

    /// As `open_at`, with the store's files listed: the host may leave the log's
    /// files and the blobs unread (text None); the engine asks for those it needs.
    pub fn open_listed(files: Vec<NoteFile>, store: Vec<StoreFile>, now_ms: i64) -> Engine {
        let mut warnings = vec![];
        let mut settings = Settings::default();
        for StoreFile(path, text) in &store {
            let Some(text) = text else { continue };
            if path == settings::FILE {
                let (s, w) = Settings::parse(text);
                settings = s;
                warnings.extend(w);
            }
        }
        let mut metastore = None;
        let mut notes = Vec::with_capacity(files.len());
        for f in files {
            if f.path == METASTORE {
                metastore = Some(f.text);
            } else if f.path.ends_with(".md") {
                notes.push((f.path, f.text, f.mtime));
            }
        }
        let (schema, schema_error) = match Schema::parse(metastore.as_deref().unwrap_or("")) {
            Ok(s) => (s, None),
            Err(e) => (Schema::default(), Some(e)),
        };
        if let Some(e) = &schema_error {
            warnings.push(e.clone());
        }
        let vault = Vault::build(&schema, notes);
        let journal_files: Vec<(String, String)> =
            store.iter().filter_map(|StoreFile(p, t)| t.clone().map(|t| (p.clone(), t))).collect();
        let (journal, upkeep, w) = Journal::load(&journal_files, now_ms, settings.journal_retention_days);
        warnings.extend(w);
        let (feed, w) = Feed::load(&journal_files);
        warnings.extend(w);
        let known = crate::known::Known::load(&journal_files);
        let (hooks, w) = crate::webhook::Hooks::load(&journal_files);
        warnings.extend(w);
        let store = Store::new(store.into_iter().map(|StoreFile(p, t)| (p, t)).collect());
        Engine {
            feed,
            hand: Default::default(),
            hooks,
            known,
            entropy: vec![],
            ids: 0,
            schema,
            metastore,
            vault,
            settings,
            schema_error,
            warnings,
            journal,
            store,
            full_cache: HashMap::new(),
            upkeep,
            pending: None,
        }
    }

    /// Store files the host read because an answer asked for them (Status::Need):
    /// None for a file that is absent.
    pub fn provide(&mut self, files: Vec<(String, Option<String>)>) {
        self.store.provide(files);
    }

    /// Whether the host is applying a write's edits now.
    pub fn pending_write(&self) -> bool {
        self.pending.is_some()
    }

    /// Bytes from a good random source (the host's), for webhook secrets.
    pub fn seed(&mut self, entropy: &[u8]) {
        self.entropy = entropy.to_vec();
    }

    /// Store files the host must write or delete after open.
    pub fn take_upkeep(&mut self) -> Vec<StoreWrite> {
        std::mem::take(&mut self.upkeep)
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    pub fn vault(&self) -> &Vault {
        &self.vault
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// What went wrong while opening (a damaged schema or settings file).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Runs one operation. A read answers at once; a write answers `Apply` with the
    /// edits the host must make, then `finish`.
    pub fn call(&mut self, name: &str, args: Value, actor: &str, now_ms: i64) -> Outcome {
        if let Some(p) = &self.pending {
            let f = Failure::refused(
                name,
                vec![format!("the engine is still applying {}", p.op)],
                "Finish the previous write (the host calls finish) before the next.",
            );
            return Outcome::failed(&f);
        }
        match ops::run(self, name, args, actor, now_ms) {
            Ok(o) => o,
            Err(f) => Outcome::failed(&f),
        }
    }

    /// Takes a planned write: the engine's index already holds its result; the
    /// host now applies the edits.
    pub(crate) fn plan(
        &mut self,
        op: &str,
        answer: Value,
        tx: crate::tx::Tx,
        entry: Option<Entry>,
        mut commits: Commits,
    ) -> Outcome {
        let edits = tx.edits.clone();
        let mut store = std::mem::take(&mut commits.blobs);
        if let Some(e) = &entry {
            store.push(e.store_write());
        }
        if edits.is_empty() {
            let mut out =
                Outcome { status: Status::Done, answer, edits, store, need: vec![], log: vec![], deliveries: vec![] };
            if let Some(mut e) = entry {
                e.status = EntryStatus::Done;
                out.store.extend(self.complete(e));
            }
            out.store.extend(self.committed(commits));
            return out;
        }
        self.pending = Some(Pending {
            op: op.to_string(),
            commits,
            forward: vec![],
            entry,
            answer: answer.clone(),
            edits: edits.clone(),
            originals: tx.originals,
            schema_before: tx.schema_before,
            failed: None,
        });
        Outcome { status: Status::Apply, answer, edits, store, need: vec![], log: vec![], deliveries: vec![] }
    }

    /// The host reports what became of each edit it was given, in order (an edit it
    /// did not try, after one failed, is reported as an error too). When one failed,
    /// the engine puts its index back and plans the rollback of those that were
    /// made: the host applies those edits and calls `finish` once more.
    pub fn finish(&mut self, results: &[Result<(), String>]) -> Outcome {
        let Some(mut p) = self.pending.take() else {
            return Outcome::failed(&Failure::internal("finish", "finish was called with no write under way"));
        };
        let not_tried = Err("not tried: an earlier edit failed".to_string());
        let mid = p.entry.as_ref().map(|e| e.migration_id.clone());
        if let Some(mut failed) = p.failed.take() {
            // These are the results of the rollback. A file it could not put back
            // stays as the write left it: the index says so, for undo_migration.
            let mut all_back = true;
            for (i, (e, r)) in p.edits.iter().zip(results.iter().chain(std::iter::repeat(&not_tried))).enumerate() {
                if let Err(msg) = r {
                    all_back = false;
                    failed.push(json!({"path": e.path(), "error": format!("not rolled back: {msg}")}));
                    if let Some(fwd) = p.forward.get(i) {
                        self.redo_in_index(fwd);
                    }
                }
            }
            let n = failed.len();
            return self.rolled_back_outcome(&p.op, p.entry.take(), mid, failed, n, all_back);
        }
        let first_bad = p.edits.iter().enumerate().find_map(|(i, _)| match results.get(i) {
            Some(Ok(())) => None,
            Some(Err(m)) => Some((i, m.clone())),
            None => Some((i, "not reported".to_string())),
        });
        let Some((bad, msg)) = first_bad else {
            let mut out = Outcome::done(p.answer);
            out.store.extend(self.know_edits(&p.edits));
            if let Some(mut e) = p.entry {
                e.status = EntryStatus::Done;
                out.store.extend(self.complete(e));
            }
            out.store.extend(self.committed(p.commits));
            return out;
        };
        // Put the index back as it was, then undo the edits that were made, last first.
        self.restore(&p.originals, p.schema_before.take());
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
            return self.rolled_back_outcome(&p.op, p.entry.take(), mid, failed, 1, true);
        }
        let op = p.op.clone();
        self.pending = Some(Pending {
            op: op.clone(),
            entry: p.entry,
            answer: Value::Null,
            edits: rollback.clone(),
            forward: fwd,
            originals: BTreeMap::new(),
            schema_before: None,
            failed: Some(failed),
            commits: Commits::default(),
        });
        Outcome {
            status: Status::Apply,
            answer: json!({"ok": false, "op": op, "rolling_back": true}),
            edits: rollback,
            ..Outcome::done(Value::Null)
        }
    }

    /// Records in `known` the notes a finished write changed.
    fn know_edits(&mut self, edits: &[Edit]) -> Option<StoreWrite> {
        let vault = &self.vault;
        let hash_of = |p: &str| vault.get(p).map(|n| n.hash.clone());
        let mut changes: Vec<(String, Option<String>)> = vec![];
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
        self.known.as_mut()?.record(changes.iter().map(|(p, h)| (p.as_str(), h.as_deref())))
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
                self.vault.insert(&self.schema, path.clone(), text.clone(), 0)
            }
            Edit::Move { from, to, .. } => {
                if let Some(n) = self.vault.remove(from) {
                    self.vault.insert(&self.schema, to.clone(), n.text, n.mtime);
                }
            }
            Edit::Trash { path, .. } => {
                self.vault.remove(path);
            }
            _ => {}
        }
    }

    /// The log's commits of a finished write: its files, and the whole
    /// checkpoints kept in memory.
    pub(crate) fn committed(&mut self, c: Commits) -> Vec<StoreWrite> {
        for f in &c.files {
            self.store.wrote(f);
        }
        for (t, v, s) in c.full {
            self.full_cache.insert(t, (v, s));
        }
        c.files
    }

    /// Records a finished write; an undo marks what it undid.
    fn complete(&mut self, e: Entry) -> Vec<StoreWrite> {
        let mut store = vec![e.store_write()];
        store.extend(self.feed_write(&e));
        if let Some(target) = e.undoes.clone() {
            if let Some(t) = self.journal.get_mut(&target) {
                t.undone = true;
                t.undone_by = Some(e.migration_id.clone());
                // A write cut short, or whose rollback stopped, is settled once undone.
                if t.status != EntryStatus::Done {
                    t.status = EntryStatus::Done;
                }
                let again = t.undoes.clone();
                store.push(t.store_write());
                // Undoing an undo is a redo: the operation it undid stands again.
                if let Some(first) = again.and_then(|a| self.journal.get_mut(&a)) {
                    first.undone = false;
                    first.undone_by = None;
                    store.push(first.store_write());
                }
            }
        }
        self.journal.put(e);
        store
    }

    /// Records a write that failed: undone by a rollback entry that cannot itself
    /// be undone; when the rollback did not finish, the write stays open to undo.
    fn rolled_back(&mut self, mut e: Entry, failed: usize, all_back: bool) -> Vec<StoreWrite> {
        e.files_failed = failed;
        e.status = if all_back { EntryStatus::RolledBack } else { EntryStatus::RollbackIncomplete };
        let mut store = vec![];
        if all_back {
            let id = format!("{}-rollback", e.migration_id);
            e.undone = true;
            e.undone_by = Some(id.clone());
            let rb = Entry {
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
                ..e.clone()
            };
            store.push(e.store_write());
            self.journal.put(e);
            store.push(rb.store_write());
            self.journal.put(rb);
            return store;
        }
        store.push(e.store_write());
        self.journal.put(e);
        store
    }

    /// Puts the index back to the texts of `originals`.
    pub(crate) fn restore(
        &mut self,
        originals: &BTreeMap<String, Option<String>>,
        schema_before: Option<(Schema, String)>,
    ) {
        if let Some((s, text)) = schema_before {
            self.schema = s;
            self.metastore = Some(text);
        }
        for (path, text) in originals {
            if path == METASTORE {
                continue;
            }
            match text {
                Some(t) => {
                    let mtime = self.vault.get(path).map(|n| n.mtime).unwrap_or(0);
                    self.vault.insert(&self.schema, path.clone(), t.clone(), mtime)
                }
                None => {
                    self.vault.remove(path);
                }
            }
        }
        // A schema put back changes which notes are rows: read those again.
        let paths: Vec<String> = originals.keys().cloned().collect();
        let all: Vec<String> =
            if originals.contains_key(METASTORE) { self.vault.notes.keys().cloned().collect() } else { paths };
        self.vault.reindex(&self.schema, all);
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
        format!("{op} could not finish and was rolled back: nothing is left changed.\nHint: Free the file and send the operation again.")
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
