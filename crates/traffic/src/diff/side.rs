//! The two sides of a diff, from how the caller reached them to what the rounds and the
//! profiles need: the database every statement runs in, the statement timeout, and the
//! server's pid for `perf` (the caller's when it started or found the server, else the peer
//! of a Unix socket on this machine).

use super::DiffSide;
use qpslab_core::{ConnectOptions, Endpoint};
use qpslab_probe::profile::{perf_available, socket_peer_pid, ProfileError};
use std::time::Duration;

/// A side as the caller reached it.
#[derive(Clone, Debug)]
pub struct Described {
    /// How the user named it (a DSN without its password, or a sandbox name).
    pub label: String,
    /// How to connect.
    pub options: ConnectOptions,
    /// The database every statement runs in; none: each runs in its logged database.
    pub database: Option<String>,
    /// The server's pid, when the caller knows it (a sandbox of the lab).
    pub server_pid: Option<u32>,
}

/// The two sides, ready to measure.
#[derive(Clone, Debug)]
pub struct Sides {
    /// A and B.
    pub sides: [DiffSide; 2],
    /// Their servers' pids, where known.
    pub pids: [Option<u32>; 2],
}

/// Why the sides cannot be profiled.
#[derive(Debug, thiserror::Error)]
pub enum SideError {
    /// The server's process is not known for a side (a server elsewhere, or reached by TCP).
    #[error("the server's process is not known for side {side} ({label})")]
    UnknownPid {
        /// `A` or `B`.
        side: &'static str,
        /// The side's label.
        label: String,
    },
    /// `perf` cannot run here.
    #[error(transparent)]
    Perf(#[from] ProfileError),
}

/// The sides `described`, each statement bounded by `statement_timeout`.
pub fn resolve(described: [Described; 2], statement_timeout: Option<Duration>) -> Sides {
    let pids = described
        .each_ref()
        .map(|d| match (d.server_pid, &d.options.endpoint) {
            (None, Endpoint::Unix { path }) => socket_peer_pid(path),
            (pid, _) => pid,
        });
    let sides = described.map(|d| DiffSide {
        label: d.label,
        options: ConnectOptions {
            database: d.database,
            ..d.options
        },
        statement_timeout,
        read_only: false,
    });
    Sides { sides, pids }
}

impl Sides {
    /// The servers' pids for profiling, refused before anything runs when one is not known
    /// or `perf` is missing.
    pub fn profile_pids(&self) -> Result<[u32; 2], SideError> {
        let known = |i: usize| {
            self.pids[i].ok_or_else(|| SideError::UnknownPid {
                side: ["A", "B"][i],
                label: self.sides[i].label.clone(),
            })
        };
        let pids = [known(0)?, known(1)?];
        perf_available()?;
        Ok(pids)
    }
}

/// Judges `log`'s statements as both `sides`' servers read them (the worse of their readings):
/// their versions, `sql_mode` and client character set, on a short connection to each server
/// with its defaults (the side's database is checked when the rounds connect). A class runs on
/// sessions that ran any other's statements: each is read in every state the log's connections
/// may leave a session in ([`crate::replay::Sessions::Interleaved`]). A side that cannot be
/// reached is named by its label.
pub fn read_log_as_sides(
    sides: &[DiffSide],
    log: &mut crate::replay::ReplayLog,
) -> Result<(), qpslab_lab::ExecError> {
    let mut readings = Vec::new();
    for side in sides {
        let fail = |source| qpslab_lab::ExecError::Connect {
            target: side.label.clone(),
            source,
        };
        let server = ConnectOptions {
            database: None,
            ..side.options.clone()
        };
        let mut conn = qpslab_wire::Conn::connect(&server).map_err(fail)?;
        readings.push(crate::replay::Reading::of(&mut conn).map_err(fail)?);
    }
    log.classify_for(&readings, crate::replay::Sessions::Interleaved);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(label: &str, endpoint: Endpoint, pid: Option<u32>) -> Described {
        Described {
            label: label.into(),
            options: ConnectOptions {
                endpoint,
                .."mysql://root@localhost/sbtest"
                    .parse::<qpslab_core::Dsn>()
                    .unwrap()
                    .options()
                    .clone()
            },
            database: None,
            server_pid: pid,
        }
    }

    #[test]
    fn a_side_runs_in_its_own_database_and_an_unknown_pid_refuses_profiling() {
        let tcp = Endpoint::Tcp {
            host: "db.example.com".into(),
            port: 3306,
        };
        let a = Described {
            database: Some("shop".into()),
            ..described("a", tcp.clone(), Some(42))
        };
        let missing = Endpoint::Unix {
            path: "/nonexistent/qpslab.sock".into(),
        };
        let s = resolve(
            [a, described("b", missing, None)],
            Some(Duration::from_secs(3)),
        );
        assert_eq!(s.sides[0].options.database.as_deref(), Some("shop"));
        // No database named: each statement in its logged one, not the connection's default.
        assert_eq!(s.sides[1].options.database, None);
        assert_eq!(s.sides[1].statement_timeout, Some(Duration::from_secs(3)));
        assert_eq!(s.pids, [Some(42), None]);
        let e = s.profile_pids().unwrap_err();
        assert_eq!(
            e.to_string(),
            "the server's process is not known for side B (b)"
        );
    }
}
