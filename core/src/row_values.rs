//! A row's values, kept as JSON text (the notes' cache's, or written when the
//! row is parsed) until a turn reads them as a map. An open of 100k rows then
//! holds no map per row: most rows are never read before the engine closes,
//! a map of seven columns takes about four times the room of its JSON, and
//! reads of every row (a filter, a check) pick from the JSON instead.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

/// Dereferences to the values' map, parsing the JSON on first use.
#[derive(Clone, Default)]
pub struct Values {
    /// The JSON of an object, until a write changes the map. Checked by whoever
    /// took it in: the notes' cache is trusted only whole, by its checksum
    /// (notecache.rs), which costs less than parsing every row's JSON at open.
    raw: Option<Box<str>>,
    /// Boxed: a note of the vault's index holds its row inline, and an unbuilt
    /// map would take 80 bytes of every note.
    map: OnceLock<Box<Map<String, Value>>>,
}

impl Values {
    /// Values read from the cache, the JSON text of an object (see `raw`):
    /// None when it does not start as one.
    pub fn from_raw(raw: Box<str>) -> Option<Values> {
        raw.starts_with('{').then(|| Values { raw: Some(raw), map: OnceLock::new() })
    }

    /// Values kept as their JSON text alone (see `compact`).
    pub fn from_map_as_raw(map: Map<String, Value>) -> Values {
        // A map serialises to JSON without fail.
        let raw = serde_json::to_string(&map).unwrap_or_else(|_| "{}".into());
        Values { raw: Some(raw.into_boxed_str()), map: OnceLock::new() }
    }

    /// The values as JSON: the text they were read from while no write changed them.
    pub fn to_raw(&self) -> Cow<'_, str> {
        match &self.raw {
            Some(raw) => Cow::Borrowed(raw),
            // A map serialises to JSON without fail.
            None => Cow::Owned(serde_json::to_string(&**self).unwrap_or_else(|_| "{}".into())),
        }
    }

    /// One column's value, without building the map when it is not built yet
    /// (the unique columns' index at open).
    pub fn pick(&self, column: &str) -> Option<Value> {
        match (&self.raw, self.map.get()) {
            (Some(raw), None) => match value_span(raw, column) {
                Some(span) => span.and_then(|v| match plain_string(v) {
                    Some(text) => Some(Value::String(text.to_string())),
                    None => serde_json::from_str(v).ok(),
                }),
                None => Values::pick_by_serde(raw, column),
            },
            _ => self.get(column).cloned(),
        }
    }

    /// As `pick`, for JSON not as the engine writes it (an escaped key, spaces).
    fn pick_by_serde(raw: &str, column: &str) -> Option<Value> {
        let mut found = None;
        // Stopped at the column (see `Pick`): serde_json then says the
        // object is not closed, which is not a fault here.
        let _ = serde_json::Deserializer::from_str(raw).deserialize_map(Pick(column, &mut found));
        found
    }

    /// Keeps the values as their JSON text only; the map is built again when
    /// next read. A row parsed from its note holds a map of about 700 bytes
    /// where its JSON takes 150: after a first open, the rows are left as a
    /// reopen through the notes' cache leaves them.
    pub fn compact(&mut self) {
        if self.raw.is_none() {
            let Some(map) = self.map.get() else { return };
            // A map serialises to JSON without fail.
            self.raw = serde_json::to_string(map).ok().map(String::into_boxed_str);
        }
        if self.raw.is_some() {
            self.map = OnceLock::new();
        }
    }

    /// The values with their map built, to read a row once (a check of every
    /// row): None when this map is built already, or there is no JSON to
    /// build it from; else a copy whose map goes with it, so that the row
    /// keeps its JSON alone.
    pub fn parsed(&self) -> Option<Values> {
        if self.map.get().is_some() {
            return None;
        }
        let raw = self.raw.as_deref()?;
        Some(Values::from(serde_json::from_str::<Map<String, Value>>(raw).unwrap_or_default()))
    }

    /// Whether the map is built (see `compact`).
    #[cfg(test)]
    pub(crate) fn is_built(&self) -> bool {
        self.map.get().is_some()
    }

    /// A copy of the map, for an answer or an event.
    pub fn to_map(&self) -> Map<String, Value> {
        (**self).clone()
    }

    pub fn into_map(mut self) -> Map<String, Value> {
        self.force();
        self.map.take().map(|m| *m).unwrap_or_default()
    }

    fn force(&self) -> &Map<String, Value> {
        self.map.get_or_init(|| {
            // Checked to be a JSON object when taken in: it parses.
            Box::new(self.raw.as_deref().and_then(|r| serde_json::from_str(r).ok()).unwrap_or_default())
        })
    }
}

