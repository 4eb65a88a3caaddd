//! Issue 12, point 2: an Obsidian Bases file for each table and view, kept by
//! the engine in datanotes/bases/ in the same journaled write as the schema
//! change, parsed here against the documented syntax (help.obsidian.md/bases/syntax),
//! and left alone once a person edits it.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{Disk, Host, T0};
use datanotes_core::bases::is_engines;
use serde_json::{json, Value};

const FILM: &str = "datanotes/bases/film.base";
const TO_WATCH: &str = "datanotes/bases/to_watch.base";

fn films() -> Host {
    let mut disk = Disk::films();
    let e = disk.open(T0);
    let mut h = Host::new(disk, T0);
    h.e = e;
    h.step = 60_000;
    h
}

/// A base file read as YAML, with the structure Bases documents checked: the
/// top-level keys, filters as a statement or and/or/not of statements, the
/// properties' display names, and views with a type, a name and an order.
fn parsed(text: &str) -> Value {
    let v: Value = serde_norway::from_str(text).unwrap_or_else(|e| panic!("not YAML ({e}):\n{text}"));
    let top = v.as_object().expect("a mapping");
    for k in top.keys() {
        assert!(["filters", "formulas", "properties", "summaries", "views"].contains(&k.as_str()), "key {k}");
    }
    fn filter_ok(f: &Value) {
        match f {
            Value::String(s) => assert!(!s.is_empty()),
            Value::Object(m) => {
                assert_eq!(m.len(), 1, "one of and, or, not: {f}");
                let (k, items) = m.iter().next().unwrap();
                assert!(["and", "or", "not"].contains(&k.as_str()), "{k}");
                items.as_array().expect("a list").iter().for_each(filter_ok);
            }
            other => panic!("not a filter: {other}"),
        }
    }
    filter_ok(&v["filters"]);
    for (k, p) in v["properties"].as_object().expect("properties") {
        assert!(k.starts_with("note.") || k.starts_with("file."), "{k}");
        assert!(p["displayName"].is_string(), "{k}: {p}");
    }
    for view in v["views"].as_array().expect("views") {
        assert_eq!(view["type"], "table");
        assert!(view["name"].is_string());
        assert!(view["order"].as_array().unwrap().iter().all(Value::is_string));
        if let Some(sort) = view.get("sort") {
            for s in sort.as_array().unwrap() {
                assert!(s["property"].is_string() && ["ASC", "DESC"].contains(&s["direction"].as_str().unwrap()));
            }
        }
    }
    v
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect()
}

fn migration(a: &Value) -> String {
    a["migration_id"].as_str().unwrap().to_string()
}

#[test]
fn write_bases_makes_one_file_per_table_and_view_in_the_documented_syntax() {
    let mut h = films();
    let a = h.ok("write_bases", json!({}));
    assert_eq!(a["summary"], "write bases (5 written, 0 kept as edited)");
    let bases: Vec<&String> = h.notes.keys().filter(|p| p.starts_with("datanotes/bases/")).collect();
    assert_eq!(
        bases,
        [
            "datanotes/bases/film.base",
            "datanotes/bases/genre.base",
            "datanotes/bases/person.base",
            "datanotes/bases/to_watch.base",
            "datanotes/bases/watch.base"
        ]
    );
    let film = parsed(&h.notes[FILM]);
    assert!(is_engines(&h.notes[FILM]));
    assert_eq!(
        strings(&film["filters"]["and"]),
        ["file.inFolder(\"datanotes/main/public/film\")", "file.ext == \"md\""]
    );
    let order = strings(&film["views"][0]["order"]);
    assert_eq!(
        order,
        [
            "file.name",
            "note.title",
            "note.year",
            "note.minutes",
            "note.status",
            "note.rating",
            "note.tags",
            "note.director",
            "note.genres"
        ],
        "the columns in schema order"
    );
    assert_eq!(film["properties"]["note.rating"]["displayName"], "1 to 5 stars", "descriptions name the columns");
    assert_eq!(film["properties"]["note.title"]["displayName"], "title");
    assert_eq!(film["views"][0]["name"], "film");

    let view = parsed(&h.notes[TO_WATCH]);
    assert_eq!(
        strings(&view["filters"]["and"]),
        ["file.inFolder(\"datanotes/main/public/film\")", "file.ext == \"md\"", "note.status == \"to watch\""]
    );
    assert_eq!(strings(&view["views"][0]["order"]), ["file.name", "note.title", "note.year", "note.director"]);
    assert_eq!(view["views"][0]["sort"], json!([{"property": "note.year", "direction": "ASC"}]));

    // Journaled: undo takes them away again.
    h.ok("undo_migration", json!({"migration_id": migration(&a)}));
    assert!(!h.notes.keys().any(|p| p.starts_with("datanotes/bases/")));
    // Up to date: nothing to write.
    h.ok("write_bases", json!({}));
    assert_eq!(h.ok("write_bases", json!({}))["summary"], "write bases (0 written, 0 kept as edited)");
}

