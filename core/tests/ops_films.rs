//! Every operation of the engine on the film diary (`bridge/assets/films/`), through
//! the library: its answers, its refusals (with their Hint), the exact texts its
//! edits write, and what it keeps byte for byte. (tests/registry.rs runs every
//! operation of the registry once; this file goes into each one.)
//!
//! Each test opens its own engine on the diary as it is on disk (or with a few notes
//! changed by hand first), so the tests do not depend on one another.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{apply_edit, film_diary, load_films, original, unversioned};
use datanotes_core::driver::{self, Memory};
use datanotes_core::edits::hash;
use datanotes_core::{Apply, Edit, EditError, Engine, NoteFile, Outcome, Status, Step};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The time of every call (2026-09-21): ids made by inserts depend on it.
const NOW: i64 = 1_790_000_000_000;

const CHARADE: &str = "datanotes/main/public/film/Charade.md";
const HIS_GIRL_FRIDAY: &str = "datanotes/main/public/film/His Girl Friday.md";
const METROPOLIS: &str = "datanotes/main/public/film/Metropolis.md";
const NOSFERATU: &str = "datanotes/main/public/film/Nosferatu.md";
const POTEMKIN: &str = "datanotes/main/public/film/Battleship Potemkin.md";
const SHERLOCK: &str = "datanotes/main/public/film/Sherlock Jr..md";
const WATCH_CHARADE: &str = "datanotes/main/public/watch/2026-09-25T2100.md";
const WATCH_HGF: &str = "datanotes/main/public/watch/2026-10-03T2130.md";
const FILM_NIGHT: &str = "Notes/Film night.md";
const METASTORE: &str = "datanotes/metastore.yaml";

/// The seed's hand edit that breaks Sherlock Jr.'s front matter (a colon in a plain title).
const SHERLOCK_UNREADABLE: &str = "---
table: main.public.film
id: 01a13107-9676-75a6-85a8-7ecb30cb8170
title: Sherlock Jr.: the projectionist
year: 1924
status: watched
tags:
  - seen-2026
rating: 4
---
";

// ---------------------------------------------------------------- helpers

/// No store files: a vault the engine has never written to.
fn no_store() -> Vec<(String, String)> {
    vec![]
}

fn films() -> Engine {
    let e = Engine::open(load_films(), no_store());
    assert!(e.warnings().is_empty(), "{:?}", e.warnings());
    e
}

/// The diary with some notes edited by hand (or added) before the engine opens it.
fn films_with(hand_edits: &[(&str, &str)]) -> Engine {
    let mut files = load_films();
    for (path, text) in hand_edits {
        match files.iter_mut().find(|f| f.path == *path) {
            Some(f) => f.text = text.to_string(),
            None => files.push(NoteFile { path: path.to_string(), text: text.to_string(), mtime: 0 }),
        }
    }
    Engine::open(files, no_store())
}

/// Calls an operation and, on Apply, reports every edit as done (no file is
/// touched: the engine's index is what these tests read). Gives the final outcome
/// and the edits the host was asked to make.
fn run(e: &mut Engine, op: &str, args: Value) -> (Outcome, Vec<Edit>) {
    match call(e, op, args) {
        Step::Apply(a) => (done(e.finish(&vec![Ok(()); a.edits.len()])), a.edits),
        other => (done(other), vec![]),
    }
}

/// One call, with the store files it needs (none exist) handed over by the driver.
fn call(e: &mut Engine, op: &str, args: Value) -> Step {
    driver::ask(e, &mut Memory::default(), |e| e.call(op, args.clone(), "test", NOW))
}

fn done(step: Step) -> Outcome {
    match step {
        Step::Done(o) => o,
        other => panic!("the turn was expected to be over: {other:?}"),
    }
}

fn applying(step: Step) -> Apply {
    match step {
        Step::Apply(a) => a,
        other => panic!("a write was expected: {other:?}"),
    }
}

/// A file the host could not change: the file system's words.
fn io(message: &str) -> Result<(), EditError> {
    Err(EditError::Io { path: String::new(), message: message.into() })
}

/// A write that must succeed: its answer and edits.
fn write(e: &mut Engine, op: &str, args: Value) -> (Value, Vec<Edit>) {
    let (out, edits) = run(e, op, args);
    assert_eq!(out.status, Status::Ok, "{op}: {:#}", out.answer);
    assert_eq!(out.answer["ok"], true, "{:#}", out.answer);
    (out.answer, edits)
}

/// A read that must succeed: its answer.
fn read(e: &mut Engine, op: &str, args: Value) -> Value {
    let (out, edits) = run(e, op, args);
    assert_eq!(out.status, Status::Ok, "{op}: {:#}", out.answer);
    assert!(edits.is_empty());
    out.answer
}

/// A refusal or a bad input: nothing planned, and a text with the way out. Gives the text.
fn failure(out: &Outcome, status: Status) -> String {
    assert_eq!(out.status, status, "{:#}", out.answer);
    assert!(out.store.is_empty());
    assert_eq!(out.answer["ok"], false);
    let text = out.answer["error"].as_str().expect("an error text").to_string();
    assert!(text.contains("nothing was written"), "{text}");
    assert!(text.contains("\nHint: "), "{text}");
    assert!(text.contains("\nDocs: https://datanotes.dev/"), "{text}");
    text
}

fn refused(out: &Outcome) -> String {
    failure(out, Status::Refused)
}

fn bad_input(out: &Outcome) -> String {
    failure(out, Status::BadInput)
}

/// `(path, code, column or constraint)` of each violation a refusal lists.
fn violations(answer: &Value) -> Vec<(String, String, String)> {
    let mut out = vec![];
    for row in answer["violations"].as_array().expect("violations") {
        for v in row["violations"].as_array().unwrap() {
            let what = v.get("column").or_else(|| v.get("constraint")).and_then(Value::as_str).unwrap_or("");
            out.push((
                row["path"].as_str().unwrap().to_string(),
                v["code"].as_str().unwrap().to_string(),
                what.to_string(),
            ));
        }
    }
    out
}

fn v(path: &str, code: &str, what: &str) -> (String, String, String) {
    (path.to_string(), code.to_string(), what.to_string())
}

/// The texts of the engine's index, by path.
fn texts(e: &Engine) -> BTreeMap<String, String> {
    e.vault().notes.iter().map(|(p, n)| (p.to_string(), n.text().to_string())).collect()
}

/// What the engine holds: every note and the schema as describe_database shows it.
fn state(e: &mut Engine) -> (BTreeMap<String, String>, Value) {
    let schema = read(e, "describe_database", json!({}));
    (texts(e), schema)
}

/// The text a Write edit puts at `path`.
fn written<'a>(edits: &'a [Edit], path: &str) -> &'a str {
    edits
        .iter()
        .find_map(|e| match e {
            Edit::Write { path: p, text, .. } if p == path => Some(text.as_str()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no write of {path} in {edits:#?}"))
}

fn moves(edits: &[Edit]) -> Vec<(String, String)> {
    edits
        .iter()
        .filter_map(|e| match e {
            Edit::Move { from, to, .. } => Some((from.clone(), to.clone())),
            _ => None,
        })
        .collect()
}

fn written_paths(edits: &[Edit]) -> Vec<String> {
    let mut v: Vec<String> = edits
        .iter()
        .filter_map(|e| match e {
            Edit::Write { path, .. } => Some(path.clone()),
            _ => None,
        })
        .collect();
    v.sort();
    v
}

/// The `path` of each row of a select_rows answer.
fn paths(answer: &Value) -> Vec<String> {
    answer["rows"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().to_string()).collect()
}

/// The titles of the films a select_rows answer lists, in order.
fn titles(e: &mut Engine, args: Value) -> Vec<String> {
    let mut args = args;
    args["table"] = "film".into();
    args["columns"] = json!(["title"]);
    let a = read(e, "select_rows", args);
    a["rows"].as_array().unwrap().iter().map(|r| r["title"].as_str().unwrap().to_string()).collect()
}

/// One row's values (every column), or None when select_rows does not list it.
fn row(e: &mut Engine, table: &str, path: &str) -> Option<Value> {
    let a = read(e, "select_rows", json!({"table": table, "where": {"path": path}}));
    a["rows"].as_array().unwrap().first().cloned()
}

/// The id an insert gave to the note it created at `path`.
fn created_id(edits: &[Edit], path: &str) -> String {
    let text = written(edits, path);
    let line = text.lines().find(|l| l.starts_with("id: ")).unwrap();
    line["id: ".len()..].trim_matches('"').to_string()
}

/// A vault on a simulated disk, to apply edits as a host would (checking the texts
/// they expect); the trash is its `.trash/` folder.
type Disk = BTreeMap<String, String>;

fn apply(d: &mut Disk, e: &Edit) -> Result<(), String> {
    if let Some(text) = apply_edit(d, e)? {
        d.insert(format!(".trash/{}", e.path()), text);
    }
    Ok(())
}

#[test]
fn the_example_vault_opens_clean() {
    let mut e = films();
    let a = read(&mut e, "check_table", json!({}));
    assert_eq!(a["total"], 0, "{a:#}");
    assert_eq!(a["tables_checked"], 4);
    assert_eq!(a["rows_checked"], 28, "every note under a table folder, and no other");
}

// ---------------------------------------------------------------- describe_database, read_docs

#[test]
fn describe_database_lists_each_table_with_its_row_count() {
    let mut e = films();
    let a = read(&mut e, "describe_database", json!({}));
    let counts: Vec<(String, u64, u64)> = a["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["qualified"].as_str().unwrap().to_string(),
                t["row_count"].as_u64().unwrap(),
                t["unreadable_count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counts,
        vec![
            ("main.public.film".to_string(), 7, 0),
            ("main.public.genre".to_string(), 8, 0),
            ("main.public.person".to_string(), 10, 0),
            ("main.public.watch".to_string(), 3, 0),
        ]
    );
    assert_eq!(a["settings"]["autoRecompute"], true);
}

#[test]
fn describe_database_of_one_table_gives_its_definition() {
    let mut e = films();
    let a = read(&mut e, "describe_database", json!({"table": "film"}));
    let t = &a["tables"][0];
    assert_eq!(a["tables"].as_array().unwrap().len(), 1);
    assert_eq!(t["name"], "film");
    assert_eq!(t["qualified"], "main.public.film");
    assert_eq!(t["description"], "Classic films I watched or want to watch");
    assert_eq!(t["folder"], "datanotes/main/public/film/");
    assert_eq!(t["name_from"], "title");
    assert_eq!(t["columns"]["genres"], json!({"type": "list", "items": "link", "table": "genre"}));
    assert_eq!(t["checks"]["rating_range"]["or"][0], json!({"rating": {"exists": false}}));
}

#[test]
fn describe_database_counts_an_unreadable_row_apart() {
    let mut e = films_with(&[(SHERLOCK, SHERLOCK_UNREADABLE)]);
    let a = read(&mut e, "describe_database", json!({"table": "film"}));
    assert_eq!(a["tables"][0]["row_count"], 6);
    assert_eq!(a["tables"][0]["unreadable_count"], 1);
}

/// metastore.yaml unreadable from the start: no table is known, and the answer
/// says that is why its list is empty, with the way out.
#[test]
fn describe_database_with_an_unreadable_schema_says_why_it_lists_no_table() {
    let mut e = films_with(&[("datanotes/metastore.yaml", "version: 1\ntables: [oops\n")]);
    let a = read(&mut e, "describe_database", json!({}));
    assert_eq!(a["tables"], json!([]));
    assert!(a["schema_error"].as_str().unwrap().starts_with("datanotes/metastore.yaml cannot be read"), "{a}");
    assert_eq!(a["hint"], "metastore.yaml could not be read when the engine opened, so it knows no table: tables is empty for that reason, not because the database has none. Fix datanotes/metastore.yaml (git can bring back its last good version): until it reads, no write runs.");
    assert!(read(&mut films(), "describe_database", json!({})).get("hint").is_none());
}

#[test]
fn describe_database_of_an_unknown_table_suggests_the_closest() {
    let mut e = films();
    let (out, _) = run(&mut e, "describe_database", json!({"table": "flim"}));
    let text = refused(&out);
    assert!(text.contains("no table \"flim\" (did you mean \"film\"?)"), "{text}");
}

#[test]
fn read_docs_gives_the_page_a_refusal_names() {
    let mut e = films();
    let a = read(&mut e, "read_docs", json!({"page": "reference/operations#insert_row"}));
    let text = a["text"].as_str().unwrap();
    assert!(text.contains("## insert_row"), "{text}");
    assert!(!text.contains("## update_row"));
    let index = read(&mut e, "read_docs", json!({}));
    assert!(index["pages"].as_array().unwrap().contains(&json!("guides/data-quality/rules")));
    let missing = read(&mut e, "read_docs", json!({"page": "nowhere"}));
    assert_eq!(missing["text"], Value::Null);
    assert!(missing["pages"].is_array());
}

// ---------------------------------------------------------------- create_table, drop_table, rename_table

#[test]
fn create_table_declares_it_in_the_metastore_and_takes_rows() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "create_table",
        json!({"table": "book", "description": "Books of films", "name_from": "title",
               "columns": {"title": {"type": "text", "required": true}, "film": {"type": "link", "table": "film"}}}),
    );
    assert_eq!(a["summary"], "create table book");
    assert_eq!(
        a["planned_edits"],
        json!([{"path": "datanotes/bases/book.base", "base": true, "create": true}, {"path": METASTORE, "schema": true}])
    );
    let yaml = written(&edits, METASTORE);
    assert!(
        yaml.contains("  main.public.book:\n    description: Books of films\n    name_from: title\n    history: true\n    columns:\n      title: {type: text, required: true}\n      film: {type: link, table: film}\n"),
        "{yaml}"
    );
    let (_, edits) = write(
        &mut e,
        "insert_row",
        json!({"table": "book", "values": {"title": "Metropolis (novel)", "film": "Metropolis"}, "body": "By Thea von Harbou.\n"}),
    );
    let path = "datanotes/main/public/book/Metropolis (novel).md";
    let id = created_id(&edits, path);
    assert_eq!(
        written(&edits, path),
        format!("---\ntable: main.public.book\nid: {id}\ntitle: Metropolis (novel)\nfilm: \"[[Metropolis]]\"\n---\nBy Thea von Harbou.\n")
    );
}

#[test]
fn create_table_refuses_a_name_taken_or_invalid_and_a_bad_column() {
    let mut e = films();
    let (out, _) = run(&mut e, "create_table", json!({"table": "film"}));
    assert!(refused(&out).contains("main.public.film exists already"));
    let (out, _) = run(&mut e, "create_table", json!({"table": "Bad Name"}));
    assert!(bad_input(&out).contains("\"Bad Name\" is not a valid table name"));
    let (out, _) = run(&mut e, "create_table", json!({"table": "book", "columns": {"pages": {"type": "integr"}}}));
    assert!(bad_input(&out).contains("unknown type \"integr\""));
    let (out, _) =
        run(&mut e, "create_table", json!({"table": "book", "columns": {"film": {"type": "link", "table": "flim"}}}));
    bad_input(&out);
}

#[test]
fn create_table_over_a_vault_folder_makes_its_notes_rows() {
    let mut e = films_with(&[("Books/Dune.md", "---\ntitle: Dune\n---\n")]);
    write(&mut e, "create_table", json!({"table": "book", "folder": "Books", "columns": {"title": {"type": "text"}}}));
    let a = read(&mut e, "select_rows", json!({"table": "book"}));
    assert_eq!(paths(&a), vec!["Books/Dune.md"]);
    let (out, _) = run(&mut e, "create_table", json!({"table": "tome", "folder": "../outside"}));
    bad_input(&out);
}

#[test]
fn drop_table_archives_its_notes() {
    let mut e = films();
    let (a, edits) = write(&mut e, "drop_table", json!({"table": "watch"}));
    assert_eq!(a["summary"], "drop table watch (3 rows archived)");
    assert_eq!(
        moves(&edits),
        ["2026-09-25T2100", "2026-10-03T2130", "2026-10-08T1930"]
            .iter()
            .map(|n| (
                format!("datanotes/main/public/watch/{n}.md"),
                format!("datanotes/_archive/main/public/watch/{n}.md")
            ))
            .collect::<Vec<_>>()
    );
    assert!(!written(&edits, METASTORE).contains("main.public.watch"));
    // The notes are moved as they are: nothing is deleted or rewritten.
    assert_eq!(written_paths(&edits), vec![METASTORE]);
    assert!(edits.iter().all(|e| !matches!(e, Edit::Trash { .. } | Edit::Delete { .. })));
    let (out, _) = run(&mut e, "select_rows", json!({"table": "watch"}));
    assert!(refused(&out).contains("no table \"watch\""));
    assert_eq!(
        e.vault().text("datanotes/_archive/main/public/watch/2026-09-25T2100.md"),
        Some(original(WATCH_CHARADE).as_str())
    );
}

#[test]
fn drop_table_is_refused_when_another_table_links_to_it() {
    let mut e = films();
    let before = state(&mut e);
    let (out, _) = run(&mut e, "drop_table", json!({"table": "person"}));
    let text = refused(&out);
    assert!(text.contains("main.public.person is linked from main.public.film.director"), "{text}");
    assert!(text.contains("Hint: Drop or alter those link columns first"), "{text}");
    assert_eq!(state(&mut e), before);
}

#[test]
fn drop_table_takes_only_the_archive_mode() {
    let mut e = films();
    let (out, _) = run(&mut e, "drop_table", json!({"table": "watch", "mode": "delete"}));
    assert!(bad_input(&out).contains("mode \"delete\" is not supported"));
}

#[test]
fn rename_table_moves_its_folder_and_rows_table_keys_follow() {
    let mut e = films();
    let (a, edits) = write(&mut e, "rename_table", json!({"table": "film", "new_name": "movie"}));
    assert_eq!(a["summary"], "rename table film to movie");
    let m = moves(&edits);
    assert_eq!(m.len(), 7);
    assert!(m.contains(&(CHARADE.to_string(), "datanotes/main/public/movie/Charade.md".to_string())));
    assert_eq!(
        written(&edits, "datanotes/main/public/movie/Charade.md"),
        original(CHARADE).replace("table: main.public.film\n", "table: main.public.movie\n")
    );
    let a = read(&mut e, "select_rows", json!({"table": "movie", "columns": ["title"], "where": {"title": "Charade"}}));
    assert_eq!(paths(&a), vec!["datanotes/main/public/movie/Charade.md"]);
}

#[test]
fn rename_table_rewrites_the_link_definitions_of_other_tables() {
    let mut e = films();
    let (_, edits) = write(&mut e, "rename_table", json!({"table": "film", "new_name": "movie"}));
    let yaml = written(&edits, METASTORE);
    assert!(yaml.contains("      film: {type: link, table: main.public.movie, required: true}\n"), "{yaml}");
    // The watches still link to their films, and their labels still compute.
    let a = read(&mut e, "check_table", json!({}));
    assert_eq!(a["total"], 0, "{a:#}");
    let a =
        read(&mut e, "select_rows", json!({"table": "watch", "columns": ["film"], "where": {"film.title": "Charade"}}));
    assert_eq!(paths(&a), vec![WATCH_CHARADE]);
    // The rows of the other tables are not touched: links name notes, not tables.
    assert!(written_paths(&edits)
        .iter()
        .all(|p| p == METASTORE || p.starts_with("datanotes/main/public/movie/") || p.starts_with("datanotes/bases/")));
}

#[test]
fn rename_table_refuses_a_taken_name() {
    let mut e = films();
    let (out, _) = run(&mut e, "rename_table", json!({"table": "film", "new_name": "genre"}));
    assert!(refused(&out).contains("main.public.genre exists already"));
    let (out, _) = run(&mut e, "rename_table", json!({"table": "film", "new_name": "Mov ie"}));
    bad_input(&out);
}

// ---------------------------------------------------------------- columns

#[test]
fn add_column_required_with_a_default_fills_every_row() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "add_column",
        json!({"table": "film", "column": "country", "definition": {"type": "text", "required": true, "default": "unknown"}}),
    );
    assert_eq!(a["notes_changed"], 7);
    assert_eq!(
        written(&edits, NOSFERATU),
        original(NOSFERATU).replace("---\nAn unauthorised", "country: unknown\n---\nAn unauthorised")
    );
    assert!(written(&edits, METASTORE).contains("      country: {type: text, required: true, default: unknown}\n"));
    // Rows inserted later get the default too.
    let (_, edits) =
        write(&mut e, "insert_row", json!({"table": "film", "values": {"title": "The General", "year": 1926}}));
    assert!(written(&edits, "datanotes/main/public/film/The General.md").contains("\ncountry: unknown\n"));
}

