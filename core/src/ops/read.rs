//! Reads: describe_database, select_rows, read_note, check_table, infer_table,
//! read_docs; and configure_database, which writes only the store.

use super::args::Args;
use super::context::{Keeps, Sees};
use crate::edits::StoreWrite;
use crate::error::{fail, Failure, OpResult};
use crate::filter::Filter;
use crate::filter::Lookup;
use crate::frontmatter;
use crate::schema::{short, TableDef};
use crate::settings;
use crate::step::Outcome;
use crate::validate::{row_json, Ctx};
use crate::vault::{Row, State};
use serde_json::{json, Map, Value};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// The way out while metastore.yaml cannot be read.
pub(crate) const FIX_METASTORE: &str = "Fix datanotes/metastore.yaml (git can bring back its last good version)";

/// Refused while metastore.yaml cannot be read: what the engine would say
/// of the tables (their rows, their rules) rests on a schema it does not have.
fn schema_read(e: &Sees, op: &str) -> OpResult<()> {
    match &e.index.schema_error {
        Some(err) => fail(Failure::refused(op, vec![err.clone()], format!("{FIX_METASTORE}."))),
        None => Ok(()),
    }
}

pub(crate) fn table(e: &Sees, op: &str, name: &str) -> OpResult<String> {
    schema_read(e, op)?;
    e.index
        .schema
        .resolve(name)
        .map_err(|m| {
            if let Some(v) = e.index.schema.resolve_view(name) {
                let t = &e.index.schema.views[&v].table;
                return Failure::refused(
                    op,
                    vec![format!("{v} is a view of {t}, not a table")],
                    format!("select_rows reads the view; {op} takes the table {t}."),
                )
                .with_docs("guides/database-objects/views");
            }
            Failure::refused(op, vec![m], "describe_database lists the tables and the views.")
                .with_docs("reference/operations#describe_database")
        })
        .map_err(crate::error::Stop::from)
}

pub(crate) fn compile_where(e: &Sees, op: &str, q: &str, w: &Value) -> OpResult<Filter> {
    compile_where_def(&e.index.schema, op, q, &e.index.schema.tables[q], w)
}

/// A table named for a read of its history: a table of the schema, or a dropped
/// one that kept its log (named in full).
pub(crate) fn history_table(e: &Sees, op: &str, name: &str) -> OpResult<String> {
    if let Ok(q) = e.index.schema.resolve(name) {
        return Ok(q);
    }
    let logged = crate::log::tables(e.store);
    let found: Vec<&String> = logged.iter().filter(|t| *t == name || t.ends_with(&format!(".{name}"))).collect();
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        _ => table(e, op, name),
    }
}

const TYPES_HINT: &str = "Compare each column with a value of its type: numbers for integer and number columns, true or false for boolean ones, text for the others (dates as \"2026-10-03\", links as \"[[Charade]]\"). describe_database lists the columns' types; check_table lists rows whose values are of another type.";

/// Refuses a filter made by an operation (`what`: the argument that holds it)
/// that compares a column with a value of another type (filter_types.rs).
pub(crate) fn typed(schema: &crate::schema::Schema, op: &str, def: &TableDef, f: &Filter, what: &str) -> OpResult<()> {
    crate::filter_types::check(schema, def, f)
        .map_err(|m| Failure::bad_input(op, format!("{what}: {m}"), TYPES_HINT).with_docs("reference/filters").into())
}

