//! The classifier against issue 34's hostile statements and their variants: executable
//! comments by version, sql_mode, quoted names, dynamic SQL, what the default mode refuses.

use super::tests::{check, effect};
use super::*;
use Effect::*;

/// A classifier for a MariaDB 10.11 session.
fn mariadb_10_11() -> Classifier {
    Classifier::new(Dialect::new(Some(101100), true))
}

/// `sql` run in order in one session of `c`: the verdict on each.
fn session(c: &mut Classifier, sqls: &[&str]) -> Vec<Effect> {
    sqls.iter().map(|s| c.classify(s).effect).collect()
}

fn check_on(dialect: Dialect, cases: &[(&str, Effect)]) {
    for (sql, want) in cases {
        let got = Classifier::new(dialect).classify(sql);
        assert_eq!(got.effect, *want, "{sql} on {dialect:?} ({got:?})");
    }
}

#[test]
fn issue_34_versioned_comments_a_server_ignores_do_not_hide_the_statement() {
    let cases = [
        ("/*!999999 EXPLAIN */ DELETE FROM t", Write),
        ("/*M!999999 EXPLAIN */ UPDATE t SET v=0", Write),
        ("/*!50700 EXPLAIN */\nDELETE\nFROM t", Write),
        ("/*!999999 EXPLAIN */ SHUTDOWN", Admin),
        ("DROP /*!999999 TEMPORARY */ TABLE t", Destructive),
        // Variants: spacing, case, other versions, MySQL-only versions MariaDB skips.
        ("/*!999999EXPLAIN*/DELETE FROM t", Write),
        ("/*!99999 explain */ delete from t", Write),
        ("/*!80000 EXPLAIN */ DELETE FROM t", Write),
        ("/*M!110000 EXPLAIN */ update t set v=0", Write),
        ("/*!999999 SELECT 1; */ SHUTDOWN", Admin),
        (
            "  /*!999999 EXPLAIN */ /*!999999 EXPLAIN */ sHuTdOwN",
            Admin,
        ),
        ("drop /*!999999 temporary */ /* x */ table t", Destructive),
        // What this server runs is still read.
        ("/*!100000 SHUTDOWN */", Admin),
        ("/*M!100000 SHUTDOWN */", Admin),
        ("/*!40101 EXPLAIN */ DELETE FROM t", Read),
        ("/*!999999 DELETE FROM t */ SELECT 1", Read),
    ];
    check_on(Dialect::new(Some(101100), true), &cases);
    // Version unknown: both readings, the worse kept.
    check(&cases[..12]);
    check(&[("/*!40101 EXPLAIN */ DELETE FROM t", Write)]);
    check(&[("/*!999999 DELETE FROM t */ SELECT 1", Write)]);
    // MySQL reads /*M! as a comment and a sixth digit either way.
    check_on(
        Dialect::new(Some(80036), false),
        &[
            ("/*M! EXPLAIN */ DELETE FROM t", Write),
            ("/*!800360 EXPLAIN */ DELETE FROM t", Write),
            ("/*!80036 EXPLAIN */ DELETE FROM t", Read),
            ("/*!80037 EXPLAIN */ DELETE FROM t", Write),
        ],
    );
    // Fingerprints fold the version and lowercase the marker: both readings.
    check(&[
        ("/*!? explain */ delete from t", Write),
        ("/*m!? explain */ update t set v=?", Write),
    ]);
}

#[test]
fn issue_34_dynamic_sql_is_server_level() {
    let mut c = mariadb_10_11();
    let got = session(
        &mut c,
        &[
            "PREPARE s FROM REPLACE('SELECT 1 FROM t', 'SELECT 1','DELETE')",
            "EXECUTE s",
            "EXECUTE IMMEDIATE 'SELECT 1 INTO' ' OUTFILE ''/tmp/x'''",
            "PREPARE s FROM 'SELECT 1'",
            "execute   immediate\n'SELECT 1'",
            "/*!100000 PREPARE */ s FROM @q",
            "SET GLOBAL x=1; EXECUTE s",
            "DEALLOCATE PREPARE s",
        ],
    );
    assert_eq!(
        got,
        [Admin, Admin, Admin, Admin, Admin, Admin, Admin, Session]
    );
    let why = classify("EXECUTE s").why;
    assert!(why.contains("dynamic SQL"), "{why}");
}

