//! sysbench's and mysql's command lines as a DBA types them (issue 38): each runs through
//! sysbench 1.0.20 and through qpslab called as `sysbench` (a link), with the same words, on the
//! shared server; the statements each ran (Com_* counters) agree, and qpslab's interval and
//! summary lines parse with the regexes that parse sysbench's. Runs in turn: the counters are
//! server-wide.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::process::{Command, Output};

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

const DB: &str = "sblines";
const USER: &str = "sbline";
const PASSWORD: &str = "sb-line-pw";

/// The counters compared, and each tool's statements on the side (connection checks).
const COUNTERS: [&str; 6] = [
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_begin",
    "Com_commit",
    "Com_rollback",
];

fn counters() -> BTreeMap<String, i64> {
    sql("SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Com\\_%'")
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once('\t')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

fn delta(f: impl FnOnce() -> Output) -> (Output, BTreeMap<&'static str, i64>) {
    let before = counters();
    let o = f();
    let after = counters();
    let d = COUNTERS
        .iter()
        .map(|k| {
            (
                *k,
                after.get(*k).unwrap_or(&0) - before.get(*k).unwrap_or(&0),
            )
        })
        .collect();
    (o, d)
}

fn port() -> String {
    qpslab_sandbox::testing::shared_server().port().to_string()
}

/// The account and schema the lines use, over TCP as typed lines reach a server.
fn setup() {
    sql(&format!(
        "CREATE USER IF NOT EXISTS '{USER}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'"
    ));
    sql(&format!("GRANT ALL ON *.* TO '{USER}'@'127.0.0.1'"));
    sql(&format!("DROP DATABASE IF EXISTS {DB}"));
    sql(&format!("CREATE DATABASE {DB}"));
}

/// qpslab called through a link named `sysbench`, with `s`'s lab and store.
fn qpslab_as_sysbench(s: &Scratch, words: &[String]) -> Output {
    let link = s.path().join("sysbench");
    if !link.exists() {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_qpslab"), &link).unwrap();
    }
    let scratch = s.cmd(&[]);
    let mut cmd = Command::new(&link);
    cmd.args(words);
    for (k, v) in scratch.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.output().expect("qpslab as sysbench")
}

fn sysbench(words: &[String]) -> Output {
    Command::new("sysbench")
        .args(words)
        .output()
        .expect("sysbench is installed")
}

/// sysbench's interval line and its summary's lines, as scripts parse them.
fn parses_as_sysbench(out: &str, what: &str, intervals: bool) {
    let interval = regex_lite(
        out,
        r"^\[ \d+s \] thds: \d+ tps: [\d.]+ qps: [\d.]+ \(r/w/o: [\d.]+/[\d.]+/[\d.]+\) lat \(ms,95%\): [\d.]+ err/s: [\d.]+ reconn/s: [\d.]+",
    );
    assert!(
        interval || !intervals,
        "{what}: no sysbench interval line in\n{out}"
    );
    for summary in [
        r"^\s+transactions:\s+\d+\s+\([\d.]+ per sec\.\)",
        r"^\s+queries:\s+\d+\s+\([\d.]+ per sec\.\)",
        r"^\s+95th percentile:\s+[\d.]+",
    ] {
        assert!(regex_lite(out, summary), "{what}: no `{summary}` in\n{out}");
    }
}

/// Whether a line of `text` matches `pattern` (grep -P, as the scripts that parse sysbench's
/// output use grep).
fn regex_lite(text: &str, pattern: &str) -> bool {
    let mut grep = Command::new("grep")
        .args(["-qP", pattern])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("grep");
    use std::io::Write;
    grep.stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    grep.wait().unwrap().success()
}

fn words(line: &str) -> Vec<String> {
    let p = port();
    line.replace("PORT", &p)
        .replace("PW", PASSWORD)
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// A corpus of real sysbench lines, their connection options pointed at the shared server and
/// their sizes made small. Sources: sysbench's README ("sysbench [options]... [testname]
/// [command]", --db-driver=mysql on its lines), blog posts and scripts found in public
/// repositories (the TerarkDB benchmark's `--report-interval=1 --db-driver=mysql ...
/// oltp_insert.lua prepare`; a tuning script's `oltp_read_write.lua ... --events=0
/// --report-interval=10 --range_selects=off --time=200 run`; a prepareData() function's
/// `--db-driver=mysql ... --events=0 --time=300 --threads=200 oltp_read_write prepare`).
const CONNECT: &str =
    "--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=PORT --mysql-user=sbline --mysql-password=PW --mysql-db=sblines";

#[test]
fn sysbench_lines_do_the_same_in_both_tools() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    setup();
    // Prepared by sysbench, as its README does.
    let prepare = format!(
        "{CONNECT} --table_size=500 --tables=2 --events=0 --time=300 --threads=2 oltp_read_write prepare"
    );
    let o = sysbench(&words(&prepare));
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    for line in [
        format!("/usr/share/sysbench/oltp_read_write.lua {CONNECT} --mysql-storage-engine=innodb --table-size=500 --tables=2 --threads=2 --events=0 --report-interval=1 --range_selects=off --time=2 run"),
        format!("{CONNECT} --tables=2 --table-size=500 --threads=2 --time=0 --events=200 --report-interval=1 --db-ps-mode=disable --percentile=95 --verbosity=3 oltp_write_only run"),
        format!("oltp_point_select {CONNECT} --tables=2 --table_size=500 --threads=1 --time=2 --report-interval=1 --mysql-ignore-errors=1213,1205 --forced-shutdown=1 --histogram run"),
    ] {
        let w = words(&line);
        let (theirs, their_counts) = delta(|| sysbench(&w));
        assert!(theirs.status.success(), "sysbench {line}: {}", stderr(&theirs));
        let (ours, our_counts) = delta(|| qpslab_as_sysbench(&s, &w));
        let out = stdout(&ours);
        assert!(ours.status.success(), "qpslab {line}: {out}{}", stderr(&ours));
        // A 2-second line has interval lines; one ending at its events may not.
        let intervals = line.contains("--time=2");
        parses_as_sysbench(&stdout(&theirs), "sysbench (the regexes' check)", intervals);
        parses_as_sysbench(&out, &line, intervals);
        // The same statements per transaction: the counts scale with the transactions each ran.
        let tx = |o: &Output| {
            let t = stdout(o);
            t.lines()
                .find_map(|l| l.trim().strip_prefix("transactions:")?.split_whitespace().next()?.parse::<f64>().ok())
                .unwrap_or_else(|| panic!("no transactions in {t}"))
        };
        let (t1, t2) = (tx(&theirs), tx(&ours));
        for k in COUNTERS {
            let (a, b) = (their_counts[k] as f64 / t1, our_counts[k] as f64 / t2);
            assert!((a - b).abs() <= 0.05 * a.max(1.0), "{line}: {k} per transaction: sysbench {a}, qpslab {b}");
        }
        if line.contains("--histogram") {
            assert!(out.contains("Latency histogram (values are in milliseconds)"), "{out}");
        }
    }
    // Cleanup as sysbench words it, --tables and all: qpslab drops what it created (nothing
    // here), sysbench its own.
    let cleanup = format!("{CONNECT} --tables=2 oltp_read_write cleanup");
    let o = qpslab_as_sysbench(&s, &words(&cleanup));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--tables ignored: cleanup drops"),
        "{}",
        stderr(&o)
    );
    let o = sysbench(&words(&cleanup));
    assert!(o.status.success(), "{}", stderr(&o));
}

