//! The vault watcher of `serve`: file changes (the `notify` crate) become the
//! engine's `observe` events, `.git` tells whether git is pulling, rebasing or
//! merging, and `tick` runs at the engine's next deadline or every 250 ms,
//! whichever comes first. One thread does it all, so the engine sees the vault's
//! changes in the order they happened.
//!
//! What is watched: the vault's root and every folder in it but dot folders
//! (`.obsidian`, `.trash`: not the vault's notes), `.git` alone, without its
//! subfolders, and `.datanotes` but for its blobs and spares, whose files other
//! devices' engines write when a sync tool carries the store (handed to the
//! engine: `Shared::store_synced`). The watcher reports the state of a path as it finds it
//! when the event comes (read again, not guessed from the event's kind), so that
//! an editor's save through a temporary file, a burst of writes or a missed
//! event all come out right.

use crate::files::{self, STORE};
use crate::read;
use crate::shared::Shared;
use datanotes_core::{Engine, VaultEvent};
use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind, RenameMode};
use notify::{Config, Event, EventKind, EventKindMask, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, UNIX_EPOCH};

/// `tick` runs at least this often.
const TICK: Duration = Duration::from_millis(250);
/// How long the watcher lets events gather after the first.
const GATHER: Duration = Duration::from_millis(5);
/// After the last sign of git at work in `.git` (ORIG_HEAD, index.lock, FETCH_HEAD
/// changing), git counts as busy this long.
const GIT_QUIET: Duration = Duration::from_millis(1500);
/// Files in `.git` whose presence means git is in the middle of something.
const GIT_MARKERS: [&str; 4] = ["rebase-merge", "rebase-apply", "MERGE_HEAD", "index.lock"];
/// Files in `.git` whose change means git is working (a pull writes them).
const GIT_CHURN: [&str; 5] = ["ORIG_HEAD", "index.lock", "FETCH_HEAD", "MERGE_HEAD", "HEAD"];

/// What the watcher must do for one notify event.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// Look at this path (vault-relative) again and report what it is now.
    Touch(String),
    Rename(String, String),
    /// Events were lost: compare the whole vault with the engine.
    Rescan,
}

/// What a path is now on disk.
enum Seen {
    File(String, i64),
    /// A folder: the notes in it.
    Dir(Vec<datanotes_core::NoteFile>),
    Gone,
    /// Not a note, or cannot be read (reported already).
    Skip,
}

struct Vault {
    /// As given (the engine's paths are relative to it).
    root: PathBuf,
    /// Canonical: notify's paths start with it.
    canon: PathBuf,
}

impl Vault {
    fn rel(&self, p: &Path) -> Option<String> {
        // notify's paths are the watched folder's joined with names: compared
        // as bytes first, as that is most of the watcher's work under load.
        let bytes = p.as_os_str().as_encoded_bytes();
        let s = match bytes.strip_prefix(self.canon.as_os_str().as_encoded_bytes()) {
            Some([b'/', rest @ ..]) => String::from_utf8_lossy(rest),
            _ => p.strip_prefix(&self.canon).or_else(|_| p.strip_prefix(&self.root)).ok()?.to_string_lossy(),
        };
        let s = if s.contains('\\') { s.replace('\\', "/") } else { s.into_owned() };
        (!s.is_empty()).then_some(s)
    }

