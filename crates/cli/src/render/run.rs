//! `qpslab run`'s own lines: a phase's header, what its client check found, where its profile
//! and flame graph are (`--profile`), and a replica's rate search (its steps and its answer).
//! The numbers come from `qpslab_lab::run::sweep`; the flame graph is drawn where it is recorded.

use crate::render::table;
use qpslab_core::telemetry::ProfileFiles;
use qpslab_core::RunPlan;
use qpslab_lab::run::client_bound::{ClientCheck, ClientLimit};
use qpslab_lab::run::rate_search::{Outcome, Searched};

/// `10 s`, `1000 events`, `10 s or 1000 events`: when a phase of `plan` ends.
pub fn stop_text(plan: &RunPlan) -> String {
    match (plan.stop.time_s, plan.stop.events) {
        (Some(t), Some(n)) => format!("{t} s or {n} events"),
        (Some(t), None) => format!("{t} s"),
        (None, Some(n)) => format!("{n} events"),
        (None, None) => "no limit".into(),
    }
}

/// `\n== oltp_read_only · 4 thread(s) · 10 s ==`, before a phase (`· pipelined` when its
/// transactions are: a different measurement, said where the figures start).
pub fn phase_header(plan: &RunPlan, threads: u32) -> String {
    format!(
        "\n== {} · {threads} thread(s) · {}{} ==",
        plan.workload.label(),
        stop_text(plan),
        if plan.pipeline { " · pipelined" } else { "" }
    )
}

/// The server's CPU line and the warning when the client may have limited the phase, each
/// line ending in a newline (empty when there is nothing to say).
pub fn client_text(c: &ClientCheck) -> String {
    let mut o = String::new();
    if let Some(s) = &c.server {
        o.push_str(&format!(
            "    server cpu:                          {:.2}s ({:.0}% of the machine)\n",
            s.seconds,
            100.0 * s.machine_share
        ));
    }
    match c.limit {
        Some(ClientLimit::Loops {
            saturated,
            loops,
            busiest,
        }) => o.push_str(&format!(
            "warning: {saturated} of {loops} event loop(s) were busy at least 90% of the phase \
             (busiest {:.0}% of a CPU): the client limited this result; give it more loops \
             (--event-loops) or CPUs of its own (--client-cpus)\n",
            busiest * 100.0
        )),
        Some(ClientLimit::Machine {
            machine_share,
            over_server,
        }) => o.push_str(&format!(
            "warning: the client used {:.0}% of the machine{}: it may be limiting the result; \
             place it with --client-cpus and --server-cpus on disjoint CPUs\n",
            100.0 * machine_share,
            over_server.map_or(String::new(), |(client_s, s)| format!(
                ", more CPU than the server ({client_s:.2}s vs {s:.2}s)"
            )),
        )),
        None => {}
    }
    o
}

/// What limited a phase, each line after `indent` and ending in a newline: `limited by: ...`,
/// then `not seen: ...` indented further when something could not be seen (empty for a phase
/// without a verdict). The same lines in `run`'s summary and `show`.
pub fn limits_text(limits: Option<&qpslab_core::limits::Limits>, indent: &str) -> String {
    let Some(l) = limits else {
        return String::new();
    };
    let (line, unseen) = qpslab_report::limits::verdict_lines(l);
    let mut o = format!("{indent}{line}\n");
    if let Some(u) = unseen {
        o.push_str(&format!("{indent}    {u}\n"));
    }
    o
}

