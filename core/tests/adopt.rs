//! A folder of notes the person already has, declared as a table without
//! rewriting the notes; and writes that refuse stale reads.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{finish_ok, note};
use datanotes_core::{Edit, Engine, NoteFile, Outcome, Status};
use serde_json::{json, Value};

/// 300 books in nested folders, with the front matter real vaults hold.
fn books() -> Vec<NoteFile> {
    let mut files = vec![note("datanotes/metastore.yaml", "version: 1\ntables: {}\n")];
    for i in 0..300 {
        let folder = match i % 3 {
            0 => "Books".to_string(),
            1 => format!("Books/{}", 2020 + i % 5),
            _ => format!("Books/{}/shelf {}", 2020 + i % 5, i % 7),
        };
        let text = match i % 6 {
            0 => format!("---\ntitle: \"Book {i}: a story\"\nisbn: 0811858{i:03}\npages: {}\ntags:\n- \n- fiction\n---\nNotes on book {i}.\n", 100 + i),
            1 => format!("---\ntitle: Book {i} # from the library\npages: {}\ncreated: {{{{date}}}}\n---\n", 100 + i),
            2 => format!("---\r\ntitle: 'Book {i}'\r\npages: {}\r\n---\r\nCRLF note.\r\n", 100 + i),
            3 => format!("---\ntitle: Book {i}\npages: {}\nread: true\n---\n", 100 + i),
            4 => format!("---\ntitle: Book {i}\n# a comment\npages: {}\n---\n", 100 + i),
            _ => format!("---\ntitle: Book {i}: the sequel\npages: {}\n---\n", 100 + i),
        };
        files.push(note(&format!("{folder}/note-{i:03}.md"), &text));
    }
    files
}

fn call(e: &mut Engine, op: &str, args: Value) -> (Outcome, Vec<Edit>) {
    let out = e.call(op, args, "test", 1_790_000_000_000);
    finish_ok(e, out)
}

#[test]
fn a_folder_of_existing_notes_becomes_a_table_without_rewriting_them() {
    let files = books();
    let before: Vec<(String, String)> = files.iter().map(|f| (f.path.clone(), f.text.clone())).collect();
    let mut e = Engine::open(files, vec![]);
    let (inferred, _) = call(&mut e, "infer_table", json!({"folder": "Books"}));
    let cols = inferred.answer["columns"].as_array().unwrap();
    let names: Vec<&str> = cols.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"title") && names.contains(&"pages") && names.contains(&"isbn"), "{names:?}");
    assert_eq!(inferred.answer["files"], 300);
    let (out, edits) = call(
        &mut e,
        "create_table",
        json!({"table": "book", "folder": "Books", "columns": {
            "title": {"type": "text", "required": true}, "pages": {"type": "integer"}, "isbn": {"type": "text"},
            "tags": {"type": "list", "items": "text"}, "read": {"type": "boolean"}}}),
    );
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    // The answer says what the folder held, and how much of it breaks the rules.
    assert_eq!((&out.answer["rows_found"], &out.answer["rows_breaking_rules"]), (&json!(300), &json!(50)));
    assert_eq!(
        out.answer["hint"],
        "50 of the 300 notes already in Books/ break the rules of book, kept as written: check_table {\"table\": \"book\"} lists what each breaks"
    );
    // Only the schema file (and the table's Bases file) is written: no note is touched.
    assert!(
        edits.iter().all(|e| e.path() == "datanotes/metastore.yaml" || e.path() == "datanotes/bases/book.base"),
        "{edits:?}"
    );
    let (sel, _) = call(
        &mut e,
        "select_rows",
        json!({"table": "book", "where": {"pages": {"gte": 390}}, "columns": ["title", "isbn"], "limit": 1000}),
    );
    assert_eq!(sel.answer["total"], 8, "{}", sel.answer);
    let (all, _) = call(
        &mut e,
        "select_rows",
        json!({"table": "book", "columns": ["isbn"], "where": {"isbn": {"starts_with": "0811858"}}, "limit": 1000}),
    );
    assert_eq!(all.answer["total"], 50, "leading zeros stay text: {}", all.answer);
    assert_eq!(all.answer["rows"][0]["isbn"], "0811858000");
    let (desc, _) = call(&mut e, "describe_database", json!({"table": "book"}));
    // Unquoted ": " in a title: those notes cannot be read, and are counted apart.
    assert_eq!(desc.answer["tables"][0]["unreadable_count"], 50);
    assert_eq!(desc.answer["tables"][0]["row_count"], 250);
    // The `{{date}}` placeholder is not a declared column: nothing breaks.
    let (check, _) = call(&mut e, "check_table", json!({"table": "book"}));
    assert_eq!(check.answer["total"], 50, "only the unreadable notes: {}", check.answer);
    for (p, t) in before.iter().filter(|(p, _)| p.ends_with(".md")) {
        assert_eq!(e.vault().text(p), Some(t.as_str()), "{p} was rewritten");
    }
}