pub(crate) fn compile_where_def(
    schema: &crate::schema::Schema,
    op: &str,
    q: &str,
    def: &TableDef,
    w: &Value,
) -> OpResult<Filter> {
    let f = Filter::parse(w).map_err(|m| Failure::bad_input(op, format!("where: {m}"), "The filter language: {\"col\": value}, {\"col\": {\"gt\": 1}}, {\"and\": [...]}, {\"or\": [...]}, {\"not\": ...}.").with_docs("reference/filters"))?;
    for p in f.paths() {
        let first = &p[0];
        if first != "id" && first != "path" && def.column(first).is_none() {
            return fail(Failure::bad_input(
                op,
                format!("where: no column \"{first}\" in {q}{}", crate::names::did_you_mean(first, def.column_names())),
                format!("The columns of {q}: {}.", def.column_names().collect::<Vec<_>>().join(", ")),
            ));
        }
    }
    schema.check_paths(q, def, &f.paths(), "where").map_err(|m| {
        Failure::bad_input(
            op,
            m,
            format!(
                "The columns of {q}: {}; dotted paths follow link columns.",
                def.column_names().collect::<Vec<_>>().join(", ")
            ),
        )
    })?;
    typed(schema, op, def, &f, "where")?;
    Ok(f)
}

pub(crate) fn describe(e: &Sees, a: &Args) -> OpResult<Value> {
    let only = a.str("table").map(|t| table(e, "describe_database", t)).transpose()?;
    let mut tables = vec![];
    for (q, t) in &e.index.schema.tables {
        if only.as_ref().is_some_and(|o| o != q) {
            continue;
        }
        tables.push(json!({
            "name": short(q), "qualified": q, "description": t.description,
            "folder": e.index.schema.folder(q),
            "row_count": e.index.vault.rows.get(q).map_or(0, |s| s.len()),
            "unreadable_count": e.index.vault.unreadable.get(q).map_or(0, |s| s.len()),
            "name_from": t.name_from, "history": t.history,
            "columns": t.columns.iter().map(|(n, c)| (n.clone(), c.to_json())).collect::<Map<_, _>>(),
            "checks": t.checks.iter().cloned().collect::<Map<_, _>>(),
            "check_descriptions": t.check_descriptions.iter().map(|(n, d)| (n.clone(), Value::String(d.clone()))).collect::<Map<_, _>>(),
            "base": crate::bases::path_of(&e.index.schema, q),
        }));
    }
    let views: Vec<Value> = e
        .index
        .schema
        .views
        .iter()
        .filter(|(_, v)| only.as_ref().is_none_or(|o| e.index.schema.resolve(&v.table).ok().as_ref() == Some(o)))
        .map(|(q, v)| {
            let mut j = v.to_json();
            j["name"] = short(q).into();
            j["qualified"] = q.clone().into();
            j["base"] = crate::bases::path_of(&e.index.schema, q).into();
            j
        })
        .collect();
    // The names the vault's devices were given (settings.rs), by device id.
    let devices =
        settings::device_names(e.store.under("settings.").filter_map(|p| Some((p.as_str(), e.store.text(p)?))));
    let mut out = json!({"tables": tables, "views": views, "settings": e.settings, "devices": devices});
    if let Some(err) = &e.index.schema_error {
        // An agent that skips `schema_error` must not read an empty list as an
        // empty database, nor the schema kept from before as the file's.
        let listed = match tables.is_empty() {
            true => "metastore.yaml could not be read when the engine opened, so it knows no table: tables is empty for that reason, not because the database has none",
            false => "the tables are those of the schema the engine had before metastore.yaml stopped reading",
        };
        out["schema_error"] = err.clone().into();
        out["hint"] = format!("{listed}. {FIX_METASTORE}: until it reads, no write runs.").into();
    }
    Ok(out)
}

