//! Views: saved queries kept in metastore.yaml beside the tables (`views:`). A
//! view names a table and narrows it (columns, where, order_by); select_rows
//! reads it as it reads a table, and nothing writes through it.

use crate::filter::Filter;
use crate::names;
use crate::schema::{Schema, TableDef};
use serde_json::{Map, Value};

pub const VIEW_KEYS: [&str; 5] = ["description", "table", "columns", "where", "order_by"];

#[derive(Debug, Clone, PartialEq)]
pub struct ViewDef {
    pub description: Option<String>,
    /// The table, as written (short or qualified; resolved when used, as link targets are).
    pub table: String,
    /// The columns it shows, in order; all the table's when empty.
    pub columns: Vec<String>,
    pub filter: Option<Value>,
    /// Sort keys as select_rows takes them ("year", "-year", "year desc").
    pub order_by: Vec<String>,
}

fn strings(v: &Value, what: &str, key: &str) -> Result<Vec<String>, String> {
    match v {
        Value::Null => Ok(vec![]),
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(str::to_string).ok_or_else(|| format!("{what}: {key} must list names, not {x}")))
            .collect(),
        other => Err(format!("{what}: {key} must be a list of names, not {other}")),
    }
}

impl ViewDef {
    pub fn from_json(v: &Value, what: &str) -> Result<ViewDef, String> {
        let obj = v.as_object().ok_or_else(|| format!("{what} must be a mapping with a table, not {v}"))?;
        for k in obj.keys() {
            if !VIEW_KEYS.contains(&k.as_str()) {
                return Err(format!(
                    "{what}: unknown key \"{k}\"{}; a view has {}",
                    names::did_you_mean(k, VIEW_KEYS),
                    VIEW_KEYS.join(", ")
                ));
            }
        }
        let table = match obj.get("table") {
            Some(Value::String(t)) if !t.is_empty() => t.clone(),
            _ => return Err(format!("{what} needs a table: the table it reads, such as film")),
        };
        let description = match obj.get("description") {
            None | Some(Value::Null) => None,
            Some(Value::String(d)) => Some(d.clone()),
            Some(other) => return Err(format!("{what}: description must be a string, not {other}")),
        };
        Ok(ViewDef {
            description,
            table,
            columns: strings(obj.get("columns").unwrap_or(&Value::Null), what, "columns")?,
            filter: obj.get("where").filter(|w| !w.is_null()).cloned(),
            order_by: strings(obj.get("order_by").unwrap_or(&Value::Null), what, "order_by")?,
        })
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        if let Some(d) = &self.description {
            m.insert("description".into(), d.clone().into());
        }
        m.insert("table".into(), self.table.clone().into());
        if !self.columns.is_empty() {
            m.insert("columns".into(), self.columns.clone().into());
        }
        if let Some(w) = &self.filter {
            m.insert("where".into(), w.clone());
        }
        if !self.order_by.is_empty() {
            m.insert("order_by".into(), self.order_by.clone().into());
        }
        Value::Object(m)
    }

    /// Every dotted path the view reads: its columns, its filter's and its sort keys'.
    pub fn paths(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = self.columns.iter().map(|c| vec![c.clone()]).collect();
        if let Some(f) = self.filter.as_ref().and_then(|w| Filter::parse(w).ok()) {
            out.extend(f.paths());
        }
        out.extend(self.order_by.iter().map(|k| sort_key(k).0.split('.').map(str::to_string).collect()));
        out
    }

    /// Whether the view reads `table` (any column of it when `column` is None),
    /// itself or through a link of a dotted path.
    pub fn uses(&self, schema: &Schema, table: &str, column: Option<&str>) -> bool {
        let Ok(root) = schema.resolve(&self.table) else { return false };
        if column.is_none() && root == table {
            return true;
        }
        self.paths().iter().any(|p| {
            let mut cur = root.clone();
            for seg in p {
                if cur == table && column.is_none_or(|c| c == seg) {
                    return true;
                }
                let next = schema
                    .tables
                    .get(&cur)
                    .and_then(|t| t.column(seg))
                    .and_then(|c| c.table.as_ref())
                    .and_then(|t| schema.resolve(t).ok());
                match next {
                    Some(n) => cur = n,
                    None => break,
                }
            }
            false
        })
    }
}

/// A sort key's column path and whether it sorts descending.
pub fn sort_key(k: &str) -> (&str, bool) {
    let k = k.trim();
    if let Some(n) = k.strip_prefix('-') {
        (n.trim(), true)
    } else if let Some(n) = k.strip_suffix(" desc").or_else(|| k.strip_suffix(" DESC")) {
        (n.trim(), true)
    } else {
        (k.strip_suffix(" asc").or_else(|| k.strip_suffix(" ASC")).unwrap_or(k).trim(), false)
    }
}

/// A sort key with its column path replaced, written as it was (`-`, ` desc`).
pub fn with_path(k: &str, path: &str) -> String {
    let (old, _) = sort_key(k);
    k.replacen(old, path, 1)
}

fn is_meta(c: &str) -> bool {
    matches!(c, "id" | "path")
}

/// Checks a view against the schema: its table, columns, filter and sort keys.
pub fn check(schema: &Schema, name: &str, v: &ViewDef) -> Result<(), String> {
    let what = format!("view {name}");
    let q = schema.resolve(&v.table).map_err(|e| format!("{what}: {e}"))?;
    let t: &TableDef = &schema.tables[&q];
    let columns = || t.column_names().collect::<Vec<_>>().join(", ");
    for c in &v.columns {
        if !is_meta(c) && t.column(c).is_none() {
            return Err(format!(
                "{what}: columns: no column \"{c}\" in {q}{}; its columns are {}",
                names::did_you_mean(c, t.column_names()),
                columns()
            ));
        }
    }
    if let Some(w) = &v.filter {
        let f = Filter::parse(w).map_err(|e| format!("{what}: where: {e}"))?;
        schema.check_paths(&q, t, &f.paths(), &format!("view {name}, where"))?;
    }
    for k in &v.order_by {
        let path: Vec<String> = sort_key(k).0.split('.').map(str::to_string).collect();
        if !is_meta(&path[0]) {
            schema.check_paths(&q, t, &[path], &format!("view {name}, order_by"))?;
        }
    }
    Ok(())
}

/// The way out of a schema change refused because a view would no longer hold
/// (a restore or an undo taking away what it reads); None when no view is broken.
pub fn broken_hint(s: &Schema) -> Option<String> {
    let (name, _) = s.views.iter().find(|(n, v)| check(s, n, v).is_err())?;
    Some(format!(
        "Drop the view {name} first (drop_view), or create it again without what this takes away: views are not rewound."
    ))
}
