//! Conflict copies: the files sync tools make when two devices changed one note
//! while apart, and the markers git leaves in a note it could not merge. A copy
//! under a table's folder is never a row of its own (it would be a second row
//! with the same id); it is reported with both versions, and `resolve_conflict`
//! keeps one side.
//!
//! - Syncthing: `Charade.sync-conflict-20261204-133000-ABCDEFG.md`
//! - Dropbox: `Charade (Ann's conflicted copy 2026-12-04).md`
//! - iCloud: `Charade 2.md`, and OneDrive: `Charade-LAPTOP.md` — names a person
//!   may choose too, so these are copies only beside their original with the
//!   same row id.

/// A file a sync tool made beside `original`.
#[derive(Debug, Clone, PartialEq)]
pub struct Copy {
    pub original: String,
    pub tool: &'static str,
    /// Only a copy when the original holds the same row id.
    pub same_id_only: bool,
}

/// The copy a path names, if its name is one a sync tool makes.
pub fn copy_of(path: &str) -> Option<Copy> {
    let (dir, name) = path.rsplit_once('/').map_or(("", path), |(d, n)| (d, n));
    let stem = name.strip_suffix(".md")?;
    let at = |s: &str| if dir.is_empty() { format!("{s}.md") } else { format!("{dir}/{s}.md") };
    const SYNCTHING: &str = ".sync-conflict-";
    if let Some((orig, tail)) = rfind(stem, SYNCTHING).map(|i| (&stem[..i], &stem[i + SYNCTHING.len()..])) {
        let parts: Vec<&str> = tail.split('-').collect();
        let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
        if parts.len() == 3 && digits(parts[0], 8) && digits(parts[1], 6) && !orig.is_empty() {
            return Some(Copy { original: at(orig), tool: "Syncthing", same_id_only: false });
        }
    }
    if let Some(open) = rfind(stem, " (") {
        let inside = &stem[open + 2..];
        if inside.ends_with(')') && inside.contains("conflicted copy") && open > 0 {
            return Some(Copy { original: at(&stem[..open]), tool: "Dropbox", same_id_only: false });
        }
    }
    if let Some((orig, n)) = stem.rsplit_once(' ') {
        if n.len() == 1 && (b'2'..=b'9').contains(&n.as_bytes()[0]) && !orig.is_empty() {
            return Some(Copy { original: at(orig), tool: "iCloud", same_id_only: true });
        }
    }
    if let Some((orig, device)) = stem.rsplit_once('-') {
        let named = !device.is_empty() && device.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit());
        if named && device.bytes().any(|b| b.is_ascii_uppercase()) && !orig.is_empty() {
            return Some(Copy { original: at(orig), tool: "OneDrive", same_id_only: true });
        }
    }
    None
}

/// `s.rfind(pat)`, found from the places of `pat`'s first character: every
/// note's path is asked at open, and a substring search sets up a searcher
/// each time.
fn rfind(s: &str, pat: &str) -> Option<usize> {
    let first = pat.chars().next()?;
    let mut end = s.len();
    while let Some(i) = s[..end].rfind(first) {
        if s[i..].starts_with(pat) {
            return Some(i);
        }
        end = i;
    }
    None
}

/// How the message of a copy begins (`copy_message`).
const COPY_LEAD: &str = "a conflict copy of ";

/// What a person reads about a copy, with the way out.
pub fn copy_message(copy: &str, c: &Copy) -> String {
    format!(
        "{COPY_LEAD}{} made by {}: two devices changed the note while apart, and this copy is not a row. resolve_conflict {{\"path\": \"{copy}\", \"keep\": \"original\"}} removes it; {{\"keep\": \"copy\"}} makes its text the row's",
        c.original, c.tool
    )
}

/// Whether the index read a note as a sync tool's copy, from the message it
/// keeps for it (`vault::State::Unreadable`): the same name beside an original
/// of another row id is a row.
pub fn is_copy_message(message: &str) -> bool {
    message.starts_with(COPY_LEAD)
}

