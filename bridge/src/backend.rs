//! Where a front door's operations go, and who asks: shared by the HTTP API
//! (`http`) and the MCP server (`mcp`), which serves at `/mcp` inside it.

use crate::forward::Remote;
use crate::shared::Shared;
use std::sync::Arc;

/// Who made a request: "owner", or a named token's name. The guard puts it in
/// the request's extensions (MCP over HTTP finds it there too).
#[derive(Clone, Debug)]
pub struct Credential(pub String);

/// The request's token may not write as it likes (review.rs): put beside its
/// Credential by the guard when it proposes its writes or only reads.
#[derive(Clone, Copy, Debug)]
pub struct Limited(pub crate::token::Mode);

/// The bearer token a request came with, for a bridge to forward as it is.
#[derive(Clone, Debug)]
pub struct Bearer(pub String);

/// Where the operations go: this process's engine, or (a bridge attached to the
/// engine that holds the vault: the plugin's, an mcp's or another serve's) that engine.
#[derive(Clone)]
pub enum Backend {
    Local(Shared),
    Attached(Arc<Remote>),
}
