//! The filter language: one evaluator for `select_rows` `where`, CHECK constraints, `ref_where`
//! and change-feed filters.
//!
//! # JSON form
//!
//! * `{"col": value}`: equality.
//! * `{"col": {"gt" | "gte" | "lt" | "lte" | "eq" | "ne" | "in" | "contains" | "starts_with" | "exists": arg}}`:
//!   several operators in one object are AND-ed.
//! * `{"and": [f, ..]}`, `{"or": [f, ..]}` (non-empty arrays), `{"not": f}`.
//! * Several keys in one object are AND-ed. `and`, `or` and `not` are reserved words, never column names.
//! * Columns are named by dotted paths: `parent.kind` is the `kind` column of the row that `parent` links to.
//! * The empty object `{}` matches every row.
//!
//! # Semantics (two-valued: every comparison is true or false, never unknown)
//!
//! A value that is absent, null or unresolvable counts as *absent*.
//!
//! * **Equality** (`{"col": v}`, `eq`): numbers compare numerically (`1 == 1.0`). When either side is a
//!   link-looking string (`"[[...]]"`), the link targets compare case-insensitively, so
//!   `"[[Cinema]]" == "Cinema" == "[[cinema|The cinema]]"`. Otherwise JSON equality (strings are
//!   case-sensitive, no coercion between strings and numbers). When the stored value is an array (a list
//!   column, or the values found through a list of links), the comparison is true when any item is equal.
//!   A `null` argument is true exactly when the value is absent. An array argument means "the list equals
//!   exactly": same length, same order, items equal pairwise (a stored scalar counts as a one-item list).
//! * **ne**: the negation of equality, so an absent value is `ne` anything but `null`.
//! * **gt / gte / lt / lte**: the argument must be a number or a string. Numbers compare numerically,
//!   strings lexicographically, except that when both sides read as dates or datetimes they compare as
//!   such: a date against a datetime compares the date parts only (so `"2026-10-03T21:30"` is `gte` and
//!   `lte` `"2026-10-03"`, i.e. day granularity); two datetimes that both carry a zone (`Z` / `±HH:MM`)
//!   compare as instants; otherwise the wall-clock times compare (a `T` or a space may separate date and
//!   time; missing seconds are zero). An absent value, or a value of another type, is false. On an array
//!   value: true when any item compares true.
//! * **in**: the argument is an array; true when the value equals (as above) any item; for a list value,
//!   when any of its items is in the argument. `null` in the argument matches an absent value.
//! * **contains**: a string value and a string argument: substring, case-sensitive. An array value: any item
//!   equals the argument (with the equality above, so links match by target).
//! * **starts_with**: string prefix, case-sensitive; on an array value, any item.
//! * For `contains` and `starts_with`, a link-looking value is matched through its target
//!   (`"[[Charade|c]]"` starts with `"Cha"`) unless the argument itself starts with `[[`.
//! * **exists**: `true` when the value is present and not null (an empty list is present);
//!   `{"exists": false}` is the opposite.
//! * **and / or / not**: as usual; `and` of nothing is true.

use crate::template::DateTime;
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// What the evaluator needs from the engine.
pub trait Lookup {
    type Row: Copy;
    /// The value at a dotted path from `row`: path[0] is a column of the row; each further segment is a
    /// column of the row(s) the previous link column points to. None when absent/null/unresolvable.
    /// (When the path goes through a list of links the engine returns an Array of the values found.)
    fn get(&self, row: Self::Row, path: &[String]) -> Option<Value>;
}

/// A compiled filter.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    And(Vec<Filter>),
    Or(Vec<Filter>),
    Not(Box<Filter>),
    Cmp { path: Vec<String>, op: Op, arg: Value },
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    Contains,
    StartsWith,
    Exists,
}

/// The operator names, as listed in error messages.
pub const OPERATORS: &str = "eq, ne, gt, gte, lt, lte, in, contains, starts_with, exists";

impl Op {
    pub const ALL: [Op; 10] =
        [Op::Eq, Op::Ne, Op::Gt, Op::Gte, Op::Lt, Op::Lte, Op::In, Op::Contains, Op::StartsWith, Op::Exists];

    /// The name used in the JSON form.
    pub fn name(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Ne => "ne",
            Op::Gt => "gt",
            Op::Gte => "gte",
            Op::Lt => "lt",
            Op::Lte => "lte",
            Op::In => "in",
            Op::Contains => "contains",
            Op::StartsWith => "starts_with",
            Op::Exists => "exists",
        }
    }

    /// The operator of a JSON name (exact, lower case).
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|op| op.name() == name)
    }
}

