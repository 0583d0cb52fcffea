//! Estimates from studies stored in a scratch store, their cells' phases built in memory.

use super::*;
use qpslab_core::{PhaseResult, RunPlan, WorkloadKind, WorkloadOptions};
use qpslab_store::RunMeta;

/// A spec of `stock` and `tuned`, with `stop` keys (`precision = "5%"`).
fn spec_text(name: &str, stop: &str) -> String {
    format!(
        "name = \"{name}\"\n{stop}\n[defaults]\nworkload = \"oltp_point_select\"\ntime = \"1s\"\n\
         [[variant]]\nname = \"stock\"\n[[variant]]\nname = \"tuned\"\n\
         set = {{ innodb_buffer_pool_size = \"64M\" }}\n"
    )
}

fn loaded(dir: &std::path::Path, name: &str, stop: &str) -> Loaded {
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, spec_text(name, stop)).unwrap();
    super::super::load(&p).unwrap()
}

/// Stores study `l` with each cell done, `tuned` at `ratio(round)` times `stock`'s 1000 tps.
fn store_study(store: &mut Store, l: &Loaded, rounds: u32, ratio: impl Fn(u32) -> f64) {
    let cells: Vec<&qpslab_core::Cell> = l.expanded.cells.iter().map(|c| &c.cell).collect();
    let id = store
        .create_study(
            &qpslab_store::NewStudy {
                name: l.spec.name.clone(),
                spec_toml: l.text.clone(),
                spec_hash: spec::spec_hash(&l.spec),
                env: serde_json::json!({}),
                factors: Vec::new(),
            },
            cells,
        )
        .unwrap();
    for rec in store.study_cells(id).unwrap() {
        if rec.cell.repeat > rounds {
            continue;
        }
        let plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
        let meta = RunMeta::new(
            plan,
            "test".into(),
            Default::default(),
            Default::default(),
            "test".into(),
        )
        .in_study(&l.spec.name, &rec.cell.label);
        let tps = if rec.cell.variant == "tuned" {
            1000.0 * ratio(rec.cell.repeat)
        } else {
            1000.0
        };
        let phase = PhaseResult {
            events: (tps * 10.0) as u64,
            duration_s: 10.0,
            ..Default::default()
        };
        store.cell_running(rec.id).unwrap();
        let run = store.record_phase(&meta, &phase, &[]).unwrap();
        store.cell_done(rec.id, run).unwrap();
    }
}

/// +10%, one round varying by about ±3%.
fn noisy(round: u32) -> f64 {
    1.1 * (1.0 + 0.03 * [1.0, -1.0, 0.5, -0.5, 0.0, 1.0][round as usize % 6])
}

#[test]
fn without_an_earlier_run_the_estimate_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("q.db")).unwrap();
    let l = loaded(dir.path(), "e", "precision = \"5%\"\nbudget = \"10m\"");
    let e = estimate(Some(&store), &l, None).unwrap();
    assert_eq!(e.source, None);
    assert!(e.text().contains("estimate: none"), "{}", e.text());
}

#[test]
fn an_earlier_run_of_the_same_setups_gives_the_precision_and_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("q.db")).unwrap();
    // An earlier study of the same setups (another spec: four fixed rounds), all done.
    let p = dir.path().join("before.toml");
    let text = spec_text("before", "").replace("[defaults]\n", "[defaults]\nrepeats = 4\n");
    std::fs::write(&p, text).unwrap();
    let earlier = super::super::load(&p).unwrap();
    store_study(&mut store, &earlier, 4, noisy);
    let l = loaded(dir.path(), "e", "precision = \"5%\"\nbudget = \"10m\"");
    let e = estimate(Some(&store), &l, None).unwrap();
    let src = e.source.clone().unwrap();
    assert_eq!(
        (src.study.as_str(), src.matched),
        ("before", Matched::SameCells)
    );
    let c = &e.comparisons[0];
    assert_eq!((c.name.as_str(), c.rounds_seen), ("tuned vs stock", 4));
    let spread = c.spread_pct.unwrap();
    assert!(spread > 1.0 && spread < 5.0, "{e:?}");
    let needed = c.rounds_needed.unwrap();
    assert!((3..=20).contains(&needed), "{e:?}");
    // Each round is two cells; the budget needed is the rounds needed of them.
    let per_round = e.round_s.unwrap();
    assert!(
        (e.budget_needed_s.unwrap() - needed as f64 * per_round).abs() < 1e-6,
        "{e:?}"
    );
    let text = e.text();
    assert!(
        text.contains("estimate from study 'before' (the same setups"),
        "{text}"
    );
    assert!(
        text.contains(&format!("±5% needs {needed} round(s)")),
        "{text}"
    );
    // The same spec, once stored, is taken first.
    let again = loaded(dir.path(), "e", "precision = \"5%\"\nbudget = \"10m\"");
    store_study(&mut store, &again, 3, noisy);
    let e = estimate(Some(&store), &l, None).unwrap();
    assert_eq!(e.source.unwrap().matched, Matched::SameSpec);
}

#[test]
fn a_pilot_is_three_fixed_rounds_of_the_same_cells() {
    let dir = tempfile::tempdir().unwrap();
    let l = loaded(
        dir.path(),
        "e",
        "precision = \"5%\"\nbudget = \"10m\"\nmax_repeats = 8",
    );
    let p = pilot(&l, dir.path()).unwrap();
    assert_eq!(p.spec.name, "e-pilot");
    let rule = p.spec.stop_rule().unwrap();
    assert!(!rule.adaptive());
    assert_eq!(p.expanded.cells.len(), 6);
    let labels = |l: &Loaded| -> Vec<String> {
        l.expanded
            .cells
            .iter()
            .map(|c| c.cell.label.clone())
            .collect()
    };
    assert_eq!(labels(&p), labels(&l)[..6].to_vec());
}
