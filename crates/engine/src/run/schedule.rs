//! Time plans shared by the loops and the coordinator: report-interval boundaries, and the
//! intended start times of fixed-rate arrivals.
//!
//! Each loop computes the same boundaries from the same phase start, so loops cut their interval
//! statistics without talking to each other. A fixed rate R over L loops gives each loop its own
//! arrival process of rate R/L: interleaved evenly spaced starts for uniform arrivals, an
//! independent Poisson process for Poisson arrivals (the sum of independent Poisson processes is a
//! Poisson process of the summed rate), so no atomic is touched per arrival.

use qpslab_core::plan::Arrival;
use std::time::{Duration, Instant};

/// Report boundaries on one grid of `interval` through the end of warm-up: the first `warm`
/// whole intervals before measurement are warm-up intervals (`b_warm` = end of warm-up,
/// `b_k = b_warm + (k - warm) * interval`), and only boundaries strictly before the time limit
/// count (the final interval runs until the last in-flight event completes). Interval 0, from
/// the phase's start to `b_0`, is the part of the warm-up shorter than one interval.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Boundaries {
    /// End of warm-up, start of measurement.
    pub measure_start: Instant,
    /// Report interval.
    pub interval: Duration,
    /// Time limit of the measured phase, if any.
    pub end: Option<Instant>,
    /// Whole warm-up intervals before `measure_start`, drawn but never counted.
    pub warm: u64,
}

/// Most warm-up intervals kept: a longer warm-up keeps its last ones.
pub(crate) const MAX_WARM_INTERVALS: u64 = 3600;

impl Boundaries {
    /// The whole warm-up intervals of `warmup` on a grid of `interval` (at most
    /// [`MAX_WARM_INTERVALS`]).
    pub fn warm_intervals(warmup: Duration, interval: Duration) -> u64 {
        if interval.is_zero() {
            return 0;
        }
        u64::try_from(warmup.as_nanos() / interval.as_nanos())
            .unwrap_or(u64::MAX)
            .min(MAX_WARM_INTERVALS)
    }

    /// Boundary `k` (`warm` = end of warm-up), or `None` when it lies at or past the time limit.
    pub fn get(&self, k: u64) -> Option<Instant> {
        let steps = |n: u64| {
            let nanos = self.interval.as_nanos().saturating_mul(u128::from(n));
            Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
        };
        if k < self.warm {
            return self.measure_start.checked_sub(steps(self.warm - k));
        }
        let at = self.measure_start.checked_add(steps(k - self.warm))?;
        match self.end {
            Some(end) if k > self.warm && at >= end => None,
            _ => Some(at),
        }
    }

    /// Whether interval `k` (between boundaries `k - 1` and `k`) is measured.
    pub fn measured(&self, k: u64) -> bool {
        k > self.warm
    }

    /// Whether interval `k` is a whole warm-up interval, drawn but not counted.
    pub fn warm_up(&self, k: u64) -> bool {
        (1..=self.warm).contains(&k)
    }
}

/// One loop's share of a fixed-rate arrival schedule.
#[derive(Clone, Debug)]
pub(crate) struct Arrivals {
    next: Instant,
    /// Seconds between arrivals of this loop (mean gap for Poisson).
    gap_s: f64,
    poisson: bool,
    rng: SplitMix64,
}

