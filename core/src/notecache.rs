//! What the engine derived from each note, kept in the store so that a reopen
//! reads and parses only the notes that changed since: `cache/notes.<device>.jsonl`
//! (derived, out of git, rebuilt whenever it cannot be trusted).
//!
//! A header `{"format","engine","schema","written","bytes","sum"}`, then a line
//! per note, sorted by path: `{"p": path, "s": size in bytes, "m": mtime in ms,
//! "h": hash, "l": link stems, "t": table, "i": row id, "v": values}` (`t`, `i`,
//! `v` only for a row). `bytes` is the length of those lines.
//!
//! Then segments appended at later opens, each a header `{"of": the first
//! header's sum, "written", "bytes", "sum"}` and lines as above, or
//! `{"gone": path}` for a note no longer cached: a segment's line stands for its
//! note in place of every earlier one. An open that found a few notes changed
//! appends them ([`segment`]) instead of writing 36 MB again for 100k notes;
//! once the segments hold an eighth as many lines as the first part, the file
//! is written whole again.
//!
//! The host lists the vault with each note's size and mtime (a stat), and reads
//! only the notes the cache does not vouch for ([`Cache::wanted`]). An entry is
//! trusted when its size and mtime are the note's now, and the mtime is older
//! than the cache by more than [`RACY_MS`] (a change made in the same instant
//! as the note was read keeps both, as git's index knows). Anything else about
//! the file (another format, another engine, another metastore.yaml, a line cut
//! short) means the notes it names are read again. The lines are trusted only
//! whole: `sum` is a checksum of all of them, so a damaged or hand-edited file
//! is read again whole, and no line's JSON needs parsing to be believed (a
//! fifth of a reopen's time in wasm went to checking the rows' values). A
//! segment that does not match its checksum, or follows one that does not (an
//! append cut short), is left out with all after it: what it said of its notes
//! is lost, and their older lines vouch only for the sizes and mtimes they had
//! before (the notes are read again), as for a note changed while closed. The
//! file is then written whole at the next open.
//! A change that keeps a note's
//! size and mtime (a tool that sets the mtime back) is not seen at open; it is
//! found when the engine reads the note (any write, read_note), by its hash.

use crate::fxhash::{FxHashMap, FxHashSet, FxHasher};
use crate::links::Stems;
use crate::pathset::Shared;
use crate::row_id::RowId;
use crate::row_values::Values;
use crate::texthash::TextHash;
use crate::vault::{Note, Row, State, Vault};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::hash::Hasher;

/// The folder of the cache in the store.
pub const DIR: &str = "cache/";
/// Raised whenever what a note's entry holds, or how a note is read, changes.
const FORMAT: u64 = 3;
/// An entry whose mtime is this close to the time the cache was written is not
/// trusted: the note may have changed again within the file system's tick.
pub const RACY_MS: i64 = 2_000;

/// The cache file of a device (None: the store of one device).
pub fn path(device: Option<&str>) -> String {
    match device {
        Some(d) => format!("{DIR}notes.{d}.jsonl"),
        None => format!("{DIR}notes.jsonl"),
    }
}

/// A vault file as the host lists it without reading it.
#[derive(Debug, Clone)]
pub struct NoteStat {
    pub path: String,
    pub size: u64,
    pub mtime: i64,
}

/// A note as the cache holds it: everything the vault keeps but its text.
#[derive(Debug, Clone)]
pub struct Cached {
    pub size: crate::vault::Size,
    pub mtime: i64,
    pub hash: TextHash,
    pub links: Stems,
    pub state: State,
}

/// A note taken from the cache: its path, what it holds, and its text if read.
pub type Taken = (Shared, Cached, Option<Box<str>>);

/// The entries of a cache file the engine may trust, and those too close to
/// its writing to be trusted (`racy`: their notes are read, and the cache is
/// written again once they are old enough to be).
#[derive(Debug, Default, Clone)]
pub struct Cache {
    /// In the file's order, by path: notes indexed in that order fill the
    /// index's sets sorted, and sorting them costs a look only. Once indexed
    /// (`Prebuilt`), the entries of the notes not as listed.
    /// In runs (parsed apart: `Checked::halves`, a `Reader`'s pieces), not joined: at 100k notes a
    /// vector of them all is 15 MB more to copy.
    entries: Vec<Vec<(Shared, Cached)>>,
    racy: Vec<(Shared, Cached)>,
    /// The tables the entries were checked against (metastore.yaml's).
    schema: crate::schema::Schema,
    /// The file as read, for a segment to be appended to it; None when it
    /// must be written whole (a segment was damaged).
    file: Option<Appendable>,
}

/// A cache file as the engine last read or wrote it, and the notes whose lines
/// there are not what the engine holds now (`fresh`): a segment of those is
/// appended to it (`segment`), unless the file should be written whole.
#[derive(Debug, Default, Clone)]
pub struct Appendable {
    /// The sum in the file's first header: segments name it.
    sum: String,
    /// Lines in the first part, and in the segments after it.
    lines: usize,
    appended: usize,
    /// Each with whether the file may hold a line for it: a note gone or no
    /// longer cached gets a line saying so only then.
    pub fresh: std::collections::BTreeMap<String, bool>,
}

impl Appendable {
    /// Whether `fresh` is better appended than the file written whole: an
    /// eighth of the first part's lines, with those appended already.
    pub fn appends(&self) -> bool {
        self.fits(self.fresh.len())
    }

    /// Whether `n` more lines keep the segments within an eighth of the first part.
    fn fits(&self, n: usize) -> bool {
        (self.appended + n) * 8 <= self.lines
    }
}

/// Whether an entry holds for a note listed so: its size and mtime are the note's.
fn vouches(n: &Note, s: &NoteStat) -> bool {
    crate::vault::same_size(n.size, s.size) && n.mtime == s.mtime && s.mtime > 0
}

fn schema_key(metastore: Option<&str>) -> String {
    crate::edits::hash(metastore.unwrap_or(""))
}

impl Cache {
    /// Reads a cache file for a vault whose metastore.yaml holds `metastore`:
    /// the entries, or why none can be trusted.
    pub fn read(text: &str, metastore: Option<&str>) -> Result<Cache, String> {
        Checked::new(text, metastore).map(Cache::join_parsed)
    }

    /// A checked file's lines parsed in one run, and joined.
    pub fn join_parsed(checked: Checked) -> Cache {
        let lines = parse(checked.body);
        checked.join(vec![lines])
    }

    /// The file as read, for a segment to be appended to it: its `fresh` notes
    /// are `read` (listed, not vouched for) and those of the entries the open
    /// did not take (gone, changed or racy). None when the file is to be
    /// written whole.
    pub fn into_file(self, read: &[String]) -> Option<Appendable> {
        let mut file = self.file?;
        // Counted roughly first: a reopen after most notes changed writes the
        // file whole, and need not gather them.
        let left = self.entries.iter().map(Vec::len).sum::<usize>() + self.racy.len();
        if !file.fits(read.len().max(left)) {
            return None;
        }
        // A note read that the file holds is among the entries left, or racy.
        file.fresh.extend(read.iter().map(|p| (p.clone(), false)));
        file.fresh.extend(self.entries.iter().flatten().chain(&self.racy).map(|(p, _)| (p.to_string(), true)));
        file.appends().then_some(file)
    }

    /// Whether the cache must be written again for the notes of `vault` (the
    /// entries taken out): a note is new, changed or gone, or one read as racy
    /// at `now_ms` is old enough to be trusted now.
    /// `attached`: how many notes were taken from the cache with their texts.
    /// So is a file with a damaged segment.
    pub fn stale(&self, vault: &crate::vault::Vault, attached: usize, now_ms: i64) -> bool {
        if self.file.is_none() {
            return true;
        }
        let left = self.entries.iter().flatten().chain(&self.racy);
        let moved = left.clone().any(|(p, c)| match vault.get(p) {
            Some(n) => n.hash != c.hash || n.size != c.size || n.mtime != c.mtime || now_ms - n.mtime > RACY_MS,
            None => true,
        });
        let new = vault.notes.iter().filter(|(p, n)| n.text.is_some() && cacheable(p, n));
        moved || new.count() != attached + left.count()
    }
}

