//! `datanotes bench`: synthetic vaults (people, genres, films, watches; links
//! between them, a CHECK that follows a link, a generated column) and the
//! engine's times on them, as JSON.

use datanotes_core::driver;
use datanotes_core::fxhash::FxHashMap;
use datanotes_core::{Engine, NoteFile, Outcome, Status, StoreWrite, VaultEvent};
use serde_json::{json, Value};
use std::time::Instant;

const SCHEMA: &str = r#"version: 1
tables:
  main.public.person:
    name_from: name
    columns:
      name: {type: text, required: true, unique: true}
      born: {type: integer}
  main.public.genre:
    name_from: name
    columns:
      name:   {type: text, required: true, unique: true}
      kind:   {type: enum, values: [cinema, era, genre], required: true}
      parent: {type: link, table: genre}
    checks:
      parent_by_level: {or: [{kind: cinema, parent: {exists: false}}, {kind: era, parent.kind: cinema}, {kind: genre, parent.kind: era}]}
  main.public.film:
    name_from: title
    columns:
      title:    {type: text, required: true, unique: true}
      year:     {type: integer, required: true}
      minutes:  {type: integer}
      status:   {type: enum, values: [watched, to watch]}
      rating:   {type: integer}
      tags:     {type: list, items: text}
      director: {type: link, table: person}
      genres:   {type: list, items: link, table: genre}
    checks:
      rating_range: {or: [{rating: {exists: false}}, {and: [{rating: {gte: 1}}, {rating: {lte: 5}}]}]}
  main.public.watch:
    name_from: "w{n}"
    columns:
      n:           {type: integer, required: true, unique: true}
      film:        {type: link, table: film, required: true}
      occurred_at: {type: datetime, required: true}
      where:       {type: enum, values: [home, cinema]}
      label:       {type: text, generated: "{film.title} ({occurred_at|%d/%m %H:%M}, {where})"}
"#;

fn id(n: usize) -> String {
    format!("01a0c048-0000-7000-8000-{n:012x}")
}

/// A vault of about `rows` rows: 10% people, 30 genres, 60% films, the rest watches.
pub fn vault(rows: usize) -> Vec<NoteFile> {
    let mut files = vec![NoteFile { path: "datanotes/metastore.yaml".into(), text: SCHEMA.into(), mtime: 0 }];
    let people = (rows / 10).max(1);
    let films = (rows * 6 / 10).max(1);
    let watches = rows.saturating_sub(people + films + 30).max(1);
    let mut n = 0;
    let mut note = |path: String, text: String| {
        files.push(NoteFile { path, text, mtime: 0 });
    };
    for p in 0..people {
        n += 1;
        note(
            format!("datanotes/main/public/person/Person {p}.md"),
            format!(
                "---\ntable: main.public.person\nid: {}\nname: Person {p}\nborn: {}\n---\nA person.\n",
                id(n),
                1900 + p % 100
            ),
        );
    }
    note(
        "datanotes/main/public/genre/Cinema.md".into(),
        "---\ntable: main.public.genre\nid: 01a0c048-0000-7000-9000-000000000000\nname: Cinema\nkind: cinema\n---\n"
            .into(),
    );
    for e in 0..4 {
        note(format!("datanotes/main/public/genre/Era {e}.md"), format!("---\ntable: main.public.genre\nid: 01a0c048-0000-7000-9000-00000000010{e}\nname: Era {e}\nkind: era\nparent: \"[[Cinema]]\"\n---\n"));
    }
    for g in 0..25 {
        note(format!("datanotes/main/public/genre/Genre {g}.md"), format!("---\ntable: main.public.genre\nid: 01a0c048-0000-7000-9000-0000000002{g:02}\nname: Genre {g}\nkind: genre\nparent: \"[[Era {}]]\"\n---\n", g % 4));
    }
    for f in 0..films {
        n += 1;
        let rating = if f % 3 == 0 { String::new() } else { format!("rating: {}\n", 1 + f % 5) };
        note(
            format!("datanotes/main/public/film/Film {f}.md"),
            format!(
                "---\ntable: main.public.film\nid: {}\ntitle: Film {f}\nyear: {}\nminutes: {}\nstatus: {}\n{rating}tags:\n  - t{}\ndirector: \"[[Person {}]]\"\ngenres:\n  - \"[[Genre {}]]\"\n---\nNotes on film {f}, seen with [[Person {}]].\n",
                id(n), 1920 + f % 100, 60 + f % 120, if f % 4 == 0 { "to watch" } else { "watched" }, f % 50, f % people, f % 25, (f * 7) % people
            ),
        );
    }
    for w in 0..watches {
        n += 1;
        let f = w % films;
        let (d, h) = (1 + w % 28, 10 + w % 12);
        let wh = if w % 2 == 0 { "home" } else { "cinema" };
        note(
            format!("datanotes/main/public/watch/w{w}.md"),
            format!("---\ntable: main.public.watch\nid: {}\nn: {w}\nfilm: \"[[Film {f}]]\"\noccurred_at: 2026-10-{d:02}T{h}:30\nwhere: {wh}\nlabel: Film {f} ({d:02}/10 {h}:30, {wh})\n---\n", id(n)),
        );
    }
    files
}

