//! The engine for JavaScript hosts (the Obsidian plugin): the same calls, with
//! JSON texts in and out (plugin/src/engine.ts parses and writes them). One text
//! crosses instead of a JS object per field: faster for a vault's notes, and
//! serde-wasm-bindgen's code stays out of the plugin's bundle.

use crate::edits::EditError;
use crate::engine::{Engine, NoteFile, StoreFile};
use crate::handedit::VaultEvent;
use crate::notecache::NoteStat;
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

#[derive(Deserialize)]
struct EventIn {
    kind: String,
    path: String,
    #[serde(default)]
    from: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    mtime: f64,
}

fn to_js(v: &impl Serialize) -> Result<String, JsValue> {
    serde_json::to_string(v).map_err(|e| JsValue::from_str(&e.to_string()))
}

fn utf8<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str, JsValue> {
    std::str::from_utf8(bytes).map_err(|e| JsValue::from_str(&format!("{what}: not UTF-8: {e}")))
}

fn from_js<T: for<'de> Deserialize<'de>>(text: &str, what: &str) -> Result<T, JsValue> {
    serde_json::from_str(text).map_err(|e| JsValue::from_str(&format!("{what}: {e}")))
}

use serde::Serialize;

#[wasm_bindgen]
pub struct WasmEngine {
    inner: Engine,
    /// The last `takeCache` is a segment to append (`cacheAppends`).
    cache_appends: bool,
}

/// Grows the wasm memory once by `bytes`, for what an open will hold, by
/// allocating that much and freeing it: the allocator keeps the freed room.
/// Grown a page run at a time instead, each `memory.grow` costs the JS engine a
/// garbage collection, and a first open of 100k notes spent most of its 50 s
/// there. Linear memory never shrinks: what is reserved stays the engine's.
/// What each open asks for is said where it asks.
fn reserve(bytes: usize) {
    drop(std::hint::black_box(Vec::<u8>::with_capacity(bytes)));
}

/// The notes' cache read from JavaScript's memory a piece at a time
/// (`notecache::Reader`): copied in whole, its 36 MB at 100k notes were in
/// the engine's memory beside the index made of them, and set a reopen's peak.
fn read_cache(bytes: &js_sys::Uint8Array, metastore: Option<&str>) -> Result<crate::notecache::Cache, String> {
    const PIECE: u32 = 1 << 20;
    let mut reader = crate::notecache::Reader::new(metastore);
    let len = bytes.length();
    let mut piece = vec![0u8; PIECE.min(len) as usize];
    let mut at = 0;
    while at < len {
        let end = at.saturating_add(PIECE).min(len);
        let piece = &mut piece[..(end - at) as usize];
        bytes.subarray(at, end).copy_to(piece);
        reader.feed(piece);
        at = end;
    }
    reader.finish()
}

#[wasm_bindgen]
impl WasmEngine {
    /// `files`: [{path, text, mtime}] of the vault, or [{path, size, mtime}] for
    /// a note listed and not read (the engine says which to read: `toRead`);
    /// `store`: [[path, text or null]] of `.datanotes/` (null: listed, not
    /// read; the engine asks when it needs it);
    /// `cache`: the text of the notes' cache (core/src/notecache.rs), if any: the
    /// notes it vouches for by size and mtime are not parsed again.
    /// `files` and `cache` come as UTF-8 bytes (JavaScript's TextEncoder): a
    /// string argument crosses a character at a time.
    /// `listed`, `sizes`, `mtimes`: more notes listed and not read, packed
    /// (JSON [path] as UTF-8, and their sizes and mtimes in the same order):
    /// 100k notes as objects in `files` cost JavaScript's JSON and the
    /// engine's parse about a tenth of a reopen.
    #[wasm_bindgen(constructor)]
    pub fn new(
        files: &[u8],
        store: &str,
        now_ms: f64,
        cache: Option<js_sys::Uint8Array>,
        listed: Option<Vec<u8>>,
        sizes: Option<Vec<f64>>,
        mtimes: Option<Vec<f64>>,
    ) -> Result<WasmEngine, JsValue> {
        // Six times the notes' JSON: at five a 100k-note open is a little
        // slower, at four 1.5x slower; at eight it is no faster and holds a
        // third more memory. The notes' cache asks for its own size, about
        // what the index made of it takes (the file itself is read a piece at
        // a time: `read_cache`); six times it left the engine 7.5 times the
        // notes (311 MB) for no speed. So do the paths listed packed: six
        // times them was no faster.
        let cache_len = cache.as_ref().map_or(0, |c| c.length() as usize);
        let listed_len = listed.as_ref().map_or(0, Vec::len);
        reserve((files.len() + store.len()).saturating_mul(6).saturating_add(cache_len).saturating_add(listed_len));
        let (files, mut stats) =
            NoteFile::listed_from_json(utf8(files, "files")?).map_err(|e| JsValue::from_str(&format!("files: {e}")))?;
        if let Some(listed) = listed {
            let paths: Vec<String> = from_js(utf8(&listed, "listed")?, "listed")?;
            let (sizes, mtimes) = (sizes.unwrap_or_default(), mtimes.unwrap_or_default());
            if sizes.len() != paths.len() || mtimes.len() != paths.len() {
                return Err(JsValue::from_str(&format!(
                    "listed: {} paths, but {} sizes and {} mtimes",
                    paths.len(),
                    sizes.len(),
                    mtimes.len()
                )));
            }
            stats.reserve(paths.len());
            let packed = paths.into_iter().zip(sizes).zip(mtimes);
            stats.extend(packed.map(|((path, size), mtime)| NoteStat { path, size: size as u64, mtime: mtime as i64 }));
        }
        let store: Vec<(String, Option<String>)> = from_js(store, "store")?;
        let store = store.into_iter().map(|(p, t)| StoreFile(p, t)).collect();
        let metastore = files.iter().find(|f| f.path == crate::schema::METASTORE).map(|f| f.text.as_str());
        let cache = cache.map(|c| read_cache(&c, metastore));
        Ok(WasmEngine {
            inner: Engine::open_with_read_cache(files, stats, cache, store, now_ms as i64),
            cache_appends: false,
        })
    }