#[test]
fn add_column_required_without_a_default_is_refused_listing_the_rows() {
    let mut e = films();
    let before = state(&mut e);
    let (out, _) = run(
        &mut e,
        "add_column",
        json!({"table": "film", "column": "country", "definition": {"type": "text", "required": true}}),
    );
    let text = refused(&out);
    assert!(text.contains(&format!("{CHARADE}: country is required: set \"country\"")), "{text}");
    assert_eq!(out.answer["violations_total"], 7);
    assert!(violations(&out.answer).iter().all(|(_, code, col)| code == "required" && col == "country"));
    assert_eq!(state(&mut e), before);
}

#[test]
fn add_column_dense_without_a_default_gives_every_row_an_empty_key() {
    let mut e = films();
    let (_, edits) = write(
        &mut e,
        "add_column",
        json!({"table": "film", "column": "country", "definition": {"type": "text", "dense": true}}),
    );
    assert!(written(&edits, NOSFERATU).contains("\ncountry:\n"));
}

#[test]
fn add_column_generated_is_computed_for_every_row() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "add_column",
        json!({"table": "film", "column": "heading", "definition": {"type": "text", "generated": "{title} ({year}), {director.name}"}}),
    );
    assert_eq!(a["notes_changed"], 7);
    assert_eq!(
        written(&edits, NOSFERATU),
        original(NOSFERATU)
            .replace("---\nAn unauthorised", "heading: Nosferatu (1922), F. W. Murnau\n---\nAn unauthorised")
    );
    assert_eq!(row(&mut e, "film", SHERLOCK).unwrap()["heading"], "Sherlock Jr. (1924), Buster Keaton");
}

#[test]
fn add_column_refuses_an_existing_or_invalid_column_and_a_bad_definition() {
    let mut e = films();
    let (out, _) =
        run(&mut e, "add_column", json!({"table": "film", "column": "year", "definition": {"type": "integer"}}));
    assert!(refused(&out).contains("main.public.film has a column \"year\" already"));
    let (out, _) =
        run(&mut e, "add_column", json!({"table": "film", "column": "a.b", "definition": {"type": "integer"}}));
    assert!(bad_input(&out).contains("\"a.b\" is not a valid column name"));
    let (out, _) =
        run(&mut e, "add_column", json!({"table": "film", "column": "budget", "definition": {"type": "money"}}));
    bad_input(&out);
    let (out, _) = run(
        &mut e,
        "add_column",
        json!({"table": "film", "column": "budget", "definition": {"type": "text", "generated": "{nope}"}}),
    );
    bad_input(&out);
}

#[test]
fn drop_column_removes_its_key_from_every_row() {
    let mut e = films();
    let (a, edits) = write(&mut e, "drop_column", json!({"table": "film", "column": "minutes"}));
    assert_eq!(a["notes_changed"], 7);
    assert_eq!(written(&edits, CHARADE), original(CHARADE).replace("minutes: 113\n", ""));
    assert!(!written(&edits, METASTORE).contains("minutes"));
    assert_eq!(row(&mut e, "film", CHARADE).unwrap().get("minutes"), None);
}

#[test]
fn drop_column_removes_a_list_key_with_its_items() {
    let mut e = films();
    let (_, edits) = write(&mut e, "drop_column", json!({"table": "film", "column": "tags"}));
    assert_eq!(written(&edits, CHARADE), original(CHARADE).replace("tags:\n  - seen-2026\n  - film-night\n", ""));
    // Films without tags are not written.
    assert!(!written_paths(&edits).contains(&NOSFERATU.to_string()));
}

#[test]
fn drop_column_used_by_a_check_is_refused_naming_the_check() {
    let mut e = films();
    let before = state(&mut e);
    let (out, _) = run(&mut e, "drop_column", json!({"table": "film", "column": "rating"}));
    let text = bad_input(&out);
    assert!(text.contains("check rating_range: \"rating\" names no column of main.public.film"), "{text}");
    assert_eq!(state(&mut e), before);
}

#[test]
fn drop_column_of_an_unknown_column_suggests_the_closest() {
    let mut e = films();
    let (out, _) = run(&mut e, "drop_column", json!({"table": "film", "column": "minuts"}));
    let text = refused(&out);
    assert!(text.contains("no column \"minuts\" in main.public.film (did you mean \"minutes\"?)"), "{text}");
}

#[test]
fn rename_column_renames_the_key_of_every_row_and_the_checks_follow() {
    let mut e = films();
    let (a, edits) = write(&mut e, "rename_column", json!({"table": "film", "column": "rating", "new_name": "stars"}));
    assert_eq!(a["notes_changed"], 5);
    assert!(written(&edits, METASTORE)
        .contains("rating_range: {or: [{stars: {exists: false}}, {and: [{stars: {gte: 1}}, {stars: {lte: 5}}]}]}"));
    let r = row(&mut e, "film", CHARADE).unwrap();
    assert_eq!(r["stars"], 5);
    assert_eq!(r.get("rating"), None);
    // The renamed check still holds the rows to it.
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"stars": 9}}));
    assert_eq!(violations(&out.answer), vec![v(CHARADE, "check", "rating_range")]);
}

#[test]
fn rename_column_follows_templates_name_from_and_generated() {
    let mut e = films();
    let (_, edits) =
        write(&mut e, "rename_column", json!({"table": "watch", "column": "occurred_at", "new_name": "at"}));
    let yaml = written(&edits, METASTORE);
    assert!(yaml.contains("name_from: \"{at|%Y-%m-%dT%H%M}\""), "{yaml}");
    assert!(yaml.contains("day: {type: date, generated: \"{at|date}\"}"), "{yaml}");
    assert_eq!(read(&mut e, "check_table", json!({"table": "watch"}))["total"], 0);
}

#[test]
fn rename_column_keeps_the_key_in_its_place() {
    let mut e = films();
    let (_, edits) = write(&mut e, "rename_column", json!({"table": "film", "column": "year", "new_name": "released"}));
    assert_eq!(written(&edits, CHARADE), original(CHARADE).replace("year: 1963\n", "released: 1963\n"));
}

#[test]
fn rename_column_renames_the_column_in_dotted_paths_of_checks() {
    let mut e = films();
    let (_, edits) = write(&mut e, "rename_column", json!({"table": "genre", "column": "kind", "new_name": "level"}));
    assert!(written(&edits, METASTORE).contains("{level: era, parent.level: cinema}"));
}

#[test]
fn rename_column_renames_the_column_in_other_tables_templates_through_links() {
    let mut e = films();
    let (_, edits) = write(&mut e, "rename_column", json!({"table": "film", "column": "title", "new_name": "name"}));
    assert!(written(&edits, METASTORE).contains("{film.name} ({occurred_at|%d/%m %H:%M}, {where})"));
}

#[test]
fn rename_column_refuses_a_taken_name() {
    let mut e = films();
    let (out, _) = run(&mut e, "rename_column", json!({"table": "film", "column": "rating", "new_name": "year"}));
    assert!(bad_input(&out).contains("\"year\" is not a free, valid column name"));
    let (out, _) = run(&mut e, "rename_column", json!({"table": "film", "column": "ratin", "new_name": "stars"}));
    assert!(refused(&out).contains("(did you mean \"rating\"?)"));
}

