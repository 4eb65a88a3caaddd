//! Conflict copies (issue 15): the files sync tools make when two devices changed
//! one note while apart, and git's conflict markers. Never rows; reported in
//! check_table and in the feed with both versions and the way out; one side kept
//! by resolve_conflict, a journaled write that undo takes back.

mod common;

use common::{original, Disk, Host, T0};
use datanotes_core::Status;
use serde_json::json;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

const FILM: &str = "datanotes/main/public/film/";
const CHARADE: &str = "datanotes/main/public/film/Charade.md";

fn host() -> Host {
    let mut h = Host::new(Disk::films(), T0);
    h.e = h.disk.open(T0);
    h.step = 1000;
    h
}

fn reopen(h: &mut Host) {
    h.now += 1000;
    let now = h.now;
    h.e = h.disk.open(now);
}

fn titles(h: &mut Host) -> Vec<String> {
    let rows = h.ok("select_rows", json!({"table": "film", "columns": ["title"], "limit": 100}));
    rows["rows"].as_array().unwrap().iter().map(|r| r["title"].as_str().unwrap().to_string()).collect()
}

#[test]
fn each_sync_tools_copy_is_no_row_and_is_reported_with_both_versions() {
    let copies = [
        "Charade.sync-conflict-20261204-133000-ABCDEFG.md",
        "Charade (Ann's conflicted copy 2026-12-04).md",
        "Charade 2.md",
        "Charade-LAPTOP.md",
    ];
    for name in copies {
        let mut h = host();
        let before = titles(&mut h);
        let copy = format!("{FILM}{name}");
        h.notes.insert(copy.clone(), original(CHARADE).replace("rating: 5", "rating: 2"));
        reopen(&mut h);
        assert_eq!(titles(&mut h), before, "{name}: the copy is not a second Charade");
        let check = h.ok("check_table", json!({"table": "film"}));
        let found: Vec<&serde_json::Value> =
            check["violations"].as_array().unwrap().iter().filter(|v| v["path"] == copy.as_str()).collect();
        assert_eq!(found.len(), 1, "{name}: {check}");
        let v = &found[0]["violations"][0];
        assert_eq!(v["code"], "conflict", "{name}: {v}");
        assert_eq!(v["value"]["original"], CHARADE, "{name}");
        assert_eq!(v["value"]["differences"], json!({"rating": {"before": 5, "after": 2}}), "{name}");
        assert!(v["message"].as_str().unwrap().contains("resolve_conflict"), "{name}: the way out: {v}");
        // The feed tells of it, as found at open.
        let feed = h.ok("list_changes", json!({"since": 0}));
        let ev = feed["events"].as_array().unwrap().iter().find(|e| e["path"] == copy.as_str()).cloned();
        let ev = ev.unwrap_or_else(|| panic!("{name}: no event: {feed}"));
        assert_eq!(ev["violations"][0]["violations"][0]["code"], "conflict", "{name}: {ev}");
    }
}

#[test]
fn a_name_like_a_copy_with_another_id_is_a_row() {
    let mut h = host();
    let text = original(CHARADE)
        .replace("id: 01a0c046-cd8d-7b83-b93c-28130654d8df", "id: 01a0c046-cd8d-7b83-b93c-000000000002")
        .replace("title: Charade", "title: Charade 2");
    h.notes.insert(format!("{FILM}Charade 2.md"), text);
    reopen(&mut h);
    assert!(titles(&mut h).contains(&"Charade 2".to_string()));
}

#[test]
fn resolve_conflict_keeps_the_copy_or_the_original_and_undo_takes_it_back() {
    let mut h = host();
    let copy = format!("{FILM}Charade.sync-conflict-20261204-133000-ABCDEFG.md");
    let theirs = original(CHARADE).replace("rating: 5", "rating: 2");
    h.notes.insert(copy.clone(), theirs.clone());
    reopen(&mut h);
    let bad = h.call("resolve_conflict", json!({"path": copy, "keep": "mine"}));
    assert_eq!(bad.status, Status::BadInput, "{}", bad.answer);
    assert!(bad.answer["error"].as_str().unwrap().contains("\"original\""), "{}", bad.answer);
    let none = h.call("resolve_conflict", json!({"path": CHARADE, "keep": "copy"}));
    assert_eq!(none.status, Status::Refused, "{}", none.answer);
    let kept = h.ok("resolve_conflict", json!({"path": copy, "keep": "copy"}));
    assert_eq!(h.notes[CHARADE], theirs);
    assert!(!h.notes.contains_key(&copy) && h.trash.contains_key(&copy), "the copy went to the trash");
    let check = h.ok("check_table", json!({"table": "film"}));
    assert_eq!(
        check["violations"].as_array().unwrap().iter().filter(|v| v["violations"][0]["code"] == "conflict").count(),
        0
    );
    h.ok("undo_migration", json!({"migration_id": kept["migration_id"]}));
    assert_eq!(h.notes[CHARADE], original(CHARADE));
    assert_eq!(h.notes[&copy], theirs, "undo brings the copy back");
    h.ok("resolve_conflict", json!({"path": copy, "keep": "original"}));
    assert_eq!(h.notes[CHARADE], original(CHARADE));
    assert!(!h.notes.contains_key(&copy));
}

#[test]
fn git_markers_in_front_matter_are_a_conflict_with_both_sides() {
    let mut h = host();
    let marked =
        original(CHARADE).replace("rating: 5\n", "<<<<<<< HEAD\nrating: 4\n=======\nrating: 2\n>>>>>>> phone\n");
    h.notes.insert(CHARADE.into(), marked);
    reopen(&mut h);
    assert!(!titles(&mut h).contains(&"Charade".to_string()), "not a row until one side is kept");
    let check = h.ok("check_table", json!({"table": "film"}));
    let v = check["violations"].as_array().unwrap().iter().find(|v| v["path"] == CHARADE).cloned().unwrap();
    assert_eq!(v["violations"][0]["code"], "conflict", "{v}");
    assert_eq!(v["violations"][0]["value"]["differences"], json!({"rating": {"before": 4, "after": 2}}));
    h.ok("resolve_conflict", json!({"path": CHARADE, "keep": "theirs"}));
    assert_eq!(h.notes[CHARADE], original(CHARADE).replace("rating: 5", "rating: 2"));
    assert!(titles(&mut h).contains(&"Charade".to_string()));
}