    /// Warnings from opening (a damaged schema, settings or journal file).
    pub fn warnings(&self) -> Result<String, JsValue> {
        to_js(&self.inner.warnings())
    }

    /// Store files to write after opening (journal entries past retention).
    #[wasm_bindgen(js_name = takeUpkeep)]
    pub fn take_upkeep(&mut self) -> Result<String, JsValue> {
        to_js(&self.inner.take_upkeep())
    }

    /// The notes' cache to write after opening, as UTF-8 bytes, or undefined
    /// (`Engine::take_cache`); it goes to `cachePath`, appended to the file
    /// when `cacheAppends` says so. Bytes, not JSON: 100k notes make a cache
    /// of 36 MB, which JSON escaped and JavaScript parsed again, in more than a
    /// second. Gathered in JavaScript's memory a piece at a time: whole, the
    /// file wanted 36 MB of room of its own in the engine's memory, which a
    /// first open of 100k notes did not have free, and that memory grew by it
    /// for good.
    #[wasm_bindgen(js_name = takeCache)]
    pub fn take_cache(&mut self) -> Option<js_sys::Uint8Array> {
        let mut pieces = vec![];
        let w = self.inner.take_cache_in_pieces(|p| pieces.push(js_sys::Uint8Array::from(p)))?;
        self.cache_appends = w.append;
        let head = w.text.as_bytes();
        let len = head.len() + pieces.iter().map(|p| p.length() as usize).sum::<usize>();
        let out = js_sys::Uint8Array::new_with_length(len as u32);
        out.subarray(0, head.len() as u32).copy_from(head);
        let mut at = head.len() as u32;
        for p in pieces {
            out.set(&p, at);
            at += p.length();
        }
        Some(out)
    }

    /// Whether the last `takeCache` is to be appended to the file (a segment
    /// of the notes changed since it was read), not written in its place.
    #[wasm_bindgen(js_name = cacheAppends)]
    pub fn cache_appends(&self) -> bool {
        self.cache_appends
    }

    /// Where the notes' cache goes, under `.datanotes/` (this device's).
    #[wasm_bindgen(js_name = cachePath)]
    pub fn cache_path(&self) -> String {
        self.inner.cache_path()
    }

    /// The notes to read before the engine starts (`Engine::to_read`): JSON [path].
    #[wasm_bindgen(js_name = toRead)]
    pub fn to_read(&self) -> Result<String, JsValue> {
        to_js(&self.inner.to_read())
    }

