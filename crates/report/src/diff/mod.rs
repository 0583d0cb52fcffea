//! The analysis of a `qpslab diff` measurement: per class, the ratio B/A of the paired rounds
//! with its interval, significance after a Holm correction across the classes, a verdict, the
//! results check, the EXPLAIN differences and the session counters that differ; and its
//! Markdown and HTML reports ([`md`], [`html`]), which open with the regressions.
//!
//! Each round ran the class's sample on both sides back to back (the order alternating), so the
//! rounds pair: the ratio is the geometric mean of the per-round ratios, `exp(mean(ln(tB/tA)))`,
//! with a t interval on the log scale mapped back by `exp` ([`paired`],
//! [`qpslab_stats::ratio_of_log_mean`]), its degrees of
//! freedom from the rounds' effective sample size (bursts of load make neighbours alike). Testing many classes
//! at 95% flags one in twenty by chance; Holm's step-down correction keeps the chance of any
//! false flag at 5% ([`qpslab_stats::holm`]), so an A/A comparison flags nothing.

pub mod explain;
pub mod html;
pub mod md;

use qpslab_core::diff::{
    DiffMeasurement, Pair, ResultsCheck, SideProfile, SkippedClass, TableFacts,
};
use qpslab_core::units::latency_text;
use qpslab_stats::{estimate, holm, nearest_rank, ratio_of_log_mean, t_p_value};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Confidence level of the intervals and family-wise level of the significance tests.
pub const LEVEL: f64 = 0.95;

/// A side's latency over the measured rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Median per-statement latency, µs.
    pub median_us: f64,
    /// 95th percentile, µs.
    pub p95_us: f64,
}

/// How B's latency changed from A's for a class: the comparison's verdict (its `verdict`
/// field and column). Not `qpslab_sqllog::Verdict`, which says how harmful a statement is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// B is slower, significantly and beyond the threshold.
    Regression,
    /// B is faster, significantly and beyond the threshold.
    Improvement,
    /// No significant change beyond the threshold.
    Same,
    /// Not measured (a statement failed).
    Error,
}

impl Change {
    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Regression => "regression",
            Change::Improvement => "improvement",
            Change::Same => "same",
            Change::Error => "error",
        }
    }
}

/// One class compared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassDiff {
    /// The fingerprint.
    pub fingerprint: String,
    /// Statements of the class in the log.
    pub count: u64,
    /// Measured rounds.
    pub rounds: usize,
    /// Side A's latency.
    pub a: Latency,
    /// Side B's latency.
    pub b: Latency,
    /// B/A (none: not measured).
    pub ratio: Option<f64>,
    /// Lower end of its 95% interval.
    pub ci_low: Option<f64>,
    /// Upper end.
    pub ci_high: Option<f64>,
    /// Two-sided p-value of "no change", before the Holm correction.
    pub p_value: Option<f64>,
    /// The change is significant after the Holm correction across the classes.
    pub significant: bool,
    /// The verdict: regression, improvement, same, or error.
    pub verdict: Change,
    /// `count × (B median − A median)`, µs: the time the log would gain or lose.
    pub impact_us: f64,
    /// Both sides returned the same rows.
    pub results_match: bool,
    /// The results check, with the first differing statement.
    pub results: ResultsCheck,
    /// The differences between the two sides' EXPLAIN (`events: partitions: a → b`).
    pub explain: Vec<String>,
    /// Each side's plan.
    pub plans: Pair<Vec<TableFacts>>,
    /// Per-execution session counters that differ, A and B.
    pub counters: BTreeMap<String, Pair<f64>>,
    /// Why the class was not measured.
    pub error: Option<String>,
}

/// A figure of the HTML report (e.g. a flame graph), embedded from a file beside it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Its caption.
    pub title: String,
    /// Its path relative to the report.
    pub path: String,
}

/// The whole comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DiffReport {
    /// How each side was named.
    pub sides: Pair<String>,
    /// Their server versions.
    pub versions: Pair<String>,
    /// Changes smaller than this (percent) are `same`.
    pub threshold_pct: f64,
    /// The classes, by impact (largest loss first).
    pub classes: Vec<ClassDiff>,
    /// Classes not compared.
    pub skipped: Vec<SkippedClass>,
    /// Figures for the HTML report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<Figure>,
    /// Each side's profiling pass (`--profile DIR`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profiles: Vec<SideProfile>,
}

impl DiffReport {
    /// The classes with verdict `v`.
    pub fn with_verdict(&self, v: Change) -> impl Iterator<Item = &ClassDiff> {
        self.classes.iter().filter(move |c| c.verdict == v)
    }
}

