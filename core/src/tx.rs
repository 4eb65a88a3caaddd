//! A write in the making. The engine changes its index as the operation runs,
//! remembering each note's text before; at the end it settles what it owns
//! (generated columns, note names and the links to them), checks every row the
//! write touched or that links to one, and either turns the difference into edits
//! or puts everything back.

use crate::edits::{hash, Edit};
use crate::error::{fail, Failure, OpResult};
use crate::frontmatter;
use crate::index::Index;
use crate::links;
use crate::names;
use crate::schema::{Schema, METASTORE};
use crate::validate::{row_json, Ctx, Violation};
use crate::way_out::{name_near_rows, rules_hint, Broken, NAMED_ROWS};
use serde_json::{json, Map, Value};
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};

#[derive(Default)]
pub struct Tx {
    pub op: String,
    /// Each touched path's text before the write (None: it did not exist, or
    /// was not read: then `unread` holds it).
    pub originals: BTreeMap<String, Option<String>>,
    /// Touched notes not read yet (opened from the notes' cache), kept whole: a
    /// write that reaches one is given up for the host to read it, and the
    /// note must come back as it was, not as absent.
    unread: BTreeMap<String, crate::vault::Note>,
    pub moves: Vec<(String, String)>,
    pub schema_before: Option<(Schema, String)>,
    /// The violations of each row the write may affect, before it.
    before: HashMap<String, Vec<Violation>>,
    /// Rows written by the operation itself (settled at the end).
    touched: BTreeSet<String>,
    pub edits: Vec<Edit>,
    /// Notes the write moves to the trash.
    pub trashed: BTreeSet<String>,
    /// The time of the call, for ids.
    pub now_ms: i64,
    /// The table the operation is about, for the journal.
    pub table: Option<String>,
    /// The migration an undo reverts.
    pub undoes: Option<String>,
    /// The operations of a batch: {op, summary}.
    pub members: Option<Vec<Value>>,
    /// Fields the operation adds to its answer.
    pub extra: Map<String, Value>,
    /// Rows whose name is held by another note.
    clashes: Vec<String>,
    /// The hand moves a repair_links follows: [{path, old_path, seq}].
    pub cause: Option<Vec<Value>>,
    /// A table renamed by this write (old, new): its log moves with it.
    pub renamed: Option<(String, String)>,
    /// The generated columns to bring up to date (recompute_columns naming some); all when None.
    pub only_generated: Option<Vec<String>>,
    /// The proposal an accept_proposal takes, for its journal entry.
    pub proposal: Option<Value>,
}

impl Tx {
    pub fn new(op: &str) -> Tx {
        Tx { op: op.to_string(), ..Tx::default() }
    }
}

