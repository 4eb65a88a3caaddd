//! Helpers shared by the integration tests of the engine: the film diary of
//! `bridge/assets/films`, and a host in memory (the notes and the store as maps)
//! that answers the engine's requests for store files and applies its writes.

// Each test file is a test binary of its own and uses only some of these helpers;
// to the others the rest would be dead code.
#![allow(dead_code)]

use datanotes_core::driver::{self, Host as _, Memory};
use datanotes_core::{Apply, Edit, EditError, Engine, NoteFile, Outcome, Status, Step, StoreFile, StoreWrite};
use serde_json::Value;
use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

include!(concat!(env!("OUT_DIR"), "/films.rs"));

/// 2026-10-12T16:52:00Z
pub const T0: i64 = 1_791_823_920_000;

pub fn note(path: &str, text: &str) -> NoteFile {
    NoteFile { path: path.into(), text: text.into(), mtime: 0 }
}

/// Every file of the film diary (its notes and metastore.yaml), by path, as the
/// binary ships it (embedded by build.rs, so that the tests run in wasm too).
pub fn film_diary() -> BTreeMap<String, String> {
    FILMS.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect()
}

/// Every file of the film diary as the host reads it at open, in path order.
pub fn load_films() -> Vec<NoteFile> {
    film_diary().into_iter().map(|(path, text)| NoteFile { path, text, mtime: 0 }).collect()
}

/// A file of the film diary as it ships.
pub fn original(rel: &str) -> String {
    FILMS.iter().find(|(p, _)| *p == rel).unwrap_or_else(|| panic!("the film diary has no {rel}")).1.to_string()
}

/// An answer without its rows' `_version` tokens (hashes of the notes' texts,
/// tested on their own), to compare with the seeds' answers.
pub fn unversioned(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.into_iter().filter(|(k, _)| k != "_version").map(|(k, x)| (k, unversioned(x))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(unversioned).collect()),
        other => other,
    }
}

/// Applies one edit to notes kept in a map, as the driver applies it (checked
/// against the file first). A note sent to the trash leaves `notes`: its text is
/// given back.
pub fn apply_edit(notes: &mut BTreeMap<String, String>, e: &Edit) -> Result<Option<String>, String> {
    let mut m = Memory::new(std::mem::take(notes));
    let r = driver::apply(&mut m, e);
    *notes = std::mem::take(&mut m.notes);
    r.map(|()| m.trash.into_values().next()).map_err(|e| e.to_string())
}

/// A result for each edit: every one of them done.
pub fn all_ok(edits: &[Edit]) -> Vec<Result<(), EditError>> {
    edits.iter().map(|_| Ok(())).collect()
}

/// Reports every edit of a write done until the engine is done, without touching
/// any file: its last outcome and the edits it asked for.
pub fn finish_ok(e: &mut Engine, mut step: Step) -> (Outcome, Vec<Edit>) {
    let mut edits = vec![];
    loop {
        match step {
            Step::Apply(a) => {
                step = e.finish(&all_ok(&a.edits));
                edits.extend(a.edits);
            }
            Step::Done(out) => return (out, edits),
            Step::Need(need) | Step::ReadNotes(need) => panic!("the engine asked for files: {need:?}"),
        }
    }
}

/// The write a step asks for, or a panic naming what it is instead.
#[track_caller]
pub fn applying(step: Step) -> Apply {
    match step {
        Step::Apply(a) => a,
        Step::Done(o) => panic!("a write was expected, not {:?}: {}", o.status, o.answer),
        Step::Need(n) | Step::ReadNotes(n) => panic!("a write was expected, not a need of {n:?}"),
    }
}

/// The outcome a step ends a turn with, or a panic naming what it is instead.
#[track_caller]
pub fn done(step: Step) -> Outcome {
    match step {
        Step::Done(o) => o,
        Step::Apply(a) => panic!("an outcome was expected, not a write: {}", a.answer),
        Step::Need(n) | Step::ReadNotes(n) => panic!("an outcome was expected, not a need of {n:?}"),
    }
}

/// The vault and the store on "disk", in memory, as a host keeps them (the
/// driver's `Memory` host).
#[derive(Default)]
pub struct Disk {
    pub mem: Memory,
}

