//! The `datanotes` binary end to end, on a vault folder made for each test under the
//! system's temporary folder: init, call, ops, exit codes, and the files on disk
//! byte for byte after each call.
//!
//! One call opens the vault, runs one operation and applies its edits: nothing can
//! change a file between the engine's read and its write within that call (the
//! engine checks the text it expects anyway). Between two calls anything can: each
//! call reads the vault again, so the next call sees a hand edit.

mod common;

use common::{datanotes, datanotes_env, original, snapshot, temp_path, titles, unversioned, vault, Run, FILMS};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const CHARADE: &str = "datanotes/main/public/film/Charade.md";
const NOSFERATU: &str = "datanotes/main/public/film/Nosferatu.md";
const SHERLOCK: &str = "datanotes/main/public/film/Sherlock Jr..md";

// ---------------------------------------------------------------- helpers

/// A vault folder of its own under the temporary folder, removed when dropped.
struct Vault {
    dir: PathBuf,
}

impl Vault {
    /// A folder name no other test (or run) uses; the folder itself is not made.
    fn unmade(name: &str) -> Vault {
        let dir = temp_path(name);
        assert!(!dir.exists());
        Vault { dir }
    }

    /// The film diary, made by `datanotes init --example films`.
    fn films(name: &str) -> Vault {
        Vault { dir: vault(name) }
    }

