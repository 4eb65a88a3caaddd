//! The order of a table's commits when several devices write one vault.
//!
//! Each engine names its commits after the version it claims and its device
//! (`<version, 20 digits>.<device>.json`; `<version>.json` before devices), so
//! two devices that write while apart never write one file with two texts, and
//! a file sync keeps both. Every device then orders the commits the same way,
//! from their names alone: by the version claimed, then by device. A commit's
//! version is the one it claimed, or one past the commit before it when that is
//! taken — as Delta Lake renumbers a commit that finds its version written by
//! another writer. Within one device nothing is renumbered.

use crate::store::Store;

/// A commit file's place in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placed {
    /// The version it has in the merged log.
    pub version: u64,
    /// Its path under the store.
    pub path: String,
}

/// The version a commit file claims and its device ("" before devices), from
/// its name within the table's folder; None for any other file.
pub fn claimed(name: &str) -> Option<(u64, &str)> {
    let stem = name.strip_suffix(".json")?;
    let (digits, device) = stem.split_once('.').unwrap_or((stem, ""));
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) || !is_device(device) && !device.is_empty() {
        return None;
    }
    Some((digits.parse().ok()?, device))
}

pub use crate::trust::is_device;

/// The device of a store file named `<prefix>.<device>.json` (a device's
/// settings, its webhooks); None for any other file.
pub fn device_named<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let d = path.strip_prefix(prefix)?.strip_prefix('.')?.strip_suffix(".json")?;
    is_device(d).then_some(d)
}

/// The commits of a table's log in order, each with its version.
pub fn placed(store: &Store, dir: &str) -> Vec<Placed> {
    let mut named: Vec<(u64, &str, &String)> =
        store.under(dir).filter_map(|p| claimed(&p[dir.len()..]).map(|(v, d)| (v, d, p))).collect();
    named.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let mut out: Vec<Placed> = Vec::with_capacity(named.len());
    for (v, _, p) in named {
        let version = renumbered(out.last().map(|prev| prev.version), v);
        out.push(Placed { version, path: p.clone() });
    }
    out
}

/// The number of what claimed `claimed` after one numbered `prev`: its claim,
/// or one past `prev` when that is taken. The rule of commits and feed events.
pub fn renumbered(prev: Option<u64>, claimed: u64) -> u64 {
    prev.map_or(claimed, |p| claimed.max(p + 1))
}

/// The file name of a commit this device writes at version `v`.
pub fn file_name(v: u64, device: Option<&str>) -> String {
    match device {
        Some(d) => format!("{v:020}.{d}.json"),
        None => format!("{v:020}.json"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn store(names: &[&str]) -> Store {
        Store::new(names.iter().map(|n| (format!("log/t/{n}"), None)).collect())
    }

    fn order(s: &Store) -> Vec<(u64, String)> {
        placed(s, "log/t/").into_iter().map(|p| (p.version, p.path.trim_start_matches("log/t/").to_string())).collect()
    }

    #[test]
    fn commits_of_two_devices_that_claim_one_version_are_renumbered_by_device() {
        let s = store(&[
            "00000000000000000000.json",
            "00000000000000000001.json",
            "00000000000000000002.b.json",
            "00000000000000000002.a.json",
            "00000000000000000003.a.json",
            "00000000000000000002.checkpoint.json",
            "notes.txt",
            "7.json",
        ]);
        let want = [
            (0, "00000000000000000000.json"),
            (1, "00000000000000000001.json"),
            (2, "00000000000000000002.a.json"),
            (3, "00000000000000000002.b.json"),
            (4, "00000000000000000003.a.json"),
        ];
        assert_eq!(order(&s), want.map(|(v, n)| (v, n.to_string())));
    }

    #[test]
    fn a_log_that_starts_late_keeps_its_numbers() {
        let s = store(&["00000000000000000005.json", "00000000000000000007.a.json", "00000000000000000007.b.json"]);
        assert_eq!(order(&s).iter().map(|(v, _)| *v).collect::<Vec<_>>(), [5, 7, 8]);
    }

    #[test]
    fn device_ids_are_plain_short_names() {
        for ok in ["a", "k3f9x2", "0123456789abcdef"] {
            assert!(is_device(ok), "{ok}");
        }
        for bad in ["", "A", "a.b", "../x", "checkpoint", "0123456789abcdefg", "é"] {
            assert!(!is_device(bad), "{bad}");
        }
        assert_eq!(claimed("00000000000000000002.checkpoint.json"), None);
        assert_eq!(claimed("00000000000000000002.x.json"), Some((2, "x")));
    }
}