impl From<Map<String, Value>> for Values {
    fn from(map: Map<String, Value>) -> Values {
        Values { raw: None, map: OnceLock::from(Box::new(map)) }
    }
}

impl Deref for Values {
    type Target = Map<String, Value>;
    fn deref(&self) -> &Map<String, Value> {
        self.force()
    }
}

impl DerefMut for Values {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.force();
        // The text no longer says what the map holds.
        self.raw = None;
        self.map.get_mut().expect("forced above")
    }
}

impl PartialEq for Values {
    fn eq(&self, other: &Values) -> bool {
        **self == **other
    }
}

impl fmt::Debug for Values {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl serde::Serialize for Values {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

/// Where the value of a top-level key lies in an object's JSON as the engine
/// writes it (compact, keys without escapes), found by hand: at every open the
/// unique columns of every row are picked, and serde's setup and its error for
/// the object left unclosed cost more than the search. Some(None): the key is
/// not there; None: the text is not as the engine writes it (serde reads it).
fn value_span<'a>(raw: &'a str, key: &str) -> Option<Option<&'a str>> {
    let b = raw.as_bytes();
    let mut at = 1;
    if b.get(..2)? == b"{}" {
        return Some(None);
    }
    loop {
        if *b.get(at)? != b'"' {
            return None;
        }
        let start = at + 1;
        let len = b.get(start..)?.iter().position(|&c| c == b'"' || c == b'\\')?;
        at = start + len;
        if b[at] != b'"' || b.get(at + 1) != Some(&b':') {
            return None;
        }
        let value = at + 2;
        let end = value_end(b, value)?;
        if &raw[start..start + len] == key {
            return Some(Some(&raw[value..end]));
        }
        match b[end] {
            b',' => at = end + 1,
            _ => return Some(None),
        }
    }
}

/// The text of a JSON string with neither escapes nor control characters (a
/// unique column's value, mostly a title or a name), read without serde.
fn plain_string(v: &str) -> Option<&str> {
    let inner = v.strip_prefix('"')?.strip_suffix('"')?;
    inner.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\').then_some(inner)
}

