//! A fuzz target per parser: front matter, filters, templates, metastore.yaml,
//! the notes' cache and the operations' arguments. Each mutates real inputs (the film diary, the
//! docs' examples) for a time budget and checks what must always hold: no panic,
//! and each parser's own promise (an edit reads back, a schema written reads
//! back the same). `DATANOTES_FUZZ_SECS` sets the budget per target (2 s in
//! `make test`, 120 s in `make fuzz`); a finding is saved under
//! target/fuzz-findings/ and fails the test. No libFuzzer: it needs a nightly
//! toolchain, and these run on stable in the normal suite.

// Property runs and the shape checks are long or read files: native only.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::{film_diary, Disk, Host, Rng, T0};
use datanotes_core::filter::Filter;
use datanotes_core::frontmatter;
use datanotes_core::notecache::NoteStat;
use datanotes_core::ops::registry::{Ty, OPS};
use datanotes_core::schema::Schema;
use datanotes_core::template::Template;
use datanotes_core::{Engine, NoteFile, Status, Step};
use serde_json::{json, Map, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// Bits of syntax the mutations splice in: what parsers trip on.
const TOKENS: &[&str] = &[
    "---\n",
    "\n",
    "\r\n",
    ": ",
    ":",
    "- ",
    "  ",
    "\t",
    "#",
    "'",
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    "&a ",
    "*a",
    "!!str ",
    "!tag ",
    "|\n",
    ">-\n",
    "? ",
    "...\n",
    "%YAML 1.2\n",
    "\u{feff}",
    "\u{0}",
    "\u{2028}",
    "é",
    "e\u{301}",
    "[[",
    "]]",
    "{{",
    "}}",
    "|upper",
    "|%Y",
    "%d",
    "1e3",
    "-0",
    "0x1F",
    ".inf",
    "~",
    "null",
    "true",
    "2026-02-30",
    "9999999999999999999999",
    "title",
    "year",
    "rating",
    "kind",
    "parent",
    "film.title",
    "occurred_at",
    "{",
    "}",
];

fn budget() -> Duration {
    let secs = std::env::var("DATANOTES_FUZZ_SECS").ok().and_then(|s| s.parse::<f64>().ok()).unwrap_or(2.0);
    Duration::from_secs_f64(secs)
}

/// A mutation of `seed`: bytes flipped, spans cut, copied or swapped, tokens
/// spliced in; always valid UTF-8 (the hosts hand the engine text).
fn mutate(rng: &mut Rng, seed: &str) -> String {
    let mut s: Vec<char> = seed.chars().collect();
    for _ in 0..1 + rng.below(6) {
        let at = if s.is_empty() { 0 } else { rng.below(s.len() + 1) };
        match rng.below(6) {
            0 => {
                let tok: Vec<char> = rng.pick(TOKENS).chars().collect();
                s.splice(at..at, tok);
            }
            1 if !s.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(s.len());
                s.drain(at.min(end)..end);
            }
            2 if !s.is_empty() => {
                let from = rng.below(s.len());
                let span: Vec<char> = s[from..(from + 1 + rng.below(32)).min(s.len())].to_vec();
                s.splice(at..at, span);
            }
            3 if at < s.len() => s[at] = char::from_u32(rng.below(0x250) as u32).unwrap_or('x'),
            4 => s.insert(at, *rng.pick(&[' ', '\n', ':', '-', '"', '\'', '[', '{', '#', '|'])),
            _ => s.truncate(at),
        }
    }
    s.into_iter().collect()
}

fn mutated(rng: &mut Rng, seeds: &[String]) -> String {
    let seed = rng.pick(seeds).clone();
    mutate(rng, &seed)
}

