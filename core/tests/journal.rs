//! The journal and undo, as the journal-and-undo guide shows them on the film
//! diary: through the library with a small in-memory host (the notes, the store
//! and the trash are maps), and crash safety through the real binary.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{film_diary, unversioned, Rng};
use datanotes_core::driver;
use datanotes_core::schema::Schema;
use datanotes_core::time::iso;
use datanotes_core::{Edit, EditError, Engine, NoteFile, Outcome, Status, Step, StoreWrite};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const METASTORE: &str = "datanotes/metastore.yaml";
/// 2026-10-12T16:52:23.376Z, the time of the guide's examples.
const T0: i64 = 1_791_823_943_376;
const DAY: i64 = 86_400_000;
const ACTOR: &str = "docs-example";
const EBUSY: &str = "EBUSY: resource busy or locked";
const CONFLICT_TAIL: &str = "Hint: Later changes touched the same notes: undo those first (list_migrations lists them, newest first), or change the rows with update_row.
Docs: https://datanotes.dev/guides/history/journal-and-undo.md#undo-refuses-to-overwrite-later-changes (offline: read_docs(\"guides/history/journal-and-undo#undo-refuses-to-overwrite-later-changes\"))";

fn film(title: &str) -> String {
    format!("datanotes/main/public/film/{title}.md")
}

fn genre(name: &str) -> String {
    format!("datanotes/main/public/genre/{name}.md")
}

/// What stops the host changing a file: (its path, whether the change belongs to
/// a rollback) -> the error it reports.
type Fault = Box<dyn FnMut(&str, bool) -> Option<String>>;

/// An error for the edit of `path`: in the write itself, or with `in_rollback`
/// in its rollback.
fn busy(path: String, in_rollback: bool) -> Fault {
    Box::new(move |p, rollback| (rollback == in_rollback && p == path).then(|| EBUSY.to_string()))
}

/// The vault and the store in memory, as the driver's host: a fault makes a
/// change fail; once one did, the changes that follow in the same call are the
/// rollback's.
struct Files {
    notes: BTreeMap<String, String>,
    store: BTreeMap<String, String>,
    trash: Vec<(String, String)>,
    fault: Option<Fault>,
    /// A change failed in the call under way: what follows is its rollback.
    failed: bool,
}

impl Files {
    fn change(&mut self, path: &str) -> Result<(), String> {
        let rollback = self.failed;
        if let Some(err) = self.fault.as_mut().and_then(|f| f(path, rollback)) {
            self.failed = true;
            return Err(err);
        }
        Ok(())
    }

    fn write_store(&mut self, files: &[StoreWrite]) {
        for f in files {
            if f.delete {
                self.store.remove(&f.path);
            } else {
                self.store.insert(f.path.clone(), f.text.clone());
            }
        }
    }
}

impl driver::Host for Files {
    fn read(&mut self, path: &str) -> Result<Option<String>, String> {
        Ok(self.notes.get(path).cloned())
    }
    fn write(&mut self, path: &str, text: &str) -> Result<(), String> {
        self.change(path)?;
        self.notes.insert(path.into(), text.into());
        Ok(())
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        self.change(from)?;
        let text = self.notes.remove(from).ok_or("ENOENT")?;
        self.notes.insert(to.into(), text);
        Ok(())
    }
    fn trash(&mut self, path: &str) -> Result<(), String> {
        self.change(path)?;
        let text = self.notes.remove(path).ok_or("ENOENT")?;
        self.trash.push((path.into(), text));
        Ok(())
    }
    fn remove(&mut self, path: &str) -> Result<(), String> {
        self.change(path)?;
        self.notes.remove(path).ok_or("ENOENT")?;
        Ok(())
    }
    fn read_store(&mut self, path: &str) -> Option<String> {
        self.store.get(path).cloned()
    }
    fn write_store(&mut self, w: &StoreWrite) -> Result<(), String> {
        Files::write_store(self, std::slice::from_ref(w));
        Ok(())
    }
}

/// A host in memory: the engine, driven over `Files`.
struct Host {
    files: Files,
    engine: Engine,
    now: i64,
}

impl std::ops::Deref for Host {
    type Target = Files;

    fn deref(&self) -> &Files {
        &self.files
    }
}

impl std::ops::DerefMut for Host {
    fn deref_mut(&mut self) -> &mut Files {
        &mut self.files
    }
}

impl Host {
    fn films() -> Host {
        Host::new(film_diary(), BTreeMap::new(), T0)
    }

    fn new(notes: BTreeMap<String, String>, store: BTreeMap<String, String>, now: i64) -> Host {
        let engine = open_at(&notes, &store, now);
        let files = Files { notes, store, trash: vec![], fault: None, failed: false };
        let mut h = Host { engine, files, now };
        h.reopen();
        h
    }

    /// A new engine on the notes and the store as they are, at `now`.
    fn reopen(&mut self) {
        self.engine = open_at(&self.notes, &self.store, self.now);
        let upkeep = self.engine.take_upkeep();
        self.files.write_store(&upkeep);
    }

    fn call(&mut self, op: &str, args: Value) -> Outcome {
        self.call_as(op, args, ACTOR)
    }

    fn call_as(&mut self, op: &str, args: Value, actor: &str) -> Outcome {
        self.now += 10;
        self.files.failed = false;
        driver::call(&mut self.engine, &mut self.files, op, &args, actor, self.now)
    }

    /// A call that must succeed: its answer.
    fn ok(&mut self, op: &str, args: Value) -> Value {
        let out = self.call(op, args.clone());
        assert_eq!(out.status, Status::Ok, "{op} {args}: {:#}", out.answer);
        out.answer
    }

    /// A journaled write that must succeed: its migration_id.
    fn write(&mut self, op: &str, args: Value) -> String {
        let a = self.ok(op, args);
        a["migration_id"].as_str().unwrap_or_else(|| panic!("no migration_id in {a:#}")).to_string()
    }

    /// A call that must be refused: the text of the refusal.
    fn refused(&mut self, op: &str, args: Value) -> String {
        let out = self.call(op, args.clone());
        assert_eq!(out.status, Status::Refused, "{op} {args}: {:#}", out.answer);
        out.answer["error"].as_str().unwrap().to_string()
    }

    fn undo(&mut self, id: &str) -> Value {
        self.ok("undo_migration", json!({ "migration_id": id }))
    }

