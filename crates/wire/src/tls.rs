//! rustls client configuration for the mysql client's `--ssl-mode` values.
//!
//! `REQUIRED` (and `PREFERRED`) encrypt without authenticating the server, as the mysql client
//! does: they use [`AcceptAnyCert`], a verifier that accepts any certificate chain and any
//! host name but still checks the handshake signatures made with the presented key. That
//! protects against passive eavesdropping only; use `VERIFY_CA` or `VERIFY_IDENTITY` with
//! `ssl-ca` against an active attacker.

use crate::error::Error;
use qpslab_core::SslMode;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::path::Path;
use std::sync::Arc;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Accepts any server certificate (ssl-mode REQUIRED/PREFERRED); see the module docs.
#[derive(Debug)]
pub struct AcceptAnyCert(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCert {
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
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Verifies the chain against the CA but ignores the host name (ssl-mode VERIFY_CA).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

fn load_roots(path: &Path) -> Result<RootCertStore, Error> {
    let pem =
        qpslab_core::input::read_bytes(path, "a certificate file", qpslab_core::input::PEM_LIMIT)
            .map_err(|e| Error::Tls(format!("ssl-ca: {e}")))?;
    let mut roots = RootCertStore::empty();
    // Sections other than CERTIFICATE (a key bundled in the file) are skipped.
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert =
            cert.map_err(|e| Error::Tls(format!("bad PEM in ssl-ca {}: {e}", path.display())))?;
        roots
            .add(cert)
            .map_err(|e| Error::Tls(format!("bad certificate in {}: {e}", path.display())))?;
    }
    if roots.is_empty() {
        return Err(Error::Tls(format!(
            "ssl-ca {} holds no certificate",
            path.display()
        )));
    }
    Ok(roots)
}

/// Builds the client configuration for `mode` (which must not be `Disabled`).
pub(crate) fn client_config(mode: SslMode, ca: Option<&Path>) -> Result<Arc<ClientConfig>, Error> {
    let prov = provider();
    let builder = ClientConfig::builder_with_provider(prov.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?;
    let verifier: Arc<dyn ServerCertVerifier> = match mode {
        SslMode::Disabled | SslMode::Preferred | SslMode::Required => Arc::new(AcceptAnyCert(prov)),
        SslMode::VerifyCa | SslMode::VerifyIdentity => {
            let ca = ca.ok_or_else(|| {
                Error::Tls("ssl-mode VERIFY_CA/VERIFY_IDENTITY needs ssl-ca (a PEM file)".into())
            })?;
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(load_roots(ca)?), prov)
                    .build()
                    .map_err(|e| Error::Tls(e.to_string()))?;
            if mode == SslMode::VerifyCa {
                Arc::new(ChainOnly(webpki))
            } else {
                webpki
            }
        }
    };
    let cfg = builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(Arc::new(cfg))
}

/// The name to present and verify: an IP address or a DNS name.
pub(crate) fn server_name(host: &str) -> Result<ServerName<'static>, Error> {
    ServerName::try_from(host.to_string())
        .map_err(|_| Error::Tls(format!("'{host}' is not a valid TLS server name")))
}
