use super::*;
use Effect::*;

fn effect(sql: &str) -> Effect {
    classify(sql).effect
}

fn check(cases: &[(&str, Effect)]) {
    for (sql, want) in cases {
        assert_eq!(effect(sql), *want, "{sql} ({:?})", classify(sql));
    }
}

#[test]
fn the_hostile_statements_of_issue_25_are_server_level_or_destructive() {
    check(&[
        ("SET GLOBAL max_connections=11", Admin),
        ("SET PASSWORD FOR root@localhost = PASSWORD('pwned')", Admin),
        ("INSTALL SONAME 'ha_blackhole'", Admin),
        ("FLUSH TABLES", Admin),
        ("SHUTDOWN", Admin),
        ("DROP DATABASE shop", Destructive),
        ("CREATE USER 'x'@'%' IDENTIFIED BY 'y'", Admin),
    ]);
}

#[test]
fn reads() {
    check(&[
        ("SELECT 1", Read),
        ("select c from sbtest1 where id=?", Read),
        ("(select a from t) union (select b from u)", Read),
        ("((SELECT 1))", Read),
        ("show tables", Read),
        ("SHOW GLOBAL STATUS", Read),
        ("explain select * from t", Read),
        ("EXPLAIN DELETE FROM t", Read),
        ("describe t", Read),
        ("desc t", Read),
        ("help 'select'", Read),
        ("with c as (select 1) select * from c", Read),
        ("VALUES (1), (2)", Read),
        ("TABLE t", Read),
        ("DO SLEEP(1)", Read),
        ("CHECK TABLE t", Read),
        ("HANDLER t READ FIRST", Read),
        // Locking reads change nothing.
        ("select * from t where id=1 for update", Read),
        ("SELECT * FROM t LOCK IN SHARE MODE", Read),
        ("select a into @x from t", Read),
        // Keywords inside literals and quoted names are no keywords.
        ("select 'drop database x; shutdown' from t", Read),
        ("select `drop`, \"shutdown\" from `delete`", Read),
        ("select * from t where a = 'it''s; SHUTDOWN'", Read),
        ("select * from t where a = 'x\\'; SHUTDOWN'", Read),
        ("select now(), concat(a, b), lower(c) from t", Read),
        ("select previous value for s", Read),
        ("SELECT GET_LOCK('a', 1)", Read),
    ]);
}

#[test]
fn comments_and_whitespace_are_skipped_and_executable_comments_read() {
    check(&[
        ("  \n\t /* app=shop */ SELECT 1", Read),
        ("-- a comment\nSELECT 1", Read),
        ("# a comment\nselect 1", Read),
        ("/*+ MAX_EXECUTION_TIME(10) */ select 1", Read),
        ("SELECT 1 -- ; SHUTDOWN", Read),
        ("SELECT 1 # ; SHUTDOWN", Read),
        ("SELECT 1 /* ; SHUTDOWN */", Read),
        ("/* SHUTDOWN */ SELECT 1", Read),
        // The server runs what executable comments hold.
        ("/*! SHUTDOWN */", Admin),
        ("/*!50001 SHUTDOWN */", Admin),
        ("/*M! SHUTDOWN */", Admin),
        ("/*M!100100 SET GLOBAL max_connections=11 */", Admin),
        // Their fingerprints too (lowercased, the version folded).
        ("/*m!? shutdown */", Admin),
        ("/*!? shutdown */", Admin),
        ("SELECT 1 /*!, 2; DROP DATABASE x */", Destructive),
        (
            "/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */",
            Session,
        ),
        ("sHuTdOwN", Admin),
        ("  Set   Global max_connections = 11", Admin),
        // `--` without a space is two minus signs, not a comment.
        ("SELECT 1--1; SHUTDOWN", Admin),
    ]);
}

#[test]
fn every_statement_of_a_multi_statement_text_counts() {
    check(&[
        ("SELECT 1; SHUTDOWN", Admin),
        ("SELECT 1; DROP TABLE t;", Destructive),
        ("select 1; update t set a = 1", Write),
        ("BEGIN; SELECT 1; COMMIT", Session),
        (";;", Session),
        ("", Session),
    ]);
}

