//! Hand edits, the change feed and webhooks on the film diary of the hand-edits
//! guide, with time driven by the test.

mod common;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use common::{Disk, Host, T0};
use datanotes_core::webhook::Delivery;
use datanotes_core::{Edit, Status, Step, StoreWrite, VaultEvent};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const SILENT: &str = "datanotes/main/public/genre/Silent film.md";
const SLAPSTICK: &str = "datanotes/main/public/genre/Slapstick comedy.md";
const HGF_WATCH: &str = "datanotes/main/public/watch/2026-10-03T2130.md";
const CHARADE_WATCH: &str = "datanotes/main/public/watch/2026-09-25T2100.md";
const FILM_NIGHT: &str = "Notes/Film night.md";
const FRIDAY_NIGHT: &str = "Notes/Friday film night.md";
const METROPOLIS: &str = "datanotes/main/public/film/Metropolis.md";
const SHERLOCK: &str = "datanotes/main/public/film/Sherlock Jr..md";
const METASTORE: &str = "datanotes/metastore.yaml";
const EXPRESSIONISM: &str = "datanotes/main/public/genre/Expressionism.md";
const SOVIET: &str = "datanotes/main/public/genre/Soviet montage.md";
const CHARADE: &str = "datanotes/main/public/film/Charade.md";
const GOLD_RUSH: &str = "datanotes/main/public/film/The Gold Rush.md";
const FRITZ_LANG: &str = "datanotes/main/public/person/Fritz Lang.md";

const PARENT_BY_LEVEL: &str = r#"{"or":[{"kind":"cinema","parent":{"exists":false}},{"kind":"era","parent.kind":"cinema"},{"kind":"genre","parent.kind":"era"}]}"#;
const RATING_RANGE: &str =
    r#"{"or":[{"rating":{"exists":false}},{"and":[{"rating":{"gte":1}},{"rating":{"lte":5}}]}]}"#;
const AFTER_SILENT: &str = " (after the edit of [[Silent film]], a row it links to)";
const UNREADABLE: &str = "the front matter cannot be read, so the row is left out of every read: ";

/// The first step of a tick, as the tests read it.
struct Turn {
    kind: Kind,
    answer: Value,
    edits: Vec<Edit>,
    store: Vec<StoreWrite>,
    log: Vec<String>,
    deliveries: Vec<Delivery>,
}

#[derive(Debug, PartialEq)]
enum Kind {
    Done,
    Apply,
}

impl Turn {
    fn of(step: &Step) -> Turn {
        match step.clone() {
            Step::Done(o) => Turn {
                kind: Kind::Done,
                answer: o.answer,
                edits: vec![],
                store: o.store,
                log: o.log,
                deliveries: o.deliveries,
            },
            Step::Apply(a) => Turn {
                kind: Kind::Apply,
                answer: a.answer,
                edits: a.edits,
                store: a.store,
                log: a.log,
                deliveries: vec![],
            },
            Step::Need(n) | Step::ReadNotes(n) => panic!("a tick asked for files: {n:?}"),
        }
    }
}

impl Host {
    fn films() -> Host {
        Host::films_with(&[])
    }

    /// The film diary with more notes.
    fn films_with(extra: &[(&str, &str)]) -> Host {
        let mut disk = Disk::films();
        disk.notes.extend(extra.iter().map(|(p, t)| (p.to_string(), t.to_string())));
        let mut h = Host::new(disk, T0);
        h.reopen();
        h
    }

    /// A new engine on what the disk and the store hold now.
    fn reopen(&mut self) {
        self.e = self.disk.open_read(self.now);
    }

    fn changes(&mut self, args: Value) -> Value {
        self.ok("list_changes", args)
    }

    fn events(&mut self, args: Value) -> Vec<Value> {
        self.changes(args)["events"].as_array().unwrap().clone()
    }

    /// A vault change made outside the engine, seen `at` ms after T0.
    fn hand(&mut self, ev: VaultEvent, at: i64) {
        self.now = T0 + at;
        match &ev {
            VaultEvent::Created { path, text, .. } | VaultEvent::Modified { path, text, .. } => {
                self.notes.insert(path.clone(), text.clone());
            }
            VaultEvent::Removed { path } => {
                self.notes.remove(path);
            }
            VaultEvent::Renamed { from, to, text, .. } => {
                self.notes.remove(from);
                self.notes.insert(to.clone(), text.clone());
            }
        }
        self.e.observe(ev, self.now);
    }

    fn edit(&mut self, path: &str, text: &str, at: i64) {
        let ev = if self.notes.contains_key(path) {
            VaultEvent::Modified { path: path.into(), text: text.into(), mtime: at }
        } else {
            VaultEvent::Created { path: path.into(), text: text.into(), mtime: at }
        };
        self.hand(ev, at);
    }

    /// Replaces `from` by `to` in a note's text, by hand.
    fn replace(&mut self, path: &str, from: &str, to: &str, at: i64) {
        let text = self.text(path);
        assert!(text.contains(from), "{path} holds no {from:?}: {text}");
        self.edit(path, &text.replacen(from, to, 1), at);
    }

    fn rename(&mut self, from: &str, to: &str, at: i64) {
        let text = self.text(from);
        self.hand(VaultEvent::Renamed { from: from.into(), to: to.into(), text, mtime: at }, at);
    }

    fn remove(&mut self, path: &str, at: i64) {
        self.hand(VaultEvent::Removed { path: path.into() }, at);
    }

    /// The tick at `at` ms after T0; a write it starts is applied. Returns the tick's first step.
    fn tick(&mut self, at: i64) -> Turn {
        self.now = T0 + at;
        let step = self.e.tick(self.now);
        let first = Turn::of(&step);
        let last = self.carry(step);
        assert!(matches!(last.status, Status::Ok), "{}", last.answer);
        first
    }

    fn text(&self, path: &str) -> String {
        self.notes.get(path).cloned().unwrap_or_else(|| panic!("no {path} on disk"))
    }

    fn head(&self) -> u64 {
        self.e.feed_head()
    }
}

/// parent_by_level broken by Silent film made a cinema, or by a genre under
/// it; with what the row holds where the rule looks.
fn parent_by_level(path: &str, suffix: &str) -> Value {
    let held = match path {
        SILENT => json!({"kind": "cinema", "parent": "[[Cinema]]", "parent.kind": "cinema"}),
        _ => json!({"kind": "genre", "parent": "[[Silent film]]", "parent.kind": "cinema"}),
    };
    json!({"code": "check", "constraint": "parent_by_level",
        "message": format!("violates CHECK parent_by_level: {PARENT_BY_LEVEL}{suffix}"), "value": held})
}

/// select_rows, without the rows' `_version` tokens.
fn select(h: &mut Host, args: Value) -> Value {
    let mut a = h.ok("select_rows", args);
    for r in a["rows"].as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("_version");
    }
    a
}

fn seqs(events: &[Value]) -> Vec<u64> {
    events.iter().map(|e| e["seq"].as_u64().unwrap()).collect()
}

// ---------------------------------------------------------------------------
// 1. The examples of the hand-edits guide
// ---------------------------------------------------------------------------

#[test]
fn silent_film_made_a_cinema_by_hand_is_reported_with_what_it_breaks() {
    let mut h = Host::films();
    h.replace(SILENT, "kind: era", "kind: cinema", 0);
    let t = h.tick(700);
    assert_eq!(t.log.len(), 1, "{:?}", t.log);
    assert!(
        t.log[0].starts_with(&format!(
            "WARN hand edit of {SILENT} breaks 4 rule(s): {SILENT}: violates CHECK parent_by_level"
        )),
        "{}",
        t.log[0]
    );

    let events = h.events(json!({"since": 0, "tables": ["genre"]}));
    assert_eq!(events.len(), 1, "{events:?}");
    let ev = &events[0];
    assert_eq!(ev["seq"], 1);
    assert_eq!(ev["kind"], "update");
    assert_eq!(ev["table"], "main.public.genre");
    assert_eq!(ev["path"], SILENT);
    assert_eq!(ev["source"], "external");
    assert_eq!(ev["row_id"], "01a0c040-7e6a-72e1-8e13-ed5231daacaf");
    assert_eq!(ev["changes"], json!({"kind": {"before": "era", "after": "cinema"}}));
    assert_eq!(ev["values"], json!({"name": "Silent film", "kind": "cinema", "parent": "[[Cinema]]"}));
    assert!(ev.get("op").is_none() && ev.get("actor").is_none() && ev.get("migration_id").is_none(), "{ev}");
    // The edited row, then every row hanging from it (in the guide's smaller
    // vault only Slapstick comedy does; here Expressionism and Soviet montage too).
    assert_eq!(
        ev["violations"],
        json!([
            {"path": SILENT, "violations": [parent_by_level(SILENT, "")]},
            {"path": EXPRESSIONISM, "violations": [parent_by_level(EXPRESSIONISM, AFTER_SILENT)]},
            {"path": SLAPSTICK, "violations": [parent_by_level(SLAPSTICK, AFTER_SILENT)]},
            {"path": SOVIET, "violations": [parent_by_level(SOVIET, AFTER_SILENT)]},
        ])
    );
    assert!(ev.get("violations_total").is_none());
    // The note stays as written.
    assert!(h.e.vault().text(SILENT).unwrap().contains("kind: cinema"));
}

#[test]
fn a_rule_already_broken_before_the_edit_is_not_listed() {
    let mut h = Host::films();
    h.replace(SILENT, "kind: era", "kind: cinema", 0);
    h.tick(700);
    // Silent film and the genres under it break parent_by_level already; moving
    // it under Sound film breaks nothing new.
    h.replace(SILENT, "parent: \"[[Cinema]]\"", "parent: \"[[Sound film]]\"", 2000);
    let t = h.tick(2700);
    assert!(t.log.is_empty(), "{:?}", t.log);
    let ev = h.events(json!({"since": 1})).remove(0);
    assert_eq!(ev["changes"], json!({"parent": {"before": "[[Cinema]]", "after": "[[Sound film]]"}}));
    assert_eq!(ev["violations"], json!([]), "empty (not absent): the edit was checked");
}