impl Arrivals {
    /// Loop `index` of `loops` sharing `per_second` arrivals, the first due at or after `start`.
    pub fn new(
        start: Instant,
        per_second: f64,
        arrival: Arrival,
        index: usize,
        loops: usize,
        seed: u64,
    ) -> Self {
        let loops = loops.max(1) as f64;
        let gap_s = loops / per_second.max(1e-9);
        let poisson = arrival == Arrival::Poisson;
        let mut rng = SplitMix64(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let first = if poisson {
            exp_gap(&mut rng, gap_s)
        } else {
            // Interleave the loops' evenly spaced schedules: loop i starts at i/R.
            index as f64 * gap_s / loops
        };
        Arrivals {
            next: start + secs(first),
            gap_s,
            poisson,
            rng,
        }
    }

    /// The intended start of the next arrival.
    #[inline]
    pub fn peek(&self) -> Instant {
        self.next
    }

    /// Takes the next arrival's intended start and schedules the one after.
    #[inline]
    pub fn take(&mut self) -> Instant {
        let at = self.next;
        let gap = if self.poisson {
            exp_gap(&mut self.rng, self.gap_s)
        } else {
            self.gap_s
        };
        self.next = at + secs(gap);
        at
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s.clamp(0.0, 1e9))
}

/// An exponentially distributed gap with mean `mean_s`.
fn exp_gap(rng: &mut SplitMix64, mean_s: f64) -> f64 {
    // 53 random bits mapped to (0, 1]: never 0, so the logarithm is finite.
    let u = ((rng.next() >> 11) + 1) as f64 / (1u64 << 53) as f64;
    -u.ln() * mean_s
}

/// A tiny seeded generator for arrival gaps (statement values use the workload's generator).
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_stop_before_the_time_limit() {
        let t0 = Instant::now();
        let b = Boundaries {
            measure_start: t0,
            interval: Duration::from_secs(1),
            end: Some(t0 + Duration::from_secs(3)),
            warm: 0,
        };
        assert_eq!(b.get(0), Some(t0));
        assert_eq!(b.get(2), Some(t0 + Duration::from_secs(2)));
        assert_eq!(b.get(3), None, "the last interval absorbs the drain");
        let open = Boundaries { end: None, ..b };
        assert_eq!(open.get(7), Some(t0 + Duration::from_secs(7)));
        // A zero-length phase still has its warm-up boundary.
        let zero = Boundaries { end: Some(t0), ..b };
        assert_eq!(zero.get(0), Some(t0));
        assert_eq!(zero.get(1), None);
    }

    #[test]
    fn warm_up_intervals_end_where_measurement_starts() {
        let t0 = Instant::now() + Duration::from_secs(10);
        let s = Duration::from_secs(1);
        assert_eq!(
            Boundaries::warm_intervals(Duration::from_millis(2500), s),
            2
        );
        assert_eq!(Boundaries::warm_intervals(Duration::ZERO, s), 0);
        assert_eq!(Boundaries::warm_intervals(s, Duration::ZERO), 0);
        let b = Boundaries {
            measure_start: t0,
            interval: s,
            end: Some(t0 + Duration::from_secs(2)),
            warm: 2,
        };
        assert_eq!(b.get(0), Some(t0 - 2 * s));
        assert_eq!(b.get(1), Some(t0 - s));
        assert_eq!(b.get(2), Some(t0), "the end of warm-up");
        assert_eq!(b.get(3), Some(t0 + s));
        assert_eq!(b.get(4), None, "the time limit");
        assert!(
            !b.measured(0) && !b.warm_up(0),
            "the part shorter than an interval"
        );
        assert!(b.warm_up(1) && b.warm_up(2) && !b.measured(2));
        assert!(b.measured(3) && !b.warm_up(3));
    }

    #[test]
    fn uniform_arrivals_interleave_across_loops() {
        let t0 = Instant::now();
        let mut all: Vec<Duration> = Vec::new();
        for i in 0..4 {
            let mut a = Arrivals::new(t0, 1000.0, Arrival::Uniform, i, 4, 1);
            for _ in 0..250 {
                all.push(a.take() - t0);
            }
        }
        all.sort();
        // 1000 arrivals, 1 ms apart, starting at 0.
        for (n, d) in all.iter().enumerate() {
            let want = n as f64 * 1e-3;
            assert!((d.as_secs_f64() - want).abs() < 1e-6, "{n}: {d:?}");
        }
    }

    #[test]
    fn poisson_arrivals_have_the_requested_rate_and_spread() {
        let t0 = Instant::now();
        let mut a = Arrivals::new(t0, 2000.0, Arrival::Poisson, 1, 2, 42);
        let mut prev = t0;
        let n = 20_000;
        let mut gaps = Vec::with_capacity(n);
        for _ in 0..n {
            let at = a.take();
            gaps.push((at - prev).as_secs_f64());
            prev = at;
        }
        // Per loop: 1000/s, mean gap 1 ms; an exponential's standard deviation equals its mean.
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 1e-3).abs() < 0.05e-3, "mean {mean}");
        assert!((var.sqrt() - 1e-3).abs() < 0.05e-3, "sd {}", var.sqrt());
        // P(gap > 3 * mean) = e^-3 ≈ 5%.
        let tail = gaps.iter().filter(|&&g| g > 3e-3).count() as f64 / n as f64;
        assert!((tail - (-3f64).exp()).abs() < 0.01, "tail {tail}");
    }
}
