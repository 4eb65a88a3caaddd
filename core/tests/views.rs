//! Issue 12, point 1: views, saved queries beside the tables in metastore.yaml.
//! Read with select_rows (narrowed further by the caller), refused as a write
//! target, journaled and undone with the file's text, following renames, and
//! guarding the columns and tables they read.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{Disk, Host, T0};
use datanotes_core::schema::{Schema, METASTORE};
use datanotes_core::Status;
use serde_json::{json, Value};

/// The film diary without the view it ships (tests make their own).
fn diary() -> Disk {
    let mut disk = Disk::films();
    let text = disk.notes[METASTORE].clone();
    let at = text.find("views:\n").expect("the diary ships a view");
    disk.notes.insert(METASTORE.into(), text[..at].to_string());
    disk
}

fn films() -> Host {
    let mut disk = diary();
    let e = disk.open(T0);
    let mut h = Host::new(disk, T0);
    h.e = e;
    h.step = 60_000;
    h
}

fn to_watch() -> Value {
    json!({"name": "to_watch", "table": "film", "columns": ["title", "year"],
           "where": {"status": "to watch"}, "order_by": "year", "description": "Films I have not seen yet"})
}

fn failed(h: &mut Host, op: &str, args: Value) -> (Status, String) {
    let out = h.call(op, args);
    assert_ne!(out.status, Status::Ok, "{op} should fail: {}", out.answer);
    let text = format!("{} {}", out.answer["error"].as_str().unwrap_or_default(), out.answer["hint"]);
    (out.status, text)
}

fn titles(a: &Value) -> Vec<String> {
    a["rows"].as_array().unwrap().iter().map(|r| r["title"].as_str().unwrap_or("?").to_string()).collect()
}

fn migration(a: &Value) -> String {
    a["migration_id"].as_str().unwrap_or_else(|| panic!("no migration_id in {a}")).to_string()
}

#[test]
fn the_film_diary_ships_a_view_of_the_films_to_watch() {
    let mut disk = Disk::films();
    let e = disk.open(T0);
    let mut h = Host::new(disk, T0);
    h.e = e;
    let a = h.ok("select_rows", json!({"table": "to_watch"}));
    assert_eq!(titles(&a), ["Nosferatu", "Battleship Potemkin"]);
    assert_eq!(a["rows"][0]["director"], "[[F. W. Murnau]]");
}

#[test]
fn a_view_reads_like_its_table_narrowed_by_its_query() {
    let mut h = films();
    let made = h.ok("create_view", to_watch());
    assert_eq!(made["summary"], "create view to_watch of film");
    let a = h.ok("select_rows", json!({"table": "to_watch"}));
    assert_eq!(titles(&a), ["Nosferatu", "Battleship Potemkin"]);
    assert_eq!(a["view"], "main.public.to_watch");
    assert_eq!(a["table"], "main.public.film");
    assert_eq!(a["total"], 2);
    let row = a["rows"][0].as_object().unwrap();
    let mut keys: Vec<&str> = row.keys().map(String::as_str).filter(|k| !k.starts_with('_') && *k != "path").collect();
    keys.sort();
    assert_eq!(keys, ["title", "year"], "the view's columns only: {row:?}");

    // The caller's where, order_by, limit and columns narrow it further.
    let a = h.ok("select_rows", json!({"table": "to_watch", "where": {"year": {"gt": 1922}}}));
    assert_eq!(titles(&a), ["Battleship Potemkin"]);
    let a = h.ok("select_rows", json!({"table": "main.public.to_watch", "order_by": "-year", "limit": 1}));
    assert_eq!(titles(&a), ["Battleship Potemkin"]);
    assert_eq!(a["total"], 2);
    let a = h.ok("select_rows", json!({"table": "to_watch", "columns": ["title"]}));
    assert!(a["rows"][0].get("year").is_none(), "{a}");
    let (status, text) = failed(&mut h, "select_rows", json!({"table": "to_watch", "columns": ["rating"]}));
    assert_eq!(status, Status::BadInput);
    assert!(text.contains("does not show \"rating\"") && text.contains("select_rows on film"), "{text}");

    // The same rows as the query on the table itself.
    let direct = h.ok(
        "select_rows",
        json!({"table": "film", "columns": ["title", "year"], "where": {"status": "to watch"}, "order_by": "year"}),
    );
    assert_eq!(direct["rows"], h.ok("select_rows", json!({"table": "to_watch"}))["rows"]);

    // describe_database lists it.
    let d = h.ok("describe_database", json!({}));
    let v = &d["views"][0];
    assert_eq!((v["name"].as_str(), v["table"].as_str()), (Some("to_watch"), Some("main.public.film")));
    assert_eq!(v["where"], json!({"status": "to watch"}));
    assert_eq!(v["description"], "Films I have not seen yet");
}