#[test]
fn check_table_lists_the_rows_invalid_after_the_hand_edit_and_update_row_fixes_them() {
    let mut h = Host::films();
    h.replace(SILENT, "kind: era", "kind: cinema", 0);
    h.tick(700);
    // check_table has no "after the edit of" note: it lists the rows as they are.
    let row =
        |path: &str| json!({"path": path, "table": "main.public.genre", "violations": [parent_by_level(path, "")]});
    assert_eq!(
        h.ok("check_table", json!({})),
        json!({
            "table": null, "rows_checked": 28, "tables_checked": 4, "total": 4,
            "violations": [row(EXPRESSIONISM), row(SILENT), row(SLAPSTICK), row(SOVIET)],
        })
    );

    let a = h.ok("update_row", json!({"table": "genre", "path": SILENT, "set": {"kind": "era"}}));
    assert_eq!(a["ok"], true);
    assert_eq!(a["op"], "update_row");
    assert_eq!(a["notes_changed"], 1);
    assert_eq!(a["planned_edits"], json!([{"path": SILENT, "set": {"kind": "era"}, "remove": []}]));
    // Version 0 and 1 of genre's log are the state before and the hand edit.
    assert_eq!(a["commits"], json!([{"table": "main.public.genre", "version": 2, "operation": "UPDATE"}]));
    let mid = a["migration_id"].as_str().unwrap();
    assert!(mid.starts_with("20261012T1652") && mid.contains("-update_row-"), "{mid}");
    assert!(h.text(SILENT).contains("kind: era\n"));

    let c = h.ok("check_table", json!({}));
    assert_eq!((c["total"].clone(), c["violations"].clone()), (json!(0), json!([])), "{c}");
    // The fix is an engine event, without violations.
    let ev = h.events(json!({"since": 1})).remove(0);
    assert_eq!((ev["source"].as_str(), ev["op"].as_str()), (Some("engine"), Some("update_row")));
    assert!(ev.get("violations").is_none(), "{ev}");
}

fn stale_label() -> Value {
    json!({
        "column": "label", "code": "generated",
        "message": "should be \"His Girl Friday (03/10 21:30, cinema)\" (computed)",
        "value": "His Girl Friday (03/10 21:30, home)",
    })
}

#[test]
fn a_stale_label_is_reported_and_recompute_columns_fixes_it() {
    let mut h = Host::films();
    let a = h.ok("configure_database", json!({"autoRecompute": false}));
    assert_eq!((a["changed"].clone(), a["settings"]["autoRecompute"].clone()), (json!(true), json!(false)), "{a}");
    h.replace(HGF_WATCH, "where: home", "where: cinema", 0);
    h.tick(700);
    let ev = h.events(json!({"tables": ["watch"]})).remove(0);
    assert_eq!(ev["changes"], json!({"where": {"before": "home", "after": "cinema"}}));
    assert_eq!(ev["violations"], json!([{"path": HGF_WATCH, "violations": [stale_label()]}]));
    // autoRecompute off: nothing is planned.
    assert_eq!(h.e.next_deadline(), None);
    assert_eq!(h.tick(60_000).kind, Kind::Done);
    assert!(h.text(HGF_WATCH).contains("label: His Girl Friday (03/10 21:30, home)\n"));

    assert_eq!(
        h.ok("check_table", json!({"table": "watch"})),
        json!({"table": "watch", "rows_checked": 3, "total": 1,
               "violations": [{"path": HGF_WATCH, "violations": [stale_label()]}]})
    );
    let a = h.ok("recompute_columns", json!({"table": "watch"}));
    assert_eq!(a["ok"], true);
    assert_eq!(a["op"], "recompute_columns");
    assert_eq!(a["notes_changed"], 1);
    assert_eq!(
        a["planned_edits"],
        json!([{"path": HGF_WATCH, "set": {"label": "His Girl Friday (03/10 21:30, cinema)"}, "remove": []}])
    );
    assert_eq!(a["commits"], json!([{"table": "main.public.watch", "version": 2, "operation": "RECOMPUTE"}]));
    assert!(a["migration_id"].as_str().unwrap().contains("-recompute_columns-"), "{a}");

    let rows = select(
        &mut h,
        json!({"table": "watch", "columns": ["where", "label"], "where": {"where": "cinema"}, "order_by": "label"}),
    );
    assert_eq!(rows["table"], "main.public.watch");
    assert_eq!(rows["total"], 2);
    assert_eq!(
        rows["rows"][0],
        json!({"path": HGF_WATCH, "where": "cinema", "label": "His Girl Friday (03/10 21:30, cinema)"})
    );
    assert_eq!(h.ok("check_table", json!({"table": "watch"}))["total"], 0);
}

#[test]
fn with_auto_recompute_on_the_engine_recomputes_3s_after_the_batch() {
    let mut h = Host::films();
    h.replace(HGF_WATCH, "where: home", "where: cinema", 0);
    assert_eq!(h.e.next_deadline(), Some(T0 + 700));
    assert_eq!(h.tick(700).kind, Kind::Done);
    assert_eq!(h.e.next_deadline(), Some(T0 + 3700));
    let early = h.tick(3699);
    assert_eq!(early.kind, Kind::Done);
    assert!(h.text(HGF_WATCH).contains("label: His Girl Friday (03/10 21:30, home)\n"));

    let t = h.tick(3700);
    assert_eq!(t.kind, Kind::Apply);
    assert_eq!(t.answer["op"], "recompute_columns");
    assert_eq!(
        t.answer["planned_edits"],
        json!([{"path": HGF_WATCH, "set": {"label": "His Girl Friday (03/10 21:30, cinema)"}, "remove": []}])
    );
    assert!(matches!(&t.edits[..], [Edit::Write { path, .. }] if path == HGF_WATCH), "{:?}", t.edits);
    assert!(h.text(HGF_WATCH).contains("label: His Girl Friday (03/10 21:30, cinema)\n"));
    assert_eq!(h.e.vault().row(HGF_WATCH).unwrap().values["label"], "His Girl Friday (03/10 21:30, cinema)");
    // (next_deadline still says 3700 here: see the ignored test below.)
    assert_eq!(h.tick(3701).kind, Kind::Done);
    assert_eq!(h.e.next_deadline(), None);

    let m = h.ok("list_migrations", json!({"limit": 1}))["migrations"][0].clone();
    assert_eq!(m["op"], "recompute_columns");
    assert_eq!(m["by"], "engine");
    assert_eq!(m["table"], "main.public.watch");
    assert_eq!(m["notes_changed"], 1);
    let ev = h.events(json!({"since": 1})).remove(0);
    assert_eq!(ev["source"], "engine");
    assert_eq!(ev["op"], "recompute_columns");
    assert_eq!(ev["actor"], "engine");
    assert_eq!(ev["migration_id"], m["migration_id"]);
    assert_eq!(
        ev["changes"],
        json!({"label": {"before": "His Girl Friday (03/10 21:30, home)", "after": "His Girl Friday (03/10 21:30, cinema)"}})
    );
    assert_eq!(h.ok("check_table", json!({}))["total"], 0);
}

#[test]
fn next_deadline_is_none_once_the_automatic_recompute_is_planned() {
    let mut h = Host::films();
    h.replace(HGF_WATCH, "where: home", "where: cinema", 0);
    h.tick(700);
    assert_eq!(h.tick(3700).kind, Kind::Apply);
    assert_eq!(h.e.next_deadline(), None);
}

#[test]
fn a_hand_rename_of_a_plain_note_has_its_links_repaired_after_4s_of_quiet() {
    let mut h = Host::films();
    let viewing = h.text(CHARADE_WATCH);
    h.rename(FILM_NIGHT, FRIDAY_NIGHT, 0);
    h.tick(700);
    let evs = h.events(json!({}));
    assert_eq!(evs.len(), 1, "{evs:?}");
    let mv = &evs[0];
    assert_eq!(mv["kind"], "move");
    assert_eq!(mv["table"], Value::Null);
    assert_eq!(mv["path"], FRIDAY_NIGHT);
    assert_eq!(mv["old_path"], FILM_NIGHT);
    assert_eq!(mv["source"], "external");
    assert_eq!(mv["violations"], json!([]));

    // Quiet for 4 s after the last change, and not while git is busy.
    assert_eq!(h.e.next_deadline(), Some(T0 + 4000));
    assert_eq!(h.tick(3999).kind, Kind::Done);
    assert_eq!(h.text(CHARADE_WATCH), viewing);
    h.e.set_git_busy(true);
    assert_eq!(h.e.next_deadline(), None);
    assert_eq!(h.tick(6000).kind, Kind::Done);
    assert_eq!(h.text(CHARADE_WATCH), viewing);
    h.e.set_git_busy(false);
    assert_eq!(h.e.next_deadline(), Some(T0 + 4000));

    let t = h.tick(6000);
    assert_eq!(t.kind, Kind::Apply);
    assert_eq!(t.answer["op"], "repair_links");
    assert!(matches!(&t.edits[..], [Edit::Write { path, .. }] if path == CHARADE_WATCH), "{:?}", t.edits);
    let repaired = viewing.replace("Part of [[Film night]].", "Part of [[Friday film night]].");
    assert_ne!(repaired, viewing);
    assert_eq!(h.text(CHARADE_WATCH), repaired);
    let note = h.ok("read_note", json!({"path": CHARADE_WATCH}));
    assert!(note.to_string().contains("Part of [[Friday film night]]. Four of us on the sofa"), "{note}");
    assert_eq!(h.e.next_deadline(), None);

    let m = h.ok("list_migrations", json!({"limit": 1}))["migrations"][0].clone();
    assert_eq!(m["op"], "repair_links");
    assert_eq!(
        m["summary"],
        "repair the links after the hand move of Notes/Film night.md to Notes/Friday film night.md"
    );
    assert_eq!(m["by"], "engine");
    let mid = m["migration_id"].as_str().unwrap().to_string();

    let evs = h.events(json!({"since": 1}));
    assert_eq!(evs.len(), 1, "{evs:?}");
    let ev = &evs[0];
    assert_eq!(ev["kind"], "update");
    assert_eq!(ev["op"], "repair_links");
    assert_eq!(ev["source"], "engine");
    assert_eq!(ev["path"], CHARADE_WATCH);
    assert_eq!(ev["migration_id"], mid.as_str());
    assert_eq!(ev["cause"], json!([{"path": FRIDAY_NIGHT, "old_path": FILM_NIGHT, "seq": 1}]));

    let u = h.ok("undo_migration", json!({"migration_id": mid}));
    assert_eq!(u["undoes"], mid.as_str());
    assert_eq!(h.text(CHARADE_WATCH), viewing);
    assert_eq!(h.events(json!({"since": 2}))[0]["op"], "undo_migration");
}

