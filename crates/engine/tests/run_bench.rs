//! Side-by-side with sysbench on the same sandbox (ignored by default; numbers, not checks):
//!
//! ```text
//! cargo test --release -p qpslab-engine --test run_bench -- --ignored --nocapture
//! ```
//! `QPSLAB_BENCH_THREADS` (default `4,64,256,1024`) and `QPSLAB_BENCH_TIME` (default 8 s) shape
//! it; `QPSLAB_BENCH_SYSBENCH=0` skips sysbench (for profiling). sysbench's CPU comes from `getrusage(RUSAGE_CHILDREN)`, ours from the phase result.

#[path = "run_common.rs"]
mod common;

use common::*;
use qpslab_core::workload::WorkloadKind;
use std::process::Command;

fn children_cpu_s() -> f64 {
    // SAFETY: rusage is plain integers, valid when zeroed.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we pass.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn sysbench(socket: &str, args: &[String]) -> String {
    let out = Command::new("sysbench")
        .arg("oltp_point_select")
        .args(args)
        .args([
            "--tables=8",
            "--table-size=10000",
            &format!("--mysql-socket={socket}"),
            "--mysql-user=root",
            "--mysql-db=sbtest",
        ])
        .output()
        .expect("sysbench runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `queries: N (Q per sec.)` from sysbench's report.
fn sysbench_queries(report: &str) -> (u64, f64) {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with("queries:"))
        .expect("a queries line");
    let mut parts = line.split_whitespace();
    let n = parts.nth(1).unwrap().parse().unwrap();
    let qps = parts
        .next()
        .unwrap()
        .trim_start_matches('(')
        .parse()
        .unwrap();
    (n, qps)
}

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture in release mode"]
fn point_select_against_sysbench() {
    let server = qpslab_sandbox::testing::shared_server();
    let socket = server.socket().display().to_string();
    let threads: Vec<u32> = std::env::var("QPSLAB_BENCH_THREADS")
        .unwrap_or_else(|_| "4,64,256,1024".into())
        .split(',')
        .map(|t| t.trim().parse().unwrap())
        .collect();
    let time: f64 = std::env::var("QPSLAB_BENCH_TIME").map_or(8.0, |t| t.parse().unwrap());
    let mut ctl = control(&server.connect_options());
    ctl.execute("CREATE DATABASE IF NOT EXISTS sbtest").unwrap();
    sysbench(&socket, &["prepare".into()]);
    let mut opts = server.connect_options();
    opts.database = Some("sbtest".into());
    let p = plan(WorkloadKind::OltpPointSelect, 8, 10_000, time);
    let with_sysbench = std::env::var("QPSLAB_BENCH_SYSBENCH").map_or(true, |v| v != "0");
    println!("threads | tool     |     QPS | client CPU us/query | RSS MiB");
    for &n in &threads {
        // Interleave the tools so drift in this noisy VM hits both.
        if with_sysbench {
            sysbench_row(&socket, n, time);
        }
        let (r, _) = run(&opts, &p, n);
        let r = r.unwrap();
        println!(
            "{n:7} | qpslab   | {:7.0} | {:19.1} | {}",
            r.qps(),
            r.client_cpu_us_per_query().unwrap_or(0.0),
            r.client_cpu.max_rss_kib / 1024
        );
    }
}

fn sysbench_row(socket: &str, n: u32, time: f64) {
    let before = children_cpu_s();
    let report = sysbench(
        socket,
        &[
            format!("--threads={n}"),
            format!("--time={time}"),
            "run".into(),
        ],
    );
    let cpu = children_cpu_s() - before;
    let (q, qps) = sysbench_queries(&report);
    println!(
        "{n:7} | sysbench | {qps:7.0} | {:19.1} |",
        cpu * 1e6 / q as f64
    );
}
