//! `serve` end to end, beyond the HTTP API itself: one engine per vault (the lock
//! file, `call` forwarding to a running serve), named tokens, the vault watcher
//! (hand edits in the change feed), webhook deliveries checked by a test server,
//! the long poll of list_changes, the docs pages. And, ignored by default (run
//! them with `cargo test --release -p datanotes --test serve_more -- --ignored
//! --nocapture`): a load test, the latency of a read over HTTP, and how soon
//! `datanotes mcp` answers its first tool call on a 10k-row vault.

mod common;

use common::{datanotes_as, op, op_as, request, start, temp_path, vault, wait_until, Server, BIN};
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOKEN: &str = "serve-more-token-7d2e41c9a0b8";
const CHARADE: &str = "datanotes/main/public/film/Charade.md";

// ---------------------------------------------------------------- helpers

fn lock_of(vault: &Path) -> Option<Value> {
    serde_json::from_str(&fs::read_to_string(vault.join(".datanotes/lock")).ok()?).ok()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

// ---------------------------------------------------------------- one engine per vault

#[test]
fn one_serve_per_vault_and_a_stale_lock_is_taken_over() {
    let dir = vault("lock");
    let mut first = start(&dir, Some(TOKEN));
    first.keep = true;
    let lock = lock_of(&dir).expect("serve writes .datanotes/lock");
    assert_eq!(lock["pid"], first.child.id(), "{lock}");
    assert_eq!(lock["address"], first.addr.as_str(), "{lock}");
    assert_eq!(lock["url"], format!("http://{}", first.addr), "{lock}");
    assert!(lock["started_at"].as_str().is_some_and(|t| t.ends_with('Z')), "{lock}");
    assert!(!lock.to_string().contains(TOKEN), "the lock holds no token");
    assert!(first.stdout.contains(" notes opened in "), "{}", first.stdout);

    // A second serve on the same vault opens no second engine: it attaches to the
    // first (issue 13: a bridge), naming it, and every call goes there.
    let mut bridge = start(&dir, Some(TOKEN));
    bridge.keep = true;
    assert!(
        bridge.stdout.contains(&format!("attached to process {} at http://{}", first.child.id(), first.addr)),
        "{}",
        bridge.stdout
    );
    assert_eq!(lock_of(&dir).unwrap()["pid"], first.child.id(), "the lock still names the first");
    drop(bridge);

    // Killed without a chance to clean up: the lock stays, stale, and the next
    // serve takes it over.
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    assert!(lock_of(&dir).is_some(), "a killed serve leaves its lock");
    let second = start(&dir, Some(TOKEN));
    assert!(second.log().contains("taking over the stale lock"), "{}", second.log());
    let lock = lock_of(&dir).unwrap();
    assert_eq!(lock["pid"], second.child.id());
    assert_eq!(lock["address"], second.addr.as_str());

    // Stopped properly (SIGTERM), it removes its lock.
    #[cfg(unix)]
    {
        let killed = Command::new("kill").args(["-TERM", &second.child.id().to_string()]).status().unwrap();
        assert!(killed.success());
        wait_until("the lock to go", Duration::from_secs(10), || lock_of(&dir).is_none());
    }
}

/// `datanotes mcp` on a vault, its stdin and stdout piped, initialized; killed when dropped.
struct Mcp {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    out: BufReader<std::process::ChildStdout>,
}

impl Mcp {
    fn start(dir: &Path) -> Mcp {
        let mut child = Command::new(BIN)
            .args(["mcp", "--vault"])
            .arg(dir)
            .env("DATANOTES_TOKEN", TOKEN)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (stdin, out) = (child.stdin.take(), BufReader::new(child.stdout.take().unwrap()));
        let mut m = Mcp { child, stdin, out };
        m.ask(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "alone-test", "version": "1"}}),
        );
        m.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        m
    }

    fn send(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{v}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    fn ask(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "mcp ended before answering {method}");
            let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if v["id"] == id {
                return v;
            }
        }
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn mcp_alone_holds_the_vault_so_others_forward_to_it() {
    let dir = vault("mcp-alone");
    let v = dir.to_str().unwrap();
    let mut m = Mcp::start(&dir);
    let lock = lock_of(&dir).expect("mcp alone writes .datanotes/lock");
    assert_eq!(lock["pid"], m.child.id(), "{lock}");

    // A serve attaches to it (a bridge, naming it); a call forwards to its engine.
    let mut bridge = start(&dir, Some(TOKEN));
    bridge.keep = true;
    assert!(bridge.stdout.contains(&format!("attached to process {}", m.child.id())), "{}", bridge.stdout);
    drop(bridge);
    let write = json!({"table": "film", "path": CHARADE, "set": {"rating": 2}}).to_string();
    let r = datanotes_as(&["call", "--vault", v, "update_row", &write], Some(TOKEN));
    assert_eq!(r.code, 0, "{r:?}");
    let a: Value = serde_json::from_str(&r.stdout).unwrap();
    // One engine: the write is in the journal the MCP session sees, as the call's, not a hand edit.
    let listed = m.ask(2, "tools/call", json!({"name": "list_migrations", "arguments": {"limit": 1}}));
    let top = &listed["result"]["structuredContent"]["migrations"][0];
    assert_eq!(top["migration_id"], a["migration_id"], "{listed}");
    assert_eq!(top["op"], "update_row", "{listed}");

    // Its stdin closed, it ends and its lock goes.
    m.stdin.take();
    wait_until("mcp to end", Duration::from_secs(10), || m.child.try_wait().unwrap().is_some());
    assert!(lock_of(&dir).is_none(), "the lock is gone");
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn call_forwards_to_the_running_serve() {
    let dir = vault("forward");
    let s = start(&dir, Some(TOKEN));
    let v = dir.to_str().unwrap();
    let write = json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}).to_string();

    // Without the token (serve took it from DATANOTES_TOKEN, so no token file):
    // a clear refusal, nothing done.
    let r = datanotes_as(&["call", "--vault", v, "update_row", &write], None);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("DATANOTES_TOKEN") && r.stderr.contains("is held by"), "{}", r.stderr);
    assert!(!fs::read_to_string(dir.join(CHARADE)).unwrap().contains("rating: 4"));

    let r = datanotes_as(&["call", "--vault", v, "update_row", &write], Some(TOKEN));
    assert_eq!(r.code, 0, "{r:?}");
    let a: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(a["ok"], true, "{}", r.stdout);
    assert!(fs::read_to_string(dir.join(CHARADE)).unwrap().contains("\nrating: 4\n"));
    // It went through the serve, not an engine of its own.
    wait_until("the request's log line", Duration::from_secs(5), || {
        s.log().contains("POST /datanotes/operations/update_row/ 200")
    });
    let r = datanotes_as(&["call", "--vault", v, "list_migrations", r#"{"limit": 1}"#], Some(TOKEN));
    assert_eq!(r.code, 0);
    let m: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(m["migrations"][0]["by"], "owner", "{}", r.stdout);
    assert_eq!(m["migrations"][0]["migration_id"], a["migration_id"]);

    // The same exit codes and answers as alone: refused 1, bad input 2.
    let r = datanotes_as(
        &[
            "call",
            "--vault",
            v,
            "update_row",
            &json!({"table": "film", "path": CHARADE, "set": {"rating": 9}}).to_string(),
        ],
        Some(TOKEN),
    );
    assert_eq!(r.code, 1, "{r:?}");
    let e: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(e["error"].as_str().unwrap().contains("update_row refused"), "{}", r.stdout);
    let r = datanotes_as(&["call", "--vault", v, "select_rows", r#"{"table": "film", "limt": 1}"#], Some(TOKEN));
    assert_eq!(r.code, 2, "{r:?}");
    assert!(r.stdout.contains("unknown argument"), "{}", r.stdout);
    // A wrong token: the serve cannot prove itself to it, so nothing is sent; 1,
    // and the reason on stderr.
    let r = datanotes_as(&["call", "--vault", v, "describe_database"], Some("not-the-token"));
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("cannot prove it holds the owner's token"), "{}", r.stderr);
}

// ---------------------------------------------------------------- named tokens

#[test]
fn named_tokens_add_list_revoke() {
    let dir = vault("tokens");
    let s = start(&dir, Some(TOKEN));
    let v = dir.to_str().unwrap();

    let r = datanotes_as(&["token", "add", "ci-bot", "--vault", v], None);
    assert_eq!(r.code, 0, "{r:?}");
    let token = r.stdout.trim().to_string();
    assert_eq!(token.len(), 64, "{token}");
    assert!(r.stderr.contains("shown this once"), "{}", r.stderr);
    assert_eq!(datanotes_as(&["token", "add", "ci-bot", "--vault", v], None).code, 1, "names are unique");
    assert_eq!(datanotes_as(&["token", "add", "owner", "--vault", v], None).code, 1, "owner is taken");
    assert_eq!(datanotes_as(&["token", "add", "a/b", "--vault", v], None).code, 1);

    let stored = fs::read_to_string(dir.join(".datanotes/tokens.json")).unwrap();
    assert!(!stored.contains(&token), "kept hashed: {stored}");
    let mut h = <Sha256 as sha2::Digest>::new();
    sha2::Digest::update(&mut h, token.as_bytes());
    assert!(stored.contains(&hex(&sha2::Digest::finalize(h))), "{stored}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir.join(".datanotes/tokens.json")).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "owner only");
    }

    let r = datanotes_as(&["token", "list", "--vault", v], None);
    assert_eq!(r.code, 0, "{r:?}");
    let list: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(list["tokens"][0]["name"], "ci-bot", "{}", r.stdout);
    assert!(list["tokens"][0]["created_at"].is_string());
    assert!(!r.stdout.contains(&token));

    // A write with the named token is journaled with its name, at once (the
    // running serve reads tokens.json again when it changes).
    let r = op_as(&s, &token, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 3}}));
    assert_eq!(r.status, 200, "{}", r.body);
    let m = op(&s, "list_migrations", json!({"limit": 1}));
    assert_eq!(m["migrations"][0]["by"], "ci-bot", "{m}");
    let feed = op(&s, "list_changes", json!({}));
    let last = feed["events"].as_array().unwrap().last().cloned().unwrap();
    assert!(last["actor"].to_string().contains("ci-bot"), "{last}");

    let r = datanotes_as(&["token", "revoke", "ci-bot", "--vault", v], None);
    assert_eq!(r.code, 0, "{r:?}");
    let r = op_as(&s, &token, "describe_database", json!({}));
    assert_eq!(r.status, 401, "a revoked token is refused: {}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("wrong bearer token"));
    assert_eq!(datanotes_as(&["token", "revoke", "ci-bot", "--vault", v], None).code, 1, "nothing left to revoke");
    // The owner's token still works.
    op(&s, "describe_database", json!({}));
}

