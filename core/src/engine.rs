//! The engine's contract with its host: what the host hands in, what comes out,
//! and in which order to call. Every public method of the engine is here; the
//! work is done in the modules they name.
//!
//! # The order of calls
//!
//! 1. [`Engine::open_listed`] with the vault's notes and the store's files (or,
//!    through the notes' cache, [`Engine::plan_open`] with the vault listed,
//!    then [`Engine::open_cached`] with the notes it wants), then
//!    [`Engine::take_upkeep`] (store files to write or delete at once), then
//!    [`Engine::reconcile`] (what changed while no engine ran), carried to its end
//!    as any step is (below).
//! 2. Per call, [`Engine::call`] answers a [`Step`]:
//!    - [`Step::Need`]: read those store files, hand them to [`Engine::provide`],
//!      and make the same call again (a read of history asks for the log's files);
//!    - [`Step::ReadNotes`]: read those notes, hand them to [`Engine::read_notes`],
//!      and make the same call again (an engine opened from the cache);
//!    - [`Step::Apply`]: write its `store` first (the journal entry, marked pending,
//!      so a write cut short can be found and undone), then apply its `edits` one at
//!      a time, in order, stopping at the first that fails, then report every
//!      result to [`Engine::finish`], which answers the next step (a rollback is
//!      one more `Apply`);
//!    - [`Step::Done`]: write its `store`, then give its answer to the caller.
//! 3. Between calls, report every vault change with [`Engine::observe`] and call
//!    [`Engine::tick`] at [`Engine::next_deadline`]: a tick is a step like a call's.
//! 4. Webhook deliveries an outcome carries are made by the host, each result told
//!    with [`Engine::delivered`]; an agent's tool call is recorded with
//!    [`Engine::record_tool_call`]. Both answer store files to write.
//!
//! [`crate::driver`] is this order written once, over a small host trait; every
//! Rust host uses it, and the plugin's TypeScript host follows it step for step.
//! The engine never reads a clock: every call that needs the time takes `now_ms`.

use crate::edits::{EditError, StoreWrite};
use crate::error::{Failure, OpResult, Stop};
use crate::feed::webhook::Hooks;
use crate::feed::Feed;
use crate::fxhash::FxHashSet;
use crate::handedit::known::Known;
use crate::handedit::{merge, HandState, Hands, ToolCall, Upkeep, VaultEvent};
use crate::index::Index;
use crate::journal::Journal;
use crate::log::commit::{Logs, Made};
use crate::notecache::{Cache, Checked, NoteStat, Prebuilt};
use crate::ops::context::{Keeps, Plans, Sees};
use crate::ops::registry::Texts;
use crate::ops::registry::{self, Handler};
use crate::ops::{self, Planned};
use crate::owed::Owed;
use crate::pending::{Pending, Writing};
use crate::proposals::{Proposals, Staged, Views};
use crate::schema::{Schema, METASTORE};
use crate::semantic::meaning::Meaning;
use crate::settings::Settings;
pub use crate::step::{Apply, Outcome, Status, Step};
use crate::store::Store;
use crate::vault::Vault;
use serde_json::Value;

/// A file of the store as the host lists it at open: its path under `.datanotes/`
/// and its text, or None for a file the host lists without reading (the log's
/// files and the blobs; the engine asks for those it needs).
#[derive(Debug, Clone)]
pub struct StoreFile(pub String, pub Option<String>);

impl From<(String, String)> for StoreFile {
    fn from((p, t): (String, String)) -> Self {
        StoreFile(p, Some(t))
    }
}

impl From<(String, Option<String>)> for StoreFile {
    fn from((p, t): (String, Option<String>)) -> Self {
        StoreFile(p, t)
    }
}

/// A file of the vault as the host reads it.
#[derive(Debug, Clone)]
pub struct NoteFile {
    pub path: String,
    pub text: String,
    pub mtime: i64,
}

/// A note as JavaScript hands it over: `mtime` is a number of ms, maybe
/// fractional; without `text`, a note listed and not read, of `size` bytes.
#[derive(serde::Deserialize)]
struct NoteIn {
    path: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    size: f64,
    #[serde(default)]
    mtime: f64,
}

impl NoteFile {
    /// Notes from JSON `[{path, text, mtime}]`, as `datanotes bench --notes`
    /// reads them (a note without its text is left out).
    pub fn list_from_json(json: &str) -> Result<Vec<NoteFile>, String> {
        Ok(NoteFile::listed_from_json(json)?.0)
    }

    /// Notes handed over in bulk, as the plugin packs them (worker-protocol.ts
    /// `packNotes`): every text one after another in `texts`, cut apart by
    /// `lengths` counted in UTF-16 code units (JavaScript's string lengths), so
    /// that 40 MB of texts cross without JSON's escapes.
    pub fn unpack(paths: Vec<String>, mtimes: &[f64], texts: &str, lengths: &[u32]) -> Result<Vec<NoteFile>, String> {
        if paths.len() != mtimes.len() || paths.len() != lengths.len() {
            return Err(format!("{} paths, {} mtimes and {} lengths", paths.len(), mtimes.len(), lengths.len()));
        }
        let mut out = Vec::with_capacity(paths.len());
        let mut at = 0;
        for ((path, &mtime), &units) in paths.into_iter().zip(mtimes).zip(lengths) {
            let units = units as usize;
            let rest = &texts[at..];
            // Most notes are ASCII, a byte per unit: checked a word at a time
            // rather than walked a character at a time.
            let len = match rest.as_bytes().get(..units) {
                Some(b) if b.is_ascii() => units,
                _ => {
                    let mut left = units;
                    let mut chars = rest.char_indices();
                    while left > 0 {
                        let Some((_, c)) = chars.next() else { return Err(format!("the texts end before {path}'s")) };
                        left = left
                            .checked_sub(c.len_utf16())
                            .ok_or_else(|| format!("{path}'s length cuts a character"))?;
                    }
                    chars.offset()
                }
            };
            out.push(NoteFile { path, text: rest[..len].to_string(), mtime: mtime as i64 });
            at += len;
        }
        if at != texts.len() {
            return Err("the texts run past the last note's".into());
        }
        Ok(out)
    }