/// Sort keys: "year", "-year", "year desc", "year asc".
fn order_keys(q: &str, def: &TableDef, a: &Args) -> OpResult<Vec<(Vec<String>, bool)>> {
    a.list("order_by")
        .iter()
        .map(|k| {
            let k = k.trim();
            let (name, desc) = if let Some(n) = k.strip_prefix('-') {
                (n.trim(), true)
            } else if let Some(n) = k.strip_suffix(" desc").or_else(|| k.strip_suffix(" DESC")) {
                (n.trim(), true)
            } else {
                (k.strip_suffix(" asc").or_else(|| k.strip_suffix(" ASC")).unwrap_or(k).trim(), false)
            };
            let path: Vec<String> = name.split('.').map(str::to_string).collect();
            if !matches!(path[0].as_str(), "path" | "id") && def.column(&path[0]).is_none() {
                return fail(Failure::bad_input(
                    "select_rows",
                    format!(
                        "order_by: no column \"{}\" in {q}{}",
                        path[0],
                        crate::names::did_you_mean(&path[0], def.column_names())
                    ),
                    "order_by takes \"column\", \"-column\" or \"column desc\".",
                ));
            }
            Ok((path, desc))
        })
        .collect()
}

/// The version a read asks for (`version`, or the last commit at `timestamp`).
pub(crate) fn asked_version(e: &Sees, op: &str, q: &str, a: &Args) -> OpResult<Option<u64>> {
    // Both would leave one unread: restore_table would go back to the version,
    // whatever the moment said.
    // (`get` takes a null for not given.)
    if a.get("version").is_some() && a.get("timestamp").is_some() {
        return fail(Failure::bad_input(
            op,
            "give version or timestamp, not both",
            "describe_history lists each version with its timestamp.",
        ));
    }
    if let Some(v) = a.int("version") {
        if v < 0 {
            return fail(Failure::bad_input(
                op,
                format!("version {v} is negative"),
                "Versions count from 0: describe_history lists them.",
            ));
        }
        return Ok(Some(v as u64));
    }
    let Some(ts) = a.str("timestamp") else { return Ok(None) };
    let ms = crate::time::parse(ts).ok_or_else(|| {
        Failure::bad_input(
            op,
            format!("timestamp \"{ts}\" is not an ISO date or date-time"),
            "timestamp takes 2026-10-12 or 2026-10-12T16:52:23Z.",
        )
    })?;
    match e.past().version_at(op, q, ms)? {
        Some(v) => Ok(Some(v)),
        None => fail(Failure::refused(
            op,
            vec![format!("{q} has no version at or before {ts}")],
            "describe_history lists the versions and their timestamps.",
        )),
    }
}

pub(crate) fn select(e: &Sees, a: &Args) -> OpResult<Value> {
    let op = "select_rows";
    let travel = a.get("version").is_some() || a.get("timestamp").is_some();
    let q = if travel { history_table(e, op, a.req("table"))? } else { table(e, op, a.req("table"))? };
    let version = asked_version(e, op, &q, a)?;
    // The latest version is the table as the vault holds it.
    let current =
        e.index.schema.tables.contains_key(&q) && version.is_some() && version == crate::log::latest(e.store, &q);
    // A read of a page of a version, unfiltered and in path order, reads the texts
    // of that page only.
    let whole = a.get("where").is_some() || a.get("order_by").is_some();
    let limit = a.int("limit").unwrap_or(100);
    let offset = a.int("offset").unwrap_or(0).max(0) as usize;
    let state = match version {
        Some(v) if !current => Some(crate::log::replay::state_at(e.store, op, &q, v)?),
        _ => None,
    };
    let total_at = state.as_ref().filter(|_| !whole).map(|s| s.rows.len());
    let page_at =
        state.as_ref().filter(|_| !whole).map(|s| s.with_rows(s.rows.iter().skip(offset).take(limit.max(0) as usize)));
    let at = match page_at.as_ref().or(state.as_deref()) {
        Some(s) => Some(e.past().rows_at(op, &q, s)?),
        None => None,
    };
    let def = match &at {
        Some((d, _)) => d,
        None => &e.index.schema.tables[&q],
    };
    let cols = a.list("columns");
    known_columns(op, &q, def, &cols)?;
    let filter = a.get("where").map(|w| compile_where_def(&e.index.schema, op, &q, def, w)).transpose()?;
    let order = order_keys(&q, def, a)?;
    if !(0..=10_000).contains(&limit) {
        return fail(Failure::bad_input(
            op,
            format!("limit {limit} is out of range"),
            "limit takes 0 to 10000; page with offset.",
        ));
    }
    let page = Page { offset, limit: limit as usize };
    let ctx = Ctx { schema: &e.index.schema, vault: &e.index.vault };
    let mut out = match &at {
        None => {
            let hits = e.index.vault.table_rows(&q).collect();
            let version = |p: &str| e.index.vault.get(p).map(|n| super::rows::version_token(&n.hash));
            pick(&ctx, hits, |p| e.index.vault.row(p), version, def, filter.as_ref(), &order, &cols, page)
        }
        Some((_, rows)) => {
            let lk = crate::log::replay::AtVersion::new(ctx, rows);
            let hits = rows.keys().copied().collect();
            // Only the page was read: it is the whole of what `pick` sees.
            let page = if total_at.is_some() { Page { offset: 0, limit: page.limit } } else { page };
            let mut out =
                pick(&lk, hits, |p| rows.get(p).map(|(r, _)| r), |_| None, def, filter.as_ref(), &order, &cols, page);
            if let Some(total) = total_at {
                out["total"] = total.into();
                out.as_object_mut().map(|m| m.remove("next_offset"));
                if limit > 0 && offset + (limit as usize) < total {
                    out["next_offset"] = (offset + limit as usize).into();
                }
            }
            out
        }
    };
    if at.is_none() {
        case_hint(e, &q, a, &mut out);
    }
    out["table"] = q.into();
    if let Some(v) = version {
        out["version"] = v.into();
    }
    Ok(out)
}

