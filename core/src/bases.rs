//! Obsidian Bases files (`.base`, help.obsidian.md/bases/syntax) for each table
//! and view, in `datanotes/bases/`: a filter that selects the table's rows, its
//! columns in schema order named by their descriptions, and a table view (for a
//! view, its filter and order as far as Bases can say them).
//!
//! A file is the engine's while its first line carries the hash of the rest: the
//! engine rewrites it when the schema changes. Once a person edits it (Obsidian
//! rewrites the whole file, header included), it is theirs and is kept.

use crate::filter::{Filter, Op};
use crate::schema::{short, ColType, ColumnDef, Schema, TableDef};
use crate::views::{sort_key, ViewDef};
use serde_json::Value;
use std::collections::BTreeMap;

pub const FOLDER: &str = "datanotes/bases/";
const HEADER: &str = "# Datanotes keeps this file in step with datanotes/metastore.yaml until you edit it; sha256:";

/// Whether a vault path is a base file the engine keeps.
pub fn is_base(path: &str) -> bool {
    path.strip_prefix(FOLDER).is_some_and(|rest| rest.ends_with(".base") && !rest.contains('/'))
}

/// Whether `text` is still as the engine wrote it (its header's hash holds).
pub fn is_engines(text: &str) -> bool {
    let Some((first, rest)) = text.split_once('\n') else { return false };
    first.strip_prefix(HEADER).is_some_and(|h| h == short_hash(rest))
}

fn short_hash(text: &str) -> String {
    crate::edits::hash(text)[..16].to_string()
}

/// The base file of a table or view: named short, or in full when tables of
/// several schemas share the short name (a view's short name is its own).
pub fn path_of(s: &Schema, q: &str) -> String {
    let unique = s.tables.keys().filter(|o| short(o) == short(q)).count() <= 1;
    format!("{FOLDER}{}.base", if unique { short(q) } else { q })
}

/// Every base file the schema calls for: path -> text.
pub fn files(s: &Schema) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (q, t) in &s.tables {
        out.insert(path_of(s, q), table_base(s, q, t));
    }
    for (q, v) in &s.views {
        if let Ok(t) = s.resolve(&v.table) {
            out.insert(path_of(s, q), view_base(s, q, &t, v));
        }
    }
    out
}

fn with_header(body: String) -> String {
    format!("{HEADER}{}\n{body}", short_hash(&body))
}

