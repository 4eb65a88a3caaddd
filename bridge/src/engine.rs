//! The engine on the vault's disk: opened through the notes' cache, with this
//! device's id and key, and one operation run to its end.

use crate::clock::now_ms;
use crate::device;
use crate::disk::Disk;
use crate::files::{self, STORE};
use crate::read::{self, METASTORE};
use datanotes_core::driver;
use datanotes_core::handedit::known::Known;
use datanotes_core::{Engine, Outcome, Status, StoreFile};
use serde_json::{json, Value};
use std::path::Path;

/// Whether webhooks may send to loopback and private addresses (see
/// `datanotes_core::feed::address`): the person's choice, which no operation
/// can make: `serve --allow-private-webhooks` (`flag`), or
/// DATANOTES_ALLOW_PRIVATE_WEBHOOKS=1 for every command.
pub fn private_webhooks(flag: bool) -> bool {
    let env = std::env::var("DATANOTES_ALLOW_PRIVATE_WEBHOOKS").unwrap_or_default();
    flag || matches!(env.trim(), "1" | "true" | "yes")
}

/// Opens the vault's engine through the notes' cache: the notes it vouches for
/// are read when a turn asks for them (a read of rows reads none; a write reads
/// every row first; `serve` reads them in the background: `Shared`). A note
/// outside the tables is read when a turn needs its text (a link in it to
/// rewrite), or when it changes. `private_webhooks`: see `private_webhooks`.
pub fn open(disk: &Disk, private_webhooks: bool) -> Result<Engine, String> {
    open_timed(disk, private_webhooks, &mut Laps::default())
}

