//! HTTP control plane, transfer plane and the WebSocket data-plane endpoint (axum).
//!
//! | route | auth | spec |
//! |---|---|---|
//! | `GET /connector-card.json` | public | §4.1 |
//! | `GET /skill.md` | public | §4.2 |
//! | `GET /health` | Bearer | §4.3 |
//! | `GET /metrics` | Bearer | Prometheus text; `?format=json` ([`metrics`]) |
//! | `GET /ws` | Bearer + subprotocol `xagent.connector.packet.v1` | §6 |
//! | `GET /files/refs/{file_ref}` | the signed ref itself | §5.2 |
//! | `POST /files/uploads` | Bearer + `X-XAgent-Connector-Channel-ID` | §5.1 |
//! | `GET /console` and below | HTTP Basic `operator` + operator key; 404 without one | the operator console ([`console`]) |

pub mod auth;
pub mod console;
pub mod error;
pub mod file_refs;
pub mod listen;
pub mod metrics;
pub mod peers;
pub mod tls;
pub mod upload;

use std::sync::Arc;

use axum::extract::{State, WebSocketUpgrade};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::connector::Connector;
use crate::data_plane::socket;
use crate::device::tools::registry;
use crate::protocol::card::build_card;
use crate::protocol::card::ToolDecl;
use crate::protocol::{BUILD, CARD_ID, CONNECTOR_VERSION, PROTOCOL_VERSION, WS_SUBPROTOCOL};
use crate::secret::Secret;
use error::HttpError;

/// The connector's primary skill, served as `/skill.md`.
pub const SKILL_MD: &str = include_str!("../../skills/connector-device-adb/SKILL.md");
/// Largest accepted WebSocket message (bytes); a larger one closes the socket.
pub const MAX_PACKET_BYTES: usize = 1024 * 1024;
/// Most concurrent data-plane sockets; more are refused with 503 before the upgrade.
pub const MAX_SOCKETS: usize = 64;

/// Shared state of the HTTP handlers.
#[derive(Clone)]
pub struct AppState {
    /// The connector core.
    pub connector: Arc<Connector>,
    /// System API key (replaced on SIGHUP).
    pub api_key: auth::ApiKey,
    /// The card, built once.
    pub card: Arc<Value>,
    /// Largest accepted upload (bytes).
    pub upload_max_bytes: u64,
    /// One permit per open data-plane socket.
    pub sockets: Arc<tokio::sync::Semaphore>,
    /// The operator console, when an operator key is configured ([`AppState::with_console`]).
    pub console: Option<Arc<console::Console>>,
}

impl AppState {
    /// Builds the state and the card. Sockets are served until the connector's lifecycle
    /// shuts down.
    pub fn new(connector: Arc<Connector>, api_key: Secret, upload_max_bytes: u64) -> Self {
        let card = Arc::new(build_card(&BUILD, &card_decls(&connector)));
        Self {
            connector,
            api_key: auth::ApiKey::new(api_key),
            card,
            upload_max_bytes,
            sockets: Arc::new(tokio::sync::Semaphore::new(MAX_SOCKETS)),
            console: None,
        }
    }

    /// The same state serving the operator console (`--operator-key-file`).
    pub fn with_console(mut self, console: console::Console) -> Self {
        self.console = Some(Arc::new(console));
        self
    }
}

/// Declarations of the connector's card tools.
fn card_decls(connector: &Connector) -> Vec<ToolDecl> {
    connector
        .card_tools()
        .iter()
        .filter_map(|t| registry().get(t).map(|t| t.decl().clone()))
        .collect()
}

/// The router with every route.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/connector-card.json", get(card))
        .route("/skill.md", get(skill))
        .route("/health", get(health))
        .merge(console::routes())
        .route("/metrics", get(metrics::metrics))
        .route("/ws", get(ws))
        .route("/files/refs/{file_ref}", get(file_refs::download))
        .route(
            "/files/uploads",
            axum::routing::post(upload::upload)
                // The handler streams and enforces its own limit.
                .layer(axum::extract::DefaultBodyLimit::disable()),
        )
        // Neither checks the key (as before: a route's own handler checks it, after the
        // router matched path and method); both answer the documented JSON error body.
        .fallback(endpoint_not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            admit_request,
        ))
        .with_state(state)
}

/// Before every route: the connection's request is being served (its connection is not
/// evicted meanwhile), and a request with the right Bearer key (or the operator console's
/// credentials) takes its connection out of
/// the per-peer count of unauthenticated connections ([`peers`]). The route still checks the
/// key itself: this only counts.
async fn admit_request(
    State(st): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let admission = request.extensions().get::<Arc<peers::Admission>>().cloned();
    let _serving = admission.as_ref().map(|a| {
        if auth::bearer_ok(request.headers(), &st.api_key.current())
            || console::credentials_ok(&st, request.headers())
        {
            a.authenticated();
        }
        a.serving()
    });
    next.run(request).await
}

/// A path no route has: 404 `endpoint_not_found`.
async fn endpoint_not_found() -> HttpError {
    HttpError::EndpointNotFound
}

/// A route's path with a method it does not take: 405 `method_not_allowed` (axum adds the
/// `Allow` header).
async fn method_not_allowed(method: axum::http::Method) -> HttpError {
    HttpError::MethodNotAllowed(method.to_string())
}

async fn card(State(st): State<AppState>) -> Json<Value> {
    Json((*st.card).clone())
}

async fn skill() -> Response {
    (
        [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
        SKILL_MD,
    )
        .into_response()
}

async fn health(State(st): State<AppState>, headers: HeaderMap) -> Result<Response, HttpError> {
    auth::require_bearer(&headers, &st.api_key.current())?;
    Ok(Json(json!({
        "status": "ok",
        "connector_card_id": CARD_ID,
        "connector_card_version": CONNECTOR_VERSION,
        "protocol_version": PROTOCOL_VERSION,
        "build": BUILD,
    }))
    .into_response())
}

async fn ws(
    State(st): State<AppState>,
    headers: HeaderMap,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Result<Response, HttpError> {
    // The key is checked before anything else, then the upgrade itself (JSON errors both).
    auth::require_bearer(&headers, &st.api_key.current())?;
    let upgrade = upgrade.map_err(|e| HttpError::WebSocketUpgradeRequired(e.to_string()))?;
    let offered = headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == WS_SUBPROTOCOL);
    if !offered {
        return Err(HttpError::SubprotocolRequired);
    }
    let permit = Arc::clone(&st.sockets)
        .try_acquire_owned()
        .map_err(|_| HttpError::TooManyConnections)?;
    let connector = Arc::clone(&st.connector);
    // axum spawns the upgraded socket's task itself: the token counts it in the task tree.
    let tracked = connector.lifecycle().track();
    Ok(upgrade
        .protocols([WS_SUBPROTOCOL])
        .max_message_size(MAX_PACKET_BYTES)
        .max_frame_size(MAX_PACKET_BYTES)
        .on_upgrade(move |ws| async move {
            socket::run(connector, ws).await;
            drop(permit);
            drop(tracked);
        }))
}
