//! TLS on the listener (rustls 0.23 with the ring provider; TLS 1.2 and 1.3, rustls' safe
//! defaults), so xAgent reaches the box as `https://` and `wss://` without a reverse proxy.
//! The certificate chain and private key are PEM files (`--tls-cert`, `--tls-key`; the chain
//! leaf first, the key PKCS#8, PKCS#1 or SEC1) and are replaced on SIGHUP: connections accepted
//! after the reload get the new certificate, established ones keep theirs.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// A TLS file pair that cannot serve: the message names the flag and file at fault and what is
/// wrong (never key material). Config loading wraps it as an invalid setting.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TlsError(pub String);

/// The certificate chain and key files of the listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM certificate chain, leaf first.
    pub cert: PathBuf,
    /// PEM private key of the leaf.
    pub key: PathBuf,
}

/// The acceptor in force; cheap to clone, replaced in place by [`TlsSlot::reload`].
#[derive(Clone)]
pub struct TlsSlot(Arc<RwLock<TlsAcceptor>>);

impl TlsSlot {
    /// Loads `files`. Errors: [`TlsError`] naming the file at fault (never key material).
    pub fn load(files: &TlsFiles) -> Result<TlsSlot, TlsError> {
        Ok(TlsSlot(Arc::new(RwLock::new(TlsAcceptor::from(
            server_config(files)?,
        )))))
    }

    /// Loads `files` and, if they are valid, uses them for the next connections; on error the
    /// certificate in force stays.
    pub fn reload(&self, files: &TlsFiles) -> Result<(), TlsError> {
        let acceptor = TlsAcceptor::from(server_config(files)?);
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = acceptor;
        Ok(())
    }

    /// The acceptor for a new connection.
    pub fn acceptor(&self) -> TlsAcceptor {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// A rustls server config from the PEM files: ring provider, HTTP/1.1 by ALPN, no client
/// certificates. Errors: a file is unreadable, holds no certificate / key, or the key does not
/// match the certificate.
pub fn server_config(files: &TlsFiles) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let bad = |what: &str, path: &PathBuf, e: &dyn std::fmt::Display| {
        TlsError(format!("{what} {}: {e}", path.display()))
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .map_err(|e| bad("--tls-cert", &files.cert, &e))?
        .collect::<Result<_, _>>()
        .map_err(|e| bad("--tls-cert", &files.cert, &e))?;
    if certs.is_empty() {
        return Err(bad(
            "--tls-cert",
            &files.cert,
            &"no certificate in the file",
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| match e {
        // rustls says "no items found": a PEM file with no key block (often the certificate).
        rustls::pki_types::pem::Error::NoItemsFound => bad(
            "--tls-key",
            &files.key,
            &"holds no private key (a PEM block `PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE \
              KEY`; is it the certificate?)",
        ),
        e => bad("--tls-key", &files.key, &e),
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError(format!("TLS: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            TlsError(format!(
                "--tls-key {} does not fit --tls-cert {}: {e}",
                files.key.display(),
                files.cert.display()
            ))
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
