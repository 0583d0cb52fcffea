//! `--init-sql FILE`: plain SQL statements run once, in order, on a control connection before
//! the measured phases (a script workload's schema and its generated rows).

use super::split::{split, Piece};
use super::{check_size, ScriptError};
use qpslab_core::input::excerpt;
use qpslab_core::workload::ScriptSource;
use qpslab_wire::Conn;

/// The statements of an init file with their lines. Meta-commands and `:variables` have no
/// meaning there and are refused, naming `FILE:LINE`.
pub fn init_statements(src: &ScriptSource) -> Result<Vec<(u32, String)>, ScriptError> {
    let err = |line, message: String| ScriptError {
        file: src.name.clone(),
        line,
        message,
    };
    check_size(src)?;
    let pieces = split(&src.text).map_err(|(l, m)| err(l, m))?;
    let mut out = Vec::with_capacity(pieces.len());
    for p in pieces {
        match p {
            Piece::Sql { line, params, .. } if !params.is_empty() => {
                let m = format!(
                    "':{}': an init file takes no variables",
                    excerpt(&params[0])
                );
                return Err(err(line, m));
            }
            Piece::Sql { line, sql, .. } => out.push((line, sql)),
            Piece::Meta { line, cmd, .. } => {
                return Err(err(
                    line,
                    format!("'\\{}': an init file takes no meta-commands", excerpt(&cmd)),
                ))
            }
        }
    }
    Ok(out)
}

/// Runs the init file's statements on `conn`; the first failure names its `FILE:LINE` and the
/// server's message. Returns how many statements ran.
pub fn run_init(conn: &mut Conn, src: &ScriptSource) -> Result<usize, ScriptError> {
    let statements = init_statements(src)?;
    for (line, sql) in &statements {
        // Results (a SELECT in the file) are read and dropped.
        conn.query(sql).map_err(|e| ScriptError {
            file: src.name.clone(),
            line: *line,
            message: e.to_string(),
        })?;
    }
    Ok(statements.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(text: &str) -> ScriptSource {
        ScriptSource {
            name: "init.sql".into(),
            path: "init.sql".into(),
            weight: 1,
            text: text.into(),
        }
    }

    #[test]
    fn statements_keep_their_lines() {
        let s = init_statements(&src(
            "-- schema\nCREATE TABLE t (id INT);\n\nINSERT INTO t\n SELECT seq FROM seq_1_to_9;\n",
        ))
        .unwrap();
        assert_eq!(
            s,
            vec![
                (2, "CREATE TABLE t (id INT)".to_string()),
                (4, "INSERT INTO t\n SELECT seq FROM seq_1_to_9".to_string())
            ]
        );
    }

    #[test]
    fn variables_and_meta_commands_are_refused() {
        let e = init_statements(&src("SELECT 1;\nSELECT :x;\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "init.sql:2: ':x': an init file takes no variables"
        );
        let e = init_statements(&src("\\set a 1\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "init.sql:1: '\\set': an init file takes no meta-commands"
        );
    }
}
