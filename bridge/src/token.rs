//! Bearer tokens. The owner's: from `DATANOTES_TOKEN`, or else read from (or
//! created in) the vault's `.datanotes/token`, readable by the owner alone. Named
//! tokens (`datanotes token add|list|revoke`): kept in `.datanotes/tokens.json` as
//! SHA-256 hashes, never in clear; a write made with one is journaled with its
//! name as the actor. Every comparison takes the same time wherever the first
//! difference is.

use crate::files::{Stamp, STORE};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub const ENV: &str = "DATANOTES_TOKEN";
pub const FILE: &str = "token";
pub const NAMED: &str = "tokens.json";
/// The credential of the owner's token (named tokens cannot take this name).
pub const OWNER: &str = "owner";

/// The owner's token and where it comes from, for the "serving" line.
pub struct Owner {
    pub token: String,
    pub source: String,
}

pub fn owner(vault: &Path) -> Result<Owner, String> {
    if let Ok(t) = std::env::var(ENV) {
        let t = t.trim().to_string();
        if !t.is_empty() {
            return Ok(Owner { token: t, source: format!("from {ENV}") });
        }
    }
    let path = vault.join(STORE).join(FILE);
    let source = format!("in {}", path.display());
    match fs::read_to_string(&path) {
        Ok(text) => {
            let t = text.trim().to_string();
            if t.is_empty() {
                return Err(format!(
                    "{} is empty: remove it and a new token is made at the next start",
                    path.display()
                ));
            }
            warn_if_shared(&path);
            Ok(Owner { token: t, source })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let t = new_token()?;
            create(&path, &t)?;
            Ok(Owner { token: t, source })
        }
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// 32 random bytes from the operating system, as 64 hex digits.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("the system gave no random bytes for a token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A named token as `tokens.json` keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Named {
    pub name: String,
    /// SHA-256 of the token, 64 hex digits.
    pub sha256: String,
    pub created_at: String,
    /// What it may do (review.rs).
    pub mode: Mode,
}

/// What a named token may do: write, write only as proposals for review, or read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Write,
    /// Every write made with it waits for review as a proposal.
    Propose,
    /// It reads; every write is refused.
    ReadOnly,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Write => "write",
            Mode::Propose => "propose",
            Mode::ReadOnly => "read-only",
        }
    }

    fn parse(name: &str) -> Option<Mode> {
        [Mode::Write, Mode::Propose, Mode::ReadOnly].into_iter().find(|m| m.name() == name)
    }
}

pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The vault as a lock's proof names it (see `datanotes_core::proof::VaultId`).
pub fn vault_id(vault: &Path) -> datanotes_core::proof::VaultId {
    let real = fs::canonicalize(vault).unwrap_or_else(|_| vault.to_path_buf());
    let store = fs::symlink_metadata(real.join(STORE)).ok().filter(fs::Metadata::is_dir);
    let store =
        store.and_then(|m| crate::files::identity(&m)).map(|(dev, ino)| format!("{dev}:{ino}")).unwrap_or_default();
    let path = real.to_string_lossy();
    // Windows spells a canonical path \\?\C:\…, where the plugin's Node spells C:\….
    let path = path.strip_prefix(r"\\?\").unwrap_or(&path).to_string();
    datanotes_core::proof::VaultId { path, store }
}

fn named_path(vault: &Path) -> PathBuf {
    vault.join(STORE).join(NAMED)
}

fn parse_named(text: &str) -> Result<Vec<Named>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let list = v.get("tokens").and_then(Value::as_array).ok_or("no \"tokens\" list")?;
    list.iter()
        .map(|t| {
            let s = |k: &str| t.get(k).and_then(Value::as_str).map(str::to_string);
            Ok(Named {
                name: s("name").ok_or("a token without a name")?,
                sha256: s("sha256").ok_or("a token without its sha256")?,
                created_at: s("created_at").unwrap_or_default(),
                // A mode this build does not know is the narrowest: read only.
                mode: t
                    .get("mode")
                    .and_then(Value::as_str)
                    .map_or(Mode::Write, |m| Mode::parse(m).unwrap_or(Mode::ReadOnly)),
            })
        })
        .collect()
}

