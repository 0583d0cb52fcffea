//! Streaming readers for MariaDB and MySQL slow and general query logs, and the statement
//! fingerprints that group their entries into classes.
//!
//! The reader scans bytes, one reused line buffer and one reused entry at a time, so its
//! memory does not grow with the log; [`LogReader`] is an iterator of owned [`Entry`]s, and
//! [`LogReader::next_ref`] lends an [`EntryRef`] for the hot path (`qpslab digest`).
//! Incomplete entries (a header without its statement, a cut last entry) are skipped and
//! counted ([`LogReader::skipped`]); bytes that are not a log give
//! [`LogError::UnknownFormat`].
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): MariaDB and MySQL
//! slow and general logs: format detection (`reader.rs`), the line source (`lines.rs`), the entry
//! and connection state both log types read into (`state.rs`, below the readers), one reader per
//! log type (`slow.rs`, `general.rs`), header pairs (`pairs.rs`), log timestamps (`time.rs`),
//! fingerprints and statement kinds (`fingerprint.rs`), the one statement safety classifier and
//! the replay policy (`safety.rs`: the lexer that reads executable comments by the server's
//! version and strings by the session's sql_mode in `safety/lex.rs`, the rules per statement in
//! `safety/judge.rs`), the digest with its fixed-size histogram (`digest.rs`, `hist.rs`).
//!
//! ```
//! use qpslab_sqllog::{fingerprint, LogReader, LogType};
//! let log = concat!(
//!     "# Time: 261123  4:11:58\n",
//!     "# User@Host: app[app] @ localhost []\n",
//!     "# Thread_id: 8  Schema: shop  QC_hit: No\n",
//!     "# Query_time: 0.000200  Lock_time: 0.000050  Rows_sent: 1  Rows_examined: 1\n",
//!     "SET timestamp=1795407118;\n",
//!     "SELECT c FROM sbtest12 WHERE id=42;\n",
//! );
//! let mut r = LogReader::new(log.as_bytes(), LogType::Slow).unwrap();
//! let e = r.next().unwrap().unwrap();
//! assert_eq!((e.db.as_deref(), e.text().as_ref()), (Some("shop"), "SELECT c FROM sbtest12 WHERE id=42"));
//! assert_eq!(fingerprint(&e.sql), "select c from sbtest12 where id=?");
//! ```

pub mod digest;
mod entry;
mod error;
mod fingerprint;
mod general;
mod hist;
mod lines;
mod pairs;
mod reader;
mod safety;
mod slow;
mod state;
mod time;

pub use time::format_iso;

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

pub use entry::{Command, Entry, EntryRef, Flavor, LogType};
pub use error::{Digesting, LogError};
pub use fingerprint::{
    fingerprint, fingerprint_into, kind_of_fingerprint, statement_kind, StatementKind,
};
pub use reader::LogReader;
pub use safety::{classify, Classifier, Dialect, Effect, Policy, Verdict};

/// The reader's buffer: large, so a read call brings many entries at once.
const READ_BUFFER: usize = 1 << 20;

/// The longest line, statement or entry header the reader takes: far above any statement a
/// server logs at its default `max_allowed_packet`, and a bound that ends the read of
/// something that is no log (`/dev/zero`) at once, with [`LogError::TooLong`].
pub const MAX_STATEMENT: usize = 64 << 20;

/// Opens a log file and detects its flavor (see [`LogReader::new`]).
pub fn open(path: &Path, kind: LogType) -> Result<LogReader<BufReader<File>>, LogError> {
    let file = File::open(path).map_err(|source| LogError::Open {
        path: path.display().to_string(),
        source,
    })?;
    let name = path.display().to_string();
    LogReader::new(BufReader::with_capacity(READ_BUFFER, file), kind)
        .map(|r| r.named(&name))
        .map_err(|e| e.in_file(&name))
}
