//! Round-paired comparisons of studies: verdicts, looks, the time an undecided one needs.

use super::*;
use crate::compare::{compare_with, Comparison, LEVEL};
use crate::model::{points, ReportInput};
use crate::test_runs::{run, side, tps, RO};
use qpslab_core::{Instability, Stability};
use qpslab_stats::{estimate_independent, ratio_of_logs};

/// One side of a study: run `id0 + k` measured `tps[k]` in round `k + 1`.
fn rounds(name: &str, id0: i64, tps: &[f64]) -> ReportInput {
    side(
        name,
        tps.iter()
            .enumerate()
            .map(|(k, &t)| run(id0 + k as i64, RO, t, 0.01))
            .collect(),
    )
}

/// The rule of a study that ran rounds until ±5%, within `max_rounds`.
fn adaptive(max_rounds: usize) -> Sequential {
    Sequential {
        adaptive: true,
        max_rounds,
        ..Sequential::default()
    }
}

fn cmp_seq(a: &ReportInput, b: &ReportInput, seq: &Sequential) -> Comparison {
    compare_with("a", &points(a), "b", &points(b), seq).unwrap()
}

#[test]
fn issue_35_rounds_on_a_drifting_machine_are_paired_not_pooled() {
    // The machine speeds up 25% over three rounds; B is 20% slower than A in every round.
    // Pooled, the drift swamps the change (Welch on the logs: not significant); paired by
    // round it cancels.
    let a = rounds("a", 1, &[2700.0, 3000.0, 3400.0]);
    let b = rounds("b", 11, &[2700.0 * 0.81, 3000.0 * 0.79, 3400.0 * 0.80]);
    let c = cmp_seq(&a, &b, &Sequential::default());
    let m = tps(&c);
    assert_eq!(m.decision, Some(Decision::Regression), "{m:?}");
    assert_eq!(m.verdict, "regression");
    let [low, high] = m.interval.unwrap();
    assert!(low < -19.0 && high < -10.0 && low > -30.0, "{m:?}");
    assert_eq!(
        m.rounds,
        Some(Rounds {
            used: 3,
            dropped: 0
        })
    );
    assert!(m.p_value.unwrap() < 0.05);
    // The pooled interval of the same runs does not exclude no change.
    let la = estimate_independent(&[2700f64.ln(), 3000f64.ln(), 3400f64.ln()]).unwrap();
    let lb = estimate_independent(&[
        (2700.0f64 * 0.81).ln(),
        (3000.0f64 * 0.79).ln(),
        (3400.0f64 * 0.80).ln(),
    ])
    .unwrap();
    assert!(!ratio_of_logs(&la, &lb, LEVEL).unwrap().excludes_one());
}

#[test]
fn identical_setups_are_equivalent_within_the_precision_and_stop_as_precise() {
    let drift = [2655.0, 2763.0, 3000.0, 3219.0, 3400.0, 3503.0];
    let a = rounds("a", 1, &drift);
    let noise = [1.01, 0.99, 1.005, 0.995, 1.0, 1.01];
    let same: Vec<f64> = drift.iter().zip(noise).map(|(d, n)| d * n).collect();
    let b = rounds("b", 11, &same);
    let c = cmp_seq(&a, &b, &adaptive(20));
    let m = tps(&c);
    assert_eq!(m.decision, Some(Decision::Equivalent), "{m:?}");
    assert_eq!(m.verdict, "equivalent within ±5%");
    assert_eq!(m.stopped, Some(Stopped::Precise));
    // With its rounds fixed in advance it ran them all, whatever it found.
    let c_fixed = cmp_seq(&a, &b, &Sequential::default());
    let fixed = tps(&c_fixed);
    assert_eq!(fixed.decision, Some(Decision::Equivalent), "{fixed:?}");
    assert_eq!(fixed.stopped, Some(Stopped::MaxRepeats));
    assert_eq!(m.precision, Some(5.0));
    let [low, high] = m.interval.unwrap();
    assert!(
        low >= -5.0 && high <= 5.0 && low < 0.0 && high > 0.0,
        "{m:?}"
    );
}

