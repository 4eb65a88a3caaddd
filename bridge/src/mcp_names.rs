//! The names MCP offers beside the tools, each from the engine's own answers
//! (describe_database, list_migrations, describe_history, list_webhooks,
//! suggest_rows, read_docs): the completions of `completion/complete` for a
//! resource template's or a prompt's argument, and the URIs of resources.
//!
//! URIs: `datanotes://<table or view>` (its definition), `datanotes://<table>/<row
//! name>` (a row), `datanotes://_schema`, `datanotes://_changes` (the change feed),
//! `datanotes://_docs/<page>`, `datanotes://_notes/<path>` (any note). Names are
//! percent-encoded where a URI needs it.

use serde_json::Value;
use std::collections::HashMap;

pub const SCHEME: &str = "datanotes://";
pub const SCHEMA: &str = "datanotes://_schema";
pub const CHANGES: &str = "datanotes://_changes";
pub const DOCS: &str = "datanotes://_docs/";
pub const NOTES: &str = "datanotes://_notes/";

/// What a URI names.
#[derive(Debug, PartialEq, Eq)]
pub enum Named {
    Schema,
    Changes,
    Docs(String),
    Note(String),
    /// A table or a view, by the name it was given.
    Table(String),
    Row(String, String),
}

/// Percent-encodes what a URI's path segment cannot hold as it is.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Undoes `encode` (and any other percent-encoding); None when it is not UTF-8.
pub fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// What `uri` names, or None when it is not one of ours.
pub fn parse(uri: &str) -> Option<Named> {
    let rest = uri.strip_prefix(SCHEME)?;
    if rest == "_schema" {
        return Some(Named::Schema);
    }
    if rest == "_changes" {
        return Some(Named::Changes);
    }
    if let Some(page) = rest.strip_prefix("_docs/") {
        return Some(Named::Docs(decode(page)?));
    }
    if let Some(path) = rest.strip_prefix("_notes/") {
        let path: Option<Vec<String>> = path.split('/').map(decode).collect();
        return Some(Named::Note(path?.join("/")));
    }
    match rest.split_once('/') {
        None if !rest.is_empty() => Some(Named::Table(decode(rest)?)),
        Some((t, row)) if !t.is_empty() && !row.is_empty() && !row.contains('/') => {
            Some(Named::Row(decode(t)?, decode(row)?))
        }
        _ => None,
    }
}

pub fn table_uri(table: &str) -> String {
    format!("{SCHEME}{}", encode(table))
}

pub fn row_uri(table: &str, row: &str) -> String {
    format!("{SCHEME}{}/{}", encode(table), encode(row))
}

pub fn note_uri(path: &str) -> String {
    format!("{NOTES}{}", path.split('/').map(encode).collect::<Vec<_>>().join("/"))
}

/// The URI of a note a write changed: its row's when it is a row in a table's
/// folder under datanotes/ (`datanotes/<catalog>/<schema>/<table>/<name>.md`),
/// else the note's by path.
pub fn changed_note_uri(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        ["datanotes", catalog, schema, table, name]
            if name.ends_with(".md") && !catalog.starts_with('_') && !schema.starts_with('_') =>
        {
            row_uri(&format!("{catalog}.{schema}.{table}"), name.trim_end_matches(".md"))
        }
        _ => note_uri(path),
    }
}

/// The tables and views of a describe_database answer: (short name, qualified, entry).
pub fn objects(db: &Value) -> Vec<(&str, &str, &Value)> {
    ["tables", "views"]
        .iter()
        .flat_map(|k| db[*k].as_array().into_iter().flatten())
        .filter_map(|t| Some((t["name"].as_str()?, t["qualified"].as_str()?, t)))
        .collect()
}

/// The entry of a table or view by short or qualified name.
pub fn object<'a>(db: &'a Value, name: &str) -> Option<&'a Value> {
    objects(db).into_iter().find(|(s, q, _)| *s == name || *q == name).map(|(_, _, t)| t)
}

/// The table entry a completion's context names (its `table` argument), or a
/// view's table.
fn context_table<'a>(db: &'a Value, ctx: &HashMap<String, String>) -> Option<&'a Value> {
    let o = object(db, ctx.get("table")?)?;
    match o.get("columns") {
        Some(_) => Some(o),
        None => object(db, o["table"].as_str()?),
    }
}

