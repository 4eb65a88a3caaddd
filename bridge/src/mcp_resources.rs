//! MCP resources and completions, answered from the engine's own reads (see
//! `mcp_names` for the URIs): the docs pages read_docs serves, the schema,
//! each table and view, a row by `datanotes://<table>/<row name>`, any note,
//! the change feed; `resources/subscribe` on a table or on the feed sends
//! `notifications/resources/updated` when a change reaches it.

use crate::mcp_names::{self as names, Named};
use crate::mcp_session::Tools;
use rmcp::model::{
    ArgumentInfo, CompleteResult, CompletionInfo, ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult,
    Reference, Resource, ResourceContents, ResourceTemplate, ResourceUpdatedNotificationParam,
};
use rmcp::service::Peer;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::{json, Value};
use std::collections::HashMap;

/// How long one wait of a subscription's long poll holds (list_changes' wait_ms).
const WAIT_MS: u64 = 25_000;

fn json_contents(uri: &str, v: &Value) -> ResourceContents {
    ResourceContents::TextResourceContents {
        uri: uri.to_string(),
        mime_type: Some("application/json".into()),
        text: serde_json::to_string_pretty(v).unwrap_or_default(),
        meta: None,
    }
}

fn markdown(uri: &str, text: &str) -> ResourceContents {
    ResourceContents::TextResourceContents {
        uri: uri.to_string(),
        mime_type: Some("text/markdown".into()),
        text: text.to_string(),
        meta: None,
    }
}

/// A URI that names nothing: MCP's resource-not-found error, with the way out.
pub fn not_found(uri: &str, why: &str) -> McpError {
    McpError::resource_not_found(
        format!("{why}: resources/list names the schema, the change feed, the docs pages, every table and view; resources/templates/list gives datanotes://<table>/<row name> for a row"),
        Some(json!({"uri": uri})),
    )
}

/// A refusal of the engine as an error of a resource or prompt request.
pub fn refused(answer: &Value) -> McpError {
    let text = answer["error"].as_str().unwrap_or("refused").to_string();
    McpError::invalid_params(text, Some(answer.clone()))
}

impl Tools {
    pub(crate) async fn resources(&self) -> Result<ListResourcesResult, McpError> {
        let db = self.ask("describe_database", json!({})).await.map_err(|a| refused(&a))?;
        let mut out = vec![
            Resource::new(names::SCHEMA, "schema")
                .with_title("The database's schema")
                .with_description("Every table (description, columns, rules, row count, its Bases file), every view and the settings: describe_database's answer.")
                .with_mime_type("application/json"),
            Resource::new(names::CHANGES, "changes")
                .with_title("The change feed")
                .with_description("The latest 100 row changes of every table, from engine writes and hand edits (list_changes). Subscribe to hear of each new change.")
                .with_mime_type("application/json"),
        ];
        for (short, qualified, t) in names::objects(&db) {
            let kind = if t.get("columns").is_some() { "table" } else { "view" };
            let what = t["description"].as_str().filter(|d| !d.is_empty()).unwrap_or(qualified);
            out.push(
                Resource::new(names::table_uri(short), short)
                    .with_title(format!("{what} ({kind})"))
                    .with_description(format!("The {kind} {qualified}: its definition, rules and row count. Subscribe to hear of changes to its rows."))
                    .with_mime_type("application/json"),
            );
        }
        let docs = self.ask("read_docs", json!({})).await.map_err(|a| refused(&a))?;
        for page in docs["pages"].as_array().into_iter().flatten().filter_map(Value::as_str) {
            out.push(
                Resource::new(format!("{}{}", names::DOCS, names::encode(page)), page)
                    .with_title(format!("Docs: {page}"))
                    .with_mime_type("text/markdown"),
            );
        }
        Ok(ListResourcesResult::with_all_items(out))
    }

