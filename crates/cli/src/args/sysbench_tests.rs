use super::*;

fn rw(argv: &[&str]) -> Result<(Vec<String>, Vec<String>), String> {
    let r = rewrite(argv.iter().map(OsString::from).collect())?;
    let args = r
        .args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Ok((args, r.notes))
}

fn args(argv: &[&str]) -> Vec<String> {
    rw(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}")).0
}

#[test]
fn qpslab_lines_stay_as_they_are() {
    for line in [
        &["qpslab", "run", "oltp_point_select", "--tables", "2"][..],
        &["qpslab", "-q", "show"],
        &["qpslab", "server", "start", "a"],
        &["qpslab", "help", "run"],
        &["qpslab"],
        &["qpslab", "run", "x", "--", "-h"],
    ] {
        assert_eq!(args(line), line.to_vec(), "{line:?}");
    }
}

#[test]
fn takes_sysbench_word_order_and_mysql_first_options() {
    assert_eq!(
        args(&["qpslab", "oltp_read_write", "--tables=4", "prepare"]),
        ["qpslab", "prepare", "oltp_read_write", "--tables=4"]
    );
    assert_eq!(
        args(&["qpslab", "--tables", "4", "oltp_read_write", "run"]),
        ["qpslab", "run", "oltp_read_write", "--tables", "4"]
    );
    assert_eq!(
        args(&[
            "qpslab",
            "--defaults-file=my.cnf",
            "run",
            "oltp_point_select"
        ]),
        [
            "qpslab",
            "run",
            "--defaults-file=my.cnf",
            "oltp_point_select"
        ]
    );
    assert_eq!(
        args(&[
            "qpslab",
            "--defaults-file",
            "my.cnf",
            "run",
            "oltp_point_select"
        ]),
        [
            "qpslab",
            "run",
            "--defaults-file",
            "my.cnf",
            "oltp_point_select"
        ]
    );
    assert_eq!(
        args(&["qpslab", "oltp_read_only", "help"]),
        ["qpslab", "run", "oltp_read_only", "--help"]
    );
    // Called as sysbench: its words, its paths to Lua scripts.
    assert_eq!(
        args(&[
            "/usr/local/bin/sysbench",
            "/usr/share/sysbench/oltp_read_write.lua",
            "--threads=4",
            "--skip_trx",
            "run"
        ]),
        [
            "/usr/local/bin/sysbench",
            "run",
            "oltp_read_write",
            "--threads=4",
            "--skip-trx=on",
            "--no-live-lines"
        ]
    );
    assert_eq!(args(&["sysbench", "--version"]), ["sysbench", "--version"]);
    assert_eq!(
        args(&[
            "sysbench",
            "--test=oltp_point_select",
            "--max-time=3",
            "run"
        ]),
        [
            "sysbench",
            "run",
            "oltp_point_select",
            "--time=3",
            "--no-live-lines"
        ]
    );
    assert!(rw(&["sysbench", "oltp_read_write"]).is_err());
}

#[test]
fn gives_sysbench_options_their_meaning_or_a_note() {
    let (a, notes) = rw(&[
        "sysbench",
        "oltp_read_write",
        "--db-driver=mysql",
        "--verbosity=5",
        "--mysql-ssl=on",
        "--time=0",
        "--events=100",
        "--report-interval=0",
        "--max-requests=0",
        "--histogram",
        "--mysql-ignore-errors=1213,1205",
        "run",
    ])
    .unwrap();
    assert_eq!(
        a,
        [
            "sysbench",
            "run",
            "oltp_read_write",
            "--ssl-mode=REQUIRED",
            "--events=100",
            "--no-live-lines",
            "--histogram=on",
            "--mysql-ignore-errors=1213,1205"
        ]
    );
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].starts_with("--db-driver=mysql ignored: "),
        "{notes:?}"
    );
    assert!(notes[1].starts_with("--verbosity=5 ignored: "), "{notes:?}");
    assert_eq!(
        args(&["qpslab", "run", "x", "--max-time=5", "--num-threads", "2"]),
        ["qpslab", "run", "x", "--time=5", "--threads=2"]
    );
}

