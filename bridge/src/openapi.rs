//! The OpenAPI 3.1 document of the HTTP API, generated from core's registry: one
//! path per operation, nothing listed twice.

use datanotes_core::ops::answers::refusal_schema;
use datanotes_core::ops::registry::{Access, OpSpec, OPS};
use serde_json::{json, Map, Value};

/// The largest request body the HTTP API and MCP over HTTP take.
pub const MAX_BODY: usize = 4 << 20;

/// A response whose body is an `Error` (the server's: a token, a body too large).
fn error(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    })
}

/// A response whose body is the engine's refusal (the schema MCP's outputSchema
/// holds for an `isError` result), or, for `either`, the server's `Error` too.
fn refusal(description: &str, either: bool) -> Value {
    let schema = match either {
        true => json!({"anyOf": [{"$ref": "#/components/schemas/Refusal"}, {"$ref": "#/components/schemas/Error"}]}),
        false => json!({"$ref": "#/components/schemas/Refusal"}),
    };
    json!({"description": description, "content": {"application/json": {"schema": schema}}})
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
        let required = op.all_params().iter().any(|p| p.required);
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
                "responses": responses(op),
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
                "Refusal": refusal_schema(),
                "Error": {
                    "type": "object",
                    "description": "The server's own refusal, before any operation runs (a token, a body that is not JSON or too large).",
                    "required": ["error"],
                    "properties": {
                        "error": {"type": "string", "description": "What went wrong and what to do, for a person or an agent."},
                    },
                    "additionalProperties": true,
                },
            },
        },
    })
}

/// An operation's answers by HTTP status: its own when done, a refusal's
/// otherwise (the server's own errors too: a token, a body too large).
fn responses(op: &OpSpec) -> Map<String, Value> {
    let mut responses = Map::new();
    responses.insert(
        "200".into(),
        json!({
            "description": "Done: the operation's answer.",
            "content": {"application/json": {"schema": op.answer_schema()}},
        }),
    );
    responses.insert(
        "400".into(),
        refusal(
            "Bad input: the body is not a JSON object, or an argument is unknown, missing or of the wrong type.",
            true,
        ),
    );
    responses.insert("401".into(), error("Missing or wrong bearer token."));
    responses.insert(
        "409".into(),
        refusal(
            "Refused: nothing was written. The error lists every reason, with a Hint (what to do next) and Docs.",
            false,
        ),
    );
    responses.insert("413".into(), error("The request body is larger than 4 MiB."));
    if op.access != Access::Read {
        responses.insert(
            "503".into(),
            refusal("Rolled back: the write could not finish and nothing is left changed; send it again.", false),
        );
    }
    responses.insert("500".into(), refusal("Unexpected error, or a write the disk did not confirm.", true));
    responses
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
            // The same schemas as MCP's outputSchema: the answer, then the refusal.
            let out = op.output_schema();
            assert_eq!(post["responses"]["200"]["content"]["application/json"]["schema"], out["anyOf"][0]);
            assert_eq!(
                post["responses"]["409"]["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/Refusal"
            );
            assert_eq!(d["components"]["schemas"]["Refusal"], out["anyOf"][1]);
            for code in ["200", "400", "401", "409", "500"] {
                assert!(post["responses"].get(code).is_some(), "{} lacks {code}", op.name);
            }
        }
    }
}
