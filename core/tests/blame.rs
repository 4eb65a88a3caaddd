//! blame_row: who last changed each property of a row, and by which change
//! (an engine write with its actor, a hand edit, the row as its log began), on
//! the film diary through the driver.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{Disk, Host, T0};
use datanotes_core::{Status, VaultEvent};
use serde_json::{json, Value};

const CHARADE: &str = "datanotes/main/public/film/Charade.md";

fn films() -> Host {
    let mut h = Host { step: 1000, ..Host::new(Disk::films(), T0) };
    h.e = h.disk.open(h.now);
    h
}

/// Replaces `from` by `to` in a note by hand, and lets the engine's round of
/// hand edits run.
fn by_hand(h: &mut Host, path: &str, from: &str, to: &str) {
    let text = h.disk.notes[path].replacen(from, to, 1);
    h.now += 1000;
    h.disk.notes.insert(path.into(), text.clone());
    h.e.observe(VaultEvent::Modified { path: path.into(), text, mtime: h.now }, h.now);
    h.now += 10_000;
    let step = h.e.tick(h.now);
    let out = h.carry(step);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
}

/// Each column's blame, by name.
fn blame(h: &mut Host, path: &str) -> Value {
    let a = h.ok("blame_row", json!({"path": path}));
    let mut by = serde_json::Map::new();
    for c in a["columns"].as_array().unwrap() {
        by.insert(c["column"].as_str().unwrap().into(), c.clone());
    }
    Value::Object(by)
}

#[test]
fn each_property_names_the_change_that_last_set_it_and_who_made_it() {
    let mut h = films();
    let first =
        h.call_as("owner/claude-code", "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(first.status, Status::Ok, "{}", first.answer);
    by_hand(&mut h, CHARADE, "minutes: 113", "minutes: 115");
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"tags": ["seen-2027"]}}));

    let b = blame(&mut h, CHARADE);
    // An engine write: its version, its journal entry and who wrote it.
    assert_eq!(b["rating"]["value"], 4);
    assert_eq!(b["rating"]["version"], 1);
    assert_eq!(b["rating"]["source"], "write");
    assert_eq!(b["rating"]["by"], "owner/claude-code");
    assert_eq!(b["rating"]["op"], "update_row");
    assert_eq!(b["rating"]["migration_id"], first.answer["migration_id"]);
    // A hand edit: its own version, no journal entry.
    assert_eq!(b["minutes"]["value"], 115);
    assert_eq!(b["minutes"]["version"], 2);
    assert_eq!(b["minutes"]["source"], "hand_edit");
    assert_eq!(b["minutes"]["operation"], "EXTERNAL_EDIT");
    assert!(b["minutes"]["by"].is_null());
    assert_eq!(b["tags"]["version"], 3);
    assert_eq!(b["tags"]["by"], "test");
    // Untouched since the log began: the row as it came.
    assert_eq!(b["title"]["value"], "Charade");
    assert_eq!(b["title"]["version"], 0);
    assert_eq!(b["title"]["source"], "history_began");
    // The row's own columns, never its table and id.
    assert!(b.get("id").is_none() && b.get("table").is_none());

    // A value set back as it was is still a change, by the write that made it.
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 5}}));
    let b = blame(&mut h, CHARADE);
    assert_eq!(b["rating"]["version"], 4);
    assert_eq!(b["rating"]["value"], 5);
}

#[test]
fn a_row_of_a_table_never_written_and_a_plain_note() {
    let mut h = films();
    // The open began the log: each property as the row was found.
    let b = blame(&mut h, CHARADE);
    assert_eq!(b["rating"]["source"], "history_began");
    assert_eq!(b["rating"]["version"], 0);
    // A table that keeps no history: nothing to say who set what.
    h.ok(
        "create_table",
        json!({"table": "studio", "history": false, "name_from": "name", "columns": {"name": {"type": "text"}}}),
    );
    let added = h.ok("insert_row", json!({"table": "studio", "values": {"name": "UFA"}}));
    let path = added["planned_edits"][0]["path"].as_str().unwrap().to_string();
    let b = blame(&mut h, &path);
    assert_eq!(b["name"]["value"], "UFA");
    assert_eq!(b["name"]["source"], "before_history");
    assert!(b["name"]["version"].is_null());
    let out = h.call("blame_row", json!({"path": "Notes/Film night.md"}));
    assert_eq!(out.status, Status::Refused);
    assert!(
        out.answer["error"].as_str().unwrap().contains("Notes/Film night.md is not a row of a table"),
        "{}",
        out.answer
    );
    let out = h.call("blame_row", json!({"path": "Notes/Nowhere.md"}));
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
    // A read: nothing journaled.
    assert_eq!(h.ok("list_migrations", json!({}))["total"], 2);
}