/// A hint for a few common ways of misspelling an operator.
fn operator_hint(name: &str) -> Option<&'static str> {
    let bare = name.trim().trim_start_matches('$').to_ascii_lowercase();
    if let Some(op) = Op::from_name(&bare) {
        return Some(op.name());
    }
    Some(match bare.as_str() {
        "=" | "==" | "equals" | "equal" | "is" => "eq",
        "!=" | "<>" | "neq" | "not_equal" | "isnt" | "is_not" => "ne",
        ">" | "greater" | "greater_than" | "after" => "gt",
        ">=" | "greater_or_equal" | "ge" => "gte",
        "<" | "less" | "less_than" | "before" => "lt",
        "<=" | "less_or_equal" | "le" => "lte",
        "startswith" | "startswith_" | "prefix" | "begins_with" => "starts_with",
        "has" | "includes" | "include" | "like" => "contains",
        "one_of" | "any_of" | "nin" => "in",
        "exist" | "present" | "has_value" => "exists",
        "not" => "{\"not\": {..}} around the whole comparison",
        _ => return None,
    })
}

impl Filter {
    /// Compiles the JSON form. The error is a message for a person or an agent: it quotes the part of the
    /// filter that is wrong and says what is expected.
    pub fn parse(json: &Value) -> Result<Filter, String> {
        let obj = match json {
            Value::Object(o) => o,
            other => {
                return Err(format!(
                    "a filter must be a JSON object such as {{\"kind\": \"film\"}}, got {}",
                    show(other)
                ))
            }
        };
        let mut parts = Vec::new();
        for (key, val) in obj {
            // Paths are read trimmed, so `"or "` is the operator too, not a column "or".
            let key = key.trim();
            match key {
                "and" | "or" => {
                    let items = match val {
                        Value::Array(a) if !a.is_empty() => a,
                        _ => {
                            return Err(format!(
                                "\"{key}\" needs a non-empty array of filters, e.g. {{\"{key}\": [{{\"kind\": \"era\"}}, {{\"kind\": \"genre\"}}]}}; got {}",
                                show(&fragment(key, val))
                            ))
                        }
                    };
                    let subs = items.iter().map(Filter::parse).collect::<Result<Vec<_>, _>>()?;
                    parts.push(if key == "and" { Filter::And(subs) } else { Filter::Or(subs) });
                }
                "not" => {
                    if !val.is_object() {
                        return Err(format!(
                            "\"not\" needs one filter object, e.g. {{\"not\": {{\"kind\": \"era\"}}}}; got {}",
                            show(&fragment(key, val))
                        ));
                    }
                    parts.push(Filter::Not(Box::new(Filter::parse(val)?)));
                }
                _ => {
                    let path = parse_path(key)?;
                    parse_column(key, path, val, &mut parts)?;
                }
            }
        }
        Ok(if parts.len() == 1 { parts.pop().unwrap() } else { Filter::And(parts) })
    }

    /// The JSON form of this filter (parses back to an equal filter, up to the grouping of ANDs).
    pub fn to_json(&self) -> Value {
        match self {
            // `{}` matches every row: an empty AND, which has no `and` form.
            Filter::And(fs) if fs.is_empty() => Value::Object(Map::new()),
            Filter::And(fs) => {
                Value::Object(single("and".into(), Value::Array(fs.iter().map(Filter::to_json).collect())))
            }
            Filter::Or(fs) => {
                Value::Object(single("or".into(), Value::Array(fs.iter().map(Filter::to_json).collect())))
            }
            Filter::Not(f) => Value::Object(single("not".into(), f.to_json())),
            Filter::Cmp { path, op, arg } => {
                let key = path.join(".");
                if *op == Op::Eq && !arg.is_object() {
                    Value::Object(single(key, arg.clone()))
                } else {
                    Value::Object(single(key, Value::Object(single(op.name().into(), arg.clone()))))
                }
            }
        }
    }

