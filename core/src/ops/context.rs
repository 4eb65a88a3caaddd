//! What an operation's handler is given, by its kind, rather than the engine:
//! a read sees the engine's state and changes none of it; a write plans a
//! transaction over the index (and makes row ids), seeing the rest; a store
//! operation keeps the store's own files (settings, webhooks, the log's old
//! files, the meaning index) and sees the notes.

use super::spec::OpSpec;
use crate::feed::webhook::Hooks;
use crate::feed::Feed;
use crate::index::Index;
use crate::journal::Journal;
use crate::log::replay::Past;
use crate::proposals::{Proposals, View};
use crate::semantic::meaning::Meaning;
use crate::settings::Settings;
use crate::store::Store;

/// What a read sees.
#[derive(Clone, Copy)]
pub(crate) struct Sees<'a> {
    pub index: &'a Index,
    pub store: &'a Store,
    pub journal: &'a Journal,
    pub feed: &'a Feed,
    pub hooks: &'a Hooks,
    pub settings: &'a Settings,
    pub proposals: &'a Proposals,
    /// Reading through a proposal: its view, whose index is `index`.
    pub through: Option<&'a View>,
    /// The host's time of the call (0 where a read runs outside a call).
    pub now_ms: i64,
    /// This device's id (None: one device).
    pub device: Option<&'a str>,
    /// The operations (the registry's list): what a batch may run, and the
    /// facts of the operation an old journal entry names.
    pub ops: &'static [OpSpec],
}

impl<'a> Sees<'a> {
    /// The tables as of their past versions.
    pub fn past(&self) -> Past<'a> {
        Past { index: self.index, store: self.store }
    }
}

/// What a write plans with: the index, changed inside the transaction; the
/// rest seen.
pub(crate) struct Plans<'a> {
    pub index: &'a mut Index,
    pub store: &'a Store,
    pub journal: &'a Journal,
    pub feed: &'a Feed,
    pub hooks: &'a Hooks,
    pub settings: &'a Settings,
    pub proposals: &'a Proposals,
    pub device: Option<&'a str>,
    /// Bytes from the host to make row ids with, and the ids made so far.
    pub entropy: &'a [u8],
    pub ids: &'a mut u64,
    pub ops: &'static [OpSpec],
}

impl Plans<'_> {
    /// The write's view of everything, the index as planned so far.
    pub fn sees(&self) -> Sees<'_> {
        Sees {
            index: self.index,
            store: self.store,
            journal: self.journal,
            feed: self.feed,
            hooks: self.hooks,
            settings: self.settings,
            proposals: self.proposals,
            through: None,
            now_ms: 0,
            device: self.device,
            ops: self.ops,
        }
    }

    pub fn past(&self) -> Past<'_> {
        Past { index: self.index, store: self.store }
    }
}

/// What a store operation keeps: the store's files and what is kept in them.
pub(crate) struct Keeps<'a> {
    /// The notes: seen, but for the notes a meaning index took in.
    pub index: &'a mut Index,
    pub store: &'a mut Store,
    pub journal: &'a Journal,
    pub feed: &'a mut Feed,
    pub hooks: &'a mut Hooks,
    pub settings: &'a mut Settings,
    pub meaning: &'a mut Meaning,
    pub proposals: &'a mut Proposals,
    /// Who runs the operation (a withdrawal is its author's).
    pub actor: &'a str,
    /// This device's id, owned: the store is lent whole.
    pub device: Option<String>,
    pub entropy: &'a [u8],
    pub ops: &'static [OpSpec],
}

impl Keeps<'_> {
    pub fn sees(&self) -> Sees<'_> {
        Sees {
            index: self.index,
            store: self.store,
            journal: self.journal,
            feed: self.feed,
            hooks: self.hooks,
            settings: self.settings,
            proposals: self.proposals,
            through: None,
            now_ms: 0,
            device: self.device.as_deref(),
            ops: self.ops,
        }
    }
}
