//! Devices that sync one vault (issue 15): each with its own copy and its own
//! engine, random writes, undos and hand edits, and sync rounds between random
//! pairs in which the newest file wins, as most sync tools do. After every sync
//! of all devices: nothing any device wrote to its store is lost, every table's
//! log is the same on every device, and so is each table as of each version.

mod common;

use common::{film_diary, Rng, T0};
use datanotes_core::driver::{self, Memory};
use datanotes_core::handedit::known::Known;
use datanotes_core::{Engine, NoteFile, Status, StoreFile};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

/// Rounds per simulation: `DATANOTES_SYNC_ROUNDS` (`make soak` runs thousands),
/// else 1,000 in all natively, fewer in wasm (the same code, slower).
fn rounds() -> usize {
    #[cfg(target_arch = "wasm32")]
    return 40;
    #[cfg(not(target_arch = "wasm32"))]
    std::env::var("DATANOTES_SYNC_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(200)
}

/// A file as a sync tool sees it.
#[derive(Clone, PartialEq)]
struct Stamp {
    /// When this version was made (unique to it).
    clock: u64,
    /// Its text (None: deleted).
    text: Option<String>,
    /// The versions it descends from, itself included: a version that descends
    /// from the other side's replaces it; two that do not are concurrent.
    history: Vec<u64>,
}

type Stamped = BTreeMap<String, Stamp>;

/// How a sync tool settles two versions of one file made while apart.
#[derive(Clone, Copy, PartialEq)]
enum Tool {
    /// The newest wins (Dropbox without copies, iCloud, most tools).
    Newest,
    /// The newest wins the name; the other is kept as
    /// `<name>.sync-conflict-<date>-<time>-<device>.<ext>`, as Syncthing does.
    Syncthing,
    /// `git pull` with `.datanotes/` committed: the files `.datanotes/.gitignore`
    /// names stay on each device; two versions made apart are merged from their
    /// common ancestor, and where both changed, git's conflict markers go in.
    Git,
}

/// Every version of every note made in a simulation, by (path, clock): the
/// common ancestor of a git merge.
type Versions = Rc<RefCell<HashMap<(String, u64), Option<String>>>>;

/// Clocks of the versions merges make: past any device's.
static MERGES: AtomicU64 = AtomicU64::new(1 << 40);

thread_local! {
    /// Notes a git merge made of two versions, in this thread's simulation.
    static GIT_MERGES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether git leaves a store file out (core/src/secrets.rs).
fn git_ignores(path: &str) -> bool {
    let Some(store) = path.strip_prefix("s/") else { return false };
    store == "lock"
        || store == "engine.lock"
        || store.starts_with("known.")
        || store.starts_with("spare/")
        || store.ends_with(".checkpoint.json")
}

/// A merge of two texts from their common ancestor, as git makes one: a side
/// the other left as it was wins; else the lines both keep around the change,
/// and the two changes between conflict markers ("ours" is `a`'s).
fn merge(base: Option<&str>, a: &str, b: &str) -> String {
    if base == Some(a) {
        return b.to_string();
    }
    if base == Some(b) {
        return a.to_string();
    }
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.split_inclusive('\n').collect(), b.split_inclusive('\n').collect());
    let head = la.iter().zip(&lb).take_while(|(x, y)| x == y).count();
    let tail = la[head..].iter().rev().zip(lb[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    let mut out: String = la[..head].concat();
    out.push_str("<<<<<<< HEAD\n");
    out.push_str(&la[head..la.len() - tail].concat());
    out.push_str("=======\n");
    out.push_str(&lb[head..lb.len() - tail].concat());
    out.push_str(">>>>>>> theirs\n");
    out.push_str(&la[la.len() - tail..].concat());
    out
}

struct Device {
    id: String,
    versions: Versions,
    /// Hand edits made on this device.
    hand_edits: usize,
    disk: Memory,
    /// Every file this device has, notes as `v/<path>` and the store as `s/<path>`,
    /// with when it last changed here.
    stamps: Stamped,
}

fn files(m: &Memory) -> BTreeMap<String, String> {
    let notes = m.notes.iter().map(|(p, t)| (format!("v/{p}"), t.clone()));
    notes.chain(m.store.iter().map(|(p, t)| (format!("s/{p}"), t.clone()))).collect()
}

impl Device {
    fn new(id: &str, disk: Memory, versions: Versions) -> Device {
        let mut d = Device { id: id.into(), versions, hand_edits: 0, disk, stamps: BTreeMap::new() };
        d.restamp(&BTreeMap::new(), 0);
        d
    }

    /// Stamps what changed here since `before` with the time `clock` (unique to
    /// this device and moment).
    fn restamp(&mut self, before: &BTreeMap<String, String>, clock: u64) {
        let now = files(&self.disk);
        let mut stamp = |p: &String, text: Option<String>| {
            let mut history = self.stamps.get(p).map(|s| s.history.clone()).unwrap_or_default();
            history.push(clock);
            if p.starts_with("v/") {
                self.versions.borrow_mut().insert((p.clone(), clock), text.clone());
            }
            self.stamps.insert(p.clone(), Stamp { clock, text, history });
        };
        for (p, t) in &now {
            if before.get(p) != Some(t) {
                stamp(p, Some(t.clone()));
            }
        }
        for p in before.keys().filter(|p| !now.contains_key(*p)) {
            stamp(p, None);
        }
    }

    /// Makes the disk what the stamps say.
    fn lay_out(&mut self) {
        for (p, stamp) in &self.stamps {
            let (kind, path) = p.split_at(2);
            let map = if kind == "v/" { &mut self.disk.notes } else { &mut self.disk.store };
            match &stamp.text {
                Some(t) => map.insert(path.to_string(), t.clone()),
                None => map.remove(path),
            };
        }
    }

    /// Opens this device's engine as a host does (notes read, the log and the
    /// blobs listed unread), started by the driver.
    fn open(&mut self, now: i64) -> Engine {
        let notes = self.disk.notes.iter().map(|(p, t)| NoteFile { path: p.clone(), text: t.clone(), mtime: 0 });
        let store = self.disk.store.iter().map(|(p, t)| {
            StoreFile(p.clone(), (!p.starts_with("log/") && !p.starts_with("blobs/")).then(|| t.clone()))
        });
        let mut e = Engine::open_listed(notes.collect(), store.collect(), now);
        // Every other open as the binary's: what the device last knew read
        // by the host beside the vault; once in a while read for another file,
        // which the engine does not take.
        let own = datanotes_core::handedit::known::path(Some(&self.id));
        let read = |path: &str| self.disk.store.get(path).map(|t| Known::read(path.to_string(), t));
        let known = match now % 3 {
            0 => read(&own),
            1 => read(&datanotes_core::handedit::known::path(Some("zz")))
                .or_else(|| read(&own).map(|k| Known { path: "known.zz.jsonl".into(), ..k })),
            _ => None,
        };
        e.set_device_with(&self.id, known).unwrap();
        let out = driver::start(&mut e, &mut self.disk, now);
        assert_eq!(out.status, Status::Ok, "{}", out.answer);
        e
    }

    /// A second device with this one's files, as a sync tool's first sync leaves it.
    fn copy_as(&self, id: &str) -> Device {
        let mut d = Device::new(id, Memory::new(self.disk.notes.clone()), self.versions.clone());
        d.disk.store = self.disk.store.clone();
        d.stamps = self.stamps.clone();
        d
    }

    /// One operation in an engine opened for it, its changes stamped at `clock`.
    fn run(&mut self, op: &str, args: Value, at: i64, clock: u64) -> Value {
        let before = files(&self.disk);
        let mut e = self.open(at);
        let out = self.call(&mut e, op, args, at);
        drop(e);
        self.restamp(&before, clock);
        out
    }

    /// An operation's answer: done, or refused with its reasons (an undo of
    /// another device's write whose notes changed since), never a defect.
    fn call(&mut self, e: &mut Engine, op: &str, args: Value, now: i64) -> Value {
        self.disk.mtime = now;
        let out = driver::call(e, &mut self.disk, op, &args, &format!("agent-{}", self.id), now);
        assert!(matches!(out.status, Status::Ok | Status::Refused), "{op} {args} on {}: {}", self.id, out.answer);
        out.answer
    }
}

/// Syncthing's name for the copy of `path` that lost to another device's.
fn conflict_name(path: &str, clock: u64, device: &str) -> String {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let (stem, ext) = name.rsplit_once('.').map_or((name, String::new()), |(s, e)| (s, format!(".{e}")));
    let id = format!("{:A<7}", device.to_uppercase());
    format!("{dir}/{stem}.sync-conflict-20261204-{:06}-{id}{ext}", clock % 1_000_000)
}

/// Both devices end with the same files: of two versions of a file, the one
/// that descends from the other; of two made while apart, the newest (a tie goes
/// to the higher device id, the same on both sides), the other kept as a copy
/// when the tool makes copies.
fn sync(a: &mut Device, b: &mut Device, tool: Tool) -> usize {
    let mut copies = 0;
    let paths: BTreeSet<String> = a.stamps.keys().chain(b.stamps.keys()).cloned().collect();
    for p in paths.into_iter().filter(|p| tool != Tool::Git || !git_ignores(p)) {
        let (sa, sb) = (a.stamps.get(&p).cloned(), b.stamps.get(&p).cloned());
        let winner = match (sa, sb) {
            (Some(x), Some(y)) if x == y => continue,
            (Some(x), Some(y))
                if tool == Tool::Git && !x.history.contains(&y.clock) && !y.history.contains(&x.clock) =>
            {
                git_merge(&p, x, y, &a.versions)
            }
            (Some(x), Some(y)) if x.history.contains(&y.clock) => x,
            (Some(x), Some(y)) if y.history.contains(&x.clock) => y,
            (Some(x), Some(y)) => {
                let ((mut won, _), (lost, lost_on)) = if (x.clock, &a.id) > (y.clock, &b.id) {
                    ((x, &a.id), (y, &b.id))
                } else {
                    ((y, &b.id), (x, &a.id))
                };
                won.history.extend(lost.history.iter().copied());
                if tool == Tool::Syncthing && won.text.is_some() && lost.text.is_some() && won.text != lost.text {
                    let copy = conflict_name(&p, lost.clock, lost_on);
                    let stamp = Stamp { clock: lost.clock, text: lost.text.clone(), history: vec![lost.clock] };
                    a.stamps.insert(copy.clone(), stamp.clone());
                    b.stamps.insert(copy, stamp);
                    copies += 1;
                }
                won
            }
            (Some(x), None) | (None, Some(x)) => x,
            (None, None) => continue,
        };
        a.stamps.insert(p.clone(), winner.clone());
        b.stamps.insert(p, winner);
    }
    a.lay_out();
    b.lay_out();
    copies
}

/// Two versions of a file made apart, as `git pull` leaves them: merged from
/// their newest common ancestor (a file one side deleted and the other changed
/// stays changed).
fn git_merge(p: &str, x: Stamp, y: Stamp, versions: &Versions) -> Stamp {
    let common = x.history.iter().filter(|c| y.history.contains(c)).max().copied();
    let base = common.and_then(|c| versions.borrow().get(&(p.to_string(), c)).cloned()).flatten();
    let text = match (&x.text, &y.text) {
        (Some(a), Some(b)) if a == b => Some(a.clone()),
        (Some(a), Some(b)) => Some(merge(base.as_deref(), a, b)),
        (Some(t), None) | (None, Some(t)) => Some(t.clone()),
        (None, None) => None,
    };
    if p.starts_with("v/") && x.text != y.text {
        GIT_MERGES.with(|n| n.set(n.get() + 1));
    }
    let clock = MERGES.fetch_add(1, Ordering::Relaxed);
    let mut history: Vec<u64> = x.history.iter().chain(&y.history).copied().collect();
    history.push(clock);
    if p.starts_with("v/") {
        versions.borrow_mut().insert((p.to_string(), clock), text.clone());
    }
    Stamp { clock, text, history }
}

fn sync_all(devices: &mut [Device], tool: Tool) {
    for _ in 0..2 {
        for i in 1..devices.len() {
            let (left, right) = devices.split_at_mut(i);
            sync(&mut left[i - 1], &mut right[0], tool);
        }
    }
}

/// One device's turn: its engine opens (finding what changed since it last
/// looked), makes a few writes, undos and hand edits, and closes.
fn turn(d: &mut Device, rng: &mut Rng, now: &mut i64, clock: u64) {
    let before = files(&d.disk);
    let mut e = d.open(*now);
    let films: Vec<String> = d
        .disk
        .notes
        .keys()
        .filter(|p| p.starts_with("datanotes/main/public/film/") && !p.contains(".sync-conflict-"))
        .cloned()
        .collect();
    let copies: Vec<String> = d.disk.notes.keys().filter(|p| p.contains(".sync-conflict-")).cloned().collect();
    let marked: Vec<String> =
        d.disk.notes.iter().filter(|(_, t)| t.contains("<<<<<<< ")).map(|(p, _)| p.clone()).collect();
    for _ in 0..1 + rng.below(3) {
        *now += rng.below(2000) as i64;
        let film = rng.pick(&films).clone();
        match rng.below(7) {
            6 if !copies.is_empty() => {
                // A conflict copy resolved, one side kept.
                let copy = rng.pick(&copies).clone();
                let keep = *rng.pick(&["original", "copy"]);
                d.call(&mut e, "resolve_conflict", json!({"path": copy, "keep": keep}), *now);
            }
            6 if !marked.is_empty() => {
                // A note git left markers in, one side kept.
                let note = rng.pick(&marked).clone();
                let keep = *rng.pick(&["ours", "theirs"]);
                d.call(&mut e, "resolve_conflict", json!({"path": note, "keep": keep}), *now);
            }
            0..=2 => {
                let rating = 1 + rng.below(5);
                d.call(&mut e, "update_row", json!({"table": "film", "path": film, "set": {"rating": rating}}), *now);
            }
            3 => {
                let title = format!("Film {}", rng.next() % 1_000_000);
                d.call(&mut e, "insert_row", json!({"table": "film", "values": {"title": title, "year": 1930}}), *now);
            }
            4 => {
                let mine = d.call(&mut e, "list_migrations", json!({"limit": 1}), *now);
                if let Some(id) = mine["migrations"][0]["migration_id"].as_str() {
                    d.call(&mut e, "undo_migration", json!({"migration_id": id}), *now);
                }
            }
            // (A film an undo of this turn took away is left.)
            _ if d.disk.notes.contains_key(&film) => {
                // A hand edit while the engine is closed: found at the next open.
                drop(e);
                let text = format!("{}\nEdited by hand on {}.\n", d.disk.notes[&film], d.id);
                d.disk.notes.insert(film, text);
                d.hand_edits += 1;
                e = d.open(*now);
            }
            _ => {}
        }
    }
    drop(e);
    d.restamp(&before, clock);
}

/// What must be the same on every device once all have synced: each table's
/// history and each table as of each of its versions.
fn history(d: &mut Device, now: i64, as_of: bool) -> Value {
    let mut e = d.open(now);
    let mut out = serde_json::Map::new();
    for t in ["main.public.film", "main.public.person", "main.public.watch"] {
        let h = d.call(&mut e, "describe_history", json!({"table": t, "limit": 10_000}), now);
        let versions: Vec<u64> =
            h["history"].as_array().unwrap().iter().map(|c| c["version"].as_u64().unwrap()).collect();
        // No commit goes missing: versions follow one another.
        assert!(versions.windows(2).all(|w| w[0] == w[1] + 1), "{t} on {}: {versions:?}", d.id);
        let mut states = vec![];
        // Every version of a short log; of a long one (make soak), the newest 50
        // and 150 spread over the rest.
        let step = (versions.len() / 150).max(1);
        let sampled = versions.iter().enumerate().filter(|(i, _)| *i < 50 || i % step == 0).map(|(_, v)| v);
        for v in sampled.take(if as_of { usize::MAX } else { 0 }) {
            let rows = d.call(&mut e, "select_rows", json!({"table": t, "version": v, "limit": 1000}), now);
            assert!(rows["rows"].is_array(), "{t} at {v} on {}: {rows}", d.id);
            states.push(json!([v, rows["rows"]]));
        }
        let shown: Vec<Value> = h["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| json!([c["version"], c["operation"], c["migration_id"], c["timestamp"]]))
            .collect();
        out.insert(t.into(), json!({"history": shown, "states": states}));
    }
    Value::Object(out)
}

/// What a device wrote that no sync may lose: its commits (written once, text
/// and all), its journal entries (by id: an entry is rewritten as it finishes or
/// is undone) and each line of its feed.
fn written(d: &Device, into: &mut BTreeSet<String>) {
    for (p, t) in &d.disk.store {
        if p.starts_with("log/") && !p.ends_with(".checkpoint.json") {
            into.insert(format!("{p}\n{t}"));
        } else if p.starts_with("journal/") {
            into.insert(p.clone());
        } else if p.starts_with("feed/") {
            into.extend(t.lines().map(|l| format!("feed {l}")));
        }
    }
}

/// Clocks of the sync tool in one round: its turn (0–2), the check (8–15), an
/// engine running through a sync (16–18 when it opens, 24–26 after).
const ROUND_CLOCKS: u64 = 32;

/// A device's engine that runs while a sync brings files, as the plugin's does
/// all day: handed what the sync changed (store files and notes in either
/// order), ticked past the round of hand edits and the sync's quiet.
struct Running {
    index: usize,
    engine: Engine,
    /// The device's files when the sync began.
    before: BTreeMap<String, String>,
    now: i64,
    round: usize,
}

impl Running {
    fn start(d: &mut Device, index: usize, now: i64, round: usize) -> Running {
        let opened = files(&d.disk);
        let engine = d.open(now);
        d.restamp(&opened, ROUND_CLOCKS * round as u64 + 16 + index as u64);
        Running { index, engine, before: files(&d.disk), now, round }
    }

    /// Takes in what the sync brought; the device's clock after.
    fn take_in(mut self, d: &mut Device, notes_first: bool) -> i64 {
        let now = self.now + 100;
        bring(d, &mut self.engine, &self.before, now, notes_first);
        let synced = files(&d.disk);
        for later in [1000, 1000 + 2 * SETTLE_MS] {
            let out = driver::tick(&mut self.engine, &mut d.disk, now + later);
            assert_eq!(out.status, Status::Ok, "{}", out.answer);
        }
        drop(self.engine);
        d.restamp(&synced, ROUND_CLOCKS * self.round as u64 + 24 + self.index as u64);
        now + 1000 + 2 * SETTLE_MS
    }
}

/// The quiet after a sync before a running engine meets the logs with the notes
/// (core/src/handedit/synced.rs).
const SETTLE_MS: i64 = 5000;

/// A simulation: the conflict copies its syncs between pairs made.
fn simulate(seed: u64, devices: usize, rounds: usize, tool: Tool) -> usize {
    let mut copies = 0;
    GIT_MERGES.with(|n| n.set(0));
    let mut rng = Rng(seed);
    let mut now = T0;
    let mut first = Device::new("a", Memory::new(film_diary()), Rc::default());
    // The film table's log starts with a first write: a hand edit made before a
    // table has a log is in no commit, and each device that finds it reports it.
    let mut e = first.open(now);
    first.call(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": {"rating": 4}}),
        now,
    );
    drop(e);
    first.restamp(&BTreeMap::new(), 0);
    let mut ds: Vec<Device> = vec![first];
    for i in 1..devices {
        let d = ds[0].copy_as(&((b'a' + i as u8) as char).to_string());
        ds.push(d);
    }
    let mut kept: BTreeSet<String> = BTreeSet::new();
    // Each device's clock: devices write in the same seconds.
    let mut clocks = vec![now; devices];
    for round in 1..=rounds {
        // The sync tool's clock, one for each device and moment: a check's
        // changes come before the next round's.
        let i = rng.below(ds.len());
        let clock = ROUND_CLOCKS * round as u64 + i as u64;
        turn(&mut ds[i], &mut rng, &mut clocks[i], clock);
        written(&ds[i], &mut kept);
        if rng.below(3) == 0 {
            let a = rng.below(ds.len());
            let b = (a + 1 + rng.below(ds.len() - 1)) % ds.len();
            let (lo, hi) = (a.min(b), a.max(b));
            // Half the time one of the two runs its engine through the sync.
            let running = (rng.below(2) == 0).then(|| if rng.below(2) == 0 { lo } else { hi });
            let live = running.map(|r| Running::start(&mut ds[r], r, clocks[r], round));
            let (left, right) = ds.split_at_mut(hi);
            copies += sync(&mut left[lo], &mut right[0], tool);
            if let Some(live) = live {
                let r = live.index;
                clocks[r] = live.take_in(&mut ds[r], rng.below(2) == 0);
            }
        }
        if round % 25 == 0 || round == rounds {
            now = clocks.iter().copied().max().unwrap_or(now);
            let at = Check { clock: ROUND_CLOCKS * round as u64 + 8, seed, tool, states: round == rounds };
            check(&mut ds, &kept, &mut now, at);
            clocks.iter_mut().for_each(|c| *c = now);
        }
    }
    copies
}

struct Check {
    /// The sync tool's clock (one more for each device).
    clock: u64,
    seed: u64,
    tool: Tool,
    /// Compare each table as of each version too (the last check).
    states: bool,
}

/// Syncs every device, opens each (so that each reports what reached it), syncs
/// again, and compares.
fn check(ds: &mut [Device], kept: &BTreeSet<String>, now: &mut i64, at: Check) {
    let Check { clock, seed, tool, states } = at;
    sync_all(ds, tool);
    for (i, d) in ds.iter_mut().enumerate() {
        let before = files(&d.disk);
        *now += 1000;
        drop(d.open(*now));
        d.restamp(&before, clock + i as u64);
    }
    sync_all(ds, tool);
    // The reads below open engines, which may write (a checkpoint, a commit that
    // meets the notes): stamped at the end, for the next sync to carry.
    let checked: Vec<BTreeMap<String, String>> = ds.iter().map(|d| files(&d.disk)).collect();
    // Every device holds the same commits, so it reads each table as of each
    // version as the others do.
    // (Checkpoints are derived: git leaves them out, each device makes its own.)
    let logs = |d: &Device| -> BTreeMap<String, String> {
        let commits = d.disk.store.iter().filter(|(p, _)| p.starts_with("log/") && !p.contains(".checkpoint."));
        commits.map(|(p, t)| (p.clone(), t.clone())).collect()
    };
    let log0 = logs(&ds[0]);
    for d in ds.iter() {
        let mine = logs(d);
        assert!(mine == log0, "seed {seed}: the log of {} differs from a's", d.id);
    }
    let want = history(&mut ds[0], *now, false);
    let notes = ds[0].disk.notes.clone();
    // Every change is told once, by the device that made it: a write synced in
    // is its writer's, never a hand edit of the device it reached.
    let hand_edits: usize = ds.iter().map(|d| d.hand_edits).sum();
    let mut e = ds[0].open(*now);
    let feed = ds[0].call(&mut e, "list_changes", json!({"since": 0, "limit": 5000}), *now);
    drop(e);
    let events = feed["events"].as_array().unwrap();
    // (A conflict copy is reported by each device it reaches: `unreadable`, told apart.)
    let external = events.iter().filter(|e| e["source"] == "external" && e["kind"] != "unreadable").count();
    // A note git merged from two versions may hold a text no engine wrote (its
    // markers in the body, a note one side deleted back): a hand edit, which each
    // device it reaches before the next sync may report.
    let by_git = GIT_MERGES.with(|n| n.get()) * ds.len();
    assert!(
        (hand_edits..=hand_edits + by_git).contains(&external),
        "seed {seed}: {external} hand edits reported, {hand_edits} made"
    );
    // A conflict (a sync tool's copy, git's markers in the front matter) is
    // never a row, and is reported: the film notes are the rows and the conflicts.
    let films: BTreeSet<&str> =
        notes.keys().filter(|p| p.starts_with("datanotes/main/public/film/")).map(String::as_str).collect();
    let mut e = ds[0].open(*now);
    let rows = ds[0].call(&mut e, "select_rows", json!({"table": "film", "limit": 10_000}), *now);
    let check = ds[0].call(&mut e, "check_table", json!({"table": "film"}), *now);
    drop(e);
    let rows: BTreeSet<&str> = rows["rows"].as_array().unwrap().iter().map(|r| r["path"].as_str().unwrap()).collect();
    let conflicts: BTreeSet<&str> = check["violations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["violations"][0]["code"] == "conflict")
        .map(|v| v["path"].as_str().unwrap())
        .collect();
    assert!(rows.is_disjoint(&conflicts), "seed {seed}: a conflict is a row");
    assert_eq!(rows.union(&conflicts).copied().collect::<BTreeSet<_>>(), films, "seed {seed}");
    for copy in notes.keys().filter(|p| p.contains(".sync-conflict-")) {
        assert!(conflicts.contains(copy.as_str()), "seed {seed}: {copy} is a conflict");
    }
    for c in &conflicts {
        let told = events.iter().any(|e| e["path"] == *c && e["violations"][0]["violations"][0]["code"] == "conflict");
        assert!(told, "seed {seed}: {c} is reported as a conflict");
    }
    if states {
        // Each table as of each version: the same read through the checkpoints
        // and from the commits alone (a checkpoint only shortens a read), the
        // latest one the notes themselves.
        let full = history(&mut ds[0], *now, true);
        let mut bare = Device::new(&ds[0].id, ds[0].disk.clone(), ds[0].versions.clone());
        bare.disk.store.retain(|p, _| !p.ends_with(".checkpoint.json"));
        assert_eq!(history(&mut bare, *now, true), full, "seed {seed}: a checkpoint differs from its commits");
        latest_is_the_notes(&mut ds[0], *now, seed);
    }
    for d in ds.iter_mut() {
        let mut have = BTreeSet::new();
        written(d, &mut have);
        let lost: Vec<&String> = kept.iter().filter(|p| !have.contains(*p)).collect();
        assert!(lost.is_empty(), "seed {seed}: {} lost {lost:?}", d.id);
        assert_eq!(d.disk.notes, notes, "seed {seed}");
        let got = history(d, *now, false);
        assert_eq!(got, want, "seed {seed}: device {} differs from a", d.id);
    }
    for (i, d) in ds.iter_mut().enumerate() {
        d.restamp(&checked[i], clock + 4 + i as u64);
    }
}

/// The latest version of each table is its notes as they are.
fn latest_is_the_notes(d: &mut Device, now: i64, seed: u64) {
    let mut e = d.open(now);
    for t in ["main.public.film", "main.public.person", "main.public.watch"] {
        let h = d.call(&mut e, "describe_history", json!({"table": t, "limit": 1}), now);
        let v = &h["history"][0]["version"];
        let logged = d.call(&mut e, "select_rows", json!({"table": t, "version": v, "limit": 1000}), now);
        let notes = d.call(&mut e, "select_rows", json!({"table": t, "limit": 1000}), now);
        assert_eq!(logged["rows"], notes["rows"], "seed {seed}: {t} at its latest version {v} is not its notes");
    }
}

#[test]
fn two_devices_that_sync_keep_one_history() {
    for seed in 1..=2 {
        simulate(seed, 2, rounds(), Tool::Newest);
    }
    assert!(simulate(3, 2, rounds(), Tool::Syncthing) > 0, "Syncthing made conflict copies");
    simulate(4, 2, rounds(), Tool::Git);
}

#[test]
fn three_devices_that_sync_keep_one_history() {
    simulate(11, 3, rounds(), Tool::Newest);
    assert!(simulate(12, 3, rounds(), Tool::Syncthing) > 0, "Syncthing made conflict copies");
    simulate(13, 3, rounds(), Tool::Git);
}

/// Two devices with the film diary, opened once on the first and copied.
fn two_devices() -> (Device, Device) {
    let mut a = Device::new("a", Memory::new(film_diary()), Rc::default());
    drop(a.open(T0));
    a.restamp(&BTreeMap::new(), 1);
    let b = a.copy_as("b");
    (a, b)
}

/// Settings two devices change while apart merge field by field: each field
/// the newest change of any device (settings.rs).
#[test]
fn settings_changed_on_two_devices_merge_field_by_field() {
    let (mut a, mut b) = two_devices();
    let configure = |d: &mut Device, args: Value, at: i64, clock: u64| {
        let out = d.run("configure_database", args, at, clock);
        assert_eq!(out["changed"], true, "{out}");
    };
    configure(&mut a, json!({"autoRecompute": false, "journalRetentionDays": 30}), T0 + 1000, 2);
    configure(&mut b, json!({"bases": false, "journalRetentionDays": 60}), T0 + 2000, 3);
    assert!(a.disk.store.contains_key("settings.a.json") && !a.disk.store.contains_key("settings.b.json"));
    sync(&mut a, &mut b, Tool::Newest);
    for d in [&mut a, &mut b] {
        let mut e = d.open(T0 + 3000);
        let s = d.call(&mut e, "configure_database", json!({}), T0 + 3000)["settings"].clone();
        assert_eq!(s["autoRecompute"], false, "{}: a's change", d.id);
        assert_eq!(s["bases"], false, "{}: b's change", d.id);
        assert_eq!(s["journalRetentionDays"], 60, "{}: both changed it, b last", d.id);
        assert_eq!(s["repairLinksOnHandMove"], true, "{}: as it was", d.id);
    }
}

/// Each device's person names it (issue 53): the name rides in the device's
/// own settings file, so every device shows the others' history by their names;
/// the journal says which device wrote each entry. A name a forged file gives
/// that this engine would not take from its person is left out.
#[test]
fn devices_are_shown_by_the_names_their_people_gave_them() {
    let (mut a, mut b) = two_devices();
    let named = a.run("configure_database", json!({"deviceName": "  Linux laptop "}), T0 + 1000, 2);
    assert_eq!(
        (named["changed"].clone(), named["device_name"].clone()),
        (json!(true), json!("Linux laptop")),
        "{named}"
    );
    let file = &a.disk.store["settings.a.json"];
    assert_eq!(serde_json::from_str::<Value>(file).unwrap()["name"], "Linux laptop", "{file}");
    // The same name again changes nothing; the settings are as they were.
    let again = a.run("configure_database", json!({"deviceName": "Linux laptop"}), T0 + 1500, 3);
    assert_eq!(again["changed"], false, "{again}");
    assert_eq!(again["settings"]["journalRetentionDays"], 90);
    b.run("configure_database", json!({"deviceName": "Anna's phone", "bases": false}), T0 + 2000, 4);
    b.run(
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": {"rating": 2}}),
        T0 + 2500,
        5,
    );
    // A file no device wrote, with a name no person could give.
    a.disk.store.insert("settings.c.json".into(), json!({"format": 1, "fields": {}, "name": "two\nlines"}).to_string());
    a.disk
        .store
        .insert("settings.d.json".into(), json!({"format": 1, "fields": {}, "name": "x".repeat(65)}).to_string());
    sync(&mut a, &mut b, Tool::Newest);
    for d in [&mut a, &mut b] {
        let db = d.run("describe_database", json!({}), T0 + 3000, 6);
        assert_eq!(db["devices"], json!({"a": "Linux laptop", "b": "Anna's phone"}), "{}", d.id);
        let listed = d.run("list_migrations", json!({}), T0 + 3000, 7);
        let devices: Vec<&Value> = listed["migrations"].as_array().unwrap().iter().map(|m| &m["device"]).collect();
        assert_eq!(devices, vec![&json!("b")], "{}: the entry names the device that wrote it", d.id);
        // The settings merge as before: the name is no setting.
        let s = d.run("configure_database", json!({}), T0 + 3000, 8);
        assert_eq!(s["settings"]["bases"], false);
    }
    // Renamed later: every device shows the new name once it syncs.
    a.run("configure_database", json!({"deviceName": "Work laptop"}), T0 + 4000, 9);
    sync(&mut a, &mut b, Tool::Newest);
    assert_eq!(b.run("describe_database", json!({}), T0 + 5000, 10)["devices"]["a"], "Work laptop");
}

/// A device's name is one line of plain text, 64 characters at most; an engine
/// with no device id has no device to name.
#[test]
fn a_device_name_that_is_not_a_short_line_of_text_is_refused() {
    let (mut a, _) = two_devices();
    let mut e = a.open(T0 + 1000);
    for (name, want) in [
        (json!("x".repeat(65)), "deviceName is 65 characters long; keep it to 64 or fewer"),
        (json!("Linux\tlaptop"), "deviceName must be one line of plain text"),
        (json!(" "), "deviceName is empty"),
        (json!(7), "argument \"deviceName\" must be a string"),
    ] {
        let out = driver::call(&mut e, &mut a.disk, "configure_database", &json!({"deviceName": name}), "t", T0 + 1000);
        assert_eq!(out.status, Status::BadInput, "{}", out.answer);
        assert!(out.answer["error"].as_str().unwrap().contains(want), "{}", out.answer);
        assert!(out.store.is_empty());
    }
    assert!(!a.disk.store.contains_key("settings.a.json"));
    let ok =
        driver::call(&mut e, &mut a.disk, "configure_database", &json!({"deviceName": "ü".repeat(64)}), "t", T0 + 1000);
    assert_eq!(ok.status, Status::Ok, "{}", ok.answer);
    let mut lone = Engine::open(common::load_films(), vec![]);
    let mut mem = Memory::new(film_diary());
    let out = driver::call(&mut lone, &mut mem, "configure_database", &json!({"deviceName": "Linux laptop"}), "t", T0);
    assert_eq!(out.status, Status::BadInput, "{}", out.answer);
    assert!(out.answer["error"].as_str().unwrap().contains("this engine has no device id"), "{}", out.answer);
}

/// An undo on one device of another device's write (issue 15): done when the
/// notes are as that write left them, refused with the conflicts otherwise; the
/// entry undone is marked on every device.
#[test]
fn a_device_undoes_another_devices_write() {
    let charade = "datanotes/main/public/film/Charade.md";
    let (mut a, mut b) = two_devices();
    let original = a.disk.notes[charade].clone();
    let wrote = a.run("update_row", json!({"table": "film", "path": charade, "set": {"rating": 2}}), T0 + 1000, 2);
    let id = wrote["migration_id"].as_str().unwrap().to_string();
    sync(&mut a, &mut b, Tool::Newest);
    let undone = b.run("undo_migration", json!({"migration_id": id}), T0 + 2000, 3);
    assert_eq!(undone["ok"], true, "{undone}");
    assert_eq!(b.disk.notes[charade], original);
    sync(&mut a, &mut b, Tool::Newest);
    assert_eq!(a.disk.notes[charade], original);
    let listed = a.run("list_migrations", json!({}), T0 + 3000, 4);
    let entry =
        listed["migrations"].as_array().unwrap().iter().find(|m| m["migration_id"] == id.as_str()).cloned().unwrap();
    assert_eq!(entry["undone"], true, "a sees its write undone by b: {entry}");
    // A write of a's that b changed since cannot be undone on a: the conflict is listed.
    let again = a.run("update_row", json!({"table": "film", "path": charade, "set": {"rating": 3}}), T0 + 4000, 5);
    let id2 = again["migration_id"].as_str().unwrap().to_string();
    sync(&mut a, &mut b, Tool::Newest);
    b.run("update_row", json!({"table": "film", "path": charade, "set": {"rating": 4}}), T0 + 5000, 6);
    sync(&mut a, &mut b, Tool::Newest);
    let refused = a.run("undo_migration", json!({"migration_id": id2}), T0 + 6000, 7);
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(refused["error"].as_str().unwrap().contains(charade), "the conflict names the note: {refused}");
    assert!(a.disk.notes[charade].contains("rating: 4"));
}

/// A webhook is delivered by the device it was made on (issue 15): the feed is
/// shared, and each event goes out once.
#[test]
fn a_webhook_is_delivered_by_its_own_device_only() {
    let (mut a, mut b) = two_devices();
    let before = files(&a.disk);
    let mut e = a.open(T0 + 1000);
    e.seed(&[7u8; 32]);
    e.allow_private_webhooks(true);
    let made = a.call(&mut e, "create_webhook", json!({"url": "http://127.0.0.1:9/hook"}), T0 + 1000);
    assert_eq!(made["webhook"]["device"], "a", "{made}");
    a.call(
        &mut e,
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": {"rating": 2}}),
        T0 + 1500,
    );
    drop(e);
    a.restamp(&before, 2);
    sync(&mut a, &mut b, Tool::Newest);
    let deliveries = |d: &mut Device| {
        let mut e = d.open(T0 + 2000);
        e.allow_private_webhooks(true);
        let out = driver::tick(&mut e, &mut d.disk, T0 + 2000);
        out.deliveries.len()
    };
    assert_eq!(deliveries(&mut b), 0, "b has the webhook and the event, and leaves it to a");
    assert_eq!(deliveries(&mut a), 1, "a delivers");
}

/// Hands a running engine what a sync changed on its device's disk since
/// `before`, as a host that watches the vault and `.datanotes/` does: the
/// store files first or the notes first.
fn bring(d: &Device, e: &mut Engine, before: &BTreeMap<String, String>, now: i64, notes_first: bool) {
    let now_files = files(&d.disk);
    let changed: Vec<(&String, Option<&String>)> = now_files
        .iter()
        .filter(|(p, t)| before.get(*p) != Some(*t))
        .map(|(p, t)| (p, Some(t)))
        .chain(before.keys().filter(|p| !now_files.contains_key(*p)).map(|p| (p, None)))
        .collect();
    let store: Vec<(String, Option<String>)> =
        changed.iter().filter_map(|(p, t)| Some((p.strip_prefix("s/")?.to_string(), Some((*t)?.clone())))).collect();
    let notes = |e: &mut Engine| {
        for (p, t) in changed.iter().filter_map(|(p, t)| Some((p.strip_prefix("v/")?, t))) {
            let ev = match t {
                Some(t) if before.contains_key(&format!("v/{p}")) => {
                    datanotes_core::VaultEvent::Modified { path: p.to_string(), text: (*t).clone(), mtime: now }
                }
                Some(t) => datanotes_core::VaultEvent::Created { path: p.to_string(), text: (*t).clone(), mtime: now },
                None => datanotes_core::VaultEvent::Removed { path: p.to_string() },
            };
            e.observe(ev, now);
        }
    };
    if notes_first {
        notes(e);
    }
    let log = e.store_synced(store, now);
    assert!(log.is_empty(), "{log:?}");
    if !notes_first {
        notes(e);
    }
}

/// The events of a running engine's feed after `since`, as (source, actor, op).
fn events_after(d: &mut Device, e: &mut Engine, since: u64, now: i64) -> Vec<(String, String, String)> {
    let out = d.call(e, "list_changes", json!({"since": since, "limit": 1000}), now);
    let list = out["events"].as_array().unwrap().iter();
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    list.map(|ev| (s(&ev["source"]), s(&ev["actor"]), s(&ev["op"]))).collect()
}

/// A running engine takes in what a sync brings from another device (issue
/// 15), in either order of notes and store files: the other device's commit,
/// journal entry and feed event, its note changes as its write and not as a
/// hand edit, and an undo of that write here.
#[test]
fn a_running_engine_takes_in_another_devices_write_as_it_syncs() {
    let charade = "datanotes/main/public/film/Charade.md";
    for notes_first in [true, false] {
        let (mut a, mut b) = two_devices();
        let mut eb = b.open(T0 + 500);
        let head = eb.feed_head();
        let wrote = a.run("update_row", json!({"table": "film", "path": charade, "set": {"rating": 2}}), T0 + 1000, 2);
        let id = wrote["migration_id"].as_str().unwrap().to_string();
        let before = files(&b.disk);
        sync(&mut a, &mut b, Tool::Newest);
        bring(&b, &mut eb, &before, T0 + 1100, notes_first);
        for t in [T0 + 2000, T0 + 8000] {
            let out = driver::tick(&mut eb, &mut b.disk, t);
            assert_eq!(out.status, Status::Ok, "{}", out.answer);
        }
        let events = events_after(&mut b, &mut eb, head, T0 + 8000);
        assert_eq!(
            events,
            vec![("engine".into(), "agent-a".into(), "update_row".into())],
            "notes first: {notes_first}"
        );
        let h = b.call(&mut eb, "describe_history", json!({"table": "film"}), T0 + 8000);
        let newest = &h["history"][0];
        assert_eq!((newest["operation"].as_str(), newest["device"].as_str()), (Some("UPDATE"), Some("a")), "{h}");
        let rows = b.call(&mut eb, "select_rows", json!({"table": "film", "where": {"path": charade}}), T0 + 8000);
        assert_eq!(rows["rows"][0]["rating"], 2, "{rows}");
        let undone = b.call(&mut eb, "undo_migration", json!({"migration_id": id}), T0 + 9000);
        assert_eq!(undone["ok"], true, "{undone}");
        assert!(!b.disk.notes[charade].contains("rating: 2"));
    }
}

/// Two running devices write one note while apart; the newer note wins the
/// sync, the other commit sorts last: once the sync is quiet, the running
/// engine adds the version that makes the log its notes, with no hand edit.
#[test]
fn a_running_engine_meets_a_synced_log_with_its_notes() {
    let charade = "datanotes/main/public/film/Charade.md";
    let (mut a, mut b) = two_devices();
    let mut eb = b.open(T0 + 500);
    let before_b = files(&b.disk);
    b.call(&mut eb, "update_row", json!({"table": "film", "path": charade, "set": {"rating": 3}}), T0 + 1000);
    b.restamp(&before_b, 2);
    a.run("update_row", json!({"table": "film", "path": charade, "set": {"rating": 2}}), T0 + 1500, 3);
    let head = eb.feed_head();
    let before = files(&b.disk);
    sync(&mut a, &mut b, Tool::Newest);
    assert!(b.disk.notes[charade].contains("rating: 2"), "a's note is newer and wins");
    bring(&b, &mut eb, &before, T0 + 2000, false);
    let out = driver::tick(&mut eb, &mut b.disk, T0 + 3000);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    let h = b.call(&mut eb, "describe_history", json!({"table": "film"}), T0 + 3000);
    assert_eq!(h["history"][0]["device"], "b", "b's commit sorts last, the log not met yet: {h}");
    assert_eq!(eb.next_deadline(), Some(T0 + 2000 + 5000), "met once the sync is quiet");
    let out = driver::tick(&mut eb, &mut b.disk, T0 + 7000);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    let h = b.call(&mut eb, "describe_history", json!({"table": "film"}), T0 + 7000);
    let newest = &h["history"][0];
    assert_eq!(newest["operation"], "EXTERNAL_EDIT", "{h}");
    assert_eq!(newest["operation_metrics"]["synced"], true, "{h}");
    let v = newest["version"].clone();
    let rows =
        b.call(&mut eb, "select_rows", json!({"table": "film", "version": v, "where": {"path": charade}}), T0 + 7000);
    assert_eq!(rows["rows"][0]["rating"], 2, "the latest version is the note: {rows}");
    let events = events_after(&mut b, &mut eb, head, T0 + 7000);
    assert_eq!(events, vec![("engine".into(), "agent-a".into(), "update_row".into())], "no hand edit reported");
}

/// Webhooks made on two devices while apart are both kept, each in its
/// device's file; one deleted on the other device stays deleted, and a running
/// engine takes in the other device's file as it syncs.
#[test]
fn webhooks_of_two_devices_merge() {
    let (mut a, mut b) = two_devices();
    let make = |d: &mut Device, at: i64, clock: u64| -> (Engine, String) {
        let before = files(&d.disk);
        let mut e = d.open(at);
        e.seed(&[clock as u8; 32]);
        e.allow_private_webhooks(true);
        let made = d.call(&mut e, "create_webhook", json!({"url": format!("http://127.0.0.1:9/{}", d.id)}), at);
        d.restamp(&before, clock);
        (e, made["webhook"]["id"].as_str().unwrap().to_string())
    };
    let (mut ea, from_a) = make(&mut a, T0 + 1000, 2);
    let (_, from_b) = make(&mut b, T0 + 1500, 3);
    assert!(a.disk.store.contains_key("webhooks.a.json") && !a.disk.store.contains_key("webhooks.json"));
    let before = files(&a.disk);
    sync(&mut a, &mut b, Tool::Newest);
    bring(&a, &mut ea, &before, T0 + 2000, true);
    let ids = |d: &mut Device, e: &mut Engine| -> BTreeSet<String> {
        let listed = d.call(e, "list_webhooks", json!({}), T0 + 2000);
        listed["webhooks"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_string()).collect()
    };
    let both: BTreeSet<String> = [from_a.clone(), from_b.clone()].into();
    assert_eq!(ids(&mut a, &mut ea), both, "the running engine took in b's file");
    let mut eb = b.open(T0 + 2000);
    assert_eq!(ids(&mut b, &mut eb), both, "b opened on both files");
    let before_b = files(&b.disk);
    b.call(&mut eb, "delete_webhook", json!({"id": from_a}), T0 + 3000);
    b.restamp(&before_b, 4);
    let before = files(&a.disk);
    sync(&mut a, &mut b, Tool::Newest);
    bring(&a, &mut ea, &before, T0 + 3500, true);
    assert_eq!(ids(&mut a, &mut ea), [from_b.clone()].into(), "deleted on b, gone on a");
    let mut ea2 = a.open(T0 + 4000);
    assert_eq!(ids(&mut a, &mut ea2), [from_b].into(), "and at a's next open");
}
