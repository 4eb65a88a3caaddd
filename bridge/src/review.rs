//! A propose-only token (`datanotes token add NAME --propose`): every write it
//! makes waits for a person's review. A row write is staged into a proposal —
//! the one it names, else the token's own, named after it — whatever the agent
//! asks; a read sees the vault; any other write (the schema, an undo, an accept,
//! the settings, webhooks) is refused, since it would land without review.

use datanotes_core::error::Failure;
use datanotes_core::ops::registry::{spec, Access};
use datanotes_core::Outcome;
use serde_json::Value;

/// The call as a propose-only token may make it: its arguments, with the
/// proposal it goes to, or the refusal to answer.
pub fn as_proposal(op: &str, mut args: Value, token: &str) -> Result<Value, Box<Outcome>> {
    // An unknown operation is the engine's to refuse, with its did-you-mean.
    let Some(s) = spec(op) else { return Ok(args) };
    if s.access == Access::Read {
        return Ok(args);
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
}
