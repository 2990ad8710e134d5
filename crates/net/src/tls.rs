//! The TLS a fetch uses: the platform-independent WebPKI roots, or the CA
//! the user names (`--tls-ca`), a client certificate (`--tls-cert`,
//! `--tls-key`), and no verification for pprof's `https+insecure://`.

use std::path::{Path, PathBuf};

use ureq::tls::{Certificate, ClientCert, PemItem, PrivateKey, RootCerts, TlsConfig};

use crate::NetError;

/// PEM files for TLS, as pprof's `-tls_ca`, `-tls_cert` and `-tls_key` name
/// them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// The CA certificates that sign the server's certificate (instead of
    /// the WebPKI roots).
    pub ca: Option<PathBuf>,
    /// The client's certificate chain.
    pub cert: Option<PathBuf>,
    /// The client's private key (default: in the `cert` file).
    pub key: Option<PathBuf>,
}

/// The TLS configuration for `files`; `verify` is false for
/// `https+insecure://`.
pub fn config(files: &TlsFiles, verify: bool) -> Result<TlsConfig, NetError> {
    let mut builder = TlsConfig::builder().disable_verification(!verify);
    if let Some(ca) = &files.ca {
        let certificates = certificates(ca)?;
        builder = builder.root_certs(RootCerts::new_with_certs(&certificates));
    }
    match (&files.cert, &files.key) {
        (Some(cert), key) => {
            let chain = certificates(cert)?;
            let key = private_key(key.as_deref().unwrap_or(cert))?;
            builder = builder.client_cert(Some(ClientCert::new_with_certs(&chain, key)));
        }
        (None, Some(key)) => {
            return Err(tls_error(
                key,
                "a client key needs its certificate (--tls-cert)",
            ));
        }
        (None, None) => {}
    }
    Ok(builder.build())
}

fn tls_error(path: &Path, message: impl Into<String>) -> NetError {
    NetError::Tls {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, NetError> {
    std::fs::read(path).map_err(|e| tls_error(path, e.to_string()))
}

/// Every certificate of a PEM file; an error when it holds none.
fn certificates(path: &Path) -> Result<Vec<Certificate<'static>>, NetError> {
    let pem = read(path)?;
    let mut found = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        match item.map_err(|e| tls_error(path, e.to_string()))? {
            PemItem::Certificate(certificate) => found.push(certificate),
            PemItem::PrivateKey(_) => {}
            _ => {}
        }
    }
    if found.is_empty() {
        return Err(tls_error(path, "holds no PEM certificate"));
    }
    Ok(found)
}

/// The first private key of a PEM file.
fn private_key(path: &Path) -> Result<PrivateKey<'static>, NetError> {
    let pem = read(path)?;
    PrivateKey::from_pem(&pem).map_err(|_| tls_error(path, "holds no PEM private key"))
}
