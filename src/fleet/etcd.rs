//! The fleet store's client: etcd v3 through its JSON gRPC gateway (`POST /v3/kv/range`,
//! `/v3/kv/put`, `/v3/kv/txn`, `/v3/kv/deleterange`, `/v3/lease/grant`, `/v3/lease/keepalive`,
//! `/v3/lease/revoke`; keys and values base64, 64-bit numbers as JSON strings — etcd's
//! `Documentation/dev-guide/api_grpc_gateway.md`), over hyper's HTTP/1.1 client, optionally
//! TLS (rustls, ring) with a CA file and a client certificate. Why not the `etcd-client`
//! crate: `docs/decisions/0004-fleet-store.md` (its build needs `protoc`).
//!
//! Several endpoints (the members of one cluster) are tried in turn, starting with the last
//! one that answered; every request has one deadline across its attempts. Connections are
//! kept and reused (one idle pool per endpoint).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};

/// Why an etcd request failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EtcdError {
    /// No endpoint answered within the deadline (connection refused, reset, timed out).
    #[error("etcd is not reachable: {0}")]
    Unreachable(String),
    /// An endpoint answered with an error (HTTP status other than 200, or a body that is not
    /// the JSON the gateway sends): the message etcd gave, if any.
    #[error("etcd refused the request: {0}")]
    Refused(String),
}

/// One endpoint of the cluster: `http://HOST:PORT` or `https://HOST:PORT` (no path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Whether to speak TLS.
    pub tls: bool,
    /// `HOST:PORT` to dial (and the `Host` header).
    pub authority: String,
    /// The host part (TLS server name).
    pub host: String,
}

impl Endpoint {
    /// Parses `http://HOST:PORT` or `https://HOST:PORT` (a trailing `/` is allowed). Errors:
    /// another scheme, a path, or no port, in words.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let url = url.trim();
        let (tls, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(format!(
                "{url:?} is not an etcd client URL: it must start with http:// or https://"
            ));
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        // The endpoint is logged (re-registration); etcd's user/password authentication is not
        // supported, so credentials in the URL would only leak.
        if rest.contains('@') {
            return Err(format!(
                "{}://…@… is not supported: etcd user/password authentication is not; use TLS client certificates (--fleet-etcd-cert/--fleet-etcd-key)",
                if tls { "https" } else { "http" }
            ));
        }
        if rest.is_empty() || rest.contains('/') {
            return Err(format!(
                "{url:?} is not an etcd client URL: it must be SCHEME://HOST:PORT, with no path"
            ));
        }
        let (host, port) = rest
            .rsplit_once(':')
            .ok_or_else(|| format!("{url:?} names no port (etcd's client port is usually 2379)"))?;
        if host.is_empty() || port.parse::<u16>().is_err() {
            return Err(format!("{url:?} is not HOST:PORT after the scheme"));
        }
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        Ok(Endpoint {
            tls,
            authority: rest.to_string(),
            host,
        })
    }
}

impl std::fmt::Display for Endpoint {
    /// `http://HOST:PORT` or `https://HOST:PORT` (never credentials: [`Endpoint::parse`]
    /// refuses them).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scheme = if self.tls { "https" } else { "http" };
        write!(f, "{scheme}://{}", self.authority)
    }
}

/// TLS material of the client: the CA that signed etcd's certificates and, for client
/// certificate authentication (`--client-cert-auth`), this box's certificate and key.
#[derive(Debug, Clone, Default)]
pub struct EtcdTls {
    /// PEM CA certificate(s) (`--fleet-etcd-ca`).
    pub ca: Option<std::path::PathBuf>,
    /// PEM client certificate chain (`--fleet-etcd-cert`).
    pub cert: Option<std::path::PathBuf>,
    /// PEM private key of `cert` (`--fleet-etcd-key`).
    pub key: Option<std::path::PathBuf>,
}

