//! The project's docs pages (Markdown under `docs/` at the repository's root),
//! built into the engine: `read_docs` answers them offline (in Obsidian too), and
//! `serve` at `GET /datanotes/docs/<page>.md`, so that each refusal's `Docs:` line
//! leads somewhere real. The operations page ends with every operation of the
//! registry, generated: nothing lists them twice.

use crate::ops::registry::{Access, OPS};
use serde_json::{json, Value};

const PAGES: &[(&str, &str)] = &[
    ("reference/operations", include_str!("../../docs/reference/operations.md")),
    ("reference/schema", include_str!("../../docs/reference/schema.md")),
    ("reference/filters", include_str!("../../docs/reference/filters.md")),
    ("guides/database-objects/views", include_str!("../../docs/guides/database-objects/views.md")),
    ("guides/database-objects/bases", include_str!("../../docs/guides/database-objects/bases.md")),
    ("guides/data-quality/rules", include_str!("../../docs/guides/data-quality/rules.md")),
    ("guides/data-quality/hand-edits", include_str!("../../docs/guides/data-quality/hand-edits.md")),
    ("guides/history/journal-and-undo", include_str!("../../docs/guides/history/journal-and-undo.md")),
    ("guides/history/table-history", include_str!("../../docs/guides/history/table-history.md")),
    ("guides/history/change-data-feed", include_str!("../../docs/guides/history/change-data-feed.md")),
    ("guides/history/many-devices", include_str!("../../docs/guides/history/many-devices.md")),
    ("guides/history/proposals", include_str!("../../docs/guides/history/proposals.md")),
    ("guides/search/by-meaning", include_str!("../../docs/guides/search/by-meaning.md")),
];

pub fn names() -> Vec<&'static str> {
    PAGES.iter().map(|(n, _)| *n).collect()
}

/// A page by name (`reference/schema`; an `#anchor` is ignored), or None.
pub fn page(name: &str) -> Option<String> {
    let name = name.trim_end_matches(".md").split('#').next().unwrap_or(name);
    let (_, text) = PAGES.iter().find(|(n, _)| *n == name)?;
    if name != "reference/operations" {
        return Some(text.to_string());
    }
    let mut out = text.to_string();
    out.push_str("\n## Every operation\n\nGenerated from the registry (`datanotes ops` prints it as JSON).\n");
    for op in OPS {
        let kind = match op.access {
            Access::Read => "read-only",
            Access::Write => "write",
            Access::Destructive => "destructive write",
        };
        let journaled = if op.journaled { ", journaled" } else { "" };
        out.push_str(&format!("\n### {}\n\n**{}** · {kind}{journaled}\n\n{}\n", op.name, op.title, op.description));
        if !op.all_params().is_empty() {
            out.push_str("\n| argument | required | description |\n| --- | --- | --- |\n");
            for p in op.all_params() {
                let req = if p.required { "yes" } else { "" };
                out.push_str(&format!("| `{}` | {req} | {} |\n", p.name, p.description.replace('|', "\\|")));
            }
        }
    }
    Some(out)
}

/// The list of pages, as Markdown with links under `base` (e.g. `/datanotes/docs/`).
pub fn index(base: &str) -> String {
    let mut out = String::from("# Datanotes docs\n\n");
    for (name, text) in PAGES {
        let title = text.lines().next().unwrap_or("").trim_start_matches("# ");
        out.push_str(&format!("- [{title}]({base}{name}.md)\n"));
    }
    out
}

