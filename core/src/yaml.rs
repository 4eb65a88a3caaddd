//! YAML read into JSON values, the one way the engine reads YAML: notes' front
//! matter (when the fast path of frontmatter.rs is not sure) and metastore.yaml.
//!
//! The text is a stranger's (DESIGN.md, Trust boundaries), so what it can make
//! the parser do is bounded. serde_norway limits nesting (128 levels), but it
//! replays an anchored node at every alias: a 1 MB metastore.yaml of aliases to a
//! 12 KiB scalar made 2 GB of values in 3 s. Here every node the parser hands
//! over is charged (one byte, a scalar or a custom tag its length) before
//! anything is built from it, and the document is refused once its values would
//! take more than [`MAX_EXPANSION`] times its own size (plus [`SLACK`], for small
//! documents that alias a block or two). Without aliases no document comes near
//! it: every node has a byte of text of its own at least, and a scalar is never
//! longer than its source, so the charge stays under twice the text. The parser
//! thus stops after a few replays of any large value, and its work stays within
//! a small multiple of the text's length.

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::fmt;

/// How many times its own size a document's values may take.
pub const MAX_EXPANSION: usize = 4;
/// Room beyond that, so that a short document may still repeat a block by alias.
pub const SLACK: usize = 16 << 10;

/// Reads one YAML document as JSON: integers as i64 or u64 (beyond 64 bits,
/// f64), infinities and NaN as the strings ".inf", "-.inf", ".nan", custom
/// tags dropped (`!tag x` reads as "x"), mapping keys that are not strings as
/// their flow text, a duplicate key refused. The error is the parser's message
/// with its line and column, or says the aliases expand the document too far.
pub fn parse(text: &str) -> Result<Value, String> {
    let budget = Budget::new(text.len());
    match JsonSeed(&budget).deserialize(serde_norway::Deserializer::from_str(text)) {
        Ok(value) => Ok(value),
        // The parser wraps the visitor's error in a path and a position, which
        // say nothing of an expansion that is the whole document's.
        Err(_) if budget.spent() => Err(too_expanded(text.len())),
        Err(e) => Err(with_location(&e)),
    }
}

/// Why a document whose aliases expand too far is refused, and the way out.
pub fn too_expanded(len: usize) -> String {
    format!(
        "its aliases (*name) would make it more than {MAX_EXPANSION} times its size ({} bytes of values from {len}): write the repeated values out, or repeat less",
        limit(len)
    )
}

fn limit(len: usize) -> usize {
    len.saturating_mul(MAX_EXPANSION).saturating_add(SLACK)
}

/// Some serde_norway messages carry no position in their text.
fn with_location(e: &serde_norway::Error) -> String {
    let mut msg = e.to_string();
    if !msg.contains(" line ") {
        if let Some(loc) = e.location() {
            msg.push_str(&format!(" at line {} column {}", loc.line(), loc.column()));
        }
    }
    msg
}

/// What is left of a document's allowance, in bytes of values.
struct Budget {
    left: Cell<usize>,
    spent: Cell<bool>,
}

impl Budget {
    fn new(len: usize) -> Budget {
        Budget { left: Cell::new(limit(len)), spent: Cell::new(false) }
    }

    /// Charges a node of `bytes` (at least one: an empty string, a null or a
    /// collection are a node all the same).
    fn charge<E: de::Error>(&self, bytes: usize) -> Result<(), E> {
        match self.left.get().checked_sub(bytes.max(1)) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => {
                self.spent.set(true);
                Err(E::custom("the document's aliases expand it too far"))
            }
        }
    }

    fn spent(&self) -> bool {
        self.spent.get()
    }
}

#[derive(Clone, Copy)]
struct JsonSeed<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for JsonSeed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for JsonSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        self.0.charge(1)?;
        Ok(Value::Bool(b))
    }
    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        self.0.charge(1)?;
        Ok(Value::from(i))
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        self.0.charge(1)?;
        Ok(Value::from(u))
    }
    fn visit_i128<E: de::Error>(self, i: i128) -> Result<Value, E> {
        self.0.charge(1)?;
        Ok(match i64::try_from(i) {
            Ok(i) => Value::from(i),
            Err(_) => json_f64(i as f64),
        })
    }
    fn visit_u128<E: de::Error>(self, u: u128) -> Result<Value, E> {
        self.0.charge(1)?;
        Ok(match u64::try_from(u) {
            Ok(u) => Value::from(u),
            Err(_) => json_f64(u as f64),
        })
    }
    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        self.0.charge(1)?;
        Ok(json_f64(f))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.0.charge(s.len())?;
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        self.0.charge(s.len())?;
        Ok(Value::String(s))
    }
    fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<Value, E> {
        self.0.charge(b.len())?;
        Ok(Value::String(String::from_utf8_lossy(b).into_owned()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.0.charge(1)?;
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.0.charge(1)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        items.shrink_to_fit();
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        self.0.charge(1)?;
        let mut map = Map::new();
        while let Some(key) = access.next_key_seed(self)? {
            let key = key_text(key);
            let value = access.next_value_seed(self)?;
            if map.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate entry with key {:?}", key)));
            }
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        // A value with a custom tag (`!tag value`): the tag is dropped, but
        // charged, as an aliased node replays it.
        let ((), contents) = data.variant_seed(Tag(self.0))?;
        de::VariantAccess::newtype_variant_seed(contents, self)
    }
}

/// A custom tag, charged by its length and dropped.
struct Tag<'b>(&'b Budget);

