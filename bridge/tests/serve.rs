//! End to end: the real binary's `serve` on a temporary film diary, over HTTP on
//! a free loopback port, with a client made of a bare TCP stream.

mod common;

use common::{op_as, request, snapshot, start, vault, BIN};
use datanotes_core::ops::registry::{Access, OPS};
use serde_json::json;
use std::fs;
use std::process::Command;
use std::time::Duration;

const TOKEN: &str = "serve-test-token-5f1c0a9e7b3d";
const CHARADE: &str = "datanotes/main/public/film/Charade.md";

#[test]
fn reads_writes_and_refusals() {
    let s = start(&vault("rw"), Some(TOKEN));
    assert!(s.stdout.starts_with("datanotes: serving "), "{}", s.stdout);
    assert!(s.stdout.contains("token from DATANOTES_TOKEN"), "{}", s.stdout);

    let r = op_as(&s, TOKEN, "select_rows", r#"{"table": "film", "columns": ["title", "year"], "order_by": "year"}"#);
    assert_eq!(r.status, 200, "{}", r.body);
    let a = r.json();
    assert_eq!(a["total"], 7);
    let rows = a["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 7);
    assert!(rows.iter().all(|r| r["title"].is_string() && r["path"].is_string()), "{}", r.body);
    let years: Vec<i64> = rows.iter().map(|r| r["year"].as_i64().unwrap()).collect();
    assert!(years.windows(2).all(|w| w[0] <= w[1]), "ordered by year: {years:?}");

    // Without the trailing slash too, and an empty body is {}.
    let r = request(&s.addr, "POST", "/datanotes/operations/describe_database", Some(TOKEN), &[], vec![]);
    assert_eq!(r.status, 200, "{}", r.body);

    let r = op_as(&s, TOKEN, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["ok"], true);
    let text = fs::read_to_string(s.vault.join(CHARADE)).unwrap();
    assert!(text.contains("\nrating: 4\n"), "{text}");

    // The journal records the owner's token as the actor.
    let r = op_as(&s, TOKEN, "list_migrations", r#"{"limit": 1}"#);
    assert_eq!(r.json()["migrations"][0]["by"], "owner", "{}", r.body);

    let before = snapshot(&s.vault, "");
    let r = op_as(&s, TOKEN, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 9}}));
    assert_eq!(r.status, 409, "{}", r.body);
    let err = r.json()["error"].as_str().unwrap().to_string();
    assert!(err.contains("update_row refused") && err.contains("rating_range") && err.contains("Hint: "), "{err}");
    assert_eq!(snapshot(&s.vault, ""), before, "a refusal writes nothing");

    // One line per request on stderr: method, path, status, milliseconds.
    std::thread::sleep(Duration::from_millis(100));
    let log = s.log();
    assert!(
        log.lines().any(|l| l.contains("POST /datanotes/operations/update_row/ 409 ") && l.ends_with("ms")),
        "{log}"
    );
}