/// The columns asked for, each the table's (or `id`, `path`).
fn known_columns(op: &str, q: &str, def: &TableDef, cols: &[String]) -> OpResult<()> {
    match cols.iter().find(|c| !matches!(c.as_str(), "id" | "path") && def.column(c).is_none()) {
        Some(c) => fail(Failure::bad_input(
            op,
            format!("columns: no column \"{c}\" in {q}{}", crate::names::did_you_mean(c, def.column_names())),
            format!("The columns of {q}: {}.", def.column_names().collect::<Vec<_>>().join(", ")),
        )),
        None => Ok(()),
    }
}

/// Nothing found in the rows as they are: the answer says so when case is why.
fn case_hint(e: &Sees, q: &str, a: &Args, out: &mut Value) {
    let (Some(w), true) = (a.get("where"), out["total"] == 0) else { return };
    if let Some(h) = no_match_hint(e, q, w) {
        out["hint"] = h.into();
    }
}

/// Why `w` matched no row of `q` when case is why (case_hint.rs), for the
/// reads and the writes that take a filter.
pub(crate) fn no_match_hint(e: &Sees, q: &str, w: &Value) -> Option<String> {
    let ctx = Ctx { schema: &e.index.schema, vault: &e.index.vault };
    crate::case_hint::hint(&ctx, e.index.vault.table_rows(q), str::to_string, w)
}

#[derive(Clone, Copy)]
struct Page {
    offset: usize,
    limit: usize,
}

