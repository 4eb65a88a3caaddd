//! The `datanotes` command: a host for the engine on a vault folder.

mod backend;
mod bench;
mod bench_more;
mod bench_open;
mod bench_vault;
mod deliver;
mod device;
mod disk;
mod done_in_place;
mod durable;
mod example;
mod fate;
mod forward;
mod http;
mod listen;
mod lock;
mod mcp;
mod mcp_stdio;
mod openapi;
mod origin;
mod queue;
mod reply;
mod serve;
mod shared;
mod spare;
mod token;
mod watch;

// The engine builds many small values (rows, JSON answers): mimalloc makes those
// allocations markedly cheaper than the system allocator (see `datanotes bench`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use datanotes_core::driver;
use datanotes_core::handedit::known::Known;
use datanotes_core::{Engine, Outcome, Status, StoreFile};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

const USAGE: &str = "usage:
  datanotes init  --vault DIR [--example films]   an empty database, or the film diary of the docs
  datanotes call  --vault DIR OPERATION [JSON]    one operation; its answer as JSON on stdout (JSON - reads it from stdin)
  datanotes serve --vault DIR [--listen ADDR] [--allow-remote] [--allow-private-webhooks] [--bridge] [--exit-with-stdin]
                                                  HTTP API and MCP over HTTP at /mcp (127.0.0.1:8765;
                                                  token from DATANOTES_TOKEN or DIR/.datanotes/token;
                                                  webhooks to loopback and private addresses only with
                                                  --allow-private-webhooks or DATANOTES_ALLOW_PRIVATE_WEBHOOKS=1;
                                                  --bridge: only forward to the engine holding DIR, never open it;
                                                  --exit-with-stdin: stop when stdin closes, as a child process)
  datanotes mcp   --vault DIR                     MCP over stdio; alone, it holds DIR as serve does,
                                                  on a loopback port of its own
                                                  (call and mcp forward to the engine holding DIR)
  datanotes install-model --vault DIR             the model to search by meaning with (8 MB), copied once
                                                  into DIR/.datanotes/models/ for the Obsidian plugin
  datanotes token add NAME --vault DIR            a named token for serve, printed this once
  datanotes token list --vault DIR                the named tokens (names and dates, never the tokens)
  datanotes token revoke NAME --vault DIR         refuse that token from now on
  datanotes --version                             the version (the Obsidian plugin runs only its own)
  datanotes ops                                   the operations and their arguments, as JSON
  datanotes bench [--rows N] [--only PART]        the benchmark; its figures as JSON on stdout
                                                  (PART: sizes, history, hand_edits or reopen)
  datanotes bench --notes FILE                    the engine opening the notes of FILE ([{path, text, mtime}]);
                                                  time and memory as JSON (scripts/bench-wasm.mjs compares)
exit codes: 0 done, 1 refused or failed, 2 bad usage";

