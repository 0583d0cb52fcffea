//! What limited a phase is decided once, when it ends, and stored with it
//! (`PhaseResult::limits`); every surface shows that one value: `run`'s summary and `show` say
//! `limited by: ...` in the same words, `show --format json` carries the whole verdict with
//! every figure, and `compare` sets both sides' limiters side by side.

mod common;
use common::*;
use qpslab_core::limits::{decide, Evidence, Limits};
use qpslab_core::{RunPlan, WorkloadKind, WorkloadOptions};
use qpslab_store::{RunMeta, RunStatus, Store};
use serde_json::Value;

/// A verdict: the server at `cpus` of its 1 CPU, `pool_reads` pages read from disk per 1000
/// events.
fn verdict(cpus: f64, pool_reads: u64) -> Limits {
    let mut l = decide(Evidence {
        duration_s: 6.0,
        events: 1000,
        sessions: 4,
        server_cpus_used: Some(cpus),
        server_cpus_allowed: Some(1.0),
        client_cpus_used: 0.2,
        machine_cpus: 2.0,
        pool_reads: Some(pool_reads),
        pool_read_requests: Some(100_000),
        fsyncs: Some(3),
        ..Evidence::default()
    });
    l.unseen = vec!["perf counters: not permitted".into()];
    l
}

/// Stores a run of one 4-session phase whose verdict is `limits`.
fn record(store: &mut Store, limits: Option<Limits>) {
    let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
    plan.threads = vec![4];
    let meta = RunMeta::new(
        plan,
        "root@localhost/sbtest".into(),
        Default::default(),
        Default::default(),
        "qpslab run oltp_point_select".into(),
    );
    let mut phase = stored::phase(4);
    phase.limits = limits;
    store.record_phase(&meta, &phase, &[]).unwrap();
    store.finish_run(&meta.uuid, RunStatus::Completed).unwrap();
}

/// The text after `limited by: ` on the lines of `text` that have it.
fn limited_by(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("limited by: "))
        .map(str::to_string)
        .collect()
}

fn ok(s: &Scratch, args: &[&str]) -> String {
    let o = s.run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// The verdicts of stored runs (no server): `show` in text and JSON, `compare` in text, JSON
/// and Markdown, `report` in Markdown, all from the one stored value.
#[test]
fn a_stored_verdict_reads_the_same_on_every_surface() {
    let s = Scratch::new();
    let (a, b) = (verdict(0.9, 2000), verdict(0.97, 10));
    assert_eq!(a.short(), "buffer pool + server CPU");
    let mut store = Store::open(&s.db()).unwrap();
    record(&mut store, Some(a.clone()));
    record(&mut store, Some(b.clone()));
    record(&mut store, None);
    drop(store);

    let show = ok(&s, &["show", "1"]);
    assert_eq!(limited_by(&show), [a.to_string()], "{show}");
    assert!(
        show.contains(&format!(
            "  phase of 4 thread(s):\n    limited by: {a}\n        not seen: perf counters: \
             not permitted\n"
        )),
        "{show}"
    );
    let doc: Value = serde_json::from_str(&ok(&s, &["show", "1", "--format", "json"])).unwrap();
    let stored: Limits =
        serde_json::from_value(doc["phases"][0]["result"]["limits"].clone()).unwrap();
    assert_eq!(stored, a, "show --format json carries the whole verdict");
    assert_eq!(
        doc["phases"][0]["result"]["limits"]["evidence"]["pool_reads"],
        2000
    );
    let old = ok(&s, &["show", "3"]);
    assert!(limited_by(&old).is_empty(), "no verdict, no line: {old}");

    let cmp = ok(&s, &["compare", "1", "2"]);
    for want in [
        "what limited each side:\n  A run 1: buffer pool + server CPU\n  B run 2: server CPU\n",
        "  the limiter moved from buffer pool to server CPU\n",
        "  moved most: pool reads per event: 2.00 → 0.010; server CPUs used: 0.900 → 0.970\n",
    ] {
        assert!(cmp.contains(want), "no {want:?} in {cmp}");
    }
    let cj: Value =
        serde_json::from_str(&ok(&s, &["compare", "1", "2", "--format", "json"])).unwrap();
    let sides = &cj["points"][0]["limits"];
    assert_eq!(sides["a"], a.short());
    assert_eq!(sides["b"], b.short());
    assert_eq!(
        sides["moved"],
        "the limiter moved from buffer pool to server CPU"
    );
    let md = ok(&s, &["compare", "1", "2", "--format", "md"]);
    assert!(
        md.contains("What limited each side:\n\n- A run 1: buffer pool + server CPU\n"),
        "{md}"
    );
    let old = ok(&s, &["compare", "3", "2"]);
    assert!(
        old.contains(
            "what limited each side:\n  no limiter verdict for run 3: stored before verdicts \
             were kept, or not a load (run 2: server CPU)\n"
        ),
        "{old}"
    );

    let report = ok(&s, &["report", "1", "2", "--format", "md"]);
    let want = format!(
        "## What limited each phase\n\n- run 1 · threads=4: limited by: {a}\n  - not seen: \
         perf counters: not permitted\n- run 2 · threads=4: limited by: {b}\n"
    );
    assert!(report.contains(&want), "no {want:?} in:\n{report}");
}

/// Two short real runs on the embedded sandbox: the limiter line of each run's summary is the
/// one `show` prints and the verdict `show --format json` stores, and `compare` names both
/// sides' limiters.
#[test]
fn a_real_run_says_what_limited_it_and_show_and_compare_agree() {
    let s = Scratch::new();
    let mut runs = Vec::new();
    for _ in 0..2 {
        let o = s.run(&[
            "run",
            "oltp_point_select",
            "--table-size",
            "500",
            "--threads",
            "2",
            "--time",
            "2",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        let lines = limited_by(&out);
        assert_eq!(lines.len(), 1, "one limiter line per phase in:\n{out}");
        runs.push((stored_run_id(&out), lines[0].clone()));
    }
    let mut shorts = Vec::new();
    for (id, line) in &runs {
        let show = ok(&s, &["show", id]);
        assert_eq!(limited_by(&show), std::slice::from_ref(line), "{show}");
        let doc: Value = serde_json::from_str(&ok(&s, &["show", id, "--format", "json"])).unwrap();
        let l: Limits = serde_json::from_value(doc["phases"][0]["result"]["limits"].clone())
            .expect("show --format json: the phase's whole verdict");
        assert_eq!(
            &l.to_string(),
            line,
            "the summary's line is the stored verdict"
        );
        assert!(
            l.evidence.duration_s > 0.0 && l.evidence.events > 0,
            "{l:?}"
        );
        shorts.push(l.short());
    }
    let cmp = ok(&s, &["compare", &runs[0].0, &runs[1].0]);
    let want = format!(
        "what limited each side:\n  A run {}: {}\n  B run {}: {}\n",
        runs[0].0, shorts[0], runs[1].0, shorts[1]
    );
    assert!(cmp.contains(&want), "no {want:?} in:\n{cmp}");
}
