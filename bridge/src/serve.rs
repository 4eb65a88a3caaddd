//! `datanotes serve --vault DIR [--listen ADDR] [--allow-remote]`: one engine
//! for the vault behind the HTTP API and MCP over streamable HTTP.
//
// TODO(issue 6), still to come here: the lock file in .datanotes/ that names this
// process and its address (a second serve refuses, `mcp` and `call` forward to
// it, a stale lock is taken over), named tokens (`datanotes token add|list|revoke`,
// stored hashed, their name as the actor), the vault watcher (notify → observe,
// tick), webhook delivery, and list_changes' wait_ms held outside the engine's
// lock.

use crate::http::{self, App};
use crate::shared::Shared;
use crate::token;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

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

pub fn run(vault: &Path, listen: &str, remote: bool) -> ExitCode {
    let addr = match resolve(listen, remote) {
        Ok(a) => a,
        Err(e) => return crate::usage(&e),
    };
    if !vault.is_dir() {
        return crate::fail(&format!("{} is not a folder (datanotes init --vault DIR makes one)", vault.display()));
    }
    let owner = match token::owner(vault) {
        Ok(o) => o,
        Err(e) => return crate::fail(&e),
    };
    let shared = match Shared::open(vault) {
        Ok(s) => s,
        Err(e) => return crate::fail(&e),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return crate::fail(&format!("cannot start: {e}")),
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => return crate::fail(&format!("cannot listen on {addr}: {e}")),
        };
        let bound = listener.local_addr().unwrap_or(addr);
        let base = format!("http://{bound}");
        let app = App { shared: shared.clone(), token: Arc::new(owner.token), base: Arc::new(base.clone()) };
        let router = http::router(app, remote);
        crate::say(&format!("datanotes: serving {} at {base} (token {})", vault.display(), owner.source));
        let stop = shared.clone();
        tokio::spawn(async move {
            stopped().await;
            eprintln!("datanotes: stopping");
            stop.exit(0).await
        });
        match axum::serve(listener, router).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => crate::fail(&format!("the server stopped: {e}")),
        }
    })
}

/// Ctrl-C, or SIGTERM on Unix.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
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
