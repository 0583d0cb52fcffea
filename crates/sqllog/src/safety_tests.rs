use super::*;
use Effect::*;

pub(super) fn effect(sql: &str) -> Effect {
    classify(sql).effect
}

pub(super) fn check(cases: &[(&str, Effect)]) {
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
        ("DROP PROCEDURE p", Destructive),
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