#[test]
fn alter_column_changes_the_definition_when_every_row_keeps_it() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "alter_column",
        json!({"table": "film", "column": "minutes", "definition": {"type": "integer", "required": true, "description": "Running time"}}),
    );
    // The table's Bases file follows the schema (made here: the diary ships none).
    assert_eq!(
        a["planned_edits"],
        json!([{"path": "datanotes/bases/film.base", "base": true, "create": true}, {"path": METASTORE, "schema": true}])
    );
    assert!(written(&edits, "datanotes/bases/film.base").contains("displayName: \"Running time\""));
    assert!(written(&edits, METASTORE)
        .contains("      minutes: {type: integer, required: true, description: Running time}\n"));
    let (out, _) =
        run(&mut e, "insert_row", json!({"table": "film", "values": {"title": "The General", "year": 1926}}));
    assert!(violations(&out.answer).contains(&v("datanotes/main/public/film/The General.md", "required", "minutes")));
}

#[test]
fn alter_column_is_refused_when_rows_would_break_the_new_definition() {
    let mut e = films();
    let before = state(&mut e);
    let (out, _) = run(
        &mut e,
        "alter_column",
        json!({"table": "film", "column": "status", "definition": {"type": "enum", "values": ["watched"]}}),
    );
    let text = refused(&out);
    assert!(text.contains(&format!("{POTEMKIN}: status \"to watch\" is not one of watched")), "{text}");
    assert_eq!(violations(&out.answer), vec![v(POTEMKIN, "enum", "status"), v(NOSFERATU, "enum", "status")]);
    let (out, _) = run(
        &mut e,
        "alter_column",
        json!({"table": "film", "column": "rating", "definition": {"type": "integer", "required": true}}),
    );
    assert_eq!(violations(&out.answer), vec![v(POTEMKIN, "required", "rating"), v(NOSFERATU, "required", "rating")]);
    let (out, _) =
        run(&mut e, "alter_column", json!({"table": "film", "column": "year", "definition": {"type": "date"}}));
    assert_eq!(out.answer["violations_total"], 7);
    assert_eq!(state(&mut e), before);
}

#[test]
fn rename_value_renames_it_in_the_schema_and_in_every_row() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "rename_value",
        json!({"table": "film", "column": "status", "from": "to watch", "to": "wishlist"}),
    );
    assert_eq!(a["notes_changed"], 2);
    assert_eq!(written(&edits, NOSFERATU), original(NOSFERATU).replace("status: to watch\n", "status: wishlist\n"));
    assert_eq!(written(&edits, POTEMKIN), original(POTEMKIN).replace("status: to watch\n", "status: wishlist\n"));
    assert!(written(&edits, METASTORE).contains("status: {type: enum, values: [watched, wishlist]}"));
    assert_eq!(titles(&mut e, json!({"where": {"status": "wishlist"}})), vec!["Battleship Potemkin", "Nosferatu"]);
}

#[test]
fn rename_value_renames_the_value_in_the_checks_too() {
    let mut e = films();
    let (_, edits) =
        write(&mut e, "rename_value", json!({"table": "genre", "column": "kind", "from": "era", "to": "period"}));
    assert!(written(&edits, METASTORE).contains("{kind: period, parent.kind: cinema}"));
}

#[test]
fn rename_value_refuses_an_unknown_or_taken_value_and_a_column_that_is_no_enum() {
    let mut e = films();
    let (out, _) =
        run(&mut e, "rename_value", json!({"table": "film", "column": "status", "from": "wached", "to": "seen"}));
    assert!(refused(&out).contains("\"wached\" is not a value of status (did you mean \"watched\"?)"));
    let (out, _) =
        run(&mut e, "rename_value", json!({"table": "film", "column": "status", "from": "watched", "to": "to watch"}));
    assert!(refused(&out).contains("\"to watch\" is a value of status already"));
    let (out, _) = run(&mut e, "rename_value", json!({"table": "film", "column": "title", "from": "a", "to": "b"}));
    assert!(bad_input(&out).contains("\"title\" is not an enum column"));
}

#[test]
fn add_check_adds_a_rule_every_later_write_keeps() {
    let mut e = films();
    let (a, edits) =
        write(&mut e, "add_check", json!({"table": "film", "name": "talkies_later", "check": {"year": {"gte": 1895}}}));
    assert_eq!(a["planned_edits"], json!([{"path": METASTORE, "schema": true}]));
    assert!(written(&edits, METASTORE).contains("      talkies_later: {year: {gte: 1895}}\n"));
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"year": 1800}}));
    let text = refused(&out);
    assert!(
        text.contains(&format!("{CHARADE}: violates CHECK talkies_later: {{\"year\":{{\"gte\":1895}}}}")),
        "{text}"
    );
}

#[test]
fn add_check_is_refused_when_rows_break_it_and_lists_them() {
    let mut e = films();
    let before = state(&mut e);
    let (out, _) =
        run(&mut e, "add_check", json!({"table": "film", "name": "short", "check": {"minutes": {"lt": 100}}}));
    let text = refused(&out);
    assert!(text.contains(&format!("{CHARADE}: violates CHECK short: {{\"minutes\":{{\"lt\":100}}}}")), "{text}");
    assert_eq!(violations(&out.answer), vec![v(CHARADE, "check", "short"), v(METROPOLIS, "check", "short")]);
    assert_eq!(state(&mut e), before);
}

#[test]
fn add_check_refuses_a_taken_name_an_unknown_column_and_a_bad_operator() {
    let mut e = films();
    let (out, _) =
        run(&mut e, "add_check", json!({"table": "film", "name": "rating_range", "check": {"year": {"gt": 0}}}));
    assert!(refused(&out).contains("has a check \"rating_range\" already"));
    let (out, _) = run(&mut e, "add_check", json!({"table": "film", "name": "x", "check": {"yaer": {"gt": 0}}}));
    assert!(bad_input(&out).contains("\"yaer\" names no column of main.public.film (did you mean \"year\"?)"));
    let (out, _) = run(&mut e, "add_check", json!({"table": "film", "name": "x", "check": {"year": {"bigger": 0}}}));
    assert!(bad_input(&out).contains("unknown operator \"bigger\""));
}

#[test]
fn drop_check_removes_the_rule() {
    let mut e = films();
    let (_, edits) = write(&mut e, "drop_check", json!({"table": "film", "name": "rating_range"}));
    assert!(!written(&edits, METASTORE).contains("rating_range"));
    write(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 9}}));
    let (out, _) = run(&mut e, "drop_check", json!({"table": "genre", "name": "parent_by_levl"}));
    assert!(refused(&out).contains("has no check \"parent_by_levl\" (did you mean \"parent_by_level\"?)"));
}

#[test]
fn add_check_keeps_a_description_in_metastore_yaml_and_describe_database() {
    let mut e = films();
    let args = json!({"table": "film", "name": "talkies_later", "check": {"year": {"gte": 1895}},
        "description": "  Films are from 1895 on, when cinema began  "});
    let (_, edits) = write(&mut e, "add_check", args);
    let text = written(&edits, METASTORE);
    assert!(text.contains("      talkies_later: {year: {gte: 1895}}\n"), "{text}");
    assert!(
        text.contains("    check_descriptions:\n      talkies_later: \"Films are from 1895 on, when cinema began\"\n"),
        "{text}"
    );
    let film = |e: &mut Engine| {
        let db = read(e, "describe_database", json!({"table": "film"}));
        db["tables"][0].clone()
    };
    assert_eq!(
        film(&mut e)["check_descriptions"],
        json!({"talkies_later": "Films are from 1895 on, when cinema began"})
    );
    // A write that breaks it is refused with the description beside the rule.
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"year": 1800}}));
    refused(&out);
    let broken = &out.answer["violations"][0]["violations"][0];
    assert_eq!(broken["constraint"], "talkies_later");
    assert_eq!(broken["description"], "Films are from 1895 on, when cinema began", "{broken}");
    // A check without one is listed in checks alone.
    write(&mut e, "add_check", json!({"table": "film", "name": "titled", "check": {"title": {"exists": true}}}));
    let t = film(&mut e);
    assert!(t["checks"].get("titled").is_some());
    assert_eq!(t["check_descriptions"].as_object().unwrap().keys().collect::<Vec<_>>(), vec!["talkies_later"]);
    // Dropping the check drops its description with it.
    let (_, edits) = write(&mut e, "drop_check", json!({"table": "film", "name": "talkies_later"}));
    assert!(!written(&edits, METASTORE).contains("talkies_later"));
    assert!(!written(&edits, METASTORE).contains("check_descriptions"));
    assert_eq!(film(&mut e)["check_descriptions"], json!({}));
}

#[test]
fn add_check_refuses_a_description_that_is_not_one_line_of_text_within_bounds() {
    let mut e = films();
    let before = state(&mut e);
    let with = |d: Value| json!({"table": "film", "name": "later", "check": {"year": {"gte": 1895}}, "description": d});
    let (out, _) = run(&mut e, "add_check", with(json!(5)));
    assert!(bad_input(&out).contains("argument \"description\" must be a string, not a number"));
    let (out, _) = run(&mut e, "add_check", with(json!("x".repeat(201))));
    let text = bad_input(&out);
    assert!(text.contains("description is 201 characters long; keep it to 200 or fewer"), "{text}");
    assert!(text.contains("Hint: A description says what the rule means"), "{text}");
    let (out, _) = run(&mut e, "add_check", with(json!("two\nlines")));
    assert!(bad_input(&out).contains("description must be one line of plain text"));
    let (out, _) = run(&mut e, "add_check", with(json!("   ")));
    assert!(bad_input(&out).contains("description is empty"));
    // 200 characters, of any script, are taken.
    assert_eq!(state(&mut e), before);
    write(&mut e, "add_check", with(json!("é".repeat(200))));
}

// ---------------------------------------------------------------- insert_row, insert_rows

#[test]
fn insert_row_creates_a_note_named_from_name_from_with_links_as_wiki_links() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "insert_row",
        json!({"table": "film", "values": {"title": "The General", "year": 1926, "status": "to watch", "director": "Buster Keaton", "genres": ["Slapstick comedy"], "tags": ["train"]},
               "body": "Buster Keaton drives a locomotive.\n"}),
    );
    let path = "datanotes/main/public/film/The General.md";
    assert_eq!(a["files_changed"], 1);
    assert_eq!(a["planned_edits"][0]["path"], path);
    assert_eq!(a["planned_edits"][0]["create"], true);
    let id = created_id(&edits, path);
    assert_eq!(
        written(&edits, path),
        format!("---\ntable: main.public.film\nid: {id}\ntitle: The General\nyear: 1926\nstatus: to watch\ntags:\n  - train\ndirector: \"[[Buster Keaton]]\"\ngenres:\n  - \"[[Slapstick comedy]]\"\n---\nBuster Keaton drives a locomotive.\n")
    );
    assert!(matches!(&edits[..], [Edit::Write { expect: None, .. }]), "a new note, created once: {edits:?}");
    // A UUIDv7 from the time of the call.
    assert_eq!(id.len(), 36);
    assert_eq!(&id[14..15], "7");
    assert_eq!(i64::from_str_radix(&id[..8], 16).unwrap(), NOW >> 16);
    assert_eq!(
        titles(&mut e, json!({"where": {"director.name": "Buster Keaton"}, "order_by": "year"})),
        vec!["Sherlock Jr.", "The General"]
    );
}

#[test]
fn insert_row_computes_generated_columns_and_names_the_note_from_a_template() {
    let mut e = films();
    let (_, edits) = write(
        &mut e,
        "insert_row",
        json!({"table": "watch", "values": {"film": "Nosferatu", "occurred_at": "2026-10-10T20:00", "where": "cinema"}}),
    );
    let path = "datanotes/main/public/watch/2026-10-10T2000.md";
    let text = written(&edits, path);
    let id = created_id(&edits, path);
    assert_eq!(
        text,
        format!("---\ntable: main.public.watch\nid: {id}\nfilm: \"[[Nosferatu]]\"\noccurred_at: 2026-10-10T20:00\nwhere: cinema\nday: 2026-10-10\nlabel: Nosferatu (10/10 20:00, cinema)\n---\n")
    );
}

#[test]
fn insert_row_refuses_a_generated_column_and_an_unknown_one() {
    let mut e = films();
    let (out, _) = run(
        &mut e,
        "insert_row",
        json!({"table": "watch", "values": {"film": "Nosferatu", "occurred_at": "2026-10-10T20:00", "label": "mine"}}),
    );
    assert!(bad_input(&out).contains("\"label\" is generated: the engine computes it"));
    let (out, _) = run(
        &mut e,
        "insert_row",
        json!({"table": "film", "values": {"title": "The General", "year": 1926, "directr": "Buster Keaton"}}),
    );
    assert!(bad_input(&out).contains("no column \"directr\" in main.public.film (did you mean \"director\"?)"));
}

/// Tries an insert that must be refused; gives its violations and checks nothing changed.
fn insert_refused(table: &str, values: Value) -> (String, Vec<(String, String, String)>) {
    let mut e = films();
    let before = state(&mut e);
    let (out, _) = run(&mut e, "insert_row", json!({"table": table, "values": values}));
    let text = refused(&out);
    assert_eq!(state(&mut e), before, "a refusal changes nothing");
    (text, violations(&out.answer))
}

const GENERAL: &str = "datanotes/main/public/film/The General.md";

#[test]
fn insert_row_is_refused_on_a_value_outside_the_enum() {
    let (text, vs) = insert_refused("film", json!({"title": "The General", "year": 1926, "status": "seen"}));
    assert_eq!(vs, vec![v(GENERAL, "enum", "status")]);
    assert!(text.contains(&format!("{GENERAL}: status \"seen\" is not one of watched, to watch")), "{text}");
    assert!(text.contains("Hint: Fix the values so every rule holds"), "{text}");
}

#[test]
fn insert_row_is_refused_on_a_value_of_the_wrong_type() {
    let (text, vs) = insert_refused("film", json!({"title": "The General", "year": "1926"}));
    assert_eq!(vs, vec![v(GENERAL, "type", "year")]);
    assert!(text.contains("year expected an integer, got \"1926\""), "{text}");
}

#[test]
fn insert_row_is_refused_without_a_required_column() {
    let (text, vs) = insert_refused("film", json!({"title": "The General"}));
    assert_eq!(vs, vec![v(GENERAL, "required", "year")]);
    assert!(text.contains("year is required: set \"year\""), "{text}");
}