/// A cache file whose header, checksum and segments hold: its first part's
/// lines are then parsed (`parse`: a host may parse its `halves` on two
/// threads) and joined with the segments' (`join`).
pub struct Checked<'a> {
    body: &'a str,
    written: i64,
    /// The segments' lines (see `segments`).
    later: Vec<(Shared, Option<Cached>, i64)>,
    file: Option<Appendable>,
    schema: crate::schema::Schema,
}

impl<'a> Checked<'a> {
    /// A cache file for a vault whose metastore.yaml holds `metastore`, or why
    /// none of it can be trusted.
    pub fn new(text: &'a str, metastore: Option<&str>) -> Result<Checked<'a>, String> {
        let (head, rest) = text.split_once('\n').unwrap_or((text, ""));
        let head = read_head(head, metastore)?;
        let (body, tail) = split(rest, &head).ok_or_else(damaged)?;
        let sum = head["sum"].as_str().ok_or_else(damaged)?;
        if sum != checksum(body.as_bytes()) {
            return Err(damaged());
        }
        Ok(Checked::after(body, count_lines(body.as_bytes()), &head, tail, metastore))
    }

    /// A file whose first part (`body`, of `lines` lines) matched its head's
    /// checksum, with the segments after it (`tail`).
    fn after(body: &'a str, lines: usize, head: &Value, tail: &str, metastore: Option<&str>) -> Checked<'a> {
        let sum = head["sum"].as_str().unwrap_or_default();
        let (later, file) = segments(tail, sum);
        let file = file.map(|appended| Appendable { sum: sum.to_string(), lines, appended, fresh: Default::default() });
        let schema = crate::schema::Schema::parse(metastore.unwrap_or("")).unwrap_or_default();
        Checked { body, written: head["written"].as_i64().unwrap_or(i64::MIN), later, file, schema }
    }

    /// The first part's lines in two runs of whole lines, about equal.
    pub fn halves(&self) -> [&'a str; 2] {
        let mid = self.body.len() / 2;
        let cut = self.body.as_bytes()[mid..].iter().position(|&b| b == b'\n').map_or(self.body.len(), |i| mid + i + 1);
        [&self.body[..cut], &self.body[cut..]]
    }

    /// The entries of the notes the file vouches for: the first part's lines
    /// as `parse` read them (runs in the file's order), each note's line from
    /// a segment in place of its own, only rows of the table their folder says
    /// and notes outside every table; those written too close to their part
    /// are racy.
    pub fn join(self, runs: Vec<Vec<(Shared, Cached)>>) -> Cache {
        let Checked { written, later, file, schema, .. } = self;
        let mut folder: Option<(String, bool, Option<&str>)> = None;
        // A row of the table its folder says, or a note outside every table:
        // anything else is not what this engine derived.
        let mut derived = |path: &str, c: &Cached| {
            let table = match &c.state {
                State::Row(r) => Some(&*r.table),
                _ => None,
            };
            // Asked once a folder: the lines come sorted by path, and the table
            // of a note depends on its folder and on its being a .md file only.
            let (dir, md) = (path.rfind('/').map_or("", |i| &path[..i]), path.ends_with(".md"));
            let said = match &folder {
                Some((d, m, t)) if d == dir && *m == md => *t,
                _ => {
                    let t = schema.table_of_path(path);
                    folder = Some((dir.to_string(), md, t));
                    t
                }
            };
            table == said
        };
        let trusted = |c: &Cached, written: i64| c.mtime > 0 && c.mtime < written.saturating_sub(RACY_MS);
        let mut cache = Cache { file, ..Cache::default() };
        if later.is_empty() {
            // In place: at 100k notes, another vector would be 15 MB more at once.
            for mut run in runs {
                run.retain(|(p, c)| derived(p, c));
                cache.racy.extend(run.extract_if(.., |(_, c)| !trusted(c, written)));
                cache.entries.push(run);
            }
        } else {
            // The segments' lines, sorted by path too, merged in.
            let mut run = Vec::with_capacity(runs.iter().map(Vec::len).sum::<usize>() + later.len());
            let mut later = later.into_iter().peekable();
            let mut admit = |path: Shared, c: Cached, written: i64| {
                if derived(&path, &c) {
                    let to = if trusted(&c, written) { &mut run } else { &mut cache.racy };
                    to.push((path, c));
                }
            };
            for (path, c) in runs.into_iter().flatten() {
                let mut replaced = false;
                while let Some((p, c, w)) = later.next_if(|l| *l.0 <= *path) {
                    replaced = p == path;
                    if let Some(c) = c {
                        admit(p, c, w);
                    }
                }
                if !replaced {
                    admit(path, c, written);
                }
            }
            for (p, c, w) in later {
                if let Some(c) = c {
                    admit(p, c, w);
                }
            }
            cache.entries.push(run);
        }
        cache.schema = schema;
        cache
    }
}

fn damaged() -> String {
    "it is damaged (its checksum does not match)".to_string()
}

/// A cache file's head, if it is this engine's for this metastore.yaml.
fn read_head(head: &str, metastore: Option<&str>) -> Result<Value, String> {
    let head: Value = serde_json::from_str(head).map_err(|_| "its header is unreadable")?;
    if head["format"] != FORMAT || head["engine"] != env!("CARGO_PKG_VERSION") {
        return Err("it was written by another version of the engine".into());
    }
    if head["schema"] != schema_key(metastore).as_str() {
        return Err("metastore.yaml changed since it was written".into());
    }
    Ok(head)
}

/// A cache file read as it comes, in pieces cut anywhere (wasm's host hands
/// it so), its first part's lines parsed a piece at a time: the file whole
/// (36 MB for 100k notes) is never in the engine's memory beside the entries
/// made of it, which set a reopen's peak there. As `Checked::new`, then
/// `join`: the entries are trusted only if the whole part matches its sum.
pub struct Reader {
    metastore: Option<String>,
    /// The head's bytes while its line is not whole, then the head.
    start: Vec<u8>,
    head: Option<Result<Value, String>>,
    /// Of the first part, the bytes still to come.
    left: usize,
    sum: Sum,
    lines: usize,
    /// The end of the last piece, a line not whole yet.
    carry: Vec<u8>,
    runs: Vec<Vec<(Shared, Cached)>>,
    /// The segments, after the first part.
    tail: Vec<u8>,
}

impl Reader {
    pub fn new(metastore: Option<&str>) -> Reader {
        Reader {
            metastore: metastore.map(str::to_string),
            start: vec![],
            head: None,
            left: 0,
            sum: Sum::default(),
            lines: 0,
            carry: vec![],
            runs: vec![],
            tail: vec![],
        }
    }

    /// The file's next bytes, cut anywhere.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        if self.head.is_none() {
            let Some(end) = bytes.iter().position(|&b| b == b'\n') else {
                self.start.extend_from_slice(bytes);
                return;
            };
            self.start.extend_from_slice(&bytes[..end]);
            bytes = &bytes[end + 1..];
            let head = std::str::from_utf8(&self.start)
                .map_err(|_| "its header is unreadable".to_string())
                .and_then(|h| read_head(h, self.metastore.as_deref()));
            let size = head.as_ref().ok().map(|h| h["bytes"].as_u64().and_then(|n| usize::try_from(n).ok()));
            self.head = Some(match size {
                Some(None) => Err(damaged()),
                _ => head,
            });
            self.left = size.flatten().unwrap_or(0);
        }
        if !matches!(self.head, Some(Ok(_))) {
            return;
        }
        let (body, rest) = bytes.split_at(self.left.min(bytes.len()));
        self.left -= body.len();
        self.sum.add(body);
        self.carry.extend_from_slice(body);
        // Whole lines parsed now; the part's last, whole or not, once it is all in.
        let whole = if self.left == 0 {
            Some(self.carry.len())
        } else {
            self.carry.iter().rposition(|&b| b == b'\n').map(|i| i + 1)
        };
        if let Some(n) = whole.filter(|&n| n > 0) {
            self.lines += count_lines(&self.carry[..n]);
            // Not UTF-8: the file was not written so, and is not trusted (`finish`).
            match std::str::from_utf8(&self.carry[..n]) {
                Ok(lines) => self.runs.push(parse(lines)),
                Err(_) => self.head = Some(Err(damaged())),
            }
            self.carry.drain(..n);
        }
        self.tail.extend_from_slice(rest);
    }