#[test]
fn bad_input_changes_nothing() {
    let s = start(&vault("bad"), Some(TOKEN));
    let write = json!({"table": "film", "path": CHARADE, "set": {"rating": 1}}).to_string();
    let before = snapshot(&s.vault, "");

    // (what, token, body, status, what the error says)
    type Case<'a> = (&'a str, Option<&'a str>, Vec<u8>, u16, &'a str);
    let cases: Vec<Case> = vec![
        ("malformed JSON", Some(TOKEN), br#"{"table": "film", "set": "#.to_vec(), 400, "not JSON"),
        ("a JSON array", Some(TOKEN), br#"[{"table": "film"}]"#.to_vec(), 400, "must be a JSON object"),
        (
            "an unknown argument",
            Some(TOKEN),
            br#"{"table": "film", "path": "datanotes/main/public/film/Charade.md", "sett": {"rating": 1}}"#.to_vec(),
            400,
            "unknown argument \"sett\"",
        ),
        (
            "a mistyped argument",
            Some(TOKEN),
            br#"{"table": "film", "path": "datanotes/main/public/film/Charade.md", "set": "rating=1"}"#.to_vec(),
            400,
            "set",
        ),
        ("a missing argument", Some(TOKEN), br#"{"table": "film", "set": {"rating": 1}}"#.to_vec(), 400, "path"),
        (
            "path traversal",
            Some(TOKEN),
            br#"{"table": "film", "path": "../../etc/passwd", "set": {"rating": 1}}"#.to_vec(),
            400,
            "not a path inside the vault",
        ),
        ("no token", None, write.as_bytes().to_vec(), 401, "bearer token"),
        ("a wrong token", Some("serve-test-token-5f1c0a9e7b3e"), write.as_bytes().to_vec(), 401, "wrong bearer token"),
        ("a shorter token", Some("serve"), write.as_bytes().to_vec(), 401, "wrong bearer token"),
        (
            "a body over 4 MiB",
            Some(TOKEN),
            {
                let mut b = format!(r#"{{"table": "film", "path": "{CHARADE}", "body": ""#).into_bytes();
                b.resize(5 << 20, b'x');
                b.extend_from_slice(b"\"}");
                b
            },
            413,
            "larger than 4 MiB",
        ),
    ];
    for (what, token, body, status, says) in cases {
        let r = request(&s.addr, "POST", "/datanotes/operations/update_row/", token, &[], body);
        assert_eq!(r.status, status, "{what}: {}", r.body);
        let err = r.json()["error"].as_str().unwrap_or_else(|| panic!("{what}: no error in {}", r.body)).to_string();
        assert!(err.contains(says), "{what}: {err}");
    }
    // An unknown operation: bad input, as core answers it.
    let r = op_as(&s, TOKEN, "update_rowz", "{}");
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("did you mean"), "{}", r.body);
    // A route that does not exist.
    let r = request(&s.addr, "GET", "/nothing", Some(TOKEN), &[], vec![]);
    assert_eq!(r.status, 404);
    assert!(r.json()["error"].is_string());

    assert_eq!(snapshot(&s.vault, ""), before, "bad input writes nothing");
    // The server still serves.
    assert_eq!(op_as(&s, TOKEN, "select_rows", r#"{"table": "film", "limit": 1}"#).status, 200);
}

#[test]
fn openapi_lists_every_operation() {
    let s = start(&vault("openapi"), Some(TOKEN));
    let r = request(&s.addr, "GET", "/datanotes/openapi.json", None, &[], vec![]);
    assert_eq!(r.status, 200, "{}", r.body);
    let d = r.json();
    assert_eq!(d["openapi"], "3.1.0");
    assert_eq!(d["servers"][0]["url"], format!("http://{}", s.addr));
    assert_eq!(d["components"]["securitySchemes"]["bearer"]["scheme"], "bearer");
    assert_eq!(d["paths"].as_object().unwrap().len(), OPS.len());
    for op in OPS {
        let post = &d["paths"][format!("/datanotes/operations/{}/", op.name)]["post"];
        assert_eq!(post["operationId"], op.name, "{} is listed", op.name);
        assert_eq!(post["requestBody"]["content"]["application/json"]["schema"], op.input_schema());
        let responses = post["responses"].as_object().unwrap();
        for code in ["200", "400", "401", "409", "500"] {
            assert!(responses.contains_key(code), "{} answers {code}", op.name);
        }
        assert_eq!(responses.contains_key("503"), op.access != Access::Read, "{}: 503 for writes", op.name);
        // Bad input is the engine's refusal, or the server's own error (a body not JSON).
        let bad = &responses["400"]["content"]["application/json"]["schema"]["anyOf"];
        assert_eq!(bad[0]["$ref"], "#/components/schemas/Refusal");
        assert_eq!(bad[1]["$ref"], "#/components/schemas/Error");
        // Done: the operation's own answer schema, the one MCP's outputSchema holds.
        assert_eq!(responses["200"]["content"]["application/json"]["schema"], op.output_schema()["anyOf"][0]);
        assert_eq!(responses["409"]["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/Refusal");
    }
}

#[test]
fn the_token_file_is_made_for_the_owner_alone() {
    let dir = vault("token");
    let s = start(&dir, None);
    let file = dir.join(".datanotes/token");
    assert!(s.stdout.contains(&format!("token in {}", file.display())), "{}", s.stdout);
    let token = fs::read_to_string(&file).unwrap().trim().to_string();
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|c| c.is_ascii_hexdigit()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    }
    assert_eq!(op_as(&s, &token, "describe_database", "{}").status, 200);
    assert_eq!(op_as(&s, TOKEN, "describe_database", "{}").status, 401);
    drop(s);

    // The next start reads the same token.
    let dir = vault("token2");
    fs::create_dir_all(dir.join(".datanotes")).unwrap();
    fs::write(dir.join(".datanotes/token"), "kept-token\n").unwrap();
    let s = start(&dir, None);
    assert_eq!(op_as(&s, "kept-token", "describe_database", "{}").status, 200);
}

#[test]
fn a_non_loopback_address_needs_allow_remote() {
    let dir = vault("remote");
    let out = Command::new(BIN)
        .args(["serve", "--vault"])
        .arg(&dir)
        .args(["--listen", "0.0.0.0:0"])
        .env("DATANOTES_TOKEN", TOKEN)
        .output()
        .unwrap();
    let _ = fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-remote"), "{err}");
    assert!(out.stdout.is_empty());
}
