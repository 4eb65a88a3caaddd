//! The `datanotes` command: a host for the engine on a vault folder.

mod backend;
mod bench;
mod bench_more;
mod bench_open;
mod bench_proposals;
mod bench_vault;
mod clock;
mod deliver;
mod device;
mod disk;
mod done_in_place;
mod durable;
mod engine;
mod example;
mod fate;
mod files;
mod forward;
mod http;
mod listen;
mod lock;
mod mcp;
mod mcp_names;
mod mcp_prompts;
mod mcp_resources;
mod mcp_session;
mod mcp_stdio;
mod openapi;
mod origin;
mod out;
mod queue;
mod read;
mod reply;
mod review;
mod serve;
mod shared;
mod spare;
mod store;
mod token;
mod watch;

// The engine builds many small values (rows, JSON answers): mimalloc makes those
// allocations markedly cheaper than the system allocator (see `datanotes bench`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use out::{fail, say};
use serde_json::{json, Value};
use std::path::Path;
use std::process::ExitCode;

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
  datanotes token add NAME --vault DIR [--propose | --read-only]
                                                  a named token for serve, printed this once;
                                                  --propose: its writes wait for review as proposals;
                                                  --read-only: it reads, every write is refused
  datanotes token list --vault DIR                the named tokens (names and dates, never the tokens)
  datanotes token revoke NAME --vault DIR         refuse that token from now on
  datanotes --version                             the version (the Obsidian plugin runs only its own)
  datanotes ops                                   the operations and their arguments, as JSON
  datanotes bench [--rows N] [--only PART]        the benchmark; its figures as JSON on stdout
                                                  (PART: sizes, history, hand_edits or reopen)
  datanotes bench --notes FILE                    the engine opening the notes of FILE ([{path, text, mtime}]);
                                                  time and memory as JSON (scripts/bench-wasm.mjs compares)
exit codes: 0 done, 1 refused or failed, 2 bad usage";

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
        if let Err(e) = files::write_atomic(&path, &bytes) {
            eprintln!("datanotes: {} cannot be written: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    let answer = json!({"ok": true, "path": path, "bytes": bytes.len(), "model": model.name, "id": model.id, "already": already});
    say(&answer.to_string());
    ExitCode::SUCCESS
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("datanotes: {msg}\n{USAGE}");
    ExitCode::from(2)
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
        "call" => call_cmd(rest),
        "serve" => serve_cmd(rest),
        "mcp" => match options(rest, &["vault"]) {
            Ok((o, pos)) if pos.is_empty() => match opt(&o, "vault") {
                Some(v) => mcp_stdio::stdio(Path::new(v)),
                None => usage("mcp needs --vault DIR"),
            },
            Ok(_) => usage("mcp takes no positional arguments"),
            Err(e) => usage(&e),
        },
        "token" => {
            // --propose and --read-only are switches (token add): taken out before the options with values.
            let switches = ["--propose", "--read-only"];
            let modes: Vec<&String> = rest.iter().filter(|a| switches.contains(&a.as_str())).collect();
            let mode = match modes.as_slice() {
                [] => None,
                [m] if *m == "--propose" => Some(token::Mode::Propose),
                [_] => Some(token::Mode::ReadOnly),
                _ => return usage("give one of --propose and --read-only"),
            };
            let rest: Vec<String> = rest.iter().filter(|a| !switches.contains(&a.as_str())).cloned().collect();
            match options(&rest, &["vault"]) {
                Ok((o, pos)) => {
                    let Some(v) = opt(&o, "vault") else { return usage("token needs --vault DIR") };
                    token_cmd(Path::new(v), &pos, mode)
                }
                Err(e) => usage(&e),
            }
        }
        "--version" | "version" => {
            say(&format!("datanotes {}", env!("CARGO_PKG_VERSION")));
            ExitCode::SUCCESS
        }
        "ops" => {
            say(&serde_json::to_string_pretty(&datanotes_core::ops::registry::describe()).unwrap_or_default());
            ExitCode::SUCCESS
        }
        "bench" => bench_cmd(rest),
        "-h" | "--help" | "help" => {
            say(USAGE);
            ExitCode::SUCCESS
        }
        other => usage(&format!("unknown command \"{other}\"")),
    }
}

