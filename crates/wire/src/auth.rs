//! Authentication plugins and the exchange that follows the handshake response.
//!
//! [`AuthFlow`] is a pure state machine: it is given each packet the server sends after the
//! handshake response and says what to send back, so every plugin's exchange is unit-tested
//! with the exact bytes a server sends, and tested end to end against a real MariaDB.

use crate::error::Error;
use crate::proto::parse_err;
use curve25519_dalek::constants::ED25519_BASEPOINT_TABLE;
use curve25519_dalek::scalar::{clamp_integer, Scalar};
use qpslab_core::Secret;
use sha1::{Digest, Sha1};
use sha2::{Sha256, Sha512};

/// `mysql_native_password`: SHA1(pw) XOR SHA1(nonce[..20] + SHA1(SHA1(pw))). Empty password,
/// empty response.
pub(crate) fn scramble_native(nonce: &[u8], password: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha1::digest(password);
    let stage2 = Sha1::digest(stage1);
    let mut h = Sha1::new();
    h.update(&nonce[..nonce.len().min(20)]);
    h.update(stage2);
    let mix = h.finalize();
    stage1.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect()
}

/// A SHA-512 digest reduced modulo the group order.
fn hash_scalar(h: Sha512) -> Scalar {
    Scalar::from_bytes_mod_order_wide(&h.finalize().into())
}

/// `caching_sha2_password` fast path: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce[..20]).
pub(crate) fn scramble_sha2(nonce: &[u8], password: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha256::digest(password);
    let stage2 = Sha256::digest(stage1);
    let mut h = Sha256::new();
    h.update(stage2);
    h.update(&nonce[..nonce.len().min(20)]);
    let mix = h.finalize();
    stage1.iter().zip(mix.iter()).map(|(a, b)| a ^ b).collect()
}

/// MariaDB `client_ed25519`: an Ed25519 signature of the 32-byte nonce whose secret-key
/// expansion is SHA512(password) (the server stores the matching public key).
pub(crate) fn sign_ed25519(nonce: &[u8], password: &[u8]) -> [u8; 64] {
    let az: [u8; 64] = Sha512::digest(password).into();
    let mut lower = [0u8; 32];
    lower.copy_from_slice(&az[..32]);
    let a = Scalar::from_bytes_mod_order(clamp_integer(lower));
    let public = (&a * ED25519_BASEPOINT_TABLE).compress();
    let r = hash_scalar(Sha512::new().chain_update(&az[32..]).chain_update(nonce));
    let big_r = (&r * ED25519_BASEPOINT_TABLE).compress();
    let k = hash_scalar(
        Sha512::new()
            .chain_update(big_r.as_bytes())
            .chain_update(public.as_bytes())
            .chain_update(nonce),
    );
    let s = k * a + r;
    let mut sig = [0u8; 64];
    sig[..32].copy_from_slice(big_r.as_bytes());
    sig[32..].copy_from_slice(s.as_bytes());
    sig
}

/// caching_sha2_password full authentication over an insecure channel: the password (with
/// its NUL) XOR the nonce, encrypted with the server's RSA public key using OAEP(SHA1).
pub(crate) fn rsa_encrypt_password(
    pem: &[u8],
    nonce: &[u8],
    password: &[u8],
) -> Result<Vec<u8>, Error> {
    use rsa::pkcs8::DecodePublicKey;
    let pem = std::str::from_utf8(pem)
        .map_err(|_| Error::Auth("server RSA public key is not PEM text".into()))?;
    let key = rsa::RsaPublicKey::from_public_key_pem(pem.trim_end_matches('\0'))
        .or_else(|_| {
            use rsa::pkcs1::DecodeRsaPublicKey;
            rsa::RsaPublicKey::from_pkcs1_pem(pem.trim_end_matches('\0'))
        })
        .map_err(|e| Error::Auth(format!("cannot read the server's RSA public key: {e}")))?;
    let nonce = &nonce[..nonce.len().min(20)];
    if nonce.is_empty() {
        return Err(Error::Protocol(
            "caching_sha2_password: the server sent no scramble to mix the password with".into(),
        ));
    }
    let mut plain: Vec<u8> = password.iter().copied().chain(std::iter::once(0)).collect();
    for (i, b) in plain.iter_mut().enumerate() {
        *b ^= nonce[i % nonce.len()];
    }
    let out = key
        .encrypt(&mut rand_core::OsRng, rsa::Oaep::new::<Sha1>(), &plain)
        .map_err(|e| Error::Auth(format!("RSA encryption of the password failed: {e}")));
    plain.iter_mut().for_each(|b| *b = 0);
    out
}

