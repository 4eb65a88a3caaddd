//! Tokens that may not write as they like (`datanotes token add NAME
//! --propose | --read-only`). A propose-only token's writes wait for a
//! person's review: a row write is staged into a proposal — the one it names,
//! else the token's own, named after it — whatever the agent asks; a read sees
//! the vault; any other write (the schema, an undo, an accept, the settings,
//! webhooks) is refused, since it would land without review. A read-only
//! token reads; every write, staged or not, is refused.

use crate::token::Mode;
use datanotes_core::error::Failure;
use datanotes_core::ops::registry::{spec, Access};
use datanotes_core::Outcome;
use serde_json::Value;

/// The call as a token of `mode` may make it: its arguments (for a
/// propose-only token, with the proposal it goes to), or the refusal to answer.
pub fn as_limited(op: &str, mut args: Value, token: &str, mode: Mode) -> Result<Value, Box<Outcome>> {
    // An unknown operation is the engine's to refuse, with its did-you-mean.
    let Some(s) = spec(op) else { return Ok(args) };
    if s.access == Access::Read || mode == Mode::Write {
        return Ok(args);
    }
    if mode == Mode::ReadOnly {
        let why = format!("the token \"{token}\" is read-only, and {op} writes");
        let hint = "Read with this token; the vault's owner makes the writes, or gives a token that writes (datanotes token add NAME, or --propose for writes that wait for review).";
        return Err(Box::new(Outcome::failed(&Failure::refused(op, vec![why], hint))));
    }
    if !s.facts.stageable {
        let why = format!("the token \"{token}\" proposes its writes for review, and {op} cannot wait for one");
        let hint = "A row write (insert_row, update_row, delete_rows, …) made with this token waits in its proposal for a person to accept; the vault's owner runs the rest.";
        return Err(Box::new(Outcome::failed(
            &Failure::refused(op, vec![why], hint).with_docs("guides/history/proposals"),
        )));
    }
    if let Some(m) = args.as_object_mut() {
        if m.get("proposal").is_none_or(|p| p.as_str().is_none_or(|p| p.trim().is_empty())) {
            m.insert("proposal".into(), token.into());
        }
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use datanotes_core::Status;
    use serde_json::json;

    #[test]
    fn a_row_write_goes_to_a_proposal_a_read_passes_any_other_write_is_refused() {
        let as_proposal = |op: &str, args: Value, token: &str| as_limited(op, args, token, Mode::Propose);
        let staged = as_proposal("update_row", json!({"table": "film"}), "agent").unwrap();
        assert_eq!(staged["proposal"], "agent");
        let named = as_proposal("insert_row", json!({"table": "film", "proposal": "tidy-up"}), "agent").unwrap();
        assert_eq!(named["proposal"], "tidy-up", "a proposal the agent names is kept");
        assert_eq!(as_proposal("select_rows", json!({"table": "film"}), "agent").unwrap(), json!({"table": "film"}));
        for op in ["drop_table", "accept_proposal", "undo_migration", "configure_database"] {
            let out = as_proposal(op, json!({}), "agent").unwrap_err();
            assert_eq!(out.status, Status::Refused, "{op}");
            let error = out.answer["error"].as_str().unwrap_or_default();
            assert!(error.contains("proposes its writes for review"), "{op}: {}", out.answer);
        }
    }

    #[test]
    fn a_read_only_token_reads_and_every_write_is_refused() {
        let read = |op: &str, args: Value| as_limited(op, args, "reader", Mode::ReadOnly);
        assert_eq!(read("select_rows", json!({"table": "film"})).unwrap(), json!({"table": "film"}));
        for op in ["update_row", "insert_row", "drop_table", "configure_database"] {
            let out = read(op, json!({"proposal": "p"})).unwrap_err();
            assert_eq!(out.status, Status::Refused, "{op}");
            assert!(out.answer["error"].as_str().unwrap_or_default().contains("is read-only"), "{op}: {}", out.answer);
        }
        assert_eq!(
            as_limited("drop_table", json!({}), "owner", Mode::Write).unwrap(),
            json!({}),
            "a token that writes passes"
        );
    }
}
