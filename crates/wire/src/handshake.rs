//! Connection phase: the server greeting (Handshake v10), the optional switch to TLS, the
//! HandshakeResponse41 and the authentication exchange.

use crate::auth::{AuthFlow, Step};
use crate::caps::*;
use crate::error::Error;
use crate::packet::PacketIo;
use crate::proto::{put_lenenc_bytes, Reader};
use crate::stream::{Stream, TlsStream};
use crate::tls;
use crate::wait::{is_tick, Wait, TICK};
use qpslab_core::units::timeout_text;
use qpslab_core::{ConnectOptions, Endpoint, SslMode};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// utf8mb4_general_ci: understood by every server this client targets.
const CHARSET_UTF8MB4: u8 = 45;
/// Largest packet we accept, as announced to the server.
const MAX_PACKET: u32 = 1 << 30;

/// What the server's greeting tells us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Greeting {
    pub version: String,
    pub connection_id: u32,
    pub nonce: Vec<u8>,
    /// Standard flags in the low 32 bits, MariaDB extended flags in the high 32 bits.
    pub caps: u64,
    pub plugin: String,
}

/// Parses a Handshake v10 payload.
pub(crate) fn parse_greeting(p: &[u8]) -> Result<Greeting, Error> {
    if p.first() == Some(&0xFF) {
        return Err(crate::proto::parse_err(p));
    }
    let mut r = Reader::new(p);
    let proto = r.u8()?;
    if proto != 10 {
        return Err(Error::Protocol(format!(
            "unsupported handshake protocol version {proto} (expected 10)"
        )));
    }
    let version = String::from_utf8_lossy(r.nul_str()).into_owned();
    let connection_id = r.u32()?;
    let mut nonce = r.take(8)?.to_vec();
    r.u8()?;
    let mut caps = r.u16()? as u64;
    let mut plugin = String::from("mysql_native_password");
    if r.remaining() > 0 {
        let _charset = r.u8()?;
        let _status = r.u16()?;
        caps |= (r.u16()? as u64) << 16;
        let auth_len = r.u8()? as usize;
        r.take(6)?;
        let ext = r.u32()?;
        // MariaDB announces its extended capabilities here when it clears CLIENT_MYSQL.
        if caps & CLIENT_LONG_PASSWORD == 0 {
            caps |= (ext as u64) << 32;
        }
        if caps & CLIENT_SECURE_CONNECTION != 0 {
            let n = auth_len.saturating_sub(8).max(13);
            let part2 = r.take(n.min(r.remaining()))?;
            // The last byte is a NUL terminator, not part of the nonce.
            let keep = part2.iter().position(|b| *b == 0).unwrap_or(part2.len());
            nonce.extend_from_slice(&part2[..keep]);
        }
        if caps & CLIENT_PLUGIN_AUTH != 0 && r.remaining() > 0 {
            plugin = String::from_utf8_lossy(r.nul_str()).into_owned();
        }
    }
    Ok(Greeting {
        version,
        connection_id,
        nonce,
        caps,
        plugin,
    })
}

/// The flags we ask for, given what the server offers.
pub(crate) fn client_caps(g: &Greeting, with_db: bool, tls: bool) -> u64 {
    let mut c = CLIENT_PROTOCOL_41
        | CLIENT_SECURE_CONNECTION
        | CLIENT_PLUGIN_AUTH
        | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CLIENT_LOCAL_FILES
        | CLIENT_MULTI_RESULTS
        | CLIENT_PS_MULTI_RESULTS
        | CLIENT_TRANSACTIONS
        | CLIENT_LONG_FLAG
        | CLIENT_DEPRECATE_EOF;
    if with_db {
        c |= CLIENT_CONNECT_WITH_DB;
    }
    if tls {
        c |= CLIENT_SSL;
    }
    if g.caps & CLIENT_LONG_PASSWORD == 0 {
        // MariaDB: leave CLIENT_MYSQL clear so the server reads our extended flags.
        c |= MARIADB_CLIENT_CACHE_METADATA | MARIADB_CLIENT_STMT_BULK_OPERATIONS;
    } else {
        c |= CLIENT_LONG_PASSWORD;
    }
    c & g.caps
}

