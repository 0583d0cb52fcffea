//! Issue 48: called as `sysbench`, qpslab's standard output is sysbench 1.0.20's, line for
//! line. The same line runs through sysbench 1.0.20 and through a link named `sysbench` on the
//! shared server; the layouts agree line for line (numbers aside), and the expressions real
//! harnesses parse sysbench's output with match both outputs alike:
//! - PerfKitBenchmarker, `perfkitbenchmarker/linux_packages/sysbench.py`
//!   (`ParseSysbenchTimeSeries`, `ParseSysbenchTransactions`, `ParseSysbenchLatency`);
//! - OpenStack Performa, `performa/modules/sysbench_oltp.py` (`PATTERNS`, `TEST_STATS`);
//! - the shell's: patterns anchored at the end of the interval line and `awk '{print $NF}'`.
//!
//! qpslab's own lines (stability, client, its table, the stored run) are on standard error.

mod common;
use common::*;
use std::io::Write;
use std::process::{Command, Output, Stdio};

const DB: &str = "sbout48";

/// The line both tools run: intervals, the histogram, a 2-second phase.
const LINE: &str = "oltp_read_write --tables=1 --table-size=1000 --threads=2 --time=2 \
                    --report-interval=1 --histogram run";

fn connect() -> Vec<String> {
    vec![
        "--db-driver=mysql".into(),
        format!("--mysql-socket={}", socket()),
        "--mysql-user=root".into(),
        format!("--mysql-db={DB}"),
    ]
}

fn words(line: &str) -> Vec<String> {
    let mut w = connect();
    w.extend(line.split_whitespace().map(String::from));
    w
}

fn sysbench(words: &[String]) -> Output {
    Command::new("sysbench")
        .args(words)
        .output()
        .expect("sysbench is installed")
}

/// qpslab through a link named `sysbench`, with `s`'s lab and store.
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

/// Runs a shell `script` with `input` on its standard input; its standard output.
fn shell(script: &str, input: &str) -> String {
    let mut sh = Command::new("sh")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sh");
    sh.stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let o = sh.wait_with_output().unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// How many times the Perl-compatible `pattern` matches `text` (`grep -oP`; across lines
/// with `multiline`, as Python's `re.finditer` over the whole output).
fn matches(text: &str, pattern: &str, multiline: bool) -> usize {
    let flags = if multiline { "-Pzo" } else { "-Po" };
    let quoted = pattern.replace('\'', r"'\''");
    let out = shell(&format!("grep {flags} '{quoted}'"), text);
    if multiline {
        out.split('\0').filter(|m| !m.is_empty()).count()
    } else {
        out.lines().count()
    }
}

/// The interval lines of an output.
fn intervals(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with('[')).collect()
}

/// A line's shape: its numbers as `N` and its version as `V`, runs of spaces inside it as one
/// (the width of a number moves what follows it), and its figures' column: where the first
/// figure starts, or for Latency's right-aligned figures where the line ends.
fn shape(line: &str) -> String {
    let line = match line.strip_prefix("sysbench 1.0.20 (") {
        Some(_) => "sysbench 1.0.20 (V)",
        None => line,
    };
    let indent = line.len() - line.trim_start().len();
    let mut out = line[..indent].to_string();
    let mut chars = line[indent..].chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars
                .peek()
                .is_some_and(|d| d.is_ascii_digit() || *d == '.')
            {
                chars.next();
            }
            out.push('N');
        } else if c == ' ' {
            while chars.peek() == Some(&' ') {
                chars.next();
            }
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    let right_aligned =
        line.starts_with("         ") && line.ends_with(|c: char| c.is_ascii_digit());
    let column = match right_aligned {
        true => Some(line.len()),
        false => line.find(|c: char| c.is_ascii_digit()),
    };
    format!("{out} @{column:?}")
}

/// The lines compared for their layout: all but interval lines and histogram rows, whose
/// count follows the figures.
fn layout(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with('[') && !l.contains(" |"))
        .map(shape)
        .collect()
}

