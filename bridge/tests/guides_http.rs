//! The flows of the guides, end to end over HTTP: the real binary's `serve` on a
//! temporary film diary (`datanotes init --example films`), on a free loopback
//! port, driven by a client made of a bare TCP stream. Each test is one guide:
//! journal and undo, hand edits made by writing files while it serves, table
//! history and restore. They check status codes, answers and the files on disk.

mod common;

use common::{call, op, snapshot, start, titles, vault, wait_until, Server};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const TOKEN: &str = "guides-http-token-3b9e5c1a7f20";

const FILM: &str = "datanotes/main/public/film";
const POTEMKIN: &str = "datanotes/main/public/film/Battleship Potemkin.md";
const POTEMKIN_ARCHIVED: &str = "datanotes/_archive/main/public/film/Battleship Potemkin.md";
const SHERLOCK: &str = "datanotes/main/public/film/Sherlock Jr..md";
const CHARADE: &str = "datanotes/main/public/film/Charade.md";
const GENERAL: &str = "datanotes/main/public/film/The General.md";
const NOSFERATU: &str = "datanotes/main/public/film/Nosferatu.md";
const SILENT: &str = "datanotes/main/public/genre/Silent film.md";
const SLAPSTICK: &str = "datanotes/main/public/genre/Slapstick comedy.md";
const KEATON: &str = "datanotes/main/public/person/Buster Keaton.md";
const LANG: &str = "datanotes/main/public/person/Fritz Lang.md";
const VIEWING: &str = "datanotes/main/public/watch/2026-09-25T2100.md";

const UNDO_HINT: &str = "Hint: Later changes touched the same notes: undo those first (list_migrations lists them, newest first), or change the rows with update_row.\nDocs: https://datanotes.dev/guides/history/journal-and-undo.md#undo-refuses-to-overwrite-later-changes (offline: read_docs(\"guides/history/journal-and-undo#undo-refuses-to-overwrite-later-changes\"))";

// ---------------------------------------------------------------- helpers

/// A write that must succeed: its migration_id.
fn write(s: &Server, name: &str, args: Value) -> String {
    let a = op(s, name, args);
    assert_eq!(a["ok"], true, "{name}: {a}");
    a["migration_id"].as_str().unwrap_or_else(|| panic!("{name}: no migration_id in {a}")).to_string()
}

/// The note files of the vault (the store, `.datanotes`, left out).
fn notes(vault: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut all = snapshot(vault, "");
    all.retain(|p, _| !p.starts_with('.'));
    all
}

/// Saves a note the way many editors and sync tools do: a temporary file beside
/// it, renamed into place, so that the watcher sees the new text at once.
fn save(path: &Path, text: &str) {
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    fs::write(&tmp, text).unwrap();
    fs::rename(&tmp, path).unwrap();
}

fn feed_head(s: &Server) -> u64 {
    op(s, "list_changes", json!({}))["head"].as_u64().unwrap_or(0)
}

