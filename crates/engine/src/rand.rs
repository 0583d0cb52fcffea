//! Random numbers for workloads: a fast seedable generator and sysbench's distributions.
//!
//! [`Rng`] is xoshiro256** seeded through SplitMix64: one generator per session, no locks, no
//! `rand` crate. [`Distribution`] reproduces sysbench's `sb_rand_default` (`src/sb_rand.c`):
//! the same formulas for uniform, gaussian, special (1.0.20's default), pareto and zipfian
//! (zipfian is from sysbench 1.1, where 1.0.20 has none), including their integer truncations,
//! so that id ranges, hot spots and skew match what sysbench sends.
//!
//! ```
//! use qpslab_engine::rand::{Distribution, Rng};
//! let d = Distribution::new(&qpslab_core::workload::RandOptions::default(), 10_000);
//! let mut rng = Rng::new(42);
//! let id = d.sample(&mut rng);
//! assert!((1..=10_000).contains(&id));
//! ```

use qpslab_core::workload::{RandOptions, RandType};

/// xoshiro256**: fast, 256 bits of state, good statistical quality.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// One SplitMix64 step: the recommended way to expand a 64-bit seed into xoshiro state.
fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole sequence is determined by `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        // SplitMix64 never yields four zero words in a row, so the state is never all zero.
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        Rng { s }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A double uniformly distributed in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An integer in [a, b] (both included), computed as sysbench's `sb_rand_uniform` does:
    /// `a + double * (b - a + 1)`. Returns `a` when `b < a`.
    #[inline]
    pub fn uniform(&mut self, a: u64, b: u64) -> u64 {
        if b <= a {
            return a;
        }
        // `b - a` first: `b - a + 1` would overflow for the full u64 range.
        let span = (b - a) as f64 + 1.0;
        // The product is < span, so the truncated value stays within [a, b]; `min` guards the
        // rounding of spans above 2^53.
        a + ((self.next_f64() * span) as u64).min(b - a)
    }

    /// Fills `out` from a sysbench string template: `#` becomes a random digit, `@` a random
    /// lower-case letter, anything else is copied (sysbench's `sb_rand_str`).
    pub fn fill_template(&mut self, template: &[u8], out: &mut [u8]) {
        // Digits come 8 to a 64-bit draw: the word is read as a fraction in [0, 1) and each
        // multiplication by 10 moves the next decimal digit into the high half. 8 steps use
        // ~27 of the 64 bits, so every digit stays uniform; c and pad (278 digits per row)
        // cost 35 draws instead of 278, which is most of oltp_read_write's generation time.
        let (mut pool, mut left) = (0u64, 0u32);
        for (o, &t) in out.iter_mut().zip(template) {
            *o = match t {
                b'#' => {
                    if left == 0 {
                        pool = self.next_u64();
                        left = 8;
                    }
                    let m = u128::from(pool) * 10;
                    pool = m as u64;
                    left -= 1;
                    b'0' + (m >> 64) as u8
                }
                b'@' => self.uniform(u64::from(b'a'), u64::from(b'z')) as u8,
                other => other,
            };
        }
    }
}

/// The shape of a [`Distribution`], with sysbench's precomputed constants.
#[derive(Clone, Debug)]
enum Shape {
    Uniform,
    Gaussian {
        iter: u32,
        iter_mult: f64,
    },
    Special {
        iter: u32,
        iter_mult: f64,
        res_mult: f64,
        pct_mult: f64,
        pct_2_mult: f64,
    },
    Pareto {
        power: f64,
    },
    Zipfian {
        exp: f64,
        s: f64,
        h_integral_x1: f64,
        h_integral_n: f64,
    },
}

/// sysbench's default distribution (`--rand-type`) over a fixed range of ids.
#[derive(Clone, Debug)]
pub struct Distribution {
    shape: Shape,
    lo: u64,
    hi: u64,
}

impl Distribution {
    /// Draws ids in [1, n], as sysbench's `sb_rand_default(1, n)`.
    ///
    /// Options are assumed valid (see [`validate`]); invalid ones give degenerate but
    /// in-range draws rather than a panic.
    pub fn new(opts: &RandOptions, n: u64) -> Self {
        Self::with_range(opts, 1, n)
    }

