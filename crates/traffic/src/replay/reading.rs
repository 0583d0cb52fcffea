//! How the target reads the log's statements: its version, `sql_mode` and the client
//! character set replay's sessions start in ([`Reading`]), how our sessions take the log's
//! connections ([`Sessions`]), and each statement judged again as they read it
//! ([`ReplayLog::classify_for`], [`classify_on`]).

use super::{Kind, ReplayLog};
use qpslab_core::replay::ReplayMode;
use qpslab_core::ConnectOptions;
use qpslab_lab::ExecError;
use qpslab_sqllog::{Classifier, Dialect, Verdict};
use qpslab_wire::Conn;

impl ReplayLog {
    /// Judges every statement again as each server of `servers` reads it, keeping the worst
    /// verdict: one [`Classifier`] per logged connection, fed its statements in log order with
    /// their logged database, so a versioned comment is read by the server's version and a
    /// `SET sql_mode` or `SET NAMES` of the log changes how the connection's later statements
    /// are read.
    ///
    /// What the log sets holds only while the session lasts: a session that lost its
    /// connection goes on in a new one, as the server's new sessions start. So each statement
    /// is also read in the state a new session starts in (and in what the log set since).
    /// Where `sessions` is [`Sessions::Interleaved`] (replay's max mode, diff's classes) one of
    /// our sessions runs statements of any logged connection: each is read in every state any
    /// logged connection may leave a session in.
    pub fn classify_for(&mut self, servers: &[Reading], sessions: Sessions) {
        let mut worst: Vec<Option<Verdict>> = vec![None; self.stmts.len()];
        let worsen = |w: &mut Option<Verdict>, v: Verdict| {
            if w.is_none_or(|w| v.effect > w.effect) {
                *w = Some(v);
            }
        };
        for r in servers {
            let fresh = Classifier::new(r.dialect)
                .with_sql_mode(r.sql_mode.as_deref())
                .with_charset(r.charset.as_deref());
            let mut by_conn: std::collections::HashMap<u64, Classifier> = Default::default();
            // Every state a session may be in before one of the log's statements.
            let mut any = fresh.clone();
            for (s, w) in self.stmts.iter().zip(worst.iter_mut()) {
                let c = by_conn.entry(s.conn).or_insert_with(|| fresh.clone());
                c.absorb(&fresh);
                c.set_database(s.db.as_deref());
                any.absorb(c);
                worsen(w, c.classify(&s.sql));
            }
            if sessions == Sessions::Interleaved {
                by_conn.values().for_each(|c| any.absorb(c));
                for (s, w) in self.stmts.iter().zip(worst.iter_mut()) {
                    let mut c = any.clone();
                    c.set_database(s.db.as_deref());
                    worsen(w, c.peek(&s.sql));
                }
            }
        }
        for (s, w) in self.stmts.iter_mut().zip(worst) {
            if let Some(v) = w {
                s.verdict = v;
                s.kind = Kind::of(v.effect);
            }
        }
    }
}

/// How our sessions take the log's statements (see [`ReplayLog::classify_for`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sessions {
    /// Each session runs one logged connection's statements in order (replay's sessions mode).
    Kept,
    /// A session runs statements of any logged connection (replay's max mode, diff).
    Interleaved,
}

impl Sessions {
    /// How replay's `mode` takes them.
    pub fn of(mode: ReplayMode) -> Sessions {
        match mode {
            ReplayMode::Sessions => Sessions::Kept,
            ReplayMode::Max => Sessions::Interleaved,
        }
    }
}

/// How a server reads SQL: its version and flavor, and the `sql_mode` and client character set
/// replay's new sessions start in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reading {
    /// The server's dialect.
    pub dialect: Dialect,
    /// Its sessions' initial `sql_mode`; none when it is not known (both readings of each flag
    /// are judged).
    pub sql_mode: Option<String>,
    /// The client character set replay's sessions start in (`@@character_set_client`, by
    /// name); none when it is not known (every reading is judged: see
    /// [`Classifier::with_charset`]).
    pub charset: Option<String>,
}

impl Reading {
    /// A server of unknown version and flavor in the default `sql_mode`, with sessions in a
    /// client character set that is not known, as a log is read before any server is reached.
    pub fn unknown() -> Reading {
        Reading {
            dialect: Dialect::UNKNOWN,
            sql_mode: Some(String::new()),
            charset: None,
        }
    }

    /// How the server reached by `conn` reads SQL: its version string, its global `sql_mode`
    /// when the connection's own is the same (else an `init_connect` or the account may change
    /// it: not known), and the client character set of a session qpslab opens (the one
    /// replay's sessions start in: `conn` must be opened as they are).
    pub fn of(conn: &mut Conn) -> Result<Reading, qpslab_wire::Error> {
        let dialect = Dialect::of_server(conn.server_version());
        let r = conn.query(
            "SELECT @@GLOBAL.sql_mode, @@SESSION.sql_mode, @@SESSION.character_set_client, \
             @@GLOBAL.init_connect",
        )?;
        // An `init_connect` runs for accounts without SUPER (replay's read-only account) and
        // may set either: then neither is known.
        let row = match r.rows.first().map(|row| row.as_slice()) {
            Some([.., Some(init)]) if !init.trim().is_empty() => None,
            row => row,
        };
        let sql_mode = match row {
            Some([Some(global), Some(session), ..]) if global == session => Some(global.clone()),
            _ => None,
        };
        let charset = match row {
            Some([_, _, Some(cs), _]) => Some(cs.clone()),
            _ => None,
        };
        Ok(Reading {
            dialect,
            sql_mode,
            charset,
        })
    }
}

/// Judges `log`'s statements again as the servers of `targets` read them (the worst of their
/// readings; see [`ReplayLog::classify_for`]), on a short connection to each.
pub fn classify_on(
    targets: &[&ConnectOptions],
    log: &mut ReplayLog,
    sessions: Sessions,
) -> Result<(), ExecError> {
    let mut readings = Vec::new();
    for t in targets {
        // The server's defaults, not those of a database that may not exist yet.
        let t = ConnectOptions {
            database: None,
            ..(*t).clone()
        };
        let fail = |source| ExecError::Connect {
            target: t.describe(),
            source,
        };
        let mut conn = Conn::connect(&t).map_err(fail)?;
        readings.push(Reading::of(&mut conn).map_err(fail)?);
    }
    log.classify_for(&readings, sessions);
    Ok(())
}