    /// Every dotted path the filter reads (so the engine can check the columns exist), each once,
    /// in the order they first appear.
    pub fn paths(&self) -> Vec<Vec<String>> {
        fn walk(f: &Filter, out: &mut Vec<Vec<String>>) {
            match f {
                Filter::And(fs) | Filter::Or(fs) => fs.iter().for_each(|f| walk(f, out)),
                Filter::Not(f) => walk(f, out),
                Filter::Cmp { path, .. } => {
                    if !out.contains(path) {
                        out.push(path.clone());
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(self, &mut out);
        out
    }

    /// Whether `row` matches.
    pub fn eval<L: Lookup>(&self, lookup: &L, row: L::Row) -> bool {
        match self {
            Filter::And(fs) => fs.iter().all(|f| f.eval(lookup, row)),
            Filter::Or(fs) => fs.iter().any(|f| f.eval(lookup, row)),
            Filter::Not(f) => !f.eval(lookup, row),
            Filter::Cmp { path, op, arg } => {
                let value = lookup.get(row, path).filter(|v| !v.is_null());
                compare(value.as_ref(), *op, arg)
            }
        }
    }
}

/// Applies one operator to a looked-up value (None = absent).
pub fn compare(value: Option<&Value>, op: Op, arg: &Value) -> bool {
    match op {
        Op::Exists => value.is_some() == arg.as_bool().unwrap_or(true),
        Op::Eq => eq_value(value, arg),
        Op::Ne => !eq_value(value, arg),
        Op::In => match arg {
            Value::Array(items) => items.iter().any(|a| eq_value(value, a)),
            other => eq_value(value, other),
        },
        Op::Gt | Op::Gte | Op::Lt | Op::Lte => match value {
            None => false,
            Some(v) => any_item(v, &|item| match order(item, arg) {
                Some(o) => match op {
                    Op::Gt => o == Ordering::Greater,
                    Op::Gte => o != Ordering::Less,
                    Op::Lt => o == Ordering::Less,
                    _ => o != Ordering::Greater,
                },
                None => false,
            }),
        },
        Op::Contains => match value {
            Some(Value::String(s)) => match arg {
                Value::String(a) => match_text(s, a).contains(a.as_str()),
                _ => false,
            },
            Some(Value::Array(items)) => items.iter().any(|item| eq_value(Some(item), arg)),
            _ => false,
        },
        Op::StartsWith => match (value, arg) {
            (Some(v), Value::String(a)) => any_item(v, &|item| match item {
                Value::String(s) => match_text(s, a).starts_with(a.as_str()),
                _ => false,
            }),
            _ => false,
        },
    }
}

/// True when `pred` holds for the value or, for an array, for any item (nested arrays included).
fn any_item(v: &Value, pred: &dyn Fn(&Value) -> bool) -> bool {
    match v {
        Value::Array(items) => items.iter().any(|i| any_item(i, pred)),
        other => pred(other),
    }
}

/// The text a `contains` / `starts_with` argument is matched against.
fn match_text<'a>(value: &'a str, arg: &str) -> &'a str {
    if is_link(value) && !arg.trim_start().starts_with("[[") {
        link_target(value)
    } else {
        value
    }
}

/// Equality of a looked-up value (None = absent) with an argument.
fn eq_value(value: Option<&Value>, arg: &Value) -> bool {
    match (value, arg) {
        (None, Value::Null) => true,
        (Some(Value::Null), Value::Null) => true,
        (_, Value::Null) | (None, _) => false,
        (Some(Value::Array(items)), Value::Array(want)) => {
            items.len() == want.len() && items.iter().zip(want).all(|(a, b)| eq_exact(a, b))
        }
        (Some(v), Value::Array(want)) => want.len() == 1 && eq_exact(v, &want[0]),
        (Some(v), a) => any_item(v, &|item| scalar_eq(item, a)),
    }
}

/// Item-by-item equality inside an exact list comparison.
fn eq_exact(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| eq_exact(a, b)),
        _ => scalar_eq(a, b),
    }
}

/// Equality of two single values: numbers numerically, links by target case-insensitively, else JSON.
pub fn scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => order(a, b) == Some(Ordering::Equal),
        (Value::String(x), Value::String(y)) => {
            if is_link(x) || is_link(y) {
                let (tx, ty) = (link_target(x), link_target(y));
                tx == ty || tx.to_lowercase() == ty.to_lowercase()
            } else {
                x == y
            }
        }
        _ => a == b,
    }
}

/// The order of two single values: numbers numerically; strings as dates/datetimes when both read as
/// such (see the module documentation), else lexicographically; None for any other pair.
pub fn order(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                Some(x.cmp(&y))
            } else if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                Some(x.cmp(&y))
            } else {
                x.as_f64()?.partial_cmp(&y.as_f64()?)
            }
        }
        (Value::String(x), Value::String(y)) => match (DateTime::parse(x), DateTime::parse(y)) {
            (Some(dx), Some(dy)) => Some(dx.compare(&dy)),
            _ => Some(x.cmp(y)),
        },
        _ => None,
    }
}

/// True for a link-looking string: `[[...]]` (surrounding spaces allowed).
pub fn is_link(s: &str) -> bool {
    let t = s.trim();
    t.len() >= 4 && t.starts_with("[[") && t.ends_with("]]")
}

/// A link's target: "[[Charade|alias]]" -> "Charade", "[[Notes/Film night#Part]]" -> "Notes/Film night",
/// "Charade" -> "Charade" (a string that is not a link is its own target, trimmed).
pub fn link_target(s: &str) -> &str {
    let t = s.trim();
    let inner = match t.strip_prefix("[[").and_then(|r| r.strip_suffix("]]")) {
        Some(i) => i,
        None => return t,
    };
    let inner = inner.split('|').next().unwrap_or(inner);
    let inner = inner.split('#').next().unwrap_or(inner);
    inner.trim()
}

/// Splits a dotted column path; every segment must be non-empty.
pub fn parse_path(key: &str) -> Result<Vec<String>, String> {
    if key.trim().is_empty() {
        return Err("empty column name in a filter: name a column, or a dotted path such as parent.kind".to_string());
    }
    let segs: Vec<String> = key.split('.').map(|s| s.trim().to_string()).collect();
    if segs.iter().any(|s| s.is_empty()) {
        return Err(format!(
            "bad column path \"{key}\": it has an empty segment (paths look like parent.kind, with no leading, trailing or doubled dots)"
        ));
    }
    Ok(segs)
}

