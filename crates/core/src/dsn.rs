//! Where and how to connect: the `mysql://` DSN a user types, and the resolved
//! [`ConnectOptions`] the wire client uses.
//!
//! A DSN's Display, Debug and Serialize forms never include the password.

use crate::secret::Secret;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// How to reach the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    /// TCP host and port.
    Tcp { host: String, port: u16 },
    /// A Unix domain socket.
    Unix { path: PathBuf },
}

impl Endpoint {
    /// A server on this host: a socket, or TCP to a loopback name.
    pub fn is_local(&self) -> bool {
        match self {
            Endpoint::Unix { .. } => true,
            Endpoint::Tcp { host, .. } => {
                matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1" | "[::1]")
                    || host.starts_with("127.")
            }
        }
    }
}

/// The client's largest packet, from a size such as `64M`: 4 KiB to 1 GiB (the mysql client's
/// own bounds), none outside them or unreadable.
pub fn max_allowed_packet(v: &str) -> Option<u64> {
    const LEAST: u64 = 4 << 10;
    crate::units::parse_size(v)
        .ok()
        .filter(|n| (LEAST..=ConnectOptions::DEFAULT_MAX_ALLOWED_PACKET).contains(n))
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Endpoint::Tcp { host, port } => write!(f, "{host}:{port}"),
            Endpoint::Unix { path } => write!(f, "{}", path.display()),
        }
    }
}

/// TLS policy, with the mysql client's `--ssl-mode` values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SslMode {
    /// Never use TLS.
    Disabled,
    /// Use TLS when the server offers it (over TCP); the mysql client's default.
    #[default]
    Preferred,
    /// Require TLS, do not verify the certificate.
    Required,
    /// Require TLS and verify the certificate against `--ssl-ca`.
    VerifyCa,
    /// Like `VerifyCa`, and check that the host name matches the certificate.
    VerifyIdentity,
}

impl FromStr for SslMode {
    type Err = DsnError;
    fn from_str(s: &str) -> Result<Self, DsnError> {
        Ok(match s.to_ascii_uppercase().replace('-', "_").as_str() {
            "DISABLED" => SslMode::Disabled,
            "PREFERRED" => SslMode::Preferred,
            "REQUIRED" => SslMode::Required,
            "VERIFY_CA" => SslMode::VerifyCa,
            "VERIFY_IDENTITY" => SslMode::VerifyIdentity,
            _ => {
                return Err(DsnError(format!(
                "unknown ssl-mode '{s}' (expected DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY)"
            )))
            }
        })
    }
}

/// Everything the wire client needs to open a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectOptions {
    /// Where the server listens.
    pub endpoint: Endpoint,
    /// Account name.
    pub user: String,
    /// Password (may be empty).
    pub password: Secret,
    /// Default schema, if any.
    pub database: Option<String>,
    /// TLS policy. Ignored on Unix sockets except `Required` and stricter, which are honoured.
    pub ssl_mode: SslMode,
    /// CA certificate (PEM) for `VerifyCa` / `VerifyIdentity`.
    pub ssl_ca: Option<PathBuf>,
    /// How long each step of opening a session may wait for the server.
    pub timeouts: Timeouts,
    /// The largest packet the client accepts from the server, in bytes, after reassembly of
    /// its 16 MiB frames (the mysql client's `--max-allowed-packet`): a rogue server cannot
    /// make the client allocate more than this for one reply.
    pub max_allowed_packet: u64,
}

/// How long a blocking session waits for the server before it gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeouts {
    /// Connecting and each step of the handshake (the mysql client's `--connect-timeout`):
    /// a server that does not answer within it is unreachable.
    pub connect: Duration,
    /// Each later read or write of a control-plane session (`None`: no bound). Long enough for
    /// an index build or a slow replayed statement, which send nothing until they end.
    pub read: Option<Duration>,
}

impl Timeouts {
    /// The mysql client's default connect timeout.
    pub const DEFAULT_CONNECT: Duration = Duration::from_secs(10);
    /// The default bound on one read of a control-plane session.
    pub const DEFAULT_READ: Duration = Duration::from_secs(3600);
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Self::DEFAULT_CONNECT,
            read: Some(Self::DEFAULT_READ),
        }
    }
}

