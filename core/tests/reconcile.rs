//! Changes made while no engine ran are found at the next open and reported as
//! hand edits, once.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::Disk;
use datanotes_core::Status;
use serde_json::json;

const SCHEMA: &str = "version: 1\ntables:\n  main.public.film:\n    name_from: title\n    columns:\n      title: {type: text, required: true}\n      year: {type: integer}\n";

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
