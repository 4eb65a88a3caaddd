//! The engine for JavaScript hosts (the Obsidian plugin): the same calls, with
//! JSON-shaped values in and out.

use crate::engine::{Engine, NoteFile};
use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

#[derive(Deserialize)]
struct FileIn {
    path: String,
    text: String,
    #[serde(default)]
    mtime: f64,
}

fn to_js(v: &Value) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(|e| JsValue::from_str(&e.to_string()))
}

fn from_js<T: for<'de> Deserialize<'de>>(v: JsValue, what: &str) -> Result<T, JsValue> {
    serde_wasm_bindgen::from_value(v).map_err(|e| JsValue::from_str(&format!("{what}: {e}")))
}

use serde::Serialize;

#[wasm_bindgen]
pub struct WasmEngine {
    inner: Engine,
}

#[wasm_bindgen]
impl WasmEngine {
    /// `files`: [{path, text, mtime}] of the vault; `store`: [[path, text]] of `.datanotes/`.
    #[wasm_bindgen(constructor)]
    pub fn new(files: JsValue, store: JsValue) -> Result<WasmEngine, JsValue> {
        let files: Vec<FileIn> = from_js(files, "files")?;
        let store: Vec<(String, String)> =
            if store.is_undefined() || store.is_null() { vec![] } else { from_js(store, "store")? };
        let files = files.into_iter().map(|f| NoteFile { path: f.path, text: f.text, mtime: f.mtime as i64 }).collect();
        Ok(WasmEngine { inner: Engine::open(files, store) })
    }

    /// One operation: {status, http, answer, edits, store}.
    pub fn call(&mut self, name: &str, args: JsValue, actor: &str, now_ms: f64) -> Result<JsValue, JsValue> {
        let args: Value = if args.is_undefined() || args.is_null() { Value::Null } else { from_js(args, "args")? };
        to_js(&self.inner.call(name, args, actor, now_ms as i64).to_json())
    }

    /// The results of the edits, in order: null for done, a string for an error.
    pub fn finish(&mut self, results: JsValue) -> Result<JsValue, JsValue> {
        let results: Vec<Option<String>> = from_js(results, "results")?;
        let results: Vec<Result<(), String>> = results.into_iter().map(|r| r.map_or(Ok(()), Err)).collect();
        to_js(&self.inner.finish(&results).to_json())
    }

    /// The registry of operations.
    pub fn operations() -> Result<JsValue, JsValue> {
        to_js(&crate::ops::registry::describe())
    }
}
