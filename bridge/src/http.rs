//! The HTTP API: `POST /datanotes/operations/<name>/` with the arguments as a
//! JSON body and the bearer token, the OpenAPI document, the docs pages, and MCP
//! over streamable HTTP at `/mcp` behind the same token. Status codes come from
//! the outcome. The journal's `by` is the credential: "owner" or the name of the
//! named token; a call forwarded by `datanotes mcp` (it names its MCP client in a
//! header) is an MCP tool call: "<credential>/<client>", recorded in the feed.

use crate::backend::{Backend, Bearer, Credential, Limited};
use crate::forward::{MCP_CLIENT, MCP_SESSION};
use crate::mcp::Tools;
use crate::openapi::{self, MAX_BODY};
use crate::reply::{error, too_large};
use crate::token::{self, Credentials};
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use datanotes_core::Outcome;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone)]
pub struct App {
    pub backend: Backend,
    pub credentials: Arc<Credentials>,
    /// The base URL, for the OpenAPI document.
    pub base: Arc<String>,
    /// The address as bound, as the lock file names it (for lock challenges).
    pub address: Arc<String>,
}

/// Every route; `remote` lifts MCP's check that the Host header names loopback.
pub fn router(app: App, remote: bool) -> Router {
    let mut config = StreamableHttpServerConfig::default().with_max_request_body_bytes(MAX_BODY);
    if remote {
        config = config.disable_allowed_hosts();
    }
    let backend = app.backend.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(Tools::new(backend.clone(), None)),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let guarded = Router::new()
        .route("/datanotes/operations/{name}", post(operation))
        .route("/datanotes/operations/{name}/", post(operation))
        .nest_service("/mcp", mcp)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn(crate::listen::whole_body))
        .layer(middleware::from_fn_with_state(app.clone(), guard));
    Router::new()
        .route(crate::lock::PROOF_ROUTE, get(proof))
        .route("/datanotes/openapi.json", get(openapi))
        .route("/datanotes/docs", get(docs_index))
        .route("/datanotes/docs/", get(docs_index))
        .route("/datanotes/docs/{*page}", get(docs))
        .merge(guarded)
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(remote, web))
        .layer(middleware::from_fn(log))
        .with_state(app)
}

/// Every route: a foreign web page's request (Origin) or a rebound name (Host)
/// gets 403, before anything else is read.
async fn web(State(remote): State<bool>, req: Request, next: Next) -> Response {
    let why = {
        let h = |name| req.headers().get(name).map(|v| v.to_str().unwrap_or("(not text)"));
        crate::origin::refusal(h(header::ORIGIN), h(header::HOST), remote)
    };
    match why {
        Some(why) => error(StatusCode::FORBIDDEN, why),
        None => next.run(req).await,
    }
}

/// A lock challenge (see lock.rs): `?nonce=<hex>` answered with the proof that
/// this engine holds the owner's token for its vault, which it names, so that a
/// caller of another vault tells it from an impostor. No token is needed to ask.
async fn proof(State(app): State<App>, req: Request) -> Response {
    let query = req.uri().query().unwrap_or_default();
    let nonce = query.split('&').find_map(|kv| kv.strip_prefix("nonce=")).unwrap_or_default();
    if !datanotes_core::proof::valid_nonce(nonce) {
        return error(StatusCode::BAD_REQUEST, "send ?nonce= with 32 to 128 hex digits");
    }
    let vault = app.credentials.vault();
    let proof = app.credentials.proof(&app.address, nonce);
    Json(json!({"proof": proof, "pid": std::process::id(), "vault": vault.path, "store": vault.store})).into_response()
}