    fn migrations(&mut self, args: Value) -> Vec<Value> {
        self.ok("list_migrations", args)["migrations"].as_array().unwrap().clone()
    }

    fn entry(&mut self, id: &str) -> Value {
        let all = self.migrations(json!({"limit": 1000}));
        all.into_iter().find(|m| m["migration_id"] == id).unwrap_or_else(|| panic!("{id} is not listed"))
    }

    fn text(&self, path: &str) -> &str {
        self.notes.get(path).unwrap_or_else(|| panic!("no note {path}"))
    }

    fn titles(&mut self) -> Vec<String> {
        let a = self.ok("select_rows", json!({"table": "film", "columns": ["title"], "limit": 10000}));
        a["rows"].as_array().unwrap().iter().map(|r| r["title"].as_str().unwrap_or_default().to_string()).collect()
    }

    /// Applies one edit as the driver does (checked against the file).
    fn apply(&mut self, e: &Edit) -> Result<(), EditError> {
        driver::apply(&mut self.files, e)
    }
}

fn open_at(notes: &BTreeMap<String, String>, store: &BTreeMap<String, String>, now: i64) -> Engine {
    let files = notes.iter().map(|(p, t)| NoteFile { path: p.clone(), text: t.clone(), mtime: 0 }).collect();
    Engine::open_at(files, store.iter().map(|(p, t)| (p.clone(), t.clone())).collect(), now)
}

/// The notes of two vaults are the same byte for byte, and their schemas the
/// same tables (the engine writes metastore.yaml in its own layout).
fn assert_same_vault(now: &BTreeMap<String, String>, want: &BTreeMap<String, String>, what: &str) {
    let notes = |m: &BTreeMap<String, String>| {
        m.iter().filter(|(p, _)| *p != METASTORE).map(|(p, t)| (p.clone(), t.clone())).collect::<BTreeMap<_, _>>()
    };
    let (a, b) = (notes(now), notes(want));
    let mut differ: Vec<&String> = a.keys().chain(b.keys()).filter(|p| a.get(*p) != b.get(*p)).collect();
    differ.dedup();
    assert!(
        differ.is_empty(),
        "{what}: these notes differ: {differ:?}\n{:#?}",
        differ.iter().map(|p| (a.get(*p), b.get(*p))).collect::<Vec<_>>()
    );
    let schema =
        |m: &BTreeMap<String, String>| Schema::parse(m.get(METASTORE).map_or("", String::as_str)).unwrap().tables;
    assert!(schema(now) == schema(want), "{what}: the schemas differ:\n{}\n---\n{}", now[METASTORE], want[METASTORE]);
}

/// `YYYYMMDDTHHMMSS-op-slug` (and `-N` when the id was taken).
fn assert_id_format(id: &str, op: &str) {
    let (stamp, rest) = id.split_at(15);
    assert!(stamp.chars().enumerate().all(|(i, c)| if i == 8 { c == 'T' } else { c.is_ascii_digit() }), "{id}");
    let slug = rest.strip_prefix(&format!("-{op}-")).unwrap_or_else(|| panic!("{id} does not name {op}"));
    assert!(
        !slug.is_empty() && slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_'),
        "{id}"
    );
}

// ---------------------------------------------------------------------------
// The examples of the guide
// ---------------------------------------------------------------------------

#[test]
fn list_migrations_lists_the_writes_of_a_table_newest_first() {
    let mut h = Host::films();
    h.write("insert_row", json!({"table": "film", "values": {"title": "The Kid", "year": 1921}}));
    h.write(
        "update_row",
        json!({"table": "person", "path": "datanotes/main/public/person/Buster Keaton.md", "set": {"born": 1896}}),
    );
    let update =
        h.write("update_rows", json!({"table": "film", "where": {"rating": 4}, "set": {"tags": ["favourite"]}}));
    let t_update = h.now;
    let merge = h.write("merge_rows", json!({"table": "film", "key": ["title"], "rows": [{"title": "Nosferatu", "status": "watched"}, {"title": "The General", "year": 1926}]}));
    let t_merge = h.now;
    let delete = h.write("delete_rows", json!({"table": "film", "where": {"title": "Battleship Potemkin"}}));
    let t_delete = h.now;

    let answer = h.ok("list_migrations", json!({"table": "film", "limit": 3}));
    let entry = |id: &str, op: &str, summary: &str, t: i64, notes: u64, files: u64| {
        json!({"migration_id": id, "op": op, "summary": summary, "table": "main.public.film", "executed_at": iso(t),
               "notes_changed": notes, "files_changed": files, "undone": false, "files_failed": 0, "by": ACTOR})
    };
    assert_eq!(
        answer,
        json!({"total": 4, "migrations": [
            entry(&delete, "delete_rows", "archive 1 rows of film", t_delete, 0, 1),
            entry(&merge, "merge_rows", "merge 2 rows into film", t_merge, 1, 1),
            entry(&update, "update_rows", "update film", t_update, 3, 0),
        ]})
    );
    assert_eq!(delete, "20261012T165223-delete_rows-archive-1-rows-of-film");
    assert_eq!(merge, "20261012T165223-merge_rows-merge-2-rows-into-film");
    assert_eq!(update, "20261012T165223-update_rows-update-film");
    assert_eq!(iso(t_delete), "2026-10-12T16:52:23.426Z");
    for m in h.migrations(json!({})) {
        assert_id_format(m["migration_id"].as_str().unwrap(), m["op"].as_str().unwrap());
    }
    // The other filters: op, the table's full name, since; and by is the actor of the call.
    assert_eq!(h.ok("list_migrations", json!({"op": "update_row"}))["total"], 1);
    assert_eq!(
        h.ok("list_migrations", json!({"table": "main.public.person"}))["migrations"][0]["table"],
        "main.public.person"
    );
    assert_eq!(h.ok("list_migrations", json!({"since": "2026-10-13"}))["total"], 0);
    assert_eq!(h.ok("list_migrations", json!({"since": "2026-10-12"}))["total"], 5);
    h.call_as("update_row", json!({"table": "film", "path": film("Charade"), "set": {"rating": 4}}), "agent-7");
    assert_eq!(h.migrations(json!({"limit": 1}))[0]["by"], "agent-7");
}

