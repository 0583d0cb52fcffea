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
            "--histogram=on"
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
            "--time=2"
        ]
    );
    assert!(
        rw(&["sysbench", "fileio", "--file-test-mode=rndrw", "prepare"])
            .unwrap_err()
            .contains("creates and removes its test files itself")
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
