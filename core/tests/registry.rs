//! Every operation of the registry, run once through the driver on the film
//! diary: a table of one valid call each (with the setup it needs), and what every
//! front door relies on: unknown arguments refused naming the allowed ones, a
//! journaled write leaving a journal entry, a read writing nothing. A new
//! operation fails `every_operation_has_a_case` until it has a row here.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{Disk, Host, T0};
use datanotes_core::ops::registry::{Access, OPS};
use datanotes_core::Status;
use serde_json::{json, Value};

const CHARADE: &str = "datanotes/main/public/film/Charade.md";
const NOSFERATU: &str = "datanotes/main/public/film/Nosferatu.md";
const FILM_NIGHT: &str = "Notes/Film night.md";

/// A setup run before the call: its arguments, given the host.
type Case = fn(&mut Host) -> Value;

/// The migration of a first write to the film table (its log starts).
fn a_write(h: &mut Host) -> String {
    let a = h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    a["migration_id"].as_str().unwrap().to_string()
}

/// A proposal of one staged write (made by "test", the caller of every case).
fn a_proposal(h: &mut Host) -> String {
    let a = h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 3}, "proposal": "tidy"}));
    a["proposal"].as_str().unwrap().to_string()
}

const CASES: &[(&str, Case)] = &[
    ("describe_database", |_| json!({})),
    ("read_docs", |_| json!({"page": "reference/operations"})),
    ("create_table", |_| json!({"table": "studio", "name_from": "name", "columns": {"name": {"type": "text"}}})),
    ("drop_table", |_| json!({"table": "watch"})),
    ("rename_table", |_| json!({"table": "watch", "new_name": "viewing"})),
    ("add_column", |_| json!({"table": "film", "column": "country", "definition": {"type": "text"}})),
    ("drop_column", |_| json!({"table": "film", "column": "minutes"})),
    ("rename_column", |_| json!({"table": "film", "column": "minutes", "new_name": "runtime"})),
    ("alter_column", |_| json!({"table": "film", "column": "minutes", "definition": {"type": "number"}})),
    ("rename_value", |_| json!({"table": "film", "column": "status", "from": "to watch", "to": "wanted"})),
    ("add_check", |_| json!({"table": "film", "name": "recent", "check": {"year": {"gt": 1900}}})),
    ("drop_check", |_| json!({"table": "film", "name": "rating_range"})),
    (
        "create_view",
        |_| json!({"name": "liked", "table": "film", "where": {"rating": {"gte": 4}}, "order_by": "-rating"}),
    ),
    ("drop_view", |_| json!({"name": "to_watch"})),
    ("write_bases", |_| json!({})),
    ("rename_view", |_| json!({"name": "to_watch", "new_name": "wishlist"})),
    ("select_rows", |_| json!({"table": "film", "where": {"rating": {"gte": 4}}})),
    ("suggest_rows", |_| json!({"table": "person", "query": "grant"})),
    ("read_note", |_| json!({"path": CHARADE})),
    ("insert_row", |_| json!({"table": "person", "values": {"name": "Ernst Lubitsch"}})),
    ("insert_rows", |_| json!({"table": "person", "rows": [{"name": "Jean Renoir"}, {"name": "Yasujiro Ozu"}]})),
    ("update_row", |_| json!({"table": "film", "path": CHARADE, "set": {"rating": 4}})),
    ("update_rows", |_| json!({"table": "film", "where": {"status": "watched"}, "set": {"rating": 4}})),
    ("delete_rows", |_| json!({"table": "film", "paths": [NOSFERATU]})),
    ("merge_rows", |_| json!({"table": "person", "key": ["name"], "rows": [{"name": "Fritz Lang", "born": 1891}]})),
    ("batch", |_| {
        json!({"operations": [
            {"op": "update_row", "args": {"table": "film", "path": CHARADE, "set": {"rating": 4}}},
            {"op": "insert_row", "args": {"table": "person", "values": {"name": "Ernst Lubitsch"}}}]})
    }),
    ("check_table", |_| json!({})),
    ("infer_table", |_| json!({"table": "film"})),
    ("recompute_columns", |h| {
        // A watch moved to the cinema by hand while no engine ran: its label is stale.
        let w = "datanotes/main/public/watch/2026-09-25T2100.md";
        let text = h.disk.notes[w].replace("where: home", "where: cinema");
        h.disk.notes.insert(w.into(), text);
        h.e = h.disk.open(h.now);
        json!({"table": "watch"})
    }),
    ("list_migrations", |h| {
        a_write(h);
        json!({})
    }),
    ("undo_migration", |h| json!({"migration_id": a_write(h)})),
    ("show_migration", |h| json!({"migration_id": a_write(h)})),
    ("describe_history", |h| {
        a_write(h);
        json!({"table": "film"})
    }),
    ("table_changes", |h| {
        a_write(h);
        json!({"table": "film", "start_version": 0})
    }),
    ("blame_row", |h| {
        a_write(h);
        json!({"path": CHARADE})
    }),
    ("restore_table", |h| {
        a_write(h);
        json!({"table": "film", "version": 0})
    }),
    ("restore_database", |h| json!({"before_migration": a_write(h)})),
    ("vacuum_table", |h| {
        a_write(h);
        json!({"table": "film"})
    }),
    ("resolve_conflict", |h| {
        // Syncthing kept the other device's Charade beside this one's.
        let charade = "datanotes/main/public/film/Charade.md";
        let copy = "datanotes/main/public/film/Charade.sync-conflict-20261204-133000-ABCDEFG.md";
        let theirs = h.disk.notes[charade].replace("rating: 5", "rating: 3");
        h.disk.notes.insert(copy.into(), theirs);
        h.e = h.disk.open(h.now);
        json!({"path": copy, "keep": "copy"})
    }),
    ("repair_links", |h| {
        // The diary's note renamed by hand while no engine ran: the links to it follow.
        let to = "Notes/Friday film night.md";
        let text = h.disk.notes.remove(FILM_NIGHT).unwrap();
        h.disk.notes.insert(to.into(), text);
        h.e = h.disk.open(h.now);
        json!({"moves": [{"old_path": FILM_NIGHT, "path": to}]})
    }),
    ("sync_links", |h| {
        // A two-way link between films and their directors; Charade as if its
        // director had been Howard Hawks before a hand edit.
        h.ok(
            "batch",
            json!({"operations": [
            {"op": "add_column", "args": {"table": "person", "column": "directed",
                "definition": {"type": "list", "items": "link", "table": "film", "inverse": "director"}}},
            {"op": "alter_column", "args": {"table": "film", "column": "director",
                "definition": {"type": "link", "table": "person", "inverse": "directed"}}}]}),
        );
        json!({"rows": [{"table": "film", "path": CHARADE, "before": {"director": "[[Howard Hawks]]"}}]})
    }),
    ("list_changes", |h| {
        a_write(h);
        json!({"since": 0})
    }),
    ("list_webhooks", |_| json!({})),
    ("create_webhook", |_| json!({"url": "https://example.com/hook", "tables": ["film"]})),
    ("confirm_webhook", |h| {
        // A webhook that came in a file no device owns waits for a device's person.
        let hook = json!({"id": "wh_synced", "url": "https://example.com/hook", "filter": {}, "secret": "s",
            "cursor": 0, "status": "ok"});
        h.disk.store.insert("webhooks.json".into(), json!({"format": 1, "webhooks": [hook]}).to_string());
        h.e = h.disk.open(T0);
        h.e.seed(&[7; 32]);
        h.e.set_device("me").unwrap();
        json!({"id": "wh_synced"})
    }),
    ("delete_webhook", |h| {
        let a = h.ok("create_webhook", json!({"url": "https://example.com/hook"}));
        json!({"id": a["webhook"]["id"]})
    }),
    ("list_proposals", |h| {
        a_proposal(h);
        json!({})
    }),
    ("show_proposal", |h| json!({"proposal": a_proposal(h)})),
    ("accept_proposal", |h| json!({"proposal": a_proposal(h)})),
    ("reject_proposal", |h| json!({"proposal": a_proposal(h), "message": "Not now"})),
    ("withdraw_proposal", |h| json!({"proposal": a_proposal(h)})),
    ("configure_database", |_| json!({"journalRetentionDays": 30})),
    ("sync_semantic_index", |_| json!({})),
    ("semantic_search", |_| json!({"query": "a thriller in Paris", "table": "film", "where": {"year": {"gt": 1950}}})),
];

