//! One engine per vault. Two guards:
//!
//! - an OS lock (flock) on the store's folder `.datanotes/` itself, held for the
//!   engine's lifetime by every process of ours that opens the vault. The system
//!   drops it when the process ends, however it ends, and no file a person, git
//!   or a sync tool deletes takes it away (a lock on a file did: `git clean -fdX`
//!   deletes ignored files, and a second engine then locked a new one). The
//!   folder itself replaced is caught at the next write (`Locked::check`).
//!   `.datanotes/engine.lock` is locked too, as earlier versions lock only it.
//! - `.datanotes/lock`, which names the engine that answers calls:
//!   `{"format": 1, "pid", "address", "url", "started_at"}`, no token. `serve`, a
//!   lone `mcp` and the Obsidian plugin (which has no OS lock to hold) write it.
//!   `call` and `mcp` forward there, but the vault may come from git or a sync
//!   tool, so anybody can plant one: a lock is believed only for a loopback
//!   address whose engine proves, by a fresh challenge, that it holds the owner's
//!   token for this very vault (see `datanotes_core::proof`). Nothing else is
//!   sent before that.

use crate::files::{identity, Identity, STORE};
use crate::token::vault_id;
use datanotes_core::proof::{self, VaultId};
use serde_json::{json, Value};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub const FILE: &str = "lock";
pub const OS_LOCK: &str = "engine.lock";
/// The unauthenticated route where an engine answers a challenge.
pub const PROOF_ROUTE: &str = "/datanotes/proof";

/// How long a proof may take when no engine of ours holds the OS lock: only the
/// plugin can then be live, and it answers at once.
const QUICK: Duration = Duration::from_secs(2);
/// How long `call` and `mcp` wait for an engine of ours that holds the OS lock
/// to answer (it may be opening a large vault) or to end: a minute, or
/// DATANOTES_LOCK_WAIT_MS.
pub fn patience() -> Duration {
    let ms = std::env::var("DATANOTES_LOCK_WAIT_MS").ok().and_then(|v| v.trim().parse().ok());
    Duration::from_millis(ms.unwrap_or(60_000))
}

/// What the engine a lock names answered to a challenge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Answer {
    /// It holds the owner's token.
    Proved,
    /// It speaks the protocol but not with this token: an engine served with
    /// another token (DATANOTES_TOKEN), or an impostor.
    Wrong,
    /// It holds the owner's token, for another vault (one token serves both):
    /// it holds not this one, and the lock is as stale as a silent one.
    Elsewhere,
    /// No such process, no loopback address, or no proof at all: a stale lock.
    Silent,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Lock {
    pub pid: u32,
    /// Where it listens, as bound (HOST:PORT).
    pub address: String,
    pub started_at: String,
    /// The device whose engine wrote it (bridge/src/device.rs): a lock a sync
    /// tool brought from another device names no engine here.
    pub device: Option<String>,
}

