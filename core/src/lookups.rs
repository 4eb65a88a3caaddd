//! The vault's lookups derived from its notes: notes by name, who links to
//! whom, rows by unique value. Each is built from the notes the first time a
//! turn asks (`Lazy`), not at open: a reopen of 100k notes through the cache
//! spent about half its indexing on them, and most commands (a read of rows)
//! never look a link or a unique value up. Once built, each is kept up to date
//! note by note; until then, the notes alone say what it will hold.

use crate::fxhash::{slot, FxHashMap, FxHashSet, FxHasher};
use crate::links::{self, Stems};
use crate::pathset::{PathSet, Shared};
use crate::schema::Schema;
use crate::vault::{value_key, Note, Row, State};
use std::sync::OnceLock;

/// A lookup built when first read (see the module). Cloned with the vault.
#[derive(Debug, Default, Clone)]
pub struct Lazy<T>(OnceLock<T>);

impl<T> Lazy<T> {
    pub fn get_or(&self, build: impl FnOnce() -> T) -> &T {
        self.0.get_or_init(build)
    }

    /// The lookup when built: a change to the notes before then needs no
    /// change here, as the build reads the notes as they are then.
    pub fn built(&mut self) -> Option<&mut T> {
        self.0.get_mut()
    }
}

/// A name's or a value's key in the lookups that hold one for nearly every
/// note: its 8 bytes, not a copy of it (a string and its heap block took
/// about 28 bytes a note in wasm: with 100k films the plugin's engine held
/// 3 MB more once idle). Two names of one key share a set: read through a
/// check of the name.
pub fn key(s: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = FxHasher::default();
    h.write(s.as_bytes());
    h.write_u8(0xff);
    h.finish()
}

/// Notes by name and by the names they link to.
#[derive(Debug, Default, Clone)]
pub struct Links {
    /// `key` of the lower-case stem -> paths of the notes with that stem.
    by_stem: FxHashMap<u64, PathSet>,
    /// The keys of `by_stem` shared by notes of different stems: their sets
    /// are read through a check of each path's stem (`named`).
    mixed: FxHashSet<u64>,
    /// Lower-case stem of a link target -> the notes holding such a link.
    pub linked_from: FxHashMap<String, PathSet>,
}

impl Links {
    pub fn of(notes: &FxHashMap<Shared, Box<Note>>) -> Links {
        let mut l = Links::default();
        // Most notes have a name of their own: a set each, made without rehashing.
        l.by_stem.reserve(notes.len());
        for (path, n) in notes {
            l.add(path, &n.links, true);
        }
        l.settle();
        l
    }

    /// `building`: filled unsorted, `settle` sorts (see `PathSet::add`).
    pub fn add(&mut self, path: &Shared, stems: &Stems, building: bool) {
        // Keys looked up before they are copied (`slot`): most are there already
        // (a person many films link to).
        for s in stems.iter() {
            slot(&mut self.linked_from, s).add(path.clone(), building);
        }
        let stem = links::path_stem(path);
        let k = key(&stem);
        let set = self.by_stem.entry(k).or_default();
        if set.iter().next().is_some_and(|p| !self.mixed.contains(&k) && links::path_stem(p) != stem) {
            self.mixed.insert(k);
        }
        set.add(path.clone(), building);
    }

    /// The notes whose lower-case stem is `stem` (`links::path_stem`), in order.
    pub fn named<'a>(&'a self, stem: &str) -> impl Iterator<Item = &'a str> + Clone + use<'a> {
        let k = key(stem);
        // Checked only where two stems share the key: a check folds each name.
        let check = self.mixed.contains(&k).then(|| stem.to_string());
        let set = self.by_stem.get(&k).into_iter().flat_map(PathSet::iter);
        set.filter(move |p| check.as_ref().is_none_or(|stem| links::path_stem(p) == *stem))
    }

    pub fn remove(&mut self, path: &str, stems: &Stems) {
        for s in stems.iter() {
            if let Some(set) = self.linked_from.get_mut(s) {
                set.remove(path);
            }
        }
        if let Some(set) = self.by_stem.get_mut(&key(&links::path_stem(path))) {
            set.remove(path);
        }
    }

    pub fn settle(&mut self) {
        self.by_stem.values_mut().chain(self.linked_from.values_mut()).for_each(PathSet::settle);
    }
}

/// Table -> its unique column -> `key` of a value key -> rows holding it (or
/// another value of the same key: `Vault::unique_others` checks each row's).
#[derive(Debug, Default, Clone)]
pub struct Unique(FxHashMap<String, FxHashMap<String, FxHashMap<u64, PathSet>>>);

impl Unique {
    pub fn of(schema: &Schema, notes: &FxHashMap<Shared, Box<Note>>) -> Unique {
        let mut u = Unique::default();
        for (path, n) in notes {
            if let State::Row(r) = &n.state {
                u.add(schema, path, r, true);
            }
        }
        u.settle();
        u
    }

    pub fn add(&mut self, schema: &Schema, path: &Shared, r: &Row, building: bool) {
        let Some(def) = schema.tables.get(&*r.table) else { return };
        for (name, col) in &def.columns {
            if !col.unique {
                continue;
            }
            // Picked from the row's JSON: the map is built when a turn reads the row.
            let Some(k) = r.values.pick(name).as_ref().and_then(value_key) else { continue };
            let column = slot(slot(&mut self.0, &r.table), name);
            column.entry(key(&k)).or_default().add(path.clone(), building);
        }
    }

    pub fn remove(&mut self, path: &str, r: &Row) {
        let Some(columns) = self.0.get_mut(&*r.table) else { return };
        for (col, idx) in columns.iter_mut() {
            if let Some(k) = r.values.pick(col).as_ref().and_then(value_key).map(|k| key(&k)) {
                if let Some(s) = idx.get_mut(&k) {
                    s.remove(path);
                    if s.is_empty() {
                        idx.remove(&k);
                    }
                }
            }
        }
    }

    pub fn settle(&mut self) {
        self.0.values_mut().flat_map(|t| t.values_mut()).flat_map(|c| c.values_mut()).for_each(PathSet::settle);
    }

    /// The rows holding `value` (a value key) in `column`, and maybe others
    /// of the same `key`.
    pub fn get(&self, table: &str, column: &str, value: &str) -> Option<&PathSet> {
        self.0.get(table)?.get(column)?.get(&key(value))
    }
}
