//! Helpers shared by the integration tests of the engine: the film diary of
//! `bridge/assets/films`, and a host in memory (the notes and the store as maps)
//! that answers the engine's requests for store files and applies its writes.

// Each test file is a test binary of its own and uses only some of these helpers;
// to the others the rest would be dead code.
#![allow(dead_code)]

use datanotes_core::{Edit, Engine, NoteFile, Outcome, Status, StoreFile, StoreWrite, VaultEvent};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};
use std::path::Path;

/// The film diary, as the binary ships it.
pub const VAULT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../bridge/assets/films");
/// 2026-10-12T16:52:00Z
pub const T0: i64 = 1_791_823_920_000;

pub fn note(path: &str, text: &str) -> NoteFile {
    NoteFile { path: path.into(), text: text.into(), mtime: 0 }
}

/// Every file of the film diary (its notes and metastore.yaml), by path.
pub fn film_diary() -> BTreeMap<String, String> {
    fn read_dir(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                read_dir(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut notes = BTreeMap::new();
    read_dir(Path::new(VAULT), Path::new(VAULT), &mut notes);
    notes
}

/// A result for each edit: every one of them done.
pub fn all_ok(edits: &[Edit]) -> Vec<Result<(), String>> {
    edits.iter().map(|_| Ok(())).collect()
}

/// Reports every edit of a write done until the engine is done: its last outcome
/// and the edits it asked for.
pub fn finish_ok(e: &mut Engine, mut out: Outcome) -> (Outcome, Vec<Edit>) {
    let mut edits = vec![];
    while out.status == Status::Apply {
        edits.extend(out.edits.clone());
        out = e.finish(&all_ok(&out.edits));
    }
    (out, edits)
}

/// The vault and the store on "disk", in memory, as a host keeps them.
#[derive(Default)]
pub struct Disk {
    pub notes: BTreeMap<String, String>,
    pub store: BTreeMap<String, String>,
    /// Every store file the engine asked for (Status::Need) since it was last opened.
    pub asked: Vec<String>,
}

impl Disk {
    /// The film diary, and no store yet.
    pub fn films() -> Disk {
        Disk { notes: film_diary(), ..Disk::default() }
    }

    pub fn note_files(&self) -> Vec<NoteFile> {
        self.notes.iter().map(|(p, t)| NoteFile { path: p.clone(), text: t.clone(), mtime: 0 }).collect()
    }

    /// Opens an engine as a host does: notes read, the store listed with the log's
    /// files and the blobs unread, then reconciled, handing over what it asks for.
    pub fn open(&mut self, now: i64) -> Engine {
        let store = self
            .store
            .iter()
            .map(|(p, t)| StoreFile(p.clone(), (!p.starts_with("log/") && !p.starts_with("blobs/")).then(|| t.clone())))
            .collect();
        let mut e = Engine::open_listed(self.note_files(), store, now);
        let mut out = e.reconcile(now);
        while out.status == Status::Need {
            self.provide(&mut e, &out.need);
            out = e.reconcile(now);
        }
        assert_eq!(out.status, Status::Done, "{}", out.answer);
        self.keep(&out.store);
        self.asked.clear();
        e
    }

    /// Opens an engine on every note and every store file, read, as they are now.
    pub fn open_read(&self, now: i64) -> Engine {
        let store = self.store.iter().map(|(p, t)| (p.clone(), t.clone())).collect();
        Engine::open_at(self.note_files(), store, now)
    }

    /// Hands the engine the store files it asked for (None for those that do not exist).
    pub fn provide(&mut self, e: &mut Engine, need: &[String]) {
        self.asked.extend(need.iter().cloned());
        e.provide(need.iter().map(|p| (p.clone(), self.store.get(p).cloned())).collect());
    }

    /// Writes, appends to or deletes store files.
    pub fn keep(&mut self, writes: &[StoreWrite]) {
        for w in writes {
            if w.delete {
                self.store.remove(&w.path);
            } else if w.append {
                self.store.entry(w.path.clone()).or_default().push_str(&w.text);
            } else {
                self.store.insert(w.path.clone(), w.text.clone());
            }
        }
    }

    /// Applies one edit to the notes.
    pub fn apply(&mut self, e: &Edit) {
        self.apply_seen(e, 0);
    }

    /// Applies one edit to the notes: the change a file watcher sees, at `mtime`.
    pub fn apply_seen(&mut self, e: &Edit, mtime: i64) -> VaultEvent {
        match e {
            Edit::Write { path, text, .. } => {
                let old = self.notes.insert(path.clone(), text.clone());
                let (path, text) = (path.clone(), text.clone());
                match old {
                    Some(_) => VaultEvent::Modified { path, text, mtime },
                    None => VaultEvent::Created { path, text, mtime },
                }
            }
            Edit::Move { from, to, .. } => {
                let text = self.notes.remove(from).unwrap();
                self.notes.insert(to.clone(), text.clone());
                VaultEvent::Renamed { from: from.clone(), to: to.clone(), text, mtime }
            }
            Edit::Trash { path, .. } | Edit::Delete { path, .. } => {
                self.notes.remove(path);
                VaultEvent::Removed { path: path.clone() }
            }
        }
    }

    /// Calls an operation at `now` as `actor`, handing over the store files it asks
    /// for, up to its answer before the edits (Apply) or its final one.
    pub fn ask(&mut self, e: &mut Engine, actor: &str, op: &str, args: &Value, now: i64) -> Outcome {
        let mut out = e.call(op, args.clone(), actor, now);
        while out.status == Status::Need {
            self.provide(e, &out.need.clone());
            out = e.call(op, args.clone(), actor, now);
        }
        out
    }

    /// Keeps an outcome's store writes and, for a write, applies its edits (every one
    /// succeeding) until the engine is done. With `echo`, each edit is reported back
    /// to the engine at `now`, as a file watcher does.
    pub fn settle(&mut self, e: &mut Engine, mut out: Outcome, now: i64, echo: bool) -> Outcome {
        self.keep(&out.store);
        while out.status == Status::Apply {
            for ed in &out.edits {
                let seen = self.apply_seen(ed, now);
                if echo {
                    e.observe(seen, now);
                }
            }
            out = e.finish(&all_ok(&out.edits));
            self.keep(&out.store);
        }
        out
    }

    /// Runs an operation to its end at `now`, every edit succeeding.
    pub fn call(&mut self, e: &mut Engine, op: &str, args: Value, now: i64) -> Outcome {
        let out = self.ask(e, "test", op, &args, now);
        self.settle(e, out, now, false)
    }
}

/// A host: the disk, the engine open on it, and the time. It derefs to its disk,
/// so that tests read `h.notes` and `h.store`.
pub struct Host {
    pub e: Engine,
    pub disk: Disk,
    pub now: i64,
    /// How far the time moves before each call.
    pub step: i64,
    /// Report the engine's own edits back to it, as a file watcher does.
    pub echo: bool,
}

impl Deref for Host {
    type Target = Disk;

    fn deref(&self) -> &Disk {
        &self.disk
    }
}

impl DerefMut for Host {
    fn deref_mut(&mut self) -> &mut Disk {
        &mut self.disk
    }
}

impl Host {
    /// A host on `disk` at `now`; no engine is open on it yet.
    pub fn new(disk: Disk, now: i64) -> Host {
        Host { e: Engine::open(vec![], vec![]), disk, now, step: 0, echo: false }
    }

    /// Applies a write (every edit succeeds) until the engine is done.
    pub fn settle(&mut self, out: Outcome) -> Outcome {
        self.disk.settle(&mut self.e, out, self.now, self.echo)
    }

    pub fn call(&mut self, op: &str, args: Value) -> Outcome {
        self.call_as("test", op, args)
    }

    /// Runs an operation to its end, `step` ms after the last, every edit succeeding.
    pub fn call_as(&mut self, actor: &str, op: &str, args: Value) -> Outcome {
        self.now += self.step;
        let out = self.disk.ask(&mut self.e, actor, op, &args, self.now);
        self.settle(out)
    }

    /// A call that must succeed: its answer.
    pub fn ok(&mut self, op: &str, args: Value) -> Value {
        let out = self.call(op, args.clone());
        assert_eq!(out.status, Status::Done, "{op} {args}: {}", out.answer);
        out.answer
    }
}