#[test]
fn with_repair_links_on_hand_move_off_nothing_is_repaired() {
    let mut h = Host::films();
    h.ok("configure_database", json!({"repairLinksOnHandMove": false}));
    let (sherlock, gold) = (h.text(SHERLOCK), h.text(GOLD_RUSH));
    let to = "datanotes/main/public/genre/Slapstick.md";
    h.rename(SLAPSTICK, to, 0);
    h.tick(700);
    let mv = h.events(json!({})).remove(0);
    assert_eq!(mv["kind"], "move");
    assert_eq!(mv["table"], "main.public.genre");
    // No repair follows, so the links left dangling are reported.
    let broken = json!([{"code": "broken_link", "column": "genres", "index": 0,
        "message": "[[Slapstick comedy]] does not resolve to a row of main.public.genre (after the edit of [[Slapstick]], a row it links to)"}]);
    assert_eq!(
        mv["violations"],
        json!([{"path": SHERLOCK, "violations": broken}, {"path": GOLD_RUSH, "violations": broken}])
    );
    assert_eq!(h.e.next_deadline(), None);
    assert_eq!(h.tick(60_000).kind, Kind::Done);
    assert_eq!((h.text(SHERLOCK), h.text(GOLD_RUSH)), (sherlock, gold));
    assert_eq!(h.ok("list_migrations", json!({}))["total"], 0);
    assert_eq!(h.ok("check_table", json!({"table": "film"}))["total"], 2);
}

#[test]
fn a_hand_rename_of_a_row_is_repaired_in_link_columns_and_not_reported_as_broken() {
    let mut h = Host::films();
    let to = "datanotes/main/public/genre/Slapstick.md";
    h.rename(SLAPSTICK, to, 0);
    h.tick(700);
    let mv = h.events(json!({})).remove(0);
    assert_eq!(mv["kind"], "move");
    assert_eq!(mv["row_id"], "01a0c042-1a21-7fa4-9132-1e0385b88bb8");
    assert_eq!(mv["violations"], json!([]), "the repair follows: the dangling links are not broken_link");
    let t = h.tick(4000);
    assert_eq!(t.kind, Kind::Apply);
    assert_eq!(
        t.answer["planned_edits"],
        json!([
            {"path": SHERLOCK, "set": {"genres": ["[[Slapstick]]"]}, "remove": []},
            {"path": GOLD_RUSH, "set": {"genres": ["[[Slapstick]]"]}, "remove": []},
        ])
    );
    assert!(h.text(GOLD_RUSH).contains("genres:\n  - \"[[Slapstick]]\"\n"));
    let evs = h.events(json!({"since": 1, "kinds": ["update"]}));
    assert_eq!(evs.len(), 2);
    for ev in &evs {
        assert_eq!(ev["changes"], json!({"genres": {"before": ["[[Slapstick comedy]]"], "after": ["[[Slapstick]]"]}}));
        assert_eq!(ev["cause"], json!([{"path": to, "old_path": SLAPSTICK, "seq": 1}]));
    }
    assert_eq!(h.ok("check_table", json!({}))["total"], 0);
}

#[test]
fn a_link_an_editor_already_rewrote_is_left_alone() {
    let plan = "Notes/Plan.md";
    let mut h = Host::films_with(&[(plan, "Next: [[Film night]] again, and [[Film night|the night]] after.\n")]);
    let viewing = h.text(CHARADE_WATCH);
    h.rename(FILM_NIGHT, FRIDAY_NIGHT, 0);
    // The editor (Obsidian) rewrites the viewing's link itself, its own way.
    let by_editor = viewing.replace("[[Film night]]", "[[Friday film night|Film night]]");
    h.edit(CHARADE_WATCH, &by_editor, 50);
    h.tick(750);
    let evs = h.events(json!({}));
    assert_eq!(evs.iter().map(|e| e["kind"].as_str().unwrap()).collect::<Vec<_>>(), ["move", "update"]);
    assert_eq!(h.e.next_deadline(), Some(T0 + 4050));
    let t = h.tick(4050);
    assert_eq!(t.kind, Kind::Apply);
    assert!(matches!(&t.edits[..], [Edit::Write { path, .. }] if path == plan), "{:?}", t.edits);
    assert_eq!(h.text(CHARADE_WATCH), by_editor);
    assert_eq!(h.text(plan), "Next: [[Friday film night]] again, and [[Friday film night|the night]] after.\n");
    // A plain note the repair rewrote is in the feed too.
    let ev = h.events(json!({"since": 2})).remove(0);
    assert_eq!((ev["path"].as_str(), ev["table"].clone()), (Some(plan), Value::Null));
    assert_eq!(ev["cause"], json!([{"path": FRIDAY_NIGHT, "old_path": FILM_NIGHT, "seq": 1}]));
}

#[test]
fn a_note_renamed_twice_by_hand_still_has_its_links_repaired() {
    for second_at in [100, 2000] {
        let mut h = Host::films();
        let viewing = h.text(CHARADE_WATCH);
        h.rename(FILM_NIGHT, "Notes/Film night (sync).md", 0);
        h.tick(700);
        h.rename("Notes/Film night (sync).md", FRIDAY_NIGHT, second_at);
        h.tick(second_at + 700);
        let t = h.tick(second_at + 4000);
        assert!(t.log.is_empty(), "second rename at {second_at}: {:?}", t.log);
        assert_eq!(h.text(CHARADE_WATCH), viewing.replace("[[Film night]]", "[[Friday film night]]"));
    }
}

#[test]
fn infer_table_finds_the_cast_key_added_by_hand() {
    let mut h = Host::films();
    h.replace(METROPOLIS, "director:", "cast:\n  - \"[[Brigitte Helm]]\"\ndirector:", 0);
    h.tick(700);
    let ev = h.events(json!({})).remove(0);
    assert_eq!(ev["changes"], json!({"cast": {"before": null, "after": ["[[Brigitte Helm]]"]}}));
    assert_eq!(ev["violations"], json!([]));
    let films = [
        "Battleship Potemkin",
        "Charade",
        "His Girl Friday",
        "Metropolis",
        "Nosferatu",
        "Sherlock Jr.",
        "The Gold Rush",
    ];
    assert_eq!(
        h.ok("infer_table", json!({"table": "film"})),
        json!({
            "files": 7,
            "paths": films.iter().map(|f| format!("datanotes/main/public/film/{f}.md")).collect::<Vec<_>>(),
            "skipped": [],
            "columns": [{
                "name": "cast", "type": "list", "description": null,
                "stats": {"present": 1, "filled": 1, "distinct": 1, "types": {"list": 1}, "examples": [["[[Brigitte Helm]]"]]},
                "items": "link",
            }],
            "hints": ["add these with add_column, each with a description of what it holds (null here; dense: false unless every row should carry the front matter key), or drop those front matter keys from the rows"],
        })
    );
}

fn film_table(h: &mut Host) -> Value {
    let d = h.ok("describe_database", json!({}));
    d["tables"].as_array().unwrap().iter().find(|t| t["name"] == "film").cloned().unwrap()
}

#[test]
fn sherlock_jr_with_an_unreadable_title_is_left_out_until_fixed() {
    let mut h = Host::films();
    h.replace(SHERLOCK, "title: Sherlock Jr.\n", "title: Sherlock Jr.: the projectionist\n", 0);
    h.tick(700);
    let evs = h.events(json!({"since": 0, "tables": ["film"], "kinds": ["unreadable"]}));
    assert_eq!(evs.len(), 1, "{evs:?}");
    let ev = &evs[0];
    assert_eq!(ev["kind"], "unreadable");
    assert_eq!(ev["table"], "main.public.film");
    assert_eq!(ev["path"], SHERLOCK);
    assert_eq!(ev["source"], "external");
    assert!(ev.get("changes").is_none() && ev.get("values").is_none(), "{ev}");
    let vs = ev["violations"].as_array().unwrap();
    assert_eq!(vs.len(), 1);
    assert_eq!(vs[0]["path"], SHERLOCK);
    assert_eq!(vs[0]["violations"].as_array().unwrap().len(), 1);
    let v = &vs[0]["violations"][0];
    assert_eq!(v["code"], "unreadable");
    let msg = v["message"].as_str().unwrap();
    assert!(msg.starts_with(UNREADABLE) && msg.contains("line 3"), "{msg}");
    assert_eq!(v.as_object().unwrap().len(), 2, "code and message only: {v}");

    // Every read leaves it out.
    let all = h.ok("select_rows", json!({"table": "film", "columns": ["title"]}));
    assert_eq!(all["total"], 6);
    assert!(!all.to_string().contains("Sherlock"), "{all}");
    assert_eq!(
        h.ok("check_table", json!({"table": "film"})),
        json!({"table": "film", "rows_checked": 7, "total": 1,
        "violations": [{"path": SHERLOCK, "violations": [{"code": "unreadable", "message": msg}]}]})
    );
    let film = film_table(&mut h);
    assert_eq!(film["qualified"], "main.public.film");
    assert_eq!(film["description"], "Classic films I watched or want to watch");
    assert_eq!((film["row_count"].clone(), film["unreadable_count"].clone()), (json!(6), json!(1)));

    // Quoting the title fixes it: an update from the last readable state.
    h.replace(
        SHERLOCK,
        "title: Sherlock Jr.: the projectionist\n",
        "title: \"Sherlock Jr.: the projectionist\"\n",
        2000,
    );
    h.tick(2700);
    let ev = h.events(json!({"since": 1})).remove(0);
    assert_eq!(ev["kind"], "update");
    assert_eq!(ev["row_id"], "01a0c04a-0342-76e7-93ea-954d5dbc616a");
    assert_eq!(ev["changes"], json!({"title": {"before": "Sherlock Jr.", "after": "Sherlock Jr.: the projectionist"}}));
    assert_eq!(ev["violations"], json!([]));
    assert_eq!(
        select(&mut h, json!({"table": "film", "columns": ["title"], "where": {"title": {"contains": "Sherlock"}}})),
        json!({"table": "main.public.film", "total": 1, "rows": [{"path": SHERLOCK, "title": "Sherlock Jr.: the projectionist"}]})
    );
    let film = film_table(&mut h);
    assert_eq!((film["row_count"].clone(), film["unreadable_count"].clone()), (json!(7), json!(0)));
    assert_eq!(h.ok("check_table", json!({"table": "film"}))["total"], 0);
}