impl EtcdTls {
    /// The rustls client config. Errors: a file cannot be read or holds no certificate/key;
    /// `cert` without `key` (or the reverse); no CA (etcd's certificates are from a private
    /// CA as its docs set them up, and this build carries no public roots).
    pub fn client_config(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let ca = self.ca.as_ref().ok_or(
            "an https:// etcd endpoint needs --fleet-etcd-ca (the CA of etcd's certificate)",
        )?;
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(ca)
            .map_err(|e| format!("--fleet-etcd-ca {}: {e}", ca.display()))?
        {
            let cert = cert.map_err(|e| format!("--fleet-etcd-ca {}: {e}", ca.display()))?;
            roots
                .add(cert)
                .map_err(|e| format!("--fleet-etcd-ca {}: {e}", ca.display()))?;
        }
        if roots.is_empty() {
            return Err(format!(
                "--fleet-etcd-ca {} holds no certificate",
                ca.display()
            ));
        }
        let builder = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
        let config = match (&self.cert, &self.key) {
            (Some(cert), Some(key)) => {
                let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
                    .map_err(|e| format!("--fleet-etcd-cert {}: {e}", cert.display()))?
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("--fleet-etcd-cert {}: {e}", cert.display()))?;
                // Never the key's bytes in the message: only its path.
                let key = PrivateKeyDer::from_pem_file(key).map_err(|_| {
                    format!("--fleet-etcd-key {}: no PEM private key", key.display())
                })?;
                builder
                    .with_client_auth_cert(chain, key)
                    .map_err(|e| format!("--fleet-etcd-cert/--fleet-etcd-key: {e}"))?
            }
            (None, None) => builder.with_no_client_auth(),
            _ => return Err("--fleet-etcd-cert and --fleet-etcd-key go together".into()),
        };
        Ok(Arc::new(config))
    }
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// One key-value pair as etcd returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kv {
    /// The key (bytes as UTF-8; the fleet's keys are ASCII).
    pub key: String,
    /// The value.
    pub value: Vec<u8>,
    /// Revision of the key's creation (the fleet's fencing token, see [`super::binding`]).
    pub create_revision: i64,
    /// Revision of its last change.
    pub mod_revision: i64,
    /// The lease it is attached to (0: none).
    pub lease: i64,
}

/// The client. Cheap to clone (shared pools).
#[derive(Clone)]
pub struct EtcdClient {
    endpoints: Arc<Vec<Endpoint>>,
    tls: Option<Arc<rustls::ClientConfig>>,
    /// Index of the endpoint that answered last.
    preferred: Arc<Mutex<usize>>,
    /// Idle connections, by endpoint index.
    idle: Arc<Mutex<Vec<Vec<Sender>>>>,
    /// Requests sent (store load in the bench and `docs/fleet.md`).
    requests: Arc<std::sync::atomic::AtomicU64>,
}

/// Deadline of one request across its endpoints when the caller names none.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(2);

/// `base64(text)`: how the gateway carries keys and values.
pub fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The first key after every key that starts with `prefix` (etcd's `range_end` of a prefix).
pub fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// A JSON number the gateway may send as a string (int64) or omit (zero).
pub fn int(v: &Value) -> i64 {
    match v {
        Value::String(s) => s.parse().unwrap_or(0),
        Value::Number(n) => n.as_i64().unwrap_or(0),
        _ => 0,
    }
}

fn kv_of(v: &Value) -> Kv {
    let dec = |f: &str| {
        v.get(f)
            .and_then(Value::as_str)
            .and_then(|s| base64::engine::general_purpose::STANDARD.decode(s).ok())
            .unwrap_or_default()
    };
    Kv {
        key: String::from_utf8_lossy(&dec("key")).into_owned(),
        value: dec("value"),
        create_revision: int(&v["create_revision"]),
        mod_revision: int(&v["mod_revision"]),
        lease: int(&v["lease"]),
    }
}

/// The key-value pairs of a range response.
pub fn kvs_of(range: &Value) -> Vec<Kv> {
    range
        .get("kvs")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(kv_of).collect())
        .unwrap_or_default()
}