#[test]
fn server_level_statements() {
    check(&[
        ("SET @@global.max_connections = 11", Admin),
        ("set @@GLOBAL.x=1", Admin),
        ("SET PERSIST max_connections = 11", Admin),
        ("SET PERSIST_ONLY x = 1", Admin),
        ("set @@persist.x = 1", Admin),
        ("SET autocommit = 0, GLOBAL max_connections = 11", Admin),
        ("SET sql_log_bin = 0", Admin),
        ("SET SESSION sql_log_bin = 0", Admin),
        ("SET @@session.sql_log_bin = 0", Admin),
        (
            "SET GLOBAL TRANSACTION ISOLATION LEVEL READ COMMITTED",
            Admin,
        ),
        ("SET DEFAULT ROLE r FOR u", Admin),
        ("SET STATEMENT max_statement_time=1 FOR SHUTDOWN", Admin),
        ("KILL 12", Admin),
        ("kill query 12", Admin),
        ("CREATE USER u", Admin),
        ("create or replace user u", Admin),
        ("DROP USER IF EXISTS u", Admin),
        ("ALTER USER root@localhost IDENTIFIED BY 'x'", Admin),
        ("RENAME USER a TO b", Admin),
        ("CREATE ROLE r", Admin),
        ("DROP ROLE r", Admin),
        ("GRANT ALL ON *.* TO u", Admin),
        ("REVOKE ALL ON *.* FROM u", Admin),
        ("INSTALL PLUGIN blackhole SONAME 'ha_blackhole'", Admin),
        ("UNINSTALL SONAME 'ha_blackhole'", Admin),
        ("UNINSTALL PLUGIN blackhole", Admin),
        ("FLUSH PRIVILEGES", Admin),
        ("flush no_write_to_binlog tables", Admin),
        ("RESET MASTER", Admin),
        ("RESET QUERY CACHE", Admin),
        ("CHANGE MASTER TO MASTER_HOST='x'", Admin),
        ("CHANGE REPLICATION SOURCE TO SOURCE_HOST='x'", Admin),
        ("START SLAVE", Admin),
        ("START REPLICA", Admin),
        ("STOP SLAVE", Admin),
        ("STOP REPLICA", Admin),
        ("PURGE BINARY LOGS BEFORE NOW()", Admin),
        ("LOAD DATA INFILE '/etc/passwd' INTO TABLE t", Admin),
        ("LOAD DATA LOCAL INFILE 'x' INTO TABLE t", Admin),
        ("SELECT * FROM t INTO OUTFILE '/tmp/x'", Admin),
        ("select a into dumpfile '/tmp/x' from t", Admin),
        (
            "CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (HOST 'x')",
            Admin,
        ),
        ("DROP SERVER s", Admin),
        ("CREATE FUNCTION f RETURNS STRING SONAME 'udf.so'", Admin),
        (
            "CREATE AGGREGATE FUNCTION f RETURNS INTEGER SONAME 'udf.so'",
            Admin,
        ),
        ("CREATE PROCEDURE p() SHUTDOWN", Admin),
        (
            "CREATE DEFINER=root@localhost EVENT e ON SCHEDULE EVERY 1 SECOND DO SHUTDOWN",
            Admin,
        ),
        (
            "CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET NEW.a = 1",
            Admin,
        ),
        ("BEGIN NOT ATOMIC SHUTDOWN; END", Admin),
        ("lbl: BEGIN NOT ATOMIC SELECT 1; END", Admin),
        ("IF 1 THEN SHUTDOWN; END IF", Admin),
        ("BINLOG 'AAAA'", Admin),
        ("LOCK INSTANCE FOR BACKUP", Admin),
        ("BACKUP STAGE START", Admin),
        ("CACHE INDEX t IN c", Admin),
        ("RESTART", Admin),
    ]);
}

#[test]
fn destructive_ddl() {
    check(&[
        ("DROP DATABASE shop", Destructive),
        ("drop schema if exists shop", Destructive),
        ("DROP TABLE t", Destructive),
        ("DROP TABLE IF EXISTS t, u", Destructive),
        ("TRUNCATE TABLE t", Destructive),
        ("truncate t", Destructive),
        // A temporary table is the session's own.
        ("DROP TEMPORARY TABLE t", Ddl),
    ]);
}

