//! Table history on the film diary: the commits every write makes, describe_history,
//! time travel, table_changes, restore_table, restore_database, vacuum_table and
//! checkpoints, and the property test of issue 4. Time is driven by the test.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{applying, done, original, Disk, Host, Rng, T0};
use datanotes_core::{Apply, EditError, Status, Step};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

const FILM: &str = "main.public.film";
const GENRE: &str = "main.public.genre";
const WATCH: &str = "main.public.watch";
const PERSON: &str = "main.public.person";

const CHARADE: &str = "datanotes/main/public/film/Charade.md";
const METROPOLIS: &str = "datanotes/main/public/film/Metropolis.md";
const NOSFERATU: &str = "datanotes/main/public/film/Nosferatu.md";

impl Host {
    fn films() -> Host {
        let mut h = Host { step: 1000, ..Host::new(Disk::films(), T0) };
        h.reopen();
        h
    }

    /// A fresh engine on the disk: notes read, the store listed with the log's
    /// files and the blobs unread (the engine asks for those it needs).
    fn reopen(&mut self) {
        self.e = self.disk.open(self.now);
    }

    /// Runs an operation one second after the last, answering Need, until the
    /// answer before the edits (Apply) or the final one.
    fn start(&mut self, op: &str, args: &Value) -> Apply {
        self.now += self.step;
        let a = applying(self.disk.ask(&mut self.e, "test", op, args, self.now));
        self.keep(&a.store);
        a
    }

    /// A call that must fail with `status`, leaving the notes and the log as they
    /// were: its answer.
    fn fails(&mut self, status: Status, op: &str, args: Value) -> Value {
        let (notes, logs) = (self.notes.clone(), self.log_files());
        let out = self.call(op, args.clone());
        assert_eq!(out.status, status, "{op} {args}: {}", out.answer);
        assert_eq!(out.answer["ok"], false, "{}", out.answer);
        assert_eq!(self.notes, notes, "{op} {args} changed notes");
        assert_eq!(self.log_files(), logs, "{op} {args} changed the log");
        out.answer
    }

    fn refused(&mut self, op: &str, args: Value) -> String {
        self.fails(Status::Refused, op, args)["error"].as_str().unwrap().to_string()
    }

    fn bad(&mut self, op: &str, args: Value) -> String {
        self.fails(Status::BadInput, op, args)["error"].as_str().unwrap().to_string()
    }

    /// select_rows: every column, by path, all rows.
    fn rows_with(&mut self, table: &str, extra: Value) -> Vec<Value> {
        let mut args = json!({"table": table, "order_by": "path", "limit": 10000});
        args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let a = self.ok("select_rows", args);
        a["rows"].as_array().unwrap().clone()
    }

    fn rows(&mut self, table: &str) -> Vec<Value> {
        self.rows_with(table, json!({}))
    }

    fn rows_at(&mut self, table: &str, version: u64) -> Vec<Value> {
        self.rows_with(table, json!({"version": version}))
    }

    /// The log's files (commits and checkpoints), all tables.
    fn log_files(&self) -> Vec<String> {
        self.store.keys().filter(|p| p.starts_with("log/")).cloned().collect()
    }

    /// The versions committed to a table, from its log's files.
    fn versions(&self, table: &str) -> Vec<u64> {
        let dir = format!("log/{table}/");
        self.store.keys().filter_map(|p| p.strip_prefix(&dir)?.strip_suffix(".json")?.parse().ok()).collect()
    }

    fn commit(&self, table: &str, v: u64) -> Value {
        let p = format!("log/{table}/{v:020}.json");
        serde_json::from_str(self.store.get(&p).unwrap_or_else(|| panic!("no {p}"))).unwrap()
    }

    /// describe_history of one table: (version, operation), newest first.
    fn history(&mut self, table: &str) -> Vec<(u64, String)> {
        let a = self.ok("describe_history", json!({"table": table, "limit": 1000}));
        a["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["version"].as_u64().unwrap(), c["operation"].as_str().unwrap().to_string()))
            .collect()
    }

    fn latest(&self, table: &str) -> u64 {
        *self.versions(table).last().unwrap()
    }

    fn iso(&self, ms: i64) -> String {
        datanotes_core::time::iso(ms)
    }
}

/// A write's `commits`: (table, version, operation).
fn commits(answer: &Value) -> Vec<(String, u64, String)> {
    answer["commits"]
        .as_array()
        .unwrap_or_else(|| panic!("no commits in {answer}"))
        .iter()
        .map(|c| {
            (
                c["table"].as_str().unwrap().to_string(),
                c["version"].as_u64().unwrap(),
                c["operation"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn c(table: &str, version: u64, op: &str) -> (String, u64, String) {
    (table.to_string(), version, op.to_string())
}

/// Rows without `_version` (a hash of the note's text that reads of the latest
/// version carry and time travel does not).
fn bare(rows: &[Value]) -> Vec<Value> {
    rows.iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("_version");
            r
        })
        .collect()
}

fn paths(rows: &[Value]) -> Vec<String> {
    rows.iter().map(|r| r["path"].as_str().unwrap().to_string()).collect()
}

fn film_path(title: &str) -> String {
    format!("datanotes/main/public/film/{title}.md")
}

// 1. Every write that changes a table commits a version.

#[test]
fn every_write_commits_a_version_named_by_its_operation() {
    let mut h = Host::films();
    // The first open begins the log of each table kept with history: version 0
    // (CONVERT) holds the table as found; the first write is version 1.
    let begun: Vec<String> = h.log_files().into_iter().filter(|p| p.starts_with(&format!("log/{FILM}/"))).collect();
    assert_eq!(begun, [format!("log/{FILM}/{:020}.checkpoint.json", 0), format!("log/{FILM}/{:020}.json", 0)]);
    let a = h.ok("update_row", json!({"table": "film", "path": NOSFERATU, "set": {"status": "watched"}}));
    assert_eq!(commits(&a), vec![c(FILM, 1, "UPDATE")]);
    let v0 = h.commit(FILM, 0);
    assert_eq!(v0["operation"], "CONVERT");
    assert_eq!(v0["operation_metrics"], json!({"rows": 7}));
    assert_eq!(v0["migration_id"], Value::Null);
    let actions = v0["actions"].as_array().unwrap();
    assert!(actions[0]["metadata"]["definition"]["columns"]["title"].is_object(), "{v0}");
    let added: Vec<&str> = actions[1..].iter().map(|x| x["add"]["path"].as_str().unwrap()).collect();
    assert_eq!(added.len(), 7);
    assert!(added.contains(&NOSFERATU));
    // Version 0 keeps Nosferatu as it was: its blob is the text before the update.
    let nosferatu_v0 = actions.iter().find(|x| x["add"]["path"] == NOSFERATU).unwrap()["add"]["blob"].clone();
    let original = original(NOSFERATU);
    let blob = nosferatu_v0.as_str().unwrap();
    assert_eq!(h.store[&format!("blobs/{}/{blob}", &blob[..2])], original);
    assert!(h.store.contains_key(&format!("log/{FILM}/00000000000000000000.checkpoint.json")));
    let v1 = h.commit(FILM, 1);
    assert_eq!(v1["migration_id"], a["migration_id"]);
    assert_eq!(v1["operation_metrics"], json!({"rows_inserted": 0, "rows_updated": 1, "rows_deleted": 0}));
    assert_eq!(v1["actions"].as_array().unwrap().len(), 1);
    assert_eq!(v1["actions"][0]["add"]["path"], NOSFERATU);
    assert_eq!(h.versions(GENRE), vec![0], "a table the write left alone stays at the version found");

    let a = h.ok("insert_row", json!({"table": "film", "values": {"title": "Sunrise", "year": 1927}}));
    assert_eq!(commits(&a), vec![c(FILM, 2, "WRITE")]);
    assert_eq!(
        h.commit(FILM, 2)["operation_metrics"],
        json!({"rows_inserted": 1, "rows_updated": 0, "rows_deleted": 0})
    );
    let a = h.ok("delete_rows", json!({"table": "film", "paths": [film_path("Sunrise")]}));
    assert_eq!(commits(&a), vec![c(FILM, 3, "DELETE")]);
    assert_eq!(h.commit(FILM, 3)["actions"], json!([{"remove": {"path": film_path("Sunrise"), "id": null}}]));
    let a = h.ok(
        "merge_rows",
        json!({"table": "film", "key": ["title"], "rows": [{"title": "Nosferatu", "rating": 4}, {"title": "Faust", "year": 1926}]}),
    );
    assert_eq!(commits(&a), vec![c(FILM, 4, "MERGE")]);
    assert_eq!(
        h.commit(FILM, 4)["operation_metrics"],
        json!({"rows_inserted": 1, "rows_updated": 1, "rows_deleted": 0})
    );
    let a = h.ok("add_column", json!({"table": "film", "column": "country", "definition": {"type": "text"}}));
    assert_eq!(commits(&a), vec![c(FILM, 5, "ADD COLUMNS")]);
    let v5 = h.commit(FILM, 5);
    assert_eq!(v5["actions"][0]["metadata"]["definition"]["columns"]["country"], json!({"type": "text"}), "{v5}");
    let a = h.ok("add_check", json!({"table": "film", "name": "old", "check": {"year": {"lt": 2000}}}));
    assert_eq!(commits(&a), vec![c(FILM, 6, "ALTER TABLE")]);
    let a = h.ok(
        "batch",
        json!({"operations": [
            {"op": "update_row", "args": {"table": "film", "path": CHARADE, "set": {"rating": 4}}},
            {"op": "update_row", "args": {"table": "film", "path": METROPOLIS, "set": {"rating": 4}}},
        ]}),
    );
    assert_eq!(commits(&a), vec![c(FILM, 7, "BATCH")]);
    let batch = a["migration_id"].clone();
    assert_eq!(h.commit(FILM, 7)["batch"], batch);
    assert_eq!(h.commit(FILM, 7)["operation_metrics"]["rows_updated"], 2);
    let a = h.ok("undo_migration", json!({"migration_id": batch}));
    assert_eq!(commits(&a), vec![c(FILM, 8, "UNDO")]);
    let a = h.ok("restore_table", json!({"table": "film", "version": 1}));
    assert_eq!(commits(&a), vec![c(FILM, 9, "RESTORE")]);

    // describe_history, oldest first here: versions 0 to 9, one per write.
    let mut hist = h.history("film");
    hist.reverse();
    assert_eq!(hist.iter().map(|(v, _)| *v).collect::<Vec<_>>(), (0..=9).collect::<Vec<u64>>());
    let ops =
        ["CONVERT", "UPDATE", "WRITE", "DELETE", "MERGE", "ADD COLUMNS", "ALTER TABLE", "BATCH", "UNDO", "RESTORE"];
    assert_eq!(hist.iter().map(|(_, o)| o.as_str()).collect::<Vec<_>>(), ops);
}

#[test]
fn recompute_create_and_drop_table_commit_versions() {
    let mut h = Host::films();
    // A label left stale by hand while no engine ran: the edit is version 1.
    let w = "datanotes/main/public/watch/2026-10-08T1930.md";
    let stale = h.notes[w].replace("label: Metropolis (08/10 19:30, cinema)", "label: Metropolis");
    h.notes.insert(w.into(), stale.clone());
    h.reopen();
    assert_eq!(h.commit(WATCH, 1)["operation"], "EXTERNAL_EDIT");
    let a = h.ok("recompute_columns", json!({"table": "watch"}));
    assert_eq!(commits(&a), vec![c(WATCH, 2, "RECOMPUTE")]);
    assert_eq!(h.commit(WATCH, 0)["operation"], "CONVERT");
    let a = h.ok("read_note", json!({"path": w, "version": 1}));
    assert_eq!(a["text"], stale.as_str(), "version 1 holds the stale label");

    // A new table's log starts at its creation: version 0 is CREATE TABLE.
    let a = h.ok(
        "create_table",
        json!({"table": "review", "name_from": "title", "columns": {"title": {"type": "text", "required": true}, "film": {"type": "link", "table": "film"}}}),
    );
    assert_eq!(commits(&a), vec![c("main.public.review", 0, "CREATE TABLE")]);
    let v0 = h.commit("main.public.review", 0);
    assert_eq!(v0["actions"].as_array().unwrap().len(), 1);
    assert_eq!(v0["actions"][0]["metadata"]["definition"]["columns"]["film"]["table"], "film", "{v0}");
    let a = h.ok("insert_row", json!({"table": "review", "values": {"title": "On Metropolis", "film": "Metropolis"}}));
    assert_eq!(commits(&a), vec![c("main.public.review", 1, "WRITE")]);
    let a = h.ok("drop_table", json!({"table": "review"}));
    assert_eq!(commits(&a), vec![c("main.public.review", 2, "DROP TABLE")]);
    let v2 = h.commit("main.public.review", 2);
    assert_eq!(
        v2["actions"],
        json!([{"metadata": {"definition": null}}, {"remove": {"path": "datanotes/main/public/review/On Metropolis.md", "id": null}}])
    );
    assert_eq!(v2["operation_metrics"]["rows_deleted"], 1);
}

#[test]
fn a_rename_commits_to_every_table_it_rewrites_with_one_migration_id() {
    let mut h = Host::films();
    let a = h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"title": "Charade (1963)"}}));
    // The film, the watch that links to it (link and label) and the people whose
    // notes' bodies link to it.
    assert_eq!(commits(&a), vec![c(FILM, 1, "UPDATE"), c(PERSON, 1, "UPDATE"), c(WATCH, 1, "UPDATE")]);
    let id = a["migration_id"].as_str().unwrap();
    for t in [FILM, PERSON, WATCH] {
        assert_eq!(h.commit(t, 1)["migration_id"], id, "{t}");
    }
    let film = h.commit(FILM, 1);
    assert_eq!(film["actions"][0], json!({"remove": {"path": CHARADE, "id": null}}));
    assert_eq!(film["actions"][1]["add"]["path"], film_path("Charade (1963)"));
    assert_eq!(film["actions"][1]["add"]["id"], "01a0c046-cd8d-7b83-b93c-28130654d8df");
    assert_eq!(h.commit(PERSON, 1)["operation_metrics"]["rows_updated"], 3);
    let watch = h.commit(WATCH, 1);
    assert_eq!(watch["actions"][0]["add"]["path"], "datanotes/main/public/watch/2026-09-25T2100.md");
    let all = h.ok("describe_history", json!({"limit": 3}));
    let tables: Vec<&str> = all["history"].as_array().unwrap().iter().map(|c| c["table"].as_str().unwrap()).collect();
    assert_eq!(tables.len(), 3);
    assert!(all["history"].as_array().unwrap().iter().all(|c| c["migration_id"] == id && c["version"] == 1));
}

