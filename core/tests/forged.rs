//! Issue 52, the engine's part: store files that another device's sync brings
//! (or anyone who can write to the vault puts there) are claims, never
//! commands. Each test plants what an attacker would and checks that nothing is
//! written outside the tables, and that what fails is reported.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{film_diary, T0};
use datanotes_core::driver::{self, Memory};
use datanotes_core::edits::hash;
use datanotes_core::{Engine, NoteFile, Outcome, Status, StoreFile};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const CHARADE: &str = "datanotes/main/public/film/Charade.md";
const DAY: i64 = 86_400_000;
const ME: &str = "me";
/// This device's key, kept by its host outside the vault.
const KEY: [u8; 32] = [5; 32];

/// An engine of device `me` opened on `disk` at `now`, as the binary opens one.
fn open(disk: &mut Memory, now: i64) -> Engine {
    let notes = disk.notes.iter().map(|(p, t)| NoteFile { path: p.clone(), text: t.clone(), mtime: 0 });
    let store = disk
        .store
        .iter()
        .map(|(p, t)| StoreFile(p.clone(), (!p.starts_with("log/") && !p.starts_with("blobs/")).then(|| t.clone())));
    let mut e = Engine::open_listed(notes.collect(), store.collect(), now);
    e.set_device(ME).unwrap();
    e.set_device_key(&KEY).unwrap();
    e.seed(&[9u8; 32]);
    e.allow_private_webhooks(true);
    let out = driver::start(&mut e, disk, now);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    e
}

fn call(e: &mut Engine, disk: &mut Memory, op: &str, args: Value, now: i64) -> Outcome {
    driver::call(e, disk, op, &args, "test", now)
}

/// The film diary after one write of this device (so the film table's log and
/// the journal have begun).
fn diary() -> Memory {
    let mut disk = Memory::new(film_diary());
    let mut e = open(&mut disk, T0);
    let out =
        call(&mut e, &mut disk, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}), T0);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    disk
}

/// A journal entry as another device's engine writes one, with `changes`.
fn entry(id: &str, at_ms: i64, changes: Value) -> String {
    json!({
        "format": 1, "migration_id": id, "op": "update_row", "summary": "update film",
        "table": "main.public.film", "executed_at": "2026-10-12T16:52:00Z", "executed_ms": at_ms,
        "by": "agent", "status": "done", "notes_changed": 1, "files_changed": 1, "changes": changes,
    })
    .to_string()
}

fn plant_entry(disk: &mut Memory, id: &str, at_ms: i64, changes: Value) {
    disk.store.insert(format!("journal/{id}.json"), entry(id, at_ms, changes));
}