#[test]
fn writes_and_schema_changes() {
    check(&[
        ("insert into t values (1)", Write),
        ("UPDATE t SET a=1", Write),
        ("DELETE FROM t", Write),
        ("REPLACE INTO t VALUES (1)", Write),
        ("CALL p()", Write),
        ("with c as (select 1) update t set a = 1", Write),
        ("SELECT shop.bump(1)", Write),
        ("select `shop`.`bump`(1)", Write),
        ("SELECT NEXTVAL(s)", Write),
        ("select next value for s", Write),
        ("ANALYZE SELECT 1", Read),
        ("ANALYZE FORMAT=JSON DELETE FROM t", Write),
        ("EXPLAIN ANALYZE SELECT 1", Read),
        ("frobnicate the server", Write),
        ("PREPARE s FROM @sql", Admin),
        ("EXECUTE IMMEDIATE CONCAT('SHUT', 'DOWN')", Admin),
        ("SELECT sys_exec('touch /tmp/x')", Admin),
        ("DROP TABLES a, b", Destructive),
        ("PREPARE s FROM 'SELECT ?'", Admin),
        ("PREPARE s FROM 'SHUTDOWN'", Admin),
        ("EXECUTE IMMEDIATE 'DROP DATABASE x'", Admin),
        ("create table t (a int)", Ddl),
        ("CREATE TABLE user (a int)", Ddl),
        (
            "CREATE DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW v AS SELECT 1",
            Ddl,
        ),
        (
            "CREATE ALGORITHM=MERGE DEFINER = CURRENT_USER VIEW role AS SELECT 1",
            Ddl,
        ),
        ("ALTER TABLE t ADD COLUMN b INT", Destructive),
        ("CREATE INDEX i ON t (a)", Ddl),
        ("DROP INDEX i ON t", Ddl),
        ("DROP PROCEDURE p", Ddl),
        ("RENAME TABLE a TO b", Ddl),
        ("OPTIMIZE TABLE t", Destructive),
        ("ANALYZE TABLE t", Ddl),
        ("LOCK TABLES t WRITE", Ddl),
    ]);
}

#[test]
fn session_statements() {
    check(&[
        ("BEGIN", Session),
        ("commit", Session),
        ("ROLLBACK TO SAVEPOINT a", Session),
        ("START TRANSACTION READ ONLY", Session),
        ("SET autocommit=0", Session),
        ("SET NAMES utf8mb4", Session),
        ("set @a = 'global', @b = 2", Session),
        ("SET @sql_log_bin = 0", Session),
        // Reading a global is no change to it.
        ("SET @saved = @@GLOBAL.sql_mode", Session),
        ("SET @a := @@global.max_connections, @b = 1", Session),
        ("SET @@sql_log_bin := 0", Admin),
        (
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            Session,
        ),
        ("SET ROLE r", Session),
        ("SET STATEMENT max_statement_time=1 FOR SELECT 1", Read),
        ("use test", Session),
        ("UNLOCK TABLES", Session),
        ("EXECUTE s USING @a", Admin),
        ("DEALLOCATE PREPARE s", Session),
        ("DROP PREPARE s", Session),
    ]);
}

#[test]
fn the_policy_runs_what_its_mode_allows_and_says_why_not() {
    let normal = Policy::default();
    let ro = Policy {
        read_only: true,
        ..Policy::default()
    };
    let all = Policy {
        allow_admin: true,
        allow_destructive: true,
        ..Policy::default()
    };
    let refused = |p: &Policy, sql: &str| p.refusal(&classify(sql));
    for p in [&normal, &ro, &all] {
        assert_eq!(refused(p, "SELECT 1"), None);
        assert_eq!(refused(p, "SET autocommit=0"), None);
    }
    assert_eq!(refused(&normal, "UPDATE t SET a=1"), None);
    assert_eq!(refused(&normal, "CREATE TABLE t (a int)"), None);
    let shutdown = refused(&normal, "SHUTDOWN").unwrap();
    assert!(shutdown.contains("--allow-admin"), "{shutdown}");
    assert!(shutdown.contains("stops the server"), "{shutdown}");
    let drop = refused(&normal, "DROP DATABASE x").unwrap();
    assert!(drop.contains("--allow-destructive"), "{drop}");
    let write = refused(&ro, "UPDATE t SET a=1").unwrap();
    assert!(write.contains("--read-only"), "{write}");
    assert!(refused(&ro, "SHUTDOWN").unwrap().contains("--allow-admin"));
    assert_eq!(refused(&all, "SHUTDOWN"), None);
    assert_eq!(refused(&all, "DROP DATABASE x"), None);
    // Read-only refuses what changes anything, whatever else is allowed.
    let ro_all = Policy {
        read_only: true,
        ..all
    };
    assert!(refused(&ro_all, "SHUTDOWN")
        .unwrap()
        .contains("--read-only"));
    assert!(refused(&ro_all, "DROP TABLE t").is_some());
}

#[test]
fn odd_bytes_never_panic() {
    for sql in [
        "'unterminated é",
        "\"é",
        "`unterminated",
        "/*! unterminated",
        "/* unterminated",
        "@",
        "@@",
        "select 'a\\",
        "é; DROP TABLE t",
        "(((",
        "SET STATEMENT FOR",
        "PREPARE s FROM 'PREPARE t FROM ''PREPARE u FROM ''''SHUTDOWN'''''''",
    ] {
        let _ = classify(sql);
    }
    assert_eq!(effect("é; DROP TABLE t"), Destructive);
}

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