#[test]
fn a_wide_spread_is_undecided_with_the_rounds_that_would_decide_it() {
    let a = rounds("a", 1, &[1000.0, 1000.0, 1000.0]);
    let b = rounds("b", 11, &[1100.0, 920.0, 1050.0]);
    let m = cmp_seq(&a, &b, &Sequential::default()).points[0].metrics[0].clone();
    assert_eq!(m.decision, Some(Decision::Undecided), "{m:?}");
    // Rounds fixed in advance had no budget to run out of: they ran all they were given.
    assert_eq!(m.stopped, Some(Stopped::MaxRepeats));
    let n = m.rounds_to_target.unwrap();
    assert!(n > 3, "{n}");
    assert_eq!(
        m.verdict,
        format!("undecided after 3 round(s): ~{n} rounds would decide at ±5%")
    );
    // At the study's last round the same spread stopped at max_repeats.
    let seq = adaptive(3);
    let m = cmp_seq(&a, &b, &seq).points[0].metrics[0].clone();
    assert_eq!(m.stopped, Some(Stopped::MaxRepeats), "{m:?}");
    assert!(
        m.verdict.starts_with("undecided within max_repeats: ~"),
        "{}",
        m.verdict
    );
    // With rounds left, the budget ended it.
    let seq = Sequential {
        max_rounds: 10,
        ..seq
    };
    let m = cmp_seq(&a, &b, &seq).points[0].metrics[0].clone();
    assert_eq!(m.stopped, Some(Stopped::Budget), "{m:?}");
    assert!(
        m.verdict.starts_with("undecided within budget: ~"),
        "{}",
        m.verdict
    );
}

#[test]
fn a_round_with_an_unstable_side_is_left_out_and_counted() {
    let a = rounds("a", 1, &[1000.0, 1010.0, 990.0, 1005.0]);
    let mut b = rounds("b", 11, &[1200.0, 1215.0, 400.0, 1203.0]);
    b.subjects[2].run.phases[0].result.stability = Some(Stability {
        reasons: vec![Instability::Stall {
            at_s: 1.0,
            duration_s: 5.0,
        }],
    });
    let c = cmp_seq(&a, &b, &Sequential::default());
    let m = tps(&c);
    assert_eq!(
        m.rounds,
        Some(Rounds {
            used: 3,
            dropped: 1
        })
    );
    assert_eq!(m.decision, Some(Decision::Improvement), "{m:?}");
    assert!((m.change_pct - 20.0).abs() < 0.5, "{m:?}");
    let json = serde_json::to_value(m).unwrap();
    assert_eq!(json["decision"], "improvement");
    assert_eq!(json["stopped"], "max_repeats");
    assert_eq!(json["rounds"]["dropped"], 1);
    assert_eq!(json["precision"], 5.0);
    assert!(json["interval"][0].as_f64().unwrap() > 0.0, "{json}");
}

#[test]
fn a_round_whose_only_mark_is_a_busy_neighbour_is_paired() {
    // A machine busy throughout: every phase says "other processes used ..%", and one round
    // also stalled. The contended rounds are paired; the stalled one is left out.
    let a = rounds("a", 1, &[1000.0, 1010.0, 990.0, 1005.0]);
    let mut a = a;
    let mut b = rounds("b", 11, &[1200.0, 1215.0, 400.0, 1203.0]);
    for s in a.subjects.iter_mut().chain(b.subjects.iter_mut()) {
        s.run.phases[0].result.stability = Some(Stability {
            reasons: vec![Instability::Contended { share: 0.47 }],
        });
    }
    b.subjects[2].run.phases[0]
        .result
        .stability
        .as_mut()
        .unwrap()
        .reasons
        .push(Instability::Stall {
            at_s: 1.0,
            duration_s: 5.0,
        });
    let m = tps(&cmp_seq(&a, &b, &Sequential::default())).clone();
    assert_eq!(
        m.rounds,
        Some(Rounds {
            used: 3,
            dropped: 1
        })
    );
    assert_eq!(m.decision, Some(Decision::Improvement), "{m:?}");
}

/// Round `k` (from 1) of `input` written at `t0 + k * pace` seconds.
fn timed(mut input: ReportInput, t0: f64, pace: f64) -> ReportInput {
    for s in &mut input.subjects {
        s.run.phases[0].recorded_at = t0 + f64::from(s.cell.repeat) * pace;
    }
    input
}

