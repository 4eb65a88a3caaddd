//! Issue 16, point 0: metastore.yaml is a person's file. A schema operation
//! changes only the lines of what it changed (comments, order, alignment and
//! quoting elsewhere kept) and its undo gives the file back byte for byte.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{Disk, Host, T0};
use datanotes_core::schema::{Schema, METASTORE};
use serde_json::{json, Value};

/// The film diary with metastore.yaml as `edit` makes it, opened.
fn films_with(edit: impl Fn(&str) -> String) -> Host {
    let mut disk = Disk::films();
    let text = edit(&disk.notes[METASTORE]);
    disk.notes.insert(METASTORE.into(), text);
    let e = disk.open(T0);
    let mut h = Host::new(disk, T0);
    h.e = e;
    h.step = 60_000;
    h
}

/// The diary's metastore.yaml with a person's touches: a comment after
/// `name_from: title`, a comment line before a table, one quoted key.
fn personal(text: &str) -> String {
    let out = text
        .replace("    name_from: title\n", "    name_from: title   # the title as the poster has it\n")
        .replace("  main.public.watch:\n", "  # each viewing, at home or out\n  main.public.watch:\n")
        .replace(
            "      year:     {type: integer, required: true}",
            "      \"year\":   {type: integer, required: true}",
        );
    assert_ne!(out, text, "the diary's metastore.yaml changed: mend this test's edits");
    out
}

fn metastore(h: &Host) -> String {
    h.notes[METASTORE].clone()
}

fn migration(a: &Value) -> String {
    a["migration_id"].as_str().unwrap_or_else(|| panic!("no migration_id in {a}")).to_string()
}

/// The lines of `after` that are not in `before`, and those of `before` gone
/// (as many times as they are added or gone), in order.
fn line_diff(before: &str, after: &str) -> (Vec<String>, Vec<String>) {
    fn minus(a: &str, b: &str) -> Vec<String> {
        let mut left: Vec<&str> = b.split_inclusive('\n').collect();
        let mut out = vec![];
        for l in a.split_inclusive('\n') {
            match left.iter().position(|x| *x == l) {
                Some(i) => {
                    left.remove(i);
                }
                None => out.push(l.to_string()),
            }
        }
        out
    }
    (minus(after, before), minus(before, after))
}

#[test]
fn point_0_add_column_then_undo_gives_the_file_back_byte_for_byte() {
    let mut h = films_with(personal);
    let before = metastore(&h);
    let a = h.ok("add_column", json!({"table": "film", "column": "country", "definition": {"type": "text"}}));
    let after = metastore(&h);
    let (added, gone) = line_diff(&before, &after);
    assert_eq!(added, vec!["      country: {type: text}\n"], "{after}");
    assert!(gone.is_empty(), "{after}");
    assert!(after.contains("name_from: title   # the title as the poster has it\n"));
    assert!(after.find("genres:").unwrap() < after.find("country:").unwrap(), "a new column goes last:\n{after}");
    h.ok("undo_migration", json!({"migration_id": migration(&a)}));
    assert_eq!(metastore(&h), before);
}

#[test]
fn point_0_each_schema_operation_changes_only_its_own_lines() {
    // (operation, arguments, lines it adds, lines it takes out)
    let cases: Vec<(&str, Value, Vec<&str>, Vec<&str>)> = vec![
        (
            "rename_column",
            json!({"table": "film", "column": "minutes", "new_name": "runtime"}),
            vec!["      runtime: {type: integer}\n"],
            vec!["      minutes:  {type: integer}\n"],
        ),
        (
            "drop_column",
            json!({"table": "film", "column": "tags"}),
            vec![],
            vec!["      tags:     {type: list, items: text}\n"],
        ),
        (
            "rename_value",
            json!({"table": "film", "column": "status", "from": "to watch", "to": "wishlist"}),
            vec!["      status: {type: enum, values: [watched, wishlist]}\n", "    where: {status: wishlist}\n"],
            vec!["      status:   {type: enum, values: [watched, to watch]}\n", "    where: {status: to watch}\n"],
        ),
        (
            "create_table",
            json!({"table": "studio", "columns": {"name": {"type": "text", "required": true}}}),
            vec![
                "  main.public.studio:\n",
                "    history: true\n",
                "    columns:\n",
                "      name: {type: text, required: true}\n",
            ],
            vec![],
        ),
    ];
    for (op, args, added, gone) in cases {
        let mut h = films_with(personal);
        let before = metastore(&h);
        let a = h.ok(op, args.clone());
        let after = metastore(&h);
        let (a_lines, g_lines) = line_diff(&before, &after);
        assert_eq!(
            (a_lines, g_lines),
            (added.iter().map(|s| s.to_string()).collect(), gone.iter().map(|s| s.to_string()).collect()),
            "{op} {args}:\n{after}"
        );
        h.ok("undo_migration", json!({"migration_id": migration(&a)}));
        assert_eq!(metastore(&h), before, "undo of {op}");
    }
}

