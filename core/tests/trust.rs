//! Issue 16, the engine's part: what it must refuse or keep so that a vault stays
//! whole on every disk it is synced to. Each test is named for its point.

mod common;

use common::{Disk, Host, T0};
use datanotes_core::Status;
use serde_json::{json, Value};

const METASTORE: &str = "datanotes/metastore.yaml";
const CHARADE: &str = "datanotes/main/public/film/Charade.md";
const FILMS: &str = "datanotes/main/public/film/";

fn films() -> Host {
    let mut h = Host::new(Disk::films(), T0);
    h.step = 1000;
    h.e = h.disk.open(T0);
    h
}

/// A failed call's status and its error text (reasons, hint and all).
fn failed(h: &mut Host, op: &str, args: Value) -> (Status, String) {
    let out = h.call(op, args);
    assert_ne!(out.status, Status::Done, "{op} should fail: {}", out.answer);
    (out.status, out.answer["error"].as_str().unwrap_or_default().to_string())
}

fn film(title: &str) -> Value {
    json!({"table": "film", "values": {"title": title, "year": 1963}})
}

#[test]
fn point_6_table_folders_that_no_engine_would_read_back_are_refused() {
    let mut h = films();
    let notes_before = h.notes.clone();
    for bad in ["x/.obsidian", "x/.git/hooks", "x/.datanotes", "a/./b", "x/.", "C:\\x", "C:/x", "/etc", "datanotes/x"] {
        let (status, text) = failed(
            &mut h,
            "create_table",
            json!({"table": "trap", "folder": bad, "columns": {"name": {"type": "text"}}}),
        );
        assert_eq!(status, Status::BadInput, "{bad}: {text}");
        assert!(text.contains(&format!("folder \"{bad}\"")), "{bad}: {text}");
        assert!(text.contains("relative to the vault root"), "{bad}: {text}");
    }
    assert_eq!(h.notes, notes_before, "nothing written");
    h.ok("create_table", json!({"table": "shelf", "folder": "Reading/Shelf", "columns": {"name": {"type": "text"}}}));
}

#[test]
fn point_6_a_metastore_naming_a_dot_folder_refuses_writes_for_good() {
    let mut disk = Disk::films();
    let text = disk.notes[METASTORE].clone()
        + "  main.public.trap:\n    folder: x/.git/hooks\n    columns:\n      name: {type: text}\n";
    disk.notes.insert(METASTORE.into(), text);
    let mut h = Host::new(disk, T0);
    h.e = h.disk.open(T0);
    let (status, text) = failed(&mut h, "insert_row", film("Rope"));
    assert_eq!(status, Status::Refused, "{text}");
    assert!(text.contains("folder \"x/.git/hooks\" is inside a dot folder"), "{text}");
    assert!(text.contains("Fix datanotes/metastore.yaml"), "{text}");
    let (again, _) = failed(&mut h, "insert_row", film("Rope"));
    assert_eq!(again, Status::Refused, "the same answer, not a retry later");
}

#[test]
fn point_9_front_matter_after_a_bom_is_read_and_the_bom_kept() {
    let mut disk = Disk::films();
    let with_bom = format!("\u{feff}{}", disk.notes[CHARADE]);
    disk.notes.insert(CHARADE.into(), with_bom.clone());
    let mut h = Host::new(disk, T0);
    h.e = h.disk.open(T0);
    let row = h.ok("read_note", json!({"path": CHARADE}));
    assert_eq!(row["values"]["title"], "Charade", "{row}");
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    let text = &h.notes[CHARADE];
    assert!(text.starts_with("\u{feff}---\n"), "{text:?}");
    assert_eq!(text.matches("\n---\n").count(), 1, "one front matter block: {text:?}");
    assert_eq!(text.replace("rating: 4", "rating: 5"), with_bom, "every other byte kept");
}

#[test]
fn point_10_names_that_differ_only_in_case_or_unicode_form_clash() {
    let mut h = films();
    let before = h.notes.clone();
    let (status, text) = failed(&mut h, "insert_row", film("charade"));
    assert_eq!(status, Status::Refused, "{text}");
    assert!(text.contains("same file as datanotes/main/public/film/Charade.md"), "{text}");
    assert_eq!(h.notes, before);

    h.ok("insert_row", film("Caf\u{e9}"));
    let (status, text) = failed(&mut h, "insert_row", film("Cafe\u{301}"));
    assert_eq!(status, Status::Refused, "{text}");
    assert!(text.contains("same file as"), "{text}");
    assert!(h.notes.contains_key(&format!("{FILMS}Caf\u{e9}.md")));
    assert!(!h.notes.contains_key(&format!("{FILMS}Cafe\u{301}.md")));

    // A row renamed to its own name in another case is not a clash.
    h.ok("update_row", json!({"table": "film", "path": format!("{FILMS}Caf\u{e9}.md"), "set": {"title": "CAF\u{c9}"}}));
    assert!(h.notes.contains_key(&format!("{FILMS}CAF\u{c9}.md")));
}

#[test]
fn point_10_windows_device_names_never_become_file_names() {
    let mut h = films();
    for (title, name) in [("NUL", "NUL_"), ("con", "con_"), ("COM1", "COM1_"), ("Aux.backup", "Aux_.backup")] {
        h.ok("insert_row", film(title));
        let path = format!("{FILMS}{name}.md");
        assert!(
            h.notes.contains_key(&path),
            "{title}: {:?}",
            h.notes.keys().filter(|p| p.starts_with(FILMS)).collect::<Vec<_>>()
        );
        assert_eq!(h.ok("read_note", json!({"path": path}))["values"]["title"], title);
    }
}

#[test]
fn point_11_whole_numbers_in_integer_columns_are_written_as_integers() {
    let mut h = films();
    let args: Value = serde_json::from_str(
        r#"{"table": "film", "values": {"title": "Rope", "year": 1948.0, "minutes": -0, "rating": 4e0}}"#,
    )
    .unwrap();
    h.ok("insert_row", args);
    let text = &h.notes[&format!("{FILMS}Rope.md")];
    assert!(
        text.contains("\nyear: 1948\n") && text.contains("\nminutes: 0\n") && text.contains("\nrating: 4\n"),
        "{text}"
    );
    let set: Value = serde_json::from_str(
        r#"{"table": "film", "path": "datanotes/main/public/film/Rope.md", "set": {"minutes": 1e2}}"#,
    )
    .unwrap();
    h.ok("update_row", set);
    assert!(h.notes[&format!("{FILMS}Rope.md")].contains("\nminutes: 100\n"));
}