    /// The entries, or why none can be trusted.
    pub fn finish(self) -> Result<Cache, String> {
        let head = self.head.unwrap_or_else(|| Err("its header is unreadable".into()))?;
        if self.left > 0 || head["sum"].as_str() != Some(self.sum.hex().as_str()) {
            return Err(damaged());
        }
        // A damaged segment is no segment: the file is written whole next time.
        let tail = std::str::from_utf8(&self.tail).unwrap_or("\u{fffd}");
        Ok(Checked::after("", self.lines, &head, tail, self.metastore.as_deref()).join(self.runs))
    }
}

/// The lines of a run of a cache file's first part (see `Checked`), in order.
/// A line this engine cannot read (the checksum says only that it was written
/// so: by another build, say) names no note: that note is read.
pub fn parse(lines: &str) -> Vec<(Shared, Cached)> {
    let mut out = Vec::with_capacity(count_lines(lines.as_bytes()));
    let mut table = None;
    out.extend(lines.split('\n').filter(|l| !l.is_empty()).filter_map(|l| entry(l, &mut table)));
    out
}

/// The notes of a cache file indexed, texts unread, before the host has
/// listed the vault: a host may make it on a thread of its own while it lists.
/// `plan` then takes out of the index the notes that are not as listed.
#[derive(Debug)]
pub struct Prebuilt {
    cache: Cache,
    vault: Vault,
    /// What `Judge::verdicts` said of the listing, when the host asked it
    /// (`judged`).
    verdicts: Option<Vec<Verdict>>,
}

/// Of a note listed: whether the cache vouches for it (true), holds it
/// changed (false), or does not hold it (None).
pub type Verdict = Option<bool>;

/// The cache's notes, to judge a listing by (`Prebuilt::judge`). It only
/// reads, and may be shared by threads: a host judges a listing of 100k notes
/// in parts at once (about 30 ms in one).
pub struct Judge<'a>(&'a FxHashMap<Shared, Box<Note>>);

impl Judge<'_> {
    pub fn verdicts(&self, stats: &[NoteStat]) -> Vec<Verdict> {
        stats.iter().map(|s| self.0.get(s.path.as_str()).map(|n| vouches(n, s))).collect()
    }
}

impl Prebuilt {
    pub fn new(mut cache: Cache) -> Prebuilt {
        let runs = std::mem::take(&mut cache.entries);
        let n = runs.iter().map(Vec::len).sum();
        let taken = runs.into_iter().flatten().map(|(p, c)| (p, c, None));
        let vault = Vault::build_cached(&cache.schema, (n, taken), vec![]);
        Prebuilt { cache, vault, verdicts: None }
    }

    pub fn judge(&self) -> Judge<'_> {
        Judge(&self.vault.notes)
    }

    /// With the verdicts a `Judge` gave of the listing `plan` is given next,
    /// in its order.
    pub fn judged(self, verdicts: Vec<Verdict>) -> Prebuilt {
        Prebuilt { verdicts: Some(verdicts), ..self }
    }

    /// The index, with only the notes of `stats` (each path listed once) it
    /// vouches for; the paths of the other notes of `stats`, for the host to
    /// read; and the cache, whose entries are then the notes taken out of the
    /// index (changed or not listed: for `Cache::stale`).
    pub fn plan(mut self, stats: Vec<NoteStat>) -> (Cache, Vault, Vec<String>) {
        let verdicts = match self.verdicts.take() {
            Some(v) if v.len() == stats.len() => v,
            _ => self.judge().verdicts(&stats),
        };
        let Prebuilt { mut cache, mut vault, .. } = self;
        let (mut vouched, mut changed, mut wanted) = (0, vec![], vec![]);
        for (s, v) in stats.iter().zip(verdicts) {
            match v {
                Some(true) => vouched += 1,
                Some(false) => {
                    changed.push(s.path.clone());
                    wanted.push(s.path.clone());
                }
                None => wanted.push(s.path.clone()),
            }
        }
        // Notes not listed: counted first, so that an open where none went
        // needs no set of the paths listed.
        if vouched + changed.len() != vault.notes.len() {
            let listed: FxHashSet<&str> = stats.iter().map(|s| s.path.as_str()).collect();
            changed.extend(vault.notes.keys().filter(|p| !listed.contains(&***p)).map(|p| p.to_string()));
        }
        drop(stats);
        let mut left = vec![];
        for p in changed {
            if let Some(Note { size, mtime, hash, links, state, .. }) = vault.remove(&p) {
                left.push((Shared::from(p), Cached { size, mtime, hash, links, state }));
            }
        }
        cache.entries.push(left);
        vault.take_touched();
        (cache, vault, wanted)
    }
}

/// The lines a header (of the first part or of a segment) counts in `bytes`,
/// and what follows them.
fn split<'a>(rest: &'a str, head: &Value) -> Option<(&'a str, &'a str)> {
    let n = usize::try_from(head["bytes"].as_u64()?).ok()?;
    rest.is_char_boundary(n).then(|| rest.split_at(n))
}

/// A segment's line for a note it no longer caches.
#[derive(serde::Deserialize)]
struct Gone {
    #[serde(deserialize_with = "shared")]
    gone: Shared,
}

/// The lines of the segments after a first part summed `sum`, sorted by path,
/// the last of each note's alone, with when each was written (None: the note is
/// gone); and how many lines they hold, None when one was damaged (the file is
/// then to be written whole).
#[allow(clippy::type_complexity)]
fn segments(mut tail: &str, sum: &str) -> (Vec<(Shared, Option<Cached>, i64)>, Option<usize>) {
    let (mut lines, mut count, mut table) = (vec![], 0, None);
    while !tail.is_empty() {
        let Some((head, rest)) = tail.split_once('\n') else { return (sorted(lines), None) };
        let head: Value = serde_json::from_str(head).unwrap_or_default();
        let Some((body, after)) = split(rest, &head) else { return (sorted(lines), None) };
        if head["of"] != sum || head["sum"] != checksum(body.as_bytes()).as_str() {
            return (sorted(lines), None);
        }
        let written = head["written"].as_i64().unwrap_or(i64::MIN);
        for line in body.split('\n').filter(|l| !l.is_empty()) {
            count += 1;
            if let Some((p, c)) = entry(line, &mut table) {
                lines.push((p, Some(c), written));
            } else if let Ok(Gone { gone }) = serde_json::from_str(line) {
                lines.push((gone, None, written));
            }
        }
        tail = after;
    }
    (sorted(lines), Some(count))
}

/// Sorted by path, each note's last line alone (the sort is stable).
fn sorted<T>(mut lines: Vec<(Shared, T, i64)>) -> Vec<(Shared, T, i64)> {
    lines.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out: Vec<(Shared, T, i64)> = Vec::with_capacity(lines.len());
    for l in lines {
        if out.last().is_some_and(|o| o.0 == l.0) {
            out.pop();
        }
        out.push(l);
    }
    out
}

/// A line of the cache as written (see the module's comment).
#[derive(serde::Deserialize, Debug)]
struct Line {
    #[serde(deserialize_with = "shared")]
    p: Shared,
    s: u64,
    m: i64,
    #[serde(deserialize_with = "text_hash")]
    h: TextHash,
    #[serde(deserialize_with = "stems")]
    l: Stems,
    #[serde(default, deserialize_with = "shared_opt")]
    t: Option<Shared>,
    #[serde(default)]
    i: Option<String>,
    #[serde(default, deserialize_with = "raw_json")]
    v: Option<Box<str>>,
}

fn shared<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Shared, D::Error> {
    <String as serde::Deserialize>::deserialize(d).map(Shared::from)
}

