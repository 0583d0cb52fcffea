//! External targets are the user's servers: `run` never creates, drops or rewrites anything
//! there, `prepare` creates a database only with `--create-db`, and passwords (in a URL, a spec
//! or a password file) never reach the store or the output. The shared test server plays the
//! external server, reached through its socket or a URL like any other.

mod common;
use common::*;

/// Every table of `db` with its row count and checksum, and the database's existence.
fn snapshot(db: &str) -> String {
    let tables = sql(&format!(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = '{db}' ORDER BY 1"
    ));
    let mut out = format!(
        "schemas: {}",
        sql(&format!(
            "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = '{db}'"
        ))
    );
    for t in tables.lines() {
        out.push_str(&sql(&format!("SELECT '{t}', COUNT(*) FROM `{db}`.`{t}`")));
        out.push_str(&sql(&format!("CHECKSUM TABLE `{db}`.`{t}`")));
    }
    out
}

/// The command a message recommends, with `qpslab` replaced by the binary under test.
fn recommended(stderr: &str, after: &str) -> String {
    let cmd = stderr
        .split(after)
        .nth(1)
        .unwrap_or_else(|| panic!("no '{after}' in: {stderr}"))
        .trim();
    cmd.replace("qpslab ", &format!("{} ", env!("CARGO_BIN_EXE_qpslab")))
}

fn sh(s: &Scratch, command: &str) -> std::process::Output {
    std::process::Command::new("sh")
        .args(["-c", command])
        .env("QPSLAB_LAB", s.lab())
        .env("QPSLAB_DB", s.db())
        .env("QPSLAB_TEMPLATES", templates())
        .env_remove("MYSQL_PWD")
        .output()
        .unwrap()
}

#[test]
fn run_never_changes_an_external_server() {
    let s = Scratch::new();
    let sock = socket();
    let db = "ext_readonly";
    sql(&format!("DROP DATABASE IF EXISTS {db}"));
    let target = ["--socket", &sock, "--database", db];
    let shape = ["--tables", "2", "--table-size", "500"];
    let run = |extra: &[&str]| {
        s.run(
            &[
                &["run", "oltp_point_select"][..],
                &target,
                extra,
                &["--events", "200"],
            ]
            .concat(),
        )
    };

    // A missing database is not created: exit 2 with the command that would.
    let o = run(&shape);
    assert_user_error(&o, "does not exist");
    assert!(stderr(&o).contains("--create-db"), "{}", stderr(&o));
    assert_eq!(snapshot(db), "schemas: 0\n");
    // prepare creates it only when asked.
    let o = s.run(&[&["prepare", "oltp_point_select"][..], &target, &shape].concat());
    assert_user_error(&o, "--create-db");
    assert_eq!(snapshot(db), "schemas: 0\n");
    let o = sh(&s, &recommended(&stderr(&run(&shape)), "with: "));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&shape);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = snapshot(db);
    assert!(before.contains("sbtest2\t500"), "{before}");

    // A different dataset: exit 2, every table unchanged, the commands to rebuild it named.
    for (different, needle) in [
        (["--tables", "2", "--table-size", "800"], "800"),
        (["--tables", "3", "--table-size", "500"], "sbtest3"),
    ] {
        let o = run(&different);
        assert_user_error(&o, needle);
        let err = stderr(&o);
        assert!(
            err.contains(&format!(
                "qpslab cleanup --socket {sock} --database {db} && qpslab prepare oltp_point_select {}",
                different.join(" ")
            )),
            "{err}"
        );
        assert_eq!(snapshot(db), before, "{different:?} changed the server");
    }

    // The recommended commands do rebuild it; then run measures.
    let o = run(&["--tables", "2", "--table-size", "800"]);
    let o = sh(&s, &recommended(&stderr(&o), "with: "));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(run(&["--tables", "2", "--table-size", "800"])
        .status
        .success());
    sql(&format!("DROP DATABASE {db}"));
}

