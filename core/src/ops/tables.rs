//! Schema writes: tables (create, drop, rename), columns (add, drop, rename,
//! alter, rename_value) and checks (add, drop).

use super::args::Args;
use super::context::{Plans, Sees};
use super::read::table;
use crate::error::{fail, Failure, OpResult};
use crate::filter::Filter;
use crate::frontmatter;
use crate::names;
use crate::schema::{short, valid_column_name, valid_qualified, ColType, ColumnDef, Schema, TableDef, ARCHIVE};
use crate::tx::Tx;
use crate::validate::Ctx;
use serde_json::{Map, Value};

/// A new schema, compiled; its errors are the caller's bad input.
pub(crate) fn compiled(op: &str, mut s: Schema) -> OpResult<Schema> {
    s.compile().map_err(|m| {
        Failure::bad_input(op, m, "Fix the definition: describe_database shows the tables and their columns.")
            .with_docs("reference/schema")
    })?;
    Ok(s)
}

pub(crate) fn qualify(name: &str) -> String {
    match name.split('.').count() {
        1 => format!("main.public.{name}"),
        2 => format!("main.{name}"),
        _ => name.to_string(),
    }
}

pub(crate) fn create_table(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = qualify(a.req("table"));
    if !valid_qualified(&q) {
        return fail(Failure::bad_input(
            a.op,
            format!("\"{}\" is not a valid table name", a.req("table")),
            "Name a table with lower case letters, digits and _ (film, or main.public.film).",
        ));
    }
    if e.index.schema.tables.contains_key(&q) {
        return fail(Failure::refused(
            a.op,
            vec![format!("{q} exists already")],
            "Pick another name, or change the table with add_column / alter_column.",
        ));
    }
    view_name_free(&e.sees(), a.op, &q)?;
    let mut def = Map::new();
    for k in ["description", "columns", "checks", "check_descriptions", "name_from", "history", "folder"] {
        if let Some(v) = a.get(k) {
            def.insert(k.into(), v.clone());
        }
    }
    let t = TableDef::from_json(&Value::Object(def), &format!("table {q}")).map_err(|m| {
        let hint = if m.contains(": folder \"") {
            "Name a plain folder relative to the vault root, such as Books or Reading/Books."
        } else {
            "Columns are written as in metastore.yaml: {\"title\": {\"type\": \"text\", \"required\": true}}."
        };
        Failure::bad_input(a.op, m, hint).with_docs("reference/schema")
    })?;
    if let Some(f) = &t.folder {
        if e.index.schema.tables.keys().any(|o| e.index.schema.folder(o) == format!("{}/", f.trim_end_matches('/'))) {
            return fail(Failure::refused(
                a.op,
                vec![format!("folder {f} holds another table already")],
                "Pick another folder.",
            ));
        }
    }
    let mut s = e.index.schema.clone();
    s.tables.insert(q.clone(), t);
    let s = compiled(a.op, s)?;
    e.index.tx_schema(tx, s);
    tell_rows_found(&e.sees(), tx, &q);
    Ok(format!("create table {}", short(&q)))
}

/// A table made over a folder that holds notes already: they are its rows as
/// written (nothing is rewritten), and the answer says how many, and how many
/// of them break its rules, so that whoever made it knows where it stands.
fn tell_rows_found(e: &Sees, tx: &mut Tx, q: &str) {
    let rows: Vec<&str> = e.index.vault.table_rows(q).chain(e.index.vault.unreadable_rows(q)).collect();
    if rows.is_empty() {
        return;
    }
    let ctx = Ctx { schema: &e.index.schema, vault: &e.index.vault };
    let breaking = rows.iter().filter(|p| !ctx.check_row(p).is_empty()).count();
    tx.extra.insert("rows_found".into(), rows.len().into());
    tx.extra.insert("rows_breaking_rules".into(), breaking.into());
    if breaking > 0 {
        let (table, folder) = (short(q), e.index.schema.folder(q));
        let which = match (rows.len(), breaking) {
            (1, _) => format!("the note already in {folder} breaks"),
            (n, 1) => format!("1 of the {n} notes already in {folder} breaks"),
            (n, k) => format!("{k} of the {n} notes already in {folder} break"),
        };
        tx.extra.insert(
            "hint".into(),
            format!("{which} the rules of {table}, kept as written: check_table {{\"table\": \"{table}\"}} lists what each breaks").into(),
        );
    }
}

