//! Capability flags: the standard 32 bits plus MariaDB's 32 extended bits, as one `u64`.

/// Negotiated capability flags. Low 32 bits: the standard `CLIENT_*` flags; high 32 bits:
/// MariaDB's extended capabilities (sent in the handshake's filler).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Capabilities(pub u64);

/// `CLIENT_LONG_PASSWORD`; MariaDB calls bit 0 `CLIENT_MYSQL` and reads extended capabilities
/// only when a client leaves it clear.
pub const CLIENT_LONG_PASSWORD: u64 = 1;
/// `CLIENT_FOUND_ROWS`.
pub const CLIENT_FOUND_ROWS: u64 = 1 << 1;
/// `CLIENT_LONG_FLAG`.
pub const CLIENT_LONG_FLAG: u64 = 1 << 2;
/// `CLIENT_CONNECT_WITH_DB`: a default schema follows the auth data.
pub const CLIENT_CONNECT_WITH_DB: u64 = 1 << 3;
/// `CLIENT_LOCAL_FILES`: we may answer LOAD DATA LOCAL INFILE requests.
pub const CLIENT_LOCAL_FILES: u64 = 1 << 7;
/// `CLIENT_PROTOCOL_41`.
pub const CLIENT_PROTOCOL_41: u64 = 1 << 9;
/// `CLIENT_SSL`: switch to TLS after the SSLRequest packet.
pub const CLIENT_SSL: u64 = 1 << 11;
/// `CLIENT_TRANSACTIONS`: status flags in OK packets.
pub const CLIENT_TRANSACTIONS: u64 = 1 << 13;
/// `CLIENT_SECURE_CONNECTION` (4.1 auth).
pub const CLIENT_SECURE_CONNECTION: u64 = 1 << 15;
/// `CLIENT_MULTI_STATEMENTS`.
pub const CLIENT_MULTI_STATEMENTS: u64 = 1 << 16;
/// `CLIENT_MULTI_RESULTS`.
pub const CLIENT_MULTI_RESULTS: u64 = 1 << 17;
/// `CLIENT_PS_MULTI_RESULTS`.
pub const CLIENT_PS_MULTI_RESULTS: u64 = 1 << 18;
/// `CLIENT_PLUGIN_AUTH`.
pub const CLIENT_PLUGIN_AUTH: u64 = 1 << 19;
/// `CLIENT_CONNECT_ATTRS`.
pub const CLIENT_CONNECT_ATTRS: u64 = 1 << 20;
/// `CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA`.
pub const CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA: u64 = 1 << 21;
/// `CLIENT_SESSION_TRACK`.
pub const CLIENT_SESSION_TRACK: u64 = 1 << 23;
/// `CLIENT_DEPRECATE_EOF`: OK packets (0xFE header) replace EOF packets.
pub const CLIENT_DEPRECATE_EOF: u64 = 1 << 24;
/// MariaDB `MARIADB_CLIENT_STMT_BULK_OPERATIONS` (extended bit 2): COM_STMT_BULK_EXECUTE runs a
/// prepared statement over many parameter rows in one command.
pub const MARIADB_CLIENT_STMT_BULK_OPERATIONS: u64 = 1 << 34;
/// MariaDB `MARIADB_CLIENT_CACHE_METADATA` (extended bit 4): execute replies omit column
/// definitions the client already has.
pub const MARIADB_CLIENT_CACHE_METADATA: u64 = 1 << 36;

impl Capabilities {
    /// True when every bit of `flag` is set.
    pub fn has(self, flag: u64) -> bool {
        self.0 & flag == flag
    }
    /// OK packets replace EOF packets.
    pub fn deprecate_eof(self) -> bool {
        self.has(CLIENT_DEPRECATE_EOF)
    }
    /// MariaDB metadata caching: result sets carry a "metadata follows" byte.
    pub fn cache_metadata(self) -> bool {
        self.has(MARIADB_CLIENT_CACHE_METADATA)
    }
    /// MariaDB array binding: [`crate::Conn::bulk_execute`] is available.
    pub fn bulk_operations(self) -> bool {
        self.has(MARIADB_CLIENT_STMT_BULK_OPERATIONS)
    }
    /// The session runs over TLS.
    pub fn ssl(self) -> bool {
        self.has(CLIENT_SSL)
    }
}
