//! Latency distributions as HdrHistogram plots them: latency against percentile on a log-scaled
//! `1/(1-p)` axis, so the tail (99%, 99.9%, 99.99%) gets as much room as the median, and the
//! latency on a log axis, so a tail a hundred times the median leaves the median and p99
//! readable. Each line is one setup at one session count, its repeats' stored event histograms
//! merged.

use super::{sessions, Line};
use crate::svg::{LineChart, Series, Size, XAxis};
use hdrhistogram::Histogram;
use qpslab_core::PhaseResult;

/// Points per decade of `1/(1-p)`.
const STEPS_PER_DECADE: u32 = 20;
/// The deepest percentile drawn: 99.9999%.
const MAX_DECADES: f64 = 6.0;

/// The phase's stored `event` histogram (microsecond values), if it has one that reads (its
/// header checked before it is decoded: `HistogramBlob::histogram`).
fn event_histogram(phase: &PhaseResult) -> Option<Histogram<u64>> {
    phase.event_histogram()
}

/// `(1/(1-p), latency in ms)` from the 0th percentile to the deepest one the histogram's count
/// resolves (a percentile beyond `1 - 1/count` is the maximum).
fn curve(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let decades = (h.len() as f64).log10().min(MAX_DECADES);
    let steps = (decades * f64::from(STEPS_PER_DECADE)).floor() as u32;
    let mut out: Vec<(f64, f64)> = (0..=steps)
        .map(|i| {
            let x = 10f64.powf(f64::from(i) / f64::from(STEPS_PER_DECADE));
            (x, h.value_at_quantile(1.0 - 1.0 / x) as f64 / 1000.0)
        })
        .collect();
    let end = 10f64.powf(decades);
    if out.last().is_some_and(|(x, _)| *x < end) {
        out.push((end, h.value_at_quantile(1.0 - 1.0 / end) as f64 / 1000.0));
    }
    out
}

/// The latency distribution of every line at `threads` sessions, its repeats merged.
pub(super) fn distribution(lines: &[Line<'_>], threads: u32) -> LineChart {
    let series = lines
        .iter()
        .filter_map(|l| {
            let mut merged: Option<Histogram<u64>> = None;
            for p in l.by_threads.get(&threads)? {
                let Some(h) = event_histogram(&p.phase.result) else {
                    continue;
                };
                match &mut merged {
                    // Histograms of one tool share their bounds; one that does not fit is
                    // left out rather than drawn wrong.
                    Some(m) => {
                        let _ = m.add(&h);
                    }
                    None => merged = Some(h),
                }
            }
            let h = merged.filter(|h| !h.is_empty())?;
            Some(Series {
                name: l.name.clone(),
                points: curve(&h),
                color: l.color,
                style: l.style,
            })
        })
        .collect();
    LineChart {
        title: format!("Latency by percentile · {}", sessions(threads)),
        x_label: "percentile (log scale of 1/(1-p))".into(),
        y_label: "latency, ms (log scale)".into(),
        x_axis: XAxis::Percentile,
        size: Size::Small,
        series,
        band: None,
        markers: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_reaches_the_tail_the_count_resolves() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for v in 1..=10_000u64 {
            h.record(v).unwrap();
        }
        let c = curve(&h);
        // 10 000 values: four decades, 20 points each, from the 0th percentile.
        assert_eq!(c.len(), 81);
        assert_eq!(c[0].0, 1.0);
        assert!((c[0].1 - 0.001).abs() < 1e-9, "{:?}", c[0]);
        // At x = 100 (p99) the latency is near 9.9 ms, and the curve never falls.
        let p99 = c[40];
        assert!(
            (p99.0 - 100.0).abs() < 1e-6 && (p99.1 - 9.9).abs() < 0.02,
            "{p99:?}"
        );
        assert!(c.windows(2).all(|w| w[1].1 >= w[0].1));
    }
}
