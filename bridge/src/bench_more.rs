//! The benchmark's history, hand-edit and reopen figures (engine time, in memory).

use crate::bench_vault::Host;
use datanotes_core::{Engine, NoteFile, Step, StoreFile, VaultEvent};
use serde_json::{json, Value};
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

const ONE: &str = "version: 1\ntables:\n  main.public.item:\n    name_from: name\n    columns:\n      name: {type: text, required: true}\n      n: {type: integer}\n      v: {type: integer}\n";

fn item(i: usize, v: usize) -> String {
    format!("---\ntable: main.public.item\nid: 01a0c048-0000-7000-8000-{i:012x}\nname: Item {i}\nn: {i}\nv: {v}\n---\nItem {i}.\n")
}

fn items(rows: usize) -> Vec<NoteFile> {
    let mut files = vec![NoteFile { path: "datanotes/metastore.yaml".into(), text: ONE.into(), mtime: 0 }];
    files.extend((0..rows).map(|i| NoteFile {
        path: format!("datanotes/main/public/item/Item {i}.md"),
        text: item(i, 0),
        mtime: 0,
    }));
    files
}

/// A table of `rows` rows after `commits` commits of 10 rows each.
pub fn history(rows: usize, commits: usize) -> Value {
    let mut h = Host::new(items(rows));
    let t = Instant::now();
    for c in 0..commits {
        let ns: Vec<usize> = (0..10).map(|k| (c * 10 + k) % rows).collect();
        h.call("update_rows", json!({"table": "item", "where": {"n": {"in": ns}}, "set": {"v": c + 1}}));
    }
    let write_all_ms = ms(t);
    let log_bytes: usize = h
        .store()
        .iter()
        .filter(|(p, _)| p.starts_with("log/") && !p.ends_with(".checkpoint.json"))
        .map(|(_, t)| t.len())
        .sum();
    let checkpoint_bytes: usize =
        h.store().iter().filter(|(p, _)| p.ends_with(".checkpoint.json")).map(|(_, t)| t.len()).sum();
    let latest = commits as u64;
    let (v1_page_ms, _) = h.call("select_rows", json!({"table": "item", "version": 1}));
    let (latest_page_ms, _) = h.call("select_rows", json!({"table": "item", "version": latest}));
    let (v1_ms, v1) = h.call("select_rows", json!({"table": "item", "version": 1, "limit": 10000}));
    let (v1_again_ms, _) = h.call("select_rows", json!({"table": "item", "version": 1, "limit": 10000}));
    let (latest_ms, _) = h.call("select_rows", json!({"table": "item", "version": latest, "limit": 10000}));
    let (hist_ms, _) = h.call("describe_history", json!({"table": "item", "limit": 50}));
    let (cdf_ms, cdf) =
        h.call("table_changes", json!({"table": "item", "start_version": latest - 99, "end_version": latest}));
    let (restore_ms, restore) =
        h.call("restore_table", json!({"table": "item", "version": latest.saturating_sub(100), "dry_run": true}));
    // Last, as it changes the table: the restore itself, edits planned and checked.
    let (restore_done_ms, done) =
        h.call("restore_table", json!({"table": "item", "version": latest.saturating_sub(100)}));
    let git_ms = git_first_version_ms(rows, commits);
    json!({
        "rows": rows,
        "commits": commits,
        "git_read_version_1_ms": git_ms,
        "read_version_1_vs_git": git_ms.map(|g| ((v1_ms / g) * 100.0).round() / 100.0),
        "write_10_rows_ms_mean": (write_all_ms / commits as f64 * 1000.0).round() / 1000.0,
        "read_version_1_first_page_ms": v1_page_ms,
        "read_latest_first_page_ms": latest_page_ms,
        "read_version_1_ms": v1_ms,
        "read_version_1_again_ms": v1_again_ms,
        "read_version_1_rows": v1["total"],
        "read_latest_ms": latest_ms,
        "describe_history_50_ms": hist_ms,
        "table_changes_100_versions_ms": cdf_ms,
        "table_changes_rows": cdf["changes"].as_array().map_or(0, Vec::len),
        "restore_1000_changed_rows_dry_run_ms": restore_ms,
        "restore_texts": restore["texts"],
        "restore_1000_changed_rows_ms": restore_done_ms,
        "restore_version": done["commits"][0]["version"],
        "commit_bytes_per_changed_row": log_bytes / (commits * 10).max(1),
        "checkpoint_bytes_per_commit": checkpoint_bytes / commits.max(1),
    })
}

