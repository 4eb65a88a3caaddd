//! The rules a row must keep: types, enums, required and unique columns, links,
//! filtered link targets, CHECKs, generated values. One checker serves writes,
//! check_table and hand edits.

use crate::filter::{link_target, Lookup};
use crate::schema::{ColType, ColumnDef, Schema, TableDef};
use crate::time::{is_date, is_datetime};
use crate::vault::{value_key, Row, State, Vault};
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub code: &'static str,
    pub column: Option<String>,
    pub constraint: Option<String>,
    pub index: Option<usize>,
    pub message: String,
    pub value: Option<Value>,
    /// A CHECK's description (schema.rs `check_descriptions`): what the rule
    /// means, for a person to read in place of its filter.
    pub description: Option<String>,
}

impl Violation {
    fn col(code: &'static str, column: &str, index: Option<usize>, message: String) -> Self {
        Violation {
            code,
            column: Some(column.to_string()),
            constraint: None,
            index,
            message,
            value: None,
            description: None,
        }
    }

    /// What makes two violations the same, to tell new ones from old ones.
    pub fn key(&self) -> (&'static str, Option<&str>, Option<&str>, Option<usize>) {
        (self.code, self.column.as_deref(), self.constraint.as_deref(), self.index)
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("code".into(), self.code.into());
        if let Some(c) = &self.column {
            m.insert("column".into(), c.clone().into());
        }
        if let Some(c) = &self.constraint {
            m.insert("constraint".into(), c.clone().into());
        }
        if let Some(i) = self.index {
            m.insert("index".into(), i.into());
        }
        m.insert("message".into(), self.message.clone().into());
        if let Some(v) = &self.value {
            m.insert("value".into(), v.clone());
        }
        if let Some(d) = &self.description {
            m.insert("description".into(), d.clone().into());
        }
        Value::Object(m)
    }

    /// One line of a refusal.
    pub fn line(&self, path: &str) -> String {
        match (&self.column, &self.constraint) {
            (Some(c), _) => match self.index {
                Some(i) => format!("{path}: {c}[{i}] {}", self.message),
                None => format!("{path}: {c} {}", self.message),
            },
            (None, Some(_)) => match &self.value {
                Some(held) => format!("{path}: {} (the row holds {held})", self.message),
                None => format!("{path}: {}", self.message),
            },
            (None, None) => format!("{path}: {}", self.message),
        }
    }
}

pub fn row_json(path: &str, vs: &[Violation]) -> Value {
    json!({"path": path, "violations": vs.iter().map(Violation::to_json).collect::<Vec<_>>()})
}

/// The schema and the vault, seen as the filter language sees rows.
pub struct Ctx<'a> {
    pub schema: &'a Schema,
    pub vault: &'a Vault,
}

impl<'a> Lookup for Ctx<'a> {
    type Row = &'a str;

    fn get(&self, row: &'a str, path: &[String]) -> Option<Value> {
        let r = self.vault.row(row)?;
        // Picked from the row's JSON, not through its map: a filter or a sort
        // over every row would otherwise build and keep a map for each.
        let v = column(r.id_str().as_deref(), row, |c| r.values.pick(c), path.first()?)?;
        walk(v, &path[1..], |link, rest| self.follow(link, row).and_then(|t| self.get(t, rest)))
    }
}

/// A column of a row, `id` and `path` included (the others: `value`); None
/// when absent or null.
pub fn column(id: Option<&str>, path: &str, value: impl FnOnce(&str) -> Option<Value>, name: &str) -> Option<Value> {
    let v = match name {
        "id" => id.map(|i| Value::String(i.to_string())),
        "path" => Some(Value::String(path.to_string())),
        c => value(c),
    }?;
    (!v.is_null()).then_some(v)
}