#[test]
fn a_view_is_kept_in_metastore_yaml_and_undone_byte_for_byte() {
    let mut h = films();
    let before = h.notes[METASTORE].clone();
    let a = h.ok("create_view", to_watch());
    let after = h.notes[METASTORE].clone();
    assert!(after.starts_with(&before), "the tables' lines stay as written:\n{after}");
    assert_eq!(
        &after[before.len()..],
        "views:\n  main.public.to_watch:\n    description: Films I have not seen yet\n    table: main.public.film\n    columns: [title, year]\n    where: {status: to watch}\n    order_by: [year]\n"
    );
    let s = Schema::parse(&after).unwrap();
    assert_eq!(s.views["main.public.to_watch"].filter, Some(json!({"status": "to watch"})));
    let listed = h.ok("list_migrations", json!({"op": "create_view"}));
    assert_eq!(listed["migrations"][0]["table"], "main.public.film");

    h.ok("undo_migration", json!({"migration_id": migration(&a)}));
    assert_eq!(h.notes[METASTORE], before);
    let (status, text) = failed(&mut h, "select_rows", json!({"table": "to_watch"}));
    assert_eq!(status, Status::Refused, "{text}");

    // Renamed, then dropped; each undone.
    h.ok("create_view", to_watch());
    let with_view = h.notes[METASTORE].clone();
    let r = h.ok("rename_view", json!({"name": "to_watch", "new_name": "watchlist"}));
    assert!(h.notes[METASTORE].contains("  main.public.watchlist:\n"));
    assert_eq!(titles(&h.ok("select_rows", json!({"table": "watchlist"}))), ["Nosferatu", "Battleship Potemkin"]);
    h.ok("undo_migration", json!({"migration_id": migration(&r)}));
    assert_eq!(h.notes[METASTORE], with_view);
    let d = h.ok("drop_view", json!({"name": "to_watch"}));
    assert_eq!(h.notes[METASTORE], before, "the last view gone, the views key goes too");
    assert!(h.notes.keys().any(|p| p.ends_with("Nosferatu.md")), "the rows stay");
    h.ok("undo_migration", json!({"migration_id": migration(&d)}));
    assert_eq!(h.notes[METASTORE], with_view);
}

#[test]
fn writes_to_a_view_are_refused_with_the_table_named() {
    let mut h = films();
    h.ok("create_view", to_watch());
    for (op, args) in [
        ("insert_row", json!({"table": "to_watch", "values": {"title": "Vampyr", "year": 1932}})),
        ("update_rows", json!({"table": "to_watch", "where": {}, "set": {"rating": 3}})),
        ("delete_rows", json!({"table": "to_watch", "where": {}})),
        ("add_column", json!({"table": "to_watch", "column": "x", "definition": {"type": "text"}})),
        ("drop_table", json!({"table": "to_watch"})),
    ] {
        let (status, text) = failed(&mut h, op, args);
        assert_eq!(status, Status::Refused, "{op}: {text}");
        assert!(text.contains("main.public.to_watch is a view of main.public.film, not a table"), "{op}: {text}");
        assert!(text.contains(&format!("{op} takes the table main.public.film")), "{op}: {text}");
    }
    assert_eq!(h.ok("select_rows", json!({"table": "film"}))["total"], 7, "nothing was written");
}