#[test]
fn undo_of_an_archive_brings_battleship_potemkin_back() {
    let mut h = Host::films();
    let before = h.notes.clone();
    let delete = h.write("delete_rows", json!({"table": "film", "where": {"title": "Battleship Potemkin"}}));
    assert!(!h.notes.contains_key(&film("Battleship Potemkin")));
    assert!(h.notes.contains_key("datanotes/_archive/main/public/film/Battleship Potemkin.md"));

    let answer = h.undo(&delete);
    for (k, v) in [
        ("ok", json!(true)),
        ("op", json!("undo_migration")),
        ("undoes", json!("20261012T165223-delete_rows-archive-1-rows-of-film")),
        ("migration_id", json!("20261012T165223-undo_migration-undo-20261012t165223-delete_ro")),
        ("conflicts", json!([])),
        ("failed", json!([])),
    ] {
        assert_eq!(answer[k], v, "{k} in {answer:#}");
    }
    let found =
        h.ok("select_rows", json!({"table": "film", "columns": ["title"], "where": {"title": "Battleship Potemkin"}}));
    assert_eq!(
        unversioned(found),
        json!({"table": "main.public.film", "total": 1, "rows": [{"path": "datanotes/main/public/film/Battleship Potemkin.md", "title": "Battleship Potemkin"}]})
    );
    assert_same_vault(&h.notes, &before, "after the undo");
    let entry = h.entry(&delete);
    assert_eq!(entry["undone"], true);
    assert_eq!(h.entry(answer["migration_id"].as_str().unwrap())["undoes"], json!(delete));
    // What the engine knows survives a restart: the undo is undone already.
    h.reopen();
    let again = h.refused("undo_migration", json!({ "migration_id": delete }));
    assert!(again.contains("is undone already"), "{again}");
}

/// update_row Sherlock Jr. rating 5, then `later`, then the undo of the first.
fn rating_conflict(later: u64) -> (Host, String) {
    let mut h = Host::films();
    let path = film("Sherlock Jr.");
    let answer = h.ok("update_row", json!({"table": "film", "path": path, "set": {"rating": 5}}));
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["notes_changed"], 1);
    assert_eq!(answer["planned_edits"], json!([{"path": path, "set": {"rating": 5}, "remove": []}]));
    let first = answer["migration_id"].as_str().unwrap().to_string();
    assert_eq!(first, "20261012T165223-update_row-update-film");
    h.write("update_row", json!({"table": "film", "path": path, "set": {"rating": later}}));
    (h, first)
}

fn assert_rating_conflict(later: u64) {
    let (mut h, first) = rating_conflict(later);
    let after = h.notes.clone();
    let refusal = h.refused("undo_migration", json!({ "migration_id": first }));
    assert_eq!(
        refusal,
        format!("undo_migration refused — nothing was written:\nconflict datanotes/main/public/film/Sherlock Jr..md: \"rating\" changed since the operation\n{CONFLICT_TAIL}")
    );
    assert_eq!(h.notes, after, "a refused undo writes nothing");
    assert_eq!(h.entry(&first)["undone"], false);
}

#[test]
fn undo_refuses_when_the_value_it_wrote_changed_since() {
    assert_rating_conflict(3);
}

/// The guide's example: Sherlock Jr. is rated 4 in the diary, so the second
/// update_row puts the note back byte for byte; the engine then takes the note
/// as already reverted and "undoes" the first write without a word.
#[test]
fn undo_refuses_when_the_value_it_wrote_changed_back_since() {
    assert_rating_conflict(4);
}

#[test]
fn changes_to_other_columns_do_not_block_an_undo_and_are_kept() {
    let mut h = Host::films();
    let path = film("Sherlock Jr.");
    let original = h.text(&path).to_string();
    let rating = h.write("update_row", json!({"table": "film", "path": path, "set": {"rating": 5}}));
    h.write(
        "update_row",
        json!({"table": "film", "path": path, "set": {"minutes": 46}, "body": "Keaton walks into the screen.\n"}),
    );

    h.undo(&rating);
    let want = original.replace("minutes: 45", "minutes: 46").replace("rating: 5", "rating: 4");
    let want = format!("{}Keaton walks into the screen.\n", &want[..want.find("\n---\n").unwrap() + 5]);
    assert_eq!(h.text(&path), want);
}

#[test]
fn undo_of_an_insert_refuses_when_the_created_note_changed() {
    let mut h = Host::films();
    let insert = h.write("insert_row", json!({"table": "film", "values": {"title": "The General", "year": 1926}}));
    assert_id_format(&insert, "insert_row");
    assert!(insert.starts_with("20261012T165223-insert_row-insert-into-film"), "{insert}");
    h.write(
        "update_row",
        json!({"table": "film", "path": film("The General"), "body": "Buster Keaton drives a locomotive.\n"}),
    );
    let refusal = h.refused("undo_migration", json!({ "migration_id": insert }));
    assert_eq!(
        refusal,
        format!("undo_migration refused — nothing was written:\nconflict datanotes/main/public/film/The General.md: created note changed since the operation\n{CONFLICT_TAIL}")
    );
    assert!(h.titles().contains(&"The General".to_string()));
}

#[test]
fn undo_of_an_untouched_insert_trashes_the_note() {
    let mut h = Host::films();
    let before = h.notes.clone();
    let insert = h.write("insert_row", json!({"table": "film", "values": {"title": "The General", "year": 1926}}));
    let created = h.text(&film("The General")).to_string();
    h.undo(&insert);
    assert_same_vault(&h.notes, &before, "after the undo");
    assert_eq!(h.trash, vec![(film("The General"), created)]);
}

