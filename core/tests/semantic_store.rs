//! The semantic index in the store (issue 19, point 3): written by a search or
//! a sync, read back by the next engine instead of embedding every note again,
//! never trusted blindly (another format, another model, a line cut short, a
//! note changed since: built again or embedded again), and kept up as notes
//! change when the `semanticIndex` setting says so. And the operations' other
//! ways in: `like`, the weights in the settings, a model given by the host.
#![cfg(not(target_arch = "wasm32"))]

use datanotes_core::driver::{self, Memory};
use datanotes_core::semantic::{stored, Model};
use datanotes_core::{Engine, NoteFile, Status, StoreFile, VaultEvent};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const INDEX: &str = "semantic/index.a.jsonl";

/// 40 notes of the quality fixture, as plain notes of a vault.
fn vault() -> Memory {
    let path = format!("{}/tests/fixtures/semantic/quality.json", env!("CARGO_MANIFEST_DIR"));
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let notes: BTreeMap<String, String> = f["notes"].as_array().unwrap()[..40]
        .iter()
        .map(|n| (n["path"].as_str().unwrap().to_string(), n["text"].as_str().unwrap().to_string()))
        .collect();
    Memory::new(notes)
}

/// The 40 notes and a table of tasks (none yet).
fn with_tasks() -> Memory {
    let mut disk = vault();
    let schema =
        "version: 1\ntables:\n  main.public.task:\n    name_from: title\n    columns:\n      title: {type: text}\n";
    disk.notes.insert("datanotes/metastore.yaml".into(), schema.into());
    disk
}

/// An engine opened on `disk` as a host opens one: the stored index listed, unread.
fn open(disk: &mut Memory) -> Engine {
    let notes = disk.notes.iter().map(|(p, t)| NoteFile { path: p.clone(), text: t.clone(), mtime: 0 });
    let store = disk.store.iter().map(|(p, t)| StoreFile(p.clone(), (!p.starts_with("semantic/")).then(|| t.clone())));
    let mut e = Engine::open_listed(notes.collect(), store.collect(), 1_000);
    e.set_device("a").unwrap();
    assert_eq!(driver::start(&mut e, disk, 1_000).status, Status::Ok);
    e
}

fn call(e: &mut Engine, disk: &mut Memory, op: &str, args: Value) -> (Status, Value) {
    let out = driver::call(e, disk, op, &args, "test", 2_000);
    (out.status, out.answer)
}

fn done(e: &mut Engine, disk: &mut Memory, op: &str, args: Value) -> Value {
    let (status, answer) = call(e, disk, op, args);
    assert_eq!(status, Status::Ok, "{op}: {answer}");
    answer
}

fn ranked(answer: &Value) -> Vec<(String, String)> {
    let results = answer["results"].as_array().unwrap();
    results
        .iter()
        .map(|r| (r["path"].as_str().unwrap().into(), format!("{:.5}", r["score"].as_f64().unwrap())))
        .collect()
}

/// The stored index's lines that name `path`.
fn lines_of(disk: &Memory, path: &str) -> usize {
    disk.store[INDEX].lines().filter(|l| l.contains(&format!("\"path\":\"{path}\""))).count()
}

#[test]
fn the_index_is_stored_and_read_back_by_the_next_engine() {
    let mut disk = vault();
    let mut e = open(&mut disk);
    let first = done(&mut e, &mut disk, "semantic_search", json!({"query": "the tap under the sink drips"}));
    let text = disk.store[INDEX].clone();
    let header: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["format"], 1);
    assert_eq!(header["id"], Model::builtin().id.as_str());
    assert_eq!(text.lines().count(), 41, "a header and a line a note");

    // The next engine reads the index back: it embeds nothing, ranks alike.
    let mut again = open(&mut disk);
    let synced = done(&mut again, &mut disk, "sync_semantic_index", json!({}));
    assert_eq!((synced["stored"].as_u64(), synced["embedded"].as_u64()), (Some(40), Some(0)), "{synced}");
    let second = done(&mut again, &mut disk, "semantic_search", json!({"query": "the tap under the sink drips"}));
    assert_eq!(ranked(&first), ranked(&second));

    // A note changed while no engine ran is embedded again, and only it; its
    // new line is appended.
    let changed = disk.notes.keys().nth(3).unwrap().clone();
    disk.notes.get_mut(&changed).unwrap().push_str("\nThe garage called: the car is ready.\n");
    let mut third = open(&mut disk);
    let before = disk.store[INDEX].lines().count();
    done(&mut third, &mut disk, "semantic_search", json!({"query": "car ready at the garage"}));
    assert_eq!(disk.store[INDEX].lines().count(), before + 1);
    assert_eq!(lines_of(&disk, &changed), 2);
    let synced = done(&mut third, &mut disk, "sync_semantic_index", json!({}));
    assert_eq!((synced["embedded"].as_u64(), synced["unchanged"].as_u64()), (Some(0), Some(40)), "{synced}");
    assert_eq!(lines_of(&disk, &changed), 1, "sync writes the index anew");
}

