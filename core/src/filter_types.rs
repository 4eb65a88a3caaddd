//! Whether a query's filter compares each column with a value of its type.
//! The evaluator never coerces (`"1950"` is not `1950`), so a filter that
//! does is almost always a slip that matches no row at all, or, under `ne`,
//! every row: `delete_rows` with `{"year": {"ne": "1950"}}` would take the
//! whole table. Agents often pass numbers as strings, so the operations that
//! take a filter (select_rows, update_rows, delete_rows, create_view,
//! add_check, list_changes and create_webhook) refuse such a one and say what
//! to write. What is already stored (metastore.yaml, webhooks.json) is not
//! held to it: a file that loads today keeps loading and delivering.

use crate::filter::{show, Filter, Op};
use crate::schema::{ColType, ColumnDef, Schema, TableDef};
use crate::template::DateTime;
use serde_json::{json, Value};

/// What a value compared at the end of a path is.
#[derive(Clone, Copy)]
struct Target<'a> {
    /// The column's name as written last in the path (`id`, `path`: the row's).
    name: &'a str,
    /// The type of one value; None for `id`, `path` and `table`, which are text.
    ty: Option<ColType>,
    list: bool,
    /// An enum's values.
    values: &'a [String],
}

/// The first comparison of `filter` (paths checked: `Schema::check_paths`) that
/// no value of its column can satisfy as written (or only as text, for a date),
/// as a message that quotes it and says what to write instead.
pub fn check(schema: &Schema, table: &TableDef, filter: &Filter) -> Result<(), String> {
    match filter {
        Filter::And(fs) | Filter::Or(fs) => fs.iter().try_for_each(|f| check(schema, table, f)),
        Filter::Not(f) => check(schema, table, f),
        Filter::Cmp { path, op, arg } => match target(schema, table, path) {
            Some(t) => check_cmp(t, &path.join("."), *op, arg),
            None => Ok(()),
        },
    }
}

fn target<'a>(schema: &'a Schema, table: &'a TableDef, path: &'a [String]) -> Option<Target<'a>> {
    let mut def = table;
    for (i, seg) in path.iter().enumerate() {
        if matches!(seg.as_str(), "id" | "path" | "table") {
            return Some(Target { name: seg, ty: None, list: false, values: &[] });
        }
        let col: &ColumnDef = def.column(seg)?;
        if i + 1 == path.len() {
            let (ty, list) = (Some(col.scalar_type()), col.ty == ColType::List);
            return Some(Target { name: seg, ty, list, values: &col.values });
        }
        // Through a list of links, the values found make a list.
        let next = schema.resolve(col.table.as_deref()?).ok()?;
        def = schema.tables.get(&next)?;
        if col.ty == ColType::List {
            let rest = target(schema, def, &path[i + 1..])?;
            return Some(Target { list: true, ..rest });
        }
    }
    None
}

fn check_cmp(t: Target, key: &str, op: Op, arg: &Value) -> Result<(), String> {
    let quoted = || match op {
        Op::Eq => show(&json!({ key: arg })),
        _ => show(&json!({ key: { op.name(): arg } })),
    };
    let kind = match (t.list, t.ty) {
        (true, ty) => format!("a list of {}", type_words(ty)),
        (false, ty) => {
            let name = ty.map_or("text", ColType::name);
            let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
            format!("{article} {name} column")
        }
    };
    match op {
        Op::Exists => Ok(()),
        Op::Eq | Op::Ne => match arg {
            Value::Null => Ok(()),
            Value::Array(items) if t.list => items.iter().try_for_each(|v| fits(t, key, op, v, arg, &quoted)),
            Value::Array(_) => Err(format!(
                "{} compares {}, {kind}, with an array, which equals only a list: for one of several values write {}",
                quoted(),
                t.name,
                show(&json!({ key: { "in": arg } }))
            )),
            v => fits(t, key, op, v, arg, &quoted),
        },
        Op::In => match arg {
            Value::Array(items) => {
                items.iter().filter(|v| !v.is_null()).try_for_each(|v| fits(t, key, op, v, arg, &quoted))
            }
            _ => Ok(()),
        },
        Op::Gt | Op::Gte | Op::Lt | Op::Lte if t.ty == Some(ColType::Boolean) => Err(format!(
            "{} orders {}, {kind}: true and false have no order; write {}",
            quoted(),
            t.name,
            show(&json!({ key: true }))
        )),
        Op::Gt | Op::Gte | Op::Lt | Op::Lte => fits(t, key, op, arg, arg, &quoted),
        Op::Contains if t.list => fits(t, key, op, arg, arg, &quoted),
        Op::Contains | Op::StartsWith if is_number(t.ty) || t.ty == Some(ColType::Boolean) => Err(format!(
            "{} looks for text in {}, {kind}, which holds none: compare it with eq, in, gt or lt",
            quoted(),
            t.name,
        )),
        Op::Contains | Op::StartsWith => fits(t, key, op, arg, arg, &quoted),
    }
}

