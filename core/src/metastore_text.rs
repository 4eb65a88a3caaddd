//! metastore.yaml edited as a person's file: a schema operation changes only the
//! lines of what it changed; comments, order, alignment and quoting elsewhere stay
//! as written. The schema is a tree of mappings (root, tables, a table's columns
//! and checks) whose leaves are values; the old and new trees are compared and
//! only differing entries are spliced into the text. Whatever the splice cannot
//! handle (flow style around a change, anchors, a result that reads back as
//! another schema) falls back to the whole file written anew.

use crate::schema::{flow, flow_key, Schema, TableDef};
use crate::views::{ViewDef, VIEW_KEYS};
use serde_json::Value;

/// A node of the schema's tree. A map's `ordered` says whether its order means
/// something (columns) or not (tables, kept in a sorted map): new entries of an
/// unordered map go at its end.
#[derive(PartialEq)]
pub(crate) enum Node {
    Leaf(Value),
    Map(Vec<(String, Node)>, bool),
}

pub(crate) fn schema_tree(s: &Schema) -> Vec<(String, Node)> {
    let tables = s.tables.iter().map(|(n, t)| (n.clone(), Node::Map(table_tree(t), true))).collect();
    let mut root = vec![("version".into(), Node::Leaf(1.into())), ("tables".into(), Node::Map(tables, false))];
    if !s.views.is_empty() {
        let views = s.views.iter().map(|(n, v)| (n.clone(), Node::Map(view_tree(v), true))).collect();
        root.push(("views".into(), Node::Map(views, false)));
    }
    root
}

/// A view's keys in the order VIEW_KEYS gives them.
fn view_tree(v: &ViewDef) -> Vec<(String, Node)> {
    let json = v.to_json();
    VIEW_KEYS.iter().filter_map(|k| json.get(k).map(|x| (k.to_string(), Node::Leaf(x.clone())))).collect()
}

fn table_tree(t: &TableDef) -> Vec<(String, Node)> {
    let text = |s: &String| Node::Leaf(Value::String(s.clone()));
    let mut out = vec![];
    if let Some(d) = &t.description {
        out.push(("description".into(), text(d)));
    }
    if let Some(n) = &t.name_from {
        out.push(("name_from".into(), text(n)));
    }
    out.push(("history".into(), Node::Leaf(t.history.into())));
    if let Some(f) = &t.folder {
        out.push(("folder".into(), text(f)));
    }
    let columns = t.columns.iter().map(|(c, d)| (c.clone(), Node::Leaf(d.to_json()))).collect();
    out.push(("columns".into(), Node::Map(columns, true)));
    if !t.checks.is_empty() {
        let checks = t.checks.iter().map(|(c, f)| (c.clone(), Node::Leaf(f.clone()))).collect();
        out.push(("checks".into(), Node::Map(checks, true)));
    }
    if !t.check_descriptions.is_empty() {
        let text = t.check_descriptions.iter().map(|(c, d)| (c.clone(), text(d))).collect();
        out.push(("check_descriptions".into(), Node::Map(text, true)));
    }
    if let Some(r) = &t.ref_by {
        out.push(("ref_by".into(), Node::Leaf(r.clone())));
    }
    out
}

/// The entries of a map as YAML block lines at `indent`.
pub(crate) fn render(entries: &[(String, Node)], indent: usize, eol: &str, out: &mut String) {
    for (k, n) in entries {
        render_entry(k, n, indent, eol, out);
    }
}

fn render_entry(key: &str, node: &Node, indent: usize, eol: &str, out: &mut String) {
    let pad = " ".repeat(indent);
    match node {
        Node::Leaf(v) => out.push_str(&format!("{pad}{}: {}{eol}", flow_key(key), flow(v))),
        Node::Map(m, _) if m.is_empty() => out.push_str(&format!("{pad}{}: {{}}{eol}", flow_key(key))),
        Node::Map(m, _) => {
            out.push_str(&format!("{pad}{}:{eol}", flow_key(key)));
            render(m, indent + 2, eol, out);
        }
    }
}

/// The text of metastore.yaml after a schema change from `old` to `new`: `text`
/// with only the changed entries rewritten, or the whole file anew when a splice
/// is not possible or does not read back as `new`.
pub fn rewrite(text: Option<&str>, old: &Schema, new: &Schema) -> String {
    text.and_then(|t| splice_file(t, old, new)).unwrap_or_else(|| new.to_yaml())
}

