//! Changes made while no engine ran are found at the next open and reported as
//! hand edits, once.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::Disk;
use datanotes_core::Status;
use serde_json::json;

const SCHEMA: &str = "version: 1\ntables:\n  main.public.film:\n    name_from: title\n    columns:\n      title: {type: text, required: true}\n      year: {type: integer}\n";

fn film(title: &str, year: u32) -> String {
    format!("---\ntable: main.public.film\nid: {title}\ntitle: {title}\nyear: {year}\n---\n")
}

#[test]
fn edits_made_while_closed_are_reported_once_at_the_next_open() {
    let mut d = Disk::default();
    d.notes.insert("datanotes/metastore.yaml".into(), SCHEMA.into());
    for (t, y) in [("Charade", 1963), ("Metropolis", 1927), ("Nosferatu", 1922), ("M", 1931)] {
        d.notes.insert(format!("datanotes/main/public/film/{t}.md"), film(t, y));
    }
    let mut e = d.open(1_000);
    assert!(d.store.contains_key("known.jsonl"));
    let out = d.call(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/M.md", "set": {"year": 1932}}),
        2_000,
    );
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    drop(e);

    // While no engine runs: an edit, a rename, a removal, a new note.
    d.notes.insert("datanotes/main/public/film/Charade.md".into(), film("Charade", 1964));
    let m = d.notes.remove("datanotes/main/public/film/Metropolis.md").unwrap();
    d.notes.insert("datanotes/main/public/film/Metropolis (1927).md".into(), m);
    d.notes.remove("datanotes/main/public/film/Nosferatu.md");
    d.notes.insert("datanotes/main/public/film/Sherlock Jr..md".into(), film("Sherlock Jr.", 1924));

    let mut e = d.open(10_000);
    let out = d.call(&mut e, "list_changes", json!({"since": 1}), 10_001);
    let events = out.answer["events"].as_array().unwrap().clone();
    let kinds: Vec<(&str, &str)> =
        events.iter().map(|e| (e["kind"].as_str().unwrap(), e["path"].as_str().unwrap())).collect();
    assert_eq!(
        kinds,
        vec![
            ("update", "datanotes/main/public/film/Charade.md"),
            ("delete", "datanotes/main/public/film/Nosferatu.md"),
            ("insert", "datanotes/main/public/film/Sherlock Jr..md"),
            ("move", "datanotes/main/public/film/Metropolis (1927).md"),
        ],
        "{out:?}"
    );
    assert!(events.iter().all(|e| e["source"] == "external"));
    assert_eq!(events[0]["changes"], json!({"year": {"before": 1963, "after": 1964}}));
    assert_eq!(events[1]["values"]["title"], "Nosferatu");
    let hist = d.call(&mut e, "describe_history", json!({"table": "film", "limit": 1}), 10_002);
    assert_eq!(hist.answer["history"][0]["operation"], "EXTERNAL_EDIT");
    drop(e);

    // Nothing is reported twice, and the engine's own writes are not hand edits.
    let mut e = d.open(20_000);
    let head = d.call(&mut e, "list_changes", json!({}), 20_001).answer["head"].clone();
    let out = d.call(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": {"year": 1963}}),
        20_002,
    );
    assert_eq!(out.status, Status::Ok);
    drop(e);
    let mut e = d.open(30_000);
    let after = d.call(&mut e, "list_changes", json!({}), 30_001).answer;
    assert_eq!(after["head"].as_u64().unwrap(), head.as_u64().unwrap() + 1, "only the engine's own update: {after}");
}

/// An event as the two paths must agree on it: without its sequence number and
/// times.
fn comparable(mut e: serde_json::Value) -> serde_json::Value {
    for k in ["seq", "at", "at_ms", "device", "origin"] {
        e.as_object_mut().unwrap().remove(k);
    }
    e
}

