//! The rounds a study with a precision target runs, on cells and phases built in memory.

use super::*;
use qpslab_core::{Cell, Instability, Stability};
use qpslab_store::{CellId, CellStatus, StudyId};

fn rule(precision: f64, budget_s: Option<f64>, max: u32) -> StopRule {
    StopRule {
        precision_pct: Some(precision),
        metric: "tps".into(),
        budget_s,
        min_rounds: 3,
        max_rounds: max,
        look_every: 0,
    }
}

/// Cells of setups `stock` and `tuned` at threads=4 over `rounds` rounds, A B then B A.
fn records(rounds: u32) -> Vec<CellRecord> {
    records_of(&["stock", "tuned"], rounds)
}

/// Cells of `setups` at threads=4 over `rounds` rounds, in order then reversed.
fn records_of(setups: &[&str], rounds: u32) -> Vec<CellRecord> {
    let mut out = Vec::new();
    for r in 1..=rounds {
        let mut order = setups.to_vec();
        if r % 2 == 0 {
            order.reverse();
        }
        for v in order {
            let seq = out.len() as u32 + 1;
            out.push(CellRecord {
                id: CellId(seq as i64),
                study_id: StudyId(1),
                cell: Cell {
                    seq,
                    label: format!("{v}/threads=4/r{r}"),
                    variant: v.into(),
                    levels: Default::default(),
                    params: [("threads".to_string(), serde_json::json!(4))].into(),
                    repeat: r,
                },
                status: CellStatus::Pending,
                run_id: None,
                error: None,
                log_tail: None,
                started_at: None,
                finished_at: None,
            });
        }
    }
    out
}

fn phase(tps: f64) -> PhaseResult {
    PhaseResult {
        events: (tps * 10.0) as u64,
        duration_s: 10.0,
        ..Default::default()
    }
}

/// Runs the tracker over `recs` as the study loop does, the machine drifting by `drift` per
/// round and `tuned` measuring `ratio(round)` times `stock`; returns the rounds run.
fn drive(t: &mut RoundTracker, recs: &[CellRecord], ratio: impl Fn(u32) -> f64) -> Vec<u32> {
    let mut ran = Vec::new();
    let mut round = 0;
    for rec in recs {
        if rec.cell.repeat != round {
            round = rec.cell.repeat;
            t.start_round(round);
        }
        if !t.needed(rec) {
            continue;
        }
        let base = 1000.0 * (1.0 + 0.08 * f64::from(round));
        let tps = if rec.cell.variant == "tuned" {
            base * ratio(round)
        } else {
            base
        };
        t.record(rec, &phase(tps), 1.0);
        if rec.cell.variant == "tuned" {
            ran.push(round);
        }
    }
    ran
}

#[test]
fn a_precise_comparison_stops_after_min_repeats() {
    let recs = records(20);
    let mut t = RoundTracker::new(&rule(5.0, None, 20), &recs);
    // +20% with ±0.5% noise: precise at the third round.
    let ran = drive(&mut t, &recs, |r| {
        1.2 * (1.0 + 0.005 * if r % 2 == 0 { 1.0 } else { -1.0 })
    });
    assert_eq!(ran, vec![1, 2, 3]);
    assert!(t.finished());
    let rep = t.report();
    let c = &rep.comparisons[0];
    assert_eq!(c.name, "tuned vs stock at threads=4");
    let (low, high) = c.interval.unwrap();
    assert!(low > 10.0 && high < 30.0 && !c.open, "{c:?}");
}

#[test]
fn a_precise_interval_that_answers_nothing_runs_on_until_it_does() {
    // +2.5% with ±1% noise: after three rounds the interval is about ±4% wide (within the ±5%
    // asked), but it neither excludes no change nor lies within ±5%. It runs on until it
    // excludes no change, and the round line then gives the answer.
    let recs = records(40);
    let noise = |r: u32| 0.01 * [1.0, -1.0, 0.5, -0.5][r as usize % 4];
    let mut t = RoundTracker::new(&rule(5.0, None, 40), &recs);
    let ran = drive(&mut t, &recs, |r| 1.025 + noise(r));
    assert!(ran.len() > 3 && ran.len() < 40, "{ran:?}");
    let rep = t.report();
    let c = &rep.comparisons[0];
    assert_eq!(c.decision, Some(Decision::Improvement), "{c:?}");
    assert!(c.settled && !c.open, "{c:?}");
    // Stopped after three rounds, it would have been precise and undecided.
    let mut t3 = RoundTracker::new(&rule(5.0, None, 40), &recs);
    drive(&mut t3, &recs[..6], |r| 1.025 + noise(r));
    let c3 = &t3.report().comparisons[0];
    let (low, high) = c3.interval.unwrap();
    assert!(
        low < 0.0 && high > 5.0 && (high - low) / 2.0 < 10.0,
        "{c3:?}"
    );
    assert_eq!(c3.decision, Some(Decision::Undecided));
    assert!(c3.open && !c3.settled);
}

