//! What limited each side of a comparison: both sides' limiters (as stored with their phases,
//! `PhaseResult::limits`), whether the first limiter moved, and the evidence figures that moved
//! most between the sides. Pure: the verdicts are decided once, when each phase ends; this only
//! sets two of them side by side.

use qpslab_core::limits::{Evidence, Limits, WaitKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A phase's verdict as every surface says it: `limited by: <the verdict's line>`, then
/// `not seen: a; b` when something could not be seen (run's summary, show, reports).
pub fn verdict_lines(l: &Limits) -> (String, Option<String>) {
    let unseen = (!l.unseen.is_empty()).then(|| format!("not seen: {}", l.unseen.join("; ")));
    (format!("limited by: {l}"), unseen)
}

/// How many moved figures a comparison lists.
pub const MOVED_SHOWN: usize = 3;

/// Both sides' verdicts at one setting.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SidesLimits {
    /// The baseline's limiters (`buffer pool + server CPU`); with repeats that disagree, each
    /// distinct one joined by ` / `. `None`: no phase of the side carries a verdict.
    pub a: Option<String>,
    /// The candidate's.
    pub b: Option<String>,
    /// `the limiter moved from X to Y`, when the first limiters differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<String>,
    /// The evidence figures with the largest relative change, largest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<MovedFigure>,
}

/// One evidence figure on both sides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MovedFigure {
    /// What it is (`fsyncs per event`, `thread CPU: connections`).
    pub name: String,
    /// The baseline's value (the mean over its phases with a verdict).
    pub a: f64,
    /// The candidate's.
    pub b: f64,
}

impl MovedFigure {
    /// `fsyncs per event: 0.021 → 1.95`.
    pub fn text(&self) -> String {
        format!("{}: {} → {}", self.name, fig(self.a), fig(self.b))
    }
}

/// A figure with three significant digits (no exponent for ordinary sizes).
fn fig(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// The two sides' verdicts: each side's phases at one setting (`None` for a phase without one:
/// stored before verdicts were kept, or not a load).
pub fn sides(a: &[Option<&Limits>], b: &[Option<&Limits>]) -> SidesLimits {
    let a: Vec<&Limits> = a.iter().flatten().copied().collect();
    let b: Vec<&Limits> = b.iter().flatten().copied().collect();
    let moved = match (first_limiter(&a), first_limiter(&b)) {
        (Some(x), Some(y)) if x != y => Some(format!("the limiter moved from {x} to {y}")),
        _ => None,
    };
    let figures = if a.is_empty() || b.is_empty() {
        Vec::new()
    } else {
        moved_most(&mean_figures(&a), &mean_figures(&b), MOVED_SHOWN)
    };
    SidesLimits {
        a: side_text(&a),
        b: side_text(&b),
        moved,
        figures,
    }
}

/// The block's lines, `a_name` and `b_name` naming the sides: each side's limiters, the move,
/// the figures that moved most; or one line when a side has no verdict.
pub fn lines(s: &SidesLimits, a_name: &str, b_name: &str) -> Vec<String> {
    let missing: Vec<&str> = [(a_name, &s.a), (b_name, &s.b)]
        .iter()
        .filter(|(_, l)| l.is_none())
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        let (a, b) = (s.a.as_deref(), s.b.as_deref());
        let other = match (a, b) {
            (Some(x), None) => format!(" ({a_name}: {x})"),
            (None, Some(y)) => format!(" ({b_name}: {y})"),
            _ => String::new(),
        };
        return vec![format!(
            "no limiter verdict for {}: stored before verdicts were kept, or not a load{other}",
            missing.join(" and ")
        )];
    }
    let mut out = vec![
        format!("A {a_name}: {}", s.a.as_deref().unwrap_or("")),
        format!("B {b_name}: {}", s.b.as_deref().unwrap_or("")),
    ];
    out.extend(s.moved.clone());
    if !s.figures.is_empty() {
        let moved: Vec<String> = s.figures.iter().map(MovedFigure::text).collect();
        out.push(format!("moved most: {}", moved.join("; ")));
    }
    out
}

/// The label of the first limiter of the side's first verdict (`no clear limiter` for none).
fn first_limiter(side: &[&Limits]) -> Option<String> {
    let l = side.first()?;
    Some(
        l.limiters
            .first()
            .map_or_else(|| "no clear limiter".to_string(), |x| x.label()),
    )
}

/// The side's limiters, `short()` of each distinct verdict joined by ` / `.
fn side_text(side: &[&Limits]) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for l in side {
        let s = l.short();
        if !seen.contains(&s) {
            seen.push(s);
        }
    }
    (!seen.is_empty()).then(|| seen.join(" / "))
}

/// Each figure's mean over the verdicts that have it.
fn mean_figures(side: &[&Limits]) -> BTreeMap<String, f64> {
    let mut sums: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    for l in side {
        for (k, v) in figures(&l.evidence) {
            let e = sums.entry(k).or_default();
            e.0 += v;
            e.1 += 1;
        }
    }
    sums.into_iter()
        .map(|(k, (sum, n))| (k, sum / f64::from(n)))
        .collect()
}

/// The numeric figures of a verdict's evidence, by name; those not seen are left out.
pub fn figures(e: &Evidence) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let mut put = |name: &str, v: Option<f64>| {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            out.insert(name.to_string(), v);
        }
    };
    let session_s = e.session_s();
    let per_session_s = |s: f64| (session_s > 0.0).then(|| s / session_s);
    put("server CPUs used", e.server_cpus_used);
    put("client CPUs used", Some(e.client_cpus_used));
    put("others' share of the machine", e.others_share);
    put(
        "row lock seconds per session-second",
        e.row_lock_s.and_then(per_session_s),
    );
    put("fsyncs per event", e.fsyncs.and_then(|n| e.per_event(n)));
    put(
        "log waits per event",
        e.log_waits.and_then(|n| e.per_event(n)),
    );
    put(
        "pool reads per event",
        e.pool_reads.and_then(|n| e.per_event(n)),
    );
    put(
        "free-page waits per event",
        e.pool_wait_free.and_then(|n| e.per_event(n)),
    );
    if let Some(d) = e.disk.as_ref().filter(|d| d.reason.is_none()) {
        put("disk utilization", Some(d.utilization()));
    }
    if let Some(p) = &e.thread_pool {
        put(
            "thread pool queued per group",
            Some(p.queued / f64::from(p.size.max(1))),
        );
    }
    if let Some(n) = &e.net {
        put("softirq share", Some(n.softirq_share()));
    }
    if let Some(t) = &e.threads {
        for c in &t.classes {
            let cpus = (e.duration_s > 0.0).then(|| c.cpu_s / e.duration_s);
            put(&format!("thread CPU: {} (CPUs)", c.class.label()), cpus);
        }
    }
    if let Some(w) = &e.waits {
        let mut by_kind: BTreeMap<&'static str, f64> = BTreeMap::new();
        for t in &w.events {
            *by_kind.entry(wait_label(t.kind)).or_default() += t.seconds;
        }
        for (kind, s) in by_kind {
            put(
                &format!("{kind} wait seconds per session-second"),
                per_session_s(s),
            );
        }
    }
    for (counter, v) in &e.perf_per_event {
        let name = if counter == "ipc" || counter == "IPC" {
            "perf: IPC".to_string()
        } else {
            format!("perf: {counter} per event")
        };
        put(&name, Some(*v));
    }
    out
}

fn wait_label(k: WaitKind) -> &'static str {
    match k {
        WaitKind::Latch => "latch",
        WaitKind::RowLock => "row lock",
        WaitKind::TableLock => "table lock",
        WaitKind::LogIo => "redo log I/O",
        WaitKind::DataIo => "data I/O",
        WaitKind::Other => "other",
    }
}

/// The `n` figures both sides have whose relative change is largest, largest first. The
/// change is `|ln(b / a)|` (doubling and halving move as far); a figure zero on one side only
/// moved further than any other, and one zero on both did not move.
pub fn moved_most(
    a: &BTreeMap<String, f64>,
    b: &BTreeMap<String, f64>,
    n: usize,
) -> Vec<MovedFigure> {
    let mut all: Vec<(f64, MovedFigure)> = a
        .iter()
        .filter_map(|(name, &x)| {
            let y = *b.get(name)?;
            let (lo, hi) = (x.abs().min(y.abs()), x.abs().max(y.abs()));
            let change = if hi == 0.0 || x == y {
                return None;
            } else if lo == 0.0 || x.signum() != y.signum() {
                f64::INFINITY
            } else {
                (hi / lo).ln()
            };
            let f = MovedFigure {
                name: name.clone(),
                a: x,
                b: y,
            };
            Some((change, f))
        })
        .collect();
    // Largest first; equal changes (figures zero on one side) by the larger value.
    all.sort_by(|(c1, f1), (c2, f2)| {
        c2.total_cmp(c1).then_with(|| {
            let m = |f: &MovedFigure| f.a.abs().max(f.b.abs());
            m(f2).total_cmp(&m(f1))
        })
    });
    all.into_iter().take(n).map(|(_, f)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::limits::{decide, Class, ClassCpu, DiskUse, ThreadCpu, WaitTime, Waits};

    /// A phase whose server used `cpus` of 1 CPU and read `pool_reads` pages per event.
    fn verdict(cpus: f64, pool_reads: u64, fsyncs: u64) -> Limits {
        decide(Evidence {
            duration_s: 10.0,
            events: 1000,
            sessions: 8,
            server_cpus_used: Some(cpus),
            server_cpus_allowed: Some(1.0),
            client_cpus_used: 0.2,
            machine_cpus: 2.0,
            pool_reads: Some(pool_reads),
            pool_read_requests: Some(100_000),
            fsyncs: Some(fsyncs),
            ..Evidence::default()
        })
    }

    #[test]
    fn a_verdict_is_one_line_and_what_was_not_seen_another() {
        let mut l = verdict(0.97, 10, 0);
        l.unseen.clear();
        assert_eq!(
            verdict_lines(&l),
            (
                "limited by: server CPU (97% of its 1 CPU)".to_string(),
                None
            )
        );
        l.unseen = vec![
            "waits: performance_schema off".into(),
            "perf counters".into(),
        ];
        assert_eq!(
            verdict_lines(&l).1.as_deref(),
            Some("not seen: waits: performance_schema off; perf counters")
        );
    }

    #[test]
    fn figures_are_per_event_per_session_second_and_by_class() {
        let e = Evidence {
            duration_s: 10.0,
            events: 200,
            sessions: 4,
            row_lock_s: Some(8.0),
            fsyncs: Some(100),
            disk: Some(DiskUse {
                elapsed_s: 10.0,
                busy_ms: 5000,
                ..DiskUse::default()
            }),
            threads: Some(ThreadCpu {
                named_by: "performance_schema".into(),
                classes: vec![ClassCpu {
                    class: Class::Connection,
                    threads: 4,
                    cpu_s: 15.0,
                    busiest_s: 4.0,
                }],
                ..ThreadCpu::default()
            }),
            waits: Some(Waits {
                source: "performance_schema".into(),
                events: vec![
                    WaitTime {
                        name: "wait/synch/mutex/a".into(),
                        kind: WaitKind::Latch,
                        seconds: 2.0,
                        count: 5,
                    },
                    WaitTime {
                        name: "wait/synch/rwlock/b".into(),
                        kind: WaitKind::Latch,
                        seconds: 2.0,
                        count: 5,
                    },
                ],
                reason: None,
            }),
            perf_per_event: [("instructions".to_string(), 1.5e6)].into(),
            ..Evidence::default()
        };
        let f = figures(&e);
        assert_eq!(f["row lock seconds per session-second"], 0.2);
        assert_eq!(f["fsyncs per event"], 0.5);
        assert_eq!(f["disk utilization"], 0.5);
        assert_eq!(f["thread CPU: connections (CPUs)"], 1.5);
        assert_eq!(f["latch wait seconds per session-second"], 0.1);
        assert_eq!(f["perf: instructions per event"], 1.5e6);
        assert!(!f.contains_key("server CPUs used"), "not seen: left out");
    }

    #[test]
    fn the_three_figures_that_moved_most_are_listed_largest_first() {
        let a: BTreeMap<String, f64> = [
            ("x", 1.0),
            ("halved", 2.0),
            ("tripled", 1.0),
            ("from zero", 0.0),
            ("same", 5.0),
            ("only a", 1.0),
            ("nothing", 0.0),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into();
        let b: BTreeMap<String, f64> = [
            ("x", 1.1),
            ("halved", 1.0),
            ("tripled", 3.0),
            ("from zero", 0.4),
            ("same", 5.0),
            ("nothing", 0.0),
        ]
        .map(|(k, v)| (k.to_string(), v))
        .into();
        let m = moved_most(&a, &b, 3);
        let names: Vec<&str> = m.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["from zero", "tripled", "halved"]);
        assert_eq!(m[1].text(), "tripled: 1.00 → 3.00");
        assert_eq!(m[0].text(), "from zero: 0 → 0.400");
    }

    #[test]
    fn a_moved_limiter_is_named_with_both_sides_and_the_figures_behind_it() {
        // A: the buffer pool read 2 pages per event with the CPU at 90%; B: the pool warm, the CPU
        // at 97%.
        let a = verdict(0.9, 2000, 10);
        let b = verdict(0.97, 10, 10);
        assert_eq!(a.short(), "buffer pool + server CPU");
        assert_eq!(b.short(), "server CPU");
        let s = sides(&[Some(&a)], &[Some(&b)]);
        assert_eq!(s.a.as_deref(), Some("buffer pool + server CPU"));
        assert_eq!(s.b.as_deref(), Some("server CPU"));
        assert_eq!(
            s.moved.as_deref(),
            Some("the limiter moved from buffer pool to server CPU")
        );
        assert_eq!(s.figures[0].name, "pool reads per event");
        assert_eq!(s.figures[0].text(), "pool reads per event: 2.00 → 0.010");
        assert_eq!(s.figures.len(), 2, "fsyncs and client CPUs did not move");
        let l = lines(&s, "run 1", "run 2");
        assert_eq!(
            l,
            [
                "A run 1: buffer pool + server CPU",
                "B run 2: server CPU",
                "the limiter moved from buffer pool to server CPU",
                "moved most: pool reads per event: 2.00 → 0.010; server CPUs used: 0.900 → 0.970",
            ]
        );
    }

    #[test]
    fn the_same_limiter_does_not_move_and_repeats_are_averaged() {
        let s = sides(
            &[Some(&verdict(0.9, 10, 0)), Some(&verdict(1.0, 10, 0))],
            &[Some(&verdict(0.97, 10, 0))],
        );
        assert_eq!(s.moved, None);
        assert_eq!(s.a.as_deref(), Some("server CPU"));
        assert_eq!(s.figures.len(), 1, "{:?}", s.figures);
        assert_eq!(s.figures[0].text(), "server CPUs used: 0.950 → 0.970");
    }

    #[test]
    fn a_side_without_a_verdict_is_said_in_one_line() {
        let b = verdict(0.97, 10, 0);
        let s = sides(&[None], &[Some(&b)]);
        assert_eq!(s.a, None);
        assert!(s.figures.is_empty() && s.moved.is_none());
        assert_eq!(
            lines(&s, "run 1", "run 2"),
            [
                "no limiter verdict for run 1: stored before verdicts were kept, or not a load \
              (run 2: server CPU)"
            ]
        );
        let none = sides(&[None], &[]);
        assert_eq!(
            lines(&none, "run 1", "run 2"),
            [
                "no limiter verdict for run 1 and run 2: stored before verdicts were kept, or not \
              a load"
            ]
        );
    }

    /// Two runs whose verdicts differ, reported and compared: each phase's line in the report,
    /// each side's limiters in the comparison, in Markdown, HTML and JSON alike.
    #[test]
    fn reports_and_comparisons_say_what_limited_each_phase_and_side() {
        use crate::test_runs::{run, side, RO};
        let mut a = run(1, RO, 1000.0, 0.01);
        let mut b = run(2, RO, 1500.0, 0.01);
        let la = verdict(0.9, 2000, 10);
        let lb = verdict(0.97, 10, 10);
        a.phases[0].result.limits = Some(la.clone());
        b.phases[0].result.limits = Some(lb.clone());
        let input = crate::ReportInput {
            subjects: vec![crate::Subject::lone(a), crate::Subject::lone(b)],
            ..Default::default()
        };
        let report = crate::build(&input).unwrap();
        assert_eq!(report.results[0].limits.as_ref(), Some(&la));
        let md = crate::Format::Markdown.renderer().render(&report).unwrap();
        let html = crate::Format::Html.renderer().render(&report).unwrap();
        let json = crate::Format::Json.renderer().render(&report).unwrap();
        let first = format!("- run 1 · threads=4: limited by: {la}");
        assert!(
            md.contains(&format!("## What limited each phase\n\n{first}\n")),
            "{md}"
        );
        assert!(
            md.contains(&format!("- run 2 · threads=4: limited by: {lb}\n")),
            "{md}"
        );
        for want in [
            "What limited each side:\n\n- A run 1: buffer pool + server CPU\n- B run 2: server CPU",
            "- the limiter moved from buffer pool to server CPU\n",
            "- moved most: pool reads per event: 2.00 → 0.010",
        ] {
            assert!(md.contains(want), "no {want:?} in {md}");
        }
        assert!(html.contains("<h2 id=\"limits\">What limited each phase</h2>"));
        assert!(html.contains("<li>the limiter moved from buffer pool to server CPU</li>"));
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let stored: Limits = serde_json::from_value(v["results"][1]["limits"].clone()).unwrap();
        assert_eq!(stored, lb, "every figure, as stored");
        let c = &v["comparisons"][0]["points"][0]["limits"];
        assert_eq!(c["b"], "server CPU");
        assert_eq!(c["figures"][0]["name"], "pool reads per event");

        // Only one side has verdicts: the comparison says so, the report lists the other as
        // having none.
        let mut old = run(3, RO, 1000.0, 0.01);
        old.phases[0].result.limits = None;
        let (ia, ib) = (
            side("old", vec![old]),
            side("new", vec![input.subjects[1].run.clone()]),
        );
        let c = crate::compare(
            "old",
            &crate::model::points(&ia),
            "new",
            &crate::model::points(&ib),
        )
        .unwrap();
        assert_eq!(
            crate::limits_sides_lines(&c, &c.points[0]),
            ["no limiter verdict for old: stored before verdicts were kept, or not a load (new: \
              server CPU)"]
        );
    }
}