#[test]
fn an_unreadable_row_renamed_then_fixed_is_an_update() {
    let mut h = Host::films();
    let to = "datanotes/main/public/film/Sherlock Junior.md";
    h.replace(SHERLOCK, "title: Sherlock Jr.\n", "title: Sherlock Jr.: the projectionist\n", 0);
    h.tick(700);
    h.rename(SHERLOCK, to, 2000);
    h.tick(2700);
    h.replace(to, "title: Sherlock Jr.: the projectionist\n", "title: Sherlock Junior\n", 4000);
    h.tick(4700);
    let ev = h.events(json!({"since": 2})).remove(0);
    assert_eq!(ev["kind"], "update", "{ev}");
    assert_eq!(ev["changes"], json!({"title": {"before": "Sherlock Jr.", "after": "Sherlock Junior"}}));
}

#[test]
fn a_new_note_unreadable_from_the_start_is_an_insert_once_fixed() {
    let mut h = Host::films();
    let sunrise = "datanotes/main/public/film/Sunrise.md";
    h.edit(sunrise, "---\ntable: main.public.film\ntitle: Sunrise: A Song of Two Humans\nyear: 1927\n---\n", 0);
    h.tick(700);
    let ev = h.events(json!({})).remove(0);
    assert_eq!((ev["kind"].as_str(), ev["path"].as_str()), (Some("unreadable"), Some(sunrise)));
    h.edit(sunrise, "---\ntable: main.public.film\ntitle: \"Sunrise: A Song of Two Humans\"\nyear: 1927\n---\n", 1000);
    h.tick(1700);
    let ev = h.events(json!({"since": 1})).remove(0);
    assert_eq!(ev["kind"], "insert");
    assert_eq!(
        ev["changes"],
        json!({"title": {"before": null, "after": "Sunrise: A Song of Two Humans"}, "year": {"before": null, "after": 1927}})
    );
    assert_eq!(ev["violations"], json!([]));
}

// ---------------------------------------------------------------------------
// 2. Batching
// ---------------------------------------------------------------------------

#[test]
fn a_batch_closes_0_7s_after_the_last_change() {
    let mut h = Host::films();
    assert_eq!(h.e.next_deadline(), None);
    h.replace(CHARADE, "minutes: 113", "minutes: 114", 0);
    assert_eq!(h.e.next_deadline(), Some(T0 + 700));
    h.replace(METROPOLIS, "minutes: 153", "minutes: 150", 500);
    assert_eq!(h.e.next_deadline(), Some(T0 + 1200));
    let early = h.tick(1199);
    assert_eq!(early.kind, Kind::Done);
    assert!(early.store.is_empty() && early.log.is_empty(), "{:?}", early.store);
    assert_eq!(h.head(), 0);
    h.tick(1200);
    let evs = h.events(json!({}));
    assert_eq!(seqs(&evs), [1, 2]);
    assert_eq!(evs.iter().map(|e| e["path"].as_str().unwrap()).collect::<Vec<_>>(), [CHARADE, METROPOLIS]);
    assert!(evs.iter().all(|e| e["at"] == "2026-10-12T16:52:01.200Z"), "{evs:?}");
    assert_eq!(h.e.next_deadline(), None);
}

#[test]
fn a_batch_closes_5s_after_its_first_change_at_most_and_writes_of_one_note_are_one_change() {
    let mut h = Host::films();
    // Charade's rating edited every 0.6 s: the vault never goes quiet for 0.7 s.
    let ratings = [4, 3, 2, 1, 2, 3, 4, 1, 9];
    for (i, r) in ratings.iter().enumerate() {
        let at = i as i64 * 600;
        let line = h.text(CHARADE).lines().find(|l| l.starts_with("rating: ")).unwrap().to_string();
        h.replace(CHARADE, &line, &format!("rating: {r}"), at);
        assert_eq!(h.e.next_deadline(), Some(T0 + (at + 700).min(5000)), "after the edit at {at}");
    }
    let early = h.tick(4999);
    assert!(early.store.is_empty() && early.log.is_empty());
    assert_eq!(h.head(), 0);
    h.tick(5000);
    let evs = h.events(json!({}));
    let steps: Vec<(i64, i64)> = evs
        .iter()
        .map(|e| {
            (e["changes"]["rating"]["before"].as_i64().unwrap(), e["changes"]["rating"]["after"].as_i64().unwrap())
        })
        .collect();
    // Nine saves of one note in one batch are one change, from the first text to
    // the last (a watcher may also see a file half written: never reported).
    assert_eq!(steps, [(5, 9)]);
    assert_eq!(
        evs[0]["violations"],
        json!([{"path": CHARADE, "violations": [{"code": "check", "constraint": "rating_range",
            "message": format!("violates CHECK rating_range: {RATING_RANGE}"), "value": {"rating": 9}}]}])
    );
    // A change after the batch closed starts the next one.
    h.replace(CHARADE, "rating: 9", "rating: 5", 5100);
    assert_eq!(h.e.next_deadline(), Some(T0 + 5800));
    h.tick(5800);
    assert_eq!(h.head(), 2);
}

#[test]
fn several_rows_edited_in_one_batch_are_each_checked_on_their_own_event() {
    let mut h = Host::films();
    // Silent film becomes a cinema, and Slapstick comedy an era under it: that
    // one holds, the other genres under Silent film do not.
    h.replace(SILENT, "kind: era", "kind: cinema", 0);
    h.replace(SLAPSTICK, "kind: genre", "kind: era", 300);
    h.tick(1000);
    let evs = h.events(json!({}));
    assert_eq!(evs.iter().map(|e| e["path"].as_str().unwrap()).collect::<Vec<_>>(), [SILENT, SLAPSTICK]);
    assert_eq!(
        evs[0]["violations"],
        json!([
            {"path": SILENT, "violations": [parent_by_level(SILENT, "")]},
            {"path": EXPRESSIONISM, "violations": [parent_by_level(EXPRESSIONISM, AFTER_SILENT)]},
            {"path": SOVIET, "violations": [parent_by_level(SOVIET, AFTER_SILENT)]},
        ])
    );
    assert_eq!(evs[1]["changes"], json!({"kind": {"before": "genre", "after": "era"}}));
    assert_eq!(evs[1]["violations"], json!([]));
}

#[test]
fn a_rename_and_an_edit_in_one_batch_are_reported_in_order() {
    let mut h = Host::films();
    let to = "datanotes/main/public/genre/Slapstick.md";
    h.rename(SLAPSTICK, to, 0);
    h.replace(to, "name: Slapstick comedy", "name: Slapstick", 100);
    h.tick(800);
    let evs = h.events(json!({}));
    assert_eq!(evs.len(), 2, "{evs:?}");
    assert_eq!(
        (evs[0]["kind"].as_str(), evs[0]["path"].as_str(), evs[0]["old_path"].as_str()),
        (Some("move"), Some(to), Some(SLAPSTICK))
    );
    assert!(evs[0].get("changes").is_none() && evs[0].get("violations").is_none(), "{}", evs[0]);
    assert_eq!((evs[1]["kind"].as_str(), evs[1]["path"].as_str()), (Some("update"), Some(to)));
    assert!(evs[1].get("old_path").is_none());
    assert_eq!(evs[1]["changes"], json!({"name": {"before": "Slapstick comedy", "after": "Slapstick"}}));
    assert_eq!(evs[1]["violations"], json!([]));
    // The repair names the move's event in its cause.
    assert_eq!(h.tick(4100).kind, Kind::Apply);
    let repair = h.events(json!({"since": 2}));
    assert_eq!(repair.len(), 2);
    assert!(repair.iter().all(|e| e["cause"] == json!([{"path": to, "old_path": SLAPSTICK, "seq": 1}])), "{repair:?}");
    assert_eq!(h.ok("check_table", json!({}))["total"], 0);
}

#[test]
fn a_row_edited_with_a_hand_rename_is_not_told_its_link_is_broken() {
    let mut h = Host::films();
    h.rename(SLAPSTICK, "datanotes/main/public/genre/Slapstick.md", 0);
    h.replace(GOLD_RUSH, "minutes: 95", "minutes: 96", 200);
    let t = h.tick(900);
    let ev = h.events(json!({"tables": ["film"]})).remove(0);
    assert_eq!(ev["changes"], json!({"minutes": {"before": 95, "after": 96}}));
    assert!(t.log.is_empty(), "{:?}", t.log);
    assert_eq!(ev["violations"], json!([]), "the repair follows, as for Sherlock Jr.");
}

#[test]
fn a_row_created_by_hand_is_an_insert_checked_against_the_rules() {
    let mut h = Host::films();
    let sunrise = "datanotes/main/public/film/Sunrise.md";
    h.edit(sunrise, "---\ntable: main.public.film\ntitle: Sunrise\nrating: 7\n---\nMurnau.\n", 0);
    let t = h.tick(700);
    assert_eq!(t.log.len(), 1);
    let ev = h.events(json!({})).remove(0);
    assert_eq!(ev["kind"], "insert");
    assert_eq!(ev["table"], "main.public.film");
    assert_eq!(ev["path"], sunrise);
    assert_eq!(
        ev["changes"],
        json!({"title": {"before": null, "after": "Sunrise"}, "rating": {"before": null, "after": 7}})
    );
    assert_eq!(ev["values"], json!({"title": "Sunrise", "rating": 7}));
    assert_eq!(
        ev["violations"],
        json!([{"path": sunrise, "violations": [
            {"code": "required", "column": "year", "message": "is required: set \"year\""},
            {"code": "check", "constraint": "rating_range", "message": format!("violates CHECK rating_range: {RATING_RANGE}"),
                "value": {"rating": 7}},
        ]}])
    );
    assert_eq!(select(&mut h, json!({"table": "film", "columns": ["title"]}))["total"], 8);
}

#[test]
fn a_row_deleted_by_hand_is_a_delete_and_the_rows_linking_to_it_break() {
    let mut h = Host::films();
    h.remove(FRITZ_LANG, 0);
    let t = h.tick(700);
    assert_eq!(t.log.len(), 1, "{:?}", t.log);
    let ev = h.events(json!({})).remove(0);
    assert_eq!(ev["kind"], "delete");
    assert_eq!(ev["table"], "main.public.person");
    assert_eq!(ev["path"], FRITZ_LANG);
    assert_eq!(ev["row_id"], "01a0c038-66c6-7787-bd8c-d2e9e159c591");
    assert_eq!(ev["values"], json!({"name": "Fritz Lang", "born": 1890}), "the values before");
    assert!(ev.get("changes").is_none());
    assert_eq!(
        ev["violations"],
        json!([{"path": METROPOLIS, "violations": [{"code": "broken_link", "column": "director",
            "message": "[[Fritz Lang]] does not resolve to a row of main.public.person (after the edit of [[Fritz Lang]], a row it links to)"}]}])
    );
    let c = h.ok("check_table", json!({"table": "film"}));
    assert_eq!(
        c["violations"],
        json!([{"path": METROPOLIS, "violations": [{"code": "broken_link", "column": "director",
        "message": "[[Fritz Lang]] does not resolve to a row of main.public.person"}]}])
    );
}

