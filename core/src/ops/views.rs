//! View writes (create, drop, rename) and reads of a view through select_rows.
//! A view lives in metastore.yaml, so each write is a schema change: journaled,
//! undone with the file's text.

use super::args::Args;
use super::context::{Plans, Sees};
use super::read::table;
use super::tables::{compiled, qualify};
use crate::error::{fail, Failure, OpResult};
use crate::names;
use crate::schema::{short, valid_qualified, Schema};
use crate::tx::Tx;
use crate::views::ViewDef;
use serde_json::{json, Map, Value};

/// A view by name, or the refusal that lists the views.
fn view(e: &Sees, op: &str, name: &str) -> OpResult<String> {
    let s = &e.index.schema;
    s.resolve_view(name).ok_or_else(|| {
        let all: Vec<&str> = s.views.keys().map(|k| short(k)).collect();
        Failure::refused(
            op,
            vec![format!("no view \"{name}\"{}", names::did_you_mean(name, all.iter().copied()))],
            if all.is_empty() {
                "There are no views yet: create_view makes one.".to_string()
            } else {
                format!("The views: {}.", all.join(", "))
            },
        )
        .with_docs("guides/database-objects/views")
        .into()
    })
}

/// A new view's qualified name, refused when it is not a name or is taken by a
/// table or a view (short names included, so that a name reads one object).
fn free_name(e: &Sees, op: &str, name: &str) -> OpResult<String> {
    let q = qualify(name);
    if !valid_qualified(&q) {
        return fail(Failure::bad_input(
            op,
            format!("\"{name}\" is not a valid view name"),
            "Name a view with lower case letters, digits and _ (to_watch, or main.public.to_watch).",
        ));
    }
    let s = &e.index.schema;
    let clash = s
        .tables
        .keys()
        .map(|t| (t, "table"))
        .chain(s.views.keys().map(|v| (v, "view")))
        .find(|(k, _)| **k == q || short(k) == short(&q));
    if let Some((k, kind)) = clash {
        return fail(Failure::refused(
            op,
            vec![format!("{q} would share its name with the {kind} {k}")],
            "Pick another name.",
        ));
    }
    Ok(q)
}

pub(crate) fn create_view(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = free_name(&e.sees(), a.op, a.req("name"))?;
    let t = table(&e.sees(), a.op, a.req("table"))?;
    let mut def = Map::new();
    def.insert("table".into(), t.clone().into());
    for k in ["description", "columns", "where", "order_by"] {
        if let Some(v) = a.get(k) {
            def.insert(k.into(), v.clone());
        }
    }
    let v = ViewDef::from_json(&Value::Object(def), &format!("view {q}"))
        .map_err(|m| Failure::bad_input(a.op, m, "A view is {table, columns, where, order_by}."))?;
    crate::views::check(&e.index.schema, &q, &v).map_err(|m| {
        Failure::bad_input(
            a.op,
            m,
            "columns, where and order_by name columns of the table, as select_rows takes them; describe_database lists them.",
        )
        .with_docs("guides/database-objects/views")
    })?;
    // views::check has parsed the where: a filter that does not parse is refused there.
    if let Some(f) = v.filter.as_ref().and_then(|w| crate::filter::Filter::parse(w).ok()) {
        super::read::typed(&e.index.schema, a.op, &e.index.schema.tables[&t], &f, "where")?;
    }
    let mut s = e.index.schema.clone();
    s.views.insert(q.clone(), v);
    let s = compiled(a.op, s)?;
    e.index.tx_schema(tx, s);
    Ok(format!("create view {} of {}", short(&q), short(&t)))
}

pub(crate) fn drop_view(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = view(&e.sees(), a.op, a.req("name"))?;
    let mut s = e.index.schema.clone();
    let v = s.views.remove(&q).expect("resolved");
    tx.table = e.index.schema.resolve(&v.table).ok();
    let s = compiled(a.op, s)?;
    e.index.tx_schema(tx, s);
    Ok(format!("drop view {}", short(&q)))
}

pub(crate) fn rename_view(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = view(&e.sees(), a.op, a.req("name"))?;
    let new_name = a.req("new_name");
    let full = if new_name.contains('.') {
        new_name.to_string()
    } else {
        format!("{}.{new_name}", q.rsplit_once('.').map_or("main.public", |(p, _)| p))
    };
    let nq = free_name(&e.sees(), a.op, &full)?;
    let mut s = e.index.schema.clone();
    let v = s.views.remove(&q).expect("resolved");
    tx.table = e.index.schema.resolve(&v.table).ok();
    s.views.insert(nq.clone(), v);
    let s = compiled(a.op, s)?;
    e.index.tx_schema(tx, s);
    Ok(format!("rename view {} to {}", short(&q), short(&nq)))
}

/// The views that read `table` (or one of its columns): the refusal of a drop
/// they depend on, or None.
pub(crate) fn dependent_views(s: &Schema, op: &str, table: &str, column: Option<&str>) -> OpResult<()> {
    let users: Vec<&str> = s.views.iter().filter(|(_, v)| v.uses(s, table, column)).map(|(n, _)| short(n)).collect();
    if users.is_empty() {
        return Ok(());
    }
    let what = match column {
        Some(c) => format!("column {c} of {}", short(table)),
        None => format!("table {}", short(table)),
    };
    fail(
        Failure::refused(
            op,
            vec![format!(
                "the view{} {} read{} {what}",
                plural(users.len()),
                users.join(", "),
                if users.len() == 1 { "s" } else { "" }
            )],
            format!(
                "Drop the view{} first (drop_view), or create {} again without it.",
                plural(users.len()),
                if users.len() == 1 { "it" } else { "them" }
            ),
        )
        .with_docs("guides/database-objects/views"),
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// select_rows: on a table, or on a view (a name no table has).
pub(crate) fn select_rows(e: &Sees, a: &Args) -> OpResult<Value> {
    let name = a.req("table");
    match e.index.schema.resolve_view(name) {
        Some(v) if e.index.schema.resolve(name).is_err() => select(e, a, &v),
        _ => super::read::select(e, a),
    }
}

/// select_rows on a view: the view's table, read with the view's filter and the
/// caller's (both must match), the caller's sort or the view's, and the caller's
/// columns (among the view's) or the view's.
fn select(e: &Sees, a: &Args, q: &str) -> OpResult<Value> {
    let v = &e.index.schema.views[q];
    let op = a.op;
    let mut map = a.map.clone();
    map.insert("table".into(), v.table.clone().into());
    let filter = match (&v.filter, a.get("where")) {
        (Some(mine), Some(theirs)) => Some(json!({"and": [mine, theirs]})),
        (Some(mine), None) => Some(mine.clone()),
        (None, theirs) => theirs.cloned(),
    };
    if let Some(f) = filter {
        map.insert("where".into(), f);
    }
    if a.get("order_by").is_none() && !v.order_by.is_empty() {
        map.insert("order_by".into(), v.order_by.clone().into());
    }
    let asked = a.list("columns");
    if asked.is_empty() {
        if !v.columns.is_empty() {
            map.insert("columns".into(), v.columns.clone().into());
        }
    } else if let Some(c) = asked.iter().find(|c| !v.columns.is_empty() && !v.columns.contains(c)) {
        return fail(Failure::bad_input(
            op,
            format!("columns: the view {} does not show \"{c}\"", short(q)),
            format!(
                "The view's columns: {}; select_rows on {} reads the others.",
                v.columns.join(", "),
                short(&v.table)
            ),
        ));
    }
    let mut out = super::read::select(e, &Args { op: a.op, map })?;
    out["view"] = q.into();
    Ok(out)
}
