//! Edits made outside the engine (an editor, git, a sync tool): the host reports
//! each vault change; the engine tells its own writes apart by content, batches
//! the others (0.7 s after the last change, at most 5 s after the first) and
//! reports them in the change feed, checked against the rules.

use crate::engine::{Engine, Outcome};
use serde_json::Value;

/// A change to the vault, as the host saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum VaultEvent {
    Created { path: String, text: String, mtime: i64 },
    Modified { path: String, text: String, mtime: i64 },
    Removed { path: String },
    /// A note renamed or moved, with its text after the move.
    Renamed { from: String, to: String, text: String, mtime: i64 },
}

impl Engine {
    /// Reports a vault change at the host's time `now_ms`. Nothing is written
    /// here: `tick` does the work when the batch is due.
    pub fn observe(&mut self, event: VaultEvent, now_ms: i64) {
        let _ = (event, now_ms);
    }

    /// Whether git is pulling, rebasing or merging (the host watches `.git`): link
    /// repair waits until it is done.
    pub fn set_git_busy(&mut self, busy: bool) {
        let _ = busy;
    }

    /// Runs what is due at `now_ms`: hand-edit batches, link repair, recompute,
    /// webhook deliveries. The outcome carries store writes to persist, log lines,
    /// deliveries, and possibly a write (Status::Apply) to apply and `finish`.
    pub fn tick(&mut self, now_ms: i64) -> Outcome {
        let _ = now_ms;
        Outcome::done(Value::Null)
    }

    /// When `tick` next has something to do, if ever.
    pub fn next_deadline(&self) -> Option<i64> {
        None
    }
}

/// An MCP tool call, as a front door reports it for the change feed.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub tool: String,
    pub args: Value,
    pub ok: bool,
    pub duration_ms: u64,
    /// The answer, or the error text.
    pub value: Value,
    /// "engine", or the MCP server that ran a tool of its own.
    pub served_by: String,
    /// Who called: the credential and the client, as in the feed's `actor`.
    pub actor: Value,
}

impl Engine {
    /// The feed's newest sequence number (a long poll waits until it moves).
    pub fn feed_head(&self) -> u64 {
        0
    }

    /// Records an agent's tool call as a `tool_call` event in the change feed.
    /// Returns the store files to write.
    pub fn record_tool_call(&mut self, call: ToolCall, now_ms: i64) -> Vec<crate::edits::StoreWrite> {
        let _ = (call, now_ms);
        vec![]
    }
}
