//! The schema: `datanotes/metastore.yaml`, read, checked, written back.

use crate::filter::Filter;
use crate::names;
use crate::template::Template;
use crate::views::ViewDef;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

pub const METASTORE: &str = "datanotes/metastore.yaml";
pub const ROOT: &str = "datanotes/";
pub const ARCHIVE: &str = "datanotes/_archive/";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColType {
    Text,
    Integer,
    Number,
    Boolean,
    Date,
    Datetime,
    Link,
    List,
    Enum,
}

impl ColType {
    pub const NAMES: [&'static str; 9] =
        ["text", "integer", "number", "boolean", "date", "datetime", "link", "list", "enum"];

    pub fn parse(s: &str) -> Option<ColType> {
        Some(match s {
            "text" => ColType::Text,
            "integer" => ColType::Integer,
            "number" => ColType::Number,
            "boolean" => ColType::Boolean,
            "date" => ColType::Date,
            "datetime" => ColType::Datetime,
            "link" => ColType::Link,
            "list" => ColType::List,
            "enum" => ColType::Enum,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub ty: ColType,
    /// The type of a list's items.
    pub items: Option<ColType>,
    /// The table a link (or a list of links) points to, as written.
    pub table: Option<String>,
    /// The values of an enum (or a list of enums).
    pub values: Vec<String>,
    pub required: bool,
    pub dense: bool,
    pub unique: bool,
    pub default: Option<Value>,
    pub description: Option<String>,
    pub generated: Option<String>,
    pub inverse: Option<String>,
    pub ref_where: Option<Value>,
}

impl ColumnDef {
    /// The type of one value: the items' type for a list.
    pub fn scalar_type(&self) -> ColType {
        match self.ty {
            ColType::List => self.items.unwrap_or(ColType::Text),
            t => t,
        }
    }

    pub fn is_link(&self) -> bool {
        self.scalar_type() == ColType::Link
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    pub description: Option<String>,
    pub name_from: Option<String>,
    pub history: bool,
    /// A vault folder outside `datanotes/` that holds the rows.
    pub folder: Option<String>,
    pub columns: Vec<(String, ColumnDef)>,
    pub checks: Vec<(String, Value)>,
    /// What some checks mean, in a person's words, by check name (in the
    /// checks' order): shown in place of the rule where one is given.
    pub check_descriptions: Vec<(String, String)>,
    pub ref_by: Option<Value>,
}

impl TableDef {
    pub fn column(&self, name: &str) -> Option<&ColumnDef> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    pub fn column_names(&self) -> impl Iterator<Item = &str> {
        self.columns.iter().map(|(n, _)| n.as_str())
    }
}

/// A table's rules, compiled once when the schema is read.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    pub checks: Vec<(String, Filter)>,
    pub generated: Vec<(String, Template)>,
    pub name_from: Option<Template>,
    pub ref_where: Vec<(String, Filter)>,
    pub ref_by: Option<Filter>,
    /// Link columns and the qualified table each points to.
    pub links: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default)]
pub struct Schema {
    pub tables: BTreeMap<String, TableDef>,
    pub rules: BTreeMap<String, Rules>,
    /// Saved queries over the tables, by qualified name.
    pub views: BTreeMap<String, ViewDef>,
    /// The tables' names as their rows share them (`shared_name`), in order;
    /// made by `compile`.
    names: Vec<Arc<str>>,
}

pub const COLUMN_KEYS: [&str; 13] = [
    "type",
    "items",
    "table",
    "values",
    "required",
    "dense",
    "unique",
    "default",
    "description",
    "generated",
    "inverse",
    "ref_where",
    "max_length",
];
pub const TABLE_KEYS: [&str; 8] =
    ["description", "name_from", "history", "folder", "columns", "checks", "check_descriptions", "ref_by"];

/// The longest description a check may have, in characters: a sentence a
/// person reads in place of the rule, not a document.
pub const MAX_CHECK_DESCRIPTION: usize = 200;

/// A check's description as given: one line of plain text, at most
/// MAX_CHECK_DESCRIPTION characters; trimmed. `what` names it in the refusal.
pub fn check_description(v: &Value, what: &str) -> Result<String, String> {
    let Some(s) = v.as_str() else {
        return Err(format!("{what} must be text such as \"Ratings run from 1 to 5\", not {v}"));
    };
    let s = s.trim();
    let n = s.chars().count();
    if n == 0 {
        return Err(format!("{what} is empty: give a sentence, or leave it out"));
    }
    if n > MAX_CHECK_DESCRIPTION {
        return Err(format!("{what} is {n} characters long; keep it to {MAX_CHECK_DESCRIPTION} or fewer"));
    }
    if s.chars().any(char::is_control) {
        return Err(format!("{what} must be one line of plain text (no line breaks or control characters)"));
    }
    Ok(s.to_string())
}

/// Identifier rules for catalog, schema, table and column names.
pub fn valid_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && s.len() <= 64
}

pub fn valid_column_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        && s.len() <= 64
        && s != "table"
        && s != "id"
        && !s.contains('.')
}

fn as_bool(v: &Value, what: &str) -> Result<bool, String> {
    v.as_bool().ok_or_else(|| format!("{what} must be true or false, not {v}"))
}

fn as_string(v: &Value, what: &str) -> Result<String, String> {
    v.as_str().map(str::to_string).ok_or_else(|| format!("{what} must be a string, not {v}"))
}

fn as_folder(v: &Value, what: &str) -> Result<String, String> {
    let f = as_string(v, "folder")?;
    match names::folder_problem(&f) {
        Some(why) => Err(format!("{what}: {why}; name a folder relative to the vault root, such as Books")),
        None => Ok(f),
    }
}

/// A table's `check_descriptions`: `{check name: text}`, each naming one of
/// its `checks`; in the checks' order.
fn check_descriptions(
    v: Option<&Value>,
    checks: &[(String, Value)],
    what: &str,
) -> Result<Vec<(String, String)>, String> {
    let given = match v {
        None | Some(Value::Null) => return Ok(vec![]),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(format!("{what}: check_descriptions must be a mapping of check names to text, not {other}"))
        }
    };
    let mut out = vec![];
    for (name, d) in given {
        if !checks.iter().any(|(c, _)| c == name) {
            return Err(format!(
                "{what}: check_descriptions names \"{name}\", which is not one of its checks{}",
                names::did_you_mean(name, checks.iter().map(|(c, _)| c.as_str()))
            ));
        }
        out.push((name.clone(), check_description(d, &format!("{what}: the description of check {name}"))?));
    }
    out.sort_by_key(|(n, _)| checks.iter().position(|(c, _)| c == n));
    Ok(out)
}

