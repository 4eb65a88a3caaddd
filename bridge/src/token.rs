//! The owner's bearer token: from `DATANOTES_TOKEN`, or else read from (or
//! created in) the vault's `.datanotes/token`, readable by the owner alone.

use std::fs;
use std::io::Write;
use std::path::Path;

pub const ENV: &str = "DATANOTES_TOKEN";
pub const FILE: &str = "token";

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
    let path = vault.join(crate::disk::STORE).join(FILE);
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