/// The rest of a dotted path from a value: a link (or each link of a list) is
/// followed by `deeper`, which reads the rest from the row it names.
pub fn walk(v: Value, rest: &[String], deeper: impl Fn(&str, &[String]) -> Option<Value>) -> Option<Value> {
    if rest.is_empty() {
        return Some(v);
    }
    match v {
        Value::String(s) => deeper(&s, rest),
        Value::Array(items) => {
            let mut out = vec![];
            for x in items.iter().filter_map(Value::as_str).filter_map(|s| deeper(s, rest)) {
                match x {
                    Value::Array(a) => out.extend(a),
                    x => out.push(x),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        _ => None,
    }
}

impl<'a> Ctx<'a> {
    pub fn follow(&self, link: &str, from: &str) -> Option<&'a str> {
        self.vault.resolve(link_target(link), from)
    }

    /// The value a generated column should hold.
    pub fn generated(&self, table: &str, column: &str, row: &'a str) -> Option<Value> {
        let rules = self.schema.rules.get(table)?;
        let (_, tpl) = rules.generated.iter().find(|(c, _)| c == column)?;
        if let Some(p) = tpl.single_path() {
            return self.get(row, p);
        }
        let s = tpl.render(self, row);
        (!s.is_empty()).then_some(Value::String(s))
    }

    /// A conflict copy, or a note git could not merge, with both versions: the
    /// values of each side, and the columns where they differ.
    fn conflict(&self, path: &str, table: &str, text: &str, message: &str) -> Option<Violation> {
        let def = self.schema.tables.get(table)?;
        let values = |t: &str| crate::vault::parse_row(table, def, t).ok().map(|r| r.values);
        let value = if let Some((ours, theirs)) = crate::conflicts::git_sides(text) {
            let (ours, theirs) = (values(&ours).unwrap_or_default(), values(&theirs).unwrap_or_default());
            serde_json::json!({"ours": ours, "theirs": theirs, "differences": crate::row_values::diff(&ours, &theirs)})
        } else {
            let c = crate::conflicts::copy_of(path).filter(|_| crate::conflicts::is_copy_message(message))?;
            let original = self.vault.row(&c.original).map(|r| r.values.clone()).unwrap_or_default();
            let copy = values(text).unwrap_or_default();
            serde_json::json!({"original": c.original, "tool": c.tool, "differences": crate::row_values::diff(&original, &copy)})
        };
        Some(Violation {
            code: "conflict",
            column: None,
            constraint: None,
            index: None,
            message: message.to_string(),
            value: Some(value),
            description: None,
        })
    }

    /// Every rule `path` breaks now.
    pub fn check_row(&self, path: &'a str) -> Vec<Violation> {
        let Some(note) = self.vault.get(path) else {
            return vec![];
        };
        let row = match &note.state {
            State::Row(r) => r,
            State::Unreadable { table, message } => {
                if let Some(v) = self.conflict(path, table, note.text(), message) {
                    return vec![v];
                }
                return vec![Violation {
                    code: "unreadable",
                    column: None,
                    constraint: None,
                    index: None,
                    message: format!(
                        "the front matter cannot be read, so the row is left out of every read: {message}"
                    ),
                    value: None,
                    description: None,
                }];
            }
            State::Plain => return vec![],
        };
        let Some(def) = self.schema.tables.get(&*row.table) else {
            return vec![];
        };
        // Read through a map of its own, dropped after: a check of every row
        // would otherwise build and keep a map for each.
        let parsed;
        let row = match row.values.parsed() {
            Some(values) => {
                parsed = Row { table: row.table.clone(), id: row.id.clone(), values };
                &parsed
            }
            None => row,
        };
        let mut out = vec![];
        for (name, col) in &def.columns {
            self.check_column(row, path, name, col, &mut out);
        }
        self.check_checks(row, path, def, &mut out);
        self.check_ref_by(row, path, &mut out);
        out
    }

    /// The rules of one column of a row: its generated value, required and dense,
    /// its type (each item of a list), unique.
    fn check_column(&self, row: &Row, path: &'a str, name: &str, col: &ColumnDef, out: &mut Vec<Violation>) {
        let value = row.values.get(name).filter(|v| !v.is_null());
        if col.generated.is_some() {
            self.check_generated(row, path, name, value, out);
            return;
        }
        let Some(value) = value else {
            if col.required {
                out.push(Violation::col("required", name, None, format!("is required: set \"{name}\"")));
            } else if col.dense && !row.values.contains_key(name) {
                out.push(Violation::col(
                    "dense",
                    name,
                    None,
                    format!("is dense: every row carries the key \"{name}\", empty or not"),
                ));
            }
            return;
        };
        if col.ty == ColType::List {
            match value {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate().filter(|(_, v)| !v.is_null()) {
                        self.check_value(&row.table, name, col, item, Some(i), path, out);
                    }
                }
                other => out.push(Violation::col("type", name, None, format!("expected a list, got {other}"))),
            }
        } else {
            self.check_value(&row.table, name, col, value, None, path, out);
        }
        if col.unique {
            if let Some(k) = value_key(value) {
                let others = self.vault.unique_others(self.schema, &row.table, name, &k, path);
                if let Some(o) = others.first() {
                    out.push(Violation::col("unique", name, None, format!("{value} is also the value of {o}")));
                }
            }
        }
    }

    /// A generated column holds what its template computes now.
    fn check_generated(&self, row: &Row, path: &'a str, name: &str, value: Option<&Value>, out: &mut Vec<Violation>) {
        let want = self.generated(&row.table, name, path);
        if same_generated(value, want.as_ref()) {
            return;
        }
        let shown = want.as_ref().map(|w| match w {
            Value::String(s) => format!("\"{s}\""),
            other => other.to_string(),
        });
        out.push(Violation {
            value: value.cloned(),
            ..Violation::col(
                "generated",
                name,
                None,
                match shown {
                    Some(s) => format!("should be {s} (computed)"),
                    None => "should be empty (computed)".into(),
                },
            )
        });
    }

    /// The table's CHECK constraints.
    fn check_checks(&self, row: &Row, path: &'a str, def: &TableDef, out: &mut Vec<Violation>) {
        for (cname, f) in &self.schema.rules[&*row.table].checks {
            if !f.eval(self, path) {
                let src = def.checks.iter().find(|(n, _)| n == cname).map(|(_, v)| v.to_string()).unwrap_or_default();
                out.push(Violation {
                    code: "check",
                    column: None,
                    constraint: Some(cname.clone()),
                    index: None,
                    message: format!("violates CHECK {cname}: {src}"),
                    value: Some(self.read_by(f, path)),
                    description: def.check_description(cname).map(str::to_string),
                });
            }
        }
    }

    /// What a row holds where a filter reads it, by path as the filter names
    /// it (null when absent): a CHECK's violation shows why the row fails it.
    fn read_by(&self, f: &crate::filter::Filter, path: &'a str) -> Value {
        let held = f.paths().into_iter().map(|p| {
            let v = self.get(path, &p).unwrap_or(Value::Null);
            (p.join("."), v)
        });
        Value::Object(held.collect())
    }

    /// ref_by: a table's filter on the rows that link to its rows.
    fn check_ref_by(&self, row: &Row, path: &'a str, out: &mut Vec<Violation>) {
        for (col, target_table) in &self.schema.rules[&*row.table].links {
            let Some(f) = self.schema.rules.get(target_table).and_then(|r| r.ref_by.as_ref()) else {
                continue;
            };
            if row.values.get(col).is_some_and(|v| !v.is_null()) && !f.eval(self, path) {
                let src = self.schema.tables[target_table].ref_by.as_ref().map(|v| v.to_string()).unwrap_or_default();
                out.push(Violation::col(
                    "ref_by",
                    col,
                    None,
                    format!("links to {target_table}, whose rows take links only from rows matching {src}"),
                ));
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn check_value(
        &self,
        table: &str,
        name: &str,
        col: &ColumnDef,
        v: &Value,
        index: Option<usize>,
        path: &'a str,
        out: &mut Vec<Violation>,
    ) {
        let ty = col.scalar_type();
        if let Err(m) = type_ok(ty, v) {
            out.push(Violation::col("type", name, index, m));
            return;
        }
        match ty {
            ColType::Enum => {
                let s = scalar_text(v);
                if !col.values.contains(&s) {
                    out.push(Violation::col(
                        "enum",
                        name,
                        index,
                        format!("\"{s}\" is not one of {}", col.values.join(", ")),
                    ));
                }
            }
            ColType::Link => {
                let target_table = self.schema.rules[table]
                    .links
                    .iter()
                    .find(|(c, _)| c == name)
                    .map(|(_, t)| t.as_str())
                    .unwrap_or("");
                let s = v.as_str().unwrap_or_default();
                let target = link_target(s);
                match self.follow(s, path) {
                    Some(p) if self.vault.row(p).is_some_and(|r| *r.table == *target_table) => {
                        if let Some((_, f)) = self.schema.rules[table].ref_where.iter().find(|(c, _)| c == name) {
                            if !f.eval(self, p) {
                                let src = col.ref_where.as_ref().map(|v| v.to_string()).unwrap_or_default();
                                out.push(Violation::col(
                                    "ref_where",
                                    name,
                                    index,
                                    format!("links to [[{target}]], which does not match {src}"),
                                ));
                            }
                        }
                    }
                    Some(p) => out.push(Violation::col(
                        "broken_link",
                        name,
                        index,
                        format!("[[{target}]] is {p}, not a row of {target_table}"),
                    )),
                    None => out.push(Violation::col(
                        "broken_link",
                        name,
                        index,
                        format!("[[{target}]] does not resolve to a row of {target_table}"),
                    )),
                }
            }
            _ => {}
        }
    }
}

fn same_generated(stored: Option<&Value>, want: Option<&Value>) -> bool {
    match (stored, want) {
        (None, None) => true,
        (Some(a), Some(b)) => a == b || scalar_text(a) == scalar_text(b),
        _ => false,
    }
}

/// A scalar as text: strings as they are, others as JSON.
pub fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether a value has a column's type; the error says what was expected.
pub fn type_ok(ty: ColType, v: &Value) -> Result<(), String> {
    let ok = match ty {
        ColType::Text | ColType::Link => v.is_string(),
        ColType::Enum => v.is_string() || v.is_number() || v.is_boolean(),
        ColType::Integer if v.is_number() => return integer_ok(v),
        ColType::Integer => false,
        ColType::Number => v.is_number(),
        ColType::Boolean => v.is_boolean(),
        ColType::Date => v.as_str().is_some_and(is_date),
        ColType::Datetime => v.as_str().is_some_and(is_datetime),
        ColType::List => v.is_array(),
    };
    if ok {
        return Ok(());
    }
    let want = match ty {
        ColType::Text => "text",
        ColType::Link => "a link such as \"[[Name]]\"",
        ColType::Enum => "one of the enum's values",
        ColType::Integer => "an integer",
        ColType::Number => "a number",
        ColType::Boolean => "true or false",
        ColType::Date => "a date YYYY-MM-DD",
        ColType::Datetime => "a date-time YYYY-MM-DDTHH:MM[:SS]",
        ColType::List => "a list",
    };
    let shown = v.to_string();
    let shown = if shown.len() > 80 {
        format!("{}…", &shown[..shown.char_indices().nth(77).map(|(i, _)| i).unwrap_or(77)])
    } else {
        shown
    };
    Err(format!("expected {want}, got {shown}"))
}

/// The integers a column holds, those of the engine's i64.
const INTEGERS: &str = "-9223372036854775808 to 9223372036854775807";

/// An integer column holds integers as the note writes them. YAML reads `1e2`,
/// `100.0` and `-0.0` as floats, which the column would hand out as floats, so
/// the note must say `100` (a write says it: whole numbers sent as floats are
/// written as integers, `as_integer`). Past 64 bits, on either side, a number
/// is out of range: serde reads a positive one as u64, a negative one as f64.
fn integer_ok(v: &Value) -> Result<(), String> {
    const PAST_I64: f64 = 9_223_372_036_854_775_808.0;
    let out_of_range = || Err(format!("{v} is out of range for an integer ({INTEGERS})"));
    match v.as_f64() {
        _ if v.is_i64() => Ok(()),
        _ if v.is_u64() => out_of_range(),
        Some(f) if f.fract() == 0.0 && f.abs() >= PAST_I64 => out_of_range(),
        Some(f) if f.fract() == 0.0 => {
            Err(format!("expected an integer, got {v}: write it as a whole number ({})", f as i64))
        }
        _ => Err(format!("expected an integer, got {v}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn dates_and_times() {
        assert!(is_date("2026-10-03"));
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2026-02-29"));
        assert!(!is_date("2026-13-01"));
        assert!(!is_date("26-10-03"));
        assert!(is_datetime("2026-10-03T21:30"));
        assert!(is_datetime("2026-10-03 21:30:15.5Z"));
        assert!(is_datetime("2026-10-03T21:30:00+02:00"));
        assert!(!is_datetime("2026-10-03T25:30"));
        assert!(!is_datetime("2026-10-03"));
        assert!(!is_datetime("2026-10-03T21:3é"));
    }

    #[test]
    fn types_say_what_they_want() {
        assert!(type_ok(ColType::Integer, &json!(1927)).is_ok());
        assert!(type_ok(ColType::Integer, &json!(i64::MIN)).is_ok());
        assert!(type_ok(ColType::Integer, &json!(i64::MAX)).is_ok());
        let e = type_ok(ColType::Integer, &json!(1927.0)).unwrap_err();
        assert_eq!(e, "expected an integer, got 1927.0: write it as a whole number (1927)");
        assert_eq!(
            type_ok(ColType::Integer, &json!(-0.0)).unwrap_err(),
            "expected an integer, got -0.0: write it as a whole number (0)"
        );
        assert_eq!(type_ok(ColType::Integer, &json!(1.5)).unwrap_err(), "expected an integer, got 1.5");
        for past in
            [json!(i64::MAX as u64 + 1), json!(u64::MAX), json!(-9.3e18), json!(1e300), json!(-9223372036854775808.0)]
        {
            let e = type_ok(ColType::Integer, &past).unwrap_err();
            assert!(e.ends_with("is out of range for an integer (-9223372036854775808 to 9223372036854775807)"), "{e}");
        }
        let e = type_ok(ColType::Integer, &json!("1927")).unwrap_err();
        assert_eq!(e, "expected an integer, got \"1927\"");
        assert!(type_ok(ColType::Text, &json!("x".repeat(500))).is_ok());
        assert!(type_ok(ColType::Boolean, &json!("x".repeat(500))).unwrap_err().len() < 150);
    }
}
