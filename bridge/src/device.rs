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
    let dir = path.parent().unwrap_or(&path);
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    // Written whole beside it, then linked into place: of two processes making
    // one at once, the first link wins and both read it.
    let tmp = dir.join(format!(".device.{id}"));
    std::fs::write(&tmp, format!("{id}\n")).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(id),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let kept = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            valid(kept.trim(), &path.display().to_string())
        }
        Err(e) => Err(format!("cannot write {}: {e}", path.display())),
    }
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