    fn look(&self, rel: &str) -> Seen {
        let full = self.root.join(rel);
        let Ok(meta) = fs::symlink_metadata(&full) else { return Seen::Gone };
        if meta.file_type().is_symlink() {
            // As at open: a link is not one of the vault's own files, so a note
            // replaced by one is gone.
            if !rel.split('/').any(|c| c.starts_with('.')) {
                eprintln!("datanotes: warning: {}", files::left_out(rel, &full));
            }
            return Seen::Gone;
        }
        if meta.is_dir() {
            if rel.split('/').any(|c| c.starts_with('.')) {
                return Seen::Skip;
            }
            return match read::read_under(&self.root, PathBuf::from(rel), false) {
                Ok((files, warnings)) => {
                    for w in warnings {
                        eprintln!("datanotes: warning: {w}");
                    }
                    Seen::Dir(files)
                }
                Err(_) => Seen::Gone,
            };
        }
        if !read::wanted(rel) {
            return Seen::Skip;
        }
        let mtime =
            meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_millis() as i64);
        match files::read_no_follow(&full) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => Seen::File(text, mtime),
                Err(_) => {
                    eprintln!("datanotes: warning: {rel} is not UTF-8 text: left out");
                    Seen::Skip
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Seen::Gone,
            Err(e) => {
                eprintln!("datanotes: warning: {rel} cannot be read ({e}): left out");
                Seen::Skip
            }
        }
    }
}

/// Whether the engine holds this path (the schema counts as always there).
fn knows(engine: &Engine, rel: &str) -> bool {
    rel == read::METASTORE || engine.vault().get(rel).is_some()
}

fn known_under(engine: &Engine, dir: &str) -> Vec<String> {
    engine.vault().paths_under(&format!("{dir}/"))
}

fn upsert(engine: &Engine, path: String, text: String, mtime: i64) -> VaultEvent {
    if knows(engine, &path) {
        VaultEvent::Modified { path, text, mtime }
    } else {
        VaultEvent::Created { path, text, mtime }
    }
}

/// The steps of one notify event.
/// `rels`: the event's paths, relative to the vault (`Vault::rel`).
fn steps(ev: &Event, rels: &[Option<String>]) -> Vec<Step> {
    if ev.need_rescan() {
        return vec![Step::Rescan];
    }
    let touch = || rels.iter().flatten().cloned().map(Step::Touch).collect();
    match ev.kind {
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) if rels.len() == 2 => match rels {
            [Some(a), Some(b)] => vec![Step::Rename(a.clone(), b.clone())],
            _ => touch(),
        },
        EventKind::Create(_)
        | EventKind::Remove(_)
        | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any | ModifyKind::Other)
        | EventKind::Access(AccessKind::Close(AccessMode::Write))
        | EventKind::Any => touch(),
        _ => vec![],
    }
}

/// A rename's two halves come as events of their own too (From, To): the
/// rename says it all, so those go.
fn tidy(steps: Vec<Step>) -> Vec<Step> {
    let renamed: HashSet<String> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Rename(a, b) => Some([a.clone(), b.clone()]),
            _ => None,
        })
        .flatten()
        .collect();
    let mut out: Vec<Step> = vec![];
    let mut touched: HashSet<String> = HashSet::new();
    for s in steps {
        match &s {
            Step::Touch(p) if renamed.contains(p) || !touched.insert(p.clone()) => continue,
            Step::Rename(..) | Step::Rescan => touched.clear(),
            _ => {}
        }
        if s == Step::Rescan && out.last() == Some(&Step::Rescan) {
            continue;
        }
        out.push(s);
    }
    out
}

/// The events of a batch of steps. The files are read under the engine's lock:
/// no write of the engine is then half made, so a file holds either the engine's
/// last write to it or a hand edit, never an older write of the engine that an
/// event arriving late would pass for a hand edit. A file with a write of the
/// engine still queued (`queue`) is left until that write, which the watcher
/// sees too.
fn report(vault: &Vault, shared: &Shared, steps: Vec<Step>) {
    shared.observe(move |engine| {
        let mut evs = vec![];
        for r in steps.into_iter().map(|s| read_step(vault, shared, s)) {
            events_of(engine, r, &mut evs);
        }
        evs
    });
}

/// A change as read from the disk, for the engine to compare.
enum Read {
    Touch(String, Seen),
    Rename(String, String, Seen),
    Rescan(Vec<datanotes_core::NoteFile>),
}

