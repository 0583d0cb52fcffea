//! The first line of defence of a read-only replay: the server itself refuses its writes.
//!
//! `--read-only` runs the log's statements as an account that holds only read privileges
//! (SELECT and SHOW VIEW on the log's databases, table by table in one that holds SQL SECURITY
//! DEFINER views, which are left out, as its `views` module says; with `--grant-execute`,
//! EXECUTE on each SQL SECURITY INVOKER routine there, never on a DEFINER one, as its
//! `routines` module says), each session in a read-only transaction (see [`super::exec`]). The statement classifier
//! stays the second line: a text filter loses to SQL's corners (versioned comments, dynamic
//! SQL), a privilege does not; and a privilege is a barrier the session cannot undo, which a
//! read-only transaction is not.
//!
//! - Where the connecting account may create users (`CREATE USER` or `ALL PRIVILEGES` on
//!   `*.*`, with `GRANT OPTION`: a sandbox's root), [`prepare`] creates such an account with a
//!   random name and password, reachable the way the replay connects, recording it in the
//!   restore trail ([`Ledger::begin_accounts`]) before it exists; [`ReadOnlyAccess::finish`]
//!   (or its drop) drops it, and after a kill -9 `qpslab restore` does.
//! - Otherwise the connecting account's own grants (`SHOW GRANTS`) must hold nothing that
//!   writes or administers; a replay as an account that does is refused (the user's error),
//!   naming the grants, unless `--trust-account` says the user accepts the risk.
//!
//! Either way the session account's effective grants are checked, those it inherits from
//! `PUBLIC` included (MariaDB grants `PUBLIC` everything on `test` and `test\_%`): a grant to
//! `PUBLIC` on databases the server does not have, or on none of the replay's databases, is
//! left out (the read-only transaction still refuses writes there). EXECUTE counts as a read
//! grant only on an INVOKER routine, and only with `--grant-execute`.
//!
//! The account's threads are killed before it is dropped, here and by `qpslab restore`: a
//! statement of the account never outlives it.

mod grants;
mod routines;
mod views;

use grants::{may_create_users, writing_grants};

use super::ReplayLog;
use qpslab_core::{ConnectOptions, Endpoint, Secret};
use qpslab_lab::server::restore::{Account, Guard, Ledger};
use qpslab_lab::ExecError;
use qpslab_wire::Conn;
use std::io::Read;

/// How the read-only account is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccessOptions {
    /// Replay as the connecting account even when it can write (`--trust-account`).
    pub trust_account: bool,
    /// Grant EXECUTE on the SQL SECURITY INVOKER routines too (`--grant-execute`): they run
    /// with the account's read privileges; DEFINER routines stay refused by the server.
    pub grant_execute: bool,
}

/// Where the replay's sessions run read-only: their connection options and, when qpslab
/// created the account, what to drop at the end.
pub struct ReadOnlyAccess {
    /// The sessions' connection options (the created account, or the target's own).
    pub session: ConnectOptions,
    /// What was done, for the user: `created account ...` or `as ...`.
    pub note: String,
    created: Option<Created>,
}

/// An account created for the replay.
struct Created {
    /// The connecting account, which drops it.
    control: ConnectOptions,
    accounts: Vec<Account>,
    /// Its record in the restore trail; cleared once the account is gone.
    guard: Option<Guard>,
}

impl ReadOnlyAccess {
    /// Drops the account qpslab created (if any) and clears its record in the restore trail.
    pub fn finish(mut self) -> Result<(), ExecError> {
        match self.created.take() {
            Some(c) => c.drop_accounts(),
            None => Ok(()),
        }
    }
}

impl Drop for ReadOnlyAccess {
    /// An error or a panic before [`ReadOnlyAccess::finish`] still drops the account; if even
    /// that fails, the restore trail keeps it for `qpslab restore`.
    fn drop(&mut self) {
        if let Some(c) = self.created.take() {
            let _ = c.drop_accounts();
        }
    }
}

