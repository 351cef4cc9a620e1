//! The operator console: the farm at a glance in a browser, served by the connector itself
//! (issue 21 §2). Server-rendered HTML (askama templates in `templates/console/`, compiled
//! into the binary and escaped by default); no JavaScript — the pages refresh themselves with
//! `<meta http-equiv="refresh">`.
//!
//! | route | what |
//! |---|---|
//! | `GET /console` | phones (model, serial, state with `check`'s fix, transport, adb server, bound channel and since when, paired over Wi-Fi, last tool call), adb servers and reachability, recent errors, call totals; `?screens=1` shows each usable phone's screen |
//! | `GET /console` with `--fleet-etcd` | also the fleet: every box (name, URL, version, alive) and its phones (masked serial, model, state, free or bound on which box), read from etcd |
//! | `GET /console/phones/{serial}/screen.png` | a thumbnail of the phone's screen ([`THUMBNAIL_PX`]), on `android_screenshot`'s capture path |
//! | `GET /console/pair` | the box's own Wi-Fi pairing: the QR code `pair` draws on a terminal, as an image, and the attempt's status (started on the first visit) |
//! | `GET /console/pair/new` | a new QR code (stops the previous attempt), then back to `/console/pair` |
//! | `GET /console/pair/qr.png` | the QR code's PNG while it may be scanned |
//!
//! Only with the operator's credentials: HTTP Basic, user `operator`, password the first line
//! of `--operator-key-file` ([`basic_auth`]); 401 with `WWW-Authenticate: Basic` without them,
//! and 404 `endpoint_not_found` on every console route when no operator key is configured;
//! after [`login_throttle::FREE_FAILURES`] wrong logins in a row from one address, 429
//! `rate_limited` with `Retry-After` for a pause that doubles with each further failure.
//! No page carries the API key, a claim code or a pairing password (the QR's password is only
//! in its image's modules). Every answer is `Cache-Control: no-store`, framed by nobody, and
//! allowed nothing but its own images and inline style (`Content-Security-Policy`).

pub mod basic_auth;
pub mod login_throttle;
pub mod page;
pub mod view;

use std::sync::Arc;

use askama::Template;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use serde::Deserialize;

use super::error::HttpError;
use super::AppState;
use crate::connector::auth_session::AuthStatus;
use crate::secret::Secret;

/// Longer side of a screen thumbnail, px.
pub const THUMBNAIL_PX: u32 = 480;
/// How often the farm page refreshes itself, seconds.
pub const FARM_REFRESH_SECS: u32 = 5;
/// How often the farm page with screens refreshes itself, seconds (each refresh takes a
/// screenshot of every usable phone).
pub const SCREENS_REFRESH_SECS: u32 = 30;
/// How often the pairing page refreshes while the attempt runs, seconds.
pub const PAIR_REFRESH_SECS: u32 = 2;

/// What the console needs beyond the connector.
pub struct Console {
    /// The operator key (the password of user `operator`).
    pub operator_key: Secret,
    /// The configured adb servers' labels, in config order.
    pub adb_servers: Vec<String>,
    /// Failed logins per peer ([`login_throttle`]).
    pub throttle: login_throttle::LoginThrottle,
}

impl Console {
    /// The console of `operator_key`, with no failed login yet.
    pub fn new(operator_key: Secret, adb_servers: Vec<String>) -> Console {
        Console {
            operator_key,
            adb_servers,
            throttle: Default::default(),
        }
    }
}

/// The peer a request came from (the listener's [`super::peers::Admission`]); `None` for a
/// request served without the listener (in-process tests).
pub struct Peer(Option<super::peers::PeerKey>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Peer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(Peer(
            parts
                .extensions
                .get::<Arc<super::peers::Admission>>()
                .map(|a| a.peer()),
        ))
    }
}

/// The console's routes (on the connector's router).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/console", get(farm))
        .route("/console/", get(farm))
        .route("/console/phones/{serial}/screen.png", get(screen))
        .route("/console/pair", get(pair))
        .route("/console/pair/new", get(pair_new))
        .route("/console/pair/qr.png", get(pair_qr))
}

/// Whether `headers` carry the operator's credentials (false when the console is off).
pub fn credentials_ok(st: &AppState, headers: &HeaderMap) -> bool {
    st.console
        .as_ref()
        .is_some_and(|c| basic_auth::basic_ok(headers, &c.operator_key))
}

/// The console's settings when the credentials are right. Errors: 404 when no operator key
/// is configured (as for a path no route has); 429 while `peer` is paused for its failed
/// logins ([`login_throttle`], credentials not compared); else 401 without the right
/// credentials (counted as a failure of `peer` when it sent any).
fn admit<'a>(st: &'a AppState, headers: &HeaderMap, peer: &Peer) -> Result<&'a Console, HttpError> {
    let console = st.console.as_deref().ok_or(HttpError::EndpointNotFound)?;
    if let Some(peer) = peer.0 {
        if let Err(wait) = console.throttle.check(peer) {
            return Err(HttpError::ConsoleThrottled(
                login_throttle::retry_after_secs(wait),
            ));
        }
    }
    if !basic_auth::basic_ok(headers, &console.operator_key) {
        let tried = headers.contains_key(header::AUTHORIZATION);
        if let Some(peer) = peer.0.filter(|_| tried) {
            if let Some(pause) = console.throttle.failed(peer) {
                tracing::warn!(
                    peer = ?peer,
                    pause_secs = pause.as_secs(),
                    "operator console: too many failed logins from one address; it is paused"
                );
            }
        }
        return Err(HttpError::ConsoleUnauthorized);
    }
    if let Some(peer) = peer.0 {
        console.throttle.succeeded(peer);
    }
    Ok(console)
}

