//! The `sql_mode` names of MariaDB and MySQL, and the two flags among them that change how
//! text is read.

use super::lex::Mode;

/// The `sql_mode` flags of a value (`'ANSI,NO_BACKSLASH_ESCAPES'`), or None when it names a
/// mode this classifier does not know (the server may refuse it, or read it otherwise).
pub(crate) fn mode_of(value: &str) -> Option<Mode> {
    let mut mode = Mode::DEFAULT;
    if value.is_empty() {
        return Some(mode);
    }
    for item in value.split(',') {
        let item = item.to_ascii_uppercase();
        if !SQL_MODES.contains(&item.as_str()) {
            return None;
        }
        mode.nbe |= item == "NO_BACKSLASH_ESCAPES";
        mode.ansi |= ANSI_QUOTES_MODES.contains(&item.as_str());
    }
    Some(mode)
}

/// Modes that include `ANSI_QUOTES`.
pub(super) const ANSI_QUOTES_MODES: [&str; 7] = [
    "ANSI_QUOTES",
    "ANSI",
    "ORACLE",
    "POSTGRESQL",
    "MSSQL",
    "DB2",
    "MAXDB",
];

/// The `sql_mode` names of MariaDB and MySQL.
const SQL_MODES: [&str; 38] = [
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "IGNORE_BAD_TABLE_OPTIONS",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "POSTGRESQL",
    "ORACLE",
    "MSSQL",
    "DB2",
    "MAXDB",
    "NO_KEY_OPTIONS",
    "NO_TABLE_OPTIONS",
    "NO_FIELD_OPTIONS",
    "MYSQL323",
    "MYSQL40",
    "ANSI",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
    "NO_AUTO_CREATE_USER",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "EMPTY_STRING_IS_NULL",
    "SIMULTANEOUS_ASSIGNMENT",
    "TIME_ROUND_FRACTIONAL",
    "TIME_TRUNCATE_FRACTIONAL",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
];