#[test]
fn insert_row_is_refused_on_a_duplicate_of_a_unique_column() {
    let mut e = films();
    write(
        &mut e,
        "add_column",
        json!({"table": "film", "column": "imdb", "definition": {"type": "text", "unique": true}}),
    );
    write(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"imdb": "tt0056923"}}));
    let (out, _) = run(
        &mut e,
        "insert_row",
        json!({"table": "film", "values": {"title": "Charade (2002)", "year": 2002, "imdb": "tt0056923"}}),
    );
    let text = refused(&out);
    assert_eq!(violations(&out.answer), vec![v("datanotes/main/public/film/Charade (2002).md", "unique", "imdb")]);
    assert!(text.contains(&format!("imdb \"tt0056923\" is also the value of {CHARADE}")), "{text}");
    assert!(
        text.contains(&format!("Hint: {CHARADE} holds that imdb already: change that row with update_row, or give the new row another imdb.\n")),
        "{text}"
    );
    // The same value written to a row that exists: "this row".
    let (out, _) =
        run(&mut e, "update_row", json!({"table": "film", "path": METROPOLIS, "set": {"imdb": "tt0056923"}}));
    assert!(refused(&out).contains("or give this row another imdb."));
    // A rule of another kind beside it: the general advice follows.
    let (out, _) = run(
        &mut e,
        "update_row",
        json!({"table": "film", "path": METROPOLIS, "set": {"imdb": "tt0056923", "rating": 9}}),
    );
    let text = refused(&out);
    assert!(text.contains("another imdb. Fix the values so every rule holds"), "{text}");
}

#[test]
fn insert_row_duplicate_title_is_reported_as_a_unique_violation() {
    let (_, vs) = insert_refused("film", json!({"title": "Charade", "year": 1963}));
    assert!(vs.iter().any(|(_, code, col)| code == "unique" && col == "title"), "{vs:?}");
}

#[test]
fn insert_row_with_a_taken_note_name_is_refused() {
    let mut e = films();
    let (out, _) = run(&mut e, "insert_row", json!({"table": "film", "values": {"title": "Charade", "year": 1963}}));
    let text = refused(&out);
    assert!(text.contains(&format!("its name would be {CHARADE}, which another note holds")), "{text}");
}

#[test]
fn insert_row_is_refused_on_a_broken_link() {
    let (text, vs) =
        insert_refused("film", json!({"title": "The General", "year": 1926, "director": "Clyde Bruckman"}));
    assert_eq!(vs, vec![v(GENERAL, "broken_link", "director")]);
    assert!(text.contains("director [[Clyde Bruckman]] does not resolve to a row of main.public.person"), "{text}");
    // No person near that name: no guess; how rows are named, found and made.
    assert!(text.contains("main.public.person\nHint: A link names a row of person by its note's name: select_rows {\"table\": \"person\"} lists them, insert_row {\"table\": \"person\", …} makes one.\n"), "{text}");
}

/// A link with a typo in the name of the row it means: the refusal names the
/// row, on the line and in the violation a form shows under the field.
#[test]
fn a_write_refused_for_a_link_to_no_row_names_the_nearest_row() {
    let mut e = films();
    let (out, _) = run(
        &mut e,
        "insert_rows",
        json!({"table": "film", "rows": [
            {"title": "A", "year": 1926, "director": "Fritz Lnag", "genres": ["Slapstik comedy"]},
            {"title": "B", "year": 1927, "director": "Fritz Lnag"}]}),
    );
    let text = refused(&out);
    assert!(text.contains("A.md: director [[Fritz Lnag]] does not resolve to a row of main.public.person (did you mean [[Fritz Lang]]?)\n"), "{text}");
    assert!(text.contains("A.md: genres[0] [[Slapstik comedy]] does not resolve to a row of main.public.genre (did you mean [[Slapstick comedy]]?)\n"), "{text}");
    assert!(text.contains("B.md: director [[Fritz Lnag]] does not resolve to a row of main.public.person (did you mean [[Fritz Lang]]?)\n"), "{text}");
    assert_eq!(
        out.answer["violations"][0]["violations"][0]["message"],
        "[[Fritz Lnag]] does not resolve to a row of main.public.person (did you mean [[Fritz Lang]]?)"
    );
    // Each way out said once; no general advice when each has its own.
    assert!(
        text.contains("Hint: A link names a row of person by its note's name: select_rows {\"table\": \"person\"} lists them, insert_row {\"table\": \"person\", …} makes one. A link names a row of genre by its note's name: select_rows {\"table\": \"genre\"} lists them, insert_row {\"table\": \"genre\", …} makes one.\n"),
        "{text}"
    );
}

#[test]
fn insert_row_is_refused_on_a_link_to_a_row_of_another_table() {
    let (text, vs) =
        insert_refused("film", json!({"title": "The General", "year": 1926, "director": "Slapstick comedy"}));
    assert_eq!(vs, vec![v(GENERAL, "broken_link", "director")]);
    assert!(
        text.contains("is datanotes/main/public/genre/Slapstick comedy.md, not a row of main.public.person"),
        "{text}"
    );
}

#[test]
fn insert_row_is_refused_on_a_check_that_follows_a_link() {
    // A genre must hang from an era; Cinema is the top level.
    let (text, vs) = insert_refused("genre", json!({"name": "Film noir", "kind": "genre", "parent": "Cinema"}));
    assert_eq!(vs, vec![v("datanotes/main/public/genre/Film noir.md", "check", "parent_by_level")]);
    assert!(
        text.contains("violates CHECK parent_by_level: {\"or\":[{\"kind\":\"cinema\",\"parent\":{\"exists\":false}}"),
        "{text}"
    );
}

#[test]
fn insert_row_lists_every_violation_of_the_row() {
    let (_, vs) = insert_refused(
        "film",
        json!({"title": "The General", "year": 1926.5, "rating": 0, "genres": ["Slapstick comedy", "Nowhere"]}),
    );
    assert_eq!(
        vs,
        vec![v(GENERAL, "type", "year"), v(GENERAL, "broken_link", "genres"), v(GENERAL, "check", "rating_range")]
    );
}

#[test]
fn insert_rows_inserts_each_row() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "insert_rows",
        json!({"table": "person", "rows": [{"name": "Clyde Bruckman", "born": 1894}, {"name": "Thea von Harbou", "born": 1888}]}),
    );
    assert_eq!(a["summary"], "insert 2 rows into person");
    assert_eq!(
        written_paths(&edits),
        vec!["datanotes/main/public/person/Clyde Bruckman.md", "datanotes/main/public/person/Thea von Harbou.md"]
    );
    assert_eq!(read(&mut e, "describe_database", json!({"table": "person"}))["tables"][0]["row_count"], 12);
}

#[test]
fn insert_rows_is_checked_as_a_whole() {
    let mut e = films();
    let before = state(&mut e);
    let (out, _) = run(
        &mut e,
        "insert_rows",
        json!({"table": "person", "rows": [{"name": "Clyde Bruckman", "born": 1894}, {"name": "Thea von Harbou", "born": "1888"}]}),
    );
    refused(&out);
    assert_eq!(violations(&out.answer), vec![v("datanotes/main/public/person/Thea von Harbou.md", "type", "born")]);
    assert_eq!(state(&mut e), before);
    let (out, _) = run(&mut e, "insert_rows", json!({"table": "person", "rows": [{"name": "A"}, "B"]}));
    assert!(bad_input(&out).contains("rows[1] must be an object of column values"));
    let (out, _) = run(&mut e, "insert_rows", json!({"table": "person", "rows": [{"name": "Twin"}, {"name": "Twin"}]}));
    refused(&out);
    assert_eq!(state(&mut e), before);
}

// ---------------------------------------------------------------- update_row, update_rows

/// Charade as a person might have written it: comments, quotes, flow lists, odd spacing.
const CHARADE_BY_HAND: &str = "---
table: main.public.film
id: 01a0c046-cd8d-7b83-b93c-28130654d8df
# seen twice
title: 'Charade'
year:   1963   # the original
minutes: 113
status: \"watched\"
rating: 5 # out of 5
tags: [seen-2026, film-night]
director: \"[[Stanley Donen]]\"
genres:
    - \"[[Thriller]]\"
---
[[Audrey Hepburn]] and [[Cary Grant]] in Paris.

## Notes
- rewatch: yes
";

#[test]
fn update_row_changes_only_the_key_it_sets() {
    let mut e = films();
    let (a, edits) = write(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(a["planned_edits"], json!([{"path": CHARADE, "set": {"rating": 4}, "remove": []}]));
    assert_eq!(a["notes_changed"], 1);
    assert_eq!(
        edits,
        vec![Edit::Write {
            path: CHARADE.into(),
            text: original(CHARADE).replace("rating: 5\n", "rating: 4\n"),
            expect: Some(hash(&original(CHARADE)))
        }]
    );
}

#[test]
fn update_row_keeps_comments_quoting_and_other_keys_byte_for_byte() {
    let mut e = films_with(&[(CHARADE, CHARADE_BY_HAND)]);
    let (_, edits) = write(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(written(&edits, CHARADE), CHARADE_BY_HAND.replace("rating: 5 # out of 5\n", "rating: 4 # out of 5\n"));
    let (_, edits) = write(
        &mut e,
        "update_row",
        json!({"table": "film", "path": CHARADE, "set": {"minutes": 114}, "remove": ["tags"]}),
    );
    let expected = CHARADE_BY_HAND
        .replace("rating: 5 # out of 5\n", "rating: 4 # out of 5\n")
        .replace("minutes: 113\n", "minutes: 114\n")
        .replace("tags: [seen-2026, film-night]\n", "");
    assert_eq!(written(&edits, CHARADE), expected);
}

#[test]
fn update_row_keeps_crlf_line_endings() {
    let crlf = original(NOSFERATU).replace('\n', "\r\n");
    let mut e = films_with(&[(NOSFERATU, &crlf)]);
    let (_, edits) = write(&mut e, "update_row", json!({"table": "film", "path": NOSFERATU, "set": {"rating": 3}}));
    assert_eq!(
        written(&edits, NOSFERATU),
        crlf.replace("---\r\nAn unauthorised", "rating: 3\r\n---\r\nAn unauthorised")
    );
}

#[test]
fn update_row_replaces_the_body_and_keeps_the_front_matter() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "update_row",
        json!({"table": "film", "path": NOSFERATU, "body": "Max Schreck is Count Orlok.\n"}),
    );
    assert_eq!(a["planned_edits"], json!([{"path": NOSFERATU, "set": {}, "remove": [], "body": true}]));
    let old = original(NOSFERATU);
    let front = &old[..old.find("---\nAn").unwrap() + 4];
    assert_eq!(written(&edits, NOSFERATU), format!("{front}Max Schreck is Count Orlok.\n"));
}

#[test]
fn update_row_that_changes_nothing_writes_nothing() {
    let mut e = films();
    let (out, edits) = run(
        &mut e,
        "update_row",
        json!({"table": "film", "path": CHARADE, "set": {"rating": 5, "director": "Stanley Donen"}}),
    );
    assert_eq!(out.status, Status::Ok, "{:#}", out.answer);
    assert!(edits.is_empty());
    assert_eq!(out.answer["notes_changed"], 0);
}

#[test]
fn update_row_renaming_a_row_renames_its_note_and_rewrites_the_links_to_it() {
    let mut e = films();
    let (_, edits) =
        write(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"title": "Charade (1963)"}}));
    let new = "datanotes/main/public/film/Charade (1963).md";
    assert_eq!(moves(&edits), vec![(CHARADE.to_string(), new.to_string())]);
    assert_eq!(written(&edits, new), original(CHARADE).replace("title: Charade\n", "title: Charade (1963)\n"));
    // Bodies of other rows.
    for person in ["Audrey Hepburn", "Cary Grant", "Stanley Donen"] {
        let p = format!("datanotes/main/public/person/{person}.md");
        assert_eq!(written(&edits, &p), original(&p).replace("[[Charade]]", "[[Charade (1963)]]"), "{p}");
    }
    // Front matter of the watch that links to it, whose label follows the title.
    assert_eq!(
        written(&edits, WATCH_CHARADE),
        original(WATCH_CHARADE)
            .replace("film: \"[[Charade]]\"", "film: \"[[Charade (1963)]]\"")
            .replace("label: Charade (25/09 21:00, home)", "label: Charade (1963) (25/09 21:00, home)")
    );
    assert_eq!(
        written_paths(&edits).len(),
        5,
        "the renamed note, three persons and the watch: {:?}",
        written_paths(&edits)
    );
    assert_eq!(read(&mut e, "check_table", json!({}))["total"], 0);
}

#[test]
fn update_row_renaming_a_row_rewrites_links_in_plain_notes() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "update_row",
        json!({"table": "watch", "path": WATCH_CHARADE, "set": {"occurred_at": "2026-09-25T22:00"}}),
    );
    let new = "datanotes/main/public/watch/2026-09-25T2200.md";
    assert_eq!(moves(&edits), vec![(WATCH_CHARADE.to_string(), new.to_string())]);
    assert_eq!(written(&edits, FILM_NIGHT), "Friday evening with friends: we watched [[2026-09-25T2200]].\n");
    assert_eq!(
        written(&edits, new),
        original(WATCH_CHARADE)
            .replace("occurred_at: 2026-09-25T21:00", "occurred_at: 2026-09-25T22:00")
            .replace("label: Charade (25/09 21:00, home)", "label: Charade (25/09 22:00, home)")
    );
    assert_eq!(a["notes_changed"], 2);
}

#[test]
fn update_row_changing_a_film_title_recomputes_the_labels_of_its_watches() {
    let mut e = films();
    let (_, edits) = write(
        &mut e,
        "update_row",
        json!({"table": "film", "path": HIS_GIRL_FRIDAY, "set": {"title": "His Girl Friday!"}}),
    );
    assert_eq!(
        written(&edits, WATCH_HGF),
        original(WATCH_HGF)
            .replace("film: \"[[His Girl Friday]]\"", "film: \"[[His Girl Friday!]]\"")
            .replace("label: His Girl Friday (03/10", "label: His Girl Friday! (03/10")
    );
    let a = read(
        &mut e,
        "select_rows",
        json!({"table": "watch", "columns": ["label"], "where": {"film.title": "His Girl Friday!"}}),
    );
    assert_eq!(a["rows"][0]["label"], "His Girl Friday! (03/10 21:30, home)");
}

