//! The notes' cache (core/src/notecache.rs): a reopen reads only the notes that
//! changed since, answers reads of rows without reading any text, reads the
//! texts a write needs, finds edits made while closed, and never trusts a cache
//! it cannot.

mod common;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::*;
use datanotes_core::notecache::{self, NoteStat};
use datanotes_core::{driver, Engine, NoteFile, Status, StoreFile};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const CHARADE: &str = "datanotes/main/public/film/Charade.md";
const METASTORE: &str = "datanotes/metastore.yaml";
/// The film diary's one note outside the tables (it links to a screening).
const FILM_NIGHT: &str = "Notes/Film night.md";
/// The notes' cache of a store of one device.
const CACHE: &str = "cache/notes.jsonl";
/// When every note of the film diary was last written (ms).
const OLD: i64 = 1_000_000;

/// A host's open through the cache: the vault listed with sizes and `mtimes`
/// (OLD for a note not named), only the wanted files read, then started.
fn open_cached(d: &mut Disk, mtimes: &BTreeMap<&str, i64>, now: i64) -> (Engine, Vec<String>) {
    let mtime = |p: &str| mtimes.get(p).copied().unwrap_or(OLD);
    let stats =
        d.notes.iter().map(|(p, t)| NoteStat { path: p.clone(), size: t.len() as u64, mtime: mtime(p) }).collect();
    let cache = d.store.get(&notecache::path(None)).cloned();
    let plan = Engine::plan_open(stats, cache.as_deref(), d.notes.get(METASTORE).map(String::as_str));
    let wanted = plan.wanted.clone();
    let read = wanted.iter().map(|p| NoteFile { path: p.clone(), text: d.notes[p].clone(), mtime: mtime(p) }).collect();
    let store = d
        .store
        .iter()
        .map(|(p, t)| StoreFile(p.clone(), (!p.starts_with("log/") && !p.starts_with("blobs/")).then(|| t.clone())))
        .filter(|f| !f.0.starts_with(notecache::DIR))
        .collect();
    let mut e = Engine::open_cached(plan, read, store, now);
    let out = driver::start(&mut e, &mut d.mem, now);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    (e, wanted)
}

fn answer(d: &mut Disk, e: &mut Engine, op: &str, args: Value, now: i64) -> Value {
    let out = d.call(e, op, args, now);
    assert_eq!(out.status, Status::Ok, "{op}: {}", out.answer);
    out.answer
}

/// The film diary opened once through the cache (every note read, the cache written).
fn diary() -> Disk {
    let mut d = Disk::films();
    let (_, wanted) = open_cached(&mut d, &BTreeMap::new(), OLD + 10_000);
    assert_eq!(wanted.len(), d.notes.len(), "no cache yet: every file is read");
    assert!(d.store.contains_key(CACHE), "the cache is written at the first open");
    d
}

#[test]
fn a_reopen_reads_no_unchanged_note_and_answers_rows_from_the_cache() {
    let mut d = diary();
    let cache = d.store[CACHE].clone();
    let now = OLD + 20_000;
    let (mut e, wanted) = open_cached(&mut d, &BTreeMap::new(), now);
    // Notes the engine cannot take as rows (a sync tool's copy, front matter it
    // refuses) are never cached: they are read at every open.
    let uncached: Vec<&String> = wanted.iter().filter(|p| *p != METASTORE).collect();
    assert!(uncached.iter().all(|p| !cache.contains(&format!("\"p\":{}", json!(p)))), "{uncached:?}");
    assert!(e.unread().len() > 20, "the rows' texts are not read: {}", e.unread().len());
    assert_eq!(d.store[CACHE], cache, "nothing changed: the cache is not written again");
    let mut full = d.open(now);
    for (op, args) in [
        ("select_rows", json!({"table": "film", "order_by": "title"})),
        ("check_table", json!({})),
        ("describe_database", json!({})),
        ("suggest_rows", json!({"table": "person", "query": "ca"})),
    ] {
        let (a, b) = (answer(&mut d, &mut e, op, args.clone(), now), answer(&mut d, &mut full, op, args, now));
        assert_eq!(a, b, "{op} answers as from the notes");
    }
    assert!(!e.unread().is_empty(), "reads of rows read no text");
    // read_note reads its own note alone.
    let before = e.unread().len();
    let person = "datanotes/main/public/person/Cary Grant.md";
    let read = answer(&mut d, &mut e, "read_note", json!({"path": person}), now);
    assert_eq!((read["text"].as_str(), e.unread().len()), (Some(d.notes[person].as_str()), before - 1));
    // A write reads the texts first (Step::ReadNotes through the driver).
    let a = answer(&mut d, &mut e, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 3}}), now);
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(e.unread(), vec![FILM_NIGHT.to_string()], "every row is read, and no plain note");
    assert!(d.notes[CHARADE].contains("\nrating: 3\n"), "{}", d.notes[CHARADE]);
    let read = answer(&mut d, &mut e, "read_note", json!({"path": CHARADE}), now);
    assert_eq!(read["text"], d.notes[CHARADE].as_str());
}