/// `t` as `last`, the last row's table, holds it when they are the same,
/// else made and kept as the last: one string for a table's rows, and none
/// made for a line that names the last (a string made and dropped for each
/// row left 2.4 MB of holes too small for anything the engine holds, at 100k).
fn same_table(last: &mut Option<Shared>, t: &str) -> Shared {
    match last {
        Some(l) if **l == *t => l.clone(),
        _ => last.insert(Shared::from(t)).clone(),
    }
}

fn shared_opt<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Shared>, D::Error> {
    <Option<String> as serde::Deserialize>::deserialize(d).map(|s| s.map(Shared::from))
}

/// A SHA-256 in 64 hex digits, as the engine writes it.
fn text_hash<'de, D: serde::Deserializer<'de>>(d: D) -> Result<TextHash, D::Error> {
    let hex = <std::borrow::Cow<str> as serde::Deserialize>::deserialize(d)?;
    TextHash::from_hex(&hex).ok_or_else(|| serde::de::Error::custom("not a SHA-256 in hex"))
}

fn stems<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Stems, D::Error> {
    <Vec<String> as serde::Deserialize>::deserialize(d).map(Stems::from_iter)
}

fn raw_json<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Box<str>>, D::Error> {
    <Box<RawValue> as serde::Deserialize>::deserialize(d).map(|v| Some(v.into()))
}

/// The checksum of the cache's lines, in hex: it finds a file cut short or
/// changed by hand, at the cost of reading it once (see `Sum`).
fn checksum(body: &[u8]) -> String {
    let mut sum = Sum::default();
    sum.add(body);
    sum.hex()
}

/// A checksum taken over lines given in pieces: FxHash in four lanes, each
/// taking every fourth word (a lane's multiplications wait on each other; four
/// run at once), then the lanes and the length; the last words padded with
/// zeros.
#[derive(Default)]
struct Sum {
    lanes: [FxHasher; 4],
    /// The start of a block of 32 bytes that the last piece ended in.
    carry: [u8; 32],
    held: usize,
    len: usize,
}

impl Sum {
    fn add(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len();
        if self.held > 0 {
            let take = (32 - self.held).min(bytes.len());
            self.carry[self.held..self.held + take].copy_from_slice(&bytes[..take]);
            self.held += take;
            bytes = &bytes[take..];
            if self.held < 32 {
                return;
            }
            let block = self.carry;
            self.block(&block);
            self.held = 0;
        }
        let mut blocks = bytes.chunks_exact(32);
        for b in &mut blocks {
            self.block(b);
        }
        let rest = blocks.remainder();
        self.carry[..rest.len()].copy_from_slice(rest);
        self.held = rest.len();
    }

    fn block(&mut self, b: &[u8]) {
        for (lane, word) in self.lanes.iter_mut().zip(b.chunks_exact(8)) {
            lane.write(word);
        }
    }

    fn hex(mut self) -> String {
        self.carry[self.held..].fill(0);
        let block = self.carry;
        self.block(&block);
        let mut h = FxHasher::default();
        self.lanes.iter().for_each(|l| h.write_u64(l.finish()));
        h.write_usize(self.len);
        format!("{:016x}", h.finish())
    }
}

/// How many lines `bytes` ends, counted a word at a time.
fn count_lines(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let (mut n, mut chunks) = (0, bytes.chunks_exact(8));
    for c in &mut chunks {
        // A byte of `x` is 0 where the word holds a newline; the sum sets the
        // high bit of every byte that is not 0, without carrying into the next.
        let x = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) ^ (ONES * u64::from(b'\n'));
        let nonzero = ((x & (ONES * 0x7f)) + ONES * 0x7f) | x;
        n += (!nonzero & (ONES * 0x80)).count_ones() as usize;
    }
    n + chunks.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// `table`: the last row's table, which the next row's most likely shares
/// (lines in the order of their paths, see `same_table`).
fn entry(line: &str, table: &mut Option<Shared>) -> Option<(Shared, Cached)> {
    let serde = |table: &mut Option<Shared>| {
        let l: Line = serde_json::from_str(line).ok()?;
        Some(Line { t: l.t.as_deref().map(|t| same_table(table, t)), ..l })
    };
    let Line { p, s, m, h, l, t, i, v } = Fast::line(line, table).or_else(|| serde(table))?;
    let state = match t {
        None => State::Plain,
        Some(t) => State::Row(Row { table: t, id: i.map(RowId::from), values: Values::from_raw(v?)? }),
    };
    Some((p, Cached { size: crate::vault::size(s), mtime: m, hash: h, links: l, state }))
}

/// Reads a line as the engine writes it, without serde: the keys in the order
/// of `write_line`, no spaces, strings without escapes, integers. None for any
/// other line, which serde reads (a path with a quote, a line a person wrote).
/// A fifth of a reopen's time in wasm went to serde here, on every note.
struct Fast<'a> {
    line: &'a str,
    at: usize,
}

impl<'a> Fast<'a> {
    /// `table`: the last row's table (`same_table`).
    fn line(line: &'a str, table: &mut Option<Shared>) -> Option<Line> {
        let mut f = Fast { line, at: 0 };
        f.key("{\"p\":")?;
        let p = Shared::from(f.string()?);
        f.key(",\"s\":")?;
        let s = match f.integer()? {
            (false, n) => n,
            (true, _) => return None,
        };
        f.key(",\"m\":")?;
        let (minus, m) = f.integer()?;
        let m = i64::try_from(m).ok()?;
        let m = if minus { -m } else { m };
        f.key(",\"h\":")?;
        let h = TextHash::from_hex(f.string()?)?;
        f.key(",\"l\":[")?;
        let mut l = vec![];
        if f.key("]").is_none() {
            loop {
                l.push(f.string()?);
                if f.key("]").is_some() {
                    break;
                }
                f.key(",")?;
            }
        }
        let l = Stems::from_iter(l);
        if f.key("}").is_some() {
            return (f.at == line.len()).then_some(Line { p, s, m, h, l, t: None, i: None, v: None });
        }
        f.key(",\"t\":")?;
        let t = Some(same_table(table, f.string()?));
        let i = match f.key(",\"i\":") {
            Some(()) => Some(f.string()?.to_string()),
            None => None,
        };
        f.key(",\"v\":")?;
        // The last value: the line's rest but its closing brace, an object.
        // Not parsed: the file's checksum vouches that it is the JSON the
        // engine wrote.
        let rest = line[f.at..].strip_suffix('}').filter(|v| v.starts_with('{') && v.ends_with('}'))?;
        let v = Some(rest.into());
        Some(Line { p, s, m, h, l, t, i, v })
    }

    fn key(&mut self, k: &str) -> Option<()> {
        // Compared a byte at a time: the keys are a few bytes long, and in wasm
        // a slice comparison is a call to memcmp.
        let rest = self.line.as_bytes().get(self.at..self.at + k.len())?;
        rest.iter().zip(k.as_bytes()).all(|(a, b)| a == b).then(|| self.at += k.len())
    }

