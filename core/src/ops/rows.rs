//! Row writes: insert_row(s), update_row(s), delete_rows, merge_rows,
//! recompute_columns.

use super::args::Args;
use super::context::{Plans, Sees};
use super::read::{compile_where, no_match_hint, table};
use crate::error::{fail, Failure, OpResult};
use crate::filter::Lookup;
use crate::frontmatter;
use crate::names;
use crate::schema::{short, ColType, ARCHIVE, ROOT};
use crate::tx::Tx;
use crate::validate::Ctx;
use serde_json::{Map, Value};

pub(crate) fn insert_row(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = table(&e.sees(), a.op, a.req("table"))?;
    let values = a.obj("values").cloned().unwrap_or_default();
    insert(e, tx, a.op, &q, &values, a.str("body").unwrap_or(""))?;
    Ok(format!("insert into {}", short(&q)))
}

pub(crate) fn insert_rows(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = table(&e.sees(), a.op, a.req("table"))?;
    let rows = a.get("rows").and_then(Value::as_array).cloned().unwrap_or_default();
    for (i, r) in rows.iter().enumerate() {
        let values = row_object(a.op, i, r)?;
        insert(e, tx, a.op, &q, values, "").map_err(|s| s.map_failure(|f| at(f, i)))?;
    }
    Ok(format!("insert {} rows into {}", rows.len(), short(&q)))
}

pub(crate) fn update_row(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = table(&e.sees(), a.op, a.req("table"))?;
    let path = a.req("path");
    if !e.index.vault.is_row_of(path, &q) {
        return fail(not_a_row(&e.sees(), a.op, &q, path));
    }
    if let Some(m) = a.str("if_match") {
        check_versions(&e.sees(), a.op, [(path, m)])?;
    }
    let set = a.obj("set").cloned().unwrap_or_default();
    update(e, tx, a.op, &q, path, &set, &a.list("remove"), a.str("body"))?;
    Ok(format!("update {}", short(&q)))
}

pub(crate) fn update_rows(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = table(&e.sees(), a.op, a.req("table"))?;
    let paths = rows_where(&e.sees(), tx, a.op, &q, a.get("where").unwrap_or(&Value::Null))?;
    let wanted = versions_map(a)?;
    check_versions(&e.sees(), a.op, wanted.iter().map(|(p, t)| (p.as_str(), t.as_str())))?;
    let set = a.obj("set").cloned().unwrap_or_default();
    let remove = a.list("remove");
    for p in &paths {
        update(e, tx, a.op, &q, p, &set, &remove, None)?;
    }
    Ok(format!("update {}", short(&q)))
}

pub(crate) fn recompute_columns(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = table(&e.sees(), a.op, a.req("table"))?;
    let rules = &e.index.schema.rules[&q];
    let all: Vec<String> = rules.generated.iter().map(|(c, _)| c.clone()).collect();
    let cols = a.list("columns");
    for c in &cols {
        if !all.contains(c) {
            return fail(Failure::bad_input(
                a.op,
                format!(
                    "\"{c}\" is not a generated column of {q}{}",
                    names::did_you_mean(c, all.iter().map(String::as_str))
                ),
                format!(
                    "The generated columns of {q}: {}.",
                    if all.is_empty() { "none".into() } else { all.join(", ") }
                ),
            ));
        }
    }
    let paths: Vec<String> = e.index.vault.table_rows(&q).map(str::to_string).collect();
    if !cols.is_empty() {
        tx.only_generated = Some(cols.clone());
    }
    for p in &paths {
        e.index.refresh_columns(tx, p, (!cols.is_empty()).then_some(cols.as_slice()));
    }
    let which = if cols.is_empty() { all.join(", ") } else { cols.join(", ") };
    Ok(format!("recompute {which} of {}", short(&q)))
}

/// The version token of a note: the start of its text's SHA-256.
pub(crate) fn version_token(hash: &crate::texthash::TextHash) -> String {
    token_of(&hash.hex()).to_string()
}

fn token_of(hex: &str) -> &str {
    &hex[..16.min(hex.len())]
}

