//! `datanotes serve --vault DIR [--listen ADDR] [--allow-remote] [--bridge] [--exit-with-stdin]`: one engine
//! for the vault behind the HTTP API and MCP over streamable HTTP, with the vault
//! watcher (hand edits, git), the engine's timers and the webhook sender.
//!
//! Start: take the vault's OS lock (refused when another engine holds it, or the
//! plugin's engine proves it does), listen, name this process and its address in
//! the lock file (`call` and `mcp` forward to it from then on, and wait while the
//! vault opens), open the vault, then print the ready line. Stop (Ctrl-C, SIGTERM): the write under way finishes,
//! the lock goes.

use crate::backend::Backend;
use crate::disk::Disk;
use crate::forward::Remote;
use crate::http::{self, App};
use crate::shared::Shared;
use crate::{deliver, lock, token, watch};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8765";

/// The addresses `listen` names; refused unless all are loopback or `remote`.
pub fn resolve(listen: &str, remote: bool) -> Result<SocketAddr, String> {
    let addrs: Vec<SocketAddr> = listen
        .to_socket_addrs()
        .map_err(|e| format!("--listen {listen}: {e} (give HOST:PORT, e.g. {DEFAULT_LISTEN})"))?
        .collect();
    let Some(first) = addrs.first().copied() else { return Err(format!("--listen {listen} names no address")) };
    if !remote {
        if let Some(a) = addrs.iter().find(|a| !a.ip().is_loopback()) {
            return Err(format!("--listen {listen}: {} is not a loopback address; anyone who can reach it could try the token. Add --allow-remote to serve on it anyway", a.ip()));
        }
    }
    Ok(first)
}

/// How a serve runs, besides its vault and address.
#[derive(Clone, Copy, Default)]
pub struct Mode {
    /// `--allow-remote`: listen on addresses other than loopback.
    pub remote: bool,
    /// `--bridge`: only a bridge to the engine that holds the vault; refuse to open it.
    pub bridge_only: bool,
    /// `--exit-with-stdin`: stop when stdin closes, so that a child of a program
    /// (Obsidian's plugin) never outlives it holding a port.
    pub exit_with_stdin: bool,
    /// Webhooks may send to loopback and private addresses (see
    /// `engine::private_webhooks`).
    pub private_webhooks: bool,
}

/// Serves `vault` at `addr` (see `resolve`) until stopped.
pub fn run(vault: &Path, addr: SocketAddr, mode: Mode) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return crate::out::fail(&format!("cannot start: {e}")),
    };
    runtime.block_on(async move {
        // A live engine holds the vault (Obsidian's plugin, an mcp, another serve):
        // this serve is a bridge to it rather than a second engine.
        if let Some(holder) = live_holder(vault) {
            return match attach(vault, addr, mode, &holder).await {
                Ok(code) => code,
                Err(e) => crate::out::fail(&e),
            };
        }
        if mode.bridge_only {
            return crate::out::fail(&format!(
                "no engine holds {} (--bridge only forwards to one): open the vault in Obsidian, or start datanotes serve without --bridge to hold it",
                vault.display()
            ));
        }
        let held = match hold(vault, addr, mode, None).await {
            Ok(h) => h,
            Err(e) => return crate::out::fail(&e),
        };
        // Listen for Ctrl-C and SIGTERM before saying we are ready: a signal that came
        // before would end the process without removing its lock.
        let stopping = stopped(mode.exit_with_stdin);
        crate::out::say(&format!("datanotes: serving {} at {} ({})", vault.display(), held.base, held.opened));
        let stop = held.shared.clone();
        let guard = held.guard.clone();
        tokio::spawn(async move {
            stopping.await;
            eprintln!("datanotes: stopping");
            stop.exit(0, move || guard.release()).await
        });
        let r = match crate::listen::serve(held.listener, held.router).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => crate::out::fail(&format!("the server stopped: {e}")),
        };
        held.guard.release();
        r
    })
}

/// A vault held by this process: its engine, its lock, and the HTTP API (MCP at
/// /mcp included) ready to serve on `listener`, with the watcher and the webhook
/// sender started.
pub struct Held {
    pub shared: Shared,
    pub guard: Arc<lock::Guard>,
    pub listener: tokio::net::TcpListener,
    pub router: axum::Router,
    /// http://HOST:PORT
    pub base: String,
    /// "token …; N notes opened in S s", for the ready line.
    pub opened: String,
}

/// Start: refuse when another engine holds the vault (`os_lock`, when the caller
/// took the OS lock already), listen at `addr`, claim the lock (`call` and `mcp` forward here from then on, and wait while the vault
/// opens), then open the vault.
pub async fn hold(vault: &Path, addr: SocketAddr, mode: Mode, os_lock: Option<lock::Held>) -> Result<Held, String> {
    if !vault.is_dir() {
        return Err(format!("{} is not a folder (datanotes init --vault DIR makes one)", vault.display()));
    }
    let owner = token::owner(vault)?;
    let os_lock = match os_lock {
        Some(h) => h,
        None => lock::exclusive(vault, &owner.token)?,
    };
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr().unwrap_or(addr);
    // The disk holds the OS lock from now on, as long as this process runs.
    let disk = Disk::new(vault, Some(os_lock));
    let guard = Arc::new(lock::claim(vault, bound)?);
    let opening = Instant::now();
    let shared = match tokio::task::spawn_blocking(move || Shared::open(disk, mode.private_webhooks)).await {
        Ok(r) => r?,
        Err(e) => return Err(format!("the vault did not open: {e}")),
    };
    let (notes, opened) = (shared.with(|h| h.engine.vault().notes.len()), opening.elapsed());
    deliver::start(&shared);
    watch::start(shared.clone());
    shared.read_rows_in_background();
    let base = format!("http://{bound}");
    let credentials = Arc::new(token::Credentials::new(vault, owner.token));
    let app = App {
        backend: Backend::Local(shared.clone()),
        credentials,
        base: Arc::new(base.clone()),
        address: Arc::new(bound.to_string()),
    };
    let router = http::router(app, mode.remote);
    let opened = format!("token {}; {notes} notes opened in {:.2} s", owner.source, opened.as_secs_f64());
    Ok(Held { shared, guard, listener, router, base, opened })
}