pub(crate) fn drop_table(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = table(&e.sees(), a.op, a.req("table"))?;
    if let Some(m) = a.str("mode").filter(|m| *m != "archive") {
        return fail(Failure::bad_input(
            a.op,
            format!("mode \"{m}\" is not supported"),
            "drop_table archives the rows (mode \"archive\"): nothing is deleted.",
        ));
    }
    let users: Vec<String> = e
        .index
        .schema
        .rules
        .iter()
        .filter(|(t, _)| **t != q)
        .flat_map(|(t, r)| r.links.iter().filter(|(_, to)| *to == q).map(move |(c, _)| format!("{t}.{c}")))
        .collect();
    if !users.is_empty() {
        return fail(Failure::refused(
            a.op,
            vec![format!("{q} is linked from {}", users.join(", "))],
            "Drop or alter those link columns first (drop_column / alter_column).",
        ));
    }
    super::views::dependent_views(&e.index.schema, a.op, &q, None)?;
    let folder = e.index.schema.folder(&q);
    // The notes of a table made over an existing folder are the person's: they stay.
    let adopted = e.index.schema.tables[&q].folder.is_some();
    let paths = if adopted { vec![] } else { e.index.vault.paths_under(&folder) };
    let mut s = e.index.schema.clone();
    s.tables.remove(&q);
    let s = compiled(a.op, s)?;
    e.index.tx_schema(tx, s);
    for p in &paths {
        let rel = p.strip_prefix(&folder).unwrap_or(p);
        let to = super::rows::free_path(&e.sees(), &format!("{ARCHIVE}{}/{rel}", q.replace('.', "/")));
        e.index.tx_move(tx, p, &to);
    }
    Ok(if adopted {
        format!("drop table {} (its notes stay in {folder})", short(&q))
    } else {
        format!("drop table {} ({} rows archived)", short(&q), paths.len())
    })
}

pub(crate) fn rename_table(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    let q = table(&e.sees(), a.op, a.req("table"))?;
    let new_name = a.req("new_name");
    let nq = if new_name.contains('.') {
        qualify(new_name)
    } else {
        format!("{}.{new_name}", q.rsplit_once('.').map(|(p, _)| p).unwrap_or("main.public"))
    };
    if !valid_qualified(&nq) {
        return fail(Failure::bad_input(
            a.op,
            format!("\"{new_name}\" is not a valid table name"),
            "Lower case letters, digits and _.",
        ));
    }
    if e.index.schema.tables.contains_key(&nq) {
        return fail(Failure::refused(a.op, vec![format!("{nq} exists already")], "Pick another name."));
    }
    view_name_free(&e.sees(), a.op, &nq)?;
    // Its log moves with it: read it first.
    let log_files: Vec<String> = e.store.under(&crate::log::dir(&q)).cloned().collect();
    e.store.require(&log_files)?;
    tx.renamed = Some((q.clone(), nq.clone()));
    let mut s = e.index.schema.clone();
    let def = s.tables.remove(&q).ok_or_else(|| Failure::internal(a.op, "a resolved table is missing"))?;
    let custom_folder = def.folder.is_some();
    s.tables.insert(nq.clone(), def);
    for t in s.tables.values_mut() {
        for (_, c) in t.columns.iter_mut() {
            if let Some(target) = &c.table {
                if e.index.schema.resolve(target).ok().as_deref() == Some(q.as_str()) {
                    c.table = Some(nq.clone());
                }
            }
        }
    }
    for v in s.views.values_mut() {
        if e.index.schema.resolve(&v.table).ok().as_deref() == Some(q.as_str()) {
            v.table = nq.clone();
        }
    }
    let s = compiled(a.op, s)?;
    let old_folder = e.index.schema.folder(&q);
    let paths = e.index.vault.paths_under(&old_folder);
    e.index.tx_schema(tx, s);
    let new_folder = e.index.schema.folder(&nq);
    for p in &paths {
        let to =
            if custom_folder { p.clone() } else { format!("{new_folder}{}", p.strip_prefix(&old_folder).unwrap_or(p)) };
        if to != *p {
            e.index.tx_move(tx, p, &to);
        }
        let text = e.index.vault.text(&to).unwrap_or_default().to_string();
        let has_table = frontmatter::parse(&text).is_ok_and(|f| f.values.contains_key("table"));
        if has_table {
            let v = Value::String(nq.clone());
            let new = frontmatter::edit(&text, &[("table", &v)], &[]);
            e.index.tx_put(tx, &to, new);
        }
    }
    Ok(format!("rename table {} to {}", short(&q), short(&nq)))
}

