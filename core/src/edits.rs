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
///
/// It crosses the wasm boundary as a typed value: `{"kind": "changed", "path"}`,
/// `missing`, `exists`, `{"kind": "io", "path", "message"}`, `{"kind": "not_tried"}`.
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

/// An `EditError` as a host gives it across the wasm boundary (a plain
/// struct: a tagged enum would cost the wasm serde's buffering of content).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostEditError {
    kind: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    message: String,
}

impl TryFrom<HostEditError> for EditError {
    type Error = String;

    fn try_from(e: HostEditError) -> Result<EditError, String> {
        let HostEditError { kind, path, message } = e;
        Ok(match kind.as_str() {
            "changed" => EditError::Changed { path },
            "missing" => EditError::Missing { path },
            "exists" => EditError::Exists { path },
            "io" => EditError::Io { path, message },
            "not_tried" => EditError::NotTried,
            _ => return Err(format!("unknown kind of edit error {kind:?} (changed, missing, exists, io, not_tried)")),
        })
    }
}

impl EditError {
    /// What a person reads in a write's `failed` list, beside the file's path:
    /// the file system's own words for an I/O error.
    pub fn reason(&self) -> String {
        match self {
            EditError::Io { message, .. } => message.clone(),
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(json: &str) -> Result<EditError, String> {
        let e: HostEditError = serde_json::from_str(json).map_err(|e| e.to_string())?;
        EditError::try_from(e)
    }

    /// Issue 54, point 2: a host's edit error crosses as a typed value, never
    /// as English read back by its suffix.
    #[test]
    fn a_hosts_edit_error_is_read_by_its_kind() {
        assert_eq!(from(r#"{"kind":"changed","path":"a.md"}"#), Ok(EditError::Changed { path: "a.md".into() }));
        assert_eq!(from(r#"{"kind":"missing","path":"a.md"}"#), Ok(EditError::Missing { path: "a.md".into() }));
        assert_eq!(from(r#"{"kind":"exists","path":"a.md"}"#), Ok(EditError::Exists { path: "a.md".into() }));
        assert_eq!(from(r#"{"kind":"not_tried"}"#), Ok(EditError::NotTried));
        // A message that reads like another kind is still the file system's word.
        let io = from(r#"{"kind":"io","message":"a.md changed since the engine read it"}"#).unwrap();
        assert!(matches!(io, EditError::Io { .. }), "{io:?}");
        assert!(from(r#"{"kind":"gone","path":"a.md"}"#).unwrap_err().contains("unknown kind of edit error"));
        assert!(from(r#"{"kind":"changed","path":"a.md","extra":1}"#).is_err());
    }
}
