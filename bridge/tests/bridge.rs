//! Issue 13, point 1: `serve` on a vault a live engine holds attaches to it (a
//! bridge) instead of refusing: the same answers, status codes and actors, every
//! call made by the engine that holds the vault; when that engine goes away the
//! bridge answers 503 with the way out, and once it is gone for good it exits.

mod common;

use common::{datanotes_as, op_as, start, vault, wait_until};
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "bridge-test-token-81c3e2a4f9";
const CHARADE: &str = "datanotes/main/public/film/Charade.md";

#[test]
fn a_second_serve_is_a_bridge_to_the_engine_that_holds_the_vault() {
    let dir = vault("bridge");
    let holder = start(&dir, Some(TOKEN));
    let mut bridge = start(&dir, Some(TOKEN));
    bridge.keep = true;
    assert!(bridge.stdout.contains(&format!("attached to process {}", holder.child.id())), "{}", bridge.stdout);

    // The same answers and status codes as the holder's.
    let read = json!({"table": "film", "where": {"rating": {"gte": 5}}, "columns": ["title"]});
    let (a, b) = (op_as(&holder, TOKEN, "select_rows", &read), op_as(&bridge, TOKEN, "select_rows", &read));
    assert_eq!((a.status, a.json()), (b.status, b.json()));
    let refused = op_as(&bridge, TOKEN, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 9}}));
    assert_eq!(refused.status, 409, "{}", refused.body);
    assert!(refused.error().contains("rating_range"), "{}", refused.body);
    assert_eq!(op_as(&bridge, "wrong", "describe_database", "{}").status, 401);

    // A named token keeps its name as the actor: the bridge forwards the caller's own token.
    let added = datanotes_as(&["token", "add", "--vault", dir.to_str().unwrap(), "agent-one"], Some(TOKEN));
    let named = added.stdout.split_whitespace().find(|w| w.len() == 64).unwrap_or_default().to_string();
    assert_eq!(named.len(), 64, "{added:?}");
    let w = op_as(&bridge, &named, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(w.status, 200, "{}", w.body);
    let by = op_as(&holder, TOKEN, "list_migrations", r#"{"limit": 1}"#).json();
    assert_eq!(by["migrations"][0]["by"], "agent-one", "{by}");
    assert!(holder.read(CHARADE).contains("\nrating: 4\n"), "written by the holder");

    // The holder goes away: 503 with the way out, then the bridge ends.
    drop(holder);
    let gone = op_as(&bridge, TOKEN, "describe_database", "{}");
    assert_eq!(gone.status, 503, "{}", gone.body);
    let answer: Value = gone.json();
    assert!(answer["error"].as_str().unwrap().ends_with("nothing was done"), "{answer}");
    assert!(answer["hint"].as_str().unwrap().contains("restart datanotes serve to hold the vault itself"), "{answer}");
    wait_until("the bridge to end", Duration::from_secs(30), || bridge.child.try_wait().unwrap().is_some());
    assert!(bridge.log().contains("no longer holds"), "{}", bridge.log());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bridge's cost (issue 13, "How fast"): select_rows of 100 rows through the
/// bridge and from the serve that holds the vault, p50 of 40 calls each, printed
/// as `datanotes-bench {...}` (figures, not assertions: a loaded machine must
/// not fail the tests).
#[test]
fn the_bridge_costs_little_over_the_holder() {
    let dir = vault("bridge-bench");
    let holder = start(&dir, Some(TOKEN));
    let mut bridge = start(&dir, Some(TOKEN));
    bridge.keep = true;
    let people: Vec<Value> = (0..100).map(|i| json!({"name": format!("Extra {i:03}"), "born": 1900 + i})).collect();
    assert_eq!(op_as(&holder, TOKEN, "insert_rows", json!({"table": "person", "rows": people})).status, 200);
    let read = json!({"table": "person", "where": {"name": {"starts_with": "Extra"}}, "limit": 100});
    let p50 = |s: &common::Server| {
        let mut ms: Vec<f64> = (0..40)
            .map(|_| {
                let t = std::time::Instant::now();
                let r = op_as(s, TOKEN, "select_rows", &read);
                assert_eq!(r.json()["rows"].as_array().map(Vec::len), Some(100));
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        ms[ms.len() / 2]
    };
    let (direct, bridged) = (p50(&holder), p50(&bridge));
    println!(
        "datanotes-bench {}",
        json!({"select_rows_100_direct_p50_ms": direct, "select_rows_100_bridged_p50_ms": bridged, "bridge_overhead_ms": bridged - direct})
    );
    drop(bridge);
    drop(holder);
}

/// How Obsidian's plugin runs the bridge (issue 13, point 2): `--bridge` never
/// opens the vault itself, `--exit-with-stdin` ends with the program that started
/// it (a killed Obsidian closes the pipe), and `--version` names the version the
/// plugin checks.
#[test]
fn a_bridge_child_attaches_only_and_ends_with_its_parent() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let version = datanotes_as(&["--version"], None);
    assert_eq!(version.stdout.trim(), format!("datanotes {}", env!("CARGO_PKG_VERSION")));

    let dir = vault("bridge-child");
    let v = dir.to_str().unwrap();
    let alone = datanotes_as(&["serve", "--vault", v, "--listen", "127.0.0.1:0", "--bridge"], Some(TOKEN));
    assert_eq!(alone.code, 1, "{}", alone.stderr);
    assert!(alone.stderr.contains("no engine holds") && alone.stderr.contains("without --bridge"), "{}", alone.stderr);
    assert!(!dir.join(".datanotes/lock").exists(), "a --bridge never takes the vault");

    let mut holder = start(&dir, Some(TOKEN));
    holder.keep = true;
    let mut child = Command::new(common::BIN)
        .args(["serve", "--vault", v, "--listen", "127.0.0.1:0", "--bridge", "--exit-with-stdin"])
        .env("DATANOTES_TOKEN", TOKEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut ready).unwrap();
    assert!(ready.contains("attached to process"), "{ready}");
    drop(child.stdin.take());
    wait_until("the child to end with its stdin", Duration::from_secs(10), || child.try_wait().unwrap().is_some());
    let mut log = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut log).unwrap();
    assert!(log.contains("stdin closed"), "{log}");
    // The holder is untouched: it still answers.
    assert_eq!(op_as(&holder, TOKEN, "describe_database", "{}").status, 200);
    drop(holder);
    let _ = std::fs::remove_dir_all(&dir);
}