#[test]
fn a_body_only_edit_is_an_update_without_changes_or_violations() {
    let mut h = Host::films();
    h.replace(CHARADE, "in Paris,", "in Paris (1963),", 0);
    let t = h.tick(700);
    assert!(t.log.is_empty());
    let ev = h.events(json!({})).remove(0);
    assert_eq!(ev["kind"], "update");
    assert_eq!(ev["path"], CHARADE);
    assert_eq!(ev["values"]["title"], "Charade");
    assert!(ev.get("changes").is_none(), "{ev}");
    assert!(ev.get("violations").is_none(), "nothing was checked: {ev}");
    // Editing a plain note's text is no row change at all.
    h.replace(FILM_NIGHT, "Friday evening", "Friday night", 1000);
    h.tick(1700);
    assert_eq!(h.head(), 1);
}

#[test]
fn the_engines_own_writes_reported_back_by_the_host_are_not_hand_edits() {
    let mut h = Host::films();
    h.echo = true;
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    h.ok("insert_row", json!({"table": "person", "values": {"name": "Max Schreck", "born": 1879}}));
    h.ok("delete_rows", json!({"table": "film", "paths": ["datanotes/main/public/film/Battleship Potemkin.md"]}));
    h.ok("add_column", json!({"table": "person", "column": "died", "definition": {"type": "integer"}}));
    h.ok("rename_column", json!({"table": "genre", "column": "kind", "new_name": "level"}));
    let head = h.head();
    assert!(head >= 4, "{head}");
    assert_eq!(h.e.next_deadline(), None, "nothing queued");
    let t = h.tick(10_000);
    assert!(t.log.is_empty() && t.store.is_empty(), "{:?}", t.store);
    assert_eq!(h.head(), head);
    let evs = h.events(json!({"kinds": ["insert", "update", "delete", "move", "metastore", "unreadable"]}));
    assert!(evs.iter().all(|e| e["source"] == "engine"), "{evs:?}");
}

// ---------------------------------------------------------------------------
// 3. list_changes
// ---------------------------------------------------------------------------