fn splice_file(text: &str, old: &Schema, new: &Schema) -> Option<String> {
    let (bom, body) = match text.strip_prefix('\u{feff}') {
        Some(rest) => ("\u{feff}", rest),
        None => ("", text),
    };
    if body.trim().is_empty() {
        return None;
    }
    let eol = if body.contains("\r\n") { "\r\n" } else { "\n" };
    let unterminated = !body.ends_with('\n');
    let mut owned = body.to_string();
    if unterminated {
        owned.push_str(eol);
    }
    let lines: Vec<&str> = owned.split_inclusive('\n').collect();
    let mut out = String::from(bom);
    let splice = Splice { lines: &lines, eol };
    splice.map(0, lines.len(), &schema_tree(old), &schema_tree(new), false, &mut out)?;
    if unterminated && out.ends_with(eol) {
        out.truncate(out.len() - eol.len());
    }
    let back = Schema::parse(&out).ok()?;
    (back.tables == new.tables && back.views == new.views).then_some(out)
}

/// The value of `key` in a map.
fn get<'a>(m: &'a [(String, Node)], key: &str) -> Option<&'a Node> {
    m.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// One entry of a block mapping in the text: the lines before it (blank lines and
/// comments), its key line and the lines under it.
struct Span {
    key: String,
    lead: (usize, usize),
    body: (usize, usize),
}

struct Splice<'a> {
    lines: &'a [&'a str],
    eol: &'a str,
}

/// The indentation of a line with content, None for a blank or comment line.
fn indent_of(line: &str) -> Option<usize> {
    let content = line.trim_end_matches(['\n', '\r']);
    let t = content.trim_start_matches(' ');
    (!t.is_empty() && !t.starts_with('#')).then_some(content.len() - t.len())
}

/// The key of a `key: value` line (already stripped of its indentation) and what
/// follows the colon; None for anything else (sequences, complex keys, tabs).
fn key_of(t: &str) -> Option<(String, &str)> {
    let t = t.trim_end_matches(['\n', '\r']);
    let (key, rest) = if let Some(q) = t.strip_prefix('"') {
        let mut end = None;
        let mut escaped = false;
        for (i, c) in q.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let end = end?;
        let key: String = serde_json::from_str(&format!("\"{}\"", &q[..end])).ok()?;
        (key, &q[end + 1..])
    } else if let Some(q) = t.strip_prefix('\'') {
        let end = q.replace("''", "\u{0}\u{0}").find('\'')?;
        (q[..end].replace("''", "'"), &q[end + 1..])
    } else {
        let i = t.char_indices().find(|&(i, c)| c == ':' && t[i + 1..].chars().next().is_none_or(|n| n == ' '))?.0;
        let key = t[..i].trim_end();
        if key.is_empty() || key.starts_with(['-', '?', '&', '*', '!', '{', '[', '%', '@', '`', '|', '>', '\t']) {
            return None;
        }
        (key.to_string(), &t[i..])
    };
    let rest = rest.trim_start_matches(' ').strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((key, rest.trim()))
}