impl Lock {
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "format": 1,
            "pid": self.pid,
            "address": self.address,
            "url": self.url(),
            "started_at": self.started_at,
        });
        if let Some(d) = &self.device {
            v["device"] = d.clone().into();
        }
        v
    }

    pub fn parse(text: &str) -> Option<Lock> {
        let v: Value = serde_json::from_str(text).ok()?;
        Some(Lock {
            pid: u32::try_from(v.get("pid")?.as_u64()?).ok()?,
            address: v.get("address")?.as_str()?.to_string(),
            started_at: v.get("started_at").and_then(Value::as_str).unwrap_or_default().to_string(),
            device: v.get("device").and_then(Value::as_str).map(str::to_string),
        })
    }

    /// The loopback address to connect to (an unspecified address, 0.0.0.0 or
    /// [::], is reached on loopback); None for any other: calls never leave the
    /// machine on a lock file's word. The file's `url` is never read.
    pub fn connect_addr(&self) -> Option<SocketAddr> {
        let mut a: SocketAddr = self.address.parse().ok()?;
        if a.ip().is_unspecified() {
            a.set_ip(match a {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        a.ip().is_loopback().then_some(a)
    }

    /// The base URL calls are forwarded to.
    pub fn url(&self) -> String {
        match self.connect_addr() {
            Some(a) => format!("http://{a}"),
            None => format!("http://{}", self.address),
        }
    }

    /// Whether another process runs under its pid and, at its loopback address,
    /// answers a fresh challenge with the proof only the holder of `token` can
    /// compute for `vault`.
    pub fn challenge(&self, vault: &VaultId, token: &str, wait: Duration) -> Answer {
        if self.pid == std::process::id() || !process_exists(self.pid) {
            return Answer::Silent;
        }
        let Some(addr) = self.connect_addr() else { return Answer::Silent };
        let Ok(nonce) = crate::token::new_token() else { return Answer::Silent };
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(Duration::from_millis(500)))
            .timeout_global(Some(wait))
            .build()
            .new_agent();
        let url = format!("http://{addr}{PROOF_ROUTE}?nonce={nonce}");
        let Ok(mut res) = agent.get(&url).call() else { return Answer::Silent };
        let Ok(text) = res.body_mut().with_config().limit(4096).read_to_string() else { return Answer::Silent };
        let Ok(v) = serde_json::from_str::<Value>(&text) else { return Answer::Silent };
        let Some(given) = v.get("proof").and_then(Value::as_str) else { return Answer::Silent };
        if proof::same(given, &proof::lock_proof(token, &self.address, vault, &nonce)) {
            return Answer::Proved;
        }
        // The vault it says it holds: a proof over that one tells another vault's
        // engine (the same token) from an impostor.
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        match (text("vault"), text("store")) {
            (Some(path), Some(store)) => {
                let theirs = VaultId { path, store };
                let theirs_proved = proof::same(given, &proof::lock_proof(token, &self.address, &theirs, &nonce));
                if theirs != *vault && theirs_proved {
                    Answer::Elsewhere
                } else {
                    Answer::Wrong
                }
            }
            _ => Answer::Wrong,
        }
    }

    /// "process 1234 at http://127.0.0.1:8765 (since …)", for messages.
    pub fn describe(&self) -> String {
        let since = if self.started_at.is_empty() { String::new() } else { format!(", since {}", self.started_at) };
        format!("process {} at {}{since}", self.pid, self.url())
    }
}

/// Linux: /proc names every process. Elsewhere the proof decides alone.
fn process_exists(pid: u32) -> bool {
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        proc.join(pid.to_string()).exists()
    } else {
        true
    }
}

pub fn path(vault: &Path) -> PathBuf {
    vault.join(STORE).join(FILE)
}

/// The lock, unless a sync tool brought it from another device (whose engine
/// is not on this machine: never forwarded to, never waited for).
pub fn read(vault: &Path) -> Option<Lock> {
    let lock = Lock::parse(&fs::read_to_string(path(vault)).ok()?)?;
    let here = crate::device::id().ok();
    match (&lock.device, &here) {
        (Some(theirs), Some(mine)) if theirs != mine => None,
        _ => Some(lock),
    }
}

/// The OS lock on the vault, held until this is dropped or the process ends.
#[derive(Debug)]
pub struct Held {
    /// The store's folder, locked (None where its file system cannot lock one).
    _folder: Option<File>,
    _file: File,
    locked: Locked,
}

impl Held {
    /// The store's folder as locked, for every write to check (`Locked::check`).
    pub fn locked(&self) -> Locked {
        self.locked.clone()
    }
}

/// A store (a vault's `.datanotes`) with the identity of the folder this
/// process locked, if it holds it: every write checks that the store is still
/// that folder. The lock is the process's, as the system keeps it.
#[derive(Debug, Clone)]
pub struct Locked {
    store: PathBuf,
    id: Option<Identity>,
}

impl Locked {
    /// A store this process does not hold (a bench's vault): never refused.
    pub fn not_held(store: PathBuf) -> Locked {
        Locked { store, id: None }
    }

    pub fn store(&self) -> &Path {
        &self.store
    }