#[test]
fn issue_34_no_backslash_escapes_moves_where_a_string_ends() {
    let outfile = r"SELECT '\' INTO OUTFILE '/tmp/x' #'";
    let call = r"SELECT '\', db.f_del() #'";
    for set in [
        "SET sql_mode='NO_BACKSLASH_ESCAPES'",
        "SET SESSION sql_mode = 'no_backslash_escapes'",
        "set @@sql_mode := 'STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES'",
        "SET @@session.sql_mode='NO_BACKSLASH' '_ESCAPES'",
        "SET LOCAL sql_mode = NO_BACKSLASH_ESCAPES",
        "SET @@SESSION.`sql_mode`='NO_BACKSLASH_ESCAPES'",
        "SET sql_mode=CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')",
        "SET sql_mode=@m",
        "SET sql_mode=2097152",
        "SET autocommit=1, sql_mode='NO_BACKSLASH_ESCAPES'",
        "/*!40101 SET sql_mode='NO_BACKSLASH_ESCAPES' */",
    ] {
        let mut c = mariadb_10_11();
        assert_eq!(c.classify(set).effect, Session, "{set}");
        assert_eq!(c.classify(outfile).effect, Admin, "{outfile} after {set}");
        assert_eq!(c.classify(call).effect, Write, "{call} after {set}");
        // Still so later in the session.
        assert_eq!(c.classify("SELECT 1").effect, Read);
        assert_eq!(
            c.classify(outfile).effect,
            Admin,
            "{outfile} later, after {set}"
        );
    }
    // In one text too.
    let mut c = mariadb_10_11();
    let text = format!("SET sql_mode='NO_BACKSLASH_ESCAPES'; {outfile}");
    assert_eq!(c.classify(&text).effect, Admin);
    // Without the mode the string does not end: a read.
    let mut c = mariadb_10_11();
    assert_eq!(c.classify(outfile).effect, Read);
    assert_eq!(c.classify(call).effect, Read);
    // A session that starts in the mode, or in an unknown one.
    let nbe = mariadb_10_11().with_sql_mode(Some("STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES"));
    assert_eq!(nbe.peek(outfile).effect, Admin);
    assert_eq!(mariadb_10_11().with_sql_mode(None).peek(call).effect, Write);
    // Leaving the mode with a statement that may fail keeps both readings.
    let mut c = mariadb_10_11();
    c.classify("SET sql_mode='NO_BACKSLASH_ESCAPES'");
    c.classify("SET sql_mode='', @a = (SELECT x FROM missing)");
    assert_eq!(c.classify(outfile).effect, Admin);
    // A SET that is the whole text and only sets the mode settles it.
    c.classify("SET sql_mode=''");
    assert_eq!(c.classify(outfile).effect, Read);
    // SET STATEMENT does not change the session, but its own statement is read both ways.
    let mut c = mariadb_10_11();
    let stmt = format!("SET STATEMENT sql_mode='NO_BACKSLASH_ESCAPES' FOR {outfile}");
    assert_eq!(c.classify(&stmt).effect, Admin);
    assert_eq!(c.classify(outfile).effect, Read);
}

#[test]
fn issue_34_ansi_quotes_make_double_quotes_names() {
    let mut c = mariadb_10_11();
    c.classify("SET sql_mode='ANSI'");
    check_ansi(&mut c);
    let mut c = mariadb_10_11();
    c.classify("SET sql_mode = 'ORACLE'");
    check_ansi(&mut c);
    // Unknown mode: both readings.
    let mut c = mariadb_10_11().with_sql_mode(None);
    check_ansi(&mut c);
}

