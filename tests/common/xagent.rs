//! An xAgent-like client of the data plane over a real WebSocket, plus HTTP helpers. Every packet
//! received is validated against the official packet schema.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use super::schemas::assert_packet;
use super::API_KEY;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A connected data-plane client.
pub struct XAgent {
    ws: Ws,
    /// Validate every received packet against the official schemas (tests: yes; benches: no,
    /// so the client's own cost stays out of the figures).
    pub validate: bool,
    /// Packets received that were not the reply awaited (pushes).
    pub backlog: VecDeque<Value>,
    n: u64,
}

/// The upgrade request of the data plane at `url` (`ws://…/ws`, `wss://…/ws`): the API key and
/// the subprotocol.
pub fn ws_request(url: &str) -> tokio_tungstenite::tungstenite::handshake::client::Request {
    let mut req = url.into_client_request().unwrap();
    req.headers_mut().insert(
        "Authorization",
        format!("Bearer {API_KEY}").parse().unwrap(),
    );
    req.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        "xagent.connector.packet.v1".parse().unwrap(),
    );
    req
}

/// Opens `/ws` with the API key and subprotocol.
pub async fn connect(addr: &str) -> XAgent {
    let req = ws_request(&format!("ws://{addr}/ws"));
    let (ws, resp) = tokio_tungstenite::connect_async(req)
        .await
        .expect("ws connect");
    XAgent::upgraded(ws, &resp)
}

/// Opens `/ws` over `stream`, a TCP connection to the connector at `addr` made by the caller
/// (e.g. from another loopback address).
pub async fn connect_over(stream: tokio::net::TcpStream, addr: &str) -> XAgent {
    let req = ws_request(&format!("ws://{addr}/ws"));
    let stream = tokio_tungstenite::MaybeTlsStream::Plain(stream);
    let (ws, resp) = tokio_tungstenite::client_async(req, stream)
        .await
        .expect("ws upgrade");
    XAgent::upgraded(ws, &resp)
}

/// `POST /files/uploads` of `data` as `filename` on `channel` of the connector at `base`
/// (`http://…`): (status, JSON body, `null` if none).
pub fn upload_answer(base: &str, channel: &str, filename: &str, data: &[u8]) -> (u16, Value) {
    let boundary = "xagentToolsBoundary9QZ";
    let mut body = Vec::new();
    body.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes());
    body.extend_from_slice(data);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let mut resp = agent
        .post(&format!("{base}/files/uploads"))
        .header(
            "Content-Type",
            &format!("multipart/form-data; boundary={boundary}"),
        )
        .header("Authorization", &format!("Bearer {API_KEY}"))
        .header("X-XAgent-Connector-Channel-ID", channel)
        .send(&body[..])
        .expect("upload");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

impl XAgent {
    /// The client on an upgraded socket (the server chose the subprotocol, asserted).
    fn upgraded(
        ws: Ws,
        resp: &tokio_tungstenite::tungstenite::handshake::client::Response,
    ) -> XAgent {
        assert_eq!(
            resp.headers()
                .get("sec-websocket-protocol")
                .and_then(|v| v.to_str().ok()),
            Some("xagent.connector.packet.v1")
        );
        XAgent {
            ws,
            validate: true,
            backlog: VecDeque::new(),
            n: 0,
        }
    }
}

/// A request packet.
pub fn packet(kind: &str, channel: Option<&str>, payload: Value, n: u64) -> Value {
    let mut p = json!({
        "schema": "xagent.connector.packet/v1",
        "packet_id": format!("pkt_test_{n}"),
        "request_id": format!("req_test_{n}"),
        "type": kind,
        "time": 1790000000000i64,
        "payload": payload,
    });
    if let Some(c) = channel {
        p["connector_channel_id"] = json!(c);
    }
    p
}

impl XAgent {
    /// Sends a raw text frame.
    pub async fn send_text(&mut self, text: &str) {
        self.ws
            .send(Message::Text(text.to_string().into()))
            .await
            .expect("ws send");
    }

    /// Sends one WebSocket frame as built (a text frame whose payload is not UTF-8, which
    /// `Message::Text` cannot hold); the client masks it as for any frame.
    pub async fn send_frame(
        &mut self,
        frame: tokio_tungstenite::tungstenite::protocol::frame::Frame,
    ) {
        self.ws.send(Message::Frame(frame)).await.expect("ws send");
    }

    /// Sends a raw text frame; `false` when the peer already reset the
    /// connection (a server closing on an oversized packet may do so while
    /// the frame is still being written).
    pub async fn try_send_text(&mut self, text: &str) -> bool {
        self.ws
            .send(Message::Text(text.to_string().into()))
            .await
            .is_ok()
    }

    /// `true` when the socket ends (close frame, EOF or reset) within `secs`
    /// seconds without delivering any further packet.
    pub async fn closed_within(&mut self, secs: u64) -> bool {
        loop {
            match tokio::time::timeout(Duration::from_secs(secs), self.ws.next()).await {
                Err(_) => return false,
                Ok(None) | Ok(Some(Err(_))) | Ok(Some(Ok(Message::Close(_)))) => return true,
                Ok(Some(Ok(Message::Text(t)))) => panic!("unexpected packet before close: {t}"),
                Ok(Some(Ok(_))) => continue,
            }
        }
    }

