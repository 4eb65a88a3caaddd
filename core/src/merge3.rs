//! A staged change met with the note as it is now, property by property: what
//! the proposal changed lands, what changed since stays, and a property both
//! changed to different values is a conflict naming the three values.

use crate::frontmatter;
use crate::index::Index;
use crate::journal::Change;
use serde_json::{json, Map, Value};

/// What a staged change comes to over the notes as they are now.
#[derive(Debug, Clone, PartialEq)]
pub enum Merged {
    /// The note is already as the change leaves it.
    Same,
    /// Write the note at `Change::path` with this text.
    Put(String),
    /// Take the note away (to the trash).
    Remove,
    /// Move the note from `from` to `Change::path`, then give it this text.
    Move { from: String, text: String },
    /// It cannot land: why, per property ({property, was, proposed, current}).
    Conflict(Vec<Value>),
}

fn values(text: &str) -> Map<String, Value> {
    frontmatter::parse(text).map(|p| p.values).unwrap_or_default()
}

fn conflict(property: &str, was: Value, proposed: Value, current: Value) -> Value {
    json!({"property": property, "was": was, "proposed": proposed, "current": current})
}

fn whole(why: &str, proposed: Option<&str>, current: Option<&str>) -> Merged {
    Merged::Conflict(vec![json!({"property": null, "why": why, "proposed": proposed, "current": current})])
}

/// `ours` (the proposal's text) over `base` (the note when staged), met with
/// `theirs` (the note now): the merged text, or the properties in conflict.
pub fn merge_texts(base: &str, ours: &str, theirs: &str) -> Result<String, Vec<Value>> {
    if theirs == base {
        return Ok(ours.to_string());
    }
    if theirs == ours || ours == base {
        return Ok(theirs.to_string());
    }
    let (b, o, t) = (values(base), values(ours), values(theirs));
    let mut set: Vec<(&str, &Value)> = vec![];
    let mut remove: Vec<&str> = vec![];
    let mut conflicts = vec![];
    let keys: std::collections::BTreeSet<&String> = b.keys().chain(o.keys()).chain(t.keys()).collect();
    for k in keys {
        let (bv, ov, tv) = (b.get(k), o.get(k), t.get(k));
        if ov == bv || tv == ov {
            continue;
        }
        if tv != bv {
            let n = |v: Option<&Value>| v.cloned().unwrap_or(Value::Null);
            conflicts.push(conflict(k, n(bv), n(ov), n(tv)));
            continue;
        }
        match ov {
            Some(v) => set.push((k, v)),
            None => remove.push(k),
        }
    }
    let (bb, ob, tb) = (frontmatter::body(base), frontmatter::body(ours), frontmatter::body(theirs));
    let body = if ob == bb || tb == ob {
        None
    } else if tb == bb {
        Some(ob)
    } else {
        conflicts.push(conflict("body", bb.into(), ob.into(), tb.into()));
        None
    };
    if !conflicts.is_empty() {
        return Err(conflicts);
    }
    let text = frontmatter::edit(theirs, &set, &remove);
    Ok(match body {
        Some(b) => frontmatter::set_body(&text, b),
        None => text,
    })
}

/// What `c` comes to over `current` (the text at `c.path` now) and, for a
/// move, `current_from` (the text at `c.from` now).
pub fn merge(c: &Change, current: Option<&str>, current_from: Option<&str>) -> Merged {
    let (before, after) = (c.before.as_deref(), c.after.as_deref());
    if let Some(from) = &c.from {
        let (Some(b), Some(a)) = (before, after) else { return whole("the move kept no text", after, current) };
        if current.is_some() {
            return whole("a note stands where it would move to", after, current);
        }
        let Some(now) = current_from else { return whole("the note it moves is gone", after, None) };
        return match merge_texts(b, a, now) {
            Ok(text) => Merged::Move { from: from.clone(), text },
            Err(c) => Merged::Conflict(c),
        };
    }
    match (before, after, current) {
        (_, a, n) if a == n => Merged::Same,
        (None, Some(a), None) => Merged::Put(a.to_string()),
        (None, Some(_), Some(_)) => whole("a note was made at its path since", after, current),
        (Some(b), None, Some(n)) if b == n => Merged::Remove,
        (Some(_), None, Some(_)) => whole("the note changed since: it is kept", None, current),
        (Some(_), Some(_), None) => whole("the note was deleted since", after, None),
        (Some(b), Some(a), Some(n)) => match merge_texts(b, a, n) {
            Ok(text) if text == n => Merged::Same,
            Ok(text) => Merged::Put(text),
            Err(c) => Merged::Conflict(c),
        },
        _ => Merged::Same,
    }
}

/// Where `c` leaves the note now in `index`.
pub fn merged_in(index: &Index, c: &Change) -> Merged {
    let from = c.from.as_deref().and_then(|f| index.vault.text(f));
    merge(c, index.vault.text(&c.path), from)
}

/// Applies `c` to a view of the tables (no transaction: the view is a copy);
/// a conflict leaves the note as it is, and is answered.
pub fn apply_to_vault(index: &mut Index, c: &Change) -> Option<Vec<Value>> {
    let schema = &index.schema;
    match merged_in(index, c) {
        Merged::Put(text) => index.vault.insert(schema, c.path.clone(), text, 0),
        Merged::Remove => {
            index.vault.remove(&c.path);
        }
        Merged::Move { from, text } => {
            index.vault.remove(&from);
            index.vault.insert(schema, c.path.clone(), text, 0);
        }
        Merged::Same => {}
        Merged::Conflict(why) => return Some(why),
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn properties_changed_on_one_side_merge_and_on_both_conflict() {
        let base = "---\ntitle: A\nrating: 3\n---\nBody\n";
        let ours = "---\ntitle: A\nrating: 5\n---\nBody\n";
        let theirs = "---\ntitle: B\nrating: 3\n---\nBody\n";
        assert_eq!(merge_texts(base, ours, theirs).unwrap(), "---\ntitle: B\nrating: 5\n---\nBody\n");
        let clash = "---\ntitle: A\nrating: 4\n---\nBody\n";
        let c = merge_texts(base, ours, clash).unwrap_err();
        assert_eq!(c, vec![json!({"property": "rating", "was": 3, "proposed": 5, "current": 4})]);
        let body = "---\ntitle: B\nrating: 3\n---\nNew body\n";
        let ours_body = "---\ntitle: A\nrating: 3\n---\nMy body\n";
        assert_eq!(merge_texts(base, ours_body, body).unwrap_err()[0]["property"], "body");
    }
}