/// A column's type, and for a list the type of its items (text when not given).
fn column_types(obj: &Map<String, Value>, what: &str) -> Result<(ColType, Option<ColType>), String> {
    let ty_name = obj
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{what} needs a type: one of {}", ColType::NAMES.join(", ")))?;
    let ty = ColType::parse(ty_name).ok_or_else(|| {
        format!(
            "{what}: unknown type \"{ty_name}\"{}; the types are {}",
            names::did_you_mean(ty_name, ColType::NAMES),
            ColType::NAMES.join(", ")
        )
    })?;
    let items = match obj.get("items") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(ColType::parse(s).filter(|t| *t != ColType::List).ok_or_else(|| {
            format!("{what}: unknown item type \"{s}\"; the item types are text, integer, number, boolean, date, datetime, link, enum")
        })?),
        Some(other) => return Err(format!("{what}: items must be a type name such as link, not {other}")),
    };
    if items.is_some() && ty != ColType::List {
        return Err(format!("{what}: items goes with type list only"));
    }
    Ok((ty, if ty == ColType::List { Some(items.unwrap_or(ColType::Text)) } else { None }))
}

/// An enum's values as text (numbers and booleans as written).
fn enum_values(obj: &Map<String, Value>, what: &str) -> Result<Vec<String>, String> {
    match obj.get("values") {
        None | Some(Value::Null) => Ok(vec![]),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| match x {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                Value::Bool(b) => Ok(b.to_string()),
                other => Err(format!("{what}: enum values must be strings, not {other}")),
            })
            .collect(),
        Some(other) => Err(format!("{what}: values must be a list, not {other}")),
    }
}