/// A column renamed (to a new name), or one of its values renamed (from, to).
type Followed = (String, Option<String>, Option<(String, String)>);

/// A change to one row's front matter: (path, keys to set, keys to remove).
type RowEdit = (String, Vec<(String, Value)>, Vec<String>);

/// What a column or check operation changes besides the table's definition.
#[derive(Default)]
struct ColumnChange {
    summary: String,
    /// Front matter changes to make once the schema is in place.
    row_edits: Vec<RowEdit>,
    /// Rows whose key is renamed in place (rename_column).
    renames: Vec<String>,
    /// A column renamed, or one of its values, to follow in every rule and template.
    refs: Option<Followed>,
    /// The change may alter what generated columns compute: compute them again.
    regenerate: bool,
}

impl ColumnChange {
    fn summary(summary: String) -> ColumnChange {
        ColumnChange { summary, ..ColumnChange::default() }
    }
}

/// The table a column operation names, as the write sees it: the qualified name,
/// its definition in a copy of the schema (to change), and its rows.
struct Target<'a> {
    q: &'a str,
    def: &'a mut TableDef,
    rows: &'a [String],
}

impl Target<'_> {
    fn missing(&self, op: &str, c: &str) -> Failure {
        let q = self.q;
        Failure::refused(
            op,
            vec![format!("no column \"{c}\" in {q}{}", names::did_you_mean(c, self.def.column_names()))],
            format!("The columns of {q}: {}.", self.def.column_names().collect::<Vec<_>>().join(", ")),
        )
    }

    fn short(&self) -> &str {
        short(self.q)
    }
}

/// Runs a column or check operation: `change` edits the table's definition in a
/// copy of the schema; the new schema is then compiled and put in place, and the
/// rows follow.
fn column_op(
    e: &mut Plans,
    tx: &mut Tx,
    a: &Args,
    change: impl FnOnce(&Sees, &mut Target) -> OpResult<ColumnChange>,
) -> OpResult<String> {
    let q = table(&e.sees(), a.op, a.req("table"))?;
    let mut s = e.index.schema.clone();
    let rows: Vec<String> = e.index.vault.table_rows(&q).map(str::to_string).collect();
    let ch = change(&e.sees(), &mut Target { q: &q, def: s.tables.get_mut(&q).expect("resolved"), rows: &rows })?;
    if let Some((col, new_name, value)) = &ch.refs {
        let value = value.as_ref().map(|(f, t)| (f.as_str(), t.as_str()));
        follow_rename(&e.index.schema, &mut s, &q, col, new_name.as_deref(), value);
    }
    let s = compiled(a.op, s)?;
    e.index.tx_schema(tx, s);
    if let Some((old, Some(new), _)) = &ch.refs {
        for p in &ch.renames {
            let text = e.index.vault.text(p).unwrap_or_default().to_string();
            e.index.tx_put(tx, p, frontmatter::rename_key(&text, old, new));
        }
    }
    for (p, set, remove) in ch.row_edits {
        let text = e.index.vault.text(&p).unwrap_or_default().to_string();
        let refs: Vec<(&str, &Value)> = set.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let rm: Vec<&str> = remove.iter().map(String::as_str).collect();
        let new = frontmatter::edit(&text, &refs, &rm);
        if new != text {
            e.index.tx_put(tx, &p, new);
        }
    }
    if ch.regenerate {
        for p in &rows {
            e.index.refresh_generated(tx, p);
        }
    }
    Ok(ch.summary)
}