impl Created {
    fn drop_accounts(mut self) -> Result<(), ExecError> {
        let connect = |source| ExecError::Connect {
            target: self.control.describe(),
            source,
        };
        let mut conn = Conn::connect(&self.control).map_err(connect)?;
        for a in &self.accounts {
            let Some(account) = a.sql() else { continue };
            qpslab_lab::server::restore::end_sessions(&mut conn, a)
                .map_err(|e| ExecError::Replay(format!("ending the sessions of {account}: {e}")))?;
            conn.execute(&format!("DROP USER IF EXISTS {account}"))
                .map_err(|e| ExecError::Replay(format!("dropping {account}: {e}")))?;
        }
        if let Some(g) = self.guard.take() {
            g.finish()?;
        }
        Ok(())
    }
}

/// Readies a read-only replay of `log` on `target` (the sessions' `database`, when given):
/// creates a read-only account when the connecting one may, else checks the connecting one.
/// The account's record goes to `ledger` before it is created.
pub fn prepare(
    target: &ConnectOptions,
    ledger: &Ledger,
    log: &ReplayLog,
    database: Option<&str>,
    o: AccessOptions,
) -> Result<ReadOnlyAccess, ExecError> {
    let dbs: Vec<String> = match database {
        Some(d) => vec![d.to_string()],
        None => log.databases().into_iter().map(str::to_string).collect(),
    };
    prepare_in(target, ledger, &dbs, o, "replay --read-only")
}

/// As [`prepare`], for statements that run in databases `dbs` (none: anywhere), such as a
/// diff's two sides on one server, for `command` (what the restore trail says created the
/// account: `replay --read-only`, `diff`).
pub fn prepare_in(
    target: &ConnectOptions,
    ledger: &Ledger,
    dbs: &[String],
    o: AccessOptions,
    command: &str,
) -> Result<ReadOnlyAccess, ExecError> {
    let connect = |source| ExecError::Connect {
        target: target.describe(),
        source,
    };
    let mut conn = Conn::connect(target).map_err(connect)?;
    let own = grants(&mut conn)?;
    let invoker = if o.grant_execute {
        routines::invoker(&mut conn, dbs)?
    } else {
        Vec::new()
    };
    if !may_create_users(&own) {
        let writing = writing_grants(&mut conn, &own, &invoker, dbs)?;
        if !writing.is_empty() && !o.trust_account {
            return Err(ExecError::Replay(refusal(target, &writing, dbs)));
        }
        let note = if writing.is_empty() {
            format!(
                "read-only: as {}, which holds only read privileges",
                target.user
            )
        } else {
            format!(
                "read-only: as {}, which can write ({}), trusted with --trust-account",
                target.user,
                writing.join("; ")
            )
        };
        return Ok(ReadOnlyAccess {
            session: target.clone(),
            note,
            created: None,
        });
    }
    let user = format!("qpslab_ro_{}", hex(&random(6)?));
    let password = hex(&random(18)?);
    let accounts: Vec<Account> = hosts(&target.endpoint)
        .into_iter()
        .map(|host| Account {
            user: user.clone(),
            host: host.to_string(),
        })
        .collect();
    let guard = ledger.begin_accounts(target, command, accounts.clone())?;
    let mut access = ReadOnlyAccess {
        session: ConnectOptions {
            user: user.clone(),
            password: Secret::new(password.clone()),
            ..target.clone()
        },
        note: String::new(),
        created: Some(Created {
            control: target.clone(),
            accounts: accounts.clone(),
            guard: Some(guard),
        }),
    };
    let privileges = "SELECT, SHOW VIEW";
    // A database with DEFINER views is granted object by object, without them.
    let narrowed = if dbs.is_empty() {
        Default::default()
    } else {
        views::narrowed(&mut conn, dbs)?
    };
    let on: Vec<String> = on_what(dbs)
        .into_iter()
        .zip(dbs.iter().map(Some).chain(std::iter::repeat(None)))
        .flat_map(|(object, db)| match db.and_then(|d| narrowed.get(d)) {
            Some(n) => n.readable.clone(),
            None => vec![object],
        })
        .collect();
    // The password goes to the server only as its hash, so no server log can show it.
    let hash = native_password_hash(&password);
    for a in &accounts {
        let Some(account) = a.sql() else { continue };
        let fail = |e: qpslab_wire::Error| {
            ExecError::Replay(format!("creating the read-only account {account}: {e}"))
        };
        conn.execute(&format!(
            "CREATE USER {account} IDENTIFIED BY PASSWORD '{hash}'"
        ))
        .map_err(fail)?;
        for object in &on {
            conn.execute(&format!("GRANT {privileges} ON {object} TO {account}"))
                .map_err(fail)?;
        }
        for r in &invoker {
            conn.execute(&format!("GRANT EXECUTE ON {} TO {account}", r.object()))
                .map_err(fail)?;
        }
    }
    // What the new account can really do, PUBLIC's grants included.
    let mut as_it = Conn::connect(&access.session).map_err(|source| ExecError::Connect {
        target: access.session.describe(),
        source,
    })?;
    let effective = grants(&mut as_it)?;
    let writing = writing_grants(&mut conn, &effective, &invoker, dbs)?;
    if !writing.is_empty() && !o.trust_account {
        return Err(ExecError::Replay(format!(
            "--read-only: every account of this server inherits grants that write ({}): revoke \
             them (REVOKE ... FROM PUBLIC), or give --trust-account to accept the risk",
            writing.join("; ")
        )));
    }
    let what = command.split_whitespace().next().unwrap_or(command);
    let execute = if o.grant_execute {
        format!(
            ", EXECUTE on {} SQL SECURITY INVOKER routine(s) (DEFINER routines are refused)",
            invoker.len()
        )
    } else {
        String::new()
    };
    access.note = format!(
        "read-only: {} as {user} (created for this {what} with {privileges} on {}{execute}; \
         dropped at its end)",
        if what == "replay" {
            "replaying"
        } else {
            "running"
        },
        shown(dbs, &narrowed)
    );
    Ok(access)
}

