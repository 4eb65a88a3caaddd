//! Issue 16, end to end through the binary: what a planted file, a deleted lock,
//! a web page or a rebound name can make of a running engine.

mod common;

use common::{datanotes_as, request, start, vault};
use serde_json::{json, Value};
use std::fs;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TOKEN: &str = "attacks-token-5be1c07d93aa41f2";

/// A listener that records every request it reads and answers each with
/// `body`, as a planted lock's address would.
fn fake_engine(body: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let seen = Arc::new(Mutex::new(vec![]));
    let log = seen.clone();
    std::thread::spawn(move || {
        for mut s in l.incoming().map_while(Result::ok) {
            s.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
            let mut buf = vec![0u8; 65536];
            let n = s.read(&mut buf).unwrap_or(0);
            log.lock().unwrap().push(String::from_utf8_lossy(&buf[..n]).to_string());
            let _ = write!(s, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
        }
    });
    (addr, seen)
}

fn plant(vault: &Path, pid: u32, address: &str) {
    fs::create_dir_all(vault.join(".datanotes")).unwrap();
    let lock = json!({"format": 1, "pid": pid, "address": address, "url": "http://evil.example/", "started_at": "2026-01-01T00:00:00.000Z"});
    fs::write(vault.join(".datanotes/lock"), lock.to_string()).unwrap();
}

fn call(vault: &Path, op: &str, args: Value) -> common::Run {
    datanotes_as(&["call", "--vault", vault.to_str().unwrap(), op, &args.to_string()], Some(TOKEN))
}

fn assert_only_challenged(seen: &Arc<Mutex<Vec<String>>>) {
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the planted address was challenged");
    for req in &seen {
        assert!(req.starts_with("GET /datanotes/proof?nonce="), "{req}");
        assert!(!req.contains(TOKEN) && !req.to_lowercase().contains("authorization"), "{req}");
        assert!(!req.contains("Charade"), "{req}");
    }
}

#[test]
fn lock_planted_in_the_vault_never_gets_the_token_or_the_arguments() {
    let dir = vault("planted");
    // Something that is no engine of ours: the lock is stale, the call runs on an
    // engine of its own.
    let (addr, seen) = fake_engine(r#"{"ok": true, "rows": [{"title": "FORGED"}]}"#);
    // pid 1 always runs: only the challenge can tell.
    plant(&dir, 1, &addr);
    let r = call(&dir, "select_rows", json!({"table": "film", "where": {"title": "Charade"}}));
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stdout.contains("FORGED"), "the forged answer was printed: {}", r.stdout);
    assert_eq!(r.answer()["rows"][0]["title"], "Charade", "{}", r.stdout);
    assert_only_challenged(&seen);

    // An impostor that speaks the protocol with a false proof: refused, with the
    // way out, and still nothing sent.
    let (addr, seen) = fake_engine(r#"{"proof": "00", "rows": [{"title": "FORGED"}]}"#);
    plant(&dir, 1, &addr);
    let r = call(&dir, "select_rows", json!({"table": "film", "where": {"title": "Charade"}}));
    assert_eq!(r.code, 1, "{r:?}");
    assert!(!r.stdout.contains("FORGED"), "{}", r.stdout);
    assert!(r.stderr.contains("cannot prove it holds the owner's token"), "{}", r.stderr);
    assert!(r.stderr.contains("delete") && r.stderr.contains(".datanotes/lock"), "{}", r.stderr);
    assert_only_challenged(&seen);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn lock_naming_an_address_off_the_machine_is_never_contacted() {
    let dir = vault("far");
    // 192.0.2.1 is TEST-NET-1: no connection is even tried, so this is quick.
    plant(&dir, 1, "192.0.2.1:80");
    let t = Instant::now();
    let r = call(&dir, "select_rows", json!({"table": "film", "limit": 1}));
    assert_eq!(r.code, 0, "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let _ = fs::remove_dir_all(&dir);
}

/// Issue 52, point 4: `git clean -fdX` deletes both lock files (both are
/// ignored), yet the OS lock is on the store's folder itself.
#[test]
fn lock_file_deleted_while_serve_runs_opens_no_second_engine() {
    let dir = vault("deleted");
    let s = start(&dir, Some(TOKEN));
    fs::remove_file(dir.join(".datanotes/lock")).unwrap();
    let _ = fs::remove_file(dir.join(".datanotes/engine.lock"));
    let mut cmd = std::process::Command::new(common::BIN);
    cmd.args(["call", "--vault", dir.to_str().unwrap(), "update_row"])
        .arg(
            json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": {"year": 1999}})
                .to_string(),
        )
        .env("DATANOTES_TOKEN", TOKEN)
        .env("DATANOTES_LOCK_WAIT_MS", "1500");
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("held by another datanotes process"), "{stderr}");
    assert!(!fs::read_to_string(dir.join("datanotes/main/public/film/Charade.md")).unwrap().contains("1999"));
    // The serve still writes, alone.
    let r = common::call(
        &s,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": {"year": 1964}}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    // A second serve refuses too.
    let r = datanotes_as(&["serve", "--vault", dir.to_str().unwrap(), "--listen", "127.0.0.1:0"], Some(TOKEN));
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("served already"), "{}", r.stderr);
    let listed = common::call(&s, "list_migrations", json!({}));
    assert_eq!(listed.json()["total"], 1, "one writer, one write: {}", listed.body);
}

/// Issue 52, point 4: one token for two vaults, and a lock planted in vault B
/// naming vault A's engine. A's engine proves the token, but for A: a call on B
/// never reaches it, and B is written by an engine of its own.
#[test]
fn lock_naming_another_vaults_engine_never_answers_for_this_vault() {
    let a = vault("vault-a");
    let s = start(&a, Some(TOKEN));
    let b = vault("vault-b");
    let pid = fs::read_to_string(a.join(".datanotes/lock")).unwrap();
    let pid = serde_json::from_str::<Value>(&pid).unwrap()["pid"].as_u64().unwrap();
    plant(&b, pid as u32, &s.addr);
    let charade = "datanotes/main/public/film/Charade.md";
    let r = call(&b, "update_row", json!({"table": "film", "path": charade, "set": {"year": 1999}}));
    assert_eq!(r.code, 0, "{r:?}");
    assert!(fs::read_to_string(b.join(charade)).unwrap().contains("year: 1999"), "B was written");
    assert!(!fs::read_to_string(a.join(charade)).unwrap().contains("1999"), "A was written through B's lock");
    let listed = common::call(&s, "list_migrations", json!({}));
    assert_eq!(listed.json()["total"], 0, "A's engine wrote nothing: {}", listed.body);
    let _ = fs::remove_dir_all(&b);
}

#[test]
fn origins_and_hosts_of_web_pages_are_refused_on_every_route() {
    let dir = vault("origins");
    let s = start(&dir, Some(TOKEN));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string();
    let mcp_headers = [("Accept", "application/json, text/event-stream")];
    let routes: [(&str, &str, String); 4] = [
        ("POST", "/datanotes/operations/describe_database/", "{}".into()),
        ("POST", "/mcp", init.clone()),
        ("GET", "/datanotes/openapi.json", String::new()),
        ("GET", "/datanotes/docs/", String::new()),
    ];
    for (method, path, body) in &routes {
        for origin in ["https://evil.example", "null"] {
            let mut h = mcp_headers.to_vec();
            h.push(("Origin", origin));
            let r = request(&s.addr, method, path, Some(TOKEN), &h, body.clone());
            assert_eq!(r.status, 403, "{method} {path} Origin {origin}: {}", r.body);
            assert!(r.error().contains("web origin"), "{}", r.body);
        }
        // A rebound name: the request names evil.example as its Host.
        let raw = format!("{method} {path} HTTP/1.1\r\nHost: evil.example:80\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        let mut c = std::net::TcpStream::connect(&s.addr).unwrap();
        c.write_all(raw.as_bytes()).unwrap();
        let mut text = String::new();
        let _ = c.read_to_string(&mut text);
        assert!(text.starts_with("HTTP/1.1 403"), "{method} {path} Host evil.example: {text}");
        // This machine's own origin, and none, pass.
        let mut h = mcp_headers.to_vec();
        h.push(("Origin", "http://localhost:3000"));
        let r = request(&s.addr, method, path, Some(TOKEN), &h, body.clone());
        assert_eq!(r.status, 200, "{method} {path}: {}", r.body);
    }
}

/// The status line and body of `POST path` sent to `addr` with this `Host`.
fn with_host(addr: &str, host: &str, path: &str, body: &str) -> String {
    let raw = format!("POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.write_all(raw.as_bytes()).unwrap();
    let mut text = String::new();
    let _ = c.read_to_string(&mut text);
    text
}

#[test]
fn issue52_point_11_a_host_of_the_unspecified_address_is_refused() {
    // A page that asks for http://0.0.0.0:<port> reaches a loopback port on Linux
    // and macOS: its Host is 0.0.0.0, with no rebinding, and serve does not listen there.
    let dir = vault("unspecified");
    let s = start(&dir, Some(TOKEN));
    let port = s.addr.rsplit(':').next().unwrap();
    let path = "/datanotes/operations/describe_database";
    for host in
        [format!("0.0.0.0:{port}"), "0.0.0.0".into(), format!("[::]:{port}"), format!("[::ffff:0.0.0.0]:{port}")]
    {
        let text = with_host(&s.addr, &host, path, "{}");
        assert!(text.starts_with("HTTP/1.1 403"), "Host {host}: {text}");
        assert!(text.contains(&format!("the Host {host} is refused")), "Host {host}: {text}");
    }
    for host in [s.addr.clone(), format!("localhost:{port}"), format!("[::1]:{port}")] {
        let text = with_host(&s.addr, &host, path, "{}");
        assert!(text.starts_with("HTTP/1.1 200"), "Host {host}: {text}");
    }
}

#[test]
fn lock_challenge_is_answered_without_a_token_and_proves_only_the_owner() {
    let dir = vault("proof");
    let s = start(&dir, Some(TOKEN));
    let nonce = "0123456789abcdef0123456789abcdef";
    let r = request(&s.addr, "GET", &format!("/datanotes/proof?nonce={nonce}"), None, &[], "");
    assert_eq!(r.status, 200, "{}", r.body);
    let path = fs::canonicalize(&dir).unwrap().to_string_lossy().to_string();
    assert_eq!(r.json()["vault"], path.as_str(), "it names its vault");
    let store = r.json()["store"].as_str().unwrap().to_string();
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(dir.join(".datanotes")).unwrap();
        assert_eq!(store, format!("{}:{}", m.dev(), m.ino()));
    }
    let id = datanotes_core::proof::VaultId { path, store };
    let want = datanotes_core::proof::lock_proof(TOKEN, &s.addr, &id, nonce);
    assert_eq!(r.json()["proof"], want.as_str());
    let r = request(&s.addr, "GET", "/datanotes/proof?nonce=zz", None, &[], "");
    assert_eq!(r.status, 400, "{}", r.body);
}

#[test]
fn webhooks_refuse_metadata_and_credentials_and_private_addresses_unless_allowed() {
    let dir = vault("hooks");
    let s = start(&dir, Some(TOKEN));
    for (url, status) in [
        ("http://169.254.169.254/latest/meta-data/", 409),
        ("http://[fe80::1]:80/", 409),
        ("https://user:pass@example.com/hook", 400),
        ("http://127.0.0.1:9/hook", 409),
        ("http://192.168.1.1/hook", 409),
    ] {
        let r = common::call(&s, "create_webhook", json!({"url": url, "since": 0}));
        assert_eq!(r.status, status, "{url}: {}", r.body);
    }
    // This device's webhooks file (webhooks.<device>.json).
    let hooks_files = || -> Vec<std::path::PathBuf> {
        let entries = fs::read_dir(dir.join(".datanotes")).unwrap().flatten().map(|e| e.path());
        entries.filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("webhooks")).collect()
    };
    assert!(hooks_files().is_empty(), "nothing was created");
    let r = common::call(&s, "create_webhook", json!({"url": "https://example.com/hook"}));
    assert_eq!(r.status, 200, "{}", r.body);
    let device = r.json()["webhook"]["device"].as_str().unwrap().to_string();
    assert_eq!(hooks_files(), [dir.join(format!(".datanotes/webhooks.{device}.json"))]);
    // The file holds the signing secrets: its owner's alone.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&hooks_files()[0]).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{mode:o}");
    }
    drop(s);

    // The person's flag opens the private ranges, never link-local ones.
    let dir = vault("hooks-private");
    let s = common::start_with(&dir, Some(TOKEN), &["--allow-private-webhooks"]);
    let r = common::call(&s, "create_webhook", json!({"url": "http://127.0.0.1:9/hook"}));
    assert_eq!(r.status, 200, "{}", r.body);
    let r = common::call(&s, "create_webhook", json!({"url": "http://169.254.169.254/"}));
    assert_eq!(r.status, 409, "{}", r.body);
}

/// Runs the test named `test` again in a network and mount namespace of its own
/// (`unshare -n -m`: loopback only, no way out; a file mounted there is seen by
/// no one else). True inside, where the test goes on; outside, false once it
/// passed there, or where no namespace can be had.
fn in_own_network(test: &str) -> bool {
    if std::env::var_os("DATANOTES_TEST_OWN_NETWORK").is_some() {
        return true;
    }
    let probe = std::process::Command::new("unshare").args(["-n", "-m", "--propagation", "private", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("unshare -n -m is not allowed here: {test} is skipped");
        return false;
    }
    let out = std::process::Command::new("unshare")
        .args(["-n", "-m", "--propagation", "private"])
        .arg(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env("DATANOTES_TEST_OWN_NETWORK", "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && stdout.contains("1 passed"), "in its own network:\n{stdout}\n{stderr}");
    false
}

/// A DNS server on 127.0.0.1:53 for `name`: its first A query is answered with
/// `first`, the later ones with `then`, any other question with no address.
/// Counts the A queries for `name`.
fn rebinding_dns(name: &str, first: [u8; 4], then: [u8; 4]) -> Arc<Mutex<usize>> {
    let socket = std::net::UdpSocket::bind("127.0.0.1:53").unwrap();
    let asked = Arc::new(Mutex::new(0));
    let (count, name) = (asked.clone(), name.to_string());
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok((n, from)) = socket.recv_from(&mut buf) {
            let q = &buf[..n];
            // The question: labels from byte 12 to a zero length, then type and class.
            let (mut at, mut labels) = (12, vec![]);
            while at < n && q[at] != 0 {
                let len = q[at] as usize;
                labels.push(String::from_utf8_lossy(&q[(at + 1).min(n)..(at + 1 + len).min(n)]).to_lowercase());
                at += 1 + len;
            }
            let end = at + 5;
            if end > n {
                continue;
            }
            let is_a = q[at + 1..at + 3] == [0, 1];
            let ours = labels.join(".") == name;
            let address = if ours && is_a {
                let mut c = count.lock().unwrap();
                *c += 1;
                Some(if *c == 1 { first } else { then })
            } else {
                None
            };
            // Same id, a recursive answer (NXDOMAIN for names not ours), the
            // question, and the address with a TTL of 0.
            let mut a = vec![q[0], q[1], 0x81, if ours { 0x80 } else { 0x83 }, 0, 1, 0, address.is_some() as u8];
            a.extend_from_slice(&[0, 0, 0, 0]);
            a.extend_from_slice(&q[12..end]);
            if let Some(ip) = address {
                a.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4]);
                a.extend_from_slice(&ip);
            }
            let _ = socket.send_to(&a, from);
        }
    });
    asked
}

#[test]
fn point_8_a_name_whose_answer_changes_never_gets_a_delivery_to_loopback() {
    if !in_own_network("point_8_a_name_whose_answer_changes_never_gets_a_delivery_to_loopback") {
        return;
    }
    // Inside the namespace: loopback up, and this process's DNS for the binary.
    let run = |cmd: &str, args: &[&str]| {
        let out = std::process::Command::new(cmd).args(args).output().unwrap();
        assert!(out.status.success(), "{cmd} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    run("ip", &["link", "set", "lo", "up"]);
    let conf = common::temp_path("resolv.conf");
    fs::write(&conf, "nameserver 127.0.0.1\noptions timeout:1 attempts:2\n").unwrap();
    run("mount", &["--bind", conf.to_str().unwrap(), "/etc/resolv.conf"]);
    // A public address first (no route leads there from here), 127.0.0.1 after.
    let asked = rebinding_dns("rebind.example", [93, 184, 216, 34], [127, 0, 0, 1]);
    let (receiver, seen) = fake_engine("{}");
    let port = receiver.rsplit(':').next().unwrap();

    let dir = vault("rebind");
    let s = common::start_env(&dir, Some(TOKEN), &[], &[("DATANOTES_ALLOW_PRIVATE_WEBHOOKS", "0")]);
    let url = format!("http://rebind.example:{port}/hook");
    let r = common::call(&s, "create_webhook", json!({"url": url, "tables": ["film"]}));
    assert_eq!(r.status, 200, "{}", r.body);
    let path = "datanotes/main/public/film/Charade.md";
    let r = common::call(&s, "update_row", json!({"table": "film", "path": path, "set": {"rating": 2}}));
    assert_eq!(r.status, 200, "{}", r.body);

    // The first delivery finds no route to the public address; the next ones
    // are refused once the name answers 127.0.0.1.
    common::wait_until("a delivery refused for loopback", Duration::from_secs(30), || {
        !seen.lock().unwrap().is_empty() || s.log().contains("resolves to 127.0.0.1, and 127.0.0.1 is a loopback")
    });
    std::thread::sleep(Duration::from_millis(300));
    let got = seen.lock().unwrap().clone();
    assert!(got.is_empty(), "the signed batch reached loopback: {got:?}\n{}", s.log());
    assert!(*asked.lock().unwrap() >= 2, "{}", s.log());
    // The first answer was the one connected to.
    assert!(s.log().contains("Network is unreachable"), "{}", s.log());
    assert!(s.log().contains("--allow-private-webhooks"), "{}", s.log());
}

/// Reads what the server sends until it closes the connection (or `patience` ends):
/// whether it closed, and what it sent.
fn until_closed(s: &mut std::net::TcpStream, patience: Duration) -> (bool, String) {
    s.set_read_timeout(Some(patience)).unwrap();
    let mut got = vec![];
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return (true, String::from_utf8_lossy(&got).to_string()),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::ConnectionReset) => {
                return (true, String::from_utf8_lossy(&got).to_string())
            }
            Err(_) => return (false, String::from_utf8_lossy(&got).to_string()),
        }
    }
}