#[test]
fn a_write_rolled_back_or_refused_leaves_no_version() {
    let mut h = Host::films();
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    let logs = h.log_files();

    // The host cannot write the note: the write is rolled back.
    let out = h.start("update_row", &json!({"table": "film", "path": METROPOLIS, "set": {"rating": 3}}));
    assert_eq!(commits(&out.answer), vec![c(FILM, 2, "UPDATE")], "planned");
    let locked = EditError::Io { path: METROPOLIS.into(), message: "the file is locked".into() };
    let out = done(h.e.finish(&[Err(locked)]));
    h.keep(&out.store);
    assert_eq!(out.status, Status::RolledBack, "{}", out.answer);
    assert_eq!(h.log_files(), logs, "no commit for a rolled-back write");
    assert_eq!(h.history("film")[0], (1, "UPDATE".to_string()));
    // A first write to a table, rolled back after its first edit was made: the host
    // applies the rollback, and no log starts.
    let notes = h.notes.clone();
    let out = h.start(
        "update_row",
        &json!({"table": "genre", "path": "datanotes/main/public/genre/Thriller.md", "set": {"name": "Thrillers"}}),
    );
    assert!(out.edits.len() > 1, "the rename and the links to it: {:?}", out.edits);
    h.apply(&out.edits[0]);
    let mut results = vec![Ok(())];
    results.extend(
        out.edits[1..].iter().map(|e| Err(EditError::Io { path: e.path().into(), message: "disk full".into() })),
    );
    let out = applying(h.e.finish(&results));
    for ed in &out.edits {
        h.apply(ed);
    }
    let out = done(h.e.finish(&vec![Ok(()); out.edits.len()]));
    h.keep(&out.store);
    assert_eq!(out.status, Status::RolledBack, "{}", out.answer);
    assert_eq!(h.notes, notes);
    assert_eq!(h.log_files(), logs);

    // A write refused by a rule commits nothing.
    h.refused("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": 9}}));
    // The next write takes the next number.
    let a = h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": 3}}));
    assert_eq!(commits(&a), vec![c(FILM, 2, "UPDATE")]);
    h.reopen();
    let a = h.ok(
        "select_rows",
        json!({"table": "film", "version": 1, "where": {"title": "Metropolis"}, "columns": ["rating"]}),
    );
    assert_eq!(a["rows"][0]["rating"], 5);
}

#[test]
fn a_table_without_history_commits_nothing() {
    let mut h = Host::films();
    let a = h.ok(
        "create_table",
        json!({"table": "quote", "history": false, "name_from": "text", "columns": {"text": {"type": "text", "required": true}}}),
    );
    assert!(a.get("commits").is_none(), "{a}");
    let a = h.ok("insert_row", json!({"table": "quote", "values": {"text": "Nobody's perfect"}}));
    assert!(a.get("commits").is_none(), "{a}");
    let quote_log: Vec<String> = h.log_files().into_iter().filter(|p| p.contains("main.public.quote")).collect();
    assert!(quote_log.is_empty(), "{quote_log:?}");
    let e = h.refused("select_rows", json!({"table": "quote", "version": 0}));
    assert!(e.contains("main.public.quote has no history"), "{e}");
}

// 2. describe_history.