impl Index {
    fn ctx(&self) -> Ctx<'_> {
        Ctx { schema: &self.schema, vault: &self.vault }
    }

    /// Puts the index back to the texts of `originals`.
    pub(crate) fn restore(
        &mut self,
        originals: &BTreeMap<String, Option<String>>,
        schema_before: Option<(Schema, String)>,
    ) {
        if let Some((s, text)) = schema_before {
            self.schema = s;
            self.metastore = Some(text);
        }
        for (path, text) in originals {
            if path == METASTORE {
                continue;
            }
            match text {
                Some(t) => {
                    let mtime = self.vault.get(path).map(|n| n.mtime).unwrap_or(0);
                    self.vault.insert(&self.schema, path.clone(), t.clone(), mtime)
                }
                None => {
                    self.vault.remove(path);
                }
            }
        }
        // A schema put back changes which notes are rows: read those again.
        let paths: Vec<String> = originals.keys().cloned().collect();
        let all: Vec<String> = if originals.contains_key(METASTORE) {
            self.vault.notes.keys().map(|p| p.to_string()).collect()
        } else {
            paths
        };
        self.vault.reindex(&self.schema, all);
    }

    /// Remembers a note's text and the violations of the rows it can affect, the
    /// first time the write reaches it.
    fn touch(&mut self, tx: &mut Tx, path: &str) {
        if tx.originals.contains_key(path) {
            return;
        }
        tx.originals.insert(path.to_string(), self.vault.text(path).map(str::to_string));
        if let Some(n) = self.vault.get(path).filter(|n| n.text.is_none()) {
            tx.unread.insert(path.to_string(), n.clone());
        }
        let mut rows = self.vault.naming(path);
        rows.push(path.to_string());
        for r in rows {
            if !tx.before.contains_key(&r) && self.vault.get(&r).is_some() {
                let v = self.ctx().check_row(&r);
                tx.before.insert(r, v);
            }
        }
    }

    /// Writes (or creates) a note in the index.
    pub(crate) fn tx_put(&mut self, tx: &mut Tx, path: &str, text: String) {
        if let Some(why) = crate::vault::too_large(path, &text) {
            tx.clashes.push(why);
        }
        self.touch(tx, path);
        let mtime = self.vault.get(path).map(|n| n.mtime).unwrap_or(0);
        self.vault.insert(&self.schema, path.to_string(), text, mtime);
        tx.touched.insert(path.to_string());
    }

    /// Moves a note to the trash.
    pub(crate) fn tx_trash(&mut self, tx: &mut Tx, path: &str) {
        self.touch(tx, path);
        self.vault.remove(path);
        tx.touched.remove(path);
        tx.trashed.insert(path.to_string());
    }

    /// Renames or moves a note (its text unchanged).
    pub(crate) fn tx_move(&mut self, tx: &mut Tx, from: &str, to: &str) {
        self.touch(tx, from);
        self.touch(tx, to);
        if let Some(n) = self.vault.remove(from) {
            let (text, mtime) = n.into_text();
            self.vault.insert(&self.schema, to.to_string(), text, mtime);
        }
        tx.moves.push((from.to_string(), to.to_string()));
        if let Some(b) = tx.before.get(from).cloned() {
            tx.before.entry(to.to_string()).or_insert(b);
        }
        if tx.touched.remove(from) {
            tx.touched.insert(to.to_string());
        }
    }

    /// Replaces the schema; the notes of the tables it changes are read again.
    pub(crate) fn tx_schema(&mut self, tx: &mut Tx, new: Schema) {
        let text = crate::metastore_text::rewrite(self.metastore.as_deref(), &self.schema, &new);
        self.tx_schema_text(tx, new, text);
    }

    /// A schema change with the text metastore.yaml is to hold.
    pub(crate) fn tx_schema_text(&mut self, tx: &mut Tx, new: Schema, text: String) {
        let changed = self.schema.changed_tables(&new);
        // Rows of the changed tables and of the tables that link to them.
        let mut affected: BTreeSet<String> = changed.clone();
        for (t, r) in self.schema.rules.iter().chain(new.rules.iter()) {
            if r.links.iter().any(|(_, target)| changed.contains(target)) {
                affected.insert(t.clone());
            }
        }
        for t in &affected {
            let paths: Vec<String> =
                self.vault.table_rows(t).chain(self.vault.unreadable_rows(t)).map(str::to_string).collect();
            for p in paths {
                if let Entry::Vacant(slot) = tx.before.entry(p) {
                    let v = self.ctx().check_row(slot.key());
                    slot.insert(v);
                }
            }
        }
        if tx.schema_before.is_none() {
            tx.schema_before = Some((self.schema.clone(), self.metastore.clone().unwrap_or_default()));
            tx.originals.insert(METASTORE.to_string(), self.metastore.clone());
        }
        self.set_schema(new, Some(text), &changed);
    }

    /// Puts a schema in place (with the text metastore.yaml holds) and reads again
    /// the notes under the folders, old and new, of the tables it changed.
    pub(crate) fn set_schema(&mut self, new: Schema, text: Option<String>, changed: &BTreeSet<String>) {
        let mut folders: Vec<String> = changed.iter().map(|t| self.schema.folder(t)).collect();
        folders.extend(changed.iter().map(|t| new.folder(t)));
        self.schema = new;
        self.metastore = text;
        let mut paths = vec![];
        for f in folders {
            paths.extend(self.vault.paths_under(&f));
        }
        paths.sort();
        paths.dedup();
        self.vault.reindex(&self.schema, paths);
    }

    /// Ends the write: settles generated columns and names, checks the rules, plans
    /// the edits. On a refusal the index is put back.
    pub(crate) fn tx_finish(&mut self, tx: &mut Tx) -> OpResult<()> {
        if let Err(f) = self.settle(tx) {
            self.tx_abort(tx);
            return Err(f);
        }
        if let Some(f) = Self::outside_notes(tx) {
            self.tx_abort(tx);
            return fail(f);
        }
        self.name_clashes(tx);
        let mut checked: BTreeSet<String> = tx.before.keys().cloned().collect();
        checked.extend(tx.touched.iter().cloned());
        let mut broken: Vec<Broken> = vec![];
        // The notes this write writes (a moved one under its new path).
        let written = |p: &str| tx.originals.contains_key(p) || tx.moves.iter().any(|(_, to)| to == p);
        for p in &checked {
            let after = self.ctx().check_row(p);
            let before = tx.before.get(p);
            // A conflict copy a write puts back (the undo of resolve_conflict) is
            // the person's to resolve, not a rule the write breaks.
            let mut new: Vec<Violation> = after
                .into_iter()
                .filter(|v| v.code != "conflict" && before.is_none_or(|b| !b.iter().any(|o| o.key() == v.key())))
                .collect();
            if !new.is_empty() {
                let written = written(p);
                if written && broken.len() < NAMED_ROWS {
                    name_near_rows(&self.ctx(), &mut new);
                }
                let made = tx.originals.get(p).is_some_and(Option::is_none);
                broken.push(Broken { path: p, new: made, written, violations: new });
            }
        }
        if !broken.is_empty() || !tx.clashes.is_empty() {
            self.tx_abort(tx);
            let mut reasons: Vec<String> =
                broken.iter().flat_map(|b| b.violations.iter().map(|v| v.line(b.path))).collect();
            let rows: Vec<Value> = broken.iter().map(|b| row_json(b.path, &b.violations)).collect();
            reasons.extend(tx.clashes.iter().cloned());
            let total = reasons.len();
            reasons.truncate(100);
            if total > 100 {
                reasons.push(format!("… and {} more", total - 100));
            }
            let hint = if broken.is_empty() {
                "Pick another value for the column that names the note, or rename the other note first.".to_string()
            } else {
                rules_hint(&broken)
            };
            return fail(
                Failure::refused(&tx.op, reasons, hint)
                    .with_docs("guides/data-quality/rules")
                    .with_details(json!({"violations": rows, "violations_total": total})),
            );
        }
        tx.edits = self.edits_of(tx);
        Ok(())
    }

    /// A refusal when the write would touch a file that is not a note (or a
    /// Bases file, or the schema) outside dot folders. Every operation keeps to
    /// notes; this is the last guard for a write built from a record another
    /// device or a person put in the store (an undo, a restore), so that no
    /// record can make the engine write a plugin, a git hook or the token.
    fn outside_notes(tx: &Tx) -> Option<Failure> {
        let paths = tx.originals.keys().chain(tx.moves.iter().map(|(_, to)| to));
        let reasons: Vec<String> = paths.filter_map(|p| crate::trust::note_path_problem(p)).collect();
        (!reasons.is_empty()).then(|| {
            Failure::refused(
                &tx.op,
                reasons.into_iter().map(|r| format!("{r}: the engine writes only notes outside dot folders")).collect(),
                "The write was built from a record that names such a file (a journal entry or commit brought by a sync, or edited by hand): nothing was written. Check .datanotes/ for files you do not know.",
            )
        })
    }

    /// Notes this write creates (or moves to) whose name another disk would not
    /// keep apart from an existing note's, or would not take at all.
    fn name_clashes(&self, tx: &mut Tx) {
        for (p, had) in &tx.originals {
            if had.is_some() || p == METASTORE || self.vault.get(p).is_none() {
                continue;
            }
            if let Some(other) = self.vault.same_file(p) {
                tx.clashes.push(format!(
                    "{p}: on macOS and Windows, which ignore case and accents' encoding in names, it is the same file as {other}"
                ));
            }
            let parts = p.split('/').map(|part| part.strip_suffix(".md").unwrap_or(part));
            if let Some(device) = parts.into_iter().find(|part| names::reserved_on_windows(part)) {
                tx.clashes.push(format!(
                    "{p}: Windows keeps the name {device} for a device, so the note could not be synced there"
                ));
            }
        }
    }

    pub(crate) fn tx_abort(&mut self, tx: &mut Tx) {
        let originals = std::mem::take(&mut tx.originals);
        self.restore(&originals, tx.schema_before.take());
        tx.originals = originals;
        for (path, n) in std::mem::take(&mut tx.unread) {
            self.vault.put_unread(&self.schema, path, n);
        }
    }

    /// Generated columns, then note names (renaming notes and rewriting the links to
    /// them), for the rows the write touched and the rows whose generated values
    /// follow links to them.
    fn settle(&mut self, tx: &mut Tx) -> OpResult<()> {
        self.sync_inverse(tx);
        let mut todo: BTreeSet<String> = tx.touched.clone();
        for p in tx.touched.clone() {
            for l in self.vault.rows_linking_to(&p) {
                if self.vault.row(&l).is_some_and(|r| {
                    self.schema.rules[&*r.table].generated.iter().any(|(_, t)| t.paths().iter().any(|p| p.len() > 1))
                }) {
                    todo.insert(l);
                }
            }
        }
        let only = tx.only_generated.clone();
        for p in todo {
            self.refresh_columns(tx, &p, only.as_deref());
        }
        for p in tx.touched.clone() {
            self.settle_name(tx, &p)?;
        }
        Ok(())
    }

    /// Two-way links: when a row's link column with `inverse` gains or loses a
    /// target, the target's inverse column gains or loses the link back.
    fn sync_inverse(&mut self, tx: &mut Tx) {
        let mut done: BTreeSet<String> = BTreeSet::new();
        for _round in 0..4 {
            let todo: Vec<String> = tx.touched.difference(&done).cloned().collect();
            if todo.is_empty() {
                return;
            }
            for p in todo {
                done.insert(p.clone());
                self.sync_inverse_of(tx, &p);
            }
        }
    }

    fn sync_inverse_of(&mut self, tx: &mut Tx, path: &str) {
        let Some(row) = self.vault.row(path) else { return };
        let table = row.table.clone();
        let old_values = tx
            .originals
            .get(path)
            .cloned()
            .flatten()
            .and_then(|t| frontmatter::parse(&t).ok())
            .map(|p| p.values)
            .unwrap_or_default();
        self.sync_inverse_from(tx, &table, path, &old_values);
    }

    /// Two-way links of a row of `table` whose link columns held `old_values`
    /// (the row as the vault holds it now, or gone): the rows it stopped linking to
    /// lose their link back, those it links to now gain one.
    pub(crate) fn sync_inverse_from(&mut self, tx: &mut Tx, table: &str, path: &str, old_values: &Map<String, Value>) {
        let Some(def) = self.schema.tables.get(table) else { return };
        let pairs: Vec<(String, String)> =
            def.columns.iter().filter_map(|(c, d)| d.inverse.clone().map(|i| (c.clone(), i))).collect();
        for (col, inv) in pairs {
            let targets = |v: Option<&Value>, e: &Index| -> BTreeSet<String> {
                let items: Vec<&str> = match v {
                    Some(Value::String(s)) => vec![s.as_str()],
                    Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                    _ => vec![],
                };
                items
                    .into_iter()
                    .filter_map(|s| e.vault.resolve(crate::filter::link_target(s), path))
                    .map(str::to_string)
                    .collect()
            };
            let old = targets(old_values.get(&col), self);
            let new = targets(self.vault.row(path).and_then(|r| r.values.get(&col)), self);
            for t in new.difference(&old) {
                self.set_back_link(tx, t, &inv, path, true);
            }
            for t in old.difference(&new) {
                self.set_back_link(tx, t, &inv, path, false);
            }
        }
    }

    /// Adds (or removes) a link to `to` in the column `col` of the row `at`.
    fn set_back_link(&mut self, tx: &mut Tx, at: &str, col: &str, to: &str, add: bool) {
        let Some(row) = self.vault.row(at) else { return };
        let Some(cdef) = self.schema.tables[&*row.table].column(col) else { return };
        let is_list = cdef.ty == crate::schema::ColType::List;
        let link = format!("[[{}]]", self.vault.link_text(to, at));
        // A link to `to`: resolving to it, or naming it when it is gone.
        let gone = self.vault.get(to).is_none();
        let points = |v: &Value| {
            v.as_str().is_some_and(|s| {
                let t = crate::filter::link_target(s);
                self.vault.resolve(t, at) == Some(to)
                    || (gone && crate::links::target_stem(t) == crate::links::path_stem(to))
            })
        };
        let cur = row.values.get(col).cloned().unwrap_or(Value::Null);
        let new = match (is_list, add) {
            (true, true) => {
                let mut items = cur.as_array().cloned().unwrap_or_default();
                if items.iter().any(points) {
                    return;
                }
                items.push(Value::String(link));
                Value::Array(items)
            }
            (true, false) => {
                let items = cur.as_array().cloned().unwrap_or_default();
                if !items.iter().any(points) {
                    return;
                }
                Value::Array(items.into_iter().filter(|v| !points(v)).collect())
            }
            (false, true) if points(&cur) => return,
            (false, true) => Value::String(link),
            (false, false) if !points(&cur) => return,
            (false, false) => Value::Null,
        };
        let text = self.vault.text(at).unwrap_or_default();
        let new_text = frontmatter::edit(text, &[(col, &new)], &[]);
        self.tx_put(tx, at, new_text);
    }

    pub(crate) fn refresh_generated(&mut self, tx: &mut Tx, path: &str) {
        self.refresh_columns(tx, path, None);
    }

    /// Brings generated columns up to date (those named in `only`, or all).
    pub(crate) fn refresh_columns(&mut self, tx: &mut Tx, path: &str, only: Option<&[String]>) {
        let Some(row) = self.vault.row(path) else { return };
        let table = row.table.clone();
        let rules = &self.schema.rules[&*table];
        let mut set: Vec<(String, Value)> = vec![];
        for (col, _) in rules.generated.iter().filter(|(c, _)| only.is_none_or(|o| o.contains(c))) {
            let want = self.ctx().generated(&table, col, path).unwrap_or(Value::Null);
            let have = row.values.get(col).cloned().unwrap_or(Value::Null);
            if want != have && crate::validate::scalar_text(&want) != crate::validate::scalar_text(&have) {
                set.push((col.clone(), want));
            }
        }
        if set.is_empty() {
            return;
        }
        let text = self.vault.text(path).unwrap_or_default();
        let refs: Vec<(&str, &Value)> = set.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let new = frontmatter::edit(text, &refs, &[]);
        self.tx_put(tx, path, new);
    }

    /// The note a row should be, by its table's name_from; moves it there and
    /// rewrites the links to it.
    fn settle_name(&mut self, tx: &mut Tx, path: &str) -> OpResult<()> {
        let Some(row) = self.vault.row(path) else { return Ok(()) };
        let Some(tpl) = self.schema.rules[&*row.table].name_from.as_ref() else { return Ok(()) };
        let name = names::file_stem(&tpl.render(&self.ctx(), path));
        if name.is_empty() {
            return Ok(()); // The required name column is reported as a violation.
        }
        let folder = path.rsplit_once('/').map(|(f, _)| f).unwrap_or("");
        let new_path = format!("{folder}/{name}.md");
        if new_path == path {
            return Ok(());
        }
        if self.vault.get(&new_path).is_some() && !new_path.eq_ignore_ascii_case(path) {
            tx.clashes.push(format!("{path}: its name would be {new_path}, which another note holds"));
            return Ok(());
        }
        self.rename_note(tx, path, &new_path);
        Ok(())
    }

    /// Moves a note and rewrites every link that resolved to it.
    pub(crate) fn rename_note(&mut self, tx: &mut Tx, from: &str, to: &str) {
        let linkers = self.vault.linking_to(from);
        let new_stem = names::note_name(to).to_string();
        let new_full = to.trim_end_matches(".md").to_string();
        let mut rewritten = vec![];
        for l in linkers {
            let text = self.vault.text(&l).unwrap_or_default();
            let new = links::rewrite(text, |t| {
                (self.vault.resolve(t, &l) == Some(from)).then(|| {
                    if t.contains('/') {
                        new_full.clone()
                    } else {
                        new_stem.clone()
                    }
                })
            });
            rewritten.push((if l == from { to.to_string() } else { l }, new));
        }
        self.tx_move(tx, from, to);
        for (p, text) in rewritten {
            if self.vault.text(&p) != Some(text.as_str()) {
                self.tx_put(tx, &p, text);
            }
        }
    }

    /// The edits that take the vault from the texts before to those of the index.
    fn edits_of(&self, tx: &Tx) -> Vec<Edit> {
        let mut edits = vec![];
        let mut state = tx.originals.clone();
        for (from, to) in &tx.moves {
            let text = state.get(from).cloned().flatten();
            if let Some(t) = &text {
                edits.push(Edit::Move { from: from.clone(), to: to.clone(), expect: hash(t) });
            }
            state.insert(from.clone(), None);
            state.insert(to.clone(), text);
        }
        for (path, had) in &state {
            let now = if path == METASTORE { self.metastore.as_deref() } else { self.vault.text(path) };
            match (had, now) {
                (None, Some(t)) => edits.push(Edit::Write { path: path.clone(), text: t.to_string(), expect: None }),
                (Some(h), Some(t)) if h != t => {
                    edits.push(Edit::Write { path: path.clone(), text: t.to_string(), expect: Some(hash(h)) })
                }
                (Some(h), None) if tx.trashed.contains(path) => {
                    edits.push(Edit::Trash { path: path.clone(), expect: hash(h) })
                }
                _ => {}
            }
        }
        edits
    }

    /// What the write did to each note, for the journal: where each note was and
    /// is, and its texts before and after.
    pub(crate) fn changes_of(&self, tx: &Tx) -> Vec<crate::journal::Change> {
        // Follow each note through the moves: final path -> original path.
        let mut origin: BTreeMap<String, String> = BTreeMap::new();
        for (from, to) in &tx.moves {
            let o = origin.remove(from).unwrap_or_else(|| from.clone());
            origin.insert(to.clone(), o);
        }
        let moved_away: BTreeSet<&String> = origin.values().collect();
        let mut out = vec![];
        for (path, before) in &tx.originals {
            if path == METASTORE || origin.contains_key(path) {
                continue;
            }
            let after = self.vault.text(path).map(str::to_string);
            if moved_away.contains(path) && after.is_none() {
                continue;
            }
            if before.as_deref() != after.as_deref() {
                out.push(crate::journal::Change {
                    path: path.clone(),
                    from: None,
                    before: before.clone(),
                    after,
                    before_blob: None,
                    after_blob: None,
                    trashed: tx.trashed.contains(path),
                });
            }
        }
        for (to, from) in &origin {
            let before = tx.originals.get(from).cloned().flatten();
            let after = self.vault.text(to).map(str::to_string);
            if before.is_some() || after.is_some() {
                out.push(crate::journal::Change {
                    path: to.clone(),
                    from: Some(from.clone()).filter(|f| f != to && before.is_some()),
                    before,
                    after,
                    before_blob: None,
                    after_blob: None,
                    trashed: false,
                });
            }
        }
        out
    }

    /// What the write did to each note, for the answer: `{path, set, remove}` for
    /// changed rows, `create`, `move_to` and `trash` for files.
    pub(crate) fn planned(&self, tx: &Tx) -> (Vec<Value>, usize, usize) {
        let mut out = vec![];
        let (mut notes, mut files) = (0, 0);
        let mut moved_from: HashMap<&str, &str> = HashMap::new();
        for (from, to) in &tx.moves {
            moved_from.insert(to.as_str(), from.as_str());
        }
        for e in &tx.edits {
            match e {
                Edit::Move { from, to, .. } => {
                    files += 1;
                    out.push(json!({"path": from, "move_to": to}));
                }
                Edit::Trash { path, .. } => {
                    files += 1;
                    out.push(json!({"path": path, "trash": true}));
                }
                Edit::Write { path, .. } if crate::bases::is_base(path) => {
                    files += 1;
                    let created = tx.originals.get(path).is_none_or(Option::is_none);
                    out.push(json!({"path": path, "base": true, "create": created}));
                }
                Edit::Write { path, text, expect: None } => {
                    files += 1;
                    let values = frontmatter::parse(text).map(|p| p.values).unwrap_or_default();
                    out.push(json!({"path": path, "create": true, "set": values}));
                }
                Edit::Write { path, text, expect: Some(_) } => {
                    if path == METASTORE {
                        out.push(json!({"path": path, "schema": true}));
                        continue;
                    }
                    notes += 1;
                    let origin = moved_from.get(path.as_str()).copied().unwrap_or(path);
                    let old = tx.originals.get(origin).cloned().flatten().unwrap_or_default();
                    out.push(diff(path, &old, text));
                }
                Edit::Delete { .. } => {}
            }
        }
        (out, notes, files)
    }
}

/// `{path, set, remove}` (and `body: true` when the body changed) between two texts.
fn diff(path: &str, old: &str, new: &str) -> Value {
    let (a, b) = (frontmatter::parse(old), frontmatter::parse(new));
    let (Ok(a), Ok(b)) = (a, b) else {
        return json!({"path": path, "set": {}, "remove": []});
    };
    let mut set = Map::new();
    for (k, v) in &b.values {
        if a.values.get(k) != Some(v) {
            set.insert(k.clone(), v.clone());
        }
    }
    let remove: Vec<&String> = a.values.keys().filter(|k| !b.values.contains_key(*k)).collect();
    let mut out = json!({"path": path, "set": set, "remove": remove});
    if old[a.body_start..] != new[b.body_start..] {
        out["body"] = true.into();
    }
    out
}
