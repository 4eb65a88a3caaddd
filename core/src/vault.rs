//! The engine's index of the vault's notes: their texts, the rows they hold, who
//! links to whom, and the values of unique columns.

use crate::conflicts;
use crate::frontmatter;
use crate::fxhash::{slot, FxHashMap, FxHashSet};
use crate::links;
use crate::lookups::{Lazy, Links, Unique};
use crate::notecache::{Cached, Taken};
use crate::pathset::Shared;
use crate::row_id::RowId;
use crate::row_values::Values;
use crate::schema::{ColType, Schema, TableDef};
use crate::texthash::TextHash;
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct Row {
    /// Shared by the table's rows (`Schema::shared_name`): a string of its
    /// own took about 56 bytes of every row natively.
    pub table: Arc<str>,
    pub id: Option<RowId>,
    pub values: Values,
}

impl Row {
    /// Its id's text.
    pub fn id_str(&self) -> Option<crate::row_id::IdStr<'_>> {
        self.id.as_ref().map(RowId::as_str)
    }
}

#[derive(Debug, Clone)]
pub enum State {
    /// Not under a table's folder.
    Plain,
    Row(Row),
    /// Under a table's folder, with front matter the parser refuses.
    Unreadable {
        table: String,
        message: String,
    },
}

#[derive(Debug, Clone)]
pub struct Note {
    /// None for a note opened from the store's cache (notecache.rs) and not read
    /// since: the engine asks the host for it before a turn that needs it.
    pub text: Option<Box<str>>,
    /// The text's length in bytes, as the host's file system counts it (at
    /// most `u32::MAX`: see `Size`).
    pub size: Size,
    pub mtime: i64,
    pub state: State,
    /// The lower-case stems of every link in the note.
    pub links: links::Stems,
    /// The SHA-256 of the text: how the log and the journal name it (in hex).
    pub hash: TextHash,
}

impl Note {
    /// Its text (see `Vault::text`).
    pub fn text(&self) -> &str {
        debug_assert!(self.text.is_some(), "a note opened from the cache was used unread");
        self.text.as_deref().unwrap_or_default()
    }

    /// Its text and mtime, the note given up (see `Vault::text`).
    pub fn into_text(self) -> (String, i64) {
        debug_assert!(self.text.is_some(), "a note opened from the cache was used unread");
        (self.text.map(String::from).unwrap_or_default(), self.mtime)
    }

    pub fn row(&self) -> Option<&Row> {
        match &self.state {
            State::Row(r) => Some(r),
            _ => None,
        }
    }

    /// A note of a table (a row, or one the parser refuses) whose text is not
    /// read: what a turn reads before it runs (`Vault::unread_rows`).
    fn is_unread_row(&self) -> bool {
        self.text.is_none() && !matches!(self.state, State::Plain)
    }
}

#[derive(Debug, Default, Clone)]
pub struct Vault {
    /// Boxed: the map keeps about a third of its slots empty, and a note
    /// inline took its room in each (3 MB at 100k notes natively).
    pub notes: FxHashMap<Shared, Box<Note>>,
    /// Notes by name and by the names they link to, built when first asked.
    links: Lazy<Links>,
    /// Qualified table -> its readable rows.
    pub rows: FxHashMap<String, BTreeSet<Shared>>,
    /// Qualified table -> its unreadable notes.
    pub unreadable: FxHashMap<String, BTreeSet<String>>,
    /// Rows by the values of unique columns, built when first asked.
    unique: Lazy<Unique>,
    /// The notes added, changed or removed since `take_touched` (None while
    /// the vault is built at open): the stored semantic index keeps up with them.
    touched: Option<FxHashSet<String>>,
    /// How many notes have no text (see `Note::text`).
    unread: usize,
    /// Each table's rows while the vault is built (`build_cached`): a set made
    /// in one go from them, not a row at a time.
    building: Option<FxHashMap<String, Vec<Shared>>>,
    /// How many of those are rows: a write or a due tick has every row's text
    /// before it runs (`Engine::texts_wanted`); a plain note's text is read
    /// when a turn asks.
    unread_rows: usize,
    /// Unread notes whose texts a turn asked for (`text`, `linking_to`): the
    /// turn is given up and asks the host for them (`take_wanted`).
    wanted: std::cell::RefCell<BTreeSet<String>>,
    /// Counts every change to the notes held: a proposal's view of the
    /// tables (proposals.rs) is built again once the vault moved on.
    pub(crate) generation: u64,
}

/// The largest note the engine writes or reads as a row. Every version of a row
/// is kept (journal, log), so a 50 MB note would cost hundreds of MB a write;
/// large content belongs in an attachment the note embeds.
pub const MAX_NOTE_BYTES: usize = 8 << 20;