    /// The close code the server sends within `secs` seconds, skipping packets: `Some(code)`
    /// for a close frame (1005 when it has no code), `None` when the socket just ended or stayed
    /// open.
    pub async fn close_code_within(&mut self, secs: u64) -> Option<u16> {
        let until = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            match tokio::time::timeout_at(until, self.ws.next()).await {
                Ok(Some(Ok(Message::Close(frame)))) => {
                    return Some(frame.map_or(1005, |f| u16::from(f.code)))
                }
                Ok(Some(Ok(_))) => continue,
                _ => return None,
            }
        }
    }

    /// Next packet (≤ `secs` s), schema-checked.
    pub async fn recv_within(&mut self, secs: u64) -> Option<Value> {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(secs), self.ws.next())
                .await
                .ok()??;
            match frame.expect("ws frame") {
                Message::Text(t) => {
                    let v: Value = serde_json::from_str(t.as_str()).expect("packet is JSON");
                    if self.validate {
                        assert_packet(&v);
                    }
                    return Some(v);
                }
                Message::Close(_) => return None,
                _ => continue,
            }
        }
    }

    /// Sends `kind` and returns the packet whose `request_id` matches (others go to the backlog).
    pub async fn request(&mut self, kind: &str, channel: Option<&str>, payload: Value) -> Value {
        self.n += 1;
        let p = packet(kind, channel, payload, self.n);
        self.send_text(&p.to_string()).await;
        let want = p["request_id"].clone();
        loop {
            let got = self
                .recv_within(60)
                .await
                .unwrap_or_else(|| panic!("no reply to {kind}"));
            // Acks point at the request; pushes may share its request_id (tool.progress.push).
            if got["reply_to"] == p["packet_id"] {
                assert_eq!(got["request_id"], want, "ack must echo request_id");
                return got;
            }
            self.backlog.push_back(got);
        }
    }

    /// Waits (≤ `secs`) for a pushed packet of `kind`, looking at the backlog first.
    pub async fn wait_push(&mut self, kind: &str, secs: u64) -> Option<Value> {
        if let Some(i) = self.backlog.iter().position(|p| p["type"] == kind) {
            return self.backlog.remove(i);
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return None;
            }
            let got = self.recv_within(left.as_secs().max(1)).await?;
            if got["type"] == kind {
                return Some(got);
            }
            self.backlog.push_back(got);
        }
    }

    /// `connector.hello` with the current protocol and profile; returns the ack.
    pub async fn hello(&mut self, connector_id: &str) -> Value {
        let ack = self
            .request(
                "connector.hello",
                None,
                json!({"connector_card_id": "device.adb", "connector_id": connector_id,
                       "protocol_version": "3.0", "supported_profiles": ["xagent.device.v1"]}),
            )
            .await;
        assert_eq!(ack["type"], "connector.hello.ack", "{ack}");
        ack
    }

    /// `connector.hello` as a new connector (no `connector_id`): the `connector_id` the server
    /// issued in its ack.
    pub async fn hello_fresh(&mut self) -> String {
        self.hello("").await["payload"]["connector_id"]
            .as_str()
            .expect("connector_id in connector.hello.ack")
            .to_string()
    }

    /// `channel.open` (optionally restoring `id`); returns the channel id and the ack.
    pub async fn open(&mut self, id: Option<&str>) -> (String, Value) {
        let ack = self.request("channel.open", id, json!({})).await;
        assert_eq!(ack["type"], "channel.open.ack", "{ack}");
        let ch = ack["payload"]["connector_channel_id"]
            .as_str()
            .expect("channel id")
            .to_string();
        assert_eq!(ack["connector_channel_id"], json!(ch));
        (ch, ack)
    }

    /// `auth.start` of `adb_device_claim` for `serial`.
    pub async fn claim(&mut self, channel: &str, serial: &str) -> Value {
        self.request(
            "auth.start",
            Some(channel),
            json!({"flow_id": "adb_device_claim", "input": {"serial": serial}}),
        )
        .await
    }

    /// `tool.invoke`; returns the ack.
    pub async fn tool(&mut self, channel: &str, tool: &str, mut args: Value) -> Value {
        args["connector_channel_id"] = json!(channel);
        let ack = self
            .request(
                "tool.invoke",
                Some(channel),
                json!({"tool_id": tool, "arguments": args, "context": {"session_id": "s1", "tool_call_id": format!("call_{}", self.n + 1)}}),
            )
            .await;
        assert_eq!(ack["type"], "tool.invoke.ack", "{ack}");
        ack
    }

    /// Closes the socket.
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

/// HTTP GET; returns (status, headers' content-type, body bytes).
pub fn http_get(url: &str, bearer: Option<&str>) -> (u16, String, Vec<u8>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into();
    let mut req = agent.get(url);
    if let Some(b) = bearer {
        req = req.header("Authorization", &format!("Bearer {b}"));
    }
    let mut resp = req.call().expect("http get");
    let status = resp.status().as_u16();
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let body = resp.body_mut().read_to_vec().expect("body");
    (status, ctype, body)
}
