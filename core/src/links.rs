//! Wiki links (`[[Target]]`, `[[Target|alias]]`, `[[Target#Heading]]`, `![[embed]]`):
//! finding them in a note's text and rewriting their targets.

/// One link in a text: the byte range of its target (before any `#` or `|`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Every wiki link in `text`, in order.
pub fn scan(text: &str) -> Vec<Span> {
    let bytes = text.as_bytes();
    let mut out = vec![];
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'[' && bytes[i + 1] == b'[' {
            let start = i + 2;
            let mut j = start;
            let mut target_end = None;
            let mut closed = None;
            while j + 1 < bytes.len() {
                match bytes[j] {
                    b'\n' | b'\r' => break,
                    b'[' if bytes[j + 1] == b'[' => break,
                    b']' if bytes[j + 1] == b']' => {
                        closed = Some(j);
                        break;
                    }
                    b'|' | b'#' if target_end.is_none() => target_end = Some(j),
                    _ => {}
                }
                j += 1;
            }
            if let Some(c) = closed {
                let end = target_end.unwrap_or(c);
                if end > start {
                    out.push(Span { start, end });
                }
                i = c + 2;
                continue;
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    out
}

/// The folded stem a link target names: `Notes/Film night` -> `film night`.
pub fn target_stem(target: &str) -> String {
    let t = target.trim();
    let t = t.strip_suffix(".md").unwrap_or(t);
    crate::names::fold(t.rsplit('/').next().unwrap_or(t))
}

/// The folded stem of a note's path (lower case, NFC), so that a link typed in
/// either Unicode form finds the note: `datanotes/main/public/film/Charade.md` -> `charade`.
pub fn path_stem(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    crate::names::fold(name.strip_suffix(".md").unwrap_or(name))
}

/// The link targets of a text, as lower-case stems (for the index of who links where).
pub fn stems(text: &str) -> Stems {
    let mut v: Vec<String> = scan(text).iter().map(|s| target_stem(&text[s.start..s.end])).collect();
    v.sort();
    v.dedup();
    v.into_iter().collect()
}

/// A note's link stems, in one allocation: joined by newlines, which no link
/// holds (`scan` stops at one). Every note of the vault keeps its stems, and
/// a vector of strings took about 140 bytes a note where this takes 40.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stems(Option<Box<str>>);

impl Stems {
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.as_deref().into_iter().flat_map(|s| s.split('\n'))
    }
}

impl<S: AsRef<str>> FromIterator<S> for Stems {
    fn from_iter<I: IntoIterator<Item = S>>(stems: I) -> Stems {
        let mut joined: Option<String> = None;
        for s in stems {
            match &mut joined {
                Some(j) => {
                    j.push('\n');
                    j.push_str(s.as_ref());
                }
                None => joined = Some(s.as_ref().to_string()),
            }
        }
        Stems(joined.map(String::into_boxed_str))
    }
}

/// Rewrites the targets for which `f` gives a new target; keeps every other byte.
pub fn rewrite(text: &str, mut f: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for s in scan(text) {
        if let Some(new) = f(&text[s.start..s.end]) {
            out.push_str(&text[last..s.start]);
            out.push_str(&new);
            last = s.end;
        }
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn a_notes_stems_are_kept_in_one_string_and_read_back_as_they_were() {
        let text = "[[Ann]], [[b/Bob|Robert]], [[ann#Early]], [[]], [[Cé]] and ![[Ann]]";
        let stems = stems(text);
        assert_eq!(stems.iter().collect::<Vec<_>>(), ["ann", "bob", "cé"]);
        assert_eq!(stems.iter().collect::<Stems>(), stems);
        for list in [vec![], vec![""], vec!["", ""], vec!["a b", "c"]] {
            let s: Stems = list.iter().collect();
            assert_eq!(s.iter().collect::<Vec<_>>(), list);
        }
        assert_eq!(Stems::default().iter().count(), 0);
        assert_ne!(Stems::from_iter([""]), Stems::default(), "one empty stem is not none");
    }

    #[test]
    fn finds_links_in_their_forms() {
        let t = "See [[Charade]], ![[img.png]], [[Notes/Film night|the night]] and [[Metropolis#Cast]]. [[broken\n]]";
        let got: Vec<&str> = scan(t).iter().map(|s| &t[s.start..s.end]).collect();
        assert_eq!(got, vec!["Charade", "img.png", "Notes/Film night", "Metropolis"]);
        assert_eq!(target_stem("Notes/Film night"), "film night");
        assert_eq!(path_stem("datanotes/main/public/film/Sherlock Jr..md"), "sherlock jr.");
    }

    #[test]
    fn rewrites_only_what_it_must() {
        let t = "a [[Film night]] b [[Film night|alias]] c [[Other]]\r\n";
        let r = rewrite(t, |x| (x == "Film night").then(|| "Friday film night".to_string()));
        assert_eq!(r, "a [[Friday film night]] b [[Friday film night|alias]] c [[Other]]\r\n");
        assert_eq!(rewrite(t, |_| None), t);
    }
}