/// The fixed 32-byte prefix shared by SSLRequest and HandshakeResponse41.
fn put_prefix(buf: &mut Vec<u8>, caps: u64) {
    buf.extend_from_slice(&(caps as u32).to_le_bytes());
    buf.extend_from_slice(&MAX_PACKET.to_le_bytes());
    buf.push(CHARSET_UTF8MB4);
    buf.extend_from_slice(&[0u8; 19]);
    buf.extend_from_slice(&((caps >> 32) as u32).to_le_bytes());
}

/// Builds HandshakeResponse41.
pub(crate) fn response(
    caps: u64,
    user: &str,
    auth: &[u8],
    db: Option<&str>,
    plugin: &str,
) -> Vec<u8> {
    let mut b = Vec::with_capacity(64 + user.len() + auth.len());
    put_prefix(&mut b, caps);
    b.extend_from_slice(user.as_bytes());
    b.push(0);
    put_lenenc_bytes(&mut b, auth);
    if let Some(db) = db.filter(|_| caps & CLIENT_CONNECT_WITH_DB != 0) {
        b.extend_from_slice(db.as_bytes());
        b.push(0);
    }
    b.extend_from_slice(plugin.as_bytes());
    b.push(0);
    b
}

/// Connects to `endpoint`, waiting at most `limit`, and leaves the socket blocking with a
/// kernel timeout of a tick, so every later wait can be bounded and interrupted.
fn open(endpoint: &Endpoint, limit: Duration) -> Result<Stream, Error> {
    let wrap = |e: std::io::Error| {
        Error::Io(std::io::Error::new(
            e.kind(),
            format!("cannot connect to {endpoint}: {e}"),
        ))
    };
    let stream = match endpoint {
        Endpoint::Tcp { host, port } => {
            let s = tcp_connect(host, *port, limit).map_err(|e| match e {
                Error::Io(e) if is_tick(&e) => Error::Unreachable(format!(
                    "cannot connect to {endpoint}: no answer within {} (--connect-timeout)",
                    timeout_text(limit)
                )),
                Error::Io(e) => wrap(e),
                other => other,
            })?;
            s.set_nodelay(true).map_err(wrap)?;
            Stream::Tcp(s)
        }
        // A local socket accepts at once or refuses; only a full backlog would block here.
        Endpoint::Unix { path } => Stream::Unix(UnixStream::connect(path).map_err(wrap)?),
    };
    stream.set_timeouts(Some(TICK)).map_err(wrap)?;
    Ok(stream)
}

/// Connects to the first address of `host` that answers, each attempt bounded by `limit` and
/// ended by an interrupt.
fn tcp_connect(host: &str, port: u16, limit: Duration) -> Result<TcpStream, Error> {
    use std::net::ToSocketAddrs;
    let mut last = None;
    for addr in (host, port).to_socket_addrs()? {
        match connect_addr(&addr, limit) {
            Ok(s) => return Ok(s),
            Err(Error::Interrupted) => return Err(Error::Interrupted),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::NotFound, "no address for the host").into()
    }))
}