#[test]
fn a_noisy_comparison_runs_until_precise_or_max_repeats() {
    let recs = records(12);
    let noise = [
        0.0, 0.04, -0.03, 0.05, -0.04, 0.02, -0.05, 0.03, -0.02, 0.04, -0.03, 0.01, 0.0,
    ];
    let mut t = RoundTracker::new(&rule(1.0, None, 12), &recs);
    let ran = drive(&mut t, &recs, |r| 1.0 + noise[r as usize]);
    assert_eq!(ran, (1..=12).collect::<Vec<_>>());
    assert!(t.report().comparisons[0].open);
}

#[test]
fn no_round_starts_that_the_budget_cannot_finish() {
    let recs = records(20);
    // Each cell took 1 s by the tracker's record: with a budget of 1.5 s the second round
    // (2 cells, 2 s) cannot end within it, so the study ends after the first, minimum
    // rounds or not.
    let mut t = RoundTracker::new(&rule(1.0, Some(1.5), 20), &recs);
    let ran = drive(&mut t, &recs, |r| 1.0 + 0.05 * f64::from(r % 2));
    assert_eq!(ran, vec![1]);
    assert!(t.finished());
    // A budget already spent starts no cell at all.
    let mut t = RoundTracker::new(&rule(1.0, Some(1e-9), 20), &recs);
    assert_eq!(drive(&mut t, &recs, |_| 1.0), Vec::<u32>::new());
    // A budget the cells' pace fits runs on.
    let mut t = RoundTracker::new(&rule(1.0, Some(3600.0), 6), &recs[..12]);
    let ran = drive(&mut t, &recs[..12], |r| 1.0 + 0.05 * f64::from(r % 2));
    assert_eq!(ran, vec![1, 2, 3, 4, 5, 6]);
}

#[test]
fn issue_47_no_cell_starts_within_a_round_that_the_budget_cannot_finish() {
    let recs = records(20);
    // The first cell took 1.2 s (a server started, a dataset loaded): the second, the first of
    // its setup too, is expected to take as long and does not fit in a budget of 1 s, though
    // only a moment of wall time has passed. The budget ends the study and says so.
    let mut t = RoundTracker::new(&rule(1.0, Some(1.0), 20), &recs);
    t.start_round(1);
    assert!(t.needed(&recs[0]));
    t.record(&recs[0], &phase(1000.0), 1.2);
    assert!(!t.needed(&recs[1]));
    let end = t.budget_end().expect("the budget ended the study");
    assert_eq!((end.budget_s, end.next_s), (1.0, 1.2));
    assert!(end.used_s < 1.0, "{end:?}");
    // And no later cell starts.
    t.start_round(2);
    assert!(recs[2..].iter().all(|r| !t.needed(r)));
    assert!(t.finished());
    // The last server's stop is kept from the budget too: 1 s of cell and 1.5 s of stop do
    // not fit in 2 s.
    let mut t = RoundTracker::new(&rule(1.0, Some(2.0), 20), &recs);
    t.start_round(1);
    assert!(t.needed(&recs[0]));
    t.record(&recs[0], &phase(1000.0), 1.0);
    assert!(t.needed(&recs[1]));
    t.record_stop(1.5);
    assert!(!t.needed(&recs[1]));
    assert_eq!(t.budget_end().map(|e| e.next_s), Some(2.5));
    // A cell is never expected to be shorter than its planned phase, timed cells or not: a
    // first cell of 3 s does not start in a budget of 2 s.
    let mut t = RoundTracker::new(&rule(1.0, Some(2.0), 20), &recs);
    t.start_round(1);
    assert!(!t.needed_at_least(&recs[0], 3.0));
    assert_eq!(t.budget_end().map(|e| e.next_s), Some(3.0));
}