#[test]
fn a_plain_note_is_read_only_when_a_turn_needs_its_text() {
    let mut d = Disk::films();
    let (linking, other) = ("Notes/Charade night.md", "Notes/Groceries.md");
    d.mem.notes.insert(linking.into(), "We watched [[Charade]] again, then [[Charade|the same film]].\n".into());
    d.mem.notes.insert(other.into(), "Milk, eggs, [[Bread]].\n".into());
    let _ = open_cached(&mut d, &BTreeMap::new(), OLD + 10_000);
    let now = OLD + 20_000;
    let (mut e, _) = open_cached(&mut d, &BTreeMap::new(), now);
    let plain = |e: &Engine| e.unread().into_iter().filter(|p| p.starts_with("Notes/")).count();
    assert_eq!(plain(&e), 3, "{:?}", e.unread());
    // A write reads every row first, and no plain note.
    let set = json!({"table": "film", "path": CHARADE, "set": {"rating": 3}});
    assert_eq!(answer(&mut d, &mut e, "update_row", set, now)["ok"], true);
    assert_eq!((e.unread_rows().len(), plain(&e)), (0, 3), "{:?}", e.unread());
    // A rename rewrites the links to the film: the note holding them is read
    // for it (the write given up, then run again), the others are not.
    let (texts, before) = (d.notes.clone(), d.notes[other].clone());
    let set = json!({"table": "film", "path": CHARADE, "set": {"title": "Charade (1963)"}});
    let a = answer(&mut d, &mut e, "update_row", set, now);
    assert_eq!(a["ok"], true, "{a}");
    assert_eq!(
        d.notes[linking], "We watched [[Charade (1963)]] again, then [[Charade (1963)|the same film]].\n",
        "{a}"
    );
    assert_eq!((d.notes[other].as_str(), plain(&e)), (before.as_str(), 2), "{:?}", e.unread());
    assert!(!d.notes.contains_key(CHARADE) && d.notes.contains_key("datanotes/main/public/film/Charade (1963).md"));
    // Undone, every note is as it was: the rewritten note too.
    let undo = answer(&mut d, &mut e, "undo_migration", json!({"migration_id": a["migration_id"]}), now);
    assert_eq!(undo["ok"], true, "{undo}");
    let notes: BTreeMap<&String, &String> = d.notes.iter().filter(|(p, _)| !p.ends_with(".base")).collect();
    let was: BTreeMap<&String, &String> = texts.iter().filter(|(p, _)| !p.ends_with(".base")).collect();
    assert_eq!(notes, was);
}

/// The plugin's open: every note listed with its size and `mtimes` (OLD for a
/// note not named), metastore.yaml alone read; then what the engine names read.
fn open_listed(d: &mut Disk, mtimes: &BTreeMap<&str, i64>, now: i64) -> (Engine, Vec<String>) {
    open_listed_in(d, mtimes, now, usize::MAX, false)
}