#[test]
fn describe_history_lists_versions_newest_first_with_limit_and_since() {
    let mut h = Host::films();
    let mut ids = vec![];
    for r in [1, 2, 3] {
        let a = h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": r}}));
        ids.push(a["migration_id"].as_str().unwrap().to_string());
    }
    let a = h.ok(
        "update_row",
        json!({"table": "genre", "path": "datanotes/main/public/genre/Thriller.md", "body": "Suspense."}),
    );
    let genre_id = a["migration_id"].as_str().unwrap().to_string();

    let a = h.ok("describe_history", json!({"table": "film"}));
    assert_eq!(a["table"], FILM);
    let hist = a["history"].as_array().unwrap();
    assert_eq!(hist.len(), 4);
    for (i, v) in [3u64, 2, 1].iter().enumerate() {
        let e = &hist[i];
        assert_eq!(e["version"], *v);
        assert_eq!(e["operation"], "UPDATE");
        assert_eq!(e["migration_id"], ids[*v as usize - 1]);
        assert_eq!(e["timestamp"], h.iso(T0 + 1000 * *v as i64));
        assert_eq!(e["operation_metrics"], json!({"rows_inserted": 0, "rows_updated": 1, "rows_deleted": 0}));
        assert!(e.get("table").is_none(), "one table's history does not repeat it");
    }
    assert_eq!(hist[3]["version"], 0);
    assert_eq!(hist[3]["operation"], "CONVERT");

    let a = h.ok("describe_history", json!({"table": "film", "limit": 2}));
    let vs: Vec<u64> = a["history"].as_array().unwrap().iter().map(|e| e["version"].as_u64().unwrap()).collect();
    assert_eq!(vs, vec![3, 2]);
    let since = h.iso(T0 + 2000);
    let a = h.ok("describe_history", json!({"table": "film", "since": since}));
    let vs: Vec<u64> = a["history"].as_array().unwrap().iter().map(|e| e["version"].as_u64().unwrap()).collect();
    assert_eq!(vs, vec![3, 2], "since is inclusive");
    let a = h.ok("describe_history", json!({"table": "film", "since": "2026-10-13"}));
    assert_eq!(a["history"], json!([]));
    let e = h.bad("describe_history", json!({"table": "film", "since": "last week"}));
    assert!(e.contains("since \"last week\" is not an ISO date"), "{e}");

    // The whole database: every logged table's commits, newest first, each with its table.
    let a = h.ok("describe_history", json!({}));
    assert_eq!(a["tables"], json!([FILM, GENRE, PERSON, WATCH]));
    let got: Vec<(String, u64, String)> = a["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["table"].as_str().unwrap().into(),
                e["version"].as_u64().unwrap(),
                e["operation"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        got,
        // Version 0 (CONVERT) is the table as it was before its log began: its
        // timestamp is the epoch, true of every earlier moment.
        vec![
            c(GENRE, 1, "UPDATE"),
            c(FILM, 3, "UPDATE"),
            c(FILM, 2, "UPDATE"),
            c(FILM, 1, "UPDATE"),
            c(WATCH, 0, "CONVERT"),
            c(PERSON, 0, "CONVERT"),
            c(GENRE, 0, "CONVERT"),
            c(FILM, 0, "CONVERT"),
        ]
    );
    assert_eq!(a["history"][0]["migration_id"], genre_id);
    let a = h.ok("describe_history", json!({"limit": 3}));
    assert_eq!(a["history"].as_array().unwrap().len(), 3);
    assert_eq!(a["history"][2]["table"], FILM);
    assert_eq!(a["history"][2]["version"], 2);
    let a = h.ok("describe_history", json!({"since": h.iso(T0 + 3000)}));
    assert_eq!(a["history"].as_array().unwrap().len(), 2, "{a}");
}

#[test]
fn describe_history_reads_a_dropped_table_by_its_full_name() {
    let mut h = Host::films();
    h.ok("create_table", json!({"table": "review", "name_from": "title", "columns": {"title": {"type": "text"}}}));
    h.ok("insert_row", json!({"table": "review", "values": {"title": "Great"}}));
    h.ok("drop_table", json!({"table": "review"}));
    h.reopen();
    assert!(!h.e.schema().tables.contains_key("main.public.review"));
    let a = h.ok("describe_history", json!({"table": "main.public.review"}));
    assert_eq!(a["table"], "main.public.review");
    let ops: Vec<&str> = a["history"].as_array().unwrap().iter().map(|e| e["operation"].as_str().unwrap()).collect();
    assert_eq!(ops, vec!["DROP TABLE", "WRITE", "CREATE TABLE"]);
    let a = h.ok("describe_history", json!({}));
    assert_eq!(a["tables"], json!([FILM, GENRE, PERSON, "main.public.review", WATCH]));
    // Its rows can still be read as they were.
    let a = h.ok("select_rows", json!({"table": "main.public.review", "version": 1}));
    assert_eq!(a["rows"][0]["title"], "Great");
    let e = h.refused("select_rows", json!({"table": "main.public.review", "version": 2}));
    assert!(e.contains("main.public.review did not exist at that version"), "{e}");
    let e = h.refused("describe_history", json!({"table": "main.public.nothing"}));
    assert!(e.contains("nothing"), "{e}");
}

#[test]
fn describe_history_names_every_table_an_operation_committed_to() {
    let mut h = Host::films();
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"title": "Charade (1963)"}}));
    let a = h.ok("describe_history", json!({"table": "watch"}));
    assert_eq!(a["history"][0]["tables"], json!([FILM, PERSON, WATCH]), "{a}");
}

#[test]
fn a_renamed_table_keeps_its_history() {
    let mut h = Host::films();
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    let a = h.ok("rename_table", json!({"table": "film", "new_name": "movie"}));
    let ops: Vec<String> = h.history("movie").into_iter().map(|(_, o)| o).collect();
    assert_eq!(ops, vec!["ALTER TABLE", "UPDATE", "CONVERT"], "{a}");
    let a = h.ok("select_rows", json!({"table": "movie", "version": 1, "where": {"title": "Charade"}}));
    assert_eq!(a["rows"][0]["rating"], 4);
}

// 3. Time travel.

#[test]
fn select_rows_and_read_note_read_a_table_as_it_was() {
    let mut h = Host::films();
    let before = h.rows("film");
    h.ok("update_row", json!({"table": "film", "path": NOSFERATU, "set": {"status": "watched", "rating": 5}}));
    let v1 = h.rows("film");
    let t1 = h.now;
    h.ok("insert_row", json!({"table": "film", "values": {"title": "Sunrise", "year": 1927}}));
    h.ok("delete_rows", json!({"table": "film", "where": {"title": "Sherlock Jr."}, "mode": "trash"}));
    assert_eq!(h.latest(FILM), 3);
    let now = h.rows("film");

    h.reopen();
    assert_eq!(bare(&h.rows_at("film", 0)), bare(&before));
    assert_eq!(bare(&h.rows_at("film", 1)), bare(&v1));
    assert_eq!(bare(&h.rows_at("film", 3)), bare(&now));
    let at0 = h.rows_at("film", 0);
    let nos = at0.iter().find(|r| r["path"] == NOSFERATU).unwrap();
    assert_eq!((nos["status"].as_str(), nos.get("rating")), (Some("to watch"), None));
    assert!(!paths(&at0).contains(&film_path("Sunrise")), "added since");
    assert!(paths(&at0).contains(&film_path("Sherlock Jr.")), "deleted since");
    assert!(paths(&h.rows_at("film", 2)).contains(&film_path("Sunrise")));
    // The answer names its version; filters, columns and order apply as to the vault.
    let a = h.ok(
        "select_rows",
        json!({"table": "film", "version": 0, "where": {"status": "to watch"}, "columns": ["title"], "order_by": "-year"}),
    );
    assert_eq!(a["version"], 0);
    assert_eq!(
        a["rows"],
        json!([{"path": film_path("Battleship Potemkin"), "title": "Battleship Potemkin"}, {"path": NOSFERATU, "title": "Nosferatu"}])
    );

    // A moment: the table as of its last commit at or before it.
    let a = h.ok("select_rows", json!({"table": "film", "timestamp": h.iso(t1 + 500), "limit": 1000}));
    assert_eq!(a["version"], 1);
    assert_eq!(bare(a["rows"].as_array().unwrap()), bare(&v1));
    let a = h.ok("select_rows", json!({"table": "film", "timestamp": h.iso(h.now + 60_000), "columns": ["title"]}));
    assert_eq!(a["version"], 3);

    // read_note at a version: the text byte for byte, and the values.
    let original = original(NOSFERATU);
    let a = h.ok("read_note", json!({"path": NOSFERATU, "version": 0}));
    assert_eq!(a["text"], original.as_str());
    assert_eq!(a["values"]["status"], "to watch");
    assert_eq!(a["version"], 0);
    assert_eq!(a["row_id"], "01a0c048-f8b2-7467-a871-3c58d740d572");
    let a = h.ok("read_note", json!({"path": film_path("Sherlock Jr."), "version": 2}));
    assert_eq!(a["values"]["title"], "Sherlock Jr.");
    let e = h.refused("read_note", json!({"path": film_path("Sunrise"), "version": 1}));
    assert!(e.contains("was not a row of main.public.film at version 1"), "{e}");
}

#[test]
fn time_travel_refuses_what_does_not_exist() {
    let mut h = Host::films();
    h.ok("update_row", json!({"table": "film", "path": NOSFERATU, "set": {"rating": 3}}));
    let e = h.refused("select_rows", json!({"table": "film", "version": 7}));
    assert!(e.contains("main.public.film has no version 7: its latest is 1"), "{e}");
    let e = h.refused("read_note", json!({"path": NOSFERATU, "version": 7}));
    assert!(e.contains("has no version 7"), "{e}");
    // Before the first write, the table is as version 0 holds it; before 1970, nothing.
    let a = h.ok("select_rows", json!({"table": "film", "timestamp": h.iso(T0)}));
    assert_eq!(a["version"], 0);
    let e = h.refused("select_rows", json!({"table": "film", "timestamp": "1969-12-31"}));
    assert!(e.contains("main.public.film has no version at or before 1969-12-31"), "{e}");
    let e = h.bad("select_rows", json!({"table": "film", "timestamp": "yesterday"}));
    assert!(e.contains("timestamp \"yesterday\" is not an ISO date"), "{e}");
    let e = h.bad("select_rows", json!({"table": "film", "version": -1}));
    assert!(e.contains("version -1 is negative"), "{e}");
    // Both a version and a moment: one would go unread (restore_table went back
    // to the version, whatever the moment said).
    for op in ["select_rows", "restore_table"] {
        let e = h.bad(op, json!({"table": "film", "version": 0, "timestamp": h.iso(T0 + 5000)}));
        assert!(e.contains("give version or timestamp, not both"), "{op}: {e}");
    }
    assert_eq!(h.ok("select_rows", json!({"table": "film", "version": 0, "timestamp": null}))["version"], 0);
    for limit in [-1, 10_001] {
        let e = h.bad("describe_history", json!({"table": "film", "limit": limit}));
        assert!(e.contains(&format!("limit {limit} is out of range")), "{e}");
    }
    // A table that keeps no history has no versions.
    h.ok("create_table", json!({"table": "quote", "history": false, "columns": {"text": {"type": "text"}}}));
    let e = h.refused("select_rows", json!({"table": "quote", "version": 0}));
    assert!(e.contains("main.public.quote has no history"), "{e}");
    let e = h.refused("read_note", json!({"path": "Notes/Film night.md", "version": 0}));
    assert!(e.contains("is not under a table's folder"), "{e}");
}