#[test]
fn with_planned_looks_a_comparison_stops_only_at_a_look() {
    let recs = records(20);
    let looks = StopRule {
        look_every: 5,
        ..rule(5.0, None, 20)
    };
    // +20% with ±0.5% noise: precise at the third round, but the first look is at the fifth.
    let steady = |r: u32| 1.2 * (1.0 + 0.005 * if r.is_multiple_of(2) { 1.0 } else { -1.0 });
    let mut t = RoundTracker::new(&looks, &recs);
    assert_eq!(drive(&mut t, &recs, steady), vec![1, 2, 3, 4, 5]);
    assert!(t.finished());
    let c = &t.report().comparisons[0];
    assert_eq!(c.used, 5, "{c:?}");
    // Nothing before the first look: rounds 1-4 show no interval.
    let mut t = RoundTracker::new(&looks, &recs[..8]);
    drive(&mut t, &recs[..8], steady);
    let c = &t.report().comparisons[0];
    assert!(c.interval.is_none() && c.open, "{c:?}");
    // A budget that cannot reach the next look starts no round toward it: with 1 s cells
    // and 13 s, rounds 1-5 (10 s) run, and the 6 s to the look at round 10 do not fit.
    let noisy = |r: u32| 1.0 + 0.05 * f64::from(r % 2);
    let mut t = RoundTracker::new(
        &StopRule {
            look_every: 5,
            ..rule(1.0, Some(13.0), 20)
        },
        &recs,
    );
    let ran = drive_timed(&mut t, &recs, |v, r| {
        if v == "tuned" {
            1000.0 * noisy(r)
        } else {
            1000.0
        }
    });
    let rounds: Vec<u32> = ran
        .iter()
        .filter(|(v, _)| v == "tuned")
        .map(|(_, r)| *r)
        .collect();
    assert_eq!(rounds, vec![1, 2, 3, 4, 5]);
    assert!(t.finished());
}

#[test]
fn repeats_n_runs_every_round() {
    let recs = records(4);
    let fixed = StopRule {
        precision_pct: None,
        metric: "tps".into(),
        budget_s: None,
        min_rounds: 4,
        max_rounds: 4,
        look_every: 0,
    };
    let mut t = RoundTracker::new(&fixed, &recs);
    assert_eq!(drive(&mut t, &recs, |_| 1.2), vec![1, 2, 3, 4]);
}

#[test]
fn a_round_with_an_unstable_side_is_not_paired() {
    let recs = records(4);
    let mut t = RoundTracker::new(&rule(5.0, None, 4), &recs);
    for rec in &recs {
        let mut p = phase(if rec.cell.variant == "tuned" {
            1200.0
        } else {
            1000.0
        });
        if rec.cell.repeat == 2 && rec.cell.variant == "tuned" {
            p.stability = Some(Stability {
                reasons: vec![Instability::Stall {
                    at_s: 1.0,
                    duration_s: 3.0,
                }],
            });
        }
        t.record(rec, &p, 1.0);
    }
    let c = &t.report().comparisons[0];
    assert_eq!((c.used, c.dropped), (3, 1), "{c:?}");
}

/// Runs the tracker as the study loop does, each cell taking one second of the budget's
/// clock (recorded as an earlier cell's, so the test does not wait); `tps(setup, round)`.
/// Returns the (setup, round) of each cell run.
fn drive_timed(
    t: &mut RoundTracker,
    recs: &[CellRecord],
    tps: impl Fn(&str, u32) -> f64,
) -> Vec<(String, u32)> {
    let mut ran = Vec::new();
    let mut round = 0;
    for rec in recs {
        if rec.cell.repeat != round {
            round = rec.cell.repeat;
            t.start_round(round);
        }
        if t.needed(rec) {
            let v = rec.cell.variant.clone();
            t.record_earlier(rec, &phase(tps(&v, round)), 1.0);
            ran.push((v, round));
        }
    }
    ran
}

/// `near` is +10% within ±1.5%, `wide` +10% within ±8%: both still open after three rounds,
/// `wide` the wider.
fn near_and_wide(setup: &str, round: u32) -> f64 {
    let sign = [1.0, -1.0, 0.5, -0.5, 1.0, -1.0, 0.5, -0.5][round as usize % 8];
    match setup {
        "near" => 1100.0 * (1.0 + 0.015 * sign),
        "wide" => 1100.0 * (1.0 + 0.08 * sign),
        _ => 1000.0,
    }
}