/// A heading's anchor, as sites make them: lower case, spaces to dashes.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' | '-' => Some('-'),
            c if c.is_alphanumeric() || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The section of a page under the heading an anchor names (the whole page when
/// none has it).
fn section(text: &str, anchor: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let level = |l: &str| l.chars().take_while(|c| *c == '#').count();
    let Some(start) = lines.iter().position(|l| level(l) > 0 && slug(l.trim_start_matches('#')) == anchor) else {
        return text.to_string();
    };
    let depth = level(lines[start]);
    let end =
        lines[start + 1..].iter().position(|l| (1..=depth).contains(&level(l))).map_or(lines.len(), |i| start + 1 + i);
    lines[start..end].join("\n") + "\n"
}

/// A page's name as an agent may pass it: the `Docs:` address a refusal
/// prints (`https://datanotes.dev/guides/….md#anchor`), or with `.md`, a
/// leading `/` or `docs/`; read_docs names it `guides/…#anchor`.
fn normal(name: &str) -> String {
    let n = name.trim();
    let n = ["https://datanotes.dev/", "http://datanotes.dev/"].iter().find_map(|u| n.strip_prefix(u)).unwrap_or(n);
    let n = n.trim_start_matches('/');
    let n = n.strip_prefix("docs/").unwrap_or(n);
    match n.split_once('#') {
        Some((path, anchor)) => format!("{}#{anchor}", path.trim_end_matches(".md")),
        None => n.trim_end_matches(".md").to_string(),
    }
}

/// The page an unknown name most likely meant: one ending in the same last
/// part (`rules` -> `guides/data-quality/rules`), else the nearest spelling.
fn meant(name: &str) -> String {
    let path = name.split('#').next().unwrap_or(name);
    let last = path.rsplit('/').next().unwrap_or(path);
    match names().into_iter().find(|p| p.rsplit('/').next() == Some(last)) {
        Some(p) => format!(" (did you mean \"{p}\"?)"),
        None => crate::names::did_you_mean(path, names()),
    }
}

/// read_docs: a page (or its section, after `#`), or the list of pages.
pub fn read(name: Option<&str>) -> Value {
    match name.map(normal) {
        None => json!({"pages": names(), "text": index("")}),
        Some(n) => match page(&n) {
            Some(text) => {
                let text = match n.split_once('#') {
                    Some((_, anchor)) => section(&text, anchor),
                    None => text,
                };
                json!({"page": n, "text": text})
            }
            None => json!({"page": n, "text": null, "pages": names(),
                "error": format!("no page \"{n}\"{}", meant(&n))}),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn every_page_is_there_with_a_title() {
        for (name, text) in PAGES {
            assert!(text.starts_with("# "), "{name} starts with its title");
            assert!(page(name).is_some());
        }
        let ops = page("reference/operations#insert_row").unwrap();
        for op in OPS {
            assert!(ops.contains(&format!("### {}\n", op.name)), "{} is listed", op.name);
        }
        assert!(page("nothing").is_none());
        assert!(index("/datanotes/docs/").contains("/datanotes/docs/guides/history/journal-and-undo.md"));
        let one = read(Some("reference/operations#insert_row"))["text"].as_str().unwrap().to_string();
        assert!(one.starts_with("### insert_row\n") && !one.contains("### insert_rows"), "{one}");
    }

    /// An agent passing the Docs: address a refusal printed gets the page;
    /// a name that is only the page's last part is pointed to it.
    #[test]
    fn a_page_is_found_by_its_docs_address_and_a_near_name_is_pointed_to() {
        let want = read(Some("guides/data-quality/rules#a-refusal"));
        assert!(want["text"].as_str().unwrap().starts_with("## A refusal"), "{want}");
        for given in [
            "https://datanotes.dev/guides/data-quality/rules.md#a-refusal",
            " /docs/guides/data-quality/rules.md#a-refusal ",
            "guides/data-quality/rules.md#a-refusal",
        ] {
            assert_eq!(read(Some(given)), want, "{given}");
        }
        assert_eq!(read(Some("https://datanotes.dev/reference/filters.md"))["page"], "reference/filters");
        let near = read(Some("guides/rules"));
        assert_eq!(near["text"], Value::Null);
        assert_eq!(near["error"], "no page \"guides/rules\" (did you mean \"guides/data-quality/rules\"?)");
        assert_eq!(
            read(Some("reference/filtres"))["error"],
            "no page \"reference/filtres\" (did you mean \"reference/filters\"?)"
        );
        assert_eq!(read(Some("zzz"))["error"], "no page \"zzz\"");
    }

    /// Every Docs: page a refusal names exists.
    #[test]
    fn every_page_a_refusal_names_exists() {
        let sources = [
            include_str!("error.rs"),
            include_str!("tx.rs"),
            include_str!("ops/mod.rs"),
            include_str!("ops/read.rs"),
            include_str!("ops/rows.rs"),
            include_str!("ops/tables.rs"),
            include_str!("ops/journal.rs"),
            include_str!("ops/history.rs"),
            include_str!("ops/changes.rs"),
        ];
        for src in sources {
            for part in src.split("with_docs(\"").skip(1) {
                let name = part.split('"').next().unwrap();
                if !name.contains('{') {
                    assert!(page(name).is_some(), "{name} is named by a refusal but has no page");
                }
            }
        }
    }
}