/// The named tokens (none when the file is absent).
pub fn load_named(vault: &Path) -> Result<Vec<Named>, String> {
    let path = named_path(vault);
    match fs::read_to_string(&path) {
        Ok(text) => {
            parse_named(&text).map_err(|e| format!("{} cannot be read ({e}): fix or remove it", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(vec![]),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn save_named(vault: &Path, list: &[Named]) -> Result<(), String> {
    let path = named_path(vault);
    let tokens: Vec<Value> = list
        .iter()
        .map(|t| json!({"name": t.name, "sha256": t.sha256, "created_at": t.created_at, "mode": t.mode.name()}))
        .collect();
    let text = serde_json::to_string_pretty(&json!({"format": 1, "tokens": tokens})).unwrap_or_default() + "\n";
    crate::files::write_atomic(&path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = fs::set_permissions(&path, fs::Permissions::from_mode(0o600));
    }
    Ok(())
}

/// A token's name: 1 to 64 letters, digits, `.`, `_` or `-`; not "owner".
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 64
        || !name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        return Err(format!(
            "\"{name}\" is not a token name: use 1 to 64 letters, digits, '.', '_' or '-' (e.g. ci-bot)"
        ));
    }
    if name.eq_ignore_ascii_case(OWNER) {
        return Err(format!(
            "\"{name}\" names the owner's token (DATANOTES_TOKEN or .datanotes/token): pick another name"
        ));
    }
    Ok(())
}

/// Adds a named token; the token itself, which is shown this once.
/// `mode`: what it may do.
pub fn add(vault: &Path, name: &str, mode: Mode) -> Result<String, String> {
    check_name(name)?;
    let mut list = load_named(vault)?;
    if list.iter().any(|t| t.name == name) {
        return Err(format!(
            "a token named \"{name}\" exists already: revoke it first (datanotes token revoke {name})"
        ));
    }
    let token = new_token()?;
    list.push(Named {
        name: name.to_string(),
        sha256: sha256_hex(&token),
        created_at: datanotes_core::time::iso(crate::clock::now_ms()),
        mode,
    });
    save_named(vault, &list)?;
    Ok(token)
}

/// The named tokens: names and creation times, never the tokens.
pub fn list(vault: &Path) -> Result<Value, String> {
    let list = load_named(vault)?;
    let shown = |t: &Named| json!({"name": t.name, "created_at": t.created_at, "mode": t.mode.name()});
    Ok(json!({"tokens": list.iter().map(shown).collect::<Vec<_>>()}))
}

pub fn revoke(vault: &Path, name: &str) -> Result<(), String> {
    let mut list = load_named(vault)?;
    let before = list.len();
    list.retain(|t| t.name != name);
    if list.len() == before {
        return Err(format!("no token named \"{name}\" (datanotes token list shows them)"));
    }
    save_named(vault, &list)
}

/// What `serve` accepts: the owner's token and the named ones, read again from
/// `tokens.json` whenever it changes (so that add and revoke apply at once).
pub struct Credentials {
    owner: String,
    /// The vault the proofs name (see `datanotes_core::proof`).
    vault: datanotes_core::proof::VaultId,
    path: PathBuf,
    named: Mutex<(Option<Stamp>, Vec<Named>)>,
}

fn stamp(path: &Path) -> Option<Stamp> {
    fs::metadata(path).ok().map(|m| crate::files::stamp(&m))
}

impl Credentials {
    pub fn new(vault: &Path, owner: String) -> Credentials {
        let id = vault_id(vault);
        Credentials { owner, vault: id, path: named_path(vault), named: Mutex::new((None, vec![])) }
    }

    /// The answer to a lock challenge (see `datanotes_core::proof`): only the
    /// owner's token proves the engine holds the vault, and only this vault.
    pub fn proof(&self, address: &str, nonce: &str) -> String {
        datanotes_core::proof::lock_proof(&self.owner, address, &self.vault, nonce)
    }

    /// The vault the proofs name.
    pub fn vault(&self) -> &datanotes_core::proof::VaultId {
        &self.vault
    }

    /// The credential a token is ("owner", or a named token's name) and what
    /// it may do (the owner's writes), or None.
    pub fn check(&self, given: &str) -> Option<(String, Mode)> {
        let mut found = same(given, &self.owner).then(|| (OWNER.to_string(), Mode::Write));
        let hash = sha256_hex(given);
        let mut named = self.named.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = stamp(&self.path);
        if now != named.0 {
            let list = match fs::read_to_string(&self.path) {
                Ok(text) => parse_named(&text).unwrap_or_else(|e| {
                    eprintln!(
                        "datanotes: warning: {} cannot be read ({e}): named tokens are refused",
                        self.path.display()
                    );
                    vec![]
                }),
                Err(_) => vec![],
            };
            *named = (now, list);
        }
        for t in &named.1 {
            if same(&hash, &t.sha256) && found.is_none() {
                found = Some((t.name.clone(), t.mode));
            }
        }
        found
    }
}

fn create(path: &Path, token: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    f.write_all(format!("{token}\n").as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn warn_if_shared(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = fs::metadata(path) {
            if m.permissions().mode() & 0o077 != 0 {
                eprintln!("datanotes: warning: {} can be read by others than its owner (chmod 600 it)", path.display());
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// The token of an `Authorization: Bearer …` header value.
pub fn bearer(header: &str) -> Option<&str> {
    let (scheme, rest) = header.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

/// Compares in time that depends on the lengths only, never on where the first
/// difference is.
pub fn same(given: &str, token: &str) -> bool {
    let (a, b) = (given.as_bytes(), token.as_bytes());
    let mut diff = (a.len() != b.len()) as u8;
    for (i, y) in b.iter().enumerate() {
        diff |= a.get(i).copied().unwrap_or(0) ^ y;
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_and_parses() {
        assert!(same("abc", "abc"));
        assert!(!same("abd", "abc"));
        assert!(!same("ab", "abc"));
        assert!(!same("abcd", "abc"));
        assert!(!same("", "abc"));
        assert_eq!(bearer("Bearer xyz"), Some("xyz"));
        assert_eq!(bearer("bearer  xyz "), Some("xyz"));
        assert_eq!(bearer("Basic xyz"), None);
        assert_eq!(bearer("xyz"), None);
        let t = new_token().unwrap();
        assert_eq!(t.len(), 64);
        assert!(t.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn named_tokens_are_kept_hashed() {
        let dir = std::env::temp_dir().join(format!("datanotes-named-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let creds = Credentials::new(&dir, "the-owner".into());
        let name = |given: &str| creds.check(given).map(|(n, _)| n);
        assert_eq!(name("the-owner").as_deref(), Some(OWNER));
        assert!(check_name("owner").is_err() && check_name("a b").is_err() && check_name("").is_err());
        let t = add(&dir, "ci-bot", Mode::Write).unwrap();
        assert!(add(&dir, "ci-bot", Mode::Propose).is_err(), "names are unique");
        let text = fs::read_to_string(named_path(&dir)).unwrap();
        assert!(!text.contains(&t) && text.contains(&sha256_hex(&t)), "{text}");
        assert_eq!(name(&t).as_deref(), Some("ci-bot"));
        assert_eq!(
            list(&dir).unwrap(),
            json!({"tokens": [{"name": "ci-bot", "created_at": load_named(&dir).unwrap()[0].created_at, "mode": "write"}]})
        );
        assert_eq!(creds.check(&t).map(|(_, m)| m), Some(Mode::Write));
        let agent = add(&dir, "agent", Mode::Propose).unwrap();
        let reader = add(&dir, "reader", Mode::ReadOnly).unwrap();
        assert_eq!(creds.check(&agent), Some(("agent".to_string(), Mode::Propose)));
        assert_eq!(creds.check(&reader), Some(("reader".to_string(), Mode::ReadOnly)));
        assert_eq!(creds.check("the-owner"), Some((OWNER.to_string(), Mode::Write)));
        let text = fs::read_to_string(named_path(&dir)).unwrap().replace("\"read-only\"", "\"from-the-future\"");
        assert_eq!(parse_named(&text).unwrap()[2].mode, Mode::ReadOnly, "a mode not known reads as read-only");
        revoke(&dir, "ci-bot").unwrap();
        assert!(revoke(&dir, "ci-bot").is_err());
        assert_eq!(name(&t), None, "a revoked token is refused at once");
        assert_eq!(creds.check("nothing"), None);
        let _ = fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn creates_the_token_file_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("datanotes-token-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let path = dir.join(".datanotes").join(FILE);
        create(&path, "secret").unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert!(create(&path, "other").is_err(), "an existing token is never overwritten");
        assert_eq!(fs::read_to_string(&path).unwrap().trim(), "secret");
        let _ = fs::remove_dir_all(&dir);
    }
}