impl ColumnDef {
    /// Reads a column definition as metastore.yaml (and add_column) write it.
    pub fn from_json(v: &Value, what: &str) -> Result<ColumnDef, String> {
        let obj = v.as_object().ok_or_else(|| format!("{what} must be a mapping such as {{type: text}}, not {v}"))?;
        for k in obj.keys() {
            if !COLUMN_KEYS.contains(&k.as_str()) {
                return Err(format!(
                    "{what}: unknown option \"{k}\"{}; the options are {}",
                    names::did_you_mean(k, COLUMN_KEYS),
                    COLUMN_KEYS.join(", ")
                ));
            }
        }
        let (ty, items) = column_types(obj, what)?;
        let string = |key: &str| -> Result<Option<String>, String> {
            obj.get(key).filter(|v| !v.is_null()).map(|v| as_string(v, &format!("{what}: {key}"))).transpose()
        };
        let flag = |key: &str| -> Result<bool, String> {
            Ok(obj.get(key).map(|v| as_bool(v, &format!("{what}: {key}"))).transpose()?.unwrap_or(false))
        };
        let mut col = ColumnDef {
            ty,
            items,
            table: string("table")?,
            values: enum_values(obj, what)?,
            required: flag("required")?,
            dense: flag("dense")?,
            unique: flag("unique")?,
            default: obj.get("default").filter(|v| !v.is_null()).cloned(),
            description: string("description")?,
            generated: string("generated")?,
            inverse: string("inverse")?,
            ref_where: obj.get("ref_where").filter(|v| !v.is_null()).cloned(),
        };
        if col.scalar_type() == ColType::Integer {
            // Written into every new row: `default: 1.0` is written `1`, as a
            // write writes it, or each row would break its column.
            col.default = col.default.map(|d| match d {
                Value::Array(items) => Value::Array(items.iter().map(crate::row_values::as_integer).collect()),
                d => crate::row_values::as_integer(&d),
            });
        }
        col.check(what)?;
        Ok(col)
    }

    /// The options that go together: a link's table, an enum's values, a
    /// generated column without required or default.
    fn check(&self, what: &str) -> Result<(), String> {
        let st = self.scalar_type();
        if st == ColType::Link && self.table.is_none() {
            return Err(format!("{what}: a link needs the table it points to (table: film)"));
        }
        if st != ColType::Link && (self.table.is_some() || self.inverse.is_some() || self.ref_where.is_some()) {
            return Err(format!("{what}: table, inverse and ref_where go with links only"));
        }
        if st == ColType::Enum && self.values.is_empty() {
            return Err(format!("{what}: an enum needs its values (values: [a, b])"));
        }
        if st != ColType::Enum && !self.values.is_empty() {
            return Err(format!("{what}: values go with enums only"));
        }
        if self.generated.is_some() && (self.required || self.default.is_some()) {
            return Err(format!("{what}: a generated column takes neither required nor default"));
        }
        Ok(())
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), self.ty.name().into());
        if let Some(i) = self.items {
            m.insert("items".into(), i.name().into());
        }
        if let Some(t) = &self.table {
            m.insert("table".into(), t.clone().into());
        }
        if !self.values.is_empty() {
            m.insert("values".into(), self.values.clone().into());
        }
        for (k, b) in [("required", self.required), ("dense", self.dense), ("unique", self.unique)] {
            if b {
                m.insert(k.into(), true.into());
            }
        }
        if let Some(d) = &self.default {
            m.insert("default".into(), d.clone());
        }
        if let Some(d) = &self.description {
            m.insert("description".into(), d.clone().into());
        }
        if let Some(g) = &self.generated {
            m.insert("generated".into(), g.clone().into());
        }
        if let Some(i) = &self.inverse {
            m.insert("inverse".into(), i.clone().into());
        }
        if let Some(r) = &self.ref_where {
            m.insert("ref_where".into(), r.clone());
        }
        Value::Object(m)
    }
}

impl TableDef {
    pub fn from_json(v: &Value, what: &str) -> Result<TableDef, String> {
        let obj = v.as_object().ok_or_else(|| format!("{what} must be a mapping with columns, not {v}"))?;
        for k in obj.keys() {
            if !TABLE_KEYS.contains(&k.as_str()) {
                return Err(format!(
                    "{what}: unknown key \"{k}\"{}; a table has {}",
                    names::did_you_mean(k, TABLE_KEYS),
                    TABLE_KEYS.join(", ")
                ));
            }
        }
        let mut columns = vec![];
        match obj.get("columns") {
            None | Some(Value::Null) => {}
            Some(Value::Object(cols)) => {
                for (name, def) in cols {
                    if !valid_column_name(name) {
                        return Err(format!("{what}: \"{name}\" is not a valid column name (letters, digits, _ and -, not table or id, no dots)"));
                    }
                    columns.push((name.clone(), ColumnDef::from_json(def, &format!("column {name}"))?));
                }
            }
            Some(other) => {
                return Err(format!("{what}: columns must be a mapping of column names to definitions, not {other}"))
            }
        }
        let checks = match obj.get("checks") {
            None | Some(Value::Null) => vec![],
            Some(Value::Object(c)) => c.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Some(other) => return Err(format!("{what}: checks must be a mapping of names to filters, not {other}")),
        };
        let check_descriptions = check_descriptions(obj.get("check_descriptions"), &checks, what)?;
        Ok(TableDef {
            description: obj
                .get("description")
                .filter(|v| !v.is_null())
                .map(|v| as_string(v, "description"))
                .transpose()?,
            name_from: obj.get("name_from").filter(|v| !v.is_null()).map(|v| as_string(v, "name_from")).transpose()?,
            history: obj
                .get("history")
                .filter(|v| !v.is_null())
                .map(|v| as_bool(v, "history"))
                .transpose()?
                .unwrap_or(true),
            folder: obj.get("folder").filter(|v| !v.is_null()).map(|v| as_folder(v, what)).transpose()?,
            columns,
            checks,
            check_descriptions,
            ref_by: obj.get("ref_by").filter(|v| !v.is_null()).cloned(),
        })
    }