    /// A string with neither escapes nor control characters: its text as written.
    fn string(&mut self) -> Option<&'a str> {
        self.key("\"")?;
        let rest = &self.line.as_bytes()[self.at..];
        let end = string_end(rest)?;
        (rest[end] == b'"').then(|| {
            let s = &self.line[self.at..self.at + end];
            self.at += end + 1;
            s
        })
    }

    /// An integer as JSON writes one: digits without a leading zero, maybe a minus.
    fn integer(&mut self) -> Option<(bool, u64)> {
        let b = self.line.as_bytes();
        let minus = b.get(self.at) == Some(&b'-');
        let first = self.at + usize::from(minus);
        let digits = b[first..].iter().take_while(|c| c.is_ascii_digit()).count();
        // serde_json reads -0 as a float.
        if digits == 0 || digits > 19 || (b[first] == b'0' && (digits > 1 || minus)) {
            return None;
        }
        self.at = first + digits;
        // Nineteen digits fit in a u64.
        Some((minus, b[first..self.at].iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'))))
    }
}

/// Where the first quote, backslash or control character of `bytes` is: a
/// string's end, if it has no escape. Looked for a word at a time (each line
/// holds about 170 bytes of strings), then a byte at a time in the word that
/// holds one.
pub(crate) fn string_end(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = ONES * 0x80;
    // The high bit of each byte below `n` (and maybe of those above it, which
    // the byte scan then passes over).
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for w in &mut words {
        let x = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        if below(x, 0x20) | below(x ^ (ONES * u64::from(b'"')), 1) | below(x ^ (ONES * u64::from(b'\\')), 1) != 0 {
            break;
        }
        at += 8;
    }
    let special = |b: &u8| *b == b'"' || *b == b'\\' || *b < 0x20;
    bytes[at..].iter().position(special).map(|i| at + i)
}

/// Whether a note may be kept in the cache: rows and plain notes; a note the
/// engine cannot read as a row, or a sync tool's copy, is read at every open
/// (its message and its neighbours decide what it is).
pub fn cacheable(path: &str, note: &Note) -> bool {
    !matches!(note.state, State::Unreadable { .. }) && crate::conflicts::copy_of(path).is_none() && note.mtime > 0
}

/// The cache file for these notes, written at `now_ms`; and the file as a
/// segment may be appended to it.
pub fn write<'a>(
    metastore: Option<&str>,
    notes: impl Iterator<Item = (&'a str, &'a Note)>,
    now_ms: i64,
) -> (String, Appendable) {
    let notes = cached_by_path(notes);
    let mut buf = lines_buffer(notes.iter().map(|(p, n)| line_room(p, n)).sum());
    let (head, file) = write_sorted(metastore, &notes, now_ms, |piece| buf.extend_from_slice(piece));
    (with_head(head, buf), file)
}

/// As `write`, the lines handed to `put` in pieces as they are made, and the
/// head answered (the file is the head, then the pieces): a wasm host gathers
/// them outside the engine's memory, which never shrinks, where the file whole
/// (36 MB for 100k notes) wanted room of its own in it.
pub fn write_pieces<'a>(
    metastore: Option<&str>,
    notes: impl Iterator<Item = (&'a str, &'a Note)>,
    now_ms: i64,
    put: impl FnMut(&[u8]),
) -> (String, Appendable) {
    write_sorted(metastore, &cached_by_path(notes), now_ms, put)
}

/// The notes the cache holds, by path: the same file from any engine (a hash
/// map's order differs between 32- and 64-bit builds), and a person can diff two.
fn cached_by_path<'a>(notes: impl Iterator<Item = (&'a str, &'a Note)>) -> Vec<(&'a str, &'a Note)> {
    let mut notes: Vec<(&str, &Note)> = notes.filter(|(p, n)| cacheable(p, n)).collect();
    notes.sort_unstable_by(|a, b| a.0.cmp(b.0));
    notes
}

/// A piece of lines `write_pieces` hands over (a few in a test's file).
const PIECE: usize = if cfg!(test) { 4 << 10 } else { 1 << 20 };

fn write_sorted(
    metastore: Option<&str>,
    notes: &[(&str, &Note)],
    now_ms: i64,
    mut put: impl FnMut(&[u8]),
) -> (String, Appendable) {
    let mut sum = Sum::default();
    let mut piece = Vec::with_capacity(PIECE + 4096);
    let mut flush = |piece: &mut Vec<u8>| {
        sum.add(piece);
        put(piece);
        piece.clear();
    };
    for (path, n) in notes {
        write_line(&mut piece, path, n);
        if piece.len() >= PIECE {
            flush(&mut piece);
        }
    }
    if !piece.is_empty() {
        flush(&mut piece);
    }
    let bytes = sum.len;
    let sum = sum.hex();
    let mut head = json!({"format": FORMAT, "engine": env!("CARGO_PKG_VERSION"), "schema": schema_key(metastore),
        "written": now_ms, "bytes": bytes, "sum": sum})
    .to_string();
    head.push('\n');
    (head, Appendable { sum, lines: notes.len(), appended: 0, fresh: Default::default() })
}

/// Room before a part's lines for its head, which is written after them (it
/// names their length and checksum): the part is made in place, where putting
/// the lines behind the head took a copy of them (36 MB more at once for
/// 100k notes).
const HEAD_ROOM: usize = 256;

/// A buffer for a part's lines: the head's room, then room for `bytes` of lines.
fn lines_buffer(bytes: usize) -> Vec<u8> {
    let mut buf = Vec::with_capacity(HEAD_ROOM + bytes);
    buf.resize(HEAD_ROOM, b' ');
    buf
}

/// About the length of a note's line (`write_line`), a little more: the
/// buffer of 100k lines made to its size, not grown by doubling to 51 MB.
fn line_room(path: &str, n: &Note) -> usize {
    let stems: usize = n.links.iter().map(|l| l.len() + 3).sum();
    let row =
        n.row().map_or(0, |r| 16 + r.table.len() + r.id.as_ref().map_or(0, |i| i.len() + 8) + r.values.to_raw().len());
    96 + 64 + path.len() + stems + row
}

/// A part of a cache file, the first or a segment, from its lines in `buf`
/// (`lines_buffer`): `head` with their length and checksum, then the lines;
/// and that checksum.
fn part(mut head: Value, buf: Vec<u8>) -> (String, String) {
    let body = &buf[HEAD_ROOM..];
    let sum = checksum(body);
    head["bytes"] = json!(body.len());
    head["sum"] = json!(sum);
    let mut head = head.to_string();
    head.push('\n');
    (with_head(head, buf), sum)
}

/// The head line put in the room `lines_buffer` left before the lines.
fn with_head(head: String, mut buf: Vec<u8>) -> String {
    match HEAD_ROOM.checked_sub(head.len()) {
        Some(start) => {
            buf[start..HEAD_ROOM].copy_from_slice(head.as_bytes());
            buf.drain(..start);
        }
        // Longer than its room (an engine's version of 150 characters): in front.
        None => drop(buf.splice(..HEAD_ROOM, head.into_bytes())),
    }
    // Only JSON, which is UTF-8, went in.
    String::from_utf8(buf).unwrap_or_default()
}

/// A segment to append to `file` (see the module's comment): a line for each
/// of its `fresh` notes as `notes` holds it now, or that it is gone. `file`
/// then holds it too, its `fresh` emptied.
pub fn segment(file: &mut Appendable, notes: &crate::vault::Vault, now_ms: i64) -> String {
    let mut body = lines_buffer(file.fresh.len() * 256);
    for (path, held) in &file.fresh {
        match notes.get(path) {
            Some(n) if cacheable(path, n) => write_line(&mut body, path, n),
            _ if !held => {}
            _ => {
                body.extend_from_slice(b"{\"gone\":");
                let _ = serde_json::to_writer(&mut body, path);
                body.extend_from_slice(b"}\n");
            }
        }
    }
    file.appended += std::mem::take(&mut file.fresh).len();
    part(json!({"of": file.sum, "written": now_ms}), body).0
}