/// Runs `check` on inputs made by `make` until the budget is spent; a panic is a
/// finding, saved with its input. Returns the number of inputs tried.
fn fuzz(target: &str, mut make: impl FnMut(&mut Rng) -> String, mut check: impl FnMut(&str)) -> u64 {
    let started = Instant::now();
    let mut rng = Rng(0x5eed ^ target.len() as u64 ^ started.elapsed().as_nanos() as u64 | 1);
    let mut tried = 0;
    let mut findings = vec![];
    while started.elapsed() < budget() {
        let input = make(&mut rng);
        tried += 1;
        if let Err(p) = catch_unwind(AssertUnwindSafe(|| check(&input))) {
            let why = p.downcast_ref::<String>().cloned().or(p.downcast_ref::<&str>().map(|s| s.to_string()));
            findings.push((input, why.unwrap_or_default()));
            if findings.len() >= 5 {
                break;
            }
        }
    }
    if !findings.is_empty() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/fuzz-findings");
        let _ = std::fs::create_dir_all(dir);
        for (i, (input, _)) in findings.iter().enumerate() {
            let _ = std::fs::write(format!("{dir}/{target}-{i}.txt"), input);
        }
        let shown: Vec<String> = findings.iter().map(|(i, w)| format!("{i:?}\n  -> {w}")).collect();
        panic!("{target}: {} findings (saved in {dir}):\n{}", findings.len(), shown.join("\n"));
    }
    println!("{{\"target\": \"{target}\", \"inputs\": {tried}, \"seconds\": {:.1}}}", started.elapsed().as_secs_f64());
    tried
}

fn note_seeds() -> Vec<String> {
    let mut seeds: Vec<String> = film_diary().into_iter().filter(|(p, _)| p.ends_with(".md")).map(|(_, t)| t).collect();
    seeds.extend(
        [
            "",
            "---\n---\n",
            "---\r\na: 1\r\n---\r\nbody",
            "\u{feff}---\na: [1, 2]\nb: {c: d}\n---\n",
            "---\na: |\n  x\n  y\nb: 'q''s'\n---\n",
        ]
        .map(String::from),
    );
    seeds
}

#[test]
fn fuzz_front_matter() {
    let seeds = note_seeds();
    let value = json!("new: value #1");
    fuzz(
        "front_matter",
        |rng| mutated(rng, &seeds),
        |text| {
            let before = frontmatter::parse(text);
            let edited = frontmatter::edit(text, &[("rating", &json!(4)), ("fuzz", &value)], &["year"]);
            let _ = frontmatter::set_body(text, "body\n---\n");
            if before.is_ok() {
                // The edit's promise: the keys set read back, the key removed is gone.
                let after = frontmatter::parse(&edited)
                    .unwrap_or_else(|e| panic!("the edit of a readable note cannot be read: {e}\n{edited:?}"));
                assert_eq!(after.values.get("rating"), Some(&json!(4)), "{edited:?}");
                assert_eq!(after.values.get("fuzz"), Some(&value), "{edited:?}");
                assert!(!after.values.contains_key("year"), "{edited:?}");
            }
        },
    );
}

