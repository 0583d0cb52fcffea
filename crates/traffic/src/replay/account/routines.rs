//! The stored routines a read-only account may execute: SQL SECURITY INVOKER ones only. An
//! INVOKER routine runs with the caller's privileges, so the account's read-only grants bound
//! what it does; a DEFINER routine runs with its definer's, which no grant to the caller
//! limits (and a read-only transaction only as long as the session keeps it). So
//! `--grant-execute` grants EXECUTE routine by routine, on the INVOKER ones the server lists,
//! and the server itself refuses a call of any other (error 1370).

use qpslab_lab::ExecError;
use qpslab_wire::Conn;

/// A stored function or procedure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Routine {
    /// Its database.
    pub schema: String,
    /// Its name.
    pub name: String,
    /// `FUNCTION` or `PROCEDURE`.
    pub kind: &'static str,
}

impl Routine {
    /// The routine as a grant's object: ``FUNCTION `db`.`f` ``, as `SHOW GRANTS` writes it.
    pub fn object(&self) -> String {
        let q = |s: &str| format!("`{}`", s.replace('`', "``"));
        format!("{} {}.{}", self.kind, q(&self.schema), q(&self.name))
    }
}

/// The SQL SECURITY INVOKER functions and procedures of databases `dbs` (none: of every
/// database), as the server reached by `conn` lists them.
pub(super) fn invoker(conn: &mut Conn, dbs: &[String]) -> Result<Vec<Routine>, ExecError> {
    let r = conn
        .query(
            "SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES \
             WHERE SECURITY_TYPE = 'INVOKER' ORDER BY 1, 2, 3",
        )
        .map_err(|e| ExecError::Replay(format!("listing the stored routines: {e}")))?;
    Ok(r.rows
        .into_iter()
        .filter_map(|row| {
            let mut row = row.into_iter().map(Option::unwrap_or_default);
            let (schema, name, kind) = (row.next()?, row.next()?, row.next()?);
            // Packages (Oracle mode) are no function or procedure to grant.
            let kind = match kind.as_str() {
                "FUNCTION" => "FUNCTION",
                "PROCEDURE" => "PROCEDURE",
                _ => return None,
            };
            let ours = dbs.is_empty() || dbs.iter().any(|d| d == &schema);
            ours.then_some(Routine { schema, name, kind })
        })
        .collect())
}

/// Whether the grant object `object` (as `SHOW GRANTS` writes it) is one of `routines`
/// (routine names are case-insensitive).
pub(super) fn is_one_of(object: &str, routines: &[Routine]) -> bool {
    routines
        .iter()
        .any(|r| r.object().eq_ignore_ascii_case(object.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_routine_is_named_as_show_grants_names_it() {
        let f = Routine {
            schema: "a`b".into(),
            name: "f_read".into(),
            kind: "FUNCTION",
        };
        assert_eq!(f.object(), "FUNCTION `a``b`.`f_read`");
        assert!(is_one_of(
            "FUNCTION `a``b`.`F_READ`",
            std::slice::from_ref(&f)
        ));
        assert!(!is_one_of(
            "PROCEDURE `a``b`.`f_read`",
            std::slice::from_ref(&f)
        ));
        assert!(!is_one_of("`a``b`.*", &[f]));
    }
}