    /// Refuses a write to the store when this process holds it and it is no
    /// longer the folder it locked: deleted, moved away or replaced (by a link,
    /// or by a new folder another engine may hold). A store this process does
    /// not hold (or whose folder has no identity here) is not checked.
    pub fn check(&self) -> Result<(), String> {
        let Some(locked) = self.id else { return Ok(()) };
        let now = fs::symlink_metadata(&self.store).ok().filter(fs::Metadata::is_dir).and_then(|m| identity(&m));
        if now == Some(locked) {
            return Ok(());
        }
        Err(format!(
            "{} is no longer the store this engine opened (it was deleted, moved or replaced while the engine ran): nothing more is written there. Stop every datanotes process on the vault, put the store folder back, and start the engine again",
            self.store.display()
        ))
    }
}

/// What locking the store's folder gave.
enum Folder {
    Locked(File),
    Taken,
    /// Its file system cannot lock a folder: why.
    Unlockable(String),
}

#[cfg(unix)]
fn lock_folder(dir: &Path) -> Folder {
    use std::os::unix::fs::OpenOptionsExt;
    // Never through a link: the lock must be on the vault's own store.
    let opened = OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW).open(dir);
    let folder = match opened {
        Ok(f) => f,
        Err(e) => return Folder::Unlockable(e.to_string()),
    };
    match folder.try_lock() {
        Ok(()) => Folder::Locked(folder),
        Err(TryLockError::WouldBlock) => Folder::Taken,
        Err(TryLockError::Error(e)) => Folder::Unlockable(e.to_string()),
    }
}

#[cfg(not(unix))]
fn lock_folder(_dir: &Path) -> Folder {
    Folder::Unlockable(String::new())
}

/// Takes the OS lock if no other process holds it (None when one does).
pub fn try_hold(vault: &Path) -> Result<Option<Held>, String> {
    if !vault.is_dir() {
        return Err(format!("{} is not a folder (datanotes init --vault DIR makes one)", vault.display()));
    }
    crate::files::store_not_a_link(vault)?;
    let dir = vault.join(STORE);
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let folder = match lock_folder(&dir) {
        Folder::Locked(f) => Some(f),
        Folder::Taken => return Ok(None),
        Folder::Unlockable(why) => {
            if cfg!(unix) {
                eprintln!("datanotes: warning: {} cannot be locked as a folder ({why}): only {OS_LOCK} in it keeps a second engine out, and deleting that file takes it away", dir.display());
            }
            None
        }
    };
    let file = dir.join(OS_LOCK);
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&file)
        .map_err(|e| format!("cannot open {}: {e}", file.display()))?;
    match f.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(None),
        Err(TryLockError::Error(e)) => return Err(format!("cannot lock {}: {e}", file.display())),
    }
    // The folder as locked, not as its path names it now.
    let meta = match &folder {
        Some(f) => f.metadata().ok(),
        None => fs::symlink_metadata(&dir).ok(),
    };
    let locked = Locked { id: meta.as_ref().and_then(identity), store: dir };
    Ok(Some(Held { _folder: folder, _file: f, locked }))
}

/// Where this process's calls go: to the engine that holds the vault, or to an
/// engine of its own, which then holds the OS lock.
pub enum Reach {
    Forward(Lock),
    Own(Held),
}

