//! The benchmark's synthetic vault (people, genres, films, watches; links
//! between them, a CHECK that follows a link, a generated column), and the
//! engine on a host in memory, for `datanotes bench`'s parts.

use datanotes_core::driver;
use datanotes_core::fxhash::FxHashMap;
use datanotes_core::{Engine, NoteFile, Outcome, Status, StoreWrite, VaultEvent};
use serde_json::Value;
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

pub fn ms(t: Instant) -> f64 {
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
        assert!(matches!(out.status, Status::Ok), "{op} failed in the bench: {}", out.answer);
        (took, out.answer)
    }
}
