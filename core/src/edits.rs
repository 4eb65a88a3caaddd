//! The edits the engine plans and its host applies, one at a time.

use serde::{Deserialize, Serialize};

/// The SHA-256 of a text, in hex: how an edit names the text it expects to find.
pub fn hash(text: &str) -> String {
    crate::texthash::TextHash::of(text).to_string()
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoreWrite {
    pub path: String,
    #[serde(default)]
    pub text: String,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub delete: bool,
    /// Append the text to the file (created when absent) rather than replace it.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub append: bool,
}

/// Why an edit was not made. The driver tells the first three apart itself (it
/// reads the file before it touches it); `Io` is what the host's file system said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// The file no longer holds the text the engine planned from.
    Changed { path: String },
    /// The file the edit needs is gone.
    Missing { path: String },
    /// A file stands where the edit would create one.
    Exists { path: String },
    /// The host could not read or write the file (permissions, disk full, a lock).
    Io { path: String, message: String },
    /// Not tried: an earlier edit of the same write failed.
    NotTried,
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EditError::Changed { path } => write!(f, "{path} changed since the engine read it"),
            EditError::Missing { path } => write!(f, "{path} does not exist"),
            EditError::Exists { path } => write!(f, "{path} exists already"),
            EditError::Io { path, message } if path.is_empty() => f.write_str(message),
            EditError::Io { path, message } => write!(f, "{path}: {message}"),
            EditError::NotTried => f.write_str("not tried: an earlier edit failed"),
        }
    }
}

impl EditError {
    /// An error as a host reports it in text (the wasm boundary): the driver's
    /// texts come back as the same kind, anything else is the file system's word.
    pub fn from_text(text: &str) -> EditError {
        let kind = |suffix: &str| text.strip_suffix(suffix).map(str::to_string);
        if let Some(path) = kind(" changed since the engine read it") {
            EditError::Changed { path }
        } else if let Some(path) = kind(" does not exist") {
            EditError::Missing { path }
        } else if let Some(path) = kind(" exists already") {
            EditError::Exists { path }
        } else if text == "not tried: an earlier edit failed" {
            EditError::NotTried
        } else {
            EditError::Io { path: String::new(), message: text.into() }
        }
    }

    /// What a person reads in a write's `failed` list, beside the file's path:
    /// the file system's own words for an I/O error.
    pub fn reason(&self) -> String {
        match self {
            EditError::Io { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }
}