/// Issue 54, point 4: the same hand edit found live (the watcher) and found at
/// open (made while no engine ran) is one event: its changes and the rows it
/// breaks, through links too. The film diary's genre table has never been
/// written by the engine, so its log begins at the table as the first open found it.
#[test]
fn an_edit_made_while_closed_is_reported_as_the_same_edit_made_live() {
    const SILENT: &str = "datanotes/main/public/genre/Silent film.md";
    let edited = |d: &Disk| d.notes[SILENT].replacen("kind: era", "kind: cinema", 1);

    // Live: the watcher reports it, the round closes 0.7 s later.
    let mut live = Disk::films();
    let mut e = live.open(1_000);
    let text = edited(&live);
    live.notes.insert(SILENT.into(), text.clone());
    e.observe(datanotes_core::VaultEvent::Modified { path: SILENT.into(), text, mtime: 2_000 }, 2_000);
    let out = datanotes_core::driver::tick(&mut e, &mut live.mem, 2_700);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    let live_events = live.call(&mut e, "list_changes", json!({}), 3_000).answer["events"].clone();

    // Offline: the same edit while no engine ran, found at the next open.
    let mut off = Disk::films();
    drop(off.open(1_000));
    let text = edited(&off);
    off.notes.insert(SILENT.into(), text);
    let mut e = off.open(2_700);
    let off_events = off.call(&mut e, "list_changes", json!({}), 3_000).answer["events"].clone();

    let one = |events: &serde_json::Value| -> serde_json::Value {
        let list = events.as_array().unwrap();
        assert_eq!(list.len(), 1, "one event: {events}");
        comparable(list[0].clone())
    };
    let (live_event, off_event) = (one(&live_events), one(&off_events));
    assert_eq!(live_event["changes"], json!({"kind": {"before": "era", "after": "cinema"}}), "{live_event}");
    let broken = live_event["violations"].as_array().map_or(0, Vec::len);
    assert!(broken >= 2, "Silent film and the genres under it break parent_by_level: {live_event}");
    assert_eq!(off_event, live_event);
    let history = off.call(&mut e, "describe_history", json!({"table": "genre", "limit": 1}), 3_001).answer;
    assert_eq!(history["history"][0]["operation"], "EXTERNAL_EDIT", "{history}");
}

/// A table that keeps no history has no old texts: an edit made to it while no
/// engine ran is reported as the row is now, with what it breaks.
#[test]
fn an_edit_made_while_closed_to_a_table_without_history_tells_what_it_breaks() {
    let schema = "version: 1\ntables:\n  main.public.film:\n    name_from: title\n    history: false\n    columns:\n      title: {type: text, required: true}\n      year: {type: integer}\n    checks:\n      talkies: {year: {gte: 1927}}\n";
    let mut d = Disk::default();
    d.notes.insert("datanotes/metastore.yaml".into(), schema.into());
    d.notes.insert("datanotes/main/public/film/M.md".into(), film("M", 1931));
    drop(d.open(1_000));
    d.notes.insert("datanotes/main/public/film/M.md".into(), film("M", 1921));
    let mut e = d.open(2_000);
    let out = d.call(&mut e, "list_changes", json!({}), 2_001);
    let events = out.answer["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{}", out.answer);
    assert_eq!(events[0]["values"]["year"], 1921);
    let v = &events[0]["violations"][0];
    assert_eq!(v["path"], "datanotes/main/public/film/M.md", "{}", out.answer);
    assert_eq!(v["violations"][0]["constraint"], "talkies", "{}", out.answer);
}