    /// Draws ids in [lo, hi], as sysbench's `sb_rand_default(lo, hi)`.
    pub fn with_range(opts: &RandOptions, lo: u64, hi: u64) -> Self {
        let hi = hi.max(lo);
        let iter = opts.spec_iter.max(1);
        let iter_mult = 1.0 / f64::from(iter);
        let shape = match opts.rand_type {
            RandType::Uniform => Shape::Uniform,
            RandType::Gaussian => Shape::Gaussian { iter, iter_mult },
            RandType::Special => Shape::Special {
                iter,
                iter_mult,
                res_mult: 100.0 / (100.0 - f64::from(opts.spec_res.min(99))),
                pct_mult: f64::from(opts.spec_pct) / 100.0,
                pct_2_mult: f64::from(opts.spec_pct) / 200.0,
            },
            RandType::Pareto => Shape::Pareto {
                power: opts.pareto_h.ln() / (1.0 - opts.pareto_h).ln(),
            },
            RandType::Zipfian => {
                let exp = opts.zipfian_exp.max(0.0);
                Shape::Zipfian {
                    exp,
                    s: 2.0 - h_integral_inverse(h_integral(2.5, exp) - h(2.0, exp), exp),
                    h_integral_x1: h_integral(1.5, exp) - 1.0,
                    h_integral_n: h_integral((hi - lo + 1) as f64 + 0.5, exp),
                }
            }
        };
        Distribution { shape, lo, hi }
    }

    /// The smallest value this distribution draws.
    pub fn lo(&self) -> u64 {
        self.lo
    }

    /// The largest value this distribution draws.
    pub fn hi(&self) -> u64 {
        self.hi
    }

    /// One draw in [lo, hi].
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let (a, b) = (self.lo, self.hi);
        let v = match self.shape {
            Shape::Uniform => rng.uniform(a, b),
            Shape::Gaussian { iter, iter_mult } => {
                let t = (b - a + 1) as f64;
                let mut sum = 0.0;
                for _ in 0..iter {
                    sum += rng.next_f64() * t;
                }
                a + (sum * iter_mult) as u64
            }
            Shape::Special {
                iter,
                iter_mult,
                res_mult,
                pct_mult,
                pct_2_mult,
            } => {
                // (100 - spec_res)% of draws are gaussian over the whole range; the others land
                // uniformly in a window of spec_pct% of the range around its middle. `rnd` is
                // reused for the window, exactly as sysbench does.
                let t = (b - a) as f64;
                let rnd = rng.next_f64();
                if rnd * t * res_mult < t {
                    let mut sum = 0.0;
                    for _ in 0..iter {
                        sum += rng.next_f64();
                    }
                    a + (sum * t * iter_mult) as u64
                } else {
                    let d = t * pct_mult;
                    let res = rnd * (d + 1.0) + t / 2.0 - t * pct_2_mult;
                    a + res as u64
                }
            }
            Shape::Pareto { power } => a + ((b - a + 1) as f64 * rng.next_f64().powf(power)) as u64,
            Shape::Zipfian {
                exp,
                s,
                h_integral_x1,
                h_integral_n,
            } => a + zipfian(rng, b - a + 1, exp, s, h_integral_x1, h_integral_n) - 1,
        };
        // Float rounding at the edges must never leave the range the caller asked for.
        v.clamp(a, b)
    }
}

/// A `--rand-*` option sysbench would reject (the user's mistake); the message names it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RandOptionError {
    /// `--rand-spec-iter` 0.
    #[error("--rand-spec-iter must be at least 1")]
    SpecIter,
    /// `--rand-spec-pct` above 100.
    #[error("--rand-spec-pct must be between 0 and 100 (got {0})")]
    SpecPct(u32),
    /// `--rand-spec-res` 100 or more.
    #[error("--rand-spec-res must be below 100 (got {0})")]
    SpecRes(u32),
    /// `--rand-pareto-h` outside (0, 1).
    #[error("--rand-pareto-h must be strictly between 0 and 1 (got {0})")]
    ParetoH(f64),
    /// `--rand-zipfian-exp` negative or not finite.
    #[error("--rand-zipfian-exp must be >= 0 (got {0})")]
    ZipfianExp(f64),
}

/// Checks `--rand-*` options the way sysbench would reject them, with a message naming the
/// option.
pub fn validate(opts: &RandOptions) -> Result<(), RandOptionError> {
    if opts.spec_iter == 0 {
        return Err(RandOptionError::SpecIter);
    }
    if opts.spec_pct > 100 {
        return Err(RandOptionError::SpecPct(opts.spec_pct));
    }
    if opts.spec_res >= 100 {
        return Err(RandOptionError::SpecRes(opts.spec_res));
    }
    if !(opts.pareto_h > 0.0 && opts.pareto_h < 1.0) {
        return Err(RandOptionError::ParetoH(opts.pareto_h));
    }
    if !(opts.zipfian_exp >= 0.0 && opts.zipfian_exp.is_finite()) {
        return Err(RandOptionError::ZipfianExp(opts.zipfian_exp));
    }
    Ok(())
}

/// Rejection-inversion sampling of a bounded Zipf distribution over [1, n] (Hörmann and
/// Derflinger 1996), as sysbench 1.1's `sb_rand_zipfian_int`.
fn zipfian(rng: &mut Rng, n: u64, exp: f64, s: f64, hx1: f64, hn: f64) -> u64 {
    loop {
        let u = hn + rng.next_f64() * (hx1 - hn);
        let x = h_integral_inverse(u, exp);
        let k = ((x + 0.5) as u64).clamp(1, n);
        let kf = k as f64;
        if kf - x <= s || u >= h_integral(kf + 0.5, exp) - h(kf, exp) {
            return k;
        }
    }
}

