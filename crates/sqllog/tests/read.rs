//! The reader on real MariaDB logs and on MySQL logs made from the manual's examples.

use qpslab_core::fault::Blame;
use qpslab_sqllog::{open, Command, Entry, Flavor, LogError, LogReader, LogType};
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn read_all(name: &str, kind: LogType) -> (Vec<Entry>, Flavor, u64) {
    let mut r = open(&data(name), kind).unwrap();
    let entries: Vec<Entry> = r.by_ref().map(Result::unwrap).collect();
    assert_eq!(r.bytes_read(), std::fs::metadata(data(name)).unwrap().len());
    (entries, r.flavor(), r.skipped())
}

fn read_str(text: &str, kind: LogType) -> Result<(Vec<Entry>, u64), LogError> {
    let mut r = LogReader::new(text.as_bytes(), kind)?;
    let entries = r.by_ref().collect::<Result<Vec<_>, _>>()?;
    Ok((entries, r.skipped()))
}

#[test]
fn mariadb_slow_log_with_verbosity_extras() {
    let (e, flavor, skipped) = read_all("mariadb-10.11-slow.log", LogType::Slow);
    assert_eq!((flavor, skipped, e.len()), (Flavor::MariaDb, 0, 15));
    let first = &e[0];
    assert_eq!(
        (first.line, first.at_us, first.thread_id),
        (4, Some(1_795_407_949_000_000), Some(6))
    );
    assert_eq!(
        (
            first.user.as_deref(),
            first.host.as_deref(),
            first.db.as_deref()
        ),
        (Some("root"), Some("localhost"), Some("shop"))
    );
    assert_eq!(
        (first.query_time_s, first.lock_time_s),
        (Some(0.028257), Some(0.026179))
    );
    assert_eq!(
        (first.rows_sent, first.rows_examined, first.rows_affected),
        (Some(0), Some(0), Some(3))
    );
    assert_eq!(
        first.text(),
        "INSERT INTO sbtest1 VALUES (1,1,'a'),(2,2,'b'),(3,3,'c')"
    );
    let extra = |e: &Entry, name: &str| {
        e.extras
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(extra(first, "Pages_accessed"), ["10"]);
    assert_eq!(extra(first, "QC_hit"), ["No"]);
    assert_eq!(extra(first, "explain").len(), 2);
    assert!(extra(first, "explain")[1].starts_with("1\tINSERT\tsbtest1"));
    assert_eq!(
        e[4].text(),
        "SELECT c\n  FROM sbtest1\n WHERE k > 1 \n ORDER BY k"
    );
    assert_eq!(extra(&e[4], "Filesort"), ["Yes"]);
    // `Schema:` empty: no database, not the next field's text
    assert_eq!(
        (e[5].text().as_ref(), e[5].db.as_deref()),
        ("SELECT DATABASE()", None)
    );
    assert_eq!(e[7].text(), "SELECT 'it''s;' AS x, NULL");
    assert!(e.iter().all(|e| e.command == Command::Query));
    assert_eq!(e.last().unwrap().text(), "SHOW DATABASES");
}

#[test]
fn mariadb_general_log() {
    let (e, flavor, skipped) = read_all("mariadb-10.11-general.log", LogType::General);
    assert_eq!((flavor, skipped, e.len()), (Flavor::MariaDb, 0, 32));
    assert!(e.iter().all(|e| e.at_us == Some(1_795_407_949_000_000)));
    let connect = &e[4];
    assert_eq!(
        (
            connect.command.clone(),
            connect.thread_id,
            connect.user.as_deref(),
            connect.db.as_deref()
        ),
        (Command::Connect, Some(6), Some("root"), Some("shop"))
    );
    assert_eq!(
        (
            e[5].text().as_ref(),
            e[5].db.as_deref(),
            e[5].host.as_deref()
        ),
        (
            "INSERT INTO sbtest1 VALUES (1,1,'a'),(2,2,'b'),(3,3,'c')",
            Some("shop"),
            Some("localhost")
        )
    );
    assert_eq!(
        e[11].text(),
        "SELECT c\n  FROM sbtest1\n WHERE k > 1 \n ORDER BY k"
    );
    assert_eq!(e[12].command, Command::Quit);
    // thread 8 connects without a database, then `Init DB shop`
    assert_eq!(
        (e[14].text().as_ref(), e[14].db.as_deref()),
        ("SELECT DATABASE()", None)
    );
    assert_eq!(e[15].command, Command::Other("Init DB".into()));
    assert_eq!(e[16].db.as_deref(), Some("shop"));
    let kinds: Vec<&Command> = e
        .iter()
        .filter(|e| e.thread_id == Some(9))
        .map(|e| &e.command)
        .collect();
    assert!(kinds.contains(&&Command::Prepare) && kinds.contains(&&Command::Execute));
}

#[test]
fn mysql_slow_logs() {
    let (e, flavor, skipped) = read_all("mysql-8.0-slow.log", LogType::Slow);
    assert_eq!((flavor, skipped, e.len()), (Flavor::MySql, 0, 3));
    // The start is `log_slow_extra`'s `Start:`, not the `# Time:` it was logged at.
    assert_eq!(
        (e[0].at_us, e[0].thread_id, e[0].db.as_deref()),
        (Some(1_795_407_118_123_233), Some(8), Some("shop"))
    );
    assert_eq!(
        (e[0].rows_sent, e[0].lock_time_s),
        (Some(1), Some(0.000002))
    );
    let end = e[0]
        .extras
        .iter()
        .find(|(n, _)| n == "End")
        .map(|(_, v)| v.as_str());
    assert_eq!(end, Some("2026-11-23T04:11:58.123392Z"));
    assert_eq!(
        (
            e[1].text().as_ref(),
            e[1].db.as_deref(),
            e[1].host.as_deref()
        ),
        (
            "SELECT c\nFROM sbtest12\nWHERE id IN (1,2)",
            Some("shop"),
            Some("app-host")
        )
    );
    assert_eq!(
        (e[2].command.clone(), e[2].text().as_ref()),
        (Command::Quit, "administrator command: Quit")
    );
    let (e, flavor, _) = read_all("mysql-5.7-slow.log", LogType::Slow);
    // Logged at 04:11:58.500000 (its end) after 131 µs: it started 131 µs earlier.
    assert_eq!(
        (flavor, e.len(), e[0].at_us, e[0].db.as_deref()),
        (Flavor::MySql, 1, Some(1_795_407_118_499_869), Some("test"))
    );
}

#[test]
fn mysql_general_log() {
    let (e, flavor, skipped) = read_all("mysql-8.0-general.log", LogType::General);
    assert_eq!((flavor, skipped, e.len()), (Flavor::MySql, 0, 6));
    assert_eq!(
        (e[1].at_us, e[1].db.as_deref(), e[1].user.as_deref()),
        (Some(1_795_407_118_100_200), Some("shop"), Some("app"))
    );
    assert_eq!(e[2].text(), "SELECT c\nFROM sbtest12\nWHERE id IN (1,2)");
    assert_eq!(
        (e[4].text().as_ref(), e[4].db.as_deref()),
        ("SELECT 1", Some("other"))
    );
    assert_eq!(e[5].command, Command::Quit);
}

const ENTRY: &str = "# User@Host: a[a] @ h []\n# Thread_id: 1  Schema: d  QC_hit: No\n# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 0  Rows_examined: 0\nSET timestamp=1;\nSELECT 1;\n";

#[test]
fn truncated_entries_are_skipped_and_counted() {
    let header_only = "# User@Host: a[a] @ h []\n# Thread_id: 1  Schema: d  QC_hit: No\n";
    let cut = "# User@Host: a[a] @ h []\n# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 0  Rows_examined: 0\nSELECT 1, 2";
    let (e, skipped) =
        read_str(&format!("{ENTRY}{header_only}{ENTRY}{cut}"), LogType::Slow).unwrap();
    assert_eq!((e.len(), skipped), (2, 2));
    let (e, skipped) = read_str(&format!("{ENTRY}SELECT 2;\n"), LogType::Slow).unwrap();
    assert_eq!(
        (e.len(), skipped, e[0].text().as_ref()),
        (1, 0, "SELECT 1;\nSELECT 2")
    );
    let general = "261123  4:11:58\t    5 Query\tSELECT 1\n\t\t    5 Query\tSELECT 2";
    let (e, skipped) = read_str(general, LogType::General).unwrap();
    assert_eq!((e.len(), skipped), (1, 1));
}

#[test]
fn wrong_or_garbage_input_is_an_unknown_format() {
    let general = "261123  4:11:58\t    5 Query\tSELECT 1\n";
    let cases = [
        (general, LogType::Slow, "use --log-type general"),
        (ENTRY, LogType::General, "use --log-type slow"),
        (
            "\u{1}\u{2}PK\u{3}garbage\n",
            LogType::Slow,
            "not a MariaDB or MySQL slow log: it starts with binary data",
        ),
        (
            "hello world\n",
            LogType::General,
            "not a MariaDB or MySQL general log: its first line is \"hello world\"",
        ),
        ("", LogType::Slow, "empty"),
        ("\n\n", LogType::Slow, "blank"),
    ];
    for (text, kind, needle) in cases {
        match read_str(text, kind) {
            Err(e @ LogError::UnknownFormat(_)) => {
                assert!(e.to_string().contains(needle), "{e} lacks {needle}");
                assert!(e.is_user_error() && !e.to_string().contains('\n'));
            }
            other => panic!("{text:?}: {:?}", other.map(|(e, s)| (e.len(), s))),
        }
    }
}

#[test]
fn a_missing_file_is_a_user_error() {
    let Err(e) = open(&data("no-such.log"), LogType::Slow) else {
        panic!("opened")
    };
    assert!(
        e.is_user_error() && e.to_string().starts_with("cannot open "),
        "{e}"
    );
}

#[test]
fn a_restart_banner_mid_log_ends_an_entry() {
    let banner = "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB (Debian). started with:\nTcp port: 3306  Unix socket: /s\nTime\t\t    Id Command\tArgument\n";
    let (e, skipped) = read_str(&format!("{ENTRY}{banner}{ENTRY}"), LogType::Slow).unwrap();
    assert_eq!((e.len(), skipped, e[1].line), (2, 0, 9));
}

#[test]
fn a_log_cut_mid_entry_starts_at_its_first_whole_entry() {
    let slow = std::fs::read_to_string(data("mariadb-10.11-slow.log")).unwrap();
    let cut = &slow[slow.find("Rows_affected: 3").unwrap()..];
    let (e, skipped) = read_str(cut, LogType::Slow).unwrap();
    assert_eq!(
        (e.len(), skipped, e[0].text().as_ref()),
        (14, 1, "INSERT INTO sbtest12 VALUES (1,1,'x')")
    );
    let general = std::fs::read_to_string(data("mysql-8.0-general.log")).unwrap();
    let cut = &general[general.find("FROM sbtest12").unwrap()..];
    let (e, skipped) = read_str(cut, LogType::General).unwrap();
    assert_eq!((e.len(), skipped, e[0].text().as_ref()), (3, 1, "other"));
    let prose = "This is a README.\nIt has lines.\n".repeat(200);
    let Err(err) = read_str(&prose, LogType::Slow) else {
        panic!("read prose")
    };
    assert!(
        err.to_string()
            .ends_with("its first line is \"This is a README.\""),
        "{err}"
    );
}