// ---------------------------------------------------------------- the watcher

#[test]
fn a_hand_edit_while_serving_reaches_the_change_feed() {
    let dir = vault("watch");
    let s = start(&dir, Some(TOKEN));
    let head = op(&s, "list_changes", json!({}))["head"].as_u64().unwrap_or(0);

    let path = dir.join(CHARADE);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replace("year: 1963", "year: 1964")).unwrap();
    // A file that is not UTF-8 is skipped with a warning.
    fs::write(dir.join("datanotes/broken.md"), [0xff, 0xfe, 0x00, 0x41]).unwrap();

    let start_at = Instant::now();
    let feed = op(&s, "list_changes", json!({"since": head, "wait_ms": 10000}));
    let events = feed["events"].as_array().unwrap();
    assert!(!events.is_empty(), "within 10 s: {feed}");
    assert!(start_at.elapsed() < Duration::from_secs(10));
    let ev = events.iter().find(|e| e["path"] == CHARADE).unwrap_or_else(|| panic!("{feed}"));
    assert_eq!(ev["source"], "external", "{ev}");
    assert_eq!(ev["kind"], "update", "{ev}");
    assert_eq!(ev["changes"]["year"], json!({"before": 1963, "after": 1964}), "{ev}");
    wait_until("the UTF-8 warning", Duration::from_secs(5), || s.log().contains("broken.md is not UTF-8"));

    // A hand rename is one move.
    let head = feed["last"].as_u64().or(feed["head"].as_u64()).unwrap();
    fs::rename(dir.join(CHARADE), dir.join("datanotes/main/public/film/Charade (1963).md")).unwrap();
    let feed = op(&s, "list_changes", json!({"since": head, "wait_ms": 10000}));
    let ev = &feed["events"][0];
    assert_eq!(ev["kind"], "move", "{feed}");
    assert_eq!(ev["source"], "external", "{feed}");
    assert_eq!(ev["path"], "datanotes/main/public/film/Charade (1963).md", "{feed}");
    // A hand edit that breaks a rule is a warning in the log, named once.
    let metropolis = dir.join("datanotes/main/public/film/Metropolis.md");
    let text = fs::read_to_string(&metropolis).unwrap();
    fs::write(&metropolis, text.replace("rating: 5", "rating: 9")).unwrap();
    wait_until("the rule's warning", Duration::from_secs(10), || s.log().contains("datanotes: WARN hand edit of"));
    assert!(!s.log().contains("WARN WARN"), "{}", s.log());
}