/// Where the JSON value starting at `at` ends: at the comma or brace after it,
/// its strings skipped whole and its brackets counted. None if the text ends first.
fn value_end(b: &[u8], mut at: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *b.get(at)? {
            b',' | b'}' | b']' if depth == 0 => return Some(at),
            b'"' => {
                at += 1;
                loop {
                    match *b.get(at)? {
                        b'"' => break,
                        b'\\' => at += 2,
                        _ => at += 1,
                    }
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
        at += 1;
    }
}

/// Deserialises one key's value of a JSON object into its slot, skipping the
/// keys before it unbuilt and the rest unread: a row's JSON is a map written by
/// the engine, so the key is there once.
struct Pick<'a>(&'a str, &'a mut Option<Value>);

impl<'de> Visitor<'de> for Pick<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(is) = map.next_key_seed(KeyIs(self.0))? {
            if is {
                *self.1 = Some(map.next_value::<Value>()?);
                return Ok(());
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// Whether a map's key is the one wanted, compared where it lies: no key is copied.
struct KeyIs<'a>(&'a str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

/// A whole number sent as `1e2`, `100.0` or `-0` (JSON has one number type) as
/// the integer it is, to be written `100`, not `100.0` or `-0.0`; other values
/// as they are. Only below 9e15, where a float still holds every integer.
pub fn as_integer(v: &Value) -> Value {
    match v.as_f64() {
        Some(f) if v.is_f64() && f.fract() == 0.0 && f.abs() < 9e15 => Value::from(f as i64),
        _ => v.clone(),
    }
}

/// `{column: {before, after}}` for the values that differ.
pub fn diff(before: &Map<String, Value>, after: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in after {
        if before.get(k) != Some(v) {
            out.insert(k.clone(), json!({"before": before.get(k).cloned().unwrap_or(Value::Null), "after": v}));
        }
    }
    for (k, v) in before {
        if !after.contains_key(k) {
            out.insert(k.clone(), json!({"before": v, "after": null}));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn raw(s: &str) -> Values {
        Values::from_raw(s.into()).unwrap()
    }

    #[test]
    fn values_read_as_json_answer_as_the_map_and_keep_their_text_until_changed() {
        let text = r#"{"title":"Film \"0\"","year":1920,"tags":["a"]}"#;
        let mut v = raw(text);
        assert_eq!(v.pick("year"), Some(json!(1920)));
        assert_eq!(v.pick("title"), Some(json!("Film \"0\"")));
        assert_eq!(v.pick("none"), None);
        assert_eq!(v.to_raw(), text);
        assert_eq!(v.get("tags"), Some(&json!(["a"])));
        assert_eq!(v.pick("tags"), Some(json!(["a"])));
        // Read, the text still says what the map holds.
        assert_eq!(v.to_raw(), text);
        v.insert("year".into(), json!(1921));
        assert_eq!(v.to_raw(), r#"{"title":"Film \"0\"","year":1921,"tags":["a"]}"#);
        assert_eq!(serde_json::to_value(&v).unwrap()["year"], 1921);
        assert_eq!(v.clone().into_map()["year"], 1921);
    }

    #[test]
    fn values_compacted_keep_their_json_only_and_answer_as_before() {
        let mut map = Map::new();
        map.insert("title".into(), json!("Film \"0\""));
        map.insert("year".into(), json!(1920));
        map.insert("rating".into(), json!(7.5));
        map.insert("tags".into(), json!(["a", {"b": [null, true]}]));
        let mut v = Values::from(map.clone());
        v.compact();
        assert!(v.map.get().is_none(), "the map is dropped");
        assert_eq!(v.raw.as_deref().unwrap(), serde_json::to_string(&map).unwrap());
        assert_eq!(v.pick("year"), Some(json!(1920)));
        assert_eq!(*v, map, "read back as it was, in its order");
        assert!(v.map.get().is_some(), "built again when read");
        v.compact();
        assert!(v.map.get().is_none(), "read values are compacted again, from their text");
        v.insert("year".into(), json!(1921));
        assert!(v.raw.is_none(), "a write leaves no stale text");
        v.compact();
        assert_eq!(v.pick("year"), Some(json!(1921)));
        let mut empty = Values::default();
        empty.compact();
        assert_eq!(*empty, Map::new());
    }

    #[test]
    fn a_value_picked_by_hand_is_the_one_serde_picks() {
        let texts = [
            r#"{"title":"Film 0","year":1920,"tags":["t0"],"director":"[[Person 0]]"}"#,
            r#"{"o":{"title":1,"k":[1,{"x":"}],"}]},"title":"x,y}","n":-1.5e3,"z":null,"t":true,"a\"b":"c\\"}"#,
            r#"{"list":[[],[[]],{}],"s":"\u00e9\"","title":{"a":[1,2]},"last":false}"#,
            r#"{}"#,
            r#"{"only":1}"#,
            // Not as the engine writes them: left to serde.
            r#"{ "title": 1 }"#,
            r#"{"ti\u0074le":2,"title":3}"#,
            r#"{"title":"cut"#,
            // A control character, which JSON refuses in a string.
            "{\"x\":\"\u{7f}é\",\"title\":\"a\tb\"}",
            r#"{"a":[1,2"#,
        ];
        let keys = [
            "title", "year", "tags", "director", "o", "a\"b", "n", "z", "t", "list", "s", "last", "only", "k", "x",
            "none",
        ];
        let mut by_hand = 0;
        for text in texts {
            for key in keys {
                let fast = value_span(text, key);
                by_hand += usize::from(fast.is_some());
                let picked = Values::from_raw(text.into()).unwrap().pick(key);
                assert_eq!(picked, Values::pick_by_serde(text, key), "{key} in {text}");
            }
        }
        // Five texts are read by hand whole. An escaped key (the engine writes
        // one for a column named so) sends the search for every key after it
        // to serde: the second text's five keys before it are found by hand.
        assert_eq!(by_hand, 5 * keys.len() + 5, "the engine's own JSON is read by hand");
        assert_eq!(value_span(texts[1], "title"), Some(Some(r#""x,y}""#)));
        assert_eq!(value_span(texts[1], "o"), Some(Some(r#"{"title":1,"k":[1,{"x":"}],"}]}"#)));
        assert_eq!(value_span(texts[7], "title"), None);
    }

    #[test]
    fn only_a_json_object_is_taken_as_values() {
        for bad in ["5", "\"x\"", "[1]", "null"] {
            assert!(Values::from_raw(bad.into()).is_none(), "{bad}");
        }
        assert_eq!(raw("{}").to_raw(), "{}");
        let escaped = raw(r#"{"o":{"k":[1,{"x":2}]},"a\"b":1,"c":2}"#);
        assert_eq!(
            (escaped.pick("a\"b"), escaped.pick("c"), escaped.pick("k")),
            (Some(json!(1)), Some(json!(2)), None)
        );
        assert_eq!(Values::default().to_raw(), "{}");
        assert_eq!(Values::from(Map::new()), raw("{}"));
    }
}