#[test]
fn the_budget_left_goes_to_the_widest_comparison_first() {
    let recs = records_of(&["stock", "near", "wide"], 10);
    // Three rounds of three cells take 9 s; 2.5 s more pay for one more round of two cells
    // (the baseline and one candidate), not of three.
    let mut t = RoundTracker::new(&rule(5.0, Some(11.5), 10), &recs);
    let ran = drive_timed(&mut t, &recs[..9], near_and_wide);
    assert_eq!(ran.len(), 9);
    let rep = t.report();
    assert!(rep.comparisons.iter().all(|c| c.open), "{rep:?}");
    let width = |name: &str| {
        let c = rep.comparisons.iter().find(|c| c.name.starts_with(name));
        let (l, h) = c.unwrap().interval.unwrap();
        h - l
    };
    assert!(width("wide") > width("near"), "{rep:?}");
    let ran = drive_timed(&mut t, &recs[9..], near_and_wide);
    assert_eq!(
        ran,
        vec![("wide".to_string(), 4), ("stock".to_string(), 4)],
        "round 4 goes to the widest comparison"
    );
    assert!(t.finished());
}

#[test]
fn a_comparison_without_an_answer_gets_the_budget_before_a_wider_one_with_an_answer() {
    // `big` is +40% within ±3%: an improvement from the third round, though far wider than
    // ±5%. `small` is +2% within ±1%: narrower, but across both zero and +5%, so no answer.
    let tps = |setup: &str, round: u32| {
        let sign = [1.0, -1.0, 0.5, -0.5][round as usize % 4];
        match setup {
            "big" => 1400.0 * (1.0 + 0.03 * sign),
            "small" => 1020.0 * (1.0 + 0.01 * sign),
            _ => 1000.0,
        }
    };
    let recs = records_of(&["stock", "big", "small"], 10);
    let mut t = RoundTracker::new(&rule(5.0, Some(11.5), 10), &recs);
    assert_eq!(drive_timed(&mut t, &recs[..9], tps).len(), 9);
    let rep = t.report();
    let state = |name: &str| {
        let c = rep.comparisons.iter().find(|c| c.name.starts_with(name));
        c.unwrap().clone()
    };
    let (big, small) = (state("big"), state("small"));
    assert_eq!(big.decision, Some(Decision::Improvement), "{big:?}");
    assert_eq!(small.decision, Some(Decision::Undecided), "{small:?}");
    let width = |c: &ComparisonState| c.interval.map(|(l, h)| h - l).unwrap();
    assert!(width(&big) > width(&small), "{rep:?}");
    assert!(big.open && small.open);
    let ran = drive_timed(&mut t, &recs[9..], tps);
    assert_eq!(
        ran,
        vec![("small".to_string(), 4), ("stock".to_string(), 4)],
        "round 4 goes to the comparison that does not answer yet"
    );
}

#[test]
fn the_eta_counts_the_rounds_the_open_comparisons_still_need() {
    let recs = records_of(&["stock", "near", "wide"], 20);
    let mut t = RoundTracker::new(&rule(5.0, None, 20), &recs);
    drive_timed(&mut t, &recs[..9], near_and_wide);
    let rep = t.report();
    let eta = rep.eta_s.unwrap();
    // At least the next round of the three cells, at most every round left.
    assert!((3.0..=17.0 * 3.0).contains(&eta), "{rep:?}");
    assert_eq!(rep.next_round_s, Some(3.0));
    // Within a budget, no more than what is left of it.
    let mut t = RoundTracker::new(&rule(5.0, Some(12.0), 20), &recs);
    drive_timed(&mut t, &recs[..9], near_and_wide);
    let eta = t.report().eta_s.unwrap();
    assert!(eta <= 3.0 && eta > 2.5, "{eta}");
    // A precise study has nothing left to run.
    let two = records(20);
    let mut t = RoundTracker::new(&rule(50.0, None, 20), &two);
    drive_timed(&mut t, &two[..6], |v, _| {
        if v == "tuned" {
            1200.0
        } else {
            1000.0
        }
    });
    assert_eq!(t.report().eta_s, Some(0.0));
}

#[test]
fn a_resumed_study_pairs_the_rounds_measured_before() {
    let recs = records(20);
    let mut t = RoundTracker::new(&rule(5.0, Some(100.0), 20), &recs);
    // Rounds 1 to 3 were measured before the resume (10 s a cell): precise, and 60 s spent.
    let tps = |v: &str, r: u32| {
        if v == "tuned" {
            1200.0 + f64::from(r)
        } else {
            1000.0
        }
    };
    let mut round = 0;
    for rec in &recs[..6] {
        if rec.cell.repeat != round {
            round = rec.cell.repeat;
            t.start_round(round);
        }
        t.record_earlier(rec, &phase(tps(&rec.cell.variant, round)), 10.0);
    }
    t.start_round(4);
    assert!(!t.needed(&recs[6]) && !t.needed(&recs[7]));
    assert!(t.finished());
    let rep = t.report();
    assert_eq!(rep.comparisons[0].used, 3);
    assert!(rep.elapsed_s >= 60.0, "{rep:?}");
}