/// A YAML scalar, double-quoted (JSON's quoting is YAML's).
fn quoted(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// The lines every base of table `q` starts with: what it is, and the filter
/// that selects the table's rows.
fn head(s: &Schema, what: &str, q: &str, extra: &[String]) -> String {
    let folder = s.folder(q);
    let mut out = format!("# {what}\nfilters:\n  and:\n");
    out.push_str(&format!("    - {}\n", quoted(&format!("file.inFolder({})", quoted(folder.trim_end_matches('/'))))));
    out.push_str(&format!("    - {}\n", quoted("file.ext == \"md\"")));
    for e in extra {
        out.push_str(e);
    }
    out
}

fn properties(t: &TableDef, cols: &[&str]) -> String {
    let mut out = String::from("properties:\n");
    for c in cols {
        let shown = t.column(c).and_then(|d| d.description.clone()).unwrap_or_else(|| c.to_string());
        out.push_str(&format!("  {}:\n    displayName: {}\n", quoted(&format!("note.{c}")), quoted(&shown)));
    }
    out
}

fn order(cols: &[&str]) -> String {
    let mut out = String::from("    order:\n      - file.name\n");
    for c in cols {
        out.push_str(&format!("      - {}\n", quoted(&format!("note.{c}"))));
    }
    out
}

fn table_base(s: &Schema, q: &str, t: &TableDef) -> String {
    let cols: Vec<&str> = t.column_names().collect();
    let mut out = head(s, &format!("The rows of the table {q}."), q, &[]);
    out.push_str(&properties(t, &cols));
    out.push_str(&format!("views:\n  - type: table\n    name: {}\n", quoted(short(q))));
    out.push_str(&order(&cols));
    with_header(out)
}

fn view_base(s: &Schema, q: &str, table: &str, v: &ViewDef) -> String {
    let t = &s.tables[table];
    let mut left_out = vec![];
    let mut extra = vec![];
    if let Some(f) = v.filter.as_ref().and_then(|w| Filter::parse(w).ok()) {
        let parts = match f {
            Filter::And(fs) => fs,
            other => vec![other],
        };
        for p in &parts {
            match node(t, p) {
                Some(n) => extra.push(render(&n, 4)),
                None => left_out.push(format!("where {}", crate::schema::flow(&to_json(p)))),
            }
        }
    }
    let cols: Vec<&str> =
        if v.columns.is_empty() { t.column_names().collect() } else { v.columns.iter().map(String::as_str).collect() };
    let cols: Vec<&str> = cols.into_iter().filter(|c| t.column(c).is_some()).collect();
    let mut sort = String::new();
    for k in &v.order_by {
        let (path, desc) = sort_key(k);
        if t.column(path).is_some() {
            let dir = if desc { "DESC" } else { "ASC" };
            sort.push_str(&format!(
                "      - property: {}\n        direction: {dir}\n",
                quoted(&format!("note.{path}"))
            ));
        } else {
            left_out.push(format!("order_by {k}"));
        }
    }
    let mut what = format!("The view {q}: rows of the table {table}.");
    for l in &left_out {
        what.push_str(&format!(
            "\n# Bases cannot say {l}: this base shows more rows, or another order, than select_rows on the view."
        ));
    }
    let mut out = head(s, &what, table, &extra);
    out.push_str(&properties(t, &cols));
    out.push_str(&format!("views:\n  - type: table\n    name: {}\n", quoted(short(q))));
    out.push_str(&order(&cols));
    if !sort.is_empty() {
        out.push_str("    sort:\n");
        out.push_str(&sort);
    }
    with_header(out)
}

/// A filter in Bases' terms: a statement, or and/or/not of them.
enum Node {
    Expr(String),
    All(&'static str, Vec<Node>),
}

fn render(n: &Node, indent: usize) -> String {
    let pad = " ".repeat(indent);
    match n {
        Node::Expr(e) => format!("{pad}- {}\n", quoted(e)),
        Node::All(kind, items) => {
            let mut out = format!("{pad}- {kind}:\n");
            for i in items {
                out.push_str(&render(i, indent + 4));
            }
            out
        }
    }
}

fn to_json(f: &Filter) -> Value {
    match f {
        Filter::And(fs) => serde_json::json!({"and": fs.iter().map(to_json).collect::<Vec<_>>()}),
        Filter::Or(fs) => serde_json::json!({"or": fs.iter().map(to_json).collect::<Vec<_>>()}),
        Filter::Not(f) => serde_json::json!({"not": to_json(f)}),
        Filter::Cmp { path, op, arg } => {
            let mut m = serde_json::Map::new();
            m.insert(op.name().into(), arg.clone());
            serde_json::json!({path.join("."): m})
        }
    }
}

/// The filter as Bases says it, or None when a part of it cannot be said
/// (a dotted path through a link, an order on a list).
fn node(t: &TableDef, f: &Filter) -> Option<Node> {
    match f {
        Filter::And(fs) => Some(Node::All("and", fs.iter().map(|x| node(t, x)).collect::<Option<_>>()?)),
        Filter::Or(fs) => Some(Node::All("or", fs.iter().map(|x| node(t, x)).collect::<Option<_>>()?)),
        Filter::Not(x) => Some(Node::All("not", vec![node(t, x)?])),
        Filter::Cmp { path, op, arg } => statement(t, path, *op, arg).map(Node::Expr),
    }
}

fn statement(t: &TableDef, path: &[String], op: Op, arg: &Value) -> Option<String> {
    let [col] = path else { return None };
    if col == "path" {
        return match (op, arg) {
            (Op::Eq, Value::String(p)) => Some(format!("file.path == {}", quoted(p))),
            (Op::StartsWith, Value::String(p)) => Some(format!("file.path.startsWith({})", quoted(p))),
            _ => None,
        };
    }
    let def = t.column(col);
    let list = def.is_some_and(|d| d.ty == ColType::List);
    let item = def.map(ColumnDef::scalar_type);
    let x = if col.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!("note.{col}")
    } else {
        format!("note[{}]", quoted(col))
    };
    let lit = |v: &Value| literal(item, v);
    Some(match (op, arg, list) {
        (Op::Exists, v, _) if v.as_bool() == Some(false) => format!("!file.hasProperty({})", quoted(col)),
        (Op::Exists, _, _) => format!("file.hasProperty({})", quoted(col)),
        (Op::Eq, Value::Null, _) => format!("{x}.isEmpty()"),
        (Op::Ne, Value::Null, _) => format!("!{x}.isEmpty()"),
        (Op::Eq, v, true) if !v.is_array() => format!("{x}.contains({})", lit(v)?),
        (Op::Ne, v, true) if !v.is_array() => format!("!{x}.contains({})", lit(v)?),
        (Op::Eq, v, false) => format!("{x} == {}", lit(v)?),
        (Op::Ne, v, false) => format!("{x} != {}", lit(v)?),
        (Op::Gt | Op::Gte | Op::Lt | Op::Lte, v, false) => {
            let sign = match op {
                Op::Gt => ">",
                Op::Gte => ">=",
                Op::Lt => "<",
                _ => "<=",
            };
            format!("{x} {sign} {}", lit(v)?)
        }
        (Op::In, Value::Array(items), false) if !items.is_empty() => {
            let each: Option<Vec<String>> = items.iter().map(|i| lit(i).map(|l| format!("{x} == {l}"))).collect();
            format!("({})", each?.join(" || "))
        }
        (Op::Contains, v, _) => format!("{x}.contains({})", lit(v)?),
        (Op::StartsWith, Value::String(p), false) => format!("{x}.startsWith({})", quoted(p)),
        _ => return None,
    })
}

/// A value as a Bases literal: strings quoted, dates through date(), links
/// through link().
fn literal(ty: Option<ColType>, v: &Value) -> Option<String> {
    match v {
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(match ty {
            Some(ColType::Date | ColType::Datetime) => format!("date({})", quoted(s)),
            Some(ColType::Link) => format!("link({})", quoted(crate::filter::link_target(s))),
            _ => quoted(s),
        }),
        _ => None,
    }
}
