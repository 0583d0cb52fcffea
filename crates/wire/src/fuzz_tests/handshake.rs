//! The server greeting and the authentication exchange that follows it.

use super::alloc_bound;
use crate::auth::{AuthFlow, Step};
use crate::caps::{CLIENT_LONG_PASSWORD, CLIENT_PLUGIN_AUTH, CLIENT_SECURE_CONNECTION};
use crate::handshake::{parse_greeting, Greeting};
use qpslab_core::Secret;
use qpslab_fuzzkit::{measure, FuzzRng, Target};
use std::sync::OnceLock;

/// Random bytes without NUL (names and nonces as servers send them).
fn no_nul(r: &mut FuzzRng, max: usize) -> Vec<u8> {
    r.bytes(max).into_iter().map(|b| b.max(1)).collect()
}

/// A Handshake v10 as MariaDB and MySQL send it, and what parsing it must give.
fn greeting(r: &mut FuzzRng) -> (Greeting, Vec<u8>) {
    let version = String::from_utf8_lossy(&no_nul(r, 40)).into_owned();
    let connection_id = r.u64() as u32;
    let nonce: Vec<u8> = (0..20).map(|_| r.byte().max(1)).collect();
    let mut caps = r.u64() as u32;
    if !r.one_in(8) {
        caps |= (CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH) as u32;
    }
    let ext = r.u64() as u32;
    let plugin = String::from_utf8_lossy(&no_nul(r, 30)).into_owned();
    let mut p = vec![10];
    p.extend_from_slice(version.as_bytes());
    p.push(0);
    p.extend_from_slice(&connection_id.to_le_bytes());
    p.extend_from_slice(&nonce[..8]);
    p.push(0);
    p.extend_from_slice(&(caps as u16).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&2u16.to_le_bytes());
    p.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 6]);
    p.extend_from_slice(&ext.to_le_bytes());
    let secure = caps as u64 & CLIENT_SECURE_CONNECTION != 0;
    if secure {
        p.extend_from_slice(&nonce[8..]);
        p.push(0);
    }
    let with_plugin = caps as u64 & CLIENT_PLUGIN_AUTH != 0;
    if with_plugin {
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
    }
    let mut all = caps as u64;
    if all & CLIENT_LONG_PASSWORD == 0 {
        all |= (ext as u64) << 32;
    }
    let g = Greeting {
        version,
        connection_id,
        nonce: if secure { nonce } else { nonce[..8].to_vec() },
        caps: all,
        plugin: if with_plugin && !plugin.is_empty() {
            plugin
        } else if with_plugin {
            String::new()
        } else {
            "mysql_native_password".into()
        },
    };
    (g, p)
}

#[test]
fn fuzz_greetings() {
    Target::new("wire_greeting", 20_000).run(
        |r| {
            let (g, p) = greeting(r);
            let bad = if r.one_in(4) {
                r.bytes(120)
            } else {
                r.mutate(&p)
            };
            (g, p, bad)
        },
        |(g, p, bad)| {
            assert_eq!(&parse_greeting(p).unwrap(), g);
            let (_, m) = measure(|| parse_greeting(bad));
            assert!(m.largest <= alloc_bound(bad.len()), "{m:?}");
        },
    );
}

/// A public key in PEM, made once: caching_sha2_password's full authentication sends it.
pub(super) fn pem() -> &'static [u8] {
    static PEM: OnceLock<Vec<u8>> = OnceLock::new();
    PEM.get_or_init(|| {
        use rsa::pkcs8::{EncodePublicKey, LineEnding};
        let key = rsa::RsaPrivateKey::new(&mut rand_core::OsRng, 1024).expect("an RSA key");
        let pem = key.to_public_key().to_public_key_pem(LineEnding::LF);
        pem.expect("PEM").into_bytes()
    })
}

const PLUGINS: [&str; 7] = [
    "mysql_native_password",
    "caching_sha2_password",
    "client_ed25519",
    "unix_socket",
    "mysql_clear_password",
    "dialog",
    "",
];

/// One packet of the exchange a server may send after the handshake response.
fn auth_packet(r: &mut FuzzRng) -> Vec<u8> {
    match r.below(8) {
        0 => vec![0, 0, 0, 2, 0, 0, 0],
        1 => {
            let mut p = vec![0xFE];
            p.extend_from_slice(r.pick(&PLUGINS).as_bytes());
            if !r.one_in(6) {
                p.push(0);
                p.extend_from_slice(&r.bytes(40));
            }
            p
        }
        2 => vec![1, *r.pick(&[3, 4, 2, 0])],
        3 => {
            let mut p = vec![1];
            p.extend_from_slice(pem());
            r.mutate(&p)
        }
        4 => {
            let mut p = vec![1];
            p.extend_from_slice(pem());
            p
        }
        5 => vec![0xFF, 0x15, 0x04, b'#', b'2', b'8', b'0', b'0', b'0', b'x'],
        6 => r.bytes(30),
        _ => vec![0xFE],
    }
}

#[test]
fn fuzz_authentication_exchanges() {
    Target::weighted("wire_auth_exchange", 4_000, 0.2).run(
        |r| {
            let plugin = *r.pick(&PLUGINS);
            let nonce = r.bytes(40);
            let packets: Vec<Vec<u8>> = (0..=r.below(4)).map(|_| auth_packet(r)).collect();
            (plugin, nonce, r.one_in(2), packets)
        },
        |(plugin, nonce, secure, packets)| {
            let pw = Secret::new("hunter2");
            let mut flow = AuthFlow::new(plugin, nonce, &pw, *secure);
            let _ = flow.initial();
            for p in packets {
                match flow.step(p) {
                    Ok(Step::Done) | Err(_) => break,
                    Ok(Step::Read) => {}
                    Ok(Step::Send(data)) => {
                        let cleartext = data.windows(7).any(|w| w == b"hunter2");
                        assert!(!cleartext || *secure, "password sent in clear: {data:?}");
                    }
                }
            }
        },
    );
}