#[test]
fn an_index_that_cannot_be_trusted_is_built_again() {
    let mut disk = vault();
    let mut e = open(&mut disk);
    done(&mut e, &mut disk, "sync_semantic_index", json!({}));
    let good = disk.store[INDEX].clone();

    // Another format: built again, said why, written anew.
    disk.store.insert(INDEX.into(), good.replacen("\"format\":1", "\"format\":9", 1));
    let mut e = open(&mut disk);
    let synced = done(&mut e, &mut disk, "sync_semantic_index", json!({}));
    assert_eq!(synced["embedded"].as_u64(), Some(40), "{synced}");
    assert!(synced["rebuilt"].as_str().unwrap().contains("format 1"), "{synced}");
    assert_eq!(disk.store[INDEX], good);

    // Another model's vectors: the header's, or one line's.
    let id = &Model::builtin().id;
    disk.store.insert(INDEX.into(), good.replace(&format!("\"id\":\"{id}\""), "\"id\":\"0000000000000000\""));
    let mut e = open(&mut disk);
    let synced = done(&mut e, &mut disk, "sync_semantic_index", json!({}));
    assert!(synced["rebuilt"].as_str().unwrap().contains("another model"), "{synced}");
    let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
    lines[1] = lines[1].replace(&format!("\"m\":\"{id}\""), "\"m\":\"0000000000000000\"");
    // A line cut short, as by a kill in the middle of an append.
    let torn = lines[2].len() / 2;
    lines[2].truncate(torn);
    // Vectors that are not base64.
    lines[3] = lines[3].replacen("\"v\":\"", "\"v\":\"!!", 1);
    disk.store.insert(INDEX.into(), lines.join("\n") + "\n");
    let mut e = open(&mut disk);
    let synced = done(&mut e, &mut disk, "sync_semantic_index", json!({}));
    assert_eq!((synced["stored"].as_u64(), synced["embedded"].as_u64()), (Some(37), Some(3)), "{synced}");
    assert!(synced.get("rebuilt").is_none(), "{synced}");
    assert_eq!(disk.store[INDEX], good);
}

#[test]
fn the_setting_keeps_the_stored_index_up_as_notes_change() {
    for keep in [false, true] {
        let mut disk = vault();
        let mut e = open(&mut disk);
        done(&mut e, &mut disk, "sync_semantic_index", json!({}));
        done(&mut e, &mut disk, "configure_database", json!({"semanticIndex": keep}));
        let path = disk.notes.keys().nth(5).unwrap().clone();
        let text = format!("{}\nThe boiler needs its yearly check.\n", disk.notes[&path]);
        disk.notes.insert(path.clone(), text.clone());
        e.observe(VaultEvent::Modified { path: path.clone(), text, mtime: 3_000 }, 3_000);
        driver::tick(&mut e, &mut disk, 10_000);
        let gone = disk.notes.keys().nth(6).unwrap().clone();
        disk.notes.remove(&gone);
        e.observe(VaultEvent::Removed { path: gone.clone() }, 11_000);
        driver::tick(&mut e, &mut disk, 20_000);
        assert_eq!(lines_of(&disk, &path), if keep { 2 } else { 1 }, "a hand edit, setting {keep}");
        assert_eq!(lines_of(&disk, &gone), if keep { 2 } else { 1 }, "a note deleted, setting {keep}");
        // What was appended is what a search would have found: the next
        // engine reads it back and embeds nothing.
        if keep {
            let mut again = open(&mut disk);
            let synced = done(&mut again, &mut disk, "sync_semantic_index", json!({}));
            assert_eq!((synced["stored"].as_u64(), synced["embedded"].as_u64()), (Some(39), Some(0)), "{synced}");
        }
    }
}