fn parse_column(key: &str, path: Vec<String>, val: &Value, out: &mut Vec<Filter>) -> Result<(), String> {
    let ops = match val {
        Value::Object(ops) => ops,
        other => {
            out.push(Filter::Cmp { path, op: Op::Eq, arg: other.clone() });
            return Ok(());
        }
    };
    let whole = || show(&fragment(key, val));
    if ops.is_empty() {
        return Err(format!("no operator in {}: use one of {OPERATORS}", whole()));
    }
    for (name, arg) in ops {
        let op = match Op::from_name(name) {
            Some(op) => op,
            None => {
                let mut msg = format!("unknown operator \"{name}\" in {}: use one of {OPERATORS}", whole());
                if let Some(h) = operator_hint(name) {
                    msg.push_str(&format!(" (for \"{name}\" write {h})"));
                }
                return Err(msg);
            }
        };
        let bad = |need: &str| format!("\"{name}\" needs {need}, got {} in {}", show(arg), whole());
        match op {
            Op::Eq | Op::Ne => {}
            Op::Gt | Op::Gte | Op::Lt | Op::Lte => {
                if !(arg.is_number() || arg.is_string()) {
                    return Err(bad("a number or a string (dates as \"2026-10-03\")"));
                }
            }
            Op::In => {
                if !arg.is_array() {
                    return Err(bad(&format!(
                        "an array of values, e.g. {{\"{key}\": {{\"in\": [\"era\", \"genre\"]}}}}"
                    )));
                }
            }
            Op::Contains => {
                if !(arg.is_string() || arg.is_number() || arg.is_boolean()) {
                    return Err(bad("a string, a number or a boolean"));
                }
            }
            Op::StartsWith => {
                if !arg.is_string() {
                    return Err(bad("a string"));
                }
            }
            Op::Exists => {
                if !arg.is_boolean() {
                    return Err(bad("true or false"));
                }
            }
        }
        out.push(Filter::Cmp { path: path.clone(), op, arg: arg.clone() });
    }
    Ok(())
}

fn single(key: String, val: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(key, val);
    m
}

fn fragment(key: &str, val: &Value) -> Value {
    Value::Object(single(key.to_string(), val.clone()))
}