#[test]
fn update_row_is_refused_on_a_broken_rule_and_changes_nothing() {
    let mut e = films();
    let before = state(&mut e);
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 6}}));
    let text = refused(&out);
    assert!(text.contains(&format!("{CHARADE}: violates CHECK rating_range")), "{text}");
    // Why: what the row would hold where the rule looks.
    assert!(text.contains("(the row holds {\"rating\":6})"), "{text}");
    assert_eq!(out.answer["violations"][0]["violations"][0]["value"], json!({"rating": 6}), "{}", out.answer);
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "remove": ["year"]}));
    assert_eq!(violations(&out.answer), vec![v(CHARADE, "required", "year")]);
    let (out, _) = run(
        &mut e,
        "update_row",
        json!({"table": "genre", "path": "datanotes/main/public/genre/Silent film.md", "set": {"kind": "cinema"}}),
    );
    // Silent film breaks the check, and so does Expressionism, which hangs from it.
    let vs = violations(&out.answer);
    assert!(vs.contains(&v("datanotes/main/public/genre/Silent film.md", "check", "parent_by_level")), "{vs:?}");
    assert!(vs.contains(&v("datanotes/main/public/genre/Expressionism.md", "check", "parent_by_level")), "{vs:?}");
    assert_eq!(state(&mut e), before);
}

#[test]
fn update_row_renaming_onto_a_taken_name_is_refused() {
    let mut e = films();
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"title": "Metropolis"}}));
    let text = refused(&out);
    assert!(text.contains(&format!("its name would be {METROPOLIS}, which another note holds")), "{text}");
}

#[test]
fn update_row_refuses_a_note_that_is_not_a_row_of_the_table() {
    let mut e = films();
    let (out, _) = run(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Charad.md", "set": {"rating": 4}}),
    );
    let text = refused(&out);
    assert!(text.contains("\"datanotes/main/public/film/Charad.md\" is not a row of main.public.film"), "{text}");
    assert!(text.contains(&format!("Hint: Did you mean \"{CHARADE}\"?")), "{text}");
    // A row's title, or its file's name, given for its path: the path is shown.
    for given in ["Charade", "charade.md", "film/Charade.md"] {
        let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": given, "set": {"rating": 4}}));
        let text = refused(&out);
        assert!(text.contains(&format!("Hint: Did you mean \"{CHARADE}\"?")), "{given}: {text}");
    }
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": "Vertigo", "set": {"rating": 4}}));
    assert!(
        refused(&out).contains("Hint: The rows of main.public.film are the notes under datanotes/main/public/film/")
    );
    let (out, _) = run(&mut e, "update_row", json!({"table": "person", "path": CHARADE, "set": {"born": 1}}));
    assert!(refused(&out).contains("is not a row of main.public.person"));
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": FILM_NIGHT, "set": {"rating": 1}}));
    refused(&out);
}

#[test]
fn update_row_on_a_row_of_another_table_named_with_two_dots_is_refused_as_not_a_row() {
    let mut e = films();
    let (out, _) = run(&mut e, "update_row", json!({"table": "person", "path": SHERLOCK, "set": {"born": 1}}));
    assert!(refused(&out).contains("is not a row of main.public.person"));
}

#[test]
fn update_row_if_match_refuses_a_stale_version() {
    let mut e = films();
    let h = hash(&original(CHARADE));
    write(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}, "if_match": &h[..12]}));
    let (out, _) =
        run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 3}, "if_match": h}));
    let text = refused(&out);
    assert!(text.contains(&format!("{CHARADE} changed since it was read")), "{text}");
    assert_eq!(out.answer["current"][0]["rating"], 4);
    assert_eq!(
        out.answer["current"][0]["_version"],
        &hash(&original(CHARADE).replace("rating: 5\n", "rating: 4\n"))[..16]
    );
}

#[test]
fn update_rows_changes_every_matching_row() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "update_rows",
        json!({"table": "film", "where": {"status": "to watch"}, "set": {"status": "watched", "rating": 3}}),
    );
    assert_eq!(a["notes_changed"], 2);
    assert_eq!(
        written(&edits, NOSFERATU),
        original(NOSFERATU)
            .replace("status: to watch\n", "status: watched\n")
            .replace("---\nAn unauthorised", "rating: 3\n---\nAn unauthorised")
    );
    assert_eq!(written_paths(&edits), vec![POTEMKIN, NOSFERATU]);
    assert!(titles(&mut e, json!({"where": {"status": "to watch"}})).is_empty());
}

#[test]
fn update_rows_removes_keys_and_is_refused_as_a_whole() {
    let mut e = films();
    let (_, edits) =
        write(&mut e, "update_rows", json!({"table": "film", "where": {"year": {"lt": 1930}}, "remove": ["tags"]}));
    assert_eq!(written_paths(&edits), vec![METROPOLIS, SHERLOCK]);
    let before = state(&mut e);
    let (out, _) = run(
        &mut e,
        "update_rows",
        json!({"table": "film", "where": {"rating": {"exists": true}}, "set": {"rating": 6}}),
    );
    refused(&out);
    assert_eq!(out.answer["violations_total"], 5);
    assert_eq!(state(&mut e), before);
    let (out, _) = run(&mut e, "update_rows", json!({"table": "film", "where": {"ratin": 1}, "set": {"rating": 2}}));
    assert!(bad_input(&out).contains("where: no column \"ratin\" in main.public.film (did you mean \"rating\"?)"));
}

// ---------------------------------------------------------------- delete_rows

#[test]
fn delete_rows_archives_by_default() {
    let mut e = films();
    let (a, edits) = write(&mut e, "delete_rows", json!({"table": "film", "where": {"title": "Nosferatu"}}));
    assert_eq!(a["summary"], "archive 1 rows of film");
    assert_eq!(
        edits,
        vec![Edit::Move {
            from: NOSFERATU.into(),
            to: "datanotes/_archive/main/public/film/Nosferatu.md".into(),
            expect: hash(&original(NOSFERATU))
        }]
    );
    assert!(!titles(&mut e, json!({})).contains(&"Nosferatu".to_string()));
}

#[test]
fn delete_rows_to_the_trash_by_paths() {
    let mut e = films();
    let (a, edits) =
        write(&mut e, "delete_rows", json!({"table": "film", "paths": [POTEMKIN, NOSFERATU], "mode": "trash"}));
    assert_eq!(a["summary"], "trash 2 rows of film");
    assert_eq!(
        edits,
        vec![
            Edit::Trash { path: POTEMKIN.into(), expect: hash(&original(POTEMKIN)) },
            Edit::Trash { path: NOSFERATU.into(), expect: hash(&original(NOSFERATU)) },
        ]
    );
    assert_eq!(read(&mut e, "describe_database", json!({"table": "film"}))["tables"][0]["row_count"], 5);
}

#[test]
fn delete_rows_is_refused_when_it_would_leave_dangling_links() {
    for mode in ["archive", "trash"] {
        let mut e = films();
        let before = state(&mut e);
        let (out, _) =
            run(&mut e, "delete_rows", json!({"table": "film", "where": {"title": "Metropolis"}, "mode": mode}));
        let text = refused(&out);
        assert!(text.contains("datanotes/main/public/watch/2026-10-08T1930.md: film [[Metropolis]]"), "{mode}: {text}");
        // Not a typo to guess at: the rows that link to it are named, and the way out is theirs.
        assert!(!text.contains("did you mean"), "{mode}: {text}");
        assert!(
            text.contains("Hint: The rows listed that this write does not write link to rows it changes, takes away or moves, and would break their rules then: change those rows first (update_row, update_rows), then run it again.\n"),
            "{mode}: {text}"
        );
        assert!(violations(&out.answer).contains(&v(
            "datanotes/main/public/watch/2026-10-08T1930.md",
            "broken_link",
            "film"
        )));
        assert_eq!(state(&mut e), before);
    }
    let mut e = films();
    let (out, _) = run(&mut e, "delete_rows", json!({"table": "genre", "where": {"name": "Silent film"}}));
    let vs = violations(&out.answer);
    assert!(vs.contains(&v("datanotes/main/public/genre/Expressionism.md", "broken_link", "parent")), "{vs:?}");
}

#[test]
fn delete_rows_refuses_bad_arguments() {
    let mut e = films();
    let (out, _) = run(&mut e, "delete_rows", json!({"table": "film"}));
    assert!(bad_input(&out).contains("give where or paths (one of them)"));
    let (out, _) =
        run(&mut e, "delete_rows", json!({"table": "film", "where": {"title": "Nosferatu"}, "mode": "shred"}));
    assert!(bad_input(&out).contains("mode \"shred\" is not archive or trash"));
    let (out, _) =
        run(&mut e, "delete_rows", json!({"table": "film", "paths": ["datanotes/main/public/film/Nosferatu 2.md"]}));
    assert!(refused(&out).contains("is not a row of main.public.film"));
}

/// A where that compares a column with a value of another type matches no row
/// (or, under ne, every row): the operations that take one refuse it and name
/// what to write, and nothing is touched.
#[test]
fn a_where_of_the_wrong_type_is_refused_before_anything_is_written() {
    let mut e = films();
    let before = state(&mut e);
    for (op, args) in [
        ("select_rows", json!({"table": "film", "where": {"year": {"gt": "1950"}}})),
        ("update_rows", json!({"table": "film", "where": {"year": {"ne": "1950"}}, "set": {"rating": 1}})),
        ("delete_rows", json!({"table": "film", "where": {"year": {"ne": "1950"}}, "mode": "trash"})),
        ("create_view", json!({"name": "late", "table": "film", "where": {"year": {"gte": "1950"}}})),
        ("add_check", json!({"table": "film", "name": "modern", "check": {"year": {"gt": "1950"}}})),
        ("list_changes", json!({"tables": ["film"], "where": {"year": {"lt": "1950"}}})),
    ] {
        let (out, edits) = run(&mut e, op, args);
        let text = bad_input(&out);
        assert!(text.contains("which holds integers, with a string (\"1950\")"), "{op}: {text}");
        assert!(text.contains("write {\"year\": {\""), "{op}: {text}");
        assert!(edits.is_empty(), "{op}");
    }
    assert_eq!(state(&mut e), before);
    // Written as the message says, the same filters run.
    assert!(!titles(&mut e, json!({"where": {"year": {"gt": 1950}}})).is_empty());
    let (out, _) = run(&mut e, "select_rows", json!({"table": "film", "where": {"rating": {"contains": 4}}}));
    assert!(bad_input(&out).contains("holds none"));
}

#[test]
fn delete_rows_matching_nothing_writes_nothing() {
    let mut e = films();
    let (out, edits) = run(&mut e, "delete_rows", json!({"table": "film", "where": {"year": {"gt": 2000}}}));
    assert_eq!(out.status, Status::Ok);
    assert!(edits.is_empty());
}

// ---------------------------------------------------------------- merge_rows, batch

#[test]
fn merge_rows_updates_the_row_with_the_key_and_inserts_the_other() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "merge_rows",
        json!({"table": "film", "key": ["title"], "rows": [{"title": "Nosferatu", "status": "watched", "rating": 3}, {"title": "The General", "year": 1926, "director": "Buster Keaton"}]}),
    );
    assert_eq!(a["summary"], "merge 2 rows into film");
    assert_eq!(a["notes_changed"], 1);
    assert_eq!(a["files_changed"], 1);
    assert_eq!(
        written(&edits, NOSFERATU),
        original(NOSFERATU)
            .replace("status: to watch\n", "status: watched\n")
            .replace("---\nAn unauthorised", "rating: 3\n---\nAn unauthorised")
    );
    let id = created_id(&edits, GENERAL);
    assert_eq!(written(&edits, GENERAL), format!("---\ntable: main.public.film\nid: {id}\ntitle: The General\nyear: 1926\ndirector: \"[[Buster Keaton]]\"\n---\n"));
}

#[test]
fn merge_rows_refuses_a_bad_key_and_a_row_without_it() {
    let mut e = films();
    let (out, _) = run(&mut e, "merge_rows", json!({"table": "film", "key": ["titel"], "rows": [{"title": "x"}]}));
    assert!(bad_input(&out).contains("key: no column \"titel\" in main.public.film (did you mean \"title\"?)"));
    let (out, _) = run(&mut e, "merge_rows", json!({"table": "film", "key": [], "rows": [{"title": "x"}]}));
    assert!(bad_input(&out).contains("key is empty"));
    let (out, _) = run(&mut e, "merge_rows", json!({"table": "film", "key": ["title"], "rows": [{"year": 1926}]}));
    assert!(bad_input(&out).contains("rows[0] lacks a key column (title)"));
    let (out, _) = run(
        &mut e,
        "merge_rows",
        json!({"table": "film", "key": ["title"], "rows": [{"title": "Nosferatu", "rating": 0}]}),
    );
    assert_eq!(violations(&out.answer), vec![v(NOSFERATU, "check", "rating_range")]);
}

#[test]
fn batch_applies_its_steps_as_one_write() {
    let mut e = films();
    let (a, edits) = write(
        &mut e,
        "batch",
        json!({"operations": [
            {"op": "insert_row", "args": {"table": "person", "values": {"name": "Clyde Bruckman", "born": 1894}}},
            {"op": "insert_row", "args": {"table": "film", "values": {"title": "The General", "year": 1926, "director": "Clyde Bruckman"}}},
            {"op": "update_row", "args": {"table": "film", "path": NOSFERATU, "set": {"rating": 4}}}
        ]}),
    );
    assert_eq!(a["op"], "batch");
    assert_eq!(a["summary"], "batch of 3: insert into person; insert into film; update film");
    assert_eq!(written_paths(&edits), vec![NOSFERATU, GENERAL, "datanotes/main/public/person/Clyde Bruckman.md"]);
    assert_eq!(read(&mut e, "check_table", json!({}))["total"], 0);
}