/// Reads what a change left: a note with a write queued is skipped (the
/// queue's write is the engine's own); a folder's files are read whole.
fn read_step(vault: &Vault, shared: &Shared, s: Step) -> Read {
    let queued = |rel: &str| shared.disk().queued(&vault.root.join(rel));
    let look = |rel: &str| match vault.look(rel) {
        Seen::Dir(files) => Seen::Dir(files.into_iter().filter(|f| !queued(&f.path)).collect()),
        seen => seen,
    };
    match s {
        Step::Touch(p) if queued(&p) => Read::Touch(p, Seen::Skip),
        Step::Touch(p) => {
            let seen = look(&p);
            Read::Touch(p, seen)
        }
        // A note swapped with a file in a dot folder (an editor's backup) is
        // still there: what stands at its path now counts.
        Step::Rename(a, b) if b.split('/').any(|c| c.starts_with('.')) => {
            let seen = if queued(&a) { Seen::Skip } else { look(&a) };
            Read::Touch(a, seen)
        }
        Step::Rename(a, b) => {
            let seen = if queued(&b) { Seen::Skip } else { look(&b) };
            Read::Rename(a, b, seen)
        }
        Step::Rescan => {
            eprintln!("datanotes: warning: the watcher lost events: comparing the whole vault");
            let _ = shared.disk().run_queue();
            match read::read_vault(&vault.root, false) {
                Ok((files, _)) => Read::Rescan(files),
                Err(e) => {
                    eprintln!("datanotes: warning: {e}");
                    Read::Rescan(vec![])
                }
            }
        }
    }
}

/// The engine's events for what was read.
fn events_of(engine: &Engine, r: Read, evs: &mut Vec<VaultEvent>) {
    match r {
        Read::Touch(p, Seen::File(text, mtime)) => evs.push(upsert(engine, p, text, mtime)),
        Read::Touch(_, Seen::Dir(files)) => {
            evs.extend(files.into_iter().map(|f| upsert(engine, f.path, f.text, f.mtime)))
        }
        Read::Touch(p, Seen::Gone) | Read::Rename(p, _, Seen::Gone | Seen::Skip) => removed(engine, p, evs),
        Read::Touch(_, Seen::Skip) => {}
        Read::Rename(a, b, Seen::File(text, mtime)) => {
            if read::wanted(&a) && knows(engine, &a) && a != read::METASTORE && b != read::METASTORE {
                evs.push(VaultEvent::Renamed { from: a, to: b, text, mtime });
            } else {
                // A temporary file saved into place, or a note that was not one.
                evs.push(upsert(engine, b, text, mtime));
            }
        }
        Read::Rename(a, b, Seen::Dir(files)) => folder_moved(engine, &a, &b, files, evs),
        Read::Rescan(files) => rescanned(engine, files, evs),
    }
}

/// A note gone, or a folder of notes the engine knows.
fn removed(engine: &Engine, p: String, evs: &mut Vec<VaultEvent>) {
    if knows(engine, &p) {
        evs.push(VaultEvent::Removed { path: p });
    } else {
        evs.extend(known_under(engine, &p).into_iter().map(|path| VaultEvent::Removed { path }));
    }
}

/// A folder moved from `a` to `b`: each note it held moved with it; those
/// the engine knew under `a` and not found under `b` are gone.
fn folder_moved(engine: &Engine, a: &str, b: &str, files: Vec<datanotes_core::NoteFile>, evs: &mut Vec<VaultEvent>) {
    let mut left: HashSet<String> = known_under(engine, a).into_iter().collect();
    for f in files {
        let old = format!("{a}{}", &f.path[b.len()..]);
        if left.remove(&old) {
            evs.push(VaultEvent::Renamed { from: old, to: f.path, text: f.text, mtime: f.mtime });
        } else {
            evs.push(upsert(engine, f.path, f.text, f.mtime));
        }
    }
    let mut left: Vec<String> = left.into_iter().collect();
    left.sort();
    evs.extend(left.into_iter().map(|path| VaultEvent::Removed { path }));
}