/// H(x), the integral of h: `(x^(1-e) - 1) / (1-e)`, or `ln x` when e = 1.
fn h_integral(x: f64, e: f64) -> f64 {
    let log_x = x.ln();
    exp_m1_over_x((1.0 - e) * log_x) * log_x
}

/// h(x) = x^-e.
fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

/// The inverse of H.
fn h_integral_inverse(x: f64, e: f64) -> f64 {
    // Numerical noise can push t just below -1, where ln(1 + t) is undefined.
    let t = (x * (1.0 - e)).max(-1.0);
    (ln_1p_over_x(t) * x).exp()
}

/// ln(1 + x) / x, with its Taylor series near 0.
fn ln_1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, with its Taylor series near 0.
fn exp_m1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// sysbench's `sb_rand_unique` permutation: a bijection on u32 built from quadratic residues
/// modulo the largest 32-bit prime, so a counter run through it yields distinct values.
pub fn unique_permute(x: u32) -> u32 {
    const PRIME: u32 = 4_294_967_291;
    if x >= PRIME {
        // The 5 values above the prime map to themselves.
        return x;
    }
    let residue = ((u64::from(x) * u64::from(x)) % u64::from(PRIME)) as u32;
    if x <= PRIME / 2 {
        residue
    } else {
        PRIME - residue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence() {
        let (mut a, mut b, mut c) = (Rng::new(7), Rng::new(7), Rng::new(8));
        let xa: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn uniform_covers_both_ends() {
        let mut r = Rng::new(1);
        let mut seen = [false; 3];
        for _ in 0..1000 {
            let v = r.uniform(5, 7);
            assert!((5..=7).contains(&v));
            seen[(v - 5) as usize] = true;
        }
        assert_eq!(seen, [true; 3]);
        assert_eq!(r.uniform(9, 9), 9);
        assert_eq!(r.uniform(9, 3), 9);
    }

    #[test]
    fn template_keeps_dashes_and_fills_digits() {
        let mut r = Rng::new(3);
        let tpl = b"###-@@";
        let mut out = [0u8; 6];
        r.fill_template(tpl, &mut out);
        assert!(out[..3].iter().all(u8::is_ascii_digit), "{out:?}");
        assert_eq!(out[3], b'-');
        assert!(out[4..].iter().all(u8::is_ascii_lowercase), "{out:?}");
    }

    #[test]
    fn template_digits_are_uniform() {
        let mut r = Rng::new(5);
        let tpl = [b'#'; 100];
        let mut out = [0u8; 100];
        let mut counts = [0u32; 10];
        for _ in 0..10_000 {
            r.fill_template(&tpl, &mut out);
            for &d in &out {
                counts[usize::from(d - b'0')] += 1;
            }
        }
        // 1M digits: each share within 1% of 10% (the standard error is 0.03%).
        for c in counts {
            assert!((99_000..=101_000).contains(&c), "{counts:?}");
        }
        // Digits in one position across draws are uniform too (no fixed pattern per slot).
        let mut first = [0u32; 10];
        for _ in 0..10_000 {
            r.fill_template(&tpl, &mut out);
            first[usize::from(out[7] - b'0')] += 1;
        }
        assert!(
            first.iter().all(|&c| (850..=1150).contains(&c)),
            "{first:?}"
        );
    }

    #[test]
    fn unique_permute_is_injective_on_a_sample() {
        let mut seen: Vec<u32> = (0..100_000u32)
            .map(|i| unique_permute(unique_permute(i).wrapping_add(12345) ^ 0x5bf0_3635))
            .collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 100_000);
    }

    #[test]
    fn validate_names_the_bad_option() {
        let mut o = RandOptions::default();
        assert!(validate(&o).is_ok());
        o.spec_res = 100;
        assert_eq!(
            validate(&o).unwrap_err().to_string(),
            "--rand-spec-res must be below 100 (got 100)"
        );
        let o = RandOptions {
            pareto_h: 1.0,
            ..RandOptions::default()
        };
        assert_eq!(
            validate(&o).unwrap_err().to_string(),
            "--rand-pareto-h must be strictly between 0 and 1 (got 1)"
        );
        let o = RandOptions {
            zipfian_exp: -0.5,
            ..RandOptions::default()
        };
        assert_eq!(
            validate(&o).unwrap_err().to_string(),
            "--rand-zipfian-exp must be >= 0 (got -0.5)"
        );
    }

    #[test]
    fn zipfian_helpers_invert() {
        for e in [0.0, 0.5, 0.8, 1.0, 1.5] {
            for x in [1.5, 2.0, 10.0, 1000.5] {
                let back = h_integral_inverse(h_integral(x, e), e);
                assert!((back - x).abs() < 1e-6 * x, "e={e} x={x} back={back}");
            }
        }
    }
}
