//! Latency figures, defined once: every percentile and the maximum of a phase come from its
//! merged HDR histogram (microseconds), through [`summarize`] when the engine closes the phase
//! and through [`PhaseResult::percentile_ms`] when a reader asks later, so the live summary,
//! `show`, the exports, reports and comparisons print one value for one fact.
//!
//! A percentile the phase's summary holds is read from it; any other is computed from the
//! stored `event` histogram with the same quantile rule, never from per-interval figures (a
//! mean of interval percentiles is a different statistic, and is named so where it is shown).
//!
//! ```
//! use qpslab_core::latency::{summarize, new_histogram};
//! let mut h = new_histogram();
//! for us in 1..=1000 {
//!     h.record(us).unwrap();
//! }
//! let s = summarize(&h, &[50.0, 99.0]);
//! assert_eq!(s.percentile(50.0), Some(0.5));
//! assert_eq!(s.max_ms, 1.0);
//! ```

use crate::result::{HistogramBlob, LatencySummary, Percentile, PhaseResult};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

/// Highest latency a histogram holds: one hour in microseconds.
pub const MAX_US: u64 = 3_600_000_000;

/// An empty latency histogram with the project's bounds (1 µs to one hour, 3 significant
/// digits).
pub fn new_histogram() -> Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts (low >= 1, high >= 2 * low, sigfig <= 5).
    Histogram::new_with_bounds(1, MAX_US, 3).expect("constant histogram bounds are valid")
}

/// Percentile `p` (0 to 100) of a microsecond histogram, in milliseconds: the quantile rule
/// every figure of the project uses.
pub fn quantile_ms(h: &Histogram<u64>, p: f64) -> f64 {
    h.value_at_quantile((p / 100.0).clamp(0.0, 1.0)) as f64 / 1e3
}

/// Summarizes a microsecond histogram in milliseconds with the requested percentiles.
pub fn summarize(h: &Histogram<u64>, percentiles: &[f64]) -> LatencySummary {
    if h.is_empty() {
        return LatencySummary {
            percentiles: percentiles
                .iter()
                .map(|&p| Percentile { p, ms: 0.0 })
                .collect(),
            ..LatencySummary::default()
        };
    }
    LatencySummary {
        count: h.len(),
        min_ms: h.min() as f64 / 1e3,
        avg_ms: h.mean() / 1e3,
        max_ms: h.max() as f64 / 1e3,
        percentiles: percentiles
            .iter()
            .map(|&p| Percentile {
                p,
                ms: quantile_ms(h, p),
            })
            .collect(),
    }
}

impl LatencySummary {
    /// Percentile `p` as the summary holds it, if it does.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|x| (x.p - p).abs() < 1e-9)
            .map(|x| x.ms)
    }
}

/// The cookie that opens an uncompressed V2 histogram, the form the engine writes.
const V2_COOKIE: u32 = 0x1c84_9313;
/// A V2 header: cookie, payload length, normalizing offset, significant digits (4 bytes
/// each), lowest and highest trackable values and the integer-to-double ratio (8 each).
const V2_HEADER: usize = 40;

impl HistogramBlob {
    /// The histogram this blob holds (none: not an uncompressed V2 histogram, or one whose
    /// header claims more payload than the blob holds). The payload length is checked before
    /// the decoder sees it: it sizes a buffer from it, so a damaged or hostile blob claiming
    /// 4 GB would otherwise be allocated, not refused.
    pub fn histogram(&self) -> Option<Histogram<u64>> {
        let word = |at: usize| {
            let b = self.v2.get(at..at + 4)?;
            Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        };
        let payload = usize::try_from(word(4)?).ok()?;
        if word(0)? != V2_COOKIE || payload > self.v2.len().saturating_sub(V2_HEADER) {
            return None;
        }
        Deserializer::new()
            .deserialize(&mut self.v2.as_slice())
            .ok()
    }
}

impl PhaseResult {
    /// The phase's merged histogram of whole events, when it was stored (an interrupted phase
    /// has none).
    pub fn event_histogram(&self) -> Option<Histogram<u64>> {
        self.histograms
            .iter()
            .find(|h| h.name == "event")?
            .histogram()
    }

    /// Event latency percentile `p`, in ms: the summary's value when the phase summarized it,
    /// else computed from its stored event histogram; none when neither has it (an interrupted
    /// phase, whose intervals cannot give a percentile).
    pub fn percentile_ms(&self, p: f64) -> Option<f64> {
        if let Some(ms) = self.latency.percentile(p) {
            return Some(ms);
        }
        let h = self.event_histogram()?;
        (!h.is_empty()).then(|| quantile_ms(&h, p))
    }

    /// The largest event latency, in ms, counting events still waiting when the phase ended
    /// (none: no event completed and none was waiting).
    pub fn max_ms(&self) -> Option<f64> {
        (self.events > 0 || self.latency.count > 0 || self.latency.max_ms > 0.0)
            .then_some(self.latency.max_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::{Serializer, V2Serializer};

    fn phase(percentiles: &[f64]) -> PhaseResult {
        let mut h = new_histogram();
        for us in 1..=1000u64 {
            h.record(us * 10).unwrap();
        }
        let mut v2 = Vec::new();
        V2Serializer::new().serialize(&h, &mut v2).unwrap();
        PhaseResult {
            events: 1000,
            latency: summarize(&h, percentiles),
            histograms: vec![HistogramBlob {
                name: "event".into(),
                v2,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn a_percentile_not_summarized_comes_from_the_histogram_with_the_same_rule() {
        let asked = phase(&[50.0, 95.0, 99.0]);
        let only_tail = phase(&[99.0]);
        for p in [50.0, 95.0, 99.0] {
            assert_eq!(only_tail.percentile_ms(p), asked.percentile_ms(p), "p{p}");
        }
        assert!((asked.percentile_ms(50.0).unwrap() - 5.0).abs() < 0.01);
        assert!((asked.max_ms().unwrap() - 10.0).abs() < 0.01);
        // No histogram and no summarized percentile (an interrupted phase): nothing.
        let mut cut = only_tail;
        cut.histograms.clear();
        assert_eq!(cut.percentile_ms(50.0), None);
        assert_eq!(cut.percentile_ms(99.0), asked.percentile_ms(99.0));
        assert_eq!(PhaseResult::default().max_ms(), None);
    }

    #[test]
    fn a_blob_claiming_more_payload_than_it_holds_is_refused_before_decoding() {
        let good = phase(&[]).histograms.remove(0);
        assert!(good.histogram().is_some());
        // 4 GB claimed: the decoder would size its buffer from this and abort.
        let mut claims = good.clone();
        claims.v2[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(claims.histogram().is_none());
        let mut short = good.clone();
        short.v2.truncate(V2_HEADER - 1);
        assert!(short.histogram().is_none());
        let mut cookie = good;
        cookie.v2[3] ^= 1;
        assert!(cookie.histogram().is_none());
    }
}
