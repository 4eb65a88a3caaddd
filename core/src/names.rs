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
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