/// Filters, sorts, pages and shapes rows: `{total, rows, next_offset}`.
#[allow(clippy::too_many_arguments)]
fn pick<'a, L: Lookup<Row = &'a str>>(
    lk: &L,
    hits: Vec<&'a str>,
    row_of: impl Fn(&str) -> Option<&'a Row>,
    version_of: impl Fn(&str) -> Option<String>,
    def: &TableDef,
    filter: Option<&Filter>,
    order: &[(Vec<String>, bool)],
    cols: &[String],
    page: Page,
) -> Value {
    let mut hits: Vec<&str> = hits.into_iter().filter(|p| filter.is_none_or(|f| f.eval(lk, p))).collect();
    if !order.is_empty() {
        let mut keyed: Vec<(Vec<Option<Value>>, &str)> =
            hits.iter().map(|p| (order.iter().map(|(k, _)| lk.get(p, k)).collect(), *p)).collect();
        keyed.sort_by(|(ka, pa), (kb, pb)| {
            for (i, (_, desc)) in order.iter().enumerate() {
                // Absent values sort last, whichever the direction.
                let (x, y) = (ka[i].as_ref(), kb[i].as_ref());
                let o = if *desc && x.is_some() && y.is_some() { cmp_values(x, y).reverse() } else { cmp_values(x, y) };
                if o != Ordering::Equal {
                    return o;
                }
            }
            pa.cmp(pb)
        });
        hits = keyed.into_iter().map(|(_, p)| p).collect();
    }
    let total = hits.len();
    let rows: Vec<Value> = hits
        .into_iter()
        .skip(page.offset)
        .take(page.limit)
        .map(|p| shape(def, p, row_of(p), cols, version_of(p)))
        .collect();
    // Moved in, not through json! (which would copy every row).
    let mut out = json!({"table": null, "total": total});
    out["rows"] = Value::Array(rows);
    if page.limit > 0 && page.offset + page.limit < total {
        out["next_offset"] = (page.offset + page.limit).into();
    }
    out
}

/// Absent values sort last; numbers by value; the rest by their text.
fn cmp_values(a: Option<&Value>, b: Option<&Value>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, _) => Ordering::Greater,
        (_, None) => Ordering::Less,
        (Some(x), Some(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(p), Some(q)) => p.partial_cmp(&q).unwrap_or(Ordering::Equal),
            _ => crate::validate::scalar_text(x).cmp(&crate::validate::scalar_text(y)),
        },
    }
}

pub(crate) fn row_value(e: &Sees, path: &str, cols: &[String]) -> Value {
    match e.index.vault.row(path) {
        Some(r) => shape(
            &e.index.schema.tables[&*r.table],
            path,
            Some(r),
            cols,
            e.index.vault.get(path).map(|n| super::rows::version_token(&n.hash)),
        ),
        None => json!({"path": path}),
    }
}

/// A row as reads answer it: its path, then the columns asked for (all when none).
fn shape(def: &TableDef, path: &str, r: Option<&Row>, cols: &[String], version: Option<String>) -> Value {
    let mut m = Map::with_capacity(3 + if cols.is_empty() { def.columns.len() } else { cols.len() });
    m.insert("path".into(), path.into());
    if let Some(v) = version {
        m.insert("_version".into(), v.into());
    }
    let Some(r) = r else { return Value::Object(m) };
    // Through a map of its own when the row holds its JSON alone: a read
    // paging through a large table would otherwise leave a map on each row.
    let parsed = r.values.parsed();
    let values = parsed.as_ref().unwrap_or(&r.values);
    if cols.is_empty() {
        m.insert("id".into(), r.id_str().as_deref().into());
        for (name, _) in &def.columns {
            if let Some(v) = values.get(name) {
                m.insert(name.clone(), v.clone());
            }
        }
    } else {
        for c in cols {
            let v = match c.as_str() {
                "id" => r.id_str().as_deref().into(),
                "path" => continue,
                _ => values.get(c).cloned().unwrap_or(Value::Null),
            };
            m.insert(c.clone(), v);
        }
    }
    Value::Object(m)
}