/// A serve opened through the notes' cache answers before it has read the rows
/// (issue 17): they are read in the background. A row edited by hand right after
/// the open is reported once, whether that read or the watcher sees it first,
/// and a write still reads what it needs.
#[test]
fn a_serve_reopened_through_the_cache_reads_its_rows_later_and_reports_a_hand_edit_once() {
    let dir = vault("rows-later");
    // Written an hour ago, as a vault's notes are: the cache then vouches for them.
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    for table in ["film", "person", "watch"] {
        for e in fs::read_dir(dir.join("datanotes/main/public").join(table)).unwrap().flatten() {
            fs::File::options().write(true).open(e.path()).unwrap().set_modified(hour_ago).unwrap();
        }
    }
    let out = datanotes_as(&["call", "--vault", dir.to_str().unwrap(), "select_rows", r#"{"table":"film"}"#], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let s = start(&dir, Some(TOKEN));
    let head = op(&s, "list_changes", json!({}))["head"].as_u64().unwrap_or(0);
    let path = dir.join(CHARADE);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replace("year: 1963", "year: 1964")).unwrap();
    let changed = |feed: &Value| -> usize {
        let events = feed["events"].as_array().cloned().unwrap_or_default();
        events.iter().filter(|e| e["path"] == CHARADE && e["source"] == "external").count()
    };
    let feed = op(&s, "list_changes", json!({"since": head, "wait_ms": 10000}));
    assert_eq!(changed(&feed), 1, "{feed}");
    let set = json!({"table": "film", "path": "datanotes/main/public/film/Metropolis.md", "set": {"rating": 3}});
    assert_eq!(op(&s, "update_row", set)["ok"], true);
    std::thread::sleep(Duration::from_millis(1500));
    let feed = op(&s, "list_changes", json!({"since": head}));
    assert_eq!(changed(&feed), 1, "reported once: {feed}");
    let rows = op(&s, "select_rows", json!({"table": "film", "where": {"title": "Charade"}}));
    assert_eq!(rows["rows"][0]["year"], 1964, "{rows}");
}

#[test]
fn link_repair_after_a_hand_rename_waits_for_git() {
    const WATCH: &str = "datanotes/main/public/watch/2026-09-25T2100.md";
    let dir = vault("git");
    // git is in the middle of a rebase.
    fs::create_dir_all(dir.join(".git/rebase-merge")).unwrap();
    let s = start(&dir, Some(TOKEN));
    fs::rename(dir.join("Notes/Film night.md"), dir.join("Notes/Friday film night.md")).unwrap();
    let repaired = |s: &Server| {
        op(s, "list_migrations", json!({"limit": 5}))["migrations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["op"] == "repair_links")
    };
    // Past the 4 s of quiet: nothing, while git works.
    std::thread::sleep(Duration::from_secs(6));
    assert!(!repaired(&s), "no repair while git rebases");
    assert!(fs::read_to_string(dir.join(WATCH)).unwrap().contains("[[Film night]]"));
    // git is done: the repair follows (the engine's own write, applied from a tick).
    fs::remove_dir_all(dir.join(".git/rebase-merge")).unwrap();
    wait_until("the link repair", Duration::from_secs(15), || repaired(&s));
    let text = fs::read_to_string(dir.join(WATCH)).unwrap();
    assert!(text.contains("[[Friday film night]]"), "{text}");
    let m = op(&s, "list_migrations", json!({"limit": 1}));
    assert_eq!(m["migrations"][0]["op"], "repair_links", "{m}");
}

// ---------------------------------------------------------------- webhooks

#[test]
fn a_webhook_is_delivered_signed() {
    let receiver = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", receiver.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut conn, _) = receiver.accept().unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        let mut head = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        let len: usize = head
            .lines()
            .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap()))
            .unwrap_or(0);
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
        let _ = tx.send((head, body));
    });

    let dir = vault("webhook");
    // The receiver is on loopback: the person allows private addresses.
    let s = common::start_with(&dir, Some(TOKEN), &["--allow-private-webhooks"]);
    let created = op(&s, "create_webhook", json!({"url": url, "tables": ["film"]}));
    let id = created["id"].as_str().or(created["webhook"]["id"].as_str()).unwrap_or_else(|| panic!("{created}"));
    let secret =
        created["secret"].as_str().or(created["webhook"]["secret"].as_str()).unwrap_or_else(|| panic!("{created}"));
    op(&s, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 2}}));

    let (head, body) = rx.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|_| panic!("no delivery; {}", s.log()));
    assert!(head.starts_with("POST /hook "), "{head}");
    let signature = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("x-datanotes-signature")))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| panic!("no signature: {head}"));
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(&body);
    assert_eq!(signature, format!("sha256={}", hex(&mac.finalize().into_bytes())));
    let delivered: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(delivered["webhook"], id, "{delivered}");
    let events = delivered["events"].as_array().unwrap();
    assert!(events.iter().any(|e| e["path"] == CHARADE && e["op"] == "update_row"), "{delivered}");
    let last = delivered["last"].as_u64().unwrap();

    // The 200 moves the webhook's cursor, kept in the store.
    wait_until("the cursor to move", Duration::from_secs(10), || {
        let hooks = op(&s, "list_webhooks", json!({}));
        let list = hooks["webhooks"].as_array().cloned().unwrap_or_default();
        list.iter().any(|h| h["id"] == id && h["cursor"].as_u64() == Some(last))
    });
}

// ---------------------------------------------------------------- long poll

