//! Fixed-rate latency the client does not inflate: at `--rate 200` and `--rate 2000` on the
//! idle shared server, qpslab's intended-start p50 is compared with sysbench 1.0.20's p50 at
//! the same rate, sessions and tables, the two tools interleaved (A B A B A B) and the pair in
//! which they came closest compared; and the loop's own lateness, stored apart from latency,
//! stays far below the millisecond a `epoll_wait` timeout costs.
//!
//! Why not against the unpaced p50: a server that idles between arrivals answers each one from
//! sleep, and on a VM that wake-up (the server's thread, then the client's) costs more than a
//! hot query. On the 2-core VM of bench/RESULTS.md the unpaced p50 is 0.018 ms, the paced one
//! 0.09-0.2 ms for qpslab and 0.08-0.16 ms for sysbench, and a statement timed from its send
//! (no timer involved) takes 0.16 ms at 200/s. The reference tool on the same server is the
//! measure of what the client adds.

mod common;
use common::*;
use serde_json::Value;
use std::process::Command;

const DB: &str = "pacedb";
const SHAPE: [&str; 4] = ["--tables", "1", "--table-size", "2000"];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One qpslab run at `rate` (None: unpaced): its p50 and its loops' median lateness, in ms.
fn ours(s: &Scratch, rate: Option<u32>) -> (f64, Option<f64>) {
    let sock = socket();
    let rate_s = rate.map(|r| r.to_string());
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--socket",
        &sock,
        "--database",
        DB,
        "--threads",
        "2",
        "--time",
        "3",
        "--warmup",
        "1",
        "--percentiles",
        "50",
    ];
    args.extend_from_slice(&SHAPE);
    if let Some(r) = &rate_s {
        args.extend_from_slice(&["--rate", r]);
    }
    let o = s.run(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let id = stored_run_id(&stdout(&o));
    let o = s.run(&["show", &id, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let result = &doc["phases"][0]["result"];
    let p50 = result["latency"]["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["p"] == 50.0)
        .and_then(|p| p["ms"].as_f64())
        .expect("p50 stored");
    (p50, result["rate"]["client_p50_late_ms"].as_f64())
}

/// One sysbench run at `rate`: its p50 in ms.
fn theirs(rate: u32) -> f64 {
    let o = Command::new("sysbench")
        .args([
            "oltp_point_select",
            &format!("--mysql-socket={}", socket()),
            "--mysql-user=root",
            &format!("--mysql-db={DB}"),
            "--db-driver=mysql",
            "--tables=1",
            "--table-size=2000",
            "--threads=2",
            "--time=3",
            "--percentile=50",
            &format!("--rate={rate}"),
            "run",
        ])
        .output()
        .expect("sysbench is installed");
    assert!(o.status.success(), "sysbench: {}", stderr(&o));
    stdout(&o)
        .lines()
        .find_map(|l| l.trim().strip_prefix("50th percentile:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no p50 in sysbench's report:\n{}", stdout(&o)))
}

#[test]
fn paced_latency_is_the_servers_not_the_clients() {
    let s = Scratch::new();
    prepare_shared(&s, "oltp_point_select", DB, &SHAPE);
    let (unpaced, _) = ours(&s, None);
    for rate in [200, 2000] {
        let (mut pairs, mut late) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let (p50, lateness) = ours(&s, Some(rate));
            late.push(lateness.expect("a paced run stores its loops' lateness"));
            pairs.push((p50, theirs(rate)));
        }
        // The pair in which qpslab came closest to sysbench: a busy machine (CI runs beside
        // other jobs) slows either tool in one pair, and more in qpslab's figure, which counts
        // from the intended start; a client that adds latency by itself does so in every pair.
        // sysbench prints two decimals: 0.01 ms of slack for its rounding.
        let ratio = |&(q, sb): &(f64, f64)| q / (sb + 0.01);
        let (q, sb) = *pairs
            .iter()
            .min_by(|a, b| ratio(a).total_cmp(&ratio(b)))
            .expect("three pairs");
        let late = median(late);
        let facts = format!(
            "--rate {rate}: qpslab p50 {q:.3} ms, sysbench p50 {sb:.3} ms in the closest pair \
             of {pairs:?} (qpslab, sysbench), loop lateness p50 {late:.3} ms, unpaced p50 \
             {unpaced:.3} ms"
        );
        eprintln!("{facts}");
        assert!(q <= 2.0 * (sb + 0.01), "{facts}");
        // A millisecond epoll timeout made this about 0.5 ms.
        assert!(late < 0.25, "{facts}");
    }
}