/// A non-blocking connect polled a tick at a time, then a blocking socket.
fn connect_addr(addr: &SocketAddr, limit: Duration) -> Result<TcpStream, Error> {
    let family = if addr.is_ipv4() {
        libc::AF_INET
    } else {
        libc::AF_INET6
    };
    // SAFETY: plain socket(2); the descriptor is owned by the TcpStream at once.
    let fd = unsafe {
        libc::socket(
            family,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: `fd` is a fresh socket nobody else owns.
    let sock = unsafe { TcpStream::from_raw_fd(fd) };
    let (raw, len) = sockaddr(addr);
    // SAFETY: `raw` holds a valid sockaddr of `len` bytes for the call.
    if unsafe { libc::connect(fd, raw.as_ptr().cast(), len) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e.into());
        }
        let mut wait = Wait::new(Some(limit));
        loop {
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLOUT,
                revents: 0,
            };
            let ms = wait.slice().as_millis().max(1) as libc::c_int;
            // SAFETY: one valid pollfd.
            match unsafe { libc::poll(&mut p, 1, ms) } {
                n if n > 0 => break,
                0 => wait.tick()?,
                _ => {
                    let e = std::io::Error::last_os_error();
                    if e.kind() != std::io::ErrorKind::Interrupted {
                        return Err(e.into());
                    }
                }
            }
        }
        if let Some(e) = sock.take_error()? {
            return Err(e.into());
        }
    }
    sock.set_nonblocking(false)?;
    Ok(sock)
}

/// `addr` as the bytes of a `sockaddr_in` or `sockaddr_in6`, and their length.
fn sockaddr(addr: &SocketAddr) -> ([u8; 28], libc::socklen_t) {
    let mut raw = [0u8; 28];
    match addr {
        SocketAddr::V4(a) => {
            let sa = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            let n = std::mem::size_of::<libc::sockaddr_in>();
            // SAFETY: `sa` is plain data of `n` bytes, `raw` is larger.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (&sa as *const libc::sockaddr_in).cast(),
                    raw.as_mut_ptr(),
                    n,
                )
            };
            (raw, n as libc::socklen_t)
        }
        SocketAddr::V6(a) => {
            let sa = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            let n = std::mem::size_of::<libc::sockaddr_in6>();
            // SAFETY: `sa` is plain data of `n` bytes, `raw` is as large.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (&sa as *const libc::sockaddr_in6).cast(),
                    raw.as_mut_ptr(),
                    n,
                )
            };
            (raw, n as libc::socklen_t)
        }
    }
}

/// An error of the connection phase as the user should read it: a server that is silent, or
/// not a MySQL server, is unreachable; `stage` says what it did not do.
fn in_handshake(e: Error, endpoint: &Endpoint, limit: Duration, greeting: bool) -> Error {
    let stage = if greeting {
        "sent no MySQL greeting"
    } else {
        "did not finish the handshake"
    };
    match e {
        Error::Io(e) if is_tick(&e) => Error::Unreachable(format!(
            "{endpoint} accepted the connection but {stage} within {} (--connect-timeout)",
            timeout_text(limit)
        )),
        Error::Io(e) if greeting => Error::Unreachable(format!("{endpoint} {stage}: {e}")),
        Error::Protocol(m) if greeting => Error::Unreachable(format!(
            "{endpoint} does not speak the MySQL protocol ({m})"
        )),
        other => other,
    }
}

/// What an event loop needs to know about a session handed over by
/// [`crate::Conn::into_stream`], as the handshake established it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionInfo {
    /// Negotiated capabilities.
    pub caps: Capabilities,
    /// Server thread id.
    pub connection_id: u32,
    /// Server version string.
    pub server_version: String,
    /// True for MariaDB.
    pub mariadb: bool,
}

/// Opens the socket, negotiates, authenticates: connecting and each step of the handshake wait
/// at most `connect`, every later read and write at most `read` (`None`: until interrupted).
pub(crate) fn establish(
    opts: &ConnectOptions,
    connect: Duration,
    read: Option<Duration>,
) -> Result<(PacketIo, SessionInfo), Error> {
    let endpoint = &opts.endpoint;
    let mut io = PacketIo::new(open(endpoint, connect)?, Some(connect));
    io.set_max_packet(HANDSHAKE_MAX_PACKET.min(opts.max_allowed_packet));
    let g = io
        .read()
        .and_then(|p| parse_greeting(&p))
        .map_err(|e| in_handshake(e, endpoint, connect, true))?;
    let (io, info) =
        negotiate(opts, io, &g).map_err(|e| in_handshake(e, endpoint, connect, false))?;
    let mut io = io;
    io.set_limit(read);
    io.set_max_packet(opts.max_allowed_packet);
    Ok((io, info))
}