#[test]
fn a_long_poll_returns_as_soon_as_a_write_happens() {
    let dir = vault("poll");
    let s = start(&dir, Some(TOKEN));
    let head = op(&s, "list_changes", json!({}))["head"].as_u64().unwrap_or(0);

    // Nothing happens: the poll answers, empty, once the time runs out.
    let t = Instant::now();
    let feed = op(&s, "list_changes", json!({"since": head, "wait_ms": 600}));
    assert!(feed["events"].as_array().unwrap().is_empty(), "{feed}");
    assert!(t.elapsed() >= Duration::from_millis(550), "it waited: {:?}", t.elapsed());

    let addr = s.addr.clone();
    let poll = std::thread::spawn(move || {
        let t = Instant::now();
        let r = request(
            &addr,
            "POST",
            "/datanotes/operations/list_changes/",
            Some(TOKEN),
            &[],
            json!({"since": head, "wait_ms": 30000}).to_string(),
        );
        (t.elapsed(), r)
    });
    std::thread::sleep(Duration::from_millis(800));
    let w = op(&s, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 3}}));
    let (took, r) = poll.join().unwrap();
    assert_eq!(r.status, 200, "{}", r.body);
    let feed = r.json();
    assert!(took >= Duration::from_millis(700), "it waited for the write: {took:?}");
    assert!(took < Duration::from_secs(5), "it answered as soon as the write was made: {took:?}");
    assert_eq!(feed["events"][0]["migration_id"], w["migration_id"], "{feed}");
    // Reads go on while a poll waits (the engine's lock is not held).
    let head = feed["head"].as_u64().unwrap();
    let t = Instant::now();
    let addr = s.addr.clone();
    let poll = std::thread::spawn(move || {
        request(
            &addr,
            "POST",
            "/datanotes/operations/list_changes/",
            Some(TOKEN),
            &[],
            // Deletes only: a recompute the write set off does not end it.
            json!({"since": head, "wait_ms": 1500, "kinds": ["delete"]}).to_string(),
        )
    });
    std::thread::sleep(Duration::from_millis(200));
    op(&s, "select_rows", json!({"table": "film", "limit": 1}));
    assert!(t.elapsed() < Duration::from_millis(1200), "a read is not held behind the poll");
    assert_eq!(poll.join().unwrap().status, 200);
    assert!(t.elapsed() >= Duration::from_millis(1400), "the poll waited: {:?}", t.elapsed());
    // A cursor past the head (another store's) ends the poll at once: back to
    // the head, with gap.
    let t = Instant::now();
    let feed = op(&s, "list_changes", json!({"since": head + 10_000, "wait_ms": 30000}));
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    let now = feed["head"].as_u64().unwrap();
    assert!(now >= head, "{feed}");
    assert_eq!(feed, json!({"events": [], "last": now, "head": now, "gap": true}));
}

// ---------------------------------------------------------------- MCP tool calls over the HTTP door

#[test]
fn a_forwarded_mcp_tool_call_is_journaled_and_recorded() {
    let dir = vault("toolcall");
    let s = start(&dir, Some(TOKEN));
    let r = request(
        &s.addr,
        "POST",
        "/datanotes/operations/update_row/",
        Some(TOKEN),
        &[("X-Datanotes-Mcp-Client", "test-agent"), ("X-Datanotes-Mcp-Session", "s-123")],
        json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}).to_string(),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let m = op(&s, "list_migrations", json!({"limit": 1}));
    assert_eq!(m["migrations"][0]["by"], "owner/test-agent", "{m}");
    let feed = op(&s, "list_changes", json!({"kinds": ["tool_call"]}));
    let ev = feed["events"].as_array().unwrap().last().cloned().unwrap_or_else(|| panic!("{feed}"));
    assert_eq!(ev["kind"], "tool_call", "{ev}");
    assert_eq!(ev["call"]["tool"], "update_row", "{ev}");
    assert_eq!(ev["call"]["ok"], true, "{ev}");
    assert_eq!(ev["call"]["served_by"], "engine", "{ev}");
    assert_eq!(ev["actor"]["credential"], "owner", "{ev}");
    assert_eq!(ev["actor"]["client"], "test-agent", "{ev}");
    assert_eq!(ev["actor"]["session"], "s-123", "{ev}");
}

// ---------------------------------------------------------------- docs

#[test]
fn the_docs_pages_are_served() {
    let dir = vault("docs");
    let s = start(&dir, Some(TOKEN));
    for page in [
        "reference/operations",
        "reference/schema",
        "reference/filters",
        "guides/data-quality/rules",
        "guides/data-quality/hand-edits",
        "guides/history/journal-and-undo",
        "guides/history/table-history",
    ] {
        let r = request(&s.addr, "GET", &format!("/datanotes/docs/{page}.md"), None, &[], "");
        assert_eq!(r.status, 200, "{page}: {}", r.body);
        assert!(r.head.to_ascii_lowercase().contains("content-type: text/markdown"), "{}", r.head);
        assert!(r.body.starts_with("# "), "{page}: {}", r.body);
    }
    let r = request(&s.addr, "GET", "/datanotes/docs/reference/operations.md", None, &[], "");
    assert!(r.body.contains("### update_row"), "generated from the registry");
    let r = request(&s.addr, "GET", "/datanotes/docs/nothing.md", None, &[], "");
    assert_eq!(r.status, 404);
    assert!(r.json()["error"].as_str().unwrap().contains("reference/schema"));
}

// ---------------------------------------------------------------- load and speed (ignored by default)

/// A keep-alive HTTP/1.1 connection: requests one after the other.
struct Conn {
    addr: String,
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn new(addr: &str) -> Conn {
        let s = TcpStream::connect(addr).unwrap();
        s.set_nodelay(true).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        Conn { addr: addr.to_string(), reader: BufReader::new(s) }
    }

    fn post(&mut self, name: &str, args: &Value) -> (u16, Value) {
        self.try_post(name, args).expect("connection closed")
    }

    /// As `post`; None once the server is gone.
    fn try_post(&mut self, name: &str, args: &Value) -> Option<(u16, Value)> {
        let body = args.to_string();
        let req = format!(
            "POST /datanotes/operations/{name}/ HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        self.reader.get_mut().write_all(req.as_bytes()).ok()?;
        let mut status = 0;
        let mut len = 0;
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line).ok()? == 0 {
                return None;
            }
            if line == "\r\n" {
                break;
            }
            if line.starts_with("HTTP/1.1 ") {
                status = line[9..12].parse().unwrap();
            } else if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut buf = vec![0; len];
        self.reader.read_exact(&mut buf).ok()?;
        Some((status, serde_json::from_slice(&buf).unwrap_or(Value::Null)))
    }
}