/// What to do after a server packet.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Send this payload (next sequence number) and read again.
    Send(Vec<u8>),
    /// Read the next packet.
    Read,
    /// Authenticated; the payload was the final OK packet.
    Done,
}

/// The client side of one authentication exchange.
pub(crate) struct AuthFlow<'a> {
    plugin: String,
    nonce: Vec<u8>,
    password: &'a Secret,
    /// TLS or Unix socket: cleartext may be sent.
    secure: bool,
    /// caching_sha2_password asked for full auth and we requested the server's key.
    awaiting_key: bool,
}

impl<'a> AuthFlow<'a> {
    /// Starts with the plugin and nonce of the initial handshake.
    pub(crate) fn new(plugin: &str, nonce: &[u8], password: &'a Secret, secure: bool) -> Self {
        AuthFlow {
            plugin: plugin.to_string(),
            nonce: nonce.to_vec(),
            password,
            secure,
            awaiting_key: false,
        }
    }

    /// The plugin currently driving the exchange.
    pub(crate) fn plugin(&self) -> &str {
        &self.plugin
    }

    /// The auth data for the current plugin's first message.
    pub(crate) fn initial(&self) -> Result<Vec<u8>, Error> {
        let pw = self.password.expose().as_bytes();
        Ok(match self.plugin.as_str() {
            "mysql_native_password" => scramble_native(&self.nonce, pw),
            "caching_sha2_password" => scramble_sha2(&self.nonce, pw),
            "client_ed25519" => {
                if self.nonce.len() < 32 {
                    // Initial handshake of a server whose default plugin is ed25519 carries a
                    // 20-byte nonce; the real one comes with the switch request.
                    Vec::new()
                } else {
                    sign_ed25519(&self.nonce[..32], pw).to_vec()
                }
            }
            // The server checks the peer's credentials itself; nothing to say.
            "unix_socket" | "auth_socket" => Vec::new(),
            "mysql_clear_password" => {
                if !self.secure {
                    return Err(Error::Auth(
                        "the server asks for mysql_clear_password, which would send the \
                         password in clear over an unencrypted TCP connection; use TLS \
                         (ssl-mode=REQUIRED) or a Unix socket"
                            .into(),
                    ));
                }
                let mut v = pw.to_vec();
                v.push(0);
                v
            }
            other => {
                return Err(Error::Auth(format!(
                    "authentication plugin '{other}' is not supported (supported: \
                     mysql_native_password, caching_sha2_password, client_ed25519, \
                     unix_socket, mysql_clear_password)"
                )))
            }
        })
    }

    /// Handles one packet from the server.
    pub(crate) fn step(&mut self, p: &[u8]) -> Result<Step, Error> {
        match p.first() {
            Some(0x00) => Ok(Step::Done),
            Some(0xFF) => Err(parse_err(p)),
            Some(0xFE) => {
                if p.len() == 1 {
                    return Err(Error::Auth(
                        "the server asks for the pre-4.1 password protocol, which is not supported"
                            .into(),
                    ));
                }
                let rest = &p[1..];
                let end = rest.iter().position(|b| *b == 0).unwrap_or(rest.len());
                self.plugin = String::from_utf8_lossy(&rest[..end]).into_owned();
                self.nonce = rest.get(end + 1..).unwrap_or(&[]).to_vec();
                self.awaiting_key = false;
                Ok(Step::Send(self.initial()?))
            }
            Some(0x01) => self.more_data(&p[1..]),
            _ => Err(Error::Protocol(format!(
                "unexpected packet during authentication (header 0x{:02x})",
                p.first().copied().unwrap_or(0)
            ))),
        }
    }