impl ConnectOptions {
    /// The mysql client's default `--max-allowed-packet`: 1 GiB.
    pub const DEFAULT_MAX_ALLOWED_PACKET: u64 = 1 << 30;

    /// A one-line description without the password, in the DSN's own syntax:
    /// `user@host:port/db` or `user@localhost/db?socket=PATH`.
    pub fn describe(&self) -> String {
        let db = self.database.as_deref().unwrap_or("");
        match &self.endpoint {
            Endpoint::Tcp { .. } => format!("{}@{}/{}", self.user, self.endpoint, db),
            Endpoint::Unix { path } => {
                format!("{}@localhost/{}?socket={}", self.user, db, path.display())
            }
        }
    }
}

/// A malformed DSN or connection option; the message says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DsnError(pub String);

/// A parsed `mysql://user[:pass]@host[:port]/db[?socket=/path&ssl-mode=..&ssl-ca=..]` URL.
#[derive(Clone, PartialEq, Eq)]
pub struct Dsn(pub ConnectOptions);

impl Dsn {
    /// The connection options this DSN names.
    pub fn options(&self) -> &ConnectOptions {
        &self.0
    }
}

impl fmt::Display for Dsn {
    /// The URL without its password, with its TLS parameters when they are not the defaults.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.0;
        let db = o.database.as_deref().unwrap_or("");
        let mut params = Vec::new();
        match &o.endpoint {
            Endpoint::Tcp { .. } => write!(f, "mysql://{}@{}/{}", o.user, o.endpoint, db)?,
            Endpoint::Unix { path } => {
                write!(f, "mysql://{}@localhost/{}", o.user, db)?;
                params.push(format!("socket={}", path.display()));
            }
        }
        if o.ssl_mode != SslMode::default() {
            params.push(format!("ssl-mode={}", ssl_mode_name(o.ssl_mode)));
        }
        if let Some(ca) = &o.ssl_ca {
            params.push(format!("ssl-ca={}", ca.display()));
        }
        if !params.is_empty() {
            write!(f, "?{}", params.join("&"))?;
        }
        Ok(())
    }
}

fn ssl_mode_name(m: SslMode) -> &'static str {
    match m {
        SslMode::Disabled => "DISABLED",
        SslMode::Preferred => "PREFERRED",
        SslMode::Required => "REQUIRED",
        SslMode::VerifyCa => "VERIFY_CA",
        SslMode::VerifyIdentity => "VERIFY_IDENTITY",
    }
}

impl fmt::Debug for Dsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Dsn({self})")
    }
}

impl Serialize for Dsn {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

fn percent_decode(s: &str) -> Result<String, DsnError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                // Two hex digits: from_str_radix alone would also take a sign ("%+1").
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| DsnError("bad percent-escape in DSN".into()))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| DsnError("DSN is not valid UTF-8 after decoding".into()))
}

impl FromStr for Dsn {
    type Err = DsnError;

    fn from_str(url: &str) -> Result<Self, DsnError> {
        let rest = url
            .strip_prefix("mysql://")
            .or_else(|| url.strip_prefix("mariadb://"))
            .ok_or_else(|| {
                DsnError(
                    "DSN must start with mysql:// (e.g. mysql://user:pass@127.0.0.1:3306/sbtest)"
                        .into(),
                )
            })?;
        let (main, query) = match rest.split_once('?') {
            Some((m, q)) => (m, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match main.split_once('/') {
            Some((a, p)) => (a, p),
            None => (main, ""),
        };
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            Some(u) => match u.split_once(':') {
                Some((u, p)) => (percent_decode(u)?, Secret::new(percent_decode(p)?)),
                None => (percent_decode(u)?, Secret::default()),
            },
            None => ("root".to_string(), Secret::default()),
        };
        let (host, port) = parse_hostport(hostport)?;
        let database = match percent_decode(path)? {
            d if d.is_empty() => None,
            d => Some(d),
        };
        let mut opts = ConnectOptions {
            endpoint: Endpoint::Tcp { host, port },
            user,
            password,
            database,
            ssl_mode: SslMode::default(),
            ssl_ca: None,
            timeouts: Timeouts::default(),
            max_allowed_packet: ConnectOptions::DEFAULT_MAX_ALLOWED_PACKET,
        };
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| DsnError(format!("DSN parameter '{pair}' has no value")))?;
            let v = percent_decode(v)?;
            match k.replace('_', "-").as_str() {
                "socket" => {
                    opts.endpoint = Endpoint::Unix {
                        path: PathBuf::from(v),
                    }
                }
                "ssl-mode" => opts.ssl_mode = v.parse()?,
                "ssl-ca" => opts.ssl_ca = Some(PathBuf::from(v)),
                _ => {
                    return Err(DsnError(format!(
                        "unknown DSN parameter '{k}' (known: socket, ssl-mode, ssl-ca)"
                    )))
                }
            }
        }
        Ok(Dsn(opts))
    }
}

