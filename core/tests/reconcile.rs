//! Changes made while no engine ran are found at the next open and reported as
//! hand edits, once.

use datanotes_core::{Edit, Engine, NoteFile, Outcome, Status, StoreFile, StoreWrite};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const SCHEMA: &str = "version: 1\ntables:\n  main.public.film:\n    name_from: title\n    columns:\n      title: {type: text, required: true}\n      year: {type: integer}\n";

/// The vault and the store, in memory.
#[derive(Default)]
struct Disk {
    notes: BTreeMap<String, String>,
    store: BTreeMap<String, String>,
}

impl Disk {
    fn keep(&mut self, w: &[StoreWrite]) {
        for s in w {
            if s.delete {
                self.store.remove(&s.path);
            } else if s.append {
                self.store.entry(s.path.clone()).or_default().push_str(&s.text);
            } else {
                self.store.insert(s.path.clone(), s.text.clone());
            }
        }
    }

    fn apply(&mut self, e: &Edit) {
        match e {
            Edit::Write { path, text, .. } => {
                self.notes.insert(path.clone(), text.clone());
            }
            Edit::Move { from, to, .. } => {
                let t = self.notes.remove(from).unwrap();
                self.notes.insert(to.clone(), t);
            }
            Edit::Trash { path, .. } | Edit::Delete { path, .. } => {
                self.notes.remove(path);
            }
        }
    }

    /// Opens an engine as a host does: notes read, store listed (log files and
    /// blobs unread), then reconciled, handing over what it asks for.
    fn open(&mut self, now: i64) -> Engine {
        let files = self.notes.iter().map(|(p, t)| NoteFile { path: p.clone(), text: t.clone(), mtime: 0 }).collect();
        let store = self
            .store
            .iter()
            .map(|(p, t)| StoreFile(p.clone(), (!p.starts_with("log/") && !p.starts_with("blobs/")).then(|| t.clone())))
            .collect();
        let mut e = Engine::open_listed(files, store, now);
        let mut out = e.reconcile(now);
        while out.status == Status::Need {
            e.provide(out.need.iter().map(|p| (p.clone(), self.store.get(p).cloned())).collect());
            out = e.reconcile(now);
        }
        assert_eq!(out.status, Status::Done, "{}", out.answer);
        self.keep(&out.store);
        e
    }

    fn call(&mut self, e: &mut Engine, op: &str, args: Value, now: i64) -> Outcome {
        let mut out = e.call(op, args.clone(), "test", now);
        while out.status == Status::Need {
            e.provide(out.need.iter().map(|p| (p.clone(), self.store.get(p).cloned())).collect());
            out = e.call(op, args.clone(), "test", now);
        }
        while out.status == Status::Apply {
            self.keep(&out.store);
            for ed in &out.edits {
                self.apply(ed);
            }
            let ok: Vec<Result<(), String>> = out.edits.iter().map(|_| Ok(())).collect();
            out = e.finish(&ok);
        }
        self.keep(&out.store);
        out
    }
}

fn film(title: &str, year: u32) -> String {
    format!("---\ntable: main.public.film\nid: {title}\ntitle: {title}\nyear: {year}\n---\n")
}

#[test]
fn edits_made_while_closed_are_reported_once_at_the_next_open() {
    let mut d = Disk::default();
    d.notes.insert("datanotes/metastore.yaml".into(), SCHEMA.into());
    for (t, y) in [("Charade", 1963), ("Metropolis", 1927), ("Nosferatu", 1922), ("M", 1931)] {
        d.notes.insert(format!("datanotes/main/public/film/{t}.md"), film(t, y));
    }
    let mut e = d.open(1_000);
    assert!(d.store.contains_key("known.jsonl"));
    let out = d.call(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/M.md", "set": {"year": 1932}}),
        2_000,
    );
    assert_eq!(out.status, Status::Done, "{}", out.answer);
    drop(e);

    // While no engine runs: an edit, a rename, a removal, a new note.
    d.notes.insert("datanotes/main/public/film/Charade.md".into(), film("Charade", 1964));
    let m = d.notes.remove("datanotes/main/public/film/Metropolis.md").unwrap();
    d.notes.insert("datanotes/main/public/film/Metropolis (1927).md".into(), m);
    d.notes.remove("datanotes/main/public/film/Nosferatu.md");
    d.notes.insert("datanotes/main/public/film/Sherlock Jr..md".into(), film("Sherlock Jr.", 1924));

    let mut e = d.open(10_000);
    let out = d.call(&mut e, "list_changes", json!({"since": 1}), 10_001);
    let events = out.answer["events"].as_array().unwrap().clone();
    let kinds: Vec<(&str, &str)> =
        events.iter().map(|e| (e["kind"].as_str().unwrap(), e["path"].as_str().unwrap())).collect();
    assert_eq!(
        kinds,
        vec![
            ("update", "datanotes/main/public/film/Charade.md"),
            ("delete", "datanotes/main/public/film/Nosferatu.md"),
            ("insert", "datanotes/main/public/film/Sherlock Jr..md"),
            ("move", "datanotes/main/public/film/Metropolis (1927).md"),
        ],
        "{out:?}"
    );
    assert!(events.iter().all(|e| e["source"] == "external"));
    assert_eq!(events[0]["changes"], json!({"year": {"before": 1963, "after": 1964}}));
    assert_eq!(events[1]["values"]["title"], "Nosferatu");
    let hist = d.call(&mut e, "describe_history", json!({"table": "film", "limit": 1}), 10_002);
    assert_eq!(hist.answer["history"][0]["operation"], "EXTERNAL_EDIT");
    drop(e);

    // Nothing is reported twice, and the engine's own writes are not hand edits.
    let mut e = d.open(20_000);
    let head = d.call(&mut e, "list_changes", json!({}), 20_001).answer["head"].clone();
    let out = d.call(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": {"year": 1963}}),
        20_002,
    );
    assert_eq!(out.status, Status::Done);
    drop(e);
    let mut e = d.open(30_000);
    let after = d.call(&mut e, "list_changes", json!({}), 30_001).answer;
    assert_eq!(after["head"].as_u64().unwrap(), head.as_u64().unwrap() + 1, "only the engine's own update: {after}");
}