/// The headers every console answer carries.
fn guarded(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'none'; base-uri 'none'",
        ),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

fn html(page: impl Template) -> Result<Response, HttpError> {
    let body = page
        .render()
        .map_err(|_| HttpError::Internal("the console page cannot be rendered"))?;
    Ok(guarded(
        ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response(),
    ))
}

fn png(bytes: Vec<u8>) -> Response {
    guarded(([(header::CONTENT_TYPE, "image/png")], bytes).into_response())
}

/// `?screens=1` of `GET /console`.
#[derive(Debug, Deserialize)]
pub struct FarmQuery {
    /// `1`: show each usable phone's screen.
    pub screens: Option<String>,
}

async fn farm(
    State(st): State<AppState>,
    headers: HeaderMap,
    peer: Peer,
    query: Result<Query<FarmQuery>, QueryRejection>,
) -> Result<Response, HttpError> {
    let console = admit(&st, &headers, &peer)?;
    // A malformed query is read as none: the page is the same without it.
    let screens = query
        .ok()
        .and_then(|Query(q)| q.screens)
        .is_some_and(|v| v == "1");
    let fleet = match st.connector.fleet() {
        Some(fleet) => Some(view::fleet(fleet).await),
        None => None,
    };
    html(page::FarmPage {
        farm: view::farm(&st.connector, &console.adb_servers),
        fleet,
        screens,
        refresh_secs: if screens {
            SCREENS_REFRESH_SECS
        } else {
            FARM_REFRESH_SECS
        },
        build: page::build_line(),
    })
}

async fn screen(
    State(st): State<AppState>,
    headers: HeaderMap,
    peer: Peer,
    Path(serial): Path<String>,
) -> Result<Response, HttpError> {
    admit(&st, &headers, &peer)?;
    // A name no attached phone has is not there (404), not a screen that failed (503).
    if st.connector.inventory().get(&serial).is_none() {
        return Err(HttpError::PhoneNotFound);
    }
    let shot = st
        .connector
        .console_thumbnail(&serial, THUMBNAIL_PX)
        .await
        .map_err(|e| HttpError::ScreenUnavailable(format!("{}: {}", e.code.as_str(), e.message)))?;
    Ok(png(shot))
}

async fn pair(
    State(st): State<AppState>,
    headers: HeaderMap,
    peer: Peer,
) -> Result<Response, HttpError> {
    admit(&st, &headers, &peer)?;
    // The first visit starts an attempt; later ones show it, whatever its end.
    let attempt = match st.connector.console_pairing() {
        Some(a) => Ok(a),
        None => st.connector.console_pairing_start(),
    };
    pair_page(attempt)
}

async fn pair_new(
    State(st): State<AppState>,
    headers: HeaderMap,
    peer: Peer,
) -> Result<Response, HttpError> {
    admit(&st, &headers, &peer)?;
    match st.connector.console_pairing_start() {
        Ok(_) => Ok(guarded(Redirect::to("/console/pair").into_response())),
        Err(why) => pair_page(Err(why)),
    }
}

async fn pair_qr(
    State(st): State<AppState>,
    headers: HeaderMap,
    peer: Peer,
) -> Result<Response, HttpError> {
    admit(&st, &headers, &peer)?;
    let attempt = st
        .connector
        .console_pairing()
        .ok_or(HttpError::EndpointNotFound)?;
    let image = attempt.qr_png().ok_or(HttpError::EndpointNotFound)?;
    Ok(png(image.to_vec()))
}

fn pair_page(
    attempt: Result<Arc<crate::connector::qr_pairing::console::ConsolePairing>, String>,
) -> Result<Response, HttpError> {
    let (attempt, unavailable) = match attempt {
        Ok(a) => {
            let v = a.view();
            let running = matches!(v.status, AuthStatus::Pending | AuthStatus::Scanned);
            (
                Some(page::PairAttempt {
                    status: match v.status {
                        AuthStatus::Authenticated => "paired",
                        AuthStatus::Canceled => "canceled",
                        other => other.as_str(),
                    },
                    message: v.message,
                    qr: v.status == AuthStatus::Pending,
                    expires: view::at(v.expires_at),
                    running,
                }),
                String::new(),
            )
        }
        Err(why) => (None, why),
    };
    let refresh_secs = if attempt.as_ref().is_some_and(|a| a.running) {
        PAIR_REFRESH_SECS
    } else {
        0
    };
    html(page::PairPage {
        attempt,
        unavailable,
        refresh_secs,
        build: page::build_line(),
    })
}