#[test]
fn a_view_is_checked_when_created() {
    let mut h = films();
    let before = h.notes[METASTORE].clone();
    let bad: Vec<(Value, Status, &str)> = vec![
        (json!({"name": "a/b", "table": "film"}), Status::BadInput, "is not a valid view name"),
        (json!({"name": "../x", "table": "film"}), Status::BadInput, "is not a valid view name"),
        (json!({"name": "film", "table": "film"}), Status::Refused, "share its name with the table"),
        (json!({"name": "v", "table": "flim"}), Status::Refused, "no table \"flim\""),
        (json!({"name": "v", "table": "film", "columns": ["titel"]}), Status::BadInput, "no column \"titel\""),
        (json!({"name": "v", "table": "film", "where": {"yeer": 1925}}), Status::BadInput, "\"yeer\" names no column"),
        (json!({"name": "v", "table": "film", "where": {"year": {"bigger": 1}}}), Status::BadInput, "bigger"),
        (json!({"name": "v", "table": "film", "where": {"title.name": "x"}}), Status::BadInput, "not a link"),
        (json!({"name": "v", "table": "film", "order_by": ["-ratin"]}), Status::BadInput, "\"ratin\" names no column"),
        (json!({"name": "v", "table": "film", "wher": {}}), Status::BadInput, "unknown argument \"wher\""),
    ];
    for (args, want, says) in bad {
        let (status, text) = failed(&mut h, "create_view", args.clone());
        assert_eq!(status, want, "{args}: {text}");
        assert!(text.contains(says), "{args}: {text}");
    }
    h.ok("create_view", to_watch());
    let (status, text) = failed(&mut h, "create_view", json!({"name": "to_watch", "table": "person"}));
    assert_eq!(status, Status::Refused);
    assert!(text.contains("share its name with the view main.public.to_watch"), "{text}");
    let (status, text) = failed(&mut h, "create_table", json!({"table": "to_watch", "columns": {}}));
    assert_eq!(status, Status::Refused);
    assert!(text.contains("rename_view"), "{text}");
    let (_, text) = failed(&mut h, "drop_view", json!({"name": "to_wach"}));
    assert!(text.contains("did you mean \"to_watch\"") || text.contains("to_watch"), "{text}");
    h.ok("drop_view", json!({"name": "to_watch"}));
    assert_eq!(h.notes[METASTORE], before);
}

#[test]
fn a_view_follows_renames_of_its_table_columns_and_values() {
    let mut h = films();
    h.ok(
        "create_view",
        json!({"name": "late", "table": "watch", "columns": ["film", "occurred_at"],
               "where": {"film.status": "to watch"}, "order_by": ["-film.year", "occurred_at desc"]}),
    );
    h.ok("create_view", to_watch());
    h.ok("rename_table", json!({"table": "film", "new_name": "movie"}));
    h.ok("rename_column", json!({"table": "movie", "column": "year", "new_name": "released"}));
    h.ok("rename_value", json!({"table": "movie", "column": "status", "from": "to watch", "to": "wishlist"}));
    let s = Schema::parse(&h.notes[METASTORE]).unwrap();
    let v = &s.views["main.public.to_watch"];
    assert_eq!(v.table, "main.public.movie");
    assert_eq!(v.columns, ["title", "released"]);
    assert_eq!(v.filter, Some(json!({"status": "wishlist"})));
    assert_eq!(v.order_by, ["released"]);
    let late = &s.views["main.public.late"];
    assert_eq!(late.filter, Some(json!({"film.status": "wishlist"})), "dotted paths through links follow too");
    assert_eq!(late.order_by, ["-film.released", "occurred_at desc"]);
    let a = h.ok("select_rows", json!({"table": "to_watch"}));
    assert_eq!(titles(&a), ["Nosferatu", "Battleship Potemkin"]);
    assert_eq!(a["rows"][0]["released"], 1922);
}

#[test]
fn a_drop_a_view_depends_on_is_refused_until_the_view_goes() {
    let mut h = films();
    h.ok("create_view", to_watch());
    h.ok("create_view", json!({"name": "by_director", "table": "film", "where": {"director.born": {"lt": 1900}}}));
    let (status, text) = failed(&mut h, "drop_column", json!({"table": "film", "column": "status"}));
    assert_eq!(status, Status::Refused);
    assert!(text.contains("the view to_watch reads column status of film"), "{text}");
    assert!(text.contains("drop_view"), "{text}");
    let (_, text) = failed(&mut h, "drop_column", json!({"table": "person", "column": "born"}));
    assert!(text.contains("the view by_director reads column born of person"), "through a link: {text}");
    h.ok("drop_column", json!({"table": "film", "column": "minutes"}));
    let (_, text) = failed(&mut h, "drop_table", json!({"table": "film"}));
    assert!(text.contains("linked from"), "links are named first: {text}");
    h.ok("drop_table", json!({"table": "watch"}));
    h.ok("drop_view", json!({"name": "to_watch"}));
    h.ok("drop_column", json!({"table": "film", "column": "status"}));
}

