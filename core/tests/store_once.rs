//! Issue 16, point 11: a version of a big note is stored once. The journal names
//! a long text (over `INLINE_MAX`) by its hash and leaves it to the blobs, which
//! the log's commits share; undo reads it back, after a restart too, and
//! vacuum_table keeps the blobs the journal still needs.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{Disk, Host, T0};
use datanotes_core::journal::INLINE_MAX;
use serde_json::json;

const METROPOLIS: &str = "datanotes/main/public/film/Metropolis.md";

fn films() -> Host {
    let mut disk = Disk::films();
    let e = disk.open(T0);
    let mut h = Host::new(disk, T0);
    h.e = e;
    h.step = 1000;
    h
}

/// How many store files hold `needle`, and their paths.
fn holding(h: &Host, needle: &str) -> Vec<String> {
    h.store.iter().filter(|(_, t)| t.contains(needle)).map(|(p, _)| p.clone()).collect()
}

fn blob_file(text: &str) -> String {
    let hash = datanotes_core::edits::hash(text);
    format!("blobs/{}/{hash}", &hash[..2])
}

#[test]
fn point_11_a_big_note_is_stored_once_per_version_and_undo_reads_it_back() {
    let mut h = films();
    let original = h.notes[METROPOLIS].clone();
    // A body of 200 KB, each version marked so that its copies can be counted.
    let body = |mark: &str| format!("{mark}\n{}\n", "the city of the future. ".repeat(200_000 / 24));
    let a1 = h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "body": body("version one")}));
    let v1 = h.notes[METROPOLIS].clone();
    assert!(v1.len() > INLINE_MAX);
    let a2 = h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "body": body("version two")}));
    let v2 = h.notes[METROPOLIS].clone();

    // Each version's text is in one store file, its blob; the journal entries
    // name it by hash (the second entry's "before" is the first's "after").
    assert_eq!(holding(&h, "version one"), vec![blob_file(&v1)]);
    assert_eq!(holding(&h, "version two"), vec![blob_file(&v2)]);
    let entry = |id: &serde_json::Value| {
        let text = &h.store[&format!("journal/{}.json", id.as_str().unwrap())];
        serde_json::from_str::<serde_json::Value>(text).unwrap()
    };
    let e2 = entry(&a2["migration_id"]);
    assert_eq!(e2["changes"][0]["before"], json!(null));
    assert_eq!(e2["changes"][0]["before_blob"], json!(datanotes_core::edits::hash(&v1)));
    assert_eq!(e2["changes"][0]["after_blob"], json!(datanotes_core::edits::hash(&v2)));
    // A short text stays in the entry: Metropolis as the diary ships it.
    let e1 = entry(&a1["migration_id"]);
    assert_eq!(e1["changes"][0]["before"], json!(original));
    assert!(e1["changes"][0].get("before_blob").is_none());
    let stored: usize = h.store.values().map(String::len).sum();
    assert!(stored < 3 * v1.len(), "two versions of about 200 KB took {stored} bytes of store");

    // Undone after a restart (the blobs unread): the engine asks for them.
    h.e = h.disk.open(h.now);
    h.ok("undo_migration", json!({"migration_id": a2["migration_id"]}));
    assert!(h.notes[METROPOLIS] == v1, "back to version one");
    h.ok("undo_migration", json!({"migration_id": a1["migration_id"]}));
    assert!(h.notes[METROPOLIS] == original, "back to the diary's text");
}

#[test]
fn point_11_vacuum_keeps_the_blobs_the_journal_needs_and_a_lost_blob_is_a_clear_refusal() {
    let mut h = films();
    let big = format!("{}\n", "x".repeat(INLINE_MAX + 1));
    let a = h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "body": big}));
    let v1 = h.notes[METROPOLIS].clone();
    let mut ratings = vec![];
    for r in [1, 2, 3] {
        ratings.push(
            h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": r}}))["migration_id"]
                .clone(),
        );
    }
    // The log keeps the last version only: the big text is in no kept commit.
    let latest = h.ok("vacuum_table", json!({"table": "film"}))["retain_from_version"].as_u64().unwrap();
    let v = h.ok("vacuum_table", json!({"table": "film", "retain_from_version": latest, "dry_run": false}));
    assert!(v["blobs"].as_u64().unwrap() > 0, "{v}");
    assert!(h.store.contains_key(&blob_file(&v1)), "the journal's blob was kept");
    // And undo still has it: the three rating writes, then the big body.
    for id in ratings.iter().rev() {
        h.ok("undo_migration", json!({"migration_id": id}));
    }
    assert!(h.notes[METROPOLIS] == v1, "the rating writes undone");
    h.ok("undo_migration", json!({"migration_id": a["migration_id"]}));
    assert!(h.notes[METROPOLIS] == common::original(METROPOLIS), "the big body undone");

    // The blob lost (a sync tool, a hand): undo says what is missing and how out.
    let mut h2 = films();
    let b = h2.ok(
        "update_row",
        json!({"table": "film", "path": METROPOLIS, "body": format!("{}\n", "y".repeat(INLINE_MAX * 2))}),
    );
    let before_text = h2.notes[METROPOLIS].clone();
    h2.ok("update_row", json!({"table": "film", "path": METROPOLIS, "body": "short again\n"}));
    h2.store.remove(&blob_file(&before_text));
    h2.e = h2.disk.open(h2.now);
    let last = h2.ok("list_migrations", json!({"limit": 1}))["migrations"][0]["migration_id"].clone();
    let out = h2.call("undo_migration", json!({"migration_id": last}));
    assert_eq!(out.answer["ok"], false, "{}", out.answer);
    let error = out.answer["error"].as_str().unwrap();
    assert!(
        error.contains(&format!(
            "{METROPOLIS}: its text is gone from the store (.datanotes/{})",
            blob_file(&before_text)
        )),
        "{error}"
    );
    let _ = b;
}

/// Issue 52: a blob whose text is not the one its name says (forged, or
/// damaged) is read as absent wherever it is read: an undo of a long text
/// refuses rather than write it, and check_table tells of it.
#[test]
fn a_blob_whose_text_is_not_its_hash_is_never_written_back() {
    let mut h = films();
    h.ok(
        "update_row",
        json!({"table": "film", "path": METROPOLIS, "body": format!("{}\n", "y".repeat(INLINE_MAX * 2))}),
    );
    let before_text = h.notes[METROPOLIS].clone();
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "body": "short again\n"}));
    let now = h.notes[METROPOLIS].clone();
    h.store.insert(blob_file(&before_text), "---\ntable: main.public.film\ntitle: Forged\n---\n".into());
    h.e = h.disk.open(h.now);
    let last = h.ok("list_migrations", json!({"limit": 1}))["migrations"][0]["migration_id"].clone();
    let out = h.call("undo_migration", json!({"migration_id": last}));
    assert_eq!(out.answer["ok"], false, "{}", out.answer);
    assert!(out.answer["error"].as_str().unwrap().contains("its text is gone from the store"), "{}", out.answer);
    assert_eq!(h.notes[METROPOLIS], now, "nothing written");
    let checked = h.ok("check_table", json!({}));
    let told = checked["store_problems"].as_array().cloned().unwrap_or_default();
    assert!(told.iter().any(|l| l.as_str().unwrap().contains("does not match its hash")), "{checked}");
}
