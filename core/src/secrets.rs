//! The store's secrets stay out of version control: the engine keeps a
//! `.gitignore` in `.datanotes/` naming the files that hold them (the owner's
//! token, the named tokens' hashes, the webhooks with their signing secrets), so
//! that git and obsidian-git never commit them. It names too what is this
//! machine's own (the locks, what this device last knew of the vault, the spare
//! files) and the checkpoints and the semantic index, which are derived (the
//! index is megabytes, changed by every search): two clones that both wrote one
//! merge without a conflict in `.datanotes/`. Lines a person adds are kept.

/// The file, relative to `.datanotes/`.
pub const FILE: &str = ".gitignore";

/// The store files git leaves out, anchored to `.datanotes/`: secrets first.
pub const IGNORED: [&str; 11] = [
    "/token",
    "/tokens.json",
    "/webhooks.json",
    "/webhooks.*.json",
    "/lock",
    "/engine.lock",
    "/known.*.jsonl",
    "/spare/",
    "/log/*/*.checkpoint.json",
    "/semantic/",
    "/cache/",
];

const HEAD: &str = "# Written by Datanotes: these files hold secrets (the owner's token, named\n\
                    # tokens, webhook signing secrets) or this machine's own state, or are rebuilt\n\
                    # from the rest (checkpoints, the semantic index, the notes' cache); they stay\n\
                    # out of git. Lines you add are kept.\n";

/// The text `.gitignore` must hold, given what it holds now (None: no such
/// file); None when it already names every secret file.
pub fn wanted(now: Option<&str>) -> Option<String> {
    let Some(now) = now else {
        return Some(format!("{HEAD}{}\n", IGNORED.join("\n")));
    };
    let has = |name: &str| now.lines().any(|l| l.trim() == name || l.trim() == &name[1..]);
    let missing: Vec<&str> = IGNORED.iter().copied().filter(|n| !has(n)).collect();
    if missing.is_empty() {
        return None;
    }
    let sep = if now.is_empty() || now.ends_with('\n') { "" } else { "\n" };
    Some(format!("{now}{sep}{}\n", missing.join("\n")))
}

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    #[test]
    fn written_when_absent_and_then_left_alone() {
        let first = wanted(None).unwrap();
        for name in IGNORED {
            assert!(first.lines().any(|l| l == name), "{name} in {first}");
        }
        assert_eq!(wanted(Some(&first)), None);
    }

    #[test]
    fn a_persons_lines_are_kept_and_only_missing_names_added() {
        let theirs = "# mine\n*.bak\ntoken";
        let text = wanted(Some(theirs)).unwrap();
        let rest = IGNORED[1..].join("\n");
        assert_eq!(text, format!("# mine\n*.bak\ntoken\n{rest}\n"));
        assert_eq!(wanted(Some(&text)), None);
    }
}
