//! What a write refused for the rules it would break says: the way out that
//! fits what broke. A link that names no row is told the nearest row's name
//! (an agent that typed "Fritz Lnag" learns "Fritz Lang"), and how rows are
//! named, listed and made; a value another row holds, that row; rows the write
//! does not write but breaks through their links, to change those first;
//! anything else the general advice.

use crate::names;
use crate::schema::short;
use crate::validate::{Ctx, Violation};

const GENERAL: &str = "Fix the values so every rule holds (check_table shows the rules a table's rows break now), or change the rule with alter_column / drop_check.";

const LINKERS: &str = "The rows listed that this write does not write link to rows it changes, takes away or moves, and would break their rules then: change those rows first (update_row, update_rows), then run it again.";

/// Ways out said, at most: a write that breaks many rows is told the first.
const SAID: usize = 3;

/// Only the first rows a refusal lists, this many, have their links to no row
/// given the nearest row's name.
pub(crate) const NAMED_ROWS: usize = 20;

/// A row the write would leave breaking rules: its path, whether the write
/// makes it or writes it (or only checks it: a row linking to one it writes),
/// and the violations it would bring.
pub(crate) struct Broken<'a> {
    pub path: &'a str,
    pub new: bool,
    pub written: bool,
    pub violations: Vec<Violation>,
}

/// The hint for the new violations of a refused write.
pub(crate) fn rules_hint(broken: &[Broken]) -> String {
    let mut said: Vec<String> = vec![];
    let mut general = false;
    for b in broken {
        for v in &b.violations {
            match way_out(b, v) {
                Some(w) if !said.contains(&w) => said.push(w),
                Some(_) => {}
                None => general = true,
            }
        }
    }
    said.truncate(SAID);
    if general || said.is_empty() {
        said.push(GENERAL.into());
    }
    said.join(" ")
}

/// A link to no row, as validate.rs says it: its target and the table it
/// names a row of.
fn missing(v: &Violation) -> Option<(&str, &str)> {
    let (target, rest) = v.message.strip_prefix("[[")?.split_once("]] does not resolve to a row of ")?;
    Some((target, rest.split(' ').next().unwrap_or(rest)))
}

/// Each link to no row gets the name of the row nearest to what it names, when
/// one is near: the line and the field that show it say what was meant. Done
/// for a refusal only, for the rows it writes (a link the write made), and for
/// `NAMED_ROWS` of them: check_table and hand edits report links by the
/// thousand, and the nearest name costs a pass over the table.
pub(crate) fn name_near_rows(ctx: &Ctx, violations: &mut [Violation]) {
    for v in violations.iter_mut().filter(|v| v.code == "broken_link") {
        let Some((target, table)) = missing(v) else { continue };
        let stems = ctx.vault.table_rows(table).map(names::note_name);
        if let Some(near) = names::closest(target, stems) {
            v.message = format!("{} (did you mean [[{near}]]?)", v.message);
        }
    }
}

fn way_out(b: &Broken, v: &Violation) -> Option<String> {
    // A row the write does not write: it kept its rules until the write
    // changed, took away or moved a row it links to.
    if !b.written {
        return Some(LINKERS.into());
    }
    match v.code {
        "broken_link" => {
            let t = short(missing(v)?.1);
            Some(format!(
                "A link names a row of {t} by its note's name: select_rows {{\"table\": \"{t}\"}} lists them, insert_row {{\"table\": \"{t}\", …}} makes one."
            ))
        }
        // validate.rs: "<value> is also the value of <path>"
        "unique" => {
            let (_, other) = v.message.split_once(" is also the value of ")?;
            let column = v.column.as_deref()?;
            let this = if b.new { "the new row" } else { "this row" };
            Some(format!("{other} holds that {column} already: change that row with update_row, or give {this} another {column}."))
        }
        _ => None,
    }
}
