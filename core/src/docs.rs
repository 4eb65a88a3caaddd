//! The docs pages that refusals name, offline (read_docs).

use crate::ops::registry::OPS;
use serde_json::{json, Value};

const PAGES: &[(&str, &str)] = &[
    ("reference/schema", "# The schema\n\n`datanotes/metastore.yaml` declares the tables: `version: 1`, then `tables:` by qualified name (catalog.schema.table). A table has description, name_from (a column, or a template such as \"{year} {title}\", naming each row's note), history, folder, columns and checks. A column has type (text, integer, number, boolean, date, datetime, link, list, enum) and the options required, dense, unique, default, description, generated (a template), inverse, ref_where (a filter the linked row must match); a link names its table, a list its items, an enum its values. Change it through operations only (create_table, add_column, …): they are validated and journaled.\n"),
    ("reference/filters", "# The filter language\n\nJSON: `{\"col\": value}` (equality; on a list, membership), `{\"col\": {\"gt\"|\"gte\"|\"lt\"|\"lte\"|\"ne\"|\"in\"|\"contains\"|\"starts_with\"|\"exists\": arg}}`, `{\"and\": [...]}`, `{\"or\": [...]}`, `{\"not\": filter}`. Several keys in one object must all hold. Dotted paths follow links: `parent.kind`. Links compare by target, case-insensitively. One evaluator serves select_rows `where`, CHECKs, ref_where and ref_by.\n"),
    ("guides/data-quality/rules", "# Rules a write must keep\n\nEvery write is checked against the rules of the rows it writes and of the rows that link to them: types, enum values, required and unique columns, links that resolve to a row of the right table, ref_where, ref_by and CHECKs. A write that would break one is refused and nothing is written; the refusal lists each row and rule. check_table lists the rules rows break now (after hand edits, say).\n"),
    ("guides/history/table-history", "# Table history\n\nTime travel (select_rows with version or timestamp) reads a table's transaction log. This engine does not keep the log yet.\n"),
];

/// A page by name (`reference/operations#insert_row`), or the index.
pub fn read(page: Option<&str>) -> Value {
    let Some(page) = page else {
        let mut names: Vec<&str> = PAGES.iter().map(|(p, _)| *p).collect();
        names.push("reference/operations");
        return json!({"pages": names});
    };
    let (name, anchor) = page.split_once('#').unwrap_or((page, ""));
    if name == "reference/operations" {
        let mut text = String::from("# Operations\n");
        for o in OPS.iter().filter(|o| anchor.is_empty() || o.name == anchor) {
            text.push_str(&format!(
                "\n## {}\n\n{} — {}\n\nArguments: {}\n",
                o.name,
                o.title,
                o.description,
                o.params
                    .iter()
                    .map(|p| format!("{}{} ({})", p.name, if p.required { " (required)" } else { "" }, p.description))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        return json!({"page": page, "text": text});
    }
    match PAGES.iter().find(|(p, _)| *p == name) {
        Some((_, text)) => json!({"page": page, "text": text}),
        None => {
            json!({"page": page, "text": null, "pages": PAGES.iter().map(|(p, _)| *p).chain(["reference/operations"]).collect::<Vec<_>>()})
        }
    }
}