impl Deref for Disk {
    type Target = Memory;

    fn deref(&self) -> &Memory {
        &self.mem
    }
}

impl DerefMut for Disk {
    fn deref_mut(&mut self) -> &mut Memory {
        &mut self.mem
    }
}

impl Disk {
    /// The film diary, and no store yet.
    pub fn films() -> Disk {
        Disk { mem: Memory::new(film_diary()) }
    }

    pub fn note_files(&self) -> Vec<NoteFile> {
        self.notes.iter().map(|(p, t)| NoteFile { path: p.clone(), text: t.clone(), mtime: 0 }).collect()
    }

    /// Opens an engine as a host does: notes read, the store listed with the log's
    /// files and the blobs unread, then started (upkeep, reconcile) by the driver.
    pub fn open(&mut self, now: i64) -> Engine {
        let store = self
            .store
            .iter()
            .map(|(p, t)| StoreFile(p.clone(), (!p.starts_with("log/") && !p.starts_with("blobs/")).then(|| t.clone())))
            .collect();
        let mut e = Engine::open_listed(self.note_files(), store, now);
        let out = driver::start(&mut e, &mut self.mem, now);
        assert_eq!(out.status, Status::Ok, "{}", out.answer);
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
        let files = need.iter().map(|p| (p.clone(), self.mem.read_store(p))).collect();
        e.provide(files);
    }

    /// Writes, appends to or deletes store files.
    pub fn keep(&mut self, writes: &[StoreWrite]) {
        for w in writes {
            self.mem.keep(w);
        }
    }

    /// Applies one edit to the notes, as the driver does (checked against the file).
    pub fn apply(&mut self, e: &Edit) {
        if let Err(err) = driver::apply(&mut self.mem, e) {
            panic!("{e:?} could not be applied: {err}");
        }
    }

    /// Calls an operation at `now` as `actor`, handing over the store files it asks
    /// for, up to its answer before the edits (Apply) or its final one.
    pub fn ask(&mut self, e: &mut Engine, actor: &str, op: &str, args: &Value, now: i64) -> Step {
        driver::ask(e, &mut self.mem, |e| e.call(op, args.clone(), actor, now))
    }

    /// Runs an operation to its end at `now`, every edit succeeding.
    pub fn call(&mut self, e: &mut Engine, op: &str, args: Value, now: i64) -> Outcome {
        self.mem.mtime = now;
        let out = driver::call(e, &mut self.mem, op, &args, "test", now);
        self.mem.seen.clear();
        out
    }

    /// Reports to the engine at `now` the edits made since the last report, as a
    /// file watcher does.
    pub fn echo(&mut self, e: &mut Engine, now: i64) {
        for ev in std::mem::take(&mut self.mem.seen) {
            e.observe(ev, now);
        }
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

    /// Carries a step to its end (every edit succeeds), as the driver does.
    pub fn carry(&mut self, step: Step) -> Outcome {
        self.disk.mem.mtime = self.now;
        self.disk.mem.watch = self.echo;
        let out = driver::carry(&mut self.e, &mut self.disk.mem, "test", step);
        self.after();
        out
    }

    /// What follows a turn: the engine's own edits reported back to it when the
    /// host echoes, as a file watcher does.
    fn after(&mut self) {
        if self.echo {
            self.disk.echo(&mut self.e, self.now);
        }
        self.disk.mem.seen.clear();
    }

    pub fn call(&mut self, op: &str, args: Value) -> Outcome {
        self.call_as("test", op, args)
    }

    /// Runs an operation to its end, `step` ms after the last, every edit succeeding.
    pub fn call_as(&mut self, actor: &str, op: &str, args: Value) -> Outcome {
        self.now += self.step;
        self.disk.mem.mtime = self.now;
        self.disk.mem.watch = self.echo;
        let out = driver::call(&mut self.e, &mut self.disk.mem, op, &args, actor, self.now);
        self.after();
        out
    }

    /// A call that must succeed: its answer.
    pub fn ok(&mut self, op: &str, args: Value) -> Value {
        let out = self.call(op, args.clone());
        assert_eq!(out.status, Status::Ok, "{op} {args}: {}", out.answer);
        out.answer
    }
}

/// xorshift64*: a small PRNG for the property tests, so they need no dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
