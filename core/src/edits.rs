//! The edits the engine plans and its host applies, one at a time.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// The SHA-256 of a text, in hex: how an edit names the text it expects to find.
pub fn hash(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let d = Sha256::digest(text.as_bytes());
    let mut s = String::with_capacity(64);
    for b in d {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    s
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Edit {
    /// Write a file. `expect`: the hash of the text it must hold now, or None when it
    /// must not exist yet (a new note).
    Write { path: String, text: String, expect: Option<String> },
    /// Rename or move a note holding the expected text.
    Move { from: String, to: String, expect: String },
    /// Move a note to the trash.
    Trash { path: String, expect: String },
    /// Delete a file the operation created (a rollback only).
    Delete { path: String, expect: String },
}

impl StoreWrite {
    pub fn put(path: impl Into<String>, text: impl Into<String>) -> StoreWrite {
        StoreWrite { path: path.into(), text: text.into(), delete: false, append: false }
    }

    pub fn delete(path: impl Into<String>) -> StoreWrite {
        StoreWrite { path: path.into(), text: String::new(), delete: true, append: false }
    }

    pub fn append(path: impl Into<String>, text: impl Into<String>) -> StoreWrite {
        StoreWrite { path: path.into(), text: text.into(), delete: false, append: true }
    }
}

impl Edit {
    pub fn path(&self) -> &str {
        match self {
            Edit::Write { path, .. } | Edit::Trash { path, .. } | Edit::Delete { path, .. } => path,
            Edit::Move { from, .. } => from,
        }
    }
}

/// A file of the store (`.datanotes/…`) to write, or to delete, relative to the
/// store's root. The host writes them before it applies the edits of the same
/// answer, so the journal knows of a write before any note changes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoreWrite {
    pub path: String,
    pub text: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub delete: bool,
    /// Append the text to the file (created when absent) rather than replace it.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub append: bool,
}
