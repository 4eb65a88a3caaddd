//! The driver on one scripted sequence (`tests/driver/script.json`): calls, reads
//! of history, a write rolled back, a store that cannot be written (records
//! owed, then written), hand edits seen live, while no engine ran and after an
//! open that left them unread, ticks at the engine's deadline. What each step
//! gave (with the deadline and whether writes are owed after it), and the files
//! at the end, must be `tests/driver/outcomes.json`; the plugin's TypeScript host runs
//! the same script against the same file (plugin/test/driver.test.ts), so both
//! hosts follow the driver step for step. `DATANOTES_BLESS=1` writes the file
//! anew (read its diff before committing it).

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::film_diary;
use datanotes_core::driver::{self, Host as _, Memory};
use datanotes_core::handedit::ROUND_QUIET_MS;
use datanotes_core::semantic::Model;
use datanotes_core::{notecache, Engine, NoteFile, NoteStat, Outcome, StoreFile, StoreWrite, VaultEvent};
use serde_json::{json, Value};

const SCRIPT: &str = include_str!("../../tests/driver/script.json");
const OUTCOMES: &str = include_str!("../../tests/driver/outcomes.json");
const METASTORE: &str = "datanotes/metastore.yaml";

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

/// What a step left: its outcome, if it gave one, and what the loop between
/// calls asks of the host after it (the engine's next deadline, and whether
/// store writes are owed).
fn shown(out: Option<&Outcome>, engine: &Engine) -> Value {
    let mut v = out
        .map_or(json!({}), |o| json!({"status": o.status, "http": o.status.http(), "answer": o.answer, "log": o.log}));
    v["deadline"] = json!(engine.next_deadline());
    v["owes"] = json!(engine.owed() > 0);
    v
}