// 4. table_changes.

#[test]
fn table_changes_lists_each_row_change_between_two_versions() {
    let mut h = Host::films();
    h.ok("update_row", json!({"table": "film", "path": NOSFERATU, "set": {"status": "watched"}})); // 1
    h.ok("insert_row", json!({"table": "film", "values": {"title": "Sunrise", "year": 1927}})); // 2
    h.ok("delete_rows", json!({"table": "film", "paths": [film_path("Sunrise")]})); // 3
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"title": "Metropolis (1927)"}})); // 4
    h.ok("add_column", json!({"table": "film", "column": "country", "definition": {"type": "text"}})); // 5
    h.reopen();
    let hist = h.ok("describe_history", json!({"table": "film"}));
    let ts =
        |v: u64| hist["history"].as_array().unwrap().iter().find(|e| e["version"] == v).unwrap()["timestamp"].clone();

    let a = h.ok("table_changes", json!({"table": "film", "start_version": 1, "end_version": 4}));
    assert_eq!(
        (a["table"].as_str(), a["start_version"].as_u64(), a["end_version"].as_u64()),
        (Some(FILM), Some(1), Some(4))
    );
    let ch = a["changes"].as_array().unwrap();
    let kinds: Vec<(u64, &str, &str)> = ch
        .iter()
        .map(|x| {
            (x["_commit_version"].as_u64().unwrap(), x["_change_type"].as_str().unwrap(), x["path"].as_str().unwrap())
        })
        .collect();
    let sunrise = film_path("Sunrise");
    let metro2 = film_path("Metropolis (1927)");
    assert_eq!(
        kinds,
        vec![
            (1, "update_preimage", NOSFERATU),
            (1, "update_postimage", NOSFERATU),
            (2, "insert", sunrise.as_str()),
            (3, "delete", sunrise.as_str()),
            (4, "update_preimage", METROPOLIS),
            (4, "update_postimage", metro2.as_str()),
        ]
    );
    assert_eq!((ch[0]["status"].as_str(), ch[1]["status"].as_str()), (Some("to watch"), Some("watched")));
    assert_eq!(ch[0]["title"], "Nosferatu");
    assert_eq!(ch[0]["id"], "01a0c048-f8b2-7467-a871-3c58d740d572");
    assert_eq!(ch[2]["year"], 1927);
    assert_eq!(ch[3]["title"], "Sunrise", "a delete carries the values the row had");
    assert_eq!((ch[4]["title"].as_str(), ch[5]["title"].as_str()), (Some("Metropolis"), Some("Metropolis (1927)")));
    assert_eq!(ch[4]["id"], ch[5]["id"]);
    let ops = ["UPDATE", "WRITE", "DELETE", "UPDATE"];
    for x in ch {
        let v = x["_commit_version"].as_u64().unwrap();
        assert_eq!(x["_operation"], ops[v as usize - 1]);
        assert_eq!(x["_commit_timestamp"], ts(v));
    }

    // end defaults to the latest; a definition change is a metadata entry.
    let a = h.ok("table_changes", json!({"table": "film", "start_version": 5}));
    assert_eq!(a["end_version"], 5);
    let ch = a["changes"].as_array().unwrap();
    assert_eq!(ch.len(), 1, "{a}");
    assert_eq!(ch[0]["_change_type"], "metadata");
    assert_eq!(ch[0]["_operation"], "ADD COLUMNS");
    assert_eq!(ch[0]["definition"]["columns"]["country"], json!({"type": "text"}));
    // Version 0 of a converted table: its definition and every row, inserted.
    let a = h.ok("table_changes", json!({"table": "film", "start_version": 0, "end_version": 0}));
    let ch = a["changes"].as_array().unwrap();
    assert_eq!(ch[0]["_change_type"], "metadata");
    assert_eq!(ch.iter().filter(|x| x["_change_type"] == "insert" && x["_operation"] == "CONVERT").count(), 7);

    let e = h.bad("table_changes", json!({"table": "film", "start_version": 4, "end_version": 2}));
    assert!(e.contains("start_version 4 is after end_version 2"), "{e}");
    let e = h.bad("table_changes", json!({"table": "film", "start_version": -1}));
    assert!(e.contains("start_version -1"), "{e}");
    let e = h.refused("table_changes", json!({"table": "film", "start_version": 1, "end_version": 9}));
    assert!(e.contains("main.public.film has no version 9: its latest is 5"), "{e}");
    let e = h.bad("table_changes", json!({"table": "film", "start_version": 9}));
    assert!(e.contains("start_version 9 is after end_version 5"), "{e}");
    h.ok("create_table", json!({"table": "quote", "history": false, "columns": {"text": {"type": "text"}}}));
    let e = h.refused("table_changes", json!({"table": "quote", "start_version": 0}));
    assert!(e.contains("main.public.quote has no history"), "{e}");
}

// 5. restore_table.

#[test]
fn restore_table_puts_rows_back_as_they_were_and_undo_reverts_it() {
    let mut h = Host::films();
    let original = h.notes.clone();
    let rows0 = h.rows("film");
    let gold_rush = film_path("The Gold Rush");
    let sunrise = film_path("Sunrise");
    h.ok("update_row", json!({"table": "film", "path": NOSFERATU, "set": {"status": "watched", "rating": 4}})); // 1
    h.ok("insert_row", json!({"table": "film", "values": {"title": "Sunrise", "year": 1927}})); // 2
    h.ok("delete_rows", json!({"table": "film", "paths": [gold_rush]})); // 3
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "body": "Paris, 1963.", "remove": ["tags"]})); // 4
    let rows4 = h.rows("film");
    h.reopen();

    // A dry run shows the plan and writes nothing.
    let (notes, store) = (h.notes.clone(), h.store.clone());
    let a = h.ok("restore_table", json!({"table": "film", "version": 0, "dry_run": true}));
    assert_eq!(a["dry_run"], true);
    assert_eq!((a["action"].as_str(), a["restored_to"].as_u64()), (Some("restore"), Some(0)));
    assert_eq!((a["creates"].as_u64(), a["texts"].as_u64(), a["deletes"].as_u64()), (Some(1), Some(2), Some(1)), "{a}");
    let planned: Vec<&str> =
        a["planned_edits"].as_array().unwrap().iter().map(|e| e["path"].as_str().unwrap()).collect();
    for p in [NOSFERATU, CHARADE, gold_rush.as_str(), sunrise.as_str()] {
        assert!(planned.contains(&p), "{p} not in {planned:?}");
    }
    assert!(a.get("commits").is_none() && a.get("migration_id").is_none(), "{a}");
    assert_eq!((&h.notes, &h.store), (&notes, &store), "a dry run writes nothing");

    let a = h.ok("restore_table", json!({"table": "film", "version": 0}));
    assert_eq!(commits(&a), vec![c(FILM, 5, "RESTORE")]);
    let restore_id = a["migration_id"].as_str().unwrap().to_string();
    // Changed rows get their old text byte for byte; a removed row comes back; a row
    // added since goes to the archive.
    for p in [NOSFERATU, CHARADE, gold_rush.as_str()] {
        assert_eq!(h.notes.get(p), original.get(p), "{p}");
    }
    assert!(!h.notes.contains_key(&sunrise));
    assert!(h.notes.contains_key("datanotes/_archive/main/public/film/Sunrise.md"), "{:?}", h.notes.keys());
    assert_eq!(bare(&h.rows("film")), bare(&rows0));
    assert_eq!(
        h.commit(FILM, 5)["operation_metrics"],
        json!({"rows_inserted": 1, "rows_updated": 2, "rows_deleted": 1})
    );
    let ch = h.ok("table_changes", json!({"table": "film", "start_version": 5}));
    let mut kinds: Vec<(String, String)> = ch["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["_change_type"].as_str().unwrap().into(), x["path"].as_str().unwrap().into()))
        .collect();
    kinds.sort();
    assert_eq!(kinds.iter().filter(|(k, _)| k == "update_postimage").count(), 2);
    assert!(
        kinds.contains(&("insert".into(), gold_rush.clone())) && kinds.contains(&("delete".into(), sunrise.clone()))
    );

    // History is not rewritten; the restore is undone like any write.
    assert_eq!(h.history("film").len(), 6);
    let a = h.ok("undo_migration", json!({"migration_id": restore_id}));
    assert_eq!(commits(&a), vec![c(FILM, 6, "UNDO")]);
    assert_eq!(bare(&h.rows("film")), bare(&rows4));
    assert!(h.notes.contains_key(&sunrise) && !h.notes.contains_key(&gold_rush));
}

#[test]
fn restore_table_to_a_timestamp() {
    let mut h = Host::films();
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": 4}}));
    let (t1, rows1) = (h.now, h.rows("film"));
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": 3}}));
    h.ok("insert_row", json!({"table": "film", "values": {"title": "Faust", "year": 1926}}));
    let a = h.ok("restore_table", json!({"table": "film", "timestamp": h.iso(t1 + 999)}));
    assert_eq!(a["restored_to"], 1);
    assert_eq!(commits(&a), vec![c(FILM, 4, "RESTORE")]);
    assert_eq!(bare(&h.rows("film")), bare(&rows1));
    let e = h.refused("restore_table", json!({"table": "film", "timestamp": "1969-01-01"}));
    assert!(e.contains("has no version at or before 1969-01-01"), "{e}");
    let e = h.refused("restore_table", json!({"table": "film", "version": 40}));
    assert!(e.contains("has no version 40"), "{e}");
    let e = h.bad("restore_table", json!({"table": "film"}));
    assert!(e.contains("give version or timestamp"), "{e}");
}

