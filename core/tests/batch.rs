//! Issue 16, point 13: a host that stages gets a write's notes as one batch (all
//! staged, one sync, each put after its file is checked again), and a batch that
//! fails half way leaves what writing the notes one by one would.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{Disk, T0};
use datanotes_core::driver::{self, Host, Memory};
use datanotes_core::edits::StoreWrite;
use serde_json::json;
use std::collections::BTreeMap;

/// Memory that stages: texts wait in `staged` until `put`.
struct Staging {
    mem: Memory,
    staged: BTreeMap<String, String>,
    syncs: usize,
    /// A hand edit made once the batch is synced, before anything is put.
    edit_after_sync: Option<(String, String)>,
}

impl Host for Staging {
    fn read(&mut self, path: &str) -> Result<Option<String>, String> {
        self.mem.read(path)
    }
    fn write(&mut self, path: &str, text: &str) -> Result<(), String> {
        self.mem.write(path, text)
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        self.mem.rename(from, to)
    }
    fn trash(&mut self, path: &str) -> Result<(), String> {
        self.mem.trash(path)
    }
    fn remove(&mut self, path: &str) -> Result<(), String> {
        self.mem.remove(path)
    }
    fn read_store(&mut self, path: &str) -> Option<String> {
        self.mem.read_store(path)
    }
    fn write_store(&mut self, w: &StoreWrite) -> Result<(), String> {
        self.mem.write_store(w)
    }
    fn stages(&self) -> bool {
        true
    }
    fn stage(&mut self, path: &str, text: &str) -> Result<(), String> {
        self.staged.insert(path.into(), text.into());
        Ok(())
    }
    fn sync(&mut self) -> Result<(), String> {
        self.syncs += 1;
        if let Some((path, text)) = self.edit_after_sync.take() {
            self.mem.notes.insert(path, text);
        }
        Ok(())
    }
    fn put(&mut self, path: &str) -> Result<(), String> {
        let text = self.staged.remove(path).ok_or("not staged")?;
        self.mem.write(path, &text)
    }
    fn unstage(&mut self, path: &str) {
        self.staged.remove(path);
    }
}

fn watched() -> serde_json::Value {
    json!({"table": "film", "where": {"status": "watched"}, "set": {"rating": 1}})
}

fn staging() -> (Staging, datanotes_core::Engine) {
    let mut disk = Disk::films();
    let engine = disk.open(T0);
    (Staging { mem: disk.mem, staged: BTreeMap::new(), syncs: 0, edit_after_sync: None }, engine)
}

#[test]
fn point_13_a_batch_of_notes_shares_one_sync() {
    let (mut host, mut engine) = staging();
    let before = host.mem.notes.clone();
    let out = driver::call(&mut engine, &mut host, "update_rows", &watched(), "test", T0);
    assert_eq!(out.answer["ok"], true, "{}", out.answer);
    let changed: Vec<_> = host.mem.notes.iter().filter(|(p, t)| before.get(*p) != Some(t)).collect();
    assert!(changed.len() > 1, "the diary has several watched films: {}", changed.len());
    assert!(changed.iter().all(|(_, t)| t.contains("rating: 1")));
    assert_eq!(host.syncs, 1, "one sync for the whole batch");
    assert!(host.staged.is_empty(), "nothing is left staged");
}

#[test]
fn point_13_a_note_changed_during_the_batch_is_kept_and_the_rest_rolled_back() {
    let (mut host, mut engine) = staging();
    let before = host.mem.notes.clone();
    let target = before.iter().filter(|(_, t)| t.contains("status: watched")).nth(1).map(|(p, _)| p.clone()).unwrap();
    let hand = format!("{}\nA line written by hand.\n", before[&target]);
    host.edit_after_sync = Some((target.clone(), hand.clone()));
    let out = driver::call(&mut engine, &mut host, "update_rows", &watched(), "test", T0);
    assert_eq!(out.answer["ok"], false, "{}", out.answer);
    assert_eq!(host.mem.notes[&target], hand, "the hand edit is never overwritten");
    for (p, t) in &before {
        if *p != target {
            assert_eq!(&host.mem.notes[p], t, "{p} is put back as it was");
        }
    }
    assert!(host.staged.is_empty(), "what was not put is unstaged");
}