    fn more_data(&mut self, data: &[u8]) -> Result<Step, Error> {
        if self.plugin != "caching_sha2_password" {
            return Err(Error::Protocol(format!(
                "unexpected extra authentication data for plugin {}",
                self.plugin
            )));
        }
        let pw = self.password.expose().as_bytes();
        if self.awaiting_key {
            self.awaiting_key = false;
            return Ok(Step::Send(rsa_encrypt_password(data, &self.nonce, pw)?));
        }
        match data {
            // Fast authentication succeeded; an OK packet follows.
            [3] => Ok(Step::Read),
            // Full authentication: the server needs the password itself.
            [4] if self.secure => {
                let mut v = pw.to_vec();
                v.push(0);
                Ok(Step::Send(v))
            }
            [4] => {
                self.awaiting_key = true;
                Ok(Step::Send(vec![2]))
            }
            _ => Err(Error::Protocol(
                "unexpected caching_sha2_password message".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    // Vectors from go-sql-driver/mysql, auth_test.go (TestScrambleSHA256Pass,
    // TestAuthFastNativePassword, TestAuthFastCachingSHA256PasswordCached).
    #[test]
    fn sha2_scramble_matches_published_vectors() {
        let nonce = [
            10, 47, 74, 111, 75, 73, 34, 48, 88, 76, 114, 74, 37, 13, 3, 80, 82, 2, 23, 21,
        ];
        assert_eq!(
            hex(&scramble_sha2(&nonce, b"secret")),
            "f490e76f66d9d86665ce54d98c78d0acfe2fb0b08b423da807144873d30b312c"
        );
        assert_eq!(
            hex(&scramble_sha2(&nonce, b"secret2")),
            "abc3934a012cf342e876071c8ee202de51785b430258a7a0138bc79c4d800bc6"
        );
        let nonce2 = [
            90, 105, 74, 126, 30, 48, 37, 56, 3, 23, 115, 127, 69, 22, 41, 84, 32, 123, 43, 118,
        ];
        assert_eq!(
            scramble_sha2(&nonce2, b"secret"),
            [
                102, 32, 5, 35, 143, 161, 140, 241, 171, 232, 56, 139, 43, 14, 107, 196, 249, 170,
                147, 60, 220, 204, 120, 178, 214, 15, 184, 150, 26, 61, 57, 235
            ]
        );
        assert!(scramble_sha2(&nonce, b"").is_empty());
    }

    #[test]
    fn native_scramble_matches_published_vector() {
        let nonce = [
            70, 114, 92, 94, 1, 38, 11, 116, 63, 114, 23, 101, 126, 103, 26, 95, 81, 17, 24, 21,
        ];
        assert_eq!(
            scramble_native(&nonce, b"secret"),
            [
                53, 177, 140, 159, 251, 189, 127, 53, 109, 252, 172, 50, 211, 192, 240, 164, 26,
                48, 207, 45
            ]
        );
        assert!(scramble_native(&nonce, b"").is_empty());
    }

    #[test]
    fn ed25519_signature_verifies() {
        // Verify R + S against the public key: S*B == R + k*A.
        let nonce = [7u8; 32];
        let sig = sign_ed25519(&nonce, b"x");
        let az: [u8; 64] = Sha512::digest(b"x").into();
        let mut lower = [0u8; 32];
        lower.copy_from_slice(&az[..32]);
        let a = Scalar::from_bytes_mod_order(clamp_integer(lower));
        let public = &a * ED25519_BASEPOINT_TABLE;
        let r = curve25519_dalek::edwards::CompressedEdwardsY::from_slice(&sig[..32])
            .unwrap()
            .decompress()
            .unwrap();
        let s = Scalar::from_canonical_bytes(sig[32..].try_into().unwrap()).unwrap();
        let k = hash_scalar(
            Sha512::new()
                .chain_update(&sig[..32])
                .chain_update(public.compress().as_bytes())
                .chain_update(nonce),
        );
        assert_eq!(&s * ED25519_BASEPOINT_TABLE, r + k * public);
        assert_ne!(sign_ed25519(&nonce, b"y"), sig);
    }

    #[test]
    fn sha2_fast_path_then_ok() {
        let pw = Secret::new("secret");
        let mut f = AuthFlow::new("caching_sha2_password", &[1; 20], &pw, false);
        assert_eq!(f.initial().unwrap().len(), 32);
        assert_eq!(f.step(&[1, 3]).unwrap(), Step::Read);
        assert_eq!(f.step(&[0, 0, 0, 2, 0, 0, 0]).unwrap(), Step::Done);
    }

    #[test]
    fn sha2_full_auth_secure_sends_cleartext() {
        let pw = Secret::new("secret");
        let mut f = AuthFlow::new("caching_sha2_password", &[1; 20], &pw, true);
        assert_eq!(f.step(&[1, 4]).unwrap(), Step::Send(b"secret\0".to_vec()));
    }

    #[test]
    fn sha2_full_auth_insecure_uses_rsa() {
        use rsa::pkcs8::{EncodePublicKey, LineEnding};
        let key = rsa::RsaPrivateKey::new(&mut rand_core::OsRng, 1024).unwrap();
        let pem = key
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        let nonce: Vec<u8> = (1..=20).collect();
        let pw = Secret::new("secret");
        let mut f = AuthFlow::new("caching_sha2_password", &nonce, &pw, false);
        assert_eq!(f.step(&[1, 4]).unwrap(), Step::Send(vec![2]));
        let mut pkt = vec![1];
        pkt.extend_from_slice(pem.as_bytes());
        let Step::Send(enc) = f.step(&pkt).unwrap() else {
            panic!("expected the encrypted password")
        };
        assert_eq!(enc.len(), 128);
        let plain = key.decrypt(rsa::Oaep::new::<Sha1>(), &enc).unwrap();
        let expect: Vec<u8> = b"secret\0"
            .iter()
            .zip(nonce.iter())
            .map(|(a, b)| a ^ b)
            .collect();
        assert_eq!(plain, expect);
    }

    #[test]
    fn switch_request_changes_plugin() {
        let pw = Secret::new("x");
        let mut f = AuthFlow::new("mysql_native_password", &[1; 20], &pw, false);
        let mut p = vec![0xFE];
        p.extend_from_slice(b"client_ed25519\0");
        p.extend_from_slice(&[9u8; 32]);
        let Step::Send(sig) = f.step(&p).unwrap() else {
            panic!("expected a signature")
        };
        assert_eq!(f.plugin(), "client_ed25519");
        assert_eq!(sig, sign_ed25519(&[9u8; 32], b"x").to_vec());
        let mut p = vec![0xFE];
        p.extend_from_slice(b"unix_socket\0");
        assert_eq!(f.step(&p).unwrap(), Step::Send(vec![]));
    }

    #[test]
    fn cleartext_refused_when_insecure_and_unknown_plugins_named() {
        let pw = Secret::new("hunter2");
        let mut f = AuthFlow::new("mysql_native_password", &[1; 20], &pw, false);
        let mut p = vec![0xFE];
        p.extend_from_slice(b"mysql_clear_password\0");
        let e = f.step(&p).unwrap_err().to_string();
        assert!(e.contains("TLS") && !e.contains("hunter2"), "{e}");
        let mut p = vec![0xFE];
        p.extend_from_slice(b"dialog\0");
        assert!(f.step(&p).unwrap_err().to_string().contains("dialog"));
        let mut s = AuthFlow::new("mysql_native_password", &[1; 20], &pw, true);
        let mut p = vec![0xFE];
        p.extend_from_slice(b"mysql_clear_password\0");
        assert_eq!(s.step(&p).unwrap(), Step::Send(b"hunter2\0".to_vec()));
    }
}