#[test]
fn a_view_written_by_hand_reads_too_and_a_broken_one_is_reported() {
    let mut disk = diary();
    let text = format!(
        "{}views:\n  main.public.best:   # my favourites\n    table: film\n    where: {{rating: 5}}\n    order_by: -year\n",
        disk.notes[METASTORE]
    );
    disk.notes.insert(METASTORE.into(), text.clone());
    let e = disk.open(T0);
    let mut h = Host::new(disk, T0);
    h.e = e;
    h.step = 60_000;
    assert_eq!(titles(&h.ok("select_rows", json!({"table": "best"}))), ["Charade", "Metropolis"]);
    // A schema write elsewhere keeps the view's lines as written.
    h.ok("add_column", json!({"table": "person", "column": "country", "definition": {"type": "text"}}));
    assert!(h.notes[METASTORE].ends_with(
        "  main.public.best:   # my favourites\n    table: film\n    where: {rating: 5}\n    order_by: -year\n"
    ));

    let broken = Schema::parse(&text.replace("rating: 5", "ratin: 5")).unwrap_err();
    assert!(broken.contains("view main.public.best") && broken.contains("\"ratin\""), "{broken}");
    let unknown = Schema::parse(&text.replace("    order_by: -year\n", "    sort: -year\n")).unwrap_err();
    assert!(unknown.contains("unknown key \"sort\""), "{unknown}");
}

#[test]
fn a_view_reads_its_table_as_of_a_version() {
    let mut h = films();
    h.ok("create_view", to_watch());
    h.ok("update_rows", json!({"table": "film", "where": {"title": "Charade"}, "set": {"rating": 4}}));
    let v0 = h.ok("describe_history", json!({"table": "film", "limit": 1}))["history"][0]["version"].as_u64().unwrap();
    h.ok("update_rows", json!({"table": "film", "where": {"title": "Nosferatu"}, "set": {"status": "watched"}}));
    assert_eq!(titles(&h.ok("select_rows", json!({"table": "to_watch"}))), ["Battleship Potemkin"]);
    let then = h.ok("select_rows", json!({"table": "to_watch", "version": v0}));
    assert_eq!(titles(&then), ["Nosferatu", "Battleship Potemkin"]);
    assert_eq!(then["version"], v0);
}

#[test]
fn a_restore_that_would_break_a_view_is_refused_naming_it() {
    let mut h = films();
    h.ok("update_row", json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": {"rating": 4}}));
    let v = h.ok("describe_history", json!({"table": "film", "limit": 1}))["history"][0]["version"].as_u64().unwrap();
    h.ok("add_column", json!({"table": "film", "column": "country", "definition": {"type": "text"}}));
    h.ok("create_view", json!({"name": "french", "table": "film", "where": {"country": "France"}}));
    let out = h.call("restore_table", json!({"table": "film", "version": v}));
    assert_ne!(out.status, Status::Ok, "{}", out.answer);
    let text = out.answer["error"].as_str().unwrap_or_default().to_string();
    assert!(text.contains("view main.public.french") && text.contains("country"), "{text}");
    assert!(text.contains("drop_view"), "the way out: {text}");
}

#[test]
fn an_undo_that_would_break_a_view_is_refused_naming_it() {
    let mut h = films();
    let a = h.ok("add_column", json!({"table": "film", "column": "country", "definition": {"type": "text"}}));
    h.ok("create_view", json!({"name": "french", "table": "film", "where": {"country": "France"}}));
    let out = h.call("undo_migration", json!({"migration_id": migration(&a)}));
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
    let text = out.answer["error"].as_str().unwrap_or_default().to_string();
    assert!(
        text.contains("view main.public.french") && text.contains("Drop the view main.public.french first (drop_view)"),
        "{text}"
    );
}