/// Four events: a hand edit of a genre (1), Charade's rating by "agent" (2),
/// a viewing moved to the cinema by "test" (3), Fritz Lang removed by hand (4).
fn four_events() -> Host {
    let mut h = Host::films();
    h.replace(SILENT, "kind: era", "kind: cinema", 0);
    h.tick(700);
    h.now = T0 + 1000;
    let a = h.call_as("agent", "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(a.status, Status::Ok, "{}", a.answer);
    h.ok("update_row", json!({"table": "watch", "path": HGF_WATCH, "set": {"where": "cinema"}}));
    h.remove(FRITZ_LANG, 2000);
    h.tick(2700);
    assert_eq!(h.head(), 4);
    h
}

#[test]
fn list_changes_reads_on_from_last_and_tells_the_head() {
    let mut h = four_events();
    let all = h.changes(json!({}));
    assert_eq!(seqs(all["events"].as_array().unwrap()), [1, 2, 3, 4]);
    assert_eq!((all["last"].clone(), all["head"].clone()), (json!(4), json!(4)));
    assert!(all.get("gap").is_none());
    let some = h.changes(json!({"since": 2}));
    assert_eq!(seqs(some["events"].as_array().unwrap()), [3, 4]);
    let none = h.changes(json!({"since": 4}));
    assert_eq!(none, json!({"events": [], "last": 4, "head": 4}));
    // A filter that matches little still moves `last` over what it read.
    let film = h.changes(json!({"since": 0, "tables": ["film"]}));
    assert_eq!(seqs(film["events"].as_array().unwrap()), [2]);
    assert_eq!(film["last"], 4);
    // Who made each change.
    let evs = all["events"].as_array().unwrap();
    assert_eq!(evs[1]["actor"], "agent");
    assert_eq!(evs[2]["actor"], "test");
    assert!(evs[0].get("actor").is_none() && evs[3].get("actor").is_none());
    assert_eq!(evs[2]["changes"]["where"], json!({"before": "home", "after": "cinema"}));
    assert_eq!(evs[2]["changes"]["label"]["after"], "His Girl Friday (03/10 21:30, cinema)");
}

#[test]
fn list_changes_limit_takes_1_to_5000() {
    let mut h = four_events();
    let one = h.changes(json!({"since": 1, "limit": 1}));
    assert_eq!(seqs(one["events"].as_array().unwrap()), [2]);
    assert_eq!((one["last"].clone(), one["head"].clone()), (json!(2), json!(4)));
    let next = h.changes(json!({"since": one["last"], "limit": 2}));
    assert_eq!(seqs(next["events"].as_array().unwrap()), [3, 4]);
    assert_eq!(seqs(h.changes(json!({"limit": 5000}))["events"].as_array().unwrap()), [1, 2, 3, 4]);
    for bad in [0, -1, 5001] {
        let out = h.call("list_changes", json!({"limit": bad}));
        assert_eq!(out.status, Status::BadInput, "{bad}: {}", out.answer);
        assert!(
            out.answer["error"].as_str().unwrap().contains(&format!("limit {bad} is out of range")),
            "{}",
            out.answer
        );
    }
    let out = h.call("list_changes", json!({"limit": "ten"}));
    assert_eq!(out.status, Status::BadInput);
    let out = h.call("list_changes", json!({"wait_ms": 60_001}));
    assert_eq!(out.status, Status::BadInput);
    assert!(out.answer["error"].as_str().unwrap().contains("wait_ms 60001 is out of range"), "{}", out.answer);
    assert_eq!(h.call("list_changes", json!({"wait_ms": 60_000})).status, Status::Ok);
}

#[test]
fn list_changes_filters_tables_kinds_and_columns() {
    let mut h = four_events();
    let s = |h: &mut Host, args: Value| seqs(&h.events(args));
    assert_eq!(s(&mut h, json!({"tables": ["genre"]})), [1]);
    assert_eq!(s(&mut h, json!({"tables": ["main.public.genre", "person"]})), [1, 4]);
    let out = h.call("list_changes", json!({"tables": ["films"]}));
    assert_ne!(out.status, Status::Ok);
    assert!(out.answer["error"].as_str().unwrap().contains("films"), "{}", out.answer);

    assert_eq!(s(&mut h, json!({"kinds": ["delete"]})), [4]);
    assert_eq!(s(&mut h, json!({"kinds": ["update"]})), [1, 2, 3]);
    let out = h.call("list_changes", json!({"kinds": ["updates"]}));
    assert_eq!(out.status, Status::BadInput);
    assert!(
        out.answer["error"].as_str().unwrap().contains("kinds: \"updates\" is not a kind of change"),
        "{}",
        out.answer
    );

    assert_eq!(s(&mut h, json!({"columns": ["rating"]})), [2]);
    assert_eq!(s(&mut h, json!({"columns": ["label", "kind"]})), [1, 3]);
    // A delete touches every column it had.
    assert_eq!(s(&mut h, json!({"columns": ["born"]})), [4]);
    assert_eq!(s(&mut h, json!({"tables": ["film"], "kinds": ["delete"]})), Vec::<u64>::new());
}

#[test]
fn list_changes_where_filters_on_the_values_after_the_change() {
    let mut h = four_events();
    let s = |h: &mut Host, w: Value| seqs(&h.events(json!({"where": w})));
    assert_eq!(s(&mut h, json!({"where": "cinema"})), [3]);
    assert_eq!(s(&mut h, json!({"rating": {"lt": 5}})), [2]);
    assert_eq!(s(&mut h, json!({"rating": 5})), Vec::<u64>::new(), "Charade's rating before was 5: not after");
    // Dotted paths follow links: the viewing's film, the genre's parent.
    assert_eq!(s(&mut h, json!({"film.year": {"lt": 1950}})), [3]);
    assert_eq!(s(&mut h, json!({"parent.kind": "cinema"})), [1]);
    // A delete is matched on its values before.
    assert_eq!(s(&mut h, json!({"born": 1890})), [4]);
    let out = h.call("list_changes", json!({"where": {"rating": {"between": 3}}}));
    assert_eq!(out.status, Status::BadInput, "{}", out.answer);
    assert!(out.answer["error"].as_str().unwrap().contains("where: "), "{}", out.answer);
}

#[test]
fn list_changes_exclude_actor_leaves_out_ones_own_changes() {
    let mut h = four_events();
    assert_eq!(seqs(&h.events(json!({"exclude_actor": "agent"}))), [1, 3, 4]);
    assert_eq!(seqs(&h.events(json!({"exclude_actor": "test"}))), [1, 2, 4]);
    assert_eq!(seqs(&h.events(json!({"exclude_actor": "nobody"}))), [1, 2, 3, 4]);
}

#[test]
fn list_changes_migration_id_keeps_one_operations_changes() {
    let mut h = four_events();
    let all = h.changes(json!({}));
    let second = all["events"][1]["migration_id"].as_str().expect("an engine write has its migration").to_string();
    assert_eq!(seqs(&h.events(json!({"migration_id": second}))), [2]);
    assert_eq!(seqs(&h.events(json!({"migration_id": "20990101T000000-nothing"}))), Vec::<u64>::new());
    // Hand edits belong to no operation.
    assert!(all["events"][0].get("migration_id").is_none_or(Value::is_null), "{}", all["events"][0]);
}

fn tool_call(n: usize) -> datanotes_core::handedit::ToolCall {
    datanotes_core::handedit::ToolCall {
        tool: "select_rows".into(),
        args: json!({"table": "film", "where": {"rating": 5}}),
        ok: true,
        duration_ms: 12,
        value: json!({"table": "main.public.film", "total": n, "rows": vec![json!({"title": "Charade"}); n]}),
        served_by: "engine".into(),
        actor: json!({"credential": "owner", "client": "claude-desktop"}),
    }
}

#[test]
fn tool_calls_are_listed_only_when_asked_for() {
    let mut h = Host::films();
    let writes = h.e.record_tool_call(tool_call(2), T0 + 10);
    assert_eq!(writes.len(), 1);
    assert!(
        writes[0].append && writes[0].path.starts_with("feed/") && writes[0].path.ends_with(".jsonl"),
        "{writes:?}"
    );
    h.keep(&writes);
    assert_eq!(h.head(), 1);
    assert_eq!(h.changes(json!({})), json!({"events": [], "last": 1, "head": 1}));
    // A cursor past the head (another store's, or one made again) is sent back
    // to the head, with gap: kept, it would have hidden the next 98 changes.
    let past = json!({"events": [], "last": 1, "head": 1, "gap": true});
    assert_eq!(h.changes(json!({"since": 99})), past);
    assert_eq!(h.changes(json!({"since": 99, "kinds": ["tool_call"]})), past);
    assert_eq!(h.events(json!({"kinds": ["insert", "update"]})), Vec::<Value>::new());
    let evs = h.events(json!({"kinds": ["tool_call"]}));
    assert_eq!(evs.len(), 1);
    let ev = &evs[0];
    assert_eq!(ev["kind"], "tool_call");
    assert_eq!(ev["source"], "engine");
    assert_eq!(ev["actor"], json!({"credential": "owner", "client": "claude-desktop"}));
    assert_eq!(ev["at"], "2026-10-12T16:52:00.010Z");
    // The answer's top-level scalars, and its lists as their length.
    assert_eq!(
        ev["call"],
        json!({"tool": "select_rows", "args": {"table": "film", "where": "{…}"}, "ok": true, "duration_ms": 12,
               "value": {"table": "main.public.film", "total": 2, "rows": 2}, "served_by": "engine"})
    );
    assert_eq!(h.events(json!({"kinds": ["tool_call"], "exclude_actor": "owner"})), Vec::<Value>::new());
}

#[test]
fn the_feed_is_kept_in_appended_segments_and_survives_a_restart() {
    let mut h = four_events();
    let before = h.changes(json!({}));
    let segs: Vec<&String> = h.store.keys().filter(|p| p.starts_with("feed/")).collect();
    assert_eq!(segs, ["feed/00000000000000000001.jsonl"]);
    assert_eq!(h.store["feed/00000000000000000001.jsonl"].lines().count(), 4);
    h.reopen();
    assert_eq!(h.head(), 4);
    assert_eq!(h.changes(json!({})), before);
    h.replace(CHARADE, "minutes: 113", "minutes: 114", 5000);
    h.tick(5700);
    assert_eq!(h.events(json!({"since": 4}))[0]["seq"], 5);
}

// ---------------------------------------------------------------------------
// 4. describe_history
// ---------------------------------------------------------------------------

fn newest_commit(h: &mut Host, table: &str) -> Value {
    h.ok("describe_history", json!({"table": table, "limit": 1}))["history"][0].clone()
}

#[test]
fn a_batch_of_hand_edits_is_an_external_edit_version_counting_what_it_broke() {
    let mut h = Host::films();
    h.replace(SILENT, "kind: era", "kind: cinema", 0);
    h.tick(700);
    let hist = h.ok("describe_history", json!({"table": "genre"}));
    assert_eq!(hist["table"], "main.public.genre");
    assert_eq!(
        hist["history"],
        json!([
            {"version": 1, "timestamp": "2026-10-12T16:52:00.700Z", "operation": "EXTERNAL_EDIT", "migration_id": null,
             "operation_metrics": {"rows_inserted": 0, "rows_updated": 1, "rows_deleted": 0, "violations": 4}},
            {"version": 0, "timestamp": "1970-01-01T00:00:00.000Z", "operation": "CONVERT", "migration_id": null,
             "operation_metrics": {"rows": 8}},
        ])
    );
    // A body-only edit is not checked: no count.
    h.replace(CHARADE, "in Paris,", "in Paris (1963),", 1000);
    h.tick(1700);
    let c = newest_commit(&mut h, "film");
    assert_eq!(c["operation"], "EXTERNAL_EDIT");
    assert_eq!(c["operation_metrics"], json!({"rows_inserted": 0, "rows_updated": 1, "rows_deleted": 0}));
    // Several rows, an insert and a delete in one batch.
    h.edit(
        "datanotes/main/public/film/Sunrise.md",
        "---\ntable: main.public.film\ntitle: Sunrise\nyear: 1927\nrating: 7\n---\n",
        2000,
    );
    h.replace(GOLD_RUSH, "rating: 4", "rating: 0", 2100);
    h.remove("datanotes/main/public/film/Nosferatu.md", 2200);
    h.tick(2900);
    let c = newest_commit(&mut h, "film");
    assert_eq!(c["version"], 2);
    assert_eq!(
        c["operation_metrics"],
        json!({"rows_inserted": 1, "rows_updated": 1, "rows_deleted": 1, "violations": 2})
    );
}

#[test]
fn an_external_edit_counts_only_its_own_tables_rows() {
    let mut h = Host::films();
    h.remove(FRITZ_LANG, 0);
    h.tick(700);
    let c = newest_commit(&mut h, "person");
    assert_eq!(c["operation"], "EXTERNAL_EDIT");
    assert_eq!(c["operation_metrics"]["rows_deleted"], 1);
    assert_eq!(c["operation_metrics"]["violations"], 0, "no person row breaks a rule: {c}");
}

#[test]
fn an_external_edit_checked_and_clean_counts_zero() {
    let mut h = Host::films();
    h.replace(CHARADE, "minutes: 113", "minutes: 114", 0);
    h.tick(700);
    assert_eq!(h.events(json!({}))[0]["violations"], json!([]), "checked");
    assert_eq!(newest_commit(&mut h, "film")["operation_metrics"]["violations"], 0);
}

// ---------------------------------------------------------------------------
// 5. metastore.yaml edited by hand
// ---------------------------------------------------------------------------

fn rating_range_lte(n: u32) -> Value {
    json!({"code": "check", "constraint": "rating_range",
        "message": format!("violates CHECK rating_range: {}", RATING_RANGE.replace("\"lte\":5", &format!("\"lte\":{n}"))),
        "value": {"rating": 5}})
}

#[test]
fn a_hand_edit_of_metastore_yaml_is_a_metastore_event_with_the_rows_it_breaks() {
    let mut h = Host::films();
    h.replace(METASTORE, "{rating: {lte: 5}}", "{rating: {lte: 4}}", 0);
    let t = h.tick(700);
    assert_eq!(t.log.len(), 1, "{:?}", t.log);
    let evs = h.events(json!({}));
    assert_eq!(evs.len(), 1, "only the table whose entry changed: {evs:?}");
    let ev = &evs[0];
    assert_eq!(ev["kind"], "metastore");
    assert_eq!(ev["table"], "main.public.film");
    assert_eq!(ev["path"], METASTORE);
    assert_eq!(ev["source"], "external");
    let def = &ev["changes"]["definition"];
    assert_eq!(def["before"]["checks"]["rating_range"]["or"][1]["and"][1], json!({"rating": {"lte": 5}}));
    assert_eq!(def["after"]["checks"]["rating_range"]["or"][1]["and"][1], json!({"rating": {"lte": 4}}));
    assert_eq!(def["after"]["description"], "Classic films I watched or want to watch");
    assert_eq!(
        ev["violations"],
        json!([{"path": CHARADE, "violations": [rating_range_lte(4)]}, {"path": METROPOLIS, "violations": [rating_range_lte(4)]}])
    );
    // The engine reads with the new schema, and its version counts the rows.
    assert_eq!(h.ok("check_table", json!({"table": "film"}))["total"], 2);
    let c = newest_commit(&mut h, "film");
    assert_eq!(c["operation"], "EXTERNAL_EDIT");
    assert_eq!(c["operation_metrics"]["violations"], 2);
}

#[test]
fn each_tables_metastore_event_carries_its_own_rows() {
    let mut h = Host::films();
    let text = h.text(METASTORE).replace("{rating: {lte: 5}}", "{rating: {lte: 4}}").replace(
        "      born: {type: integer, description: Year of birth}",
        "      born: {type: integer, description: Year of birth}\n      died: {type: integer, required: true}",
    );
    h.edit(METASTORE, &text, 0);
    h.tick(700);
    let evs = h.events(json!({}));
    assert_eq!(
        evs.iter().map(|e| e["table"].as_str().unwrap()).collect::<Vec<_>>(),
        ["main.public.film", "main.public.person"]
    );
    let paths = |e: &Value| {
        e["violations"]
            .as_array()
            .map(|a| a.iter().map(|r| r["path"].as_str().unwrap().to_string()).collect::<Vec<_>>())
    };
    assert_eq!(paths(&evs[0]), Some(vec![CHARADE.to_string(), METROPOLIS.to_string()]));
    assert_eq!(paths(&evs[1]).map(|p| p.len()), Some(10));
    assert_eq!(newest_commit(&mut h, "film")["operation_metrics"]["violations"], 2);
    assert_eq!(newest_commit(&mut h, "person")["operation_metrics"]["violations"], 10);
}

#[test]
fn two_metastore_edits_in_one_batch_are_both_checked() {
    let mut h = Host::films();
    h.replace(METASTORE, "{rating: {lte: 5}}", "{rating: {lte: 4}}", 0);
    h.replace(METASTORE, "People in front of and behind the camera", "People of the films", 100);
    h.tick(800);
    let evs = h.events(json!({}));
    assert_eq!(
        evs.iter().map(|e| e["table"].as_str().unwrap()).collect::<Vec<_>>(),
        ["main.public.film", "main.public.person"]
    );
    assert_eq!(
        evs[0]["violations"],
        json!([{"path": CHARADE, "violations": [rating_range_lte(4)]}, {"path": METROPOLIS, "violations": [rating_range_lte(4)]}])
    );
    assert_eq!(evs[1]["violations"], json!([]));
}

#[test]
fn a_metastore_event_lists_at_most_100_violations_and_counts_them_all() {
    let mut h = Host::films();
    let extra: String = (1..=11).map(|i| format!("\n      x{i:02}: {{type: integer, required: true}}")).collect();
    let line = "      born: {type: integer, description: Year of birth}";
    h.replace(METASTORE, line, &format!("{line}{extra}"), 0);
    h.tick(700);
    let ev = h.events(json!({})).remove(0);
    assert_eq!(ev["table"], "main.public.person");
    assert_eq!(ev["violations_total"], 110);
    let listed: usize =
        ev["violations"].as_array().unwrap().iter().map(|r| r["violations"].as_array().unwrap().len()).sum();
    assert_eq!(listed, 100);
    assert_eq!(
        ev["violations"][0],
        json!({"path": "datanotes/main/public/person/Audrey Hepburn.md", "violations": (1..=11)
            .map(|i| json!({"code": "required", "column": format!("x{i:02}"), "message": format!("is required: set \"x{i:02}\"")}))
            .collect::<Vec<_>>()})
    );
}

#[test]
fn broken_yaml_in_metastore_yaml_refuses_writes_until_it_is_fixed() {
    let mut h = Host::films();
    let good = h.text(METASTORE);
    h.edit(METASTORE, "version: 1\ntables:\n  main.public.film: [oops\n", 0);
    let t = h.tick(700);
    assert_eq!(t.log.len(), 1, "{:?}", t.log);
    let ev = h.events(json!({})).remove(0);
    assert_eq!(ev["kind"], "metastore");
    assert_eq!(ev["table"], Value::Null);
    assert_eq!(ev["path"], METASTORE);
    let vs = &ev["violations"];
    assert_eq!(vs.as_array().unwrap().len(), 1);
    assert_eq!(vs[0]["path"], METASTORE);
    let v = &vs[0]["violations"][0];
    assert_eq!(v["code"], "unreadable");
    let msg = v["message"].as_str().unwrap();
    assert!(msg.starts_with("datanotes/metastore.yaml cannot be read: "), "{msg}");
    assert!(msg.ends_with(": the engine keeps the schema it had, and refuses writes until the file is fixed"), "{msg}");

    let out = h.call("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"minutes": 150}}));
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
    let err = out.answer["error"].as_str().unwrap();
    assert!(err.contains("datanotes/metastore.yaml cannot be read") && err.contains("no write runs"), "{err}");
    assert!(h.text(METROPOLIS).contains("minutes: 153"));
    let described = h.ok("describe_database", json!({}));
    assert!(described["schema_error"].as_str().unwrap().contains("cannot be read"));
    assert_eq!(described["tables"].as_array().map(Vec::len), Some(4), "the schema kept: {described}");
    assert_eq!(described["hint"], "the tables are those of the schema the engine had before metastore.yaml stopped reading. Fix datanotes/metastore.yaml (git can bring back its last good version): until it reads, no write runs.");
    // check_table of every table does not say all is well: it says why it cannot check.
    let out = h.call("check_table", json!({}));
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
    let err = out.answer["error"].as_str().unwrap();
    assert!(
        err.starts_with("check_table refused — nothing was written:\ndatanotes/metastore.yaml cannot be read: "),
        "{err}"
    );
    assert!(err.contains("Hint: Fix datanotes/metastore.yaml"), "{err}");

    // Putting the good text back: writes run again. No table's entry changed,
    // so one event says the file reads again (no violations: checked).
    h.edit(METASTORE, &good, 2000);
    h.tick(2700);
    assert_eq!(h.head(), 2);
    let ev = h.events(json!({"since": 1})).remove(0);
    assert_eq!((&ev["kind"], &ev["path"], &ev["table"]), (&json!("metastore"), &json!(METASTORE), &Value::Null));
    assert_eq!(ev["violations"], json!([]));
    let described = h.ok("describe_database", json!({}));
    assert!(described.get("schema_error").is_none() && described.get("hint").is_none(), "{described}");
    assert_eq!(h.ok("check_table", json!({}))["total"], 0);
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"minutes": 150}}));
    assert!(h.text(METROPOLIS).contains("minutes: 150"));
}