#[test]
fn restore_table_brings_a_renamed_row_back_with_the_links_to_it() {
    let mut h = Host::films();
    let original = h.notes.clone();
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"title": "Charade (1963)"}}));
    let w = "datanotes/main/public/watch/2026-09-25T2100.md";
    assert!(h.notes[w].contains("film: \"[[Charade (1963)]]\""), "{}", h.notes[w]);
    let a = h.ok("restore_table", json!({"table": "film", "version": 0}));
    assert_eq!((a["creates"].as_u64(), a["deletes"].as_u64()), (Some(0), Some(0)), "a rename back: {a}");
    // The film, the watch that links to it and the people's notes are as they were.
    assert_eq!(h.notes, original);
    assert_eq!(commits(&a), vec![c(FILM, 2, "RESTORE"), c(PERSON, 2, "RESTORE"), c(WATCH, 2, "RESTORE")]);
    for t in [FILM, PERSON, WATCH] {
        assert_eq!(h.commit(t, 2)["migration_id"], a["migration_id"]);
    }
}

#[test]
fn restore_table_recreates_a_dropped_table() {
    let mut h = Host::films();
    h.ok(
        "create_table",
        json!({"table": "review", "name_from": "title", "columns": {"title": {"type": "text", "required": true}, "film": {"type": "link", "table": "film"}}}),
    );
    h.ok(
        "insert_row",
        json!({"table": "review", "values": {"title": "Dizzy", "film": "Metropolis"}, "body": "The robot!"}),
    );
    h.ok("insert_row", json!({"table": "review", "values": {"title": "Fun", "film": "Charade"}}));
    let rows = h.rows("review");
    let texts: Vec<(String, String)> =
        h.notes.iter().filter(|(p, _)| p.contains("/review/")).map(|(p, t)| (p.clone(), t.clone())).collect();
    assert_eq!(texts.len(), 2);
    h.ok("drop_table", json!({"table": "review"}));
    h.reopen();
    assert!(h.refused("select_rows", json!({"table": "review"})).contains("review"));
    let e = h.refused("restore_table", json!({"table": "main.public.review", "version": 3}));
    assert!(e.contains("main.public.review was dropped at version 3"), "{e}");

    let a = h.ok("restore_table", json!({"table": "main.public.review", "version": 2}));
    assert_eq!(a["action"], "recreate");
    assert_eq!(a["creates"], 2);
    assert_eq!(commits(&a), vec![c("main.public.review", 4, "RESTORE")]);
    assert!(h.e.schema().tables.contains_key("main.public.review"));
    for (p, t) in &texts {
        assert_eq!(h.notes.get(p), Some(t), "{p}");
    }
    assert_eq!(bare(&h.rows("review")), bare(&rows));
    let v4 = h.commit("main.public.review", 4);
    assert!(v4["actions"][0]["metadata"]["definition"]["columns"]["film"].is_object(), "{v4}");
}

#[test]
fn restore_table_is_refused_when_a_film_would_link_to_a_genre_gone_back() {
    let mut h = Host::films();
    let hgf = film_path("His Girl Friday");
    h.ok(
        "insert_row",
        json!({"table": "genre", "values": {"name": "Film noir", "kind": "genre", "parent": "Sound film"}}),
    );
    h.ok("update_row", json!({"table": "film", "path": hgf, "set": {"genres": ["Screwball comedy", "Film noir"]}}));
    h.reopen();
    // Version 0 of genre has no Film noir: restoring it would leave the film's link broken.
    let a = h.fails(Status::Refused, "restore_table", json!({"table": "genre", "version": 0}));
    let e = a["error"].as_str().unwrap();
    assert!(e.contains(&hgf) && e.contains("Film noir"), "{e}");
    assert_eq!(a["violations"][0]["path"], hgf.as_str(), "{a}");
    assert_eq!(a["violations"][0]["violations"][0]["code"], "broken_link");
    assert!(h.notes.contains_key("datanotes/main/public/genre/Film noir.md"));
}

#[test]
fn restore_table_is_refused_when_parent_by_level_would_break() {
    let mut h = Host::films();
    let silent = "datanotes/main/public/genre/Silent film.md";
    h.ok(
        "update_row",
        json!({"table": "genre", "path": "datanotes/main/public/genre/Thriller.md", "body": "Suspense."}),
    );
    // Silent film made a genre by hand while no engine ran: the log keeps it (EXTERNAL_EDIT).
    let edited = h.notes[silent].replace("kind: era", "kind: genre");
    h.notes.insert(silent.into(), edited);
    h.reopen();
    assert_eq!(h.history("genre")[0], (2, "EXTERNAL_EDIT".to_string()));
    h.ok("update_row", json!({"table": "genre", "path": silent, "set": {"kind": "era"}}));
    assert_eq!(h.ok("check_table", json!({"table": "genre"}))["total"], 0);

    let a = h.fails(Status::Refused, "restore_table", json!({"table": "genre", "version": 2}));
    let mut broken: Vec<&str> =
        a["violations"].as_array().unwrap().iter().map(|v| v["path"].as_str().unwrap()).collect();
    broken.sort();
    assert_eq!(
        broken,
        vec![
            "datanotes/main/public/genre/Expressionism.md",
            silent,
            "datanotes/main/public/genre/Slapstick comedy.md",
            "datanotes/main/public/genre/Soviet montage.md",
        ],
        "{a}"
    );
    assert!(a["error"].as_str().unwrap().contains("parent_by_level"), "{a}");
    // Version 1 is the table as it is now: nothing to write, no version.
    let a = h.ok("restore_table", json!({"table": "genre", "version": 1}));
    assert!(a.get("commits").is_none() && a["planned_edits"] == json!([]), "{a}");
    // Version 0 held no broken row: that one goes through.
    let a = h.ok("restore_table", json!({"table": "genre", "version": 0}));
    assert_eq!(commits(&a), vec![c(GENRE, 4, "RESTORE")]);
    assert_eq!(h.notes["datanotes/main/public/genre/Thriller.md"], original("datanotes/main/public/genre/Thriller.md"));
}

#[test]
fn restoring_a_table_whose_rows_link_to_another_table() {
    let mut h = Host::films();
    let w = "datanotes/main/public/watch/2026-10-10T2000.md";
    h.ok(
        "insert_row",
        json!({"table": "watch", "values": {"film": "Nosferatu", "occurred_at": "2026-10-10T20:00", "where": "home"}}),
    );
    let rows1 = h.rows("watch");
    let text = h.notes[w].clone();
    assert!(text.contains("label: Nosferatu (10/10 20:00, home)"), "{text}");
    h.ok("delete_rows", json!({"table": "watch", "paths": [w]}));

    // The film it links to is there: the watch comes back, its link resolving.
    let a = h.ok("restore_table", json!({"table": "watch", "version": 1}));
    assert_eq!(commits(&a), vec![c(WATCH, 3, "RESTORE")]);
    assert_eq!(h.notes[w], text);
    assert_eq!(bare(&h.rows("watch")), bare(&rows1));
    let a = h.ok("select_rows", json!({"table": "watch", "where": {"film.title": "Nosferatu"}, "columns": ["label"]}));
    assert_eq!(bare(a["rows"].as_array().unwrap()), vec![json!({"path": w, "label": "Nosferatu (10/10 20:00, home)"})]);

    // Once the film is gone, the watch cannot come back.
    h.ok("delete_rows", json!({"table": "watch", "paths": [w]}));
    h.ok("delete_rows", json!({"table": "film", "paths": [NOSFERATU]}));
    let a = h.fails(Status::Refused, "restore_table", json!({"table": "watch", "version": 1}));
    assert_eq!(a["violations"][0]["path"], w, "{a}");
    assert_eq!(a["violations"][0]["violations"][0]["code"], "broken_link");

    // Nor can the film table go back to before a film a watch links to.
    h.ok("insert_row", json!({"table": "film", "values": {"title": "Sunrise", "year": 1927}}));
    h.ok(
        "insert_row",
        json!({"table": "watch", "values": {"film": "Sunrise", "occurred_at": "2026-10-11T20:00", "where": "cinema"}}),
    );
    let a = h.fails(Status::Refused, "restore_table", json!({"table": "film", "version": 1}));
    assert_eq!(a["violations"][0]["path"], "datanotes/main/public/watch/2026-10-11T2000.md", "{a}");
}

// 6. restore_database.

