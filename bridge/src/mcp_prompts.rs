//! MCP prompts that help a person through an agent, each written from the
//! engine's answers at the moment it is asked for (check_table, list_migrations,
//! list_changes, show_migration), never canned: what breaks which rule now,
//! what changed since a moment, what an agent's last writes did.

use crate::mcp_resources::refused;
use crate::mcp_session::Tools;
use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};
use rmcp::ErrorData as McpError;
use serde_json::{json, Map, Value};

fn arg(name: &str, description: &str, required: bool) -> PromptArgument {
    PromptArgument::new(name).with_description(description).with_required(required)
}

pub fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new(
            "fix_rule_breaks",
            Some("Fix the rows that break rules in a table: the violations check_table finds now, with the table's rules, and how to fix and undo."),
            Some(vec![arg("table", "The table (completion offers them).", true)]),
        ),
        Prompt::new(
            "summarise_changes",
            Some("Summarise what changed since a moment: the journal's operations and the change feed's hand edits since then."),
            Some(vec![arg("since", "An ISO date or date-time, e.g. 2026-10-12 (completion offers the journal's times).", true)]),
        ),
        Prompt::new(
            "review_agent_writes",
            Some("Review an agent's last writes: what each did to each note, and how to undo the ones that are wrong."),
            Some(vec![
                arg("actor", "Who wrote them, as the journal's by names it (e.g. owner/claude-code); the latest writer when absent.", false),
                arg("limit", "How many of its writes (default 5, at most 20).", false),
            ]),
        ),
    ]
}

fn text_arg<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

fn missing(prompt: &str, name: &str) -> McpError {
    McpError::invalid_params(
        format!("prompt {prompt} needs the argument {name}: completion/complete offers its values"),
        Some(json!({"prompt": prompt, "argument": name})),
    )
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn result(description: String, text: String) -> GetPromptResult {
    GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).with_description(description)
}

impl Tools {
    pub(crate) async fn prompt(&self, name: &str, args: &Map<String, Value>) -> Result<GetPromptResult, McpError> {
        match name {
            "fix_rule_breaks" => {
                self.fix_rule_breaks(text_arg(args, "table").ok_or_else(|| missing(name, "table"))?).await
            }
            "summarise_changes" => {
                self.summarise_changes(text_arg(args, "since").ok_or_else(|| missing(name, "since"))?).await
            }
            "review_agent_writes" => {
                let limit = text_arg(args, "limit").map_or(Ok(5), str::parse::<usize>).map_err(|_| {
                    McpError::invalid_params(
                        "limit is a whole number of writes, e.g. 5",
                        Some(json!({"argument": "limit"})),
                    )
                })?;
                self.review_writes(text_arg(args, "actor"), limit.clamp(1, 20)).await
            }
            _ => Err(McpError::invalid_params(
                format!(
                    "no prompt \"{name}\"{}: prompts/list names them",
                    datanotes_core::names::did_you_mean(name, prompts().iter().map(|p| p.name.as_str()))
                ),
                Some(json!({"prompt": name})),
            )),
        }
    }

    async fn fix_rule_breaks(&self, table: &str) -> Result<GetPromptResult, McpError> {
        let check = self.ask("check_table", json!({"table": table})).await.map_err(|a| refused(&a))?;
        let db = self.ask("describe_database", json!({"table": table})).await.map_err(|a| refused(&a))?;
        let def = &db["tables"][0];
        let q = def["qualified"].as_str().unwrap_or(table);
        let total = check["total"].as_u64().unwrap_or(0);
        let rows = check["violations"].as_array().map_or(0, Vec::len);
        let mut text = if total == 0 {
            format!("No row of {q} breaks a rule now ({} rows checked with check_table). Nothing needs fixing; say so to the person.\n", check["rows_checked"])
        } else {
            format!("{rows} rows of {q} break its rules now ({total} violations, check_table). Fix each row so that every rule holds:\n\n")
        };
        for v in check["violations"].as_array().into_iter().flatten() {
            text.push_str(&format!("- {}\n", v["path"].as_str().unwrap_or("?")));
            for x in v["violations"].as_array().into_iter().flatten() {
                text.push_str(&format!("  - {}\n", x["message"].as_str().unwrap_or("?")));
            }
        }
        if total > 0 {
            text.push_str(&format!(
                "\nThe table's columns and rules:\n```json\n{}\n```\n\nFor each row, read it (read_note), then update_row with the values that keep every rule (ask the person when the right value is not clear from the note). When a rule itself is wrong, say so rather than change it: alter_column or drop_check change the rule for every row. Each write is journaled: list_migrations lists them and undo_migration with a migration_id reverts one. Finish with check_table {{\"table\": \"{q}\"}} to show nothing is left.\n",
                pretty(&json!({"columns": def["columns"], "checks": def["checks"], "check_descriptions": def["check_descriptions"]}))
            ));
        }
        Ok(result(format!("Fix the rows that break rules in {q}"), text))
    }

