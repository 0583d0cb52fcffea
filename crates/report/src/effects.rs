//! Factorial studies: the main effect of each factor and the two-factor interactions, on
//! throughput and p99, with 95% confidence intervals.
//!
//! Each combination of levels is a cell with a mean and a standard error
//! ([`crate::compare::group_estimate`]). An effect is a linear contrast of cell means: the main
//! effect of level `l` of factor F is the mean of the cells with F = l minus the mean of the
//! cells with F at its baseline (first) level, averaged over the other factors; the interaction
//! of F = l and G = m is `m(l,m) − m(l,m0) − m(l0,m) + m(l0,m0)`, averaged likewise. Its standard
//! error follows from the cells' (independent) errors, its degrees of freedom from
//! Welch–Satterthwaite ([`qpslab_stats::contrast`]).

use crate::compare::{group_estimate, LEVEL};
use crate::metrics::Metric;
use crate::model::{FactorDef, Point};
use qpslab_stats::{contrast, Estimate};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One main effect or interaction at one swept setting.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// The swept setting, e.g. `threads=16`.
    pub key: String,
    /// `tps` or `p99`.
    pub metric: String,
    /// `jemalloc=on` for a main effect, `jemalloc=on × thp=never` for an interaction.
    pub term: String,
    /// The effect in the metric's unit.
    pub effect: f64,
    /// The effect as a percent of the baseline cell (all factors at their first level).
    pub effect_pct: f64,
    /// 95% confidence interval of the effect, in the metric's unit (`None`: no uncertainty).
    pub ci_low: Option<f64>,
    /// Upper end.
    pub ci_high: Option<f64>,
    /// Whether the interval excludes zero.
    pub significant: bool,
}

