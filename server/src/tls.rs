//! TLS at the server's edge (design `server.md` section 24): `jadpo serve
//! --tls-cert FILE --tls-key FILE` answers HTTPS with rustls (ring). The
//! certificate chain and key are PEM files; each handshake runs on its own
//! task with a time limit, so a slow client never holds up the accepting
//! of others.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// The server's TLS settings, made by [`acceptor`].
pub type Acceptor = TlsAcceptor;

/// How long a client has to finish its handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// The most of a PEM file read.
const MAX_PEM: u64 = 1024 * 1024;

/// The server's TLS settings from a certificate chain and its key.
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    for (path, what) in [(cert, "--tls-cert"), (key, "--tls-key")] {
        let meta =
            std::fs::metadata(path).map_err(|e| format!("{what} {}: {e}", path.display()))?;
        if !meta.is_file() || meta.len() > MAX_PEM {
            return Err(format!(
                "{what} {} is not a PEM file (a regular file of at most 1 MiB)",
                path.display()
            ));
        }
    }
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect())
        .map_err(|e| {
            format!(
                "--tls-cert {}: not a PEM certificate chain: {e}",
                cert.display()
            )
        })?;
    if chain.is_empty() {
        return Err(format!(
            "--tls-cert {} holds no certificate",
            cert.display()
        ));
    }
    let key = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| format!("--tls-key {}: not a PEM private key: {e}", key.display()))?;
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| format!("the certificate and key do not make a TLS server: {e}"))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// A listener whose connections have finished their TLS handshake.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<tokio::net::TcpStream>, SocketAddr)>,
    addr: SocketAddr,
}

impl TlsListener {
    /// Accepts on `tcp` and shakes hands on tasks of the current runtime.
    pub fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> std::io::Result<TlsListener> {
        let addr = tcp.local_addr()?;
        let (send, ready) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let Ok((stream, peer)) = tcp.accept().await else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                if send.is_closed() {
                    return;
                }
                let acceptor = acceptor.clone();
                let handed = send.clone();
                tokio::spawn(async move {
                    let shaken = tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await;
                    if let Ok(Ok(tls)) = shaken {
                        let _ = handed.send((tls, peer)).await;
                    }
                });
            }
        });
        Ok(TlsListener { ready, addr })
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(conn) => conn,
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.addr)
    }
}
