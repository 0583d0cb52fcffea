use super::*;
use crate::normals::Normals;

#[test]
fn the_boundary_matches_values_computed_from_the_published_formula() {
    // python3: math.sqrt(11 * math.log(11 / (1 * 0.05**2))) = 9.606401928868575
    let u = normal_mixture_boundary(10.0, 1.0, 0.05);
    assert!((u - 9.606401928868575).abs() < 1e-9, "{u}");
    // python3: A = -2*log(0.05); (A + log(A + 1)) / 10 = 0.7936154601737565
    let r2 = mixing_r2(0.05, 10);
    assert!((r2 - 0.7936154601737565).abs() < 1e-12, "{r2}");
    // python3: nr = n*r2 + 1; sqrt(2*nr/(n*r2) * log(sqrt(nr)/0.05)) for n = 3, 10, 20, 100.
    let d = AnytimeDesign::new(0.95, 10);
    for (n, want) in [
        (3, 3.19964896734087),
        (10, 3.035208990376253),
        (20, 3.0614772188674166),
        (100, 3.2417231454054374),
    ] {
        let got = d.z_multiplier(n);
        assert!((got - want).abs() < 1e-9, "n {n}: {got} vs {want}");
    }
}

#[test]
fn the_half_width_is_howards_boundary_divided_by_n() {
    // σ = 1: u(v = n, ρ = 1/r²) / n equals the multiplier times 1/√n.
    let d = AnytimeDesign::new(0.95, 12);
    let rho = 1.0 / mixing_r2(0.05, 12);
    for n in [3usize, 7, 12, 40] {
        let via_sum = normal_mixture_boundary(n as f64, rho, 0.05) / n as f64;
        let via_mean = d.z_multiplier(n) / (n as f64).sqrt();
        assert!((via_sum - via_mean).abs() < 1e-12, "n {n}");
    }
}

#[test]
fn the_sequence_is_wider_than_a_fixed_n_t_interval_and_narrows_with_rounds() {
    let d = AnytimeDesign::new(0.95, 20);
    for n in [3usize, 5, 10, 20, 50] {
        assert!(d.multiplier(n) > fixed_t_multiplier(0.95, n), "n {n}");
    }
    // Half-width in units of s: multiplier / √n shrinks.
    let hw = |n: usize| d.multiplier(n) / (n as f64).sqrt();
    assert!(hw(3) > hw(5) && hw(5) > hw(10) && hw(10) > hw(40));
    assert!(d.multiplier(2).is_nan());
    assert_eq!(d.interval(&[0.1, 0.2]), None);
}

#[test]
fn the_paired_ratio_is_the_exp_of_the_interval() {
    let d = AnytimeDesign::new(0.95, 10);
    let logs = [0.10, 0.12, 0.08, 0.11];
    let i = d.interval(&logs).unwrap();
    let r = d.paired_ratio(&logs).unwrap();
    assert!((r.ratio - i.mean.exp()).abs() < 1e-12);
    assert!((r.low - i.low.exp()).abs() < 1e-12 && (r.high - i.high.exp()).abs() < 1e-12);
    assert!(r.excludes_one(), "{r:?}");
    assert_eq!(r.df, 3.0);
}

#[test]
fn rounds_needed_reach_the_half_width() {
    let d = AnytimeDesign::new(0.95, 20);
    let n = d.rounds_needed(0.05, 0.02, 1000).unwrap();
    let hw = |n: usize| d.multiplier(n) * 0.05 / (n as f64).sqrt();
    assert!(hw(n) <= 0.02 && hw(n - 1) > 0.02, "{n}");
    assert_eq!(d.rounds_needed(1.0, 0.001, 50), None);
}

#[test]
fn looking_after_every_round_keeps_the_miss_rate_under_alpha() {
    // 4000 studies of 30 rounds of N(0, 1), looked at after every round from the third: the
    // sequence misses 0 at some look in at most 5% of them; the fixed-n t interval recomputed
    // at every look misses far more often (about a quarter).
    let d = AnytimeDesign::new(0.95, 30);
    let mut rng = Normals(0x9e37_79b9_7f4a_7c15);
    let (mut seq_miss, mut t_miss) = (0, 0);
    let studies = 4000;
    for _ in 0..studies {
        let xs: Vec<f64> = (0..30).map(|_| rng.next()).collect();
        let (mut s, mut t) = (false, false);
        for n in MIN_ROUNDS..=30 {
            let i = d.interval(&xs[..n]).unwrap();
            s |= i.low > 0.0 || i.high < 0.0;
            let half = fixed_t_multiplier(0.95, n) * i.sd / (n as f64).sqrt();
            t |= i.mean.abs() > half;
        }
        seq_miss += usize::from(s);
        t_miss += usize::from(t);
    }
    let (seq, fixed) = (
        seq_miss as f64 / studies as f64,
        t_miss as f64 / studies as f64,
    );
    assert!(seq <= 0.05, "sequence missed {seq}");
    assert!(fixed > 0.15, "fixed-n t missed {fixed}");
}

#[test]
fn the_anytime_p_value_is_below_alpha_exactly_when_the_interval_excludes_zero() {
    for xs in [
        [0.10, 0.12, 0.08, 0.11],
        [0.01, -0.02, 0.03, 0.00],
        [0.05, 0.01, 0.09, 0.02],
    ] {
        let p = anytime_p_value(&xs, 10).unwrap();
        let i = AnytimeDesign::new(0.95, 10).interval(&xs).unwrap();
        assert_eq!(
            p < 0.05,
            i.low > 0.0 || i.high < 0.0,
            "{xs:?}: p {p}, {i:?}"
        );
    }
    assert_eq!(anytime_p_value(&[0.1, 0.2], 10), None);
}
