//! Feed events from what changed: an engine write (its journal entry) or a
//! hand edit (a note's text before and after).

use crate::feed::{Event, EventKind, Feed, Source};
use crate::journal::Entry;
pub use crate::row_values::diff;
use crate::schema::{Schema, TableDef};
use crate::vault::{read_state, State, Vault};
use serde_json::{json, Map, Value};

/// A note as the feed sees it: the row it holds (or why it cannot be read).
pub enum Seen {
    Absent,
    Plain,
    Row { table: String, id: Option<String>, values: Map<String, Value> },
    Unreadable { table: String, message: String },
}

pub fn seen(schema: &Schema, path: &str, text: Option<&str>) -> Seen {
    match text {
        None => Seen::Absent,
        Some(t) => match read_state(schema, path, t) {
            State::Plain => Seen::Plain,
            State::Row(r) => {
                Seen::Row { table: r.table.to_string(), id: r.id.map(|i| i.to_string()), values: r.values.into_map() }
            }
            State::Unreadable { table, message } => Seen::Unreadable { table, message },
        },
    }
}

/// A note as the index holds it now (no parsing: the index read it already).
pub(crate) fn seen_now(vault: &Vault, path: &str) -> Seen {
    match vault.get(path).map(|n| &n.state) {
        None => Seen::Absent,
        Some(State::Plain) => Seen::Plain,
        Some(State::Row(r)) => Seen::Row {
            table: r.table.to_string(),
            id: r.id.as_ref().map(ToString::to_string),
            values: r.values.to_map(),
        },
        Some(State::Unreadable { table, message }) => {
            Seen::Unreadable { table: table.clone(), message: message.clone() }
        }
    }
}

/// The event of one note's change, without seq, time, actor or violations.
/// None when nothing a reader of rows cares about changed (a plain note edited).
pub fn event(
    path: &str,
    old_path: Option<&str>,
    before: &Seen,
    after: &Seen,
    last_readable: Option<&Map<String, Value>>,
) -> Option<Event> {
    let moved = old_path.filter(|o| *o != path).map(str::to_string);
    let mut e = Event { path: Some(path.to_string()), old_path: moved.clone(), ..Event::default() };
    match (before, after) {
        (_, Seen::Unreadable { table, message }) => {
            e.table = Some(table.clone());
            e.kind = EventKind::Unreadable;
            e.violations = Some(vec![
                json!({"path": path, "violations": [{"code": "unreadable", "message": format!("the front matter cannot be read, so the row is left out of every read: {message}")}]}),
            ]);
        }
        (Seen::Row { table, id, values }, Seen::Row { table: t2, id: id2, values: v2 }) if table == t2 => {
            e.table = Some(t2.clone());
            e.kind = if moved.is_some() { EventKind::Move } else { EventKind::Update };
            e.row_id = id2.clone().or_else(|| id.clone());
            e.changes = diff(values, v2);
            e.values = Some(v2.clone());
        }
        (Seen::Unreadable { .. }, Seen::Row { table, id, values }) => {
            // The fix of an unreadable note: an update of its last readable state.
            e.table = Some(table.clone());
            e.row_id = id.clone();
            e.values = Some(values.clone());
            match last_readable {
                Some(old) => {
                    e.kind = if moved.is_some() { EventKind::Move } else { EventKind::Update };
                    e.changes = diff(old, values);
                }
                None => {
                    e.kind = EventKind::Insert;
                    e.changes = diff(&Map::new(), values);
                }
            }
        }
        (_, Seen::Row { table, id, values }) => {
            e.table = Some(table.clone());
            e.kind = EventKind::Insert;
            e.row_id = id.clone();
            e.changes = diff(&Map::new(), values);
            e.values = Some(values.clone());
        }
        (Seen::Row { table, id, values }, _) => {
            e.table = Some(table.clone());
            e.kind = EventKind::Delete;
            e.row_id = id.clone();
            e.values = Some(values.clone());
        }
        (Seen::Unreadable { table, .. }, _) => {
            e.table = Some(table.clone());
            e.kind = EventKind::Delete;
        }
        (_, Seen::Plain) | (Seen::Plain, Seen::Absent) if moved.is_some() => {
            e.kind = EventKind::Move;
        }
        _ => return None,
    }
    Some(e)
}

/// A `metastore` event for a table whose definition changed.
pub fn metastore_event(table: &str, before: Option<&TableDef>, after: Option<&TableDef>) -> Event {
    Event {
        table: Some(table.to_string()),
        kind: EventKind::Metastore,
        path: Some(crate::schema::METASTORE.into()),
        changes: Map::from_iter([(
            "definition".to_string(),
            json!({"before": before.map(TableDef::to_json), "after": after.map(TableDef::to_json)}),
        )]),
        ..Event::default()
    }
}

impl Feed {
    /// The feed events of a finished engine write, on `schema` (the index's
    /// after it); returns the store writes. `plain_repair`: the operation
    /// rewrites plain notes (a link repair), which are reported too.
    pub(crate) fn engine_write(
        &mut self,
        schema: &Schema,
        entry: &Entry,
        plain_repair: bool,
    ) -> Vec<crate::edits::StoreWrite> {
        let before_schema = entry.schema_before.as_deref().and_then(|t| Schema::parse(t).ok());
        let old = before_schema.as_ref().unwrap_or(schema);
        let mut events = vec![];
        if let Some(b) = &before_schema {
            let names: std::collections::BTreeSet<&String> = b.tables.keys().chain(schema.tables.keys()).collect();
            for t in names {
                if b.tables.get(t) != schema.tables.get(t) {
                    events.push(metastore_event(t, b.tables.get(t), schema.tables.get(t)));
                }
            }
        }
        for c in &entry.changes {
            let before_path = c.from.as_deref().unwrap_or(&c.path);
            let b = seen(old, before_path, c.before.as_deref());
            let a = seen(schema, &c.path, c.after.as_deref());
            // A note moved out of its table (archived) is a delete.
            let a = match (&b, &a, c.from.is_some()) {
                (Seen::Row { table, .. }, Seen::Row { table: t2, .. }, _) if table != t2 => Seen::Absent,
                (Seen::Row { .. }, Seen::Plain, true) => Seen::Absent,
                _ => a,
            };
            let plain_repair = plain_repair && matches!((&b, &a), (Seen::Plain, Seen::Plain));
            let e = event(&c.path, c.from.as_deref(), &b, &a, None).or_else(|| {
                // A link repair reports the plain notes it rewrote too.
                plain_repair.then(|| Event { path: Some(c.path.clone()), kind: EventKind::Update, ..Event::default() })
            });
            if let Some(mut e) = e {
                if e.kind == EventKind::Delete {
                    e.path = Some(before_path.to_string());
                    e.old_path = None;
                }
                e.violations = None;
                events.push(e);
            }
        }
        let mut out = vec![];
        for mut e in events {
            e.at = entry.executed_at.clone();
            e.at_ms = entry.executed_ms;
            e.op = Some(entry.op.clone());
            e.source = Source::Engine;
            e.actor = Some(Value::String(entry.by.clone()));
            e.migration_id = Some(entry.migration_id.clone());
            e.cause = entry.cause.clone();
            out.extend(self.push(e));
        }
        out
    }
}
