//! This machine's device id, which the engine's store files carry so that
//! devices syncing one vault never write one file with two texts
//! (core/src/log/order.rs). It is kept outside every vault, where no sync tool
//! carries it: `$XDG_STATE_HOME/datanotes/device` (else
//! `~/.local/state/datanotes/device`; `%LOCALAPPDATA%\datanotes\device` on
//! Windows), made at first use. The plugin on the desktop reads the same file
//! (plugin/src/device.ts), so that the plugin and this binary on one machine are
//! one device. `DATANOTES_DEVICE` overrides it.

use std::path::PathBuf;

const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// Where the id is kept; None without a home folder.
fn file() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = if cfg!(windows) {
        var("LOCALAPPDATA")?
    } else {
        var("XDG_STATE_HOME").or_else(|| var("HOME").map(|h| h.join(".local").join("state")))?
    };
    Some(base.join("datanotes").join("device"))
}

/// A new id: 10 letters and digits (50 random bits).
fn make() -> Result<String, String> {
    let mut bytes = [0u8; 10];
    getrandom::fill(&mut bytes).map_err(|e| format!("the system gave no random bytes: {e}"))?;
    Ok(bytes.iter().map(|b| ALPHABET[(*b & 31) as usize] as char).collect())
}

/// The device id, or why there is none (the engine then names its files as
/// before devices: fine for a vault only this machine writes).
pub fn id() -> Result<String, String> {
    if let Ok(id) = std::env::var("DATANOTES_DEVICE") {
        return valid(id.trim(), "DATANOTES_DEVICE");
    }
    let path = file().ok_or("no home folder to keep this device's id in (set DATANOTES_DEVICE)")?;
    if let Ok(text) = std::fs::read_to_string(&path) {
        return valid(text.trim(), &path.display().to_string());
    }
    let id = make()?;
    let kept = keep_once(&path, &id)?;
    valid(kept.trim(), &path.display().to_string())
}

/// Writes `text` to `path` unless a file is there already: the text kept.
/// Written whole beside it (readable by the owner alone), then linked into
/// place: of two processes making one at once, the first link wins and both
/// read it.
fn keep_once(path: &std::path::Path, text: &str) -> Result<String, String> {
    let dir = path.parent().unwrap_or(path);
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written =
        options.open(&tmp).and_then(|mut f| std::io::Write::write_all(&mut f, format!("{text}\n").as_bytes()));
    written.map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(text.to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        }
        Err(e) => Err(format!("cannot write {}: {e}", path.display())),
    }
}

/// This device's key (core/src/seal.rs), beside its id and like it kept where
/// no sync tool carries it: `key.<device id>`, 32 random bytes in hex, made at
/// first use. One per id, so that devices a test (or DATANOTES_DEVICE) plays
/// on one machine do not share one. The plugin on the desktop reads the same
/// file (plugin/src/device.ts).
pub fn key(id: &str) -> Result<Vec<u8>, String> {
    let id_file = file().ok_or("no home folder to keep this device's key in")?;
    let path = id_file.with_file_name(format!("key.{id}"));
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(_) => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| format!("the system gave no random bytes: {e}"))?;
            keep_once(&path, &datanotes_core::webhook::hex(&bytes))?
        }
    };
    unhex(text.trim())
        .ok_or_else(|| format!("{} does not hold a key (64 hex digits): delete it to make a new one", path.display()))
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() < 32 || !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

fn valid(id: &str, from: &str) -> Result<String, String> {
    if datanotes_core::log::order::is_device(id) {
        Ok(id.to_string())
    } else {
        Err(format!("{from} holds {id:?}, not a device id (1 to 16 lower-case letters and digits)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_id_is_a_device_id() {
        for _ in 0..50 {
            let id = make().unwrap();
            assert_eq!(id.len(), 10);
            assert!(datanotes_core::log::order::is_device(&id), "{id}");
        }
    }
}