#[test]
fn restore_database_to_a_timestamp_and_undo() {
    let mut h = Host::films();
    h.ok(
        "create_table",
        json!({"table": "studio", "name_from": "name", "columns": {"name": {"type": "text", "required": true}}}),
    );
    h.ok("insert_row", json!({"table": "studio", "values": {"name": "UFA"}}));
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": 4}}));
    // (Each logged table's log starts before the moment: see
    // restore_database_to_a_moment_before_a_tables_log_started.)
    h.ok(
        "update_row",
        json!({"table": "genre", "path": "datanotes/main/public/genre/Cinema.md", "body": "All of it."}),
    );
    let mark = h.now + 500;
    let (film_then, studio_then) = (h.rows("film"), h.rows("studio"));
    let studio_text = h.notes["datanotes/main/public/studio/UFA.md"].clone();
    let genre_then = h.rows("genre");
    // Since: a film changed and one added, a genre changed, a table created, one
    // dropped, and a table without history written.
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 3}}));
    h.ok("insert_row", json!({"table": "film", "values": {"title": "Sunrise", "year": 1927}}));
    h.ok(
        "update_row",
        json!({"table": "genre", "path": "datanotes/main/public/genre/Thriller.md", "body": "Suspense."}),
    );
    h.ok(
        "create_table",
        json!({"table": "review", "name_from": "title", "columns": {"title": {"type": "text", "required": true}}}),
    );
    h.ok("insert_row", json!({"table": "review", "values": {"title": "Great"}}));
    h.ok("drop_table", json!({"table": "studio"}));
    h.ok(
        "create_table",
        json!({"table": "quote", "history": false, "name_from": "text", "columns": {"text": {"type": "text"}}}),
    );
    h.ok("insert_row", json!({"table": "quote", "values": {"text": "Nobody's perfect"}}));
    let (film_now, genre_now) = (h.rows("film"), h.rows("genre"));
    h.reopen();

    let ts = h.iso(mark);
    let (notes, store) = (h.notes.clone(), h.store.clone());
    let dry = h.ok("restore_database", json!({"timestamp": ts, "dry_run": true}));
    assert_eq!((&h.notes, &h.store), (&notes, &store), "a dry run writes nothing");
    assert_eq!(dry["dry_run"], true);
    let a = h.ok("restore_database", json!({"timestamp": ts}));
    for x in [&dry, &a] {
        assert_eq!(x["restored_to"], ts.as_str());
        assert_eq!(
            x["tables"][FILM],
            json!({"action": "restore", "version": 1, "creates": 0, "texts": 1, "deletes": 1, "archived": 0})
        );
        assert_eq!(
            x["tables"][GENRE],
            json!({"action": "restore", "version": 1, "creates": 0, "texts": 1, "deletes": 0, "archived": 0})
        );
        assert_eq!(x["tables"]["main.public.review"]["action"], "drop");
        assert_eq!(x["tables"]["main.public.review"]["archived"], 1);
        assert_eq!(
            x["tables"]["main.public.studio"],
            json!({"action": "recreate", "version": 1, "creates": 1, "texts": 0, "deletes": 0, "archived": 0})
        );
        assert_eq!(x["tables"].as_object().unwrap().len(), 4, "{x}");
        let mut unchanged: Vec<&str> = x["unchanged"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
        unchanged.sort();
        assert_eq!(unchanged, vec![PERSON, WATCH]);
        assert_eq!(x["skipped"].as_array().unwrap().len(), 1, "{x}");
        assert_eq!(x["skipped"][0]["table"], "main.public.quote");
        assert!(x["skipped"][0]["reason"].as_str().unwrap().contains("history is off"));
    }
    // One migration for all.
    let id = a["migration_id"].as_str().unwrap().to_string();
    let cs = commits(&a);
    assert_eq!(cs.len(), 4, "{cs:?}");
    assert!(cs.iter().all(|(_, _, op)| op == "RESTORE"));
    for (t, v, _) in &cs {
        assert_eq!(h.commit(t, *v)["migration_id"], id.as_str());
    }
    assert_eq!(bare(&h.rows("film")), bare(&film_then));
    assert_eq!(bare(&h.rows("genre")), bare(&genre_then));
    assert_eq!(bare(&h.rows("studio")), bare(&studio_then));
    assert_eq!(h.notes["datanotes/main/public/studio/UFA.md"], studio_text);
    assert!(!h.e.schema().tables.contains_key("main.public.review"));
    assert!(h.notes.contains_key("datanotes/_archive/main/public/review/Great.md"), "{:?}", h.notes.keys());
    assert_eq!(h.rows("quote").len(), 1, "the table without history stays as it is");

    // Undone as one.
    let u = h.ok("undo_migration", json!({"migration_id": id}));
    assert_eq!(commits(&u).len(), 4, "{u}");
    assert_eq!(bare(&h.rows("film")), bare(&film_now));
    assert_eq!(bare(&h.rows("genre")), bare(&genre_now));
    assert!(!h.e.schema().tables.contains_key("main.public.studio"));
    assert_eq!(h.rows("review").len(), 1);
}

#[test]
fn restore_database_before_a_migration_or_a_batch() {
    let mut h = Host::films();
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": 4}}));
    let (film1, genre0) = (h.rows("film"), h.rows("genre"));
    let a = h.ok(
        "batch",
        json!({"operations": [
            {"op": "update_row", "args": {"table": "film", "path": CHARADE, "set": {"rating": 3}}},
            {"op": "insert_row", "args": {"table": "genre", "values": {"name": "Film noir", "kind": "genre", "parent": "Sound film"}}},
        ]}),
    );
    let batch = a["migration_id"].as_str().unwrap().to_string();
    assert_eq!(commits(&a), vec![c(FILM, 2, "BATCH"), c(GENRE, 1, "BATCH")]);
    let hist = h.ok("describe_history", json!({"limit": 2}));
    assert!(hist["history"].as_array().unwrap().iter().all(|e| e["batch"] == batch.as_str()), "{hist}");
    let a = h.ok("update_row", json!({"table": "film", "path": NOSFERATU, "set": {"rating": 2}}));
    let last = a["migration_id"].as_str().unwrap().to_string();

    // Before the last operation: only the film table goes back.
    let a = h.ok("restore_database", json!({"before_migration": last, "dry_run": true}));
    assert_eq!(a["restored_to"], format!("before {last}"));
    assert_eq!(a["tables"].as_object().unwrap().keys().collect::<Vec<_>>(), vec![FILM]);
    assert_eq!(a["tables"][FILM]["version"], 2);
    assert!(a["unchanged"].as_array().unwrap().contains(&json!(GENRE)), "{a}");

    // Before the batch: both tables it wrote, and what came after.
    let a = h.ok("restore_database", json!({"before_migration": batch}));
    assert_eq!(a["tables"][FILM]["version"], 1);
    assert_eq!(a["tables"][GENRE]["version"], 0);
    assert_eq!(a["tables"][GENRE]["deletes"], 1);
    assert_eq!(bare(&h.rows("film")), bare(&film1));
    assert_eq!(bare(&h.rows("genre")), bare(&genre0));
    assert!(h.notes.contains_key("datanotes/_archive/main/public/genre/Film noir.md"));

    let e = h.refused("restore_database", json!({"before_migration": "20200101T000000-nothing"}));
    assert!(e.contains("no operation \"20200101T000000-nothing\""), "{e}");
    let e = h.bad("restore_database", json!({}));
    assert!(e.contains("give timestamp or before_migration"), "{e}");
    let e = h.bad("restore_database", json!({"timestamp": h.iso(T0), "before_migration": batch}));
    assert!(e.contains("give timestamp or before_migration"), "{e}");
}

#[test]
fn restore_database_is_refused_as_a_whole_when_a_rule_across_tables_would_break() {
    let mut h = Host::films();
    h.ok(
        "update_row",
        json!({"table": "genre", "path": "datanotes/main/public/genre/Thriller.md", "body": "Suspense."}),
    );
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": 4}}));
    h.ok(
        "create_table",
        json!({"table": "quote", "history": false, "name_from": "text", "columns": {"text": {"type": "text"}, "film": {"type": "link", "table": "film"}}}),
    );
    let mark = h.now + 500;
    h.ok("update_row", json!({"table": "genre", "path": "datanotes/main/public/genre/Thriller.md", "body": "Danger."}));
    h.ok("insert_row", json!({"table": "film", "values": {"title": "Sunrise", "year": 1927}}));
    // A row of a table without history links to the new film: it stays, and would break.
    h.ok("insert_row", json!({"table": "quote", "values": {"text": "A song of two humans", "film": "Sunrise"}}));
    let a = h.fails(Status::Refused, "restore_database", json!({"timestamp": h.iso(mark)}));
    assert_eq!(a["violations"][0]["path"], "datanotes/main/public/quote/A song of two humans.md", "{a}");
    assert_eq!(a["violations"][0]["violations"][0]["code"], "broken_link");
    assert!(h.notes["datanotes/main/public/genre/Thriller.md"].contains("Danger."), "genre was not restored either");
}

#[test]
fn restore_database_to_a_moment_before_a_tables_log_started() {
    let mut h = Host::films();
    let mark = h.now + 500;
    let watch_then = h.rows("watch");
    let w = "datanotes/main/public/watch/2026-10-08T1930.md";
    h.ok("update_row", json!({"table": "watch", "path": w, "set": {"where": "home"}}));
    // watch's log: version 0 (CONVERT, the table as it was before) and 1, both after the moment.
    let a = h.ok("restore_database", json!({"timestamp": h.iso(mark), "dry_run": true}));
    assert_eq!(
        a["tables"][WATCH],
        json!({"action": "restore", "version": 0, "creates": 0, "texts": 1, "deletes": 0, "archived": 0}),
        "{a}"
    );
    let a = h.ok("restore_database", json!({"timestamp": h.iso(mark)}));
    assert_eq!(commits(&a), vec![c(WATCH, 2, "RESTORE")], "{a}");
    assert!(h.e.schema().tables.contains_key(WATCH));
    assert_eq!(bare(&h.rows("watch")), bare(&watch_then));
}

#[test]
fn restore_database_skips_a_table_vacuumed_past_the_moment() {
    let mut h = Host::films();
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": 4}}));
    h.ok(
        "update_row",
        json!({"table": "genre", "path": "datanotes/main/public/genre/Thriller.md", "body": "Suspense."}),
    );
    let mark = h.now + 500;
    let genre_then = h.rows("genre");
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": 3}}));
    h.ok("update_row", json!({"table": "genre", "path": "datanotes/main/public/genre/Thriller.md", "body": "Danger."}));
    let film_now = h.rows("film");
    h.ok("vacuum_table", json!({"table": "film", "dry_run": false}));
    let a = h.ok("restore_database", json!({"timestamp": h.iso(mark)}));
    assert_eq!(a["skipped"], json!([{"table": FILM, "reason": "its history before that moment was vacuumed"}]));
    assert_eq!(a["tables"].as_object().unwrap().keys().collect::<Vec<_>>(), vec![GENRE]);
    assert_eq!(commits(&a), vec![c(GENRE, 3, "RESTORE")]);
    assert_eq!(bare(&h.rows("genre")), bare(&genre_then));
    assert_eq!(bare(&h.rows("film")), bare(&film_now));
}

// 7. vacuum_table and checkpoints.

