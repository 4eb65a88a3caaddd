//! The store's files as the engine knows them: which exist (the host lists them at
//! open), and the texts it has read. A read that needs a file the engine has not
//! seen asks the host for it (Step::Need) and is called again.

use crate::edits::StoreWrite;
use crate::error::{OpResult, Stop};
use crate::fxhash::FxHashMap;
use crate::log::order::{self, Placed};
use crate::log::TableState;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::Arc;

/// How many tables-as-of-a-version a store keeps at hand.
const STATES_KEPT: usize = 4;

#[derive(Debug, Default, Clone)]
pub struct Store {
    /// Every store file that exists, by path relative to the store.
    pub listing: BTreeSet<String>,
    /// Texts read or written (None: asked for and absent).
    texts: FxHashMap<String, Option<String>>,
    /// Tables as of versions, replayed lately, newest last: a read called again
    /// after a Step::Need, or reads of one version one after another (paging),
    /// replay the log once. Forgotten whenever the logs change.
    states: RefCell<Vec<(String, u64, Arc<TableState>)>>,
    /// Listed files a read lacked since `take_wanted`: what the host must read.
    /// A read that lacks a file fails; the engine then asks for what it lacked.
    wanted: RefCell<BTreeSet<String>>,
    /// Each table's commits in order (log/order.rs), made from the listing once
    /// while the table's log stays as it is, and kept up as commits are appended.
    orders: RefCell<FxHashMap<String, Arc<Vec<Placed>>>>,
    /// Why files of the store were not believed (trust.rs), newest last, for
    /// check_table to tell a person: a sync, git or a hand put them there.
    distrusted: Vec<String>,
    /// This device's id (log/order.rs), given by the host: the store's files
    /// this engine writes carry it, so that devices syncing one vault never
    /// write one file with two texts. None: one device, files named as before
    /// devices.
    device: Option<String>,
    /// Each table's last whole checkpoint, once read or written.
    full: FxHashMap<String, (u64, TableState)>,
}

/// How many reasons `distrusted` keeps: a flood of forged files is told by
/// its first hundred.
const DISTRUSTED_KEPT: usize = 100;

/// The table of a log file and the file's name in the table's folder.
fn log_file(path: &str) -> Option<(&str, &str)> {
    path.strip_prefix(crate::log::LOG)?.split_once('/')
}

impl Store {
    pub fn new(files: Vec<(String, Option<String>)>) -> Store {
        let mut s = Store::default();
        for (p, t) in files {
            let t = s.believed_blob(&p, t);
            s.listing.insert(p.clone());
            if t.is_some() {
                s.texts.insert(p, t);
            }
        }
        s
    }

    /// Records why a store file was not believed.
    pub fn distrust(&mut self, why: String) {
        if self.distrusted.len() < DISTRUSTED_KEPT && !self.distrusted.contains(&why) {
            self.distrusted.push(why);
        }
    }

    pub fn distrusted(&self) -> &[String] {
        &self.distrusted
    }

    pub fn set_device(&mut self, id: &str) {
        self.device = Some(id.to_string());
    }

    /// This device's id, which names the files it writes; None: one device.
    pub fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    /// The table's last whole checkpoint, if it is of version `v`.
    pub fn full(&self, table: &str, v: u64) -> Option<&TableState> {
        self.full.get(table).filter(|(fv, _)| *fv == v).map(|(_, s)| s)
    }

    pub fn keep_full(&mut self, table: String, v: u64, state: TableState) {
        self.full.insert(table, (v, state));
    }

    /// Forgets a table's whole checkpoint (its log moved or was vacuumed); a
    /// log renamed with its table takes it along (`to`).
    pub fn move_full(&mut self, table: &str, to: Option<&str>) {
        if let (Some(c), Some(to)) = (self.full.remove(table), to) {
            self.full.insert(to.to_string(), c);
        }
    }

