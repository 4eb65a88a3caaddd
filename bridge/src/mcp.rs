//! The MCP server: every operation of core's registry is a tool of the same
//! name. Served over stdio (`datanotes mcp`: `mcp_stdio`) and over streamable
//! HTTP at `/mcp` inside `serve`; both call the one engine through `Shared`,
//! or, when a `serve` holds the vault, `datanotes mcp` forwards each tool call
//! to it over HTTP.
//!
//! The actor of a tool call is "<credential>/<client>": the credential that made
//! the request ("owner" over stdio; over HTTP, "owner" or the named token's name)
//! and the client's name from its initialize request, e.g. "owner/claude-code".
//! Each call is recorded in the change feed as a `tool_call` event.

use crate::backend::{Backend, Bearer, Credential, Limited};
use crate::mcp_names as names;
pub use crate::mcp_session::Tools;
use datanotes_core::ops::registry::{spec, Access, OpSpec, OPS};
use datanotes_core::{Outcome, Status};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult, ContentBlock,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SubscribeRequestParams, Tool, ToolAnnotations, UnsubscribeRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use std::sync::Arc;

const INSTRUCTIONS: &str = "Datanotes: a vault of Markdown notes as typed tables (a note is a row, its front matter the columns). \
Start with describe_database; read with select_rows; every write is validated and journaled (list_migrations, undo_migration). \
A refusal says why, what to do next (Hint) and where to read more (Docs, offline with read_docs).";

/// The tool of one operation: its name, title, description, input schema and
/// annotations (reads are idempotent; only create_webhook reaches outside the
/// vault: it sends the database's changes to an address).
pub fn tool(op: &OpSpec) -> Tool {
    let schema = match op.input_schema() {
        Value::Object(m) => m,
        _ => Default::default(),
    };
    let annotations = ToolAnnotations::with_title(op.title)
        .read_only(op.access == Access::Read)
        .destructive(op.access == Access::Destructive)
        .idempotent(op.access == Access::Read)
        .open_world(op.facts.open_world);
    let output = match op.output_schema() {
        Value::Object(m) => m,
        _ => Default::default(),
    };
    Tool::new(op.name, op.description, Arc::new(schema))
        .with_title(op.title)
        .with_annotations(annotations)
        .with_raw_output_schema(Arc::new(output))
}