/// The store file of a note's text.
fn blob_file(text: &str) -> String {
    let hash = datanotes_core::edits::hash(text);
    format!("blobs/{}/{hash}", &hash[..2])
}

#[test]
fn vacuum_table_drops_old_history_and_unreferenced_blobs() {
    let mut h = Host::films();
    let mut texts = vec![h.notes[METROPOLIS].clone()];
    let mut rows = vec![h.rows("film")];
    for r in [1, 2, 3, 4] {
        h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"rating": r}}));
        texts.push(h.notes[METROPOLIS].clone());
        rows.push(h.rows("film"));
    }
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"minutes": 150}}));
    rows.push(h.rows("film"));
    for t in &texts {
        assert!(h.store.contains_key(&blob_file(t)));
    }
    h.reopen();

    // dry_run by default: the files listed, nothing deleted.
    let store = h.store.clone();
    let a = h.ok("vacuum_table", json!({"table": "film"}));
    assert_eq!((a["dry_run"].as_bool(), a["retain_from_version"].as_u64()), (Some(true), Some(5)));
    let mut files: Vec<String> = (0..5).map(|v| format!("log/{FILM}/{v:020}.json")).collect();
    files.push(format!("log/{FILM}/{:020}.checkpoint.json", 0));
    assert_eq!(a["files"], json!(files));
    assert_eq!(h.store, store, "a dry run deletes nothing");

    let a = h.ok("vacuum_table", json!({"table": "film", "retain_from_version": 3, "dry_run": false}));
    assert_eq!(a["dry_run"], false);
    let gone = vec![
        format!("log/{FILM}/{:020}.json", 0),
        format!("log/{FILM}/{:020}.json", 1),
        format!("log/{FILM}/{:020}.json", 2),
        format!("log/{FILM}/{:020}.checkpoint.json", 0),
    ];
    assert_eq!(a["files"], json!(gone));
    for f in &gone {
        assert!(!h.store.contains_key(f), "{f} kept");
    }
    // Metropolis as it was at versions 0 to 2: no log refers to those texts now.
    assert_eq!(a["blobs"], 3);
    for t in &texts[..3] {
        assert!(!h.store.contains_key(&blob_file(t)), "blob of {t} kept");
    }
    for t in &texts[3..] {
        assert!(h.store.contains_key(&blob_file(t)), "blob of {t} deleted");
    }
    let anchor: Value = serde_json::from_str(&h.store[&format!("log/{FILM}/{:020}.checkpoint.json", 3)]).unwrap();
    assert_eq!((anchor["version"].as_u64(), &anchor["base"]), (Some(3), &Value::Null));
    assert_eq!(anchor["rows"].as_array().unwrap().len(), 7);

    h.reopen();
    let e = h.refused("select_rows", json!({"table": "film", "version": 2}));
    assert!(e.contains("version 2 of main.public.film was vacuumed: the oldest version kept is 3"), "{e}");
    let e = h.refused("read_note", json!({"path": METROPOLIS, "version": 0}));
    assert!(e.contains("was vacuumed"), "{e}");
    let e = h.refused("table_changes", json!({"table": "film", "start_version": 2}));
    assert!(e.contains("was vacuumed"), "{e}");
    let e = h.refused("restore_table", json!({"table": "film", "version": 1}));
    assert!(e.contains("was vacuumed"), "{e}");
    let vs: Vec<u64> = h.history("film").iter().map(|(v, _)| *v).collect();
    assert_eq!(vs, vec![5, 4, 3]);
    for v in 3..=5 {
        assert_eq!(bare(&h.rows_at("film", v)), bare(&rows[v as usize]), "version {v}");
    }
    let a = h.ok("table_changes", json!({"table": "film", "start_version": 4}));
    assert_eq!(a["changes"].as_array().unwrap().len(), 4);
    let a = h.ok("restore_table", json!({"table": "film", "version": 3}));
    assert_eq!(commits(&a), vec![c(FILM, 6, "RESTORE")]);
    assert_eq!(h.notes[METROPOLIS], texts[3]);
    let e = h.bad("vacuum_table", json!({"table": "film", "retain_from_version": 9}));
    assert!(e.contains("retain_from_version 9 is after the latest version 6"), "{e}");
    h.ok("create_table", json!({"table": "quote", "history": false, "columns": {"text": {"type": "text"}}}));
    let e = h.refused("vacuum_table", json!({"table": "quote"}));
    assert!(e.contains("main.public.quote has no history"), "{e}");
}

#[test]
fn writes_go_on_after_a_vacuum() {
    let mut h = Host::films();
    for r in [1, 2, 3, 4, 5] {
        h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"minutes": 100 + r}}));
    }
    h.ok("vacuum_table", json!({"table": "film", "dry_run": false}));
    for r in 6..=12 {
        let a = h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"minutes": 100 + r}}));
        assert_eq!(commits(&a), vec![c(FILM, r as u64, "UPDATE")]);
    }
    let a = h.ok("select_rows", json!({"table": "film", "version": 11, "where": {"title": "Metropolis"}}));
    assert_eq!(a["rows"][0]["minutes"], 111);
}

#[test]
fn checkpoints_every_ten_versions_bound_what_a_read_replays() {
    let mut h = Host::films();
    let mut minutes = vec![153];
    for i in 1..=27 {
        h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"minutes": 100 + i}}));
        minutes.push(100 + i);
    }
    let cps: Vec<&String> =
        h.store.keys().filter(|p| p.starts_with(&format!("log/{FILM}/")) && p.ends_with(".checkpoint.json")).collect();
    let want: Vec<String> = [0, 10, 20].iter().map(|v| format!("log/{FILM}/{v:020}.checkpoint.json")).collect();
    assert_eq!(cps, want.iter().collect::<Vec<_>>());
    // 10 and 20 add to the whole one at 0: only the rows changed since.
    let cp20: Value = serde_json::from_str(&h.store[&want[2]]).unwrap();
    assert_eq!((cp20["version"].as_u64(), cp20["base"].as_u64()), (Some(20), Some(0)));
    assert_eq!(cp20["rows"].as_array().unwrap().len(), 1, "{cp20}");
    assert_eq!(cp20["rows"][0][0], METROPOLIS);
    assert!(cp20["definition"]["columns"].is_object());

    // A fresh engine reads version 25 from checkpoint 20 (and its base) and 5 commits.
    h.reopen();
    let a = h.ok(
        "select_rows",
        json!({"table": "film", "version": 25, "where": {"title": "Metropolis"}, "columns": ["minutes"]}),
    );
    assert_eq!(a["rows"][0]["minutes"], minutes[25]);
    let logs: Vec<&String> = h.asked.iter().filter(|p| p.starts_with("log/")).collect();
    let mut want: Vec<String> =
        vec![format!("log/{FILM}/{:020}.checkpoint.json", 20), format!("log/{FILM}/{:020}.checkpoint.json", 0)];
    want.extend((21..=25).map(|v| format!("log/{FILM}/{v:020}.json")));
    let mut got: Vec<String> = logs.iter().map(|s| s.to_string()).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    let blobs = h.asked.iter().filter(|p| p.starts_with("blobs/")).count();
    assert_eq!(blobs, 1, "only Metropolis's text at 25 differs from the vault: {:?}", h.asked);

    // Version 19: checkpoint 10 and nine commits, no more.
    h.reopen();
    let a = h.ok(
        "select_rows",
        json!({"table": "film", "version": 19, "where": {"title": "Metropolis"}, "columns": ["minutes"]}),
    );
    assert_eq!(a["rows"][0]["minutes"], minutes[19]);
    let commits_read: Vec<&String> =
        h.asked.iter().filter(|p| p.starts_with("log/") && !p.ends_with(".checkpoint.json")).collect();
    assert_eq!(commits_read.len(), 9, "{commits_read:?}");
    assert!(h.asked.contains(&format!("log/{FILM}/{:020}.checkpoint.json", 10)));
    assert!(!h.asked.iter().any(|p| p.ends_with(&format!("{:020}.json", 10))), "commit 10 is in its checkpoint");

    // Every version reads right, on a fresh engine.
    h.reopen();
    for v in 0..=27u64 {
        let a = h.ok(
            "select_rows",
            json!({"table": "film", "version": v, "where": {"title": "Metropolis"}, "columns": ["minutes"]}),
        );
        assert_eq!(a["rows"][0]["minutes"], minutes[v as usize], "version {v}");
    }

    // A vacuum to 15 keeps the whole checkpoint 20 builds on.
    let a = h.ok("vacuum_table", json!({"table": "film", "retain_from_version": 15, "dry_run": false}));
    assert!(!a["files"].as_array().unwrap().contains(&json!(format!("log/{FILM}/{:020}.checkpoint.json", 0))), "{a}");
    assert!(a["files"].as_array().unwrap().contains(&json!(format!("log/{FILM}/{:020}.checkpoint.json", 10))), "{a}");
    h.reopen();
    for v in 15..=27u64 {
        let a = h.ok(
            "select_rows",
            json!({"table": "film", "version": v, "where": {"title": "Metropolis"}, "columns": ["minutes"]}),
        );
        assert_eq!(a["rows"][0]["minutes"], minutes[v as usize], "version {v}");
    }
}