/// Hand edits in a vault of `rows` rows: a batch of 1,000 edited rows, 5,000
/// events read back, a note linked from 1,000 notes moved by hand.
pub fn hand_edits(rows: usize) -> Value {
    let mut files = items(rows);
    files.push(NoteFile { path: "Notes/Hub.md".into(), text: "The hub.\n".into(), mtime: 0 });
    for i in 0..1000 {
        files[i + 1].text.push_str("See [[Hub]].\n");
    }
    let mut h = Host::new(files);
    // The table's log exists already (its first write paid for version 0).
    h.call(
        "update_row",
        json!({"table": "item", "path": format!("datanotes/main/public/item/Item {}.md", rows - 1), "set": {"v": 1}}),
    );
    let mut now = 1_800_000_000_000;
    for i in 0..1000 {
        let path = format!("datanotes/main/public/item/Item {i}.md");
        let text = format!("{}See [[Hub]].\n", item(i, 7));
        h.hand(path, text, now);
    }
    now += 1000;
    let t = Instant::now();
    h.tick(now);
    let batch_ms = ms(t);
    let batch_events = h.e.feed_head();
    for i in 1000..5000 {
        let path = format!("datanotes/main/public/item/Item {i}.md");
        h.hand(path, item(i, 9), now);
    }
    now += 1000;
    h.tick(now);
    let (list_ms, listed) = h.call("list_changes", json!({"since": 0, "limit": 5000}));
    let hub = h.mem.notes.remove("Notes/Hub.md").unwrap_or_default();
    h.mem.notes.insert("Notes/Centre.md".into(), hub);
    h.e.observe(
        VaultEvent::Renamed {
            from: "Notes/Hub.md".into(),
            to: "Notes/Centre.md".into(),
            text: "The hub.\n".into(),
            mtime: 2,
        },
        now,
    );
    now += 1000;
    h.tick(now);
    now += 5000;
    let t = Instant::now();
    let out = h.tick(now);
    let repair_ms = ms(t);
    let repaired = out.answer["notes_changed"].as_u64().unwrap_or_default();
    json!({
        "rows": rows,
        "hand_batch_1000_rows_ms": batch_ms,
        "hand_batch_events": batch_events,
        "list_changes_5000_ms": list_ms,
        "list_changes_events": listed["events"].as_array().map_or(0, Vec::len),
        "repair_links_1000_notes_ms": repair_ms,
        "repair_links_notes": repaired,
    })
}

/// Reopening a vault of `rows` rows after 1,000 notes changed while it was closed.
pub fn reopen(rows: usize) -> Value {
    let files = items(rows);
    let mut e = Engine::open_listed(files.clone(), vec![], 0);
    let Step::Done(first) = e.reconcile(0) else { return json!({"error": "the first reconcile asked for more"}) };
    let known = first.store.iter().find(|s| s.path == "known.jsonl").map(|s| s.text.clone()).unwrap_or_default();
    let mut changed = files;
    for f in changed.iter_mut().skip(1).take(1000) {
        f.text = f.text.replace("v: 0", "v: 5");
    }
    let t = Instant::now();
    let mut e = Engine::open_listed(changed, vec![StoreFile("known.jsonl".into(), Some(known))], 1000);
    let open_ms = ms(t);
    let t = Instant::now();
    let out = e.reconcile(1000);
    let reconcile_ms = ms(t);
    json!({
        "rows": rows,
        "open_ms": open_ms,
        "reconcile_1000_changed_ms": reconcile_ms,
        "open_and_reconcile_ms": ((open_ms + reconcile_ms) * 1000.0).round() / 1000.0,
        "events": e.feed_head(),
        "status": match out {
            Step::Done(o) => serde_json::to_value(o.status).unwrap_or_default(),
            Step::Need(_) | Step::ReadNotes(_) => json!("need"),
            Step::Apply(_) => json!("apply"),
        },
    })
}

