//! The driver on one scripted sequence (`tests/driver/script.json`): calls, reads
//! of history, a write rolled back, a store that cannot be written, hand edits
//! seen live and while no engine ran. What each step gave, and the files at the
//! end, must be `tests/driver/outcomes.json`; the plugin's TypeScript host runs
//! the same script against the same file (plugin/test/driver.test.ts), so both
//! hosts follow the driver step for step. `DATANOTES_BLESS=1` writes the file
//! anew (read its diff before committing it).

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::film_diary;
use datanotes_core::driver::{self, Memory};
use datanotes_core::{Engine, NoteFile, Outcome, StoreFile, VaultEvent};
use serde_json::{json, Value};

const SCRIPT: &str = include_str!("../../tests/driver/script.json");
const OUTCOMES: &str = include_str!("../../tests/driver/outcomes.json");

/// `"$N.key"`: the key of step N's answer; any other value as it is.
fn resolve(v: &Value, outcomes: &[Value]) -> Value {
    match v {
        Value::String(s) if s.starts_with('$') => {
            let (n, key) = s[1..].split_once('.').expect("$N.key");
            outcomes[n.parse::<usize>().unwrap()]["answer"][key].clone()
        }
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), resolve(x, outcomes))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(|x| resolve(x, outcomes)).collect()),
        other => other.clone(),
    }
}

fn shown(out: &Outcome) -> Value {
    json!({"status": out.status, "http": out.status.http(), "answer": out.answer, "log": out.log})
}

fn open(host: &Memory, now: i64) -> Engine {
    let notes = host.notes.iter().map(|(p, t)| NoteFile { path: p.clone(), text: t.clone(), mtime: 0 }).collect();
    let store = host
        .store
        .iter()
        .map(|(p, t)| StoreFile(p.clone(), (!p.starts_with("log/") && !p.starts_with("blobs/")).then(|| t.clone())))
        .collect();
    // As the plugin opens (wasm.rs): through the notes' cache, none the first time.
    let mut e = Engine::open_with_cache(notes, vec![], None, store, now);
    e.seed(&[0; 32]);
    e
}

/// The text of a note with `[from, to]` replaced once.
fn replaced(host: &Memory, path: &str, r: &Value) -> String {
    let (from, to) = (r[0].as_str().unwrap(), r[1].as_str().unwrap());
    let text = &host.notes[path];
    assert!(text.contains(from), "{path} holds no {from:?}");
    text.replacen(from, to, 1)
}

/// Runs the script: each step's outcome (Null for a step that gives none), then
/// the vault and the store at the end.
fn run(script: &Value) -> Value {
    let mut host = Memory::new(film_diary());
    let mut engine = Engine::open(vec![], vec![]);
    let mut outcomes: Vec<Value> = vec![];
    for step in script["steps"].as_array().unwrap() {
        let s = |k: &str| step[k].as_str().unwrap_or_default().to_string();
        let at = step["at"].as_i64().unwrap_or_default();
        let out = if let Some(now) = step["start"].as_i64() {
            engine = open(&host, now);
            Some(driver::start(&mut engine, &mut host, now))
        } else if let Some(op) = step["call"].as_str() {
            let args = resolve(&step["args"], &outcomes);
            Some(driver::call(&mut engine, &mut host, op, &args, "script", at))
        } else if let Some(now) = step["tick"].as_i64() {
            Some(driver::tick(&mut engine, &mut host, now))
        } else if step.get("hand").is_some() {
            let (path, text) = (s("hand"), replaced(&host, &s("hand"), &step["replace"]));
            host.notes.insert(path.clone(), text.clone());
            engine.observe(VaultEvent::Modified { path, text, mtime: at }, at);
            None
        } else if step.get("closed_hand").is_some() {
            let text = replaced(&host, &s("closed_hand"), &step["replace"]);
            host.notes.insert(s("closed_hand"), text);
            None
        } else if step.get("hold").is_some() {
            host.held.insert(s("hold"));
            None
        } else if step.get("release").is_some() {
            host.held.remove(&s("release"));
            None
        } else if let Some(on) = step["store_fails"].as_bool() {
            host.store_fails = on;
            None
        } else if step["fills_up"] == true {
            host.fills_up = true;
            None
        } else {
            panic!("an unknown step: {step}");
        };
        // Edits the engine made are not reported back: no watcher in this script.
        host.seen.clear();
        outcomes.push(out.as_ref().map_or(Value::Null, shown));
    }
    json!({"outcomes": outcomes, "notes": host.notes, "store": host.store})
}

#[test]
fn the_driver_gives_the_scripted_outcomes() {
    let script: Value = serde_json::from_str(SCRIPT).unwrap();
    let got = run(&script);
    #[cfg(not(target_arch = "wasm32"))]
    if std::env::var_os("DATANOTES_BLESS").is_some() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/driver/outcomes.json");
        std::fs::write(path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let want: Value = serde_json::from_str(OUTCOMES).unwrap();
    for (i, (g, w)) in got["outcomes"].as_array().unwrap().iter().zip(want["outcomes"].as_array().unwrap()).enumerate()
    {
        assert_eq!(g, w, "step {i}: {}", script["steps"][i]);
    }
    assert_eq!(got, want);
}

#[test]
fn the_script_reaches_every_kind_of_step() {
    let script: Value = serde_json::from_str(SCRIPT).unwrap();
    let got = run(&script);
    let statuses: Vec<&str> = got["outcomes"].as_array().unwrap().iter().filter_map(|o| o["status"].as_str()).collect();
    for s in ["done", "rolled_back", "refused"] {
        assert!(statuses.contains(&s), "no step ends {s}: {statuses:?}");
    }
    let o = &got["outcomes"];
    assert_eq!(o[3]["answer"]["values"]["rating"], 5, "read at version 0 reads the log: {}", o[3]);
    assert_eq!(o[5]["answer"]["failed"][0]["error"], "the file is held by another program");
    assert!(o[8]["answer"]["error"].as_str().unwrap().contains("the journal cannot be written: no space left"));
    assert!(o[14]["log"].as_array().unwrap().iter().any(|l| l.as_str().unwrap().contains("rating_range")), "{}", o[14]);
    let found = o[20]["answer"]["events"].as_array().unwrap();
    assert!(
        found.iter().any(|e| e["path"] == "datanotes/main/public/film/Metropolis.md" && e["source"] == "external"),
        "the edit made while no engine ran is found at the next start: {found:?}"
    );
}