#[test]
fn issue_48_called_as_sysbench_its_output_is_sysbenchs() {
    let s = Scratch::new();
    sql(&format!("DROP DATABASE IF EXISTS {DB}"));
    sql(&format!("CREATE DATABASE {DB}"));
    let prepare = "oltp_read_write --tables=1 --table-size=1000 prepare";
    let o = sysbench(&words(prepare));
    assert!(o.status.success(), "{}", stderr(&o));
    let their_prepare = stdout(&o);
    let theirs = sysbench(&words(LINE));
    assert!(theirs.status.success(), "{}", stderr(&theirs));
    let ours = qpslab_as_sysbench(&s, &words(LINE));
    assert!(ours.status.success(), "{}", stderr(&ours));
    let (a, b) = (stdout(&theirs), stdout(&ours));

    // Line for line, numbers aside; the histogram rows in sysbench's columns.
    assert_eq!(layout(&a), layout(&b), "sysbench:\n{a}\nqpslab:\n{b}");
    for row in b.lines().filter(|l| l.contains(" |")) {
        assert_eq!(row.find('|'), Some(13), "{row}");
        assert!(row[14..54].chars().all(|c| c == '*' || c == ' '), "{row}");
        assert!(row[55..].parse::<u64>().is_ok(), "{row}");
    }
    assert!(
        !b.contains("qpslab:") && !b.contains("stored as run"),
        "{b}"
    );
    assert!(stderr(&ours).contains("stored as run"), "{}", stderr(&ours));
    assert!(
        stderr(&ours).contains("qpslab: stability:"),
        "{}",
        stderr(&ours)
    );

    // The harnesses' expressions: every interval line matches the per-line ones, each summary
    // expression matches once, in both outputs.
    let per_interval = [
        // PerfKitBenchmarker's ParseSysbenchTimeSeries.
        r"^\[",
        r"tps: (.*?) ",
        r"lat \(.*?\): (.*?) ",
        r"qps: (.*?) \(.*?\) ",
        r"\[ ([0-9]+)s \]",
        // Shell patterns anchored at the line's end.
        r"reconn/s: [0-9.]+$",
        r"err/s: [0-9.]+ reconn/s: [0-9.]+$",
    ];
    let summary = [
        // PerfKitBenchmarker's ParseSysbenchTransactions and ParseSysbenchLatency.
        r"transactions: *[0-9]* *\(([0-9]*[.]?[0-9]+) per sec.\)",
        r"queries: *[0-9]* *\(([0-9]*[.]?[0-9]+) per sec.\)",
        r"min: *([0-9]*[.]?[0-9]+)",
        r"avg: *([0-9]*[.]?[0-9]+)",
        r"max: *([0-9]*[.]?[0-9]+)",
        r"95th percentile: *([0-9]*[.]?[0-9]+)",
        // Performa's PATTERNS (the version, then the summary's lines).
        r"sysbench (?P<version>[\d\.]+)",
        r"\s+transactions:\s+(?P<transactions>\d+).*\n",
        r"\s+total time:\s+(?P<duration>[\d\.]+).*\n",
        // Shell: sysbench's summary lines anchored at their end.
        r"^\s+sum:\s+[0-9.]+$",
        r"^\s+events \(avg/stddev\):\s+[0-9.]+/[0-9.]+$",
        r"^\s+execution time \(avg/stddev\):\s+[0-9.]+/[0-9.]+$",
    ];
    // Performa's TEST_STATS, across lines.
    let queries_performed = r"\s+queries performed:\s*\n\s+read:\s+(?P<queries_read>\d+)\s*\n\s+write:\s+(?P<queries_write>\d+).*\n\s+other:\s+(?P<queries_other>\d+).*\n\s+total:\s+(?P<queries_total>\d+).*\n";
    for (name, out) in [("sysbench", &a), ("qpslab", &b)] {
        let n = intervals(out).len();
        assert!(n >= 1, "{name}: no interval line in\n{out}");
        for p in per_interval {
            assert_eq!(matches(out, p, false), n, "{name}: `{p}` in\n{out}");
        }
        for p in summary {
            let multiline = p.ends_with(r"\n");
            assert_eq!(matches(out, p, multiline), 1, "{name}: `{p}` in\n{out}");
        }
        assert_eq!(matches(out, queries_performed, true), 1, "{name}: {out}");
        // `awk '{print $NF}'` of the interval lines: reconn/s's figure.
        let last = shell("grep '^\\[' | awk '{print $NF}'", out);
        assert_eq!(last.lines().count(), n, "{name}: {last}");
        for v in last.lines() {
            assert!(v.parse::<f64>().is_ok(), "{name}: $NF is {v:?}");
        }
    }
    let cleanup = "oltp_read_write --tables=1 cleanup";
    let o = sysbench(&words(cleanup));
    assert!(o.status.success(), "{}", stderr(&o));
    let their_cleanup = stdout(&o);
    // prepare and cleanup through the link print what sysbench's printed, the version aside.
    let body = |text: &str| text.split_once('\n').map(|(_, b)| b.to_string());
    let o = qpslab_as_sysbench(&s, &words(prepare));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(body(&stdout(&o)), body(&their_prepare), "{}", stdout(&o));
    let o = qpslab_as_sysbench(&s, &words(cleanup));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(body(&stdout(&o)), body(&their_cleanup), "{}", stdout(&o));
}