#[test]
fn batch_with_one_bad_step_refuses_everything() {
    let mut e = films();
    let before = state(&mut e);
    let (out, _) = run(
        &mut e,
        "batch",
        json!({"operations": [
            {"op": "update_row", "args": {"table": "film", "path": NOSFERATU, "set": {"rating": 4}}},
            {"op": "add_column", "args": {"table": "film", "column": "country", "definition": {"type": "text"}}},
            {"op": "update_row", "args": {"table": "film", "path": CHARADE, "set": {"rating": 7}}}
        ]}),
    );
    let text = refused(&out);
    assert!(text.starts_with("batch refused — nothing was written:"), "{text}");
    assert_eq!(violations(&out.answer), vec![v(CHARADE, "check", "rating_range")]);
    assert_eq!(state(&mut e), before, "neither the rows nor the schema changed");
}

#[test]
fn batch_refuses_reads_unknown_steps_and_bad_step_arguments() {
    let mut e = films();
    let (out, _) = run(&mut e, "batch", json!({"operations": [{"op": "select_rows", "args": {"table": "film"}}]}));
    assert!(bad_input(&out).contains("operations[0]: select_rows cannot be part of a batch"));
    let (out, _) = run(&mut e, "batch", json!({"operations": [{"op": "configure_database", "args": {}}]}));
    bad_input(&out);
    let (out, _) = run(&mut e, "batch", json!({"operations": [{"op": "insert_rw", "args": {}}]}));
    assert!(bad_input(&out).contains("unknown operation \"insert_rw\" (did you mean \"insert_row\"?)"));
    // No name close enough: the hint names them all.
    let (out, _) = run(&mut e, "journal_of_writes", json!({}));
    let text = bad_input(&out);
    assert!(text.contains("unknown operation \"journal_of_writes\"\n"), "{text}");
    assert!(text.contains("Hint: The operations: ") && text.contains(", list_migrations, "), "{text}");
    let (out, _) =
        run(&mut e, "batch", json!({"operations": [{"op": "insert_row", "args": {"table": "film", "valus": {}}}]}));
    assert!(
        bad_input(&out).contains("operations[0] (insert_row): unknown argument \"valus\" (did you mean \"values\"?)")
    );
    let (out, _) = run(&mut e, "batch", json!({"operations": []}));
    assert!(bad_input(&out).contains("operations is empty"));
    let (out, _) = run(&mut e, "batch", json!({"operations": [{"args": {}}]}));
    assert!(bad_input(&out).contains("operations[0] needs \"op\""));
}

// ---------------------------------------------------------------- select_rows

#[test]
fn select_rows_answers_every_column_with_path_and_id() {
    let mut e = films();
    let a = read(&mut e, "select_rows", json!({"table": "film", "where": {"title": "Charade"}}));
    assert_eq!(a["table"], "main.public.film");
    assert_eq!(a["total"], 1);
    assert_eq!(a["rows"][0]["_version"], &hash(&original(CHARADE))[..16]);
    assert_eq!(
        unversioned(a["rows"][0].clone()),
        json!({"path": CHARADE, "id": "01a0c046-cd8d-7b83-b93c-28130654d8df", "title": "Charade", "year": 1963, "minutes": 113, "status": "watched",
               "rating": 5, "tags": ["seen-2026", "film-night"], "director": "[[Stanley Donen]]", "genres": ["[[Thriller]]"]})
    );
    let a = read(
        &mut e,
        "select_rows",
        json!({"table": "main.public.film", "columns": ["title", "rating"], "where": {"title": "Nosferatu"}}),
    );
    assert_eq!(unversioned(a["rows"].clone()), json!([{"path": NOSFERATU, "title": "Nosferatu", "rating": null}]));
}

#[test]
fn select_rows_where_compares_with_every_operator() {
    let mut e = films();
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"year": 1925}), vec!["Battleship Potemkin", "The Gold Rush"]),
        (json!({"year": {"eq": 1963}}), vec!["Charade"]),
        (json!({"status": {"ne": "watched"}}), vec!["Battleship Potemkin", "Nosferatu"]),
        (json!({"year": {"gt": 1940}}), vec!["Charade"]),
        (json!({"year": {"gte": 1940}}), vec!["Charade", "His Girl Friday"]),
        (json!({"year": {"lt": 1924}}), vec!["Nosferatu"]),
        (json!({"year": {"lte": 1924}}), vec!["Nosferatu", "Sherlock Jr."]),
        (json!({"title": {"in": ["Charade", "Metropolis", "Vertigo"]}}), vec!["Charade", "Metropolis"]),
        (json!({"title": {"contains": "Gold"}}), vec!["The Gold Rush"]),
        (json!({"tags": {"contains": "film-night"}}), vec!["Charade"]),
        (json!({"title": {"starts_with": "The"}}), vec!["The Gold Rush"]),
        (json!({"rating": {"exists": false}}), vec!["Battleship Potemkin", "Nosferatu"]),
        (json!({"tags": {"exists": true}}), vec!["Charade", "His Girl Friday", "Metropolis", "Sherlock Jr."]),
        (json!({"and": [{"status": "watched"}, {"rating": 5}]}), vec!["Charade", "Metropolis"]),
        (json!({"or": [{"year": 1922}, {"year": 1963}]}), vec!["Charade", "Nosferatu"]),
        (json!({"not": {"status": "watched"}}), vec!["Battleship Potemkin", "Nosferatu"]),
        (json!({"year": {"gte": 1924, "lt": 1927}}), vec!["Battleship Potemkin", "Sherlock Jr.", "The Gold Rush"]),
        (json!({"rating": null}), vec!["Battleship Potemkin", "Nosferatu"]),
        (
            json!({}),
            vec![
                "Battleship Potemkin",
                "Charade",
                "His Girl Friday",
                "Metropolis",
                "Nosferatu",
                "Sherlock Jr.",
                "The Gold Rush",
            ],
        ),
    ];
    for (w, want) in cases {
        assert_eq!(titles(&mut e, json!({"where": w.clone()})), want, "where {w}");
    }
}

#[test]
fn select_rows_where_compares_links_by_target() {
    let mut e = films();
    assert_eq!(titles(&mut e, json!({"where": {"director": "Fritz Lang"}})), vec!["Metropolis"]);
    assert_eq!(titles(&mut e, json!({"where": {"director": "[[fritz lang]]"}})), vec!["Metropolis"]);
    assert_eq!(titles(&mut e, json!({"where": {"genres": "[[Expressionism]]"}})), vec!["Metropolis", "Nosferatu"]);
    assert_eq!(titles(&mut e, json!({"where": {"director": {"starts_with": "F"}}})), vec!["Metropolis", "Nosferatu"]);
}

/// Text compares case-sensitively: a filter that finds nothing only because of
/// case says so, with what the rows hold, so the next filter finds them.
#[test]
fn select_rows_that_case_keeps_from_matching_say_what_the_rows_hold() {
    let mut e = films();
    let a = read(&mut e, "select_rows", json!({"table": "film", "where": {"title": {"contains": "charade"}}}));
    assert_eq!(a["total"], 0);
    assert_eq!(
        a["hint"],
        format!("no row matches as written: text compares case-sensitively, and 1 row would with case ignored: {{\"title\":\"Charade\"}} ({CHARADE}); write the filter as the rows hold it")
    );
    let a = read(
        &mut e,
        "select_rows",
        json!({"table": "film", "where": {"director.name": {"starts_with": "STANLEY"}, "year": {"gt": 1950}}}),
    );
    assert!(a["hint"].as_str().unwrap().contains("{\"director.name\":\"Stanley Donen\",\"year\":1963}"), "{a}");
    // The hint's advice, taken: found.
    let a = read(&mut e, "select_rows", json!({"table": "film", "where": {"title": {"contains": "Charade"}}}));
    assert_eq!(a["total"], 1);
    assert!(a.get("hint").is_none());
    // Nothing with case ignored either, or rows found: no hint.
    let a = read(&mut e, "select_rows", json!({"table": "film", "where": {"title": "Vertigo"}}));
    assert_eq!((&a["total"], a.get("hint")), (&json!(0), None));
}

/// The writes that take a filter say the same when case is why they changed
/// nothing; a dry run too. Rows found, or none with case ignored: no hint.
#[test]
fn update_and_delete_rows_that_case_keeps_from_matching_say_what_the_rows_hold() {
    let mut e = films();
    let said = format!("no row matches as written: text compares case-sensitively, and 1 row would with case ignored: {{\"title\":\"Charade\"}} ({CHARADE}); write the filter as the rows hold it");
    for dry_run in [true, false] {
        let (a, edits) = write(
            &mut e,
            "update_rows",
            json!({"table": "film", "where": {"title": "charade"}, "set": {"rating": 4}, "dry_run": dry_run}),
        );
        assert_eq!((&a["notes_changed"], &a["hint"], edits.len()), (&json!(0), &json!(said), 0), "{a}");
    }
    let (a, edits) =
        write(&mut e, "delete_rows", json!({"table": "film", "where": {"title": {"in": ["charade", "x"]}}}));
    assert_eq!((&a["notes_changed"], &a["hint"], edits.len()), (&json!(0), &json!(said), 0), "{a}");
    let (a, _) =
        write(&mut e, "update_rows", json!({"table": "film", "where": {"title": "Vertigo"}, "set": {"rating": 4}}));
    assert_eq!((&a["notes_changed"], a.get("hint")), (&json!(0), None), "{a}");
    let (a, _) =
        write(&mut e, "update_rows", json!({"table": "film", "where": {"title": "Charade"}, "set": {"rating": 4}}));
    assert_eq!((&a["notes_changed"], a.get("hint")), (&json!(1), None), "{a}");
}

#[test]
fn select_rows_where_follows_links_with_dotted_paths() {
    let mut e = films();
    assert_eq!(titles(&mut e, json!({"where": {"director.born": {"lt": 1890}}})), vec!["Nosferatu", "The Gold Rush"]);
    // Through a list of links, then a link.
    assert_eq!(
        titles(&mut e, json!({"where": {"genres.parent.name": "Sound film"}})),
        vec!["Charade", "His Girl Friday"]
    );
    let a = read(
        &mut e,
        "select_rows",
        json!({"table": "watch", "columns": ["label"], "where": {"film.director.name": "Fritz Lang"}}),
    );
    assert_eq!(
        unversioned(a["rows"].clone()),
        json!([{"path": "datanotes/main/public/watch/2026-10-08T1930.md", "label": "Metropolis (08/10 19:30, cinema)"}])
    );
    let a =
        read(&mut e, "select_rows", json!({"table": "genre", "columns": ["name"], "where": {"parent.kind": "cinema"}}));
    assert_eq!(a["total"], 2);
}

#[test]
fn select_rows_orders_by_a_column_its_reverse_and_several_keys() {
    let mut e = films();
    let by_year = vec![
        "Nosferatu",
        "Sherlock Jr.",
        "Battleship Potemkin",
        "The Gold Rush",
        "Metropolis",
        "His Girl Friday",
        "Charade",
    ];
    assert_eq!(titles(&mut e, json!({"order_by": "year"})), by_year);
    assert_eq!(titles(&mut e, json!({"order_by": "year asc"})), by_year);
    let rev = vec![
        "Charade",
        "His Girl Friday",
        "Metropolis",
        "Battleship Potemkin",
        "The Gold Rush",
        "Sherlock Jr.",
        "Nosferatu",
    ];
    // Ties keep the path order whichever the direction.
    assert_eq!(titles(&mut e, json!({"order_by": "-year"})), rev);
    assert_eq!(titles(&mut e, json!({"order_by": "year desc"})), rev);
    assert_eq!(
        titles(&mut e, json!({"order_by": ["status", "-year"]})),
        vec![
            "Battleship Potemkin",
            "Nosferatu",
            "Charade",
            "His Girl Friday",
            "Metropolis",
            "The Gold Rush",
            "Sherlock Jr."
        ]
    );
    assert_eq!(
        titles(&mut e, json!({"order_by": "director.name"})),
        vec![
            "Sherlock Jr.",
            "The Gold Rush",
            "Nosferatu",
            "Metropolis",
            "His Girl Friday",
            "Battleship Potemkin",
            "Charade"
        ]
    );
    // Rows without the value come last.
    assert_eq!(titles(&mut e, json!({"order_by": "rating"}))[5..], ["Battleship Potemkin", "Nosferatu"]);
}

#[test]
fn select_rows_descending_keeps_absent_values_last() {
    let mut e = films();
    assert_eq!(titles(&mut e, json!({"order_by": "-rating", "limit": 2})), vec!["Charade", "Metropolis"]);
}

#[test]
fn select_rows_pages_with_limit_and_offset() {
    let mut e = films();
    let a = read(&mut e, "select_rows", json!({"table": "film", "columns": ["year"], "order_by": "year", "limit": 3}));
    assert_eq!(a["total"], 7);
    assert_eq!(a["rows"].as_array().unwrap().len(), 3);
    assert_eq!(a["next_offset"], 3);
    let a = read(
        &mut e,
        "select_rows",
        json!({"table": "film", "columns": ["title"], "order_by": "year", "limit": 3, "offset": 3}),
    );
    assert_eq!(paths(&a), vec!["datanotes/main/public/film/The Gold Rush.md", METROPOLIS, HIS_GIRL_FRIDAY]);
    assert_eq!(a["next_offset"], 6);
    let a = read(&mut e, "select_rows", json!({"table": "film", "order_by": "year", "limit": 3, "offset": 6}));
    assert_eq!(paths(&a), vec![CHARADE]);
    assert_eq!(a.get("next_offset"), None, "the last page has no next_offset");
    let a = read(&mut e, "select_rows", json!({"table": "film", "offset": 50}));
    assert_eq!((a["total"].as_u64(), a["rows"].as_array().unwrap().len()), (Some(7), 0));
}

#[test]
fn select_rows_refuses_unknown_columns_operators_and_bad_limits() {
    let mut e = films();
    let (out, _) = run(&mut e, "select_rows", json!({"table": "film", "columns": ["titel"]}));
    let text = bad_input(&out);
    assert!(text.contains("columns: no column \"titel\" in main.public.film (did you mean \"title\"?)"), "{text}");
    assert!(
        text.contains(
            "Hint: The columns of main.public.film: title, year, minutes, status, rating, tags, director, genres."
        ),
        "{text}"
    );
    let (out, _) = run(&mut e, "select_rows", json!({"table": "film", "where": {"yeer": 1}}));
    assert!(bad_input(&out).contains("where: no column \"yeer\" in main.public.film (did you mean \"year\"?)"));
    let (out, _) = run(&mut e, "select_rows", json!({"table": "film", "where": {"year": {"around": 1}}}));
    bad_input(&out);
    let (out, _) = run(&mut e, "select_rows", json!({"table": "film", "order_by": "-yaer"}));
    assert!(bad_input(&out).contains("order_by: no column \"yaer\""));
    let (out, _) = run(&mut e, "select_rows", json!({"table": "film", "limit": 10001}));
    assert!(bad_input(&out).contains("limit 10001 is out of range"));
}