/// `datanotes call --vault DIR OPERATION [JSON]`.
fn call_cmd(rest: &[String]) -> ExitCode {
    let (o, pos) = match options(rest, &["vault", "actor"]) {
        Ok(parsed) => parsed,
        Err(e) => return usage(&e),
    };
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

/// `datanotes serve --vault DIR [--listen ADDR] [flags]`.
fn serve_cmd(rest: &[String]) -> ExitCode {
    let flag = |name: &str| rest.iter().any(|a| a == name);
    let mode = serve::Mode {
        remote: flag("--allow-remote"),
        bridge_only: flag("--bridge"),
        exit_with_stdin: flag("--exit-with-stdin"),
        private_webhooks: engine::private_webhooks(flag("--allow-private-webhooks")),
    };
    let flags = ["--allow-remote", "--allow-private-webhooks", "--bridge", "--exit-with-stdin"];
    let rest: Vec<String> = rest.iter().filter(|a| !flags.contains(&a.as_str())).cloned().collect();
    match options(&rest, &["vault", "listen"]) {
        Ok((o, pos)) if pos.is_empty() => {
            let Some(v) = opt(&o, "vault") else { return usage("serve needs --vault DIR") };
            match serve::resolve(opt(&o, "listen").unwrap_or(serve::DEFAULT_LISTEN), mode.remote) {
                Ok(addr) => serve::run(Path::new(v), addr, mode),
                Err(e) => usage(&e),
            }
        }
        Ok(_) => usage("serve takes no positional arguments"),
        Err(e) => usage(&e),
    }
}

/// `datanotes bench [--rows N] [--only PART]`, or `--notes FILE`.
fn bench_cmd(rest: &[String]) -> ExitCode {
    let o = match options(rest, &["rows", "only", "notes"]) {
        Ok((o, _)) => o,
        Err(e) => return usage(&e),
    };
    if let Some(notes) = opt(&o, "notes") {
        return match bench_open::run(notes) {
            Ok(v) => {
                say(&v.to_string());
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        };
    }
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
    if let Err(e) = std::fs::create_dir_all(vault.join(files::STORE)) {
        return fail(&format!("cannot create the store: {e}"));
    }
    // No engine may open the vault while its first files are written.
    let disk = match lock::try_hold(vault) {
        Ok(Some(h)) => disk::Disk::new(vault, Some(h)),
        Ok(None) => {
            return fail(&format!("{} is held by another datanotes process: nothing was written", vault.display()))
        }
        Err(e) => return fail(&e),
    };
    for (rel, text) in &files {
        if let Err(e) = files::write_atomic(&vault.join(rel), text) {
            return fail(&format!("cannot write {}: {e}", vault.join(rel).display()));
        }
    }
    // The first open records what the vault holds (known.jsonl): an edit made
    // right after init, before any engine ran, is then found at the next open.
    if let Err(e) = engine::open(&disk, engine::private_webhooks(false)) {
        return fail(&e);
    }
    say(&json!({"ok": true, "vault": vault.display().to_string(), "example": example}).to_string());
    ExitCode::SUCCESS
}

fn token_cmd(vault: &Path, pos: &[String], mode: Option<token::Mode>) -> ExitCode {
    if !vault.is_dir() {
        return fail(&format!("{} is not a folder (datanotes init --vault DIR makes one)", vault.display()));
    }
    let r = match pos.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["add", name] => token::add(vault, name, mode.unwrap_or_default()).inspect(|_| {
            let what = match mode {
                Some(token::Mode::Propose) => ": its writes wait for review as proposals",
                Some(token::Mode::ReadOnly) => ": it reads, every write is refused",
                _ => "",
            };
            eprintln!("datanotes: token \"{name}\" added{what}; it is shown this once (only its SHA-256 is kept)");
        }),
        ["list"] if mode.is_none() => token::list(vault).map(|v| serde_json::to_string_pretty(&v).unwrap_or_default()),
        ["revoke", name] if mode.is_none() => {
            token::revoke(vault, name).map(|()| json!({"ok": true, "revoked": name}).to_string())
        }
        _ if mode.is_some() => return usage("--propose and --read-only go with token add NAME"),
        _ => {
            return usage("token add NAME [--propose | --read-only] | token list | token revoke NAME, with --vault DIR")
        }
    };
    match r {
        Ok(text) => {
            say(&text);
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

/// `datanotes call`: forwarded to the serve that holds the vault, if one runs,
/// else on an engine of its own. The same answer and exit code either way.
fn call(vault: &Path, op: &str, args: Value, actor: &str) -> ExitCode {
    let token = forward::owner_token(vault).ok();
    let disk = match lock::reach(vault, token.as_deref(), lock::patience()) {
        Ok(lock::Reach::Own(held)) => disk::Disk::new(vault, Some(held)),
        Ok(lock::Reach::Forward(l)) => return forwarded(vault, &l, op, &args),
        Err(e) => return fail(&e),
    };
    let mut engine = match engine::open(&disk, engine::private_webhooks(false)) {
        Ok(e) => e,
        Err(e) => return fail(&e),
    };
    let out = engine::run(&mut engine, &disk, op, args, actor);
    if engine.owed() > 0 {
        eprintln!("datanotes: WARN this command ends now, so the records it could not write are lost: the next open reports the write as cut short, and undo_migration puts its notes back");
    }
    // The process ends now: freeing the index of a large vault one row at a
    // time would only delay the answer (the engine holds no file open).
    std::mem::forget(engine);
    drop(disk);
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