/// The whole vault read again: every note whose text differs, and those gone.
fn rescanned(engine: &Engine, files: Vec<datanotes_core::NoteFile>, evs: &mut Vec<VaultEvent>) {
    let mut seen = HashSet::new();
    for f in files {
        seen.insert(f.path.clone());
        if engine.vault().text(&f.path) != Some(f.text.as_str()) {
            evs.push(upsert(engine, f.path, f.text, f.mtime));
        }
    }
    let mut gone: Vec<String> =
        engine.vault().notes.keys().filter(|p| !seen.contains(&p[..])).map(|p| p.to_string()).collect();
    gone.sort();
    evs.extend(gone.into_iter().map(|path| VaultEvent::Removed { path }));
}

/// Whether git is at work in the vault.
struct Git {
    dir: PathBuf,
    busy: bool,
    churn_until: Option<Instant>,
}

impl Git {
    fn now_busy(&mut self) -> bool {
        if self.churn_until.is_some_and(|t| Instant::now() >= t) {
            self.churn_until = None;
        }
        self.churn_until.is_some() || (self.dir.is_dir() && GIT_MARKERS.iter().any(|m| self.dir.join(m).exists()))
    }
}

/// Starts the watcher and the ticker on a thread of their own. A watcher that
/// cannot start is reported; the ticker runs anyway (webhooks, timers).
pub fn start(shared: Shared) {
    let root = shared.vault().to_path_buf();
    let canon = fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
    let vault = Vault { root, canon };
    let (tx, rx) = channel::<notify::Result<Event>>();
    let handler = move |ev| {
        let _ = tx.send(ev);
    };
    // Opens and closes after reading change nothing (`run` drops them), yet
    // each woke two threads: every note the engine or an editor reads, and
    // about a third of the events of a write of the engine's. inotify leaves
    // them out itself; on other systems notify filters them.
    let config = Config::default().with_event_kinds(EventKindMask::CORE | EventKindMask::ACCESS_CLOSE);
    let watcher = match RecommendedWatcher::new(handler, config) {
        Ok(mut w) => match watch_vault(&mut w, &vault.canon) {
            Ok(()) => Some(w),
            Err(e) => {
                eprintln!("datanotes: warning: the vault watcher cannot start ({e}): hand edits are seen at the next start only");
                None
            }
        },
        Err(e) => {
            eprintln!(
                "datanotes: warning: the vault watcher cannot start ({e}): hand edits are seen at the next start only"
            );
            None
        }
    };
    let spawned =
        std::thread::Builder::new().name("datanotes-vault".into()).spawn(move || run(shared, vault, watcher, rx));
    if let Err(e) = spawned {
        eprintln!("datanotes: warning: the vault watcher cannot start: {e}");
    }
}

fn watch_vault(w: &mut RecommendedWatcher, root: &Path) -> notify::Result<()> {
    w.watch(root, RecursiveMode::NonRecursive)?;
    for entry in fs::read_dir(root)?.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            watch_folder(w, root, &entry.file_name().to_string_lossy())?;
        }
    }
    Ok(())
}

/// The store's folders left unwatched: a sync brings nothing there that the
/// engine takes in (blobs are read when asked for), and about half the events
/// of a write of the engine's own were there (its spares, its blobs).
const UNWATCHED: [&str; 2] = ["blobs", crate::spare::DIR];

/// Watches one folder at the vault's root: all of it, `.git` alone, the store
/// but for its `UNWATCHED` folders, and no other dot folder.
fn watch_folder(w: &mut RecommendedWatcher, root: &Path, name: &str) -> notify::Result<()> {
    if name == ".git" {
        w.watch(&root.join(name), RecursiveMode::NonRecursive)
    } else if name == STORE {
        let store = root.join(name);
        w.watch(&store, RecursiveMode::NonRecursive)?;
        for entry in fs::read_dir(&store)?.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                watch_store_folder(w, &store, &entry.file_name().to_string_lossy())?;
            }
        }
        Ok(())
    } else if !name.starts_with('.') {
        w.watch(&root.join(name), RecursiveMode::Recursive)
    } else {
        Ok(())
    }
}

