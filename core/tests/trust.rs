//! Issue 16, the engine's part: what it must refuse or keep so that a vault stays
//! whole on every disk it is synced to. Each test is named for its point.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{Disk, Host, T0};
use datanotes_core::notecache::{self, NoteStat};
use datanotes_core::{driver, Engine, NoteFile, Status, StoreFile};
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
    assert_ne!(out.status, Status::Ok, "{op} should fail: {}", out.answer);
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
    // The new table goes under tables:, before the diary's views.
    let text = disk.notes[METASTORE].replace(
        "views:\n",
        "  main.public.trap:\n    folder: x/.git/hooks\n    columns:\n      name: {type: text}\nviews:\n",
    );
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

/// The store's files under `dir`, by path.
fn store_under<'a>(h: &'a Host, dir: &str) -> Vec<(&'a String, &'a String)> {
    h.store.iter().filter(|(p, _)| p.starts_with(dir)).collect()
}

fn rating(h: &mut Host, stars: i64) -> datanotes_core::Outcome {
    h.call("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": stars}}))
}

#[test]
fn point_4_a_disk_that_fills_up_mid_write_is_said_and_its_records_come_later_in_order() {
    let mut h = films();
    let feed_before = store_under(&h, "feed/").iter().map(|(_, t)| t.lines().count()).sum::<usize>();
    h.disk.mem.fills_up = true;
    let out = rating(&mut h, 2);
    // The note is written: the answer says so, and says what the store lacks.
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    assert!(h.notes[CHARADE].contains("rating: 2"));
    let lacking: Vec<String> = serde_json::from_value(out.answer["not_recorded"].clone()).unwrap();
    assert!(lacking.iter().any(|p| p.starts_with("journal/")), "{lacking:?}");
    assert!(lacking.iter().any(|p| p.starts_with("log/")), "{lacking:?}");
    assert!(lacking.iter().any(|p| p.starts_with("feed/")), "{lacking:?}");
    assert!(out.answer["warning"].as_str().unwrap().contains("no space left on device"), "{}", out.answer);
    assert!(out.log.iter().any(|l| l.starts_with("WARN the notes are written, but")), "{:?}", out.log);
    assert!(h.e.owed() >= lacking.len(), "every file lacking is owed");

    // While the disk is full, writes are refused and touch nothing; reads go on.
    let notes = h.notes.clone();
    let out = rating(&mut h, 3);
    assert_eq!(out.status, Status::RolledBack, "{}", out.answer);
    assert!(out.answer["error"].as_str().unwrap().contains("the store is behind"), "{}", out.answer);
    assert_eq!(h.notes, notes);
    h.ok("read_note", json!({"path": CHARADE}));

    // Space again: the owed records go first, then the next write's.
    h.disk.mem.store_fails = false;
    let out = rating(&mut h, 4);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    assert!(out.answer.get("not_recorded").is_none(), "{}", out.answer);
    assert_eq!(h.e.owed(), 0);
    let journal = store_under(&h, "journal/");
    assert!(journal.iter().all(|(_, t)| !t.contains("\"pending\"")), "{journal:?}");
    let feed: Vec<Value> = store_under(&h, "feed/")
        .iter()
        .flat_map(|(_, t)| t.lines().map(|l| serde_json::from_str(l).unwrap()).collect::<Vec<Value>>())
        .collect();
    assert_eq!(feed.len(), feed_before + 2, "both writes in the feed");
    let seqs: Vec<u64> = feed.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "{seqs:?}");

    // A new engine on the store reads both versions, and no write cut short.
    let mut again = Host::new(Disk { mem: h.disk.mem.clone() }, h.now + 1000);
    again.e = again.disk.open(h.now + 1000);
    assert!(again.e.warnings().iter().all(|w| !w.contains("cut short")), "{:?}", again.e.warnings());
    let history = again.ok("describe_history", json!({"table": "film"}));
    let versions: Vec<i64> =
        history["history"].as_array().unwrap().iter().map(|v| v["version"].as_i64().unwrap()).take(2).collect();
    let top = versions[0];
    assert_eq!(versions, vec![top, top - 1], "{history}");
}