    /// Notes from JSON `[{path, text, mtime} or {path, size, mtime}]`, as the
    /// plugin hands them to its engine (core/src/wasm.rs): those read, and
    /// those listed only (see `Engine::open_with_cache`).
    pub fn listed_from_json(json: &str) -> Result<(Vec<NoteFile>, Vec<NoteStat>), String> {
        let notes: Vec<NoteIn> = serde_json::from_str(json).map_err(|e| e.to_string())?;
        let (mut read, mut listed) = (vec![], vec![]);
        for n in notes {
            let mtime = n.mtime as i64;
            match n.text {
                Some(text) => read.push(NoteFile { path: n.path, text, mtime }),
                None => listed.push(NoteStat { path: n.path, size: n.size as u64, mtime }),
            }
        }
        Ok((read, listed))
    }
}

/// The coordinator: it owns each part of the engine's state and lends each
/// piece of work the parts it needs (a read sees them, a write plans over the
/// index, a round of hand edits changes the index and records in the store).
pub struct Engine {
    /// The schema and the notes' index, which writes change in a transaction.
    index: Index,
    settings: Settings,
    warnings: Vec<String>,
    journal: Journal,
    /// The store's files: the logs, blobs and records, and this device's id.
    store: Store,
    feed: Feed,
    hooks: Hooks,
    hand: HandState,
    /// What the engine last knew of each note (None until `reconcile` ran once).
    known: Option<Known>,
    meaning: Meaning,
    /// Bytes from the host to make secrets with.
    entropy: Vec<u8>,
    /// Ids made so far (row ids stay unique even within one millisecond).
    ids: u64,
    /// Store files the host must write after open (journal entries past retention).
    upkeep: Vec<StoreWrite>,
    pending: Option<Pending>,
    /// Store writes the host could not make yet (see owed.rs).
    owed: Owed,
    /// Opened through the notes' cache: the time of the open.
    cache_at: Option<i64>,
    /// The cache is to be written anew (`take_cache`): a note was read or is gone.
    cache_due: bool,
    /// The cache file as read or last written, with the notes whose lines
    /// there are not what the index holds: appended to it, if few.
    cache_file: Option<crate::notecache::Appendable>,
    /// Notes the host listed without reading that the cache does not vouch
    /// for: not in the index until read (`to_read`, `read_notes`).
    unseen: std::collections::VecDeque<String>,
    /// `reconcile` ran: from then on a note read that changed since the open
    /// is a hand edit for the round to report (`take_texts`).
    reconciled: bool,
    /// Writes staged for a person's review, and the tables as each would leave them.
    proposals: Proposals,
    views: Views,
}

/// An open through the store's cache of notes (notecache.rs), planned: the host
/// reads the notes `wanted` names, then calls `Engine::open_cached`.
pub struct Reopen {
    cache: Option<Cache>,
    /// The notes the cache vouches for, indexed.
    vault: Option<Vault>,
    /// The notes to read: new, changed (size or mtime), or not in the cache.
    pub wanted: Vec<String>,
    /// Why the cache was not used at all (missing, another format or schema).
    pub why: Option<String>,
}

/// The notes' cache as read (None: there is none), or why an open does
/// without it.
fn cache_or_why<T>(read: Option<Result<T, String>>) -> Result<T, String> {
    match read {
        Some(Ok(c)) => Ok(c),
        Some(Err(why)) => Err(format!("the notes' cache is not used: {why}")),
        None => Err("the notes' cache is not there yet".to_string()),
    }
}

impl Engine {
    /// Indexes the vault. `store` holds the store's files (path relative to
    /// `.datanotes/`, text). Nothing in the notes can stop the engine from opening:
    /// what it cannot read is reported in `warnings`.
    pub fn open(files: Vec<NoteFile>, store: Vec<(String, String)>) -> Engine {
        Engine::open_at(files, store, 0)
    }

    /// As `open`, at the host's time `now_ms`: journal entries older than the
    /// retention are dropped (`take_upkeep` lists their files to delete).
    pub fn open_at(files: Vec<NoteFile>, store: Vec<(String, String)>, now_ms: i64) -> Engine {
        Engine::open_listed(files, store.into_iter().map(StoreFile::from).collect(), now_ms)
    }

    /// As `open_at`, with the store's files listed: the host may leave the log's
    /// files and the blobs unread (text None); the engine asks for those it needs.
    pub fn open_listed(files: Vec<NoteFile>, store: Vec<StoreFile>, now_ms: i64) -> Engine {
        Engine::open_with(None, files, store, now_ms).0
    }

    /// Plans an open through the notes' cache: `stats` lists the vault's files
    /// (notes, bases, metastore.yaml) with their sizes and mtimes, `cache` is the
    /// text of [`notecache::path`] (None: absent), `metastore` the text of
    /// metastore.yaml. The plan's `wanted` are the files to read.
    pub fn plan_open(stats: Vec<NoteStat>, cache: Option<&str>, metastore: Option<&str>) -> Reopen {
        let cache = cache_or_why(cache.map(|t| Cache::read(t, metastore)));
        Engine::plan_read(stats, cache.map(Prebuilt::new))
    }

