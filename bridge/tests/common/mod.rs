//! Helpers shared by the integration tests of the `datanotes` binary: the film
//! diary of `assets/films`, runs of the binary, vaults under the temporary folder,
//! and `serve` on a free loopback port driven by a client made of a bare TCP stream.

// Each test file is a test binary of its own and uses only some of these helpers;
// to the others the rest would be dead code.
#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub const BIN: &str = env!("CARGO_BIN_EXE_datanotes");
/// The film diary, as `datanotes init --example films` writes it.
pub const FILMS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/films");

// ---------------------------------------------------------------- the film diary

/// A note of the example vault as it ships.
pub fn original(rel: &str) -> String {
    fs::read_to_string(Path::new(FILMS).join(rel)).unwrap()
}

/// An answer without its rows' `_version` tokens (hashes of the notes' texts,
/// tested on their own), to compare with the seeds' answers.
pub fn unversioned(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.into_iter().filter(|(k, _)| k != "_version").map(|(k, x)| (k, unversioned(x))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(unversioned).collect()),
        other => other,
    }
}

/// The `title` of each row of a select_rows answer, in order.
pub fn titles(answer: &Value) -> Vec<String> {
    answer["rows"].as_array().unwrap().iter().map(|r| r["title"].as_str().unwrap().to_string()).collect()
}

// ---------------------------------------------------------------- the binary and its vaults

/// What one run of the binary gave.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout read as JSON (Null when it is not).
    pub fn answer(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or(Value::Null)
    }
}

/// The binary with these arguments, in the environment of the tests.
pub fn datanotes(args: &[&str]) -> Run {
    run(Command::new(BIN).args(args))
}

/// The binary with these arguments; `token` sets DATANOTES_TOKEN (None: unset).
pub fn datanotes_as(args: &[&str], token: Option<&str>) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    match token {
        Some(t) => cmd.env("DATANOTES_TOKEN", t),
        None => cmd.env_remove("DATANOTES_TOKEN"),
    };
    run(&mut cmd)
}

/// The binary with these arguments and environment (None: unset).
pub fn datanotes_env(args: &[&str], env: &[(&str, Option<&str>)]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    run(&mut cmd)
}

fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().expect("the datanotes binary runs");
    Run {
        code: out.status.code().expect("an exit code, not a signal"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

static COUNT: AtomicUsize = AtomicUsize::new(0);

/// A folder under the temporary folder that no other test (or run) uses; the folder
/// itself is not made.
pub fn temp_path(name: &str) -> PathBuf {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos();
    let n = COUNT.fetch_add(1, Ordering::SeqCst);
    let test = env!("CARGO_CRATE_NAME");
    std::env::temp_dir().join(format!("datanotes-{test}-{name}-{}-{n}-{nanos}", std::process::id()))
}

/// The film diary in a folder of its own, made by `datanotes init --example films`.
pub fn vault(name: &str) -> PathBuf {
    let dir = temp_path(name);
    let out = Command::new(BIN).args(["init", "--vault"]).arg(&dir).args(["--example", "films"]).output().unwrap();
    assert!(out.status.success(), "init: {}", String::from_utf8_lossy(&out.stderr));
    dir
}

/// Every file under `dir` of `root` (`dir` "": all of it, dot folders and the store
/// included), by its path relative to `root`, with its bytes. Not the store's
/// spare files: scratch space, made ahead by serve at any moment.
pub fn snapshot(root: &Path, dir: &str) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.join(dir)];
    let spares = root.join(".datanotes/spare");
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p == spares {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Polls `f` every 50 ms until it holds; fails the test after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < timeout, "timed out after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

// ---------------------------------------------------------------- serve over HTTP

/// A running `serve`; killed when dropped (even when a test fails half-way), and its
/// vault removed unless `keep` or DATANOTES_TEST_KEEP_VAULTS=1. Kept, a load test's
/// 20,000 files do not slow the next run: on an ext4 without a journal, every new
/// file skips the inodes freed in the last minutes, one look-up each.
pub struct Server {
    pub child: Child,
    pub addr: String,
    pub vault: PathBuf,
    /// Its ready line.
    pub stdout: String,
    /// The owner's token it was given in DATANOTES_TOKEN, which `call` and `op` send.
    pub token: Option<String>,
    pub keep: bool,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !self.keep {
            let _ = fs::remove_dir_all(&self.vault);
        }
    }
}

impl Server {
    /// What it wrote to stderr so far.
    pub fn log(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn file(&self, rel: &str) -> PathBuf {
        self.vault.join(rel)
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.file(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// Kills serve itself with SIGKILL (the process its lock file names, which
    /// may run under a wrapper), as a crash would, and waits until it is gone.
    pub fn kill_serve(&mut self) {
        let lock: Value = serde_json::from_str(&self.read(".datanotes/lock")).expect("serve's lock");
        let pid = lock["pid"].as_u64().expect("its pid").to_string();
        let killed = Command::new("kill").args(["-9", &pid]).status().unwrap();
        assert!(killed.success(), "kill -9 {pid}");
        // Gone, or a zombie its parent has yet to reap: it runs no more.
        let running = || fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
        wait_until("serve to end", Duration::from_secs(20), || !running());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `serve` on `vault`, on a free loopback port, and waits for its ready line.
/// `token` is the owner's token, set in DATANOTES_TOKEN (None: unset).
pub fn start(vault: &Path, token: Option<&str>) -> Server {
    start_with(vault, token, &[])
}

/// As `start`, with more arguments for serve.
pub fn start_with(vault: &Path, token: Option<&str>, args: &[&str]) -> Server {
    start_env(vault, token, args, &[])
}

/// As `start_with`, with environment variables for serve.
pub fn start_env(vault: &Path, token: Option<&str>, args: &[&str], env: &[(&str, &str)]) -> Server {
    start_under(&[], vault, token, args, env)
}

/// As `start_env`, serve run by `wrapper` (a program and its arguments, the
/// binary's path and serve's arguments after them: `strace -f …`); none: run
/// alone. Killing a wrapper may leave serve running: `Server::kill_serve`.
pub fn start_under(wrapper: &[&str], vault: &Path, token: Option<&str>, args: &[&str], env: &[(&str, &str)]) -> Server {
    let mut cmd = match wrapper.split_first() {
        Some((program, rest)) => {
            let mut c = Command::new(program);
            c.args(rest).arg(BIN);
            c
        }
        None => Command::new(BIN),
    };
    cmd.args(["serve", "--vault"]).arg(vault).args(["--listen", "127.0.0.1:0"]).args(args);
    cmd.envs(env.iter().copied());
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
    let mut server = Server {
        child,
        addr: String::new(),
        vault: vault.to_path_buf(),
        stdout: String::new(),
        token: token.map(str::to_string),
        keep: std::env::var("DATANOTES_TEST_KEEP_VAULTS").as_deref() == Ok("1"),
        stderr,
    };
    let line = rx
        .recv_timeout(Duration::from_secs(120))
        .unwrap_or_else(|_| panic!("no serving line; stderr: {}", server.log()));
    assert!(line.starts_with("datanotes: serving "), "{line}");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    server.addr = addr.to_string();
    server.stdout = line;
    server
}

pub struct Reply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The `error` text of a refusal.
    pub fn error(&self) -> String {
        self.json()["error"].as_str().unwrap_or_else(|| panic!("no error in {}", self.body)).to_string()
    }
}

/// One HTTP/1.1 request on its own connection, with `token` as its bearer token
/// (None: no Authorization header) and these other headers. The body is written
/// from another thread, so that a server answering before it has read it all is seen.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: impl Into<Vec<u8>>,
) -> Reply {
    let body = body.into();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(90))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
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
    Reply { status, head: head.to_string(), body }
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

/// `POST /datanotes/operations/<name>/` with `token` and these arguments (any JSON
/// text, well formed or not).
pub fn op_as(s: &Server, token: &str, name: &str, args: impl std::fmt::Display) -> Reply {
    request(&s.addr, "POST", &format!("/datanotes/operations/{name}/"), Some(token), &[], args.to_string())
}

/// `POST /datanotes/operations/<name>/` with the owner's token and these arguments.
pub fn call(s: &Server, name: &str, args: Value) -> Reply {
    request(&s.addr, "POST", &format!("/datanotes/operations/{name}/"), s.token.as_deref(), &[], args.to_string())
}

/// An operation that must answer 200: its answer.
pub fn op(s: &Server, name: &str, args: Value) -> Value {
    let r = call(s, name, args.clone());
    assert_eq!(r.status, 200, "{name} {args}: {}", r.body);
    r.json()
}

/// Runs `script` as root in a mount namespace of its own (a tmpfs mounted there
/// is seen by no one else), with $BIN and $DATANOTES_TOKEN (`token`) set; None
/// where that cannot be had (the test then says it is skipped).
pub fn in_own_mounts(token: &str, script: &str) -> Option<std::process::Output> {
    let probe = std::process::Command::new("unshare").args(["-m", "--propagation", "private", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("unshare -m is not allowed here: the disk-full test is skipped");
        return None;
    }
    let out = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-ec", script])
        .env("BIN", BIN)
        .env("DATANOTES_TOKEN", token)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(out)
}
