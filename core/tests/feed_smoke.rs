//! The change feed and hand edits on a small vault, with time driven by the test.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{applying, done, finish_ok, note};
use datanotes_core::{Edit, Engine, Status, Step, VaultEvent};
use serde_json::{json, Value};

const SCHEMA: &str = "version: 1\ntables:\n  main.public.genre:\n    name_from: name\n    columns:\n      name: {type: text, required: true}\n      kind: {type: enum, values: [cinema, era, genre], required: true}\n      parent: {type: link, table: genre}\n    checks:\n      parent_by_level: {or: [{kind: cinema, parent: {exists: false}}, {kind: era, parent.kind: cinema}, {kind: genre, parent.kind: era}]}\n";

fn genre(name: &str, kind: &str, parent: Option<&str>) -> String {
    let p = parent.map(|p| format!("parent: \"[[{p}]]\"\n")).unwrap_or_default();
    format!("---\ntable: main.public.genre\nid: {name}\nname: {name}\nkind: {kind}\n{p}---\n")
}

fn engine() -> Engine {
    Engine::open(
        vec![
            note("datanotes/metastore.yaml", SCHEMA),
            note("datanotes/main/public/genre/Cinema.md", &genre("Cinema", "cinema", None)),
            note("datanotes/main/public/genre/Silent film.md", &genre("Silent film", "era", Some("Cinema"))),
            note(
                "datanotes/main/public/genre/Slapstick comedy.md",
                &genre("Slapstick comedy", "genre", Some("Silent film")),
            ),
            note("Notes/Night.md", "We watched [[Slapstick comedy]].\n"),
        ],
        vec![],
    )
}

