//! Webhooks of the change feed: who wants which events, where each one's cursor
//! stands, and the deliveries the host makes for the engine.

use serde::Serialize;

/// One POST the host makes: `body` as is, with `headers`; it reports the answer
/// with `Engine::delivered`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delivery {
    pub webhook: String,
    pub url: String,
    pub body: String,
    pub headers: Vec<(String, String)>,
    /// The last event's seq in the batch: the cursor once a 2xx comes back.
    pub last: u64,
}

impl crate::engine::Engine {
    /// The host's report of a delivery: the HTTP status it got, or why it got
    /// none. A 2xx moves the webhook's cursor to `last`; anything else backs off.
    /// Returns the store files to write (the webhooks' state).
    pub fn delivered(&mut self, webhook: &str, last: u64, result: Result<u16, String>, now_ms: i64) -> Vec<crate::edits::StoreWrite> {
        let _ = (webhook, last, result, now_ms);
        vec![]
    }
}