    /// The first half of `plan_open`, which needs no listing, for a host that
    /// parses the cache's lines on threads of its own while it lists the
    /// vault: the file checked, its lines yet to parse (`Checked::halves`,
    /// `notecache::parse`, `Checked::join`, then `Prebuilt::new`).
    pub fn check_cache<'a>(cache: Option<&'a str>, metastore: Option<&str>) -> Result<Checked<'a>, String> {
        cache_or_why(cache.map(|t| Checked::new(t, metastore)))
    }

    /// The second half of `plan_open`: `stats` lists each path once.
    pub fn plan_read(stats: Vec<NoteStat>, cache: Result<Prebuilt, String>) -> Reopen {
        match cache {
            Ok(pre) => {
                let (cache, vault, wanted) = pre.plan(stats);
                Reopen { wanted, cache: Some(cache), vault: Some(vault), why: None }
            }
            Err(why) => {
                Reopen { wanted: stats.into_iter().map(|s| s.path).collect(), cache: None, vault: None, why: Some(why) }
            }
        }
    }

    /// Opens as planned: `files` holds the files the plan wanted (and maybe
    /// others). The notes the cache vouched for are indexed from it, their texts
    /// unread (`unread`) unless given; `take_cache` answers the cache to write
    /// when a note was new, changed or gone.
    pub fn open_cached(plan: Reopen, files: Vec<NoteFile>, store: Vec<StoreFile>, now_ms: i64) -> Engine {
        let cache = plan.cache;
        let (mut engine, attached) = Engine::open_with(plan.vault, files, store, now_ms);
        let stale = cache.as_ref().is_none_or(|c| c.stale(&engine.index.vault, attached, now_ms));
        engine.cache_at = Some(now_ms);
        engine.cache_due = stale;
        engine.cache_file = cache.and_then(|c| c.into_file(&plan.wanted));
        engine
    }

    /// As `open_listed`, with the text of the notes' cache (None: there is none):
    /// a note whose size and mtime the cache vouches for is indexed from it, its
    /// text kept, not parsed (see `open_cached`). `listed`: notes the host
    /// listed without reading them (the plugin: every note but metastore.yaml);
    /// those the cache does not vouch for are for the host to read next
    /// (`to_read`), and are indexed once read (`read_notes`).
    pub fn open_with_cache(
        files: Vec<NoteFile>,
        listed: Vec<NoteStat>,
        cache: Option<&str>,
        store: Vec<StoreFile>,
        now_ms: i64,
    ) -> Engine {
        let metastore = files.iter().find(|f| f.path == METASTORE).map(|f| f.text.as_str());
        let cache = cache.map(|t| Cache::read(t, metastore));
        Engine::open_with_read_cache(files, listed, cache, store, now_ms)
    }

    /// As `open_with_cache`, with the notes' cache read already (a
    /// `notecache::Reader` fed the file in pieces, for metastore.yaml as
    /// `files` hold it): its entries, or why none can be trusted; None when
    /// there is no cache.
    pub fn open_with_read_cache(
        files: Vec<NoteFile>,
        listed: Vec<NoteStat>,
        cache: Option<Result<Cache, String>>,
        store: Vec<StoreFile>,
        now_ms: i64,
    ) -> Engine {
        let mut stats: Vec<NoteStat> = files
            .iter()
            .map(|f| NoteStat { path: f.path.clone(), size: f.text.len() as u64, mtime: f.mtime })
            .collect();
        stats.extend(listed);
        let plan = Engine::plan_read(stats, cache_or_why(cache).map(Prebuilt::new));
        // Each once (a host listing a path twice reads it once).
        let mut given: FxHashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        // Originals before the names a sync tool's copy may have, which only
        // count as copies beside them: a host may then hand the texts over in
        // batches, in this order, and memory holds one batch at a time.
        let (copies, mut unseen): (Vec<String>, Vec<String>) = plan
            .wanted
            .iter()
            .filter(|p| given.insert(p.as_str()))
            .cloned()
            .partition(|p| crate::conflicts::copy_of(p).is_some_and(|c| c.same_id_only));
        unseen.extend(copies);
        drop(given);
        let unseen = unseen.into();
        let mut engine = Engine::open_cached(plan, files, store, now_ms);
        engine.unseen = unseen;
        engine
    }

    /// What a host that opened with notes listed and not read (`open_with_cache`)
    /// reads before it starts the engine: the notes the cache did not vouch for.
    /// The rows it vouched for are read when a turn needs them (a write, a due
    /// tick: `texts_wanted`), or before that by the host in the background
    /// (`unread_rows`, then `read_notes`). Ordered so that the texts may be
    /// handed to `read_listed` in batches, in this order: a sync tool's copy
    /// after its original.
    pub fn to_read(&self) -> Vec<String> {
        self.unseen.iter().cloned().collect()
    }

    /// The notes opened from the cache whose texts are not read yet. A host that
    /// runs long reads them all before `reconcile` (`read_notes`), so that a hand
    /// edit is always told from what the note held; a turn that needs them asks
    /// (`Step::ReadNotes`).
    pub fn unread(&self) -> Vec<String> {
        self.index.vault.unread().map(str::to_string).collect()
    }

    /// The rows among `unread`: what a write or a tick asks for up front (a
    /// plain note is read when a turn needs it: a link in it to rewrite).
    pub fn unread_rows(&self) -> Vec<String> {
        self.index.vault.unread_rows().map(str::to_string).collect()
    }

    /// Builds the lookups by name, link and unique value now (see
    /// `lookups`), which the first turn needing them would build: a host
    /// that answers many turns calls it once idle after the open.
    pub fn warm_lookups(&self) {
        self.index.vault.warm(&self.index.schema);
    }

    /// Texts of notes opened from the cache, as the host read them. A text that
    /// is not what the cache vouched for (changed keeping its size and mtime) is
    /// taken as the note now: before `reconcile`, reported as a hand edit.
    /// A note listed in `gone` was removed since the open: it leaves the index
    /// (what the store knew of it is compared at the next `reconcile`).
    pub fn read_notes(&mut self, files: Vec<NoteFile>, gone: Vec<String>) {
        self.take_texts(files, gone, false);
    }

    /// As `read_notes`, for the notes of `to_read`, read right after the
    /// listing the engine opened with: a text of the size and mtime the cache
    /// vouched for is taken as the cache took the note, unhashed (as
    /// `open_with_cache` takes a text given with the listing).
    pub fn read_listed(&mut self, files: Vec<NoteFile>, gone: Vec<String>) {
        self.take_texts(files, gone, true);
    }

    fn take_texts(&mut self, files: Vec<NoteFile>, gone: Vec<String>, listed: bool) {
        if !self.unseen.is_empty() {
            let done: FxHashSet<&str> =
                files.iter().map(|f| f.path.as_str()).chain(gone.iter().map(String::as_str)).collect();
            // Handed over in `to_read`'s order, a batch is its front (each
            // path in it once): taken off without a search of the rest (a
            // vault of large notes comes in a thousand batches).
            let front = self.unseen.iter().take(done.len()).take_while(|p| done.contains(p.as_str())).count();
            if front == done.len() {
                self.unseen.drain(..front);
            } else {
                self.unseen.retain(|p| !done.contains(p.as_str()));
            }
        }
        // After `reconcile`, a note unread since the open that changed or went
        // meanwhile is a hand edit: queued for the round, which reports it (the
        // host's watcher says so too), never taken in silently.
        let at = self.hand.last_seen_ms();
        let mut new = vec![];
        for NoteFile { path, text, mtime } in files {
            match self.index.vault.read_back(&path, text, mtime, listed) {
                // Not what the cache vouched for: its line there is not the note's.
                Err(text) if self.reconciled && self.index.vault.get(&path).is_some() => {
                    self.fresh_in_cache(&path);
                    self.hands().observe_change(VaultEvent::Modified { path, text, mtime }, at.max(mtime));
                }
                Err(text) => {
                    self.fresh_in_cache(&path);
                    new.push((path, text, mtime))
                }
                Ok(()) => {}
            }
        }
        if !new.is_empty() {
            self.index.vault.insert_many(&self.index.schema, new);
            self.cache_due = true;
        }
        for path in gone {
            if self.index.vault.get(&path).is_none_or(|n| n.text.is_some()) {
                continue;
            }
            self.fresh_in_cache(&path);
            if self.reconciled {
                self.hands().observe_change(VaultEvent::Removed { path }, at);
            } else {
                self.index.vault.remove(&path);
                self.cache_due = true;
            }
        }
    }

    /// A note opened from the cache whose line there is not what the index
    /// holds now.
    fn fresh_in_cache(&mut self, path: &str) {
        if let Some(f) = &mut self.cache_file {
            f.fresh.insert(path.to_string(), true);
        }
    }

    /// A turn that needs the rows' texts the engine has not read: the step
    /// that asks for them (`HandState::texts_wanted`).
    fn texts_wanted(&self) -> Option<Step> {
        self.hand.texts_wanted(&self.index.vault)
    }

    /// As `texts_wanted`, for an operation, by the texts its registry entry says
    /// it needs.
    fn texts_wanted_by(&self, texts: Texts, args: &Value) -> Option<Step> {
        match texts {
            Texts::None => None,
            Texts::All => (self.index.vault.unread_count() > 0).then(|| Step::ReadNotes(self.unread())),
            Texts::Rows => self.texts_wanted(),
            Texts::OwnNote => {
                let path = args.get("path").and_then(Value::as_str)?;
                let unread = self.index.vault.get(path).is_some_and(|n| n.text.is_none());
                unread.then(|| Step::ReadNotes(vec![path.to_string()]))
            }
        }
    }

    /// With the notes a cache vouched for indexed (`vault`), the files read
    /// beside them: those of them the index holds get their texts (how many:
    /// the second half of the answer), the others are indexed.
    fn open_with(vault: Option<Vault>, files: Vec<NoteFile>, store: Vec<StoreFile>, now_ms: i64) -> (Engine, usize) {
        let mut warnings = vec![];
        let read = store.iter().filter_map(|StoreFile(p, t)| Some((p.as_str(), t.as_deref()?)));
        let (settings, w) = Settings::load(read.filter(|(p, _)| p.starts_with("settings.")));
        warnings.extend(w);
        let mut metastore = None;
        let mut notes = Vec::with_capacity(files.len());
        for f in files {
            if f.path == METASTORE {
                metastore = Some(f.text);
            } else if f.path.ends_with(".md") || crate::bases::is_base(&f.path) {
                notes.push((f.path, f.text, f.mtime));
            }
        }
        let (schema, schema_error) = match Schema::parse(metastore.as_deref().unwrap_or("")) {
            Ok(s) => (s, None),
            Err(e) => (Schema::default(), Some(e)),
        };
        if let Some(e) = &schema_error {
            warnings.push(e.clone());
        }
        let (vault, attached) = match vault {
            Some(v) => v.with_read(&schema, notes),
            None => (Vault::build_cached(&schema, (0, vec![]), notes), 0),
        };
        let journal_files: Vec<(String, String)> =
            store.iter().filter_map(|StoreFile(p, t)| t.clone().map(|t| (p.clone(), t))).collect();
        let (journal, mut upkeep, w, mut distrusted) =
            Journal::load(&journal_files, now_ms, settings.journal_retention_days);
        // Listed without its text, the host did not read it: left as it is.
        let ignore = store.iter().find(|f| f.0 == crate::secrets::FILE);
        if ignore.is_none_or(|f| f.1.is_some()) {
            if let Some(text) = crate::secrets::wanted(ignore.and_then(|f| f.1.as_deref())) {
                upkeep.push(StoreWrite { path: crate::secrets::FILE.into(), text, delete: false, append: false });
            }
        }
        warnings.extend(w);
        let (feed, w) = Feed::load(&journal_files);
        // Lines of the feed left out are store records not taken in, as the journal's.
        distrusted.extend(w.iter().cloned());
        warnings.extend(w);
        let (hooks, w) = Hooks::load(&journal_files);
        warnings.extend(w);
        let stageable = |op: &str| registry::spec(op).is_some_and(|s| s.facts.stageable);
        let (proposals, w) = Proposals::load(&journal_files, &stageable);
        warnings.extend(w);
        let mut store = Store::new(store.into_iter().map(|StoreFile(p, t)| (p, t)).collect());
        for why in distrusted {
            store.distrust(why);
        }
        let known = Known::load(&store, None);
        let engine = Engine {
            feed,
            hand: Default::default(),
            hooks,
            known,
            entropy: vec![],
            ids: 0,
            index: Index { schema, metastore, vault, schema_error },
            settings,
            warnings,
            journal,
            store,
            upkeep,
            pending: None,
            owed: Default::default(),
            meaning: Meaning::default(),
            cache_at: None,
            cache_due: false,
            cache_file: None,
            unseen: Default::default(),
            reconciled: false,
            proposals,
            views: Views::default(),
        };
        (engine, attached)
    }

    /// Store files the host must write or delete after open.
    pub fn take_upkeep(&mut self) -> Vec<StoreWrite> {
        std::mem::take(&mut self.upkeep)
    }

    /// The notes' cache to write, once after an open through it that read a note
    /// new or changed since (a derived file: a host may write it when the vault
    /// is open and quiet, and need not retry a write that failed).
    /// When few notes changed since the file was read, the write appends a
    /// segment of those to it.
    pub fn take_cache(&mut self) -> Option<StoreWrite> {
        self.take_cache_with(|metastore, vault, at| crate::notecache::write(metastore, vault.cached_notes(), at))
    }

    /// As `take_cache`, a file written whole handed to `put` in pieces as its
    /// lines are made: the file is the answer's text, then the pieces (see
    /// `notecache::write_pieces`). A segment to append is the text alone.
    pub fn take_cache_in_pieces(&mut self, put: impl FnMut(&[u8])) -> Option<StoreWrite> {
        self.take_cache_with(|metastore, vault, at| {
            crate::notecache::write_pieces(metastore, vault.cached_notes(), at, put)
        })
    }

    fn take_cache_with(
        &mut self,
        write: impl FnOnce(Option<&str>, &Vault, i64) -> (String, crate::notecache::Appendable),
    ) -> Option<StoreWrite> {
        let at = self.cache_at.filter(|_| std::mem::take(&mut self.cache_due))?;
        if let Some(file) = self.cache_file.as_mut().filter(|f| f.appends()) {
            let text = crate::notecache::segment(file, &self.index.vault, at);
            return Some(StoreWrite { path: self.cache_path(), text, delete: false, append: true });
        }
        // The cache holds each row's values as JSON: made once, and kept in
        // place of the row's map.
        self.index.vault.compact_rows();
        let (text, file) = write(self.index.metastore.as_deref(), &self.index.vault, at);
        self.cache_file = Some(file);
        Some(StoreWrite { path: self.cache_path(), text, delete: false, append: false })
    }

    /// Where the notes' cache goes, under the store (see `take_cache`).
    pub fn cache_path(&self) -> String {
        crate::notecache::path(self.store.device())
    }

    /// Compares the vault with what the store last knew (`known.jsonl`), once after
    /// opening: every difference is a hand edit made while no engine ran, reported
    /// in the change feed. The first time, it only records the vault.
    pub fn reconcile(&mut self, now_ms: i64) -> Step {
        self.store.take_wanted();
        let mut step = self.hands().reconcile_vault(now_ms);
        if let Step::Done(out) = &mut step {
            out.store.extend(self.keep_meaning_up());
            self.reconciled = true;
        }
        step
    }

    /// Runs one operation as `actor` at the host's time. A read answers at once
    /// (or asks for store files first); a write answers `Apply` with the edits the
    /// host must make, then `finish`. While a write is under way every call is
    /// refused.
    pub fn call(&mut self, name: &str, args: Value, actor: &str, now_ms: i64) -> Step {
        if let Some(p) = &self.pending {
            let f = Failure::refused(
                name,
                vec![format!("the engine is still applying {}", p.op)],
                "Finish the previous write (the host calls finish) before the next.",
            );
            return Step::Done(Outcome::failed(&f));
        }
        let texts = crate::ops::registry::spec(name).map_or(Texts::Rows, |s| s.facts.texts);
        if let Some(step) = self.texts_wanted_by(texts, &args) {
            return step;
        }
        self.store.take_wanted();
        self.index.vault.take_wanted();
        let step = match self.run(name, args, actor, now_ms) {
            Ok(step) => step,
            Err(f) => self.stopped(&f),
        };
        // A read that met an unread plain note answered without it: it runs
        // again once the host has read it (a write gave itself up: ops::write_op).
        let wanted = self.index.vault.take_wanted();
        match step {
            Step::Done(_) if !wanted.is_empty() && self.pending.is_none() => Step::ReadNotes(wanted),
            step => step,
        }
    }

    /// Runs an operation by its kind: a read on what it sees, a store
    /// operation on the store's files, a write planned over the index, then
    /// journaled and committed to the logs.
    fn run(&mut self, name: &str, args: Value, actor: &str, now_ms: i64) -> OpResult<Step> {
        let (spec, args) = ops::checked(name, args)?;
        let proposal = args.str("proposal").map(str::to_string);
        let write = match spec.run {
            Handler::Read(read) if spec.facts.through_proposal && proposal.is_some() => {
                let a = self.read_through(read, &args, proposal.as_deref().unwrap_or_default(), now_ms)?;
                return Ok(Step::Done(Outcome::done(a)));
            }
            Handler::Read(read) => {
                return read(&Sees { now_ms, ..self.sees() }, &args).map(|a| Step::Done(Outcome::done(a)))
            }
            Handler::Store(store) => return store(&mut self.keeps(actor), &args, now_ms).map(Step::Done),
            Handler::Write(write) => write,
        };
        if let Some(f) = self.owed.refusal(name).or_else(|| ops::unwritable(&self.sees(), name)) {
            return Err(f.into());
        }
        if let Some(p) = proposal.filter(|_| spec.facts.stageable) {
            return self.stage(write, &args, &p, actor, now_ms);
        }
        let mut w = match ops::plan_write(&mut self.plans(), write, &args, now_ms)? {
            Planned::Step(step) => return Ok(step),
            Planned::Write(w) => *w,
        };
        let mid = spec.journaled.then(|| self.journal.new_id(now_ms, name, &w.summary, self.store.device()));
        if let Some(id) = &mid {
            w.answer["migration_id"] = id.clone().into();
        }
        let changes = self.index.changes_of(&w.tx);
        let facts = &spec.facts;
        let made = Made { operation: facts.log_operation, migration_id: mid.as_deref(), batch: facts.batch, now_ms };
        let commits = match self.logs().commits_of(&w.tx, &changes, &made) {
            Ok(c) => c,
            Err(f) => {
                self.index.tx_abort(&mut w.tx);
                return Err(f);
            }
        };
        if !commits.answer.is_empty() {
            w.answer["commits"] = Value::Array(commits.answer.clone());
        }
        let entry = mid.map(|id| w.entry(id, actor, changes, self.index.metastore.clone()));
        let ops::Write { answer, tx, .. } = w;
        Ok(self.writing().plan(answer, tx, entry, commits, facts.rewrites_plain_notes))
    }

    /// What a read sees: everything, to change nothing.
    fn sees(&self) -> Sees<'_> {
        Sees {
            index: &self.index,
            store: &self.store,
            journal: &self.journal,
            feed: &self.feed,
            hooks: &self.hooks,
            settings: &self.settings,
            proposals: &self.proposals,
            through: None,
            now_ms: 0,
            device: self.store.device(),
            ops: registry::OPS,
        }
    }

    /// A read of the tables as the proposal `name` would leave them (proposals.rs).
    fn read_through(
        &mut self,
        read: registry::ReadFn,
        args: &ops::args::Args,
        name: &str,
        now_ms: i64,
    ) -> OpResult<Value> {
        let Some(pr) = self.proposals.get(name) else {
            let hint = "list_proposals lists the proposals by name.";
            let f = Failure::refused(args.op, vec![format!("no proposal \"{name}\"")], hint);
            return Err(f.with_docs("guides/history/proposals").into());
        };
        let picked = crate::proposals::picked(&self.journal, name);
        let view = self.views.view(pr, &self.index, &picked);
        let sees = Sees {
            index: &view.index,
            store: &self.store,
            journal: &self.journal,
            feed: &self.feed,
            hooks: &self.hooks,
            settings: &self.settings,
            proposals: &self.proposals,
            through: Some(view),
            now_ms,
            device: self.store.device(),
            ops: registry::OPS,
        };
        read(&sees, args)
    }

    /// Stages a write into the proposal `name` instead of applying it: planned
    /// over the tables as the proposal's earlier writes leave them (so checked
    /// as any write is), kept in the proposal's file, and no note touched.
    fn stage(
        &mut self,
        write: registry::WriteFn,
        args: &ops::args::Args,
        name: &str,
        actor: &str,
        now_ms: i64,
    ) -> OpResult<Step> {
        if let Some(why) = self.proposals.stage_problem(name, &self.journal) {
            let hint = "Stage into a new proposal (another name); list_proposals lists those there are.";
            return Err(Failure::refused(args.op, vec![why], hint).with_docs("guides/history/proposals").into());
        }
        let empty = crate::proposals::Proposal::named(name);
        let picked = crate::proposals::picked(&self.journal, name);
        let view = self.views.view(self.proposals.get(name).unwrap_or(&empty), &self.index, &picked);
        let mut plans = Plans {
            index: &mut view.index,
            device: self.store.device(),
            store: &self.store,
            journal: &self.journal,
            feed: &self.feed,
            hooks: &self.hooks,
            settings: &self.settings,
            proposals: &self.proposals,
            entropy: &self.entropy,
            ids: &mut self.ids,
            ops: registry::OPS,
        };
        let w = match ops::plan_write(&mut plans, write, args, now_ms)? {
            Planned::Step(step) => return Ok(step),
            Planned::Write(w) => *w,
        };
        let changes = view.index.changes_of(&w.tx);
        let mut stored = args.map.clone();
        stored.remove("proposal");
        stored.remove("proposal_message");
        let staged = Staged {
            n: 0,
            op: args.op.into(),
            args: stored.into(),
            summary: w.summary.clone(),
            at_ms: now_ms,
            changes,
        };
        let (file, opened) = self.proposals.stage(name, actor, args.str("proposal_message"), staged, now_ms);
        self.views.took_write(name);
        let pr = self.proposals.get(name).expect("staged above");
        let mut out = Outcome::done(ops::staged_answer(w.answer, pr));
        out.store.push(file);
        if opened {
            let ev = ops::proposal_event(crate::feed::EventKind::ProposalCreated, pr, actor, now_ms);
            out.store.extend(self.feed.push(ev));
        }
        Ok(Step::Done(out))
    }

    /// What a write plans with: the index to change, the rest to see.
    fn plans(&mut self) -> Plans<'_> {
        Plans {
            index: &mut self.index,
            device: self.store.device(),
            store: &self.store,
            journal: &self.journal,
            feed: &self.feed,
            hooks: &self.hooks,
            settings: &self.settings,
            proposals: &self.proposals,
            entropy: &self.entropy,
            ids: &mut self.ids,
            ops: registry::OPS,
        }
    }

    /// What a store operation keeps.
    fn keeps<'a>(&'a mut self, actor: &'a str) -> Keeps<'a> {
        let device = self.store.device().map(str::to_string);
        Keeps {
            index: &mut self.index,
            store: &mut self.store,
            journal: &self.journal,
            feed: &mut self.feed,
            hooks: &mut self.hooks,
            settings: &mut self.settings,
            meaning: &mut self.meaning,
            proposals: &mut self.proposals,
            actor,
            device,
            entropy: &self.entropy,
            ops: registry::OPS,
        }
    }

    /// The tables' logs, for a write's commits.
    fn logs(&mut self) -> Logs<'_> {
        Logs { index: &self.index, store: &mut self.store }
    }

    /// The tables' logs, for the tests of log/commit.rs.
    #[cfg(test)]
    pub(crate) fn logs_for_tests(&mut self) -> Logs<'_> {
        self.logs()
    }

    /// What hand edits work on.
    fn hands(&mut self) -> Hands<'_> {
        Hands {
            hand: &mut self.hand,
            known: &mut self.known,
            index: &mut self.index,
            store: &mut self.store,
            journal: &mut self.journal,
            feed: &mut self.feed,
            hooks: &mut self.hooks,
            settings: &mut self.settings,
        }
    }

    /// What a write in flight changes as it starts and ends.
    fn writing(&mut self) -> Writing<'_> {
        Writing {
            index: &mut self.index,
            store: &mut self.store,
            journal: &mut self.journal,
            feed: &mut self.feed,
            known: &mut self.known,
            meaning: &mut self.meaning,
            settings: &self.settings,
            pending: &mut self.pending,
        }
    }

    /// The meaning index brought up to date with the notes touched since,
    /// when the `semanticIndex` setting says so.
    fn keep_meaning_up(&mut self) -> Vec<StoreWrite> {
        self.meaning.keep_up(&mut self.index, &mut self.store, self.settings.semantic_index)
    }

    /// The step of a turn that stopped: a `Need` of the store files it lacked
    /// (the host reads them and the turn runs again), or its failure.
    pub(crate) fn stopped(&self, stop: &Stop) -> Step {
        let wanted = self.store.take_wanted();
        match stop {
            Stop::Need => Step::Need(wanted),
            Stop::Failed(f) => Step::Done(Outcome::failed(f)),
        }
    }

    /// Store files the host read because a step asked for them (`Step::Need`):
    /// None for a file that is absent.
    pub fn provide(&mut self, files: Vec<(String, Option<String>)>) {
        self.store.provide(files);
    }

    /// The host reports what became of each edit of an `Apply`, in order (an edit
    /// it did not try, after one failed, is `EditError::NotTried`). When one failed,
    /// the engine puts its index back and plans the rollback of those that were
    /// made: one more `Apply`, reported here the same way.
    pub fn finish(&mut self, results: &[Result<(), EditError>]) -> Step {
        self.writing().finish_write(results)
    }

    /// The host could not write an `Apply`'s store files, so it touched no note:
    /// the engine puts its index back, and answers the refusal to give.
    pub fn store_failed(&mut self, op: &str, error: &str) -> Outcome {
        if let Some(n) = self.pending.as_ref().map(|p| p.edits.len()) {
            // The rollback of nothing: its journal records cannot be written either.
            let _ = self.writing().finish_write(&vec![Err(EditError::NotTried); n]);
        }
        Outcome::failed(&Failure::refused(
            op,
            vec![format!("the journal cannot be written: {error}")],
            "Free the vault's .datanotes folder (permissions, disk space), then send the operation again.",
        ))
    }

    /// The host could not give the store files a call kept asking for.
    pub fn need_unmet(&self, op: &str, paths: &[String]) -> Outcome {
        // A row changed on disk since it was read waits for the round of hand
        // edits (`take_texts`): a moment, not a defect.
        let queued = self.hand.queued_paths();
        let changed: Vec<&str> = paths.iter().map(String::as_str).filter(|p| queued.contains(p)).collect();
        if !changed.is_empty() {
            let why = format!("{} changed on disk: the change is taken in first, as a hand edit", changed.join(", "));
            let hint = "Try again in a few seconds, once the change is in the change feed (list_changes).";
            return Outcome::failed(&Failure::refused(op, vec![why], hint));
        }
        let why = format!("the files it needs could not be read: {}", paths.join(", "));
        Outcome::failed(&Failure::internal(op, why))
    }

    /// Whether the host is applying a write's edits now.
    pub fn pending_write(&self) -> bool {
        self.pending.is_some()
    }

    /// Reports a vault change at the host's time. Nothing is written here: `tick`
    /// does the work when the batch of hand edits is due (0.7 s after the last
    /// change, at most 5 s after the first). The engine's own writes, reported
    /// back by a watcher, are told apart by their text and ignored.
    pub fn observe(&mut self, event: VaultEvent, now_ms: i64) {
        self.hands().observe_change(event, now_ms)
    }

    /// Store files another device's engine wrote, as a sync brought them while
    /// this engine runs (the host watches `.datanotes/`): path and text, or None
    /// for a blob or checkpoint listed unread. Its commits, journal entries,
    /// feed events, settings and webhooks are taken in now; the notes its
    /// commits wrote are its writes, not hand edits, when they arrive; and
    /// `tick` meets each table's log with its notes once the sync is quiet
    /// (`SETTLE_MS`). This device's own files are left. Returns log lines.
    pub fn store_synced(&mut self, files: Vec<(String, Option<String>)>, now_ms: i64) -> Vec<String> {
        let stageable = |op: &str| registry::spec(op).is_some_and(|s| s.facts.stageable);
        let proposals = files.iter().filter_map(|(p, t)| Some((p.as_str(), t.as_deref()?)));
        let mut log = self.proposals.arrived(proposals, &stageable);
        log.extend(self.hands().take_synced(files, now_ms));
        log
    }

    /// Whether git is pulling, rebasing or merging (the host watches `.git`): link
    /// repair after hand moves waits until it is done.
    pub fn set_git_busy(&mut self, busy: bool) {
        self.hand.git_busy = busy;
    }

    /// Runs what is due at `now_ms`: the round of hand edits, link repair, recompute of
    /// generated columns, webhook deliveries. A step like a call's: possibly a
    /// write to apply.
    pub fn tick(&mut self, now_ms: i64) -> Step {
        let mut out = Outcome::done(Value::Null);
        if self.pending_write() {
            return Step::Done(out);
        }
        // Rows are read before work that may need them, and not for a tick with
        // nothing due: an engine opened from the cache answers while its host
        // reads them.
        if self.next_deadline().is_some_and(|t| now_ms >= t) {
            if let Some(step) = self.texts_wanted() {
                return step;
            }
        }
        if self.hands().meet_due(now_ms) {
            if let Err(need) = self.hands().meet_synced(now_ms, &mut out) {
                return need;
            }
        }
        if self.hands().round_due(now_ms) {
            self.hands().hand_round(now_ms, &mut out);
            out.store.extend(self.keep_meaning_up());
        }
        if self.hand.begin_logs_at.is_some_and(|t| now_ms >= t) {
            out.store.extend(self.hands().begin_logs(now_ms));
        }
        for stage in Upkeep::ALL {
            if let Some((op, args)) = self.hands().due_write(stage, now_ms) {
                let step = self.call(op, args, "engine", now_ms);
                if let Some(apply) = merge(&mut out, step) {
                    return apply;
                }
            }
        }
        let sees = self.sees();
        let wants: Vec<_> =
            self.hooks.list.iter().map(|h| ops::changes::wants(&sees, "webhook", &h.filter).ok()).collect();
        let index = &self.index;
        let (deliveries, store) =
            self.hooks.plan(&self.feed, &wants, |w, ev| ops::changes::matches(index, w, ev), now_ms);
        out.deliveries = deliveries;
        out.store.extend(store);
        Step::Done(out)
    }

    /// When `tick` next has something to do, if ever.
    pub fn next_deadline(&self) -> Option<i64> {
        crate::handedit::due_at(&self.hand, &self.settings, &self.hooks, &self.feed)
    }

    /// The feed's newest sequence number (a long poll waits until it moves).
    pub fn feed_head(&self) -> u64 {
        self.feed.head
    }

    /// Records an agent's tool call as a `tool_call` event in the change feed:
    /// the store files to write.
    pub fn record_tool_call(&mut self, call: ToolCall, now_ms: i64) -> Vec<StoreWrite> {
        crate::handedit::feed_tool_call(&mut self.feed, call, now_ms)
    }

    /// A webhook delivery's result (the HTTP status, or why there was none): its
    /// cursor moves on a 2xx, its back-off grows otherwise. The store files to write.
    pub fn delivered(&mut self, webhook: &str, last: u64, result: Result<u16, String>, now_ms: i64) -> Vec<StoreWrite> {
        self.hooks.delivered(webhook, last, result, now_ms)
    }

    /// The store writes still owed, oldest first, for the host to write before any
    /// other; what it cannot write it hands back with `owe` (owed.rs).
    pub fn take_owed(&mut self) -> Vec<StoreWrite> {
        self.owed.take()
    }

    /// The host could not write `rest` (the first failed with `error`): kept, to be
    /// written first next time.
    pub fn owe(&mut self, rest: Vec<StoreWrite>, error: &str) -> crate::owed::Behind {
        self.owed.owe(rest, error)
    }

    /// How many store writes are owed.
    pub fn owed(&self) -> usize {
        self.owed.len()
    }

    /// Bytes from a good random source (the host's), for webhook secrets.
    pub fn seed(&mut self, entropy: &[u8]) {
        self.entropy = entropy.to_vec();
    }

    /// Gives the engine the model to search by meaning with: a model file as
    /// the store holds it (`semantic::MODEL_FILE`). The plugin's host reads it
    /// from the store; the binary needs none (it carries the model). Answers
    /// the model's name and id.
    pub fn set_semantic_model(&mut self, bytes: &[u8]) -> Result<Value, String> {
        let model = crate::semantic::Model::from_file(bytes)?;
        let answer = serde_json::json!({"model": model.name, "id": model.id});
        self.meaning.set_model(model);
        Ok(answer)
    }

    /// This device's id, kept by the host where no sync tool carries it (1 to 16
    /// lower-case letters and digits). Given before `reconcile`: what this
    /// device last knew of the vault is kept under it.
    pub fn set_device(&mut self, id: &str) -> Result<(), String> {
        self.set_device_with(id, None)
    }

    /// As `set_device`, with what the device last knew as the host read it
    /// from the device's own file (`Known::read`); None: read from the store.
    pub fn set_device_with(&mut self, id: &str, known: Option<Known>) -> Result<(), String> {
        if !crate::log::order::is_device(id) {
            return Err(format!("device id {id:?}: use 1 to 16 lower-case letters and digits"));
        }
        self.store.set_device(id);
        self.proposals.set_key(Some(id), Default::default());
        self.feed.device = Some(id.to_string());
        self.hooks.set_device(id);
        let own = |k: &Known| k.path == crate::handedit::known::path(Some(id));
        self.known = known.filter(own).or_else(|| Known::load(&self.store, Some(id)));
        Ok(())
    }

    pub fn device(&self) -> Option<&str> {
        self.store.device()
    }

    /// This device's key (16 or more random bytes the host keeps outside the
    /// vault, beside the device id), after `set_device`: the journal entries
    /// and the webhooks file this engine writes are sealed with it, and those
    /// of this device's name without its seal are treated as another device's
    /// claims (seal.rs).
    pub fn set_device_key(&mut self, key: &[u8]) -> Result<(), String> {
        let Some(device) = self.store.device().map(str::to_string) else {
            return Err("give the device id (set_device) before its key".into());
        };
        let key = crate::seal::Key::new(key)?;
        self.journal.key = key.clone();
        self.proposals.set_key(Some(&device), key.clone());
        let own = self.store.text(&crate::feed::webhook::device_file(&device));
        self.hooks.set_key(key, own);
        Ok(())
    }

    /// Lets webhooks send to loopback and private addresses: the host's choice
    /// (a flag of serve), which no operation can make.
    pub fn allow_private_webhooks(&mut self, yes: bool) {
        self.hooks.allow_private = yes;
    }

    pub fn schema(&self) -> &Schema {
        &self.index.schema
    }

    pub fn vault(&self) -> &Vault {
        &self.index.vault
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// What went wrong while opening (a damaged schema or settings file).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}
