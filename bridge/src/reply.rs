//! The answers every HTTP route may give before an operation runs: an error
//! as `{"error": ...}` with its status, and a body too large. Shared by the
//! routes (`http`) and the server loop (`listen`), which reads bodies whole.

use crate::openapi::MAX_BODY;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

pub fn error(status: StatusCode, msg: impl Into<String>) -> Response {
    (status, Json(json!({"error": msg.into()}))).into_response()
}

pub fn too_large() -> Response {
    error(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is larger than {} MiB: nothing was done", MAX_BODY >> 20),
    )
}