fn parse_hostport(s: &str) -> Result<(String, u16), DsnError> {
    if s.is_empty() {
        return Ok(("localhost".into(), 3306));
    }
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest
            .split_once(']')
            .ok_or_else(|| DsnError(format!("unclosed '[' in host '{s}'")))?;
        (h.to_string(), after.strip_prefix(':'))
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (s.to_string(), None),
        }
    };
    let port = match port {
        None => 3306,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| DsnError(format!("bad port '{p}' in DSN (expected 1-65535)")))?,
    };
    Ok((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_endpoints_are_sockets_and_loopback_names() {
        assert!(Endpoint::Unix {
            path: "/tmp/s".into()
        }
        .is_local());
        let tcp = |h: &str| Endpoint::Tcp {
            host: h.into(),
            port: 3306,
        };
        assert!(
            tcp("127.0.0.1").is_local() && tcp("localhost").is_local() && tcp("::1").is_local()
        );
        assert!(!tcp("db.example.com").is_local() && !tcp("10.0.0.1").is_local());
    }

    #[test]
    fn parses_full_url_and_redacts() {
        let d: Dsn = "mysql://bench:p%40ss@db.example:3307/sbtest?ssl-mode=required"
            .parse()
            .unwrap();
        let o = d.options();
        assert_eq!(o.user, "bench");
        assert_eq!(o.password.expose(), "p@ss");
        assert_eq!(
            o.endpoint,
            Endpoint::Tcp {
                host: "db.example".into(),
                port: 3307
            }
        );
        assert_eq!(o.database.as_deref(), Some("sbtest"));
        assert_eq!(o.ssl_mode, SslMode::Required);
        assert_eq!(
            d.to_string(),
            "mysql://bench@db.example:3307/sbtest?ssl-mode=REQUIRED"
        );
        let again: Dsn = d.to_string().parse().unwrap();
        assert_eq!(again.options().ssl_mode, SslMode::Required);
        let shown = format!("{d} {d:?} {}", serde_json::to_string(&d).unwrap());
        assert!(
            !shown.contains("p@ss") && !shown.contains("p%40ss"),
            "{shown}"
        );
    }

    #[test]
    fn socket_parameter_and_defaults() {
        let d: Dsn = "mysql://root@localhost/?socket=/tmp/my.sock"
            .parse()
            .unwrap();
        assert_eq!(
            d.options().endpoint,
            Endpoint::Unix {
                path: "/tmp/my.sock".into()
            }
        );
        assert_eq!(d.options().database, None);
        let d: Dsn = "mysql://u@[::1]/x".parse().unwrap();
        assert_eq!(
            d.options().endpoint,
            Endpoint::Tcp {
                host: "::1".into(),
                port: 3306
            }
        );
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "postgres://u@h/db",
            "mysql://u@h:0/db",
            "mysql://u@h:99999/db",
            "mysql://u@h/db?foo=1",
            "mysql://u@h/db?ssl-mode=maybe",
            "mysql://u@h/db?socket",
        ] {
            assert!(bad.parse::<Dsn>().is_err(), "{bad} should fail");
        }
    }
}
