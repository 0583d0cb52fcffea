use super::*;
use crate::normals::Normals;

/// `len` points at `level` with normal noise of `cv` × level.
fn noisy(rng: &mut Normals, level: f64, cv: f64, len: usize) -> Vec<f64> {
    (0..len).map(|_| level * (1.0 + cv * rng.next())).collect()
}

/// Pieces of (level, length) joined, noise `cv`.
fn series(seed: u64, cv: f64, pieces: &[(f64, usize)]) -> Vec<f64> {
    let mut rng = Normals(seed);
    pieces
        .iter()
        .flat_map(|&(level, len)| noisy(&mut rng, level, cv, len))
        .collect()
}

fn indexes(found: &[ChangePoint]) -> Vec<usize> {
    found.iter().map(|c| c.index).collect()
}

#[test]
fn a_clean_step_is_cut_where_it_is_with_its_sign() {
    for seed in 1..=5 {
        let xs = series(seed, 0.01, &[(1000.0, 15), (1200.0, 15)]);
        let found = detect(&xs, &Options::default()).unwrap();
        assert_eq!(indexes(&found), [15], "seed {seed}: {found:?}");
        let c = &found[0];
        assert!((c.relative_change - 0.2).abs() < 0.02, "{c:?}");
        assert!(c.p_value <= 0.01, "{c:?}");
        assert_eq!((c.before.n, c.after.n), (15, 15));
        assert!(c.before.lo < 1000.0 && 1000.0 < c.before.hi, "{c:?}");
        assert!(c.after.lo < 1200.0 && 1200.0 < c.after.hi, "{c:?}");
        assert!(c.before.hi < c.after.lo, "{c:?}");
    }
    // And down: a regression is negative.
    let xs = series(9, 0.01, &[(1200.0, 15), (1000.0, 15)]);
    let found = detect(&xs, &Options::default()).unwrap();
    assert_eq!(indexes(&found), [15]);
    assert!((found[0].relative_change + 1.0 / 6.0).abs() < 0.02);
}

#[test]
fn two_steps_are_both_found_at_their_indexes() {
    // 12 runs at A, 8 at B (15 % lower), 10 back at A, noise 3 %: the buffer pool
    // shrunk after run 12 and restored after run 20.
    for seed in 1..=10 {
        let xs = series(seed, 0.03, &[(1000.0, 12), (850.0, 8), (1000.0, 10)]);
        let found = detect(&xs, &Options::default()).unwrap();
        assert_eq!(indexes(&found), [12, 20], "seed {seed}: {found:?}");
        assert!(found[0].relative_change < -0.1, "{found:?}");
        assert!(found[1].relative_change > 0.1, "{found:?}");
        // Levels run between neighbouring change points.
        assert_eq!(found[0].after, found[1].before);
        assert_eq!(
            (found[0].before.n, found[0].after.n, found[1].after.n),
            (12, 8, 10)
        );
    }
}

#[test]
fn a_flat_noisy_series_has_no_change_point() {
    let xs = series(3, 0.03, &[(1000.0, 30)]);
    assert!(detect(&xs, &Options::default()).unwrap().is_empty());
    // Nor has a constant one (every permutation ties).
    assert!(detect(&[5.0; 20], &Options::default()).unwrap().is_empty());
}

#[test]
fn false_alarms_on_flat_series_stay_at_the_significance_level() {
    // 200 flat series of 30 runs: any change point is a false alarm. The test is exact under
    // exchangeability, so the count is binomial with p ≤ 0.01; allow three standard errors.
    let opts = Options::default();
    let trials = 200;
    let alarms = (0..trials)
        .filter(|&s| {
            let xs = series(1000 + s, 0.03, &[(1000.0, 30)]);
            !detect(&xs, &opts).unwrap().is_empty()
        })
        .count();
    let a = opts.significance;
    let bound = a + 3.0 * (a * (1.0 - a) / trials as f64).sqrt();
    let rate = alarms as f64 / trials as f64;
    assert!(
        rate <= bound,
        "{alarms} false alarms in {trials} (bound {bound:.3})"
    );
}

#[test]
fn small_changes_go_under_min_magnitude() {
    let xs = series(4, 0.002, &[(1000.0, 15), (1020.0, 15)]);
    let found = detect(&xs, &Options::default()).unwrap();
    assert_eq!(indexes(&found), [15]);
    let opts = Options {
        min_magnitude: 0.05,
        ..Options::default()
    };
    assert!(detect(&xs, &opts).unwrap().is_empty());
    // A large change stays, with its neighbour's small one merged away: levels span it.
    let xs = series(5, 0.002, &[(1000.0, 10), (1020.0, 10), (1300.0, 10)]);
    assert_eq!(
        indexes(&detect(&xs, &Options::default()).unwrap()),
        [10, 20]
    );
    let found = detect(&xs, &opts).unwrap();
    assert_eq!(indexes(&found), [20]);
    assert_eq!(found[0].before.n, 20);
}