/// Operations the plugin's wasm engine refuses until its host gives it a model.
const NOT_IN_WASM: [&str; 2] = ["sync_semantic_index", "semantic_search"];

fn films() -> Host {
    let mut h = Host::new(Disk::films(), T0);
    h.e = h.disk.open(T0);
    h.e.seed(&[7; 32]);
    h.step = 1000;
    h
}

#[test]
fn every_operation_has_a_case() {
    let missing: Vec<&str> = OPS.iter().map(|o| o.name).filter(|n| !CASES.iter().any(|(c, _)| c == n)).collect();
    assert!(missing.is_empty(), "operations with no case here: {missing:?}");
    let unknown: Vec<&str> = CASES.iter().map(|(c, _)| *c).filter(|c| !OPS.iter().any(|o| o.name == *c)).collect();
    assert!(unknown.is_empty(), "cases of no registered operation: {unknown:?}");
}

#[test]
fn every_operation_runs_on_the_film_diary() {
    for (name, case) in CASES {
        let spec = OPS.iter().find(|o| o.name == *name).unwrap();
        let mut h = films();
        let args = case(&mut h);
        let (notes, store) = (h.disk.notes.clone(), h.disk.store.clone());
        let journal = h.ok("list_migrations", json!({}))["total"].as_u64().unwrap();
        let out = h.call(name, args.clone());
        if cfg!(target_arch = "wasm32") && NOT_IN_WASM.contains(name) {
            assert_eq!(out.status, Status::Refused, "{name}: {:#}", out.answer);
            continue;
        }
        assert_eq!(out.status, Status::Ok, "{name} {args}: {:#}", out.answer);
        // The answer is of the shape MCP's outputSchema and OpenAPI's 200 name.
        if let Err(why) = valid(&spec.answer_schema(), &out.answer, "") {
            panic!("{name}: the answer does not match its schema: {why}\n{:#}", out.answer);
        }
        match spec.access {
            Access::Read => {
                assert!(h.disk.notes == notes, "{name} is a read: no note changes");
                // But for what is derived: semantic_search keeps the stored index up.
                let mut after = h.disk.store.clone();
                after.retain(|p, _| !p.starts_with("semantic/"));
                assert!(after == store, "{name} is a read: the store is as it was");
            }
            _ if spec.journaled => {
                assert!(h.disk.notes != notes, "{name} writes notes");
                let id = out.answer["migration_id"].as_str().unwrap_or_else(|| panic!("{name}: {:#}", out.answer));
                assert!(h.disk.store.contains_key(&format!("journal/{id}.json")), "{name} is journaled");
                let after = h.ok("list_migrations", json!({}))["total"].as_u64().unwrap();
                assert_eq!(after, journal + 1, "{name}: one entry more");
            }
            // Settings, webhooks and vacuum change the store alone, unjournaled.
            _ => {
                assert!(h.disk.notes == notes, "{name} touches no note");
                assert_eq!(h.ok("list_migrations", json!({}))["total"].as_u64().unwrap(), journal, "{name}");
            }
        }
    }
}

