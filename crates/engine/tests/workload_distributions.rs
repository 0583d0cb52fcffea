//! Each of sysbench's `--rand-type` distributions drawn many times and checked against the
//! shape its formula implies.

use qpslab_core::workload::{RandOptions, RandType};
use qpslab_engine::rand::{Distribution, Rng};

const N: u64 = 10_000;
const DRAWS: usize = 400_000;

fn draws(rand_type: RandType, tweak: impl Fn(&mut RandOptions)) -> Vec<u64> {
    let mut o = RandOptions {
        rand_type,
        ..RandOptions::default()
    };
    tweak(&mut o);
    let d = Distribution::new(&o, N);
    let mut rng = Rng::new(0x5eed);
    let v: Vec<u64> = (0..DRAWS).map(|_| d.sample(&mut rng)).collect();
    assert!(
        v.iter().all(|x| (1..=N).contains(x)),
        "{rand_type:?} out of [1, {N}]"
    );
    v
}

fn share(v: &[u64], range: std::ops::RangeInclusive<u64>) -> f64 {
    v.iter().filter(|x| range.contains(x)).count() as f64 / v.len() as f64
}

fn mean_sd(v: &[u64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

#[test]
fn uniform_is_flat() {
    let v = draws(RandType::Uniform, |_| {});
    for decile in 0..10 {
        let s = share(&v, decile * N / 10 + 1..=(decile + 1) * N / 10);
        assert!((s - 0.1).abs() < 0.005, "decile {decile}: {s}");
    }
    assert_eq!(*v.iter().min().unwrap(), 1);
    assert_eq!(*v.iter().max().unwrap(), N);
}

#[test]
fn gaussian_is_centered_with_the_spread_of_twelve_uniforms() {
    let v = draws(RandType::Gaussian, |_| {});
    let (mean, sd) = mean_sd(&v);
    // The mean of 12 uniforms over N: centre N/2, standard deviation N / sqrt(12 * 12).
    assert!(
        (mean - N as f64 / 2.0).abs() < N as f64 * 0.005,
        "mean {mean}"
    );
    let want_sd = N as f64 / 12.0;
    assert!(
        (sd - want_sd).abs() < want_sd * 0.03,
        "sd {sd} want {want_sd}"
    );
    // Far tails are nearly empty, unlike a uniform.
    assert!(share(&v, 1..=N / 10) < 0.001);
    // Fewer iterations spread it out.
    let wide = draws(RandType::Gaussian, |o| o.spec_iter = 2);
    assert!(mean_sd(&wide).1 > sd * 2.0);
}

/// The window of spec_pct% of the range around its middle, where special puts its hot values.
fn hot_window(pct: u64) -> std::ops::RangeInclusive<u64> {
    let half = N * pct / 200;
    N / 2 - half..=N / 2 + half + 1
}

#[test]
fn special_sends_spec_res_percent_to_the_hot_spot() {
    for (pct, res) in [(1, 75), (1, 50), (5, 90)] {
        let v = draws(RandType::Special, |o| {
            o.spec_pct = pct as u32;
            o.spec_res = res;
        });
        let s = share(&v, hot_window(pct));
        // spec_res% land in the window, plus the gaussian draws that happen to fall there.
        let want = f64::from(res) / 100.0;
        assert!(
            s > want - 0.005 && s < want + 0.05,
            "pct {pct} res {res}: hot share {s}"
        );
        // The rest is spread over the range (gaussian), not stuck in the window.
        assert!(
            share(&v, 1..=N * 2 / 5) > (1.0 - want) * 0.05,
            "pct {pct} res {res}"
        );
    }
}

#[test]
fn pareto_puts_eighty_percent_in_the_first_fifth() {
    let v = draws(RandType::Pareto, |_| {});
    let s = share(&v, 1..=N / 5);
    // P(N * u^(ln h / ln(1-h)) <= N/5) = (1/5)^(ln(1-h)/ln h) = 0.8 for h = 0.2.
    assert!((s - 0.8).abs() < 0.005, "share of first fifth {s}");
    let flatter = draws(RandType::Pareto, |o| o.pareto_h = 0.4);
    assert!(share(&flatter, 1..=N / 5) < s - 0.1);
}

#[test]
fn zipfian_follows_k_to_the_minus_exponent() {
    for exp in [0.8, 1.2] {
        let v = draws(RandType::Zipfian, |o| o.zipfian_exp = exp);
        let h: f64 = (1..=N).map(|k| (k as f64).powf(-exp)).sum();
        for k in [1u64, 2, 10] {
            let want = (k as f64).powf(-exp) / h;
            let got = share(&v, k..=k);
            assert!(
                (got - want).abs() < want * 0.05,
                "exp {exp} k {k}: {got} want {want}"
            );
        }
        let top: f64 = (1..=100).map(|k| (k as f64).powf(-exp)).sum::<f64>() / h;
        let got = share(&v, 1..=100);
        assert!(
            (got - top).abs() < 0.01,
            "exp {exp} top 100: {got} want {top}"
        );
    }
    // exponent 0 is uniform.
    let flat = draws(RandType::Zipfian, |o| o.zipfian_exp = 0.0);
    assert!((share(&flat, 1..=N / 2) - 0.5).abs() < 0.005);
}

#[test]
fn default_is_special_as_in_sysbench_1_0_20() {
    let o = RandOptions::default();
    assert_eq!(o.rand_type, RandType::Special);
    let v = draws(RandType::Special, |_| {});
    assert!(share(&v, hot_window(1)) > 0.74);
}

#[test]
fn ranges_other_than_one_to_n_stay_inside() {
    let o = RandOptions::default();
    for t in [
        RandType::Uniform,
        RandType::Gaussian,
        RandType::Special,
        RandType::Pareto,
        RandType::Zipfian,
    ] {
        let o = RandOptions {
            rand_type: t,
            ..o.clone()
        };
        let d = Distribution::with_range(&o, 500, 750);
        let mut rng = Rng::new(1);
        for _ in 0..10_000 {
            let x = d.sample(&mut rng);
            assert!((500..=750).contains(&x), "{t:?} {x}");
        }
        let one = Distribution::with_range(&o, 7, 7);
        assert_eq!(one.sample(&mut rng), 7);
    }
}