fn ms(t: Instant) -> f64 {
    (t.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

/// The engine on a host in memory, driven as every host drives it (the driver
/// checks each edit against the file before it is written). Times are engine time
/// plus this host's, which is kept lean: hashed maps, no copies of what it reads
/// but the one the driver asks for.
pub struct Host {
    pub e: Engine,
    pub mem: Ram,
    pub now: i64,
}

/// The vault and the store in hashed maps, counting what a call writes to the store.
#[derive(Default)]
pub struct Ram {
    pub notes: FxHashMap<String, String>,
    pub store: FxHashMap<String, String>,
    /// Bytes the last call wrote to the store.
    pub wrote: usize,
}

impl Ram {
    /// The vault's files, and an empty store.
    pub fn of(files: &[NoteFile]) -> Ram {
        let notes = files.iter().map(|f| (f.path.clone(), f.text.clone())).collect();
        Ram { notes, store: FxHashMap::default(), wrote: 0 }
    }
}

impl driver::Host for Ram {
    fn read(&mut self, path: &str) -> Result<Option<String>, String> {
        Ok(self.notes.get(path).cloned())
    }
    fn write(&mut self, path: &str, text: &str) -> Result<(), String> {
        match self.notes.get_mut(path) {
            Some(t) => text.clone_into(t),
            None => {
                self.notes.insert(path.to_string(), text.to_string());
            }
        }
        Ok(())
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), String> {
        let text = self.notes.remove(from).ok_or("no such file")?;
        self.notes.insert(to.to_string(), text);
        Ok(())
    }
    fn trash(&mut self, path: &str) -> Result<(), String> {
        self.notes.remove(path).map(|_| ()).ok_or_else(|| "no such file".into())
    }
    fn remove(&mut self, path: &str) -> Result<(), String> {
        self.trash(path)
    }
    fn read_store(&mut self, path: &str) -> Option<String> {
        self.store.get(path).cloned()
    }
    fn write_store(&mut self, w: &StoreWrite) -> Result<(), String> {
        if w.delete {
            self.store.remove(&w.path);
            return Ok(());
        }
        self.wrote += w.text.len();
        if w.append {
            self.store.entry(w.path.clone()).or_default().push_str(&w.text);
        } else {
            self.store.insert(w.path.clone(), w.text.clone());
        }
        Ok(())
    }
}

impl Host {
    pub fn new(files: Vec<NoteFile>) -> Host {
        Host::on(Ram::of(&files), files)
    }

    /// The engine opened on `files`, which `mem` holds already (so that timing
    /// this times the engine's open alone).
    pub fn on(mem: Ram, files: Vec<NoteFile>) -> Host {
        Host { e: Engine::open(files, vec![]), mem, now: 1_790_000_000_000 }
    }

    /// The store as written so far.
    pub fn store(&self) -> &FxHashMap<String, String> {
        &self.mem.store
    }

    /// A change made by hand: the file changes, and the engine is told.
    pub fn hand(&mut self, path: String, text: String, now: i64) {
        self.mem.notes.insert(path.clone(), text.clone());
        self.e.observe(VaultEvent::Modified { path, text, mtime: 1 }, now);
    }

    /// What is due at `now`, carried to its end.
    pub fn tick(&mut self, now: i64) -> Outcome {
        driver::tick(&mut self.e, &mut self.mem, now)
    }

    pub fn call(&mut self, op: &str, args: Value) -> (f64, Value) {
        self.now += 1000;
        self.mem.wrote = 0;
        let t = Instant::now();
        let out = driver::call(&mut self.e, &mut self.mem, op, &args, "bench", self.now);
        let took = ms(t);
        assert!(matches!(out.status, Status::Done), "{op} failed in the bench: {}", out.answer);
        (took, out.answer)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

fn one(rows: usize) -> Value {
    let files = vault(rows);
    let count = files.len() - 1;
    let ram = Ram::of(&files);
    let t = Instant::now();
    let mut h = Host::on(ram, files);
    let open_ms = ms(t);
    let films = h.e.vault().rows.get("main.public.film").map_or(0, |s| s.len());
    let e = &mut h;
    let updates: Vec<f64> = (0..41)
        .map(|i| {
            let f = (i * 7919) % films;
            e.call("update_row", json!({"table": "film", "path": format!("datanotes/main/public/film/Film {f}.md"), "set": {"minutes": 100 + i}})).0
        })
        .collect();
    let (check_ms, check) = e.call("check_table", json!({}));
    let selects: Vec<f64> = (0..5)
        .map(|_| e.call("select_rows", json!({"table": "film", "where": {"minutes": {"gt": 170}}, "limit": 100})).0)
        .collect();
    let (select_link_ms, _) =
        e.call("select_rows", json!({"table": "watch", "where": {"film.year": 1950}, "limit": 100}));
    // A view is its query: reading it costs what the same select on its table does.
    e.call("create_view", json!({"name": "long_films", "table": "film", "where": {"minutes": {"gt": 170}}}));
    let view_selects: Vec<f64> =
        (0..5).map(|_| e.call("select_rows", json!({"table": "long_films", "limit": 100})).0).collect();
    // A link field's suggestions, one call a keystroke.
    let suggests: Vec<f64> = ["f", "fi", "fil", "film", "film ", "film 1", "film 12", "film 123", "flm12"]
        .iter()
        .map(|q| e.call("suggest_rows", json!({"table": "film", "query": q})).0)
        .collect();
    let (rename_ms, _) = e.call(
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Film 1.md", "set": {"title": "Film one"}}),
    );
    let (update_rows_ms, ans) = e.call(
        "update_rows",
        json!({"table": "film", "where": {"minutes": {"in": [61, 62]}}, "set": {"status": "to watch"}}),
    );
    let (undo_ms, _) = e.call("undo_migration", json!({"migration_id": ans["migration_id"]}));
    let (_, upd) = e.call(
        "update_row",
        json!({"table": "film", "path": "datanotes/main/public/film/Film 2.md", "set": {"minutes": 77}}),
    );
    let text_bytes = e.e.vault().text("datanotes/main/public/film/Film 2.md").map_or(0, str::len);
    let entry =
        e.store().get(&format!("journal/{}.json", upd["migration_id"].as_str().unwrap_or(""))).map_or(0, String::len);
    json!({
        "rows": count,
        "open_ms": open_ms,
        "update_row_ms_median": median(updates.clone()),
        "update_row_ms_max": updates.iter().cloned().fold(0.0, f64::max),
        "rename_row_ms": rename_ms,
        "update_rows_ms": update_rows_ms,
        "update_rows_notes": ans["notes_changed"],
        "undo_update_rows_ms": undo_ms,
        "journal_entry_bytes": entry,
        "journal_bytes_beyond_texts": entry.saturating_sub(2 * text_bytes),
        "check_table_ms": check_ms,
        "check_table_violations": check["total"],
        "select_where_unindexed_ms_median": median(selects.clone()),
        "select_where_through_link_ms": select_link_ms,
        "select_view_ms_median": median(view_selects.clone()),
        "select_view_to_table_ratio": ((median(view_selects) / median(selects.clone()).max(1e-6)) * 100.0).round() / 100.0,
        "suggest_rows_target_rows": films,
        "suggest_rows_ms_max_per_keystroke": suggests.iter().cloned().fold(0.0, f64::max),
    })
}

/// The parts of the benchmark `--only` picks from.
pub const PARTS: [&str; 6] = ["sizes", "history", "hand_edits", "reopen", "cache", "semantic"];

pub fn run(sizes: &[usize], only: Option<&str>) -> Value {
    let big = sizes.iter().copied().max().unwrap_or(0);
    let part = |p: &str| only.is_none_or(|o| o == p);
    let build = if cfg!(debug_assertions) { "debug: figures not meaningful" } else { "release" };
    let mut v = json!({"engine": format!("datanotes-core (native, {build})")});
    if part("sizes") {
        let out: serde_json::Map<String, Value> = sizes.iter().map(|&n| (n.to_string(), one(n))).collect();
        v["sizes"] = out.into();
    }
    if part("history") {
        v["history"] = crate::bench_more::history(big.min(10_000), if big >= 10_000 { 1000 } else { 100 });
    }
    if part("hand_edits") {
        v["hand_edits"] = crate::bench_more::hand_edits(big.max(5_000));
    }
    if part("reopen") {
        v["reopen"] = crate::bench_more::reopen(big);
    }
    if part("cache") {
        v["cache"] = sizes.iter().map(|&n| (n.to_string(), crate::bench_open::cache(n))).collect();
    }
    if part("semantic") {
        v["semantic"] = crate::bench_more::semantic(big.min(10_000));
    }
    if let (Some(a), Some(b)) = (v.pointer("/sizes/1000").cloned(), v.pointer("/sizes/100000").cloned()) {
        if let (Some(x), Some(y)) = (a["update_row_ms_median"].as_f64(), b["update_row_ms_median"].as_f64()) {
            v["update_row_ratio_100k_to_1k"] = ((y / x.max(1e-6) * 100.0).round() / 100.0).into();
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_synthetic_vault_is_valid() {
        let mut h = Host::new(vault(500));
        let (_, check) = h.call("check_table", json!({}));
        assert_eq!(check["total"], 0, "{check}");
        assert!(check["rows_checked"].as_u64().unwrap() >= 499);
        let r = one(300);
        assert!(r["open_ms"].as_f64().is_some());
    }
}