/// Whether `v` is of the type of `t`'s values, else why not and, when the
/// whole argument converts, what to write.
fn fits(t: Target, key: &str, op: Op, v: &Value, arg: &Value, quoted: &dyn Fn() -> String) -> Result<(), String> {
    if of_type(t.ty, v) {
        one_of(t, op, v, quoted)?;
        return a_date(t, key, op, v, quoted);
    }
    let never = never(op);
    let mut msg = format!(
        "{} compares {}, which holds {}, with {}: the engine never converts one into the other, {never}",
        quoted(),
        t.name,
        type_words(t.ty),
        describe(v)
    );
    let fixed = match arg {
        Value::Array(items) => items.iter().map(|v| convert(t.ty, v)).collect::<Option<Vec<_>>>().map(Value::Array),
        v => convert(t.ty, v),
    };
    if let Some(fixed) = fixed {
        let arg = if op == Op::Eq { fixed } else { json!({ op.name(): fixed }) };
        msg.push_str(&format!("; write {}", show(&json!({ key: arg }))));
    }
    Err(msg)
}

/// Whether a value an enum is compared with for equality is one of its values
/// (an ordering or a prefix may name any text).
fn one_of(t: Target, op: Op, v: &Value, quoted: &dyn Fn() -> String) -> Result<(), String> {
    let Some(s) = v.as_str() else { return Ok(()) };
    if t.ty != Some(ColType::Enum) || !matches!(op, Op::Eq | Op::Ne | Op::In | Op::Contains) {
        return Ok(());
    }
    if t.values.is_empty() || t.values.iter().any(|x| x == s) {
        return Ok(());
    }
    let never = never(op);
    Err(format!(
        "{} compares {} with {}, which is not one of its values ({}), {never}{}",
        quoted(),
        t.name,
        show(v),
        t.values.join(", "),
        crate::names::did_you_mean(s, t.values.iter().map(String::as_str))
    ))
}

/// Whether a date or datetime column is compared (for equality or order) with
/// a date or datetime: any other text compares as text, so "12/10/2026" or
/// "2026" would order against "2026-10-03" letter by letter.
fn a_date(t: Target, key: &str, op: Op, v: &Value, quoted: &dyn Fn() -> String) -> Result<(), String> {
    let Some(s) = v.as_str() else { return Ok(()) };
    let dated = matches!(t.ty, Some(ColType::Date | ColType::Datetime));
    // contains on one date looks for a part of it ("2026-10"); on a list, an item.
    let compared =
        matches!(op, Op::Eq | Op::Ne | Op::In | Op::Gt | Op::Gte | Op::Lt | Op::Lte) || (op == Op::Contains && t.list);
    if !dated || !compared || DateTime::parse(s).is_some() {
        return Ok(());
    }
    Err(format!(
        "{} compares {}, which holds {}, with {}, which is not a date (2026-10-03) or a datetime (2026-10-03T21:30, 2026-10-03T21:30:00Z), so it would compare as text, letter by letter; write the date in full, or for a year or a month use starts_with: {}",
        quoted(),
        t.name,
        type_words(t.ty),
        show(v),
        show(&json!({ key: { "starts_with": "2026-10" } }))
    ))
}

/// What a comparison with a value it can never equal does.
fn never(op: Op) -> &'static str {
    match op {
        Op::Ne => "so ne holds for every row",
        Op::In => "so that item matches no row",
        _ => "so it matches no row",
    }
}

fn of_type(ty: Option<ColType>, v: &Value) -> bool {
    match ty {
        Some(ColType::Integer | ColType::Number) => v.is_number(),
        Some(ColType::Boolean) => v.is_boolean(),
        _ => v.is_string(),
    }
}

