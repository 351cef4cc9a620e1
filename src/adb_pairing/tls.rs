//! rustls configurations for wireless debugging, TLS 1.3 only, ring provider:
//!
//! - [`host_client_config`]: the host (pairing client and `STLS` client); presents the adb key's
//!   certificate and accepts any server certificate, as adb does (`tls/tls_connection.cpp`: the
//!   verify callback returns 1); no SNI, no resumption.
//! - [`device_pairing_config`]: the device's pairing server; requires a client certificate and
//!   accepts any (`SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT`).
//! - [`device_stls_config`]: the device's `STLS` port; the client's public key must equal one
//!   of the paired keys (`adbd_tls_verify_cert`), and the certificate request names each paired
//!   key as `O=AdbKey-0, CN=<uppercase hex SHA-256 of its SPKI>` (`tls/adb_ca_list.cpp`) so
//!   the host can pick the right key.
//! - [`exported_keying_material`]: the 64 bytes, label `adb-label\0`, that follow the password.
//!
//! Both sides still check the handshake signature (CertificateVerify): a peer must hold the
//! private key of the certificate it shows.

use std::sync::Arc;

use rsa::pkcs8::{DecodePublicKey, EncodePublicKey};
use rsa::RsaPublicKey;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{ring, verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{
    ClientConfig, ConnectionCommon, DigitallySignedStruct, DistinguishedName, ServerConfig,
    SignatureScheme,
};
use zeroize::Zeroizing;

use crate::adb_key::AdbKey;

/// Exporter label, with the NUL that `sizeof("adb-label")` counts (`pairing_connection.cpp`).
pub const EXPORTER_LABEL: &[u8] = b"adb-label\0";
/// Exported keying material length (`kExportedKeySize`), bytes.
pub const EXPORTER_LEN: usize = 64;

/// A TLS configuration that could not be built, or a failed export.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// rustls refused the configuration or the export.
    #[error("TLS: {0}")]
    Rustls(#[from] rustls::Error),
    /// The certificate could not be made.
    #[error("TLS certificate: {0}")]
    Certificate(String),
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(ring::default_provider())
}

/// TLS 1.3 only (`SSL_CTX_set_min/max_proto_version(TLS1_3_VERSION)`).
static TLS13_ONLY: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];

fn tls13() -> &'static [&'static rustls::SupportedProtocolVersion] {
    TLS13_ONLY
}

/// The server name handed to rustls; never sent (SNI is off).
pub fn server_name() -> ServerName<'static> {
    ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into())
}

/// Host side, pairing and `STLS`: TLS 1.3, the adb key's certificate ([`AdbKey::certificate`])
/// as client identity, any server certificate accepted, no SNI, no resumption.
pub fn host_client_config(key: &AdbKey) -> Result<Arc<ClientConfig>, TlsError> {
    let provider = provider();
    let (cert, private) = key
        .certificate()
        .map_err(|e| TlsError::Certificate(e.to_string()))?;
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(tls13())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyServer { provider }))
        .with_client_auth_cert(vec![cert], private)?;
    config.enable_sni = false;
    config.resumption = rustls::client::Resumption::disabled();
    Ok(Arc::new(config))
}

/// Host side of the `STLS` upgrade's TLS handshake, on the raw stream right after the two
/// `STLS` messages (notes §3.4): TLS 1.3 client with `config` ([`host_client_config`]). The
/// device speaks first afterwards (its `CNXN`); a device that does not know the key refuses
/// the handshake (adb: `failed to connect`). Bound it with a timeout. Errors: I/O, or a TLS
/// failure as an `io::Error` wrapping [`rustls::Error`].
pub async fn connect_as_host<S>(
    stream: S,
    config: Arc<ClientConfig>,
) -> std::io::Result<tokio_rustls::client::TlsStream<S>>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    tokio_rustls::TlsConnector::from(config)
        .connect(server_name(), stream)
        .await
}

/// A device's TLS identity: a throw-away self-signed ECDSA P-256 certificate
/// (`pairing_server_new_no_cert` makes one per server; adbd's TLS port has its own).
#[derive(Clone)]
pub struct DeviceIdentity {
    cert: CertificateDer<'static>,
    key: Arc<PrivatePkcs8KeyDer<'static>>,
}

impl std::fmt::Debug for DeviceIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceIdentity").finish_non_exhaustive()
    }
}

impl DeviceIdentity {
    /// A fresh identity.
    pub fn generate() -> Result<DeviceIdentity, TlsError> {
        let made = rcgen::generate_simple_self_signed(vec!["adb".to_string()])
            .map_err(|e| TlsError::Certificate(e.to_string()))?;
        Ok(DeviceIdentity {
            cert: made.cert.der().clone(),
            key: Arc::new(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der())),
        })
    }

    fn server_config(
        &self,
        verifier: Arc<dyn ClientCertVerifier>,
    ) -> Result<Arc<ServerConfig>, TlsError> {
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(tls13())?
            .with_client_cert_verifier(verifier)
            .with_single_cert(
                vec![self.cert.clone()],
                PrivateKeyDer::Pkcs8(self.key.clone_key()),
            )?;
        // One connection per handshake, nothing to resume.
        config.send_tls13_tickets = 0;
        Ok(Arc::new(config))
    }
}

/// Device side, pairing server: TLS 1.3, a client certificate required, any accepted.
pub fn device_pairing_config(identity: &DeviceIdentity) -> Result<Arc<ServerConfig>, TlsError> {
    identity.server_config(Arc::new(ClientVerifier {
        provider: provider(),
        paired: None,
        hints: Vec::new(),
    }))
}