/// The same history through git: `rows` notes, then `commits` commits of 10
/// changed notes, built with fast-import; then every note as of the first commit
/// read with `git cat-file --batch`. None when git is missing.
pub fn git_first_version_ms(rows: usize, commits: usize) -> Option<f64> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = std::env::temp_dir().join(format!("datanotes-bench-git-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).ok()?;
    let git = |args: &[&str]| Command::new("git").args(args).current_dir(&dir).output().ok();
    git(&["init", "-q", "-b", "main"])?;
    let mut stream = String::new();
    let commit = |n: usize, files: Vec<(usize, usize)>, stream: &mut String| {
        stream.push_str(&format!(
            "commit refs/heads/main\ncommitter bench <bench@localhost> {} +0000\ndata 2\nc\n",
            1_700_000_000 + n
        ));
        for (i, v) in files {
            let text = item(i, v);
            stream.push_str(&format!(
                "M 100644 inline datanotes/main/public/item/item-{i}.md\ndata {}\n{text}\n",
                text.len()
            ));
        }
    };
    commit(0, (0..rows).map(|i| (i, 0)).collect(), &mut stream);
    for c in 0..commits {
        commit(c + 1, (0..10).map(|k| ((c * 10 + k) % rows, c + 1)).collect(), &mut stream);
    }
    let mut fi =
        Command::new("git").args(["fast-import", "--quiet"]).current_dir(&dir).stdin(Stdio::piped()).spawn().ok()?;
    fi.stdin.take()?.write_all(stream.as_bytes()).ok()?;
    fi.wait().ok()?;
    let first = String::from_utf8(git(&["rev-list", "--max-parents=0", "main"])?.stdout).ok()?.trim().to_string();
    let t = Instant::now();
    let tree = git(&["ls-tree", "-r", "--format=%(objectname)", &first])?.stdout;
    let mut cat = Command::new("git")
        .args(["cat-file", "--batch"])
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let mut stdin = cat.stdin.take()?;
    let feeder = std::thread::spawn(move || stdin.write_all(&tree));
    let out = cat.wait_with_output().ok()?;
    let _ = feeder.join();
    let took = ms(t);
    let _ = std::fs::remove_dir_all(&dir);
    (out.stdout.len() > rows * 50).then_some(took)
}

/// The words of the semantic benchmark's notes.
const WORDS: [&str; 24] = [
    "garage",
    "oil",
    "recipe",
    "garden",
    "invoice",
    "meeting",
    "train",
    "doctor",
    "guitar",
    "library",
    "tent",
    "birthday",
    "laptop",
    "budget",
    "tomatoes",
    "holiday",
    "school",
    "bicycle",
    "paint",
    "insurance",
    "dentist",
    "concert",
    "passport",
    "kitchen",
];

/// Search by meaning over `notes` synthetic notes of about 50 words: building
/// the search (every note embedded, passage by passage, and its words counted),
/// one query, one note embedded again.
pub fn semantic(notes: usize) -> Value {
    use datanotes_core::semantic::search::{Corpus, Doc};
    use datanotes_core::semantic::Model;
    let text = |i: usize| -> String {
        let words: Vec<&str> = (0..50).map(|k| WORDS[(i * 7 + k * 13 + k * k) % WORDS.len()]).collect();
        format!("# Note {i}\n\n{}.\n", words.join(" "))
    };
    let t = Instant::now();
    let model = &Model::builtin();
    let load_ms = ms(t);
    let texts: Vec<String> = (0..notes).map(text).collect();
    let t = Instant::now();
    let docs: Vec<Doc> = texts.iter().enumerate().map(|(i, x)| Doc::new(model, &format!("n/{i}.md"), x)).collect();
    let corpus = Corpus::new(docs);
    let index_ms = ms(t);
    let queries =
        ["car needs servicing", "what to cook tonight", "pay the bills", "plan a trip abroad", "fix the bike"];
    let mut times = vec![];
    let mut hits = vec![];
    for q in queries.iter().cycle().take(20) {
        let t = Instant::now();
        hits = corpus.search(model, q, None, 10);
        times.push(ms(t));
    }
    times.sort_by(f64::total_cmp);
    let query_ms = times[times.len() / 2];
    let t = Instant::now();
    let one = Doc::new(model, "n/0.md", &text(notes + 1));
    let embed_one_ms = ms(t);
    // Through the operation, on a vault of as many rows: the first search builds
    // the index; the next ones find it up to date; one after a row changed
    // embeds that row again.
    let mut h = Host::new(items(notes));
    let (first_search_ms, _) = h.call("semantic_search", json!({"query": "item"}));
    let mut times: Vec<f64> = (0..5).map(|_| h.call("semantic_search", json!({"query": "item five"})).0).collect();
    times.sort_by(f64::total_cmp);
    let op_ms = times[2];
    h.call("update_row", json!({"table": "item", "path": "datanotes/main/public/item/Item 7.md", "set": {"v": 3}}));
    let (after_change_ms, _) = h.call("semantic_search", json!({"query": "item five"}));
    // An engine opened again reads the stored index rather than embed every note.
    let index_file = "semantic/index.jsonl";
    let stored_bytes = h.store().get(index_file).map_or(0, String::len);
    let files: Vec<NoteFile> =
        h.mem.notes.iter().map(|(p, t)| NoteFile { path: p.clone(), text: t.clone(), mtime: 1 }).collect();
    let mem = crate::bench_vault::Ram { notes: h.mem.notes.clone(), store: h.mem.store.clone(), wrote: 0 };
    let mut again =
        Host { e: Engine::open_listed(files, vec![StoreFile(index_file.into(), None)], 0), mem, now: h.now };
    let (reopened_search_ms, answer) = again.call("semantic_search", json!({"query": "item five"}));
    assert_eq!(answer["results"].as_array().map(Vec::len), Some(10), "{answer}");
    json!({
        "notes": notes,
        "model_load_ms": load_ms,
        "index_ms": index_ms,
        "query_ms_median": query_ms,
        "embed_one_note_ms": embed_one_ms,
        "op_first_search_ms": first_search_ms,
        "op_search_ms_median": op_ms,
        "op_search_after_one_change_ms": after_change_ms,
        "stored_index_bytes": stored_bytes,
        "op_first_search_reopened_ms": reopened_search_ms,
        "hits": hits.len(),
        "passages": one.passages.len(),
    })
}