#[test]
fn a_read_at_a_version_asks_once_for_the_log_and_reads_only_the_texts_it_answers_with() {
    let mut h = Host::films();
    for i in 1..=12 {
        h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"minutes": 100 + i}}));
    }
    h.reopen();
    let now = h.now + 1000;
    // One round for the checkpoint and the commits after it; then one for the blob.
    let args = json!({"path": METROPOLIS, "version": 11});
    let Step::Need(mut need) = h.e.call("read_note", args.clone(), "test", now) else { panic!("the log is asked for") };
    need.sort();
    let cp = |v: u64| format!("log/{FILM}/{v:020}.checkpoint.json");
    // Checkpoint 10 adds to the whole one at 0.
    assert_eq!(need, vec![cp(0), cp(10), format!("log/{FILM}/{:020}.json", 11)]);
    h.disk.provide(&mut h.e, &need);
    let Step::Need(need) = h.e.call("read_note", args.clone(), "test", now) else { panic!("the blob is asked for") };
    assert_eq!(need.len(), 1, "{need:?}");
    assert!(need[0].starts_with("blobs/"), "{need:?}");
    h.disk.provide(&mut h.e, &need);
    let out = done(h.e.call("read_note", args, "test", now));
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    assert_eq!(out.answer["values"]["minutes"], 111);

    // Another row at that version: its text is the vault's, so no blob is read,
    // even though Metropolis's text at 11 is not the vault's.
    h.reopen();
    let a = h.ok("read_note", json!({"path": NOSFERATU, "version": 11}));
    assert_eq!(a["values"]["title"], "Nosferatu");
    assert!(!h.asked.iter().any(|p| p.starts_with("blobs/")), "{:?}", h.asked);

    // A page reads the texts of that page only.
    h.reopen();
    let a = h.ok("select_rows", json!({"table": "film", "version": 11, "limit": 1}));
    assert_eq!(a["rows"].as_array().unwrap().len(), 1);
    assert!(a["total"].as_u64().unwrap() > 1, "{a}");
    assert!(h.asked.iter().filter(|p| p.starts_with("blobs/")).count() <= 1, "{:?}", h.asked);
}

#[test]
fn a_blob_lost_from_the_store_is_reported_with_the_way_out() {
    let mut h = Host::films();
    let old = h.notes[METROPOLIS].clone();
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"minutes": 99}}));
    h.disk.store.remove(&blob_file(&old));
    h.reopen();
    let e = h.refused("select_rows", json!({"table": "film", "version": 0}));
    assert!(e.contains(&format!("the text of {METROPOLIS}")) && e.contains("is missing from the store"), "{e}");
    // The rest of the history still reads.
    assert_eq!(h.ok("read_note", json!({"path": NOSFERATU, "version": 0}))["values"]["title"], "Nosferatu");
    assert_eq!(h.ok("select_rows", json!({"table": "film", "version": 1}))["version"], 1);
}

// 8. The property test of issue 4.

const ITEM: &str = "main.public.item";

/// A random write to the item table, from what it holds now: its rows, its added
/// columns and the writes accepted so far (to undo one).
fn random_write(r: &mut Rng, rows: &[Value], extra: &[String], done: &[String], serial: &mut u32) -> (String, Value) {
    *serial += 1;
    let name = format!("r{serial}");
    let column = format!("c{serial}");
    let film = r.pick(&["Charade", "Metropolis", "Nosferatu"]).to_string();
    let insert = json!({"table": "item", "values": {"name": name, "n": r.below(100), "film": film}});
    if rows.is_empty() {
        return ("insert_row".into(), insert);
    }
    let path = r.pick(rows)["path"].clone();
    let some_extra = (!extra.is_empty()).then(|| r.pick(extra).clone());
    match (r.below(12), some_extra) {
        (1 | 2, extra) => {
            let mut set = json!({"n": r.below(100)});
            if r.below(3) == 0 {
                set["name"] = name.into(); // renames the note
            }
            if let Some(c) = extra.filter(|_| r.below(2) == 0) {
                set[c.as_str()] = r.below(10).into();
            }
            ("update_row".into(), json!({"table": "item", "path": path, "set": set}))
        }
        (3, extra) => {
            let col = extra.unwrap_or_else(|| "n".into());
            (
                "update_rows".into(),
                json!({"table": "item", "where": {"n": {"lt": r.below(100)}}, "set": {col: r.below(10)}}),
            )
        }
        (4, _) => {
            let mode = *r.pick(&["archive", "trash"]);
            ("delete_rows".into(), json!({"table": "item", "paths": [path], "mode": mode}))
        }
        (5, _) => {
            let old = r.pick(rows)["name"].clone();
            let rows = json!([{"name": old, "n": r.below(100)}, {"name": name, "n": r.below(100), "film": film}]);
            ("merge_rows".into(), json!({"table": "item", "key": ["name"], "rows": rows}))
        }
        (6, _) | (7 | 8, None) => {
            ("add_column".into(), json!({"table": "item", "column": column, "definition": {"type": "integer"}}))
        }
        (7, Some(c)) => ("drop_column".into(), json!({"table": "item", "column": c})),
        (8, Some(c)) => ("rename_column".into(), json!({"table": "item", "column": c, "new_name": column})),
        (9, _) => {
            let update = json!({"table": "item", "path": path, "set": {"n": r.below(100)}});
            (
                "batch".into(),
                json!({"operations": [{"op": "insert_row", "args": insert}, {"op": "update_row", "args": update}]}),
            )
        }
        (10 | 11, _) if !done.is_empty() => ("undo_migration".into(), json!({"migration_id": r.pick(done)})),
        _ => ("insert_row".into(), insert),
    }
}

fn item_columns(h: &mut Host) -> Vec<String> {
    let a = h.ok("describe_database", json!({"table": "item"}));
    let cols = a["tables"][0]["columns"].as_object().unwrap();
    cols.keys().filter(|k| k.starts_with('c')).cloned().collect()
}

fn property(seed: u64) {
    let mut r = Rng(seed);
    let mut h = Host::films();
    let a = h.ok(
        "create_table",
        json!({"table": "item", "name_from": "name", "columns": {
            "name": {"type": "text", "required": true, "unique": true}, "n": {"type": "integer"},
            "film": {"type": "link", "table": "film"}}}),
    );
    assert_eq!(commits(&a), vec![c(ITEM, 0, "CREATE TABLE")]);
    // The table right after each version's write.
    let mut expected: BTreeMap<u64, Vec<Value>> = BTreeMap::from([(0, vec![])]);
    let (mut done, mut serial, mut accepted) = (vec![], 0u32, 0);
    for step in 0..25 {
        let rows = h.rows("item");
        let extra = item_columns(&mut h);
        let (op, args) = random_write(&mut r, &rows, &extra, &done, &mut serial);
        let out = h.call(&op, args.clone());
        match out.status {
            Status::Ok => {
                accepted += 1;
                if let Some(id) = out.answer["migration_id"].as_str() {
                    done.push(id.to_string());
                }
                let now = h.rows("item");
                let changed = out.answer["planned_edits"] != json!([]);
                assert_eq!(
                    out.answer.get("commits").is_some(),
                    changed,
                    "seed {seed} step {step}: {op} {args}: {}",
                    out.answer
                );
                for (t, v, _) in out.answer.get("commits").map(|_| commits(&out.answer)).unwrap_or_default() {
                    assert_eq!(t, ITEM, "seed {seed} step {step}: {op} {args}");
                    assert!(expected.insert(v, now.clone()).is_none(), "seed {seed}: version {v} twice");
                }
            }
            Status::Refused | Status::BadInput => {} // a conflicting undo, a clash: nothing written
            s => panic!("seed {seed} step {step}: {op} {args}: {s:?} {}", out.answer),
        }
    }
    assert!(accepted >= 15 && expected.len() >= 12, "seed {seed}: {accepted} accepted, {} versions", expected.len());
    let latest = h.latest(ITEM);
    assert_eq!(*expected.keys().last().unwrap(), latest);

    // Every version reads as the table was right after its write, on a fresh engine.
    h.reopen();
    for (v, rows) in &expected {
        assert_eq!(bare(&h.rows_at("item", *v)), bare(rows), "seed {seed}: version {v}");
    }
    // table_changes of each version turns the table before it into the table after it.
    for (v, after) in expected.iter().filter(|(v, _)| **v > 0) {
        let a = h.ok("table_changes", json!({"table": "item", "start_version": v, "end_version": v}));
        let by_path = |rows: &[Value]| -> BTreeMap<String, Value> {
            rows.iter().map(|r| (r["path"].as_str().unwrap().to_string(), r.clone())).collect()
        };
        let (before, after) = (by_path(&bare(&expected[&(v - 1)])), by_path(&bare(after)));
        let mut paths: BTreeSet<String> = before.keys().cloned().collect();
        for ch in a["changes"].as_array().unwrap() {
            let Some(path) = ch["path"].as_str() else { continue }; // the definition changed
            let (row, present) = match ch["_change_type"].as_str().unwrap() {
                "delete" | "update_preimage" => (&before[path], paths.remove(path)),
                _ => (&after[path], paths.insert(path.to_string())),
            };
            assert!(present, "seed {seed} version {v}: {ch} against {row}");
            for (k, val) in row.as_object().unwrap() {
                assert_eq!(&ch[k], val, "seed {seed} version {v}: {k} of {ch} against {row}");
            }
        }
        assert_eq!(paths, after.keys().cloned().collect(), "seed {seed} version {v}: {a}");
    }
    // restore_table to a version, then the table reads as that version did.
    let versions: Vec<u64> = expected.keys().copied().filter(|v| *v > 0).collect();
    for _ in 0..3 {
        let v = *r.pick(&versions);
        h.ok("restore_table", json!({"table": "item", "version": v}));
        assert_eq!(bare(&h.rows("item")), bare(&expected[&v]), "seed {seed}: restored to {v}");
        assert_eq!(bare(&h.rows("item")), bare(&h.rows_at("item", v)), "seed {seed}: restored to {v}");
    }
}

#[test]
fn property_select_at_every_version_and_restore_seed_1() {
    property(0x9E37_79B9_7F4A_7C15);
}

#[test]
fn property_select_at_every_version_and_restore_seed_2() {
    property(0xD1B5_4A32_D192_ED03);
}

#[test]
fn property_select_at_every_version_and_restore_seed_3() {
    property(0x1234_5678_9ABC_DEF1);
}