    /// A file's text as the host read it, unless it is a blob whose text is
    /// not the one its name (the text's SHA-256) says: a damaged blob, or one
    /// put there to have the engine write it, reads as absent, and is told.
    /// Checked here, once per blob read, for every reader of the blobs (a
    /// restore, a read as of a version, an undo of a long text).
    fn believed_blob(&mut self, path: &str, text: Option<String>) -> Option<String> {
        let named = path.strip_prefix(crate::log::BLOBS).and_then(|r| r.rsplit('/').next());
        match (named, text) {
            (Some(h), Some(t)) if crate::edits::hash(&t) != h => {
                self.distrust(format!(
                    "{path} does not match its hash (damaged, or forged to have the engine write it): read as absent"
                ));
                None
            }
            (_, t) => t,
        }
    }

    /// Files the host read because the engine asked.
    pub fn provide(&mut self, files: Vec<(String, Option<String>)>) {
        for (p, t) in files {
            let t = self.believed_blob(&p, t);
            // A commit not listed before may sort among the ones replayed, and a
            // log file read again may differ: what was ordered or replayed is stale.
            let new = t.is_some() && !self.listing.contains(&p);
            if new {
                self.listing.insert(p.clone());
                if let Some((table, _)) = log_file(&p) {
                    self.orders.get_mut().remove(table);
                }
            }
            if p.starts_with(crate::log::LOG) && (new || self.texts.get(&p).is_some_and(|old| *old != t)) {
                self.states.get_mut().clear();
            }
            self.texts.insert(p, t);
        }
    }

    /// A file a sync brought, listed for a read to ask for when needed (a
    /// blob, a checkpoint).
    pub fn arrived_unread(&mut self, path: String) {
        if !self.listing.contains(&path) {
            if let Some((table, _)) = log_file(&path) {
                self.orders.get_mut().remove(table);
            }
            self.listing.insert(path);
        }
    }

    /// Lists a file the engine wrote or read without keeping its text (a
    /// large derived file, read once: the stored semantic index).
    pub fn listed(&mut self, path: &str) {
        self.listing.insert(path.to_string());
        self.texts.remove(path);
    }

    pub fn exists(&self, path: &str) -> bool {
        self.listing.contains(path)
    }

    /// Stops with a need (never a failure) unless every listed file among
    /// `paths` has been read; the ones it lacks are kept, for the engine to ask
    /// the host for (`take_wanted`).
    pub fn require<'a, I: IntoIterator<Item = &'a String>>(&self, paths: I) -> OpResult<()> {
        let missing: Vec<String> =
            paths.into_iter().filter(|p| self.listing.contains(*p) && !self.texts.contains_key(*p)).cloned().collect();
        if missing.is_empty() {
            return Ok(());
        }
        self.wanted.borrow_mut().extend(missing);
        Err(Stop::Need)
    }

    /// The files reads lacked since the last call, and forgets them.
    pub fn take_wanted(&self) -> Vec<String> {
        std::mem::take(&mut *self.wanted.borrow_mut()).into_iter().collect()
    }

    /// The text of a file read before (None when absent or not read).
    pub fn text(&self, path: &str) -> Option<&str> {
        self.texts.get(path).and_then(|t| t.as_deref())
    }

    /// A table as of a version, when replayed lately.
    pub fn state(&self, table: &str, v: u64) -> Option<Arc<TableState>> {
        self.states.borrow().iter().find(|(t, sv, _)| t == table && *sv == v).map(|(_, _, s)| s.clone())
    }

    pub fn keep_state(&self, table: &str, v: u64, state: Arc<TableState>) {
        let mut states = self.states.borrow_mut();
        if states.len() >= STATES_KEPT {
            states.remove(0);
        }
        states.push((table.to_string(), v, state));
    }

    /// A table's commits in order, each with its version in the merged log.
    pub fn order(&self, table: &str) -> Arc<Vec<Placed>> {
        if let Some(o) = self.orders.borrow().get(table) {
            return o.clone();
        }
        let o = Arc::new(order::placed(self, &crate::log::dir(table)));
        self.orders.borrow_mut().insert(table.to_string(), o.clone());
        o
    }