/// Refuses, with the rows as they are now, when a note changed since the read
/// that gave its version token.
fn check_versions<'a>(e: &Sees, op: &str, wanted: impl IntoIterator<Item = (&'a str, &'a str)>) -> OpResult<()> {
    let mut reasons = vec![];
    let mut current = vec![];
    for (path, token) in wanted {
        let token = token.trim();
        let full = e.index.vault.get(path).map_or_else(|| "absent".to_string(), |n| n.hash.to_string());
        let now = token_of(&full);
        // The token a read gave, or (from a client that hashed the text itself) a
        // long enough start of the text's SHA-256.
        if !(token == now || (token.len() >= 8 && full.starts_with(token))) {
            reasons.push(format!("{path} changed since it was read (if_match {token}, now {now})"));
            current.push(super::read::row_value(e, path, &[]));
        }
    }
    if reasons.is_empty() {
        return Ok(());
    }
    fail(Failure::refused(op, reasons, "Read the rows again (select_rows or read_note), then write from what they hold now: someone changed them since your read.")
        .with_details(serde_json::json!({"current": current})))
}

/// `if_match` of a write naming several rows: {path: token}; every path must be one it writes.
fn versions_map(a: &Args) -> OpResult<Vec<(String, String)>> {
    let Some(m) = a.obj("if_match") else { return Ok(vec![]) };
    m.iter()
        .map(|(p, t)| match t.as_str() {
            Some(t) => Ok((p.clone(), t.to_string())),
            None => fail(Failure::bad_input(
                a.op,
                format!("if_match[\"{p}\"] must be a version token (a string)"),
                "if_match maps each path to the _version a read gave for it.",
            )),
        })
        .collect()
}

/// An item of `rows`: an object of column values.
fn row_object<'a>(op: &str, i: usize, r: &'a Value) -> OpResult<&'a Map<String, Value>> {
    r.as_object().ok_or_else(|| {
        Failure::bad_input(
            op,
            format!("rows[{i}] must be an object of column values"),
            "rows: [{\"title\": \"Nosferatu\", \"year\": 1922}, …]",
        )
        .into()
    })
}

fn at(mut f: Failure, i: usize) -> Failure {
    f.reasons = f.reasons.iter().map(|r| format!("rows[{i}]: {r}")).collect();
    f
}

fn not_a_row(e: &Sees, op: &str, q: &str, path: &str) -> Failure {
    if path.split(['/', '\\']).any(|c| c == ".." || c == ".") || path.starts_with('/') || path.contains('\\') {
        return Failure::bad_input(
            op,
            format!("\"{path}\" is not a path inside the vault"),
            "Paths are relative to the vault root, such as datanotes/main/public/film/Charade.md.",
        );
    }
    let folder = e.index.schema.folder(q);
    let hint = match same_name(e, q, path).or_else(|| names::closest(path, e.index.vault.table_rows(q))) {
        Some(c) => format!("Did you mean \"{c}\"? select_rows answers each row's path."),
        None => format!("The rows of {q} are the notes under {folder}; select_rows answers each row's path."),
    };
    Failure::refused(op, vec![format!("\"{path}\" is not a row of {q}")], hint)
}

/// The one row of `q` whose note has the name `path` ends with, case aside:
/// an agent that gives a row's title ("Charade") or its file's name for its
/// path is shown the path.
fn same_name<'a>(e: &'a Sees, q: &str, path: &str) -> Option<&'a str> {
    let name = |p: &str| names::note_name(p).to_lowercase();
    let wanted = name(path);
    let mut found = e.index.vault.table_rows(q).filter(|r| name(r) == wanted);
    match (found.next(), found.next()) {
        (Some(one), None) => Some(one),
        _ => None,
    }
}