fn definition(a: &Args, c: &str, hint: &str) -> OpResult<ColumnDef> {
    ColumnDef::from_json(a.get("definition").unwrap_or(&Value::Null), &format!("column {c}"))
        .map_err(|m| Failure::bad_input(a.op, m, hint).with_docs("reference/schema").into())
}

pub(crate) fn add_column(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    column_op(e, tx, a, |e, t| {
        let c = a.req("column");
        if !valid_column_name(c) {
            return fail(Failure::bad_input(
                a.op,
                format!("\"{c}\" is not a valid column name"),
                "Letters, digits, _ and -; not table or id; no dots.",
            ));
        }
        if t.def.column(c).is_some() {
            let q = t.q;
            return fail(Failure::refused(
                a.op,
                vec![format!("{q} has a column \"{c}\" already")],
                "alter_column changes its definition.",
            ));
        }
        let def = definition(a, c, "A definition as in metastore.yaml: {\"type\": \"integer\"}.")?;
        let mut ch = ColumnChange::summary(format!("add column {c} to {}", t.short()));
        if def.required || def.dense {
            let fill = def.default.clone().unwrap_or(Value::Null);
            for p in t.rows {
                if e.index.vault.row(p).is_some_and(|r| !r.values.contains_key(c)) && (!fill.is_null() || def.dense) {
                    ch.row_edits.push((p.clone(), vec![(c.to_string(), fill.clone())], vec![]));
                }
            }
        }
        t.def.columns.push((c.to_string(), def));
        ch.regenerate = true;
        Ok(ch)
    })
}

pub(crate) fn drop_column(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    column_op(e, tx, a, |e, t| {
        let c = a.req("column");
        if t.def.column(c).is_none() {
            return fail(t.missing(a.op, c));
        }
        super::views::dependent_views(&e.index.schema, a.op, t.q, Some(c))?;
        t.def.columns.retain(|(n, _)| n != c);
        let mut ch = ColumnChange::summary(format!("drop column {c} of {}", t.short()));
        for p in t.rows {
            if e.index.vault.row(p).is_some_and(|r| r.values.contains_key(c)) {
                ch.row_edits.push((p.clone(), vec![], vec![c.to_string()]));
            }
        }
        Ok(ch)
    })
}

pub(crate) fn rename_column(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    column_op(e, tx, a, |e, t| {
        let (c, n) = (a.req("column"), a.req("new_name"));
        if t.def.column(c).is_none() {
            return fail(t.missing(a.op, c));
        }
        if !valid_column_name(n) || t.def.column(n).is_some() {
            return fail(Failure::bad_input(
                a.op,
                format!("\"{n}\" is not a free, valid column name in {}", t.q),
                "Letters, digits, _ and -; not a column the table has.",
            ));
        }
        for (name, _) in t.def.columns.iter_mut() {
            if name == c {
                *name = n.to_string();
            }
        }
        let mut ch = ColumnChange::summary(format!("rename column {c} of {} to {n}", t.short()));
        ch.refs = Some((c.to_string(), Some(n.to_string()), None));
        ch.renames =
            t.rows.iter().filter(|p| e.index.vault.row(p).is_some_and(|r| r.values.contains_key(c))).cloned().collect();
        ch.regenerate = true;
        Ok(ch)
    })
}