/// The ratio of paired rounds with its interval and p-value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    /// `exp(mean(ln(b/a)))`.
    pub ratio: f64,
    /// Lower end of the interval at [`LEVEL`].
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// Two-sided p-value of a ratio of 1.
    pub p: f64,
}

/// The paired ratio of `rounds` (µs on A, on B, in AB/BA pairs as the lab runs them);
/// none with fewer than two usable AB/BA pairs.
///
/// The unit is an AB/BA pair of rounds, one ratio ln(ΣB / ΣA) each: within a pair each side
/// runs once first and once second (the second position runs on caches the first warmed), and
/// the lab opens new connections for every pair, so what is peculiar to one connection (its
/// server thread, the CPU it landed on) stays inside one unit instead of biasing a run of them.
pub fn paired(rounds: &[Pair<u64>]) -> Option<Paired> {
    let logs: Vec<f64> = rounds
        .chunks_exact(2)
        .map(|p| [p[0][0] + p[1][0], p[0][1] + p[1][1]])
        .filter(|r| r[0] > 0 && r[1] > 0)
        .map(|r| (r[1] as f64 / r[0] as f64).ln())
        .collect();
    // Load on the machine comes in bursts longer than a round, so neighbouring rounds are not
    // independent: the autocorrelation-aware estimate shrinks n to its effective size.
    let e = estimate(&logs)?;
    let r = ratio_of_log_mean(&e, LEVEL)?;
    Some(Paired {
        ratio: r.ratio,
        low: r.low,
        high: r.high,
        p: t_p_value(e.mean, e.se, r.df),
    })
}

/// Whether the rounds' interval is within ±`pct` percent of the ratio (on the log scale).
pub fn precise(rounds: &[Pair<u64>], pct: f64) -> bool {
    paired(rounds).is_some_and(|p| (p.high / p.ratio).ln() < (1.0 + pct / 100.0).ln())
}

fn latency(xs: &[u64]) -> Latency {
    Latency {
        median_us: nearest_rank(xs, 0.5),
        p95_us: nearest_rank(xs, 0.95),
    }
}

/// Counters that differ by more than 10% and half a unit per execution.
fn differing(c: &Pair<BTreeMap<String, f64>>) -> BTreeMap<String, Pair<f64>> {
    let names: std::collections::BTreeSet<&String> = c[0].keys().chain(c[1].keys()).collect();
    names
        .into_iter()
        .filter_map(|k| {
            let a = c[0].get(k).copied().unwrap_or(0.0);
            let b = c[1].get(k).copied().unwrap_or(0.0);
            let d = (a - b).abs();
            (d > 0.5 && d > 0.1 * a.abs().max(b.abs())).then(|| (k.clone(), [a, b]))
        })
        .collect()
}

/// Analyzes `m`: verdicts beyond `threshold_pct`, classes sorted by impact.
pub fn analyze(m: &DiffMeasurement, threshold_pct: f64) -> DiffReport {
    let pairs: Vec<Option<Paired>> = m.classes.iter().map(|c| paired(&c.rounds)).collect();
    let tested: Vec<f64> = pairs.iter().flatten().map(|p| p.p).collect();
    let mut significant = holm(&tested, 1.0 - LEVEL).into_iter();
    let t = threshold_pct / 100.0;
    let mut classes: Vec<ClassDiff> = m
        .classes
        .iter()
        .zip(&pairs)
        .map(|(c, p)| {
            let sig = p.is_some() && significant.next().unwrap_or(false);
            let verdict = match (p, &c.error) {
                (_, Some(_)) | (None, _) => Change::Error,
                (Some(p), _) if sig && p.ratio >= 1.0 + t => Change::Regression,
                (Some(p), _) if sig && p.ratio <= 1.0 - t => Change::Improvement,
                _ => Change::Same,
            };
            let (a, b) = (latency(&c.latencies_us[0]), latency(&c.latencies_us[1]));
            ClassDiff {
                fingerprint: c.fingerprint.clone(),
                count: c.count,
                rounds: c.rounds.len(),
                a,
                b,
                ratio: p.map(|p| p.ratio),
                ci_low: p.map(|p| p.low),
                ci_high: p.map(|p| p.high),
                p_value: p.map(|p| p.p),
                significant: sig,
                verdict,
                impact_us: c.count as f64 * (b.median_us - a.median_us),
                results_match: c.error.is_none() && c.results.matched,
                results: c.results.clone(),
                explain: explain::differences(&c.explain),
                plans: c.explain.clone(),
                counters: differing(&c.counters),
                error: c.error.clone(),
            }
        })
        .collect();
    classes.sort_by(|x, y| {
        (x.verdict == Change::Error)
            .cmp(&(y.verdict == Change::Error))
            .then(y.impact_us.total_cmp(&x.impact_us))
    });
    DiffReport {
        sides: m.sides.clone(),
        versions: m.versions.clone(),
        threshold_pct,
        classes,
        skipped: m.skipped.clone(),
        figures: Vec::new(),
        profiles: Vec::new(),
    }
}