/// As `open_listed`, what the engine names handed over `batch` notes at a
/// time, in its order, each batch in it or `reversed` (as reads end).
fn open_listed_in(
    d: &mut Disk,
    mtimes: &BTreeMap<&str, i64>,
    now: i64,
    batch: usize,
    reversed: bool,
) -> (Engine, Vec<String>) {
    let mtime = |p: &str| mtimes.get(p).copied().unwrap_or(OLD);
    let (meta, listed): (Vec<_>, Vec<_>) = d.notes.iter().partition(|(p, _)| *p == METASTORE);
    let files = meta.iter().map(|(p, t)| NoteFile { path: p.to_string(), text: t.to_string(), mtime: OLD }).collect();
    let listed = listed.iter().map(|(p, t)| NoteStat { path: p.to_string(), size: t.len() as u64, mtime: mtime(p) });
    let cache = d.store.get(&notecache::path(None)).cloned();
    let store = d.store.iter().filter(|(p, _)| !p.starts_with(notecache::DIR));
    let store = store.map(|(p, t)| StoreFile(p.clone(), Some(t.clone()))).collect();
    let mut e = Engine::open_with_cache(files, listed.collect(), cache.as_deref(), store, now);
    let wanted = e.to_read();
    for part in wanted.chunks(batch) {
        let read = part.iter().map(|p| NoteFile { path: p.clone(), text: d.notes[p].clone(), mtime: mtime(p) });
        let mut read: Vec<NoteFile> = read.collect();
        if reversed {
            read.reverse();
        }
        e.read_listed(read, vec![]);
    }
    let out = driver::start(&mut e, &mut d.mem, now);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    (e, wanted)
}

/// The plugin hands a first open's texts over a batch at a time (memory holds
/// one batch, not the vault's texts beside the index), each batch in the order
/// its reads ended: a sync tool's copy, which counts as one only beside its
/// original, is named after it and taken after it, so the engine ends as with
/// every text at once, whatever the batches.
#[test]
fn texts_handed_over_in_batches_open_as_all_at_once() {
    let copy = "datanotes/main/public/film/Charade 2.md";
    let films = || {
        let mut d = Disk::films();
        d.mem.notes.insert(copy.into(), d.notes[CHARADE].replace("rating: 5", "rating: 2"));
        d
    };
    let ask = |d: &mut Disk, e: &mut Engine| {
        let rows = json!({"table": "film", "order_by": "title", "columns": ["title", "rating"]});
        [answer(d, e, "select_rows", rows, OLD + 10_000), answer(d, e, "check_table", json!({}), OLD + 10_000)]
    };
    let mut d = films();
    assert!(d.notes.keys().position(|p| p == copy) < d.notes.keys().position(|p| p == CHARADE), "listed first");
    let (mut whole, wanted) = open_listed(&mut d, &BTreeMap::new(), OLD + 10_000);
    let at = |p: &str| wanted.iter().position(|w| w == p);
    assert!(at(CHARADE) < at(copy), "{wanted:?}");
    let expected = ask(&mut d, &mut whole);
    assert!(expected[1].to_string().contains("a conflict copy of"), "{}", expected[1]);
    // What is left to read, whatever was handed over first.
    let d = films();
    let (meta, listed): (Vec<_>, Vec<_>) = d.notes.iter().partition(|(p, _)| *p == METASTORE);
    let files = meta.iter().map(|(p, t)| NoteFile { path: p.to_string(), text: t.to_string(), mtime: OLD }).collect();
    let mut listed: Vec<NoteStat> =
        listed.iter().map(|(p, t)| NoteStat { path: p.to_string(), size: t.len() as u64, mtime: OLD }).collect();
    listed.push(listed[0].clone());
    let mut e = Engine::open_with_cache(files, listed, None, vec![], OLD + 10_000);
    assert_eq!(e.to_read(), wanted, "a path listed twice is read once");
    let hand = |e: &mut Engine, paths: &[String]| {
        e.read_listed(
            paths.iter().map(|p| NoteFile { path: p.clone(), text: d.notes[p].clone(), mtime: OLD }).collect(),
            vec![],
        )
    };
    let n = wanted.len();
    hand(&mut e, &wanted[n - 2..]);
    assert_eq!(e.to_read(), wanted[..n - 2]);
    hand(&mut e, &wanted[..1]);
    assert_eq!(e.to_read(), wanted[1..n - 2]);
    for (batch, reversed) in [(1, false), (2, false), (5, true), (usize::MAX, true)] {
        let mut d = films();
        let (mut e, _) = open_listed_in(&mut d, &BTreeMap::new(), OLD + 10_000, batch, reversed);
        assert_eq!(ask(&mut d, &mut e), expected, "batches of {batch}, reversed: {reversed}");
    }
}