/// Long-polls the change feed from `since` until `found` holds for the events
/// seen so far (hand edits close 0.7 s after the last change). Returns them.
fn wait_for_events(s: &Server, since: u64, args: Value, found: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let start = Instant::now();
    let mut seen: Vec<Value> = vec![];
    let mut at = since;
    loop {
        let mut a = args.clone();
        a["since"] = json!(at);
        a["wait_ms"] = json!(5000);
        let feed = op(s, "list_changes", a);
        let events = feed["events"].as_array().cloned().unwrap_or_default();
        if let Some(last) = feed["last"].as_u64() {
            at = at.max(last);
        }
        seen.extend(events);
        if found(&seen) {
            return seen;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for the feed; events since {since}: {seen:?}\nlog: {}",
            s.log()
        );
        // Events of other tables move the head without matching: do not spin.
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------- journal and undo

#[test]
fn journal_and_undo() {
    let s = start(&vault("journal"), Some(TOKEN));
    let original = notes(&s.vault);

    // A write to another table, which the table filter leaves out.
    let lang = write(&s, "update_row", json!({"table": "person", "path": LANG, "set": {"born": 1891}}));

    // Archive Battleship Potemkin.
    let a = op(&s, "delete_rows", json!({"table": "film", "where": {"title": "Battleship Potemkin"}}));
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["summary"], "archive 1 rows of film", "{a}");
    assert_eq!(a["files_changed"], 1, "{a}");
    assert_eq!(a["planned_edits"][0]["move_to"], POTEMKIN_ARCHIVED, "{a}");
    let delete = a["migration_id"].as_str().unwrap().to_string();
    assert!(!s.file(POTEMKIN).exists(), "archived: gone from its path");
    assert_eq!(fs::read(s.file(POTEMKIN_ARCHIVED)).unwrap(), original[POTEMKIN], "moved to the archive as it was");

    // list_migrations: newest first, filtered by table, limited, with who made each.
    let m = op(&s, "list_migrations", json!({"table": "film", "limit": 3}));
    assert_eq!(m["total"], 1, "{m}");
    let list = m["migrations"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{m}");
    let first = &list[0];
    for field in [
        "migration_id",
        "op",
        "summary",
        "table",
        "executed_at",
        "notes_changed",
        "files_changed",
        "undone",
        "files_failed",
        "by",
    ] {
        assert!(first.get(field).is_some(), "{field} in {first}");
    }
    assert_eq!(first["migration_id"], delete.as_str());
    assert_eq!(first["op"], "delete_rows");
    assert_eq!(first["summary"], "archive 1 rows of film");
    assert_eq!(first["table"], "main.public.film");
    assert_eq!(first["notes_changed"], 0);
    assert_eq!(first["files_changed"], 1);
    assert_eq!(first["undone"], false);
    assert_eq!(first["files_failed"], 0);
    assert_eq!(first["by"], "owner");
    assert!(first["executed_at"].as_str().is_some_and(|t| t.ends_with('Z')), "{first}");
    let m = op(&s, "list_migrations", json!({"limit": 1}));
    assert_eq!(m["total"], 2, "every table: {m}");
    assert_eq!(m["migrations"].as_array().unwrap().len(), 1, "limit 1: {m}");
    assert_eq!(m["migrations"][0]["migration_id"], delete.as_str(), "newest first: {m}");
    let m = op(&s, "list_migrations", json!({"table": "person"}));
    assert_eq!(m["total"], 1, "{m}");
    assert_eq!(m["migrations"][0]["migration_id"], lang.as_str(), "{m}");

    // Undo the archive: Battleship Potemkin is back, byte for byte.
    let u = op(&s, "undo_migration", json!({"migration_id": delete}));
    assert_eq!(u["ok"], true, "{u}");
    assert_eq!(u["op"], "undo_migration", "{u}");
    assert_eq!(u["undoes"], delete.as_str(), "{u}");
    assert_eq!(u["conflicts"], json!([]), "{u}");
    assert_eq!(u["failed"], json!([]), "{u}");
    let undo_delete = u["migration_id"].as_str().unwrap().to_string();
    let r = op(
        &s,
        "select_rows",
        json!({"table": "film", "columns": ["title"], "where": {"title": "Battleship Potemkin"}}),
    );
    assert_eq!(r["table"], "main.public.film", "{r}");
    assert_eq!(r["total"], 1, "{r}");
    assert_eq!(r["rows"][0]["path"], POTEMKIN, "{r}");
    assert_eq!(r["rows"][0]["title"], "Battleship Potemkin", "{r}");
    assert_eq!(fs::read(s.file(POTEMKIN)).unwrap(), original[POTEMKIN], "back at its path, byte for byte");
    assert!(!s.file(POTEMKIN_ARCHIVED).exists(), "out of the archive");
    let m = op(&s, "list_migrations", json!({"table": "film", "limit": 2}));
    assert_eq!(m["migrations"][0]["migration_id"], undo_delete.as_str(), "{m}");
    assert_eq!(m["migrations"][0]["undoes"], delete.as_str(), "{m}");
    assert_eq!(m["migrations"][1]["undone"], true, "{m}");

    // Undo refuses to overwrite later changes: the rating changed since.
    let three = write(&s, "update_row", json!({"table": "film", "path": SHERLOCK, "set": {"rating": 3}}));
    assert!(s.read(SHERLOCK).contains("\nrating: 3\n"));
    let four = write(&s, "update_row", json!({"table": "film", "path": SHERLOCK, "set": {"rating": 4}}));
    assert!(s.read(SHERLOCK).contains("\nrating: 4\n"));
    let before = snapshot(&s.vault, "");
    let r = call(&s, "undo_migration", json!({"migration_id": three}));
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(
        r.error(),
        format!(
            "undo_migration refused — nothing was written:\nconflict {SHERLOCK}: \"rating\" changed since the operation\n{UNDO_HINT}"
        )
    );
    assert_eq!(snapshot(&s.vault, ""), before, "a refused undo writes nothing");

    // The undo of an insert trashes the note only while it is as the insert left it.
    let a = op(&s, "insert_row", json!({"table": "film", "values": {"title": "The General", "year": 1926}}));
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["planned_edits"][0]["path"], GENERAL, "{a}");
    let insert = a["migration_id"].as_str().unwrap().to_string();
    assert!(s.file(GENERAL).exists());
    write(&s, "update_row", json!({"table": "film", "path": GENERAL, "body": "Buster Keaton drives a locomotive.\n"}));
    assert!(s.read(GENERAL).ends_with("---\nBuster Keaton drives a locomotive.\n"), "{}", s.read(GENERAL));
    let before = snapshot(&s.vault, "");
    let r = call(&s, "undo_migration", json!({"migration_id": insert}));
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(
        r.error(),
        format!(
            "undo_migration refused — nothing was written:\nconflict {GENERAL}: created note changed since the operation\n{UNDO_HINT}"
        )
    );
    assert_eq!(snapshot(&s.vault, ""), before, "a refused undo writes nothing");

    // An undo is a write too: undo it to redo. The later rating first...
    let u = op(&s, "undo_migration", json!({"migration_id": four}));
    assert_eq!(u["ok"], true, "{u}");
    assert!(s.read(SHERLOCK).contains("\nrating: 3\n"), "{}", s.read(SHERLOCK));
    let undo_four = u["migration_id"].as_str().unwrap().to_string();
    // ...then the undo of it: rating 4 again.
    let u = op(&s, "undo_migration", json!({"migration_id": undo_four}));
    assert_eq!(u["ok"], true, "{u}");
    assert_eq!(u["undoes"], undo_four.as_str(), "{u}");
    assert!(s.read(SHERLOCK).contains("\nrating: 4\n"), "{}", s.read(SHERLOCK));
    // And the archive, redone: Battleship Potemkin goes back to the archive.
    let u = op(&s, "undo_migration", json!({"migration_id": undo_delete}));
    assert_eq!(u["ok"], true, "{u}");
    let redo = u["migration_id"].as_str().unwrap().to_string();
    assert!(!s.file(POTEMKIN).exists());
    assert_eq!(fs::read(s.file(POTEMKIN_ARCHIVED)).unwrap(), original[POTEMKIN]);
    let r = op(&s, "select_rows", json!({"table": "film", "where": {"title": "Battleship Potemkin"}}));
    assert_eq!(r["total"], 0, "{r}");
    // An undo already undone is refused, with the way to redo it.
    let r = call(&s, "undo_migration", json!({"migration_id": undo_delete}));
    assert_eq!(r.status, 409, "{}", r.body);
    let err = r.error();
    assert!(err.starts_with("undo_migration refused — nothing was written:\n"), "{err}");
    assert!(err.contains(&format!("is undone already (by {redo})")), "{err}");
    assert!(err.contains(&format!("undo the undo: undo_migration {{\"migration_id\": \"{redo}\"}}")), "{err}");
}

// ---------------------------------------------------------------- hand edits while serving

#[test]
fn hand_edits_while_serving() {
    let s = start(&vault("hand"), Some(TOKEN));

    // Silent film turned into a top level by hand: kind cinema, with a parent.
    let head = op(&s, "list_changes", json!({"tables": ["genre"]}))["head"].as_u64().unwrap_or(0);
    let text = s.read(SILENT);
    assert!(text.contains("\nkind: era\n"), "{text}");
    save(&s.file(SILENT), &text.replace("\nkind: era\n", "\nkind: cinema\n"));
    let events = wait_for_events(&s, head, json!({"tables": ["genre"]}), |evs| evs.iter().any(|e| e["path"] == SILENT));
    let mine: Vec<&Value> = events.iter().filter(|e| e["path"] == SILENT).collect();
    assert_eq!(mine.len(), 1, "one event for one edit: {events:?}");
    let ev = mine[0];
    assert_eq!(ev["kind"], "update", "{ev}");
    assert_eq!(ev["source"], "external", "{ev}");
    assert_eq!(ev["table"], "main.public.genre", "{ev}");
    assert_eq!(ev["changes"], json!({"kind": {"before": "era", "after": "cinema"}}), "{ev}");
    let violations = ev["violations"].as_array().unwrap_or_else(|| panic!("no violations: {ev}"));
    let of = |path: &str| -> Vec<Value> {
        violations
            .iter()
            .find(|v| v["path"] == path)
            .and_then(|v| v["violations"].as_array().cloned())
            .unwrap_or_else(|| panic!("no violations of {path}: {ev}"))
    };
    let own = of(SILENT);
    assert_eq!(own.len(), 1, "{ev}");
    assert_eq!(own[0]["code"], "check", "{ev}");
    assert_eq!(own[0]["constraint"], "parent_by_level", "{ev}");
    let msg = own[0]["message"].as_str().unwrap();
    assert!(msg.starts_with("violates CHECK parent_by_level"), "{msg}");
    assert!(!msg.contains("after the edit of"), "{msg}");
    let child = of(SLAPSTICK);
    assert_eq!(child[0]["code"], "check", "{ev}");
    assert_eq!(child[0]["constraint"], "parent_by_level", "{ev}");
    let msg = child[0]["message"].as_str().unwrap();
    assert!(msg.starts_with("violates CHECK parent_by_level"), "{msg}");
    assert!(msg.ends_with("(after the edit of [[Silent film]], a row it links to)"), "{msg}");
    // The film diary has two more genres under Silent film.
    let mut paths: Vec<&str> = violations.iter().map(|v| v["path"].as_str().unwrap()).collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "datanotes/main/public/genre/Expressionism.md",
            SILENT,
            SLAPSTICK,
            "datanotes/main/public/genre/Soviet montage.md"
        ],
        "{ev}"
    );
    // The rows stay as written.
    assert!(s.read(SILENT).contains("\nkind: cinema\n"));
    // The table's log has the hand edit, with the rules it broke counted.
    let h = op(&s, "describe_history", json!({"table": "genre", "limit": 1}));
    assert_eq!(h["history"][0]["operation"], "EXTERNAL_EDIT", "{h}");
    assert_eq!(h["history"][0]["operation_metrics"]["violations"], 4, "{h}");

    // check_table without a table: every table, the rows invalid now.
    let c = op(&s, "check_table", json!({}));
    assert_eq!(c["table"], Value::Null, "{c}");
    assert_eq!(c["tables_checked"], 4, "{c}");
    assert_eq!(c["total"], 4, "{c}");
    let listed = c["violations"].as_array().unwrap();
    for path in [SILENT, SLAPSTICK] {
        let row = listed.iter().find(|v| v["path"] == path).unwrap_or_else(|| panic!("{path} in {c}"));
        assert_eq!(row["table"], "main.public.genre", "{c}");
        assert_eq!(row["violations"][0]["constraint"], "parent_by_level", "{c}");
        assert_eq!(row["violations"][0]["code"], "check", "{c}");
    }

    // Fixed through the engine.
    let a = op(&s, "update_row", json!({"table": "genre", "path": SILENT, "set": {"kind": "era"}}));
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(a["commits"][0]["table"], "main.public.genre", "{a}");
    assert_eq!(a["commits"][0]["operation"], "UPDATE", "{a}");
    assert!(s.read(SILENT).contains("\nkind: era\n"));
    let c = op(&s, "check_table", json!({}));
    assert_eq!(c["total"], 0, "{c}");

    // A plain note renamed by hand: once the vault is quiet for 4 s, the engine
    // rewrites the links to it, in one journaled operation.
    assert!(s.read(VIEWING).contains("Part of [[Film night]]."));
    let head = feed_head(&s);
    fs::rename(s.file("Notes/Film night.md"), s.file("Notes/Friday film night.md")).unwrap();
    let newest = |s: &Server| op(s, "list_migrations", json!({"limit": 1}))["migrations"][0].clone();
    wait_until("the link repair", Duration::from_secs(30), || newest(&s)["op"] == "repair_links");
    let repair = newest(&s);
    assert_eq!(
        repair["summary"], "repair the links after the hand move of Notes/Film night.md to Notes/Friday film night.md",
        "{repair}"
    );
    assert_eq!(repair["by"], "engine", "{repair}");
    let viewing = s.read(VIEWING);
    assert!(viewing.contains("Part of [[Friday film night]]. Four of us"), "{viewing}");
    assert!(!viewing.contains("[[Film night]]"), "{viewing}");
    // The feed has the move, then the repair's change with the move as its cause.
    let events = wait_for_events(&s, head, json!({}), |evs| evs.iter().any(|e| e["op"] == "repair_links"));
    let mv = events.iter().find(|e| e["kind"] == "move").unwrap_or_else(|| panic!("{events:?}"));
    assert_eq!(mv["source"], "external", "{mv}");
    assert_eq!(mv["path"], "Notes/Friday film night.md", "{mv}");
    assert_eq!(mv["old_path"], "Notes/Film night.md", "{mv}");
    let fix = events.iter().find(|e| e["op"] == "repair_links").unwrap();
    assert_eq!(fix["path"], VIEWING, "{fix}");
    assert_eq!(fix["source"], "engine", "{fix}");
    assert_eq!(fix["migration_id"], repair["migration_id"], "{fix}");
    assert_eq!(fix["cause"][0]["old_path"], "Notes/Film night.md", "{fix}");
    assert_eq!(fix["cause"][0]["seq"], mv["seq"], "{fix}");
    // undo_migration takes the repair back.
    let u = op(&s, "undo_migration", json!({"migration_id": repair["migration_id"]}));
    assert_eq!(u["ok"], true, "{u}");
    assert!(s.read(VIEWING).contains("Part of [[Film night]]."), "{}", s.read(VIEWING));

    // A title with a colon breaks Sherlock Jr.'s YAML: the row can't be read.
    let head = feed_head(&s);
    let text = s.read(SHERLOCK);
    assert!(text.contains("\ntitle: Sherlock Jr.\n"), "{text}");
    save(&s.file(SHERLOCK), &text.replace("\ntitle: Sherlock Jr.\n", "\ntitle: Sherlock Jr.: the projectionist\n"));
    let events = wait_for_events(&s, head, json!({"tables": ["film"], "kinds": ["unreadable"]}), |evs| !evs.is_empty());
    let ev = &events[0];
    assert_eq!(ev["kind"], "unreadable", "{ev}");
    assert_eq!(ev["path"], SHERLOCK, "{ev}");
    assert_eq!(ev["violations"][0]["path"], SHERLOCK, "{ev}");
    assert_eq!(ev["violations"][0]["violations"][0]["code"], "unreadable", "{ev}");
    let msg = ev["violations"][0]["violations"][0]["message"].as_str().unwrap();
    assert!(msg.starts_with("the front matter cannot be read, so the row is left out of every read: "), "{msg}");
    // check_table lists it, with the rows that break the schema.
    let c = op(&s, "check_table", json!({"table": "film"}));
    assert_eq!(c["total"], 1, "{c}");
    assert_eq!(c["violations"][0]["path"], SHERLOCK, "{c}");
    assert_eq!(c["violations"][0]["violations"][0]["code"], "unreadable", "{c}");
    // describe_database counts it apart from row_count.
    let d = op(&s, "describe_database", json!({}));
    let film = d["tables"].as_array().unwrap().iter().find(|t| t["name"] == "film").cloned().unwrap();
    assert_eq!(film["qualified"], "main.public.film", "{film}");
    assert_eq!(film["row_count"], 6, "{film}");
    assert_eq!(film["unreadable_count"], 1, "{film}");
    // Every read leaves it out.
    let r = op(
        &s,
        "select_rows",
        json!({"table": "film", "columns": ["title"], "where": {"title": {"contains": "Sherlock"}}}),
    );
    assert_eq!(r["total"], 0, "{r}");

    // Quoting the title fixes the note: the row is back.
    let head = feed_head(&s);
    let text = s.read(SHERLOCK);
    save(
        &s.file(SHERLOCK),
        &text.replace("\ntitle: Sherlock Jr.: the projectionist\n", "\ntitle: \"Sherlock Jr.: the projectionist\"\n"),
    );
    let events =
        wait_for_events(&s, head, json!({"tables": ["film"]}), |evs| evs.iter().any(|e| e["path"] == SHERLOCK));
    let ev = events.iter().find(|e| e["path"] == SHERLOCK).unwrap();
    assert_eq!(ev["kind"], "update", "{ev}");
    assert_eq!(
        ev["changes"]["title"],
        json!({"before": "Sherlock Jr.", "after": "Sherlock Jr.: the projectionist"}),
        "the fix reads as an update from the last readable values: {ev}"
    );
    let r = op(
        &s,
        "select_rows",
        json!({"table": "film", "columns": ["title"], "where": {"title": {"contains": "Sherlock"}}}),
    );
    assert_eq!(r["total"], 1, "{r}");
    assert_eq!(r["rows"][0]["path"], SHERLOCK, "{r}");
    assert_eq!(r["rows"][0]["title"], "Sherlock Jr.: the projectionist", "{r}");
    let d = op(&s, "describe_database", json!({}));
    let film = d["tables"].as_array().unwrap().iter().find(|t| t["name"] == "film").cloned().unwrap();
    assert_eq!(film["row_count"], 7, "{film}");
    assert_eq!(film["unreadable_count"], 0, "{film}");
    assert_eq!(op(&s, "check_table", json!({}))["total"], 0);
}