#[test]
fn a_schema_change_rewrites_its_base_in_the_same_write_and_undo_puts_it_back() {
    let mut h = films();
    h.ok("write_bases", json!({}));
    let before = h.notes[FILM].clone();
    let a = h.ok("add_column", json!({"table": "film", "column": "country", "definition": {"type": "text", "description": "Country of origin"}}));
    assert!(
        a["planned_edits"].as_array().unwrap().contains(&json!({"path": FILM, "base": true, "create": false})),
        "{a}"
    );
    let film = parsed(&h.notes[FILM]);
    assert_eq!(strings(&film["views"][0]["order"]).last(), Some(&"note.country"));
    assert_eq!(film["properties"]["note.country"]["displayName"], "Country of origin");
    assert_eq!(h.notes[TO_WATCH], h.e.vault().text(TO_WATCH).unwrap(), "the view's base did not change");
    h.ok("undo_migration", json!({"migration_id": migration(&a)}));
    assert_eq!(h.notes[FILM], before);

    // A renamed table's base moves to its new name; a dropped view's goes.
    h.ok("rename_table", json!({"table": "watch", "new_name": "viewing"}));
    assert!(!h.notes.contains_key("datanotes/bases/watch.base"));
    assert!(parsed(&h.notes["datanotes/bases/viewing.base"])["filters"]["and"][0]
        .as_str()
        .unwrap()
        .contains("datanotes/main/public/viewing"));
    h.ok("drop_view", json!({"name": "to_watch"}));
    assert!(!h.notes.contains_key(TO_WATCH));
}

#[test]
fn a_base_a_person_edited_is_kept_and_the_answer_says_so() {
    let mut h = films();
    let a = h.ok("write_bases", json!({}));
    // Obsidian rewrites the file when the person changes the view: no header.
    let theirs = "filters:\n  and:\n    - file.inFolder(\"datanotes/main/public/film\")\nviews:\n  - type: cards\n    name: Posters\n";
    h.notes.insert(FILM.into(), theirs.into());
    h.e = h.disk.open(h.now);
    let b = h.ok("add_column", json!({"table": "film", "column": "country", "definition": {"type": "text"}}));
    assert_eq!(b["bases_kept"], json!([FILM]));
    assert_eq!(h.notes[FILM], theirs);
    // The undo of the write that made it does not take it away, nor refuse.
    h.ok("undo_migration", json!({"migration_id": migration(&b)}));
    let u = h.ok("undo_migration", json!({"migration_id": migration(&a)}));
    assert_eq!(u["bases_kept"], json!([FILM]), "{u}");
    assert_eq!(h.notes[FILM], theirs);
    // A base that is no longer YAML is kept too: nothing overwrites it.
    h.notes.insert(FILM.into(), "views: [unclosed\n".into());
    h.e = h.disk.open(h.now);
    let w = h.ok("write_bases", json!({}));
    assert_eq!(w["bases_kept"], json!([FILM]));
    assert_eq!(h.notes[FILM], "views: [unclosed\n");
    // Deleted, it is written again.
    h.notes.remove(FILM);
    h.e = h.disk.open(h.now);
    h.ok("write_bases", json!({}));
    assert!(is_engines(&h.notes[FILM]));
}

#[test]
fn a_setting_turns_bases_off() {
    let mut h = films();
    h.ok("configure_database", json!({"bases": false}));
    h.ok("add_column", json!({"table": "film", "column": "country", "definition": {"type": "text"}}));
    h.ok("create_view", json!({"name": "short", "table": "film", "where": {"minutes": {"lt": 90}}}));
    assert!(!h.notes.keys().any(|p| p.starts_with("datanotes/bases/")));
    let out = h.call("write_bases", json!({}));
    assert_eq!(out.status, datanotes_core::Status::Refused);
    assert!(out.answer["error"].as_str().unwrap().contains("bases are turned off"), "{}", out.answer);
    h.ok("configure_database", json!({"bases": true}));
    assert_eq!(h.ok("write_bases", json!({}))["summary"], "write bases (6 written, 0 kept as edited)");
}

#[test]
fn what_bases_cannot_say_is_said_in_a_comment() {
    let mut h = films();
    h.ok(
        "create_view",
        json!({"name": "old_home", "table": "watch", "where": {"and": [{"where": "home"}, {"film.year": {"lt": 1930}}]},
               "order_by": ["-occurred_at", "film.title"]}),
    );
    h.ok(
        "create_view",
        json!({"name": "picks", "table": "film",
               "where": {"or": [{"rating": {"gte": 5}}, {"tags": "film-night"}], "year": {"in": [1927, 1963]},
                         "title": {"starts_with": "C"}, "minutes": {"exists": true}, "director": "[[Stanley Donen]]"}}),
    );
    let text = h.notes["datanotes/bases/old_home.base"].clone();
    assert!(text.contains("# Bases cannot say where {film.year: {lt: 1930}}"), "{text}");
    assert!(text.contains("# Bases cannot say order_by film.title"), "{text}");
    let v = parsed(&text);
    assert_eq!(strings(&v["filters"]["and"])[2], "note.where == \"home\"");
    assert_eq!(v["views"][0]["sort"], json!([{"property": "note.occurred_at", "direction": "DESC"}]));

    let picks = parsed(&h.notes["datanotes/bases/picks.base"]);
    let and = picks["filters"]["and"].as_array().unwrap();
    let said: Vec<String> = and.iter().map(|x| x.to_string()).collect();
    assert!(
        said.contains(&json!({"or": ["note.rating >= 5", "note.tags.contains(\"film-night\")"]}).to_string()),
        "{said:?}"
    );
    assert!(said.contains(&json!("(note.year == 1927 || note.year == 1963)").to_string()), "{said:?}");
    assert!(said.contains(&json!("note.title.startsWith(\"C\")").to_string()), "{said:?}");
    assert!(said.contains(&json!("file.hasProperty(\"minutes\")").to_string()), "{said:?}");
    assert!(said.contains(&json!("note.director == link(\"Stanley Donen\")").to_string()), "{said:?}");
}