#[test]
fn a_host_that_lists_notes_reads_what_changed_and_no_other() {
    let mut d = Disk::films();
    let (linking, other) = ("Notes/Charade night.md", "Notes/Groceries.md");
    d.mem.notes.insert(linking.into(), "We watched [[Charade]].\n".into());
    d.mem.notes.insert(other.into(), "Milk, eggs, [[Bread]].\n".into());
    let (_, wanted) = open_listed(&mut d, &BTreeMap::new(), OLD + 10_000);
    assert_eq!(wanted.len(), d.notes.len() - 1, "no cache yet: every note but metastore.yaml is read");
    let now = OLD + 20_000;
    let mtimes = BTreeMap::from([(other, OLD + 15_000)]);
    d.mem.notes.insert(other.into(), "Milk, eggs, [[Butter]].\n".into());
    let (mut e, wanted) = open_listed(&mut d, &mtimes, now);
    // The watches were written by the first open (a generated column): their
    // cache entries are of other mtimes than the listing's here.
    let read: Vec<&String> = wanted.iter().filter(|p| !p.contains("/watch/")).collect();
    assert_eq!(read, [other], "the one note changed since, and no film or person");
    let rows = e.unread_rows().len();
    assert!(rows > 5, "the rows are read when a turn needs them: {:?}", e.unread());
    // Reads answer from the cache, and a tick with nothing due reads nothing.
    let mut full = d.open(now);
    for (op, args) in [
        ("select_rows", json!({"table": "film", "order_by": "title"})),
        ("check_table", json!({})),
        ("read_note", json!({"path": other})),
    ] {
        let (a, b) = (answer(&mut d, &mut e, op, args.clone(), now), answer(&mut d, &mut full, op, args, now));
        assert_eq!(a, b, "{op} answers as from every note");
    }
    assert_eq!(driver::tick(&mut e, &mut d.mem, now + 60_000).status, Status::Ok);
    assert_eq!(e.unread_rows().len(), rows);
    // A write reads the rows first (a rename's links and its checks may need any).
    let set = json!({"table": "film", "path": CHARADE, "set": {"title": "Charade (1963)"}});
    assert_eq!(answer(&mut d, &mut e, "update_row", set, now)["ok"], true);
    assert_eq!(d.notes[linking], "We watched [[Charade (1963)]].\n");
    assert_eq!(e.unread(), vec![FILM_NIGHT.to_string()]);
}