    /// Texts the engine asked for (`toRead`, or a step `read_notes`), packed
    /// (`NoteFile::unpack`): `paths` JSON [path] and the texts one after
    /// another, as UTF-8 bytes (a string crosses a character at a time, and
    /// 100k paths are 4 MB); the texts' lengths in UTF-16 units (JavaScript's); `gone`
    /// JSON [path] of those no longer in the vault. `listed`: those of
    /// `toRead`, read right after the listing (`Engine::read_listed`).
    #[wasm_bindgen(js_name = readNotes)]
    pub fn read_notes(
        &mut self,
        paths: &[u8],
        mtimes: &[f64],
        texts: &[u8],
        lengths: &[u32],
        gone: &str,
        listed: bool,
    ) -> Result<(), JsValue> {
        // Texts read at a first open: the engine peaks near 2.4 times their
        // size (the texts, their packed copy, the index). At 100k notes, three
        // times leaves 156 MB of linear memory once the notes' cache is taken,
        // and opens as fast as four or five; at two, memory grew a page run at
        // a time and the open took 1.4 times as long. Not for rows read in
        // the background, 1,000 at a time: room reserved for each was left
        // free beside them (a reopen of 100k notes held 82 MB, not 79).
        if listed {
            reserve(texts.len().saturating_mul(3));
        }
        let texts = utf8(texts, "texts")?;
        let paths: Vec<String> = from_js(utf8(paths, "paths")?, "paths")?;
        let files =
            NoteFile::unpack(paths, mtimes, texts, lengths).map_err(|e| JsValue::from_str(&format!("notes: {e}")))?;
        let gone: Vec<String> = from_js(gone, "gone")?;
        if listed {
            self.inner.read_listed(files, gone);
        } else {
            self.inner.read_notes(files, gone);
        }
        Ok(())
    }

    /// The rows opened from the cache and not read yet (`Engine::unread_rows`):
    /// JSON [path]. The host reads them in the background, and hands them over
    /// as a turn's (`readNotes`, not listed).
    #[wasm_bindgen(js_name = unreadRows)]
    pub fn unread_rows(&self) -> Result<String, JsValue> {
        to_js(&self.inner.unread_rows())
    }

    /// Builds the lookups by name, link and unique value now
    /// (`Engine::warm_lookups`): the host calls it once the rows are read.
    #[wasm_bindgen(js_name = warmLookups)]
    pub fn warm_lookups(&self) {
        self.inner.warm_lookups();
    }

    /// One operation: a step, as `Step::to_json` writes it.
    pub fn call(&mut self, name: &str, args: &str, actor: &str, now_ms: f64) -> Result<String, JsValue> {
        let args: Value = from_js(args, "args")?;
        to_js(&self.inner.call(name, args, actor, now_ms as i64).to_json())
    }

    /// The results of the edits, in order: null for done, a string for an error.
    pub fn finish(&mut self, results: &str) -> Result<String, JsValue> {
        let results: Vec<Option<crate::edits::HostEditError>> = from_js(results, "results")?;
        let results = results
            .into_iter()
            .map(|r| match r {
                None => Ok(Ok(())),
                Some(e) => EditError::try_from(e).map(Err),
            })
            .collect::<Result<Vec<Result<(), EditError>>, String>>()
            .map_err(|e| JsValue::from_str(&format!("results: {e}")))?;
        to_js(&self.inner.finish(&results).to_json())
    }

    /// The host could not write an apply's store files: the refusal to give.
    #[wasm_bindgen(js_name = storeFailed)]
    pub fn store_failed(&mut self, op: &str, error: &str) -> Result<String, JsValue> {
        to_js(&self.inner.store_failed(op, error).to_json())
    }

    /// Store writes an earlier write still owes, to write before any other.
    #[wasm_bindgen(js_name = takeOwed)]
    pub fn take_owed(&mut self) -> Result<String, JsValue> {
        to_js(&self.inner.take_owed())
    }

    /// The host could not write `rest` (the first failed with `error`): kept, and
    /// what to say: {log, not_recorded, warning}.
    pub fn owe(&mut self, rest: &str, error: &str) -> Result<String, JsValue> {
        let rest = from_js(rest, "rest")?;
        to_js(&self.inner.owe(rest, error))
    }

    /// The host could not give the store files a call kept asking for.
    #[wasm_bindgen(js_name = needUnmet)]
    pub fn need_unmet(&self, op: &str, paths: &str) -> Result<String, JsValue> {
        let paths: Vec<String> = from_js(paths, "paths")?;
        to_js(&self.inner.need_unmet(op, &paths).to_json())
    }

    /// Store files the engine asked for (a need): [[path, text or null]].
    pub fn provide(&mut self, files: &str) -> Result<(), JsValue> {
        let files: Vec<(String, Option<String>)> = from_js(files, "files")?;
        self.inner.provide(files);
        Ok(())
    }