#[test]
fn a_write_that_cannot_finish_is_rolled_back() {
    let mut h = Host::films();
    let before = h.notes.clone();
    h.fault = Some(busy(film("Nosferatu"), false));
    let out = h.call("update_rows", json!({"table": "film", "where": {"status": "to watch"}, "set": {"rating": 3}}));
    h.fault = None;
    assert_eq!(out.status, Status::RolledBack);
    assert_eq!(out.status.http(), 503);
    let a = &out.answer;
    assert_eq!(a["ok"], false);
    assert_eq!(a["op"], "update_rows");
    assert_eq!(a["failed"], json!([{"path": "datanotes/main/public/film/Nosferatu.md", "error": EBUSY}]));
    assert_eq!(a["rolled_back"], true);
    assert_eq!(a["notes_changed"], 0);
    assert!(a["error"].as_str().unwrap().contains("nothing is left changed"), "{a:#}");
    // Battleship Potemkin was written first, then put back.
    assert_same_vault(&h.notes, &before, "after the rollback");

    let list = h.migrations(json!({}));
    assert_eq!(list.len(), 2, "{list:#?}");
    let by_op = |name: &str| list.iter().find(|m| m["op"] == name).unwrap_or_else(|| panic!("no {name} in {list:#?}"));
    let (rollback, op) = (by_op("rollback"), by_op("update_rows"));
    assert_eq!(op["undone"], true);
    assert_eq!(op["files_failed"], 1);
    assert_eq!(rollback["op"], "rollback");
    assert_eq!(rollback["undoes"], op["migration_id"]);
    assert_eq!(rollback["by"], ACTOR);

    let refusal = h.refused("undo_migration", json!({"migration_id": rollback["migration_id"]}));
    assert!(
        refusal.contains("cannot be undone") && refusal.contains("Hint: Send the operation again instead."),
        "{refusal}"
    );
    let refusal = h.refused("undo_migration", json!({"migration_id": op["migration_id"]}));
    assert!(refusal.contains("is undone already"), "{refusal}");
    assert_same_vault(&h.notes, &before, "after the refused undos");

    // Sent again once the file is free, the operation goes through.
    h.write("update_rows", json!({"table": "film", "where": {"status": "to watch"}, "set": {"rating": 3}}));
    assert!(h.text(&film("Nosferatu")).contains("rating: 3"));
}

#[test]
fn the_rollback_entry_is_listed_first_before_and_after_a_restart() {
    let mut h = Host::films();
    h.fault = Some(busy(film("Nosferatu"), false));
    h.call("update_rows", json!({"table": "film", "where": {"status": "to watch"}, "set": {"rating": 3}}));
    let now = h.migrations(json!({}));
    h.reopen();
    assert_eq!(h.migrations(json!({})), now, "the same list before and after a restart");
    assert_eq!(now[0]["op"], "rollback", "{now:#?}");
}

#[test]
fn a_rolled_back_answer_names_its_migration_id() {
    let mut h = Host::films();
    h.fault = Some(busy(film("Nosferatu"), false));
    let out = h.call("update_rows", json!({"table": "film", "where": {"status": "to watch"}, "set": {"rating": 3}}));
    assert_eq!(out.status, Status::RolledBack);
    let id = h.migrations(json!({"op": "update_rows"}))[0]["migration_id"].clone();
    assert_eq!(out.answer["migration_id"], id, "{:#}", out.answer);
}

/// An error for the `n`-th edit of the write (counting from 0), not its rollback.
fn nth_edit_busy(n: usize) -> Fault {
    let mut seen = 0;
    Box::new(move |_, rollback| {
        if rollback {
            return None;
        }
        seen += 1;
        (seen == n + 1).then(|| EBUSY.to_string())
    })
}

#[test]
fn every_kind_of_write_is_rolled_back_when_its_second_edit_fails() {
    let writes = [
        ("update_rows", json!({"table": "film", "where": {"rating": 4}, "set": {"rating": 3}})),
        ("delete_rows", json!({"table": "film", "where": {"status": "to watch"}})),
        ("delete_rows", json!({"table": "film", "where": {"status": "to watch"}, "mode": "trash"})),
        (
            "insert_rows",
            json!({"table": "film", "rows": [{"title": "The General", "year": 1926}, {"title": "The Kid", "year": 1921}]}),
        ),
        (
            "merge_rows",
            json!({"table": "film", "key": ["title"], "rows": [{"title": "Nosferatu", "rating": 4}, {"title": "The Kid", "year": 1921}]}),
        ),
        (
            "add_column",
            json!({"table": "film", "column": "country", "definition": {"type": "text", "required": true, "default": "USA"}}),
        ),
        ("rename_column", json!({"table": "film", "column": "minutes", "new_name": "runtime"})),
        ("rename_value", json!({"table": "film", "column": "status", "from": "to watch", "to": "wishlist"})),
        ("update_row", json!({"table": "film", "path": film("Sherlock Jr."), "set": {"title": "Sherlock Junior"}})),
    ];
    let fresh = Host::films().ok("describe_database", json!({}));
    for (op, args) in writes {
        let mut h = Host::films();
        let before = h.notes.clone();
        h.fault = Some(nth_edit_busy(1));
        let out = h.call(op, args.clone());
        h.fault = None;
        assert_eq!(out.status, Status::RolledBack, "{op} {args}: {:#}", out.answer);
        assert_eq!(out.answer["rolled_back"], true, "{op}: {:#}", out.answer);
        assert_same_vault(&h.notes, &before, &format!("after the rollback of {op}"));
        assert_eq!(h.ok("describe_database", json!({})), fresh, "{op}: the engine's schema is back");
        let list = h.migrations(json!({}));
        assert!(
            list.iter().any(|m| m["op"] == op && m["undone"] == true) && list.iter().any(|m| m["op"] == "rollback"),
            "{op}: {list:#?}"
        );
        // The engine's index is as the notes are: the same write goes through now.
        h.ok(op, args);
    }
}

#[test]
fn a_batch_that_cannot_finish_leaves_nothing_behind() {
    let mut h = Host::films();
    let before = h.notes.clone();
    h.fault = Some(busy(film("The Gold Rush"), false));
    let out = h.call(
        "batch",
        json!({"operations": [
            {"op": "insert_row", "args": {"table": "film", "values": {"title": "The General", "year": 1926}}},
            {"op": "update_row", "args": {"table": "film", "path": film("Charade"), "set": {"rating": 4}}},
            {"op": "update_row", "args": {"table": "film", "path": film("The Gold Rush"), "set": {"rating": 5}}},
        ]}),
    );
    assert_eq!(out.status, Status::RolledBack, "{:#}", out.answer);
    assert_eq!(out.answer["rolled_back"], true);
    assert_same_vault(&h.notes, &before, "after the rollback of the batch");
    assert!(!h.titles().contains(&"The General".to_string()));
}

/// update_rows on the three films rated 4 (written in path order: His Girl
/// Friday, Sherlock Jr., The Gold Rush): The Gold Rush is busy, and so is His
/// Girl Friday when the rollback (last first) comes to it.
fn rollback_that_fails(h: &mut Host) -> Outcome {
    let mut gold_rush = busy(film("The Gold Rush"), false);
    let mut friday = busy(film("His Girl Friday"), true);
    h.fault = Some(Box::new(move |e, rb| gold_rush(e, rb).or_else(|| friday(e, rb))));
    let out = h.call("update_rows", json!({"table": "film", "where": {"rating": 4}, "set": {"tags": ["favourite"]}}));
    h.fault = None;
    out
}

