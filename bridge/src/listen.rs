//! The HTTP server loop: axum's router on hyper's HTTP/1, with a clock, so that a
//! client that never finishes its request's head is cut off. `axum::serve` gives
//! hyper no timer, and without one hyper's header timeout never fires: a thousand
//! half-sent requests would hold a thousand sockets for good.

use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// How long a client may take to send a request's head (default 10 s).
pub fn header_wait() -> Duration {
    wait("DATANOTES_HEADER_WAIT_MS", 10_000)
}

/// How long a client may take to send a request's body once its head is in
/// (default 60 s: 4 MiB at 0.5 Mbit/s).
pub fn body_wait() -> Duration {
    wait("DATANOTES_BODY_WAIT_MS", 60_000)
}

fn wait(var: &str, default_ms: u64) -> Duration {
    let ms = std::env::var(var).ok().and_then(|v| v.trim().parse().ok()).filter(|&ms| ms > 0);
    Duration::from_millis(ms.unwrap_or(default_ms))
}

/// Serves `router` on `listener` until the process ends.
pub async fn serve(listener: TcpListener, router: axum::Router) -> std::io::Result<()> {
    let header_wait = header_wait();
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(conn) => conn,
            // Out of file descriptors, or a connection reset before it was taken:
            // the listener itself is fine, so wait a moment and go on.
            Err(e) if !is_fatal(&e) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        let _ = stream.set_nodelay(true);
        let service = router.clone().map_request(|req: Request<Incoming>| req.map(Body::new));
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new()).header_read_timeout(header_wait);
            // A failed connection (cut off, reset) is the client's business.
            let _ =
                http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service)).with_upgrades().await;
        });
    }
}

fn too_long(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if s.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = s.source();
    }
    false
}

fn is_fatal(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    !matches!(e.kind(), ConnectionAborted | ConnectionReset | Interrupted | WouldBlock | TimedOut | OutOfMemory)
        && e.raw_os_error().is_none_or(|code| !matches!(code, 23 | 24)) // ENFILE, EMFILE
}

/// A request's body read whole before the handler runs, within `body_wait`: a
/// body that stops half way gets 408, and no handler waits on it.
pub async fn whole_body(req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let read = axum::body::to_bytes(body, crate::openapi::MAX_BODY + 1);
    match tokio::time::timeout(body_wait(), read).await {
        Ok(Ok(bytes)) => next.run(Request::from_parts(parts, Body::from(bytes))).await,
        Ok(Err(e)) if too_long(&e) => crate::reply::too_large(),
        Ok(Err(e)) => crate::reply::error(StatusCode::BAD_REQUEST, format!("cannot read the request body: {e}")),
        Err(_) => (
            StatusCode::REQUEST_TIMEOUT,
            Json(serde_json::json!({"error": format!(
                "the request body did not arrive within {} s: nothing was done; send it again whole",
                body_wait().as_secs()
            )})),
        )
            .into_response(),
    }
}