#[test]
fn every_operation_refuses_an_unknown_argument_naming_its_own() {
    let mut h = films();
    for spec in OPS {
        let out = h.call(spec.name, json!({"no_such_argument": 1}));
        assert_eq!(out.status, Status::BadInput, "{}: {:#}", spec.name, out.answer);
        let text = out.answer["error"].as_str().unwrap();
        assert!(text.contains("unknown argument \"no_such_argument\""), "{}: {text}", spec.name);
        // A refusal is typed too: the refusal's half of the outputSchema.
        assert_eq!(valid(&spec.output_schema()["anyOf"][1], &out.answer, ""), Ok(()), "{}", spec.name);
        assert_eq!(valid(&spec.output_schema(), &out.answer, ""), Ok(()), "{}", spec.name);
        assert_eq!(out.answer["kind"], "bad_input", "{}", spec.name);
        assert!(out.answer["reasons"].as_array().is_some_and(|r| !r.is_empty()), "{}", spec.name);
        for p in spec.params {
            assert!(text.contains(p.name), "{} names {} among its arguments: {text}", spec.name, p.name);
        }
    }
}

#[test]
fn every_operation_refuses_arguments_that_are_not_an_object() {
    let mut h = films();
    for spec in OPS {
        let out = h.call(spec.name, json!([1, 2]));
        assert_eq!(out.status, Status::BadInput, "{}", spec.name);
        assert!(out.answer["error"].as_str().unwrap().contains("must be a JSON object"), "{}", spec.name);
    }
}