#[test]
fn a_dsn_naming_a_missing_database_is_not_created_and_hides_its_password() {
    let s = Scratch::new();
    let sock = socket();
    sql("CREATE USER IF NOT EXISTS 'extpw'@'localhost' IDENTIFIED BY 'Ext-Secret-31'");
    sql("GRANT ALL ON *.* TO 'extpw'@'localhost'");
    sql("DROP DATABASE IF EXISTS ext_nodb");
    let url = format!("mysql://extpw:Ext-Secret-31@localhost/ext_nodb?socket={sock}");
    let o = s.run(&["run", "oltp_point_select", "--target", &url, "--time", "1"]);
    assert_user_error(&o, "ext_nodb does not exist");
    let err = stderr(&o);
    assert!(!err.contains("Ext-Secret-31"), "{err}");
    assert!(err.contains("visible to other local users"), "{err}");
    assert!(
        err.contains(&format!(
            "--target 'mysql://extpw@localhost/ext_nodb?socket={sock}' --create-db"
        )),
        "{err}"
    );
    assert_eq!(snapshot("ext_nodb"), "schemas: 0\n");

    // --password-file keeps the password off the command line.
    let pw = s.path().join("pw");
    std::fs::write(&pw, "Ext-Secret-31\n").unwrap();
    let bare = format!("mysql://extpw@localhost/ext_nodb?socket={sock}");
    let pw_args = ["--target", &bare, "--password-file", pw.to_str().unwrap()];
    let o = s.run(
        &[
            &["prepare", "oltp_point_select", "--table-size", "100"][..],
            &pw_args,
            &["--create-db"],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(
        &[
            &[
                "run",
                "oltp_point_select",
                "--table-size",
                "100",
                "--events",
                "50",
            ][..],
            &pw_args,
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("visible to other"), "{}", stderr(&o));
    let missing = s.path().join("nope");
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--target",
        &bare,
        "--password-file",
        missing.to_str().unwrap(),
    ]);
    assert_user_error(&o, "password file");
    sql("DROP DATABASE ext_nodb");
}

#[test]
fn a_spec_password_is_never_stored_or_shown() {
    let s = Scratch::new();
    let sock = socket();
    sql("CREATE USER IF NOT EXISTS 'specpw'@'localhost' IDENTIFIED BY 'Spec-Secret-58'");
    sql("GRANT ALL ON *.* TO 'specpw'@'localhost'");
    sql("DROP DATABASE IF EXISTS ext_spec");
    let url = format!("mysql://specpw:Spec-Secret-58@localhost/ext_spec?socket={sock}");
    let body = |target: &str, extra: &str| {
        format!("name = \"ext\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\ntable_size = 200\nduration = \"1s\"\n[[variant]]\nname = \"theirs\"\ntarget = \"{target}\"\n{extra}")
    };
    let spec = s.path().join("ext.toml");
    std::fs::write(&spec, body(&url, "")).unwrap();
    let spec = spec.to_str().unwrap();

    // Missing dataset on the external server: the cell fails naming the prepare command, the
    // study exits 1, and nothing was created.
    let o = s.run(&["lab", "run", spec]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 of 1 cell(s) failed"),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot("ext_spec"), "schemas: 0\n");
    let shown = stdout(&s.run(&["lab", "show", "ext", "--json"]));
    assert!(
        shown.contains("qpslab prepare oltp_point_select --tables 1 --table-size 200 --target"),
        "{shown}"
    );

    let o = s.run(&[
        "prepare",
        "oltp_point_select",
        "--table-size",
        "200",
        "--target",
        &url,
        "--create-db",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // A new study from a password file, and one from MYSQL_PWD: both measure.
    let bare = format!("mysql://specpw@localhost/ext_spec?socket={sock}");
    let pw = s.path().join("pw");
    std::fs::write(&pw, "Spec-Secret-58\n").unwrap();
    let spec2 = s.path().join("ext2.toml");
    std::fs::write(
        &spec2,
        body(&bare, &format!("password_file = \"{}\"\n", pw.display()))
            .replace("\"ext\"", "\"ext2\""),
    )
    .unwrap();
    let o = s.run(&["lab", "run", spec2.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let spec3 = s.path().join("ext3.toml");
    std::fs::write(&spec3, body(&bare, "").replace("\"ext\"", "\"ext3\"")).unwrap();
    let o = s
        .cmd(&["lab", "run", spec3.to_str().unwrap()])
        .env("MYSQL_PWD", "Spec-Secret-58")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));

    // Resume compares the spec file (with its password) to the stored one (without): the same.
    let o = s.run(&["lab", "resume", spec]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut everything = std::fs::read(s.db()).unwrap();
    for ext in ["db-wal", "db-journal"] {
        everything.extend(std::fs::read(s.db().with_extension(ext)).unwrap_or_default());
    }
    everything.extend(o.stdout.iter().chain(o.stderr.iter()));
    for name in ["ext", "ext2", "ext3"] {
        let o = s.run(&["lab", "show", name, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stdout(&o).contains("mysql://specpw@localhost/ext_spec"),
            "{}",
            stdout(&o)
        );
        everything.extend(o.stdout);
    }
    assert!(
        !everything.windows(14).any(|w| w == b"Spec-Secret-58"),
        "password found in the store or the output"
    );
    sql("DROP DATABASE ext_spec");
}

#[test]
fn cleanup_never_drops_a_table_that_replaced_ours() {
    let s = Scratch::new();
    let sock = socket();
    let db = "ext_clean";
    sql(&format!("DROP DATABASE IF EXISTS {db}"));
    let target = ["--socket", &sock, "--database", db];
    let o = s.run(
        &[
            &[
                "prepare",
                "oltp_read_only",
                "--tables",
                "2",
                "--table-size",
                "100",
                "--create-db",
            ][..],
            &target,
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Someone replaces sbtest2 with a table of their own, of the same name; the record stays.
    for replacement in [
        "id INT PRIMARY KEY, note TEXT",
        // sysbench's columns, but not the keys qpslab built.
        "id INT NOT NULL, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id)",
    ] {
        sql(&format!("DROP TABLE {db}.sbtest2"));
        sql(&format!("CREATE TABLE {db}.sbtest2 ({replacement})"));
        sql(&format!("INSERT INTO {db}.sbtest2 (id) VALUES (42)"));
        let before = snapshot(db);
        let o = s.run(&[&["cleanup"][..], &target].concat());
        assert_user_error(&o, "refusing to drop sbtest2");
        assert_eq!(snapshot(db), before, "cleanup dropped something");
    }
    sql(&format!("DROP DATABASE {db}"));
}

#[test]
fn sessions_beyond_the_servers_limits_are_refused_before_connecting_them() {
    let s = Scratch::new();
    let sock = socket();
    let target = ["--socket", &sock, "--database", "ext_limits", "--time", "1"];
    // Sessions × statements (one per table for oltp_point_select) beyond the server's limit.
    let max: u64 = sql("SELECT @@max_prepared_stmt_count")
        .trim()
        .parse()
        .unwrap();
    let threads = (max / 10_000 + 1).to_string();
    let o = s.run(
        &[
            &[
                "run",
                "oltp_point_select",
                "--tables",
                "10000",
                "--threads",
                &threads,
            ][..],
            &target,
        ]
        .concat(),
    );
    assert_user_error(&o, "max_prepared_stmt_count");
    let max: u64 = sql("SELECT @@max_connections").trim().parse().unwrap();
    let threads = (max + 1).to_string();
    let o = s.run(
        &[
            &["run", "oltp_point_select", "--threads", &threads][..],
            &target,
        ]
        .concat(),
    );
    assert_user_error(&o, "max_connections");
    assert_eq!(snapshot("ext_limits"), "schemas: 0\n");
}

#[test]
fn a_dataset_larger_than_the_sandboxs_disk_is_refused_before_loading() {
    let s = Scratch::new();
    // 10000 × 2e9 rows: petabytes, on the embedded sandbox (ours, so prepared on demand).
    let huge = ["--tables", "10000", "--table-size", "2000000000"];
    for verb in ["prepare", "run"] {
        let o = s.run(&[&[verb, "oltp_point_select"][..], &huge].concat());
        assert_user_error(&o, "GiB free");
        let list = stdout(&s.run(&["server", "list", "--json"]));
        let list: serde_json::Value = serde_json::from_str(&list).unwrap();
        assert!(
            list.as_array().unwrap().iter().all(|i| i["alive"] == false),
            "{verb}: {list}"
        );
    }
}