fn watch_store_folder(w: &mut RecommendedWatcher, store: &Path, name: &str) -> notify::Result<()> {
    if UNWATCHED.contains(&name) {
        return Ok(());
    }
    w.watch(&store.join(name), RecursiveMode::Recursive)
}
/// The rest of a burst (a write of the engine's makes about 20 events) after
/// its first, in one batch: one wake-up and one look under the engine's lock
/// for all of it.
fn gather(rx: &Receiver<notify::Result<Event>>, first: notify::Result<Event>) -> Vec<notify::Result<Event>> {
    std::thread::sleep(GATHER);
    let mut batch = vec![first];
    batch.extend(rx.try_iter());
    // A rename's far half may still be on its way.
    if matches!(batch.last(), Some(Ok(e)) if e.kind == EventKind::Modify(ModifyKind::Name(RenameMode::From))) {
        if let Ok(ev) = rx.recv_timeout(Duration::from_millis(20)) {
            batch.push(ev);
            batch.extend(rx.try_iter());
        }
    }
    batch
}

/// A batch's vault changes for the engine, and the store files another
/// device's sync brought (`device`: this one's id); changes under `.git/`
/// only tell whether git is at work.
fn sort_out(
    batch: Vec<notify::Result<Event>>,
    vault: &Vault,
    watcher: &mut Option<RecommendedWatcher>,
    git: &mut Git,
    store_prefix: &str,
    device: Option<&str>,
) -> (Vec<Step>, Vec<String>) {
    let mut all = vec![];
    let mut store = vec![];
    for ev in batch {
        match ev {
            // Accesses change nothing (the watcher's mask leaves them
            // out where the system can; elsewhere they come, and go here).
            Ok(ev)
                if matches!(ev.kind, EventKind::Access(a) if a != AccessKind::Close(AccessMode::Write))
                    && !ev.need_rescan() => {}
            Ok(ev) => {
                let rels: Vec<Option<String>> = ev.paths.iter().map(|p| vault.rel(p)).collect();
                if let Some(w) = watcher.as_mut() {
                    follow(w, vault, &ev, &rels);
                }
                let of_store = rels.iter().flatten().filter_map(|rel| {
                    let rel = rel.strip_prefix(store_prefix)?;
                    datanotes_core::handedit::synced_file(rel, device?).then(|| rel.to_string())
                });
                store.extend(of_store);
                if rels.iter().flatten().any(|r| r.starts_with(".git/")) {
                    let churn = ev.paths.iter().any(|p| {
                        p.file_name().is_some_and(|n| GIT_CHURN.iter().any(|c| n == *c))
                            || p.file_name().is_some_and(|n| GIT_MARKERS.iter().any(|c| n == *c))
                    });
                    if churn {
                        git.churn_until = Some(Instant::now() + GIT_QUIET);
                    }
                    continue;
                }
                all.extend(steps(&ev, &rels));
            }
            Err(e) => eprintln!("datanotes: warning: the vault watcher: {e}"),
        }
    }
    (all, store)
}

/// The changes worth the engine's lock: not a note as the engine's queue
/// left it (it needs no reading back: see `Queue::own`), nor a dot folder's.
fn worth_reporting(shared: &Shared, vault: &Vault, all: Vec<Step>) -> Vec<Step> {
    tidy(all)
        .into_iter()
        .filter(|s| match s {
            Step::Touch(p) => !p.split('/').any(|c| c.starts_with('.')) && !shared.disk().own(&vault.root.join(p)),
            Step::Rename(a, b) => ![a, b].iter().all(|p| p.split('/').any(|c| c.starts_with('.'))),
            Step::Rescan => true,
        })
        .collect()
}