/// The same edit seen twice before its batch closes (an editor that saves twice,
/// or a plain in-place write whose truncation and write the watcher reports
/// apart) must still be one event, with what it breaks.
#[test]
fn a_hand_edit_saved_twice_is_one_event_with_its_violations() {
    let s = start(&vault("twice"), Some(TOKEN));
    let head = feed_head(&s);
    let text = s.read(SILENT).replace("\nkind: era\n", "\nkind: cinema\n");
    fs::write(s.file(SILENT), &text).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    fs::write(s.file(SILENT), &text).unwrap();
    let events = wait_for_events(&s, head, json!({"tables": ["genre"]}), |evs| evs.iter().any(|e| e["path"] == SILENT));
    // Let the batch close for sure, then read all it reported.
    std::thread::sleep(Duration::from_millis(1500));
    let feed = op(&s, "list_changes", json!({"since": head, "tables": ["genre"]}));
    let all = feed["events"].as_array().unwrap();
    assert!(all.len() >= events.len());
    let mine: Vec<&Value> = all.iter().filter(|e| e["path"] == SILENT).collect();
    assert_eq!(mine.len(), 1, "one event for the edit: {all:?}");
    assert_eq!(mine[0]["changes"], json!({"kind": {"before": "era", "after": "cinema"}}), "{}", mine[0]);
    assert_eq!(mine[0]["violations"].as_array().map(Vec::len), Some(4), "{}", mine[0]);
    let h = op(&s, "describe_history", json!({"table": "genre", "limit": 1}));
    assert_eq!(h["history"][0]["operation_metrics"]["violations"], 4, "{h}");
}