impl Splice<'_> {
    /// The entries of the block mapping in lines `from..to`, and where trailing
    /// comments start; None when the lines are not a plain block mapping.
    fn spans(&self, from: usize, to: usize) -> Option<(Vec<Span>, usize, usize)> {
        let indent = (from..to).find_map(|i| indent_of(self.lines[i]))?;
        let mut spans: Vec<Span> = vec![];
        let mut lead_start = from;
        let mut last_content = from;
        for i in from..to {
            let Some(ind) = indent_of(self.lines[i]) else { continue };
            if ind < indent {
                return None;
            }
            if ind == indent {
                let (key, _) = key_of(&self.lines[i][ind..])?;
                if spans.iter().any(|s| s.key == key) {
                    return None;
                }
                if let Some(prev) = spans.last_mut() {
                    prev.body.1 = last_content + 1;
                    lead_start = last_content + 1;
                }
                spans.push(Span { key, lead: (lead_start, i), body: (i, i + 1) });
            }
            last_content = i;
        }
        let last = spans.last_mut()?;
        last.body.1 = last_content + 1;
        let tail = last_content + 1;
        Some((spans, tail, indent))
    }

    fn push(&self, (from, to): (usize, usize), out: &mut String) {
        for l in &self.lines[from..to] {
            out.push_str(l);
        }
    }

    /// Splices the block mapping in lines `from..to` from `old` entries to `new`.
    fn map(
        &self,
        from: usize,
        to: usize,
        old: &[(String, Node)],
        new: &[(String, Node)],
        ordered: bool,
        out: &mut String,
    ) -> Option<()> {
        let (spans, tail, indent) = self.spans(from, to)?;
        let in_text = |k: &str| spans.iter().any(|s| s.key == k);
        // Entries new or changed with no line in the text yet; an entry renamed
        // (same value, its old key gone) takes the place of the old one.
        let mut added: Vec<&(String, Node)> =
            new.iter().filter(|(k, n)| !in_text(k) && get(old, k) != Some(n)).collect();
        let mut renamed: Vec<(&str, &(String, Node))> = vec![];
        for s in &spans {
            if get(new, &s.key).is_none() && get(old, &s.key).is_some() {
                if let Some(i) = added.iter().position(|(k, n)| get(old, &s.key) == Some(n) && get(old, k).is_none()) {
                    renamed.push((&s.key, added.remove(i)));
                }
            }
        }
        // Where each added entry goes: after the nearest entry before it in the
        // new order that the text has, else first; an unordered map's at its end.
        let mut after: Vec<(Option<&str>, &(String, Node))> = vec![];
        for e in added {
            let anchor = if ordered {
                let at = new.iter().position(|(k, _)| *k == e.0).unwrap_or(0);
                new[..at].iter().rev().map(|(k, _)| k.as_str()).find(|k| in_text(k) && get(new, k).is_some())
            } else {
                spans.last().map(|s| s.key.as_str())
            };
            after.push((anchor, e));
        }
        self.push((from, spans[0].lead.0), out);
        for (_, e) in after.iter().filter(|(a, _)| a.is_none()) {
            render_entry(&e.0, &e.1, indent, self.eol, out);
        }
        for s in &spans {
            self.push(s.lead, out);
            match (get(old, &s.key), get(new, &s.key)) {
                (Some(o), Some(n)) if o != n => self.entry(s, o, n, indent, out)?,
                (Some(_), None) => {
                    if let Some((_, e)) = renamed.iter().find(|(k, _)| *k == s.key) {
                        render_entry(&e.0, &e.1, indent, self.eol, out);
                    }
                }
                _ => self.push(s.body, out),
            }
            for (_, e) in after.iter().filter(|(a, _)| *a == Some(s.key.as_str())) {
                render_entry(&e.0, &e.1, indent, self.eol, out);
            }
        }
        self.push((tail, to), out);
        Some(())
    }

    /// One changed entry: a block mapping in the text is spliced further, any
    /// other entry written anew.
    fn entry(&self, s: &Span, old: &Node, new: &Node, indent: usize, out: &mut String) -> Option<()> {
        let (_, rest) = key_of(&self.lines[s.body.0][indent..])?;
        let block = rest.is_empty() || rest.starts_with('#');
        let has_children = (s.body.0 + 1..s.body.1).any(|i| indent_of(self.lines[i]).is_some());
        match (old, new) {
            (Node::Map(o, _), Node::Map(n, ordered)) if block && has_children && !n.is_empty() => {
                self.push((s.body.0, s.body.0 + 1), out);
                self.map(s.body.0 + 1, s.body.1, o, n, *ordered, out)
            }
            _ => {
                render_entry(&s.key, new, indent, self.eol, out);
                Some(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    const BASE: &str = "version: 1\ntables:\n  main.public.a:\n    columns:\n      x: {type: text}\n";

    fn with_column(text: &str) -> (Schema, Schema) {
        let old = Schema::parse(text).unwrap();
        let mut new = old.clone();
        let y = Schema::parse("tables: {main.public.a: {columns: {y: {type: integer}}}}").unwrap();
        let col = y.tables["main.public.a"].columns[0].clone();
        new.tables.get_mut("main.public.a").unwrap().columns.push(col);
        (old, new)
    }

    #[test]
    fn odd_files_fall_back_to_a_file_that_reads_as_the_new_schema() {
        let odd = [
            format!("---\n{BASE}"),
            format!("{BASE}..."),
            "version: 1\ntables: {main.public.a: {columns: {x: {type: text}}}}\n".to_string(),
            "version: 1\ntables:\n  main.public.a:\n    columns: &c\n      x: {type: text}\n".to_string(),
            "version: 1\ntables:\n  main.public.a:\n    columns:\n      x: {type: text}\n      x: {type: text}\n".to_string(),
            "version: 1\ntables:\n  main.public.a:\n    columns:\n      - x\n".to_string(),
            "\u{feff}# my tables\n\nversion: 1\ntables:\n  main.public.a:\n    columns:\n        x:\n          type: text\n".to_string(),
            format!("{BASE}  'main.public.b':\n    columns: {{}}\n"),
        ];
        for text in odd {
            let Ok(old) = Schema::parse(&text) else { continue };
            let (_, new) = with_column(BASE);
            let mut new_from_old = old.clone();
            new_from_old.tables.get_mut("main.public.a").unwrap().columns = new.tables["main.public.a"].columns.clone();
            let out = rewrite(Some(&text), &old, &new_from_old);
            assert_eq!(Schema::parse(&out).unwrap().tables, new_from_old.tables, "{text:?} became {out:?}");
        }
    }

    #[test]
    fn a_bom_comments_and_deeper_indentation_are_kept() {
        let text = "\u{feff}# my tables\n\nversion: 1\ntables:\n    main.public.a:   # the first\n        columns:\n            x: {type: text}  # why x\n";
        let (old, new) = with_column(text);
        let out = rewrite(Some(text), &old, &new);
        assert_eq!(out, format!("{text}            y: {{type: integer}}\n"));
    }
}