#[test]
fn a_hand_edit_is_reported_with_what_it_breaks() {
    let mut e = engine();
    let path = "datanotes/main/public/genre/Silent film.md";
    e.observe(
        VaultEvent::Modified { path: path.into(), text: genre("Silent film", "cinema", Some("Cinema")), mtime: 1 },
        1000,
    );
    assert_eq!(e.next_deadline(), Some(1700));
    let t = done(e.tick(1500));
    assert!(t.store.is_empty(), "not due yet");
    let t = done(e.tick(1700));
    assert!(t.log.iter().any(|l| l.contains("WARN")), "{:?}", t.log);
    let out = done(e.call("list_changes", json!({"tables": ["genre"]}), "test", 2000));
    let events = out.answer["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{}", out.answer);
    let ev = &events[0];
    assert_eq!(ev["kind"], "update");
    assert_eq!(ev["source"], "external");
    assert_eq!(ev["changes"], json!({"kind": {"before": "era", "after": "cinema"}}));
    let v = ev["violations"].as_array().unwrap();
    assert_eq!(v.len(), 2, "{ev}");
    assert_eq!(v[0]["path"], path);
    assert_eq!(v[0]["violations"][0]["constraint"], "parent_by_level");
    assert_eq!(v[1]["path"], "datanotes/main/public/genre/Slapstick comedy.md");
    assert!(v[1]["violations"][0]["message"].as_str().unwrap().contains("after the edit of [[Silent film]]"));
    // The engine's own write is not a hand edit.
    let w =
        applying(e.call("update_row", json!({"table": "genre", "path": path, "set": {"kind": "era"}}), "test", 3000));
    let text = match &w.edits[0] {
        Edit::Write { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    finish_ok(&mut e, Step::Apply(w));
    e.observe(VaultEvent::Modified { path: path.into(), text, mtime: 2 }, 3100);
    assert_eq!(e.next_deadline(), None);
    let out = done(e.call("list_changes", json!({"since": 1}), "test", 4000));
    assert_eq!(out.answer["events"].as_array().unwrap().len(), 1);
    assert_eq!(out.answer["events"][0]["source"], "engine");
    assert_eq!(out.answer["head"], 2);
}

#[test]
fn a_hand_rename_is_repaired_once_the_vault_is_quiet() {
    let mut e = engine();
    let from = "datanotes/main/public/genre/Slapstick comedy.md";
    let to = "datanotes/main/public/genre/Slapstick.md";
    let text = genre("Slapstick comedy", "genre", Some("Silent film"));
    e.observe(VaultEvent::Renamed { from: from.into(), to: to.into(), text, mtime: 1 }, 1000);
    let t = done(e.tick(1700));
    assert_eq!(t.status, Status::Ok);
    let ev = done(e.call("list_changes", json!({}), "test", 1800)).answer["events"][0].clone();
    assert_eq!(ev["kind"], "move");
    assert_eq!(ev["old_path"], from);
    assert_eq!(ev["violations"], json!([]), "the dangling link is not reported: the repair follows");
    assert_eq!(e.next_deadline(), Some(5000));
    let t = e.tick(5000);
    assert!(matches!(t, Step::Apply(_)), "{t:?}");
    let (out, _) = finish_ok(&mut e, t);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    assert_eq!(e.vault().text("Notes/Night.md"), Some("We watched [[Slapstick]].\n"));
    let m = done(e.call("list_migrations", json!({"limit": 1}), "test", 6000)).answer;
    assert_eq!(m["migrations"][0]["op"], "repair_links");
    let evs = done(e.call("list_changes", json!({"since": 1}), "test", 6000)).answer;
    assert_eq!(evs["events"][0]["cause"][0]["old_path"], from);
}

#[test]
fn unreadable_front_matter_and_its_fix() {
    let mut e = engine();
    let path = "datanotes/main/public/genre/Cinema.md";
    e.observe(
        VaultEvent::Modified {
            path: path.into(),
            text: "---\nname: Cinema: the art\nkind: cinema\n---\n".into(),
            mtime: 1,
        },
        0,
    );
    let _ = e.tick(700);
    let out = done(e.call("list_changes", json!({"kinds": ["unreadable"]}), "test", 800)).answer;
    assert_eq!(out["events"][0]["violations"][0]["violations"][0]["code"], "unreadable");
    e.observe(VaultEvent::Modified { path: path.into(), text: genre("Cinema", "cinema", None), mtime: 2 }, 1000);
    let _ = e.tick(1700);
    let out = done(e.call("list_changes", json!({"since": 1}), "test", 1800)).answer;
    assert_eq!(out["events"][0]["kind"], "update", "{out}");
    let _: Value = out;
}

#[test]
fn a_rename_seen_as_removal_and_creation_is_one_move() {
    for with_rename in [false, true] {
        let mut e = engine();
        let from = "datanotes/main/public/genre/Cinema.md";
        let to = "datanotes/main/public/genre/Film.md";
        let text = e.vault().text(from).unwrap().to_string();
        e.observe(VaultEvent::Removed { path: from.into() }, 0);
        e.observe(VaultEvent::Created { path: to.into(), text: text.clone(), mtime: 1 }, 10);
        if with_rename {
            e.observe(VaultEvent::Renamed { from: from.into(), to: to.into(), text, mtime: 1 }, 20);
        }
        let _ = e.tick(1000);
        let out = done(e.call("list_changes", json!({}), "test", 1100)).answer;
        let events = out["events"].as_array().unwrap();
        assert_eq!(events.len(), 1, "{out}");
        assert_eq!(events[0]["kind"], "move");
        assert_eq!(events[0]["old_path"], from);
    }
}

#[test]
fn a_note_written_twice_in_a_batch_is_one_change() {
    let mut e = engine();
    let path = "datanotes/main/public/genre/Cinema.md";
    let text = e.vault().text(path).unwrap().to_string();
    // Seen half written (truncated), then whole.
    e.observe(VaultEvent::Modified { path: path.into(), text: String::new(), mtime: 1 }, 0);
    e.observe(
        VaultEvent::Modified { path: path.into(), text: text.replace("name: Cinema", "name: Film"), mtime: 2 },
        10,
    );
    let _ = e.tick(1000);
    let out = done(e.call("list_changes", json!({}), "test", 1100)).answer;
    let events = out["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{out}");
    assert_eq!(events[0]["changes"], json!({"name": {"before": "Cinema", "after": "Film"}}));
}
