//! Calls forwarded to the `serve` that holds the vault (its lock file names it):
//! `datanotes call` and `datanotes mcp` use it instead of opening a second engine.
//! The owner's token comes from DATANOTES_TOKEN or the vault's `.datanotes/token`.

use crate::lock::Lock;
use datanotes_core::{Outcome, Status};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// Headers by which a forwarded MCP tool call names its client and session: the
/// serve records it as the client's tool call, with "<credential>/<client>" as
/// the actor.
pub const MCP_CLIENT: &str = "x-datanotes-mcp-client";
pub const MCP_SESSION: &str = "x-datanotes-mcp-session";

pub struct Remote {
    url: String,
    token: String,
    agent: ureq::Agent,
    /// For messages: the process and address.
    pub who: String,
}

/// The owner's token as `call` and `mcp` read it: never created here.
pub fn owner_token(vault: &Path) -> Result<String, String> {
    if let Ok(t) = std::env::var(crate::token::ENV) {
        if !t.trim().is_empty() {
            return Ok(t.trim().to_string());
        }
    }
    let file = vault.join(crate::files::STORE).join(crate::token::FILE);
    match std::fs::read_to_string(&file) {
        Ok(t) if !t.trim().is_empty() => Ok(t.trim().to_string()),
        _ => Err(format!(
            "no token to reach it: {} is missing, so set {} to the token it serves with",
            file.display(),
            crate::token::ENV
        )),
    }
}

/// An operation's name in a URL path.
fn escape(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Remote {
    pub fn new(lock: &Lock, vault: &Path) -> Result<Remote, String> {
        let who = lock.describe();
        let token = owner_token(vault).map_err(|e| format!("{} is served by {who}; {e}", vault.display()))?;
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .timeout_connect(Some(Duration::from_secs(10)))
            .build()
            .new_agent();
        Ok(Remote { url: lock.url(), token, agent, who })
    }

    /// POSTs one operation; the HTTP status and the answer.
    pub fn call(&self, op: &str, args: &Value, mcp: Option<(&str, &str)>) -> Result<(u16, Value), String> {
        self.call_as(op, args, mcp, None)
    }

    /// As `call`, with the caller's own bearer token (a bridge keeps its callers'
    /// credentials, named tokens included); the owner's when None.
    pub fn call_as(
        &self,
        op: &str,
        args: &Value,
        mcp: Option<(&str, &str)>,
        bearer: Option<&str>,
    ) -> Result<(u16, Value), String> {
        let url = format!("{}/datanotes/operations/{}/", self.url, escape(op));
        let mut req = self
            .agent
            .post(&url)
            .header("Authorization", &format!("Bearer {}", bearer.unwrap_or(&self.token)))
            .header("Content-Type", "application/json");
        if let Some((client, session)) = mcp {
            req = req.header(MCP_CLIENT, client).header(MCP_SESSION, session);
        }
        let mut res = req
            .send(serde_json::to_vec(args).unwrap_or_default())
            .map_err(|e| format!("the engine serving the vault ({}) did not answer: {e}", self.who))?;
        let status = res.status().as_u16();
        let text = res
            .body_mut()
            .with_config()
            .limit(1 << 30)
            .read_to_string()
            .map_err(|e| format!("the engine serving the vault ({}) broke off its answer: {e}", self.who))?;
        let answer = serde_json::from_str(&text).unwrap_or_else(|_| json!({"error": text}));
        Ok((status, answer))
    }

    /// As `call_as`, as the outcome the engine would have given; an engine that
    /// does not answer is a 503 with the way out (nothing was done).
    pub fn bridged(&self, op: &str, args: &Value, mcp: Option<(&str, &str)>, bearer: Option<&str>) -> Outcome {
        match self.call_as(op, args, mcp, bearer) {
            Ok((code, answer)) => outcome(code, answer),
            Err(e) => outcome(
                503,
                json!({"ok": false, "op": op, "error": format!("{e}: nothing was done"),
                       "hint": "The engine this bridge forwards to is gone (Obsidian closed, or its serve or mcp stopped): start it again, or restart datanotes serve to hold the vault itself."}),
            ),
        }
    }
}

/// `Remote::bridged` off the async runtime (its HTTP client blocks), for the
/// HTTP API and the MCP tools of a bridge alike; `mcp` is (client, session).
pub async fn bridged_async(
    remote: std::sync::Arc<Remote>,
    op: String,
    args: Value,
    mcp: Option<(String, String)>,
    bearer: Option<String>,
) -> Outcome {
    let failed = op.clone();
    tokio::task::spawn_blocking(move || {
        let mcp = mcp.as_ref().map(|(c, s)| (c.as_str(), s.as_str()));
        remote.bridged(&op, &args, mcp, bearer.as_deref())
    })
    .await
    .unwrap_or_else(|e| {
        outcome(500, json!({"ok": false, "op": failed, "error": format!("the call stopped unexpectedly: {e}")}))
    })
}

/// The outcome of an HTTP status and answer (the HTTP API's mapping, reversed).
pub fn outcome(code: u16, answer: Value) -> Outcome {
    let status = match code {
        200..=299 => Status::Ok,
        400 => Status::BadInput,
        409 => Status::Refused,
        503 => Status::RolledBack,
        _ => Status::Internal,
    };
    Outcome { status, answer, ..Outcome::done(Value::Null) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_maps() {
        assert_eq!(escape("select_rows"), "select_rows");
        assert_eq!(escape("a/b c"), "a%2Fb%20c");
        for (code, status, exit) in [
            (200, Status::Ok, 0),
            (400, Status::BadInput, 2),
            (401, Status::Internal, 1),
            (409, Status::Refused, 1),
            (503, Status::RolledBack, 1),
            (500, Status::Internal, 1),
        ] {
            let o = outcome(code, json!({}));
            assert_eq!(o.status, status);
            assert_eq!(o.status.exit_code(), exit);
        }
    }
}