    /// The description of check `name`, if it has one.
    pub fn check_description(&self, name: &str) -> Option<&str> {
        self.check_descriptions.iter().find(|(n, _)| n == name).map(|(_, d)| d.as_str())
    }

    /// Gives check `name` a description (None: takes its description away),
    /// kept in the checks' order.
    pub fn describe_check(&mut self, name: &str, description: Option<String>) {
        self.check_descriptions.retain(|(n, _)| n != name);
        if let Some(d) = description {
            self.check_descriptions.push((name.to_string(), d));
        }
        let at = |n: &str| self.checks.iter().position(|(c, _)| c == n).unwrap_or(usize::MAX);
        let mut sorted = std::mem::take(&mut self.check_descriptions);
        sorted.sort_by_key(|(n, _)| at(n));
        self.check_descriptions = sorted;
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        if let Some(d) = &self.description {
            m.insert("description".into(), d.clone().into());
        }
        if let Some(n) = &self.name_from {
            m.insert("name_from".into(), n.clone().into());
        }
        m.insert("history".into(), self.history.into());
        if let Some(f) = &self.folder {
            m.insert("folder".into(), f.clone().into());
        }
        let cols: Map<String, Value> = self.columns.iter().map(|(n, c)| (n.clone(), c.to_json())).collect();
        m.insert("columns".into(), Value::Object(cols));
        if !self.checks.is_empty() {
            m.insert("checks".into(), Value::Object(self.checks.iter().cloned().collect()));
        }
        if !self.check_descriptions.is_empty() {
            let d = self.check_descriptions.iter().map(|(n, d)| (n.clone(), Value::String(d.clone())));
            m.insert("check_descriptions".into(), Value::Object(d.collect()));
        }
        if let Some(r) = &self.ref_by {
            m.insert("ref_by".into(), r.clone());
        }
        Value::Object(m)
    }
}

impl Schema {
    /// Reads metastore.yaml. An empty or missing file is an empty schema.
    pub fn parse(text: &str) -> Result<Schema, String> {
        if text.trim().is_empty() {
            return Ok(Schema::default());
        }
        let v = crate::yaml::parse(text).map_err(|e| format!("{METASTORE} cannot be read: {e}"))?;
        let obj = v.as_object().ok_or_else(|| format!("{METASTORE} must be a mapping with version and tables"))?;
        if let Some(ver) = obj.get("version") {
            if ver.as_u64() != Some(1) {
                return Err(format!("{METASTORE}: version {ver} is not supported (this engine reads version 1)"));
            }
        }
        let mut tables = BTreeMap::new();
        match obj.get("tables") {
            None | Some(Value::Null) => {}
            Some(Value::Object(t)) => {
                for (name, def) in t {
                    if !valid_qualified(name) {
                        return Err(format!("{METASTORE}: \"{name}\" is not a qualified table name (catalog.schema.table, lower case letters, digits and _)"));
                    }
                    tables.insert(name.clone(), TableDef::from_json(def, &format!("table {name}"))?);
                }
            }
            Some(_) => return Err(format!("{METASTORE}: tables must be a mapping of qualified names to tables")),
        }
        let mut views = BTreeMap::new();
        match obj.get("views") {
            None | Some(Value::Null) => {}
            Some(Value::Object(v)) => {
                for (name, def) in v {
                    if !valid_qualified(name) {
                        return Err(format!("{METASTORE}: \"{name}\" is not a qualified view name (catalog.schema.view, lower case letters, digits and _)"));
                    }
                    views.insert(name.clone(), ViewDef::from_json(def, &format!("view {name}"))?);
                }
            }
            Some(_) => return Err(format!("{METASTORE}: views must be a mapping of qualified names to views")),
        }
        let mut s = Schema { tables, rules: BTreeMap::new(), views, names: vec![] };
        s.compile()?;
        Ok(s)
    }

