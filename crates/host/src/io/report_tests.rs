use super::*;
use serde_json::json;

fn dir(ios: u64, bins: Value) -> Value {
    json!({
        "io_bytes": ios * 4096, "bw_bytes": ios as f64 * 4096.0, "total_ios": ios,
        "clat_ns": {"min": 1000, "max": 9000, "mean": 2500.5,
                    "percentile": {"50.000000": 2000, "99.900000": 9000},
                    "bins": bins}
    })
}

fn report(runtime_ms: u64, reads: u64, bins: Value) -> Value {
    json!({
        "fio version": "fio-3.33",
        "jobs": [{"error": 0, "job_runtime": runtime_ms,
                  "read": dir(reads, bins.clone()), "write": dir(0, json!({})),
                  "mixed": dir(reads, bins), "sync": {"total_ios": 0}}]
    })
}

#[test]
fn a_report_reads_as_fio_computed_it() {
    let s = Snapshot::parse(&report(2000, 4, json!({"1000": 1, "2000": 2, "9000": 1}))).unwrap();
    assert_eq!(s.version, "fio-3.33");
    assert_eq!(s.mixed.percentiles, vec![(50.0, 2000.0), (99.9, 9000.0)]);
    let p = phase(2, &s, Vec::new(), vec!["fio".into()]);
    assert_eq!(p.events, 4);
    assert_eq!(p.tps(), 2.0);
    assert_eq!(p.latency.percentiles[1], Percentile { p: 99.9, ms: 0.009 });
    assert_eq!(p.latency.max_ms, 0.009);
    let io = p.io.unwrap();
    assert_eq!(io.read_mib_s, 4.0 * 4096.0 / MIB);
    assert_eq!(io.write_ops, 0);
}

#[test]
fn samples_are_histogram_differences_and_a_short_tail_joins_the_last() {
    let snaps: Vec<Snapshot> = [
        report(1000, 2, json!({"1000": 2})),
        report(2000, 5, json!({"1000": 2, "3000": 3})),
        report(2100, 6, json!({"1000": 2, "3000": 3, "9000": 1})),
    ]
    .iter()
    .map(|r| Snapshot::parse(r).unwrap())
    .collect();
    let s = samples(&snaps, 1.0);
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].events, s[0].interval_s), (2, 1.0));
    assert_eq!(
        (s[1].events, s[1].interval_s, s[1].elapsed_s),
        (4, 1.1, 2.1)
    );
    assert_eq!(s[1].latency.max_ms, 0.009);
    assert_eq!(s[1].latency.min_ms, 0.003);
    assert_eq!(
        s[1].latency.percentiles[0],
        Percentile { p: 50.0, ms: 0.003 }
    );
    assert_eq!(s[1].queries.read, 4);
}

#[test]
fn percentiles_of_bins_follow_fio() {
    let bins: BTreeMap<u64, u64> = [(10, 50), (20, 45), (30, 5)].into();
    assert_eq!(bins_percentile(&bins, 50.0), Some(10));
    assert_eq!(bins_percentile(&bins, 95.0), Some(20));
    assert_eq!(bins_percentile(&bins, 99.0), Some(30));
    assert_eq!(bins_percentile(&BTreeMap::new(), 50.0), None);
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    let mut failed_job = report(1000, 1, json!({}));
    failed_job["jobs"][0]["error"] = json!(5);
    let mut two_jobs = report(1000, 1, json!({}));
    two_jobs["jobs"] = json!([1, 2]);
    let mut bad_bin = report(1000, 1, json!({"x": 1}));
    let mut no_mixed = report(1000, 1, json!({}));
    no_mixed["jobs"][0].as_object_mut().unwrap().remove("mixed");
    let mut bad_pct = report(1000, 1, json!({}));
    bad_pct["jobs"][0]["mixed"]["clat_ns"]["percentile"] = json!({"50": "soon"});
    let negative = {
        let mut r = report(1000, 1, json!({}));
        r["jobs"][0]["job_runtime"] = json!(-1);
        r
    };
    bad_bin["jobs"][0]["mixed"]["clat_ns"]["bins"] = json!({"x": 1});
    for bad in [
        json!(null),
        json!([]),
        json!({"jobs": []}),
        json!({"fio version": 3, "jobs": []}),
        failed_job,
        two_jobs,
        bad_bin,
        no_mixed,
        bad_pct,
        negative,
    ] {
        assert!(Snapshot::parse(&bad).is_err(), "{bad}");
    }
    assert!(samples(&[], 1.0).is_empty());
}
