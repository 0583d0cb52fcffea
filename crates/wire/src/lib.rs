//! qpslab-wire: a lean MySQL/MariaDB client protocol.
//!
//! Two layers:
//! - [`Conn`], a blocking session for the control plane: connect (TCP, Unix socket, TLS),
//!   authenticate (mysql_native_password, caching_sha2_password, client_ed25519, unix_socket,
//!   mysql_clear_password), run text queries, prepared statements and LOAD DATA LOCAL INFILE.
//! - [`codec`], allocation-free framing for the hot path: a COM_STMT_EXECUTE packet encoded once
//!   and patched in place per call, and an incremental reply parser that counts rows without
//!   materializing them. An event loop takes an authenticated socket with [`Conn::into_stream`].
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): the lean client
//! protocol: handshake, auth plugins, TLS, a blocking `Conn` for the control plane, and the codecs
//! the hot path uses (`ExecPacket`, `ReplyReader`).
//!
//! ```no_run
//! # fn main() -> Result<(), qpslab_wire::Error> {
//! let opts: qpslab_core::Dsn = "mysql://root@127.0.0.1:3306/test".parse().unwrap();
//! let mut conn = qpslab_wire::Conn::connect(opts.options())?;
//! let r = conn.query("SELECT 1")?;
//! assert_eq!(r.rows[0][0].as_deref(), Some("1"));
//! # Ok(()) }
//! ```

mod auth;
pub mod caps;
pub mod codec;
mod conn;
pub mod error;
mod handshake;
mod packet;
mod proto;
mod rows;
pub mod stream;
mod tls;
mod wait;

#[cfg(test)]
mod fuzz_tests;

pub use caps::Capabilities;
pub use conn::{Cell, Conn, QueryResult, Row, Statement, Streamed, Typed, Value};
pub use error::Error;
pub use handshake::SessionInfo;
pub use stream::{Stream, TlsStream};
pub use wait::{interrupt, interrupts};