pub(crate) fn alter_column(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    column_op(e, tx, a, |_, t| {
        let c = a.req("column");
        if t.def.column(c).is_none() {
            return fail(t.missing(a.op, c));
        }
        let def = definition(a, c, "The whole new definition, as in metastore.yaml.")?;
        for (name, d) in t.def.columns.iter_mut() {
            if name == c {
                *d = def.clone();
            }
        }
        let mut ch = ColumnChange::summary(format!("alter column {c} of {}", t.short()));
        ch.regenerate = true;
        Ok(ch)
    })
}

pub(crate) fn rename_value(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    column_op(e, tx, a, |e, t| {
        let (c, from, to) = (a.req("column"), a.req("from"), a.req("to"));
        let summary = format!("rename value {from} of {}.{c} to {to}", t.short());
        let missing = t.missing(a.op, c);
        let Some(col) = t.def.columns.iter_mut().find(|(n, _)| n == c).map(|(_, d)| d) else {
            return fail(missing);
        };
        check_value_rename(a.op, c, col, from, to)?;
        for v in col.values.iter_mut() {
            if v == from {
                *v = to.to_string();
            }
        }
        let mut ch = ColumnChange::summary(summary);
        for p in t.rows {
            let Some(v) = e.index.vault.row(p).and_then(|r| r.values.get(c)) else { continue };
            let new = match v {
                Value::String(s) if s == from => Value::String(to.into()),
                Value::Array(items) if items.iter().any(|i| i == from) => Value::Array(
                    items.iter().map(|i| if i == from { Value::String(to.into()) } else { i.clone() }).collect(),
                ),
                _ => continue,
            };
            ch.row_edits.push((p.clone(), vec![(c.to_string(), new)], vec![]));
        }
        ch.refs = Some((c.to_string(), None, Some((from.to_string(), to.to_string()))));
        Ok(ch)
    })
}

/// Refuses to rename a value that is not one of an enum column's, or to one it has.
fn check_value_rename(op: &str, c: &str, col: &ColumnDef, from: &str, to: &str) -> OpResult<()> {
    if col.scalar_type() != ColType::Enum {
        return fail(Failure::bad_input(
            op,
            format!("\"{c}\" is not an enum column"),
            "rename_value renames a value of an enum; update_rows changes other values.",
        ));
    }
    if !col.values.iter().any(|v| v == from) {
        return fail(Failure::refused(
            op,
            vec![format!(
                "\"{from}\" is not a value of {c}{}",
                names::did_you_mean(from, col.values.iter().map(String::as_str))
            )],
            format!("The values of {c}: {}.", col.values.join(", ")),
        ));
    }
    if col.values.iter().any(|v| v == to) {
        return fail(Failure::refused(
            op,
            vec![format!("\"{to}\" is a value of {c} already")],
            "update_rows moves rows from one value to another.",
        ));
    }
    Ok(())
}

pub(crate) fn add_check(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    column_op(e, tx, a, |e, t| {
        let (n, check) = (a.req("name"), a.get("check").cloned().unwrap_or(Value::Null));
        let description = a
            .get("description")
            .map(|d| crate::schema::check_description(d, "description"))
            .transpose()
            .map_err(|m| {
                Failure::bad_input(
                    a.op,
                    m,
                    "A description says what the rule means in a sentence a person reads in place of it (\"Ratings run from 1 to 5\"); leave it out to show the rule itself.",
                )
            })?;
        if t.def.checks.iter().any(|(x, _)| x == n) {
            return fail(Failure::refused(
                a.op,
                vec![format!("{} has a check \"{n}\" already", t.q)],
                "drop_check it first, or pick another name.",
            ));
        }
        let f = Filter::parse(&check).map_err(|m| {
            Failure::bad_input(a.op, format!("check: {m}"), "A check is a filter every row must match.")
                .with_docs("reference/filters")
        })?;
        super::read::typed(&e.index.schema, a.op, t.def, &f, "check")?;
        t.def.checks.push((n.to_string(), check));
        t.def.describe_check(n, description);
        Ok(ColumnChange::summary(format!("add check {n} to {}", t.short())))
    })
}