    /// A vault change: {kind: "created"|"modified"|"removed"|"renamed", path, from, to, text, mtime}.
    pub fn observe(&mut self, event: &str, now_ms: f64) -> Result<(), JsValue> {
        let ev: EventIn = from_js(event, "event")?;
        let e = match ev.kind.as_str() {
            "created" => {
                VaultEvent::Created { path: ev.path, text: ev.text.unwrap_or_default(), mtime: ev.mtime as i64 }
            }
            "modified" => {
                VaultEvent::Modified { path: ev.path, text: ev.text.unwrap_or_default(), mtime: ev.mtime as i64 }
            }
            "removed" => VaultEvent::Removed { path: ev.path },
            "renamed" => VaultEvent::Renamed {
                from: ev.from.unwrap_or_default(),
                to: ev.path,
                text: ev.text.unwrap_or_default(),
                mtime: ev.mtime as i64,
            },
            other => {
                return Err(JsValue::from_str(&format!(
                    "unknown event kind {other}: created, modified, removed or renamed"
                )))
            }
        };
        self.inner.observe(e, now_ms as i64);
        Ok(())
    }

    /// Store files another device wrote, as a sync brought them: [[path, text
    /// or null]]; the log lines (JSON list of strings).
    #[wasm_bindgen(js_name = storeSynced)]
    pub fn store_synced(&mut self, files: &str, now_ms: f64) -> Result<String, JsValue> {
        let files: Vec<(String, Option<String>)> = from_js(files, "files")?;
        to_js(&self.inner.store_synced(files, now_ms as i64))
    }

    /// What is due now (the round of hand edits, repair, recompute, webhooks): a step.
    pub fn tick(&mut self, now_ms: f64) -> Result<String, JsValue> {
        to_js(&self.inner.tick(now_ms as i64).to_json())
    }

    /// Compares the vault with what the store last knew; call once after opening.
    pub fn reconcile(&mut self, now_ms: f64) -> Result<String, JsValue> {
        to_js(&self.inner.reconcile(now_ms as i64).to_json())
    }

    /// When `tick` next has work, in ms since the epoch (null: nothing planned).
    #[wasm_bindgen(js_name = nextDeadline)]
    pub fn next_deadline(&self) -> Option<f64> {
        self.inner.next_deadline().map(|d| d as f64)
    }

    #[wasm_bindgen(js_name = setGitBusy)]
    pub fn set_git_busy(&mut self, busy: bool) {
        self.inner.set_git_busy(busy);
    }

    #[wasm_bindgen(js_name = feedHead)]
    pub fn feed_head(&self) -> f64 {
        self.inner.feed_head() as f64
    }

    /// Random bytes (crypto.getRandomValues) for webhook secrets.
    pub fn seed(&mut self, entropy: &[u8]) {
        self.inner.seed(entropy);
    }

    /// This device's id (Engine::set_device), before the first step.
    #[wasm_bindgen(js_name = setDevice)]
    pub fn set_device(&mut self, id: &str) -> Result<(), JsValue> {
        self.inner.set_device(id).map_err(|e| JsValue::from_str(&e))
    }

    /// This device's key (Engine::set_device_key), after its id.
    #[wasm_bindgen(js_name = setDeviceKey)]
    pub fn set_device_key(&mut self, key: &[u8]) -> Result<(), JsValue> {
        self.inner.set_device_key(key).map_err(|e| JsValue::from_str(&e))
    }

    /// The model to search by meaning with, as the store holds it
    /// (`models/potion-base-8M.dnmodel`): its name and id (JSON), or why it
    /// cannot be read.
    #[wasm_bindgen(js_name = setSemanticModel)]
    pub fn set_semantic_model(&mut self, bytes: &[u8]) -> Result<String, JsValue> {
        let answer = self.inner.set_semantic_model(bytes).map_err(|e| JsValue::from_str(&e))?;
        to_js(&answer)
    }

    /// A delivery's result: the HTTP status, or an error text.
    pub fn delivered(
        &mut self,
        webhook: &str,
        last: f64,
        status: Option<u16>,
        error: Option<String>,
        now_ms: f64,
    ) -> Result<String, JsValue> {
        let result = match (status, error) {
            (Some(s), _) => Ok(s),
            (None, e) => Err(e.unwrap_or_else(|| "no answer".into())),
        };
        let store = self.inner.delivered(webhook, last as u64, result, now_ms as i64);
        to_js(&store)
    }

    /// Records an MCP tool call (`{tool, args, ok, duration_ms, value, served_by,
    /// actor}`) in the change feed: the store files to write.
    #[wasm_bindgen(js_name = recordToolCall)]
    pub fn record_tool_call(&mut self, call: &str, now_ms: f64) -> Result<String, JsValue> {
        let call: crate::handedit::ToolCall = from_js(call, "call")?;
        to_js(&self.inner.record_tool_call(call, now_ms as i64))
    }

    /// The registry of operations.
    pub fn operations() -> Result<String, JsValue> {
        to_js(&crate::ops::registry::describe())
    }
}