/// A note's size as the vault keeps it: 4 bytes, not 8, took a note of the
/// plugin's engine from 112 bytes to 104 (its allocations from 120 to 112:
/// 0.8 MB at 100k notes). A note of 4 GiB or more (which no host reads whole)
/// is kept as `Size::MAX`, which vouches for no size (`same_size`).
pub type Size = u32;

/// `len` as a note's `Size`.
pub fn size(len: u64) -> Size {
    Size::try_from(len).unwrap_or(Size::MAX)
}

/// Whether a note kept as `kept` bytes has `len` bytes.
pub fn same_size(kept: Size, len: u64) -> bool {
    kept != Size::MAX && u64::from(kept) == len
}

/// Why a note is too large to be a row or to be written, if it is.
pub fn too_large(path: &str, text: &str) -> Option<String> {
    (text.len() > MAX_NOTE_BYTES).then(|| {
        // Tenths of a MiB in integers: float formatting with a precision would
        // bring its own code into the plugin's bundle for this one message.
        let tenths = (text.len() * 10 + (1 << 19)) >> 20;
        format!(
            "{path} is {}.{} MiB, over the {} MiB a note may be: move its large content to an attachment (embedded with ![[file]]) and keep the note small",
            tenths / 10,
            tenths % 10,
            MAX_NOTE_BYTES >> 20
        )
    })
}

/// Reads a note's text as the schema says: a row, an unreadable row or a plain note.
pub fn read_state(schema: &Schema, path: &str, text: &str) -> State {
    let Some(table) = schema.table_of_path(path) else {
        return State::Plain;
    };
    if let Some(message) = too_large(path, text) {
        return State::Unreadable { table: table.to_string(), message };
    }
    if let Some(c) = conflicts::copy_of(path).filter(|c| !c.same_id_only) {
        return State::Unreadable { table: table.to_string(), message: conflicts::copy_message(path, &c) };
    }
    match parse_row(schema.shared_name(table), &schema.tables[table], text) {
        Ok(r) => State::Row(r),
        Err(_) if conflicts::git_sides(text).is_some() => {
            State::Unreadable { table: table.to_string(), message: conflicts::GIT_MESSAGE.to_string() }
        }
        Err(message) => State::Unreadable { table: table.to_string(), message },
    }
}