pub(crate) fn drop_check(e: &mut Plans, tx: &mut Tx, a: &Args) -> OpResult<String> {
    column_op(e, tx, a, |_, t| {
        let n = a.req("name");
        if !t.def.checks.iter().any(|(x, _)| x == n) {
            let q = t.q;
            let all: Vec<&str> = t.def.checks.iter().map(|(x, _)| x.as_str()).collect();
            return fail(Failure::refused(
                a.op,
                vec![format!("{q} has no check \"{n}\"{}", names::did_you_mean(n, all.iter().copied()))],
                format!("The checks of {q}: {}.", if all.is_empty() { "none".into() } else { all.join(", ") }),
            ));
        }
        t.def.checks.retain(|(x, _)| x != n);
        t.def.describe_check(n, None);
        Ok(ColumnChange::summary(format!("drop check {n} of {}", t.short())))
    })
}

/// Follows a column's rename (or one of its enum values' rename) through every
/// rule and template of the schema: CHECKs, ref_where, generated columns and
/// name_from, in every table, dotted paths through links included. `old` is the
/// schema before, `new` the one to change.
fn follow_rename(
    old: &Schema,
    new: &mut Schema,
    table: &str,
    col: &str,
    to: Option<&str>,
    value: Option<(&str, &str)>,
) {
    let r = Rename { schema: old, table, col, to, value };
    for (u, def) in old.tables.iter() {
        let Some(nd) = new.tables.get_mut(u) else { continue };
        for ((_, f), (_, nf)) in def.checks.iter().zip(nd.checks.iter_mut()) {
            *nf = r.filter(u, f);
        }
        for ((_, c), (_, nc)) in def.columns.iter().zip(nd.columns.iter_mut()) {
            if let Some(g) = &c.generated {
                nc.generated = Some(r.template(u, g));
            }
            if let (Some(w), Some(target)) = (&c.ref_where, c.table.as_ref().and_then(|t| old.resolve(t).ok())) {
                nc.ref_where = Some(r.filter(&target, w));
            }
        }
        if let Some(nf) = &def.name_from {
            nd.name_from = Some(if nf.contains('{') { r.template(u, nf) } else { r.path(u, nf).0 });
        }
    }
    for (name, v) in old.views.iter() {
        let (Some(nv), Ok(root)) = (new.views.get_mut(name), old.resolve(&v.table)) else { continue };
        nv.columns = v.columns.iter().map(|c| r.path(&root, c).0).collect();
        nv.filter = v.filter.as_ref().map(|f| r.filter(&root, f));
        nv.order_by = v
            .order_by
            .iter()
            .map(|k| crate::views::with_path(k, &r.path(&root, crate::views::sort_key(k).0).0))
            .collect();
    }
}

/// Refuses a table name a view has (in full, or short: a name reads one object).
fn view_name_free(e: &Sees, op: &str, q: &str) -> OpResult<()> {
    match e.index.schema.views.keys().find(|v| *v == q || short(v) == short(q)) {
        Some(v) => fail(Failure::refused(
            op,
            vec![format!("{q} would share its name with the view {v}")],
            "Pick another name, or rename the view (rename_view).",
        )),
        None => Ok(()),
    }
}

struct Rename<'a> {
    schema: &'a Schema,
    table: &'a str,
    col: &'a str,
    to: Option<&'a str>,
    value: Option<(&'a str, &'a str)>,
}

