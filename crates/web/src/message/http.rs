//! The message view's addresses: `GET /api/message/{meta,node,search,bytes}`
//! and `POST /api/message/{edit,save}`, each answered in JSON, an error as
//! `{"error": …}` with status 400 (404 for an address that is none).

use bytes::Bytes;
use http::{header, Response, StatusCode};
use http_body_util::Full;
use serde_json::{json, Value};

use super::session::MessageSession;
use crate::params::Params;

/// What the server sends back.
pub(crate) type Answer = Response<Full<Bytes>>;

/// The answer to `GET /api/message/…?query`.
pub(crate) fn get(session: Option<&MessageSession>, path: &str, query: &str) -> Answer {
    let Some(session) = session else {
        return answer(Err(
            "this server shows no message (serve one file to view it)".into(),
        ));
    };
    let params = Params::parse(query);
    let get = |name: &str| params.get(name).unwrap_or("").to_string();
    let result = match path.trim_start_matches("/api/message/") {
        "meta" => session.meta(),
        "node" => match get("offset").as_str() {
            "" => session.node(&get("path"), 0),
            offset => match offset.parse::<usize>() {
                Ok(offset) => session.node(&get("path"), offset),
                Err(_) => Err(format!("offset {offset:?} is not a number")),
            },
        },
        "search" => session.search(&get("q")),
        "bytes" => session.bytes(&get("path")),
        _ => return not_found(),
    };
    answer(result)
}

/// The answer to `POST /api/message/…` with `body`.
pub(crate) fn post(session: Option<&MessageSession>, path: &str, body: &[u8]) -> Answer {
    let Some(session) = session else {
        return answer(Err("this server shows no message".into()));
    };
    let result = match path {
        "/api/message/edit" => session.edit(body),
        "/api/message/save" => session.save(body),
        _ => return not_found(),
    };
    answer(result)
}

/// Whether `path` is answered to a POST.
pub(crate) fn takes_post(path: &str) -> bool {
    matches!(path, "/api/message/edit" | "/api/message/save")
}

fn not_found() -> Answer {
    json_answer(StatusCode::NOT_FOUND, json!({ "error": "no such address" }))
}

fn answer(result: Result<Value, String>) -> Answer {
    match result {
        Ok(value) => json_answer(StatusCode::OK, value),
        Err(e) => json_answer(StatusCode::BAD_REQUEST, json!({ "error": e })),
    }
}

fn json_answer(status: StatusCode, value: Value) -> Answer {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(value.to_string())))
        .expect("valid response")
}
