//! Why a filter matched no row, when case is why. Text compares
//! case-sensitively (docs/reference/filters.md): an agent asking for titles
//! containing "charade" finds nothing beside "Charade" and concludes there is
//! none. When a select finds no row, the same filter with case ignored on both
//! sides is tried; if it finds rows, the answer says so and shows what they
//! hold where the filter looks, so the next filter can be written as the rows
//! have it.

use crate::filter::{Filter, Lookup};
use serde_json::{Map, Value};

/// The rows shown in the hint, at most.
const SHOWN: usize = 3;

/// A value with every text in it lower-cased.
fn folded(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(s.to_lowercase()),
        Value::Array(items) => Value::Array(items.into_iter().map(folded).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, folded(v))).collect()),
        other => other,
    }
}

/// A filter's JSON with the texts it compares lower-cased, its keys (columns,
/// operators, and, or, not) as they are.
fn fold_where(w: &Value) -> Value {
    match w {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = match k.trim() {
                        "and" | "or" => {
                            Value::Array(v.as_array().map(|a| a.iter().map(fold_where).collect()).unwrap_or_default())
                        }
                        "not" => fold_where(v),
                        // A column: its value, or its operators' arguments.
                        _ => match v {
                            Value::Object(ops) => {
                                Value::Object(ops.iter().map(|(o, a)| (o.clone(), folded(a.clone()))).collect())
                            }
                            other => folded(other.clone()),
                        },
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The rows as the filter sees them, their texts lower-cased.
struct Folded<'l, L>(&'l L);

impl<L: Lookup> Lookup for Folded<'_, L> {
    type Row = L::Row;
    fn get(&self, row: L::Row, path: &[String]) -> Option<Value> {
        self.0.get(row, path).map(folded)
    }
}

/// The hint for a filter (`where`, as given) that matched none of `rows`:
/// None when ignoring case finds none either.
pub fn hint<L: Lookup>(
    lookup: &L,
    rows: impl Iterator<Item = L::Row>,
    path_of: impl Fn(L::Row) -> String,
    w: &Value,
) -> Option<String> {
    let relaxed = Filter::parse(&fold_where(w)).ok()?;
    let paths = relaxed.paths();
    let folded = Folded(lookup);
    let found: Vec<L::Row> = rows.filter(|r| relaxed.eval(&folded, *r)).collect();
    if found.is_empty() {
        return None;
    }
    let shown: Vec<String> = found
        .iter()
        .take(SHOWN)
        .map(|r| {
            let held: Map<String, Value> =
                paths.iter().map(|p| (p.join("."), lookup.get(*r, p).unwrap_or(Value::Null))).collect();
            format!("{} ({})", Value::Object(held), path_of(*r))
        })
        .collect();
    let more = if found.len() > SHOWN { format!(", and {} more", found.len() - SHOWN) } else { String::new() };
    let n = found.len();
    Some(format!(
        "no row matches as written: text compares case-sensitively, and {n} row{} would with case ignored: {}{more}; write the filter as the rows hold it",
        if n == 1 { "" } else { "s" },
        shown.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::tests::World;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn only_the_compared_texts_are_folded() {
        let w = json!({"and": [{"title": {"contains": "Char"}}, {"year": 1963}], "not": {"Status": "Watched"}});
        assert_eq!(
            fold_where(&w),
            json!({"and": [{"title": {"contains": "char"}}, {"year": 1963}], "not": {"Status": "watched"}})
        );
    }

    #[test]
    fn a_filter_that_case_keeps_from_matching_is_told_with_what_the_rows_hold() {
        let w = World::new(json!({
            "c": {"kind": "film", "title": "Charade", "year": 1963},
            "m": {"kind": "film", "title": "Metropolis", "year": 1927},
        }));
        let rows = || [w.id("c"), w.id("m")].into_iter();
        let name = |r: usize| if r == w.id("c") { "c".to_string() } else { "m".to_string() };
        let said = hint(&w, rows(), name, &json!({"title": {"contains": "charade"}})).unwrap();
        assert_eq!(
            said,
            "no row matches as written: text compares case-sensitively, and 1 row would with case ignored: {\"title\":\"Charade\"} (c); write the filter as the rows hold it"
        );
        assert!(hint(&w, rows(), name, &json!({"title": {"starts_with": "METRO"}, "year": 1927}))
            .unwrap()
            .contains("{\"title\":\"Metropolis\",\"year\":1927} (m)"));
        // Case is not why: no hint.
        assert_eq!(hint(&w, rows(), name, &json!({"title": "Vertigo"})), None);
        assert_eq!(hint(&w, rows(), name, &json!({"year": 2000})), None);
    }
}