/// Decides where calls go. With the OS lock free, only the plugin can hold the
/// vault: its lock must prove itself, else this process opens the vault. With
/// the OS lock taken, another process of ours runs: its lock is awaited (a serve
/// opening a large vault) or its end (a `call` on an engine of its own), up to
/// `patience`. `token` is the owner's, when this process has it.
pub fn reach(vault: &Path, token: Option<&str>, patience: Duration) -> Result<Reach, String> {
    let start = Instant::now();
    loop {
        let held = try_hold(vault)?;
        let wait = if held.is_some() { QUICK } else { patience.saturating_sub(start.elapsed()).max(QUICK) };
        let lock = read(vault);
        let id = vault_id(vault);
        let answer = lock.as_ref().map_or(Answer::Silent, |l| l.challenge(&id, token.unwrap_or_default(), wait));
        match (answer, lock) {
            (Answer::Proved, Some(l)) => return Ok(Reach::Forward(l)),
            // Another token, or an impostor: waiting would not change that.
            (Answer::Wrong, Some(l)) => return Err(unproved(vault, &l, token.is_some())),
            (Answer::Elsewhere, Some(l)) if held.is_some() => {
                eprintln!(
                    "datanotes: {} names {}, which holds another vault: ignored",
                    path(vault).display(),
                    l.describe()
                );
            }
            _ => {}
        }
        if let Some(h) = held {
            return Ok(Reach::Own(h));
        }
        if start.elapsed() >= patience {
            let named = match read(vault) {
                Some(l) => format!("; {}", unproved(vault, &l, token.is_some())),
                None => String::new(),
            };
            return Err(format!(
                "{} is held by another datanotes process (the OS lock on {}){named}: wait for it to end, or stop it",
                vault.display(),
                vault.join(STORE).join(OS_LOCK).display()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn unproved(vault: &Path, l: &Lock, token: bool) -> String {
    let why = if token {
        "cannot prove it holds the owner's token (DATANOTES_TOKEN or .datanotes/token): give this process the token it serves with"
    } else {
        "cannot be reached without the owner's token: set DATANOTES_TOKEN to the token it serves with"
    };
    format!(
        "{} is held by {}, which {why}; if that is not datanotes, delete {}",
        vault.display(),
        l.describe(),
        path(vault).display()
    )
}

/// The OS lock for a process that must hold the vault itself (`serve`): refused
/// at once when another engine holds it, naming that engine when its lock proves.
pub fn exclusive(vault: &Path, token: &str) -> Result<Held, String> {
    let taken = |who: String| {
        format!(
            "{} is served already by {who}: stop it first, or send your calls to it (datanotes call and datanotes mcp forward to it)",
            vault.display()
        )
    };
    let held = try_hold(vault)?;
    // After try_hold, which makes the store its identity names.
    let id = vault_id(vault);
    let Some(held) = held else {
        let who = read(vault).filter(|l| l.challenge(&id, token, QUICK) == Answer::Proved).map(|l| l.describe());
        return Err(taken(who.unwrap_or_else(|| "another datanotes process (it holds the OS lock)".into())));
    };
    match read(vault) {
        Some(l) if matches!(l.challenge(&id, token, QUICK), Answer::Proved | Answer::Wrong) => Err(taken(l.describe())),
        Some(l) => {
            eprintln!(
                "datanotes: taking over the stale lock of {} (it no longer runs, or answers no challenge)",
                l.describe()
            );
            Ok(held)
        }
        None => Ok(held),
    }
}

/// The lock file naming this process and its address (the OS lock is held
/// apart: `Held`). `release` (or drop) removes the file when it still names
/// this process.
pub struct Guard {
    path: PathBuf,
    pid: u32,
}

impl Guard {
    pub fn release(&self) {
        if read_at(&self.path).is_some_and(|l| l.pid == self.pid) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

fn read_at(path: &Path) -> Option<Lock> {
    Lock::parse(&fs::read_to_string(path).ok()?)
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.release();
    }
}

/// Names this process, listening at `address`, in the lock file (written whole
/// or not at all): only while it holds the OS lock (`Held`), which the caller
/// keeps.
pub fn claim(vault: &Path, address: SocketAddr) -> Result<Guard, String> {
    let file = path(vault);
    let pid = std::process::id();
    let started_at = datanotes_core::time::iso(crate::clock::now_ms());
    let me = Lock { pid, address: address.to_string(), started_at, device: crate::device::id().ok() };
    let text = serde_json::to_string_pretty(&me.to_json()).unwrap_or_default() + "\n";
    crate::files::write_atomic(&file, &text).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(Guard { path: file, pid })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("datanotes-lock-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn parses_what_it_writes_and_only_reaches_loopback() {
        let l = Lock {
            pid: 42,
            address: "0.0.0.0:8765".into(),
            started_at: "2026-01-01T00:00:00.000Z".into(),
            device: None,
        };
        let back = Lock::parse(&l.to_json().to_string()).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.url(), "http://127.0.0.1:8765");
        let mine = Lock { device: Some("laptop".into()), ..l.clone() };
        assert_eq!(Lock::parse(&mine.to_json().to_string()), Some(mine));
        assert!(Lock::parse("{\"pid\": \"x\"}").is_none());
        assert!(Lock::parse("garbage").is_none());
        for far in ["10.0.0.5:80", "93.184.216.34:443", "[fe80::1]:80", "example.com:80"] {
            let l = Lock { pid: 42, address: far.into(), started_at: String::new(), device: None };
            assert_eq!(l.connect_addr(), None, "{far}");
            assert_eq!(l.challenge(&vault_id(Path::new(".")), "t", QUICK), Answer::Silent, "{far}");
        }
    }

    #[test]
    fn a_dead_or_silent_process_is_stale() {
        let l =
            Lock { pid: std::process::id(), address: "127.0.0.1:1".into(), started_at: String::new(), device: None };
        let id = vault_id(Path::new("."));
        assert_eq!(l.challenge(&id, "t", QUICK), Answer::Silent, "our own pid is never another engine");
        let l = Lock { pid: u32::MAX - 1, address: "127.0.0.1:1".into(), started_at: String::new(), device: None };
        assert_eq!(l.challenge(&id, "t", QUICK), Answer::Silent);
    }

    #[test]
    fn the_os_lock_is_one_holder_at_a_time() {
        let d = dir("os");
        let first = try_hold(&d).unwrap().expect("free at first");
        assert!(try_hold(&d).unwrap().is_none(), "held by the first");
        drop(first);
        assert!(try_hold(&d).unwrap().is_some(), "free once dropped");
        let _ = fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn point_52_4_deleting_the_lock_files_takes_no_lock_and_a_replaced_store_is_written_no_more() {
        let d = dir("deleted");
        let store = d.join(STORE);
        let held = try_hold(&d).unwrap().expect("free at first");
        // What `git clean -fdX` does: both lock files are ignored.
        let _ = fs::remove_file(store.join(OS_LOCK));
        let _ = fs::remove_file(store.join(FILE));
        assert!(try_hold(&d).unwrap().is_none(), "the store's folder itself is locked");
        let locked = held.locked();
        assert!(locked.check().is_ok());
        // The whole store moved away and made again: another folder, not ours.
        fs::rename(&store, d.join("moved")).unwrap();
        fs::create_dir(&store).unwrap();
        let e = locked.check().unwrap_err();
        assert!(e.contains("no longer the store this engine opened"), "{e}");
        let writes = crate::store::Store::new(&d, held.locked());
        assert!(writes.file("journal/a.json", true).is_err(), "no write goes there");
        fs::remove_dir(&store).unwrap();
        std::os::unix::fs::symlink(d.join("moved"), &store).unwrap();
        assert!(locked.check().is_err(), "nor through a link to it");
        drop(held);
        let not_held = Locked::not_held(store.clone());
        assert!(not_held.check().is_ok(), "a store this process does not hold is not its to check");
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn claims_releases_and_refuses_while_held() {
        let d = dir("claim");
        // A planted lock naming pid 1 at a silent address is taken over.
        fs::create_dir_all(d.join(".datanotes")).unwrap();
        fs::write(path(&d), r#"{"pid": 1, "address": "127.0.0.1:1", "url": "http://evil.example"}"#).unwrap();
        let held = exclusive(&d, "tok").unwrap();
        assert!(exclusive(&d, "tok").unwrap_err().contains("served already"));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let g = claim(&d, listener.local_addr().unwrap()).unwrap();
        assert_eq!(read(&d).unwrap().pid, std::process::id());
        assert!(
            matches!(reach(&d, Some("tok"), Duration::from_millis(200)), Err(e) if e.contains("held by another datanotes process"))
        );
        drop(g);
        assert!(!path(&d).exists());
        drop(held);
        assert!(matches!(reach(&d, Some("tok"), Duration::from_millis(200)), Ok(Reach::Own(_))));
        let _ = fs::remove_dir_all(&d);
    }
}
