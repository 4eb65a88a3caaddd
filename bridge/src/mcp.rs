//! The MCP server: every operation of core's registry is a tool of the same
//! name. Served over stdio (`datanotes mcp`) and over streamable HTTP at `/mcp`
//! inside `serve`; both call the one engine through `Shared`.

use crate::shared::Shared;
use datanotes_core::ops::registry::{Access, OpSpec, OPS};
use datanotes_core::{Outcome, Status};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

const INSTRUCTIONS: &str = "Datanotes: a vault of Markdown notes as typed tables (a note is a row, its front matter the columns). \
Start with describe_database; read with select_rows; every write is validated and journaled (list_migrations, undo_migration). \
A refusal says why, what to do next (Hint) and where to read more (Docs, offline with read_docs).";

/// One MCP session's handler (the HTTP transport makes one per session).
#[derive(Clone)]
pub struct Tools {
    shared: Shared,
}

impl Tools {
    pub fn new(shared: Shared) -> Tools {
        Tools { shared }
    }
}

/// The tool of one operation: its name, title, description, input schema and
/// annotations (reads are idempotent; nothing reaches outside the vault).
pub fn tool(op: &OpSpec) -> Tool {
    let schema = match op.input_schema() {
        Value::Object(m) => m,
        _ => Default::default(),
    };
    let annotations = ToolAnnotations::with_title(op.title)
        .read_only(op.access == Access::Read)
        .destructive(op.access == Access::Destructive)
        .idempotent(op.access == Access::Read)
        .open_world(false);
    Tool::new(op.name, op.description, Arc::new(schema)).with_title(op.title).with_annotations(annotations)
}

/// The tool result of an outcome: the answer as JSON text (and as structured
/// content), or for a refusal, an error result with the refusal's text.
pub fn result(out: &Outcome) -> CallToolResult {
    let mut r = match out.status {
        Status::Done | Status::Apply => CallToolResult::success(vec![ContentBlock::text(
            serde_json::to_string_pretty(&out.answer).unwrap_or_default(),
        )]),
        _ => {
            let text = match out.answer.get("error").and_then(Value::as_str) {
                Some(t) => t.to_string(),
                None => serde_json::to_string_pretty(&out.answer).unwrap_or_default(),
            };
            CallToolResult::error(vec![ContentBlock::text(text)])
        }
    };
    if out.answer.is_object() {
        r.structured_content = Some(out.answer.clone());
    }
    r
}

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("datanotes", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(OPS.iter().map(tool).collect()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // The journal's `by`: the client's name from its initialize request.
        let actor = context
            .peer
            .peer_info()
            .map(|i| i.client_info.name.trim().to_string())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "mcp".to_string());
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        // TODO(issue 6): record each call as a `tool_call` feed event (tool, args,
        // ok, duration_ms, value, served_by) once core has the change feed.
        let out = self.shared.call(request.name.to_string(), args, actor).await;
        Ok(result(&out).into())
    }
}

/// `datanotes mcp --vault DIR`: MCP over stdio on an engine of its own.
// TODO(issue 6): when a `serve` holds the vault (its lock file in .datanotes/
// names the process and address), forward the calls to it instead of opening a
// second engine on the same vault.
pub fn stdio(vault: &Path) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => return crate::fail(&format!("cannot start: {e}")),
    };
    let shared = match Shared::open(vault) {
        Ok(s) => s,
        Err(e) => return crate::fail(&e),
    };
    runtime.block_on(async move {
        let service = match Tools::new(shared.clone()).serve(rmcp::transport::stdio()).await {
            Ok(s) => s,
            Err(e) => return crate::fail(&format!("the MCP session did not start: {e}")),
        };
        let _ = service.waiting().await;
        // Let a write under way finish before the process ends.
        shared.exit(0).await
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_operation_is_a_tool_with_annotations() {
        for op in OPS {
            let t = serde_json::to_value(tool(op)).unwrap();
            assert_eq!(t["name"], op.name);
            assert_eq!(t["title"], op.title);
            assert_eq!(t["inputSchema"], op.input_schema());
            let a = &t["annotations"];
            assert_eq!(a["readOnlyHint"], op.access == Access::Read);
            assert_eq!(a["destructiveHint"], op.access == Access::Destructive);
            assert_eq!(a["idempotentHint"], op.access == Access::Read);
        }
    }

    #[test]
    fn a_refusal_is_an_error_result_with_its_text() {
        let f = datanotes_core::error::Failure::refused("update_row", vec!["why".into()], "do");
        let out = Outcome::failed(&f);
        let r = serde_json::to_value(result(&out)).unwrap();
        assert_eq!(r["isError"], true);
        assert_eq!(r["content"][0]["text"], f.text());
        assert!(f.text().starts_with("update_row refused"));
        let ok = serde_json::to_value(result(&Outcome::done(json!({"ok": true, "rows": []})))).unwrap();
        assert_eq!(ok["isError"], false);
        assert_eq!(ok["structuredContent"]["ok"], true);
    }
}
