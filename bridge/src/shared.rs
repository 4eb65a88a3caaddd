//! One engine for the vault, shared by the front doors of `serve` (HTTP, MCP over
//! HTTP) and `mcp` (stdio). The engine takes `&mut` for every call, so calls are
//! serialised through one lock; each runs on a blocking thread, since a write
//! touches the disk. Reads go through the same lock: they take microseconds.

use datanotes_core::error::Failure;
use datanotes_core::{Engine, Outcome};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

struct Host {
    engine: Engine,
    vault: PathBuf,
}

#[derive(Clone)]
pub struct Shared {
    host: Arc<Mutex<Host>>,
}

impl Shared {
    /// Opens the vault's engine (blocking: call it before the runtime starts or
    /// from a blocking thread).
    pub fn open(vault: &Path) -> Result<Shared, String> {
        let engine = crate::open(vault)?;
        Ok(Shared { host: Arc::new(Mutex::new(Host { engine, vault: vault.to_path_buf() })) })
    }

    /// Runs one operation to its end, as `datanotes call` does: the edits of a
    /// write are applied and the store written before the answer comes back.
    pub async fn call(&self, op: String, args: Value, actor: String) -> Outcome {
        let host = self.host.clone();
        let name = op.clone();
        let job = tokio::task::spawn_blocking(move || {
            // A panic while the lock was held is a defect of ours; the engine
            // refuses further writes itself if one was left half applied.
            let mut h = host.lock().unwrap_or_else(PoisonError::into_inner);
            let Host { engine, vault } = &mut *h;
            crate::run(engine, vault, &op, args, &actor)
        });
        match job.await {
            Ok(out) => out,
            Err(e) => Outcome::failed(&Failure::internal(&name, format!("the operation stopped unexpectedly: {e}"))),
        }
    }

    /// Waits for the call under way, if any, then ends the process while holding
    /// the engine, so that no write is cut in the middle.
    pub async fn exit(&self, code: i32) -> ! {
        let host = self.host.clone();
        let _ = tokio::task::spawn_blocking(move || {
            let _h = host.lock().unwrap_or_else(PoisonError::into_inner);
            std::process::exit(code)
        })
        .await;
        std::process::exit(code)
    }
}