/// Issue 54, point 4: a hand edit that only reformats the front matter (quote
/// style, a list written flow instead of block, keys in another order: what
/// Obsidian's property editor does) changes no value. It is reported, live and
/// offline alike, as an update without `changes` and with `format_only: true`,
/// so that a reader of the feed can pass over it; nothing is checked again.
#[test]
fn a_reformat_only_edit_is_reported_as_format_only_live_and_offline() {
    const CHARADE: &str = "datanotes/main/public/film/Charade.md";
    let reformat = |t: &str| {
        t.replacen("title: Charade", "title: \"Charade\"", 1)
            .replacen("tags:\n  - seen-2026\n  - film-night\n", "tags: [seen-2026, film-night]\n", 1)
            .replacen("year: 1963\nminutes: 113\n", "minutes: 113\nyear: 1963\n", 1)
    };
    let mut live = Disk::films();
    let mut e = live.open(1_000);
    let text = reformat(&live.notes[CHARADE]);
    assert_ne!(text, live.notes[CHARADE]);
    live.notes.insert(CHARADE.into(), text.clone());
    e.observe(datanotes_core::VaultEvent::Modified { path: CHARADE.into(), text, mtime: 2_000 }, 2_000);
    datanotes_core::driver::tick(&mut e, &mut live.mem, 2_700);
    let live_events = live.call(&mut e, "list_changes", json!({}), 3_000).answer["events"].clone();

    let mut off = Disk::films();
    drop(off.open(1_000));
    let text = reformat(&off.notes[CHARADE]);
    off.notes.insert(CHARADE.into(), text);
    let mut e = off.open(2_700);
    let off_events = off.call(&mut e, "list_changes", json!({}), 3_000).answer["events"].clone();

    for events in [&live_events, &off_events] {
        let list = events.as_array().unwrap();
        assert_eq!(list.len(), 1, "{events}");
        assert_eq!(list[0]["kind"], "update", "{events}");
        assert!(list[0].get("changes").is_none(), "{events}");
        assert_eq!(list[0]["format_only"], true, "{events}");
        assert!(list[0].get("violations").is_none(), "{events}");
    }
    assert_eq!(comparable(live_events[0].clone()), comparable(off_events[0].clone()));
}

/// A hand edit of a note's body changes no value either, but it is not a
/// reformat: it is reported as an update, without `format_only`.
#[test]
fn an_edit_of_the_body_is_not_format_only() {
    const CHARADE: &str = "datanotes/main/public/film/Charade.md";
    let mut d = Disk::films();
    drop(d.open(1_000));
    let text = d.notes[CHARADE].replacen("in Paris", "in Paris and Megève", 1);
    d.notes.insert(CHARADE.into(), text);
    let mut e = d.open(2_000);
    let events = d.call(&mut e, "list_changes", json!({}), 2_001).answer["events"].clone();
    assert_eq!(events.as_array().map(Vec::len), Some(1), "{events}");
    assert_eq!(events[0]["kind"], "update", "{events}");
    assert!(events[0].get("format_only").is_none(), "{events}");
}

/// A large table's log begins over several ticks: a turn hands its host at most
/// 2,000 texts to keep (a host on a UI thread takes a turn's files at once),
/// and version 0 is written once every row's text is kept. Then an edit made
/// while no engine ran has its old text, as on a small vault.
#[test]
fn a_large_tables_log_begins_over_several_ticks() {
    let mut d = Disk::default();
    d.notes.insert("datanotes/metastore.yaml".into(), SCHEMA.into());
    for k in 0..4500 {
        d.notes.insert(format!("datanotes/main/public/film/F{k}.md"), film(&format!("F{k}"), 1900 + k % 100));
    }
    let blobs = |d: &Disk| d.store.keys().filter(|p| p.starts_with("blobs/")).count();
    let begun = |d: &Disk| d.store.keys().any(|p| p.starts_with("log/main.public.film/"));
    let mut e = d.open(1_000);
    assert_eq!(blobs(&d), 2000, "the open keeps 2,000 texts");
    assert!(!begun(&d), "no version 0 before every text is kept");
    let mut ticks = 0;
    while let Some(at) = e.next_deadline() {
        let out = datanotes_core::driver::tick(&mut e, &mut d.mem, at);
        assert_eq!(out.status, Status::Ok, "{}", out.answer);
        ticks += 1;
        assert!(ticks < 10, "the log never began");
    }
    assert_eq!((ticks, blobs(&d)), (2, 4500));
    assert!(begun(&d));
    drop(e);
    d.notes.insert("datanotes/main/public/film/F7.md".into(), film("F7", 1999));
    let mut e = d.open(10_000);
    let events = d.call(&mut e, "list_changes", json!({}), 10_001).answer["events"].clone();
    assert_eq!(events[0]["changes"], json!({"year": {"before": 1907, "after": 1999}}), "{events}");
}