#[test]
fn select_rows_refuses_an_unknown_column_after_a_link() {
    let mut e = films();
    let (out, _) = run(&mut e, "select_rows", json!({"table": "film", "where": {"director.nam": "x"}}));
    assert!(bad_input(&out).contains("director.nam"));
}

// ---------------------------------------------------------------- read_note

#[test]
fn read_note_gives_a_rows_text_table_id_and_values() {
    let mut e = films();
    let a = read(&mut e, "read_note", json!({"path": WATCH_CHARADE}));
    assert_eq!(a["text"], original(WATCH_CHARADE));
    assert_eq!(a["body"], "Part of [[Film night]]. Four of us on the sofa, and nobody guessed the ending.\n");
    assert_eq!(a["table"], "main.public.watch");
    assert_eq!(a["row_id"], "01a0dae4-c566-7156-b714-26c9854e0ace");
    assert_eq!(a["values"]["film"], "[[Charade]]");
    assert_eq!(a["values"]["occurred_at"], "2026-09-25T21:00");
}

#[test]
fn read_note_gives_a_plain_notes_text() {
    let mut e = films();
    let a = read(&mut e, "read_note", json!({"path": FILM_NIGHT}));
    assert_eq!(a["_version"], &hash(&original(FILM_NIGHT))[..16]);
    assert_eq!(unversioned(a), json!({"path": FILM_NIGHT, "text": original(FILM_NIGHT), "body": original(FILM_NIGHT)}));
}

#[test]
fn read_note_of_an_unreadable_row_says_why() {
    let mut e = films_with(&[(SHERLOCK, SHERLOCK_UNREADABLE)]);
    let a = read(&mut e, "read_note", json!({"path": SHERLOCK}));
    assert_eq!(a["text"], SHERLOCK_UNREADABLE);
    assert_eq!(a["table"], "main.public.film");
    assert!(a["unreadable"].as_str().unwrap().contains("line 3"), "{a:#}");
}

#[test]
fn read_note_of_a_missing_note_suggests_the_closest() {
    let mut e = films();
    let (out, _) = run(&mut e, "read_note", json!({"path": "Notes/Film nite.md"}));
    let text = refused(&out);
    assert!(text.contains("no note at \"Notes/Film nite.md\""), "{text}");
    assert!(text.contains("Hint: Did you mean \"Notes/Film night.md\"?"), "{text}");
    // A note named as a link names it: its path.
    for given in ["Charade", "charade.md", "film/Charade"] {
        let (out, _) = run(&mut e, "read_note", json!({"path": given}));
        let text = refused(&out);
        assert!(text.contains(&format!("Hint: Did you mean \"{CHARADE}\"?")), "{given}: {text}");
    }
}

// ---------------------------------------------------------------- check_table

#[test]
fn check_table_of_one_table_reports_a_stale_generated_column() {
    // Seed 003: `where` corrected by hand, `label` still says home.
    let hand = original(WATCH_HGF).replace("where: home", "where: cinema");
    let mut e = films_with(&[(WATCH_HGF, &hand)]);
    let a = read(&mut e, "check_table", json!({"table": "watch"}));
    assert_eq!(
        a,
        json!({"table": "watch", "rows_checked": 3, "total": 1, "violations": [{"path": WATCH_HGF, "violations": [{
            "code": "generated", "column": "label",
            "message": "should be \"His Girl Friday (03/10 21:30, cinema)\" (computed)",
            "value": "His Girl Friday (03/10 21:30, home)"}]}]})
    );
}

#[test]
fn check_table_of_every_table_names_the_table_of_each_violation() {
    // Seed 003: Silent film turned into a top level by hand.
    let silent = "datanotes/main/public/genre/Silent film.md";
    let mut e = films_with(&[(silent, &original(silent).replace("kind: era", "kind: cinema"))]);
    let a = read(&mut e, "check_table", json!({}));
    assert_eq!(a["table"], Value::Null);
    assert_eq!(a["tables_checked"], 4);
    assert_eq!(a["rows_checked"], 28);
    let msg = "violates CHECK parent_by_level: {\"or\":[{\"kind\":\"cinema\",\"parent\":{\"exists\":false}},{\"kind\":\"era\",\"parent.kind\":\"cinema\"},{\"kind\":\"genre\",\"parent.kind\":\"era\"}]}";
    // With what each row holds where the rule looks: why it fails.
    let one = |p: &str| {
        let (kind, parent) = if p == silent { ("cinema", "[[Cinema]]") } else { ("genre", "[[Silent film]]") };
        let held = json!({"kind": kind, "parent": parent, "parent.kind": "cinema"});
        json!({"path": p, "table": "main.public.genre", "violations": [{"code": "check", "constraint": "parent_by_level", "message": msg, "value": held}]})
    };
    assert_eq!(
        a["violations"],
        json!([
            one("datanotes/main/public/genre/Expressionism.md"),
            one(silent),
            one("datanotes/main/public/genre/Slapstick comedy.md"),
            one("datanotes/main/public/genre/Soviet montage.md"),
        ])
    );
    assert_eq!(a["total"], 4);
}

#[test]
fn check_table_reports_unreadable_front_matter() {
    let mut e = films_with(&[(SHERLOCK, SHERLOCK_UNREADABLE)]);
    let a = read(&mut e, "check_table", json!({"table": "film"}));
    assert_eq!(a["rows_checked"], 7);
    assert_eq!(a["total"], 1);
    let v = &a["violations"][0];
    assert_eq!(v["path"], SHERLOCK);
    assert_eq!(v["violations"][0]["code"], "unreadable");
    let msg = v["violations"][0]["message"].as_str().unwrap();
    assert!(msg.starts_with("the front matter cannot be read, so the row is left out of every read: "), "{msg}");
    assert!(v["violations"][0].get("column").is_none());
}

#[test]
fn check_table_of_an_unknown_table_suggests_the_closest() {
    let mut e = films();
    let (out, _) = run(&mut e, "check_table", json!({"table": "wach"}));
    assert!(refused(&out).contains("(did you mean \"watch\"?)"));
}

// ---------------------------------------------------------------- unreadable front matter

#[test]
fn an_unreadable_row_is_left_out_of_select_rows() {
    let mut e = films_with(&[(SHERLOCK, SHERLOCK_UNREADABLE)]);
    assert!(titles(&mut e, json!({"where": {"title": {"contains": "Sherlock"}}})).is_empty());
    assert_eq!(read(&mut e, "select_rows", json!({"table": "film"}))["total"], 6);
}

#[test]
fn an_unreadable_row_does_not_stop_writes_to_other_rows() {
    let mut e = films_with(&[(SHERLOCK, SHERLOCK_UNREADABLE)]);
    let (_, edits) = write(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(written_paths(&edits), vec![CHARADE]);
    // Even one that links to it.
    let keaton = "datanotes/main/public/person/Buster Keaton.md";
    write(&mut e, "update_row", json!({"table": "person", "path": keaton, "set": {"born": 1896}}));
}

#[test]
fn an_unreadable_row_is_fixed_by_an_update_of_the_broken_key() {
    let mut e = films_with(&[(SHERLOCK, SHERLOCK_UNREADABLE)]);
    let (_, edits) = write(
        &mut e,
        "update_row",
        json!({"table": "film", "path": SHERLOCK, "set": {"title": "Sherlock Jr.: the projectionist"}}),
    );
    let new = "datanotes/main/public/film/Sherlock Jr.- the projectionist.md";
    assert_eq!(
        written(&edits, new),
        SHERLOCK_UNREADABLE
            .replace("title: Sherlock Jr.: the projectionist", "title: \"Sherlock Jr.: the projectionist\"")
    );
    assert_eq!(
        titles(&mut e, json!({"where": {"title": {"contains": "Sherlock"}}})),
        vec!["Sherlock Jr.: the projectionist"]
    );
}

// ---------------------------------------------------------------- infer_table

#[test]
fn infer_table_lists_a_key_the_table_does_not_declare() {
    // Seed 003: Metropolis edited by hand, with a cast.
    let hand = "---\ntable: main.public.film\nid: 01a0c048-93f7-79de-9f1d-c81e4d4d5404\nyear: 1927\nminutes: 153\nstatus: to watch\ncast:\n  - \"[[Brigitte Helm]]\"\ndirector: Fritz Lang\ntitle: Metropolis\n---\n";
    let mut e = films_with(&[(METROPOLIS, hand)]);
    let a = read(&mut e, "infer_table", json!({"table": "film"}));
    assert_eq!(a["files"], 7);
    assert_eq!(a["paths"].as_array().unwrap().len(), 7);
    assert_eq!(a["paths"][3], METROPOLIS);
    assert_eq!(a["skipped"], json!([]));
    assert_eq!(
        a["columns"],
        json!([{"name": "cast", "type": "list", "description": null,
                "stats": {"present": 1, "filled": 1, "distinct": 1, "types": {"list": 1}, "examples": [["[[Brigitte Helm]]"]]},
                "items": "link"}])
    );
    assert_eq!(
        a["hints"],
        json!(["add these with add_column, each with a description of what it holds (null here; dense: false unless every row should carry the front matter key), or drop those front matter keys from the rows"])
    );
}

#[test]
fn infer_table_proposes_columns_for_a_folder_of_notes() {
    let mut e = films_with(&[
        ("Books/Dune.md", "---\ntitle: Dune\npages: 412\nread: true\nstarted: 2026-01-03\n---\n"),
        ("Books/Emma.md", "---\ntitle: Emma\npages: 474.5\nread: false\n---\n"),
        ("Books/Untitled.md", "No front matter.\n"),
    ]);
    let a = read(&mut e, "infer_table", json!({"folder": "Books"}));
    assert_eq!(a["files"], 3);
    let cols: Vec<(String, String)> = a["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap().into(), c["type"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        cols,
        vec![
            ("pages".into(), "number".into()),
            ("read".into(), "boolean".into()),
            ("started".into(), "date".into()),
            ("title".into(), "text".into())
        ]
    );
    assert_eq!(a["columns"][3]["stats"]["present"], 2);
    assert!(a["hints"][0].as_str().unwrap().starts_with("create_table with these columns (and folder)"));
}

#[test]
fn infer_table_skips_unreadable_notes_and_refuses_bad_arguments() {
    let mut e = films_with(&[(SHERLOCK, SHERLOCK_UNREADABLE)]);
    let a = read(&mut e, "infer_table", json!({"table": "film"}));
    assert_eq!(a["skipped"][0]["path"], SHERLOCK);
    let (out, _) = run(&mut e, "infer_table", json!({}));
    assert!(bad_input(&out).contains("give a table or a folder"));
    let (out, _) = run(&mut e, "infer_table", json!({"folder": "../elsewhere"}));
    assert!(bad_input(&out).contains("folder \"../elsewhere\" leaves the vault"));
}

// ---------------------------------------------------------------- recompute_columns

#[test]
fn recompute_columns_fixes_a_stale_label() {
    // Seed 003.
    let hand = original(WATCH_HGF).replace("where: home", "where: cinema");
    let mut e = films_with(&[(WATCH_HGF, &hand)]);
    let (a, edits) = write(&mut e, "recompute_columns", json!({"table": "watch"}));
    assert_eq!(a["summary"], "recompute day, label of watch");
    assert_eq!(
        a["planned_edits"],
        json!([{"path": WATCH_HGF, "set": {"label": "His Girl Friday (03/10 21:30, cinema)"}, "remove": []}])
    );
    assert_eq!(
        edits,
        vec![Edit::Write {
            path: WATCH_HGF.into(),
            text: hand.replace("21:30, home)", "21:30, cinema)"),
            expect: Some(hash(&hand))
        }]
    );
    let a = read(
        &mut e,
        "select_rows",
        json!({"table": "watch", "columns": ["where", "label"], "where": {"where": "cinema"}, "order_by": "occurred_at"}),
    );
    assert_eq!(
        unversioned(a["rows"][0].clone()),
        json!({"path": WATCH_HGF, "where": "cinema", "label": "His Girl Friday (03/10 21:30, cinema)"})
    );
    assert_eq!(read(&mut e, "check_table", json!({"table": "watch"}))["total"], 0);
}

#[test]
fn recompute_columns_with_nothing_stale_writes_nothing() {
    let mut e = films();
    let (out, edits) = run(&mut e, "recompute_columns", json!({"table": "watch"}));
    assert_eq!(out.status, Status::Ok);
    assert!(edits.is_empty());
    assert_eq!(out.answer["notes_changed"], 0);
}

#[test]
fn recompute_columns_refuses_a_column_that_is_not_generated() {
    let mut e = films();
    let (out, _) = run(&mut e, "recompute_columns", json!({"table": "watch", "columns": ["lable"]}));
    let text = bad_input(&out);
    assert!(
        text.contains("\"lable\" is not a generated column of main.public.watch (did you mean \"label\"?)"),
        "{text}"
    );
    assert!(text.contains("Hint: The generated columns of main.public.watch: day, label."), "{text}");
}

#[test]
fn recompute_columns_recomputes_only_the_columns_named() {
    let hand =
        original(WATCH_HGF).replace("where: home", "where: cinema").replace("day: 2026-10-03", "day: 2026-10-04");
    let mut e = films_with(&[(WATCH_HGF, &hand)]);
    let (_, edits) = write(&mut e, "recompute_columns", json!({"table": "watch", "columns": ["label"]}));
    assert_eq!(written(&edits, WATCH_HGF), hand.replace("21:30, home)", "21:30, cinema)"));
}

// ---------------------------------------------------------------- configure_database

#[test]
fn configure_database_writes_the_settings_to_the_store() {
    let mut e = films();
    let out = call(&mut e, "configure_database", json!({"autoRecompute": false, "journalRetentionDays": 30}));
    let out = done(out); // no note is written: the turn is over
    assert_eq!(out.status, Status::Ok, "{:#}", out.answer);
    assert_eq!(out.answer["changed"], true);
    assert_eq!(
        out.answer["settings"],
        json!({"version": 1, "autoRecompute": false, "repairLinksOnHandMove": true, "journalRetentionDays": 30, "bases": true,
            "semanticIndex": false, "semanticWeight": 0.97, "semanticCodeWeight": 0.5})
    );
    assert_eq!(out.store.len(), 1);
    assert_eq!(out.store[0].path, "settings.json");
    let text = out.store[0].text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), out.answer["settings"]);
    // The next engine reads them back from the store.
    let mut again = Engine::open(load_films(), vec![("settings.json".to_string(), text)]);
    assert_eq!(read(&mut again, "describe_database", json!({}))["settings"]["journalRetentionDays"], 30);
    // Setting the same values again changes nothing and writes nothing.
    let out = done(call(&mut e, "configure_database", json!({"autoRecompute": false})));
    assert_eq!(out.answer["changed"], false);
    assert!(out.store.is_empty());
}