#[test]
fn a_rollback_that_fails_is_finished_by_undo_migration() {
    let mut h = Host::films();
    let before = h.notes.clone();
    let out = rollback_that_fails(&mut h);
    assert_eq!(out.status, Status::RolledBack);
    let a = &out.answer;
    assert_eq!(a["ok"], false);
    assert_eq!(a["rolled_back"], false);
    assert_eq!(a["notes_changed"], 0);
    assert_eq!(
        a["failed"],
        json!([{"path": film("The Gold Rush"), "error": EBUSY}, {"path": film("His Girl Friday"), "error": format!("not rolled back: {EBUSY}")}])
    );
    assert_ne!(h.text(&film("His Girl Friday")), before[&film("His Girl Friday")], "left written");
    assert_eq!(h.text(&film("Sherlock Jr.")), before[&film("Sherlock Jr.")], "put back");

    let list = h.migrations(json!({}));
    assert_eq!(list.len(), 1, "no rollback entry when the rollback did not finish: {list:#?}");
    assert_eq!(list[0]["undone"], false);
    assert_eq!(list[0]["status"], "rollback_incomplete");
    let id = list[0]["migration_id"].as_str().unwrap().to_string();

    // The binary opens the vault again for each call.
    h.reopen();
    let undo = h.undo(&id);
    assert_eq!(
        undo["planned_edits"].as_array().unwrap().len(),
        1,
        "only His Girl Friday is left to put back: {undo:#}"
    );
    assert_eq!(undo["planned_edits"][0]["path"], film("His Girl Friday"));
    assert_same_vault(&h.notes, &before, "after the undo");
    assert_eq!(h.entry(&id)["undone"], true);
}

#[test]
fn a_rollback_that_fails_is_finished_by_undo_migration_in_the_same_engine() {
    let mut h = Host::films();
    let before = h.notes.clone();
    let out = rollback_that_fails(&mut h);
    assert_eq!(out.answer["rolled_back"], false);
    let id = h.migrations(json!({}))[0]["migration_id"].as_str().unwrap().to_string();
    h.undo(&id);
    assert_same_vault(&h.notes, &before, "after the undo, without a restart");
}

/// The host stops (a crash) after the journal entry and the first of three edits.
#[test]
fn a_write_cut_short_is_pending_at_the_next_open_and_undone() {
    let mut h = Host::films();
    let before = h.notes.clone();
    let out = h.engine.call(
        "update_rows",
        json!({"table": "film", "where": {"rating": 4}, "set": {"tags": ["favourite"]}}),
        ACTOR,
        h.now,
    );
    let Step::Apply(out) = out else { panic!("a write: {out:?}") };
    assert_eq!(out.edits.len(), 3);
    h.files.write_store(&out.store);
    h.apply(&out.edits[0]).unwrap();
    let id = out.answer["migration_id"].as_str().unwrap().to_string();

    // A pending entry outlives the retention: it is the only way back.
    h.now += 100 * DAY;
    h.reopen();
    let warning = format!("{id} (update film) was cut short before it finished: some notes may be written, others not. undo_migration {{\"migration_id\": \"{id}\"}} puts them back.");
    assert!(h.engine.warnings().contains(&warning), "{:#?}", h.engine.warnings());
    let entry = h.entry(&id);
    assert_eq!(entry["status"], "pending");
    assert_eq!(entry["undone"], false);

    let undo = h.undo(&id);
    assert_eq!(undo["planned_edits"].as_array().unwrap().len(), 1, "only the note written is put back: {undo:#}");
    assert_same_vault(&h.notes, &before, "after the undo of the pending write");
}

#[test]
fn undo_of_an_undo_is_a_redo() {
    let mut h = Host::films();
    let original = h.notes.clone();
    let write = h.write(
        "update_rows",
        json!({"table": "film", "where": {"year": {"lt": 1926}}, "set": {"status": "watched", "rating": 5}}),
    );
    let after_write = h.notes.clone();
    let undo = h.undo(&write);
    let undo_id = undo["migration_id"].as_str().unwrap().to_string();
    assert_same_vault(&h.notes, &original, "after the undo");

    let redo = h.undo(&undo_id);
    assert_eq!(redo["undoes"], json!(undo_id));
    assert_same_vault(&h.notes, &after_write, "after the redo");
    assert_eq!(h.entry(&write)["undone"], false, "the write stands again");
    assert_eq!(h.entry(&undo_id)["undone"], true);
    // And the write can be undone once more.
    h.undo(&write);
    assert_same_vault(&h.notes, &original, "after the second undo");
}

/// Runs a schema write, checks it, undoes it, and checks the vault is as before.
fn schema_undo(op: &str, args: Value, check: impl Fn(&mut Host)) {
    let mut h = Host::films();
    let before = h.notes.clone();
    let id = h.write(op, args);
    check(&mut h);
    let (after, schema_after) = (h.notes.clone(), h.ok("describe_database", json!({})));
    let undo = h.undo(&id);
    assert_same_vault(&h.notes, &before, &format!("after the undo of {op}"));
    // The engine's own schema is back too.
    assert_eq!(h.ok("describe_database", json!({})), Host::films().ok("describe_database", json!({})));
    // And undoing the undo gives the write back.
    h.undo(undo["migration_id"].as_str().unwrap());
    assert_same_vault(&h.notes, &after, &format!("after the redo of {op}"));
    assert_eq!(h.ok("describe_database", json!({})), schema_after);
}

#[test]
fn undo_of_add_column_takes_it_out_of_the_schema_and_the_rows() {
    schema_undo(
        "add_column",
        json!({"table": "film", "column": "country", "definition": {"type": "text", "required": true, "default": "USA"}}),
        |h| {
            assert!(h.text(&film("Metropolis")).contains("country: USA"));
            assert!(h.text(METASTORE).contains("country"));
        },
    );
}

#[test]
fn undo_of_rename_value_puts_the_old_value_back() {
    schema_undo(
        "rename_value",
        json!({"table": "film", "column": "status", "from": "to watch", "to": "wishlist"}),
        |h| {
            assert!(h.text(&film("Nosferatu")).contains("status: wishlist"));
            assert!(h.text(METASTORE).contains("wishlist"));
            assert_eq!(h.ok("select_rows", json!({"table": "film", "where": {"status": "wishlist"}}))["total"], 2);
        },
    );
}