#[test]
fn point_11_notes_over_the_size_limit_are_neither_rows_nor_written() {
    let mut disk = Disk::films();
    let big = format!("{}{}", disk.notes[CHARADE], "z".repeat(datanotes_core::vault::MAX_NOTE_BYTES));
    disk.notes.insert(CHARADE.into(), big.clone());
    let mut h = Host::new(disk, T0);
    h.e = h.disk.open(T0);
    let rows = h.ok("select_rows", json!({"table": "film", "columns": ["title"]}));
    assert!(!rows.to_string().contains("\"Charade\""), "{rows}");
    let check = h.ok("check_table", json!({"table": "film"}));
    assert!(check.to_string().contains("MiB, over the 8 MiB a note may be"), "{check}");
    let store_before = h.store.clone();
    let (status, text) = failed(&mut h, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 3}}));
    assert!(matches!(status, Status::Refused | Status::BadInput), "{text}");
    assert_eq!(h.notes[CHARADE], big);
    assert_eq!(h.store, store_before, "nothing recorded");

    // A row just under the limit is read, and may not grow past it.
    let mut disk = Disk::films();
    let text = disk.notes[CHARADE].clone();
    let near = format!("{text}{}", "z".repeat(datanotes_core::vault::MAX_NOTE_BYTES - text.len() - 4));
    disk.notes.insert(CHARADE.into(), near.clone());
    let mut h = Host::new(disk, T0);
    h.e = h.disk.open(T0);
    assert_eq!(h.ok("read_note", json!({"path": CHARADE}))["values"]["title"], "Charade");
    let (status, text) = failed(
        &mut h,
        "update_row",
        json!({"table": "film", "path": CHARADE, "set": {"tags": ["a long tag to push it over", "seen-2026", "film-night", "another long tag"]}}),
    );
    assert_eq!(status, Status::Refused, "{text}");
    assert!(text.contains("over the 8 MiB a note may be"), "{text}");
    assert_eq!(h.notes[CHARADE], near);
}

/// `text` with `lines` added at the top of its front matter.
fn with_front(text: &str, lines: &str) -> String {
    text.replacen("---\n", &format!("---\n{lines}"), 1)
}

/// Front matter lines that repeat a value of `kib` KiB `times` times by alias.
fn aliased(kib: usize, times: usize) -> String {
    format!("big: &big \"{}\"\nagain: [{}]\n", "z".repeat(kib << 10), vec!["*big"; times].join(", "))
}

/// The film diary opened as a host opens it through the notes' cache (every
/// note listed with its size, the cache read and written), then started.
fn open_through_cache(d: &mut Disk, now: i64) -> Engine {
    let stats = d.notes.iter().map(|(p, t)| NoteStat { path: p.clone(), size: t.len() as u64, mtime: T0 }).collect();
    let cache = d.store.get(&notecache::path(None)).cloned();
    let plan = Engine::plan_open(stats, cache.as_deref(), d.notes.get(METASTORE).map(String::as_str));
    let read = plan.wanted.iter().map(|p| NoteFile { path: p.clone(), text: d.notes[p].clone(), mtime: T0 }).collect();
    let store = d
        .store
        .iter()
        .filter(|(p, _)| !p.starts_with(notecache::DIR))
        .map(|(p, t)| StoreFile(p.clone(), (!p.starts_with("log/") && !p.starts_with("blobs/")).then(|| t.clone())))
        .collect();
    let mut e = Engine::open_cached(plan, read, store, now);
    let out = driver::start(&mut e, &mut d.mem, now);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    e
}

#[test]
fn issue52_point_6_front_matter_whose_aliases_expand_past_its_size_is_unreadable_and_never_cached() {
    let mut disk = Disk::films();
    let charade = disk.notes[CHARADE].clone();
    // 64 KiB repeated 200 times: 13 MB of values from a note of 66 KB.
    disk.notes.insert(CHARADE.into(), with_front(&charade, &aliased(64, 200)));
    // A note over the size limit is never cached either.
    let rope = format!("{FILMS}Rope.md");
    let big = charade.replace("title: Charade", "title: Rope").replace("id: 01a0c046", "id: 01a0c047");
    disk.notes.insert(rope.clone(), format!("{big}{}", "z".repeat(datanotes_core::vault::MAX_NOTE_BYTES)));
    // Aliases of small values, as people use them, are read.
    let metropolis = format!("{FILMS}Metropolis.md");
    let small = with_front(&disk.notes[&metropolis], "note: &n a film by Fritz Lang\nagain: [*n, *n]\n");
    disk.notes.insert(metropolis.clone(), small);

    let mut h = Host::new(disk, T0);
    h.e = open_through_cache(&mut h.disk, T0 + 10_000);
    let check = h.ok("check_table", json!({"table": "film"}));
    let text = check.to_string();
    assert!(text.contains("aliases (*name) would make it more than 4 times its size"), "{check}");
    assert!(text.contains("over the 8 MiB a note may be"), "{check}");
    let rows = h.ok("select_rows", json!({"table": "film", "columns": ["title"]}));
    assert!(!rows.to_string().contains("\"Charade\""), "{rows}");
    assert!(rows.to_string().contains("\"Metropolis\""), "{rows}");
    let cache = &h.store[&notecache::path(None)];
    for path in [CHARADE, rope.as_str()] {
        assert!(!cache.contains(&format!("\"p\":{}", json!(path))), "{path} has a line in the notes' cache");
    }
    assert!(cache.contains(&format!("\"p\":{}", json!(metropolis))));
    assert!(cache.len() < 1 << 20, "{} bytes", cache.len());
}