/// How long each step of an open took (ms), for `datanotes bench --only cache`.
#[derive(Default)]
pub struct Laps {
    pub laps: Vec<(&'static str, f64)>,
    at: Option<std::time::Instant>,
}

impl Laps {
    fn lap(&mut self, name: &'static str) {
        let now = std::time::Instant::now();
        let took = self.at.map_or(0.0, |t| (now - t).as_secs_f64() * 1e3);
        if self.at.is_some() {
            self.laps.push((name, (took * 10.0).round() / 10.0));
        }
        self.at = Some(now);
    }
}

/// As `open`, timing its steps in `laps`.
pub fn open_timed(disk: &Disk, private_webhooks: bool, laps: &mut Laps) -> Result<Engine, String> {
    laps.lap("");
    let vault = disk.vault();
    if !vault.is_dir() {
        return Err(format!("{} is not a folder (datanotes init --vault DIR makes one)", vault.display()));
    }
    files::store_not_a_link(vault)?;
    let device = device::id();
    let (mut engine, known) = open_cached(vault, device.as_ref().ok().map(String::as_str), laps)?;
    for w in engine.warnings() {
        eprintln!("datanotes: warning: {w}");
    }
    engine.allow_private_webhooks(private_webhooks);
    match device.and_then(|id| engine.set_device_with(&id, known).map(|()| id)) {
        Ok(id) => {
            if let Err(e) = device::key(&id).and_then(|k| engine.set_device_key(&k)) {
                eprintln!("datanotes: warning: {e}: this device's store files are trusted by their names alone");
            }
        }
        Err(e) => eprintln!("datanotes: warning: {e}: the store's files are named as for one device only"),
    }
    // Randomness for webhook secrets: the engine has no source of its own.
    let mut entropy = [0u8; 32];
    match getrandom::fill(&mut entropy) {
        Ok(()) => engine.seed(&entropy),
        Err(e) => eprintln!("datanotes: warning: the system gave no random bytes ({e}): webhooks cannot be created"),
    }
    let mut turn = disk.turn();
    // What changed while no engine ran (an editor, git, a sync tool) is reported
    // in the change feed before the first call.
    let out = driver::start(&mut engine, &mut turn, now_ms());
    for line in &out.log {
        eprintln!("datanotes: {line}");
    }
    if out.status != Status::Ok {
        let text = out.answer.get("error").and_then(Value::as_str).map(str::to_string);
        eprintln!("datanotes: warning: {}", text.unwrap_or_else(|| out.answer.to_string()));
    }
    laps.lap("start");
    Ok(engine)
}

/// The notes' cache read and checked, its lines parsed in two halves at once,
/// and its notes indexed (`Prebuilt`); why not, when it cannot be used.
fn prebuilt(vault: &Path, device: Option<&str>) -> Result<datanotes_core::notecache::Prebuilt, String> {
    use datanotes_core::notecache::{self, Prebuilt};
    let file = std::fs::File::open(vault.join(STORE).join(notecache::path(device))).ok();
    // SAFETY: the bytes mapped must not change while they are read. Only an
    // engine writes the file, and this one holds the vault's lock; a cache is
    // written to a new file renamed over it, or appended past what is mapped.
    // Everything is parsed out of the map before the function returns.
    let map = file.and_then(|f| unsafe { memmap2::MmapOptions::new().populate().map(&f) }.ok());
    let text = map.as_deref().and_then(|bytes| std::str::from_utf8(bytes).ok());
    let metastore = std::fs::read_to_string(vault.join(METASTORE)).ok();
    let c = Engine::check_cache(text, metastore.as_deref())?;
    let [a, b] = c.halves();
    let runs = std::thread::scope(|s| {
        let first = s.spawn(|| notecache::parse(a));
        let second = notecache::parse(b);
        first.join().map(|first| vec![first, second])
    });
    let runs = runs.map_err(|_| "the notes' cache could not be read".to_string())?;
    Ok(Prebuilt::new(c.join(runs)))
}

/// The engine opened through the notes' cache (core/src/notecache.rs): the
/// vault listed with each file's size and mtime, and only the notes the cache
/// does not vouch for read. The rest are read when a turn needs their texts.
/// With it, what this device last knew (`Engine::set_device_with`).
fn open_cached(vault: &Path, device: Option<&str>, laps: &mut Laps) -> Result<(Engine, Option<Known>), String> {
    // Three pieces of work that need nothing of each other, at once (at 100k
    // notes: the listing about 200 ms of stats, most of it the kernel's; the
    // cache about 150 ms; what this device last knew about 40 ms).
    let (listing, cache, known) = std::thread::scope(|s| {
        let listing = s.spawn(|| read::list_vault(vault));
        let known = s.spawn(|| {
            let path = datanotes_core::handedit::known::path(Some(device?));
            let text = std::fs::read_to_string(vault.join(STORE).join(&path)).ok()?;
            Some(Known::read(path, &text))
        });
        let cache = prebuilt(vault, device);
        let listing = listing.join().unwrap_or_else(|_| Err("the vault could not be listed".into()));
        (listing, cache, known.join().ok().flatten())
    });
    let (stats, mut warnings) = listing?;
    laps.lap("list_and_cache");
    // The listing judged against the cache in two halves at once.
    let cache = cache.map(|pre| {
        let (judge, (a, b)) = (pre.judge(), stats.split_at(stats.len() / 2));
        let verdicts = std::thread::scope(|s| {
            let first = s.spawn(|| judge.verdicts(a));
            let second = judge.verdicts(b);
            first.join().map(|mut v| {
                v.extend(second);
                v
            })
        });
        match verdicts {
            Ok(v) => pre.judged(v),
            Err(_) => pre,
        }
    });
    let plan = Engine::plan_read(stats, cache);
    laps.lap("plan");
    if plan.wanted.len() >= 10_000 {
        eprintln!(
            "datanotes: reading {} notes ({})…",
            plan.wanted.len(),
            plan.why.as_deref().unwrap_or("changed since the last open")
        );
    }
    let (files, w) = read::read_notes(vault, &plan.wanted);
    warnings.extend(w);
    for w in warnings {
        eprintln!("datanotes: warning: {w}");
    }
    laps.lap("read_changed");
    let store = read::read_store(vault).into_iter().map(StoreFile::from).collect();
    laps.lap("read_store");
    let engine = Engine::open_cached(plan, files, store, now_ms());
    laps.lap("index");
    Ok((engine, known))
}

/// Runs one operation to its end on the vault's disk (see `driver::call`).
pub fn run(engine: &mut Engine, disk: &Disk, op: &str, args: Value, actor: &str) -> Outcome {
    let start = std::time::Instant::now();
    let mut out = driver::call(engine, &mut disk.turn(), op, &args, actor, now_ms());
    // The engine has no clock: the host says how long the index took.
    let facts = datanotes_core::ops::registry::spec(op).map(|s| s.facts);
    if facts.is_some_and(|f| f.timed_by_host) && out.status == Status::Ok {
        out.answer["duration_ms"] = json!(start.elapsed().as_millis() as u64);
    }
    // Spare files hold old texts of notes: history dropped goes from them too.
    if facts.is_some_and(|f| f.drops_history) && out.status == Status::Ok && out.answer["dry_run"] == false {
        disk.forget_spares();
    }
    out
}
