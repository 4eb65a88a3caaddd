//! Names: closest-name suggestions, slugs, file names made from values.

/// The candidate closest to `name` (edit distance), when it is close enough to be a
/// likely typo.
pub fn closest<'a, I: IntoIterator<Item = &'a str>>(name: &str, candidates: I) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = distance(&lower, &c.to_lowercase());
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.filter(|(d, c)| *d <= (c.chars().count().max(name.chars().count()) / 2).max(2)).map(|(_, c)| c)
}

/// " (did you mean \"x\"?)" or "".
pub fn did_you_mean<'a, I: IntoIterator<Item = &'a str>>(name: &str, candidates: I) -> String {
    match closest(name, candidates) {
        Some(c) => format!(" (did you mean \"{c}\"?)"),
        None => String::new(),
    }
}

fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A slug for migration ids: lower case, runs of other characters than letters,
/// digits and `_` folded into one `-`, at most `max` characters.
pub fn slug(text: &str, max: usize) -> String {
    let mut out = String::new();
    for ch in text.chars() {
        if ch.is_ascii_alphanumeric() || ch == '_' {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let mut s: String = out.chars().take(max).collect();
    while s.ends_with('-') {
        s.pop();
    }
    s
}

/// A note's name as a link names it: its path's last part, without `.md`.
pub fn note_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path).trim_end_matches(".md")
}

/// A note's file name (without `.md`) made from a value: the characters that
/// Obsidian or a file system refuse are replaced, and the name is kept to a length
/// every file system takes.
pub fn file_stem(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for ch in value.chars() {
        match ch {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' | '#' | '^' | '[' | ']' => out.push('-'),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    let mut s = out.trim().trim_start_matches('.').trim().to_string();
    if s.len() > 180 {
        let mut cut = 180;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s = s.trim_end().to_string();
    }
    if reserved_on_windows(&s) {
        s.insert(s.find('.').unwrap_or(s.len()), '_');
    }
    s
}

/// Names Windows keeps for devices: `NUL.md` (or `con.backup.md`) cannot be a
/// file there, so a vault synced to Windows would lose the note. Windows reads
/// the name before the first dot, trailing spaces dropped, in any case (`con .md`
/// is `CON`); the console's own two (`CONIN$`, `CONOUT$`) count as well, and the
/// ports with a superscript digit (`COM¹`), but not `COM0` or `LPT0`.
pub fn reserved_on_windows(stem: &str) -> bool {
    const DEVICES: [&str; 6] = ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"];
    let base = stem.split('.').next().unwrap_or(stem).trim_end().to_ascii_uppercase();
    let numbered = |prefix: &str| {
        base.strip_prefix(prefix).is_some_and(|n| {
            let mut c = n.chars();
            matches!((c.next(), c.next()), (Some('1'..='9' | '¹' | '²' | '³'), None))
        })
    };
    DEVICES.contains(&base.as_str()) || numbered("COM") || numbered("LPT")
}

/// The key under which two note paths are one file on a disk that ignores case
/// and Unicode normalisation (macOS, Windows): `Café` (NFC or NFD) and `café`.
pub fn fold(path: &str) -> String {
    if path.is_ascii() {
        return path.to_ascii_lowercase();
    }
    nfc(path).chars().flat_map(char::to_lowercase).collect()
}

#[cfg(not(target_arch = "wasm32"))]
fn nfc(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    s.nfc().collect()
}

/// In wasm the host's JavaScript normalises (String.prototype.normalize): the
/// crate's tables would add their weight to the plugin's bundle for nothing.
#[cfg(target_arch = "wasm32")]
fn nfc(s: &str) -> String {
    String::from(js_sys::JsString::from(s).normalize("NFC"))
}

/// Why a path is not a plain, normalised path relative to the vault, outside
/// dot folders, the same on every system (None when it is): what a table's
/// folder and a note the engine writes both must be.
pub fn plain_path_problem(p: &str) -> Option<&'static str> {
    Some(if p.is_empty() {
        "is empty"
    } else if p.contains('\\') {
        "has a backslash (write folders with /)"
    } else if p.starts_with('/') {
        "is absolute"
    } else if p.contains(':') {
        "has a colon (a drive letter or a name Windows refuses)"
    } else if p.chars().any(char::is_control) {
        "has a control character"
    } else if p.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
        "is not normalised (an empty, . or .. part)"
    } else if p.split('/').any(|c| c.starts_with('.')) {
        "is inside a dot folder, which is never read as notes"
    } else {
        return None;
    })
}