    /// Compiles every table's rules and checks that the references hold.
    pub fn compile(&mut self) -> Result<(), String> {
        self.names = self.tables.keys().map(|k| Arc::from(k.as_str())).collect();
        let mut all = BTreeMap::new();
        for (name, t) in &self.tables {
            all.insert(name.clone(), self.compile_table(name, t)?);
        }
        self.rules = all;
        for (name, v) in &self.views {
            if self.tables.contains_key(name) {
                return Err(format!("view {name}: a table has that name"));
            }
            crate::views::check(self, name, v)?;
        }
        Ok(())
    }

    fn compile_table(&self, name: &str, t: &TableDef) -> Result<Rules, String> {
        let mut r = Rules::default();
        for (col, def) in &t.columns {
            if let Some(target) = &def.table {
                let q = self.resolve(target).map_err(|e| format!("table {name}, column {col}: {e}"))?;
                if let Some(inv) = &def.inverse {
                    let tt = &self.tables[&q];
                    match tt.column(inv) {
                        Some(c) if c.is_link() => {}
                        _ => {
                            return Err(format!(
                                "table {name}, column {col}: inverse \"{inv}\" must be a link column of {q}"
                            ))
                        }
                    }
                }
                r.links.push((col.clone(), q));
            }
            if let Some(g) = &def.generated {
                let tpl = Template::parse(g).map_err(|e| format!("table {name}, column {col}: generated: {e}"))?;
                self.check_paths(name, t, &tpl.paths(), &format!("column {col}: generated"))?;
                r.generated.push((col.clone(), tpl));
            }
            if let Some(w) = &def.ref_where {
                let f = Filter::parse(w).map_err(|e| format!("table {name}, column {col}: ref_where: {e}"))?;
                r.ref_where.push((col.clone(), f));
            }
        }
        for (cname, c) in &t.checks {
            let f = Filter::parse(c).map_err(|e| format!("table {name}, check {cname}: {e}"))?;
            self.check_paths(name, t, &f.paths(), &format!("check {cname}"))?;
            r.checks.push((cname.clone(), f));
        }
        if let Some(n) = &t.name_from {
            let src = if n.contains('{') { n.clone() } else { format!("{{{n}}}") };
            let tpl = Template::parse(&src).map_err(|e| format!("table {name}: name_from: {e}"))?;
            self.check_paths(name, t, &tpl.paths(), "name_from")?;
            r.name_from = Some(tpl);
        }
        if let Some(rb) = &t.ref_by {
            r.ref_by = Some(Filter::parse(rb).map_err(|e| format!("table {name}: ref_by: {e}"))?);
        }
        Ok(r)
    }

    /// Checks that each dotted path starts with a column and follows links only.
    pub fn check_paths(&self, table: &str, t: &TableDef, paths: &[Vec<String>], what: &str) -> Result<(), String> {
        for p in paths {
            let mut cur = t;
            let mut cur_name = table.to_string();
            for (i, seg) in p.iter().enumerate() {
                if seg == "id" || seg == "path" || seg == "table" {
                    break;
                }
                let Some(col) = cur.column(seg) else {
                    return Err(format!(
                        "table {table}, {what}: \"{}\" names no column of {cur_name}{}",
                        p.join("."),
                        names::did_you_mean(seg, cur.column_names())
                    ));
                };
                if i + 1 < p.len() {
                    let Some(target) = &col.table else {
                        return Err(format!(
                            "table {table}, {what}: \"{}\" follows {seg}, which is not a link",
                            p.join(".")
                        ));
                    };
                    cur_name = self.resolve(target)?;
                    cur = &self.tables[&cur_name];
                }
            }
        }
        Ok(())
    }

    /// The tables whose definitions differ in `other` (added and dropped ones included).
    pub fn changed_tables(&self, other: &Schema) -> BTreeSet<String> {
        self.tables
            .keys()
            .chain(other.tables.keys())
            .filter(|t| self.tables.get(*t) != other.tables.get(*t))
            .cloned()
            .collect()
    }

