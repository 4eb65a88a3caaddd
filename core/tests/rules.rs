//! Rules that span rows: two-way links, filtered link targets, rows that link in,
//! unique and dense columns.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{all_ok, done, finish_ok, note};
use datanotes_core::{Edit, Engine, Outcome, Status, Step};
use serde_json::{json, Value};

const SCHEMA: &str = r#"version: 1
tables:
  main.public.person:
    name_from: name
    columns:
      name: {type: text, required: true, unique: true}
      active: {type: boolean}
      directed: {type: list, items: link, table: film, inverse: director}
  main.public.film:
    name_from: title
    columns:
      title: {type: text, required: true, unique: true}
      director: {type: link, table: person, inverse: directed, ref_where: {active: true}}
      code: {type: text, dense: true}
    ref_by: {kind: {ne: banned}}
  main.public.review:
    columns:
      film: {type: link, table: film}
      kind: {type: enum, values: [fan, banned]}
"#;

fn engine() -> Engine {
    Engine::open(
        vec![
            note("datanotes/metastore.yaml", SCHEMA),
            note(
                "datanotes/main/public/person/Fritz Lang.md",
                "---\ntable: main.public.person\nid: p1\nname: Fritz Lang\nactive: true\n---\n",
            ),
            note(
                "datanotes/main/public/person/Nobody.md",
                "---\ntable: main.public.person\nid: p2\nname: Nobody\nactive: false\n---\n",
            ),
            note("datanotes/main/public/film/M.md", "---\ntable: main.public.film\nid: f1\ntitle: M\ncode:\n---\n"),
        ],
        vec![],
    )
}

/// Calls and applies: every edit reported done. Returns the outcome and the texts written.
fn run(e: &mut Engine, op: &str, args: Value) -> (Outcome, Vec<(String, String)>) {
    let mut written = vec![];
    let a = match e.call(op, args, "test", 1_790_000_000_000) {
        Step::Apply(a) => a,
        other => return (done(other), written),
    };
    for ed in &a.edits {
        if let Edit::Write { path, text, .. } = ed {
            written.push((path.clone(), text.clone()));
        }
    }
    let out = done(e.finish(&all_ok(&a.edits)));
    assert_eq!(out.status, Status::Ok);
    assert_eq!(out.answer, a.answer);
    (out, written)
}

fn text(e: &Engine, path: &str) -> String {
    e.vault().text(path).unwrap_or_default().to_string()
}

#[test]
fn an_inverse_link_follows_the_link() {
    let mut e = engine();
    let (out, _) = run(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/M.md", "set": {"director": "Fritz Lang"}}),
    );
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    assert_eq!(out.answer["notes_changed"], 2);
    assert_eq!(
        text(&e, "datanotes/main/public/person/Fritz Lang.md"),
        "---\ntable: main.public.person\nid: p1\nname: Fritz Lang\nactive: true\ndirected:\n  - \"[[M]]\"\n---\n"
    );
    // Taking the link away takes the link back away.
    let (out, _) = run(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/M.md", "remove": ["director"]}),
    );
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    let p = e.vault().row("datanotes/main/public/person/Fritz Lang.md").unwrap();
    assert_eq!(p.values.get("directed"), Some(&json!([])));
    // And from the other side.
    let (out, _) = run(
        &mut e,
        "update_row",
        json!({"table": "person", "path": "datanotes/main/public/person/Fritz Lang.md", "set": {"directed": ["M"]}}),
    );
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    assert_eq!(e.vault().row("datanotes/main/public/film/M.md").unwrap().values["director"], json!("[[Fritz Lang]]"));
}

#[test]
fn ref_where_refuses_a_link_to_a_row_that_does_not_match() {
    let mut e = engine();
    let (out, _) = run(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/M.md", "set": {"director": "Nobody"}}),
    );
    assert_eq!(out.status, Status::Refused);
    let v = &out.answer["violations"][0]["violations"][0];
    assert_eq!(v["code"], "ref_where");
    assert_eq!(v["column"], "director");
    assert_eq!(
        text(&e, "datanotes/main/public/person/Nobody.md"),
        "---\ntable: main.public.person\nid: p2\nname: Nobody\nactive: false\n---\n"
    );
}

#[test]
fn ref_by_refuses_a_row_that_links_in_without_matching() {
    let mut e = engine();
    let (out, _) = run(&mut e, "insert_row", json!({"table": "review", "values": {"film": "M", "kind": "banned"}}));
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
    assert_eq!(out.answer["violations"][0]["violations"][0]["code"], "ref_by");
    let (out, _) = run(&mut e, "insert_row", json!({"table": "review", "values": {"film": "M", "kind": "fan"}}));
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
}

#[test]
fn unique_and_dense_columns() {
    let mut e = engine();
    let (out, _) = run(&mut e, "insert_row", json!({"table": "person", "values": {"name": "Fritz Lang"}}));
    assert_eq!(out.status, Status::Refused);
    // A dense column is written even when empty.
    let (out, written) = run(&mut e, "insert_row", json!({"table": "film", "values": {"title": "Metropolis"}}));
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    assert!(written[0].1.contains("\ncode:\n") || written[0].1.contains("\ncode: null\n"), "{}", written[0].1);
    assert_eq!(written[0].0, "datanotes/main/public/film/Metropolis.md");
    let (out, _) = run(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Metropolis.md", "remove": ["code"]}),
    );
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
    assert_eq!(out.answer["violations"][0]["violations"][0]["code"], "dense");
}

#[test]
fn a_hand_edited_two_way_link_is_kept_in_step() {
    use datanotes_core::VaultEvent;
    let mut e = engine();
    let m = "datanotes/main/public/film/M.md";
    let lang = "datanotes/main/public/person/Fritz Lang.md";
    let text = text(&e, m).replace("code:\n", "code:\ndirector: \"[[Fritz Lang]]\"\n");
    e.observe(VaultEvent::Modified { path: m.into(), text, mtime: 1 }, 0);
    let _ = e.tick(700);
    assert_eq!(e.next_deadline(), Some(3700));
    let out = e.tick(3700);
    assert!(matches!(out, Step::Apply(_)), "{out:?}");
    finish_ok(&mut e, out);
    assert_eq!(e.vault().row(lang).unwrap().values["directed"], json!(["[[M]]"]));
    let log = done(e.call("list_migrations", json!({"limit": 1}), "test", 4000)).answer;
    assert_eq!(log["migrations"][0]["op"], "sync_links");
    assert_eq!(log["migrations"][0]["by"], "engine");
    // The film removed by hand: the link back goes too.
    e.observe(VaultEvent::Removed { path: m.into() }, 5000);
    let _ = e.tick(5700);
    let out = e.tick(8700);
    finish_ok(&mut e, out);
    assert_eq!(e.vault().row(lang).unwrap().values["directed"], json!([]));
}
