//! One MCP session's handler, `Tools`, and the reads it makes for itself:
//! below the modules that answer MCP's requests (`mcp` for tools,
//! `mcp_resources`, `mcp_prompts`), which each add to it.

use crate::backend::Backend;
use crate::forward::Remote;
use crate::shared::Shared;
use datanotes_core::Status;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// One MCP session's handler (the HTTP transport makes one per session).
#[derive(Clone)]
pub struct Tools {
    pub(crate) backend: Backend,
    /// The session's id over stdio (HTTP sessions carry theirs in a header).
    pub(crate) session: Option<String>,
    /// The session's resource subscriptions: each a task that long-polls the feed.
    pub(crate) subscriptions: Arc<Mutex<HashMap<String, tokio::task::JoinHandle<()>>>>,
}

impl Drop for Tools {
    fn drop(&mut self) {
        // The last handle of a session stops its subscriptions' polls.
        if Arc::strong_count(&self.subscriptions) == 1 {
            for (_, t) in self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).drain() {
                t.abort();
            }
        }
    }
}

impl Tools {
    pub fn new(backend: Backend, session: Option<String>) -> Tools {
        Tools { backend, session, subscriptions: Default::default() }
    }

    /// A read the server makes for itself (resources, completions, prompts):
    /// the answer, or the refusal's answer. Not a tool call: the feed does not
    /// record it.
    pub(crate) async fn ask(&self, op: &str, args: Value) -> Result<Value, Value> {
        let out = match &self.backend {
            Backend::Local(shared) => shared.call(op.to_string(), args, "owner/mcp".into()).await,
            Backend::Attached(remote) => {
                crate::forward::bridged_async(remote.clone(), op.to_string(), args, None, None).await
            }
        };
        match out.status {
            Status::Ok => Ok(out.answer),
            _ => Err(out.answer),
        }
    }

    pub fn local(shared: Shared, session: Option<String>) -> Tools {
        Tools::new(Backend::Local(shared), session)
    }

    pub fn remote(remote: Remote, session: String) -> Tools {
        Tools::new(Backend::Attached(Arc::new(remote)), Some(session))
    }
}