#[test]
fn half_sent_requests_are_cut_off_and_never_starve_the_server() {
    let dir = vault("half-sent");
    let s = common::start_env(
        &dir,
        Some(TOKEN),
        &[],
        &[("DATANOTES_HEADER_WAIT_MS", "1500"), ("DATANOTES_BODY_WAIT_MS", "1500")],
    );
    // 300 heads that never end, and a body that stops half way.
    let mut heads: Vec<_> = (0..300)
        .map(|_| {
            let mut c = std::net::TcpStream::connect(&s.addr).unwrap();
            write!(c, "POST /datanotes/operations/describe_database HTTP/1.1\r\nHost: {}\r\nX-Slow: ", s.addr).unwrap();
            c
        })
        .collect();
    let mut body = std::net::TcpStream::connect(&s.addr).unwrap();
    write!(
        body,
        "POST /datanotes/operations/describe_database HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"tab",
        s.addr
    )
    .unwrap();
    // Meanwhile the server answers others.
    let r = common::call(&s, "describe_database", json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
    let started = Instant::now();
    let (closed, answer) = until_closed(&mut body, Duration::from_secs(10));
    assert!(closed, "the half-sent body was left open");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within"), "{answer}");
    for c in heads.iter_mut() {
        let (closed, _) = until_closed(c, Duration::from_secs(10));
        assert!(closed, "a half-sent head was left open");
    }
    assert!(started.elapsed() < Duration::from_secs(8), "cut off after {:?}", started.elapsed());
    let r = common::call(&s, "describe_database", json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
}

#[test]
fn disk_full_during_a_write_is_said_in_the_answer_and_reported_at_the_next_open() {
    let dir = common::temp_path("disk-full");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("out")).unwrap();
    let body = "x".repeat(300_000);
    let args = json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "body": body});
    fs::write(dir.join("out/args.json"), args.to_string()).unwrap();
    // A 3 MB disk, a 300 KB note written. The note's text goes to the blobs and
    // the vault before the write's last records (the journal entry completed, the
    // log's commit, the feed): the free space is stepped up a page at a time
    // from what the blob and the note take until the note fits and those records
    // do not.
    let script = format!(
        r#"D={d}/disk; O={d}/out; mkdir -p $D
mount -t tmpfs -o size=3m tmpfs $D
for L in $(seq 592 4 680); do
  rm -rf $D/v $D/filler
  "$BIN" init --vault $D/v --example films >/dev/null
  AVAIL=$(df -k --output=avail $D | tail -1)
  dd if=/dev/zero of=$D/filler bs=1k count=$((AVAIL-L)) 2>/dev/null
  "$BIN" call --vault $D/v update_row - <$O/args.json >$O/answer.json 2>$O/stderr.txt || echo $? >$O/code
  grep -q '"ok": *true' $O/answer.json && grep -q not_recorded $O/answer.json && break
done
find $D/v -name '*datanotes-tmp*' >$O/temp-files
rm $D/filler
"$BIN" call --vault $D/v list_migrations '{{"limit": 1}}' >$O/migrations.json 2>$O/reopen.txt
cp $D/v/datanotes/main/public/film/Charade.md $O/charade.md
umount $D"#,
        d = dir.display()
    );
    let Some(_) = common::in_own_mounts(TOKEN, &script) else { return };
    let read = |f: &str| fs::read_to_string(dir.join("out").join(f)).unwrap();
    let answer: Value = serde_json::from_str(&read("answer.json")).unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    let lacking = answer["not_recorded"].as_array().unwrap_or_else(|| panic!("{answer}"));
    for dir in ["journal/", "log/", "feed/"] {
        assert!(lacking.iter().any(|p| p.as_str().unwrap().starts_with(dir)), "{dir}: {answer}");
    }
    assert!(answer["warning"].as_str().unwrap().contains("No space left on device"), "{answer}");
    assert!(read("stderr.txt").contains("the records it could not write are lost"), "{}", read("stderr.txt"));
    assert_eq!(read("temp-files"), "", "temporary files stayed");
    assert!(read("charade.md").ends_with(&body), "the note holds what the answer says");
    // Reopened with space again: the write is reported as cut short, and undoable.
    let id = answer["migration_id"].as_str().unwrap();
    assert!(read("reopen.txt").contains(&format!("{id} (update film) was cut short")), "{}", read("reopen.txt"));
    let migrations: Value = serde_json::from_str(&read("migrations.json")).unwrap();
    assert_eq!(migrations["migrations"][0]["migration_id"], id);
    assert_eq!(migrations["migrations"][0]["status"], "pending", "{migrations}");
    fs::remove_dir_all(&dir).unwrap();
}