#[test]
fn issue52_point_6_a_metastore_whose_aliases_expand_past_its_size_cannot_be_read() {
    let mut disk = Disk::films();
    let text = format!("{}{}", disk.notes[METASTORE], aliased(64, 200));
    disk.notes.insert(METASTORE.into(), text);
    let mut h = Host::new(disk, T0);
    h.e = h.disk.open(T0);
    let db = h.ok("describe_database", json!({}));
    let error = db["schema_error"].as_str().unwrap_or_default();
    assert!(error.contains("metastore.yaml cannot be read"), "{db}");
    assert!(error.contains("aliases (*name) would make it more than 4 times its size"), "{db}");
    let (status, text) = failed(&mut h, "insert_row", film("Rope"));
    assert_eq!(status, Status::Refused, "{text}");

    // Anchors and aliases that repeat a column's definition are read.
    let mut disk = Disk::films();
    let text = disk.notes[METASTORE]
        .replace(
            "name: {type: text, required: true, unique: true}\n      born",
            "name: &key {type: text, required: true, unique: true}\n      born",
        )
        .replace("name:   {type: text, required: true, unique: true}", "name: *key");
    assert!(text.contains("name: *key"));
    disk.notes.insert(METASTORE.into(), text);
    let mut h = Host::new(disk, T0);
    h.e = h.disk.open(T0);
    let db = h.ok("describe_database", json!({}));
    assert!(db.get("schema_error").is_none(), "{db}");
    let (_, text) = failed(&mut h, "insert_row", json!({"table": "genre", "values": {"kind": "era"}}));
    assert!(text.contains("name"), "the aliased definition is required: {text}");
}

/// The violations check_table finds in the film diary with `lines` in Charade's front matter.
fn charade_with(lines: &str) -> String {
    let mut disk = Disk::films();
    let text = disk.notes[CHARADE].replace("year: 1963\n", lines);
    disk.notes.insert(CHARADE.into(), text);
    let mut h = Host::new(disk, T0);
    h.e = h.disk.open(T0);
    h.ok("check_table", json!({"table": "film"})).to_string()
}

#[test]
fn issue52_point_11_an_integer_column_holds_only_integers_as_the_note_writes_them() {
    for (year, shown) in [("1e2", "100.0"), ("1963.0", "1963.0"), ("-0.0", "-0.0"), ("1.963e3", "1963.0")] {
        let check = charade_with(&format!("year: {year}\n"));
        assert!(check.contains(&format!("expected an integer, got {shown}")), "{year}: {check}");
        assert!(check.contains("write it as a whole number"), "{year}: {check}");
    }
    for (year, shown) in
        [("9223372036854775808", "9223372036854775808"), ("-9223372036854775809", "-9.223372036854776e+18")]
    {
        let check = charade_with(&format!("year: {year}\n"));
        assert!(check.contains(&format!("{shown} is out of range for an integer")), "{year}: {check}");
    }
    for year in ["1963", "-9223372036854775808", "9223372036854775807"] {
        let check = charade_with(&format!("year: {year}\n"));
        assert!(!check.contains("Charade.md"), "{year}: {check}");
    }

    // A write gets the same answer on both sides of the range.
    let mut h = films();
    for year in ["9223372036854775808", "-9223372036854775809", "18446744073709551616"] {
        let args: Value =
            serde_json::from_str(&format!(r#"{{"table": "film", "values": {{"title": "Rope", "year": {year}}}}}"#))
                .unwrap();
        let (status, text) = failed(&mut h, "insert_row", args);
        assert_eq!(status, Status::Refused, "{year}: {text}");
        assert!(text.contains("is out of range for an integer"), "{year}: {text}");
    }
}

#[test]
fn issue52_point_11_windows_device_names_with_suffixes_never_become_file_names() {
    let mut h = films();
    for (title, name) in [
        ("CONIN$", "CONIN$_"),
        ("conout$.txt", "conout$_.txt"),
        ("CON .md", "CON _.md"),
        ("NUL.tar.gz", "NUL_.tar.gz"),
        ("COM\u{b9}", "COM\u{b9}_"),
        ("lpt\u{b3}.x", "lpt\u{b3}_.x"),
        ("LPT9", "LPT9_"),
    ] {
        h.ok("insert_row", film(title));
        let path = format!("{FILMS}{name}.md");
        assert!(
            h.notes.contains_key(&path),
            "{title}: {:?}",
            h.notes.keys().filter(|p| p.starts_with(FILMS)).collect::<Vec<_>>()
        );
    }
}
