//! What a write refused for the rules it would break says: the way out that
//! fits what broke. A link that names no row is told the nearest row's name
//! (an agent that typed "Fritz Lnag" learns "Fritz Lang"), and how rows are
//! named, listed and made; a value another row holds, that row; anything else
//! the general advice.

use crate::names;
use crate::schema::short;
use crate::validate::{Ctx, Violation};

const GENERAL: &str = "Fix the values so every rule holds (check_table shows the rules a table's rows break now), or change the rule with alter_column / drop_check.";

/// Ways out said, at most: a write that breaks many rows is told the first.
const SAID: usize = 3;

/// A row the write would leave breaking rules: whether the write makes it,
/// and the violations it would bring.
pub(crate) struct Broken<'a> {
    pub new: bool,
    pub violations: &'a [Violation],
}

/// The hint for the new violations of a refused write.
pub(crate) fn rules_hint(broken: &[Broken]) -> String {
    let mut said: Vec<String> = vec![];
    let mut general = false;
    for b in broken {
        for v in b.violations {
            match way_out(b.new, v) {
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
/// for a refusal only: check_table and hand edits report links by the
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

fn way_out(new: bool, v: &Violation) -> Option<String> {
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
            let this = if new { "the new row" } else { "this row" };
            Some(format!("{other} holds that {column} already: change that row with update_row, or give {this} another {column}."))
        }
        _ => None,
    }
}