// ---------------------------------------------------------------------------
// 6. Webhooks
// ---------------------------------------------------------------------------

const URL: &str = "https://example.com/hooks/datanotes";

fn hmac_hex(secret: &str, body: &str) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body.as_bytes());
    mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

fn header<'a>(d: &'a Delivery, name: &str) -> &'a str {
    d.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("no {name}: {d:?}"))
}

/// A seeded engine on the film diary.
fn seeded() -> Host {
    let mut h = Host::films();
    h.e.seed(&[7u8; 32]);
    h
}

/// Creates a webhook; its id and secret.
fn hook(h: &mut Host, args: Value) -> (String, String) {
    let out = h.call("create_webhook", args);
    assert_eq!(out.status, Status::Ok, "{}", out.answer);
    let w = &out.answer["webhook"];
    (w["id"].as_str().unwrap().to_string(), w["secret"].as_str().unwrap().to_string())
}

fn hooks(h: &mut Host) -> Vec<Value> {
    h.ok("list_webhooks", json!({}))["webhooks"].as_array().unwrap().clone()
}

fn body(d: &Delivery) -> Value {
    serde_json::from_str(&d.body).unwrap()
}

fn delivered(h: &mut Host, d: &Delivery, result: Result<u16, String>) {
    let w = h.e.delivered(&d.webhook, d.last, result, h.now);
    assert_eq!(w.iter().map(|w| w.path.as_str()).collect::<Vec<_>>(), ["webhooks.json"]);
    h.keep(&w);
}

/// A webhook's where is held to its tables' column types as list_changes' is
/// (filter_types.rs): {"year": {"ne": "1950"}} would send every change.
#[test]
fn create_webhook_refuses_a_where_of_the_wrong_type() {
    let mut h = seeded();
    let out = h.call("create_webhook", json!({"url": URL, "tables": ["film"], "where": {"year": {"ne": "1950"}}}));
    assert_eq!(out.status, Status::BadInput, "{}", out.answer);
    let text = out.answer["error"].as_str().unwrap();
    assert!(text.contains("so ne holds for every row; write {\"year\": {\"ne\": 1950}}"), "{text}");
    assert_eq!(hooks(&mut h), Vec::<Value>::new());
    hook(&mut h, json!({"url": URL, "tables": ["film"], "where": {"year": {"ne": 1950}}}));
    assert_eq!(hooks(&mut h).len(), 1);
}

#[test]
fn create_webhook_needs_the_hosts_randomness_and_shows_the_secret_only_once() {
    let mut h = Host::films();
    let out = h.call("create_webhook", json!({"url": URL}));
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
    assert!(
        out.answer["error"]
            .as_str()
            .unwrap()
            .contains("this engine's host gave it no randomness, so it cannot make a secret"),
        "{}",
        out.answer
    );
    assert_eq!(hooks(&mut h), Vec::<Value>::new());

    h.e.seed(&[7u8; 32]);
    h.now = T0 + 5;
    let a = h.ok("create_webhook", json!({"url": URL, "tables": ["film"], "kinds": ["update", "delete"]}));
    assert_eq!((a["ok"].clone(), a["op"].clone()), (json!(true), json!("create_webhook")));
    let w = a["webhook"].clone();
    let id = w["id"].as_str().unwrap();
    assert!(id.starts_with("wh_") && id.len() == 15, "{id}");
    let secret = w["secret"].as_str().unwrap();
    assert!(secret.len() == 64 && secret.chars().all(|c| c.is_ascii_hexdigit()), "{secret}");
    assert_eq!(w["url"], URL);
    assert_eq!(w["filter"]["tables"], json!(["film"]));
    assert_eq!(w["filter"]["kinds"], json!(["update", "delete"]));
    assert_eq!((w["cursor"].clone(), w["status"].clone()), (json!(0), json!("ok")));
    assert_eq!(w["created_at"], "2026-10-12T16:52:00.005Z");
    assert_eq!((w["last_delivery"].clone(), w["last_error"].clone()), (Value::Null, Value::Null));

    let listed = h.ok("list_webhooks", json!({}));
    let mut shown = w.clone();
    shown.as_object_mut().unwrap().remove("secret");
    assert_eq!(listed, json!({"webhooks": [shown]}));
    assert!(!listed.to_string().contains(secret));
    assert!(h.store["webhooks.json"].contains(id), "kept in the store");

    let (id2, secret2) = hook(&mut h, json!({"url": URL}));
    assert_ne!((id, secret), (id2.as_str(), secret2.as_str()));
    for (args, text) in [
        (json!({"url": "ftp://example.com/x"}), "\"ftp://example.com/x\" is not an http(s) URL"),
        (json!({"url": URL, "kinds": ["inserts"]}), "kinds: \"inserts\" is not a kind of change"),
    ] {
        let out = h.call("create_webhook", args);
        assert_eq!(out.status, Status::BadInput);
        assert!(out.answer["error"].as_str().unwrap().contains(text), "{}", out.answer);
    }
    assert_eq!(hooks(&mut h).len(), 2);
}

#[test]
fn webhook_addresses_refused_link_local_metadata_credentials_always_private_unless_the_host_allows() {
    let mut h = seeded();
    for (url, status, text) in [
        ("http://169.254.169.254/latest/meta-data/", Status::Refused, "link-local or cloud metadata"),
        ("http://metadata.google.internal/", Status::Refused, "cloud metadata service"),
        ("http://[fe80::1]/hook", Status::Refused, "link-local"),
        ("http://2130706433/", Status::Refused, "not a dotted IPv4 address"),
        ("https://user:pass@example.com/hook", Status::BadInput, "carries credentials"),
        ("http://10.0.0.7/hook", Status::Refused, "--allow-private-webhooks"),
        ("http://127.0.0.1:9/hook", Status::Refused, "a loopback address"),
        ("http://nas.local/hook", Status::Refused, "local network"),
    ] {
        let out = h.call("create_webhook", json!({"url": url}));
        assert_eq!(out.status, status, "{url}: {}", out.answer);
        assert!(out.answer.to_string().contains(text), "{url}: {}", out.answer);
    }
    assert!(hooks(&mut h).is_empty(), "nothing was created");
    assert!(!h.store.contains_key("webhooks.json"));
    // The host's setting opens the private ranges, never the rest.
    h.e.allow_private_webhooks(true);
    hook(&mut h, json!({"url": "http://127.0.0.1:9/hook"}));
    hook(&mut h, json!({"url": "http://10.0.0.7/hook"}));
    let out = h.call("create_webhook", json!({"url": "http://169.254.169.254/"}));
    assert_eq!(out.status, Status::Refused, "{}", out.answer);
    assert_eq!(hooks(&mut h).len(), 2);
    // The host no longer allows them (serve started without the flag): nothing is
    // delivered there, and list_webhooks says why.
    h.e.allow_private_webhooks(false);
    h.replace(SILENT, "kind: era", "kind: cinema", 0);
    let out = h.tick(700);
    assert!(out.deliveries.is_empty(), "{:?}", out.deliveries);
    for w in hooks(&mut h) {
        assert!(w["last_error"].as_str().unwrap().contains("--allow-private-webhooks"), "{w}");
    }
}

