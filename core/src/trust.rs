//! What the engine takes from files it did not write in this process: another
//! device's journal entries and commits, brought by a sync or git, are claims
//! about rows, never commands. Anyone who can put a file in the vault can forge
//! one, so each is checked here before it is believed, and again before any
//! write is built from it.

/// How far ahead of this device's clock another device's timestamp may be
/// before it is taken as a lie: clocks of synced machines drift by seconds,
/// not by minutes.
pub const SKEW_MS: i64 = 5 * 60 * 1000;

/// Whether a time another device's file claims is ahead of this device's
/// clock by more than the skew (`now_ms` 0: no clock given, nothing is).
pub fn ahead_of(at_ms: i64, now_ms: i64) -> bool {
    now_ms > 0 && at_ms > now_ms + SKEW_MS
}

/// Whether `s` is an id as the engine makes them (an operation's): letters,
/// digits, `-`, `_` and `.`, not starting with a dot; anything else could
/// name a path, since an entry's id is its file's name.
pub fn is_id(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Why a path is not one the engine may write, if it is not: a note (`.md`),
/// a Bases file (`.base`) or the schema, as a plain relative path outside every
/// dot folder (`.obsidian/` holds code Obsidian runs, `.git/` hooks git runs,
/// `.datanotes/` the store and the token).
pub fn note_path_problem(path: &str) -> Option<String> {
    let why = match crate::names::plain_path_problem(path) {
        Some(why) => why,
        None if path.ends_with(".md") || path.ends_with(".base") || path == crate::schema::METASTORE => return None,
        None => "is not a note",
    };
    Some(format!("{path} {why}"))
}

/// A blob's name: a SHA-256 in lower-case hex (anything else could name a path).
pub fn is_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The device an entry's id names (`<time>-<op>-<slug>.<device>`, maybe with
/// `-<n>` after it); None for an entry made before devices.
pub fn entry_device(id: &str) -> Option<&str> {
    let (_, d) = id.rsplit_once('.')?;
    let d = d.rsplit_once('-').filter(|(_, n)| n.bytes().all(|b| b.is_ascii_digit())).map_or(d, |(d, _)| d);
    is_device(d).then_some(d)
}

/// A device id as the store's file names carry it: 1 to 16 lower-case letters
/// and digits (so never `checkpoint`'s dot-free name clash, never a path).
pub fn is_device(id: &str) -> bool {
    (1..=16).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && id != "checkpoint"
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn only_notes_outside_dot_folders_are_writable_paths() {
        for ok in [
            "datanotes/main/public/film/Charade.md",
            "Notes/a b.md",
            "datanotes/bases/film.base",
            "datanotes/metastore.yaml",
        ] {
            assert_eq!(note_path_problem(ok), None, "{ok}");
        }
        for bad in [
            ".obsidian/plugins/evil/main.js",
            ".obsidian/plugins/evil/x.md",
            ".git/hooks/pre-commit",
            ".datanotes/token",
            "Notes/x.sh",
            "Notes/../.git/config.md",
            "/etc/passwd.md",
            "C:/x.md",
            "a\\b.md",
            "a//b.md",
            "./a.md",
            "a\n.md",
            "",
        ] {
            assert!(note_path_problem(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn an_entry_id_names_its_device() {
        assert_eq!(entry_device("20261204T133000-update_row-update-film.ab12"), Some("ab12"));
        assert_eq!(entry_device("20261204T133000-update_row-update-film.ab12-3"), Some("ab12"));
        assert_eq!(entry_device("20261204T133000-update_row-update-film"), None);
        assert!(is_hash(&"a".repeat(64)) && !is_hash("../../token") && !is_hash(&"A".repeat(64)));
    }
}