impl EtcdClient {
    /// A client of the cluster at `endpoints` (at least one), with `tls` for https ones.
    pub fn new(endpoints: Vec<Endpoint>, tls: Option<Arc<rustls::ClientConfig>>) -> EtcdClient {
        let n = endpoints.len();
        EtcdClient {
            endpoints: Arc::new(endpoints),
            tls,
            preferred: Arc::new(Mutex::new(0)),
            idle: Arc::new(Mutex::new((0..n).map(|_| Vec::new()).collect())),
            requests: Arc::default(),
        }
    }

    /// The URL of the endpoint that answered last (the first one before any answered; empty
    /// with no endpoint).
    pub fn answering(&self) -> String {
        let i = *super::lock(&self.preferred);
        self.endpoints
            .get(i)
            .map(ToString::to_string)
            .unwrap_or_default()
    }

    /// Requests sent so far (every attempt counts).
    pub fn requests_sent(&self) -> u64 {
        self.requests.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// `POST path` with `body`, within `deadline`, on the preferred endpoint first and then the
    /// others. Returns the response JSON. Errors: [`EtcdError`].
    pub async fn call(
        &self,
        path: &str,
        body: Value,
        deadline: Duration,
    ) -> Result<Value, EtcdError> {
        let body = Bytes::from(body.to_string());
        let work = async {
            let first = *super::lock(&self.preferred);
            let n = self.endpoints.len();
            let mut last = String::from("no endpoint");
            for step in 0..n {
                let i = (first + step) % n;
                match self.call_on(i, path, body.clone()).await {
                    Ok(v) => {
                        *super::lock(&self.preferred) = i;
                        return Ok(v);
                    }
                    Err(EtcdError::Unreachable(why)) => last = why,
                    Err(e) => return Err(e),
                }
            }
            Err(EtcdError::Unreachable(last))
        };
        tokio::time::timeout(deadline, work)
            .await
            .unwrap_or_else(|_| {
                Err(EtcdError::Unreachable(format!(
                    "no answer within {} ms",
                    deadline.as_millis()
                )))
            })
    }

    async fn call_on(&self, i: usize, path: &str, body: Bytes) -> Result<Value, EtcdError> {
        self.requests
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // A kept connection the server closed meanwhile fails at once: one more try on a new
        // one, so an idle timeout never reads as etcd being down.
        if let Some(sender) = self.idle_sender(i) {
            match self.send_on(i, sender, path, body.clone()).await {
                Err(EtcdError::Unreachable(_)) => {}
                answer => return answer,
            }
        }
        let ep = &self.endpoints[i];
        let (sender, died) = self.connect(ep).await?;
        match self.send_on(i, sender, path, body).await {
            // Over TLS 1.3 a refused client certificate shows only when the first answer is
            // read: the connection's own error says why ("certificate required"), the
            // request's only that the connection went.
            // (The wait is bounded by the call's own deadline too.)
            Err(EtcdError::Unreachable(why)) if ep.tls => {
                let cause = tokio::time::timeout(Duration::from_secs(1), died)
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .unwrap_or(why);
                Err(EtcdError::Unreachable(format!(
                    "{}: the TLS connection failed: {cause} (check --fleet-etcd-cert/--fleet-etcd-key when etcd asks for a client certificate)",
                    ep.authority
                )))
            }
            answer => answer,
        }
    }

    async fn send_on(
        &self,
        i: usize,
        mut sender: Sender,
        path: &str,
        body: Bytes,
    ) -> Result<Value, EtcdError> {
        let ep = &self.endpoints[i];
        sender
            .ready()
            .await
            .map_err(|e| EtcdError::Unreachable(format!("{}: {e}", ep.authority)))?;
        let request = hyper::Request::post(path)
            .header(hyper::header::HOST, &ep.authority)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(body))
            .map_err(|e| EtcdError::Refused(e.to_string()))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| EtcdError::Unreachable(format!("{}: {e}", ep.authority)))?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| EtcdError::Unreachable(format!("{}: {e}", ep.authority)))?
            .to_bytes();
        if !sender.is_closed() {
            super::lock(&self.idle)[i].push(sender);
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|_| {
            EtcdError::Refused(format!(
                "{} answered HTTP {status} without JSON",
                ep.authority
            ))
        })?;
        if !status.is_success() {
            let message = value
                .get("message")
                .or_else(|| value.pointer("/error/message"))
                .and_then(Value::as_str)
                .unwrap_or("no message");
            // A member without a leader or quorum answers 503: another member may have one.
            if status == hyper::StatusCode::SERVICE_UNAVAILABLE {
                return Err(EtcdError::Unreachable(format!(
                    "{}: {message}",
                    ep.authority
                )));
            }
            return Err(EtcdError::Refused(format!("HTTP {status}: {message}")));
        }
        // Stream answers (keepalive) come as `{"result": …}` or `{"error": …}`.
        if let Some(error) = value.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error");
            return Err(EtcdError::Unreachable(format!(
                "{}: {message}",
                ep.authority
            )));
        }
        Ok(value.get("result").cloned().unwrap_or(value))
    }

    fn idle_sender(&self, i: usize) -> Option<Sender> {
        let mut idle = super::lock(&self.idle);
        while let Some(s) = idle[i].pop() {
            if !s.is_closed() {
                return Some(s);
            }
        }
        None
    }

    /// A new connection to `ep`, and what its driver task reports if the connection fails.
    async fn connect(
        &self,
        ep: &Endpoint,
    ) -> Result<(Sender, tokio::sync::oneshot::Receiver<String>), EtcdError> {
        let unreachable =
            |e: &dyn std::fmt::Display| EtcdError::Unreachable(format!("{}: {e}", ep.authority));
        let tcp = tokio::net::TcpStream::connect(&ep.authority)
            .await
            .map_err(|e| unreachable(&e))?;
        let _ = tcp.set_nodelay(true);
        let io: Box<dyn Io> = if ep.tls {
            let config = self
                .tls
                .clone()
                .ok_or_else(|| EtcdError::Refused("https endpoint without TLS settings".into()))?;
            let name = rustls::pki_types::ServerName::try_from(ep.host.clone())
                .map_err(|e| EtcdError::Refused(format!("{}: {e}", ep.host)))?;
            // Said as what it is: a certificate etcd's CA file does not vouch for is a setting
            // to fix, not an outage (still `Unreachable`: this box cannot reach the store).
            let tls = tokio_rustls::TlsConnector::from(config)
                .connect(name, tcp)
                .await
                .map_err(|e| EtcdError::Unreachable(format!(
                    "{}: TLS handshake failed: {e} (check --fleet-etcd-ca, and --fleet-etcd-cert/--fleet-etcd-key when etcd asks for a client certificate)",
                    ep.authority
                )))?;
            Box::new(tls)
        } else {
            Box::new(tcp)
        };
        let (sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(io))
                .await
                .map_err(|e| unreachable(&e))?;
        let (died, cause) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                let cause = match std::error::Error::source(&e) {
                    Some(source) => format!("{e}: {source}"),
                    None => e.to_string(),
                };
                let _ = died.send(cause);
            }
        });
        Ok((sender, cause))
    }

    /// Grants a lease of `ttl_secs`; its id. Errors: [`EtcdError`].
    pub async fn lease_grant(&self, ttl_secs: u64) -> Result<i64, EtcdError> {
        let v = self
            .call(
                "/v3/lease/grant",
                json!({"TTL": ttl_secs}),
                REQUEST_DEADLINE,
            )
            .await?;
        match int(&v["ID"]) {
            0 => Err(EtcdError::Refused("lease grant answered no ID".into())),
            id => Ok(id),
        }
    }

    /// Renews lease `id` once; the TTL left in seconds, 0 when the lease has expired (etcd
    /// answers a keepalive of an unknown lease with no `TTL`). Errors: [`EtcdError`].
    pub async fn lease_keepalive(&self, id: i64, deadline: Duration) -> Result<i64, EtcdError> {
        let v = self
            .call(
                "/v3/lease/keepalive",
                json!({"ID": id.to_string()}),
                deadline,
            )
            .await?;
        Ok(int(&v["TTL"]))
    }

    /// Revokes lease `id` (its keys go at once). Errors: [`EtcdError`].
    pub async fn lease_revoke(&self, id: i64) -> Result<(), EtcdError> {
        self.call(
            "/v3/lease/revoke",
            json!({"ID": id.to_string()}),
            REQUEST_DEADLINE,
        )
        .await
        .map(drop)
    }

    /// Puts `key` = `value` attached to `lease` (0: none). Errors: [`EtcdError`].
    pub async fn put(&self, key: &str, value: &[u8], lease: i64) -> Result<(), EtcdError> {
        self.call(
            "/v3/kv/put",
            json!({"key": b64(key.as_bytes()), "value": b64(value), "lease": lease.to_string()}),
            REQUEST_DEADLINE,
        )
        .await
        .map(drop)
    }

    /// Deletes `key`. Errors: [`EtcdError`].
    pub async fn delete(&self, key: &str) -> Result<(), EtcdError> {
        self.call(
            "/v3/kv/deleterange",
            json!({"key": b64(key.as_bytes())}),
            REQUEST_DEADLINE,
        )
        .await
        .map(drop)
    }

    /// The pairs whose key starts with `prefix` (linearizable read). Errors: [`EtcdError`].
    pub async fn range_prefix(&self, prefix: &str) -> Result<Vec<Kv>, EtcdError> {
        let v = self
            .call(
                "/v3/kv/range",
                json!({"key": b64(prefix.as_bytes()), "range_end": b64(&prefix_end(prefix))}),
                REQUEST_DEADLINE,
            )
            .await?;
        Ok(kvs_of(&v))
    }

    /// The pair of `key`, if any (linearizable read), within `deadline`. Errors: [`EtcdError`].
    pub async fn get(&self, key: &str, deadline: Duration) -> Result<Option<Kv>, EtcdError> {
        let v = self
            .call(
                "/v3/kv/range",
                json!({"key": b64(key.as_bytes())}),
                deadline,
            )
            .await?;
        Ok(kvs_of(&v).into_iter().next())
    }

    /// One transaction `{compare, success, failure}` as the gateway takes it; returns
    /// `(succeeded, header revision, responses)`. Errors: [`EtcdError`].
    pub async fn txn(&self, body: Value) -> Result<(bool, i64, Vec<Value>), EtcdError> {
        let v = self.call("/v3/kv/txn", body, REQUEST_DEADLINE).await?;
        let succeeded = v.get("succeeded").and_then(Value::as_bool).unwrap_or(false);
        let revision = int(&v["header"]["revision"]);
        let responses = v
            .get("responses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok((succeeded, revision, responses))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse_and_refuse_in_words() {
        let e = Endpoint::parse("http://127.0.0.1:2379/").unwrap();
        assert_eq!(
            (e.tls, e.authority.as_str(), e.host.as_str()),
            (false, "127.0.0.1:2379", "127.0.0.1")
        );
        assert!(Endpoint::parse("https://etcd-1:2379").unwrap().tls);
        assert_eq!(
            Endpoint::parse("https://etcd-1:2379/").unwrap().to_string(),
            "https://etcd-1:2379"
        );
        let refused = Endpoint::parse("http://user:secret@h:1").unwrap_err();
        assert!(!refused.contains("secret"), "{refused}");
        for bad in [
            "127.0.0.1:2379",
            "http://h",
            "http://h:x",
            "http://h:1/v3",
            "grpc://h:1",
            "http://user:secret@h:1",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn prefix_ends_and_numbers() {
        assert_eq!(prefix_end("/a/"), b"/a0".to_vec());
        assert_eq!(int(&json!("42")), 42);
        assert_eq!(int(&json!(7)), 7);
        assert_eq!(int(&Value::Null), 0);
    }
}