/// The columns completion offers: the context's table's, or every table's.
pub fn columns(db: &Value, ctx: &HashMap<String, String>) -> Vec<String> {
    let tables: Vec<&Value> = match context_table(db, ctx) {
        Some(t) => vec![t],
        None => db["tables"].as_array().map(|a| a.iter().collect()).unwrap_or_default(),
    };
    let mut out: Vec<String> =
        tables.iter().flat_map(|t| t["columns"].as_object().into_iter().flatten().map(|(c, _)| c.clone())).collect();
    out.sort();
    out.dedup();
    out
}

/// The values of the enum column the context names (or of every enum column).
pub fn enum_values(db: &Value, ctx: &HashMap<String, String>) -> Vec<String> {
    let tables: Vec<&Value> = match context_table(db, ctx) {
        Some(t) => vec![t],
        None => db["tables"].as_array().map(|a| a.iter().collect()).unwrap_or_default(),
    };
    let col = ctx.get("column");
    let mut out: Vec<String> = tables
        .iter()
        .flat_map(|t| t["columns"].as_object().into_iter().flatten())
        .filter(|(c, _)| col.is_none_or(|x| x == *c))
        .flat_map(|(_, d)| d["values"].as_array().into_iter().flatten())
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The candidates that fit what was typed: those that start with it first,
/// then those that hold it, case-insensitively; at most 100 (MCP's limit).
pub fn fitting(candidates: Vec<String>, typed: &str) -> (Vec<String>, usize) {
    let t = typed.to_lowercase();
    let (mut starts, mut holds) = (vec![], vec![]);
    for c in candidates {
        let l = c.to_lowercase();
        if l.starts_with(&t) {
            starts.push(c);
        } else if l.contains(&t) {
            holds.push(c);
        }
    }
    starts.extend(holds);
    let total = starts.len();
    starts.truncate(100);
    (starts, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uris_name_what_they_say() {
        assert_eq!(parse("datanotes://film/Sherlock%20Jr."), Some(Named::Row("film".into(), "Sherlock Jr.".into())));
        assert_eq!(parse(&row_uri("film", "Sherlock Jr.")), Some(Named::Row("film".into(), "Sherlock Jr.".into())));
        assert_eq!(parse("datanotes://main.public.film"), Some(Named::Table("main.public.film".into())));
        assert_eq!(parse("datanotes://_schema"), Some(Named::Schema));
        assert_eq!(parse("datanotes://_changes"), Some(Named::Changes));
        assert_eq!(parse("datanotes://_docs/reference%2Foperations"), Some(Named::Docs("reference/operations".into())));
        assert_eq!(parse(&note_uri("Notes/Film night.md")), Some(Named::Note("Notes/Film night.md".into())));
        for bad in ["https://film", "datanotes://", "datanotes://film/a/b", "datanotes://film/%FF", "datanotes://%4"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(changed_note_uri("datanotes/main/public/film/Charade.md"), "datanotes://main.public.film/Charade");
        assert_eq!(changed_note_uri("datanotes/_archive/x/y/z/a.md"), note_uri("datanotes/_archive/x/y/z/a.md"));
    }

    #[test]
    fn completions_fit_what_was_typed() {
        let db = json!({"tables": [{"name": "film", "qualified": "main.public.film",
            "columns": {"status": {"type": "enum", "values": ["watched", "to watch"]}, "title": {"type": "text"}}}],
            "views": [{"name": "to_watch", "qualified": "main.public.to_watch", "table": "film"}]});
        let ctx = HashMap::from([("table".to_string(), "to_watch".to_string())]);
        assert_eq!(columns(&db, &ctx), ["status", "title"]);
        assert_eq!(enum_values(&db, &ctx), ["to watch", "watched"]);
        assert_eq!(fitting(vec!["watch".into(), "to_watch".into(), "film".into()], "WAT").0, ["watch", "to_watch"]);
        assert_eq!(fitting((0..150).map(|i| i.to_string()).collect(), "").1, 150);
    }
}