/// A row left unread at the open and changed by hand before it was read is a
/// hand edit like any other: reported once in the feed, never taken in silently
/// by the read that a later turn asks for; a row removed meanwhile likewise.
#[test]
fn a_row_changed_after_a_reopen_before_it_was_read_is_reported_as_a_hand_edit() {
    let mut d = Disk::films();
    let _ = open_listed(&mut d, &BTreeMap::new(), OLD + 10_000);
    let now = OLD + 20_000;
    let (mut e, wanted) = open_listed(&mut d, &BTreeMap::new(), now);
    assert!(!wanted.contains(&CHARADE.to_string()) && e.unread_rows().contains(&CHARADE.to_string()));
    // Changed on disk, and a write comes before the watcher's report.
    let edited = d.notes[CHARADE].replace("rating: 5", "rating: 1");
    assert_ne!(edited, d.notes[CHARADE]);
    d.mem.notes.insert(CHARADE.into(), edited.clone());
    let alien = "datanotes/main/public/film/Nosferatu.md";
    assert!(d.notes.contains_key(alien));
    d.mem.notes.remove(alien);
    let metropolis = "datanotes/main/public/film/Metropolis.md";
    let set = json!({"table": "film", "path": metropolis, "set": {"rating": 4}});
    assert_eq!(answer(&mut d, &mut e, "update_row", set, now)["ok"], true);
    let rows = answer(&mut d, &mut e, "select_rows", json!({"table": "film", "where": {"title": "Charade"}}), now);
    assert_eq!(rows["rows"][0]["rating"], 5, "not taken in before the round: {rows}");
    // Reading that note, or writing it, waits for the round: refused, saying
    // why; the write given up leaves the note as it was (unread, not gone).
    let set = json!({"table": "film", "path": CHARADE, "set": {"minutes": 114}});
    for (op, args) in [("read_note", json!({"path": CHARADE})), ("update_row", set.clone())] {
        let out = d.call(&mut e, op, args, now);
        let error = out.answer["error"].as_str().unwrap_or_default();
        assert!(error.contains("changed on disk") && error.contains("Try again"), "{op}: {}", out.answer);
    }
    assert!(d.notes[CHARADE].contains("minutes: 113\n") && e.unread_rows().contains(&CHARADE.to_string()));
    // The watcher's own report of the same edit, then the round.
    e.observe(datanotes_core::VaultEvent::Modified { path: CHARADE.into(), text: edited, mtime: now }, now);
    let out = driver::tick(&mut e, &mut d.mem, now + 10_000);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    let rows = answer(&mut d, &mut e, "select_rows", json!({"table": "film", "where": {"title": "Charade"}}), now);
    assert_eq!(rows["rows"][0]["rating"], 1, "{rows}");
    // Once the change is in, the write goes through on top of it.
    assert_eq!(answer(&mut d, &mut e, "update_row", set, now + 10_000)["ok"], true);
    assert!(d.notes[CHARADE].contains("rating: 1\n") && d.notes[CHARADE].contains("minutes: 114\n"));
    let rows = answer(&mut d, &mut e, "select_rows", json!({"table": "film", "where": {"title": "Charade"}}), now);
    assert_eq!((&rows["rows"][0]["rating"], &rows["rows"][0]["minutes"]), (&json!(1), &json!(114)), "{rows}");

    let feed = answer(&mut d, &mut e, "list_changes", json!({"since": 0}), now + 10_000);
    let external: Vec<(&str, &str)> = feed["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|ev| ev["source"] == "external")
        .map(|ev| (ev["path"].as_str().unwrap_or(""), ev["kind"].as_str().unwrap_or("")))
        .collect();
    let charade = external.iter().filter(|(p, _)| *p == CHARADE).count();
    assert_eq!(charade, 1, "reported once: {feed}");
    assert!(external.iter().any(|(p, _)| *p == alien), "the removed row is reported: {feed}");
    let gone = answer(&mut d, &mut e, "select_rows", json!({"table": "film", "where": {"title": "Alien"}}), now);
    assert_eq!(gone["rows"], json!([]), "{gone}");
}

#[test]
fn a_note_changed_while_closed_is_read_and_reported() {
    let mut d = diary();
    // A write begins the film table's log: its first commit keeps a blob of every row.
    let metropolis = "datanotes/main/public/film/Metropolis.md";
    let (mut e, _) = open_cached(&mut d, &BTreeMap::new(), OLD + 20_000);
    let set = json!({"table": "film", "path": metropolis, "set": {"rating": 4}});
    assert_eq!(answer(&mut d, &mut e, "update_row", set, OLD + 20_000)["ok"], true);
    drop(e);
    let text = d.notes[CHARADE].replace("rating: 5", "rating: 2");
    d.mem.notes.insert(CHARADE.into(), text);
    let now = OLD + 30_000;
    let mtimes = BTreeMap::from([(CHARADE, OLD + 25_000), (metropolis, OLD + 20_000)]);
    let (mut e, wanted) = open_cached(&mut d, &mtimes, now);
    assert!(wanted.contains(&CHARADE.to_string()), "{wanted:?}");
    // The edit is committed to the film's log; the rows it left alone have their
    // blobs already: no other film is read.
    assert!(e.unread().iter().any(|p| p.contains("/film/")), "{:?}", e.unread());
    let history = answer(&mut d, &mut e, "describe_history", json!({"table": "film"}), now);
    assert_eq!(history["history"][0]["operation"], "EXTERNAL_EDIT", "{history}");
    let rows = answer(&mut d, &mut e, "select_rows", json!({"table": "film", "where": {"title": "Charade"}}), now);
    assert_eq!(rows["rows"][0]["rating"], 2);
    let feed = answer(&mut d, &mut e, "list_changes", json!({"since": 0}), now);
    let external: Vec<&Value> =
        feed["events"].as_array().unwrap().iter().filter(|ev| ev["source"] == "external").collect();
    assert_eq!(external.len(), 1, "{feed}");
    assert_eq!(external[0]["path"], CHARADE);
    assert!(d.store[CACHE].contains("\"m\":1025000"), "the cache is written again with the change");
    // The film as of the version before the edit reads from the blobs alone.
    let v = history["history"][0]["version"].as_u64().unwrap();
    let before = answer(
        &mut d,
        &mut e,
        "select_rows",
        json!({"table": "film", "version": v - 1, "where": {"title": "Charade"}}),
        now,
    );
    assert_eq!(before["rows"][0]["rating"], 5, "{before}");
}

#[test]
fn a_cache_that_cannot_be_trusted_is_not_used_and_is_written_again() {
    for (why, spoil) in [
        ("cut short", (|t: &str| t[..t.len() / 2].to_string()) as fn(&str) -> String),
        ("another format", |t: &str| t.replacen("\"format\":3", "\"format\":99", 1)),
        // The checksum finds it: no line is trusted, though each still parses.
        ("a row's value changed by hand", |t: &str| t.replacen("\"rating\":5", "\"rating\":4", 1)),
        ("a line taken out", |t: &str| {
            let mut lines: Vec<&str> = t.split_inclusive('\n').collect();
            lines.remove(2);
            lines.concat()
        }),
        ("garbage", |_: &str| "\u{0}not json\n{".to_string()),
    ] {
        let mut d = diary();
        let good = d.store[CACHE].clone();
        d.mem.store.insert(CACHE.into(), spoil(&good));
        let now = OLD + 40_000;
        let (mut e, wanted) = open_cached(&mut d, &BTreeMap::new(), now);
        assert_ne!(spoil(&good), good, "{why}");
        assert_eq!(wanted.len(), d.notes.len(), "{why}: every note is read");
        let rows = answer(&mut d, &mut e, "select_rows", json!({"table": "film"}), now);
        assert_eq!(rows["total"], 7, "{why}");
        let lines = |t: &str| t.lines().skip(1).map(str::to_string).collect::<Vec<_>>();
        assert_eq!(lines(&d.store[CACHE]), lines(&good), "{why}: written again whole");
    }
    // Another metastore.yaml: every row is read as its new definition says.
    let mut d = diary();
    let meta = d.notes[METASTORE].replace("rating:  ", "stars:   ");
    d.mem.notes.insert(METASTORE.into(), meta);
    let (_, wanted) = open_cached(&mut d, &BTreeMap::from([(METASTORE, OLD + 45_000)]), OLD + 50_000);
    assert_eq!(wanted.len(), d.notes.len());
}

#[test]
fn a_reopen_through_the_cache_answers_as_one_that_reads_every_note() {
    // Notes outside the tables beside the films: a few changed are appended to
    // the cache, many make it written whole.
    let mut d = larger_diary();
    let mut rng = Rng(0x00ca_c4e5);
    let mut mtimes: BTreeMap<String, i64> = d.notes.keys().map(|p| (p.clone(), OLD)).collect();
    let mut seen = d.notes.clone();
    let mut now = OLD + 20_000;
    let films: Vec<String> = d.notes.keys().filter(|p| p.contains("/film/")).cloned().collect();
    let (mut cached_rounds, mut appended_rounds) = (0, 0);
    for round in 0..30 {
        // Edits made while closed: a rating changed (often keeping the size), a
        // film gone, a note added.
        for _ in 0..rng.below(3) {
            let p = rng.pick(&films).clone();
            if let Some(t) = d.notes.get(&p).cloned() {
                let (r, s) = (rng.below(5) + 1, rng.below(5) + 1);
                d.mem.notes.insert(p, t.replace(&format!("rating: {r}\n"), &format!("rating: {s}\n")));
            }
        }
        match rng.below(6) {
            0 => drop(d.mem.notes.remove(rng.pick(&films))),
            1 => drop(d.mem.notes.insert(format!("Notes/round {round}.md"), format!("See [[Charade]] ({round}).\n"))),
            _ => {}
        }
        // A note whose text changed since the last open has a new mtime.
        for (p, t) in &d.notes {
            if seen.get(p) != Some(t) {
                mtimes.insert(p.clone(), now - 5_000);
            }
        }
        let mut full = Disk { mem: d.mem.clone() };
        let borrowed: BTreeMap<&str, i64> = mtimes.iter().map(|(p, m)| (p.as_str(), *m)).collect();
        let before = d.store[CACHE].clone();
        let (mut e, _) = open_cached(&mut d, &borrowed, now);
        let mut f = full.open(now);
        cached_rounds += usize::from(!e.unread().is_empty());
        let after = &d.store[CACHE];
        appended_rounds += usize::from(after.len() > before.len() && after.starts_with(&before));
        seen = d.notes.clone();
        for (op, args) in [
            ("select_rows", json!({"table": "film", "order_by": "title"})),
            ("select_rows", json!({"table": "person", "order_by": "name"})),
            ("check_table", json!({})),
            ("list_changes", json!({"since": 0})),
        ] {
            let (a, b) = (answer(&mut d, &mut e, op, args.clone(), now), answer(&mut full, &mut f, op, args, now));
            assert_eq!(a, b, "round {round}: {op}");
        }
        // Sometimes a write through the engine opened from the cache.
        if rng.below(2) == 0 {
            if let Some(p) = films.iter().find(|p| d.notes.contains_key(*p)) {
                let set = json!({"table": "film", "path": p, "set": {"rating": rng.below(5) + 1}});
                answer(&mut d, &mut e, "update_row", set, now);
            }
        }
        now += 60_000;
    }
    assert!(cached_rounds > 20, "most opens took notes from the cache: {cached_rounds}");
    assert!(appended_rounds > 5, "many opens appended to the cache: {appended_rounds}");
}

#[test]
fn notes_handed_over_packed_are_cut_apart_by_javascript_lengths() {
    let texts = ["Café 🎬\n", "", "plain", "𝄞 and é"];
    let utf16 = |t: &str| t.encode_utf16().count() as u32;
    let paths: Vec<String> = (0..4).map(|k| format!("n{k}.md")).collect();
    let lengths: Vec<u32> = texts.iter().map(|t| utf16(t)).collect();
    let notes = NoteFile::unpack(paths.clone(), &[1.0, 2.0, 3.0, 4.5], &texts.concat(), &lengths).unwrap();
    let got: Vec<(&str, &str, i64)> = notes.iter().map(|n| (n.path.as_str(), n.text.as_str(), n.mtime)).collect();
    assert_eq!(got, [("n0.md", texts[0], 1), ("n1.md", "", 2), ("n2.md", "plain", 3), ("n3.md", texts[3], 4)]);
    // Lengths that do not fit the texts are refused, never a note cut wrong.
    // Six units end inside 🎬 (two units in JavaScript).
    let inside = [6, lengths[1], lengths[2], lengths[3] + lengths[0] - 6];
    let err = NoteFile::unpack(paths.clone(), &[0.0; 4], &texts.concat(), &inside).unwrap_err();
    assert!(err.contains("cuts a character"), "{err}");
    let err = NoteFile::unpack(paths.clone(), &[0.0; 4], &texts.concat(), &[1, 0, 0, 0]).unwrap_err();
    assert!(err.contains("past the last"), "{err}");
    let err = NoteFile::unpack(paths.clone(), &[0.0; 4], "ab", &[1, 0, 0, 5]).unwrap_err();
    assert!(err.contains("end before n3.md"), "{err}");
    assert!(NoteFile::unpack(paths, &[0.0; 3], "", &[0; 4]).is_err());
}

/// The film diary with 40 notes outside the tables beside it, each linking to
/// Charade, opened once through the cache: enough notes that one changed is
/// appended to the cache rather than the cache written whole.
fn larger_diary() -> Disk {
    let mut d = Disk::films();
    for k in 0..40 {
        d.mem.notes.insert(format!("Notes/n{k:02}.md"), format!("Note {k} on [[Charade]].\n"));
    }
    open_cached(&mut d, &BTreeMap::new(), OLD + 10_000);
    d
}

/// `larger_diary` reopened, then Charade rated again while closed: the
/// notes every open reads (metastore.yaml, notes the engine cannot take as
/// rows) and the cache before the edit.
fn charade_rated_again() -> (Disk, Vec<String>, String) {
    let mut d = larger_diary();
    let (_, always) = open_cached(&mut d, &BTreeMap::new(), OLD + 20_000);
    let whole = d.store[CACHE].clone();
    let text = d.notes[CHARADE].replace("rating: 5", "rating: 2");
    d.mem.notes.insert(CHARADE.into(), text);
    (d, always, whole)
}

#[test]
fn a_reopen_that_finds_few_notes_changed_appends_them_to_the_cache() {
    // While closed: Charade rated again, a note removed, one added.
    let (mut d, always, whole) = charade_rated_again();
    d.mem.notes.remove("Notes/n03.md");
    d.mem.notes.insert("Notes/new.md".into(), "A new one on [[Metropolis]].\n".into());
    let mtimes = BTreeMap::from([(CHARADE, OLD + 25_000), ("Notes/new.md", OLD + 25_000)]);
    let (_, wanted) = open_cached(&mut d, &mtimes, OLD + 30_000);
    assert!(wanted.contains(&CHARADE.to_string()) && wanted.contains(&"Notes/new.md".to_string()), "{wanted:?}");
    let after = d.store[CACHE].clone();
    assert!(after.starts_with(&whole), "the cache is appended to, its first part kept byte for byte");
    let segment: Vec<&str> = after[whole.len()..].lines().collect();
    assert_eq!(segment.len(), 4, "a header, then a line for each of the three notes: {segment:?}");
    assert!(segment[0].starts_with("{\"of\":"), "{}", segment[0]);
    assert!(segment.iter().any(|l| l.contains("\"rating\":2")), "{segment:?}");
    assert!(segment.contains(&"{\"gone\":\"Notes/n03.md\"}"), "{segment:?}");
    assert!(segment.iter().any(|l| l.starts_with("{\"p\":\"Notes/new.md\"")), "{segment:?}");

    // The next open takes the three from the segment: it reads only what every open reads.
    let now = OLD + 40_000;
    let (mut e, wanted) = open_cached(&mut d, &mtimes, now);
    assert_eq!(wanted, always, "nothing else is read");
    assert_eq!(d.store[CACHE], after, "nothing changed: nothing is written");
    assert!(!e.unread().contains(&"Notes/n03.md".to_string()), "the gone note is not in the index");
    assert!(e.unread().contains(&"Notes/new.md".to_string()), "the new note is, from the cache");
    let mut full = d.open(now);
    for (op, args) in [
        ("select_rows", json!({"table": "film", "order_by": "title"})),
        ("check_table", json!({})),
        ("describe_database", json!({})),
    ] {
        let (a, b) = (answer(&mut d, &mut e, op, args.clone(), now), answer(&mut d, &mut full, op, args, now));
        assert_eq!(a, b, "{op} answers as from the notes");
    }
    let rows = answer(&mut d, &mut e, "select_rows", json!({"table": "film", "where": {"title": "Charade"}}), now);
    assert_eq!(rows["rows"][0]["rating"], 2, "the row as the segment holds it");
}

#[test]
fn a_segment_cut_short_is_left_out_and_the_cache_written_whole_again() {
    let (mut d, always, whole) = charade_rated_again();
    let mtimes = BTreeMap::from([(CHARADE, OLD + 25_000)]);
    open_cached(&mut d, &mtimes, OLD + 30_000);
    let appended = d.store[CACHE].clone();
    assert!(appended.len() > whole.len() && appended.starts_with(&whole));
    // An append cut short (a kill, a full disk), or a segment of another file:
    // what it said is lost, the first part still vouches for the notes it
    // holds as they were, and the file is written whole again.
    let other = appended.replacen("{\"of\":\"", "{\"of\":\"0", 1);
    for (why, spoilt) in [("cut short", appended[..appended.len() - 5].to_string()), ("of another file", other)] {
        d.mem.store.insert(CACHE.into(), spoilt);
        let now = OLD + 40_000;
        let (mut e, wanted) = open_cached(&mut d, &mtimes, now);
        let mut want = always.clone();
        want.push(CHARADE.to_string());
        want.sort();
        let mut got = wanted.clone();
        got.sort();
        assert_eq!(got, want, "{why}: Charade is read again, no other note");
        let rows = answer(&mut d, &mut e, "select_rows", json!({"table": "film", "where": {"title": "Charade"}}), now);
        assert_eq!(rows["rows"][0]["rating"], 2, "{why}");
        let rewritten = &d.store[CACHE];
        assert!(!rewritten.contains("{\"of\":"), "{why}: written whole");
        assert!(rewritten.contains("\"rating\":2"), "{why}");
    }
}

#[test]
fn a_reopen_that_finds_many_notes_changed_writes_the_cache_whole() {
    let mut d = larger_diary();
    open_cached(&mut d, &BTreeMap::new(), OLD + 20_000);
    // Seven of about sixty notes: more than an eighth.
    let touched: Vec<String> = d.notes.keys().filter(|p| p.starts_with("Notes/n0")).take(7).cloned().collect();
    let mtimes: BTreeMap<&str, i64> = touched.iter().map(|p| (p.as_str(), OLD + 25_000)).collect();
    let (_, wanted) = open_cached(&mut d, &mtimes, OLD + 30_000);
    assert!(touched.iter().all(|p| wanted.contains(p)));
    let cache = &d.store[CACHE];
    assert!(!cache.contains("{\"of\":"), "written whole");
    assert!(touched.iter().all(|p| cache.contains(&format!("\"m\":{}", OLD + 25_000)) && cache.contains(p.as_str())));
}