#[test]
fn leaves_out_what_prepare_and_cleanup_do_not_use() {
    let (a, notes) = rw(&[
        "qpslab",
        "oltp_read_write",
        "--tables=4",
        "--time=60",
        "--threads=8",
        "cleanup",
    ])
    .unwrap();
    assert_eq!(a, ["qpslab", "cleanup", "oltp_read_write"]);
    assert!(
        notes[0].contains("--tables, --time, --threads ignored"),
        "{notes:?}"
    );
    let (a, notes) = rw(&[
        "qpslab",
        "prepare",
        "oltp_read_write",
        "--tables=4",
        "--time=60",
        "--threads=8",
    ])
    .unwrap();
    assert_eq!(
        a,
        [
            "qpslab",
            "prepare",
            "oltp_read_write",
            "--tables=4",
            "--threads=8"
        ]
    );
    assert!(notes[0].starts_with("--time ignored"), "{notes:?}");
}

#[test]
fn refuses_what_it_cannot_do_with_the_reason() {
    for (line, why) in [
        (
            &["qpslab", "run", "x", "--db-driver=pgsql"][..],
            "--db-driver=pgsql: qpslab measures MySQL-family",
        ),
        (
            &["qpslab", "run", "x", "--time=0"],
            "--time=0: no time limit needs --events",
        ),
        (
            &["qpslab", "run", "x", "--mysql-dry-run"],
            "--mysql-dry-run: qpslab has no dry run",
        ),
        (
            &["qpslab", "run", "x", "--mysql-host=a,b"],
            "--mysql-host=a,b: qpslab measures one server",
        ),
        (&["qpslab", "run", "x", "-h"], BARE_H),
        (&["qpslab", "run", "-h", "--port=1"], BARE_H),
    ] {
        let e = rw(line).unwrap_err();
        assert!(e.starts_with(why), "{line:?}: {e}");
    }
}

#[test]
fn takes_sysbench_fileio_as_qpslab_io() {
    assert_eq!(
        args(&[
            "sysbench",
            "fileio",
            "--file-total-size=64M",
            "--file-test-mode=rndrw",
            "--time=2",
            "run"
        ]),
        [
            "sysbench",
            "io",
            "rndrw",
            "--file-total-size=64M",
            "--time=2",
            "--file-num=128",
            "--prepared",
            "--no-live-lines"
        ]
    );
    // The files live from prepare to cleanup, sysbench's defaults standing for both.
    assert_eq!(
        args(&["sysbench", "fileio", "--file-test-mode=rndrw", "prepare"]),
        [
            "sysbench",
            "io",
            "--file-num=128",
            "--file-total-size=2G",
            "--prepare"
        ]
    );
    assert_eq!(
        args(&["qpslab", "sysbench", "fileio", "--file-num=4", "cleanup"]),
        [
            "qpslab",
            "io",
            "--file-num=4",
            "--file-total-size=2G",
            "--cleanup"
        ]
    );
    assert!(rw(&["sysbench", "cpu", "run"])
        .unwrap_err()
        .contains("not a database server"));
}

#[test]
fn called_as_sysbench_prints_interval_lines_only_when_asked() {
    assert_eq!(
        args(&["sysbench", "oltp_point_select", "--time=3", "run"]),
        [
            "sysbench",
            "run",
            "oltp_point_select",
            "--time=3",
            "--no-live-lines"
        ]
    );
    assert_eq!(
        args(&[
            "sysbench",
            "oltp_point_select",
            "--report-interval=1",
            "run"
        ]),
        [
            "sysbench",
            "run",
            "oltp_point_select",
            "--report-interval=1"
        ]
    );
    // qpslab's own name keeps its interval lines.
    assert_eq!(
        args(&["qpslab", "oltp_point_select", "--time=3", "run"]),
        ["qpslab", "run", "oltp_point_select", "--time=3"]
    );
}