impl<'de> DeserializeSeed<'de> for Tag<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Tag<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a tag")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        self.0.charge(s.len())
    }
}

/// JSON has no infinities or NaN: they become the strings ".inf", "-.inf" and ".nan".
pub fn json_f64(f: f64) -> Value {
    match Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None if f.is_nan() => Value::String(".nan".into()),
        None if f > 0.0 => Value::String(".inf".into()),
        None => Value::String("-.inf".into()),
    }
}

/// A mapping key as text: strings as they are, other scalars as YAML writes them, collections
/// in flow style (`{{date}}` stays `{{date}}`: an entry without value is written as its key).
pub fn key_text(key: Value) -> String {
    match key {
        Value::String(s) => s,
        other => flow_text(&other),
    }
}

pub fn flow_text(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(flow_text).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| if v.is_null() { k.clone() } else { format!("{}: {}", k, flow_text(v)) })
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// `times` aliases of a scalar of `len` bytes.
    fn aliased(len: usize, times: usize) -> String {
        format!("a: &a {}\nb: [{}]\n", "x".repeat(len), vec!["*a"; times].join(", "))
    }

    #[test]
    fn aliases_of_a_large_scalar_are_refused_past_the_bound() {
        let text = aliased(100_000, 100);
        let e = parse(&text).unwrap_err();
        assert!(e.contains("its aliases (*name) would make it more than 4 times its size"), "{e}");
        assert!(e.contains(&format!("from {}", text.len())), "{e}");
        // Three copies of it are within four times the document.
        assert_eq!(parse(&aliased(100_000, 2)).unwrap()["b"][1].as_str().map(str::len), Some(100_000));
    }

    #[test]
    fn aliases_of_nodes_and_tags_are_charged_too() {
        let seq = format!("[{}]", vec!["1"; 5000].join(","));
        let text = format!("a: &a {seq}\nb: [{}]\n", vec!["*a"; 200].join(","));
        assert!(parse(&text).unwrap_err().contains("would make it more than"));
        let text = format!("a: &a [!{} x]\nb: [{}]\n", "t".repeat(50_000), vec!["*a"; 200].join(","));
        assert!(parse(&text).unwrap_err().contains("would make it more than"));
        // Nested aliases (a billion laughs) stop at the bound as well.
        let mut text = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n".to_string();
        for i in 1..10 {
            text.push_str(&format!("l{i}: &l{i} [{}]\n", vec![format!("*l{}", i - 1); 10].join(", ")));
        }
        assert!(parse(&text).unwrap_err().contains("would make it more than"));
    }

    #[test]
    fn documents_without_aliases_never_come_near_the_bound() {
        // The densest nodes there are: a byte of text each, or fewer.
        for text in [
            format!("[{}]", vec!["1"; 200_000].join(",")),
            format!("{}\n", vec!["-"; 200_000].join("\n")),
            format!("a: \"{}\"\n", "\\x41".repeat(100_000)),
        ] {
            assert!(parse(&text).is_ok(), "{:?}", parse(&text).map_err(|e| e.chars().take(200).collect::<String>()));
        }
    }

    #[test]
    fn stars_that_are_no_aliases_are_read_as_text() {
        let v = parse("rating: \"*****\"\nquote: '*alias'\nnote: a *b* c\nglob: x*\n").unwrap();
        assert_eq!(v, json!({"rating": "*****", "quote": "*alias", "note": "a *b* c", "glob": "x*"}));
        // A plain scalar cannot start with `*`: YAML reads an alias there.
        assert!(parse("rating: *****\n").is_err());
    }

    #[test]
    fn values_read_as_json() {
        let v = parse("a: &x {k: v}\nb: *x\nc: !tag 1\nd: .inf\ne: 18446744073709551616\n1: one\n").unwrap();
        assert_eq!(
            v,
            json!({"a": {"k": "v"}, "b": {"k": "v"}, "c": 1, "d": ".inf", "e": 18446744073709551616.0, "1": "one"})
        );
        assert!(parse("a: 1\na: 2\n").unwrap_err().contains("duplicate entry with key \"a\""));
    }
}