/// JSON for a message: `{"year": {"greater": 1920}}`, with a space after `:` and `,`; long text is cut.
pub fn show(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Object(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push_str(": ");
                    write(v, out);
                }
                out.push('}');
            }
            Value::Array(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write(v, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    const MAX: usize = 300;
    if out.chars().count() > MAX {
        let cut: String = out.chars().take(MAX).collect();
        format!("{cut}…")
    } else {
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// Rows by name; string values (and list items) that name a row are links to it.
    /// (The template tests use it too.)
    pub(crate) struct World {
        rows: Vec<(String, Map<String, Value>)>,
    }

    impl World {
        pub(crate) fn new(rows: Value) -> World {
            let rows = match rows {
                Value::Object(m) => m
                    .into_iter()
                    .map(|(k, v)| match v {
                        Value::Object(cols) => (k, cols),
                        _ => panic!("row must be an object"),
                    })
                    .collect(),
                _ => panic!("rows must be an object"),
            };
            World { rows }
        }

        pub(crate) fn id(&self, name: &str) -> usize {
            self.rows.iter().position(|(n, _)| n == name).unwrap()
        }

        fn find(&self, target: &str) -> Option<usize> {
            let t = target.to_lowercase();
            self.rows.iter().position(|(n, _)| n.to_lowercase() == t)
        }

        fn follow(&self, v: &Value, rest: &[String]) -> Option<Value> {
            if rest.is_empty() {
                return if v.is_null() { None } else { Some(v.clone()) };
            }
            match v {
                Value::String(s) => {
                    let r = self.find(link_target(s))?;
                    let next = self.rows[r].1.get(&rest[0])?;
                    self.follow(next, &rest[1..])
                }
                Value::Array(items) => {
                    let found: Vec<Value> = items.iter().filter_map(|i| self.follow(i, rest)).collect();
                    if found.is_empty() {
                        None
                    } else {
                        Some(Value::Array(found))
                    }
                }
                _ => None,
            }
        }
    }

    impl Lookup for World {
        type Row = usize;
        fn get(&self, row: usize, path: &[String]) -> Option<Value> {
            let first = self.rows[row].1.get(path.first()?)?;
            self.follow(first, &path[1..])
        }
    }

    fn world() -> World {
        World::new(json!({
            "Cinema": {"kind": "cinema", "title": "Cinema"},
            "Silent era": {"kind": "era", "parent": "[[Cinema]]", "start": 1895},
            "Screwball": {"kind": "genre", "parent": "[[Silent era|the silent era]]"},
            "Bad genre": {"kind": "genre", "parent": "[[cinema]]"},
            "Cinema 2": {"kind": "cinema", "parent": "[[Silent era]]"},
            "Charade": {
                "kind": "film", "title": "Charade", "year": 1963, "rating": 4.5,
                "seen": true, "released": "1963-12-05",
                "watched_at": "2026-10-03T21:30",
                "tags": ["thriller", "comedy", "[[Paris]]"],
                "cast": ["[[Cary Grant]]", "[[Audrey Hepburn|Audrey]]"],
                "genre": "[[Screwball]]",
                "note": null,
                "empty": []
            },
            "Cary Grant": {"kind": "person", "born": 1904, "name": "Cary Grant"},
            "Audrey Hepburn": {"kind": "person", "born": 1929, "name": "Audrey Hepburn"},
            "Paris": {"kind": "city"}
        }))
    }

    fn check(w: &World, row: &str, filter: Value) -> bool {
        let f = Filter::parse(&filter).unwrap_or_else(|e| panic!("{e}"));
        f.eval(w, w.id(row))
    }

    fn err(filter: Value) -> String {
        Filter::parse(&filter).unwrap_err()
    }

    #[test]
    fn equality_basic_and_numeric() {
        let w = world();
        assert!(check(&w, "Charade", json!({"kind": "film"})));
        assert!(!check(&w, "Charade", json!({"kind": "Film"})));
        assert!(check(&w, "Charade", json!({"year": 1963})));
        assert!(check(&w, "Charade", json!({"year": 1963.0})));
        assert!(check(&w, "Charade", json!({"rating": 4.5})));
        assert!(!check(&w, "Charade", json!({"year": "1963"})));
        assert!(check(&w, "Charade", json!({"seen": true})));
        assert!(check(&w, "Charade", json!({"year": {"eq": 1963}})));
        assert!(!check(&w, "Charade", json!({"missing": "x"})));
    }

    #[test]
    fn equality_null_means_absent() {
        let w = world();
        assert!(check(&w, "Charade", json!({"missing": null})));
        assert!(check(&w, "Charade", json!({"note": null})));
        assert!(!check(&w, "Charade", json!({"kind": null})));
        assert!(check(&w, "Charade", json!({"kind": {"ne": null}})));
        assert!(!check(&w, "Charade", json!({"note": {"ne": null}})));
    }

    #[test]
    fn link_equality_forms() {
        let w = world();
        // stored "[[Screwball]]"
        assert!(check(&w, "Charade", json!({"genre": "Screwball"})));
        assert!(check(&w, "Charade", json!({"genre": "screwball"})));
        assert!(check(&w, "Charade", json!({"genre": "[[Screwball]]"})));
        assert!(check(&w, "Charade", json!({"genre": "[[screwball|S]]"})));
        assert!(check(&w, "Charade", json!({"genre": "[[Screwball#Intro]]"})));
        assert!(!check(&w, "Charade", json!({"genre": "Screw"})));
        // stored with alias
        assert!(check(&w, "Screwball", json!({"parent": "Silent era"})));
        assert!(check(&w, "Screwball", json!({"parent": "[[SILENT ERA]]"})));
        // plain strings stay case-sensitive
        assert!(scalar_eq(&json!("[[Cinema]]"), &json!("Cinema")));
        assert!(scalar_eq(&json!("Cinema"), &json!("[[cinema|The cinema]]")));
        assert!(!scalar_eq(&json!("Cinema"), &json!("cinema")));
    }

    #[test]
    fn link_target_forms() {
        assert_eq!(link_target("[[Charade|alias]]"), "Charade");
        assert_eq!(link_target("[[Notes/Film night#Part]]"), "Notes/Film night");
        assert_eq!(link_target("[[Notes/Film night#Part|x]]"), "Notes/Film night");
        assert_eq!(link_target("Charade"), "Charade");
        assert_eq!(link_target(" [[ Charade ]] "), "Charade");
        assert!(is_link("[[a]]"));
        assert!(!is_link("[[]"));
        assert!(!is_link("Charade"));
    }

    #[test]
    fn ne_operator() {
        let w = world();
        assert!(check(&w, "Charade", json!({"kind": {"ne": "era"}})));
        assert!(!check(&w, "Charade", json!({"kind": {"ne": "film"}})));
        assert!(check(&w, "Charade", json!({"missing": {"ne": "x"}})));
        assert!(!check(&w, "Charade", json!({"genre": {"ne": "screwball"}})));
        assert!(check(&w, "Charade", json!({"tags": {"ne": "horror"}})));
        assert!(!check(&w, "Charade", json!({"tags": {"ne": "comedy"}})));
    }

    #[test]
    fn ordering_operators() {
        let w = world();
        let c = "Charade";
        assert!(check(&w, c, json!({"year": {"gt": 1920}})));
        assert!(!check(&w, c, json!({"year": {"gt": 1963}})));
        assert!(check(&w, c, json!({"year": {"gte": 1963}})));
        assert!(check(&w, c, json!({"year": {"lt": 1963.5}})));
        assert!(!check(&w, c, json!({"year": {"lt": 1963}})));
        assert!(check(&w, c, json!({"year": {"lte": 1963}})));
        assert!(check(&w, c, json!({"year": {"gt": 1960, "lt": 1970}})));
        assert!(!check(&w, c, json!({"year": {"gt": 1960, "lt": 1962}})));
        // strings
        assert!(check(&w, c, json!({"title": {"gt": "Casablanca"}})));
        assert!(check(&w, c, json!({"title": {"lt": "Dr"}})));
        // absent and mixed types are false either way
        assert!(!check(&w, c, json!({"missing": {"gt": 1}})));
        assert!(!check(&w, c, json!({"missing": {"lte": 1}})));
        assert!(!check(&w, c, json!({"year": {"gt": "1900"}})));
        assert!(!check(&w, c, json!({"year": {"lt": "1900"}})));
        assert!(!check(&w, c, json!({"seen": {"gt": 0}})));
    }

    #[test]
    fn ordering_dates_and_datetimes() {
        let w = world();
        let c = "Charade";
        assert!(check(&w, c, json!({"released": {"gt": "1963-01-01"}})));
        assert!(check(&w, c, json!({"released": {"lt": "1964-01-01"}})));
        // date vs datetime: date parts only
        assert!(check(&w, c, json!({"watched_at": {"gte": "2026-10-03"}})));
        assert!(check(&w, c, json!({"watched_at": {"lte": "2026-10-03"}})));
        assert!(!check(&w, c, json!({"watched_at": {"gt": "2026-10-03"}})));
        assert!(check(&w, c, json!({"watched_at": {"lt": "2026-10-04"}})));
        assert!(check(&w, c, json!({"released": {"lt": "1963-12-06T00:00"}})));
        // datetimes: seconds and separators
        assert!(check(&w, c, json!({"watched_at": {"gte": "2026-10-03T21:30:00"}})));
        assert!(check(&w, c, json!({"watched_at": {"lte": "2026-10-03 21:30"}})));
        assert!(check(&w, c, json!({"watched_at": {"gt": "2026-10-03T21:29:59.5"}})));
        assert!(check(&w, c, json!({"watched_at": {"lt": "2026-10-03T21:30:01"}})));
        // zones: both zoned compare as instants
        let a = json!("2026-10-03T21:30+02:00");
        let b = json!("2026-10-03T20:00Z");
        assert_eq!(order(&a, &b), Some(Ordering::Less));
        assert_eq!(order(&json!("2026-10-03T23:30+02:00"), &json!("2026-10-03T21:30Z")), Some(Ordering::Equal));
    }

    #[test]
    fn ordering_on_lists_is_any_item() {
        let w = World::new(json!({
            "A": {"scores": [1, 5, 9]},
        }));
        assert!(check(&w, "A", json!({"scores": {"gt": 8}})));
        assert!(!check(&w, "A", json!({"scores": {"gt": 9}})));
        assert!(check(&w, "A", json!({"scores": {"lt": 2}})));
        assert!(!check(&w, "A", json!({"scores": {"lt": 1}})));
    }

    #[test]
    fn in_operator() {
        let w = world();
        let c = "Charade";
        assert!(check(&w, c, json!({"kind": {"in": ["era", "film"]}})));
        assert!(!check(&w, c, json!({"kind": {"in": ["era", "genre"]}})));
        assert!(!check(&w, c, json!({"kind": {"in": []}})));
        assert!(check(&w, c, json!({"year": {"in": [1962, 1963.0]}})));
        assert!(check(&w, c, json!({"genre": {"in": ["Noir", "screwball"]}})));
        // list value: any item in
        assert!(check(&w, c, json!({"tags": {"in": ["horror", "comedy"]}})));
        assert!(check(&w, c, json!({"tags": {"in": ["paris"]}})));
        assert!(!check(&w, c, json!({"tags": {"in": ["horror"]}})));
        // null matches absent
        assert!(check(&w, c, json!({"missing": {"in": ["x", null]}})));
        assert!(!check(&w, c, json!({"missing": {"in": ["x"]}})));
    }

    #[test]
    fn contains_operator() {
        let w = world();
        let c = "Charade";
        assert!(check(&w, c, json!({"title": {"contains": "ara"}})));
        assert!(!check(&w, c, json!({"title": {"contains": "ARA"}})));
        assert!(check(&w, c, json!({"tags": {"contains": "comedy"}})));
        assert!(!check(&w, c, json!({"tags": {"contains": "com"}})));
        assert!(check(&w, c, json!({"tags": {"contains": "Paris"}})));
        assert!(check(&w, c, json!({"cast": {"contains": "[[audrey hepburn]]"}})));
        assert!(check(&w, c, json!({"genre": {"contains": "ball"}})));
        assert!(!check(&w, c, json!({"genre": {"contains": "]]"}})));
        assert!(check(&w, c, json!({"genre": {"contains": "[[Screw"}})));
        assert!(!check(&w, c, json!({"year": {"contains": "19"}})));
        assert!(!check(&w, c, json!({"missing": {"contains": "x"}})));
    }

    #[test]
    fn starts_with_operator() {
        let w = world();
        let c = "Charade";
        assert!(check(&w, c, json!({"title": {"starts_with": "Char"}})));
        assert!(!check(&w, c, json!({"title": {"starts_with": "char"}})));
        assert!(!check(&w, c, json!({"title": {"starts_with": "ade"}})));
        assert!(check(&w, c, json!({"genre": {"starts_with": "Screw"}})));
        assert!(check(&w, c, json!({"genre": {"starts_with": "[[Screw"}})));
        assert!(check(&w, c, json!({"tags": {"starts_with": "thr"}})));
        assert!(check(&w, c, json!({"watched_at": {"starts_with": "2026-10"}})));
        assert!(!check(&w, c, json!({"year": {"starts_with": "19"}})));
        assert!(!check(&w, c, json!({"missing": {"starts_with": ""}})));
    }

    #[test]
    fn exists_operator() {
        let w = world();
        let c = "Charade";
        assert!(check(&w, c, json!({"title": {"exists": true}})));
        assert!(!check(&w, c, json!({"title": {"exists": false}})));
        assert!(check(&w, c, json!({"missing": {"exists": false}})));
        assert!(check(&w, c, json!({"note": {"exists": false}})));
        assert!(check(&w, c, json!({"empty": {"exists": true}})));
        assert!(check(&w, c, json!({"genre.parent.nope": {"exists": false}})));
    }

    #[test]
    fn and_or_not_and_implicit_and() {
        let w = world();
        let c = "Charade";
        assert!(check(&w, c, json!({"and": [{"kind": "film"}, {"year": 1963}]})));
        assert!(!check(&w, c, json!({"and": [{"kind": "film"}, {"year": 1964}]})));
        assert!(check(&w, c, json!({"or": [{"kind": "era"}, {"year": 1963}]})));
        assert!(!check(&w, c, json!({"or": [{"kind": "era"}, {"year": 1964}]})));
        assert!(check(&w, c, json!({"not": {"kind": "era"}})));
        assert!(!check(&w, c, json!({"not": {"kind": "film"}})));
        assert!(check(&w, c, json!({"kind": "film", "year": 1963})));
        assert!(!check(&w, c, json!({"kind": "film", "year": 1962})));
        assert!(check(&w, c, json!({"kind": "film", "not": {"seen": false}})));
        assert!(check(&w, c, json!({})));
        assert_eq!(Filter::parse(&json!({})).unwrap(), Filter::And(vec![]));
    }

    #[test]
    fn dotted_paths_through_links() {
        let w = world();
        let c = "Charade";
        assert!(check(&w, c, json!({"genre.kind": "genre"})));
        assert!(check(&w, c, json!({"genre.parent.kind": "era"})));
        assert!(check(&w, c, json!({"genre.parent.parent.kind": "cinema"})));
        assert!(check(&w, c, json!({"genre.parent.start": {"lt": 1900}})));
        assert!(!check(&w, c, json!({"title.kind": "x"})));
        // through a list of links: any value found
        assert!(check(&w, c, json!({"cast.born": 1929})));
        assert!(check(&w, c, json!({"cast.born": {"lt": 1910}})));
        assert!(!check(&w, c, json!({"cast.born": {"lt": 1900}})));
        assert!(check(&w, c, json!({"cast.name": {"starts_with": "Aud"}})));
        assert!(check(&w, c, json!({"cast.born": [1904, 1929]})));
        assert!(check(&w, c, json!({"tags.kind": "city"})));
    }

    #[test]
    fn list_columns() {
        let w = world();
        let c = "Charade";
        assert!(check(&w, c, json!({"tags": "thriller"})));
        assert!(check(&w, c, json!({"tags": "[[paris]]"})));
        assert!(!check(&w, c, json!({"tags": "horror"})));
        // an array argument means the list equals exactly
        assert!(check(&w, c, json!({"tags": ["thriller", "comedy", "Paris"]})));
        assert!(!check(&w, c, json!({"tags": ["thriller", "comedy"]})));
        assert!(!check(&w, c, json!({"tags": ["comedy", "thriller", "Paris"]})));
        assert!(check(&w, c, json!({"empty": []})));
        assert!(!check(&w, c, json!({"empty": "x"})));
        // a scalar counts as a one-item list
        assert!(check(&w, c, json!({"kind": ["film"]})));
    }

    #[test]
    fn parent_by_level_check() {
        let w = World::new(json!({
            "Cinema": {"kind": "cinema"},
            "Cinema with parent": {"kind": "cinema", "parent": "[[Cinema]]"},
            "Silent": {"kind": "era", "parent": "[[Cinema]]"},
            "Screwball": {"kind": "genre", "parent": "[[Silent|silent era]]"},
            "Orphan genre": {"kind": "genre", "parent": "[[cinema]]"},
            "Era under era": {"kind": "era", "parent": "Silent"},
        }));
        let check_json = json!({"or": [
            {"kind": "cinema", "parent": {"exists": false}},
            {"kind": "era", "parent.kind": "cinema"},
            {"kind": "genre", "parent.kind": "era"}
        ]});
        let f = Filter::parse(&check_json).unwrap();
        assert!(f.eval(&w, w.id("Cinema")));
        assert!(!f.eval(&w, w.id("Cinema with parent")));
        assert!(f.eval(&w, w.id("Silent")));
        assert!(f.eval(&w, w.id("Screwball")));
        assert!(!f.eval(&w, w.id("Orphan genre")));
        assert!(!f.eval(&w, w.id("Era under era")));
        assert_eq!(
            f.paths(),
            vec![vec!["kind".to_string()], vec!["parent".to_string()], vec!["parent".to_string(), "kind".to_string()],]
        );
    }

    #[test]
    fn parse_shapes() {
        let f = Filter::parse(&json!({"year": {"gt": 1920, "lte": 1970}, "kind": "film"})).unwrap();
        assert_eq!(
            f,
            Filter::And(vec![
                Filter::Cmp { path: vec!["year".into()], op: Op::Gt, arg: json!(1920) },
                Filter::Cmp { path: vec!["year".into()], op: Op::Lte, arg: json!(1970) },
                Filter::Cmp { path: vec!["kind".into()], op: Op::Eq, arg: json!("film") },
            ])
        );
        let g = Filter::parse(&json!({"film.title": "Charade"})).unwrap();
        assert_eq!(g, Filter::Cmp { path: vec!["film".into(), "title".into()], op: Op::Eq, arg: json!("Charade") });
        // round trip through to_json
        let src = json!({"or": [{"kind": "cinema", "parent": {"exists": false}}, {"not": {"tags": {"in": ["a"]}}}]});
        let f = Filter::parse(&src).unwrap();
        assert_eq!(Filter::parse(&f.to_json()).unwrap(), f);
        for op in Op::ALL {
            assert_eq!(Op::from_name(op.name()), Some(op));
        }
    }

    #[test]
    fn error_messages() {
        assert_eq!(
            err(json!({"year": {"greater": 1920}})),
            "unknown operator \"greater\" in {\"year\": {\"greater\": 1920}}: use one of eq, ne, gt, gte, lt, lte, in, contains, starts_with, exists (for \"greater\" write gt)"
        );
        let e = err(json!({"year": {"between": [1, 2]}}));
        assert!(e.starts_with("unknown operator \"between\""), "{e}");
        assert!(e.ends_with(OPERATORS), "{e}");
        assert!(err(json!({"year": {"$gte": 1}})).contains("write gte"));
        assert!(err(json!({"and": []})).contains("\"and\" needs a non-empty array"));
        assert!(err(json!({"or": {"kind": "x"}})).contains("\"or\" needs a non-empty array"));
        assert!(err(json!({"not": [{"kind": "x"}]})).contains("\"not\" needs one filter object"));
        assert!(err(json!({"kind": {"in": "era"}})).contains("\"in\" needs an array"));
        assert!(err(json!({"parent": {"exists": "no"}})).contains("\"exists\" needs true or false"));
        assert!(err(json!({"year": {"gt": [1]}})).contains("\"gt\" needs a number or a string"));
        assert!(err(json!({"title": {"starts_with": 1}})).contains("\"starts_with\" needs a string"));
        assert!(err(json!({"tags": {"contains": null}})).contains("\"contains\" needs"));
        assert!(err(json!({"year": {}})).contains("no operator in {\"year\": {}}"));
        assert!(err(json!([{"kind": "x"}])).contains("must be a JSON object"));
        assert!(err(json!("kind = film")).contains("must be a JSON object"));
        assert!(err(json!({"parent..kind": "x"})).contains("empty segment"));
        assert!(err(json!({".kind": "x"})).contains("empty segment"));
        assert!(err(json!({"": "x"})).contains("empty column name"));
        // errors inside nested filters surface
        assert!(err(json!({"or": [{"kind": "x"}, {"year": {"gt": null}}]})).contains("\"gt\" needs"));
    }

    #[test]
    fn paths_are_deduplicated_in_order() {
        let f = Filter::parse(&json!({"and": [
            {"film.title": "x"}, {"not": {"year": {"gt": 1}}}, {"film.title": {"ne": "y"}}
        ]}))
        .unwrap();
        assert_eq!(f.paths(), vec![vec!["film".to_string(), "title".to_string()], vec!["year".to_string()]]);
    }
}
