//! `qpslab digest` in bounded memory (issue 45): a log of 500,000 distinct classes digested
//! under a 1 GiB address-space cap ends with exit 0 (kept classes plus `other` add up to every
//! entry); `--max-classes N` keeps N and shows the folded rest in every output format.

mod common;
use common::*;
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// A slow log of `n` classes (`SELECT c FROM sbtest WHERE colI = 5`), one entry each, class I
/// taking (I % 1000) µs.
fn classes_log(path: &Path, n: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        f,
        "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB. started with:"
    )
    .unwrap();
    writeln!(f, "Tcp port: 3306  Unix socket: /tmp/x.sock").unwrap();
    writeln!(f, "Time\t\t    Id Command\tArgument").unwrap();
    for i in 0..n {
        write!(
            f,
            "# Time: 261123  4:25:49\n# User@Host: root[root] @ localhost []\n\
             # Thread_id: 6  Schema: shop  QC_hit: No\n\
             # Query_time: 0.{:06}  Lock_time: 0.000001  Rows_sent: 1  Rows_examined: 1\n\
             SET timestamp=1795407949;\nSELECT c FROM sbtest WHERE col{i} = 5;\n",
            i % 1000
        )
        .unwrap();
    }
}

/// The JSON report's kept classes plus other: (entries, their query time in µs).
fn accounted(v: &Value) -> (u64, u64) {
    let top = v["top"].as_array().unwrap();
    let count: u64 = top.iter().map(|c| c["count"].as_u64().unwrap()).sum();
    let time: f64 = top
        .iter()
        .map(|c| c["query_time"]["total_s"].as_f64().unwrap())
        .sum();
    let o = &v["other"];
    let time = time + o["query_time_s"].as_f64().unwrap_or(0.0);
    (
        count + o["count"].as_u64().unwrap(),
        (time * 1e6).round() as u64,
    )
}

#[test]
fn issue_45_half_a_million_classes_under_a_1_gib_cap() {
    let s = Scratch::new();
    let log = s.path().join("classes.log");
    let n = 500_000;
    classes_log(&log, n);
    let json = s.path().join("d.json");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 1048576 && exec "$0" digest "$1" --format json > "$2""#)
        .arg(env!("CARGO_BIN_EXE_qpslab"))
        .arg(&log)
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["entries"].as_u64(), Some(n));
    let kept = v["classes"].as_u64().unwrap();
    assert!(kept < n && kept >= 1000, "{kept}");
    assert_eq!(v["other"]["tallies"].as_u64(), Some(n - kept));
    // Every entry counted once; the log's times are whole µs: sum of i % 1000 over the classes.
    let want_us: u64 = (0..n).map(|i| i % 1000).sum();
    assert_eq!(accounted(&v), (n, want_us));
}

#[test]
fn issue_45_max_classes_folds_the_rest_into_other_in_every_format() {
    let s = Scratch::new();
    let log = s.path().join("small.log");
    classes_log(&log, 2000);
    let log = log.to_str().unwrap();
    let o = s.run(&["digest", log, "--format", "json", "--max-classes", "100"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["classes"].as_u64().unwrap() <= 100);
    assert_eq!(v["max_classes"].as_u64(), Some(100));
    let want_us: u64 = (0..2000).map(|i| i % 1000).sum();
    assert_eq!(accounted(&v), (2000, want_us));
    let folded = v["other"]["count"].as_u64().unwrap();
    assert!(folded >= 1900, "{folded}");
    let row = format!("other ({} classes folded)", v["other"]["tallies"]);
    let facts = format!("at most 100 kept; {folded} entries of");
    for format in ["table", "md"] {
        let o = s.run(&["digest", log, "--format", format, "--max-classes", "100"]);
        let out = stdout(&o);
        assert!(
            out.contains(&row) && out.contains(&facts),
            "{format}: {out}"
        );
    }
    let o = s.run(&["digest", log, "--max-classes", "0"]);
    assert_user_error(&o, "--max-classes");
}