    /// The qualified name of a table named short (`film`), partly (`public.film`)
    /// or in full.
    pub fn resolve(&self, name: &str) -> Result<String, String> {
        if self.tables.contains_key(name) {
            return Ok(name.to_string());
        }
        let suffix = format!(".{name}");
        let found: Vec<&String> = self.tables.keys().filter(|k| k.ends_with(&suffix)).collect();
        match found.len() {
            1 => Ok(found[0].clone()),
            0 => Err(format!(
                "no table \"{name}\"{}; the tables are {}",
                names::did_you_mean(name, self.tables.keys().map(|k| short(k))),
                if self.tables.is_empty() {
                    "none yet (create_table makes one)".to_string()
                } else {
                    self.tables.keys().cloned().collect::<Vec<_>>().join(", ")
                }
            )),
            _ => Err(format!(
                "\"{name}\" is ambiguous: {}; name it in full",
                found.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            )),
        }
    }

    /// The qualified name of a view named short or in full; None when no view
    /// (or more than one) has that name.
    pub fn resolve_view(&self, name: &str) -> Option<String> {
        if self.views.contains_key(name) {
            return Some(name.to_string());
        }
        let suffix = format!(".{name}");
        let mut found = self.views.keys().filter(|k| k.ends_with(&suffix));
        match (found.next(), found.next()) {
            (Some(one), None) => Some(one.clone()),
            _ => None,
        }
    }

    /// The folder (with a trailing slash) that holds a table's rows.
    pub fn folder(&self, qualified: &str) -> String {
        folder_of(qualified, self.tables.get(qualified))
    }

    /// `table`'s name as its rows hold it: one string for them all (of
    /// their own, table names took about 56 bytes of every row natively).
    pub fn shared_name(&self, table: &str) -> Arc<str> {
        match self.names.binary_search_by(|n| (**n).cmp(table)) {
            Ok(i) => self.names[i].clone(),
            Err(_) => Arc::from(table),
        }
    }

    /// The table whose folder holds `path`, if any.
    pub fn table_of_path(&self, path: &str) -> Option<&str> {
        if !path.ends_with(".md") {
            return None;
        }
        let mut best: Option<(&str, usize)> = None;
        for name in self.tables.keys() {
            let Some(len) = self.folder_holding(name, path) else { continue };
            if best.is_none_or(|(_, l)| len > l) {
                best = Some((name, len));
            }
        }
        best.map(|(n, _)| n)
    }

    /// The length of table `name`'s folder (`folder`) when it holds `path`.
    /// Compared in place: this runs for every note at every open.
    fn folder_holding(&self, name: &str, path: &str) -> Option<usize> {
        let (rest, at) = match self.tables.get(name).and_then(|t| t.folder.as_deref()) {
            Some(f) => {
                let f = f.trim_end_matches('/');
                (path.strip_prefix(f)?, f.len())
            }
            None => {
                let rest = path.strip_prefix(ROOT)?;
                let (head, tail) = (rest.as_bytes().get(..name.len())?, name.as_bytes());
                let same = head.iter().zip(tail).all(|(p, q)| if *q == b'.' { *p == b'/' } else { p == q });
                (same.then(|| &rest[name.len()..])?, ROOT.len() + name.len())
            }
        };
        rest.starts_with('/').then_some(at + 1)
    }

    /// The schema file's text: readable YAML, one flow mapping per column.
    pub fn to_yaml(&self) -> String {
        let mut out = String::new();
        crate::metastore_text::render(&crate::metastore_text::schema_tree(self), 0, "\n", &mut out);
        out
    }
}

pub fn short(q: &str) -> &str {
    q.rsplit('.').next().unwrap_or(q)
}

pub fn valid_qualified(name: &str) -> bool {
    let parts: Vec<&str> = name.split('.').collect();
    parts.len() == 3 && parts.iter().all(|p| valid_ident(p))
}

/// The folder (with a trailing slash) that holds the rows of table
/// `qualified` defined as `def`: its `folder`, else its place under datanotes/.
pub fn folder_of(qualified: &str, def: Option<&TableDef>) -> String {
    match def.and_then(|t| t.folder.as_ref()) {
        Some(f) => format!("{}/", f.trim_end_matches('/')),
        None => table_folder(qualified),
    }
}

pub fn table_folder(qualified: &str) -> String {
    format!("{ROOT}{}/", qualified.replace('.', "/"))
}