/// Why a table folder cannot hold rows, if it cannot: it must be a plain,
/// normalised path relative to the vault, outside dot folders (which no engine
/// reads) and outside `datanotes/`, and mean the same folder on every system.
pub fn folder_problem(folder: &str) -> Option<String> {
    let f = folder.strip_suffix('/').unwrap_or(folder);
    let why = if let Some(why) = plain_path_problem(f) {
        why
    } else if f.split('/').next() == Some("datanotes") {
        "is inside datanotes/, which holds the engine's own tables"
    } else if f.split('/').any(|c| c.ends_with(' ') || c.ends_with('.') || reserved_on_windows(c)) {
        "has a part Windows cannot hold (a device name, or a trailing space or dot)"
    } else {
        return None;
    };
    Some(format!("folder \"{folder}\" {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn closest_finds_typos_only() {
        assert_eq!(closest("flim", ["film", "genre", "watch"]), Some("film"));
        assert_eq!(closest("columns", ["colums", "table"]), Some("colums"));
        assert_eq!(closest("zzzzzz", ["film", "genre"]), None);
    }

    #[test]
    fn slugs_match_the_seeds() {
        assert_eq!(slug("archive 1 rows of film", 30), "archive-1-rows-of-film");
        assert_eq!(
            slug("undo 20261012T165223-delete_rows-archive-1-rows-of-film", 30),
            "undo-20261012t165223-delete_ro"
        );
        assert_eq!(slug("recompute id, day, label of watch", 30), "recompute-id-day-label-of-watc");
    }

    #[test]
    fn file_stems_are_safe() {
        assert_eq!(file_stem("Sherlock Jr."), "Sherlock Jr.");
        assert_eq!(file_stem("a/b: c?"), "a-b- c-");
        assert_eq!(file_stem("../x"), "-x");
        assert!(file_stem(&"é".repeat(200)).len() <= 180);
        assert_eq!(file_stem("nul"), "nul_");
        assert_eq!(file_stem("COM1.backup"), "COM1_.backup");
        assert_eq!(file_stem("CONIN$"), "CONIN$_");
        assert_eq!(file_stem("lpt\u{b3}.x"), "lpt\u{b3}_.x");
        assert_eq!(file_stem("Console"), "Console");
    }

    #[test]
    fn windows_device_names_are_known() {
        for n in [
            "CON",
            "con",
            "Nul",
            "aux.txt",
            "COM1",
            "lpt9",
            "PRN ",
            "CON.txt",
            "con.md",
            "NUL.tar.gz",
            "COM1.md",
            "LPT9",
            "COM\u{b9}",
            "com\u{b2}.md",
            "LPT\u{b3}",
            "con .md",
            "CON  ",
            "nul. .x",
            "CONIN$",
            "conout$.log",
            "CONIN$ .md",
        ] {
            assert!(reserved_on_windows(n), "{n}");
        }
        for n in [
            "CONS",
            "COM0",
            "COM10",
            "LPT",
            "nullable",
            "Aux-1",
            "CONIN",
            "CONOUT$x",
            "COM\u{b9}\u{b9}",
            " CON",
            "x.CON",
        ] {
            assert!(!reserved_on_windows(n), "{n}");
        }
    }

    #[test]
    fn folds_ignore_case_and_normalisation() {
        assert_eq!(fold("Films/Caf\u{e9}.md"), fold("films/cafe\u{301}.md"));
        assert_ne!(fold("Films/Cafe.md"), fold("Films/Caf\u{e9}.md"));
    }

    #[test]
    fn table_folders_must_be_plain() {
        for bad in [
            "x/.obsidian",
            "x/.git/hooks",
            "x/.datanotes",
            "a/./b",
            "x/.",
            "C:\\x",
            "C:/x",
            "/abs",
            "a//b",
            "../x",
            "datanotes/x",
            "",
            "/",
            "x/NUL",
            "x/y.",
        ] {
            assert!(folder_problem(bad).is_some(), "{bad}");
        }
        for good in ["Books", "Books/", "Reading/Books 2026", "datanotes-old/x", "Caf\u{e9}"] {
            assert_eq!(folder_problem(good), None, "{good}");
        }
    }
}