#[test]
fn issue_48_sysbench_version_keeps_version_checks_true() {
    let s = Scratch::new();
    let o = qpslab_as_sysbench(&s, &["--version".to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("sysbench 1.0.20 (qpslab "),
        "{}",
        stdout(&o)
    );
    let o = s.run(&["sysbench", "--version"]);
    assert!(stdout(&o).starts_with("sysbench 1."), "{}", stdout(&o));
}

/// A `set -e` script doing fileio's prepare, run and cleanup, as sysbench's users run it.
const FILEIO_SCRIPT: &str = "set -e
sysbench fileio --file-total-size=8M --file-num=4 prepare
stat -c '%n %s' test_file.*
sysbench fileio --file-total-size=8M --file-num=4 --file-test-mode=rndrw --time=2 \
 --report-interval=1 run
sysbench fileio --file-total-size=8M --file-num=4 cleanup
ls test_file.* 2>/dev/null || echo no test files left
";

/// Runs [`FILEIO_SCRIPT`] in a directory of its own, `sysbench` found first in `path_first`
/// (none: the installed sysbench); its standard output.
fn fileio_script(s: &Scratch, name: &str, path_first: Option<&std::path::Path>) -> String {
    let dir = s.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    let scratch = s.cmd(&[]);
    let mut cmd = Command::new("sh");
    for (k, v) in scratch.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    if let Some(first) = path_first {
        let path = std::env::var("PATH").unwrap_or_default();
        cmd.env("PATH", format!("{}:{path}", first.display()));
    }
    let o = cmd
        .args(["-c", FILEIO_SCRIPT])
        .current_dir(&dir)
        .output()
        .expect("sh");
    assert!(o.status.success(), "{name}: {}{}", stdout(&o), stderr(&o));
    stdout(&o)
}

#[test]
fn issue_48_fileio_prepare_run_cleanup_pass_under_set_e_as_sysbenchs() {
    let s = Scratch::new();
    let links = s.path().join("links");
    std::fs::create_dir(&links).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_qpslab"), links.join("sysbench")).unwrap();
    let theirs = fileio_script(&s, "sysbench", None);
    let ours = fileio_script(&s, "qpslab", Some(&links));
    // The files prepare left (names and sizes), and none after cleanup.
    let files = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| l.starts_with("test_file."))
            .map(String::from)
            .collect()
    };
    assert_eq!(files(&theirs), files(&ours), "{ours}");
    assert_eq!(files(&ours).len(), 4, "{ours}");
    assert!(ours.contains("test_file.3 2097152"), "{ours}");
    assert!(ours.ends_with("no test files left\n"), "{ours}");
    // Line for line, numbers aside.
    assert_eq!(
        layout(&theirs),
        layout(&ours),
        "sysbench:\n{theirs}\nqpslab:\n{ours}"
    );
    assert!(!intervals(&ours).is_empty(), "{ours}");
    for line in intervals(&ours) {
        assert!(line.ends_with(|c: char| c.is_ascii_digit()), "{line}");
        assert!(
            line.contains("] reads: ") && line.contains(" latency (ms,95%): "),
            "{line}"
        );
    }
}

