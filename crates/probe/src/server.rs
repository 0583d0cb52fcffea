//! Facts about the server: version, flavor, global variables (without secrets) and status.

use crate::error::Error;
use qpslab_core::env::ServerInfo;
use qpslab_core::status::{status_from_rows, GlobalStatus};
use qpslab_wire::{Conn, QueryResult};
use std::collections::BTreeMap;

/// Reads `@@version`, `@@version_comment` and every global variable, less those that could
/// hold a credential (see [`may_hold_secret`]).
pub fn server_info(conn: &mut Conn) -> Result<ServerInfo, Error> {
    let v = conn.query("SELECT @@version, @@version_comment")?;
    let row = v.rows.first().ok_or_else(|| Error::Format {
        what: "SELECT @@version".into(),
        detail: "no row".into(),
    })?;
    let cell = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
    let (version, version_comment) = (cell(0), cell(1));
    let vars = conn.query("SHOW GLOBAL VARIABLES")?;
    Ok(ServerInfo {
        flavor: flavor(&version, &version_comment).to_string(),
        version,
        version_comment,
        variables: variables_from_rows(pairs(&vars, "SHOW GLOBAL VARIABLES")?),
        // Seen from /proc, not from the server: the caller fills it in where it can.
        cpus: None,
    })
}

/// Reads `SHOW GLOBAL STATUS`.
pub fn global_status(conn: &mut Conn) -> Result<GlobalStatus, Error> {
    let r = conn.query("SHOW GLOBAL STATUS")?;
    Ok(status_from_rows(pairs(&r, "SHOW GLOBAL STATUS")?))
}

/// The `(name, value)` rows of a two-column SHOW result.
fn pairs<'a>(r: &'a QueryResult, what: &str) -> Result<Vec<(&'a str, Option<&'a str>)>, Error> {
    r.rows
        .iter()
        .map(|row| match row.as_slice() {
            [Some(k), v] => Ok((k.as_str(), v.as_deref())),
            _ => Err(Error::Format {
                what: what.into(),
                detail: format!("expected (name, value) rows, got {} columns", row.len()),
            }),
        })
        .collect()
}

/// `mariadb`, `percona` or `mysql`, from the version strings.
pub fn flavor(version: &str, version_comment: &str) -> &'static str {
    if version.contains("MariaDB") || version_comment.contains("MariaDB") {
        "mariadb"
    } else if version_comment.contains("Percona") || version.contains("Percona") {
        "percona"
    } else {
        "mysql"
    }
}

/// Keeps the variables that cannot hold a credential; NULL values become empty strings.
pub fn variables_from_rows<'a>(
    rows: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
) -> BTreeMap<String, String> {
    rows.into_iter()
        .map(|(k, v)| (k, v.unwrap_or("")))
        .filter(|(k, v)| !may_hold_secret(k, v))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Whether a server variable could hold a credential, by its name or its value. Errs on the
/// side of dropping: a missing harmless variable costs little, a stored password a lot.
pub fn may_hold_secret(name: &str, value: &str) -> bool {
    let name = name.to_ascii_lowercase();
    // Free-form SQL run by the server, or "user:password" pairs.
    const NAMES: &[&str] = &["init_connect", "init_slave", "wsrep_sst_auth"];
    const NAME_PARTS: &[&str] = &["password", "passwd", "pwd", "secret", "credential", "token"];
    if NAMES.contains(&name.as_str())
        || NAME_PARTS
            .iter()
            .filter(|p| **p != "token" || !name.ends_with("_token_size"))
            .any(|p| name.contains(p))
    {
        return true;
    }
    let value = value.to_ascii_lowercase();
    const VALUE_PARTS: &[&str] = &["password", "passwd", "pwd=", "secret", "identified by"];
    VALUE_PARTS.iter().any(|p| value.contains(p)) || url_with_password(&value)
}

/// True for text holding `scheme://user:pass@`.
fn url_with_password(text: &str) -> bool {
    text.match_indices("://").any(|(i, _)| {
        let rest = &text[i + 3..];
        let authority = rest
            .split(['/', '?', '#', ' ', ',', ';'])
            .next()
            .unwrap_or("");
        authority
            .rsplit_once('@')
            .is_some_and(|(userinfo, _)| userinfo.contains(':'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured() -> Vec<(&'static str, Option<&'static str>)> {
        include_str!("../tests/data/mariadb-10.11-global-variables.tsv")
            .lines()
            .map(|l| match l.split_once('\t') {
                Some((k, v)) => (k, Some(v)),
                None => (l, None),
            })
            .collect()
    }

    #[test]
    fn captured_variables_keep_settings_and_drop_secret_holders() {
        let rows = captured();
        assert!(rows.len() > 600, "{}", rows.len());
        let vars = variables_from_rows(rows.clone());
        assert_eq!(vars["innodb_buffer_pool_size"], "134217728");
        assert_eq!(vars["innodb_ft_max_token_size"], "84");
        assert!(vars.contains_key("optimizer_switch"));
        assert_eq!(vars["secure_auth"], "ON");
        for gone in [
            "report_password",
            "wsrep_sst_auth",
            "init_connect",
            "init_slave",
            "old_passwords",
        ] {
            assert!(
                rows.iter().any(|(k, _)| *k == gone),
                "{gone} not in capture"
            );
            assert!(!vars.contains_key(gone), "{gone} kept");
        }
        assert!(vars.keys().all(|k| !k.contains("password")));
        // Only a handful go.
        assert!(
            rows.len() - vars.len() < 15,
            "{} dropped",
            rows.len() - vars.len()
        );
    }

    #[test]
    fn secrets_in_values_are_caught() {
        assert!(may_hold_secret("wsrep_sst_auth", "sst:hunter2"));
        assert!(may_hold_secret(
            "wsrep_provider_options",
            "gcache.size=1G; socket.ssl_password=x"
        ));
        assert!(may_hold_secret("some_url", "https://u:p@host/x"));
        assert!(may_hold_secret(
            "init_file_sql",
            "CREATE USER x IDENTIFIED BY 'y'"
        ));
        assert!(!may_hold_secret("some_url", "https://host:443/x"));
        assert!(!may_hold_secret("innodb_ft_max_token_size", "84"));
        assert!(!may_hold_secret("max_connections", "151"));
    }

    #[test]
    fn flavors() {
        assert_eq!(flavor("10.11.19-MariaDB-0+deb12u1", "Debian 12"), "mariadb");
        assert_eq!(
            flavor(
                "8.0.36-28",
                "Percona Server (GPL), Release 28, Revision 47601f19"
            ),
            "percona"
        );
        assert_eq!(flavor("8.4.0", "MySQL Community Server - GPL"), "mysql");
    }
}
