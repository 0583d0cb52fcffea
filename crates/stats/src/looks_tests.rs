use super::*;
use crate::normals::Normals;
use crate::sequence::AnytimeDesign;

#[test]
fn pococks_published_constants_come_out() {
    // Pocock (1977), Jennison and Turnbull (2000, table 2.1): two-sided α = 0.05, K equally
    // spaced looks.
    for (k, want) in [
        (1, 1.960),
        (2, 2.178),
        (3, 2.289),
        (4, 2.361),
        (5, 2.413),
        (10, 2.555),
    ] {
        let looks: Vec<usize> = (1..=k).map(|i| 5 * i).collect();
        let c = pocock_boundary(&looks, 0.05);
        assert!((c - want).abs() < 0.003, "K {k}: {c} vs {want}");
    }
}

#[test]
fn looks_fall_every_few_rounds_and_at_the_last() {
    let d = LookDesign::new(0.95, 5, 23).unwrap();
    assert_eq!(d.looks(), [5, 10, 15, 20, 23]);
    assert_eq!(d.last_look(4), None);
    assert_eq!(d.last_look(14), Some(10));
    assert_eq!(d.last_look(23), Some(23));
    assert_eq!(LookDesign::new(0.95, 5, 35).unwrap().looks().len(), 7);
    assert_eq!(
        LookDesign::new(0.95, 2, 20).unwrap_err().to_string(),
        "looks need at least 3 rounds between them, not 2"
    );
    assert_eq!(
        LookDesign::new(0.95, 3, 1000).unwrap_err().to_string(),
        "a look every 3 rounds up to 1000 is 334 looks, more than 50"
    );
}

#[test]
fn the_interval_is_the_last_looks_and_narrower_than_the_sequence() {
    let d = LookDesign::new(0.95, 5, 35).unwrap();
    let xs: Vec<f64> = (0..34)
        .map(|i| 0.3 + 0.1 * ((i % 5) as f64 - 2.0))
        .collect();
    let at = d.interval(&xs).unwrap();
    assert_eq!(at.n, 30);
    let by_hand = d.interval(&xs[..30]).unwrap();
    assert_eq!(at, by_hand);
    assert!(d.interval(&xs[..4]).is_none());
    // At 30 rounds: narrower than the sequence tuned for 35 rounds, wider than fixed-n t.
    let seq = AnytimeDesign::new(0.95, 35).multiplier(30);
    let t = t_quantile(0.975, 29.0);
    let m = d.multiplier(30);
    assert!(m < 0.85 * seq && m > t, "looks {m}, sequence {seq}, t {t}");
    let r = d.paired_ratio(&xs).unwrap();
    assert!((r.ratio.ln() - at.mean).abs() < 1e-12 && (r.low.ln() - at.low).abs() < 1e-12);
}

#[test]
fn stopping_at_any_look_keeps_the_miss_rate_at_alpha() {
    // 4000 studies of N(0, 1) rounds, each looked at after every 5 rounds up to 35, after
    // every 3 up to 30 (two degrees of freedom at the first look), and every 5 up to 100: the
    // intervals miss 0 at some look in at most 5% of them; the fixed-n t interval at the
    // same looks misses far more often.
    for (every, max) in [(5, 35), (3, 30), (5, 100)] {
        let d = LookDesign::new(0.95, every, max).unwrap();
        let mut rng = Normals(0x2545_f491_4f6c_dd1d);
        let (mut miss, mut t_miss) = (0, 0);
        let studies = 4000;
        for _ in 0..studies {
            let xs: Vec<f64> = (0..max).map(|_| rng.next()).collect();
            let (mut m, mut t) = (false, false);
            for n in d.looks() {
                let i = d.interval(&xs[..n]).unwrap();
                m |= i.low > 0.0 || i.high < 0.0;
                let half = t_quantile(0.975, (n - 1) as f64) * i.sd / (n as f64).sqrt();
                t |= i.mean.abs() > half;
            }
            miss += usize::from(m);
            t_miss += usize::from(t);
        }
        let (rate, fixed) = (miss as f64 / studies as f64, t_miss as f64 / studies as f64);
        assert!((0.03..=0.05).contains(&rate), "every {every}: {rate}");
        assert!(fixed > 0.1, "every {every}: fixed-n t missed {fixed}");
    }
}

#[test]
fn the_p_value_is_below_alpha_exactly_when_the_interval_excludes_zero() {
    let d = LookDesign::new(0.95, 3, 12).unwrap();
    for xs in [
        [0.10, 0.12, 0.08, 0.11],
        [0.01, -0.02, 0.03, 0.00],
        [0.05, 0.01, 0.09, 0.02],
        [0.05, 0.04, 0.06, 9.0],
    ] {
        let p = d.p_value(&xs).unwrap();
        let i = d.interval(&xs).unwrap();
        assert_eq!(
            p < 0.05,
            i.low > 0.0 || i.high < 0.0,
            "{xs:?}: p {p}, {i:?}"
        );
    }
    assert_eq!(d.p_value(&[0.1, 0.2]), None);
}

#[test]
fn rounds_needed_is_the_first_look_that_reaches_the_half_width() {
    let d = LookDesign::new(0.95, 5, 100).unwrap();
    let n = d.rounds_needed(0.1, 0.05, 1000).unwrap();
    assert_eq!(n % 5, 0);
    let hw = |n: usize| d.multiplier(n) * 0.1 / (n as f64).sqrt();
    assert!(hw(n) <= 0.05 && hw(n - 5) > 0.05, "{n}");
    assert_eq!(d.rounds_needed(1.0, 0.001, 100), None);
}