fn listed(e: &mut Engine, disk: &mut Memory, now: i64) -> Vec<String> {
    let out = call(e, disk, "list_migrations", json!({"limit": 500}), now);
    out.answer["migrations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["migration_id"].as_str().unwrap().to_string())
        .collect()
}

/// Every path outside the tables' notes and the store that exists on disk.
fn outside(disk: &Memory) -> Vec<String> {
    let diary = film_diary();
    disk.notes.keys().filter(|p| !diary.contains_key(*p) && !p.starts_with("datanotes/")).cloned().collect()
}

#[test]
fn point_1_an_entry_naming_files_no_engine_writes_is_left_out_and_reported() {
    let mut disk = diary();
    let targets = [".obsidian/plugins/evil/main.js", ".git/hooks/pre-commit", ".datanotes/token", "Notes/x.sh"];
    for (i, path) in targets.iter().enumerate() {
        let id = format!("20261012T165300-update_row-update-film.evil-{i}");
        plant_entry(
            &mut disk,
            &id,
            T0 + 1000,
            json!([{"path": path, "before": "#!/bin/sh\necho pwned\n", "after": null}]),
        );
    }
    let mut e = open(&mut disk, T0 + 2000);
    let ids = listed(&mut e, &mut disk, T0 + 2000);
    assert!(ids.iter().all(|id| !id.contains(".evil")), "never listed: {ids:?}");
    for (i, path) in targets.iter().enumerate() {
        let said = e.warnings().iter().any(|w| w.contains(&format!("evil-{i}.json is left out")) && w.contains(path));
        assert!(said, "{path} reported: {:?}", e.warnings());
        let id = format!("20261012T165300-update_row-update-film.evil-{i}");
        let out = call(&mut e, &mut disk, "undo_migration", json!({"migration_id": id}), T0 + 3000);
        assert_eq!(out.status, Status::Refused, "{}", out.answer);
    }
    assert_eq!(outside(&disk), Vec::<String>::new());
    assert!(!disk.store.contains_key("token"));
    // Told where a person looks for problems, as well as in the log.
    let checked = call(&mut e, &mut disk, "check_table", json!({}), T0 + 4000).answer;
    let problems = checked["store_problems"].as_array().cloned().unwrap_or_default();
    assert_eq!(problems.len(), targets.len(), "{checked}");
    // One a sync brings while the engine runs is told too, and never listed.
    let id = "20261012T165400-update_row-update-film.evil";
    let text = entry(id, T0 + 1000, json!([{"path": ".obsidian/app.json", "before": "{}", "after": null}]));
    let log = e.store_synced(vec![(format!("journal/{id}.json"), Some(text))], T0 + 5000);
    assert!(log.iter().any(|l| l.contains(".obsidian/app.json")), "{log:?}");
    let checked = call(&mut e, &mut disk, "check_table", json!({}), T0 + 6000).answer;
    assert_eq!(checked["store_problems"].as_array().map(Vec::len), Some(targets.len() + 1), "{checked}");
    assert!(!listed(&mut e, &mut disk, T0 + 6000).contains(&id.to_string()));
}

#[test]
fn point_1_another_devices_entry_is_undone_only_as_the_tables_history_bears_it_out() {
    let mut disk = diary();
    let charade = disk.notes[CHARADE].clone();
    let forged = charade.replace("rating: 4", "rating: 1");
    let created = "datanotes/main/public/film/Evil.md";
    // A note outside the tables, an overwrite of a row, a "deleted" row to bring back.
    let cases = [
        ("a", json!([{"path": "Notes/Diary.md", "before": "old\n", "after": "new\n"}])),
        ("b", json!([{"path": CHARADE, "before": forged, "after": charade}])),
        ("c", json!([{"path": created, "before": "---\ntable: main.public.film\ntitle: Evil\n---\n", "after": null}])),
    ];
    for (n, changes) in &cases {
        plant_entry(&mut disk, &format!("20261012T165300-update_row-update-film-{n}.evil"), T0 + 1000, changes.clone());
    }
    let before = disk.notes.clone();
    let mut e = open(&mut disk, T0 + 2000);
    for (n, _) in &cases {
        let id = format!("20261012T165300-update_row-update-film-{n}.evil");
        let out = call(&mut e, &mut disk, "undo_migration", json!({"migration_id": id}), T0 + 3000);
        assert_eq!(out.status, Status::Refused, "{n}: {}", out.answer);
        let text = out.answer["error"].as_str().unwrap_or_default();
        assert!(text.contains("may be damaged or forged"), "{n}: {text}");
    }
    assert_eq!(disk.notes, before, "nothing written");
    // This device's own write, undone as before.
    let own = listed(&mut e, &mut disk, T0 + 4000).into_iter().find(|id| id.ends_with(".me")).unwrap();
    let out = call(&mut e, &mut disk, "undo_migration", json!({"migration_id": own}), T0 + 4000);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
}

#[test]
fn point_1_an_entry_under_this_devices_name_without_its_seal_is_a_claim_too() {
    let mut disk = diary();
    let charade = disk.notes[CHARADE].clone();
    let forged = charade.replace("rating: 4", "rating: 1");
    // Named as this device names its entries: only the seal tells it apart.
    let id = "20261012T165300-update_row-update-film.me";
    plant_entry(&mut disk, id, T0 + 1000, json!([{"path": CHARADE, "before": forged, "after": charade}]));
    let mut e = open(&mut disk, T0 + 2000);
    let out = call(&mut e, &mut disk, "undo_migration", json!({"migration_id": id}), T0 + 3000);
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
    assert!(out.answer["error"].as_str().unwrap().contains("has no commit of the entry"), "{}", out.answer);
    assert_eq!(disk.notes[CHARADE], charade);
    // The same, sealed by this device when it wrote it (and reopened since): undone.
    let own = listed(&mut e, &mut disk, T0 + 4000).into_iter().find(|i| i != id && i.ends_with(".me")).unwrap();
    assert!(disk.store[&format!("journal/{own}.json")].contains("\"seal\""));
    let mut again = open(&mut disk, T0 + 5000);
    let out = call(&mut again, &mut disk, "undo_migration", json!({"migration_id": own}), T0 + 5000);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
}

#[test]
fn point_1_an_entry_dated_in_the_future_is_listed_as_made_now_and_reported() {
    let mut disk = diary();
    let id = "20991231T000000-update_row-update-film.evil";
    plant_entry(&mut disk, id, T0 + 3000 * 365 * DAY, json!([]));
    let mut e = open(&mut disk, T0 + 2000);
    let ids = listed(&mut e, &mut disk, T0 + 2000);
    assert!(
        e.warnings().iter().any(|w| w.contains(id) && w.contains("ahead of this device's clock")),
        "{:?}",
        e.warnings()
    );
    // Listed as made at the open, so this device's next write sorts after it.
    call(&mut e, &mut disk, "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 3}}), T0 + 5000);
    let ids_after = listed(&mut e, &mut disk, T0 + 6000);
    assert!(ids.contains(&id.to_string()));
    assert!(ids_after[0].ends_with(".me"), "the newest is this device's write, not the forged one: {ids_after:?}");
}

/// A commit another device's sync brought, at the next version of film.
fn plant_commit(disk: &mut Memory, actions: Value) -> u64 {
    let log: Vec<&String> = disk.store.keys().filter(|p| p.starts_with("log/main.public.film/")).collect();
    let v = log.iter().filter_map(|p| p.rsplit('/').next()?.get(..20)?.parse::<u64>().ok()).max().unwrap() + 1;
    let commit = json!({"format": 1, "version": v, "timestamp": "2026-10-12T16:53:00Z", "timestamp_ms": T0 + 1000,
        "operation": "UPDATE", "operation_metrics": {}, "migration_id": null, "device": "evil", "actions": actions});
    disk.store.insert(format!("log/main.public.film/{v:020}.evil.json"), commit.to_string());
    v
}

#[test]
fn point_1_a_forged_commit_is_never_restored() {
    let evil = "#!/bin/sh\necho pwned\n";
    // A row in a plugin folder; a row outside the table; a blob whose text is not its hash.
    let lying = "a".repeat(64);
    let cases = [
        json!([{"add": {"path": ".obsidian/plugins/evil/main.js", "id": null, "blob": hash(evil)}}]),
        json!([{"add": {"path": "Notes/Diary.md", "id": null, "blob": hash(evil)}}]),
        json!([{"add": {"path": CHARADE, "id": null, "blob": lying}}]),
        json!([{"add": {"path": CHARADE, "id": null, "blob": "../../token"}}]),
    ];
    for (i, actions) in cases.iter().enumerate() {
        let mut disk = diary();
        disk.store.insert(format!("blobs/{}/{}", &hash(evil)[..2], hash(evil)), evil.into());
        disk.store.insert(format!("blobs/aa/{lying}"), evil.into());
        let v = plant_commit(&mut disk, actions.clone());
        let before = disk.notes.clone();
        let mut e = open(&mut disk, T0 + 2000);
        let out = call(&mut e, &mut disk, "restore_table", json!({"table": "film", "version": v}), T0 + 3000);
        assert_eq!(out.status, Status::Refused, "case {i}: {}", out.answer);
        assert_eq!(disk.notes, before, "case {i}: nothing written");
        assert_eq!(outside(&disk), Vec::<String>::new(), "case {i}");
    }
}

fn deliveries(e: &mut Engine, disk: &mut Memory, now: i64) -> Vec<String> {
    driver::tick(e, disk, now).deliveries.into_iter().map(|d| d.url).collect()
}

fn hooks_file(device: Option<&str>, cursor: u64) -> String {
    json!({"format": 1, "webhooks": [{"id": "wh_evil", "url": "http://127.0.0.1:9/steal", "filter": {},
        "secret": "known", "cursor": cursor, "status": "ok", "device": device}]})
    .to_string()
}

#[test]
fn point_2_synced_webhooks_deliver_nothing_until_confirmed_here() {
    let cases = [
        ("webhooks.json", None),
        ("webhooks.json", Some(ME)),
        ("webhooks.evil.json", Some(ME)),
        // Under this device's name, without its seal.
        ("webhooks.me.json", Some(ME)),
    ];
    for (file, named) in cases {
        let mut disk = diary();
        disk.store.insert(file.into(), hooks_file(named, 0));
        let mut e = open(&mut disk, T0 + 1000);
        assert_eq!(deliveries(&mut e, &mut disk, T0 + 2000), Vec::<String>::new(), "{file} naming {named:?}");
        let list = call(&mut e, &mut disk, "list_webhooks", json!({}), T0 + 2000).answer;
        let shown = &list["webhooks"][0];
        let waits = file != "webhooks.evil.json";
        match waits {
            true => assert_eq!(shown["status"], "waiting", "{file}: {list}"),
            false => assert_eq!(shown["device"], "evil", "another device's file holds that device's webhooks: {list}"),
        }
        if !waits {
            let out = call(&mut e, &mut disk, "confirm_webhook", json!({"id": "wh_evil"}), T0 + 3000);
            assert_eq!(out.status, Status::Refused, "only a waiting one is confirmed: {}", out.answer);
            continue;
        }
        let out = call(&mut e, &mut disk, "confirm_webhook", json!({"id": "wh_evil"}), T0 + 3000);
        assert_eq!(out.status, Status::Ok, "{}", out.answer);
        assert_ne!(out.answer["webhook"]["secret"], "known", "a new secret");
        assert_eq!(deliveries(&mut e, &mut disk, T0 + 4000), Vec::<String>::new(), "what came before stays unsent");
        call(
            &mut e,
            &mut disk,
            "update_row",
            json!({"table": "film", "path": CHARADE, "set": {"rating": 2}}),
            T0 + 5000,
        );
        assert_eq!(
            deliveries(&mut e, &mut disk, T0 + 6000),
            ["http://127.0.0.1:9/steal"],
            "confirmed: delivered from now"
        );
        let mut again = open(&mut disk, T0 + 7000);
        let list = call(&mut again, &mut disk, "list_webhooks", json!({}), T0 + 7000).answer;
        assert_eq!(list["webhooks"][0]["device"], ME, "kept as this device's: {list}");
    }
}

#[test]
fn point_3_a_synced_setting_cannot_wipe_the_journal_nor_outlast_a_later_local_one() {
    let mut disk = diary();
    let forged = json!({"format": 1, "fields": {"journalRetentionDays": {"value": 0, "at_ms": 4_102_444_800_000i64}}});
    disk.store.insert("settings.evil.json".into(), forged.to_string());
    let journal = |d: &Memory| d.store.keys().filter(|p| p.starts_with("journal/")).count();
    let kept = journal(&disk);
    let mut e = open(&mut disk, T0 + 2 * DAY);
    assert_eq!(journal(&disk), kept, "entries younger than a week stay");
    let settings = call(&mut e, &mut disk, "configure_database", json!({}), T0 + 2 * DAY).answer;
    assert_eq!(settings["settings"]["journalRetentionDays"], 7, "{settings}");
    assert!(e.warnings().iter().any(|w| w.contains("below a week")), "{:?}", e.warnings());
    let out = call(&mut e, &mut disk, "configure_database", json!({"journalRetentionDays": 30}), T0 + 2 * DAY);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    let mut again = open(&mut disk, T0 + 3 * DAY);
    let settings = call(&mut again, &mut disk, "configure_database", json!({}), T0 + 3 * DAY).answer;
    assert_eq!(settings["settings"]["journalRetentionDays"], 30, "the later local setting wins: {settings}");
    let out = call(&mut again, &mut disk, "configure_database", json!({"journalRetentionDays": 3}), T0 + 3 * DAY);
    assert_eq!(out.status, Status::BadInput, "{}", out.answer);
    let _: BTreeMap<String, String> = disk.store.clone();
}

#[test]
fn point_1_a_synced_feed_segment_naming_files_no_engine_writes_is_left_out_and_its_clock_not_believed() {
    let mut disk = diary();
    let mut e = open(&mut disk, T0 + 1000);
    let event = |seq: u64, path: &str, at_ms: i64| {
        json!({"seq": seq, "at": "2099-01-01T00:00:00Z", "at_ms": at_ms, "table": "main.public.film", "kind": "update",
            "source": "engine", "path": path, "changes": {"rating": {"before": 4, "after": 1}}})
        .to_string()
    };
    let text = [event(1, ".obsidian/plugins/evil/x.md", T0), event(2, CHARADE, 4_102_444_800_000)].join("\n");
    let log = e.store_synced(vec![("feed/00000000000000000001.evil.jsonl".into(), Some(text))], T0 + 2000);
    assert!(log.iter().any(|l| l.contains("line 1 is left out") && l.contains(".obsidian")), "{log:?}");
    let changes = call(&mut e, &mut disk, "list_changes", json!({"since": 0}), T0 + 3000).answer;
    let events = changes["events"].as_array().unwrap();
    assert!(events.iter().all(|ev| ev["path"] != ".obsidian/plugins/evil/x.md"), "{changes}");
    let synced =
        events.iter().find(|ev| ev["at_ms"] == T0 + 2000).expect("the other device's event, at this device's time");
    assert_eq!(synced["path"], CHARADE);
    let checked = call(&mut e, &mut disk, "check_table", json!({}), T0 + 4000).answer;
    assert_eq!(checked["store_problems"].as_array().map(Vec::len), Some(2), "{checked}");
}