#[test]
fn undo_of_rename_column_puts_the_old_name_back() {
    schema_undo("rename_column", json!({"table": "film", "column": "minutes", "new_name": "runtime"}), |h| {
        assert!(h.text(&film("Charade")).contains("runtime: 113"));
        assert!(!h.text(&film("Charade")).contains("minutes"));
    });
}

#[test]
fn undo_of_rename_column_used_by_a_check_and_the_note_names() {
    schema_undo("rename_column", json!({"table": "genre", "column": "name", "new_name": "title"}), |h| {
        assert!(h.text(&genre("Thriller")).contains("title: Thriller"));
        assert!(h.text(METASTORE).contains("name_from: title"));
    });
    schema_undo("rename_column", json!({"table": "film", "column": "rating", "new_name": "stars"}), |h| {
        assert!(h.text(METASTORE).contains("stars"));
        assert!(h
            .refused("update_row", json!({"table": "film", "path": film("Charade"), "set": {"stars": 9}}))
            .contains("rating_range"));
    });
}

/// genre's CHECK parent_by_level reads `parent.kind`: the kind of the genre its
/// parent links to, in the same table.
#[test]
fn undo_of_rename_column_used_through_a_link() {
    schema_undo("rename_column", json!({"table": "genre", "column": "kind", "new_name": "level"}), |h| {
        assert!(h.text(&genre("Thriller")).contains("level: genre"));
        assert!(h.text(METASTORE).contains("parent.level"));
    });
    schema_undo("rename_column", json!({"table": "film", "column": "title", "new_name": "name"}), |h| {
        assert!(h.text(&film("Charade")).contains("name: Charade"));
        assert!(h.text(METASTORE).contains("{film.name}"));
    });
}

#[test]
fn undo_of_drop_column_puts_the_values_back() {
    schema_undo("drop_column", json!({"table": "film", "column": "tags"}), |h| {
        assert!(!h.text(&film("Charade")).contains("seen-2026"));
    });
}

#[test]
fn a_batch_is_undone_as_a_whole() {
    let mut h = Host::films();
    let before = h.notes.clone();
    let batch = h.write(
        "batch",
        json!({"operations": [
            {"op": "insert_row", "args": {"table": "film", "values": {"title": "The General", "year": 1926}}},
            {"op": "update_row", "args": {"table": "film", "path": film("Sherlock Jr."), "set": {"rating": 5}}},
            {"op": "add_column", "args": {"table": "person", "column": "country", "definition": {"type": "text"}}},
            {"op": "delete_rows", "args": {"table": "film", "where": {"title": "Nosferatu"}, "mode": "trash"}},
        ]}),
    );
    let entry = h.entry(&batch);
    assert_eq!(entry["op"], "batch");
    assert_eq!(
        entry["members"],
        json!([{"op": "insert_row", "summary": "insert into film"}, {"op": "update_row", "summary": "update film"},
               {"op": "add_column", "summary": "add column country to person"}, {"op": "delete_rows", "summary": "trash 1 rows of film"}])
    );
    assert_eq!(h.migrations(json!({})).len(), 1, "one entry for the batch");
    let after = h.notes.clone();
    let undo = h.undo(&batch);
    assert_same_vault(&h.notes, &before, "after the undo of the batch");
    h.undo(undo["migration_id"].as_str().unwrap());
    assert_same_vault(&h.notes, &after, "after the redo of the batch");
}

#[test]
fn a_batch_undo_is_refused_as_a_whole_when_one_step_conflicts() {
    let mut h = Host::films();
    let batch = h.write(
        "batch",
        json!({"operations": [
            {"op": "update_row", "args": {"table": "film", "path": film("Charade"), "set": {"rating": 4}}},
            {"op": "update_row", "args": {"table": "film", "path": film("Sherlock Jr."), "set": {"rating": 5}}},
        ]}),
    );
    h.write("update_row", json!({"table": "film", "path": film("Sherlock Jr."), "set": {"rating": 3}}));
    let after = h.notes.clone();
    let refusal = h.refused("undo_migration", json!({ "migration_id": batch }));
    assert!(
        refusal.contains("conflict datanotes/main/public/film/Sherlock Jr..md: \"rating\" changed since the operation"),
        "{refusal}"
    );
    assert_eq!(h.notes, after, "nothing written, Charade included");
}

#[test]
fn undo_is_refused_when_the_revert_would_break_a_check() {
    let mut h = Host::films();
    // Thriller moves to the silent era; then Sound film stops being an era.
    let move_thriller =
        h.write("update_row", json!({"table": "genre", "path": genre("Thriller"), "set": {"parent": "Silent film"}}));
    h.write(
        "update_row",
        json!({"table": "genre", "path": genre("Screwball comedy"), "set": {"parent": "Silent film"}}),
    );
    h.write(
        "update_row",
        json!({"table": "genre", "path": genre("Sound film"), "set": {"kind": "genre", "parent": "Silent film"}}),
    );
    let after = h.notes.clone();
    // Putting Thriller back under Sound film, a genre now, breaks parent_by_level.
    let refusal = h.refused("undo_migration", json!({ "migration_id": move_thriller }));
    assert!(refusal.starts_with("undo_migration refused — nothing was written:\n"), "{refusal}");
    assert!(refusal.contains("datanotes/main/public/genre/Thriller.md: violates CHECK parent_by_level"), "{refusal}");
    assert_eq!(h.notes, after);
}

#[test]
fn undo_is_refused_when_the_revert_would_leave_a_dangling_link() {
    let mut h = Host::films();
    let lloyd = h.write("insert_row", json!({"table": "person", "values": {"name": "Harold Lloyd", "born": 1893}}));
    h.write(
        "insert_row",
        json!({"table": "film", "values": {"title": "Safety Last!", "year": 1923, "director": "Harold Lloyd"}}),
    );
    let after = h.notes.clone();
    let refusal = h.refused("undo_migration", json!({ "migration_id": lloyd }));
    assert!(refusal.contains("datanotes/main/public/film/Safety Last!.md: director [[Harold Lloyd]] does not resolve to a row of main.public.person"), "{refusal}");
    assert_eq!(h.notes, after);
}

#[test]
fn configure_database_is_not_journaled() {
    let mut h = Host::films();
    let a = h.ok("configure_database", json!({"journalRetentionDays": 30}));
    assert_eq!(a["changed"], true);
    assert!(a.get("migration_id").is_none(), "{a:#}");
    assert_eq!(h.ok("list_migrations", json!({}))["total"], 0);
    assert!(h.store["settings.json"].contains("\"journalRetentionDays\": 30"));
    assert!(!h.store.keys().any(|k| k.starts_with("journal/")));
}

