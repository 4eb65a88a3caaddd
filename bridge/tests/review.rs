//! Issue 56, point 2: a token made with `datanotes token add NAME --propose`
//! proposes every write it makes. Through serve, its row writes are staged in
//! its proposal (named after it) and the notes stay byte for byte; its other
//! writes are refused; its reads see the vault; the owner accepts three of
//! its four writes and exactly those land, as one journaled write.

mod common;

use common::{datanotes_as, op_as, start, vault};
use serde_json::json;

const TOKEN: &str = "review-test-token-5d1c07e9b2";
const FILM: &str = "datanotes/main/public/film";

#[test]
fn a_propose_only_tokens_writes_wait_for_review_and_land_as_accepted() {
    let dir = vault("review");
    let s = start(&dir, Some(TOKEN));
    let added =
        datanotes_as(&["token", "add", "agent-bot", "--propose", "--vault", dir.to_str().unwrap()], Some(TOKEN));
    let agent = added.stdout.split_whitespace().find(|w| w.len() == 64).unwrap_or_default().to_string();
    assert_eq!(agent.len(), 64, "{added:?}");
    let listed = datanotes_as(&["token", "list", "--vault", dir.to_str().unwrap()], Some(TOKEN));
    assert!(listed.stdout.contains("\"mode\": \"propose\""), "{listed:?}");

    let note = |t: &str| s.read(&format!("{FILM}/{t}.md"));
    let before: Vec<String> = ["Charade", "Metropolis", "Nosferatu"].iter().map(|t| note(t)).collect();
    for (title, rating) in [("Charade", 4), ("Metropolis", 3), ("Nosferatu", 2)] {
        let set = json!({"table": "film", "path": format!("{FILM}/{title}.md"), "set": {"rating": rating}});
        let r = op_as(&s, &agent, "update_row", &set);
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.json()["staged"], true, "{}", r.body);
        assert_eq!(r.json()["proposal"], "agent-bot", "{}", r.body);
    }
    let ins = op_as(&s, &agent, "insert_row", json!({"table": "film", "values": {"title": "Playtime", "year": 1967}}));
    assert_eq!(ins.status, 200, "{}", ins.body);
    let after: Vec<String> = ["Charade", "Metropolis", "Nosferatu"].iter().map(|t| note(t)).collect();
    assert_eq!(before, after, "the notes stay byte for byte");
    assert!(!dir.join(FILM).join("Playtime.md").exists(), "nothing inserted yet");

    // Its reads see the vault; its other writes are refused, the accept of its own proposal too.
    let read = op_as(&s, &agent, "read_note", json!({"path": format!("{FILM}/Charade.md")}));
    assert_eq!(read.status, 200, "{}", read.body);
    for (op, args) in [
        ("drop_table", json!({"table": "film"})),
        ("accept_proposal", json!({"proposal": "agent-bot"})),
        ("configure_database", json!({"bases": false})),
    ] {
        let r = op_as(&s, &agent, op, &args);
        assert_eq!(r.status, 409, "{op}: {}", r.body);
        assert!(r.error().contains("proposes its writes for review"), "{op}: {}", r.body);
    }
    assert!(dir.join("datanotes/main/public/film").is_dir(), "the table is still there");

    // The owner accepts three of the four: exactly those land, as one write.
    let shown = op_as(&s, TOKEN, "list_proposals", "{}").json();
    assert_eq!(shown["proposals"][0]["name"], "agent-bot", "{shown}");
    assert_eq!(shown["proposals"][0]["author"], "agent-bot", "{shown}");
    assert_eq!(shown["proposals"][0]["writes"], 4, "{shown}");
    let a = op_as(&s, TOKEN, "accept_proposal", json!({"proposal": "agent-bot", "writes": [1, 2, 4]}));
    assert_eq!(a.status, 200, "{}", a.body);
    assert!(note("Charade").contains("\nrating: 4\n") && note("Metropolis").contains("\nrating: 3\n"));
    assert_eq!(note("Nosferatu"), before[2], "the write not accepted waits");
    assert!(dir.join(FILM).join("Playtime.md").exists());
    let journal = op_as(&s, TOKEN, "list_migrations", r#"{"limit": 1}"#).json();
    assert_eq!(journal["migrations"][0]["op"], "accept_proposal", "{journal}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 55, point 4's per-token modes: a read-only token reads, and every
/// write of its, staged or not, is refused with nothing written.
#[test]
fn a_read_only_token_reads_and_writes_nothing() {
    let dir = vault("read-only");
    let s = start(&dir, Some(TOKEN));
    let added = datanotes_as(&["token", "add", "reader", "--read-only", "--vault", dir.to_str().unwrap()], Some(TOKEN));
    let reader = added.stdout.split_whitespace().find(|w| w.len() == 64).unwrap_or_default().to_string();
    assert_eq!(reader.len(), 64, "{added:?}");
    let both =
        datanotes_as(&["token", "add", "x", "--read-only", "--propose", "--vault", dir.to_str().unwrap()], Some(TOKEN));
    assert_eq!(both.code, 2, "one mode at a time: {both:?}");
    let charade = format!("{FILM}/Charade.md");
    let before = s.read(&charade);
    let read = op_as(&s, &reader, "select_rows", json!({"table": "film", "limit": 1}));
    assert_eq!(read.status, 200, "{}", read.body);
    for args in [
        json!({"table": "film", "path": charade, "set": {"rating": 1}}),
        json!({"table": "film", "path": charade, "set": {"rating": 1}, "proposal": "p"}),
    ] {
        let r = op_as(&s, &reader, "update_row", &args);
        assert_eq!(r.status, 409, "{}", r.body);
        assert!(r.error().contains("is read-only"), "{}", r.body);
    }
    assert_eq!(s.read(&charade), before, "nothing written");
    assert_eq!(op_as(&s, TOKEN, "list_proposals", "{}").json()["proposals"], json!([]), "nothing staged");
    let _ = std::fs::remove_dir_all(&dir);
}