/// The contract: every option of sysbench 1.0.20's `--help` and `oltp_read_write help`, with
/// its default or a typical value, is accepted on a `run` line, called as sysbench or not.
#[test]
fn every_sysbench_option_is_accepted() {
    use clap::Parser;
    let options = [
        // General options.
        "--threads=2",
        "--events=0",
        "--time=10",
        "--forced-shutdown=off",
        "--thread-stack-size=64K",
        "--rate=0",
        "--report-interval=0",
        "--report-checkpoints=5,10",
        "--debug=off",
        "--validate=off",
        "--tx-rate=0",
        "--max-requests=0",
        "--max-time=10",
        "--num-threads=2",
        // Pseudo-random numbers.
        "--rand-type=special",
        "--rand-spec-iter=12",
        "--rand-spec-pct=1",
        "--rand-spec-res=75",
        "--rand-seed=0",
        "--rand-pareto-h=0.2",
        // Log.
        "--verbosity=3",
        "--percentile=95",
        "--histogram=off",
        // Database.
        "--db-driver=mysql",
        "--db-ps-mode=auto",
        "--db-debug=off",
        // mysql.
        "--mysql-host=127.0.0.1",
        "--mysql-port=3306",
        "--mysql-user=sbtest",
        "--mysql-password=x",
        "--mysql-db=sbtest",
        "--mysql-ssl=off",
        "--mysql-ssl-cipher=AES128-SHA",
        "--mysql-compression=off",
        "--mysql-debug=off",
        "--mysql-ignore-errors=1213,1020,1205",
        "--mysql-dry-run=off",
        // pgsql (ignored with the mysql driver, as in sysbench).
        "--pgsql-host=localhost",
        "--pgsql-port=5432",
        "--pgsql-user=sbtest",
        "--pgsql-password=x",
        "--pgsql-db=sbtest",
        // oltp_read_write's.
        "--auto_inc=on",
        "--create_secondary=on",
        "--delete_inserts=1",
        "--distinct_ranges=1",
        "--index_updates=1",
        "--mysql_storage_engine=innodb",
        "--non_index_updates=1",
        "--order_ranges=1",
        "--pgsql_variant=redshift",
        "--point_selects=10",
        "--range_selects=on",
        "--range_size=100",
        "--secondary=off",
        "--simple_ranges=1",
        "--skip_trx=off",
        "--sum_ranges=1",
        "--table_size=10000",
        "--tables=1",
    ];
    for argv0 in ["sysbench", "qpslab"] {
        for option in options {
            let line = [argv0, "oltp_read_write", option, "run"];
            let r = rw(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
            let parsed = super::super::Cli::try_parse_from(&r.0);
            assert!(
                parsed.is_ok(),
                "{line:?} as {:?}: {}",
                r.0,
                parsed.unwrap_err()
            );
        }
    }
}

#[test]
fn reads_sysbench_config_files() {
    let dir = std::env::temp_dir().join(format!("qpslab-sb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("sb.cfg");
    std::fs::write(&f, "# sysbench options\nthreads=4\n\ndb-driver=mysql\n").unwrap();
    let file = format!("--config-file={}", f.display());
    let (a, notes) = rw(&["qpslab", &file, "oltp_point_select", "run"]).unwrap();
    assert_eq!(a, ["qpslab", "run", "oltp_point_select", "--threads=4"]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    let e = rw(&[
        "sysbench",
        "--config-file=/nonexistent/sb.cfg",
        "oltp_point_select",
        "run",
    ]);
    assert!(e
        .unwrap_err()
        .starts_with("--config-file=/nonexistent/sb.cfg: cannot read it"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn qpslab_sysbench_is_the_links_line() {
    let link = rewrite(
        ["sysbench", "oltp_point_select", "--time=3", "run"]
            .map(OsString::from)
            .to_vec(),
    )
    .unwrap();
    let word = rewrite(
        ["qpslab", "sysbench", "oltp_point_select", "--time=3", "run"]
            .map(OsString::from)
            .to_vec(),
    )
    .unwrap();
    assert!(link.sysbench && word.sysbench);
    assert_eq!(link.args[1..], word.args[1..]);
    assert!(
        !rewrite(["qpslab", "run", "x"].map(OsString::from).to_vec())
            .unwrap()
            .sysbench
    );
    assert!(
        rewrite(
            ["qpslab", "sysbench", "--version"]
                .map(OsString::from)
                .to_vec()
        )
        .unwrap()
        .sysbench
    );
}

#[test]
fn takes_sysbench_tpcc_lines_as_qpslabs_tpcc() {
    let (a, notes) = rw(&[
        "sysbench",
        "/usr/share/sysbench/tpcc.lua",
        "--tables=1",
        "--scale=2",
        "--use_fk=0",
        "--trx_level=RC",
        "--threads=4",
        "--report-interval=1",
        "--time=10",
        "run",
    ])
    .unwrap();
    assert_eq!(
        a,
        [
            "sysbench",
            "run",
            "tpcc",
            "--warehouses=2",
            "--foreign-keys=off",
            "--isolation=read-committed",
            "--threads=4",
            "--report-interval=1",
            "--time=10",
            "--mode=stress"
        ]
    );
    assert!(notes.is_empty(), "{notes:?}");
    let (a, notes) = rw(&["sysbench", "tpcc", "--tables=10", "--scale=1", "prepare"]).unwrap();
    // Called as sysbench, prepare loads with sysbench's one default thread.
    assert_eq!(
        a,
        [
            "sysbench",
            "prepare",
            "tpcc",
            "--warehouses=1",
            "--threads=1"
        ]
    );
    assert!(notes[0].starts_with("--tables=10 ignored"), "{notes:?}");
    assert_eq!(
        args(&["sysbench", "tpcc.lua", "--scale=1", "check"]),
        ["sysbench", "check", "tpcc"]
    );
    assert!(rw(&["sysbench", "tpcc", "--trx_level=XX", "run"])
        .unwrap_err()
        .contains("expects RR, RC, SER or RU"));
}

/// sysbench 0.4's and 0.5's lines as they still circulate (OpenStack Performa's
/// `sysbench --test=oltp --db-driver=mysql --mysql-table-engine=innodb --mysql-engine-trx=yes
/// --num-threads=N --max-time=N --max-requests=0 ... --oltp-table-size=N run`).
#[test]
fn takes_sysbench_0_4_and_0_5_spellings_as_1_0s() {
    let (a, notes) = rw(&[
        "sysbench",
        "--test=oltp",
        "--mysql-table-engine=innodb",
        "--mysql-engine-trx=yes",
        "--num-threads=4",
        "--max-time=2",
        "--max-requests=0",
        "--oltp-table-size=1000",
        "--oltp-tables-count=2",
        "run",
    ])
    .unwrap();
    assert_eq!(
        a,
        [
            "sysbench",
            "run",
            "oltp_read_write",
            "--mysql-storage-engine=innodb",
            "--threads=4",
            "--time=2",
            "--table-size=1000",
            "--tables=2",
            "--no-live-lines"
        ]
    );
    assert!(
        notes[0].starts_with("--mysql-engine-trx=yes ignored"),
        "{notes:?}"
    );
    for (test, extra, want) in [
        ("--test=oltp", "--oltp-read-only=on", "oltp_read_only"),
        (
            "--test=oltp",
            "--oltp-test-mode=simple",
            "oltp_point_select",
        ),
        (
            "--test=/usr/share/sysbench/tests/db/select.lua",
            "--oltp-skip-trx=on",
            "oltp_point_select",
        ),
        (
            "--test=tests/db/update_index.lua",
            "--oltp-dist-type=uniform",
            "oltp_update_index",
        ),
    ] {
        let a = args(&["sysbench", test, extra, "prepare"]);
        assert_eq!(a[2], want, "{a:?}");
    }
    for (line, why) in [
        (&["sysbench", "--test=oltp", "--oltp-test-mode=nontrx", "run"][..], "--oltp-test-mode=nontrx: sysbench 1.0 has no such mode"),
        (&["sysbench", "--test=oltp", "--oltp-table-name=t", "run"], "--oltp-table-name=t: sysbench 1.0 names its tables sbtest1..N"),
        (&["sysbench", "--test=oltp", "--oltp-nontrx-mode=select", "run"], "--oltp-nontrx-mode=select: a sysbench 0.4/0.5 option; sysbench 1.0 has no --nontrx-mode"),
    ] {
        let e = rw(line).unwrap_err();
        assert!(e.starts_with(why), "{line:?}: {e}");
    }
}