/// Device side, `STLS` port: TLS 1.3; the client's certificate must carry one of `paired`
/// (compared as RSA keys, `EVP_PKEY_cmp`), and the request hints each paired key.
pub fn device_stls_config(
    identity: &DeviceIdentity,
    paired: &[RsaPublicKey],
) -> Result<Arc<ServerConfig>, TlsError> {
    let hints = paired
        .iter()
        .filter_map(|k| spki_sha256_hex(k).map(|h| ca_hint(&h)))
        .collect();
    identity.server_config(Arc::new(ClientVerifier {
        provider: provider(),
        paired: Some(paired.to_vec()),
        hints,
    }))
}

/// The 64 bytes of exported keying material (label [`EXPORTER_LABEL`], no context) of an
/// established connection, zeroized on drop. Errors: the handshake is not complete.
pub fn exported_keying_material<D>(
    conn: &ConnectionCommon<D>,
) -> Result<Zeroizing<[u8; EXPORTER_LEN]>, TlsError> {
    let mut out = Zeroizing::new([0u8; EXPORTER_LEN]);
    conn.export_keying_material(&mut out[..], EXPORTER_LABEL, None)?;
    Ok(out)
}

/// Uppercase hex SHA-256 of the key's DER `SubjectPublicKeyInfo` (the hint's CN); `None` if
/// the key cannot be encoded.
pub fn spki_sha256_hex(key: &RsaPublicKey) -> Option<String> {
    let der = key.to_public_key_der().ok()?;
    let digest = ::ring::digest::digest(&::ring::digest::SHA256, der.as_bytes());
    Some(digest.as_ref().iter().map(|b| format!("{b:02X}")).collect())
}

/// DER of the X.509 name `O=AdbKey-0, CN=<cn>` (both UTF8String), as adbd lists paired keys.
pub fn ca_hint(cn: &str) -> DistinguishedName {
    // OIDs 2.5.4.10 (organizationName) and 2.5.4.3 (commonName).
    let rdn = |oid_last: u8, value: &str| {
        let mut atv = der(0x06, &[0x55, 0x04, oid_last]);
        atv.extend(der(0x0c, value.as_bytes()));
        der(0x31, &der(0x30, &atv))
    };
    let mut body = rdn(10, "AdbKey-0");
    body.extend(rdn(3, cn));
    DistinguishedName::from(der(0x30, &body))
}

/// One DER TLV (lengths up to 65535).
fn der(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    match content.len() {
        n @ 0..=127 => out.push(n as u8),
        n @ 128..=255 => out.extend([0x81, n as u8]),
        n => out.extend([0x82, (n >> 8) as u8, n as u8]),
    }
    out.extend_from_slice(content);
    out
}

/// The RSA key inside a certificate, if it holds one.
pub fn certificate_rsa_key(cert: &CertificateDer<'_>) -> Option<RsaPublicKey> {
    let parsed = webpki::EndEntityCert::try_from(cert).ok()?;
    RsaPublicKey::from_public_key_der(parsed.subject_public_key_info().as_ref()).ok()
}

/// The handshake-signature checks both verifiers share: a peer must prove it holds the key of
/// the certificate it shows, whatever the certificate. Expands inside an `impl` of
/// `ServerCertVerifier` or `ClientCertVerifier` for a type with a `provider` field.
macro_rules! check_handshake_signatures {
    () => {
        fn verify_tls12_signature(&self, m: &[u8], c: &Cert<'_>, d: &Signed) -> Checked {
            verify_tls12_signature(m, c, d, &self.provider.signature_verification_algorithms)
        }

        fn verify_tls13_signature(&self, m: &[u8], c: &Cert<'_>, d: &Signed) -> Checked {
            verify_tls13_signature(m, c, d, &self.provider.signature_verification_algorithms)
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.provider
                .signature_verification_algorithms
                .supported_schemes()
        }
    };
}

/// Short names that keep the verifier methods on one line each.
type Cert<'a> = CertificateDer<'a>;
type Signed = DigitallySignedStruct;
type Checked = Result<HandshakeSignatureValid, rustls::Error>;

#[derive(Debug)]
struct AnyServer {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for AnyServer {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    check_handshake_signatures!();
}

#[derive(Debug)]
struct ClientVerifier {
    provider: Arc<CryptoProvider>,
    /// `None`: any certificate (pairing); `Some`: only these keys (`STLS`).
    paired: Option<Vec<RsaPublicKey>>,
    hints: Vec<DistinguishedName>,
}

impl ClientCertVerifier for ClientVerifier {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.hints
    }

    fn client_auth_mandatory(&self) -> bool {
        true
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let Some(paired) = &self.paired else {
            return Ok(ClientCertVerified::assertion());
        };
        match certificate_rsa_key(end_entity) {
            Some(key) if paired.contains(&key) => Ok(ClientCertVerified::assertion()),
            _ => Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            )),
        }
    }

    check_handshake_signatures!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ca_hint_is_the_x509_name_adbd_sends() {
        let name = ca_hint("AB12");
        let want: Vec<u8> = [
            &[0x30, 0x22][..],
            &[
                0x31, 0x11, 0x30, 0x0f, 0x06, 0x03, 0x55, 0x04, 0x0a, 0x0c, 0x08,
            ],
            b"AdbKey-0",
            &[
                0x31, 0x0d, 0x30, 0x0b, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x04,
            ],
            b"AB12",
        ]
        .concat();
        assert_eq!(name.as_ref(), &want[..]);
        assert_eq!(der(0x04, &[0; 200])[..3], [0x04, 0x81, 200]);
        assert_eq!(der(0x04, &[0; 300])[..4], [0x04, 0x82, 1, 44]);
    }
}