    /// Keeps a table's order up as a file is written: a commit that sorts last
    /// (every commit this engine writes) is appended, anything else made again.
    fn reorder(&mut self, w: &StoreWrite) {
        let Some((table, name)) = log_file(&w.path) else { return };
        let Some(new) = order::claimed(name) else { return };
        let dir_len = w.path.len() - name.len();
        let orders = self.orders.get_mut();
        let Some(o) = orders.get_mut(table) else { return };
        let last = o.last().map(|l| (order::claimed(&l.path[dir_len..]), l.version));
        if w.delete || last.is_some_and(|(claimed, _)| claimed >= Some(new)) {
            orders.remove(table);
        } else {
            let version = order::renumbered(last.map(|(_, v)| v), new.0);
            Arc::make_mut(o).push(Placed { version, path: w.path.clone() });
        }
    }

    /// Records a file the engine writes.
    pub fn wrote(&mut self, w: &StoreWrite) {
        if w.path.starts_with(crate::log::LOG) {
            self.states.get_mut().clear();
            if !self.listing.contains(&w.path) || w.delete {
                self.reorder(w);
            }
        }
        if w.delete {
            self.listing.remove(&w.path);
            self.texts.remove(&w.path);
        } else {
            self.listing.insert(w.path.clone());
            // Blobs are the notes' texts: the vault holds the current ones.
            if !w.path.starts_with(crate::log::BLOBS) {
                self.texts.insert(w.path.clone(), Some(w.text.clone()));
            }
        }
    }

    /// Listed files under a folder.
    pub fn under<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a String> + 'a {
        self.listing.range(prefix.to_string()..).take_while(move |p| p.starts_with(prefix))
    }

    /// As `under`, last path first: the newest of zero-padded names without a
    /// walk through all of them.
    pub fn under_rev<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a String> + 'a {
        self.listing.range(prefix.to_string()..format!("{prefix}\u{10ffff}")).rev()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn state() -> Arc<TableState> {
        Arc::new(TableState::default())
    }

    #[test]
    fn the_latest_commit_is_found_from_the_end_past_checkpoints_and_odd_names() {
        let listed = |names: &[&str]| {
            Store::new(names.iter().map(|n| (format!("log/main.public.t/{n}"), None)).collect::<Vec<_>>())
        };
        let s = listed(&[
            "00000000000000000009.json",
            "00000000000000000010.checkpoint.json",
            "00000000000000000010.json",
            "00000000000000000011.checkpoint.json",
            "99.json",
            "notes.txt",
        ]);
        assert_eq!(crate::log::latest(&s, "main.public.t"), Some(10));
        assert_eq!(crate::log::latest(&s, "main.public.u"), None);
        // The next table's log (a name that extends this one's) is not this one's.
        let s = listed(&["00000000000000000003.json"]);
        let mut s2 = s.clone();
        s2.listing.insert("log/main.public.tt/00000000000000000007.json".into());
        assert_eq!(crate::log::latest(&s2, "main.public.t"), Some(3));
    }

    #[test]
    fn states_are_forgotten_when_a_log_changes_and_only_then() {
        let mut s = Store::new(vec![("log/t/00000000000000000001.json".into(), Some("{}".into()))]);
        s.keep_state("t", 1, state());
        s.wrote(&StoreWrite::put("blobs/ab/abc", "text"));
        s.provide(vec![("blobs/cd/cde".into(), Some("text".into()))]);
        s.provide(vec![("log/t/00000000000000000001.json".into(), Some("{}".into()))]);
        assert!(s.state("t", 1).is_some(), "blobs and a log file read again unchanged leave it");
        s.provide(vec![("log/t/00000000000000000001.json".into(), Some("{\"other\": 1}".into()))]);
        assert!(s.state("t", 1).is_none(), "a log file read again with other text");
        s.keep_state("t", 1, state());
        s.wrote(&StoreWrite::put("log/t/00000000000000000002.json", "{}"));
        assert!(s.state("t", 1).is_none(), "a commit written");
        for v in 0..10 {
            s.keep_state("t", v, state());
        }
        assert!(s.state("t", 9).is_some() && s.state("t", 0).is_none(), "the oldest go first");
    }
}