/// A row of `table` (defined by `def`) from a note's text.
pub fn parse_row(table: impl Into<Arc<str>>, def: &TableDef, text: &str) -> Result<Row, String> {
    let parsed = frontmatter::parse(text)?;
    // Moved into a map of their own size (a removal from the parsed map would
    // move the entries after it), kept as its JSON (see the end).
    let kept = parsed.values.len() - ["table", "id"].iter().filter(|k| parsed.values.contains_key(**k)).count();
    let mut values = Map::with_capacity(kept);
    let mut id = None;
    for (k, v) in parsed.values {
        match k.as_str() {
            "table" => {}
            "id" => id = Some(v),
            _ => {
                values.insert(k, v);
            }
        }
    }
    let id = match id {
        Some(Value::String(s)) => Some(s),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    // A text column keeps what the person wrote: `isbn: 0811858022` is text, not a number.
    for (name, col) in &def.columns {
        if col.scalar_type() == ColType::Text && col.ty != ColType::List {
            if let Some(raw) = parsed.plain.get(name) {
                values.insert(name.clone(), Value::String(raw.clone()));
            }
        }
    }
    // As JSON text, as a reopen through the notes' cache keeps it: a first open
    // of 100k rows held a map of about 700 bytes for each (50 MB more in wasm
    // at its peak), and writing the cache made their JSON anyway.
    Ok(Row { table: table.into(), id: id.map(RowId::from), values: Values::from_map_as_raw(values) })
}

/// The key a value is compared by for uniqueness.
pub fn value_key(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) if s.starts_with("[[") => Some(crate::filter::link_target(s).to_lowercase()),
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

impl Vault {
    pub fn build(schema: &Schema, notes: Vec<(String, String, i64)>) -> Vault {
        Vault::build_cached(schema, (0, vec![]), notes)
    }

    /// As `build`, with notes whose derived data came from the store's cache
    /// (their texts unread).
    /// `cached`: how many, and the notes.
    pub fn build_cached(
        schema: &Schema,
        cached: (usize, impl IntoIterator<Item = Taken>),
        notes: Vec<(String, String, i64)>,
    ) -> Vault {
        let mut v = Vault::default();
        let (n, cached) = cached;
        v.notes.reserve(n + notes.len());
        // Before the notes read: none is a sync tool's copy (those are never
        // cached), and some are the originals a copy is told apart by.
        v.building = Some(FxHashMap::default());
        for (path, c, text) in cached {
            v.index_note(schema, path, text, c);
        }
        v.insert_originals_first(schema, notes);
        v.settle();
        v.touched = Some(FxHashSet::default());
        v
    }

    /// The notes of a cache (`notecache::Prebuilt`), with the files read
    /// beside them: a note it holds gets its text, taken as the cache vouched
    /// for it (not parsed, nor hashed); the others are indexed. Answers how
    /// many got their texts. As `build_cached` would have made it.
    pub fn with_read(mut self, schema: &Schema, notes: Vec<(String, String, i64)>) -> (Vault, usize) {
        let (mut attached, mut read) = (0, vec![]);
        for (path, text, mtime) in notes {
            match self.read_back(&path, text, mtime, true) {
                Ok(()) => attached += 1,
                Err(text) => read.push((path, text, mtime)),
            }
        }
        self.insert_many(schema, read);
        // As built: no note is new to the stored semantic index's eyes.
        self.take_touched();
        (self, attached)
    }

    /// Adds notes read together, as `insert` does each: the host's first read
    /// of a vault it listed (`Engine::read_listed`). Many at once are indexed
    /// as `build_cached` indexes, their sets sorted once at the end.
    pub fn insert_many(&mut self, schema: &Schema, notes: Vec<(String, String, i64)>) {
        if notes.len() < 64 || self.building.is_some() {
            // In any order the host read them (the plugin's come as reads end).
            return self.insert_originals_first(schema, notes);
        }
        // Only a path not in the index yet, and once, may go in unsorted: a
        // removal from a set searches it. The others (a host naming a path
        // twice) go in after, one at a time, in order: the last one holds.
        let mut seen = FxHashSet::default();
        let fresh: Vec<bool> =
            notes.iter().map(|(p, _, _)| !self.notes.contains_key(p.as_str()) && seen.insert(p.as_str())).collect();
        drop(seen);
        let (fresh, again): (Vec<_>, Vec<_>) = notes.into_iter().zip(fresh).partition(|(_, f)| *f);
        self.notes.reserve(fresh.len());
        self.building = Some(FxHashMap::default());
        self.insert_originals_first(schema, fresh.into_iter().map(|(n, _)| n).collect());
        self.settle();
        again.into_iter().for_each(|((p, t, m), _)| self.insert(schema, p, t, m));
    }

    /// A name that may be a sync tool's copy is one only beside its original:
    /// the originals go first.
    fn insert_originals_first(&mut self, schema: &Schema, notes: Vec<(String, String, i64)>) {
        let (maybe_copies, notes): (Vec<_>, Vec<_>) =
            notes.into_iter().partition(|(p, _, _)| conflicts::copy_of(p).is_some_and(|c| c.same_id_only));
        for (path, text, mtime) in notes.into_iter().chain(maybe_copies) {
            self.insert(schema, path, text, mtime);
        }
    }

    /// Ends building: the sets filled unsorted are sorted once, not a path at a
    /// time (a person a thousand films link to would cost a thousand searches
    /// and moves), and the rows gathered per table join the tables' sets.
    fn settle(&mut self) {
        if let Some(l) = self.links.built() {
            l.settle();
        }
        if let Some(u) = self.unique.built() {
            u.settle();
        }
        for (table, mut paths) in self.building.take().unwrap_or_default() {
            crate::pathset::sort(&mut paths);
            match self.rows.get_mut(&table) {
                Some(set) if !set.is_empty() => set.extend(paths),
                _ => {
                    self.rows.insert(table, paths.into_iter().collect());
                }
            }
        }
    }

    pub fn get(&self, path: &str) -> Option<&Note> {
        self.notes.get(path).map(|n| &**n)
    }

    pub fn row(&self, path: &str) -> Option<&Row> {
        self.notes.get(path).and_then(|n| n.row())
    }

    /// A note's text; None for a note that is absent, or unread (opened from
    /// the cache): that one is kept as wanted, and the turn that asked is given
    /// up for the host to read it (`take_wanted`). Every row is read before a
    /// write runs, so mostly plain notes (a link to rewrite) are asked for here.
    pub fn text(&self, path: &str) -> Option<&str> {
        let n = self.notes.get(path)?;
        if n.text.is_none() {
            self.wanted.borrow_mut().insert(path.to_string());
        }
        n.text.as_deref()
    }

    /// The unread notes a turn asked for since the last call: the host reads
    /// them and the turn runs again.
    pub fn take_wanted(&self) -> Vec<String> {
        std::mem::take(&mut *self.wanted.borrow_mut()).into_iter().collect()
    }

    /// The notes opened from the cache whose texts were not read since.
    pub fn unread(&self) -> impl Iterator<Item = &str> {
        self.notes.iter().filter(|(_, n)| n.text.is_none()).map(|(p, _)| &**p)
    }

    /// The unread notes that are rows (see `unread_rows`).
    pub fn unread_rows(&self) -> impl Iterator<Item = &str> {
        self.notes.iter().filter(|(_, n)| n.is_unread_row()).map(|(p, _)| &**p)
    }

    /// Every row's values kept as JSON only (see `Values::compact`).
    /// Every note with its path, for the notes' cache (it keeps those it may).
    pub fn cached_notes(&self) -> impl Iterator<Item = (&str, &Note)> {
        self.notes.iter().map(|(p, n)| (&**p, &**n))
    }

    pub fn compact_rows(&mut self) {
        for n in self.notes.values_mut() {
            if let State::Row(r) = &mut n.state {
                r.values.compact();
            }
        }
    }

    pub fn unread_count(&self) -> usize {
        self.unread
    }

    pub fn unread_rows_count(&self) -> usize {
        self.unread_rows
    }

    /// A text the host read for a note opened from the cache. When it is not the
    /// text the cache vouched for (changed keeping its size and mtime), the note
    /// keeps no text and the text is given back: the caller takes it as the
    /// note now, as it takes a note not in the vault yet (listed unread and not
    /// vouched for: `Engine::to_read`). `listed`: read right after the listing
    /// that gave `mtime`, a text of the size and mtime vouched for is taken
    /// unhashed, as the cache took the note (`Engine::read_listed`).
    pub fn read_back(&mut self, path: &str, text: String, mtime: i64, listed: bool) -> Result<(), String> {
        let Some(n) = self.notes.get_mut(path) else { return Err(text) };
        if n.text.is_some() {
            return Ok(());
        }
        let vouched = listed && same_size(n.size, text.len() as u64) && n.mtime == mtime;
        if !vouched && TextHash::of(&text) != n.hash {
            return Err(text);
        }
        let row = n.is_unread_row();
        n.text = Some(text.into_boxed_str());
        self.generation += 1;
        self.unread -= 1;
        self.unread_rows -= usize::from(row);
        Ok(())
    }

    /// Puts a note back as it was before a write that was given up touched it,
    /// unread (`Tx::unread`).
    pub fn put_unread(&mut self, schema: &Schema, path: String, n: Note) {
        self.remove(&path);
        let Note { text, size, mtime, state, links, hash } = n;
        self.index_note(schema, path.into(), text, Cached { size, mtime, hash, links, state });
    }

    /// Adds or replaces a note.
    pub fn insert(&mut self, schema: &Schema, path: String, text: String, mtime: i64) {
        self.remove(&path);
        let mut state = read_state(schema, &path, &text);
        if let Some(copy) = self.copy_beside_original(&path, &state) {
            state = copy;
        }
        let links = links::stems(&text);
        let c = Cached { size: size(text.len() as u64), mtime, hash: TextHash::of(&text), links, state };
        self.index_note(schema, path.into(), Some(text.into_boxed_str()), c);
    }

    /// Indexes a note by what was derived from it.
    fn index_note(&mut self, schema: &Schema, path: Shared, text: Option<Box<str>>, c: Cached) {
        let Cached { size, mtime, hash, links, state } = c;
        let building = self.building.is_some();
        if let Some(l) = self.links.built() {
            l.add(&path, &links, building);
        }
        match &state {
            State::Row(r) => {
                // The rows' table looked up before it is copied (`slot`): this
                // runs for every note.
                match &mut self.building {
                    Some(b) => slot(b, &r.table).push(path.clone()),
                    None => {
                        slot(&mut self.rows, &r.table).insert(path.clone());
                    }
                }
                if let Some(u) = self.unique.built() {
                    u.add(schema, &path, r, building);
                }
            }
            State::Unreadable { table, .. } => {
                self.unreadable.entry(table.clone()).or_default().insert(path.to_string());
            }
            State::Plain => {}
        }
        if let Some(t) = &mut self.touched {
            t.insert(path.to_string());
        }
        let note = Note { text, size, mtime, state, links, hash };
        self.generation += 1;
        self.tally(&note, true);
        self.notes.insert(path, Box::new(note));
    }

    /// A row that is a sync tool's copy (iCloud's `Charade 2`, OneDrive's
    /// `Charade-LAPTOP`), as the index keeps it: its original beside it holds the
    /// same row id.
    fn copy_beside_original(&self, path: &str, state: &State) -> Option<State> {
        let State::Row(r) = state else { return None };
        let c = conflicts::copy_of(path).filter(|c| c.same_id_only)?;
        let original = self.row(&c.original)?;
        let same = r.id.is_some() && original.id == r.id;
        same.then(|| State::Unreadable { table: r.table.to_string(), message: conflicts::copy_message(path, &c) })
    }

    /// Another note that is the same file as `path` on a disk that ignores case
    /// and Unicode normalisation.
    pub fn same_file(&self, path: &str) -> Option<&str> {
        let key = crate::names::fold(path);
        self.links().named(&links::path_stem(path)).find(|p| *p != path && crate::names::fold(p) == key)
    }

    /// The notes touched since the last call (see `touched`).
    pub fn take_touched(&mut self) -> FxHashSet<String> {
        self.touched.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Counts a note in (`added`) or out of the unread counts.
    fn tally(&mut self, n: &Note, added: bool) {
        let (all, rows) = (usize::from(n.text.is_none()), usize::from(n.is_unread_row()));
        if added {
            self.unread += all;
            self.unread_rows += rows;
        } else {
            self.unread -= all;
            self.unread_rows -= rows;
        }
    }

    /// Removes a note; returns it.
    pub fn remove(&mut self, path: &str) -> Option<Note> {
        let note = self.notes.remove(path)?;
        self.generation += 1;
        self.tally(&note, false);
        if let Some(t) = &mut self.touched {
            t.insert(path.to_string());
        }
        if let Some(l) = self.links.built() {
            l.remove(path, &note.links);
        }
        match &note.state {
            State::Row(r) => {
                if let Some(s) = self.rows.get_mut(&*r.table) {
                    s.remove(path);
                }
                if let Some(u) = self.unique.built() {
                    u.remove(path, r);
                }
            }
            State::Unreadable { table, .. } => {
                if let Some(s) = self.unreadable.get_mut(table) {
                    s.remove(path);
                }
            }
            State::Plain => {}
        }
        Some(*note)
    }

    /// The other rows holding the same value of a unique column.
    /// `schema`: the engine's, which says the unique columns when the lookup
    /// is built.
    pub fn unique_others(&self, schema: &Schema, table: &str, column: &str, key: &str, path: &str) -> Vec<&str> {
        let found = self.unique(schema).get(table, column, key);
        // Another value of the same lookup key is no twin.
        let holds = |p: &str| {
            let value = self.get(p).and_then(Note::row).and_then(|r| r.values.pick(column));
            value.as_ref().and_then(value_key).is_some_and(|k| k == key)
        };
        found.map(|s| s.iter().filter(|p| *p != path && holds(p)).collect()).unwrap_or_default()
    }

    fn links(&self) -> &Links {
        self.links.get_or(|| Links::of(&self.notes))
    }

    fn unique(&self, schema: &Schema) -> &Unique {
        self.unique.get_or(|| Unique::of(schema, &self.notes))
    }

    /// Builds every lookup not built yet (see `Engine::warm_lookups`).
    pub fn warm(&self, schema: &Schema) {
        self.links();
        self.unique(schema);
    }

    /// Re-reads every note under a table's folder (after its definition changed).
    pub fn reindex(&mut self, schema: &Schema, paths: Vec<String>) {
        for p in paths {
            let Some(mtime) = self.notes.get(p.as_str()).map(|n| n.mtime) else { continue };
            // An unread note is asked for (`take_wanted`): the turn runs again.
            if let Some(text) = self.text(&p).map(str::to_string) {
                self.insert(schema, p, text, mtime);
            }
        }
    }

    /// Every note path under a folder (with a trailing slash).
    pub fn paths_under(&self, folder: &str) -> Vec<String> {
        let mut v: Vec<String> = self.notes.keys().filter(|p| p.starts_with(folder)).map(|p| p.to_string()).collect();
        v.sort();
        v
    }

    /// Whether `path` is a row of `table`, readable or not.
    pub fn is_row_of(&self, path: &str, table: &str) -> bool {
        match self.notes.get(path).map(|n| &n.state) {
            Some(State::Row(r)) => *r.table == *table,
            Some(State::Unreadable { table: t, .. }) => t == table,
            _ => false,
        }
    }

    pub fn table_rows(&self, table: &str) -> impl Iterator<Item = &str> {
        self.rows.get(table).into_iter().flat_map(|s| s.iter().map(|p| &**p))
    }

    pub fn unreadable_rows(&self, table: &str) -> impl Iterator<Item = &str> {
        self.unreadable.get(table).into_iter().flat_map(|s| s.iter().map(String::as_str))
    }

    /// The note a link target names, as Obsidian resolves it: a path, else the note
    /// with that name (the one in the linking note's folder first, then the shortest
    /// path).
    pub fn resolve(&self, target: &str, from: &str) -> Option<&str> {
        let t = target.trim();
        let t = t.strip_suffix(".md").unwrap_or(t);
        if t.is_empty() {
            return None;
        }
        let cands = self.links().named(&links::target_stem(t));
        if t.contains('/') {
            let want = format!("{}.md", t.to_lowercase());
            return cands
                .clone()
                .find(|p| p.to_lowercase() == want)
                .or_else(|| cands.clone().find(|p| p.to_lowercase().ends_with(&format!("/{want}"))));
        }
        if cands.clone().nth(1).is_none() {
            return cands.clone().next();
        }
        let folder = from.rsplit_once('/').map(|(f, _)| f).unwrap_or("");
        cands
            .clone()
            .find(|p| p.rsplit_once('/').map(|(f, _)| f).unwrap_or("") == folder)
            .or_else(|| cands.min_by_key(|p| (p.len(), *p)))
    }

    /// The notes that hold a link whose lower-case stem is `stem`.
    #[cfg(test)]
    pub fn linked_from(&self, stem: &str) -> Vec<&str> {
        self.links().linked_from.get(stem).map(|s| s.iter().collect()).unwrap_or_default()
    }

    /// The notes that hold a link resolving to `path` (an unread one is asked
    /// for: see `text`).
    pub fn linking_to(&self, path: &str) -> Vec<String> {
        self.linking(path, false)
    }

    /// The rows among `linking_to`: no plain note's text is needed.
    pub fn rows_linking_to(&self, path: &str) -> Vec<String> {
        self.linking(path, true)
    }

    fn linking(&self, path: &str, rows_only: bool) -> Vec<String> {
        let Some(srcs) = self.links().linked_from.get(&links::path_stem(path)) else {
            return vec![];
        };
        let mut out: Vec<String> = srcs
            .iter()
            .filter(|src| !rows_only || self.row(src).is_some())
            .filter(|src| {
                let Some(text) = self.text(src) else { return false };
                links::scan(text).iter().any(|s| self.resolve(&text[s.start..s.end], src) == Some(path))
            })
            .map(str::to_string)
            .collect();
        out.sort();
        out
    }

    /// The notes that hold a link whose target has the stem of `path`, resolved or not
    /// (after a note is removed, its old links dangle and name it only by stem).
    pub fn naming(&self, path: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .links()
            .linked_from
            .get(&links::path_stem(path))
            .map(|s| s.iter().map(str::to_string).collect())
            .unwrap_or_default();
        v.sort();
        v
    }

    /// The text a link to `path` from `from` should hold: the note's name, or its path
    /// (without `.md`) when the name alone would resolve elsewhere.
    pub fn link_text(&self, path: &str, from: &str) -> String {
        let stem = path.rsplit('/').next().unwrap_or(path);
        let stem = stem.strip_suffix(".md").unwrap_or(stem);
        if self.resolve(stem, from) == Some(path) {
            stem.to_string()
        } else {
            path.strip_suffix(".md").unwrap_or(path).to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    const M: &str = "version: 1\ntables:\n  main.public.film:\n    columns:\n      title: {type: text, unique: true}\n";

    fn film(n: usize, title: &str) -> (String, String, i64) {
        let text = format!("---\ntable: main.public.film\ntitle: {title}\n---\nSeen with [[Ann]].\n");
        (format!("datanotes/main/public/film/F{n}.md"), text, 1)
    }

    /// The index's sets are filled unsorted while a vault is built and sorted
    /// once: what it answers then, and after a note is added or removed, is
    /// what a set kept sorted all along would answer.
    #[test]
    fn a_vault_built_at_once_indexes_as_one_built_a_note_at_a_time() {
        let schema = Schema::parse(M).unwrap();
        // Enough for `insert_many` to build (64 at least), in no order.
        let mut notes: Vec<_> = (0..80).rev().map(|n| film(n, &format!("T{}", n % 10))).collect();
        notes.push(("Ann.md".into(), "A person.\n".into(), 1));
        let built = Vault::build(&schema, notes.clone());
        let mut one_by_one = Vault::build(&schema, vec![]);
        for (p, t, m) in notes.clone() {
            one_by_one.insert(&schema, p, t, m);
        }
        // As a host's first read after a listing: all at once, a path twice.
        let mut many = Vault::build(&schema, vec![]);
        let mut twice = notes.clone();
        twice.push(film(5, "T5 again"));
        many.insert_many(&schema, twice);
        // As `insert` each: the last text of a path holds.
        let five = "datanotes/main/public/film/F5.md";
        assert_eq!(many.row(five).map(|r| r.values["title"].clone()), Some("T5 again".into()));
        let (p, t, m) = film(5, "T5");
        many.insert(&schema, p, t, m);
        // Onto notes indexed already (a reopen's, or an earlier read's).
        let mut onto = Vault::build(&schema, notes[..10].to_vec());
        onto.insert_many(&schema, notes[10..].to_vec());
        let titles = (3..80).step_by(10).skip(1).map(|n| format!("datanotes/main/public/film/F{n}.md"));
        let titles: Vec<String> = titles.collect();
        for v in [built, one_by_one, many, onto] {
            let mut v = v;
            let linking = v.rows_linking_to("Ann.md");
            assert_eq!(linking.len(), 80);
            assert_eq!(v.naming("Ann.md"), linking);
            let rows: Vec<_> = v.rows["main.public.film"].iter().map(|p| p.to_string()).collect();
            let mut sorted: Vec<_> = (0..80).map(|n| format!("datanotes/main/public/film/F{n}.md")).collect();
            sorted.sort();
            assert_eq!(rows, sorted);
            let twins = v.unique_others(&schema, "main.public.film", "title", "T3", "datanotes/main/public/film/F3.md");
            assert_eq!(twins, titles);
            assert_eq!(v.resolve("F7", "Ann.md"), Some("datanotes/main/public/film/F7.md"));
            v.remove("datanotes/main/public/film/F13.md");
            let (p, t, m) = film(90, "T3");
            v.insert(&schema, p, t, m);
            let twins = v.unique_others(&schema, "main.public.film", "title", "T3", "datanotes/main/public/film/F3.md");
            assert_eq!(twins[0], "datanotes/main/public/film/F23.md");
            assert_eq!(twins.last(), Some(&"datanotes/main/public/film/F90.md"));
            assert_eq!(twins.len(), titles.len());
            assert_eq!(v.rows_linking_to("Ann.md").len(), 80);
        }
    }

    /// The lookups (names, links, unique values) are built when a turn first
    /// asks: one built at open and kept up to date through every kind of
    /// change answers as one built only after them.
    #[test]
    fn lookups_built_late_answer_as_lookups_kept_up_to_date() {
        let schema = Schema::parse(M).unwrap();
        let people = ["Ann", "Bob", "Cy"];
        let note = |n: usize, title: &str| {
            let (path, _, m) = film(n, title);
            let text = format!(
                "---\ntable: main.public.film\ntitle: {title}\n---\n[[{}]] and [[F{}]].\n",
                people[n % 3],
                n + 1
            );
            (path, text, m)
        };
        let changes = |v: &mut Vault, ask: &dyn Fn(&Vault)| {
            v.insert_many(&schema, (0..70).map(|n| note(n, &format!("T{}", n % 7))).collect());
            ask(v);
            v.insert(&schema, "Ann.md".into(), "[[Bob]]\n".into(), 1);
            v.insert(&schema, "sub/Bob.md".into(), "no links\n".into(), 1);
            ask(v);
            v.remove(&film(3, "").0);
            let (p, t, m) = note(4, "T0");
            v.insert(&schema, p, t, m);
            ask(v);
            // Many at once onto lookups already built, a path again among them.
            v.insert_many(&schema, (65..140).map(|n| note(n, &format!("U{}", n % 5))).collect());
            v.remove("Ann.md");
        };
        let answers = |v: &Vault| {
            let mut out = vec![];
            for stem in ["ann", "bob", "cy", "f5", "f66", "f141", "nobody"] {
                out.push(format!("{stem}: {:?} {:?}", v.linked_from(stem), v.resolve(stem, "x.md")));
            }
            for p in ["Ann.md", "sub/Bob.md", &film(10, "").0, &film(66, "").0] {
                out.push(format!("{p}: {:?} {:?} {:?}", v.linking_to(p), v.naming(p), v.same_file(&p.to_uppercase())));
            }
            for k in ["T0", "T3", "U1", "U4"] {
                let others = v.unique_others(&schema, "main.public.film", "title", k, &film(0, "").0);
                out.push(format!("{k}: {others:?}"));
            }
            out
        };
        let mut early = Vault::build(&schema, vec![]);
        let mut late = early.clone();
        answers(&early);
        changes(&mut early, &|v| {
            answers(v);
        });
        changes(&mut late, &|_| {});
        assert!(late.links.built().is_none() && late.unique.built().is_none(), "nothing asked yet");
        let mut warm = late.clone();
        warm.warm(&schema);
        assert!(warm.links.built().is_some() && warm.unique.built().is_some());
        let (a, b) = (answers(&early), answers(&late));
        assert_eq!(a, b);
        assert_eq!(answers(&warm), a);
        assert!(
            a[0].contains("/F0.md")
                && !a[0].contains("/F3.md")
                && a.iter().any(|l| l.starts_with("U1: [\"") && l.contains("F71.md")),
            "{a:#?}"
        );
    }

    /// Two names of one lookup key (`lookups::key`), of 16 bytes: a first
    /// word chosen, the second what gives the hash's state after both.
    pub fn same_key() -> (String, String) {
        const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789 -_!'(),+=~@&;";
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap());
        let first = |w: u64| w.wrapping_mul(SEED).rotate_left(5);
        let a = "harmonia mundi 2";
        let state = first(word(&a.as_bytes()[..8])) ^ word(&a.as_bytes()[8..]);
        for n in 0..100_000_000u64 {
            let mut w1 = [0u8; 8];
            let mut k = n;
            for c in &mut w1 {
                *c = ALPHABET[(k % ALPHABET.len() as u64) as usize];
                k /= ALPHABET.len() as u64;
            }
            let w2 = (state ^ first(word(&w1))).to_le_bytes();
            if w2.iter().all(|c| ALPHABET.contains(c)) {
                let b = String::from_utf8([w1, w2].concat()).unwrap();
                return (a.to_string(), b);
            }
        }
        panic!("no name found");
    }

    /// The lookups key names and values by 8 bytes of hash: two of one key
    /// share a set, and are told apart when read.
    #[test]
    fn names_and_values_of_one_lookup_key_are_told_apart() {
        let (a, b) = same_key();
        assert!(a != b && crate::lookups::key(&a) == crate::lookups::key(&b), "{a:?} {b:?}");
        let schema = Schema::parse(M).unwrap();
        let row = |n: usize, title: &str| {
            let text = format!("---\ntable: main.public.film\ntitle: \"{title}\"\n---\n");
            (format!("datanotes/main/public/film/F{n}.md"), text, 1)
        };
        let (pa, pb) = (format!("x/{a}.md"), format!("y/{b}.md"));
        let f = |n: usize| format!("datanotes/main/public/film/F{n}.md");
        // Built with both, and built with one, the other added after.
        let both = Vault::build(
            &schema,
            vec![(pa.clone(), "A.\n".into(), 1), (pb.clone(), "B.\n".into(), 1), row(1, &a), row(2, &b)],
        );
        let mut late = Vault::build(&schema, vec![(pa.clone(), "A.\n".into(), 1), row(1, &a)]);
        late.warm(&schema);
        late.insert(&schema, pb.clone(), "B.\n".into(), 1);
        let (p, t, m) = row(2, &b);
        late.insert(&schema, p, t, m);
        for (i, mut v) in [both, late].into_iter().enumerate() {
            assert_eq!(v.resolve(&a, "z.md"), Some(pa.as_str()), "{i}");
            assert_eq!(v.resolve(&b, "z.md"), Some(pb.as_str()), "{i}");
            assert_eq!(v.same_file(&format!("X/{}.md", a.to_uppercase())), Some(pa.as_str()), "{i}");
            assert_eq!(v.unique_others(&schema, "main.public.film", "title", &a, &f(1)), Vec::<&str>::new());
            assert_eq!(v.unique_others(&schema, "main.public.film", "title", &b, &f(1)), [f(2)]);
            let (p, t, m) = row(3, &a);
            v.insert(&schema, p, t, m);
            assert_eq!(v.unique_others(&schema, "main.public.film", "title", &a, &f(1)), [f(3)], "a twin is one");
        }
    }

    /// Rows parsed at a first open hold their values as JSON alone, as a
    /// reopen through the notes' cache leaves them, and answer as parsed; a
    /// filter, a sort and a check of every row read each row from its JSON
    /// and leave no row holding a map.
    #[test]
    fn rows_parsed_at_a_first_open_keep_only_their_json_and_reads_of_every_row_build_no_map() {
        use crate::engine::{Engine, NoteFile};
        use crate::schema::METASTORE;
        let mut files: Vec<NoteFile> = (0..5)
            .map(|n| film(n, &format!("T{n}")))
            .map(|(path, text, _)| NoteFile { path, text: text.replace("\n---\n", "\ntags: [a, b]\n---\n"), mtime: 1 })
            .collect();
        files.push(NoteFile { path: METASTORE.into(), text: M.into(), mtime: 1 });
        let mut e = Engine::open_with_cache(files, vec![], None, vec![], 1_000);
        let built = |e: &Engine| -> Vec<String> {
            let built = e.vault().notes.iter().filter(|(_, n)| n.row().is_some_and(|r| r.values.is_built()));
            built.map(|(p, _)| p.to_string()).collect()
        };
        assert_eq!(built(&e), Vec::<String>::new());
        let row = e.vault().row("datanotes/main/public/film/F3.md").unwrap();
        assert_eq!(row.values.to_raw(), r#"{"title":"T3","tags":["a","b"]}"#);
        assert_eq!(row.values.pick("tags"), Some(serde_json::json!(["a", "b"])));
        let cache = e.take_cache().expect("a first open writes the cache");
        assert!(cache.text.contains(r#""v":{"title":"T3","tags":["a","b"]}"#), "{}", cache.text);

        // (At 100k rows a map on each was 80 MB more in wasm, and the first
        // filtered read took 5.8 s there.)
        let answer = |e: &mut Engine, op: &str, args: Value| match e.call(op, args, "test", 2_000) {
            crate::step::Step::Done(o) => o.answer,
            other => panic!("{op}: {other:?}"),
        };
        let found = answer(
            &mut e,
            "select_rows",
            serde_json::json!({"table": "film", "where": {"title": {"in": ["T1", "T3"]}}, "order_by": "-title"}),
        );
        let titles: Vec<&Value> =
            found["rows"].as_array().unwrap_or_else(|| panic!("{found}")).iter().map(|r| &r["title"]).collect();
        assert_eq!(titles, ["T3", "T1"], "{found}");
        let checked = answer(&mut e, "check_table", serde_json::json!({"table": "film"}));
        assert_eq!((checked["rows_checked"].as_u64(), checked["total"].as_u64()), (Some(5), Some(0)), "{checked}");
        assert_eq!(built(&e), Vec::<String>::new());
    }
}