/// What the account reads, for the note: each database, or for one with DEFINER views its
/// objects counted and the views left out.
fn shown(dbs: &[String], narrowed: &std::collections::BTreeMap<String, views::Narrowed>) -> String {
    let all = on_what(dbs);
    all.iter()
        .zip(dbs.iter().map(Some).chain(std::iter::repeat(None)))
        .map(
            |(object, db)| match db.and_then(|d| narrowed.get(d).map(|n| (d, n))) {
                Some((d, n)) => format!(
                "{} table(s) and view(s) of `{d}` ({} SQL SECURITY DEFINER view(s) left out: they \
                 run with their definer's rights)",
                n.readable.len(),
                n.definer_views
            ),
                None => object.clone(),
            },
        )
        .collect::<Vec<_>>()
        .join(", ")
}

/// The user's error for an account that can write: the grants to remove, or the account to
/// create.
fn refusal(target: &ConnectOptions, writing: &[String], dbs: &[String]) -> String {
    let on = on_what(dbs);
    format!(
        "--read-only: {} can write or administer ({}); replay as an account that holds only \
         read privileges (CREATE USER 'replay'@'...' IDENTIFIED BY '...'; GRANT SELECT, SHOW \
         VIEW ON {} TO 'replay'@'...'), or give --trust-account to accept the risk",
        target.user,
        writing.join("; "),
        on.join(", ")
    )
}

/// The account's grants as `SHOW GRANTS` lists them.
fn grants(conn: &mut Conn) -> Result<Vec<String>, ExecError> {
    Ok(conn
        .query("SHOW GRANTS")
        .map_err(|e| ExecError::Replay(format!("reading the account's grants: {e}")))?
        .rows
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect())
}

/// The objects the account reads: each database of `dbs`, else everything.
fn on_what(dbs: &[String]) -> Vec<String> {
    if dbs.is_empty() {
        return vec!["*.*".into()];
    }
    dbs.iter()
        .map(|d| format!("`{}`.*", d.replace('`', "``")))
        .collect()
}