/// Issue 54, point 3: what the engine and the front doors must know of an
/// operation is in its registry entry (`OpSpec::facts`), never in a comparison
/// of its name. This reads the sources of core, the binary, the SDK and the
/// plugin for `== "<an operation's name>"` (and `!=`, `===`, `!==`, either
/// side). The plugin's words for each operation (display.ts) are a table of
/// text, keyed by name, and the registry itself names them all.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn no_operation_name_is_compared_outside_the_registry() {
    use std::path::{Path, PathBuf};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let allowed = ["core/src/ops/registry.rs", "plugin/src/display.ts"];
    fn files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs" || x == "ts") {
                out.push(p);
            }
        }
    }
    let mut all = vec![];
    for d in ["core/src", "bridge/src", "sdk/src", "plugin/src"] {
        files(&root.join(d), &mut all);
    }
    let mut found = vec![];
    for f in all {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        if allowed.contains(&rel.as_str()) || rel.ends_with("sdk/src/registry.ts") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        // A Rust file's tests may name operations: they call them.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (n, line) in code.lines().enumerate() {
            for op in datanotes_core::ops::registry::OPS {
                let quoted = format!("\"{}\"", op.name);
                let Some(at) = line.find(&quoted) else { continue };
                let before = line[..at].trim_end();
                let after = line[at + quoted.len()..].trim_start();
                let compared = ["==", "!=", "==="].iter().any(|o| before.ends_with(o))
                    || ["==", "!="].iter().any(|o| after.starts_with(o));
                if compared {
                    found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "operation names compared outside the registry:\n{}", found.join("\n"));
}

/// Issue 55, point 8: an agent reads a tool's description before it calls it,
/// so each says what the operation changes, what it answers and how to undo
/// it, in two sentences at least.
#[test]
fn every_description_says_what_changes_what_it_answers_and_how_to_undo() {
    for op in OPS {
        let d = op.description;
        let sentences = d.split_terminator(". ").count() + usize::from(!d.ends_with('.'));
        assert!(sentences >= 2 && d.ends_with('.'), "{}: two sentences at least: {d}", op.name);
        assert!(d.contains("Answers ") || d.contains("answers "), "{}: says what it answers: {d}", op.name);
        match op.access {
            Access::Read => assert!(d.starts_with("Changes n"), "{}: a read says it changes nothing: {d}", op.name),
            _ => {
                let undo = d.split("Undo: ").nth(1).unwrap_or_else(|| panic!("{}: says how to undo it: {d}", op.name));
                if op.journaled {
                    assert!(
                        undo.contains("undo_migration"),
                        "{}: a journaled write is undone by undo_migration: {d}",
                        op.name
                    );
                }
            }
        }
    }
}

/// Whether `v` matches `schema`, for the part of JSON Schema the registry's
/// answer schemas use (type, const, required, properties, items, anyOf).
fn valid(schema: &Value, v: &Value, at: &str) -> Result<(), String> {
    if let Some(c) = schema.get("const") {
        if c != v {
            return Err(format!("{at}: {v} is not {c}"));
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            t => t.as_str().into_iter().collect(),
        };
        let is = |ty: &str| match ty {
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "number" => v.is_number(),
            "boolean" => v.is_boolean(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            "null" => v.is_null(),
            _ => false,
        };
        if !types.iter().any(|ty| is(ty)) {
            return Err(format!("{at}: {v} is not of type {t}"));
        }
    }
    for k in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
        let k = k.as_str().unwrap();
        if v.get(k).is_none() {
            return Err(format!("{at}: lacks {k}"));
        }
    }
    for (k, s) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        if let Some(x) = v.get(k) {
            valid(s, x, &format!("{at}.{k}"))?;
        }
    }
    if let (Some(items), Some(xs)) = (schema.get("items"), v.as_array()) {
        for (i, x) in xs.iter().enumerate() {
            valid(items, x, &format!("{at}[{i}]"))?;
        }
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        let whys: Vec<String> = any.iter().filter_map(|s| valid(s, v, at).err()).collect();
        if whys.len() == any.len() {
            return Err(format!("{at}: matches none of anyOf: {}", whys.join("; ")));
        }
    }
    Ok(())
}

#[test]
fn the_schema_check_can_fail() {
    let answer = OPS.iter().find(|o| o.name == "select_rows").unwrap().output_schema();
    assert!(valid(&answer, &json!({"table": "main.public.film", "total": 1, "rows": [{"path": "a.md"}]}), "").is_ok());
    assert!(valid(&answer, &json!({"table": "main.public.film", "total": "1", "rows": []}), "").is_err());
    assert!(valid(&answer, &json!({"table": "main.public.film", "total": 1, "rows": [{"title": "x"}]}), "").is_err());
    assert!(valid(&answer, &json!({"ok": false, "op": "select_rows", "error": "no"}), "").is_ok());
    assert!(valid(&answer, &json!({"ok": false, "op": "select_rows"}), "").is_err());
    let write = OPS.iter().find(|o| o.name == "insert_row").unwrap().answer_schema();
    assert!(
        valid(
            &write,
            &json!({"ok": true, "op": "update_row", "summary": "", "notes_changed": 0,
        "files_changed": 0, "planned_edits": []}),
            ""
        )
        .is_err(),
        "op is the operation's own"
    );
}
