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
    }
}

/// Cells of setups `stock` and `tuned` at threads=4 over `rounds` rounds, A B then B A.
fn records(rounds: u32) -> Vec<CellRecord> {
    let mut out = Vec::new();
    for r in 1..=rounds {
        let order = if r % 2 == 1 {
            ["stock", "tuned"]
        } else {
            ["tuned", "stock"]
        };
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
fn repeats_n_runs_every_round() {
    let recs = records(4);
    let fixed = StopRule {
        precision_pct: None,
        metric: "tps".into(),
        budget_s: None,
        min_rounds: 4,
        max_rounds: 4,
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