    async fn summarise_changes(&self, since: &str) -> Result<GetPromptResult, McpError> {
        let journal =
            self.ask("list_migrations", json!({"since": since, "limit": 200})).await.map_err(|a| refused(&a))?;
        // The feed's hand edits since then (its `since` is a seq: the latest
        // changes are read and kept from that moment on).
        let feed = self.ask("list_changes", json!({"since": 0, "limit": 1})).await.map_err(|a| refused(&a))?;
        let from = feed["head"].as_u64().unwrap_or(0).saturating_sub(2000);
        let feed = self.ask("list_changes", json!({"since": from, "limit": 2000})).await.map_err(|a| refused(&a))?;
        let hand: Vec<&Value> = feed["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["source"] == "external" && e["at"].as_str().is_some_and(|at| at >= since))
            .collect();
        let total = journal["total"].as_u64().unwrap_or(0);
        let mut text = format!("Summarise for the person what changed in the database since {since}, in a few plain sentences: which tables, what kind of change, by whom, and anything that looks wrong (rules broken by hand edits, undone writes).\n\n{total} operations were journaled since then (list_migrations, newest first):\n");
        for m in journal["migrations"].as_array().into_iter().flatten() {
            text.push_str(&format!(
                "- {} {} — {} ({} notes; by {}{}; migration_id {})\n",
                m["executed_at"].as_str().unwrap_or("?"),
                m["op"].as_str().unwrap_or("?"),
                m["summary"].as_str().unwrap_or(""),
                m["notes_changed"],
                m["by"].as_str().unwrap_or("?"),
                if m["undone"] == true { "; undone" } else { "" },
                m["migration_id"].as_str().unwrap_or("?"),
            ));
        }
        text.push_str(&format!(
            "\n{} rows were edited by hand (outside the engine) since then (list_changes, source external):\n",
            hand.len()
        ));
        for e in hand.iter().take(100) {
            let broke = e["violations"].as_array().map_or(0, Vec::len);
            text.push_str(&format!(
                "- {} {} {}{}\n",
                e["at"].as_str().unwrap_or("?"),
                e["kind"].as_str().unwrap_or("?"),
                e["path"].as_str().unwrap_or("?"),
                if broke > 0 { format!(" (breaks {broke} rules)") } else { String::new() }
            ));
        }
        text.push_str("\nshow_migration with a migration_id shows what one operation did to each note; undo_migration reverts it.\n");
        Ok(result(format!("What changed since {since}"), text))
    }

    async fn review_writes(&self, actor: Option<&str>, limit: usize) -> Result<GetPromptResult, McpError> {
        let journal = self.ask("list_migrations", json!({"limit": 500})).await.map_err(|a| refused(&a))?;
        let all: Vec<&Value> = journal["migrations"].as_array().into_iter().flatten().collect();
        let Some(who) = actor.or_else(|| all.first().and_then(|m| m["by"].as_str())) else {
            return Ok(result(
                "No writes to review".into(),
                "The journal holds no write: there is nothing to review. Say so to the person.".into(),
            ));
        };
        let mine: Vec<&Value> = all.iter().copied().filter(|m| m["by"] == who).take(limit).collect();
        let mut text = format!("Review the last {} writes of {who} with the person: for each, say in plain words what it did, whether it is what was asked, and whether a rule or a value looks wrong. Offer to undo the wrong ones with undo_migration {{\"migration_id\": …}} (an undo is journaled too: undoing it is a redo).\n", mine.len());
        if mine.is_empty() {
            text.push_str(&format!("\nThe journal holds no write by {who}. The writers it names: {}.\n", {
                let mut by: Vec<&str> = all.iter().filter_map(|m| m["by"].as_str()).collect();
                by.sort();
                by.dedup();
                by.join(", ")
            }));
        }
        for m in mine {
            let id = m["migration_id"].as_str().unwrap_or_default();
            let shown = self.ask("show_migration", json!({"migration_id": id})).await.unwrap_or_else(|a| a);
            text.push_str(&format!(
                "\n## {} — {}\n```json\n{}\n```\n",
                m["op"].as_str().unwrap_or("?"),
                m["summary"].as_str().unwrap_or(""),
                pretty(&shown)
            ));
        }
        Ok(result(format!("Review the last writes of {who}"), text))
    }
}