fn filter_seeds() -> Vec<String> {
    [
        r#"{"rating": {"gte": 4}}"#,
        r#"{"or": [{"kind": "cinema", "parent": {"exists": false}}, {"kind": "era", "parent.kind": "cinema"}]}"#,
        r#"{"status": {"in": ["watched", "to watch"]}, "not": {"year": {"lt": 1930}}}"#,
        r#"{"director.name": {"contains": "Lang"}, "tags": {"has": "seen-2026"}}"#,
        r#"{"and": [{"title": {"starts_with": "The"}}, {"genres.kind": "genre"}]}"#,
        r#"{"occurred_at": {"gte": "2026-09-01"}, "film.year": {"between": [1920, 1940]}}"#,
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn fuzz_filters() {
    let seeds = filter_seeds();
    let mut h = Host::new(Disk::films(), T0);
    h.e = h.disk.open(T0);
    fuzz(
        "filter",
        |rng| mutated(rng, &seeds),
        |text| {
            let Ok(json) = serde_json::from_str::<Value>(text) else { return };
            if let Ok(f) = Filter::parse(&json) {
                // Its JSON form compiles again.
                Filter::parse(&f.to_json()).unwrap_or_else(|e| panic!("{} does not parse back: {e}", f.to_json()));
            }
            for table in ["film", "genre", "watch"] {
                let out = h.call("select_rows", json!({"table": table, "where": json}));
                assert!(matches!(out.status, Status::Ok | Status::BadInput), "{}", out.answer);
            }
        },
    );
}

#[test]
fn fuzz_templates() {
    let seeds: Vec<String> = [
        "{title}",
        "{year} {title}",
        "{occurred_at|%Y-%m-%dT%H%M}",
        "{film.title} ({occurred_at|%d/%m %H:%M}, {where})",
        "{occurred_at|date}",
        "{g.kind|upper} {{x}}",
    ]
    .map(String::from)
    .to_vec();
    let mut h = Host::new(Disk::films(), T0);
    h.e = h.disk.open(T0);
    fuzz(
        "template",
        |rng| mutated(rng, &seeds),
        |src| {
            let _ = Template::parse(src);
            // Through the engine: a generated column checked against every row.
            let out = h.call(
                "add_column",
                json!({"table": "watch", "column": "fz", "definition": {"type": "text", "generated": src}, "dry_run": true}),
            );
            assert!(matches!(out.status, Status::Ok | Status::BadInput | Status::Refused), "{}", out.answer);
        },
    );
}

#[test]
fn fuzz_notes_cache() {
    // The film diary's notes, an hour old, and the cache an open through it writes.
    const OLD: i64 = T0 - 3_600_000;
    let notes: Vec<NoteFile> =
        film_diary().into_iter().map(|(path, text)| NoteFile { path, text, mtime: OLD }).collect();
    let stats: Vec<NoteStat> =
        notes.iter().map(|f| NoteStat { path: f.path.clone(), size: f.text.len() as u64, mtime: f.mtime }).collect();
    let metastore = film_diary()["datanotes/metastore.yaml"].clone();
    let mut e = Engine::open_with_cache(notes.clone(), vec![], None, vec![], T0);
    let seed = e.take_cache().expect("the first open writes the cache").text;
    let films = notes.iter().filter(|f| f.path.contains("/film/")).count();
    fuzz(
        "notes cache",
        |rng| mutate(rng, &seed),
        |text| {
            let plan = Engine::plan_open(stats.clone(), Some(text), Some(&metastore));
            let wanted: std::collections::HashSet<String> = plan.wanted.iter().cloned().collect();
            let read = notes.iter().filter(|f| wanted.contains(&f.path)).cloned().collect();
            let mut e = Engine::open_cached(plan, read, vec![], T0);
            // Whatever the file holds, every film is a row of the film table, once.
            let step = e.call("select_rows", json!({"table": "film", "columns": ["title"]}), "fuzz", T0);
            let Step::Done(out) = step else { panic!("select_rows asked for more") };
            assert_eq!(out.answer["total"], films, "{}", out.answer);
        },
    );
}

#[test]
fn fuzz_metastore() {
    let seed = film_diary()["datanotes/metastore.yaml"].clone();
    let spliced = std::cell::Cell::new(0u64);
    fuzz(
        "metastore",
        |rng| mutate(rng, &seed),
        |text| {
            if let Ok(s) = Schema::parse(text) {
                // What the engine writes reads back as the same schema.
                let again = Schema::parse(&s.to_yaml()).unwrap_or_else(|e| panic!("{e}\n{}", s.to_yaml()));
                assert_eq!(again.to_yaml(), s.to_yaml());
                // A change spliced into the person's text (or, failing that, the
                // file written anew) reads back as the changed schema.
                let mut new = s.clone();
                let names: Vec<String> = new.tables.keys().cloned().collect();
                if let (Some(first), Some(last)) = (names.first(), names.last()) {
                    let t = new.tables.get_mut(first).unwrap();
                    if let Some((_, def)) = t.columns.first().cloned() {
                        t.columns.push(("fuzz_added".into(), def));
                    }
                    t.description = Some("changed: by the fuzzer".into());
                    let t = new.tables.get_mut(last).unwrap();
                    if t.columns.len() > 1 {
                        t.columns.pop();
                    }
                }
                // The engine splices only schemas that hold (a column a rule names stays).
                if new.clone().compile().is_err() {
                    return;
                }
                let out = datanotes_core::metastore_text::rewrite(Some(text), &s, &new);
                let back = Schema::parse(&out).unwrap_or_else(|e| panic!("{e}\n{out}"));
                assert!(back.tables == new.tables, "the splice read back as another schema:\n{out}");
                if out != new.to_yaml() {
                    spliced.set(spliced.get() + 1);
                }
            }
        },
    );
    // Most mutants still read as a schema: the splice itself must have been tried.
    assert!(spliced.get() > 0, "no input was spliced");
    println!("{{\"target\": \"metastore splice\", \"spliced\": {}}}", spliced.get());
}

/// A random value of an argument's type, sometimes of another type.
fn value_of(rng: &mut Rng, ty: Ty, depth: usize) -> Value {
    let words = [
        "film",
        "genre",
        "watch",
        "person",
        "title",
        "year",
        "rating",
        "Charade",
        "datanotes/main/public/film/Charade.md",
        "",
        "../x",
        "é",
    ];
    let ty = if rng.below(8) == 0 { *rng.pick(&[Ty::Str, Ty::Int, Ty::Bool, Ty::Obj, Ty::Arr]) } else { ty };
    match ty {
        Ty::Str => {
            let w = *rng.pick(&words);
            json!(mutate(rng, w))
        }
        Ty::Int => json!(*rng.pick(&[0i64, 1, -1, 3, 1_000_000_000_000, i64::MIN])),
        Ty::Bool => json!(rng.below(2) == 0),
        Ty::StrList | Ty::StrOrList | Ty::Arr if depth < 3 => {
            Value::Array((0..rng.below(4)).map(|_| value_of(rng, Ty::Str, depth + 1)).collect())
        }
        Ty::Obj | Ty::Any if depth < 3 => {
            let mut m = Map::new();
            for _ in 0..rng.below(4) {
                let k = rng.pick(&["title", "year", "rating", "status", "tags", "type", "gte", "or", "x"]);
                let t = *rng.pick(&[Ty::Str, Ty::Int, Ty::Obj, Ty::Arr]);
                m.insert(k.to_string(), value_of(rng, t, depth + 1));
            }
            Value::Object(m)
        }
        _ => Value::Null,
    }
}

#[test]
fn fuzz_operation_arguments() {
    let mut h = Host::new(Disk::films(), T0);
    h.e = h.disk.open(T0);
    h.step = 1000;
    let mut calls = vec![];
    fuzz(
        "arguments",
        |rng| {
            let spec = rng.pick(OPS);
            let mut args = Map::new();
            for p in spec.params {
                if p.required || rng.below(2) == 0 {
                    args.insert(p.name.to_string(), value_of(rng, p.ty, 0));
                }
            }
            if rng.below(10) == 0 {
                args.insert("unknown".into(), json!(1));
            }
            json!({"op": spec.name, "args": args}).to_string()
        },
        |call| {
            let c: Value = serde_json::from_str(call).unwrap();
            let out = h.call(c["op"].as_str().unwrap(), c["args"].clone());
            assert!(out.answer.is_object() || out.status == Status::Ok, "{}", out.answer);
            if out.status != Status::Ok {
                assert!(out.answer["error"].as_str().is_some_and(|e| !e.is_empty()), "{}", out.answer);
            }
            calls.push(c["op"].as_str().unwrap_or_default().to_string());
        },
    );
    // What the calls did, the engine can still read, and a fresh one too.
    h.ok("describe_database", json!({}));
    let again = h.disk.open(h.now + 1000);
    assert!(again.vault().notes.len() >= film_diary().len() - 1, "{calls:?}");
}

/// Store files as another device's engine writes them, mutated and planted
/// under that device's name (issue 52): whatever they hold, an engine opened on
/// them, or handed them by a sync while it runs, never panics, and no undo or
/// restore built from them writes anything but the tables' notes.
#[test]
fn fuzz_store_files_of_another_device() {
    use datanotes_core::driver::{self, Memory};
    use datanotes_core::StoreFile;
    let charade = "datanotes/main/public/film/Charade.md";
    // One write and one webhook of device "a", to take the store's files from.
    let mut base = Memory::new(film_diary());
    let open = |disk: &mut Memory, device: &str, now: i64| {
        let notes = disk.notes.iter().map(|(p, t)| NoteFile { path: p.clone(), text: t.clone(), mtime: 0 }).collect();
        let store = disk.store.iter().map(|(p, t)| StoreFile(p.clone(), Some(t.clone()))).collect();
        let mut e = Engine::open_listed(notes, store, now);
        e.set_device(device).unwrap();
        e.set_device_key(&[device.len() as u8; 32]).unwrap();
        e.seed(&[3u8; 32]);
        let _ = driver::start(&mut e, disk, now);
        e
    };
    let mut e = open(&mut base, "a", T0);
    for (op, args) in [
        ("update_row", json!({"table": "film", "path": charade, "set": {"rating": 2}})),
        ("insert_row", json!({"table": "film", "values": {"title": "Fuzz", "year": 2000}})),
        ("delete_rows", json!({"table": "film", "paths": ["datanotes/main/public/film/Fuzz.md"]})),
        ("create_webhook", json!({"url": "https://example.com/hook"})),
        ("configure_database", json!({"journalRetentionDays": 30})),
    ] {
        let out = driver::call(&mut e, &mut base, op, &args, "fuzz", T0 + 1000);
        assert_eq!(out.status, Status::Ok, "{op}: {}", out.answer);
    }
    drop(e);
    let seeds: Vec<(String, String)> = base
        .store
        .iter()
        .filter(|(p, _)| !p.starts_with("blobs/") && !p.starts_with("cache/") && !p.starts_with("known."))
        .map(|(p, t)| (p.clone(), t.clone()))
        .collect();
    let texts: Vec<String> = seeds.iter().map(|(_, t)| t.clone()).collect();
    let outside = |m: &Memory| -> Vec<String> {
        m.notes.keys().filter(|p| !p.starts_with("datanotes/") || !p.ends_with(".md")).cloned().collect()
    };
    let planted = std::cell::RefCell::new(String::new());
    fuzz(
        "store files of another device",
        |rng| {
            let (path, _) = rng.pick(&seeds).clone();
            *planted.borrow_mut() = path.replace(".a.", ".evil.").replace(".a-", ".evil-");
            mutated(rng, &texts)
        },
        |text| {
            let path = planted.borrow().clone();
            let mut disk = Memory::new(base.notes.clone());
            disk.store = base.store.clone();
            let before = outside(&disk);
            disk.store.insert(path.clone(), text.to_string());
            let mut e = open(&mut disk, "me", T0 + 2000);
            let _ = e.store_synced(vec![(path.clone(), Some(text.to_string()))], T0 + 2500);
            let ids = driver::call(&mut e, &mut disk, "list_migrations", &json!({}), "fuzz", T0 + 3000);
            for m in ids.answer["migrations"].as_array().cloned().unwrap_or_default() {
                let args = json!({"migration_id": m["migration_id"]});
                driver::call(&mut e, &mut disk, "undo_migration", &args, "fuzz", T0 + 4000);
            }
            for v in 0..4 {
                driver::call(
                    &mut e,
                    &mut disk,
                    "restore_table",
                    &json!({"table": "film", "version": v}),
                    "fuzz",
                    T0 + 5000,
                );
            }
            driver::tick(&mut e, &mut disk, T0 + 10_000);
            assert_eq!(outside(&disk), before, "{path}: nothing written outside the tables' notes");
        },
    );
}