/// Every main effect and two-factor interaction of `factors` over `points`, per swept setting.
pub fn effects(factors: &[FactorDef], points: &[Point<'_>]) -> Vec<Effect> {
    let mut by_key: BTreeMap<String, Vec<Point<'_>>> = BTreeMap::new();
    for p in points {
        by_key.entry(p.key()).or_default().push(*p);
    }
    let mut out = Vec::new();
    for (key, ps) in &by_key {
        for metric in [Metric::Tps, Metric::P99] {
            let cells = cells(factors, ps, metric);
            out.extend(key_effects(factors, &cells, key, metric));
        }
    }
    out
}

type Cells = Vec<(BTreeMap<String, String>, Estimate)>;

fn cells(factors: &[FactorDef], ps: &[Point<'_>], metric: Metric) -> Cells {
    let mut groups: BTreeMap<Vec<String>, Vec<Point<'_>>> = BTreeMap::new();
    for p in ps {
        let levels: Option<Vec<String>> = factors
            .iter()
            .map(|f| p.subject.cell.levels.get(&f.name).cloned())
            .collect();
        if let Some(l) = levels {
            groups.entry(l).or_default().push(*p);
        }
    }
    groups
        .into_iter()
        .filter_map(|(levels, g)| {
            let e = group_estimate(metric, &g)?;
            let map = factors.iter().map(|f| f.name.clone()).zip(levels).collect();
            Some((map, e))
        })
        .collect()
}

fn key_effects(factors: &[FactorDef], cells: &Cells, key: &str, metric: Metric) -> Vec<Effect> {
    let base = cells
        .iter()
        .find(|(l, _)| factors.iter().all(|f| f.levels.first() == l.get(&f.name)))
        .map(|(_, e)| e.mean);
    let Some(base) = base.filter(|b| *b != 0.0) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut push = |term: String, coeffs: Vec<(f64, Estimate)>| {
        if let Some((effect, ci)) = contrast(&coeffs, LEVEL) {
            out.push(Effect {
                key: key.to_string(),
                metric: metric.name().into(),
                term,
                effect,
                effect_pct: 100.0 * effect / base,
                ci_low: ci.map(|c| c.0),
                ci_high: ci.map(|c| c.1),
                significant: ci.is_some_and(|(l, h)| l > 0.0 || h < 0.0),
            });
        }
    };
    for f in factors {
        let Some(l0) = f.levels.first() else { continue };
        for l in &f.levels[1..] {
            let sign = |c: &BTreeMap<String, String>| side(c, &f.name, l, l0);
            push(format!("{}={l}", f.name), weighted(cells, sign, false));
        }
    }
    for (i, f) in factors.iter().enumerate() {
        for g in &factors[i + 1..] {
            let (Some(f0), Some(g0)) = (f.levels.first(), g.levels.first()) else {
                continue;
            };
            for l in &f.levels[1..] {
                for m in &g.levels[1..] {
                    let sign = |c: &BTreeMap<String, String>| {
                        side(c, &f.name, l, f0) * side(c, &g.name, m, g0)
                    };
                    push(
                        format!("{}={l} × {}={m}", f.name, g.name),
                        weighted(cells, sign, true),
                    );
                }
            }
        }
    }
    out
}

/// +1 when the cell has the factor at `level`, −1 at `base`, 0 otherwise.
fn side(c: &BTreeMap<String, String>, factor: &str, level: &str, base: &str) -> f64 {
    match c.get(factor).map(String::as_str) {
        Some(x) if x == level => 1.0,
        Some(x) if x == base => -1.0,
        _ => 0.0,
    }
}

/// Coefficients of a contrast. A main effect compares the mean of the cells with a positive
/// sign with the mean of those with a negative one. An interaction needs every combination of
/// the other factors at all four corners (a balanced design): its coefficients are `±1` per
/// combination, averaged over the combinations; with missing cells it has none.
fn weighted(
    cells: &Cells,
    sign: impl Fn(&BTreeMap<String, String>) -> f64,
    interaction: bool,
) -> Vec<(f64, Estimate)> {
    let pos = cells.iter().filter(|(c, _)| sign(c) > 0.0).count();
    let neg = cells.iter().filter(|(c, _)| sign(c) < 0.0).count();
    if pos == 0 || neg == 0 || (interaction && (pos != neg || pos % 2 != 0)) {
        return Vec::new();
    }
    cells
        .iter()
        .filter(|(c, _)| sign(c) != 0.0)
        .map(|(c, e)| {
            let s = sign(c);
            let w = match (interaction, s > 0.0) {
                (true, _) => s * 2.0 / pos as f64,
                (false, true) => 1.0 / pos as f64,
                (false, false) => -1.0 / neg as f64,
            };
            (w, *e)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(mean: f64) -> Estimate {
        Estimate {
            mean,
            se: 1.0,
            n: 10,
            n_eff: 10.0,
        }
    }

    fn cell(a: &str, b: &str, mean: f64) -> (BTreeMap<String, String>, Estimate) {
        let m = [
            ("a".to_string(), a.to_string()),
            ("b".to_string(), b.to_string()),
        ];
        (m.into_iter().collect(), est(mean))
    }

    #[test]
    fn two_by_two_main_effects_and_interaction() {
        let factors = vec![
            FactorDef {
                name: "a".into(),
                levels: vec!["off".into(), "on".into()],
            },
            FactorDef {
                name: "b".into(),
                levels: vec!["off".into(), "on".into()],
            },
        ];
        // a adds 10, b adds 20, together 50 (interaction +20).
        let cells = vec![
            cell("off", "off", 100.0),
            cell("on", "off", 110.0),
            cell("off", "on", 120.0),
            cell("on", "on", 150.0),
        ];
        let e = key_effects(&factors, &cells, "threads=4", Metric::Tps);
        let get = |t: &str| e.iter().find(|x| x.term == t).unwrap();
        assert_eq!(get("a=on").effect, 20.0); // (10 + 30) / 2
        assert_eq!(get("b=on").effect, 30.0); // (20 + 40) / 2
        let i = get("a=on × b=on");
        assert_eq!(i.effect, 20.0);
        assert!(i.significant && i.ci_low.unwrap() > 0.0, "{i:?}");
        // Each main effect: variance 4 × (0.5)² × 1 = 1, df ≈ 36 → half width ≈ 2.03.
        let a = get("a=on");
        assert!((a.ci_high.unwrap() - a.effect - 2.03).abs() < 0.02, "{a:?}");
        assert_eq!(a.effect_pct, 20.0);
    }

    #[test]
    fn unbalanced_designs_have_no_interaction() {
        let factors = vec![
            FactorDef {
                name: "a".into(),
                levels: vec!["off".into(), "on".into()],
            },
            FactorDef {
                name: "b".into(),
                levels: vec!["off".into(), "on".into()],
            },
        ];
        let cells = vec![
            cell("off", "off", 100.0),
            cell("on", "off", 110.0),
            cell("off", "on", 120.0),
        ];
        let e = key_effects(&factors, &cells, "k", Metric::Tps);
        assert!(e.iter().all(|x| !x.term.contains('×')), "{e:?}");
        // a=on: 110 against the mean of the two cells with a=off.
        assert_eq!(e.iter().find(|x| x.term == "a=on").unwrap().effect, 0.0);
    }
}