/// The largest packet of the handshake: a greeting, an auth switch or an RSA key is a few
/// hundred bytes, so a server that is not yet authenticated cannot make the client allocate
/// a `max_allowed_packet`'s worth.
const HANDSHAKE_MAX_PACKET: u64 = 64 << 10;

/// The handshake after the greeting `g`: TLS when asked for, then authentication.
fn negotiate(
    opts: &ConnectOptions,
    mut io: PacketIo,
    g: &Greeting,
) -> Result<(PacketIo, SessionInfo), Error> {
    let is_tcp = matches!(opts.endpoint, Endpoint::Tcp { .. });
    let server_tls = g.caps & CLIENT_SSL != 0;
    // Over a Unix socket the channel is already private; TLS is not used there.
    let use_tls = is_tcp
        && match opts.ssl_mode {
            SslMode::Disabled => false,
            SslMode::Preferred => server_tls,
            _ if !server_tls => {
                return Err(Error::Tls(format!(
                    "ssl-mode {:?} but the server at {} does not offer TLS",
                    opts.ssl_mode, opts.endpoint
                )))
            }
            _ => true,
        };
    let caps = client_caps(g, opts.database.is_some(), use_tls);
    if use_tls {
        let mut req = Vec::with_capacity(32);
        put_prefix(&mut req, caps);
        io.write(&req)?;
        let Endpoint::Tcp { host, .. } = &opts.endpoint else {
            return Err(Error::Tls("TLS needs a TCP endpoint".into()));
        };
        let cfg = tls::client_config(opts.ssl_mode, opts.ssl_ca.as_deref())?;
        let conn = rustls::ClientConnection::new(cfg, tls::server_name(host)?)
            .map_err(|e| Error::Tls(e.to_string()))?;
        // The server sends nothing until the TLS handshake, so no byte is buffered here.
        let limit = io.limit();
        let Stream::Tcp(sock) = io.into_stream() else {
            return Err(Error::Tls("TLS needs a TCP endpoint".into()));
        };
        let tls = TlsStream::handshake(conn, sock, limit).map_err(|e| match e {
            Error::Io(e) if !is_tick(&e) => {
                Error::Tls(format!("handshake with {} failed: {e}", opts.endpoint))
            }
            other => other,
        })?;
        io = PacketIo::new(Stream::Tls(Box::new(tls)), limit);
        io.set_max_packet(HANDSHAKE_MAX_PACKET.min(opts.max_allowed_packet));
        // The response continues the sequence after the SSLRequest (1).
        io.set_seq(2);
    }
    let secure = use_tls || !is_tcp;
    let mut flow = AuthFlow::new(&g.plugin, &g.nonce, &opts.password, secure);
    let first = flow.initial()?;
    io.write(&response(
        caps,
        &opts.user,
        &first,
        opts.database.as_deref(),
        flow.plugin(),
    ))?;
    loop {
        let p = io.read()?;
        match flow.step(&p)? {
            Step::Done => break,
            Step::Read => {}
            Step::Send(data) => io.write(&data)?,
        }
    }
    let mariadb = g.version.contains("MariaDB");
    // MariaDB prefixes "5.5.5-" for old replication clients.
    let version = g
        .version
        .strip_prefix("5.5.5-")
        .filter(|_| mariadb)
        .unwrap_or(&g.version)
        .to_string();
    let info = SessionInfo {
        caps: Capabilities(caps),
        connection_id: g.connection_id,
        server_version: version,
        mariadb,
    };
    Ok((io, info))
}