pub(crate) fn read_note(e: &Sees, a: &Args) -> OpResult<Value> {
    let path = a.req("path");
    if let Some(v) = a.int("version") {
        let Some(q) = e.index.schema.table_of_path(path).map(str::to_string) else {
            return fail(Failure::refused(
                "read_note",
                vec![format!("\"{path}\" is not under a table's folder")],
                "version reads a row of a table as of a version of that table.",
            ));
        };
        let state = crate::log::replay::state_at(e.store, "read_note", &q, v.max(0) as u64)?;
        // That row alone is read.
        let one = state.with_rows(state.rows.get_key_value(path).into_iter());
        let (_, rows) = e.past().rows_at("read_note", &q, &one)?;
        let Some((r, text)) = rows.get(path) else {
            return fail(Failure::refused(
                "read_note",
                vec![format!("{path} was not a row of {q} at version {v}")],
                "table_changes lists when rows came and went.",
            ));
        };
        return Ok(json!({"path": path, "table": q, "version": v, "row_id": r.id, "values": r.values, "text": text}));
    }
    let Some(n) = e.index.vault.get(path) else {
        // A note's name, as a link names it ("Charade"), first; then a typo.
        let named = e.index.vault.resolve(path, "");
        let hint = match named.or_else(|| crate::names::closest(path, e.index.vault.notes.keys().map(|p| &**p))) {
            Some(c) => format!("Did you mean \"{c}\"? Paths are relative to the vault, with .md."),
            None => "Paths are relative to the vault, with .md (select_rows answers each row's path).".into(),
        };
        return fail(Failure::refused("read_note", vec![format!("no note at \"{path}\"")], hint));
    };
    let body_start = frontmatter::parse(n.text()).map(|p| p.body_start).unwrap_or(0);
    let mut out = json!({"path": path, "_version": super::rows::version_token(&n.hash), "text": n.text(), "body": &n.text()[body_start..]});
    match &n.state {
        State::Row(r) => {
            out["table"] = r.table.to_string().into();
            out["row_id"] = r.id_str().as_deref().into();
            out["values"] = Value::Object(r.values.to_map());
        }
        State::Unreadable { table, message } => {
            out["table"] = table.clone().into();
            out["unreadable"] = message.clone().into();
        }
        State::Plain => {}
    }
    Ok(out)
}