#[test]
fn an_unknown_migration_is_refused_with_the_closest_id() {
    let mut h = Host::films();
    let id = h.write("update_row", json!({"table": "film", "path": film("Charade"), "set": {"rating": 4}}));
    let refusal = h.refused("undo_migration", json!({"migration_id": format!("{id}x")}));
    assert!(refusal.contains(&format!("Did you mean \"{id}\"?")), "{refusal}");
}

// ---------------------------------------------------------------------------
// Retention
// ---------------------------------------------------------------------------

#[test]
fn entries_older_than_the_retention_are_dropped_at_open() {
    let mut h = Host::films();
    h.ok("configure_database", json!({"journalRetentionDays": 30}));
    let old = h.write("update_row", json!({"table": "film", "path": film("Charade"), "set": {"rating": 4}}));
    h.now += 10 * DAY;
    let newer = h.write("update_row", json!({"table": "film", "path": film("Metropolis"), "set": {"rating": 4}}));

    // 29 days on: both are kept.
    let mut e = open_at(&h.notes, &h.store, T0 + 29 * DAY);
    assert!(e.take_upkeep().is_empty());
    // 31 days on: the first goes, and its file is to delete.
    let mut e = open_at(&h.notes, &h.store, T0 + 31 * DAY);
    let upkeep = e.take_upkeep();
    assert_eq!(upkeep, vec![StoreWrite::delete(format!("journal/{old}.json"))]);
    assert!(e.take_upkeep().is_empty(), "upkeep is handed once");

    h.now = T0 + 31 * DAY;
    h.reopen();
    assert!(!h.store.contains_key(&format!("journal/{old}.json")));
    let list = h.ok("list_migrations", json!({}));
    assert_eq!(list["total"], 1);
    assert_eq!(list["migrations"][0]["migration_id"], json!(newer));
    let refusal = h.refused("undo_migration", json!({ "migration_id": old }));
    assert!(refusal.contains(&format!("no migration \"{old}\" in the journal")), "{refusal}");
}

#[test]
fn the_default_retention_is_ninety_days() {
    let mut h = Host::films();
    h.write("update_row", json!({"table": "film", "path": film("Charade"), "set": {"rating": 4}}));
    assert!(open_at(&h.notes, &h.store, T0 + 89 * DAY).take_upkeep().is_empty());
    assert_eq!(open_at(&h.notes, &h.store, T0 + 91 * DAY).take_upkeep().len(), 1);
}

// ---------------------------------------------------------------------------
// Property: undoing every write, newest first, gives the vault back
// ---------------------------------------------------------------------------

const TITLES: &[&str] =
    &["The General", "The Kid", "Safety Last!", "Sunrise", "Nosferatu", "Charade", "M", "Intolerance"];

/// A random write on the film diary, built from the table as it is now. A
/// column renamed at random is `{name}_{n}`: `col("year")` finds it again.
fn random_write(h: &mut Host, rng: &mut Rng, depth: usize) -> (String, Value) {
    let def = h.ok("describe_database", json!({"table": "film"}))["tables"][0].clone();
    let columns: Vec<String> = def["columns"].as_object().unwrap().keys().cloned().collect();
    let col =
        |name: &str| columns.iter().find(|c| c.split('_').next() == Some(name)).cloned().unwrap_or(name.to_string());
    let (title_col, year_col, rating_col, minutes_col, status_col, tags_col) =
        (col("title"), col("year"), col("rating"), col("minutes"), col("status"), col("tags"));
    let rows = h.ok("select_rows", json!({"table": "film", "columns": ["path"], "limit": 10000}))["rows"]
        .as_array()
        .unwrap()
        .clone();
    let path = if rows.is_empty() { film("Charade") } else { rng.pick(&rows)["path"].as_str().unwrap().to_string() };
    let any_col = rng.pick(&columns).clone();
    let title = format!("{} {}", rng.pick(TITLES), rng.below(3));
    let rating = rng.below(7); // 0 and 6 break rating_range
    let year = 1900 + rng.below(90);
    let status = def["columns"]
        .get(&status_col)
        .and_then(|c| c["values"].as_array())
        .map(|v| rng.pick(v).clone())
        .unwrap_or(json!("watched"));
    let n = h.now % 1000;
    let ops = if depth == 0 { 12 } else { 6 };
    match rng.below(ops) {
        0 => (
            "insert_row".into(),
            json!({"table": "film", "values": {&title_col: title, &year_col: year, &rating_col: rating}, "body": "Added at random.\n"}),
        ),
        1 => (
            "update_row".into(),
            match rng.below(3) {
                0 => json!({"table": "film", "path": path, "set": {&rating_col: rating}}),
                1 => {
                    json!({"table": "film", "path": path, "set": {&minutes_col: year - 1850, &status_col: status}, "body": format!("Body {n}.\n")})
                }
                _ => json!({"table": "film", "path": path, "set": {&title_col: title}}),
            },
        ),
        2 => (
            "update_rows".into(),
            json!({"table": "film", "where": {&year_col: {"lt": year}}, "set": {&status_col: status, &tags_col: [format!("t{n}")]}}),
        ),
        3 => (
            "delete_rows".into(),
            json!({"table": "film", "paths": [path], "mode": if rng.below(2) == 0 { "archive" } else { "trash" }}),
        ),
        4 => (
            "merge_rows".into(),
            json!({"table": "film", "key": [&title_col], "rows": [{&title_col: title, &year_col: year}, {&title_col: "Charade", &rating_col: rating}]}),
        ),
        5 => {
            let (g, parent) = (
                *rng.pick(&["Thriller", "Expressionism", "Silent film"]),
                *rng.pick(&["Silent film", "Sound film", "Cinema"]),
            );
            ("update_row".into(), json!({"table": "genre", "path": genre(g), "set": {"parent": parent}}))
        }
        6 => (
            "add_column".into(),
            json!({"table": "film", "column": format!("c{}", rng.below(4)), "definition": if rng.below(2) == 0 { json!({"type": "text"}) } else { json!({"type": "integer", "required": true, "default": 7}) }}),
        ),
        7 => (
            "rename_column".into(),
            json!({"table": "film", "column": any_col, "new_name": format!("{}_{}", any_col.split('_').next().unwrap(), rng.below(3))}),
        ),
        8 => {
            let from = status.as_str().unwrap_or("watched").to_string();
            (
                "rename_value".into(),
                json!({"table": "film", "column": status_col, "from": from, "to": format!("{}{}", from.split(' ').next().unwrap(), rng.below(3))}),
            )
        }
        9 => ("drop_column".into(), json!({"table": "film", "column": any_col})),
        10 => ("drop_column".into(), json!({"table": "film", "column": col(&format!("c{}", rng.below(4)))})),
        _ => {
            let ops: Vec<Value> =
                (0..2).map(|_| random_write(h, rng, 1)).map(|(op, args)| json!({"op": op, "args": args})).collect();
            ("batch".into(), json!({ "operations": ops }))
        }
    }
}