    fn root(&self) -> &str {
        self.dir.to_str().unwrap()
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    /// An edit made by hand, outside the engine.
    fn hand_edit(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }

    /// `datanotes call --vault DIR OP ARGS`.
    fn call(&self, op: &str, args: Value) -> Run {
        datanotes(&["call", "--vault", self.root(), op, &args.to_string()])
    }

    /// A call that must be done (exit 0): its answer.
    fn done(&self, op: &str, args: Value) -> Value {
        let r = self.call(op, args);
        assert_eq!(r.code, 0, "{op}: {r:?}");
        r.answer()
    }

    /// Every file under the folder (dot folders included), with its bytes; the
    /// notes' cache left out (derived, written again at an open that read
    /// notes), and the spare file its last text may go to.
    fn snapshot(&self) -> BTreeMap<String, Vec<u8>> {
        let mut files = snapshot(&self.dir, "");
        files.retain(|p, _| !p.starts_with(".datanotes/cache/") && !p.starts_with(".datanotes/spare/"));
        files
    }

    /// The notes and the schema only (the store under .datanotes/ left out).
    fn notes(&self) -> BTreeMap<String, Vec<u8>> {
        self.snapshot().into_iter().filter(|(p, _)| !p.starts_with(".datanotes/")).collect()
    }
}

impl Drop for Vault {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The paths whose bytes differ between two snapshots (added, removed or changed).
fn changed(before: &BTreeMap<String, Vec<u8>>, after: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let mut v: Vec<String> =
        before.keys().chain(after.keys()).filter(|p| before.get(*p) != after.get(*p)).cloned().collect();
    v.sort();
    v.dedup();
    v
}

// ---------------------------------------------------------------- init

#[test]
fn init_example_writes_the_film_diary_byte_for_byte() {
    let v = Vault::unmade("init");
    let r = datanotes(&["init", "--vault", v.root(), "--example", "films"]);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.answer(), json!({"ok": true, "vault": v.root(), "example": "films"}));
    let shipped = snapshot(Path::new(FILMS), "");
    assert_eq!(shipped.len(), 30, "metastore.yaml and 29 notes");
    let mut notes = v.notes();
    // With an Obsidian Bases file for each table and the view, as the engine keeps them.
    let bases: Vec<String> = notes.keys().filter(|p| p.starts_with("datanotes/bases/")).cloned().collect();
    assert_eq!(bases, ["film", "genre", "person", "to_watch", "watch"].map(|n| format!("datanotes/bases/{n}.base")));
    for b in &bases {
        let text = String::from_utf8(notes.remove(b).unwrap()).unwrap();
        assert!(datanotes_core::bases::is_engines(&text), "{b}");
    }
    assert_eq!(notes, shipped);
    assert!(v.path(".datanotes").is_dir(), "the store is made");
}

#[test]
fn init_twice_is_refused_and_changes_nothing() {
    let v = Vault::films("init-twice");
    v.hand_edit(CHARADE, original(CHARADE).replace("rating: 5", "rating: 4"));
    let before = v.snapshot();
    let r = datanotes(&["init", "--vault", v.root(), "--example", "films"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.contains("holds a database already (datanotes/metastore.yaml): nothing was written"),
        "{}",
        r.stderr
    );
    let r = datanotes(&["init", "--vault", v.root()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(v.snapshot(), before);
}

#[test]
fn init_without_an_example_makes_an_empty_database() {
    let v = Vault::unmade("init-empty");
    assert_eq!(datanotes(&["init", "--vault", v.root()]).code, 0);
    assert_eq!(v.read("datanotes/metastore.yaml"), "version: 1\ntables: {}\n");
    assert_eq!(v.done("describe_database", json!({}))["tables"], json!([]));
}

#[test]
fn init_with_bad_usage_exits_2_and_writes_nothing() {
    let v = Vault::unmade("init-usage");
    let r = datanotes(&["init", "--vault", v.root(), "--example", "books"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("unknown example \"books\" (the examples: films)"), "{}", r.stderr);
    assert_eq!(datanotes(&["init"]).code, 2);
    assert_eq!(datanotes(&["init", "--vault", v.root(), "extra"]).code, 2);
    assert_eq!(datanotes(&["init", "--vault"]).code, 2);
    assert!(!v.dir.exists());
}

// ---------------------------------------------------------------- usage and exit codes

#[test]
fn no_command_is_bad_usage() {
    let r = datanotes(&[]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("datanotes: no command"), "{}", r.stderr);
    assert!(r.stderr.contains("usage:"), "{}", r.stderr);
    assert!(r.stdout.is_empty());
}

#[test]
fn an_unknown_command_or_option_is_bad_usage() {
    let v = Vault::films("usage");
    let before = v.snapshot();
    let r = datanotes(&["frobnicate"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown command \"frobnicate\""), "{}", r.stderr);
    let r = datanotes(&["call", "--vault", v.root(), "--colour", "red", "select_rows", "{\"table\": \"film\"}"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown option --colour"), "{}", r.stderr);
    let r = datanotes(&["call", "--vault", v.root()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("call needs an OPERATION"), "{}", r.stderr);
    let r = datanotes(&["call", "select_rows", "{}"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("call needs --vault DIR"), "{}", r.stderr);
    let r = datanotes(&["call", "--vault", v.root(), "select_rows", "{}", "{}"]);
    assert_eq!(r.code, 2);
    assert_eq!(v.snapshot(), before);
}

#[test]
fn bench_runs_one_part_when_asked() {
    let r = datanotes(&["bench", "--rows", "200", "--only", "history"]);
    assert_eq!(r.code, 0, "{r:?}");
    let a = r.answer();
    assert!(a.get("sizes").is_none() && a.get("reopen").is_none(), "{a}");
    assert_eq!(a["history"]["read_version_1_rows"], 200, "{a}");
    assert_eq!(a["history"]["table_changes_rows"], 2000, "100 versions of 10 rows, before and after: {a}");
    let r = datanotes(&["bench", "--rows", "300", "--only", "semantic"]);
    assert_eq!(r.code, 0, "{r:?}");
    let a = r.answer();
    assert_eq!((a["semantic"]["notes"].as_u64(), a["semantic"]["hits"].as_u64()), (Some(300), Some(10)), "{a}");
    // The binary's open through the notes' cache, on a vault written to disk.
    let r = datanotes(&["bench", "--rows", "300", "--only", "cache"]);
    assert_eq!(r.code, 0, "{r:?}");
    let opens = r.answer()["cache"]["300"]["opens"].clone();
    assert_eq!(opens[0]["unread"], 0, "the first open reads every note: {opens}");
    assert!(opens[1]["unread"].as_u64() > Some(250), "a reopen reads none of the rows: {opens}");
    // 180 films changed: read, the film table's other rows too; the rest not.
    let (before, after) = (opens[1]["unread"].as_u64().unwrap(), opens[2]["unread"].as_u64().unwrap());
    assert!(after > 0 && after <= before - 170, "{opens}");
    let r = datanotes(&["bench", "--rows", "200", "--only", "proposals"]);
    assert_eq!(r.code, 0, "{r:?}");
    let p = r.answer()["proposals"].clone();
    assert_eq!((p["rows"].as_u64(), p["writes"].as_u64()), (Some(200), Some(10_000)), "{p}");
    assert!(p["stage_ms"].as_f64().is_some() && p["first_page_after_reopen_ms"].as_f64().is_some(), "{p}");
    let r = datanotes(&["bench", "--only", "everything"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(
            "--only takes one of sizes, history, hand_edits, reopen, cache, semantic, proposals, not everything"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn arguments_that_are_not_json_are_bad_usage() {
    let v = Vault::films("bad-json");
    let before = v.snapshot();
    let r = datanotes(&["call", "--vault", v.root(), "update_row", "{table: film}"]);
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stderr.contains("the arguments are not JSON"), "{}", r.stderr);
    assert_eq!(v.snapshot(), before);
}

#[test]
fn bad_arguments_exit_2_with_the_engines_answer() {
    let v = Vault::films("bad-args");
    let before = v.snapshot();
    let r = v.call("select_rows", json!({"table": "film", "colums": ["title"]}));
    assert_eq!(r.code, 2, "{r:?}");
    let a = r.answer();
    assert_eq!(a["ok"], false);
    assert!(a["error"].as_str().unwrap().contains("unknown argument \"colums\" (did you mean \"columns\"?)"));
    assert!(a["hint"].as_str().unwrap().contains("select_rows takes: table, columns"));
    let r = v.call("selct_rows", json!({}));
    assert_eq!(r.code, 2);
    assert!(r.answer()["error"].as_str().unwrap().contains("(did you mean \"select_rows\"?)"));
    let r = datanotes(&["call", "--vault", v.root(), "select_rows", "[1, 2]"]);
    assert_eq!(r.code, 2);
    assert!(r.answer()["error"].as_str().unwrap().contains("the arguments must be a JSON object"));
    assert_eq!(v.snapshot(), before);
}

/// The model to search by meaning with, copied into the store for the plugin:
/// once (a second run finds it there), whole (the engine reads it back as the
/// one the binary carries), and never into a folder that holds no database.
#[test]
fn install_model_copies_the_model_into_the_store_once() {
    let none = Vault::unmade("model-none");
    std::fs::create_dir_all(&none.dir).unwrap();
    let r = datanotes(&["install-model", "--vault", none.root()]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("datanotes init"), "{}", r.stderr);
    assert!(!none.exists(".datanotes"), "nothing written");
    assert_eq!(datanotes(&["install-model"]).code, 2);

    let v = Vault::films("model");
    let r = datanotes(&["install-model", "--vault", v.root()]);
    assert_eq!(r.code, 0, "{r:?}");
    let answer = r.answer();
    assert_eq!((answer["already"].as_bool(), answer["model"].as_str()), (Some(false), Some("potion-base-8M")));
    let bytes = std::fs::read(v.path(".datanotes/models/potion-base-8M.dnmodel")).unwrap();
    assert_eq!(answer["bytes"].as_u64(), Some(bytes.len() as u64));
    let model = datanotes_core::semantic::Model::from_file(&bytes).unwrap();
    assert_eq!(answer["id"].as_str(), Some(model.id.as_str()));
    let synced = v.done("sync_semantic_index", json!({}));
    assert_eq!(synced["model_id"].as_str(), Some(model.id.as_str()), "the binary's own model is the one installed");
    assert!(synced["duration_ms"].as_u64().is_some(), "the host times the sync: {synced}");
    let again = datanotes(&["install-model", "--vault", v.root()]).answer();
    assert_eq!(again["already"].as_bool(), Some(true));
    let models: Vec<_> =
        std::fs::read_dir(v.path(".datanotes/models")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(models, ["potion-base-8M.dnmodel"], "no temporary file left");
}

#[test]
fn a_missing_vault_folder_fails_with_exit_1() {
    let v = Vault::unmade("missing");
    let r = v.call("select_rows", json!({"table": "film"}));
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("is not a folder"), "{}", r.stderr);
    assert!(!v.dir.exists());
}

#[test]
fn ops_lists_every_operation_with_its_arguments() {
    let r = datanotes(&["ops"]);
    assert_eq!(r.code, 0);
    let ops = r.answer();
    let names: Vec<&str> = ops.as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap()).collect();
    for name in ["select_rows", "insert_row", "update_row", "delete_rows", "batch", "check_table", "configure_database"]
    {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let select = ops.as_array().unwrap().iter().find(|o| o["name"] == "select_rows").unwrap();
    assert_eq!(select["readOnly"], true);
    assert_eq!(select["inputSchema"]["required"], json!(["table"]));
    assert_eq!(select["inputSchema"]["additionalProperties"], false);
}

#[test]
fn help_prints_the_usage() {
    let r = datanotes(&["--help"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("datanotes call  --vault DIR OPERATION [JSON]"), "{}", r.stdout);
}

// ---------------------------------------------------------------- reads

#[test]
fn select_rows_prints_its_answer_as_json() {
    let v = Vault::films("select");
    let r = v.call(
        "select_rows",
        json!({"table": "film", "columns": ["title", "year"], "where": {"year": {"lt": 1925}}, "order_by": "year"}),
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        unversioned(r.answer()),
        json!({"table": "main.public.film", "total": 2, "rows": [
            {"path": NOSFERATU, "title": "Nosferatu", "year": 1922},
            {"path": SHERLOCK, "title": "Sherlock Jr.", "year": 1924}]})
    );
    // Without arguments the JSON is {}.
    let r = datanotes(&["call", "--vault", v.root(), "describe_database"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.answer()["tables"].as_array().unwrap().len(), 4);
}

#[test]
fn each_device_names_its_store_files_and_keeps_its_id_outside_the_vault() {
    let v = Vault::films("device");
    let state = temp_path("state");
    let state_dir = state.to_str().unwrap();
    let update = |rating: u8, env: &[(&str, Option<&str>)]| {
        let args = json!({"table": "film", "path": CHARADE, "set": {"rating": rating}}).to_string();
        let r = datanotes_env(&["call", "--vault", v.root(), "update_row", &args], env);
        assert_eq!(r.code, 0, "{r:?}");
        r
    };
    let here = [("XDG_STATE_HOME", Some(state_dir)), ("DATANOTES_DEVICE", None)];
    let first = update(4, &here);
    let id = std::fs::read_to_string(state.join("datanotes").join("device")).unwrap().trim().to_string();
    assert!(id.len() == 10 && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()), "{id}");
    let mid = first.answer()["migration_id"].as_str().unwrap().to_string();
    assert!(mid.ends_with(&format!(".{id}")), "{mid}");
    assert!(v.exists(&format!(".datanotes/journal/{mid}.json")));
    assert!(v.exists(&format!(".datanotes/log/main.public.film/00000000000000000001.{id}.json")));
    assert!(v.exists(&format!(".datanotes/feed/00000000000000000001.{id}.jsonl")));
    // The same machine is the same device at every open.
    update(3, &here);
    assert!(v.exists(&format!(".datanotes/log/main.public.film/00000000000000000002.{id}.json")));
    // Another device writes the vault (synced, or DATANOTES_DEVICE): its own files,
    // one history.
    update(2, &[("DATANOTES_DEVICE", Some("phone"))]);
    assert!(v.exists(".datanotes/log/main.public.film/00000000000000000003.phone.json"));
    let h = v.done("describe_history", json!({"table": "film"}));
    let versions: Vec<u64> = h["history"].as_array().unwrap().iter().map(|c| c["version"].as_u64().unwrap()).collect();
    assert_eq!(versions[..4], [3, 2, 1, 0]);
    assert_eq!(h["history"][0]["device"], "phone", "describe_history names the device");
    assert_eq!(h["history"][1]["device"], id.as_str());
    // An id that is not one is said, and the files are named as for one device.
    let r = update(1, &[("DATANOTES_DEVICE", Some("../Bad"))]);
    assert!(r.stderr.contains("not a device id"), "{}", r.stderr);
    assert!(v.exists(".datanotes/log/main.public.film/00000000000000000004.json"));
    let _ = std::fs::remove_dir_all(&state);
}

#[test]
fn a_hand_edit_made_while_no_engine_ran_is_found_at_the_next_call() {
    // init records what the vault holds: an edit made right after it is found too.
    let v = Vault::films("reconcile");
    let known = std::fs::read_dir(v.path(".datanotes")).unwrap().flatten();
    let known: Vec<String> =
        known.map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with("known.")).collect();
    assert_eq!(known.len(), 1, "init records the vault: {known:?}");
    let text = std::fs::read_to_string(v.path(CHARADE)).unwrap().replace("rating: 5\n", "rating: 2\n");
    std::fs::write(v.path(CHARADE), text).unwrap();
    let a = v.done("list_changes", json!({"since": 0}));
    let events = a["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{a:#}");
    assert_eq!(events[0]["source"], "external");
    assert_eq!(events[0]["kind"], "update");
    assert_eq!(events[0]["path"], CHARADE);
    // Found once: the next call sees nothing new.
    assert_eq!(v.done("list_changes", json!({"since": 0}))["events"].as_array().unwrap().len(), 1);
}

#[test]
fn a_call_opens_through_the_notes_cache_and_still_finds_an_edit_made_while_closed() {
    let v = Vault::films("cache");
    // Notes written an hour ago, as a vault's are: the cache then vouches for them.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let age = |rel: &str, t: std::time::SystemTime| {
        std::fs::File::options().write(true).open(v.path(rel)).unwrap().set_modified(t).unwrap();
    };
    // Notes enough that one changed is appended to the cache, not written whole.
    for k in 0..40 {
        std::fs::write(v.path(&format!("Notes/n{k}.md")), format!("Note {k}.\n")).unwrap();
    }
    let notes: Vec<String> = snapshot(&v.dir, "")
        .into_keys()
        .filter(|p| (p.ends_with(".md") || p.ends_with(".base")) && !p.starts_with('.'))
        .collect();
    notes.iter().for_each(|p| age(p, hour_ago));
    v.done("select_rows", json!({"table": "film"}));
    let cache = std::fs::read_dir(v.path(".datanotes/cache")).unwrap().flatten().next().unwrap().path();
    let written = std::fs::read_to_string(&cache).unwrap();
    assert!(written.contains(&format!("\"p\":{}", json!(CHARADE))), "{written}");
    // Charade's rating changed by hand (same size), its mtime half an hour ago.
    let text = v.read(CHARADE).replace("rating: 5\n", "rating: 2\n");
    std::fs::write(v.path(CHARADE), text).unwrap();
    age(CHARADE, hour_ago + std::time::Duration::from_secs(1800));
    let rows = v.done("select_rows", json!({"table": "film", "where": {"title": "Charade"}}));
    assert_eq!(rows["rows"][0]["rating"], 2, "{rows}");
    // The one note changed is appended to the cache, not the cache written whole.
    let appended = std::fs::read_to_string(&cache).unwrap();
    assert!(appended.starts_with(&written), "the cache's first part is kept");
    let segment = &appended[written.len()..];
    assert!(segment.starts_with("{\"of\":") && segment.contains("\"rating\":2"), "{segment}");
    let events = v.done("list_changes", json!({"since": 0}))["events"].clone();
    assert_eq!(events.as_array().unwrap().len(), 1, "{events:#}");
    assert_eq!((events[0]["source"].as_str(), events[0]["path"].as_str()), (Some("external"), Some(CHARADE)));
    // A write reads the notes it needs and writes through as before.
    let set = json!({"table": "film", "path": CHARADE, "set": {"rating": 3}});
    assert_eq!(v.done("update_row", set)["ok"], true);
    assert!(v.read(CHARADE).contains("\nrating: 3\n"));
    // A cache that is not JSON is not trusted: the call reads every note.
    std::fs::write(&cache, "not json").unwrap();
    assert_eq!(v.done("select_rows", json!({"table": "film"}))["total"], 7);
    assert!(std::fs::read_to_string(&cache).unwrap().starts_with("{\"format\":3"), "written again");
}

#[test]
fn a_temporary_file_left_by_a_write_cut_short_is_removed_at_open() {
    let v = Vault::films("stale-tmp");
    let tmp = v.path("datanotes/main/public/film/.Charade.md.datanotes-tmp");
    std::fs::write(&tmp, "---\ntable: main.public.film\ntitle: half writ").unwrap();
    let before = v.read(CHARADE);
    let r = v.call("select_rows", json!({"table": "film", "columns": ["title"]}));
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!tmp.exists(), "the temporary file is removed");
    assert!(r.stderr.contains(".Charade.md.datanotes-tmp was left by a write cut short: removed"), "{}", r.stderr);
    assert_eq!(v.read(CHARADE), before, "the note itself is as it was");
    assert_eq!(r.answer()["total"], 7);
}

#[test]
fn a_read_writes_nothing() {
    let v = Vault::films("read");
    let before = v.snapshot();
    v.done("select_rows", json!({"table": "film"}));
    v.done("check_table", json!({}));
    v.done("read_note", json!({"path": CHARADE}));
    assert_eq!(v.snapshot(), before);
}

// ---------------------------------------------------------------- writes on disk

#[test]
fn update_row_changes_one_line_of_one_file() {
    let v = Vault::films("update");
    let before = v.notes();
    let a = v.done("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(a["ok"], true);
    assert_eq!(a["planned_edits"], json!([{"path": CHARADE, "set": {"rating": 4}, "remove": []}]));
    assert_eq!(v.read(CHARADE), original(CHARADE).replace("rating: 5\n", "rating: 4\n"));
    assert_eq!(changed(&before, &v.notes()), vec![CHARADE]);
    assert_eq!(
        v.done("select_rows", json!({"table": "film", "columns": ["rating"], "where": {"title": "Charade"}}))["rows"]
            [0]["rating"],
        4
    );
}

#[test]
fn insert_row_creates_the_note_named_from_its_title() {
    let v = Vault::films("insert");
    let before = v.notes();
    let a = v.done("insert_row", json!({"table": "film", "values": {"title": "The General", "year": 1926, "director": "Buster Keaton"}, "body": "A locomotive chase.\n"}));
    let path = "datanotes/main/public/film/The General.md";
    assert_eq!(a["planned_edits"][0]["path"], path);
    let id = a["planned_edits"][0]["set"]["id"].as_str().unwrap().to_string();
    assert_eq!(v.read(path), format!("---\ntable: main.public.film\nid: {id}\ntitle: The General\nyear: 1926\ndirector: \"[[Buster Keaton]]\"\n---\nA locomotive chase.\n"));
    assert_eq!(changed(&before, &v.notes()), vec![path]);
    // No file of the id's name is left behind.
    assert!(!v.exists(&format!("datanotes/main/public/film/{id}.md")));
}

#[test]
fn renaming_a_row_moves_its_file_and_rewrites_the_links_on_disk() {
    let v = Vault::films("rename");
    let before = v.notes();
    v.done("update_row", json!({"table": "watch", "path": "datanotes/main/public/watch/2026-09-25T2100.md", "set": {"occurred_at": "2026-09-25T22:00"}}));
    let new = "datanotes/main/public/watch/2026-09-25T2200.md";
    assert!(!v.exists("datanotes/main/public/watch/2026-09-25T2100.md"));
    assert_eq!(v.read("Notes/Film night.md"), "Friday evening with friends: we watched [[2026-09-25T2200]].\n");
    assert!(v.read(new).contains("\nlabel: Charade (25/09 22:00, home)\n"));
    assert_eq!(
        changed(&before, &v.notes()),
        vec!["Notes/Film night.md", "datanotes/main/public/watch/2026-09-25T2100.md", new]
    );
}

#[test]
fn a_refusal_leaves_every_file_unchanged() {
    let v = Vault::films("refusal");
    let before = v.snapshot();
    let refusals = [
        ("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 9}})),
        (
            "insert_row",
            json!({"table": "film", "values": {"title": "The General", "year": 1926, "director": "Nobody"}}),
        ),
        ("delete_rows", json!({"table": "film", "where": {"title": "Metropolis"}, "mode": "trash"})),
        ("drop_table", json!({"table": "person"})),
        ("add_check", json!({"table": "film", "name": "short", "check": {"minutes": {"lt": 100}}})),
        (
            "batch",
            json!({"operations": [
            {"op": "update_row", "args": {"table": "film", "path": NOSFERATU, "set": {"rating": 3}}},
            {"op": "update_row", "args": {"table": "film", "path": CHARADE, "set": {"rating": 0}}}]}),
        ),
    ];
    for (op, args) in refusals {
        let r = v.call(op, args);
        assert_eq!(r.code, 1, "{op}: {r:?}");
        let a = r.answer();
        assert_eq!(a["ok"], false, "{op}");
        let text = a["error"].as_str().unwrap();
        assert!(text.contains("refused — nothing was written") && text.contains("\nHint: "), "{op}: {text}");
        assert_eq!(v.snapshot(), before, "{op} changed a file");
    }
}

#[test]
fn delete_rows_to_the_trash_moves_the_note_into_dot_trash() {
    let v = Vault::films("trash");
    let a = v.done("delete_rows", json!({"table": "film", "where": {"title": "Nosferatu"}, "mode": "trash"}));
    assert_eq!(a["planned_edits"], json!([{"path": NOSFERATU, "trash": true}]));
    assert!(!v.exists(NOSFERATU));
    assert_eq!(v.read(&format!(".trash/{NOSFERATU}")), original(NOSFERATU));
    // The trash is a dot folder: the next call does not read it as a row.
    assert_eq!(v.done("select_rows", json!({"table": "film"}))["total"], 6);
}

#[test]
fn delete_rows_archives_the_note_by_default() {
    let v = Vault::films("archive");
    v.done("delete_rows", json!({"table": "film", "paths": [NOSFERATU]}));
    assert!(!v.exists(NOSFERATU));
    assert_eq!(v.read("datanotes/_archive/main/public/film/Nosferatu.md"), original(NOSFERATU));
    assert_eq!(v.done("select_rows", json!({"table": "film"}))["total"], 6);
}

#[test]
fn configure_database_writes_the_store_settings() {
    let v = Vault::films("configure");
    let before = v.notes();
    let args = json!({"repairLinksOnHandMove": false, "journalRetentionDays": 30}).to_string();
    let r = datanotes_env(
        &["call", "--vault", v.root(), "configure_database", &args],
        &[("DATANOTES_DEVICE", Some("laptop"))],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.answer()["changed"], true);
    // This device's changes, field by field, each with when (settings.rs).
    let mine: Value = serde_json::from_str(&v.read(".datanotes/settings.laptop.json")).unwrap();
    let fields = mine["fields"].as_object().unwrap();
    let mut names: Vec<&String> = fields.keys().collect();
    names.sort();
    assert_eq!(names, ["journalRetentionDays", "repairLinksOnHandMove"]);
    assert_eq!(fields["journalRetentionDays"]["value"], 30);
    assert_eq!(fields["repairLinksOnHandMove"]["value"], false);
    assert!(fields["repairLinksOnHandMove"]["at_ms"].as_i64().unwrap() > 0);
    // An engine without a device id keeps settings.json whole, as before devices.
    let r = datanotes_env(
        &["call", "--vault", v.root(), "configure_database", &json!({"bases": false}).to_string()],
        &[("DATANOTES_DEVICE", Some("NOT AN ID"))],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let settings: Value = serde_json::from_str(&v.read(".datanotes/settings.json")).unwrap();
    assert_eq!(
        settings,
        json!({"version": 1, "autoRecompute": true, "repairLinksOnHandMove": false, "journalRetentionDays": 30, "bases": false,
            "semanticIndex": false, "semanticWeight": 0.97, "semanticCodeWeight": 0.5})
    );
    assert_eq!(v.notes(), before, "no note is written");
    // The next call reads them.
    assert_eq!(v.done("describe_database", json!({}))["settings"]["repairLinksOnHandMove"], false);
    // A bad value changes nothing.
    let store = v.snapshot();
    let r = v.call("configure_database", json!({"journalRetentionDays": 0}));
    assert_eq!(r.code, 2, "{r:?}");
    assert_eq!(v.snapshot(), store);
}

// ---------------------------------------------------------------- hand edits between calls

#[test]
fn a_hand_edit_between_two_calls_is_seen_by_the_next_call() {
    let v = Vault::films("hand-edit");
    v.done("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    let by_hand = original(CHARADE).replace("rating: 5\n", "rating: 3 # after a rewatch\n");
    v.hand_edit(CHARADE, &by_hand);
    let a = v.done("select_rows", json!({"table": "film", "columns": ["rating"], "where": {"title": "Charade"}}));
    assert_eq!(a["rows"][0]["rating"], 3);
    // A write starts from the text as it is now, and keeps the hand edit's comment.
    v.done("update_row", json!({"table": "film", "path": CHARADE, "set": {"minutes": 114}}));
    assert_eq!(v.read(CHARADE), by_hand.replace("minutes: 113\n", "minutes: 114\n"));
}

#[test]
fn a_hand_edit_that_breaks_a_rule_is_reported_by_check_table() {
    let v = Vault::films("hand-rule");
    let silent = "datanotes/main/public/genre/Silent film.md";
    v.hand_edit(silent, original(silent).replace("kind: era", "kind: cinema"));
    let r = v.call("check_table", json!({"table": "genre"}));
    assert_eq!(r.code, 0, "a report, not a refusal: {r:?}");
    let a = r.answer();
    assert_eq!(a["total"], 4);
    assert!(a["violations"].as_array().unwrap().iter().any(|x| x["path"] == silent));
}

#[test]
fn a_note_added_by_hand_is_a_row_on_the_next_call() {
    let v = Vault::films("hand-add");
    v.hand_edit(
        "datanotes/main/public/film/The General.md",
        "---\ntable: main.public.film\ntitle: The General\nyear: 1926\n---\n",
    );
    let a = v.done("select_rows", json!({"table": "film", "columns": ["title"], "where": {"year": 1926}}));
    assert_eq!(titles(&a), vec!["The General"]);
}

#[test]
fn unreadable_front_matter_is_left_out_and_reported() {
    let v = Vault::films("unreadable");
    v.hand_edit(
        SHERLOCK,
        original(SHERLOCK).replace("title: Sherlock Jr.\n", "title: Sherlock Jr.: the projectionist\n"),
    );
    let a = v.done(
        "select_rows",
        json!({"table": "film", "columns": ["title"], "where": {"title": {"contains": "Sherlock"}}}),
    );
    assert_eq!(a["total"], 0);
    let a = v.done("check_table", json!({"table": "film"}));
    assert_eq!(a["violations"][0]["path"], SHERLOCK);
    assert_eq!(a["violations"][0]["violations"][0]["code"], "unreadable");
    let a = v.done("describe_database", json!({"table": "film"}));
    assert_eq!((a["tables"][0]["row_count"].as_u64(), a["tables"][0]["unreadable_count"].as_u64()), (Some(6), Some(1)));
    // Writes to other rows go on.
    v.done("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
}

#[test]
fn a_note_that_is_not_utf8_is_left_out_with_a_warning() {
    let v = Vault::films("not-utf8");
    let broken = "datanotes/main/public/film/Broken.md";
    let bytes: &[u8] = b"---\ntable: main.public.film\ntitle: Caf\xe9\nyear: 1950\n---\n\xff\xfe\n";
    v.hand_edit(broken, bytes);
    let r = v.call("select_rows", json!({"table": "film"}));
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stderr.contains(&format!("datanotes: warning: {broken} is not UTF-8 text: left out")), "{}", r.stderr);
    assert_eq!(r.answer()["total"], 7);
    // Writes go on, and the file is left as it is.
    let r = v.call("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(std::fs::read(v.path(broken)).unwrap(), bytes);
    let r = v.call("check_table", json!({}));
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.answer()["total"], 0);
}

/// Issue 14: the store's secrets stay out of version control. The first open
/// writes `.datanotes/.gitignore` naming the owner's token, the named tokens and
/// the webhooks (with their signing secrets); `git add -A` in the vault then
/// stages the journal and the logs but none of those, and a person's own lines
/// in that file are kept.
#[test]
fn secrets_are_never_committed_by_git() {
    let v = Vault::films("cli-secrets-git");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git").arg("-C").arg(v.root()).args(args).output().expect("git runs");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    git(&["init", "-q"]);
    v.done("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    let r = datanotes(&["token", "add", "ci-bot", "--vault", v.root()]);
    assert_eq!(r.code, 0, "{r:?}");
    // serve makes the owner's token.
    let mut served = common::start(&v.dir, None);
    served.keep = true;
    drop(served);
    v.hand_edit(".datanotes/webhooks.json", "{\"webhooks\":[]}\n");
    v.hand_edit(".datanotes/webhooks.laptop.json", "{\"webhooks\":[]}\n");
    for secret in ["token", "tokens.json", "webhooks.json", "webhooks.laptop.json"] {
        assert!(v.exists(&format!(".datanotes/{secret}")), "{secret} is there to be left out");
    }
    git(&["add", "-A"]);
    let staged = git(&["ls-files"]);
    assert!(staged.lines().any(|l| l == ".datanotes/.gitignore"), "{staged}");
    assert!(staged.lines().any(|l| l.starts_with(".datanotes/journal/")), "the journal is versioned: {staged}");
    assert!(staged.lines().any(|l| l.starts_with(".datanotes/log/")), "the logs are versioned: {staged}");
    for secret in ["token", "tokens.json", "webhooks.json", "webhooks.laptop.json"] {
        assert!(!staged.lines().any(|l| l == format!(".datanotes/{secret}")), "{secret} staged: {staged}");
    }
    // A line of the person's own is kept; a secret's name they removed comes back.
    let theirs = "# mine\n*.bak\n/token\n";
    v.hand_edit(".datanotes/.gitignore", theirs);
    v.done("select_rows", json!({"table": "film", "limit": 1}));
    let rest = datanotes_core::secrets::IGNORED[1..].join("\n");
    assert_eq!(v.read(".datanotes/.gitignore"), format!("{theirs}{rest}\n"));
}

/// Issue 15: two clones of a vault with `.datanotes/` committed, each writing as
/// its own device, then `git pull` (a merge, then a rebase): no conflict in
/// `.datanotes/`, and the engine opens on the result with one history that has
/// both devices' writes, its latest version the notes.
#[test]
fn two_clones_that_both_wrote_pull_without_a_conflict_in_the_store() {
    let v = Vault::films("git-two-clones");
    let root = temp_path("git-clones");
    std::fs::create_dir_all(&root).unwrap();
    let git = |dir: &Path, args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=Datanotes",
                "-c",
                "user.email=ci@datanotes.invalid",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&v.dir, &["init", "-q"]);
    git(&v.dir, &["add", "-A"]);
    git(&v.dir, &["commit", "-qm", "the film diary"]);
    git(&root, &["clone", "-q", "--bare", v.root(), "origin.git"]);
    let origin = root.join("origin.git");
    for (i, pull) in ["--no-rebase", "--rebase"].iter().enumerate() {
        let (a, b) = (root.join(format!("laptop{i}")), root.join(format!("phone{i}")));
        git(&root, &["clone", "-q", origin.to_str().unwrap(), a.to_str().unwrap()]);
        git(&root, &["clone", "-q", origin.to_str().unwrap(), b.to_str().unwrap()]);
        let write = |dir: &Path, device: &str, path: &str, rating: u8| {
            let args = json!({"table": "film", "path": path, "set": {"rating": rating}}).to_string();
            let r = datanotes_env(
                &["call", "--vault", dir.to_str().unwrap(), "update_row", &args],
                &[("DATANOTES_DEVICE", Some(device))],
            );
            assert_eq!(r.code, 0, "{r:?}");
            r.answer()["migration_id"].as_str().unwrap().to_string()
        };
        let on_laptop = write(&a, "laptop", CHARADE, 4 - i as u8);
        git(&a, &["add", "-A"]);
        git(&a, &["commit", "-qm", "laptop"]);
        git(&a, &["push", "-q", "origin", "HEAD"]);
        let on_phone = write(&b, "phone", NOSFERATU, 3 - i as u8);
        git(&b, &["add", "-A"]);
        git(&b, &["commit", "-qm", "phone"]);
        git(&b, &["pull", "-q", pull, "origin", "HEAD"]);
        let read = |op: &str, args: Value| {
            let r = datanotes_env(
                &["call", "--vault", b.to_str().unwrap(), op, &args.to_string()],
                &[("DATANOTES_DEVICE", Some("phone"))],
            );
            assert_eq!(r.code, 0, "{r:?}");
            r.answer()
        };
        let h = read("describe_history", json!({"table": "film"}));
        let ids: Vec<&str> =
            h["history"].as_array().unwrap().iter().filter_map(|c| c["migration_id"].as_str()).collect();
        assert!(ids.contains(&on_laptop.as_str()) && ids.contains(&on_phone.as_str()), "{pull}: {h}");
        let ops: Vec<&str> = h["history"].as_array().unwrap().iter().filter_map(|c| c["operation"].as_str()).collect();
        assert!(!ops.contains(&"EXTERNAL_EDIT"), "{pull}: the laptop's write is not a hand edit on the phone: {h}");
        let latest = &h["history"][0]["version"];
        let logged = read("select_rows", json!({"table": "film", "version": latest, "columns": ["title", "rating"]}));
        let notes = read("select_rows", json!({"table": "film", "columns": ["title", "rating"]}));
        assert_eq!(logged["rows"], notes["rows"], "{pull}");
        assert!(
            notes["rows"].as_array().unwrap().iter().any(|r| r["title"] == "Charade" && r["rating"] == 4 - i),
            "{notes}"
        );
        let changes = read("list_changes", json!({"since": 0}));
        let external = changes["events"].as_array().unwrap().iter().filter(|e| e["source"] == "external").count();
        assert_eq!(external, 0, "{pull}: {changes}");
        git(&b, &["push", "-q", "origin", "HEAD"]);
    }
    let _ = std::fs::remove_dir_all(&root);
}
