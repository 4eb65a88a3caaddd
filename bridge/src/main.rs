//! The `datanotes` command: a host for the engine on a vault folder.

mod bench;
mod disk;
mod example;
mod http;
mod mcp;
mod openapi;
mod serve;
mod shared;
mod token;

use datanotes_core::error::Failure;
use datanotes_core::{Engine, Outcome, Status, StoreFile};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

const USAGE: &str = "usage:
  datanotes init  --vault DIR [--example films]   an empty database, or the film diary of the docs
  datanotes call  --vault DIR OPERATION [JSON]    one operation; its answer as JSON on stdout
  datanotes serve --vault DIR [--listen ADDR] [--allow-remote]
                                                  HTTP API and MCP over HTTP at /mcp (127.0.0.1:8765;
                                                  token from DATANOTES_TOKEN or DIR/.datanotes/token)
  datanotes mcp   --vault DIR                     MCP over stdio
  datanotes ops                                   the operations and their arguments, as JSON
  datanotes bench [--rows N]                      the benchmark; its figures as JSON on stdout
exit codes: 0 done, 1 refused or failed, 2 bad usage";

/// Prints to stdout; a closed pipe (`| head`) is not an error worth a panic.
fn say(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("datanotes: {msg}\n{USAGE}");
    ExitCode::from(2)
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

fn main() -> ExitCode {
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
        "call" => match options(rest, &["vault", "actor"]) {
            Ok((o, pos)) => {
                let Some(v) = opt(&o, "vault") else { return usage("call needs --vault DIR") };
                let Some(op) = pos.first() else { return usage("call needs an OPERATION") };
                if pos.len() > 2 {
                    return usage("call takes one OPERATION and one JSON argument (quote it)");
                }
                let args = match pos.get(1) {
                    None => Value::Object(Default::default()),
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
            let rest: Vec<String> = rest.iter().filter(|a| *a != "--allow-remote").cloned().collect();
            match options(&rest, &["vault", "listen"]) {
                Ok((o, pos)) if pos.is_empty() => match opt(&o, "vault") {
                    Some(v) => serve::run(Path::new(v), opt(&o, "listen").unwrap_or(serve::DEFAULT_LISTEN), remote),
                    None => usage("serve needs --vault DIR"),
                },
                Ok(_) => usage("serve takes no positional arguments"),
                Err(e) => usage(&e),
            }
        }
        "mcp" => match options(rest, &["vault"]) {
            Ok((o, pos)) if pos.is_empty() => match opt(&o, "vault") {
                Some(v) => mcp::stdio(Path::new(v)),
                None => usage("mcp needs --vault DIR"),
            },
            Ok(_) => usage("mcp takes no positional arguments"),
            Err(e) => usage(&e),
        },
        "ops" => {
            say(&serde_json::to_string_pretty(&datanotes_core::ops::registry::describe()).unwrap_or_default());
            ExitCode::SUCCESS
        }
        "bench" => match options(rest, &["rows"]) {
            Ok((o, _)) => {
                let rows: Vec<usize> = match opt(&o, "rows") {
                    Some(n) => match n.parse() {
                        Ok(n) if n > 0 => vec![n],
                        _ => return usage("--rows takes a positive whole number"),
                    },
                    None => vec![1_000, 10_000, 100_000],
                };
                say(&serde_json::to_string_pretty(&bench::run(&rows)).unwrap_or_default());
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
    let files: Vec<(&str, &str)> = match example {
        None => vec![("datanotes/metastore.yaml", "version: 1\ntables: {}\n")],
        Some("films") => example::FILMS.to_vec(),
        Some(other) => return usage(&format!("unknown example \"{other}\" (the examples: films)")),
    };
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
    for (rel, text) in files {
        if let Err(e) = disk::write_atomic(&vault.join(rel), text) {
            return fail(&format!("cannot write {}: {e}", vault.join(rel).display()));
        }
    }
    if let Err(e) = std::fs::create_dir_all(vault.join(disk::STORE)) {
        return fail(&format!("cannot create the store: {e}"));
    }
    say(&json!({"ok": true, "vault": vault.display().to_string(), "example": example}).to_string());
    ExitCode::SUCCESS
}

pub fn open(vault: &Path) -> Result<Engine, String> {
    if !vault.is_dir() {
        return Err(format!("{} is not a folder (datanotes init --vault DIR makes one)", vault.display()));
    }
    let (files, warnings) = disk::read_vault(vault)?;
    for w in warnings {
        eprintln!("datanotes: warning: {w}");
    }
    let mut engine =
        Engine::open_listed(files, disk::read_store(vault).into_iter().map(StoreFile::from).collect(), now_ms());
    for w in engine.warnings() {
        eprintln!("datanotes: warning: {w}");
    }
    disk::write_store(vault, &engine.take_upkeep())?;
    Ok(engine)
}

/// Runs one operation to its end: applies the edits (and a rollback, when one
/// fails) and writes the store.
pub fn run(engine: &mut Engine, vault: &Path, op: &str, args: Value, actor: &str) -> Outcome {
    let mut out = engine.call(op, args.clone(), actor, now_ms());
    // A read of history asks for the store files it needs, a few rounds at most.
    for _ in 0..8 {
        if out.status != Status::Need {
            break;
        }
        engine.provide(disk::read_store_files(vault, &out.need));
        out = engine.call(op, args.clone(), actor, now_ms());
    }
    let mut answer = None;
    while out.status == Status::Apply {
        if answer.is_none() {
            answer = Some(out.answer.clone());
        }
        // The journal learns of the write before any note changes.
        if let Err(e) = disk::write_store(vault, &out.store) {
            let f = Failure::refused(
                op,
                vec![format!("the journal cannot be written: {e}")],
                "Free the vault's .datanotes folder (permissions, disk space), then send the operation again.",
            );
            let results: Vec<Result<(), String>> =
                out.edits.iter().map(|_| Err("not tried: the journal could not be written".to_string())).collect();
            let _ = engine.finish(&results);
            return Outcome::failed(&f);
        }
        let mut results = vec![];
        for e in &out.edits {
            let r = if results.iter().any(|r: &Result<(), String>| r.is_err()) {
                Err("not tried: an earlier edit failed".to_string())
            } else {
                disk::apply(vault, e)
            };
            results.push(r);
        }
        out = engine.finish(&results);
    }
    if let Err(e) = disk::write_store(vault, &out.store) {
        eprintln!("datanotes: warning: {e}");
    }
    out
}

fn call(vault: &Path, op: &str, args: Value, actor: &str) -> ExitCode {
    let vault: PathBuf = vault.to_path_buf();
    let mut engine = match open(&vault) {
        Ok(e) => e,
        Err(e) => return fail(&e),
    };
    let out = run(&mut engine, &vault, op, args, actor);
    say(&serde_json::to_string_pretty(&out.answer).unwrap_or_default());
    ExitCode::from(out.status.exit_code() as u8)
}