/// The hosts the account must match for the way the replay connects: a socket is
/// `localhost`; TCP to this host may be seen as `localhost` or the loopback address
/// (depending on `skip_name_resolve`); TCP elsewhere as any host.
fn hosts(e: &Endpoint) -> Vec<&'static str> {
    match e {
        Endpoint::Unix { .. } => vec!["localhost"],
        _ if e.is_local() => vec!["localhost", "127.0.0.1", "::1"],
        _ => vec!["%"],
    }
}

/// `n` random bytes.
fn random(n: usize) -> Result<Vec<u8>, ExecError> {
    let mut b = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| ExecError::Replay(format!("reading /dev/urandom: {e}")))?;
    Ok(b)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `mysql_native_password`'s stored form of `password`: `*` and SHA1(SHA1(password)) in hex.
fn native_password_hash(password: &str) -> String {
    use sha1::{Digest, Sha1};
    let twice = Sha1::digest(Sha1::digest(password.as_bytes()));
    format!("*{}", hex(&twice).to_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::grants::*;
    use super::*;

    fn lines(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn root_may_create_users_and_a_reader_may_not() {
        let root = lines(&[
            "GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` IDENTIFIED VIA \
             mysql_native_password USING 'invalid' OR unix_socket WITH GRANT OPTION",
        ]);
        assert!(may_create_users(&root));
        let reader = lines(&[
            "GRANT USAGE ON *.* TO `r`@`%`",
            "GRANT SELECT, SHOW VIEW ON `shop`.* TO `r`@`%`",
        ]);
        assert!(!may_create_users(&reader));
        // CREATE USER without GRANT OPTION cannot hand out SELECT.
        assert!(!may_create_users(&lines(&[
            "GRANT CREATE USER ON *.* TO `a`@`%`"
        ])));
    }

    #[test]
    fn grants_are_split_outside_quotes_and_column_lists() {
        let g = parse("GRANT SELECT (a, b), UPDATE (c) ON `d`.`t` TO `u`@`%`").unwrap();
        assert_eq!(g.privileges, ["SELECT", "UPDATE"]);
        assert_eq!(g.object.as_deref(), Some("`d`.`t`"));
        let g = parse("GRANT SELECT ON `a TO b`.* TO PUBLIC").unwrap();
        assert_eq!(g.object.as_deref(), Some("`a TO b`.*"));
        assert!(g.public);
        let role = parse("GRANT `writer` TO `u`@`%`").unwrap();
        assert_eq!(role.object, None);
        assert_eq!(
            database_pattern("`test\\_%`.*").as_deref(),
            Some("test\\_%")
        );
        assert_eq!(database_pattern("*.*"), None);
        assert_eq!(
            database_pattern("FUNCTION `a``b`.`f`").as_deref(),
            Some("a`b")
        );
    }

    #[test]
    fn like_patterns_match_as_the_server_does() {
        assert!(like("test", "test"));
        assert!(like("test_1", "test\\_%"));
        assert!(!like("testx1", "test\\_%"));
        assert!(like("shop", "s_o%"));
        assert!(!like("shop", "test"));
        assert!(like("Shop", "shop"));
    }

    #[test]
    fn only_read_privileges_read() {
        for p in ["USAGE", "SELECT", "SHOW VIEW"] {
            assert!(reads_only(p, false), "{p}");
        }
        assert!(!reads_only("EXECUTE", false));
        assert!(reads_only("EXECUTE", true));
        for p in [
            "INSERT",
            "ALL PRIVILEGES",
            "PROXY",
            "SUPER",
            "SHUTDOWN",
            "LOCK TABLES",
        ] {
            assert!(!reads_only(p, true), "{p}");
        }
    }

    #[test]
    fn the_stored_password_is_mysql_native_passwords_hash() {
        // SELECT PASSWORD('pw') on MariaDB 10.11.
        assert_eq!(
            native_password_hash("pw"),
            "*D821809F681A40A6E379B50D0463EFAE20BDD122"
        );
        assert_eq!(
            short("GRANT USAGE ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*AB'"),
            "GRANT USAGE ON *.* TO `u`@`%`"
        );
    }
}