pub(crate) fn check(e: &Sees, a: &Args) -> OpResult<Value> {
    // Without a table too (with one, `table` refuses it): "no row breaks a
    // rule" would be said of no schema.
    let only = match a.str("table") {
        Some(t) => Some(table(e, "check_table", t)?),
        None => schema_read(e, "check_table").map(|()| None)?,
    };
    let ctx = Ctx { schema: &e.index.schema, vault: &e.index.vault };
    let (mut rows_checked, mut tables_checked, mut total) = (0, 0, 0);
    let mut violations = vec![];
    for q in e.index.schema.tables.keys() {
        if only.as_ref().is_some_and(|o| o != q) {
            continue;
        }
        tables_checked += 1;
        let paths: BTreeSet<&str> = e.index.vault.table_rows(q).chain(e.index.vault.unreadable_rows(q)).collect();
        for p in paths {
            rows_checked += 1;
            let v = ctx.check_row(p);
            if !v.is_empty() {
                total += v.len();
                let mut j = row_json(p, &v);
                if only.is_none() {
                    j["table"] = q.clone().into();
                }
                violations.push(j);
            }
        }
    }
    let mut out = json!({"table": a.str("table"), "rows_checked": rows_checked, "total": total});
    out["violations"] = Value::Array(violations);
    if only.is_none() {
        out["tables_checked"] = tables_checked.into();
        // Store files another device (or anyone) put there that were not taken
        // in: no row breaks a rule for them, but the person must hear of them.
        if !e.store.distrusted().is_empty() {
            out["store_problems"] = e.store.distrusted().into();
        }
    }
    Ok(out)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(s) if s.starts_with("[[") => "link",
        Value::String(s) if crate::time::is_date(s) => "date",
        Value::String(s) if crate::time::is_datetime(s) => "datetime",
        Value::String(_) => "text",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

/// The type a set of observed types suggests.
fn suggest(types: &BTreeMap<&'static str, usize>) -> &'static str {
    let seen: Vec<&str> = types.keys().copied().filter(|t| *t != "null").collect();
    match seen.as_slice() {
        [one] if *one != "object" => one,
        ["integer", "number"] => "number",
        ["date", "datetime"] => "datetime",
        _ => "text",
    }
}

pub(crate) fn infer(e: &Sees, a: &Args) -> OpResult<Value> {
    let (paths, def) = infer_scope(e, a)?;
    let mut stats: BTreeMap<String, KeyStats> = BTreeMap::new();
    let mut skipped = vec![];
    for p in &paths {
        let Some(n) = e.index.vault.get(p) else { continue };
        let parsed = match frontmatter::parse(n.text()) {
            Ok(x) => x,
            Err(m) => {
                skipped.push(json!({"path": p, "reason": m}));
                continue;
            }
        };
        for (k, v) in &parsed.values {
            if k == "table" || k == "id" || def.is_some_and(|d| d.column(k).is_some()) {
                continue;
            }
            stats.entry(k.clone()).or_default().add(v);
        }
    }
    let columns: Vec<Value> = stats.iter().map(|(k, s)| s.column(k)).collect();
    let hint = if def.is_some() {
        "add these with add_column, each with a description of what it holds (null here; dense: false unless every row should carry the front matter key), or drop those front matter keys from the rows"
    } else {
        "create_table with these columns (and folder) makes the notes a table; give each a description of what it holds"
    };
    Ok(json!({"files": paths.len(), "paths": paths, "skipped": skipped, "columns": columns, "hints": [hint]}))
}

/// The notes infer_table reads: a table's rows (and its definition), or a folder's notes.
fn infer_scope<'e>(e: &'e Sees, a: &Args) -> OpResult<(Vec<String>, Option<&'e crate::schema::TableDef>)> {
    match (a.str("table"), a.str("folder")) {
        (Some(t), _) => {
            let q = table(e, "infer_table", t)?;
            let vault = &e.index.vault;
            let mut p: Vec<String> = vault.table_rows(&q).chain(vault.unreadable_rows(&q)).map(str::to_string).collect();
            p.sort();
            Ok((p, e.index.schema.tables.get(&q)))
        }
        (None, Some(f)) => {
            let folder = format!("{}/", f.trim_matches('/'));
            if f.contains("..") {
                return fail(Failure::bad_input(
                    "infer_table",
                    format!("folder \"{f}\" leaves the vault"),
                    "Name a folder inside the vault, relative to its root.",
                ));
            }
            Ok((e.index.vault.paths_under(&folder), None))
        }
        (None, None) => fail(Failure::bad_input("infer_table", "give a table or a folder", "infer_table {\"table\": \"film\"} lists undeclared keys; {\"folder\": \"Books\"} proposes columns for a folder of notes.")),
    }
}

/// What infer_table learns of one front matter key across the notes.
#[derive(Default)]
struct KeyStats {
    present: usize,
    filled: usize,
    distinct: BTreeSet<String>,
    types: BTreeMap<&'static str, usize>,
    items: BTreeMap<&'static str, usize>,
    examples: Vec<Value>,
}

impl KeyStats {
    fn add(&mut self, v: &Value) {
        self.present += 1;
        *self.types.entry(json_type(v)).or_default() += 1;
        if !v.is_null() && v != &Value::Array(vec![]) && v != "" {
            self.filled += 1;
            if self.distinct.insert(v.to_string()) && self.examples.len() < 3 {
                self.examples.push(v.clone());
            }
        }
        if let Value::Array(items) = v {
            for i in items.iter().filter(|i| !i.is_null()) {
                *self.items.entry(json_type(i)).or_default() += 1;
            }
        }
    }

    /// The column this key suggests, with what was seen.
    fn column(&self, name: &str) -> Value {
        let ty = suggest(&self.types);
        let mut c = json!({"name": name, "type": ty, "description": null, "stats": {
            "present": self.present, "filled": self.filled, "distinct": self.distinct.len(),
            "types": self.types, "examples": self.examples}});
        if ty == "list" {
            c["items"] = suggest(&self.items).into();
        }
        c
    }
}

pub(crate) fn configure(e: &mut Keeps, a: &Args, now_ms: i64) -> OpResult<Outcome> {
    let mut s = e.settings.clone();
    if let Some(b) = a.bool("autoRecompute") {
        s.auto_recompute = b;
    }
    if let Some(b) = a.bool("repairLinksOnHandMove") {
        s.repair_links_on_hand_move = b;
    }
    if let Some(b) = a.bool("bases") {
        s.bases = b;
    }
    if let Some(b) = a.bool("semanticIndex") {
        s.semantic_index = b;
    }
    for (key, field) in
        [("semanticWeight", &mut s.semantic_weight), ("semanticCodeWeight", &mut s.semantic_code_weight)]
    {
        if let Some(w) = a.get(key) {
            *field = w.as_f64().filter(|x| (0.0..=1.0).contains(x)).ok_or_else(|| {
                Failure::bad_input(
                    "configure_database",
                    format!("{key} {w}: a number from 0 (words only) to 1 (meaning only)"),
                    "Give 0.97 for meaning with words to break ties, 0.5 for both alike.",
                )
            })?;
        }
    }
    if let Some(d) = a.int("journalRetentionDays") {
        if !(settings::RETENTION_FLOOR_DAYS as i64..=36_500).contains(&d) {
            return fail(Failure::bad_input(
                "configure_database",
                format!("journalRetentionDays {d} is out of range"),
                "Keep the journal 7 to 36500 days: a week at least, so that no setting, here or synced from another device, can wipe recent history.",
            ));
        }
        s.journal_retention_days = d as u32;
    }
    let name = device_name_arg(&e.sees(), a)?;
    let changed = s != *e.settings;
    let mine_path = e.device.as_deref().map(settings::device_file);
    let mut mine =
        mine_path.as_ref().and_then(|p| e.store.text(p)).and_then(settings::Changes::parse).unwrap_or_default();
    let renamed = name.is_some() && name != mine.name;
    let store = match mine_path {
        // Each device writes only its own changes, field by field (settings.rs),
        // and its name beside them.
        Some(path) if changed || renamed => {
            if changed {
                // After every change this device has seen, whatever time another
                // device's file claims: the person's latest word here wins.
                let seen =
                    e.store.under("settings.").filter_map(|p| e.store.text(p)).filter_map(settings::Changes::parse);
                let after =
                    seen.filter_map(|c| c.newest_ms()).max().map_or(now_ms, |m| now_ms.max(m.saturating_add(1)));
                mine.record(e.settings, &s, after);
            }
            if renamed {
                mine.name = name;
                mine.format = 1;
            }
            vec![StoreWrite::put(path, mine.to_text())]
        }
        None if changed => vec![StoreWrite::put(settings::FILE, s.to_text())],
        _ => vec![],
    };
    let mut answer = json!({"ok": true, "op": "configure_database", "changed": changed || renamed, "settings": s});
    if e.device.is_some() {
        answer["device_name"] = mine.name.clone().into();
    }
    *e.settings = s;
    for w in &store {
        e.store.wrote(w);
    }
    Ok(Outcome { store, ..Outcome::done(answer) })
}

/// configure_database's `deviceName`, checked: a name needs a device to carry
/// it (an engine without a device id writes settings.json, which no device owns).
fn device_name_arg(e: &Sees, a: &Args) -> OpResult<Option<String>> {
    let Some(given) = a.str("deviceName") else { return Ok(None) };
    let bad = |m: String| {
        Failure::bad_input(
            "configure_database",
            m,
            "Name this device in a few words a person recognises, such as \"Linux laptop\" or \"Anna's phone\": every device of the vault shows its history by that name.",
        )
    };
    if e.device.is_none() {
        return fail(bad("deviceName: this engine has no device id, so there is no device to name".into()));
    }
    settings::device_name(given).map(Some).map_err(|m| bad(m).into())
}