#[test]
fn a_check_s_description_adds_its_own_lines_and_its_undo_takes_them_back() {
    let mut h = films_with(personal);
    let before = metastore(&h);
    let a = h.ok(
        "add_check",
        json!({"table": "film", "name": "from_1895", "check": {"year": {"gte": 1895}}, "description": "Films are from 1895 on"}),
    );
    let after = metastore(&h);
    let (added, gone) = line_diff(&before, &after);
    assert_eq!(
        added,
        vec![
            "      from_1895: {year: {gte: 1895}}\n",
            "    check_descriptions:\n",
            "      from_1895: Films are from 1895 on\n"
        ],
        "{after}"
    );
    assert!(gone.is_empty(), "{after}");
    // The description under the checks it describes, in the table's entry.
    let film = &after[after.find("  main.public.film:").unwrap()..];
    assert!(film.find("checks:").unwrap() < film.find("check_descriptions:").unwrap(), "{after}");
    assert_eq!(
        Schema::parse(&after).unwrap().tables["main.public.film"].check_description("from_1895"),
        Some("Films are from 1895 on")
    );
    // A second one joins the same mapping; a person's edit of one line is kept.
    let edited =
        after.replace("from_1895: Films are from 1895 on", "from_1895: Films are from 1895 on   # cinema's birth");
    h.notes.insert(METASTORE.into(), edited.clone());
    let now = h.now + 10_000;
    h.e.observe(datanotes_core::VaultEvent::Modified { path: METASTORE.into(), text: edited.clone(), mtime: now }, now);
    h.now += 60_000;
    let out = datanotes_core::driver::tick(&mut h.e, &mut h.disk.mem, h.now);
    assert_eq!(out.status, datanotes_core::Status::Ok, "{}", out.answer);
    let b = h.ok("add_check", json!({"table": "film", "name": "titled", "check": {"title": {"exists": true}}, "description": "Every film has a title"}));
    let (added, gone) = line_diff(&edited, &metastore(&h));
    assert_eq!(added, vec!["      titled: {title: {exists: true}}\n", "      titled: Every film has a title\n"]);
    assert!(gone.is_empty());
    h.ok("undo_migration", json!({"migration_id": migration(&b)}));
    assert_eq!(metastore(&h), edited);
    h.ok("undo_migration", json!({"migration_id": migration(&a)}));
    assert_eq!(metastore(&h), before);
}

#[test]
fn point_0_rename_and_drop_table_keep_the_other_tables_as_written() {
    let mut h = films_with(personal);
    let before = metastore(&h);
    h.ok("rename_table", json!({"table": "person", "new_name": "people"}));
    let after = metastore(&h);
    assert!(after.starts_with("version: 1\ntables:\n  main.public.people:\n"), "renamed in place:\n{after}");
    let (added, gone) = line_diff(&before, &after);
    assert_eq!(added, vec!["  main.public.people:\n", "      director: {type: link, table: main.public.people}\n"]);
    assert_eq!(gone, vec!["  main.public.person:\n", "      director: {type: link, table: person}\n"]);
    let a = h.ok("drop_table", json!({"table": "watch"}));
    let dropped = metastore(&h);
    assert!(!dropped.contains("main.public.watch"));
    assert!(dropped.contains("name_from: title   # the title as the poster has it\n"));
    h.ok("undo_migration", json!({"migration_id": migration(&a)}));
    assert_eq!(metastore(&h), after);
}

#[test]
fn point_0_an_undo_after_a_later_hand_edit_keeps_that_edit() {
    let mut h = films_with(personal);
    let a = h.ok("add_column", json!({"table": "film", "column": "country", "definition": {"type": "text"}}));
    // A person adds a comment to the file by hand, then undoes the operation.
    let edited = metastore(&h).replace("version: 1\n", "version: 1   # do not change\n");
    h.notes.insert(METASTORE.into(), edited.clone());
    let now = h.now + 10_000;
    h.e.observe(datanotes_core::VaultEvent::Modified { path: METASTORE.into(), text: edited.clone(), mtime: now }, now);
    h.now += 60_000;
    let out = datanotes_core::driver::tick(&mut h.e, &mut h.disk.mem, h.now);
    assert_eq!(out.status, datanotes_core::Status::Ok, "{}", out.answer);
    h.ok("undo_migration", json!({"migration_id": migration(&a)}));
    let back = metastore(&h);
    assert!(back.starts_with("version: 1   # do not change\n"), "{back}");
    assert!(!back.contains("country"));
    assert_eq!(back, personal(&common::original(METASTORE)).replace("version: 1\n", "version: 1   # do not change\n"));
}

#[test]
fn point_0_crlf_and_a_missing_last_newline_are_kept() {
    let mut h = films_with(|t| personal(t).replace('\n', "\r\n").trim_end().to_string());
    let before = metastore(&h);
    let a = h.ok("add_column", json!({"table": "watch", "column": "seat", "definition": {"type": "text"}}));
    let after = metastore(&h);
    assert!(!after.replace("\r\n", "").contains('\n'), "every line ends in CRLF:\n{after:?}");
    assert!(!after.ends_with('\n'));
    assert!(after.contains("{where})\"}\r\n      seat: {type: text}\r\nviews:\r\n"), "{after:?}");
    assert!(after.ends_with("\r\n    order_by: [year]"), "{after:?}");
    h.ok("undo_migration", json!({"migration_id": migration(&a)}));
    assert_eq!(metastore(&h), before);
}

#[test]
fn point_0_a_file_in_flow_style_is_written_anew_and_still_reads_right() {
    let mut h = films_with(|t| {
        let s = Schema::parse(t).unwrap();
        let tables: serde_json::Map<String, Value> = s
            .tables
            .iter()
            .map(|(n, d)| {
                let cols: serde_json::Map<String, Value> =
                    d.columns.iter().map(|(c, def)| (c.clone(), def.to_json())).collect();
                (n.clone(), json!({"columns": cols}))
            })
            .collect();
        serde_json::to_string(&json!({"version": 1, "tables": tables})).unwrap()
    });
    h.ok("add_column", json!({"table": "film", "column": "country", "definition": {"type": "text"}}));
    let after = Schema::parse(&metastore(&h)).unwrap();
    assert!(after.tables["main.public.film"].column("country").is_some());
    assert_eq!(after.tables.len(), 4);
}
