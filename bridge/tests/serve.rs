//! End to end: the real binary's `serve` on a temporary film diary, over HTTP on
//! a free loopback port, with a client made of a bare TCP stream.

use datanotes_core::ops::registry::{Access, OPS};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_datanotes");
const TOKEN: &str = "serve-test-token-5f1c0a9e7b3d";
const CHARADE: &str = "datanotes/main/public/film/Charade.md";

/// A running `serve`; killed (and its vault removed) when dropped, even when a
/// test fails half-way.
struct Server {
    child: Child,
    addr: String,
    vault: PathBuf,
    stdout: String,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.vault);
    }
}

fn vault(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("datanotes-serve-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let out = Command::new(BIN).args(["init", "--vault"]).arg(&dir).args(["--example", "films"]).output().unwrap();
    assert!(out.status.success(), "init: {}", String::from_utf8_lossy(&out.stderr));
    dir
}

/// Starts `serve` on `vault` and waits for its "serving" line.
fn start(vault: PathBuf, token: Option<&str>) -> Server {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--vault"]).arg(&vault).args(["--listen", "127.0.0.1:0"]);
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    match token {
        Some(t) => cmd.env("DATANOTES_TOKEN", t),
        None => cmd.env_remove("DATANOTES_TOKEN"),
    };
    let mut child = cmd.spawn().unwrap();
    let stderr = Arc::new(Mutex::new(String::new()));
    let (err_pipe, log) = (child.stderr.take().unwrap(), stderr.clone());
    std::thread::spawn(move || {
        for line in BufReader::new(err_pipe).lines().map_while(Result::ok) {
            log.lock().unwrap().push_str(&format!("{line}\n"));
        }
    });
    let out_pipe = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out_pipe).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut server = Server { child, addr: String::new(), vault, stdout: String::new(), stderr };
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("no serving line; stderr: {}", server.stderr.lock().unwrap()));
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    server.addr = addr.to_string();
    server.stdout = line;
    server
}

struct Reply {
    status: u16,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// One HTTP/1.1 request on its own connection. The body is written from another
/// thread, so that a server answering before it has read it all is seen.
fn request(addr: &str, method: &str, path: &str, token: Option<&str>, body: Vec<u8>) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n", body.len());
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).unwrap();
    let mut w = s.try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = w.write_all(&body);
    });
    let mut raw = vec![];
    let _ = s.read_to_end(&mut raw);
    let _ = writer.join();
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no HTTP answer: {text:?}"));
    let status =
        head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("no status: {head}"));
    let body =
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { unchunk(body) } else { body.to_string() };
    Reply { status, body }
}

fn unchunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

fn op(server: &Server, name: &str, token: Option<&str>, body: &str) -> Reply {
    request(&server.addr, "POST", &format!("/datanotes/operations/{name}/"), token, body.as_bytes().to_vec())
}

/// Every file of the vault (the store included) and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_string_lossy().to_string(), fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn reads_writes_and_refusals() {
    let s = start(vault("rw"), Some(TOKEN));
    assert!(s.stdout.starts_with("datanotes: serving "), "{}", s.stdout);
    assert!(s.stdout.contains("token from DATANOTES_TOKEN"), "{}", s.stdout);

    let r =
        op(&s, "select_rows", Some(TOKEN), r#"{"table": "film", "columns": ["title", "year"], "order_by": "year"}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    let a = r.json();
    assert_eq!(a["total"], 7);
    let rows = a["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 7);
    assert!(rows.iter().all(|r| r["title"].is_string() && r["path"].is_string()), "{}", r.body);
    let years: Vec<i64> = rows.iter().map(|r| r["year"].as_i64().unwrap()).collect();
    assert!(years.windows(2).all(|w| w[0] <= w[1]), "ordered by year: {years:?}");

    // Without the trailing slash too, and an empty body is {}.
    let r = request(&s.addr, "POST", "/datanotes/operations/describe_database", Some(TOKEN), vec![]);
    assert_eq!(r.status, 200, "{}", r.body);

    let r =
        op(&s, "update_row", Some(TOKEN), &json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}).to_string());
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["ok"], true);
    let text = fs::read_to_string(s.vault.join(CHARADE)).unwrap();
    assert!(text.contains("\nrating: 4\n"), "{text}");

    // The journal records the owner's token as the actor.
    let r = op(&s, "list_migrations", Some(TOKEN), r#"{"limit": 1}"#);
    assert_eq!(r.json()["migrations"][0]["by"], "owner", "{}", r.body);

    let before = snapshot(&s.vault);
    let r =
        op(&s, "update_row", Some(TOKEN), &json!({"table": "film", "path": CHARADE, "set": {"rating": 9}}).to_string());
    assert_eq!(r.status, 409, "{}", r.body);
    let err = r.json()["error"].as_str().unwrap().to_string();
    assert!(err.contains("update_row refused") && err.contains("rating_range") && err.contains("Hint: "), "{err}");
    assert_eq!(snapshot(&s.vault), before, "a refusal writes nothing");

    // One line per request on stderr: method, path, status, milliseconds.
    std::thread::sleep(Duration::from_millis(100));
    let log = s.stderr.lock().unwrap().clone();
    assert!(
        log.lines().any(|l| l.contains("POST /datanotes/operations/update_row/ 409 ") && l.ends_with("ms")),
        "{log}"
    );
}