/// Point 14's queue (bridge/src/queue.rs) and a kill: serve killed while 8
/// clients write leaves every write it answered done in the journal, each note
/// as its last answered write or a later one left it, and nothing the next
/// open cannot read.
#[test]
fn point_14_serve_killed_while_clients_write_keeps_every_answered_write() {
    let dir = vault("kill-load");
    let mut s = start(&dir, Some(TOKEN));
    op(
        &s,
        "create_table",
        json!({"table": "item", "name_from": "i{n}", "columns": {
            "n": {"type": "integer", "required": true, "unique": true}, "v": {"type": "integer"}}}),
    );
    let clients = 8;
    let rows: Vec<Value> = (0..clients * ROWS_PER_CLIENT).map(|n| json!({"n": n, "v": 0})).collect();
    assert_eq!(op(&s, "insert_rows", json!({"table": "item", "rows": rows}))["ok"], true);
    let all = op(&s, "select_rows", json!({"table": "item", "columns": ["n"], "order_by": "n", "limit": 1000}));
    let paths: Vec<String> =
        all["rows"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().into()).collect();
    let answered = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let addr = s.addr.clone();
            let mine = paths[c * ROWS_PER_CLIENT..(c + 1) * ROWS_PER_CLIENT].to_vec();
            let answered = answered.clone();
            std::thread::spawn(move || {
                let mut conn = Conn::new(&addr);
                let mut acks = vec![];
                for i in 0.. {
                    let path = &mine[(i / 2) % ROWS_PER_CLIENT];
                    let v = (c * 100_000 + i + 1) as i64;
                    let args = json!({"table": "item", "path": path, "set": {"v": v}});
                    match conn.try_post("update_row", &args) {
                        Some((200, a)) => {
                            acks.push((a["migration_id"].as_str().unwrap().to_string(), path.clone(), v));
                            answered.fetch_add(1, Ordering::SeqCst);
                        }
                        Some((status, a)) => panic!("{status}: {a}"),
                        None => return acks,
                    }
                }
                acks
            })
        })
        .collect();
    // Killed in the middle of the load, however fast this machine writes.
    wait_until("40 writes answered", Duration::from_secs(60), || answered.load(Ordering::SeqCst) >= 40);
    std::thread::sleep(Duration::from_millis(100));
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    let acks: Vec<(String, String, i64)> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
    assert!(acks.len() > 20, "the clients wrote before the kill: {}", acks.len());

    let out = Command::new(BIN)
        .args(["call", "--vault", dir.to_str().unwrap(), "list_migrations", r#"{"op": "update_row", "limit": 5000}"#])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("cannot be read"), "{stderr}");
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let status: std::collections::HashMap<&str, &str> = listed["migrations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["migration_id"].as_str().unwrap(), m["status"].as_str().unwrap_or("done")))
        .collect();
    let mut last: std::collections::HashMap<&str, i64> = Default::default();
    for (id, path, v) in &acks {
        assert_eq!(status.get(id.as_str()), Some(&"done"), "{id} was answered: {stderr}");
        last.insert(path, *v);
    }
    for (path, v) in last {
        let text = fs::read_to_string(dir.join(path)).unwrap();
        let on_disk: i64 = text.lines().find_map(|l| l.strip_prefix("v: ")).unwrap().parse().unwrap();
        assert!(on_disk >= v, "{path} holds {on_disk}, older than its answered write {v}");
    }
    let check = Command::new(BIN)
        .args(["call", "--vault", dir.to_str().unwrap(), "check_table", r#"{"table": "item"}"#])
        .output()
        .unwrap();
    let check: Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(check["total"], 0, "{check}");
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summary(mut v: Vec<f64>) -> String {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    format!(
        "n {} p50 {:.2} ms p99 {:.2} ms max {:.2} ms",
        v.len(),
        percentile(&v, 0.5),
        percentile(&v, 0.99),
        v.last().copied().unwrap_or(0.0)
    )
}

const ROWS_PER_CLIENT: usize = 10;
const HAND_ROWS: usize = 10;

#[test]
#[ignore = "load test: cargo test --release -p datanotes --test serve_more -- --ignored load --nocapture"]
fn load_20_clients_5000_requests() {
    // DATANOTES_LOAD_WRITES_ONLY=1: every request an update_row (the group
    // commit's figure); else every other one a select_rows.
    load(20, 5000, std::env::var("DATANOTES_LOAD_WRITES_ONLY").as_deref() == Ok("1"));
}

/// Point 14 at a small scale, in every run: writes that arrive together are
/// carried out after the engine's lock in one queue (bridge/src/queue.rs),
/// each client writing each of its rows twice in a row while hand edits land
/// on other rows; every write answered is on disk and in the feed once, and
/// none is taken for a hand edit.
#[test]
fn point_14_writes_arriving_together_lose_nothing_and_pass_for_no_hand_edit() {
    load(8, 480, true);
}

/// `clients` clients sending `requests` in all to one serve, as fast as
/// answered, while a person edits other rows of the table; then checks that
/// nothing was lost and prints the figures.
fn load(clients: usize, requests: usize, writes_only: bool) {
    let dir = vault("load");
    let s = start(&dir, Some(TOKEN));
    op(
        &s,
        "create_table",
        json!({"table": "item", "name_from": "i{n}", "columns": {
            "n": {"type": "integer", "required": true, "unique": true},
            "v": {"type": "integer"},
            "label": {"type": "text"}}}),
    );
    let rows: Vec<Value> = (0..clients * ROWS_PER_CLIENT + HAND_ROWS).map(|n| json!({"n": n, "v": 0})).collect();
    let inserted = op(&s, "insert_rows", json!({"table": "item", "rows": rows}));
    assert_eq!(inserted["ok"], true, "{inserted}");
    let paths: Vec<String> = {
        let all = op(&s, "select_rows", json!({"table": "item", "columns": ["n"], "order_by": "n", "limit": 1000}));
        all["rows"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(paths.len(), clients * ROWS_PER_CLIENT + HAND_ROWS);
    let head = op(&s, "list_changes", json!({}))["head"].as_u64().unwrap();

    // Hand edits to rows of the same table that no client writes, while the load runs.
    let stop = Arc::new(AtomicBool::new(false));
    let hand = {
        let (stop, dir) = (stop.clone(), dir.clone());
        let hand_paths: Vec<String> = paths[clients * ROWS_PER_CLIENT..].to_vec();
        std::thread::spawn(move || {
            let mut edits = 0;
            while !stop.load(Ordering::SeqCst) && edits < 200 {
                let p = dir.join(&hand_paths[edits % HAND_ROWS]);
                let text = fs::read_to_string(&p).unwrap();
                let text = match text.find("\nlabel:") {
                    Some(i) => {
                        let end = text[i + 1..].find('\n').map_or(text.len(), |j| i + 1 + j);
                        format!("{}\nlabel: hand {edits}{}", &text[..i], &text[end..])
                    }
                    None => text.replacen("\nv: ", &format!("\nlabel: hand {edits}\nv: "), 1),
                };
                fs::write(&p, text).unwrap();
                edits += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            edits
        })
    };

    let (start_at, cpu_before) = (Instant::now(), cpu_ms(&s));
    let threads: Vec<_> = (0..clients)
        .map(|c| {
            let addr = s.addr.clone();
            let mine: Vec<String> = paths[c * ROWS_PER_CLIENT..(c + 1) * ROWS_PER_CLIENT].to_vec();
            std::thread::spawn(move || {
                let mut conn = Conn::new(&addr);
                let (mut writes, mut reads, mut acks) = (vec![], vec![], vec![]);
                for i in 0..requests / clients {
                    let t = Instant::now();
                    if writes_only || i % 2 == 0 {
                        let path = &mine[(i / 2) % ROWS_PER_CLIENT];
                        let v = (c * 100_000 + i + 1) as i64;
                        let (status, a) =
                            conn.post("update_row", &json!({"table": "item", "path": path, "set": {"v": v}}));
                        writes.push(t.elapsed().as_secs_f64() * 1000.0);
                        assert_eq!(status, 200, "{a}");
                        acks.push((a["migration_id"].as_str().unwrap().to_string(), path.clone(), v));
                    } else {
                        let (status, a) = conn.post("select_rows", &json!({"table": "item", "limit": 100}));
                        reads.push(t.elapsed().as_secs_f64() * 1000.0);
                        assert_eq!(status, 200, "{a}");
                        assert_eq!(a["rows"].as_array().unwrap().len(), 100);
                    }
                }
                (writes, reads, acks)
            })
        })
        .collect();
    let (mut writes, mut reads, mut acks) = (vec![], vec![], vec![]);
    for t in threads {
        let (w, r, a) = t.join().unwrap();
        writes.extend(w);
        reads.extend(r);
        acks.extend(a);
    }
    let took = start_at.elapsed();
    let cpu = cpu_ms(&s).zip(cpu_before).map(|(after, before)| after - before);
    stop.store(true, Ordering::SeqCst);
    let hand_edits = hand.join().unwrap();

    // Every acknowledged write is in the journal and on disk.
    let journal = op(&s, "list_migrations", json!({"op": "update_row", "limit": 100_000}));
    let ids: std::collections::HashSet<String> = journal["migrations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["migration_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(acks.len(), if writes_only { requests } else { requests / 2 });
    let mut last: std::collections::HashMap<String, i64> = Default::default();
    for (id, path, v) in &acks {
        assert!(ids.contains(id), "{id} is in the journal");
        assert!(dir.join(".datanotes/journal").join(format!("{id}.json")).exists(), "{id} on disk");
        last.insert(path.clone(), *v);
    }
    for (path, v) in &last {
        let text = fs::read_to_string(dir.join(path)).unwrap();
        assert!(text.contains(&format!("\nv: {v}\n")), "{path} holds its last write {v}: {text}");
    }
    // The feed has each write once, and the hand edits; check_table finds nothing.
    std::thread::sleep(Duration::from_secs(2));
    let distinct: std::collections::HashSet<&str> = acks.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(distinct.len(), acks.len(), "every write has its own migration_id");
    let mut since = head;
    let mut engine_updates: std::collections::HashMap<String, usize> = Default::default();
    let mut external = 0;
    let mut seen_events = vec![];
    loop {
        let feed = op(&s, "list_changes", json!({"since": since, "tables": ["item"], "limit": 5000}));
        assert_ne!(feed["gap"], true, "no event was dropped: {}", feed["gap"]);
        let events = feed["events"].as_array().unwrap();
        if events.is_empty() {
            break;
        }
        for e in events {
            seen_events.push(e.clone());
            match (e["source"].as_str(), e["migration_id"].as_str()) {
                (Some("external"), _) => external += 1,
                (_, Some(id)) => *engine_updates.entry(id.to_string()).or_default() += 1,
                _ => {}
            }
        }
        since = feed["last"].as_u64().unwrap();
    }
    for (id, path, _) in &acks {
        let about: Vec<&Value> = seen_events.iter().filter(|e| e["path"] == path.as_str()).take(4).collect();
        assert_eq!(
            engine_updates.get(id),
            Some(&1),
            "{id} is in the feed once; {} events, {} engine writes; events of {path}: {about:?}",
            seen_events.len(),
            engine_updates.len()
        );
    }
    let check = op(&s, "check_table", json!({"table": "item"}));
    assert_eq!(check["total"], 0, "{check}");

    let all: Vec<f64> = writes.iter().chain(reads.iter()).copied().collect();
    println!(
        "load: {clients} clients, {requests} requests ({} update_row, {} select_rows of 100 rows) in {:.2} s: {:.0} requests/s; {hand_edits} hand edits ({external} external events)",
        writes.len(),
        reads.len(),
        took.as_secs_f64(),
        requests as f64 / took.as_secs_f64()
    );
    if let Some(cpu) = cpu {
        println!(
            "load: serve's CPU {:.0} us a request (user and system, all its threads)",
            cpu * 1000.0 / requests as f64
        );
    }
    println!("load: all    {}", summary(all));
    println!("load: writes {}", summary(writes));
    println!("load: reads  {}", summary(reads));
    assert!(external > 0, "the hand edits reached the feed");
}

/// The CPU time serve has used so far, in ms (user and system, all its
/// threads; None off Linux). The load test's throughput moves by a fifth with
/// the disk's state (how many inodes were freed in the last minutes: ext4
/// steps over them one by one to make a file); its CPU a request moves less.
fn cpu_ms(s: &Server) -> Option<f64> {
    #[cfg(target_os = "linux")]
    {
        let stat = fs::read_to_string(format!("/proc/{}/stat", s.child.id())).ok()?;
        // The fields after the command's name (in parentheses, which may hold
        // spaces): the 14th and 15th of the line are utime and stime.
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let ticks = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
        // SAFETY: sysconf reads a constant of the system.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        (hz > 0.0).then(|| ticks * 1000.0 / hz)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = s;
        None
    }
}

#[test]
#[ignore = "speed: cargo test --release -p datanotes --test serve_more -- --ignored read_latency --nocapture"]
fn read_latency_select_100_rows() {
    let dir = vault("latency");
    let s = start(&dir, Some(TOKEN));
    op(
        &s,
        "create_table",
        json!({"table": "item", "name_from": "i{n}", "columns": {"n": {"type": "integer", "required": true}, "label": {"type": "text"}}}),
    );
    let rows: Vec<Value> = (0..1000).map(|n| json!({"n": n, "label": format!("item {n}")})).collect();
    op(&s, "insert_rows", json!({"table": "item", "rows": rows}));
    let mut conn = Conn::new(&s.addr);
    for _ in 0..50 {
        conn.post("select_rows", &json!({"table": "item", "limit": 100}));
    }
    let mut times = vec![];
    for _ in 0..1000 {
        let t = Instant::now();
        let (status, a) = conn.post("select_rows", &json!({"table": "item", "limit": 100}));
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(status, 200);
        assert_eq!(a["rows"].as_array().unwrap().len(), 100);
    }
    println!("select_rows (100 of 1000 rows) over HTTP, keep-alive: {}", summary(times));
}

/// A vault of `rows` rows in one table, written directly.
fn big_vault(name: &str, rows: usize) -> PathBuf {
    let dir = temp_path(name);
    let folder = dir.join("datanotes/main/public/item");
    fs::create_dir_all(&folder).unwrap();
    fs::create_dir_all(dir.join(".datanotes")).unwrap();
    fs::write(
        dir.join("datanotes/metastore.yaml"),
        "version: 1\ntables:\n  main.public.item:\n    name_from: \"i{n}\"\n    columns:\n      n: {type: integer, required: true, unique: true}\n      label: {type: text}\n",
    )
    .unwrap();
    for i in 0..rows {
        fs::write(
            folder.join(format!("i{i}.md")),
            format!("---\ntable: main.public.item\nid: 01a0c048-0000-7000-8000-{i:012x}\nn: {i}\nlabel: item {i}\n---\nA note.\n"),
        )
        .unwrap();
    }
    dir
}

/// Spawns `datanotes mcp`, and times initialize and a first tools/call.
fn mcp_first_call(dir: &Path) -> (Duration, Value) {
    let t = Instant::now();
    let mut m = Mcp::start(dir);
    let answer = m.ask(2, "tools/call", json!({"name": "select_rows", "arguments": {"table": "item", "limit": 1}}));
    (t.elapsed(), answer)
}

#[test]
#[ignore = "speed: cargo test --release -p datanotes --test serve_more -- --ignored mcp_ready --nocapture"]
fn mcp_ready_on_a_10k_row_vault() {
    let dir = big_vault("mcp10k", 10_000);
    // Alone: the engine opens the vault first.
    let (alone, a) = mcp_first_call(&dir);
    assert_eq!(a["result"]["structuredContent"]["total"], 10_000, "{a}");
    let s = start(&dir, Some(TOKEN));
    let mut forwarded = vec![];
    for _ in 0..5 {
        let (took, a) = mcp_first_call(&dir);
        assert_eq!(a["result"]["structuredContent"]["total"], 10_000, "{a}");
        forwarded.push(took);
    }
    forwarded.sort();
    assert!(s.log().contains("datanotes: read 10000 notes…"), "progress while opening: {}", s.log());
    println!("serve: {}", s.stdout);
    println!(
        "datanotes mcp, spawn to first tool call answered, 10k rows: alone {:.0} ms; forwarding to serve {:.0} ms (median of 5, worst {:.0} ms)",
        alone.as_secs_f64() * 1000.0,
        forwarded[2].as_secs_f64() * 1000.0,
        forwarded[4].as_secs_f64() * 1000.0
    );
    if !cfg!(debug_assertions) {
        assert!(forwarded[2] < Duration::from_millis(300), "{forwarded:?}");
    }
}

// ---------------------------------------------------------------- batch writes

/// The inodes of a folder's files.
fn inodes(dir: &Path) -> std::collections::HashSet<u64> {
    use std::os::unix::fs::MetadataExt;
    fs::read_dir(dir).map_or(Default::default(), |d| d.flatten().map(|e| e.metadata().unwrap().ino()).collect())
}

/// The inodes of every file under `dir`.
fn all_inodes(dir: &Path) -> std::collections::HashSet<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut out = std::collections::HashSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let m = fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                stack.push(e.path());
            } else {
                out.insert(m.ino());
            }
        }
    }
    out
}

#[test]
fn point_13_batch_writes_swap_notes_with_spares_and_report_no_hand_edit() {
    let dir = vault("spares");
    let s = start(&dir, Some(TOKEN));
    let rows: Vec<Value> = (0..60).map(|i| json!({"title": format!("Film {i}"), "year": 1950 + i})).collect();
    op(&s, "insert_rows", json!({"table": "film", "rows": rows}));
    let head = op(&s, "list_changes", json!({}))["head"].as_u64().unwrap();
    let films = op(&s, "select_rows", json!({"table": "film", "limit": 1000}))["total"].as_u64().unwrap() as usize;

    let film_dir = dir.join("datanotes/main/public/film");
    // Each note written once more costs no new file: it takes a spare's inode,
    // and its old one becomes a spare. A temporary file renamed over it would
    // free the old inode instead. (Serve makes new spares meanwhile: see
    // spare::keep_ready.)
    let notes_and_spares = || -> std::collections::HashSet<u64> {
        inodes(&dir.join(".datanotes/spare")).union(&inodes(&film_dir)).copied().collect()
    };
    let kept = |before: &std::collections::HashSet<u64>, what: &str| {
        let freed = before.difference(&all_inodes(&dir)).count();
        assert_eq!(freed, 0, "{what}: {freed} files of notes or spares were freed");
    };
    for minutes in [100, 101, 102] {
        let before = notes_and_spares();
        let a = op(&s, "update_rows", json!({"table": "film", "where": {}, "set": {"minutes": minutes}}));
        assert_eq!(a["notes_changed"].as_u64(), Some(films as u64), "{a}");
        let text = s.read("datanotes/main/public/film/Film 7.md");
        assert!(text.contains(&format!("minutes: {minutes}\n")), "{text}");
        kept(&before, &format!("minutes {minutes}"));
    }
    // A spare holds an old text of a note, never a half one: the notes read whole.
    let all = op(&s, "select_rows", json!({"table": "film", "where": {"minutes": 102}, "limit": 1000}));
    assert_eq!(all["total"].as_u64(), Some(films as u64));
    // The watcher saw the swaps and took none of them for a hand edit or a deletion.
    std::thread::sleep(Duration::from_millis(1500));
    let feed = op(&s, "list_changes", json!({"since": head, "limit": 5000}));
    let events = feed["events"].as_array().unwrap();
    assert_eq!(events.len(), 3 * films, "{}", events.len());
    assert!(events.iter().all(|e| e["source"] == "engine" && e["kind"] == "update"), "{feed}");
    // Undone as one, through the same path.
    let before = notes_and_spares();
    let undo = op(&s, "list_migrations", json!({"limit": 1}))["migrations"][0]["migration_id"].clone();
    op(&s, "undo_migration", json!({"migration_id": undo}));
    assert!(s.read("datanotes/main/public/film/Film 7.md").contains("minutes: 101\n"));
    kept(&before, "undo");
    // vacuum_table drops old history: the old texts the spares hold go with it.
    let spare_texts = || -> Vec<String> {
        let d = fs::read_dir(dir.join(".datanotes/spare")).unwrap();
        d.flatten().map(|e| fs::read_to_string(e.path()).unwrap()).filter(|t| !t.is_empty()).collect()
    };
    assert!(spare_texts().iter().any(|t| t.contains("\ntitle: Film ")), "old texts of notes are in spares");
    op(&s, "vacuum_table", json!({"table": "film", "dry_run": false}));
    assert_eq!(spare_texts(), Vec::<String>::new());
}

// ---------------------------------------------------------------- many devices

/// Copies what changed under `from` since `before` into `to`, as a sync tool
/// does: a temporary file, then a rename.
fn sync_files(from: &Path, to: &Path, before: &std::collections::BTreeMap<String, Vec<u8>>) {
    for (rel, bytes) in common::snapshot(from, "") {
        if before.get(&rel) == Some(&bytes) || rel.ends_with("lock") || rel.starts_with(".datanotes/known") {
            continue;
        }
        let dest = to.join(&rel);
        fs::create_dir_all(dest.parent().unwrap()).unwrap();
        let tmp = dest.with_file_name(".syncthing.tmp");
        fs::write(&tmp, &bytes).unwrap();
        fs::rename(&tmp, &dest).unwrap();
    }
}

/// Another device's write, synced into a vault while serve runs there, is that
/// device's write in the running engine's feed and history, not a hand edit
/// (issue 15): serve watches `.datanotes/` as well as the notes.
#[test]
fn serve_takes_in_another_devices_write_as_a_sync_brings_it() {
    let run_on_a = |dir: &Path, rating: u8| {
        let args = json!({"table": "film", "path": CHARADE, "set": {"rating": rating}}).to_string();
        let r = common::datanotes_env(
            &["call", "--vault", dir.to_str().unwrap(), "update_row", &args],
            &[("DATANOTES_DEVICE", Some("laptop")), ("DATANOTES_TOKEN", None)],
        );
        assert_eq!(r.code, 0, "{r:?}");
        r.answer()["migration_id"].as_str().unwrap().to_string()
    };
    let a = vault("device-a");
    run_on_a(&a, 4);
    let b = temp_path("device-b");
    let status = Command::new("cp").arg("-a").arg(&a).arg(&b).status().unwrap();
    assert!(status.success());
    let s = common::start_env(&b, Some(TOKEN), &[], &[("DATANOTES_DEVICE", "phone")]);
    let head = op(&s, "list_changes", json!({}))["head"].as_u64().unwrap();
    let before = common::snapshot(&a, "");
    let id = run_on_a(&a, 2);
    sync_files(&a, &b, &before);
    let mut events = vec![];
    wait_until("the laptop's write in the phone's feed", Duration::from_secs(20), || {
        events = op(&s, "list_changes", json!({"since": head}))["events"].as_array().unwrap().clone();
        !events.is_empty()
    });
    // A hand edit, if the note were taken for one, is reported after the round's quiet.
    std::thread::sleep(Duration::from_millis(1500));
    let events = op(&s, "list_changes", json!({"since": head}))["events"].as_array().unwrap().clone();
    assert_eq!(events.len(), 1, "{events:?}\n{}", s.log());
    assert_eq!((events[0]["source"].as_str(), events[0]["migration_id"].as_str()), (Some("engine"), Some(id.as_str())));
    let h = op(&s, "describe_history", json!({"table": "film"}));
    assert_eq!(h["history"][0]["device"], "laptop", "{h}");
    let listed = op(&s, "list_migrations", json!({}));
    assert!(listed["migrations"].as_array().unwrap().iter().any(|m| m["migration_id"] == id.as_str()), "{listed}");
    let undone = op(&s, "undo_migration", json!({"migration_id": id}));
    assert_eq!(undone["ok"], true, "{undone}");
    assert!(fs::read_to_string(b.join(CHARADE)).unwrap().contains("rating: 4"));
    // The phone's vault goes with its serve; the laptop's has none.
    let _ = fs::remove_dir_all(&a);
}

/// Point 4 under group commit, and issue 52 point 5: serve carries out a
/// write's store records after the engine's lock is released. One that then
/// cannot be written gives up the write whole: no answer of ok, the note
/// untouched, and the engine (which read the vault again) writes the next one
/// in full once the folder can take it.
#[test]
fn point_4_a_record_serve_cannot_write_after_the_lock_gives_up_the_write_whole() {
    let dir = vault("queue-fails");
    let s = start(&dir, Some(TOKEN));
    // A file where the feed's folder must be: the feed line cannot be appended.
    let feed = dir.join(".datanotes/feed");
    let _ = fs::remove_dir_all(&feed);
    fs::write(&feed, "not a folder").unwrap();
    let a = common::call(&s, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 2}}));
    assert_eq!(a.status, 503, "{}", a.body);
    let error = a.error();
    assert!(error.contains("nothing is left changed") && error.contains(".datanotes/feed/"), "{error}");
    assert!(!fs::read_to_string(dir.join(CHARADE)).unwrap().contains("rating: 2"), "the note is untouched");
    assert!(s.log().contains("they are given up, and the vault is read again"), "{}", s.log());

    fs::remove_file(&feed).unwrap();
    let b = op(&s, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 3}}));
    assert_eq!(b["ok"], true, "{b}");
    assert!(fs::read_to_string(dir.join(CHARADE)).unwrap().contains("rating: 3"));
    let changes = op(&s, "list_changes", json!({}));
    let ids: Vec<&Value> = changes["events"].as_array().unwrap().iter().filter_map(|e| e.get("migration_id")).collect();
    assert_eq!(ids, [&b["migration_id"]], "{changes}");
    let listed = op(&s, "list_migrations", json!({}));
    assert_eq!(listed["total"], 1, "{listed}");
}