/// Prints to stdout; a closed pipe (`| head`) is not an error worth a panic.
/// Copies the vendored model into the vault's store, where the plugin's
/// engine (which carries none, to keep main.js small) reads it, and a sync
/// tool carries it to the vault's other devices.
fn install_model(vault: &Path) -> ExitCode {
    use datanotes_core::semantic::{Model, MODEL_FILE};
    if !vault.join(".datanotes").is_dir() && !vault.join("datanotes/metastore.yaml").is_file() {
        eprintln!("datanotes: {} holds no Datanotes database: run `datanotes init --vault DIR` first", vault.display());
        return ExitCode::from(1);
    }
    let bytes = Model::builtin_file();
    let model = Model::builtin();
    let path = vault.join(".datanotes").join(MODEL_FILE);
    let already = std::fs::read(&path).is_ok_and(|b| b == bytes);
    if !already {
        if let Err(e) = disk::write_whole(&path, &bytes, false) {
            eprintln!("datanotes: {} cannot be written: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    let answer = json!({"ok": true, "path": path, "bytes": bytes.len(), "model": model.name, "id": model.id, "already": already});
    say(&answer.to_string());
    ExitCode::SUCCESS
}

fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

/// A line on stderr in one write: `eprintln!` writes each piece of its format
/// on its own (stderr is unbuffered), a dozen system calls for serve's line per
/// request, each waking whatever reads the pipe.
pub fn log_line(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("datanotes: {text}\n").as_bytes());
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("datanotes: {msg}\n{USAGE}");
    ExitCode::from(2)
}

/// `serve --allow-private-webhooks`; DATANOTES_ALLOW_PRIVATE_WEBHOOKS=1 does the same for every command.
static ALLOW_PRIVATE_WEBHOOKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether webhooks may send to loopback and private addresses (see
/// `datanotes_core::feed::address`): the person's choice, which no operation can make.
pub fn allow_private_webhooks() -> bool {
    let env = std::env::var("DATANOTES_ALLOW_PRIVATE_WEBHOOKS").unwrap_or_default();
    ALLOW_PRIVATE_WEBHOOKS.load(std::sync::atomic::Ordering::Relaxed) || matches!(env.trim(), "1" | "true" | "yes")
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

/// `--flag value` pairs.
type Opts = Vec<(String, String)>;

/// Splits `--flag value` options from the positional arguments.
fn options(args: &[String], flags: &[&str]) -> Result<(Opts, Vec<String>), String> {
    let (mut opts, mut rest) = (vec![], vec![]);
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if let Some(name) = a.strip_prefix("--") {
            let (name, value) = match name.split_once('=') {
                Some((n, v)) => (n.to_string(), v.to_string()),
                None => {
                    i += 1;
                    (name.to_string(), args.get(i).cloned().ok_or_else(|| format!("--{name} needs a value"))?)
                }
            };
            if !flags.contains(&name.as_str()) {
                return Err(format!("unknown option --{name}"));
            }
            opts.push((name, value));
        } else {
            rest.push(a.clone());
        }
        i += 1;
    }
    Ok((opts, rest))
}

fn opt<'a>(opts: &'a [(String, String)], name: &str) -> Option<&'a str> {
    opts.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// No transparent huge pages for this process: mimalloc asks for them, and then
/// every fresh 2 MiB the engine touches is zeroed whole at its first fault. Without
/// them `datanotes bench` reads a whole 10k-row version 2-3 times faster and opens
/// 100k notes about 1.5 times faster (on a Linux with THP set to madvise).
fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_THP_DISABLE only sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

fn main() -> ExitCode {
    no_huge_pages();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else { return usage("no command") };
    let rest = &args[1..];
    match cmd.as_str() {
        "init" => match options(rest, &["vault", "example"]) {
            Ok((o, pos)) if pos.is_empty() => match opt(&o, "vault") {
                Some(v) => init(Path::new(v), opt(&o, "example")),
                None => usage("init needs --vault DIR"),
            },
            Ok(_) => usage("init takes no positional arguments"),
            Err(e) => usage(&e),
        },
        "install-model" => match options(rest, &["vault"]) {
            Ok((o, pos)) if pos.is_empty() => match opt(&o, "vault") {
                Some(v) => install_model(Path::new(v)),
                None => usage("install-model needs --vault DIR"),
            },
            Ok(_) => usage("install-model takes no positional arguments"),
            Err(e) => usage(&e),
        },
        "call" => match options(rest, &["vault", "actor"]) {
            Ok((o, pos)) => {
                let Some(v) = opt(&o, "vault") else { return usage("call needs --vault DIR") };
                let Some(op) = pos.first() else { return usage("call needs an OPERATION") };
                if pos.len() > 2 {
                    return usage("call takes one OPERATION and one JSON argument (quote it)");
                }
                let args = match pos.get(1).map(String::as_str) {
                    None => Value::Object(Default::default()),
                    // Arguments over the system's limit for one (128 KiB on Linux) come on stdin.
                    Some("-") => match serde_json::from_reader(std::io::stdin().lock()) {
                        Ok(v) => v,
                        Err(e) => return usage(&format!("the arguments on stdin are not JSON: {e}")),
                    },
                    Some(s) => match serde_json::from_str(s) {
                        Ok(v) => v,
                        Err(e) => return usage(&format!("the arguments are not JSON: {e}")),
                    },
                };
                call(Path::new(v), op, args, opt(&o, "actor").unwrap_or("cli"))
            }
            Err(e) => usage(&e),
        },
        "serve" => {
            let remote = rest.iter().any(|a| a == "--allow-remote");
            if rest.iter().any(|a| a == "--allow-private-webhooks") {
                ALLOW_PRIVATE_WEBHOOKS.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            let mode = serve::Mode {
                remote,
                bridge_only: rest.iter().any(|a| a == "--bridge"),
                exit_with_stdin: rest.iter().any(|a| a == "--exit-with-stdin"),
            };
            let flags = ["--allow-remote", "--allow-private-webhooks", "--bridge", "--exit-with-stdin"];
            let rest: Vec<String> = rest.iter().filter(|a| !flags.contains(&a.as_str())).cloned().collect();
            match options(&rest, &["vault", "listen"]) {
                Ok((o, pos)) if pos.is_empty() => match opt(&o, "vault") {
                    Some(v) => serve::run(Path::new(v), opt(&o, "listen").unwrap_or(serve::DEFAULT_LISTEN), mode),
                    None => usage("serve needs --vault DIR"),
                },
                Ok(_) => usage("serve takes no positional arguments"),
                Err(e) => usage(&e),
            }
        }
        "mcp" => match options(rest, &["vault"]) {
            Ok((o, pos)) if pos.is_empty() => match opt(&o, "vault") {
                Some(v) => mcp_stdio::stdio(Path::new(v)),
                None => usage("mcp needs --vault DIR"),
            },
            Ok(_) => usage("mcp takes no positional arguments"),
            Err(e) => usage(&e),
        },
        "token" => match options(rest, &["vault"]) {
            Ok((o, pos)) => {
                let Some(v) = opt(&o, "vault") else { return usage("token needs --vault DIR") };
                token_cmd(Path::new(v), &pos)
            }
            Err(e) => usage(&e),
        },
        "--version" | "version" => {
            say(&format!("datanotes {}", env!("CARGO_PKG_VERSION")));
            ExitCode::SUCCESS
        }
        "ops" => {
            say(&serde_json::to_string_pretty(&datanotes_core::ops::registry::describe()).unwrap_or_default());
            ExitCode::SUCCESS
        }
        "bench" => match options(rest, &["rows", "only", "notes"]) {
            Ok((o, _)) if opt(&o, "notes").is_some() => match bench_open::run(opt(&o, "notes").unwrap_or_default()) {
                Ok(v) => {
                    say(&v.to_string());
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            },
            Ok((o, _)) => {
                let rows: Vec<usize> = match opt(&o, "rows") {
                    Some(n) => match n.parse() {
                        Ok(n) if n > 0 => vec![n],
                        _ => return usage("--rows takes a positive whole number"),
                    },
                    None => vec![1_000, 10_000, 100_000],
                };
                let only = opt(&o, "only");
                if let Some(p) = only.filter(|p| !bench::PARTS.contains(p)) {
                    return usage(&format!("--only takes one of {}, not {p}", bench::PARTS.join(", ")));
                }
                say(&serde_json::to_string_pretty(&bench::run(&rows, only)).unwrap_or_default());
                ExitCode::SUCCESS
            }
            Err(e) => usage(&e),
        },
        "-h" | "--help" | "help" => {
            say(USAGE);
            ExitCode::SUCCESS
        }
        other => usage(&format!("unknown command \"{other}\"")),
    }
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("datanotes: {msg}");
    ExitCode::from(1)
}

fn init(vault: &Path, example: Option<&str>) -> ExitCode {
    let mut files: Vec<(String, String)> = match example {
        None => vec![("datanotes/metastore.yaml".into(), "version: 1\ntables: {}\n".into())],
        Some("films") => example::FILMS.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect(),
        Some(other) => return usage(&format!("unknown example \"{other}\" (the examples: films)")),
    };
    // The example's tables and views come with their Obsidian Bases files, as the engine keeps them.
    if let Some((_, text)) = files.iter().find(|(p, _)| p == "datanotes/metastore.yaml") {
        if let Ok(schema) = datanotes_core::schema::Schema::parse(text) {
            files.extend(datanotes_core::bases::files(&schema));
        }
    }
    if vault.join("datanotes/metastore.yaml").exists() {
        return fail(&format!(
            "{} holds a database already (datanotes/metastore.yaml): nothing was written",
            vault.display()
        ));
    }
    for (rel, _) in &files {
        if vault.join(rel).exists() {
            return fail(&format!("{} exists already: nothing was written", vault.join(rel).display()));
        }
    }
    if let Err(e) = std::fs::create_dir_all(vault.join(disk::STORE)) {
        return fail(&format!("cannot create the store: {e}"));
    }
    // No engine may open the vault while its first files are written.
    let _held = match lock::try_hold(vault) {
        Ok(Some(h)) => h,
        Ok(None) => {
            return fail(&format!("{} is held by another datanotes process: nothing was written", vault.display()))
        }
        Err(e) => return fail(&e),
    };
    for (rel, text) in &files {
        if let Err(e) = disk::write_atomic(&vault.join(rel), text) {
            return fail(&format!("cannot write {}: {e}", vault.join(rel).display()));
        }
    }
    // The first open records what the vault holds (known.jsonl): an edit made
    // right after init, before any engine ran, is then found at the next open.
    if let Err(e) = open(vault) {
        return fail(&e);
    }
    say(&json!({"ok": true, "vault": vault.display().to_string(), "example": example}).to_string());
    ExitCode::SUCCESS
}

fn token_cmd(vault: &Path, pos: &[String]) -> ExitCode {
    if !vault.is_dir() {
        return fail(&format!("{} is not a folder (datanotes init --vault DIR makes one)", vault.display()));
    }
    let r = match pos.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["add", name] => token::add(vault, name).inspect(|_| {
            eprintln!("datanotes: token \"{name}\" added; it is shown this once (only its SHA-256 is kept)");
        }),
        ["list"] => token::list(vault).map(|v| serde_json::to_string_pretty(&v).unwrap_or_default()),
        ["revoke", name] => token::revoke(vault, name).map(|()| json!({"ok": true, "revoked": name}).to_string()),
        _ => return usage("token add NAME | token list | token revoke NAME, with --vault DIR"),
    };
    match r {
        Ok(text) => {
            say(&text);
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// Opens the vault's engine through the notes' cache: the notes it vouches for
/// are read when a turn asks for them (a read of rows reads none; a write reads
/// every row first; `serve` reads them in the background: `Shared`). A note
/// outside the tables is read when a turn needs its text (a link in it to
/// rewrite), or when it changes.
pub fn open(vault: &Path) -> Result<Engine, String> {
    open_timed(vault, &mut Laps::default())
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
pub fn open_timed(vault: &Path, laps: &mut Laps) -> Result<Engine, String> {
    laps.lap("");
    if !vault.is_dir() {
        return Err(format!("{} is not a folder (datanotes init --vault DIR makes one)", vault.display()));
    }
    disk::store_not_a_link(vault)?;
    let device = device::id();
    let (mut engine, known) = open_cached(vault, device.as_ref().ok().map(String::as_str), laps)?;
    for w in engine.warnings() {
        eprintln!("datanotes: warning: {w}");
    }
    engine.allow_private_webhooks(allow_private_webhooks());
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
    let mut disk = disk::Disk::new(vault);
    // What changed while no engine ran (an editor, git, a sync tool) is reported
    // in the change feed before the first call.
    let out = driver::start(&mut engine, &mut disk, now_ms());
    for line in &out.log {
        eprintln!("datanotes: {line}");
    }
    if out.status != Status::Done {
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
    let file = std::fs::File::open(vault.join(disk::STORE).join(notecache::path(device))).ok();
    // SAFETY: the bytes mapped must not change while they are read. Only an
    // engine writes the file, and this one holds the vault's lock; a cache is
    // written to a new file renamed over it, or appended past what is mapped.
    // Everything is parsed out of the map before the function returns.
    let map = file.and_then(|f| unsafe { memmap2::MmapOptions::new().populate().map(&f) }.ok());
    let text = map.as_deref().and_then(|bytes| std::str::from_utf8(bytes).ok());
    let metastore = std::fs::read_to_string(vault.join(disk::METASTORE)).ok();
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
        let listing = s.spawn(|| disk::list_vault(vault));
        let known = s.spawn(|| {
            let path = datanotes_core::handedit::known::path(Some(device?));
            let text = std::fs::read_to_string(vault.join(disk::STORE).join(&path)).ok()?;
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
    let (files, w) = disk::read_notes(vault, &plan.wanted);
    warnings.extend(w);
    for w in warnings {
        eprintln!("datanotes: warning: {w}");
    }
    laps.lap("read_changed");
    let store = disk::read_store(vault).into_iter().map(StoreFile::from).collect();
    laps.lap("read_store");
    let engine = Engine::open_cached(plan, files, store, now_ms());
    laps.lap("index");
    Ok((engine, known))
}

/// Runs one operation to its end on the vault's disk (see `driver::call`).
pub fn run(engine: &mut Engine, vault: &Path, op: &str, args: Value, actor: &str) -> Outcome {
    let start = std::time::Instant::now();
    let mut out = driver::call(engine, &mut disk::Disk::new(vault), op, &args, actor, now_ms());
    // The engine has no clock: the host says how long the index took.
    let facts = datanotes_core::ops::registry::spec(op).map(|s| s.facts);
    if facts.is_some_and(|f| f.timed_by_host) && out.status == Status::Done {
        out.answer["duration_ms"] = json!(start.elapsed().as_millis() as u64);
    }
    // Spare files hold old texts of notes: history dropped goes from them too.
    if facts.is_some_and(|f| f.drops_history) && out.status == Status::Done && out.answer["dry_run"] == false {
        spare::forget(&vault.join(disk::STORE));
    }
    out
}

/// `datanotes call`: forwarded to the serve that holds the vault, if one runs,
/// else on an engine of its own. The same answer and exit code either way.
fn call(vault: &Path, op: &str, args: Value, actor: &str) -> ExitCode {
    let token = forward::owner_token(vault).ok();
    let held = match lock::reach(vault, token.as_deref(), lock::patience()) {
        Ok(lock::Reach::Own(held)) => held,
        Ok(lock::Reach::Forward(l)) => return forwarded(vault, &l, op, &args),
        Err(e) => return fail(&e),
    };
    let vault: PathBuf = vault.to_path_buf();
    let mut engine = match open(&vault) {
        Ok(e) => e,
        Err(e) => return fail(&e),
    };
    let out = run(&mut engine, &vault, op, args, actor);
    if engine.owed() > 0 {
        eprintln!("datanotes: WARN this command ends now, so the records it could not write are lost: the next open reports the write as cut short, and undo_migration puts its notes back");
    }
    // The process ends now: freeing the index of a large vault one row at a
    // time would only delay the answer (the engine holds no file open).
    std::mem::forget(engine);
    drop(held);
    say(&serde_json::to_string_pretty(&out.answer).unwrap_or_default());
    ExitCode::from(out.status.exit_code() as u8)
}

/// `call` sent to the engine that holds the vault (its lock proved itself).
fn forwarded(vault: &Path, held: &lock::Lock, op: &str, args: &Value) -> ExitCode {
    let remote = match forward::Remote::new(held, vault) {
        Ok(r) => r,
        Err(e) => return fail(&e),
    };
    match remote.call(op, args, None) {
        Ok((code, answer)) => {
            if code == 401 {
                eprintln!(
                    "datanotes: the engine serving the vault ({}) refused the token: set {} to the token it serves with",
                    remote.who,
                    token::ENV
                );
            }
            say(&serde_json::to_string_pretty(&answer).unwrap_or_default());
            ExitCode::from(forward::outcome(code, answer).status.exit_code() as u8)
        }
        Err(e) => fail(&e),
    }
}