#[test]
fn bad_input_changes_nothing() {
    let s = start(vault("bad"), Some(TOKEN));
    let write = json!({"table": "film", "path": CHARADE, "set": {"rating": 1}}).to_string();
    let before = snapshot(&s.vault);

    // (what, token, body, status, what the error says)
    type Case<'a> = (&'a str, Option<&'a str>, Vec<u8>, u16, &'a str);
    let cases: Vec<Case> = vec![
        ("malformed JSON", Some(TOKEN), br#"{"table": "film", "set": "#.to_vec(), 400, "not JSON"),
        ("a JSON array", Some(TOKEN), br#"[{"table": "film"}]"#.to_vec(), 400, "must be a JSON object"),
        (
            "an unknown argument",
            Some(TOKEN),
            br#"{"table": "film", "path": "datanotes/main/public/film/Charade.md", "sett": {"rating": 1}}"#.to_vec(),
            400,
            "unknown argument \"sett\"",
        ),
        (
            "a mistyped argument",
            Some(TOKEN),
            br#"{"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": "rating=1"}"#.to_vec(),
            400,
            "set",
        ),
        ("a missing argument", Some(TOKEN), br#"{"table": "film", "set": {"rating": 1}}"#.to_vec(), 400, "path"),
        (
            "path traversal",
            Some(TOKEN),
            br#"{"table": "film", "path": "../../etc/passwd", "set": {"rating": 1}}"#.to_vec(),
            400,
            "not a path inside the vault",
        ),
        ("no token", None, write.as_bytes().to_vec(), 401, "bearer token"),
        ("a wrong token", Some("serve-test-token-5f1c0a9e7b3e"), write.as_bytes().to_vec(), 401, "wrong bearer token"),
        ("a shorter token", Some("serve"), write.as_bytes().to_vec(), 401, "wrong bearer token"),
        (
            "a body over 4 MiB",
            Some(TOKEN),
            {
                let mut b = format!(r#"{{"table": "film", "path": "{CHARADE}", "body": ""#).into_bytes();
                b.resize(5 << 20, b'x');
                b.extend_from_slice(b"\"}");
                b
            },
            413,
            "larger than 4 MiB",
        ),
    ];
    for (what, token, body, status, says) in cases {
        let r = request(&s.addr, "POST", "/datanotes/operations/update_row/", token, body);
        assert_eq!(r.status, status, "{what}: {}", r.body);
        let err = r.json()["error"].as_str().unwrap_or_else(|| panic!("{what}: no error in {}", r.body)).to_string();
        assert!(err.contains(says), "{what}: {err}");
    }
    // An unknown operation: bad input, as core answers it.
    let r = op(&s, "update_rowz", Some(TOKEN), "{}");
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("did you mean"), "{}", r.body);
    // A route that does not exist.
    let r = request(&s.addr, "GET", "/nothing", Some(TOKEN), vec![]);
    assert_eq!(r.status, 404);
    assert!(r.json()["error"].is_string());

    assert_eq!(snapshot(&s.vault), before, "bad input writes nothing");
    // The server still serves.
    assert_eq!(op(&s, "select_rows", Some(TOKEN), r#"{"table": "film", "limit": 1}"#).status, 200);
}

#[test]
fn openapi_lists_every_operation() {
    let s = start(vault("openapi"), Some(TOKEN));
    let r = request(&s.addr, "GET", "/datanotes/openapi.json", None, vec![]);
    assert_eq!(r.status, 200, "{}", r.body);
    let d = r.json();
    assert_eq!(d["openapi"], "3.1.0");
    assert_eq!(d["servers"][0]["url"], format!("http://{}", s.addr));
    assert_eq!(d["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    assert_eq!(d["paths"].as_object().unwrap().len(), OPS.len());
    for op in OPS {
        let post = &d["paths"][format!("/datanotes/operations/{}/", op.name)]["post"];
        assert_eq!(post["operationId"], op.name, "{} is listed", op.name);
        assert_eq!(post["requestBody"]["content"]["application/json"]["schema"], op.input_schema());
        let responses = post["responses"].as_object().unwrap();
        for code in ["200", "400", "401", "409", "500"] {
            assert!(responses.contains_key(code), "{} answers {code}", op.name);
        }
        assert_eq!(responses.contains_key("503"), op.access != Access::Read, "{}: 503 for writes", op.name);
        assert_eq!(responses["400"]["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/Error");
    }
}

#[test]
fn the_token_file_is_made_for_the_owner_alone() {
    let dir = vault("token");
    let s = start(dir.clone(), None);
    let file = dir.join(".datanotes/token");
    assert!(s.stdout.contains(&format!("token in {}", file.display())), "{}", s.stdout);
    let token = fs::read_to_string(&file).unwrap().trim().to_string();
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|c| c.is_ascii_hexdigit()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    assert_eq!(op(&s, "describe_database", Some(&token), "{}").status, 200);
    assert_eq!(op(&s, "describe_database", Some(TOKEN), "{}").status, 401);
    drop(s);

    // The next start reads the same token.
    let dir = vault("token2");
    fs::create_dir_all(dir.join(".datanotes")).unwrap();
    fs::write(dir.join(".datanotes/token"), "kept-token\n").unwrap();
    let s = start(dir, None);
    assert_eq!(op(&s, "describe_database", Some("kept-token"), "{}").status, 200);
}

#[test]
fn a_non_loopback_address_needs_allow_remote() {
    let dir = vault("remote");
    let out = Command::new(BIN)
        .args(["serve", "--vault"])
        .arg(&dir)
        .args(["--listen", "0.0.0.0:0"])
        .env("DATANOTES_TOKEN", TOKEN)
        .output()
        .unwrap();
    let _ = fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-remote"), "{err}");
    assert!(out.stdout.is_empty());
}