/// The rate search's steps as a table.
pub fn steps_table(s: &Searched) -> String {
    let header: Vec<String> = ["rate/s", "tps", "max lag ms", "lag slope ms/s", "lag"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = s
        .steps
        .iter()
        .map(|s| {
            let (max, slope) = s.lag.map_or(("-".into(), "-".into()), |l| {
                (
                    format!("{:.0}", l.max_ms),
                    format!("{:+.1}", l.slope_ms_per_s),
                )
            });
            let outcome = match s.outcome {
                Outcome::Flat => "flat",
                Outcome::Behind => "falls behind",
                Outcome::Saturated => "primary saturated",
            };
            let rate = format!("{:.0}", s.rate);
            vec![rate, format!("{:.1}", s.tps), max, slope, outcome.into()]
        })
        .collect();
    table(&header, &rows)
}

/// The search's answer in one line. A last phase whose primary could not deliver its rate,
/// with the lag flat, is an answer too: the replica kept up with all the primary delivered.
pub fn verdict(s: &Searched) -> String {
    let max_lag_ms = s.max_lag_ms;
    let saturated = s.steps.last().filter(|l| l.outcome == Outcome::Saturated);
    match (s.search.best, s.search.failed, saturated) {
        (best, _, Some(last)) => format!(
            "the replica kept up with everything the primary delivered: at least {:.0}/s \
             with lag flat and under {max_lag_ms:.0} ms (the primary could not deliver {:.0}/s)",
            best.map_or(last.tps, |b| b.max(last.tps)),
            last.rate
        ),
        (Some(b), Some(f), None) => format!(
            "highest rate with replica lag flat and under {max_lag_ms:.0} ms: {b:.0}/s \
             ({f:.0}/s fell behind)"
        ),
        (Some(b), None, None) => format!(
            "replica lag stayed flat and under {max_lag_ms:.0} ms up to {b:.0}/s (the search \
             stopped after its last step)"
        ),
        (None, _, None) => {
            format!("no rate tried kept the replica's lag flat and under {max_lag_ms:.0} ms")
        }
    }
}

/// Where a phase's profile and its flame graph are (for standard output) or, when the graph
/// could not be drawn, the warning saying where the folded stacks are (for standard error).
pub fn profile_text(files: &ProfileFiles) -> Result<String, String> {
    match &files.not_drawn {
        None => Ok(format!(
            "    profile ({}, {} samples): {}  flame graph: {}",
            files.event,
            files.samples,
            files.folded.display(),
            files.svg.display()
        )),
        Some(e) => Err(format!(
            "warning: no flame graph ({e}); the folded stacks are in {}",
            files.folded.display()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_lab::run::client_bound::ServerCpu;
    use qpslab_lab::run::rate_search::{RateSearch, Step};

    #[test]
    fn a_profile_says_where_its_graph_is_or_why_there_is_none() {
        let mut files = ProfileFiles {
            folded: "p/7-t8.folded".into(),
            svg: "p/7-t8.svg".into(),
            event: "cpu-clock".into(),
            samples: 42,
            ..ProfileFiles::default()
        };
        assert_eq!(
            profile_text(&files),
            Ok(
                "    profile (cpu-clock, 42 samples): p/7-t8.folded  flame graph: p/7-t8.svg"
                    .into()
            )
        );
        files.not_drawn = Some("flame graph: no stacks were sampled".into());
        assert_eq!(
            profile_text(&files),
            Err(
                "warning: no flame graph (flame graph: no stacks were sampled); the folded \
                 stacks are in p/7-t8.folded"
                    .into()
            )
        );
    }

    #[test]
    fn the_client_warning_names_what_limited_the_phase() {
        let quiet = ClientCheck {
            server: None,
            limit: None,
        };
        assert_eq!(client_text(&quiet), "");
        let over = ClientCheck {
            server: Some(ServerCpu {
                seconds: 4.0,
                machine_share: 0.1,
            }),
            limit: Some(ClientLimit::Machine {
                machine_share: 0.15,
                over_server: Some((6.0, 4.0)),
            }),
        };
        let text = client_text(&over);
        assert!(text.starts_with("    server cpu:"), "{text}");
        assert!(text.contains("4.00s (10% of the machine)\n"), "{text}");
        assert!(
            text.contains(
                "client used 15% of the machine, more CPU than the server (6.00s vs 4.00s)"
            ),
            "{text}"
        );
        let loops = ClientCheck {
            server: None,
            limit: Some(ClientLimit::Loops {
                saturated: 1,
                loops: 2,
                busiest: 0.97,
            }),
        };
        assert!(client_text(&loops).starts_with("warning: 1 of 2 event loop(s)"));
    }

    #[test]
    fn the_limiter_is_one_line_and_what_was_not_seen_the_next() {
        use qpslab_core::limits::{decide, Evidence};
        assert_eq!(limits_text(None, ""), "");
        let mut l = decide(Evidence {
            duration_s: 10.0,
            events: 50_000,
            sessions: 8,
            server_cpus_used: Some(0.97),
            server_cpus_allowed: Some(1.0),
            ..Evidence::default()
        });
        l.unseen = vec![
            "waits: performance_schema off".into(),
            "perf counters".into(),
        ];
        assert_eq!(
            limits_text(Some(&l), "  "),
            "  limited by: server CPU (97% of its 1 CPU)\n      not seen: waits: \
             performance_schema off; perf counters\n"
        );
    }

    #[test]
    fn the_verdict_says_where_the_replica_fell_behind() {
        let mut search = RateSearch::new(100.0);
        search.record(100.0, Outcome::Flat);
        search.record(200.0, Outcome::Behind);
        let step = |rate, outcome| Step {
            rate,
            tps: rate,
            lag: None,
            outcome,
        };
        let s = Searched {
            steps: vec![step(100.0, Outcome::Flat), step(200.0, Outcome::Behind)],
            search,
            max_lag_ms: 500.0,
        };
        assert_eq!(
            verdict(&s),
            "highest rate with replica lag flat and under 500 ms: 100/s (200/s fell behind)"
        );
        let table = steps_table(&s);
        assert!(
            table.contains("falls behind") && table.contains("rate/s"),
            "{table}"
        );
    }

    #[test]
    fn a_primary_that_saturates_first_still_gets_a_verdict() {
        // The first phase asked 200/s and got 171.6/s with the lag flat.
        let mut search = RateSearch::new(200.0);
        search.record(200.0, Outcome::Saturated);
        let s = Searched {
            steps: vec![Step {
                rate: 200.0,
                tps: 171.6,
                lag: None,
                outcome: Outcome::Saturated,
            }],
            search,
            max_lag_ms: 5000.0,
        };
        assert_eq!(
            verdict(&s),
            "the replica kept up with everything the primary delivered: at least 172/s with lag \
             flat and under 5000 ms (the primary could not deliver 200/s)"
        );
    }
}