// ---------------------------------------------------------------- history and restore

#[test]
fn history_and_restore() {
    let s = start(&vault("history"), Some(TOKEN));
    let original = notes(&s.vault);
    let h = op(&s, "describe_history", json!({"table": "film"}));
    assert_eq!(h["table"], "main.public.film", "{h}");
    let found = h["history"].as_array().unwrap();
    assert_eq!(found.len(), 1, "the log begins at the open, with the table as found: {h}");
    assert_eq!((found[0]["version"].as_u64(), found[0]["operation"].as_str()), (Some(0), Some("CONVERT")), "{h}");

    // A few writes.
    let rate = write(&s, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 3}}));
    let at_v1 = snapshot(&s.vault, FILM);
    let insert = write(&s, "insert_row", json!({"table": "film", "values": {"title": "The General", "year": 1926}}));
    let delete = write(&s, "delete_rows", json!({"table": "film", "where": {"title": "Nosferatu"}}));
    assert!(s.file(GENERAL).exists() && !s.file(NOSFERATU).exists());

    // The versions, newest first, each with the migration that made it.
    let h = op(&s, "describe_history", json!({"table": "film"}));
    let versions = h["history"].as_array().unwrap();
    let col = |k: &str| versions.iter().map(|v| v[k].clone()).collect::<Vec<_>>();
    assert_eq!(col("version"), [json!(3), json!(2), json!(1), json!(0)], "{h}");
    assert_eq!(col("operation"), [json!("DELETE"), json!("WRITE"), json!("UPDATE"), json!("CONVERT")], "{h}");
    assert_eq!(col("migration_id"), [json!(delete), json!(insert), json!(rate), Value::Null], "{h}");
    assert_eq!(versions[0]["operation_metrics"], json!({"rows_inserted": 0, "rows_updated": 0, "rows_deleted": 1}));
    assert_eq!(versions[1]["operation_metrics"], json!({"rows_inserted": 1, "rows_updated": 0, "rows_deleted": 0}));
    assert_eq!(versions[2]["operation_metrics"], json!({"rows_inserted": 0, "rows_updated": 1, "rows_deleted": 0}));
    assert_eq!(versions[3]["operation_metrics"], json!({"rows": 7}));
    assert!(versions.iter().all(|v| v["timestamp"].as_str().is_some_and(|t| t.ends_with('Z'))), "{h}");
    let h = op(&s, "describe_history", json!({"table": "film", "limit": 2}));
    assert_eq!(h["history"].as_array().unwrap().len(), 2, "{h}");

    // Time travel: the table at version 1, and now.
    let args = |v: Option<u64>| {
        let mut a = json!({"table": "film", "columns": ["title", "rating"], "order_by": "title"});
        if let Some(v) = v {
            a["version"] = json!(v);
        }
        a
    };
    let then = op(&s, "select_rows", args(Some(1)));
    assert_eq!(then["version"], 1, "{then}");
    assert_eq!(
        titles(&then),
        [
            "Battleship Potemkin",
            "Charade",
            "His Girl Friday",
            "Metropolis",
            "Nosferatu",
            "Sherlock Jr.",
            "The Gold Rush"
        ]
    );
    let charade =
        |a: &Value| a["rows"].as_array().unwrap().iter().find(|r| r["title"] == "Charade").unwrap()["rating"].clone();
    assert_eq!(charade(&then), 3, "{then}");
    assert_eq!(charade(&op(&s, "select_rows", args(Some(0)))), 5, "version 0: the table before its log began");
    let now = op(&s, "select_rows", args(None));
    assert_eq!(
        titles(&now),
        [
            "Battleship Potemkin",
            "Charade",
            "His Girl Friday",
            "Metropolis",
            "Sherlock Jr.",
            "The General",
            "The Gold Rush"
        ]
    );

    // What changed between versions 1 and 3.
    let c = op(&s, "table_changes", json!({"table": "film", "start_version": 1, "end_version": 3}));
    assert_eq!(c["start_version"], 1, "{c}");
    assert_eq!(c["end_version"], 3, "{c}");
    let changes = c["changes"].as_array().unwrap();
    let summary: Vec<(String, u64, String, String)> = changes
        .iter()
        .map(|x| {
            (
                x["_change_type"].as_str().unwrap().to_string(),
                x["_commit_version"].as_u64().unwrap(),
                x["_operation"].as_str().unwrap().to_string(),
                x["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let e = |t: &str, v: u64, o: &str, p: &str| (t.to_string(), v, o.to_string(), p.to_string());
    assert_eq!(
        summary,
        [
            e("update_preimage", 1, "UPDATE", CHARADE),
            e("update_postimage", 1, "UPDATE", CHARADE),
            e("insert", 2, "WRITE", GENERAL),
            e("delete", 3, "DELETE", NOSFERATU),
        ],
        "{c}"
    );
    assert_eq!(changes[0]["rating"], 5, "{c}");
    assert_eq!(changes[1]["rating"], 3, "{c}");
    assert_eq!(changes[2]["title"], "The General", "{c}");
    assert_eq!(changes[3]["title"], "Nosferatu", "{c}");
    assert!(changes.iter().all(|x| x["_commit_timestamp"].is_string()), "{c}");

    // restore_table, dry run first: the plan, and nothing written.
    let before = snapshot(&s.vault, "");
    let d = op(&s, "restore_table", json!({"table": "film", "version": 1, "dry_run": true}));
    assert_eq!(d["ok"], true, "{d}");
    assert_eq!(d["dry_run"], true, "{d}");
    assert_eq!(d["restored_to"], 1, "{d}");
    assert_eq!((d["creates"].clone(), d["deletes"].clone(), d["texts"].clone()), (json!(1), json!(1), json!(0)), "{d}");
    assert!(d.get("migration_id").is_none(), "{d}");
    let mut planned: Vec<String> =
        d["planned_edits"].as_array().unwrap().iter().map(|p| p["path"].as_str().unwrap().to_string()).collect();
    planned.sort();
    assert_eq!(planned, [NOSFERATU, GENERAL], "{d}");
    assert_eq!(snapshot(&s.vault, ""), before, "a dry run writes nothing, not even in the store");

    // For real: the film folder is as it was at version 1, byte for byte.
    let r = op(&s, "restore_table", json!({"table": "film", "version": 1}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["commits"], json!([{"table": "main.public.film", "version": 4, "operation": "RESTORE"}]), "{r}");
    let restore = r["migration_id"].as_str().unwrap().to_string();
    assert_eq!(snapshot(&s.vault, FILM), at_v1, "the rows as at version 1");
    assert!(s.file("datanotes/_archive/main/public/film/The General.md").exists(), "a row added since is archived");
    let rows = op(&s, "select_rows", args(None));
    assert_eq!(titles(&rows), titles(&then));
    assert_eq!(charade(&rows), 3);
    let h = op(&s, "describe_history", json!({"table": "film", "limit": 1}));
    assert_eq!(h["history"][0]["operation"], "RESTORE", "{h}");
    assert_eq!(h["history"][0]["migration_id"], restore.as_str(), "{h}");

    // The restore is journaled: undo_migration reverts it.
    let u = op(&s, "undo_migration", json!({"migration_id": restore}));
    assert_eq!(u["ok"], true, "{u}");
    assert_eq!(u["undoes"], restore.as_str(), "{u}");
    assert!(s.file(GENERAL).exists(), "The General is back");
    assert!(!s.file(NOSFERATU).exists(), "Nosferatu archived again");
    assert_eq!(titles(&op(&s, "select_rows", args(None))), titles(&now));
    let h = op(&s, "describe_history", json!({"table": "film", "limit": 1}));
    assert_eq!(h["history"][0]["version"], 5, "{h}");
    assert_eq!(h["history"][0]["operation"], "UNDO", "{h}");

    // restore_database before a migration: every table as it was just before it.
    let born = write(&s, "update_row", json!({"table": "person", "path": KEATON, "set": {"born": 1896}}));
    assert!(s.read(KEATON).contains("\nborn: 1896\n"));
    let before = snapshot(&s.vault, "");
    let d = op(&s, "restore_database", json!({"before_migration": rate, "dry_run": true}));
    assert_eq!(d["ok"], true, "{d}");
    assert_eq!(d["dry_run"], true, "{d}");
    assert_eq!(d["restored_to"], format!("before {rate}"), "{d}");
    assert_eq!(d["tables"]["main.public.film"]["action"], "restore", "{d}");
    assert_eq!(d["tables"]["main.public.person"]["action"], "restore", "{d}");
    assert_eq!(d["unchanged"], json!(["main.public.genre", "main.public.watch"]), "{d}");
    assert_eq!(d["skipped"], json!([]), "{d}");
    assert_eq!(snapshot(&s.vault, ""), before, "a dry run writes nothing");
    let r = op(&s, "restore_database", json!({"before_migration": rate}));
    assert_eq!(r["ok"], true, "{r}");
    let rewind = r["migration_id"].as_str().unwrap().to_string();
    let mut committed: Vec<(String, String)> = r["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["table"].as_str().unwrap().to_string(), c["operation"].as_str().unwrap().to_string()))
        .collect();
    committed.sort();
    assert_eq!(
        committed,
        [
            ("main.public.film".to_string(), "RESTORE".to_string()),
            ("main.public.person".to_string(), "RESTORE".to_string())
        ],
        "{r}"
    );
    // Every note of the tables is as `init` made it; the archive keeps its copies.
    let mut now_notes = notes(&s.vault);
    now_notes.retain(|p, _| !p.starts_with("datanotes/_archive/"));
    assert_eq!(now_notes, original, "the vault as before the first write");
    // One operation: its commits share the migration_id, across tables.
    let all = op(&s, "describe_history", json!({"limit": 2}));
    let newest = all["history"].as_array().unwrap();
    assert_eq!(newest.len(), 2, "{all}");
    let mut tables: Vec<&str> = newest.iter().map(|c| c["table"].as_str().unwrap()).collect();
    tables.sort();
    assert_eq!(tables, ["main.public.film", "main.public.person"], "{all}");
    assert!(newest.iter().all(|c| c["operation"] == "RESTORE" && c["migration_id"] == rewind.as_str()), "{all}");
    // Undone in one go: both tables come back.
    let u = op(&s, "undo_migration", json!({"migration_id": rewind}));
    assert_eq!(u["ok"], true, "{u}");
    assert!(s.read(KEATON).contains("\nborn: 1896\n"), "{}", s.read(KEATON));
    assert!(s.read(CHARADE).contains("\nrating: 3\n"), "{}", s.read(CHARADE));
    assert!(s.file(GENERAL).exists() && !s.file(NOSFERATU).exists());
    let m = op(&s, "list_migrations", json!({"limit": 3}));
    let ids: Vec<&str> =
        m["migrations"].as_array().unwrap().iter().map(|x| x["migration_id"].as_str().unwrap()).collect();
    assert_eq!(ids[1..], [rewind.as_str(), born.as_str()], "{m}");
    assert_eq!(m["migrations"][1]["undone"], true, "{m}");
}