#[test]
fn a_delivery_is_signed_and_a_2xx_moves_the_cursor() {
    let mut h = seeded();
    h.replace(SILENT, "kind: era", "kind: cinema", 0);
    h.tick(700);
    let (id, secret) = hook(&mut h, json!({"url": URL}));
    assert_eq!(hooks(&mut h)[0]["cursor"], 1, "starts from now");
    assert_eq!(h.e.next_deadline(), None);
    h.now = T0 + 1000;
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert!(h.e.next_deadline().is_some_and(|d| d <= h.now), "due now");

    let t = h.tick(1000);
    assert_eq!(t.deliveries.len(), 1);
    let d = &t.deliveries[0];
    assert_eq!((d.webhook.as_str(), d.url.as_str(), d.last), (id.as_str(), URL, 2));
    let b = body(d);
    assert_eq!(b.as_object().unwrap().keys().collect::<Vec<_>>(), ["webhook", "events", "last"]);
    assert_eq!(b["webhook"], id.as_str());
    assert_eq!(b["last"], 2);
    assert_eq!(b["events"], json!(h.events(json!({"since": 1}))));
    assert_eq!(b["events"][0]["changes"], json!({"rating": {"before": 5, "after": 4}}));
    assert_eq!(header(d, "X-Datanotes-Signature"), format!("sha256={}", hmac_hex(&secret, &d.body)));
    assert_eq!(header(d, "Content-Type"), "application/json");

    // One delivery at a time: none while this one is under way.
    assert!(h.tick(1100).deliveries.is_empty());
    assert_eq!(h.e.next_deadline(), None);
    h.now = T0 + 1200;
    delivered(&mut h, d, Ok(200));
    let w = hooks(&mut h).remove(0);
    assert_eq!(w["cursor"], 2);
    assert_eq!(w["status"], "ok");
    assert_eq!(w["last_delivery"], "2026-10-12T16:52:01.200Z");
    assert_eq!(w["last_error"], Value::Null);
    assert!(h.tick(2000).deliveries.is_empty());
    assert_eq!(h.e.next_deadline(), None);

    // The webhook, its cursor and its secret survive a restart.
    h.reopen();
    assert_eq!(hooks(&mut h)[0]["cursor"], 2);
    h.replace(CHARADE, "minutes: 113", "minutes: 114", 3000);
    let t = h.tick(3700);
    let d = &t.deliveries[0];
    assert_eq!(body(d)["events"][0]["seq"], 3);
    assert_eq!(header(d, "X-Datanotes-Signature"), format!("sha256={}", hmac_hex(&secret, &d.body)));
}

#[test]
fn failed_deliveries_back_off_and_a_day_of_failures_disables_the_webhook() {
    let mut h = seeded();
    let (id, _) = hook(&mut h, json!({"url": URL}));
    h.now = T0 + 1000;
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    let d = h.tick(1000).deliveries.remove(0);
    delivered(&mut h, &d, Ok(500));
    let w = hooks(&mut h).remove(0);
    assert_eq!(
        (w["status"].as_str(), w["last_error"].as_str(), w["cursor"].as_u64()),
        (Some("failing"), Some("HTTP 500"), Some(0))
    );
    let next = h.e.next_deadline().unwrap();
    let first_wait = next - h.now;
    assert!((1000..=2000).contains(&first_wait), "{first_wait}");
    assert!(h.tick(next - 1 - T0).deliveries.is_empty(), "not before the back-off");
    let again = h.tick(next - T0).deliveries.remove(0);
    assert_eq!(again.body, d.body, "the same batch again");
    delivered(&mut h, &again, Err("connection refused".into()));
    assert_eq!(hooks(&mut h)[0]["last_error"], "connection refused");
    assert_eq!(h.e.next_deadline().unwrap() - h.now, 2 * first_wait, "the wait doubles");

    // Keep failing: the wait grows to an hour at most, and after a day the
    // webhook is disabled.
    let first_failure = T0 + 1000;
    let mut waits = vec![];
    loop {
        let at = h.e.next_deadline().expect("a failing webhook is retried");
        let t = h.tick(at - T0);
        assert_eq!(t.deliveries.len(), 1, "at {at}");
        delivered(&mut h, &t.deliveries[0], Err("timeout".into()));
        let status = hooks(&mut h)[0]["status"].as_str().unwrap().to_string();
        if status == "disabled" {
            assert!(h.now - first_failure >= 24 * 3600 * 1000);
            break;
        }
        assert_eq!(status, "failing");
        assert!(h.now - first_failure < 24 * 3600 * 1000);
        waits.push(h.e.next_deadline().unwrap() - h.now);
    }
    assert!(waits.windows(2).all(|w| w[1] >= w[0]), "{waits:?}");
    assert_eq!(*waits.last().unwrap(), 3_600_000);
    assert_eq!(h.e.next_deadline(), None);
    assert!(h.tick(h.now - T0 + 7 * 24 * 3600 * 1000).deliveries.is_empty());
    let w = hooks(&mut h).remove(0);
    assert_eq!(
        (w["id"].as_str(), w["status"].as_str(), w["cursor"].as_u64()),
        (Some(id.as_str()), Some("disabled"), Some(0))
    );
}

#[test]
fn a_2xx_after_failures_puts_the_webhook_back_to_ok() {
    let mut h = seeded();
    hook(&mut h, json!({"url": URL}));
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    let d = h.tick(0).deliveries.remove(0);
    delivered(&mut h, &d, Ok(503));
    let at = h.e.next_deadline().unwrap();
    let d = h.tick(at - T0).deliveries.remove(0);
    delivered(&mut h, &d, Ok(204));
    let w = hooks(&mut h).remove(0);
    assert_eq!((w["status"].as_str(), w["cursor"].as_u64()), (Some("ok"), Some(1)));
    assert_eq!(w["last_error"], Value::Null);
}

#[test]
fn deliveries_hold_at_most_100_events() {
    let mut h = seeded();
    let (id, _) = hook(&mut h, json!({"url": URL, "kinds": ["tool_call"]}));
    for i in 0..250 {
        let w = h.e.record_tool_call(tool_call(1), T0 + i);
        h.keep(&w);
    }
    let mut batches = vec![];
    for at in [1000, 2000, 3000] {
        let d = h.tick(at).deliveries.remove(0);
        let evs = body(&d)["events"].as_array().unwrap().clone();
        batches.push((seqs(&evs).first().copied(), evs.len(), d.last));
        delivered(&mut h, &d, Ok(200));
    }
    assert_eq!(batches, [(Some(1), 100, 100), (Some(101), 100, 200), (Some(201), 50, 250)]);
    assert!(h.tick(4000).deliveries.is_empty());
    assert_eq!(hooks(&mut h)[0]["cursor"], 250);
    assert_eq!(hooks(&mut h)[0]["id"], id.as_str());
}

#[test]
fn webhooks_deliver_only_what_their_filter_wants() {
    let mut h = seeded();
    // 1: Charade's rating by "agent"; 2: Silent film by hand; 3: a film
    // deleted by "test"; 4: Metropolis's minutes by "test".
    let a = h.call_as("agent", "update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert_eq!(a.status, Status::Ok);
    h.replace(SILENT, "kind: era", "kind: cinema", 0);
    h.tick(700);
    h.ok("delete_rows", json!({"table": "film", "paths": ["datanotes/main/public/film/Battleship Potemkin.md"]}));
    h.ok("update_row", json!({"table": "film", "path": METROPOLIS, "set": {"minutes": 150}}));
    assert_eq!(h.events(json!({}))[2]["kind"], "delete");
    // Webhooks created afterwards, from the start of the feed (since: 0).
    let mut ids = BTreeMap::new();
    for (name, filter) in [
        ("tables", json!({"tables": ["genre"]})),
        ("kinds", json!({"kinds": ["delete"]})),
        ("columns", json!({"columns": ["rating"]})),
        ("exclude_actor", json!({"exclude_actor": "agent"})),
        ("where", json!({"where": {"rating": {"gte": 5}}})),
        ("nothing", json!({"tables": ["person"]})),
    ] {
        let mut args = filter;
        args["url"] = format!("{URL}/{name}").into();
        args["since"] = 0.into();
        ids.insert(hook(&mut h, args).0, name);
    }

    let t = h.tick(1000);
    let got: BTreeMap<&str, (Vec<u64>, u64)> =
        t.deliveries.iter().map(|d| (ids[&d.webhook], (seqs(body(d)["events"].as_array().unwrap()), d.last))).collect();
    let want: BTreeMap<&str, (Vec<u64>, u64)> = [
        ("tables", (vec![2], 4)),
        ("kinds", (vec![3], 4)),
        ("columns", (vec![1], 4)),
        ("exclude_actor", (vec![2, 3, 4], 4)),
        ("where", (vec![4], 4)),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
    // A webhook that wants none of them moves on without a delivery.
    assert!(t.store.iter().any(|w| w.path == "webhooks.json"));
    h.keep(&t.store);
    let nothing = hooks(&mut h).into_iter().find(|w| ids[w["id"].as_str().unwrap()] == "nothing").unwrap();
    assert_eq!(nothing["cursor"], 4);
}

#[test]
fn delete_webhook_stops_it() {
    let mut h = seeded();
    let (id, secret) = hook(&mut h, json!({"url": URL}));
    let a = h.ok("delete_webhook", json!({"id": id}));
    assert_eq!((a["ok"].clone(), a["op"].clone()), (json!(true), json!("delete_webhook")));
    assert_eq!(a["deleted"]["id"], id.as_str());
    assert!(!a.to_string().contains(&secret));
    assert_eq!(hooks(&mut h), Vec::<Value>::new());
    assert!(!h.store["webhooks.json"].contains(&id));
    h.ok("update_row", json!({"table": "film", "path": CHARADE, "set": {"rating": 4}}));
    assert!(h.tick(1000).deliveries.is_empty());
    assert_eq!(h.e.next_deadline(), None);
    let out = h.call("delete_webhook", json!({"id": id}));
    assert_eq!(out.status, Status::Refused);
    assert!(out.answer["error"].as_str().unwrap().contains(&format!("no webhook \"{id}\"")), "{}", out.answer);
}