#[test]
fn segments_are_at_least_min_segment_long() {
    // A two-point excursion cannot be a segment of its own at min_segment 3.
    let mut xs = series(6, 0.01, &[(1000.0, 20)]);
    xs[10] = 2000.0;
    xs[11] = 2000.0;
    for c in detect(&xs, &Options::default()).unwrap() {
        assert!(c.before.n >= 3 && c.after.n >= 3, "{c:?}");
    }
}

#[test]
fn bad_input_is_refused_by_name() {
    let opts = Options::default();
    let mut xs = series(7, 0.01, &[(1000.0, 10)]);
    xs[4] = f64::NAN;
    let e = detect(&xs, &opts).unwrap_err();
    assert_eq!(e, ChangePointError::NotFinite { index: 4 });
    assert!(e.to_string().contains("index 4"), "{e}");
    xs[4] = 1.0;
    xs[7] = f64::INFINITY;
    assert_eq!(
        detect(&xs, &opts).unwrap_err(),
        ChangePointError::NotFinite { index: 7 }
    );
    assert_eq!(min_points(&opts), 6);
    let e = detect(&[1.0, 2.0, 3.0, 4.0, 5.0], &opts).unwrap_err();
    assert_eq!(e, ChangePointError::TooShort { needed: 6, got: 5 });
    assert!(e.to_string().contains("at least 6 points"), "{e}");
    assert!(detect(&[1.0; 6], &opts).unwrap().is_empty());
    let bad = Options {
        significance: 0.0,
        ..opts
    };
    // Options are checked before the series: an empty one checks the options alone.
    assert!(matches!(
        detect(&[], &bad),
        Err(ChangePointError::BadOption {
            option: "significance",
            ..
        })
    ));
    assert!(matches!(
        detect(&[], &opts),
        Err(ChangePointError::TooShort { needed: 6, got: 0 })
    ));
    let bad = Options {
        min_magnitude: f64::NAN,
        ..opts
    };
    assert!(matches!(
        detect(&[1.0; 6], &bad),
        Err(ChangePointError::BadOption {
            option: "min_magnitude",
            ..
        })
    ));
}

#[test]
fn the_same_seed_gives_the_same_answer() {
    let xs = series(8, 0.03, &[(1000.0, 12), (900.0, 8), (1000.0, 10)]);
    let opts = Options::default();
    let first = detect(&xs, &opts).unwrap();
    assert!(!first.is_empty());
    for _ in 0..3 {
        assert_eq!(detect(&xs, &opts).unwrap(), first);
    }
    // Another seed draws other permutations; the cuts themselves do not depend on it.
    let other = detect(&xs, &Options { seed: 7, ..opts }).unwrap();
    assert_eq!(indexes(&other), indexes(&first));
}

#[test]
fn enough_permutations_are_run_to_reach_the_level() {
    let opts = Options::default();
    assert_eq!(permutations_used(&opts), 199);
    let strict = Options {
        significance: 0.001,
        ..opts
    };
    assert_eq!(permutations_used(&strict), 999);
    // With 999 permutations a strong step still passes at 0.001.
    let xs = series(2, 0.01, &[(1000.0, 15), (1200.0, 15)]);
    let found = detect(&xs, &strict).unwrap();
    assert_eq!(indexes(&found), [15]);
    assert!(found[0].p_value <= 0.001);
}

#[test]
fn the_statistic_matches_its_definition() {
    // Q̂ for every split computed the slow way, straight from the paper's formula.
    let xs = series(11, 0.05, &[(10.0, 7), (12.0, 6)]);
    let slow = |x: &[f64], y: &[f64]| {
        let (n, m) = (x.len() as f64, y.len() as f64);
        let pairs = |a: &[f64], b: &[f64]| {
            a.iter()
                .map(|p| b.iter().map(|q| (p - q).abs()).sum::<f64>())
                .sum::<f64>()
        };
        let e = 2.0 * pairs(x, y) / (m * n)
            - pairs(x, x) / (n * (n - 1.0))
            - pairs(y, y) / (m * (m - 1.0));
        m * n / (m + n) * e
    };
    let mut want: Option<(usize, f64)> = None;
    for tau in 3..=xs.len() - 3 {
        for kappa in tau + 3..=xs.len() {
            let q = slow(&xs[..tau], &xs[tau..kappa]);
            if want.is_none_or(|(_, w)| q > w) {
                want = Some((tau, q));
            }
        }
    }
    let (want_tau, want_q) = want.unwrap();
    let (tau, q) = best_split(&xs, 3).unwrap();
    assert_eq!(tau, want_tau);
    assert!((q - want_q).abs() < 1e-9 * want_q.abs(), "{q} vs {want_q}");
}