/// sysbench-tpcc's lines (Percona-Lab/sysbench-tpcc's README: `./tpcc.lua --mysql-socket=...
/// --threads=... --tables=... --scale=... --db-driver=mysql prepare`, then `run`, `cleanup`),
/// through the link: prepared, run with sysbench's lines, checked and cleaned up.
#[test]
fn issue_48_sysbench_tpcc_lines_run_through_the_link() {
    let s = Scratch::new();
    let db = "tpcc48";
    sql(&format!("DROP DATABASE IF EXISTS {db}"));
    sql(&format!("CREATE DATABASE {db}"));
    let line = |rest: &str| -> Vec<String> {
        let mut w = vec![
            "/usr/share/sysbench/tpcc.lua".to_string(),
            "--db-driver=mysql".into(),
            format!("--mysql-socket={}", socket()),
            "--mysql-user=root".into(),
            format!("--mysql-db={db}"),
            "--tables=1".into(),
            "--scale=1".into(),
            "--use_fk=0".into(),
            "--trx_level=RC".into(),
        ];
        w.extend(rest.split_whitespace().map(String::from));
        w
    };
    let o = qpslab_as_sysbench(&s, &line("--threads=2 prepare"));
    assert!(o.status.success(), "{}", stderr(&o));
    let o = qpslab_as_sysbench(&s, &line("--threads=2 --time=2 --report-interval=1 run"));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("sysbench 1.0.20 ("), "{out}");
    assert!(!intervals(&out).is_empty(), "{out}");
    for l in intervals(&out) {
        assert!(matches(l, r"reconn/s: [0-9.]+$", false) == 1, "{l}");
    }
    assert_eq!(
        matches(
            &out,
            r"transactions: *[0-9]* *\(([0-9]*[.]?[0-9]+) per sec.\)",
            false
        ),
        1,
        "{out}"
    );
    assert!(
        stderr(&o).contains("qpslab: NewOrder/min:"),
        "{}",
        stderr(&o)
    );
    // --trx_level=RC is each session's isolation level: a statement that fails (1242, a
    // subquery of two rows) unless the session reads committed stops the run.
    let script = s.path().join("rc.sql");
    std::fs::write(
        &script,
        "SELECT IF(@@session.tx_isolation = 'READ-COMMITTED', 1, (SELECT 1 UNION SELECT 2));\n",
    )
    .unwrap();
    let script = script.display().to_string();
    let sock = socket();
    for (level, code) in [("RC", Some(0)), ("RR", Some(1))] {
        let o = s.run(&[
            "run",
            "--script",
            &script,
            "--socket",
            &sock,
            "-u",
            "root",
            "-D",
            db,
            "--time=1",
            &format!("--trx_level={level}"),
        ]);
        assert_eq!(o.status.code(), code, "{level}: {}", stderr(&o));
    }
    let o = qpslab_as_sysbench(&s, &line("check"));
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let o = qpslab_as_sysbench(&s, &line("cleanup"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        sql(&format!(
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '{db}'"
        ))
        .trim(),
        "0"
    );
}

/// A sysbench 0.4/0.5 option that 1.0 lacks is refused in one line naming 1.0's way (exit 2).
#[test]
fn issue_48_old_spellings_without_a_1_0_equivalent_are_refused_in_one_line() {
    let s = Scratch::new();
    for (line, why) in [
        (
            &["--test=oltp", "--oltp-table-name=t", "run"][..],
            "--oltp-table-name=t: sysbench 1.0 names its tables sbtest1..N (--tables N)",
        ),
        (
            &["--test=oltp", "--oltp-test-mode=nontrx", "run"],
            "--oltp-test-mode=nontrx: sysbench 1.0 has no such mode",
        ),
    ] {
        let words: Vec<String> = line.iter().map(|w| w.to_string()).collect();
        let o = qpslab_as_sysbench(&s, &words);
        assert_eq!(o.status.code(), Some(2), "{line:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
    }
}

/// `qpslab io`'s three steps without sysbench's words: `--prepared` measures only files that are
/// there (exit 2 naming the first missing), `--prepare` and `--cleanup` need no test mode.
#[test]
fn issue_48_io_prepared_needs_the_files_prepare_left() {
    let s = Scratch::new();
    let dir = s.path().display().to_string();
    let files = ["--file-total-size", "1M", "--file-num", "2", "--dir", &dir];
    let o = s.run(&[&["io", "rndrd", "--prepared", "--time", "1"][..], &files].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("test_file.0: not there"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    let o = s.run(&[&["io", "--prepare"][..], &files].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    for i in 0..2 {
        let len = std::fs::metadata(s.path().join(format!("test_file.{i}")))
            .unwrap()
            .len();
        assert_eq!(len, 512 * 1024);
    }
    let o = s.run(&[&["io", "--cleanup"][..], &files].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!s.path().join("test_file.0").exists());
}
