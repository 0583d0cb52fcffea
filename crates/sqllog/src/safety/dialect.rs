//! The server a log's statements will run on, as far as it is known: which readings of
//! executable comments its version and flavor leave open.

use super::lex::{self, ServerGuess};

/// The server a log's statements will run on, as far as it is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dialect {
    /// The version as executable comments compare it (10.11.19 is 101119); None when unknown.
    pub version: Option<u32>,
    /// MariaDB (true) or MySQL (false); None when unknown.
    pub mariadb: Option<bool>,
}

impl Dialect {
    /// Nothing known: every reading is judged.
    pub const UNKNOWN: Dialect = Dialect {
        version: None,
        mariadb: None,
    };

    /// A server of this version (101119 for 10.11.19) and flavor.
    pub fn new(version: Option<u32>, mariadb: bool) -> Dialect {
        Dialect {
            version,
            mariadb: Some(mariadb),
        }
    }

    /// The dialect of a server by its version string (`10.11.19-MariaDB-log`, `8.0.36`,
    /// `5.5.5-10.11.19-MariaDB`).
    ///
    /// ```
    /// use qpslab_sqllog::Dialect;
    /// assert_eq!(Dialect::of_server("10.11.19-MariaDB-log"), Dialect::new(Some(101119), true));
    /// assert_eq!(Dialect::of_server("8.0.36"), Dialect::new(Some(80036), false));
    /// ```
    pub fn of_server(version: &str) -> Dialect {
        let mariadb = version.to_ascii_lowercase().contains("mariadb");
        let text = match version.strip_prefix("5.5.5-") {
            Some(rest) if mariadb => rest,
            _ => version,
        };
        let mut parts = text
            .split(|c: char| !c.is_ascii_digit())
            .take(3)
            .map(|p| p.parse::<u32>().ok().filter(|&n| n < 100));
        let number = match (parts.next(), parts.next(), parts.next()) {
            (Some(Some(a)), Some(Some(b)), Some(Some(c))) => Some(a * 10_000 + b * 100 + c),
            _ => None,
        };
        Dialect {
            version: number,
            mariadb: Some(mariadb),
        }
    }

    /// The server readings of `text` to judge, or None when there are too many.
    pub(super) fn servers(&self, text: &[u8]) -> Option<Vec<ServerGuess>> {
        let flavors = self.mariadb.map_or(vec![true, false], |m| vec![m]);
        let versions = match self.version {
            Some(v) => vec![v],
            None => {
                // A server of version N runs every comment up to N: one reading per version
                // named, and one below them all.
                let mut vs = lex::comment_versions(text);
                if vs.len() > MAX_VERSIONS {
                    return None;
                }
                vs.insert(0, 0);
                vs
            }
        };
        let unsure = if lex::has_unsure_comment(text) {
            vec![false, true]
        } else {
            vec![false]
        };
        let mut out = Vec::new();
        for &mariadb in &flavors {
            for &version in &versions {
                for &unsure_runs in &unsure {
                    out.push(ServerGuess {
                        mariadb,
                        version,
                        unsure_runs,
                    });
                }
            }
        }
        Some(out)
    }
}

/// Distinct comment versions judged one by one in a text of unknown version; more is refused.
const MAX_VERSIONS: usize = 16;