/// What the report compared and how it judges, in one sentence.
pub fn scope_line(r: &DiffReport) -> String {
    format!(
        "{} class(es) compared; verdicts beyond ±{}% with 95% intervals, Holm-corrected across the classes",
        r.classes.len(),
        r.threshold_pct
    )
}

/// Thread classes shown per side in a report's profile section.
pub const PROFILE_CLASSES: usize = 8;

/// How a side's profiling pass went, in one line: `A (sb1): 10.0 s, 41,230 statements,
/// 4,812 samples of cpu-clock (why)`.
pub fn profile_line(name: &str, p: &SideProfile) -> String {
    format!(
        "{name} ({}): {:.1} s, {} statements, {} samples of {}",
        p.side, p.seconds, p.statements, p.files.samples, p.files.event_reason
    )
}

/// `12.3%`-style change of a ratio, signed.
pub fn pct(ratio: f64) -> String {
    format!("{:+.1}%", (ratio - 1.0) * 100.0)
}

/// `1.234 [1.200, 1.270]`, or `-` when not measured.
pub fn ratio_text(c: &ClassDiff) -> String {
    match (c.ratio, c.ci_low, c.ci_high) {
        (Some(r), Some(l), Some(h)) => format!("{r:.3} [{l:.3}, {h:.3}]"),
        _ => "-".into(),
    }
}

/// A class's A median, B median, A p95 and B p95 as text (`-` when not measured).
pub fn latency_cells(c: &ClassDiff) -> [String; 4] {
    let v = [c.a.median_us, c.b.median_us, c.a.p95_us, c.b.p95_us];
    v.map(|us| match c.verdict {
        Change::Error => "-".to_string(),
        _ => latency_text(us),
    })
}

/// `✓`, `✗`, or `-` for a class not measured.
pub fn results_mark(c: &ClassDiff) -> &'static str {
    match (&c.error, c.results_match) {
        (Some(_), _) => "-",
        (None, true) => "✓",
        (None, false) => "✗",
    }
}

/// The sentence under a class's heading: ratio, rounds, impact, results.
pub fn summary_line(c: &ClassDiff) -> String {
    if let Some(e) = &c.error {
        return format!("not measured: {e}");
    }
    let change = c.ratio.map(pct).unwrap_or_default();
    let sig = if c.significant {
        "significant"
    } else {
        "not significant"
    };
    let results = if c.results_match {
        "same results on both sides".to_string()
    } else {
        let (stmt, sides) = (
            c.results.first_mismatch.as_deref().unwrap_or("?"),
            c.results
                .sides
                .as_ref()
                .map(|s| format!("A: {}; B: {}", s[0], s[1])),
        );
        format!(
            "results differ for `{stmt}` ({})",
            sides.unwrap_or_default()
        )
    };
    format!(
        "B/A {} ({change}, {sig}) over {} rounds; impact {} over the log's {} statements; {results}",
        ratio_text(c),
        c.rounds,
        latency_text(c.impact_us),
        c.count
    )
}

/// The first `n` characters of `s`, with `…` when cut.
pub fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paired_ratio_is_the_geometric_mean_of_pair_ratios() {
        let rounds = [
            [100, 200],
            [100, 210],
            [100, 190],
            [100, 205],
            [100, 195],
            [100, 200],
            [100, 198],
            [100, 202],
            [100, 201],
            [100, 199],
        ];
        let p = paired(&rounds).unwrap();
        assert!((p.ratio - 2.0).abs() < 0.01, "{p:?}");
        assert!(p.low < p.ratio && p.ratio < p.high && p.low > 1.8 && p.high < 2.2);
        assert!(p.p < 1e-4, "{p:?}");
        assert!(precise(&rounds, 10.0) && !precise(&rounds, 0.5));
        assert!(paired(&[[100, 200], [100, 200], [100, 400]]).is_none_or(|p| p.ratio == 2.0));
        assert!(paired(&[[100, 200]]).is_none());
        // A pair is one unit: its rounds are summed (each side first once), then compared.
        let one = paired(&[[100, 300], [300, 100], [100, 200], [200, 100]]).unwrap();
        assert!((one.ratio - 1.0).abs() < 1e-9, "{one:?}");
    }
}