/// The tool result of an outcome: the answer as JSON text and as structured
/// content (of the tool's outputSchema), or for a refusal, an error result
/// with the refusal's text and its typed body (reasons, hint, docs, violations).
pub fn result(out: &Outcome) -> CallToolResult {
    let mut r = match out.status {
        Status::Ok => CallToolResult::success(vec![ContentBlock::text(
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
    if out.status == Status::Ok && out.answer.get("dry_run").is_none() {
        r.content.extend(links(&out.answer));
    }
    r
}

/// A `resource_link` to each note a done write left standing (created,
/// changed or moved to), by its row's URI; the schema's when it changed.
fn links(answer: &Value) -> Vec<ContentBlock> {
    let mut out = vec![];
    for e in answer["planned_edits"].as_array().into_iter().flatten() {
        if e.get("trash").is_some() || e.get("base").is_some() {
            continue;
        }
        if e.get("schema").is_some() {
            out.push(ContentBlock::resource_link(
                rmcp::model::Resource::new(names::SCHEMA, "schema").with_mime_type("application/json"),
            ));
            continue;
        }
        let Some(path) = e["move_to"].as_str().or(e["path"].as_str()) else { continue };
        let name = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".md");
        out.push(ContentBlock::resource_link(
            rmcp::model::Resource::new(names::changed_note_uri(path), name)
                .with_description(format!("The note {path}, as the write left it"))
                .with_mime_type("application/json"),
        ));
    }
    out
}

/// A tool no operation is: a JSON-RPC error (invalid params, as MCP asks for
/// an unknown tool) naming the tool meant and where the list is.
fn unknown_tool(name: &str) -> McpError {
    let meant = datanotes_core::names::did_you_mean(name, OPS.iter().map(|o| o.name));
    McpError::invalid_params(
        format!("unknown tool \"{name}\"{meant}: tools/list names the tools, one per operation (read_docs(\"reference/operations\") describes each)"),
        Some(serde_json::json!({"tool": name, "tools": OPS.iter().map(|o| o.name).collect::<Vec<_>>()})),
    )
}

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_completions()
            .enable_prompts()
            .build();
        ServerConfig::new(capabilities)
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

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.resources().await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Ok(Tools::resource_templates())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        self.read(&request.uri).await.map(Into::into)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Tools::subscribe(self, &request.uri, context.peer.clone()).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Tools::unsubscribe(self, &request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(crate::mcp_prompts::prompts()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        self.prompt(&request.name, &args).await.map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let ctx = request.context.and_then(|c| c.arguments).unwrap_or_default();
        Tools::complete(self, &request.r#ref, &request.argument, &ctx).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // The client's name from its initialize request.
        let client = context
            .peer
            .peer_info()
            .map(|i| i.client_info.name.trim().replace('/', "-"))
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "mcp".to_string());
        // Over HTTP, the request's credential (the guard put it there) and session.
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let credential = parts
            .and_then(|p| p.extensions.get::<Credential>())
            .map_or_else(|| crate::token::OWNER.to_string(), |c| c.0.clone());
        let session = parts
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
            .or_else(|| self.session.clone());
        // A bridge forwards the caller's own token, so that its credential stays.
        let bearer = parts.and_then(|p| p.extensions.get::<Bearer>()).map(|b| b.0.clone());
        let op = request.name.to_string();
        if spec(&op).is_none() {
            return Err(unknown_tool(&op));
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let args = match parts.and_then(|p| p.extensions.get::<Limited>()) {
            Some(Limited(mode)) => crate::review::as_limited(&op, args, &credential, *mode),
            None => Ok(args),
        };
        let out = match (args, &self.backend) {
            (Err(refused), _) => *refused,
            (Ok(args), backend) => call_backend(backend, op, args, &credential, client, session, bearer).await,
        };
        Ok(result(&out).into())
    }
}

/// A tool call, made by this process's engine or forwarded to the one that holds the vault.
async fn call_backend(
    backend: &Backend,
    op: String,
    args: Value,
    credential: &str,
    client: String,
    session: Option<String>,
    bearer: Option<String>,
) -> Outcome {
    match backend {
        Backend::Local(shared) => shared.call_tool(op, args, credential, &client, session.as_deref()).await,
        Backend::Attached(remote) => {
            let mcp = Some((client, session.unwrap_or_default()));
            crate::forward::bridged_async(remote.clone(), op, args, mcp, bearer).await
        }
    }
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
            assert_eq!(t["outputSchema"], op.output_schema());
            assert_eq!(t["outputSchema"]["type"], "object", "{}: MCP asks for an object", op.name);
            let a = &t["annotations"];
            assert_eq!(a["readOnlyHint"], op.access == Access::Read);
            assert_eq!(a["destructiveHint"], op.access == Access::Destructive);
            assert_eq!(a["idempotentHint"], op.access == Access::Read);
            // Only a webhook sends data off the machine.
            // Only the operations that send the data to an address of the user's.
            let sends = ["create_webhook", "confirm_webhook"].contains(&op.name);
            assert_eq!(a["openWorldHint"], sends, "{}", op.name);
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
        // Its typed body: the reasons one by one, the way out, the kind.
        assert_eq!(r["structuredContent"]["reasons"], json!(["why"]));
        assert_eq!(r["structuredContent"]["hint"], "do");
        assert_eq!(r["structuredContent"]["kind"], "refused");
        let ok = serde_json::to_value(result(&Outcome::done(json!({"ok": true, "rows": []})))).unwrap();
        assert_eq!(ok["isError"], false);
        assert_eq!(ok["structuredContent"]["ok"], true);
    }
}
