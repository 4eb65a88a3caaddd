//! The engine in wasm32 (under node with wasm-bindgen-test-runner) and natively:
//! the same calls give the same answers, with no file system, clock or thread.

use datanotes_core::driver::{self, Memory};
use datanotes_core::{Engine, NoteFile, Outcome, Status, Step};
use serde_json::json;
use wasm_bindgen_test::wasm_bindgen_test;

fn vault() -> Vec<NoteFile> {
    let f = |path: &str, text: &str| NoteFile { path: path.into(), text: text.into(), mtime: 0 };
    vec![
        f("datanotes/metastore.yaml", "version: 1\ntables:\n  main.public.film:\n    name_from: title\n    columns:\n      title: {type: text, required: true, unique: true}\n      year: {type: integer}\n      isbn: {type: text}\n"),
        f("datanotes/main/public/film/Charade.md", "---\ntable: main.public.film\nid: 01a0c048-0000-7000-8000-000000000001\ntitle: Charade\nyear: 1963\nisbn: 0811858022 # keep me\n---\nBody.\n"),
        f("datanotes/main/public/film/Broken.md", "---\ntitle: Sherlock Jr.: the projectionist\n---\n"),
    ]
}

fn done(step: Step) -> Outcome {
    match step {
        Step::Done(o) => o,
        other => panic!("the turn was expected to be over: {other:?}"),
    }
}

#[wasm_bindgen_test]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn reads_writes_and_reports_in_any_host() {
    let mut e = Engine::open(vault(), vec![]);
    let out = done(e.call("select_rows", json!({"table": "film", "columns": ["title", "isbn"]}), "test", 0));
    assert_eq!(out.status, Status::Ok);
    assert_eq!(out.answer["total"], 1);
    assert_eq!(out.answer["rows"][0]["isbn"], "0811858022");
    let out = done(e.call("describe_database", json!({}), "test", 0));
    assert_eq!(out.answer["tables"][0]["unreadable_count"], 1);

    let out = e.call(
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": {"year": 1964}}),
        "test",
        1_790_000_000_000,
    );
    let Step::Apply(out) = out else { panic!("a write was expected: {out:?}") };
    let text = match &out.edits[0] {
        datanotes_core::Edit::Write { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(text, "---\ntable: main.public.film\nid: 01a0c048-0000-7000-8000-000000000001\ntitle: Charade\nyear: 1964\nisbn: 0811858022 # keep me\n---\nBody.\n");
    let finished = done(e.finish(&[Ok(())]));
    assert_eq!(finished.status, Status::Ok);

    let out = done(e.call("insert_row", json!({"table": "film", "values": {"title": "Charade"}}), "test", 0));
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
}

#[wasm_bindgen_test]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn the_driver_carries_a_write_to_the_files_in_any_host() {
    let files = vault();
    let mut host = Memory::new(files.iter().map(|f| (f.path.clone(), f.text.clone())).collect());
    let mut e = Engine::open(files, vec![]);
    let out = driver::start(&mut e, &mut host, 1_790_000_000_000);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    assert!(host.store.contains_key("known.jsonl"), "the first start records the vault");
    let args = json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": {"year": 1964}});
    let out = driver::call(&mut e, &mut host, "update_row", &args, "test", 1_790_000_000_000);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    assert!(host.notes["datanotes/main/public/film/Charade.md"].contains("year: 1964\nisbn: 0811858022 # keep me\n"));
    let id = out.answer["migration_id"].as_str().unwrap();
    let entry = &host.store[&format!("journal/{id}.json")];
    assert!(entry.contains("update_row") && !entry.contains("pending"), "{entry}");
}