fn run(shared: Shared, vault: Vault, mut watcher: Option<RecommendedWatcher>, rx: Receiver<notify::Result<Event>>) {
    let mut git = Git { dir: vault.root.join(".git"), busy: false, churn_until: None };
    if git.now_busy() {
        git.busy = true;
        shared.set_git_busy(true);
    }
    let mut deadline = shared.tick();
    let mut last_tick = Instant::now();
    // Of the store's files, another device's are the engine's to take in: the
    // engine's own writes (most of the events) are left without a lock.
    let device = shared.device();
    let store_prefix = format!("{}/", STORE);
    loop {
        let mut due = last_tick + TICK;
        if let Some(d) = deadline {
            let wait = Duration::from_millis(d.saturating_sub(crate::clock::now_ms()).max(0) as u64);
            due = due.min(Instant::now() + wait);
        }
        let first = match rx.recv_timeout(due.saturating_duration_since(Instant::now())) {
            Ok(ev) => Some(ev),
            Err(RecvTimeoutError::Timeout) => None,
            // No watcher: the ticker alone.
            Err(RecvTimeoutError::Disconnected) => {
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
                None
            }
        };
        if let Some(first) = first {
            let batch = gather(&rx, first);
            let (all, mut store) = sort_out(batch, &vault, &mut watcher, &mut git, &store_prefix, device.as_deref());
            let all = worth_reporting(&shared, &vault, all);
            store.sort();
            store.dedup();
            if !store.is_empty() {
                shared.store_synced(store);
            }
            if !all.is_empty() {
                report(&vault, &shared, all);
                // observe may bring the next deadline closer.
                deadline = shared.with(|h| h.engine.next_deadline());
            }
        }
        let busy = git.now_busy();
        if busy != git.busy {
            git.busy = busy;
            shared.set_git_busy(busy);
        }
        let now = Instant::now();
        let at_deadline = deadline.is_some_and(|d| crate::clock::now_ms() >= d);
        if now >= last_tick + TICK || at_deadline {
            deadline = shared.tick();
            last_tick = now;
        }
    }
}

/// New folders at the vault's root are watched as they come (a folder moved or
/// made there, `.git` after `git init`).
fn follow(w: &mut RecommendedWatcher, vault: &Vault, ev: &Event, rels: &[Option<String>]) {
    let made = matches!(
        ev.kind,
        EventKind::Create(CreateKind::Folder | CreateKind::Any)
            | EventKind::Modify(ModifyKind::Name(RenameMode::To | RenameMode::Both))
    );
    if !made {
        return;
    }
    for (p, rel) in ev.paths.iter().zip(rels) {
        let Some(rel) = rel else { continue };
        // A folder at the root, or in the store (the log of a new table).
        let in_store = rel.strip_prefix(STORE).and_then(|r| r.strip_prefix('/'));
        if in_store.unwrap_or(rel).contains('/') || !p.is_dir() {
            continue;
        }
        let done = match in_store {
            Some(name) => watch_store_folder(w, &vault.canon.join(STORE), name),
            None => watch_folder(w, &vault.canon, rel),
        };
        if let Err(e) = done {
            eprintln!("datanotes: warning: cannot watch {rel}: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rename_replaces_its_halves() {
        let t = |p: &str| Step::Touch(p.into());
        let s = tidy(vec![t("a.md"), t("b.md"), Step::Rename("a.md".into(), "b.md".into()), t("c.md"), t("c.md")]);
        assert_eq!(s, vec![Step::Rename("a.md".into(), "b.md".into()), t("c.md")]);
        let s = tidy(vec![Step::Rescan, Step::Rescan, t("c.md")]);
        assert_eq!(s, vec![Step::Rescan, t("c.md")]);
    }

    #[test]
    fn wanted_paths() {
        assert!(read::wanted("a.md") && read::wanted("datanotes/main/public/film/Charade.md"));
        assert!(read::wanted("datanotes/metastore.yaml"));
        assert!(!read::wanted(".trash/a.md") && !read::wanted("x/.hidden/a.md") && !read::wanted("a.txt"));
        assert!(!read::wanted("datanotes/.metastore.yaml.datanotes-tmp"));
        assert!(read::wanted("datanotes/bases/film.base"));
        assert!(!read::wanted("datanotes/bases/x/film.base") && !read::wanted("Notes/film.base"));
    }
}