#[test]
fn configure_database_refuses_a_value_out_of_range() {
    let mut e = films();
    let out = done(call(&mut e, "configure_database", json!({"journalRetentionDays": 0})));
    assert!(bad_input(&out).contains("journalRetentionDays 0 is out of range"));
    let out = done(call(&mut e, "configure_database", json!({"autoRecompute": "no"})));
    assert!(bad_input(&out).contains("argument \"autoRecompute\" must be true or false, not a string (\"no\")"));
    assert_eq!(read(&mut e, "describe_database", json!({}))["settings"]["journalRetentionDays"], 90);
}

#[test]
fn a_damaged_settings_file_gives_the_defaults_and_a_warning() {
    let e = Engine::open(load_films(), vec![("settings.json".to_string(), "{not json".to_string())]);
    assert_eq!(e.warnings().len(), 1);
    assert!(e.warnings()[0].starts_with("settings.json cannot be read"), "{:?}", e.warnings());
    assert!(e.settings().auto_recompute);
}

// ---------------------------------------------------------------- bad input

#[test]
fn an_unknown_argument_names_the_allowed_ones_and_the_closest() {
    let mut e = films();
    let (out, _) = run(&mut e, "select_rows", json!({"table": "film", "colums": ["title"]}));
    let text = bad_input(&out);
    assert!(text.starts_with("select_rows: bad arguments — nothing was written:\nunknown argument \"colums\" (did you mean \"columns\"?)\n"), "{text}");
    assert!(
        text.contains(
            "Hint: select_rows takes: table, columns, where, order_by, limit, offset, version, timestamp, proposal."
        ),
        "{text}"
    );
    assert_eq!(out.status.http(), 400);
    assert_eq!(out.status.exit_code(), 2);
}

#[test]
fn a_missing_argument_is_named_with_its_type() {
    let mut e = films();
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "set": {"rating": 1}}));
    let text = bad_input(&out);
    assert!(text.contains("missing argument \"path\" (a string)"), "{text}");
    assert!(text.contains("Hint: path: The row's note path."), "{text}");
    let (out, _) = run(&mut e, "insert_row", json!({"table": "film"}));
    assert!(bad_input(&out).contains("missing argument \"values\" (an object)"));
}

#[test]
fn an_argument_of_the_wrong_type_says_what_it_must_be() {
    let mut e = films();
    let (out, _) = run(&mut e, "select_rows", json!({"table": "film", "limit": "5"}));
    assert!(bad_input(&out).contains("argument \"limit\" must be an integer, not a string (\"5\")"));
    let (out, _) = run(&mut e, "select_rows", json!({"table": ["film"]}));
    assert!(bad_input(&out).contains("argument \"table\" must be a string, not a list ([\"film\"])"));
    let (out, _) = run(&mut e, "select_rows", json!({"table": "film", "columns": ["title", 3]}));
    assert!(bad_input(&out).contains("argument \"columns\" must be a list of strings"));
}

#[test]
fn an_unknown_table_suggests_the_closest() {
    let mut e = films();
    let (out, _) = run(&mut e, "insert_row", json!({"table": "flim", "values": {"title": "x"}}));
    let text = refused(&out);
    assert!(text.contains("no table \"flim\" (did you mean \"film\"?); the tables are main.public.film, main.public.genre, main.public.person, main.public.watch"), "{text}");
    assert!(text.contains("Hint: describe_database lists the tables and the views."), "{text}");
}

#[test]
fn an_unknown_column_suggests_the_closest() {
    let mut e = films();
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"ratng": 3}}));
    let text = bad_input(&out);
    assert!(text.contains("no column \"ratng\" in main.public.film (did you mean \"rating\"?)"), "{text}");
    assert!(text.contains("add_column declares a new one."), "{text}");
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "remove": ["tgs"]}));
    assert!(bad_input(&out).contains("remove: no column \"tgs\" in main.public.film (did you mean \"tags\"?)"));
}

#[test]
fn a_path_outside_the_vault_is_bad_input() {
    let mut e = films();
    let before = state(&mut e);
    for path in ["../x.md", "/etc/passwd", "datanotes/../../x.md"] {
        let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": path, "set": {"rating": 1}}));
        assert!(bad_input(&out).contains(&format!("\"{path}\" is not a path inside the vault")), "{path}");
        let (out, _) = run(&mut e, "delete_rows", json!({"table": "film", "paths": [path]}));
        bad_input(&out);
    }
    let (out, _) = run(&mut e, "read_note", json!({"path": "../x.md"}));
    assert!(refused(&out).contains("no note at \"../x.md\""));
    assert_eq!(state(&mut e), before);
}

#[test]
fn a_value_over_one_mebibyte_is_bad_input() {
    let mut e = films();
    let big = "x".repeat((1 << 20) + 1);
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "body": big}));
    let text = bad_input(&out);
    assert!(text.contains("argument \"body\" holds a value over 1048576 bytes"), "{text}");
    let (out, _) =
        run(&mut e, "insert_row", json!({"table": "film", "values": {"title": "x", "year": 1, "tags": [big]}}));
    assert!(bad_input(&out).contains("argument \"values\" holds a value over"));
    // One mebibyte exactly is taken.
    let (out, _) = run(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "body": "y".repeat(1 << 20)}));
    assert_eq!(out.status, Status::Ok, "{}", out.answer["error"]);
}

#[test]
fn arguments_that_are_not_an_object_are_bad_input() {
    let mut e = films();
    for args in [json!([1, 2]), json!("film"), json!(3)] {
        let (out, _) = run(&mut e, "select_rows", args.clone());
        let text = bad_input(&out);
        assert!(text.contains("the arguments must be a JSON object, not"), "{args}: {text}");
        assert!(text.contains("Hint: Send {\"name\": value, …} with these arguments: table, columns"), "{text}");
    }
    // null counts as no arguments.
    assert_eq!(read(&mut e, "describe_database", Value::Null)["tables"].as_array().unwrap().len(), 4);
}

#[test]
fn an_unknown_operation_suggests_the_closest() {
    let mut e = films();
    let (out, _) = run(&mut e, "selct_rows", json!({}));
    let text = bad_input(&out);
    assert!(text.contains("unknown operation \"selct_rows\" (did you mean \"select_rows\"?)"), "{text}");
    let (out, _) = run(&mut e, "drop_database", json!({}));
    bad_input(&out);
}

// ---------------------------------------------------------------- the write protocol and rollback

#[test]
fn a_call_while_a_write_is_being_applied_is_refused() {
    let mut e = films();
    applying(call(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}})));
    let (busy, _) = run(&mut e, "select_rows", json!({"table": "film"}));
    assert!(refused(&busy).contains("the engine is still applying update_row"));
    assert_eq!(done(e.finish(&[Ok(())])).status, Status::Ok);
    assert_eq!(row(&mut e, "film", CHARADE).unwrap()["rating"], 4);
}

#[test]
fn finish_with_no_write_under_way_is_an_internal_error() {
    let mut e = films();
    let out = done(e.finish(&[Ok(())]));
    assert_eq!(out.status, Status::Internal);
    assert_eq!(out.status.http(), 500);
}

#[test]
fn the_index_holds_the_write_once_it_is_finished() {
    let mut e = films();
    write(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(e.vault().text(CHARADE).unwrap(), original(CHARADE).replace("rating: 5\n", "rating: 4\n"));
}

/// Starts update_rows on the two films to watch: two writes.
fn start_two_writes(e: &mut Engine) -> Apply {
    let out = applying(call(
        e,
        "update_rows",
        json!({"table": "film", "where": {"status": "to watch"}, "set": {"rating": 3}}),
    ));
    assert_eq!(written_paths(&out.edits), vec![POTEMKIN, NOSFERATU]);
    out
}

#[test]
fn a_write_whose_second_edit_fails_is_rolled_back() {
    let mut e = films();
    let before = texts(&e);
    let out = start_two_writes(&mut e);
    let first = out.edits[0].clone();
    let rollback = applying(e.finish(&[Ok(()), io("EBUSY: resource busy or locked")]));
    assert_eq!(rollback.answer["rolling_back"], true);
    // The one edit made is taken back: the first note gets its old text again.
    let Edit::Write { path, text, .. } = &first else { panic!("{first:?}") };
    assert_eq!(
        rollback.edits,
        vec![Edit::Write { path: path.clone(), text: original(path), expect: Some(hash(text)) }]
    );
    let done = done(e.finish(&vec![Ok(()); rollback.edits.len()]));
    assert_eq!(done.status, Status::RolledBack);
    assert_eq!(done.status.http(), 503);
    assert_eq!(done.answer["ok"], false);
    assert_eq!(done.answer["op"], "update_rows");
    assert_eq!(done.answer["rolled_back"], true);
    assert_eq!(done.answer["notes_changed"], 0);
    assert_eq!(done.answer["failed"], json!([{"path": NOSFERATU, "error": "EBUSY: resource busy or locked"}]));
    assert!(done.answer["error"].as_str().unwrap().contains("Free the file (failed says what stopped it"));
    // The index is back as before.
    assert_eq!(texts(&e), before);
    assert_eq!(row(&mut e, "film", POTEMKIN).unwrap().get("rating"), None);
}

#[test]
fn a_write_whose_first_edit_fails_needs_no_rollback() {
    let mut e = films();
    let before = texts(&e);
    start_two_writes(&mut e);
    let done = done(e.finish(&[io("EACCES"), Err(EditError::NotTried)]));
    assert_eq!(done.status, Status::RolledBack);
    assert_eq!(done.answer["rolled_back"], true);
    assert_eq!(done.answer["failed"], json!([{"path": POTEMKIN, "error": "EACCES"}]));
    assert_eq!(texts(&e), before);
    // The engine takes the next write.
    write(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
}

#[test]
fn a_rollback_that_fails_too_says_what_it_left() {
    let mut e = films();
    start_two_writes(&mut e);
    let rollback = applying(e.finish(&[Ok(()), io("EBUSY")]));
    let done = done(e.finish(&vec![io("EBUSY"); rollback.edits.len()]));
    assert_eq!(done.status, Status::RolledBack);
    assert_eq!(done.answer["rolled_back"], false);
    assert_eq!(
        done.answer["failed"],
        json!([{"path": NOSFERATU, "error": "EBUSY"}, {"path": POTEMKIN, "error": "not rolled back: EBUSY"}])
    );
    assert!(done.answer["error"].as_str().unwrap().contains("its rollback could not finish either"));
}

#[test]
fn the_rollback_of_an_archive_moves_the_notes_back() {
    let mut e = films();
    let mut d = film_diary();
    let out = applying(call(&mut e, "delete_rows", json!({"table": "film", "where": {"status": "to watch"}})));
    assert_eq!(out.edits.len(), 2);
    apply(&mut d, &out.edits[0]).unwrap();
    let rollback = applying(e.finish(&[Ok(()), io("EBUSY")]));
    for ed in &rollback.edits {
        apply(&mut d, ed).unwrap();
    }
    assert_eq!(done(e.finish(&vec![Ok(()); rollback.edits.len()])).answer["rolled_back"], true);
    assert_eq!(d, film_diary());
    assert_eq!(titles(&mut e, json!({"where": {"status": "to watch"}})), vec!["Battleship Potemkin", "Nosferatu"]);
}

#[test]
fn the_rollback_of_a_row_rename_puts_every_file_back() {
    let mut e = films();
    let mut d = film_diary();
    let out = applying(call(
        &mut e,
        "update_row",
        json!({"table": "film", "path": CHARADE, "set": {"title": "Charade (1963)"}}),
    ));
    // The move and the new text of the renamed note are made; the third edit fails.
    let renamed = "datanotes/main/public/film/Charade (1963).md";
    assert!(matches!(&out.edits[0], Edit::Move { to, .. } if to == renamed), "{:?}", out.edits[0]);
    assert!(matches!(&out.edits[1], Edit::Write { path, .. } if path == renamed), "{:?}", out.edits[1]);
    apply(&mut d, &out.edits[0]).unwrap();
    apply(&mut d, &out.edits[1]).unwrap();
    let mut results = vec![Ok(()), Ok(()), io("EBUSY")];
    results.resize(out.edits.len(), Err(EditError::NotTried));
    let rollback = applying(e.finish(&results));
    let applied: Vec<Result<(), EditError>> = rollback
        .edits
        .iter()
        .map(|ed| apply(&mut d, ed).map_err(|m| EditError::Io { path: ed.path().into(), message: m }))
        .collect();
    assert!(applied.iter().all(Result::is_ok), "{applied:?}\n{:#?}", rollback.edits);
    assert_eq!(d, film_diary());
    assert_eq!(done(e.finish(&applied)).answer["rolled_back"], true);
}

#[test]
fn every_edit_of_a_rename_applies_to_the_vault_as_it_is() {
    // The edits expect the texts the vault holds, in order: a host can check each one.
    let mut e = films();
    let mut d = film_diary();
    let (_, edits) =
        write(&mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"title": "Charade (1963)"}}));
    for ed in &edits {
        apply(&mut d, ed).unwrap();
    }
    assert_eq!(d, texts(&e).into_iter().chain([(METASTORE.to_string(), original(METASTORE))]).collect::<Disk>());
}