impl Rename<'_> {
    /// A dotted path from a row of `root`, with the renamed column renamed, and
    /// whether the path ends at that column.
    fn path(&self, root: &str, path: &str) -> (String, bool) {
        let segs: Vec<&str> = path.split('.').collect();
        let mut cur = root.to_string();
        let mut out: Vec<String> = vec![];
        let mut ends_here = false;
        for (i, seg) in segs.iter().enumerate() {
            let hit = cur == self.table && *seg == self.col;
            out.push(if hit { self.to.unwrap_or(seg).to_string() } else { seg.to_string() });
            if i + 1 == segs.len() {
                ends_here = hit;
                break;
            }
            let next = self
                .schema
                .tables
                .get(&cur)
                .and_then(|t| t.column(seg))
                .and_then(|c| c.table.as_ref())
                .and_then(|t| self.schema.resolve(t).ok());
            match next {
                Some(n) => cur = n,
                None => {
                    out.extend(segs[i + 1..].iter().map(|s| s.to_string()));
                    break;
                }
            }
        }
        (out.join("."), ends_here)
    }

    fn filter(&self, root: &str, f: &Value) -> Value {
        match f {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| {
                        if ["and", "or", "not"].contains(&k.as_str()) {
                            return (k.clone(), self.filter(root, v));
                        }
                        let (key, ends_here) = self.path(root, k);
                        let v = match self.value {
                            Some((from, to)) if ends_here => replace_value(v, from, to),
                            _ => v.clone(),
                        };
                        (key, v)
                    })
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.filter(root, x)).collect()),
            other => other.clone(),
        }
    }

    /// A template with the paths inside its `{…}` renamed.
    fn template(&self, root: &str, t: &str) -> String {
        let mut out = String::new();
        let mut rest = t;
        while let Some(i) = rest.find('{') {
            out.push_str(&rest[..i]);
            rest = &rest[i..];
            if rest.starts_with("{{") {
                out.push_str("{{");
                rest = &rest[2..];
                continue;
            }
            let Some(j) = rest.find('}') else { break };
            let inner = &rest[1..j];
            let (path, fmt) = inner.split_once('|').map_or((inner, None), |(p, f)| (p, Some(f)));
            out.push('{');
            out.push_str(&self.path(root, path.trim()).0);
            if let Some(f) = fmt {
                out.push('|');
                out.push_str(f);
            }
            out.push('}');
            rest = &rest[j + 1..];
        }
        out.push_str(rest);
        out
    }
}

/// A filter's value (or an operator's argument) with an enum value renamed.
fn replace_value(v: &Value, from: &str, to: &str) -> Value {
    match v {
        Value::String(s) if s == from => Value::String(to.into()),
        Value::Array(a) => Value::Array(a.iter().map(|x| replace_value(x, from, to)).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), replace_value(x, from, to))).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn renames_follow_links_and_values() {
        let old = Schema::parse("version: 1\ntables:\n  main.public.genre:\n    columns:\n      kind: {type: enum, values: [cinema, era]}\n      parent: {type: link, table: genre}\n    checks:\n      c: {or: [{kind: cinema}, {parent.kind: {in: [cinema]}}]}\n  main.public.film:\n    columns:\n      g: {type: link, table: genre}\n      label: {type: text, generated: \"{g.kind|upper} {{x}}\"}\n").unwrap();
        let mut new = old.clone();
        follow_rename(&old, &mut new, "main.public.genre", "kind", Some("level"), None);
        assert_eq!(
            new.tables["main.public.genre"].checks[0].1,
            json!({"or": [{"level": "cinema"}, {"parent.level": {"in": ["cinema"]}}]})
        );
        assert_eq!(
            new.tables["main.public.film"].column("label").unwrap().generated.as_deref(),
            Some("{g.level|upper} {{x}}")
        );
        let mut new = old.clone();
        follow_rename(&old, &mut new, "main.public.genre", "kind", None, Some(("cinema", "film")));
        assert_eq!(
            new.tables["main.public.genre"].checks[0].1,
            json!({"or": [{"kind": "film"}, {"parent.kind": {"in": ["film"]}}]})
        );
    }
}
