//! The one error type of this crate.
//!
//! Server errors keep their code, SQLSTATE and message so callers can count them by code
//! (sysbench's ignore list is by code). Nothing here ever holds a password.

use qpslab_core::fault::{user_if, Blame, Fault};

/// Everything that can go wrong while talking to a server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The socket failed (refused, reset, closed, timed out). The message names the endpoint
    /// when the failure happened while connecting.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The server answered with an ERR packet.
    #[error("server error {code} ({sqlstate}): {message}")]
    Server {
        /// MySQL/MariaDB error number, e.g. 1045.
        code: u16,
        /// Five-character SQLSTATE ("HY000" when the server sent none).
        sqlstate: String,
        /// The server's message, verbatim.
        message: String,
    },
    /// The server sent bytes this client does not understand, or a reply out of order.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// Authentication could not proceed on our side (unsupported plugin, cleartext refused
    /// over an insecure channel, ...).
    #[error("authentication failed: {0}")]
    Auth(String),
    /// TLS could not be set up or failed.
    #[error("TLS error: {0}")]
    Tls(String),
    /// Something accepted the connection but no MySQL server answered it: no greeting or no
    /// end of the handshake within the connect timeout, or bytes that are not the MySQL
    /// protocol. The message names the endpoint and what did not answer.
    #[error("{0}")]
    Unreachable(String),
    /// A wait for the server was ended by [`crate::interrupt`] (a first Ctrl-C or SIGTERM).
    /// The session is not usable any more: drop it.
    #[error("interrupted while waiting for the server")]
    Interrupted,
}

impl Error {
    /// True when the session is gone and the caller must reconnect: socket errors and the
    /// server's "gone away / lost / killed" codes.
    pub fn is_connection_lost(&self) -> bool {
        match self {
            Error::Io(_) => true,
            // 1053 server shutdown, 1927 connection killed (MariaDB), 2006/2013 client-side
            // "gone away"/"lost" numbers some proxies relay, 4031 inactive client disconnected.
            Error::Server { code, .. } => matches!(code, 1053 | 1927 | 2006 | 2013 | 4031),
            Error::Tls(_) | Error::Unreachable(_) => true,
            // Not a reason to reconnect: the process is stopping.
            Error::Protocol(_) | Error::Auth(_) | Error::Interrupted => false,
        }
    }

    /// The server's error number, when this is a server error.
    pub fn server_code(&self) -> Option<u16> {
        match self {
            Error::Server { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl Blame for Error {
    /// The user's: wrong credentials, unknown database, or no MySQL server answering where the
    /// user pointed us (refused, unknown host, silent past --connect-timeout, not speaking MySQL).
    fn fault(&self) -> Fault {
        if matches!(self, Error::Unreachable(_)) {
            // Silent, or not a MySQL server: as unreachable as a refused connection.
            return Fault::User;
        }
        user_if(match self.server_code() {
            // access denied (1045, 1698), unknown database (1049), host not allowed (1130)
            // too many connections (1040): the user asked for more sessions than the server accepts
            Some(code) => matches!(code, 1040 | 1045 | 1049 | 1130 | 1698),
            None => matches!(self, Error::Io(io) if matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::NotFound
                    | std::io::ErrorKind::PermissionDenied
                    | std::io::ErrorKind::HostUnreachable
                    | std::io::ErrorKind::NetworkUnreachable
                    | std::io::ErrorKind::AddrNotAvailable
            // A host name that does not resolve (getaddrinfo's errors have no stable kind).
            ) || io.to_string().contains("failed to lookup address")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_and_nothing_answering_where_pointed_are_the_users() {
        let server = |code| Error::Server {
            code,
            sqlstate: "28000".into(),
            message: String::new(),
        };
        let io = |kind| Error::Io(std::io::Error::from(kind));
        assert_eq!(server(1045).fault(), Fault::User);
        assert_eq!(server(1040).fault(), Fault::User);
        assert_eq!(server(1213).fault(), Fault::Runtime);
        assert_eq!(Error::Unreachable("silent".into()).fault(), Fault::User);
        assert_eq!(
            io(std::io::ErrorKind::ConnectionRefused).fault(),
            Fault::User
        );
        assert_eq!(
            io(std::io::ErrorKind::ConnectionReset).fault(),
            Fault::Runtime
        );
        assert_eq!(Error::Interrupted.fault(), Fault::Runtime);
    }

    #[test]
    fn classifies_errors() {
        let e = Error::Server {
            code: 1213,
            sqlstate: "40001".into(),
            message: "Deadlock found".into(),
        };
        assert_eq!(e.server_code(), Some(1213));
        assert!(!e.is_connection_lost());
        let io = Error::Io(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        assert!(io.is_connection_lost());
        assert_eq!(io.server_code(), None);
        assert!(e.to_string().contains("1213"));
    }
}