/// The two sides of a note git could not merge: (ours, theirs), each the note
/// with the other side's lines left out; None without conflict markers.
pub fn git_sides(text: &str) -> Option<(String, String)> {
    let (mut ours, mut theirs) = (String::new(), String::new());
    // 0: both sides, 1: ours, 2: theirs
    let mut side = 0;
    let mut seen = false;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.starts_with("<<<<<<<") && side == 0 {
            side = 1;
            seen = true;
        } else if bare.starts_with("|||||||") && side == 1 {
            side = 3;
        } else if bare == "=======" && (side == 1 || side == 3) {
            side = 2;
        } else if bare.starts_with(">>>>>>>") && side == 2 {
            side = 0;
        } else {
            match side {
                0 => {
                    ours.push_str(line);
                    theirs.push_str(line);
                }
                1 => ours.push_str(line),
                2 => theirs.push_str(line),
                _ => {}
            }
        }
    }
    (seen && side == 0).then_some((ours, theirs))
}

pub const GIT_MESSAGE: &str = "git left conflict markers in it (<<<<<<< … ======= … >>>>>>>): it is not a row until one side is kept. resolve_conflict {\"path\": …, \"keep\": \"ours\"} keeps the lines of the branch merged into, {\"keep\": \"theirs\"} the other's";

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn tool(p: &str) -> Option<(&'static str, String)> {
        copy_of(p).map(|c| (c.tool, c.original))
    }

    #[test]
    fn the_copies_of_each_sync_tool_are_named_with_their_original() {
        let f = "datanotes/main/public/film/";
        let cases = [
            ("Charade.sync-conflict-20261204-133000-ABCDEFG.md", "Syncthing"),
            ("Charade (Ann's conflicted copy 2026-12-04).md", "Dropbox"),
            ("Charade (conflicted copy 2026-12-04 133000).md", "Dropbox"),
            ("Charade 2.md", "iCloud"),
            ("Charade-LAPTOP7.md", "OneDrive"),
        ];
        for (name, t) in cases {
            assert_eq!(tool(&format!("{f}{name}")), Some((t, format!("{f}Charade.md"))), "{name}");
        }
        for plain in [
            "Charade.md",
            "Sherlock Jr..md",
            "Film 10.md",
            "Charade (1963).md",
            "Spider-man.md",
            "2.md",
            "x.sync-conflict-2026.md",
        ] {
            assert_eq!(copy_of(&format!("{f}{plain}")), None, "{plain}");
        }
    }

    #[test]
    fn a_pattern_is_found_last_as_str_rfind_finds_it() {
        for s in ["", "a (b (c", "a (b(c)", "((", " ( (", "x.sync-conflict-1.sync-conflict-2", "é (ü", "no"] {
            for pat in [" (", ".sync-conflict-", "(", "é"] {
                assert_eq!(rfind(s, pat), s.rfind(pat), "{s:?} {pat:?}");
            }
        }
    }

    #[test]
    fn git_markers_split_into_two_sides() {
        let text =
            "---\ntable: t\n<<<<<<< HEAD\nrating: 4\n=======\nrating: 2\n>>>>>>> phone\ntitle: Charade\n---\nbody\n";
        let (ours, theirs) = git_sides(text).unwrap();
        assert_eq!(ours, "---\ntable: t\nrating: 4\ntitle: Charade\n---\nbody\n");
        assert_eq!(theirs, "---\ntable: t\nrating: 2\ntitle: Charade\n---\nbody\n");
        let diff3 = "a\n<<<<<<< ours\nx\n||||||| base\nw\n=======\ny\n>>>>>>> theirs\n";
        assert_eq!(git_sides(diff3), Some(("a\nx\n".into(), "a\ny\n".into())));
        assert_eq!(git_sides("no markers\n"), None);
        assert_eq!(git_sides("<<<<<<< HEAD\nunfinished\n"), None);
    }
}