/// A model to search by meaning with, tiny, as plugin/test/tiny-model.ts makes
/// it: a one-hot vector for each word, after BERT's five special tokens. Both
/// engines are given it (the native one would use its own, the plugin's none).
fn tiny_model(words: &[Value]) -> Vec<u8> {
    let mut vocab = vec!["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];
    vocab.extend(words.iter().map(|w| w.as_str().unwrap()));
    let (rows, dims) = (vocab.len(), 8);
    let mut vectors = b"DNSEMB1\n".to_vec();
    vectors.extend((rows as u32).to_le_bytes());
    vectors.extend((dims as u32).to_le_bytes());
    (0..rows).for_each(|_| vectors.extend(0.01f32.to_le_bytes()));
    (0..rows).for_each(|r| vectors.extend((0..dims).map(|d| if d == r % dims { 100u8 } else { 0 })));
    Model::file("tiny", &vocab.join("\n"), &vectors)
}

/// The store as the plugin lists it at open (plugin/src/store-files.ts): the
/// files the engine reads later listed without their text, others left out.
fn store_listing(host: &Memory) -> Vec<StoreFile> {
    let listed = |p: &str| ["log/", "blobs/", "semantic/", "cache/"].iter().any(|d| p.starts_with(d));
    let read = |p: &str| p == ".gitignore" || (p != "tokens.json" && (p.ends_with(".json") || p.ends_with(".jsonl")));
    host.store
        .iter()
        .filter(|(p, _)| listed(p) || read(p))
        .map(|(p, t)| StoreFile(p.clone(), (!listed(p)).then(|| t.clone())))
        .collect()
}

/// As the plugin opens (plugin/src/opening.ts): metastore.yaml read, every
/// other note listed with its size and mtime, the store's notes' cache given;
/// the notes it does not vouch for are read before the start, the rows it
/// vouches for when a turn needs them.
fn open(host: &mut Memory, now: i64, model: &[u8]) -> Engine {
    let files: Vec<NoteFile> = host.read_note(METASTORE).unwrap().into_iter().collect();
    let listed = host
        .notes
        .iter()
        .filter(|(p, _)| *p != METASTORE)
        .map(|(p, t)| NoteStat {
            path: p.clone(),
            size: t.len() as u64,
            mtime: host.mtimes.get(p).copied().unwrap_or(0),
        })
        .collect();
    let cache = host.store.get(&notecache::path(None)).map(String::as_str);
    let mut e = Engine::open_with_cache(files, listed, cache, store_listing(host), now);
    let (mut texts, mut gone) = (vec![], vec![]);
    for p in e.to_read() {
        match host.read_note(&p).unwrap() {
            Some(f) => texts.push(f),
            None => gone.push(p),
        }
    }
    e.read_listed(texts, gone);
    e.seed(&[0; 32]);
    e.set_semantic_model(model).expect("the tiny model");
    e
}

/// The text of a note with `[from, to]` replaced once.
fn replaced(host: &Memory, path: &str, r: &Value) -> String {
    let (from, to) = (r[0].as_str().unwrap(), r[1].as_str().unwrap());
    let text = &host.notes[path];
    assert!(text.contains(from), "{path} holds no {from:?}");
    text.replacen(from, to, 1)
}

/// The script's state: the host, the engine on it, and the clock (the time of
/// the step, which is also the modification time of the files written).
struct Run {
    host: Memory,
    engine: Engine,
    now: i64,
    model: Vec<u8>,
}

impl Run {
    fn new(script: &Value) -> Run {
        let mut host = Memory::new(film_diary());
        let vault_mtime = script["vault_mtime"].as_i64().expect("vault_mtime");
        host.mtimes = host.notes.keys().map(|p| (p.clone(), vault_mtime)).collect();
        let model = tiny_model(script["model"].as_array().expect("model"));
        Run { host, engine: Engine::open(vec![], vec![]), now: 0, model }
    }

    /// A note changed by hand (not by the engine), its modification time the
    /// step's `mtime`, else the clock's.
    fn hand(&mut self, step: &Value, path: &str) -> NoteFile {
        let text = replaced(&self.host, path, &step["replace"]);
        let mtime = step["mtime"].as_i64().unwrap_or(self.now);
        self.host.notes.insert(path.into(), text.clone());
        self.host.mtimes.insert(path.into(), mtime);
        NoteFile { path: path.into(), text, mtime }
    }

    /// Runs one step: its outcome, for a step that gives one.
    fn step(&mut self, step: &Value, outcomes: &[Value]) -> Option<Outcome> {
        self.now = step["at"].as_i64().or(step["start"].as_i64()).or(step["tick"].as_i64()).unwrap_or(self.now);
        if step["tick"] == "deadline" {
            self.now = self.engine.next_deadline().unwrap_or_else(|| panic!("no deadline to tick at: {step}"));
        }
        self.host.mtime = self.now;
        let (e, h, now) = (&mut self.engine, &mut self.host, self.now);
        if step.get("start").is_some() {
            *e = open(h, now, &self.model);
            Some(driver::start(e, h, now))
        } else if let Some(op) = step["call"].as_str() {
            Some(driver::call(e, h, op, &resolve(&step["args"], outcomes), "script", now))
        } else if step.get("tick").is_some() {
            Some(driver::tick(e, h, now))
        } else {
            self.change(step);
            None
        }
    }

    /// A step that changes the vault or the host, and gives no outcome.
    fn change(&mut self, step: &Value) {
        let s = |k: &str| step[k].as_str().unwrap_or_default().to_string();
        let host = &mut self.host;
        if step.get("hand").is_some() {
            let NoteFile { path, text, mtime } = self.hand(step, &s("hand"));
            self.engine.observe(VaultEvent::Modified { path, text, mtime }, self.now);
        } else if step.get("closed_hand").is_some() {
            self.hand(step, &s("closed_hand"));
        } else if step.get("hold").is_some() {
            host.held.insert(s("hold"));
        } else if step.get("release").is_some() {
            host.held.remove(&s("release"));
        } else if let Some(on) = step["store_fails"].as_bool() {
            host.store_fails = on;
        } else if step["fills_up"] == true {
            host.fills_up = true;
        } else {
            panic!("an unknown step: {step}");
        }
    }
}

/// Runs the script: what each step left (see `shown`), then the vault and the
/// store at the end.
fn run(script: &Value) -> Value {
    let mut r = Run::new(script);
    let mut outcomes: Vec<Value> = vec![];
    for step in script["steps"].as_array().unwrap() {
        let out = r.step(step, &outcomes);
        // Edits the engine made are not reported back: no watcher in this script.
        r.host.seen.clear();
        outcomes.push(shown(out.as_ref(), &r.engine));
    }
    json!({"outcomes": outcomes, "notes": r.host.notes, "store": r.host.store})
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
    for s in ["ok", "rolled_back", "refused"] {
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

/// What the cases of a failed store write, the mtime handed over, owed writes
/// and the deadline show (outcomes.json holds them whole).
#[test]
fn the_script_shows_what_is_owed_the_mtime_handed_over_and_the_deadline() {
    let script: Value = serde_json::from_str(SCRIPT).unwrap();
    let (steps, got) = (&script["steps"], run(&script));
    let o = &got["outcomes"];
    // The disk full after the note is written: its records are owed, the
    // semantic index (derived) not among them; the next turn writes them.
    let owed = o[33]["answer"]["not_recorded"].as_array().unwrap();
    assert!(owed.iter().any(|p| p.as_str().unwrap().starts_with("journal/")), "{owed:?}");
    assert!(!owed.iter().any(|p| p.as_str().unwrap().starts_with("semantic/")), "{owed:?}");
    assert_eq!([&o[33]["owes"], &o[35]["owes"]], [true, false]);
    // A note changed after the open, read by a write: the round of hand edits
    // is due after the mtime the host reported, and commits at that deadline.
    let due = steps[37]["mtime"].as_i64().unwrap() + ROUND_QUIET_MS;
    assert_eq!(o[38]["deadline"], due);
    assert_eq!(o[40]["answer"]["changes"][0]["_commit_timestamp"], datanotes_core::time::iso(due));
    // A start while the store fails: the hand edit found is owed, the notes'
    // cache said lost; a tick once the disk has room writes what was owed.
    let said: Vec<&str> = o[43]["log"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(said.iter().any(|l| l.contains("the notes' cache could not be written")), "{said:?}");
    assert_eq!([&o[43]["owes"], &o[45]["owes"]], [true, false]);
    assert_eq!(o[46]["answer"]["history"][0]["operation"], "EXTERNAL_EDIT");
}

/// A derived file the store cannot take (the semantic index, held by another
/// program) is left out and the journal entry behind it written, not owed; after
/// a record that fails, the records left are owed, the derived file dropped.
/// (plugin/test/host.test.ts holds the same case for the TypeScript host.)
#[test]
fn a_derived_file_is_never_owed_and_holds_up_no_record() {
    let index = StoreWrite::put("semantic/index.jsonl", "{}\n");
    let entry = StoreWrite::put("journal/a.json", "{}");
    let log = StoreWrite::put("log/main.public.film/00000000000000000001.json", "{}");
    let (mut host, mut e) = (Memory::default(), Engine::open(vec![], vec![]));
    host.held.insert(index.path.clone());
    assert_eq!(driver::keep(&mut e, &mut host, &[index.clone(), entry.clone()]), Ok(()));
    assert_eq!((host.store.get(&entry.path).map(String::as_str), e.owed()), (Some("{}"), 0));
    host.store_fails = true;
    let behind = driver::keep(&mut e, &mut host, &[log.clone(), index, entry.clone()]).unwrap_err();
    assert_eq!(behind.not_recorded, [log.path, entry.path]);
    assert_eq!(e.owed(), 2);
}