/// Every file under `dir` with its text, for a search of what leaked in.
fn texts_under(dir: &Path) -> Vec<(String, String)> {
    common::snapshot(dir, "").into_iter().map(|(p, b)| (p, String::from_utf8_lossy(&b).into_owned())).collect()
}

#[cfg(unix)]
#[test]
fn point_5_symlinks_are_never_read_or_written_through() {
    use std::os::unix::fs::symlink;
    let v = vault("symlinks");
    let outside = common::temp_path("outside");
    fs::create_dir_all(&outside).unwrap();
    let secret = "---\ntitle: Secret\nyear: 1999\n---\nthe host's secret\n";
    fs::write(outside.join("secret.md"), secret).unwrap();
    let before = common::snapshot(&outside, "");

    // A note that is a link to a file outside the vault is left out, with a warning.
    symlink(outside.join("secret.md"), v.join("datanotes/main/public/film/Secret.md")).unwrap();
    let read = call(&v, "read_note", json!({"path": "datanotes/main/public/film/Secret.md"}));
    assert!(!read.stdout.contains("the host's secret"), "{read:?}");
    assert!(read.stderr.contains("datanotes/main/public/film/Secret.md is a symbolic link (to "), "{}", read.stderr);
    let rows = call(&v, "select_rows", json!({"table": "film", "where": {"title": "Secret"}}));
    assert_eq!(rows.answer()["total"], 0, "{rows:?}");
    // Nor can a write replace the link's target: inserting the same name is refused.
    let insert = call(&v, "insert_row", json!({"table": "film", "values": {"title": "Secret", "year": 2000}}));
    assert_ne!(insert.answer()["ok"], true, "{insert:?}");
    assert!(insert.stdout.contains("symbolic link"), "{insert:?}");

    // A table folder that is a link to a folder outside: no row is written there.
    symlink(&outside, v.join("Outside")).unwrap();
    let table =
        call(&v, "create_table", json!({"table": "clip", "folder": "Outside", "columns": {"name": {"type": "text"}}}));
    assert_eq!(table.answer()["ok"], true, "{table:?}");
    let insert = call(&v, "insert_row", json!({"table": "clip", "values": {"name": "Leak"}}));
    assert_ne!(insert.answer()["ok"], true, "{insert:?}");
    assert!(insert.stdout.contains(".md goes through a symbolic link (it is under Outside)"), "{insert:?}");
    assert_eq!(common::snapshot(&outside, ""), before, "nothing was written outside the vault");
    for (p, text) in texts_under(&v.join(".datanotes")) {
        assert!(!text.contains("the host's secret"), "{p} holds the outside file's text");
    }

    // A store that is a link: no engine opens on it, and nothing is written there.
    let v2 = vault("symlink-store");
    let store = common::temp_path("outside-store");
    fs::rename(v2.join(".datanotes"), &store).unwrap_or_else(|_| fs::create_dir_all(&store).unwrap());
    symlink(&store, v2.join(".datanotes")).unwrap();
    let store_before = common::snapshot(&store, "");
    let run = call(&v2, "select_rows", json!({"table": "film"}));
    assert_ne!(run.code, 0, "{run:?}");
    assert!(run.stderr.contains(".datanotes goes through a symbolic link"), "{run:?}");
    assert_eq!(common::snapshot(&store, ""), store_before);
    for d in [&v, &v2, &outside, &store] {
        let _ = fs::remove_dir_all(d);
    }
}
