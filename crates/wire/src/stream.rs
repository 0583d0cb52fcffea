//! The byte stream under a session: TCP, Unix socket, or TLS over TCP.
//!
//! # Non-blocking use with epoll (TLS)
//! A [`Stream::Tls`] keeps working after [`Stream::set_nonblocking`]`(true)`: reads and writes
//! return `ErrorKind::WouldBlock` instead of blocking, and no plaintext is ever lost. Two rules
//! for an event loop:
//! - **Drain reads until `WouldBlock`.** One TCP readable event may carry several TLS records;
//!   rustls decrypts them into its own buffer, which epoll cannot see. If you stop reading
//!   before `WouldBlock`, decrypted bytes may sit in that buffer with no further wake-up.
//! - **Flush after writing.** `write` hands the plaintext to rustls and pushes as much
//!   ciphertext as the socket takes; if the socket is full the rest stays queued (the `write`
//!   still reports the plaintext as written). When [`Stream::wants_write`] is true, wait for
//!   writability and call `flush()` until it returns `Ok`.
//!
//! Plain TCP and Unix streams have no hidden buffers: `wants_write` is always false.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

/// A connected, authenticated (or authenticating) socket.
#[derive(Debug)]
pub enum Stream {
    /// Plain TCP.
    Tcp(TcpStream),
    /// Unix domain socket.
    Unix(UnixStream),
    /// TLS over TCP (boxed: a rustls connection is large).
    Tls(Box<TlsStream>),
}

/// A rustls client session over a TCP socket that tolerates a non-blocking socket.
pub struct TlsStream {
    conn: rustls::ClientConnection,
    sock: TcpStream,
}

impl std::fmt::Debug for TlsStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsStream")
            .field("sock", &self.sock)
            .finish_non_exhaustive()
    }
}

impl TlsStream {
    /// Wraps `sock` and runs the TLS handshake to completion (the socket must be blocking,
    /// with a kernel timeout of a tick), waiting at most `limit` for each step.
    pub(crate) fn handshake(
        conn: rustls::ClientConnection,
        sock: TcpStream,
        limit: Option<std::time::Duration>,
    ) -> Result<TlsStream, crate::Error> {
        let mut s = TlsStream { conn, sock };
        let mut wait = crate::wait::Wait::new(limit);
        while s.conn.is_handshaking() {
            match s.conn.complete_io(&mut s.sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if crate::wait::is_tick(&e) => wait.tick()?,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(s)
    }

    /// The rustls session (negotiated version, cipher suite, peer certificates).
    pub fn session(&self) -> &rustls::ClientConnection {
        &self.conn
    }

    /// Ciphertext is queued that the socket has not taken yet.
    pub fn wants_write(&self) -> bool {
        self.conn.wants_write()
    }

    /// Writes queued ciphertext until done or the socket would block.
    fn push_tls(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Read for TlsStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            // Plaintext already decrypted comes first: it is invisible to epoll.
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            // Alerts or key updates produced by earlier records; a full socket is not an
            // error here, the bytes stay queued for the next flush.
            match self.push_tls() {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            match self.conn.read_tls(&mut self.sock) {
                Ok(0) => return Ok(0),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            self.conn
                .process_new_packets()
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        }
    }
}

impl Write for TlsStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // Make room first: rustls bounds its plaintext buffer.
        match self.push_tls() {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        let n = self.conn.writer().write(buf)?;
        if n == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        match self.push_tls() {
            Ok(()) => Ok(n),
            // The plaintext is in rustls' buffer; report it written and let the caller
            // flush when the socket is writable again.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && n > 0 => Ok(n),
            Err(e) => Err(e),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.conn.writer().flush()?;
        self.push_tls()?;
        self.sock.flush()
    }
}

impl Stream {
    /// Switches the underlying socket between blocking and non-blocking mode.
    pub fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nonblocking(on),
            Stream::Unix(s) => s.set_nonblocking(on),
            Stream::Tls(t) => t.sock.set_nonblocking(on),
        }
    }

    /// Sets TCP_NODELAY on TCP-based streams (a no-op for Unix sockets).
    pub fn set_nodelay(&self, on: bool) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_nodelay(on),
            Stream::Unix(_) => Ok(()),
            Stream::Tls(t) => t.sock.set_nodelay(on),
        }
    }

    /// Sets a read timeout on the socket (blocking mode only).
    pub fn set_read_timeout(&self, d: Option<std::time::Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(d),
            Stream::Unix(s) => s.set_read_timeout(d),
            Stream::Tls(t) => t.sock.set_read_timeout(d),
        }
    }

    /// Sets a write timeout on the socket (blocking mode only).
    pub fn set_write_timeout(&self, d: Option<std::time::Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_write_timeout(d),
            Stream::Unix(s) => s.set_write_timeout(d),
            Stream::Tls(t) => t.sock.set_write_timeout(d),
        }
    }

    /// Bounds every blocking read and write (`None`: wait as long as it takes). A read or
    /// write past the bound fails with `WouldBlock`/`TimedOut`.
    pub fn set_timeouts(&self, d: Option<std::time::Duration>) -> io::Result<()> {
        self.set_read_timeout(d)?;
        self.set_write_timeout(d)
    }

    /// True when a TLS stream holds ciphertext the socket has not accepted yet: wait for
    /// writability and call `flush()`.
    pub fn wants_write(&self) -> bool {
        match self {
            Stream::Tls(t) => t.wants_write(),
            _ => false,
        }
    }

    /// True for a TLS stream.
    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }

    /// Says goodbye before the socket is closed: sends COM_QUIT (and TLS's close_notify),
    /// best effort. Never blocks and never raises SIGPIPE, so a dead or stalled server cannot
    /// hold the caller; every failure is ignored (the socket is being closed anyway). Without
    /// it the server counts the connection in `Aborted_clients` and logs "Got an error reading
    /// communication packets". Call only between commands: no request may be half written.
    pub fn quit(&mut self) {
        match self {
            Stream::Tcp(s) => send_now(s.as_raw_fd(), &COM_QUIT_PACKET),
            Stream::Unix(s) => send_now(s.as_raw_fd(), &COM_QUIT_PACKET),
            Stream::Tls(t) => {
                // std's TCP writes pass MSG_NOSIGNAL; non-blocking keeps a full socket from
                // holding us.
                if t.sock.set_nonblocking(true).is_err() {
                    return;
                }
                if t.conn.writer().write_all(&COM_QUIT_PACKET).is_ok() {
                    t.conn.send_close_notify();
                    let _ = t.push_tls();
                }
            }
        }
    }
}

/// COM_QUIT: a one-byte command payload (0x01), sequence 0.
const COM_QUIT_PACKET: [u8; 5] = [1, 0, 0, 0, 0x01];

/// One non-blocking `send` that cannot raise SIGPIPE; the result is ignored.
fn send_now(fd: RawFd, bytes: &[u8]) {
    // SAFETY: `bytes` is valid for `bytes.len()` bytes for the duration of the call; `send`
    // only reads it.
    unsafe {
        libc::send(
            fd,
            bytes.as_ptr().cast(),
            bytes.len(),
            libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
        );
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(t) => t.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(t) => t.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(t) => t.flush(),
        }
    }
}

impl AsRawFd for Stream {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Stream::Tcp(s) => s.as_raw_fd(),
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tls(t) => t.sock.as_raw_fd(),
        }
    }
}