/// The bearer token, then the declared size, before any of the body is read.
async fn guard(State(app): State<App>, mut req: Request, next: Next) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(token::bearer)
        .map(str::to_string);
    let (credential, mode) = match given {
        None => return error(StatusCode::UNAUTHORIZED, "missing bearer token: send the header Authorization: Bearer <token> (DATANOTES_TOKEN, or the vault's .datanotes/token, or a named token from datanotes token add)"),
        Some(ref t) => match app.credentials.check(t) {
            Some(c) => c,
            None => return error(StatusCode::UNAUTHORIZED, "wrong bearer token (or a revoked one): nothing was done"),
        },
    };
    if mode != token::Mode::Write {
        req.extensions_mut().insert(Limited(mode));
    }
    req.extensions_mut().insert(Credential(credential));
    if let Some(t) = given {
        req.extensions_mut().insert(Bearer(t));
    }
    if declared_length(req.headers()).is_some_and(|n| n > MAX_BODY as u64) {
        return too_large();
    }
    next.run(req).await
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
}

async fn operation(
    State(app): State<App>,
    Path(name): Path<String>,
    Extension(Credential(credential)): Extension<Credential>,
    bearer: Option<Extension<Bearer>>,
    limited: Option<Extension<Limited>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let bytes = match body {
        Ok(b) => b,
        Err(r) if r.status() == StatusCode::PAYLOAD_TOO_LARGE => return too_large(),
        Err(r) => return error(r.status(), format!("cannot read the request body: {}", r.body_text())),
    };
    let args: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        json!({})
    } else {
        match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "the body is not JSON ({e}): send the arguments as a JSON object, e.g. {{\"table\": \"film\"}}"
                    ),
                )
            }
        }
    };
    // A body that is JSON but not an object is core's to refuse (400, with the
    // operation's arguments named), as an unknown operation is.
    let args = match limited {
        None => args,
        Some(Extension(Limited(mode))) => match crate::review::as_limited(&name, args, &credential, mode) {
            Ok(staged) => staged,
            Err(out) => return answer(*out),
        },
    };
    let text = |h: &str| headers.get(h).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty());
    let out = match (&app.backend, text(MCP_CLIENT)) {
        (Backend::Local(shared), Some(client)) => {
            shared.call_tool(name, args, &credential, client, text(MCP_SESSION)).await
        }
        (Backend::Local(shared), None) => shared.call(name, args, credential).await,
        (Backend::Attached(remote), client) => {
            let mcp = client.map(|c| (c.to_string(), text(MCP_SESSION).unwrap_or_default().to_string()));
            let bearer = bearer.map(|Extension(Bearer(t))| t);
            crate::forward::bridged_async(remote.clone(), name, args, mcp, bearer).await
        }
    };
    answer(out)
}

/// An outcome as HTTP answers it: its status code, its answer as the body.
fn answer(out: Outcome) -> Response {
    let status = StatusCode::from_u16(out.status.http()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(out.answer)).into_response()
}

async fn openapi(State(app): State<App>) -> Response {
    Json(openapi::document(&app.base)).into_response()
}

/// A page of the project's docs (built into core, which read_docs serves too), as
/// Markdown: `reference/operations.md`.
async fn docs(Path(page): Path<String>) -> Response {
    let name = page.trim_start_matches('/').trim_end_matches(".md");
    match datanotes_core::docs::page(name) {
        Some(text) => ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], text).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            format!("no docs page \"{name}\": the pages are {}", datanotes_core::docs::names().join(", ")),
        ),
    }
}

async fn docs_index() -> Response {
    ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], datanotes_core::docs::index("/datanotes/docs/"))
        .into_response()
}

async fn not_found(req: Request<Body>) -> Response {
    error(StatusCode::NOT_FOUND, format!("no route {} {}: the operations are POST /datanotes/operations/<name>/ (GET /datanotes/openapi.json lists them), MCP is at /mcp, the docs at GET /datanotes/docs/", req.method(), req.uri().path()))
}

/// One line per request on stderr: method, path, status, milliseconds.
async fn log(req: Request, next: Next) -> Response {
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let start = Instant::now();
    let res = next.run(req).await;
    crate::out::log_line(&format!(
        "{method} {path} {} {:.1}ms",
        res.status().as_u16(),
        start.elapsed().as_secs_f64() * 1000.0
    ));
    res
}