pub(crate) fn flow_key(k: &str) -> String {
    if !k.is_empty() && k.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.' || c == '-') {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

/// A JSON value as YAML flow style, quoting every string that plain style would
/// misread.
pub fn flow(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let plain_ok = !s.is_empty()
                && s.chars().next().is_some_and(|c| c.is_alphabetic())
                && s.chars().all(|c| c.is_alphanumeric() || " _-./()'".contains(c))
                && !s.ends_with(' ')
                && !matches!(
                    s.to_lowercase().as_str(),
                    "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
                );
            if plain_ok {
                s.clone()
            } else {
                Value::String(s.clone()).to_string()
            }
        }
        Value::Array(a) => format!("[{}]", a.iter().map(flow).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter().map(|(k, v)| format!("{}: {}", flow_key(k), flow(v))).collect::<Vec<_>>().join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    const FILMS: &str = r#"version: 1
tables:
  main.public.genre:
    description: Genres, eras and cinemas
    name_from: name
    columns:
      name:   {type: text, required: true, unique: true}
      kind:   {type: enum, values: [cinema, era, genre], required: true}
      parent: {type: link, table: genre}
    checks:
      parent_by_level: {or: [{kind: cinema, parent: {exists: false}},
                             {kind: era, parent.kind: cinema},
                             {kind: genre, parent.kind: era}]}
  main.public.watch:
    name_from: "{occurred_at|%Y-%m-%dT%H%M}"
    columns:
      film:        {type: link, table: film, required: true}
      occurred_at: {type: datetime, required: true}
      where:       {type: enum, values: [home, cinema]}
      day:         {type: date, generated: "{occurred_at|date}"}
  main.public.film:
    columns:
      title: {type: text, required: true}
      genres: {type: list, items: link, table: genre}
"#;

    #[test]
    fn reads_the_design_example_and_writes_it_back() {
        let s = Schema::parse(FILMS).unwrap();
        assert_eq!(s.tables.len(), 3);
        let g = &s.tables["main.public.genre"];
        assert!(g.history);
        assert_eq!(g.column("kind").unwrap().values, vec!["cinema", "era", "genre"]);
        assert_eq!(s.rules["main.public.genre"].checks.len(), 1);
        assert_eq!(s.rules["main.public.watch"].links, vec![("film".to_string(), "main.public.film".to_string())]);
        let again = Schema::parse(&s.to_yaml()).unwrap();
        assert_eq!(again.tables, s.tables);
    }

    #[test]
    fn resolves_short_names_and_suggests() {
        let s = Schema::parse(FILMS).unwrap();
        assert_eq!(s.resolve("film").unwrap(), "main.public.film");
        assert_eq!(s.resolve("public.genre").unwrap(), "main.public.genre");
        let e = s.resolve("flim").unwrap_err();
        assert!(e.contains("did you mean \"film\""), "{e}");
        assert_eq!(s.table_of_path("datanotes/main/public/film/Charade.md"), Some("main.public.film"));
        assert_eq!(s.table_of_path("Notes/x.md"), None);
    }

    #[test]
    fn a_path_belongs_to_the_table_whose_folder_holds_it_the_longest_first() {
        let yaml = "version: 1\ntables:\n  main.public.film:\n    columns: {title: {type: text}}\n  main.public.short:\n    folder: Films/Short\n    columns: {title: {type: text}}\n  main.x.cafe:\n    folder: Films/\n  main.x.cinema:\n    folder: Cinéma/\n    columns: {title: {type: text}}\n";
        let s = Schema::parse(yaml).unwrap();
        // As the folders read: each table's `folder`, the longest that holds the path.
        let by_folders = |p: &str| {
            let held = s.tables.keys().filter(|t| p.ends_with(".md") && p.starts_with(&s.folder(t)));
            held.max_by_key(|t| s.folder(t).len()).map(String::as_str)
        };
        for p in [
            "datanotes/main/public/film/Charade.md",
            "Films/Short/Un chien.md",
            "Films/Shorter/x.md",
            "Films/x.md",
            "datanotes/main.public.film/x.md",
            "datanotes/main/public/filmx/x.md",
            "datanotes/main/public/film/x.txt",
            "datanotes/main/x/cafe/x.md",
            "datanotes/mainé/public/film/x.md",
            "Cinéma/x.md",
            "Cinémas/x.md",
            "datanotes/",
            "",
        ] {
            assert_eq!(s.table_of_path(p), by_folders(p), "{p}");
        }
        assert_eq!(s.table_of_path("Films/Short/a.md"), Some("main.public.short"));
        assert_eq!(s.table_of_path("Films/a.md"), Some("main.x.cafe"));
    }

    #[test]
    fn an_integer_column_s_whole_default_is_an_integer() {
        let yaml = "version: 1\ntables:\n  main.public.film:\n    columns:\n      year: {type: integer, default: 1.9e3}\n      ids: {type: list, items: integer, default: [1.0, -0.0, 2.5]}\n      ratio: {type: number, default: 1.0}\n";
        let s = Schema::parse(yaml).unwrap();
        let col = |c: &str| s.tables["main.public.film"].column(c).unwrap().default.clone().unwrap();
        assert_eq!(col("year"), serde_json::json!(1900));
        assert!(col("year").is_i64());
        assert_eq!(col("ids").to_string(), "[1,0,2.5]");
        assert_eq!(col("ratio").to_string(), "1.0", "a number column keeps its float");
    }

    #[test]
    fn a_check_s_description_is_read_kept_in_the_checks_order_and_written_back() {
        let yaml = "version: 1\ntables:\n  main.public.film:\n    columns: {rating: {type: integer}, year: {type: integer}}\n    checks:\n      rating_range: {rating: {lte: 5}}\n      recent: {year: {gte: 1895}}\n    check_descriptions:\n      recent: \"Films: from 1895 on\"\n      rating_range: Ratings run from 1 to 5\n";
        let s = Schema::parse(yaml).unwrap();
        let t = &s.tables["main.public.film"];
        assert_eq!(t.check_description("rating_range"), Some("Ratings run from 1 to 5"));
        assert_eq!(t.check_description("recent"), Some("Films: from 1895 on"));
        assert_eq!(t.check_descriptions[0].0, "rating_range", "in the checks' order");
        let text = s.to_yaml();
        assert!(text.contains("    check_descriptions:\n      rating_range: Ratings run from 1 to 5\n      recent: \"Films: from 1895 on\"\n"), "{text}");
        assert_eq!(Schema::parse(&text).unwrap().tables, s.tables);
        // A table without any writes none.
        assert!(!Schema::parse(FILMS).unwrap().to_yaml().contains("check_descriptions"));
    }

    #[test]
    fn a_check_s_description_must_name_a_check_and_be_one_short_line_of_text() {
        let with = |d: &str| {
            format!("version: 1\ntables:\n  main.public.film:\n    columns: {{year: {{type: integer}}}}\n    checks: {{recent: {{year: {{gte: 1895}}}}}}\n    check_descriptions: {d}\n")
        };
        let long = format!("{{recent: {}}}", "a".repeat(201));
        let bad = [
            ("{recnt: From 1895}", "names \"recnt\", which is not one of its checks (did you mean \"recent\"?)"),
            ("{recent: 1895}", "the description of check recent must be text such as"),
            ("{recent: [a, b]}", "must be text"),
            ("[recent]", "check_descriptions must be a mapping of check names to text"),
            ("{recent: \"two\\nlines\"}", "must be one line of plain text"),
            ("{recent: \"\"}", "is empty"),
            (long.as_str(), "is 201 characters long; keep it to 200 or fewer"),
        ];
        for (d, want) in bad {
            let e = Schema::parse(&with(d)).unwrap_err();
            assert!(e.contains(want), "{d}: {e}");
        }
        let ok = Schema::parse(&with(&format!("{{recent: {}}}", "a".repeat(200)))).unwrap();
        assert_eq!(ok.tables["main.public.film"].check_description("recent").map(str::len), Some(200));
    }

    #[test]
    fn refuses_bad_definitions_with_reasons() {
        let bad = [
            ("x: {type: txt}", "did you mean \"text\""),
            ("x: {type: link}", "needs the table"),
            ("x: {type: enum}", "needs its values"),
            ("x: {type: text, requird: true}", "did you mean \"required\""),
            ("x: {type: link, table: nowhere}", "no table \"nowhere\""),
        ];
        for (col, want) in bad {
            let text = format!("version: 1\ntables:\n  main.public.t:\n    columns:\n      {col}\n");
            let e = Schema::parse(&text).unwrap_err();
            assert!(e.contains(want), "{col}: {e}");
        }
        let e = Schema::parse(
            "version: 1\ntables:\n  main.public.t:\n    columns: {a: {type: text}}\n    checks: {c: {b: 1}}\n",
        )
        .unwrap_err();
        assert!(e.contains("names no column"), "{e}");
        assert!(Schema::parse("tables: [").is_err());
    }
}
