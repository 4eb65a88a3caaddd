//! The Datanotes engine. It never touches a file, a clock or a socket: the host
//! hands it the notes, the store and the time, and applies the edits it plans.

// A refusal carries its reasons, hint and details; it is rare and never on a hot
// path, so it stays unboxed.
#![allow(clippy::result_large_err)]

pub mod bases;
mod case_hint;
pub mod conflicts;
pub mod docs;
pub mod driver;
pub mod edits;
pub mod engine;
pub mod error;
pub mod feed;
pub mod filter;
mod filter_types;
pub mod frontmatter;
pub mod fxhash;
pub mod handedit;
pub mod index;
pub mod journal;
pub mod links;
pub mod log;
mod lookups;
#[cfg(target_arch = "wasm32")]
mod memcmp;
mod merge3;
pub mod metastore_text;
pub mod names;
pub mod notecache;
pub mod ops;
pub mod owed;
mod pathset;
mod pending;
pub mod proof;
pub mod proposals;
pub mod row_id;
pub mod row_values;
pub mod schema;
pub mod seal;
pub mod secrets;
pub mod semantic;
pub mod settings;
pub mod step;
pub mod store;
pub mod template;
pub mod texthash;
pub mod time;
pub mod trust;
mod tx;
pub mod validate;
pub mod vault;
pub mod views;
#[cfg(target_arch = "wasm32")]
pub mod wasm;
mod way_out;
pub mod yaml;

pub use edits::{Edit, EditError, StoreWrite};
pub use engine::{Engine, NoteFile, Reopen, StoreFile};
pub use feed::webhook;
pub use handedit::VaultEvent;
pub use notecache::NoteStat;
pub use step::{Apply, Outcome, Status, Step};