#[test]
fn an_undecided_study_says_how_long_the_rounds_that_would_decide_it_take() {
    // Rounds of 8.5 s: A written 4 s into each round, B at its end.
    let a = timed(rounds("a", 1, &[1000.0, 1000.0, 1000.0]), 1000.0 - 4.5, 8.5);
    let b = timed(rounds("b", 11, &[1100.0, 920.0, 1050.0]), 1000.0, 8.5);
    let seq = adaptive(10);
    let m = cmp_seq(&a, &b, &seq).points[0].metrics[0].clone();
    assert_eq!(m.stopped, Some(Stopped::Budget), "{m:?}");
    let n = m.rounds_to_target.unwrap();
    let more = m.seconds_to_target.unwrap();
    assert!(
        (more - (n - 3) as f64 * 8.5).abs() < 1e-9,
        "{more} for {n} rounds"
    );
    assert_eq!(
        m.verdict,
        format!(
            "undecided within budget: ~{n} rounds would decide at ±5% (~{} more at 8.5s a round)",
            qpslab_core::units::duration_text(more)
        )
    );
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["seconds_to_target"], serde_json::json!(more));
    // An answer needs no more time; runs without times (and one round) give none.
    let answered = cmp_seq(
        &timed(rounds("a", 1, &[1000.0, 1010.0, 990.0]), 0.0, 8.5),
        &timed(rounds("b", 11, &[1500.0, 1515.0, 1485.0]), 4.0, 8.5),
        &seq,
    );
    assert_eq!(answered.points[0].metrics[0].seconds_to_target, None);
    let untimed = cmp_seq(
        &rounds("a", 1, &[1000.0; 3]),
        &rounds("b", 11, &[1100.0, 920.0, 1050.0]),
        &seq,
    );
    let u = &untimed.points[0].metrics[0];
    assert_eq!(u.seconds_to_target, None);
    assert!(!u.verdict.contains("a round"), "{}", u.verdict);
}

#[test]
fn rounds_enough_but_too_few_stable_are_undecided_and_say_so() {
    let a = rounds("a", 1, &[1000.0, 1010.0, 990.0]);
    let mut b = rounds("b", 11, &[1200.0, 1212.0, 1190.0]);
    b.subjects[1].run.phases[0].result.stability = Some(Stability {
        reasons: vec![Instability::Stall {
            at_s: 1.0,
            duration_s: 5.0,
        }],
    });
    let m = cmp_seq(&a, &b, &Sequential::default()).points[0].metrics[0].clone();
    assert_eq!(m.decision, Some(Decision::Undecided), "{m:?}");
    assert_eq!(
        m.verdict,
        "undecided after 3 round(s): 2 of 3 round(s) stable on both sides, an interval needs 3"
    );
    assert_eq!(
        m.rounds,
        Some(Rounds {
            used: 2,
            dropped: 1
        })
    );
    // Two repeats a side keep the pooled comparison.
    let two = cmp_seq(
        &rounds("a", 1, &[1000.0, 1010.0]),
        &rounds("b", 11, &[1200.0, 1212.0]),
        &Sequential::default(),
    );
    assert_eq!(tps(&two).decision, None);
    assert_eq!(tps(&two).verdict, "improvement");
    // A study that ran rounds until precise never answers with repeats to run.
    let one = cmp_seq(
        &rounds("a", 1, &[1000.0]),
        &rounds("b", 11, &[1010.0]),
        &adaptive(20),
    );
    let m = tps(&one);
    assert_eq!(m.decision, Some(Decision::Undecided), "{m:?}");
    assert_eq!(
        m.verdict,
        "undecided within budget: 1 of 1 round(s) stable on both sides, an interval needs 3"
    );
    assert_eq!(m.stopped, Some(Stopped::Budget));
}

#[test]
fn with_planned_looks_the_verdict_is_the_last_looks() {
    let seq = Sequential {
        look_every: 5,
        ..adaptive(20)
    };
    let a = rounds("a", 1, &[1000.0; 7]);
    let b = rounds(
        "b",
        11,
        &[1200.0, 1212.0, 1190.0, 1205.0, 1195.0, 900.0, 900.0],
    );
    let m = cmp_seq(&a, &b, &seq).points[0].metrics[0].clone();
    // Rounds 6 and 7 come after the look at round 5: not in the interval yet.
    assert_eq!(
        m.rounds,
        Some(Rounds {
            used: 5,
            dropped: 0
        }),
        "{m:?}"
    );
    assert_eq!(m.decision, Some(Decision::Improvement), "{m:?}");
    assert!(m.change_pct > 19.0 && m.change_pct < 21.0, "{m:?}");
    let p = m.p_value.unwrap();
    assert!(p < 0.05, "{p}");
    // Before the first look there is no interval, and the verdict says when there will be.
    let m = cmp_seq(
        &rounds("a", 1, &[1000.0; 4]),
        &rounds("b", 11, &[1200.0; 4]),
        &seq,
    )
    .points[0]
        .metrics[0]
        .clone();
    assert_eq!(m.decision, Some(Decision::Undecided), "{m:?}");
    assert_eq!(
        m.verdict,
        "undecided within budget: 4 of 4 round(s) stable on both sides, an interval needs 5"
    );
}