/// The issue's lines, typed into `qpslab` itself.
#[test]
fn the_issues_lines_work_as_typed() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    setup();
    let p = port();
    let pw = format!("-p{PASSWORD}");
    let base = ["-h", "127.0.0.1", "-P", &p, "-u", USER, &pw, "-D", DB];
    // sysbench's word order, with --db-driver and the tables count, and mysql's -h.
    let o = s.run(
        &[
            &[
                "oltp_read_write",
                "--tables=2",
                "--table-size=200",
                "--db-driver=mysql",
            ][..],
            &base,
            &["--create-db", "prepare"],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--db-driver=mysql ignored"),
        "{}",
        stderr(&o)
    );
    // The issue's first line: -h is the host (it ran: a stored run), not help with exit 0.
    let o = s.run(
        &[
            &["run", "oltp_point_select"][..],
            &base,
            &[
                "--tables=2",
                "--table-size=200",
                "--time=1",
                "--report-interval=0",
                "--histogram",
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("stored as run"), "{out}");
    assert!(
        !out.contains("] thds:"),
        "--report-interval=0 prints no interval line: {out}"
    );
    assert!(out.contains("Latency histogram"), "{out}");
    // mysql's first-option habit.
    let cnf = s.path().join("my.cnf");
    std::fs::write(
        &cnf,
        format!(
            "[client]\nhost=127.0.0.1\nport={p}\nuser={USER}\npassword={PASSWORD}\ndatabase={DB}\n"
        ),
    )
    .unwrap();
    let o = s.run(&[
        &format!("--defaults-file={}", cnf.display()),
        "run",
        "oltp_point_select",
        "--tables=2",
        "--table-size=200",
        "--time=1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // --time=0 with --events, --warmup-time, --percentile.
    let o = s.run(
        &[
            &["run", "oltp_point_select"][..],
            &base,
            &[
                "--tables=2",
                "--table-size=200",
                "--time=0",
                "--events=50",
                "--warmup-time=0",
                "--percentile=99",
                // Newer sysbench's and debugging options: no effect here, a note each.
                "--thread-init-timeout=30",
                "--db-debug=on",
                "--mysql-dry-run=off",
                "--mysql-ssl=off",
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        regex_lite(&stdout(&o), r"99th percentile:"),
        "{}",
        stdout(&o)
    );
    for note in ["--thread-init-timeout=30 ignored", "--db-debug=on ignored"] {
        assert!(stderr(&o).contains(note), "{}", stderr(&o));
    }
    // Refused, each with its reason on one line (exit 2).
    for (line, why) in [
        (&["run", "-h"][..], "-h is the server's host"),
        (
            &["run", "oltp_point_select", "--db-driver=pgsql"],
            "--db-driver=pgsql: qpslab measures MySQL-family servers only",
        ),
        (
            &["run", "oltp_point_select", "--time=0"],
            "no time limit needs --events",
        ),
        (
            &["run", "oltp_point_select", "--mysql-dry-run"],
            "--mysql-dry-run: qpslab has no dry run",
        ),
    ] {
        let o = s.run(line);
        assert_eq!(o.status.code(), Some(2), "{line:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(why), "{line:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{line:?}: {}", stderr(&o));
    }
    // Help is --help and -?.
    for help in ["--help", "-?"] {
        let o = s.run(&["run", help]);
        assert!(
            o.status.success() && stdout(&o).contains("--host"),
            "{help}"
        );
    }
    let o = s.run(&[&["oltp_read_write", "--tables=2"][..], &base, &["cleanup"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
}

/// sysbench's `--mysql-ignore-errors` has its meaning: the codes it names roll the event back
/// and run it again, counted by code, instead of stopping the phase;
/// without it the same error stops the run (exit 1) as in sysbench.
#[test]
fn mysql_ignore_errors_keeps_a_phase_going_past_the_codes_it_names() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    setup();
    let p = port();
    let pw = format!("-p{PASSWORD}");
    let script = s.path().join("missing.sql");
    // Error 1242 (a subquery of two rows where one is wanted) on about half the events.
    std::fs::write(
        &script,
        "SELECT IF(RAND() < 0.5, 1, (SELECT 1 UNION SELECT 2));\n",
    )
    .unwrap();
    let script = script.display().to_string();
    let base = [
        "run",
        "--script",
        &script,
        "-h",
        "127.0.0.1",
        "-P",
        &p,
        "-u",
        USER,
        &pw,
        "-D",
        DB,
        "--time=1",
    ];
    let o = s.run(&base);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("1242"), "{}", stderr(&o));
    let o = s.run(
        &[
            &base[..],
            &["--mysql-ignore-errors=1242", "--format", "json"],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("run's JSON");
    let errors = json.to_string();
    assert!(
        errors.contains("\"1242\":"),
        "the errors are counted by code: {errors}"
    );
    // A code it does not name still stops the phase.
    let o = s.run(&[&base[..], &["--mysql-ignore-errors=1213,1205"]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}
