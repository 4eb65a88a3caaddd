//! The engine: what the host hands it at start, the calls it answers, the edits
//! it plans and the results it is told.

use crate::edits::{hash, Edit, StoreWrite};
use crate::error::{Failure, Kind};
use crate::ops;
use crate::schema::{Schema, METASTORE};
use crate::settings::{self, Settings};
use crate::vault::Vault;
use serde_json::{json, Value};
use std::collections::BTreeMap;

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
}

impl Status {
    pub fn http(self) -> u16 {
        match self {
            Status::Done | Status::Apply => 200,
            Status::BadInput => 400,
            Status::Refused => 409,
            Status::RolledBack => 503,
            Status::Internal => 500,
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
}

impl Outcome {
    pub fn done(answer: Value) -> Outcome {
        Outcome { status: Status::Done, answer, edits: vec![], store: vec![] }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "status": format!("{:?}", self.status).to_lowercase(),
            "http": self.status.http(),
            "answer": self.answer,
            "edits": self.edits,
            "store": self.store,
        })
    }

    pub fn failed(f: &Failure) -> Outcome {
        let status = match f.kind {
            Kind::BadInput => Status::BadInput,
            Kind::Refused => Status::Refused,
            Kind::RolledBack => Status::RolledBack,
            Kind::Internal => Status::Internal,
        };
        Outcome { status, answer: f.to_json(), edits: vec![], store: vec![] }
    }
}

/// A write whose edits the host is applying.
struct Pending {
    op: String,
    answer: Value,
    edits: Vec<Edit>,
    /// The texts before the write, by path (None: the file did not exist).
    originals: BTreeMap<String, Option<String>>,
    schema_before: Option<(Schema, String)>,
    /// Set once the write failed and the host is applying the rollback.
    failed: Option<Vec<Value>>,
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
    pending: Option<Pending>,
}

impl Engine {
    /// Indexes the vault. `store` holds the store's files (path relative to
    /// `.datanotes/`, text). Nothing in the notes can stop the engine from opening:
    /// what it cannot read is reported.
    pub fn open(files: Vec<NoteFile>, store: Vec<(String, String)>) -> Engine {
        let mut warnings = vec![];
        let mut settings = Settings::default();
        for (path, text) in &store {
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
        Engine { schema, metastore, vault, settings, schema_error, warnings, pending: None }
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
            let f = Failure::refused(name, vec![format!("the engine is still applying {}", p.op)], "Finish the previous write (the host calls finish) before the next.");
            return Outcome::failed(&f);
        }
        match ops::run(self, name, args, actor, now_ms) {
            Ok(o) => o,
            Err(f) => Outcome::failed(&f),
        }
    }

    /// Takes a planned write: the engine's index already holds its result; the
    /// host now applies the edits.
    pub(crate) fn plan(&mut self, op: &str, answer: Value, tx: crate::tx::Tx, store: Vec<StoreWrite>) -> Outcome {
        let edits = tx.edits.clone();
        if edits.is_empty() {
            return Outcome { status: Status::Done, answer, edits, store };
        }
        self.pending = Some(Pending {
            op: op.to_string(),
            answer: answer.clone(),
            edits: edits.clone(),
            originals: tx.originals,
            schema_before: tx.schema_before,
            failed: None,
        });
        Outcome { status: Status::Apply, answer, edits, store }
    }

    /// The host reports what became of each edit it was given, in order (an edit it
    /// did not try, after one failed, is reported as an error too). When one failed,
    /// the engine puts its index back and plans the rollback of those that were
    /// made: the host applies those edits and calls `finish` once more.
    pub fn finish(&mut self, results: &[Result<(), String>]) -> Outcome {
        let Some(mut p) = self.pending.take() else {
            return Outcome::failed(&Failure::internal("finish", "finish was called with no write under way"));
        };
        if let Some(failed) = p.failed.take() {
            // The results are those of the rollback.
            let mut failed = failed;
            let mut all_back = true;
            for (e, r) in p.edits.iter().zip(results.iter().chain(std::iter::repeat(&Err("not tried".to_string())))) {
                if let Err(msg) = r {
                    all_back = false;
                    failed.push(json!({"path": e.path(), "error": format!("not rolled back: {msg}")}));
                }
            }
            let answer = json!({"ok": false, "op": p.op, "failed": failed, "rolled_back": all_back, "notes_changed": 0,
                "error": if all_back { format!("{} could not finish and was rolled back: nothing is left changed. Free the file and send the operation again.", p.op) }
                         else { format!("{} could not finish and its rollback could not finish either. Close the program that holds the files, then send the operation again.", p.op) }});
            return Outcome { status: Status::RolledBack, answer, edits: vec![], store: vec![] };
        }
        let first_bad = p.edits.iter().enumerate().find_map(|(i, _)| match results.get(i) {
            Some(Ok(())) => None,
            Some(Err(m)) => Some((i, m.clone())),
            None => Some((i, "not reported".to_string())),
        });
        let Some((bad, msg)) = first_bad else {
            return Outcome::done(p.answer);
        };
        // Put the index back as it was, then undo the edits that were made, last first.
        self.restore(&p.originals, p.schema_before.take());
        let rollback: Vec<Edit> = p.edits[..bad].iter().rev().filter_map(|e| inverse(e, &p.originals)).collect();
        let failed = vec![json!({"path": p.edits[bad].path(), "error": msg})];
        if rollback.is_empty() {
            let answer = json!({"ok": false, "op": p.op, "failed": failed, "rolled_back": true, "notes_changed": 0,
                "error": format!("{} could not finish and was rolled back: nothing is left changed. Free the file and send the operation again.", p.op)});
            return Outcome { status: Status::RolledBack, answer, edits: vec![], store: vec![] };
        }
        let op = p.op.clone();
        self.pending = Some(Pending { op: op.clone(), answer: Value::Null, edits: rollback.clone(), originals: BTreeMap::new(), schema_before: None, failed: Some(failed) });
        Outcome { status: Status::Apply, answer: json!({"ok": false, "op": op, "rolling_back": true}), edits: rollback, store: vec![] }
    }

    /// Puts the index back to the texts of `originals`.
    pub(crate) fn restore(&mut self, originals: &BTreeMap<String, Option<String>>, schema_before: Option<(Schema, String)>) {
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
        let all: Vec<String> = if originals.contains_key(METASTORE) { self.vault.notes.keys().cloned().collect() } else { paths };
        self.vault.reindex(&self.schema, all);
    }
}

/// The edit that takes `e` back.
fn inverse(e: &Edit, originals: &BTreeMap<String, Option<String>>) -> Option<Edit> {
    Some(match e {
        Edit::Write { path, text, expect: None } => Edit::Delete { path: path.clone(), expect: hash(text) },
        Edit::Write { path, text, expect: Some(_) } => Edit::Write { path: path.clone(), text: originals.get(path).cloned().flatten()?, expect: Some(hash(text)) },
        Edit::Move { from, to, expect } => Edit::Move { from: to.clone(), to: from.clone(), expect: expect.clone() },
        Edit::Trash { path, .. } => Edit::Write { path: path.clone(), text: originals.get(path).cloned().flatten()?, expect: None },
        Edit::Delete { .. } => return None,
    })
}