fn check_ansi(c: &mut Classifier) {
    assert_eq!(
        c.classify(r#"DELETE FROM "mysql".global_priv"#).effect,
        Admin
    );
    assert_eq!(c.classify(r#"SELECT "db"."f_del"()"#).effect, Write);
    // `#` still starts a comment under ANSI_QUOTES.
    assert_eq!(c.classify("SELECT 1 # ; SHUTDOWN").effect, Read);
    assert_eq!(c.classify(r#"SELECT "a'b" FROM t"#).effect, Read);
}

#[test]
fn issue_34_quoted_names_are_read_as_names() {
    let mut c = mariadb_10_11();
    for (sql, want) in [
        ("SET @@global.`max_connections`=13", Admin),
        ("SET @@`global`.max_connections=13", Admin),
        ("SET @@ global . max_connections = 13", Admin),
        ("SET `global` max_connections=13", Admin),
        ("SET GLOBAL `max_connections`=13", Admin),
        ("SET @@session.`sql_log_bin`=0", Admin),
        ("SET `sql_log_bin`=0", Admin),
        ("SET @`global`=1", Session),
        ("SET @x = @@global.max_connections", Session),
        ("SELECT `db`.`f_del`()", Write),
        ("SELECT `drop` FROM `shutdown`", Read),
    ] {
        assert_eq!(c.classify(sql).effect, want, "{sql}");
    }
}

#[test]
fn issue_34_the_default_mode_does_not_destroy() {
    check_on(
        Dialect::new(Some(101100), true),
        &[
            ("CREATE OR REPLACE TABLE t (a int)", Destructive),
            ("create or replace database shop", Destructive),
            ("CREATE OR REPLACE VIEW v AS SELECT 1", Destructive),
            ("CREATE OR REPLACE SEQUENCE s", Destructive),
            ("CREATE OR REPLACE TEMPORARY TABLE t (a int)", Ddl),
            ("DROP /*!999999 TEMPORARY */ TABLE t", Destructive),
            ("DROP /*!100000 TEMPORARY */ TABLE t", Ddl),
            ("ALTER TABLE t DISCARD TABLESPACE", Destructive),
            ("alter table t import tablespace", Destructive),
            ("ALTER TABLE t ENGINE=BLACKHOLE", Destructive),
            ("ALTER ONLINE IGNORE TABLE t DROP COLUMN a", Destructive),
            ("OPTIMIZE TABLE t", Destructive),
            ("REPAIR TABLE t USE_FRM", Destructive),
            ("DROP SEQUENCE s", Destructive),
            ("DELETE FROM mysql.global_priv", Admin),
            ("DELETE FROM `mysql`.`global_priv`", Admin),
            ("delete from MySQL . global_priv", Admin),
            ("INSERT INTO mysql.user VALUES (1)", Admin),
            ("UPDATE t, mysql.db SET t.a = 1", Admin),
            ("DROP TABLE mysql.global_priv", Admin),
            ("CREATE TABLE mysql.x (a int)", Admin),
            ("TRUNCATE performance_schema.setup_instruments", Admin),
            ("SELECT * FROM mysql.user", Read),
            (
                "CREATE EVENT e ON SCHEDULE EVERY 1 SECOND DO DELETE FROM t",
                Admin,
            ),
            ("ALTER EVENT e ENABLE", Admin),
            ("BEGIN NOT ATOMIC DELETE FROM t; END", Admin),
            ("BEGIN DELETE FROM t; END", Admin),
            ("begin work", Session),
            ("SELECT LOAD_FILE('/etc/passwd')", Admin),
            ("SHOW STATUS WHERE db.f_del() = 1", Write),
            ("SET @a = db.f_del()", Write),
            (
                "EXPLAIN SELECT * FROM t WHERE a = (SELECT db.f_del())",
                Write,
            ),
            (
                "SET STATEMENT max_statement_time=1 FOR DELETE FROM t",
                Write,
            ),
            (
                "SET STATEMENT max_statement_time=1 FOR CREATE OR REPLACE TABLE t (a int)",
                Destructive,
            ),
        ],
    );
    // The current database counts: from the log, or from USE.
    let mut c = mariadb_10_11();
    c.set_database(Some("mysql"));
    assert_eq!(c.classify("DELETE FROM global_priv").effect, Admin);
    assert_eq!(c.classify("SELECT * FROM global_priv").effect, Read);
    c.set_database(Some("shop"));
    assert_eq!(c.classify("DELETE FROM t").effect, Write);
    assert_eq!(c.classify("USE `mysql`").effect, Session);
    assert_eq!(c.classify("DELETE FROM global_priv").effect, Admin);
    assert_eq!(c.classify("USE shop").effect, Session);
    assert_eq!(c.classify("DELETE FROM t").effect, Write);
    assert_eq!(
        c.classify("USE mysql; DELETE FROM global_priv").effect,
        Admin
    );
}

#[test]
fn issue_34_xa_prepare_is_not_read_only() {
    let ro = Policy {
        read_only: true,
        ..Policy::default()
    };
    let mut c = mariadb_10_11();
    let got = session(
        &mut c,
        &[
            "XA START 'x'",
            "SELECT 1",
            "XA END 'x'",
            "XA PREPARE 'x'",
            "XA COMMIT 'x'",
            "XA ROLLBACK 'y'",
            "XA RECOVER",
        ],
    );
    assert_eq!(got, [Session, Read, Session, Write, Write, Write, Read]);
    let why = ro.refusal(&classify("xa prepare 'x'")).unwrap();
    assert!(
        why.contains("--read-only") && why.contains("outlives"),
        "{why}"
    );
}

#[test]
fn hostile_text_is_read_without_being_fooled() {
    check(&[
        // `/*!` inside a string is no comment; a string inside a comment is no string.
        ("SELECT '/*!999999' DELETE FROM t", Write),
        ("SELECT '/*! SHUTDOWN */'", Read),
        ("SELECT 1 /* ' */; SHUTDOWN", Admin),
        // `--` needs a space or control character after it.
        ("SELECT 1 --\tx\n; SHUTDOWN", Admin),
        ("SELECT 1 --x; SHUTDOWN", Admin),
        ("SELECT 1 -- x; SHUTDOWN", Read),
        // Non-nesting comments: the first `*/` ends a comment.
        ("/* /* */ SHUTDOWN", Admin),
        ("/* a /*! b */ SHUTDOWN", Admin),
        // Unicode around keywords.
        ("SELECT 'é'; SHUTDOWN", Admin),
        ("SELECT `é`.`ƒ`()", Write),
        ("é; SHUTDOWN", Admin),
        // Adjacent strings across a comment.
        ("SELECT 'a' /* */ 'b' INTO OUTFILE '/tmp/x'", Admin),
        // A skipped versioned comment after a `;`, two in a row, a function in EXPLAIN's
        // subquery (the optimizer may run it), a block after BEGIN.
        ("SELECT 1; /*!999999 EXPLAIN */ SHUTDOWN", Admin),
        (
            "/*M!999999 EXPLAIN */ /*!999999 EXPLAIN */ DELETE FROM t",
            Write,
        ),
        (
            "EXPLAIN SELECT 1 FROM t WHERE a = (SELECT `db`.`f`())",
            Write,
        ),
        ("BEGIN UPDATE t SET v = 0; END", Admin),
    ]);
}

#[test]
fn deep_nesting_and_huge_text_are_read_in_linear_time() {
    let deep = format!("{}SELECT 1{}", "(".repeat(100_000), ")".repeat(100_000));
    assert_eq!(effect(&deep), Read);
    let deep_shutdown = format!(
        "SELECT {}1{}; SHUTDOWN",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    assert_eq!(effect(&deep_shutdown), Admin);
    let comments = "/*!".repeat(100_000) + "SHUTDOWN" + &"*/".repeat(100_000);
    assert_eq!(effect(&comments), Admin);
    let sets = "SET sql_mode=@m;".repeat(5_000) + r"SELECT '\' INTO OUTFILE '/tmp/x' #'";
    let started = std::time::Instant::now();
    assert_eq!(effect(&sets), Admin);
    // Many distinct versions in a text of unknown version: refused, not judged 2^n ways.
    let versions: String = (0..40)
        .map(|n| format!("/*!{} SELECT */ ", 50000 + n))
        .collect();
    assert_eq!(effect(&versions), Admin);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn dialects_come_from_version_strings() {
    assert_eq!(
        Dialect::of_server("10.11.19-MariaDB-log"),
        Dialect::new(Some(101119), true)
    );
    assert_eq!(
        Dialect::of_server("5.5.5-10.6.2-MariaDB"),
        Dialect::new(Some(100602), true)
    );
    assert_eq!(
        Dialect::of_server("8.0.36-28"),
        Dialect::new(Some(80036), false)
    );
    assert_eq!(Dialect::of_server("garbage").version, None);
}

#[test]
fn issue_34_read_write_transactions_are_writes() {
    check(&[
        ("SET SESSION TRANSACTION READ WRITE", Write),
        ("SET TRANSACTION READ WRITE", Write),
        (
            "set local transaction isolation level read committed, read write",
            Write,
        ),
        ("START TRANSACTION READ WRITE", Write),
        (
            "START TRANSACTION WITH CONSISTENT SNAPSHOT, /* x */ READ WRITE",
            Write,
        ),
        ("SET SESSION tx_read_only=0", Write),
        ("SET @@session.transaction_read_only = OFF", Write),
        ("SET transaction_read_only := 0", Write),
        ("SET STATEMENT tx_read_only=0 FOR SELECT 1", Write),
        ("SET @a = 1, `tx_read_only` = 0", Write),
        ("/*!50000 SET SESSION TRANSACTION READ WRITE */", Write),
        ("SET GLOBAL TRANSACTION READ WRITE", Admin),
        // What keeps it read-only stays a session statement.
        ("SET SESSION TRANSACTION READ ONLY", Session),
        ("START TRANSACTION READ ONLY", Session),
        ("SET SESSION tx_read_only = 1", Session),
        ("SET transaction_read_only=ON", Session),
        ("SELECT 'read write transaction'", Read),
    ]);
    let ro = Policy {
        read_only: true,
        ..Policy::default()
    };
    let why = ro.refusal(&classify("SET TRANSACTION READ WRITE")).unwrap();
    assert!(why.contains("READ WRITE undoes"), "{why}");
}

#[test]
fn issue_34_dropping_stored_code_or_a_view_is_destructive() {
    check_on(
        Dialect::new(Some(101100), true),
        &[
            ("DROP FUNCTION f_del", Destructive),
            ("drop procedure if exists p", Destructive),
            ("DROP TRIGGER t_bi", Destructive),
            ("DROP EVENT e", Destructive),
            ("DROP VIEW IF EXISTS v", Destructive),
            ("DROP /*!999999 TEMPORARY */ VIEW v", Destructive),
            ("DROP PACKAGE pkg", Destructive),
            ("DROP INDEX k ON t", Ddl),
            ("RENAME TABLE t TO t_old", Ddl),
            ("DROP FUNCTION sys_exec", Admin),
        ],
    );
}
