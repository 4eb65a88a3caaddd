//! `datanotes mcp --vault DIR`: the MCP server (`mcp`) over stdio.

use crate::forward::Remote;
use crate::mcp::Tools;
use rmcp::ServiceExt;
use std::path::Path;
use std::process::ExitCode;

/// `datanotes mcp --vault DIR`: MCP over stdio, forwarded to the engine that
/// holds the vault when one runs (its lock file names it), else on an engine of
/// its own, which then holds the vault.
pub fn stdio(vault: &Path) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return crate::out::fail(&format!("cannot start: {e}")),
    };
    let session = crate::token::new_token().map(|t| t[..16].to_string()).unwrap_or_else(|_| "stdio".into());
    let token = crate::forward::owner_token(vault).ok();
    let os_lock = match crate::lock::reach(vault, token.as_deref(), crate::lock::patience()) {
        Ok(crate::lock::Reach::Own(held)) => held,
        Ok(crate::lock::Reach::Forward(l)) => {
            let remote = match Remote::new(&l, vault) {
                Ok(r) => r,
                Err(e) => return crate::out::fail(&e),
            };
            eprintln!(
                "datanotes: forwarding MCP tool calls to the engine serving {} ({})",
                vault.display(),
                remote.who
            );
            return runtime.block_on(async move {
                let service = match Tools::remote(remote, session).serve(rmcp::transport::stdio()).await {
                    Ok(s) => s,
                    Err(e) => return crate::out::fail(&format!("the MCP session did not start: {e}")),
                };
                let _ = service.waiting().await;
                ExitCode::SUCCESS
            });
        }
        Err(e) => return crate::out::fail(&e),
    };
    runtime.block_on(async move {
        // Alone, it holds the vault as serve does, on a loopback port of its own: a
        // call, another mcp or a serve started meanwhile forward to this engine, or
        // refuse, rather than open a second one.
        let mode =
            crate::serve::Mode { private_webhooks: crate::engine::private_webhooks(false), ..Default::default() };
        let held = match crate::serve::hold(vault, ([127, 0, 0, 1], 0).into(), mode, Some(os_lock)).await {
            Ok(h) => h,
            Err(e) => return crate::out::fail(&e),
        };
        eprintln!("datanotes: MCP over stdio on {}; other tools reach this engine at {}", vault.display(), held.base);
        let (shared, guard) = (held.shared.clone(), held.guard.clone());
        tokio::spawn(async move { crate::listen::serve(held.listener, held.router).await });
        let service = match Tools::local(shared.clone(), Some(session)).serve(rmcp::transport::stdio()).await {
            Ok(s) => s,
            Err(e) => {
                guard.release();
                return crate::out::fail(&format!("the MCP session did not start: {e}"));
            }
        };
        let _ = service.waiting().await;
        // Let a write under way finish before the process ends.
        shared.exit(0, move || guard.release()).await
    })
}
