//! Crash safety through the binary: a `datanotes call` killed in the middle of a
//! write leaves a pending journal entry that the next start reports and undoes.

mod common;

use common::{temp_path, BIN};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn note_path(vault: &Path, i: usize) -> PathBuf {
    vault.join(format!("datanotes/main/public/item/item-{i:05}.md"))
}

fn note_text(i: usize) -> String {
    format!("---\ntable: main.public.item\nid: 0190a000-0000-7000-8000-{i:012}\nname: item-{i:05}\nn: {i}\n---\nItem number {i}.\n")
}

/// A vault with one table of `rows` notes.
fn make_vault(dir: &Path, rows: usize) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("datanotes/main/public/item")).unwrap();
    std::fs::create_dir_all(dir.join(".datanotes")).unwrap();
    std::fs::write(
        dir.join("datanotes/metastore.yaml"),
        "version: 1\ntables:\n  main.public.item:\n    name_from: name\n    columns:\n      name: {type: text, required: true}\n      n: {type: integer}\n      flag: {type: text}\n",
    )
    .unwrap();
    // Written an hour ago, as a vault's notes are: the notes' cache trusts them,
    // so the call after the kill opens with their texts unread.
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    for i in 0..rows {
        std::fs::write(note_path(dir, i), note_text(i)).unwrap();
        std::fs::File::options().write(true).open(note_path(dir, i)).unwrap().set_modified(old).unwrap();
    }
}

fn call(vault: &Path, op: &str, args: &str) -> (Output, Value) {
    let out = Command::new(BIN).args(["call", "--vault", vault.to_str().unwrap(), op, args]).output().unwrap();
    let v = serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap_or(Value::Null);
    (out, v)
}

fn changed(vault: &Path, rows: usize) -> usize {
    (0..rows)
        .filter(|i| std::fs::read_to_string(note_path(vault, *i)).ok().as_deref() != Some(note_text(*i).as_str()))
        .count()
}

/// Starts update_rows on every row and kills it once the first note is
/// written; true when the kill landed mid-write.
fn kill_mid_write(vault: &Path, rows: usize) -> bool {
    let mut child = Command::new(BIN)
        .args([
            "call",
            "--vault",
            vault.to_str().unwrap(),
            "update_rows",
            r#"{"table": "item", "where": {}, "set": {"flag": "crashed"}}"#,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let first = note_path(vault, 0);
    let start = Instant::now();
    loop {
        if std::fs::read_to_string(&first).is_ok_and(|t| t.contains("flag: crashed")) {
            break;
        }
        if child.try_wait().unwrap().is_some() || start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let n = changed(vault, rows);
    n > 0 && n < rows
}

#[test]
fn a_write_killed_midway_is_listed_pending_and_undone() {
    let vault = temp_path("crash");
    let mut rows = 3000;
    let mut landed = false;
    for _ in 0..4 {
        make_vault(&vault, rows);
        if kill_mid_write(&vault, rows) {
            landed = true;
            break;
        }
        rows *= 2;
    }
    assert!(landed, "no kill landed mid-write, up to {rows} rows");
    let written = changed(&vault, rows);

    let (out, list) = call(&vault, "list_migrations", "{}");
    assert!(out.status.success(), "{list:#}");
    assert_eq!(list["total"], 1, "{list:#}");
    let entry = &list["migrations"][0];
    assert_eq!(entry["op"], "update_rows");
    assert_eq!(entry["status"], "pending");
    assert_eq!(entry["notes_changed"], rows);
    let id = entry["migration_id"].as_str().unwrap().to_string();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{id} (update item) was cut short before it finished"))
            && stderr.contains(&format!("undo_migration {{\"migration_id\": \"{id}\"}}")),
        "the next call warns of the pending write: {stderr}"
    );

    let (out, undo) = call(&vault, "undo_migration", &format!(r#"{{"migration_id": "{id}"}}"#));
    assert!(out.status.success(), "{undo:#}");
    assert_eq!(undo["notes_changed"], written, "only the notes written are put back");
    assert_eq!(changed(&vault, rows), 0, "every note back byte for byte");
    let _ = std::fs::remove_dir_all(&vault);
}

#[test]
fn an_undone_pending_write_is_no_longer_reported() {
    let vault = temp_path("crash2");
    let rows = 3000;
    make_vault(&vault, rows);
    let mut tries = 0;
    while !kill_mid_write(&vault, rows) {
        tries += 1;
        assert!(tries < 5, "no kill landed mid-write");
        make_vault(&vault, rows);
    }
    let (_, list) = call(&vault, "list_migrations", "{}");
    let id = list["migrations"][0]["migration_id"].as_str().unwrap().to_string();
    let (out, _) = call(&vault, "undo_migration", &format!(r#"{{"migration_id": "{id}"}}"#));
    assert!(out.status.success());
    let (out, list) = call(&vault, "list_migrations", "{}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir_all(&vault);
    assert!(!stderr.contains("cut short"), "{stderr}");
    assert!(list["migrations"][1].get("status").is_none(), "{list:#}");
}