#[test]
fn the_first_write_to_an_adopted_note_gives_it_an_id_and_keeps_every_other_byte() {
    let mut e = Engine::open(books(), vec![]);
    // A dry run says what the write would: 2 and 212 read, 107's title does not.
    let (dry, _) = call(
        &mut e,
        "create_table",
        json!({"table": "book", "folder": "Books/2022/shelf 2", "columns": {"title": {"type": "text"}}, "dry_run": true}),
    );
    assert_eq!(
        (&dry.answer["rows_found"], &dry.answer["rows_breaking_rules"]),
        (&json!(3), &json!(1)),
        "{}",
        dry.answer
    );
    assert_eq!(
        dry.answer["hint"],
        "1 of the 3 notes already in Books/2022/shelf 2/ breaks the rules of book, kept as written: check_table {\"table\": \"book\"} lists what each breaks"
    );
    // Notes that all keep the rules: counted, no hint; an empty folder: neither.
    let mut small = Engine::open(
        vec![
            note("datanotes/metastore.yaml", "version: 1\ntables: {}\n"),
            note("Shelves/A.md", "---\ntitle: A\n---\n"),
        ],
        vec![],
    );
    let (kept, _) = call(
        &mut small,
        "create_table",
        json!({"table": "shelf", "folder": "Shelves", "columns": {"title": {"type": "text"}}}),
    );
    assert_eq!(
        (&kept.answer["rows_found"], &kept.answer["rows_breaking_rules"]),
        (&json!(1), &json!(0)),
        "{}",
        kept.answer
    );
    assert!(kept.answer.get("hint").is_none(), "{}", kept.answer);
    let (empty, _) = call(&mut small, "create_table", json!({"table": "box", "folder": "Boxes"}));
    assert!(empty.answer.get("rows_found").is_none(), "{}", empty.answer);
    call(
        &mut e,
        "create_table",
        json!({"table": "book", "folder": "Books", "columns": {"title": {"type": "text"}, "pages": {"type": "integer"}}}),
    );
    let path = "Books/2022/shelf 2/note-002.md";
    let (out, edits) = call(&mut e, "update_row", json!({"table": "book", "path": path, "set": {"pages": 999}}));
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    let Edit::Write { text, .. } = &edits[0] else { panic!("{edits:?}") };
    assert!(text.starts_with("---\r\ntitle: 'Book 2'\r\npages: 999\r\nid: "), "{text:?}");
    assert!(text.ends_with("\r\n---\r\nCRLF note.\r\n"), "{text:?}");
    // Dropping the table leaves the person's notes where they are (its Bases file goes).
    let (out, edits) = call(&mut e, "drop_table", json!({"table": "book"}));
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    assert!(
        edits.iter().all(|e| e.path() == "datanotes/metastore.yaml" || e.path() == "datanotes/bases/book.base"),
        "{edits:?}"
    );
}

#[test]
fn a_write_from_a_stale_read_is_refused_with_the_current_values() {
    let mut e = Engine::open(books(), vec![]);
    call(
        &mut e,
        "create_table",
        json!({"table": "book", "folder": "Books", "columns": {"title": {"type": "text"}, "pages": {"type": "integer"}}}),
    );
    let path = "Books/note-003.md";
    let (read, _) = call(&mut e, "select_rows", json!({"table": "book", "where": {"path": path}}));
    let token = read.answer["rows"][0]["_version"].as_str().unwrap().to_string();
    assert_eq!(token.len(), 16);
    let (note, _) = call(&mut e, "read_note", json!({"path": path}));
    assert_eq!(note.answer["_version"], token.as_str());
    // Someone else writes in between.
    let (out, _) = call(&mut e, "update_row", json!({"table": "book", "path": path, "set": {"pages": 1}}));
    assert_eq!(out.status, Status::Ok);
    let stale = json!({"table": "book", "path": path, "set": {"pages": 2}, "if_match": token});
    let (out, edits) = call(&mut e, "update_row", stale);
    assert_eq!(out.status, Status::Refused);
    assert!(edits.is_empty());
    let err = out.answer["error"].as_str().unwrap();
    assert!(err.contains("changed since it was read") && err.contains("Hint: Read the rows again"), "{err}");
    assert_eq!(out.answer["current"][0]["pages"], 1);
    let fresh = out.answer["current"][0]["_version"].as_str().unwrap().to_string();
    let (out, _) = call(
        &mut e,
        "update_rows",
        json!({"table": "book", "where": {"path": path}, "set": {"pages": 2}, "if_match": {path: fresh}}),
    );
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    // dry_run shows the plan and writes nothing.
    let (out, edits) =
        call(&mut e, "update_row", json!({"table": "book", "path": path, "set": {"pages": 3}, "dry_run": true}));
    assert_eq!(out.answer["dry_run"], true);
    assert_eq!(out.answer["planned_edits"][0]["set"]["pages"], 3);
    assert!(edits.is_empty());
    assert!(e.vault().text(path).unwrap().contains("pages: 2"));
}