/// Checks the columns a write names and writes links as wiki links.
fn prepare(e: &Sees, op: &str, q: &str, values: &Map<String, Value>) -> OpResult<Vec<(String, Value)>> {
    let def = &e.index.schema.tables[q];
    let mut out = vec![];
    for (k, v) in values {
        let Some(col) = def.column(k) else {
            return fail(Failure::bad_input(
                op,
                format!("no column \"{k}\" in {q}{}", names::did_you_mean(k, def.column_names())),
                format!(
                    "The columns of {q}: {}. add_column declares a new one.",
                    def.column_names().collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        if col.generated.is_some() {
            return fail(Failure::bad_input(
                op,
                format!("\"{k}\" is generated: the engine computes it"),
                "Leave generated columns out; recompute_columns brings them up to date.",
            ));
        }
        let v = match col.scalar_type() {
            ColType::Link => each(v, as_link),
            ColType::Integer => each(v, crate::row_values::as_integer),
            _ => v.clone(),
        };
        out.push((k.clone(), v));
    }
    Ok(out)
}

fn each(v: &Value, f: fn(&Value) -> Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(f).collect()),
        other => f(other),
    }
}

fn as_link(v: &Value) -> Value {
    match v {
        Value::String(s) if !s.trim().is_empty() && !s.starts_with("[[") => Value::String(format!("[[{}]]", s.trim())),
        other => other.clone(),
    }
}

pub(crate) fn insert(
    e: &mut Plans,
    tx: &mut Tx,
    op: &str,
    q: &str,
    values: &Map<String, Value>,
    body: &str,
) -> OpResult<String> {
    let given = prepare(&e.sees(), op, q, values)?;
    let def = e.index.schema.tables[q].clone();
    let id = new_id(e, tx);
    let mut fm: Vec<(String, Value)> = vec![("table".into(), q.into()), ("id".into(), id.clone().into())];
    for (name, col) in &def.columns {
        if let Some((_, v)) = given.iter().find(|(k, _)| k == name) {
            if !v.is_null() {
                fm.push((name.clone(), v.clone()));
            }
        } else if let Some(d) = &col.default {
            fm.push((name.clone(), d.clone()));
        } else if col.dense {
            fm.push((name.clone(), Value::Null));
        }
    }
    let refs: Vec<(&str, &Value)> = fm.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let text = frontmatter::render(&refs, body);
    // Created under its id; settling gives it its name.
    let path = format!("{}{id}.md", e.index.schema.folder(q));
    if !path.starts_with(ROOT) && def.folder.is_none() {
        return fail(Failure::internal(op, "a table folder outside datanotes/"));
    }
    e.index.tx_put(tx, &path, text);
    Ok(path)
}

/// A UUIDv7: the time of the call, then bits from the host's entropy (when it gave
/// some) and the engine's own counter, so that ids never repeat within an engine.
fn new_id(e: &mut Plans, tx: &Tx) -> String {
    *e.ids += 1;
    let ms = tx.now_ms.max(0) as u64;
    let seed = crate::feed::webhook::secret(e.entropy, &format!("id|{}|{}", tx.now_ms, e.ids));
    let mut b = [0u8; 16];
    b[..6].copy_from_slice(&ms.to_be_bytes()[2..]);
    for (i, byte) in b[6..].iter_mut().enumerate() {
        *byte = u8::from_str_radix(&seed[i * 2..i * 2 + 2], 16).unwrap_or(0);
    }
    b[6] = 0x70 | (b[6] & 0x0f);
    b[8] = 0x80 | (b[8] & 0x3f);
    uuid::Uuid::from_bytes(b).hyphenated().to_string()
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn update(
    e: &mut Plans,
    tx: &mut Tx,
    op: &str,
    q: &str,
    path: &str,
    set: &Map<String, Value>,
    remove: &[String],
    body: Option<&str>,
) -> OpResult<()> {
    let set = prepare(&e.sees(), op, q, set)?;
    let def = &e.index.schema.tables[q];
    for r in remove {
        if def.column(r).is_none() {
            return fail(Failure::bad_input(
                op,
                format!("remove: no column \"{r}\" in {q}{}", names::did_you_mean(r, def.column_names())),
                "remove takes the names of columns to take out of the row.",
            ));
        }
    }
    let text = e.index.vault.text(path).unwrap_or_default().to_string();
    let mut set = set;
    // A note adopted as a row (a table over an existing folder) gets its id the
    // first time the engine writes it.
    if e.index.vault.row(path).is_some_and(|r| r.id.is_none()) && !set.is_empty() {
        set.push(("id".into(), Value::String(new_id(e, tx))));
    }
    let refs: Vec<(&str, &Value)> = set.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let rm: Vec<&str> = remove.iter().map(String::as_str).collect();
    let mut new = frontmatter::edit(&text, &refs, &rm);
    if let Some(b) = body {
        new = frontmatter::set_body(&new, b);
    }
    if new != text {
        e.index.tx_put(tx, path, new);
    }
    Ok(())
}

pub(crate) fn delete_rows(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = &table(&e.sees(), a.op, a.req("table"))?;
    let mode = a.str("mode").unwrap_or("archive");
    if mode != "archive" && mode != "trash" {
        return fail(Failure::bad_input(a.op, format!("mode \"{mode}\" is not archive or trash"), "mode: \"archive\" (the default) moves the notes to datanotes/_archive/; \"trash\" moves them to the trash."));
    }
    let paths: Vec<String> = match (a.get("where"), a.get("paths")) {
        (Some(w), None) => rows_where(&e.sees(), tx, a.op, q, w)?,
        (None, Some(_)) => {
            let ps = a.list("paths");
            for p in &ps {
                if !e.index.vault.is_row_of(p, q) {
                    return fail(not_a_row(&e.sees(), a.op, q, p));
                }
            }
            ps
        }
        _ => {
            return fail(Failure::bad_input(
                a.op,
                "give where or paths (one of them)",
                "delete_rows {\"table\": \"film\", \"where\": {\"title\": \"Nosferatu\"}} or {\"paths\": [...]}.",
            ))
        }
    };
    let wanted = versions_map(a)?;
    check_versions(&e.sees(), a.op, wanted.iter().map(|(p, t)| (p.as_str(), t.as_str())))?;
    let folder = e.index.schema.folder(q);
    for p in &paths {
        if mode == "trash" {
            e.index.tx_trash(tx, p);
        } else {
            let rel = p.strip_prefix(&folder).unwrap_or(p);
            let to = free_path(&e.sees(), &format!("{ARCHIVE}{}/{rel}", q.replace('.', "/")));
            e.index.tx_move(tx, p, &to);
        }
    }
    Ok(format!("{mode} {} rows of {}", paths.len(), short(q)))
}

/// The rows of `q` that filter `w` matches. A write that matches none answers,
/// beside its `notes_changed: 0`, why when case is why: an agent that wrote
/// "charade" for "Charade" learns it changed nothing because of that, not that
/// there is no such row.
fn rows_where(e: &Sees, tx: &mut Tx, op: &str, q: &str, w: &Value) -> OpResult<Vec<String>> {
    let f = compile_where(e, op, q, w)?;
    let ctx = Ctx { schema: &e.index.schema, vault: &e.index.vault };
    let paths: Vec<String> = e.index.vault.table_rows(q).filter(|p| f.eval(&ctx, p)).map(str::to_string).collect();
    if paths.is_empty() {
        if let Some(h) = no_match_hint(e, q, w) {
            tx.extra.insert("hint".into(), h.into());
        }
    }
    Ok(paths)
}

/// `path`, or `path` with " 2", " 3"… before `.md` when a note holds it.
pub(crate) fn free_path(e: &Sees, path: &str) -> String {
    if e.index.vault.get(path).is_none() {
        return path.to_string();
    }
    let stem = path.strip_suffix(".md").unwrap_or(path);
    (2..).map(|i| format!("{stem} {i}.md")).find(|p| e.index.vault.get(p).is_none()).unwrap_or_default()
}

pub(crate) fn merge_rows(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = &table(&e.sees(), a.op, a.req("table"))?;
    let key = a.list("key");
    let def = &e.index.schema.tables[q];
    if key.is_empty() {
        return fail(Failure::bad_input(
            a.op,
            "key is empty",
            "key names the columns that match a row, such as [\"title\"].",
        ));
    }
    for k in &key {
        if def.column(k).is_none() {
            return fail(Failure::bad_input(
                a.op,
                format!("key: no column \"{k}\" in {q}{}", names::did_you_mean(k, def.column_names())),
                "key names the columns that match a row.",
            ));
        }
    }
    let rows = a.get("rows").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut index: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    {
        let ctx = Ctx { schema: &e.index.schema, vault: &e.index.vault };
        for p in e.index.vault.table_rows(q) {
            let k: Vec<Value> =
                key.iter().map(|c| ctx.get(p, std::slice::from_ref(c)).unwrap_or(Value::Null)).collect();
            index.entry(Value::Array(k).to_string()).or_insert_with(|| p.to_string());
        }
    }
    for (i, r) in rows.iter().enumerate() {
        let values = row_object(a.op, i, r)?;
        let prepared = prepare(&e.sees(), a.op, q, values).map_err(|s| s.map_failure(|f| at(f, i)))?;
        let k: Vec<Value> = key
            .iter()
            .map(|c| prepared.iter().find(|(n, _)| n == c).map(|(_, v)| v.clone()).unwrap_or(Value::Null))
            .collect();
        if k.iter().any(Value::is_null) {
            return fail(Failure::bad_input(
                a.op,
                format!("rows[{i}] lacks a key column ({})", key.join(", ")),
                "Every row of a merge carries its key columns.",
            ));
        }
        let k = Value::Array(k).to_string();
        match index.get(&k).cloned() {
            Some(p) => {
                let current = e.index.vault.row(&p).map(|r| r.values.clone()).unwrap_or_default();
                let changed: Map<String, Value> = values
                    .iter()
                    .filter(|(c, v)| current.get(*c) != Some(*v))
                    .map(|(c, v)| (c.clone(), v.clone()))
                    .collect();
                update(e, tx, a.op, q, &p, &changed, &[], None).map_err(|s| s.map_failure(|f| at(f, i)))?;
            }
            None => {
                let p = insert(e, tx, a.op, q, values, "").map_err(|s| s.map_failure(|f| at(f, i)))?;
                index.insert(k, p);
            }
        }
    }
    Ok(format!("merge {} rows into {}", rows.len(), short(q)))
}