    pub(crate) fn resource_templates() -> ListResourceTemplatesResult {
        ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("datanotes://{table}/{row}", "row")
                .with_title("A row, by its table and its note's name")
                .with_description("A row: its path, id, values, body and _version (read_note's answer). completion/complete offers the tables and, given the table, its rows' names.")
                .with_mime_type("application/json"),
            ResourceTemplate::new("datanotes://_docs/{page}", "docs page")
                .with_title("A page of the docs (read_docs)")
                .with_mime_type("text/markdown"),
            ResourceTemplate::new("datanotes://_notes/{path}", "note")
                .with_title("Any note, by its vault path")
                .with_mime_type("text/markdown"),
        ])
    }

    pub(crate) async fn read(&self, uri: &str) -> Result<ReadResourceResult, McpError> {
        let Some(named) = names::parse(uri) else {
            return Err(not_found(uri, &format!("\"{uri}\" is not a datanotes:// resource")));
        };
        let contents = match named {
            Named::Schema => {
                json_contents(uri, &self.ask("describe_database", json!({})).await.map_err(|a| refused(&a))?)
            }
            Named::Changes => json_contents(uri, &self.latest_changes(None).await?),
            Named::Docs(page) => {
                let a = self.ask("read_docs", json!({"page": page})).await.map_err(|a| refused(&a))?;
                match a["text"].as_str() {
                    Some(text) => markdown(uri, text),
                    None => return Err(not_found(uri, a["error"].as_str().unwrap_or("no such page"))),
                }
            }
            Named::Note(path) => {
                let a = self
                    .ask("read_note", json!({"path": path}))
                    .await
                    .map_err(|a| not_found(uri, a["error"].as_str().unwrap_or("no such note")))?;
                markdown(uri, a["text"].as_str().unwrap_or_default())
            }
            Named::Table(name) => json_contents(uri, &self.object(uri, &name).await?),
            Named::Row(table, row) => {
                let path = self.row_path(uri, &table, &row).await?;
                json_contents(uri, &self.ask("read_note", json!({"path": path})).await.map_err(|a| refused(&a))?)
            }
        };
        Ok(ReadResourceResult::new(vec![contents]))
    }

    /// A table's or view's entry of describe_database (a table's views with it).
    async fn object(&self, uri: &str, name: &str) -> Result<Value, McpError> {
        let db = self.ask("describe_database", json!({})).await.map_err(|a| refused(&a))?;
        let Some(t) = names::object(&db, name) else {
            let known: Vec<&str> = names::objects(&db).into_iter().map(|(s, _, _)| s).collect();
            let meant = datanotes_core::names::did_you_mean(name, known.iter().copied());
            return Err(not_found(uri, &format!("no table or view \"{name}\"{meant}")));
        };
        let mut t = t.clone();
        if t.get("columns").is_some() {
            let q = t["qualified"].clone();
            let views: Vec<Value> = db["views"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|v| v["table"] == q || v["table"] == t["name"])
                .cloned()
                .collect();
            t["views"] = views.into();
        }
        Ok(t)
    }

    /// The path of the row of `table` whose note is named `row`.
    async fn row_path(&self, uri: &str, table: &str, row: &str) -> Result<String, McpError> {
        let a = self
            .ask("suggest_rows", json!({"table": table, "query": row, "limit": 200}))
            .await
            .map_err(|a| not_found(uri, a["error"].as_str().unwrap_or("no such table")))?;
        let rows = a["rows"].as_array().cloned().unwrap_or_default();
        match rows.iter().find(|r| r["name"] == row) {
            Some(r) => Ok(r["path"].as_str().unwrap_or_default().to_string()),
            None => {
                let near = rows
                    .first()
                    .and_then(|r| r["name"].as_str())
                    .map(|n| format!(" (did you mean \"{n}\"?)"))
                    .unwrap_or_default();
                Err(not_found(uri, &format!("no row named \"{row}\" in {table}{near}")))
            }
        }
    }

    /// The latest 100 changes of the feed (of one table's when `tables` names it).
    async fn latest_changes(&self, tables: Option<&str>) -> Result<Value, McpError> {
        let head = self.ask("list_changes", json!({"since": 0, "limit": 1})).await.map_err(|a| refused(&a))?;
        let since = head["head"].as_u64().unwrap_or(0).saturating_sub(100);
        let mut args = json!({"since": since, "limit": 100});
        if let Some(t) = tables {
            args["tables"] = json!([t]);
        }
        self.ask("list_changes", args).await.map_err(|a| refused(&a))
    }

    /// resources/subscribe: a table (or view: its table) or the change feed.
    /// A long poll of list_changes sends notifications/resources/updated for
    /// each change that reaches it, until unsubscribed or the session ends.
    pub(crate) async fn subscribe(&self, uri: &str, peer: Peer<RoleServer>) -> Result<(), McpError> {
        let table = match names::parse(uri) {
            Some(Named::Changes) => None,
            Some(Named::Table(name)) => {
                let t = self.object(uri, &name).await?;
                let q = t.get("columns").map_or(&t["table"], |_| &t["qualified"]);
                Some(q.as_str().unwrap_or(&name).to_string())
            }
            _ => return Err(McpError::invalid_params(
                format!("cannot subscribe to \"{uri}\": subscribe to a table or view (datanotes://<table>) or to the change feed ({})", names::CHANGES),
                Some(json!({"uri": uri})),
            )),
        };
        let first = self.ask("list_changes", json!({"since": 0, "limit": 1})).await.map_err(|a| refused(&a))?;
        let mut since = first["head"].as_u64().unwrap_or(0);
        let (tools, uri_owned) = (self.clone(), uri.to_string());
        let task = tokio::spawn(async move {
            loop {
                let mut args = json!({"since": since, "limit": 100, "wait_ms": WAIT_MS});
                if let Some(t) = &table {
                    args["tables"] = json!([t]);
                }
                let Ok(a) = tools.ask("list_changes", args).await else { break };
                since = a["last"].as_u64().unwrap_or(since);
                let changed = a["events"].as_array().is_some_and(|e| !e.is_empty());
                if changed
                    && peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri_owned.clone()))
                        .await
                        .is_err()
                {
                    break;
                }
                if peer.is_transport_closed() {
                    break;
                }
            }
        });
        if let Some(old) = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).insert(uri.to_string(), task) {
            old.abort();
        }
        Ok(())
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        if let Some(t) = self.subscriptions.lock().unwrap_or_else(|p| p.into_inner()).remove(uri) {
            t.abort();
        }
    }

    /// completion/complete for a resource template's or a prompt's argument.
    pub(crate) async fn complete(
        &self,
        _reference: &Reference,
        argument: &ArgumentInfo,
        ctx: &HashMap<String, String>,
    ) -> Result<CompleteResult, McpError> {
        let candidates = self.candidates(&argument.name, &argument.value, ctx).await;
        let (values, total) = names::fitting(candidates, &argument.value);
        let has_more = total > values.len();
        let info = CompletionInfo::with_pagination(values, Some(total as u32), has_more)
            .map_err(|e| McpError::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }

    /// What an argument of that name may be, from the engine's state.
    async fn candidates(&self, name: &str, typed: &str, ctx: &HashMap<String, String>) -> Vec<String> {
        let ask = |op: &'static str, args: Value| async move { self.ask(op, args).await.unwrap_or(Value::Null) };
        let strings = |v: &Value, list: &str, key: &str| -> Vec<String> {
            v[list].as_array().into_iter().flatten().filter_map(|x| x[key].as_str().map(str::to_string)).collect()
        };
        match name {
            "table" | "view" => {
                let db = ask("describe_database", json!({})).await;
                let kinds: &[&str] = if name == "view" { &["views"] } else { &["tables", "views"] };
                kinds.iter().flat_map(|k| strings(&db, k, "name")).collect()
            }
            "column" | "columns" => names::columns(&ask("describe_database", json!({})).await, ctx),
            "value" | "from" | "to" => names::enum_values(&ask("describe_database", json!({})).await, ctx),
            "row" => match ctx.get("table") {
                Some(t) => strings(
                    &ask("suggest_rows", json!({"table": t, "query": typed, "limit": 100})).await,
                    "rows",
                    "name",
                ),
                None => vec![],
            },
            "page" => ask("read_docs", json!({})).await["pages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect(),
            "migration_id" | "before_migration" => {
                strings(&ask("list_migrations", json!({"limit": 100})).await, "migrations", "migration_id")
            }
            "actor" | "by" => {
                let mut by = strings(&ask("list_migrations", json!({"limit": 500})).await, "migrations", "by");
                by.sort();
                by.dedup();
                by
            }
            "since" | "timestamp" => {
                strings(&ask("list_migrations", json!({"limit": 100})).await, "migrations", "executed_at")
            }
            "version" | "start_version" | "end_version" | "retain_from_version" => {
                let mut args = json!({"limit": 100});
                if let Some(t) = ctx.get("table") {
                    args["table"] = t.clone().into();
                }
                let h = ask("describe_history", args).await;
                h["history"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["version"].as_u64().map(|v| v.to_string()))
                    .collect()
            }
            "webhook" | "id" => strings(&ask("list_webhooks", json!({})).await, "webhooks", "id"),
            _ => vec![],
        }
    }
}
