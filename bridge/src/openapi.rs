//! The OpenAPI 3.1 document of the HTTP API, generated from core's registry: one
//! path per operation, nothing listed twice.

use datanotes_core::ops::registry::{Access, OPS};
use serde_json::{json, Map, Value};

/// The largest request body the HTTP API and MCP over HTTP take.
pub const MAX_BODY: usize = 4 << 20;

fn error(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    })
}

fn access(a: Access) -> &'static str {
    match a {
        Access::Read => "read",
        Access::Write => "write",
        Access::Destructive => "destructive",
    }
}

/// The document; `server` is the base URL it is served from.
pub fn document(server: &str) -> Value {
    let mut paths = Map::new();
    for op in OPS {
        let mut responses = Map::new();
        responses.insert(
            "200".into(),
            json!({
                "description": "Done: the operation's answer.",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Answer"}}},
            }),
        );
        responses.insert(
            "400".into(),
            error("Bad input: the body is not a JSON object, or an argument is unknown, missing or of the wrong type."),
        );
        responses.insert("401".into(), error("Missing or wrong bearer token."));
        responses.insert(
            "409".into(),
            error(
                "Refused: nothing was written. The error lists every reason, with a Hint (what to do next) and Docs.",
            ),
        );
        responses.insert("413".into(), error("The request body is larger than 4 MiB."));
        if op.access != Access::Read {
            responses.insert(
                "503".into(),
                error("Rolled back: the write could not finish and nothing is left changed; send it again."),
            );
        }
        responses.insert("500".into(), error("Unexpected error."));
        let required = op.params.iter().any(|p| p.required);
        paths.insert(
            format!("/datanotes/operations/{}/", op.name),
            json!({"post": {
                "operationId": op.name,
                "summary": op.title,
                "description": op.description,
                "tags": [access(op.access)],
                "x-datanotes-access": access(op.access),
                "x-datanotes-journaled": op.journaled,
                "requestBody": {
                    "required": required,
                    "description": "The operation's arguments (an empty body is {}).",
                    "content": {"application/json": {"schema": op.input_schema()}},
                },
                "responses": responses,
            }}),
        );
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Datanotes",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Every operation of the engine, one route each: POST its arguments as a JSON object with the bearer token. The same operations are MCP tools at /mcp.",
        },
        "servers": [{"url": server}],
        "security": [{"bearer": []}],
        "tags": [
            {"name": "read", "description": "Reads: nothing is written."},
            {"name": "write", "description": "Writes: validated, journaled (undo_migration reverts them)."},
            {"name": "destructive", "description": "Writes that drop or move data away (archived, never deleted)."},
        ],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "DATANOTES_TOKEN, or the token in the vault's .datanotes/token."},
            },
            "schemas": {
                "Answer": {
                    "type": "object",
                    "description": "The operation's answer; writes answer ok, op, summary, notes_changed, planned_edits and migration_id.",
                    "additionalProperties": true,
                },
                "Error": {
                    "type": "object",
                    "required": ["error"],
                    "properties": {
                        "error": {"type": "string", "description": "What went wrong, for a person or an agent."},
                        "ok": {"type": "boolean", "const": false},
                        "op": {"type": "string", "description": "The operation."},
                        "hint": {"type": "string", "description": "What to do next."},
                    },
                    "additionalProperties": true,
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_path_per_operation() {
        let d = document("http://127.0.0.1:8765");
        assert_eq!(d["openapi"], "3.1.0");
        let paths = d["paths"].as_object().unwrap();
        assert_eq!(paths.len(), OPS.len());
        for op in OPS {
            let post = &paths[&format!("/datanotes/operations/{}/", op.name)]["post"];
            assert_eq!(post["operationId"], op.name);
            assert_eq!(post["requestBody"]["content"]["application/json"]["schema"], op.input_schema());
            for code in ["200", "400", "401", "409", "500"] {
                assert!(post["responses"].get(code).is_some(), "{} lacks {code}", op.name);
            }
        }
    }
}