/// A note's line (see the module's comment), the row's values as their JSON
/// text. Writing to a Vec cannot fail.
fn write_line(out: &mut Vec<u8>, path: &str, n: &Note) {
    // serde_json's writer: escapes as JSON does, and numbers without fmt.
    fn json(out: &mut Vec<u8>, v: &(impl serde::Serialize + ?Sized)) {
        let _ = serde_json::to_writer(out, v);
    }
    out.extend_from_slice(b"{\"p\":");
    json(out, path);
    out.extend_from_slice(b",\"s\":");
    json(out, &n.size);
    out.extend_from_slice(b",\"m\":");
    json(out, &n.mtime);
    out.extend_from_slice(b",\"h\":");
    json(out, &*n.hash.hex());
    out.extend_from_slice(b",\"l\":[");
    for (k, l) in n.links.iter().enumerate() {
        if k > 0 {
            out.push(b',');
        }
        json(out, l);
    }
    out.push(b']');
    if let Some(row) = n.row() {
        out.extend_from_slice(b",\"t\":");
        json(out, &*row.table);
        if let Some(id) = row.id_str() {
            out.extend_from_slice(b",\"i\":");
            json(out, &*id);
        }
        out.extend_from_slice(b",\"v\":");
        out.extend_from_slice(row.values.to_raw().as_bytes());
    }
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    fn note(state: State, mtime: i64) -> Note {
        Note {
            text: None,
            size: 5,
            mtime,
            state,
            links: Stems::from_iter(["b"]),
            hash: TextHash::from_hex(&"a".repeat(64)).unwrap(),
        }
    }

    fn stat(path: &str, size: u64, mtime: i64) -> NoteStat {
        NoteStat { path: path.into(), size, mtime }
    }

    /// A cache file changed line by line, its checksum made again: what the
    /// lines say is checked as well.
    fn resummed(text: &str) -> String {
        let (head, body) = text.split_once('\n').unwrap();
        let mut head: Value = serde_json::from_str(head).unwrap();
        head["sum"] = json!(checksum(body.as_bytes()));
        head["bytes"] = json!(body.len());
        format!("{head}\n{body}")
    }

    /// The notes of `stats` a cache does not vouch for: the same whether the
    /// listing is judged by `plan` or by a host in two parts beforehand
    /// (`Judge`), and verdicts of another listing are not taken.
    fn wanted(cache: &Cache, stats: &[NoteStat]) -> Vec<String> {
        let alone = Prebuilt::new(cache.clone()).plan(stats.to_vec()).2;
        let pre = Prebuilt::new(cache.clone());
        let (a, b) = stats.split_at(stats.len() / 2);
        let mut verdicts = pre.judge().verdicts(a);
        verdicts.extend(pre.judge().verdicts(b));
        assert_eq!(verdicts.len(), stats.len());
        assert_eq!(pre.judged(verdicts).plan(stats.to_vec()).2, alone);
        let other = vec![Some(true); stats.len() + 1];
        assert_eq!(Prebuilt::new(cache.clone()).judged(other).plan(stats.to_vec()).2, alone);
        // The verdicts given are the ones the plan follows.
        let trusting = vec![Some(true); stats.len()];
        assert!(Prebuilt::new(cache.clone()).judged(trusting).plan(stats.to_vec()).2.is_empty());
        alone
    }

    const M: &str = "version: 1\ntables:\n  main.public.t:\n    columns:\n      n: {type: integer}\n";
    const A: &str = "datanotes/main/public/t/a.md";

    #[test]
    fn a_note_is_vouched_for_only_with_its_size_and_mtime_well_before_the_cache() {
        let row = Row { table: "main.public.t".into(), id: Some("x".into()), values: Values::default() };
        let notes = [(A.to_string(), note(State::Row(row), 1_000)), ("p.md".to_string(), note(State::Plain, 9_500))];
        let text = write(Some(M), notes.iter().map(|(p, n)| (p.as_str(), n)), 10_000).0;
        let cache = Cache::read(&text, Some(M)).unwrap();
        // p.md was changed 0.5 s before the cache was written: not trusted.
        let stats = [stat(A, 5, 1_000), stat("p.md", 5, 9_500), stat("new.md", 1, 1)];
        assert_eq!(wanted(&cache, &stats), ["p.md", "new.md"]);
        assert_eq!(wanted(&cache, &[stat(A, 6, 1_000), stat(A, 5, 1_001)]), [A, A]);
        // A line whose table is not the one its folder says is not trusted.
        let moved = text.replace("\"t\":\"main.public.t\"", "\"t\":\"main.public.u\"");
        assert!(Cache::read(&moved, Some(M)).unwrap_err().contains("checksum"));
        assert_eq!(wanted(&Cache::read(&resummed(&moved), Some(M)).unwrap(), &stats[..1]), [A]);
        let plain = text.replace(",\"t\":\"main.public.t\",\"i\":\"x\",\"v\":{}", "");
        assert_ne!(plain, text);
        assert_eq!(wanted(&Cache::read(&resummed(&plain), Some(M)).unwrap(), &stats[..1]), [A]);
        let (left, vault, _) = Prebuilt::new(cache).plan(stats.to_vec());
        assert_eq!(vault.notes.len(), 1, "only the note vouched for is indexed");
        let a = vault.get(A).unwrap();
        let State::Row(r) = &a.state else { panic!("a row") };
        assert_eq!(
            (r.id_str().as_deref(), a.links.iter().collect::<Vec<_>>(), a.text.as_deref()),
            (Some("x"), vec!["b"], None)
        );
        let racy: Vec<&str> = left.racy.iter().map(|(p, _)| &**p).collect();
        assert_eq!((left.entries.iter().flatten().count(), racy), (0, vec!["p.md"]));
    }

    #[test]
    fn a_note_of_4_gib_or_more_is_never_vouched_for_by_its_size() {
        let sized = |size: u64| Note { size: crate::vault::size(size), ..note(State::Plain, 1_000) };
        let notes = [("small.md".to_string(), sized(5)), ("big.md".to_string(), sized(5 << 30))];
        let (text, _) = write(Some("m"), notes.iter().map(|(p, n)| (p.as_str(), n)), 10_000);
        let cache = Cache::read(&text, Some("m")).unwrap();
        let stats = [stat("small.md", 5, 1_000), stat("big.md", 5 << 30, 1_000)];
        assert_eq!(wanted(&cache, &stats), ["big.md"], "kept as u32::MAX, it vouches for no size");
        for other in [6 << 30, u64::from(u32::MAX)] {
            assert_eq!(wanted(&cache, &[stat("big.md", other, 1_000)]), ["big.md"]);
        }
    }

    #[test]
    fn a_later_segment_stands_for_a_note_in_place_of_every_earlier_line() {
        let sized = |size: u64, mtime: i64| Note { size: crate::vault::size(size), ..note(State::Plain, mtime) };
        let notes = [("a.md".to_string(), sized(5, 1_000)), ("c.md".to_string(), sized(5, 1_000))];
        let (text, file) = write(Some("m"), notes.iter().map(|(p, n)| (p.as_str(), n)), 10_000);
        let segment = |written: i64, lines: &[(&str, Option<Note>)]| {
            let mut body = lines_buffer(0);
            for (p, n) in lines {
                match n {
                    Some(n) => write_line(&mut body, p, n),
                    None => body.extend(format!("{{\"gone\":{}}}\n", json!(p)).bytes()),
                }
            }
            part(json!({"of": file.sum, "written": written}), body).0
        };
        let first = segment(20_000, &[("b.md", Some(sized(6, 1_500))), ("c.md", Some(sized(7, 1_500)))]);
        // b.md changed again, c.md gone, d.md new and written just before the segment.
        let second =
            segment(30_000, &[("b.md", Some(sized(8, 2_000))), ("c.md", None), ("d.md", Some(sized(5, 29_500)))]);
        let cache = Cache::read(&format!("{text}{first}{second}"), Some("m")).unwrap();
        let stats = [stat("a.md", 5, 1_000), stat("b.md", 8, 2_000), stat("c.md", 5, 1_000), stat("d.md", 5, 29_500)];
        assert_eq!(wanted(&cache, &stats), ["c.md", "d.md"]);
        for older in [stat("b.md", 6, 1_500), stat("c.md", 7, 1_500)] {
            assert_eq!(wanted(&cache, std::slice::from_ref(&older)), [older.path], "an earlier line stands no more");
        }
        let (left, vault, _) = Prebuilt::new(cache.clone()).plan(stats.to_vec());
        let mut taken: Vec<(&str, u64)> = vault.notes.iter().map(|(p, n)| (&**p, u64::from(n.size))).collect();
        taken.sort();
        assert_eq!(taken, [("a.md", 5), ("b.md", 8)]);
        // d.md is too close to its segment's writing: read, and not indexed.
        assert_eq!(left.racy.iter().map(|(p, _)| &**p).collect::<Vec<_>>(), ["d.md"]);
        assert_eq!(cache.file.as_ref().map(|f| (f.lines, f.appended)), Some((2, 5)));
        // A segment whose lines were changed is left out, and those after it:
        // the first part vouches for c.md as it was.
        let spoilt = first.replace("\"s\":6", "\"s\":9");
        let cache = Cache::read(&format!("{text}{spoilt}{second}"), Some("m")).unwrap();
        assert!(cache.file.is_none(), "to be written whole");
        assert_eq!(wanted(&cache, &stats), ["b.md", "d.md"]);
    }

    /// The file made in pieces (wasm's) is the file made whole, byte for
    /// byte; and a checksum taken over pieces cut anywhere is the whole's.
    #[test]
    fn a_file_written_in_pieces_is_the_file_written_whole() {
        let notes: Vec<(String, Note)> =
            (0..300).map(|k| (format!("folder/n{k:03}.md"), note(State::Plain, 1_000 + k))).collect();
        let all = || notes.iter().map(|(p, n)| (p.as_str(), n));
        let (whole, file) = write(Some("m"), all(), 5_000);
        let mut pieces: Vec<Vec<u8>> = vec![];
        let (head, in_pieces) = write_pieces(Some("m"), all(), 5_000, |p| pieces.push(p.to_vec()));
        assert!(pieces.len() > 2, "{} pieces", pieces.len());
        assert_eq!(head + &String::from_utf8(pieces.concat()).unwrap(), whole);
        assert_eq!((in_pieces.sum, in_pieces.lines), (file.sum.clone(), 300));
        assert!(Checked::new(&whole, Some("m")).is_ok_and(|c| c.file.is_some()));

        let body = whole.split_once('\n').unwrap().1.as_bytes();
        for (a, b) in [(0, 0), (1, 2), (31, 32), (32, 64), (33, 97), (100, body.len() - 1), (body.len(), body.len())] {
            let mut sum = Sum::default();
            [&body[..a], &body[a..b], &body[b..]].iter().for_each(|p| sum.add(p));
            assert_eq!(sum.hex(), file.sum, "cut at {a} and {b}");
        }
    }

    /// A file fed to a `Reader` in pieces cut anywhere reads as the file
    /// whole does: the same entries and segments, or the same refusal.
    #[test]
    fn a_file_read_in_pieces_is_read_as_the_file_whole() {
        let notes: Vec<(String, Note)> =
            (0..300).map(|k| (format!("folder/n{k:03}.md"), note(State::Plain, 1_000 + k))).collect();
        let (text, file) = write(Some("m"), notes.iter().map(|(p, n)| (p.as_str(), n)), 5_000);
        let mut gone = lines_buffer(0);
        gone.extend_from_slice(b"{\"gone\":\"folder/n004.md\"}\n");
        let with_segment = text.clone() + &part(json!({"of": file.sum, "written": 9_000}), gone).0;
        let body_at = text.find('\n').unwrap() + 1;
        let mut flipped = text.clone().into_bytes();
        flipped[body_at + 10] ^= 1;
        let cut = &text.as_bytes()[..text.len() - 5];
        let files: [(&[u8], Option<&str>); 6] = [
            (text.as_bytes(), Some("m")),
            (with_segment.as_bytes(), Some("m")),
            (&flipped, Some("m")),
            (cut, Some("m")),
            (text.as_bytes(), Some("another")),
            (b"not a head", Some("m")),
        ];
        // The entries in one run, whatever the runs they were parsed in.
        let seen = |c: Result<Cache, String>| {
            c.map(|c| {
                format!("{:?} {:?} {:?}", c.entries.concat(), c.racy, c.file.map(|f| (f.sum, f.lines, f.appended)))
            })
        };
        for (k, (bytes, metastore)) in files.into_iter().enumerate() {
            let whole = std::str::from_utf8(bytes).map_err(|e| e.to_string()).and_then(|t| Cache::read(t, metastore));
            let whole = seen(whole);
            for size in [1, 7, 100, 4096, bytes.len().max(1)] {
                let mut reader = Reader::new(metastore);
                bytes.chunks(size).for_each(|p| reader.feed(p));
                assert!(seen(reader.finish()) == whole, "file {k}, pieces of {size}");
            }
            assert_eq!(whole.is_ok(), k < 2, "file {k}: {whole:?}");
        }
    }

    /// A part is its head (naming the lines' length and checksum) and its
    /// lines, whether the head fits the room left for it or not.
    #[test]
    fn a_part_is_its_head_then_its_lines_whatever_the_head_s_length() {
        for of in ["1234".to_string(), "x".repeat(HEAD_ROOM * 2)] {
            let mut buf = lines_buffer(0);
            buf.extend_from_slice("{\"gone\":\"a.md\"}\n{\"gone\":\"é.md\"}\n".as_bytes());
            let lines = buf[HEAD_ROOM..].to_vec();
            let (text, sum) = part(json!({"of": of}), buf);
            let (head, rest) = text.split_once('\n').unwrap();
            assert_eq!(rest.as_bytes(), lines);
            assert_eq!(sum, checksum(&lines));
            let head: Value = serde_json::from_str(head).unwrap();
            assert_eq!(head, json!({"of": of, "bytes": lines.len(), "sum": sum}));
        }
    }

    #[test]
    fn a_file_parsed_in_halves_is_read_as_in_one_run() {
        let notes: Vec<(String, Note)> = (0..9).map(|k| (format!("n{k}.md"), note(State::Plain, 1_000 + k))).collect();
        let (text, _) = write(None, notes.iter().map(|(p, n)| (p.as_str(), n)), 1_006 + RACY_MS);
        let with_segment = |text: &str| {
            let sum = Checked::new(text, None).unwrap().file.unwrap().sum;
            let mut gone = lines_buffer(0);
            gone.extend_from_slice(b"{\"gone\":\"n4.md\"}\n");
            text.to_string() + &part(json!({"of": sum, "written": 99_000}), gone).0
        };
        for text in [text.clone(), with_segment(&text)] {
            let checked = Checked::new(&text, None).unwrap();
            let [a, b] = checked.halves();
            assert_eq!(format!("{a}{b}"), checked.body);
            assert!(a.ends_with('\n') && !a.is_empty() && !b.is_empty());
            let halves = checked.join(vec![parse(a), parse(b)]);
            let whole = Cache::read(&text, None).unwrap();
            let paths = |c: &Cache| -> (Vec<String>, Vec<String>) {
                let entries = c.entries.iter().flatten().map(|(p, _)| p.to_string()).collect();
                (entries, c.racy.iter().map(|(p, _)| p.to_string()).collect())
            };
            assert_eq!(paths(&halves), paths(&whole));
            // n6.md to n8.md were written less than 2 s before the file.
            assert_eq!(paths(&whole).1, ["n6.md", "n7.md", "n8.md"]);
            let gone = text.contains("gone");
            assert_eq!(paths(&whole).0.contains(&"n4.md".to_string()), !gone);
        }
        let empty = write(None, std::iter::empty(), 0).0;
        assert_eq!(Checked::new(&empty, None).unwrap().halves(), ["", ""]);
    }

    /// A table's rows hold one string for its name, whether parsed from
    /// their notes (the schema's) or read from the cache (the last row's).
    #[test]
    fn a_table_s_rows_share_its_name() {
        let schema = crate::schema::Schema::parse(M).unwrap();
        let text = |n: usize| format!("---\ntable: main.public.t\nn: {n}\n---\n");
        let notes = (0..4).map(|n| (format!("datanotes/main/public/t/r{n}.md"), text(n), 1)).collect();
        let vault = crate::vault::Vault::build(&schema, notes);
        let tables = |v: &Vault| -> Vec<std::sync::Arc<str>> {
            v.notes.values().filter_map(|n| n.row()).map(|r| r.table.clone()).collect()
        };
        let parsed = tables(&vault);
        assert_eq!(parsed.len(), 4);
        assert!(parsed.iter().all(|t| std::sync::Arc::ptr_eq(t, &parsed[0]) && &**t == "main.public.t"));
        let file = write(Some(M), vault.cached_notes(), 10_000).0;
        let cache = Cache::read(&file, Some(M)).unwrap();
        let stats =
            (0..4).map(|n| stat(&format!("datanotes/main/public/t/r{n}.md"), text(n).len() as u64, 1)).collect();
        let (_, reopened, wanted) = Prebuilt::new(cache).plan(stats);
        assert_eq!(wanted, Vec::<String>::new());
        let rows = tables(&reopened);
        assert_eq!(rows.len(), 4);
        assert!(rows.iter().all(|t| std::sync::Arc::ptr_eq(t, &rows[0]) && &**t == "main.public.t"));
    }

    #[test]
    fn a_line_is_read_without_serde_as_serde_reads_it_or_left_to_serde() {
        let row = |id: Option<&str>| {
            let values = Values::from_raw(r#"{"n":1,"s":"a\"b"}"#.into()).unwrap();
            note(State::Row(Row { table: "main.public.t".into(), id: id.map(RowId::from), values }), 3)
        };
        let notes = [
            (A.to_string(), row(Some("x"))),
            ("p.md".to_string(), row(None)),
            ("q \"é\".md".to_string(), note(State::Plain, 1_000)),
            ("r.md".to_string(), Note { links: Stems::default(), ..note(State::Plain, 7) }),
        ];
        let text = write(Some(M), notes.iter().map(|(p, n)| (p.as_str(), n)), 10_000).0;
        let mut lines: Vec<String> = text.lines().skip(1).map(str::to_string).collect();
        let fast = lines.iter().filter(|l| Fast::line(l, &mut None).is_some()).count();
        assert_eq!(fast, 3, "every line but the one with a quote in its path: {lines:?}");
        // Lines no engine writes: spaced, reordered, a float, a leading zero,
        // keys unknown or missing, cut short, a value that is not JSON.
        let first = lines[0].clone();
        lines.extend([
            first.replace(",", ", "),
            first.replace("\"s\":5,\"m\":3", "\"m\":3,\"s\":5"),
            first.replace("\"s\":5", "\"s\":5.0"),
            first.replace("\"s\":5", "\"s\":05"),
            first.replace("\"s\":5", "\"s\":-5"),
            first.replace("\"s\":5", "\"s\":18446744073709551616"),
            first.replace("\"m\":3", "\"m\":-0"),
            first.replace("\"m\":3", "\"m\":-3"),
            first.replace("\"v\":", "\"x\":1,\"v\":"),
            first.replace("}}", "},\"x\":1}"),
            first.replace(",\"i\":\"x\"", ""),
            first.replace(",\"v\":{\"n\":1,\"s\":\"a\\\"b\"}", ""),
            first.replace("{\"n\":1", "{\"n\":1,,"),
            first.replace("\"p\":\"", "\"p\":\"\t"),
            first[..first.len() - 1].to_string(),
            lines[3].replace("[]", "[\"a\",\"b\"]"),
            lines[3].replace("[]", "[\"a\" ]"),
            lines[3].clone() + " ",
        ]);
        let (mut taken, mut summed) = (0, vec![]);
        for l in &lines {
            let Some(line) = Fast::line(l, &mut None) else { continue };
            let by_serde: Option<Line> = serde_json::from_str(l).ok();
            if format!("{:?}", Some(line)) == format!("{by_serde:?}") {
                taken += 1;
            } else {
                // The values are the line's rest, not parsed (a fifth of a
                // wasm reopen): only the file's checksum vouches for them.
                summed.push(l.clone());
            }
        }
        // The engine's three, a negative mtime, no id, two links.
        assert_eq!(taken, 6);
        assert_eq!(summed, [first.replace("{\"n\":1", "{\"n\":1,,")]);
        let (head, body) = text.split_once('\n').unwrap();
        for l in summed {
            let file = format!("{head}\n{}", body.replacen(&first, &l, 1));
            assert!(Cache::read(&file, Some(M)).unwrap_err().contains("checksum"), "{l}");
        }
    }

    #[test]
    fn the_notes_not_as_listed_leave_the_index_and_texts_read_anyway_join_it() {
        let notes: Vec<(String, Note)> = ["a.md", "b.md", "c.md", "d.md"]
            .iter()
            .map(|p| (p.to_string(), Note { links: Stems::from_iter(["a"]), ..note(State::Plain, 1_000) }))
            .collect();
        let text = write(None, notes.iter().map(|(p, n)| (p.as_str(), n)), 10_000).0;
        let cache = Cache::read(&text, None).unwrap();
        // b.md changed, c.md gone, e.md new; a.md and d.md as the cache holds them.
        let stats = [stat("a.md", 5, 1_000), stat("b.md", 6, 2_000), stat("d.md", 5, 1_000), stat("e.md", 1, 2_000)];
        let (left, vault, wanted) = Prebuilt::new(cache).plan(stats.to_vec());
        assert_eq!(wanted, ["b.md", "e.md"]);
        let mut out: Vec<&str> = left.entries.iter().flatten().map(|(p, _)| &**p).collect();
        out.sort();
        assert_eq!(out, ["b.md", "c.md"], "the cache's entries left: for `stale`, and the segment");
        let mut indexed: Vec<&str> = vault.notes.keys().map(|p| &**p).collect();
        indexed.sort();
        assert_eq!(indexed, ["a.md", "d.md"]);
        assert_eq!(vault.linked_from("a"), ["a.md", "d.md"], "the links of the notes out are gone too");
        // The host read b.md and e.md, and d.md anyway: d.md keeps its entry and gets its text.
        let read = ["b.md", "d.md", "e.md"].map(|p| (p.to_string(), format!("[[a]] {p}"), 2_000)).to_vec();
        let read = [(read[0].clone()), ("d.md".to_string(), "12345".to_string(), 1_000), read[2].clone()].to_vec();
        let (vault, attached) = vault.with_read(&Default::default(), read);
        assert_eq!(attached, 1);
        assert_eq!(vault.get("d.md").and_then(|n| n.text.as_deref()), Some("12345"));
        assert_eq!(vault.get("d.md").map(|n| n.hash.to_string()), Some("a".repeat(64)), "as the cache vouched");
        assert_eq!(vault.linked_from("a"), ["a.md", "b.md", "d.md", "e.md"]);
    }

    #[test]
    fn a_string_end_is_found_a_word_at_a_time_as_one_by_one() {
        // Every byte value, alone at every place of a run of plain bytes.
        for b in 0..=255u8 {
            for at in 0..20 {
                for len in [at + 1, at + 9, 24] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = b;
                    let special = |c: &u8| *c == b'"' || *c == b'\\' || *c < 0x20;
                    assert_eq!(string_end(&bytes), bytes.iter().position(special), "{b} at {at} of {len}");
                }
            }
        }
        assert_eq!(string_end(b"\xff\xfe\x80\x9f\xa2\xdc\x21\x5b\x5d\""), Some(9));
    }

    #[test]
    fn lines_are_counted_a_word_at_a_time_as_one_by_one() {
        // Newlines at every place of a word and across words, beside bytes
        // with the high bit set (0x8a is a newline's bits plus it).
        let bytes: Vec<u8> =
            (0..200u32).map(|k| [b'\n', b'a', 0x8a, 0xff, 0x0b, 0x09, b'\n'][(k * k % 7) as usize]).collect();
        for start in 0..9 {
            for end in (start..bytes.len()).step_by(5) {
                let b = &bytes[start..end];
                assert_eq!(count_lines(b), b.iter().filter(|&&c| c == b'\n').count(), "{start}..{end}");
            }
        }
        assert_eq!(count_lines(&[b'\n'; 16]), 16);
    }

    #[test]
    fn a_cache_of_another_schema_or_format_or_cut_short_is_not_trusted() {
        let notes = [("a.md".to_string(), note(State::Plain, 1_000)), ("b.md".to_string(), note(State::Plain, 1_000))];
        let text = write(Some("m"), notes.iter().map(|(p, n)| (p.as_str(), n)), 10_000).0;
        assert!(Cache::read(&text, Some("other")).unwrap_err().contains("metastore.yaml"));
        assert!(Cache::read(&text.replacen("\"format\":3", "\"format\":2", 1), Some("m"))
            .unwrap_err()
            .contains("version"));
        assert!(Cache::read("", Some("m")).is_err());
        // Cut short, even at a line's end: not one line is trusted.
        for end in [text.len() - 10, text.rfind("{\"p\"").unwrap()] {
            assert!(Cache::read(&text[..end], Some("m")).unwrap_err().contains("damaged"));
        }
        let cut = resummed(&text[..text.len() - 10]);
        let cache = Cache::read(&cut, Some("m")).unwrap();
        assert_eq!(wanted(&cache, &[stat("a.md", 5, 1_000), stat("b.md", 5, 1_000)]), ["b.md"]);
    }
}
