//! One engine per vault: `serve` (or `mcp` with no engine running) names itself
//! in `.datanotes/lock` once it listens, and removes the file when it stops.
//! `call` and `mcp` read it to forward to that engine; a second `serve` refuses. A lock whose process is gone,
//! or that no longer answers at its address, is stale and taken over.
//!
//! The file holds no token: `{"format": 1, "pid", "address", "url", "started_at"}`.

use serde_json::{json, Value};
use std::fs;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const FILE: &str = "lock";

/// How long a live serve may take to accept a connection before its lock is
/// taken for stale.
const CONNECT: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, PartialEq)]
pub struct Lock {
    pub pid: u32,
    /// Where it listens, as bound (HOST:PORT).
    pub address: String,
    pub started_at: String,
}

impl Lock {
    pub fn to_json(&self) -> Value {
        json!({
            "format": 1,
            "pid": self.pid,
            "address": self.address,
            "url": self.url(),
            "started_at": self.started_at,
        })
    }

    pub fn parse(text: &str) -> Option<Lock> {
        let v: Value = serde_json::from_str(text).ok()?;
        Some(Lock {
            pid: u32::try_from(v.get("pid")?.as_u64()?).ok()?,
            address: v.get("address")?.as_str()?.to_string(),
            started_at: v.get("started_at").and_then(Value::as_str).unwrap_or_default().to_string(),
        })
    }

    /// The address to connect to: an unspecified address (0.0.0.0, [::]) is
    /// reached on loopback.
    pub fn connect_addr(&self) -> Option<SocketAddr> {
        let mut a: SocketAddr = self.address.parse().ok()?;
        if a.ip().is_unspecified() {
            a.set_ip(match a {
                SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        Some(a)
    }

    /// The base URL calls are forwarded to.
    pub fn url(&self) -> String {
        match self.connect_addr() {
            Some(a) => format!("http://{a}"),
            None => format!("http://{}", self.address),
        }
    }

    /// Whether its process still runs and answers at its address.
    pub fn alive(&self) -> bool {
        if self.pid == std::process::id() || !process_exists(self.pid) {
            return false;
        }
        self.connect_addr().is_some_and(|a| TcpStream::connect_timeout(&a, CONNECT).is_ok())
    }

    /// "process 1234 at http://127.0.0.1:8765 (since …)", for messages.
    pub fn describe(&self) -> String {
        let since = if self.started_at.is_empty() { String::new() } else { format!(", since {}", self.started_at) };
        format!("process {} at {}{since}", self.pid, self.url())
    }
}

/// Linux: /proc names every process. Elsewhere the address decides alone.
fn process_exists(pid: u32) -> bool {
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        proc.join(pid.to_string()).exists()
    } else {
        true
    }
}

pub fn path(vault: &Path) -> PathBuf {
    vault.join(crate::disk::STORE).join(FILE)
}

pub fn read(vault: &Path) -> Option<Lock> {
    Lock::parse(&fs::read_to_string(path(vault)).ok()?)
}

/// The serve that holds the vault now, if one runs.
pub fn running(vault: &Path) -> Option<Lock> {
    read(vault).filter(Lock::alive)
}

/// This process's hold on the vault; `release` (or drop) removes the lock file
/// when it still names this process.
pub struct Guard {
    path: PathBuf,
    pid: u32,
}

impl Guard {
    pub fn release(&self) {
        let ours = fs::read_to_string(&self.path).ok().and_then(|t| Lock::parse(&t)).is_some_and(|l| l.pid == self.pid);
        if ours {
            let _ = fs::remove_file(&self.path);
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.release();
    }
}

/// Claims the vault for this process, listening at `address`: refused when a
/// live serve holds it; a stale lock is taken over. The file appears whole or
/// not at all (written beside it, then hard-linked into place, which fails when
/// another process got there first).
pub fn claim(vault: &Path, address: SocketAddr) -> Result<Guard, String> {
    let file = path(vault);
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let pid = std::process::id();
    let me = Lock { pid, address: address.to_string(), started_at: datanotes_core::time::iso(crate::now_ms()) };
    let tmp = dir.join(format!(".lock.{pid}.datanotes-tmp"));
    let text = serde_json::to_string_pretty(&me.to_json()).unwrap_or_default() + "\n";
    fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    let result = (|| {
        for _ in 0..5 {
            match fs::hard_link(&tmp, &file) {
                Ok(()) => return Ok(Guard { path: file.clone(), pid }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("cannot write {}: {e}", file.display())),
            }
            match fs::read_to_string(&file).ok().and_then(|t| Lock::parse(&t)) {
                Some(other) if other.alive() => {
                    return Err(format!(
                        "{} is served already by {}: stop it first (datanotes call and datanotes mcp forward to it)",
                        vault.display(),
                        other.describe()
                    ))
                }
                Some(other) => {
                    eprintln!("datanotes: taking over the stale lock of {} (it no longer runs)", other.describe())
                }
                None => eprintln!("datanotes: taking over an unreadable lock file {}", file.display()),
            }
            let _ = fs::remove_file(&file);
        }
        Err(format!("cannot take the lock {}: another process keeps making it", file.display()))
    })();
    let _ = fs::remove_file(&tmp);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_it_writes() {
        let l = Lock { pid: 42, address: "0.0.0.0:8765".into(), started_at: "2026-01-01T00:00:00.000Z".into() };
        let back = Lock::parse(&l.to_json().to_string()).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.url(), "http://127.0.0.1:8765");
        assert!(Lock::parse("{\"pid\": \"x\"}").is_none());
        assert!(Lock::parse("garbage").is_none());
    }

    #[test]
    fn a_dead_or_silent_process_is_stale() {
        let l = Lock { pid: std::process::id(), address: "127.0.0.1:1".into(), started_at: String::new() };
        assert!(!l.alive(), "our own pid is never a running serve");
        let l = Lock { pid: u32::MAX - 1, address: "127.0.0.1:1".into(), started_at: String::new() };
        assert!(!l.alive());
    }

    #[test]
    fn claims_releases_and_takes_over() {
        let dir = std::env::temp_dir().join(format!("datanotes-lock-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        // A stale lock (no such process) is taken over.
        fs::create_dir_all(dir.join(".datanotes")).unwrap();
        fs::write(path(&dir), r#"{"pid": 4294967294, "address": "127.0.0.1:1"}"#).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let g = claim(&dir, listener.local_addr().unwrap()).unwrap();
        let l = read(&dir).unwrap();
        assert_eq!(l.pid, std::process::id());
        g.release();
        assert!(!path(&dir).exists());
        let _ = fs::remove_dir_all(&dir);
    }
}