/// The engine that holds the vault, when its lock proves it (with the owner's
/// token from DATANOTES_TOKEN or .datanotes/token); None when no engine runs,
/// or when this process cannot tell (then `hold` takes or refuses the vault).
fn live_holder(vault: &Path) -> Option<lock::Lock> {
    let token = crate::forward::owner_token(vault).ok()?;
    let l = lock::read(vault)?;
    let id = token::vault_id(vault);
    (l.pid != std::process::id() && l.challenge(&id, &token, Duration::from_secs(2)) == lock::Answer::Proved)
        .then_some(l)
}

/// A bridge: the whole HTTP API (MCP at /mcp, OpenAPI, docs, long poll) on
/// `addr`, every operation forwarded to the engine that holds the vault with the
/// caller's own token. While that engine is away its callers get 503 with the way
/// out; gone for good (its lock answers no challenge for 10 s), the bridge says
/// so and exits: started again, serve holds the vault itself.
async fn attach(vault: &Path, addr: SocketAddr, mode: Mode, holder: &lock::Lock) -> Result<ExitCode, String> {
    if !vault.is_dir() {
        return Err(format!("{} is not a folder (datanotes init --vault DIR makes one)", vault.display()));
    }
    let owner = crate::forward::owner_token(vault)?;
    let engine = Arc::new(Remote::new(holder, vault)?);
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr().unwrap_or(addr);
    let base = format!("http://{bound}");
    let app = App {
        backend: Backend::Attached(engine.clone()),
        credentials: Arc::new(token::Credentials::new(vault, owner.clone())),
        base: Arc::new(base.clone()),
        address: Arc::new(bound.to_string()),
    };
    let router = http::router(app, mode.remote);
    let stopping = stopped(mode.exit_with_stdin);
    crate::out::say(&format!(
        "datanotes: serving {} at {base} (attached to {}, which holds the vault: every call goes to it)",
        vault.display(),
        engine.who
    ));
    let (v, who) = (vault.to_path_buf(), engine.who.clone());
    tokio::spawn(async move {
        let mut silent = 0;
        loop {
            tokio::time::sleep(Duration::from_secs(2)).await;
            let (v2, t) = (v.clone(), owner.clone());
            let proved = tokio::task::spawn_blocking(move || {
                let id = token::vault_id(&v2);
                lock::read(&v2).is_some_and(|l| l.challenge(&id, &t, Duration::from_secs(2)) == lock::Answer::Proved)
            })
            .await
            .unwrap_or(false);
            silent = if proved { 0 } else { silent + 1 };
            if silent >= 5 {
                eprintln!("datanotes: {who} no longer holds {} (gone for 10 s): stopping; start datanotes serve again to hold the vault itself", v.display());
                std::process::exit(1);
            }
        }
    });
    tokio::select! {
        r = crate::listen::serve(listener, router) => r.map(|()| ExitCode::SUCCESS).map_err(|e| format!("the server stopped: {e}")),
        () = stopping => Ok(ExitCode::SUCCESS),
    }
}

/// Ctrl-C, SIGTERM on Unix, or with `stdin`, the end of stdin (the program that
/// started this process is gone, even if killed). The handlers are installed when
/// this is called; the future resolves when one of them fires.
fn stopped(stdin: bool) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    let signals = signalled();
    if !stdin {
        return Box::pin(signals);
    }
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        use std::io::Read;
        let (mut input, mut buf) = (std::io::stdin().lock(), [0u8; 256]);
        while matches!(input.read(&mut buf), Ok(n) if n > 0) {}
        let _ = tx.send(());
    });
    Box::pin(async move {
        tokio::select! {
            () = signals => {}
            _ = rx => eprintln!("datanotes: stdin closed (the program that started this serve is gone)"),
        }
    })
}

fn signalled() -> impl std::future::Future<Output = ()> + Send {
    #[cfg(unix)]
    let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let ctrl_c = tokio::signal::ctrl_c();
    async move {
        #[cfg(unix)]
        if let Some(mut term) = term {
            tokio::select! {
                _ = ctrl_c => {}
                _ = term.recv() => {}
            }
            return;
        }
        let _ = ctrl_c.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_only_unless_allowed() {
        assert!(resolve("127.0.0.1:0", false).is_ok());
        assert!(resolve("[::1]:0", false).is_ok());
        assert!(resolve("0.0.0.0:8765", false).unwrap_err().contains("--allow-remote"));
        assert!(resolve("0.0.0.0:8765", true).is_ok());
        assert!(resolve("nonsense", false).is_err());
    }
}
