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