/// `v` as a value of type `ty`, when it reads as one unambiguously.
fn convert(ty: Option<ColType>, v: &Value) -> Option<Value> {
    if v.is_null() || of_type(ty, v) {
        return Some(v.clone());
    }
    match (ty, v) {
        (Some(ColType::Integer | ColType::Number), Value::String(s)) => {
            let s = s.trim();
            s.parse::<i64>().ok().map(Value::from).or_else(|| {
                s.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
            })
        }
        (Some(ColType::Boolean), Value::String(s)) => match s.trim() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        (Some(ColType::Integer | ColType::Number | ColType::Boolean), _) => None,
        // No number reads as a date.
        (Some(ColType::Date | ColType::Datetime), _) => None,
        (_, Value::Number(n)) => Some(Value::String(n.to_string())),
        (_, Value::Bool(b)) => Some(Value::String(b.to_string())),
        _ => None,
    }
}

fn is_number(ty: Option<ColType>) -> bool {
    matches!(ty, Some(ColType::Integer | ColType::Number))
}

fn type_words(ty: Option<ColType>) -> &'static str {
    match ty {
        Some(ColType::Integer) => "integers",
        Some(ColType::Number) => "numbers",
        Some(ColType::Boolean) => "true or false",
        Some(ColType::Date) => "dates (text such as \"2026-10-03\")",
        Some(ColType::Datetime) => "datetimes (text such as \"2026-10-03T21:30\")",
        Some(ColType::Link) => "links (text such as \"[[Charade]]\")",
        Some(ColType::Enum) => "enum values (text)",
        _ => "text",
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(_) => format!("a string ({})", show(v)),
        Value::Number(_) => format!("a number ({})", show(v)),
        Value::Bool(_) => format!("a boolean ({})", show(v)),
        Value::Object(_) => format!("an object ({})", show(v)),
        Value::Array(_) => format!("an array ({})", show(v)),
        Value::Null => "null".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    const SCHEMA: &str = "version: 1
tables:
  main.public.person:
    columns:
      name: {type: text}
      born: {type: integer}
      died: {type: date}
  main.public.film:
    columns:
      title: {type: text}
      year: {type: integer}
      rating: {type: number}
      seen: {type: boolean}
      on: {type: date}
      status: {type: enum, values: [watched, to watch]}
      director: {type: link, table: person}
      cast: {type: list, items: link, table: person}
      tags: {type: list, items: text}
      scores: {type: list, items: integer}
";

    fn run(filter: Value) -> Result<(), String> {
        let schema = Schema::parse(SCHEMA).unwrap();
        let f = Filter::parse(&filter).unwrap();
        check(&schema, &schema.tables["main.public.film"], &f)
    }

    #[test]
    fn values_of_the_columns_type_pass() {
        for ok in [
            json!({"year": 1950}),
            json!({"year": {"gt": 1950, "lte": 1960.5}}),
            json!({"year": {"in": [1950, null]}}),
            json!({"year": null}),
            json!({"year": {"exists": false}}),
            json!({"rating": {"gte": 4}}),
            json!({"seen": true}),
            json!({"title": "1917", "status": {"ne": "watched"}}),
            json!({"on": {"gte": "2026-10-03"}}),
            json!({"director": "[[Person 1]]", "director.born": {"lt": 1900}, "director.name": {"starts_with": "A"}}),
            json!({"cast.born": {"gt": 1900}, "cast": {"contains": "Ann"}}),
            json!({"tags": {"contains": "noir"}, "scores": {"contains": 5}}),
            json!({"tags": ["a", "b"], "scores": [1, 2]}),
            json!({"id": "x", "path": {"starts_with": "datanotes/"}, "director.id": "y"}),
            json!({"or": [{"year": 1}, {"not": {"title": "a"}}]}),
        ] {
            assert_eq!(run(ok.clone()), Ok(()), "{ok}");
        }
    }

    #[test]
    fn a_value_of_another_type_is_refused_with_what_to_write() {
        let cases = [
            (json!({"year": {"gt": "1950"}}), "write {\"year\": {\"gt\": 1950}}", "matches no row"),
            (json!({"year": {"ne": "1950"}}), "write {\"year\": {\"ne\": 1950}}", "ne holds for every row"),
            (json!({"year": "1950"}), "write {\"year\": 1950}", "which holds integers, with a string (\"1950\")"),
            (json!({"rating": {"in": [4, "4.5"]}}), "write {\"rating\": {\"in\": [4, 4.5]}}", "that item"),
            (json!({"seen": "true"}), "write {\"seen\": true}", "holds true or false"),
            (json!({"title": 1917}), "write {\"title\": \"1917\"}", "with a number (1917)"),
            (json!({"title": {"contains": 19}}), "write {\"title\": {\"contains\": \"19\"}}", "holds text"),
            (json!({"director.born": {"gte": "1900"}}), "write {\"director.born\": {\"gte\": 1900}}", "born"),
            (json!({"cast.born": "1900"}), "write {\"cast.born\": 1900}", "born"),
            (json!({"scores": {"contains": "5"}}), "write {\"scores\": {\"contains\": 5}}", "scores"),
            (json!({"on": {"gt": 2020}}), "holds dates", "with a number (2020)"),
            (json!({"year": "nineteen"}), "matches no row", "integers"),
        ];
        for (filter, fix, said) in cases {
            let m = run(filter.clone()).expect_err(&filter.to_string());
            assert!(m.contains(fix) && m.contains(said), "{filter}: {m}");
            assert!(m.starts_with(&show(&filter)), "the filter is quoted: {m}");
        }
        assert!(!run(json!({"year": "nineteen"})).unwrap_err().contains("write"), "no number to suggest");
        assert!(!run(json!({"on": {"gt": 2020}})).unwrap_err().contains("write"), "no date to suggest");
    }

    #[test]
    fn an_enum_is_compared_for_equality_with_its_values_only() {
        let m = run(json!({"status": "wached"})).unwrap_err();
        assert!(
            m.contains("not one of its values (watched, to watch), so it matches no row (did you mean \"watched\"?)"),
            "{m}"
        );
        let m = run(json!({"status": {"in": ["watched", "seen"]}})).unwrap_err();
        assert!(m.contains("\"seen\", which is not one of its values") && m.contains("that item"), "{m}");
        let m = run(json!({"status": {"ne": "Watched"}})).unwrap_err();
        assert!(m.contains("ne holds for every row"), "{m}");
        for ok in [json!({"status": {"in": ["to watch", null]}}), json!({"status": {"gt": "a", "starts_with": "to"}})] {
            assert_eq!(run(ok.clone()), Ok(()), "{ok}");
        }
    }

    #[test]
    fn a_date_is_compared_with_a_date_or_a_datetime() {
        let m = run(json!({"director.died": "1980"})).unwrap_err();
        assert!(m.contains("starts_with: {\"director.died\": {\"starts_with\": \"2026-10\"}}"), "{m}");
        for bad in
            [json!({"on": {"gt": "12/10/2026"}}), json!({"on": "2026"}), json!({"on": {"in": ["2026-10-03", "Oct 3"]}})]
        {
            let m = run(bad.clone()).unwrap_err();
            assert!(m.contains("which is not a date (2026-10-03)") && m.contains("letter by letter"), "{bad}: {m}");
            assert!(m.contains("{\"on\": {\"starts_with\": \"2026-10\"}}"), "{m}");
        }
        for ok in [
            json!({"on": {"gte": "2026-10-03", "lt": "2026-10-04T00:00"}}),
            json!({"on": {"starts_with": "2026-10", "contains": "-10-"}}),
            json!({"on": {"in": ["2026-10-03", null]}}),
        ] {
            assert_eq!(run(ok.clone()), Ok(()), "{ok}");
        }
    }

    #[test]
    fn comparisons_that_cannot_hold_on_the_columns_type_are_refused() {
        let m = run(json!({"year": [1950, 1960]})).unwrap_err();
        assert!(m.contains("an integer column") && m.contains("{\"year\": {\"in\": [1950, 1960]}}"), "{m}");
        let m = run(json!({"seen": {"gt": "false"}})).unwrap_err();
        assert!(m.contains("no order") && m.contains("{\"seen\": true}"), "{m}");
        for f in [json!({"year": {"contains": 5}}), json!({"rating": {"starts_with": "4"}})] {
            let m = run(f.clone()).unwrap_err();
            assert!(m.contains("holds none") && m.contains("eq, in, gt or lt"), "{f}: {m}");
        }
        let m = run(json!({"tags": ["a", 1]})).unwrap_err();
        assert!(m.contains("write {\"tags\": [\"a\", \"1\"]}"), "{m}");
    }
}