fn undo_everything(seed: u64) {
    let mut rng = Rng(seed);
    let mut h = Host::films();
    type Notes = BTreeMap<String, String>;
    // (migration_id, the notes before it, the notes after it)
    let mut done: Vec<(String, Notes, Notes)> = vec![];
    let mut log = vec![];
    for step in 0..30 {
        let (op, args) = random_write(&mut h, &mut rng, 0);
        let before = h.notes.clone();
        let out = h.call(&op, args.clone());
        log.push(format!("{step}: {op} {args} -> {:?}", out.status));
        match out.status {
            Status::Ok => {
                let id = out.answer["migration_id"].as_str().unwrap().to_string();
                done.push((id, before, h.notes.clone()));
            }
            Status::Refused | Status::BadInput => {
                assert_eq!(h.notes, before, "seed {seed}: a refusal wrote notes\n{}", log.join("\n"))
            }
            other => panic!("seed {seed}: {other:?} {:#}\n{}", out.answer, log.join("\n")),
        }
        // Now and then the engine starts again from the notes and the store.
        if rng.below(5) == 0 {
            h.reopen();
        }
    }
    assert!(done.len() >= 8, "seed {seed}: too few writes accepted\n{}", log.join("\n"));
    let ctx = |log: &[String]| log.join("\n");

    // The last write, undone and redone.
    let (last, before_last, after_last) = done.last().cloned().unwrap();
    let undo = h.call("undo_migration", json!({ "migration_id": last }));
    assert_eq!(undo.status, Status::Ok, "seed {seed}: {:#}\n{}", undo.answer, ctx(&log));
    assert_same_vault(&h.notes, &before_last, &format!("seed {seed}: undo of the last write {last}"));
    h.undo(undo.answer["migration_id"].as_str().unwrap());
    assert_same_vault(&h.notes, &after_last, &format!("seed {seed}: redo of the last write {last}"));

    // Every write undone, newest first: each undo gives back the notes before its write.
    let mut last_undo = String::new();
    for (id, before, _) in done.iter().rev() {
        let out = h.call("undo_migration", json!({ "migration_id": id }));
        assert_eq!(out.status, Status::Ok, "seed {seed}: undo of {id}: {:#}\n{}", out.answer, ctx(&log));
        assert_same_vault(&h.notes, before, &format!("seed {seed}: undo of {id}"));
        last_undo = out.answer["migration_id"].as_str().unwrap().to_string();
    }
    assert_same_vault(&h.notes, &film_diary(), &format!("seed {seed}: everything undone"));

    // Undoing the last undo gives back the state after the first write.
    h.undo(&last_undo);
    assert_same_vault(&h.notes, &done[0].2, &format!("seed {seed}: redo of the first write"));
}

#[test]
fn undoing_every_write_newest_first_gives_the_vault_back_seed_1() {
    undo_everything(0x9E37_79B9_7F4A_7C15);
}

#[test]
fn undoing_every_write_newest_first_gives_the_vault_back_seed_2() {
    undo_everything(0xD1B5_4A32_D192_ED03);
}

#[test]
fn undoing_every_write_newest_first_gives_the_vault_back_seed_3() {
    undo_everything(42);
}

#[test]
fn undoing_every_write_newest_first_gives_the_vault_back_seed_4() {
    undo_everything(0xC0FF_EE00_1234_5678);
}

/// Issue 11: what a journal entry did to each note, for the panel and for agents.
#[test]
fn show_migration_tells_each_notes_columns_and_body_lines() {
    let mut h = Host::films();
    let charade = film("Charade");
    let body = "[[Audrey Hepburn]] and [[Cary Grant]] in Paris.\nA second line.\n";
    let id = h.write("update_row", json!({"table": "film", "path": charade, "set": {"rating": 4}, "body": body}));
    let shown = h.ok("show_migration", json!({"migration_id": id}));
    assert_eq!(shown["migration_id"], json!(id));
    assert_eq!(shown["op"], "update_row");
    let note = &shown["notes"][0];
    assert_eq!(note["path"], json!(charade));
    assert_eq!(note["kind"], "changed");
    assert_eq!(note["changes"], json!({"rating": {"before": 5, "after": 4}}));
    let diff: Vec<&str> = note["body_diff"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert_eq!(
        diff,
        [
            "- [[Audrey Hepburn]] and [[Cary Grant]] in Paris, where several men want the fortune her murdered husband stole.",
            "+ [[Audrey Hepburn]] and [[Cary Grant]] in Paris.",
            "+ A second line."
        ]
    );

    // An insert is a created note, every key new; a rename is a move, from the old path.
    let ins = h.write("insert_row", json!({"table": "person", "values": {"name": "Janet Gaynor", "born": 1906}}));
    let created = &h.ok("show_migration", json!({"migration_id": ins}))["notes"][0];
    assert_eq!(created["kind"], "created");
    assert_eq!(created["changes"]["born"], json!({"before": null, "after": 1906}));
    let ren = h.write("update_row", json!({"table": "film", "path": charade, "set": {"title": "Charade (1963)"}}));
    let notes = h.ok("show_migration", json!({"migration_id": ren}))["notes"].clone();
    let moved = notes.as_array().unwrap().iter().find(|n| n["kind"] == "moved").expect("the renamed note");
    assert_eq!(moved["from"], json!(charade));
    assert_eq!(moved["path"], json!(film("Charade (1963)")));

    // An unknown id: refused, with the closest id named.
    let out = h.call("show_migration", json!({"migration_id": format!("{id}x")}));
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
    assert!(out.answer["error"].as_str().unwrap().contains(&format!("Did you mean \"{id}\"")), "{}", out.answer);
}
