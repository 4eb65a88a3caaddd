//! The notes as tables: the schema (and metastore.yaml's text) and the vault's
//! index of notes and rows. Writes change it inside a transaction (`tx.rs`), which
//! needs nothing else of the engine: not the store, the journal or the feed.

use crate::schema::Schema;
use crate::vault::Vault;

#[derive(Clone)]
pub struct Index {
    pub(crate) schema: Schema,
    /// The text of metastore.yaml as the vault holds it.
    pub(crate) metastore: Option<String>,
    pub(crate) vault: Vault,
    /// Why metastore.yaml cannot be read, when it cannot.
    pub(crate) schema_error: Option<String>,
}