#[test]
fn like_finds_the_notes_nearest_a_note() {
    let mut disk = vault();
    let mut e = open(&mut disk);
    let path = disk.notes.keys().next().unwrap().clone();
    let answer = done(&mut e, &mut disk, "semantic_search", json!({"like": path, "limit": 5}));
    let paths: Vec<&str> = answer["results"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    assert_eq!(paths.len(), 5);
    assert!(!paths.contains(&path.as_str()), "the note itself is left out");
    let scores: Vec<f64> = answer["results"].as_array().unwrap().iter().map(|r| r["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    let (status, answer) = call(&mut e, &mut disk, "semantic_search", json!({"like": "no/such.md"}));
    assert_eq!(status, Status::BadInput, "{answer}");
}

#[test]
fn refusals_and_the_weights_in_the_settings() {
    let mut disk = vault();
    let mut e = open(&mut disk);
    let long = "tap ".repeat(600);
    for args in [
        json!({}),
        json!({"query": "tap", "like": "a.md"}),
        json!({"query": "  "}),
        json!({"query": "tap", "weight": 2}),
        json!({"query": long}),
    ] {
        let (status, answer) = call(&mut e, &mut disk, "semantic_search", args.clone());
        assert_eq!(status, Status::BadInput, "{args}: {answer}");
    }

    let (status, _) = call(&mut e, &mut disk, "configure_database", json!({"semanticWeight": 1.5}));
    assert_eq!(status, Status::BadInput);
    let default = done(&mut e, &mut disk, "semantic_search", json!({"query": "dripping tap"}));
    assert_eq!(default["weight"].as_f64(), Some(0.97));
    let code = done(&mut e, &mut disk, "semantic_search", json!({"query": "invoice INV-2219"}));
    assert_eq!(code["weight"].as_f64(), Some(0.5));
    done(&mut e, &mut disk, "configure_database", json!({"semanticWeight": 0.0, "semanticCodeWeight": 1.0}));
    let words = done(&mut e, &mut disk, "semantic_search", json!({"query": "dripping tap"}));
    assert_eq!(words["weight"].as_f64(), Some(0.0));
    for r in words["results"].as_array().unwrap() {
        // Words alone: a note's score is its word score over the best one's.
        assert!(r["lexical"].as_f64().unwrap() > 0.0 || r["score"].as_f64() == Some(0.0), "{r}");
    }
    let code = done(&mut e, &mut disk, "semantic_search", json!({"query": "invoice INV-2219"}));
    assert_eq!(code["weight"].as_f64(), Some(1.0));
}

/// A model the host gives (the plugin's, read from the store) is the one a
/// search uses; the index made with the vendored one is built again for it.
#[test]
fn a_model_given_by_the_host_replaces_the_vendored_one() {
    let vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "tap", "sink", "car", "garage", "##s"].join("\n");
    let (rows, dims) = (10u32, 4u32);
    let mut vectors = b"DNSEMB1\n".to_vec();
    vectors.extend(rows.to_le_bytes());
    vectors.extend(dims.to_le_bytes());
    for _ in 0..rows {
        vectors.extend(0.01f32.to_le_bytes());
    }
    for r in 0..rows {
        vectors.extend((0..dims).map(|d| if d == r % dims { 100u8 } else { 0 }));
    }
    let file = Model::file("tiny", &vocab, &vectors);
    let mut disk = vault();
    let mut e = open(&mut disk);
    done(&mut e, &mut disk, "sync_semantic_index", json!({}));
    assert!(e.set_semantic_model(&file[..file.len() - 1]).unwrap_err().contains("damaged"));
    assert!(e.set_semantic_model(b"not a model").unwrap_err().contains("DNMODEL1"));
    let given = e.set_semantic_model(&file).unwrap();
    let tiny = Model::from_file(&file).unwrap();
    assert_eq!(given, json!({"model": "tiny", "id": tiny.id}));
    assert_ne!(tiny.id, Model::builtin().id);
    let synced = done(&mut e, &mut disk, "sync_semantic_index", json!({}));
    assert_eq!((synced["model"].as_str(), synced["embedded"].as_u64()), (Some("tiny"), Some(40)), "{synced}");
    let header: Value = serde_json::from_str(disk.store[INDEX].lines().next().unwrap()).unwrap();
    assert_eq!((header["id"].as_str(), header["dims"].as_u64()), (Some(tiny.id.as_str()), Some(4)));
    assert!(stored::read(&disk.store[INDEX], &tiny).is_ok());
}

/// sync_semantic_index of some tables: only their rows are embedded; the
/// other notes stay as they were (kept, not taken out); a table that does not
/// exist is refused, as every operation refuses it.
#[test]
fn a_sync_of_some_tables_leaves_the_other_notes_as_they_are() {
    let mut disk = with_tasks();
    for i in 0..3 {
        let text =
            format!("---\ntable: main.public.task\ntitle: Task {i}\n---\nCall the plumber about the tap, time {i}.\n");
        disk.notes.insert(format!("datanotes/main/public/task/Task {i}.md"), text);
    }
    let mut e = open(&mut disk);
    let only = done(&mut e, &mut disk, "sync_semantic_index", json!({"table": "task"}));
    assert_eq!((only["notes"].as_u64(), only["embedded"].as_u64()), (Some(3), Some(3)), "{only}");
    assert_eq!(only["tables"], json!(["main.public.task"]));
    let all = done(&mut e, &mut disk, "sync_semantic_index", json!({}));
    assert_eq!((all["embedded"].as_u64(), all["unchanged"].as_u64()), (Some(40), Some(3)), "{all}");
    let again = done(&mut e, &mut disk, "sync_semantic_index", json!({"tables": ["task"]}));
    assert_eq!((again["embedded"].as_u64(), again["removed"].as_u64()), (Some(0), Some(0)), "{again}");
    let synced = done(&mut e, &mut disk, "sync_semantic_index", json!({}));
    assert_eq!(synced["unchanged"].as_u64(), Some(43), "the sync of one table took no other note out: {synced}");
    let (status, answer) = call(&mut e, &mut disk, "sync_semantic_index", json!({"table": "nope"}));
    assert_eq!(status, Status::Refused, "{answer}");
    // A filter of a column the table lacks is this operation's refusal, not select_rows'.
    let args = json!({"query": "tap", "table": "task", "where": {"nope": 1}});
    let (status, answer) = call(&mut e, &mut disk, "semantic_search", args);
    assert_eq!((status, answer["op"].as_str()), (Status::BadInput, Some("semantic_search")), "{answer}");
}

/// An engine write keeps the stored index up too when the setting is on: the
/// new row's line is appended after the journal's entry is done, and the
/// journal never waits on it.
#[test]
fn an_engine_write_appends_its_notes_when_the_setting_is_on() {
    let mut disk = with_tasks();
    let mut e = open(&mut disk);
    done(&mut e, &mut disk, "configure_database", json!({"semanticIndex": true}));
    assert!(!disk.store.contains_key(INDEX), "nothing to keep up yet");
    let out = driver::call(
        &mut e,
        &mut disk,
        "insert_row",
        &json!({"table": "task", "values": {"title": "Fix the tap"}, "body": "The kitchen tap drips."}),
        "test",
        3_000,
    );
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    let path = "datanotes/main/public/task/Fix the tap.md";
    assert!(disk.notes.contains_key(path));
    assert_eq!(lines_of(&disk, path), 1, "{}", disk.store[INDEX]);
    let header: Value = serde_json::from_str(disk.store[INDEX].lines().next().unwrap()).unwrap();
    assert_eq!(header["format"], 1, "a file begun by a write has its header");
    let found = done(&mut e, &mut disk, "semantic_search", json!({"query": "dripping kitchen tap", "table": "task"}));
    assert_eq!(found["results"][0]["path"], path);
}

/// A stored index the disk cannot take (a folder in its place, a file held by
/// another program) fails no search and holds up no write: it is derived, so
/// it is not owed as the journal's records are.
#[test]
fn an_index_the_disk_refuses_holds_up_nothing() {
    let mut disk = with_tasks();
    let mut e = open(&mut disk);
    done(&mut e, &mut disk, "configure_database", json!({"semanticIndex": true}));
    disk.held.insert(INDEX.into());
    let found = done(&mut e, &mut disk, "semantic_search", json!({"query": "dripping tap"}));
    assert!(found.get("warning").is_none(), "{found}");
    for title in ["Fix the tap", "Paint the fence"] {
        let out = driver::call(
            &mut e,
            &mut disk,
            "insert_row",
            &json!({"table": "task", "values": {"title": title}}),
            "test",
            3_000,
        );
        assert_eq!(out.status, Status::Ok, "the second write is not refused for records owed: {}", out.answer);
        assert!(out.answer.get("not_recorded").is_none(), "{}", out.answer);
    }
    assert!(!disk.store.contains_key(INDEX));
    disk.held.clear();
    done(&mut e, &mut disk, "sync_semantic_index", json!({}));
    assert_eq!(lines_of(&disk, "datanotes/main/public/task/Paint the fence.md"), 1);
}
