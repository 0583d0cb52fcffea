//! From a spec to its cells, in execution order.
//!
//! Setups: each `[[variant]]` (or one stock sandbox named `default`), times the full
//! factorial of `[factors]` levels. Points: the cross product of the `[sweep]` lists. Cells:
//! setups × points × repeats.
//!
//! Order: repeat rounds, and in each round every setup runs all its points back to back; the
//! setups go forward in odd rounds and backward in even ones (A B C, C B A, A B C...).
//! Trade-off: a sandbox restarts only when the setup changes, so one round costs one restart
//! per setup (the reversed rounds even save one at each turn), and machine drift over the
//! study is spread across setups (each repeat of A sits next to a repeat of B, and the
//! serpentine cancels a linear drift over pairs of rounds). Drift *within* one setup's block
//! of points is not spread; interleaving single cells (A1 B1 A2 B2) would spread it too, at
//! one restart per cell, which on a laptop costs more time than the cells themselves.

use crate::error::SpecError;
use crate::options::RunOptions;
use crate::study::spec::{Levels, Setup, Spec};
use qpslab_core::cell::Cell;
use std::collections::BTreeMap;

/// The order in which `n` sides (setups, variants) run in round `round`, counted from 0:
/// forward in even rounds, backward in odd ones (A B C, C B A, A B C...), so each side runs
/// as often early as late and a linear drift cancels over each pair of rounds.
///
/// The one home of the A/B alternation: a study's setups in each repeat round; `diff`'s two
/// sides (each pair of rounds AB,BA then BA,AB); a tuning confirmation's baseline and tuned
/// settings (pair `i` in `round_order(i, 2)`).
///
/// ```
/// use qpslab_lab::study::expand::round_order;
/// assert_eq!(round_order(0, 3), [0, 1, 2]);
/// assert_eq!(round_order(1, 3), [2, 1, 0]);
/// assert_eq!(round_order(2, 2), [0, 1]);
/// ```
pub fn round_order(round: usize, n: usize) -> Vec<usize> {
    if round.is_multiple_of(2) {
        (0..n).collect()
    } else {
        (0..n).rev().collect()
    }
}

/// One setup of the study: a variant, possibly with factor levels applied.
#[derive(Clone, Debug, PartialEq)]
pub struct SetupCell {
    /// Its name: the variant's, `+`-joined levels for a factorial (prefixed by the variant
    /// when there are several variants).
    pub name: String,
    /// The merged setup.
    pub setup: Setup,
    /// The factor levels (empty unless factorial).
    pub levels: Levels,
}

/// One cell of the study, with what running it needs beyond the cell itself.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedCell {
    /// The cell as stored and reported: order, label, variant (its setup's name), levels,
    /// swept settings, repeat.
    pub cell: Cell,
    /// Index into [`Expanded::setups`].
    pub setup: usize,
    /// The cell's run options (defaults overlaid with its point).
    pub options: RunOptions,
}

/// A spec expanded.
#[derive(Clone, Debug, PartialEq)]
pub struct Expanded {
    /// Setups in spec order.
    pub setups: Vec<SetupCell>,
    /// Cells in execution order.
    pub cells: Vec<PlannedCell>,
}

/// The most cells a study may have: at a few seconds each, more is a typo, and expanding
/// a runaway product (`repeats = 4294967295`, thirty two-level factors) would exhaust memory.
pub const MAX_CELLS: usize = 100_000;

/// The number of cells `spec` expands to (saturating), counted before expanding anything.
fn cell_count(spec: &Spec) -> u128 {
    let variants = spec.variant.len().max(1) as u128;
    let levels = spec.factors.values().map(|l| l.len() as u128);
    let points = spec.sweep.axes().into_iter().map(|(_, v)| v.len() as u128);
    levels
        .chain(points)
        .fold(variants, u128::saturating_mul)
        .saturating_mul(spec.rounds() as u128)
}

/// Expands `spec`; `file` names it in errors.
pub fn expand(file: &str, spec: &Spec) -> Result<Expanded, SpecError> {
    let empty = |why: String| SpecError::Empty {
        file: file.into(),
        why,
    };
    let count = cell_count(spec);
    if count > MAX_CELLS as u128 {
        return Err(SpecError::Value {
            file: file.into(),
            message: format!(
                "the study expands to {count} cells, more than {MAX_CELLS}: use fewer \
                 variants, factor levels, swept values or repeats"
            ),
        });
    }
    let setups = setups(spec);
    if let Some((f, _)) = spec.factors.iter().find(|(_, l)| l.is_empty()) {
        return Err(empty(format!("factor '{f}' has no levels")));
    }
    let axes = spec.sweep.axes();
    if let Some((name, _)) = axes.iter().find(|(_, v)| v.is_empty()) {
        return Err(empty(format!("[sweep] {name} is an empty list")));
    }
    // The cross product of the sweep, first axis slowest.
    let mut points: Vec<BTreeMap<String, serde_json::Value>> = vec![BTreeMap::new()];
    for (name, values) in &axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.insert(name.to_string(), v.clone());
                    q
                })
            })
            .collect();
    }
    let repeats = spec.rounds();
    let mut cells = Vec::new();
    for round in 1..=repeats {
        for si in round_order(round as usize - 1, setups.len()) {
            for point in &points {
                let mut options = spec.defaults.clone();
                for (k, v) in point {
                    options.set(k, v.clone()).map_err(|e| SpecError::Value {
                        file: file.into(),
                        message: format!("[sweep] {e}"),
                    })?;
                }
                let mut label = setups[si].name.clone();
                // Labels follow the sweep's axis order, not the map's.
                for (name, _) in &axes {
                    label.push_str(&format!("/{name}={}", show(&point[*name])));
                }
                label.push_str(&format!("/r{round}"));
                cells.push(PlannedCell {
                    cell: Cell {
                        seq: cells.len() as u32 + 1,
                        label,
                        variant: setups[si].name.clone(),
                        levels: setups[si].levels.clone(),
                        params: point.clone(),
                        repeat: round,
                    },
                    setup: si,
                    options,
                });
            }
        }
    }
    Ok(Expanded { setups, cells })
}

fn show(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn setups(spec: &Spec) -> Vec<SetupCell> {
    let bases: Vec<(String, Setup)> = if spec.variant.is_empty() {
        vec![("default".into(), Setup::default())]
    } else {
        spec.variant
            .iter()
            .map(|v| (v.name.clone().unwrap_or_default(), v.clone()))
            .collect()
    };
    let mut combos: Vec<(Vec<String>, Levels, Setup)> =
        vec![(Vec::new(), Levels::new(), Setup::default())];
    for (factor, levels) in &spec.factors {
        combos = combos
            .into_iter()
            .flat_map(|(names, lv, s)| {
                levels.iter().map(move |(level, setup)| {
                    let mut names = names.clone();
                    names.push(level.clone());
                    let mut lv = lv.clone();
                    lv.insert(factor.clone(), level.clone());
                    (names, lv, s.with(setup))
                })
            })
            .collect();
    }
    let several = bases.len() > 1;
    let factorial = !spec.factors.is_empty();
    let mut out = Vec::new();
    for (base, setup) in &bases {
        for (names, levels, partial) in &combos {
            let name = match (factorial, several) {
                (false, _) => base.clone(),
                (true, false) => names.join("+"),
                (true, true) => format!("{base}:{}", names.join("+")),
            };
            out.push(SetupCell {
                name,
                setup: setup.with(partial),
                levels: levels.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::spec::parse;

    fn labels(text: &str) -> Vec<String> {
        let s = parse("t", text).unwrap();
        expand("t", &s)
            .unwrap()
            .cells
            .into_iter()
            .map(|c| c.cell.label)
            .collect()
    }

    #[test]
    fn rounds_alternate_direction() {
        assert_eq!(round_order(0, 3), [0, 1, 2]);
        assert_eq!(round_order(1, 3), [2, 1, 0]);
        assert_eq!(round_order(4, 1), [0]);
        assert!(round_order(1, 0).is_empty());
        // diff's pairs: AB,BA then BA,AB.
        let diff: Vec<Vec<usize>> = (0..8).map(|r| round_order(r / 2 + r % 2, 2)).collect();
        let (ab, ba) = (vec![0, 1], vec![1, 0]);
        let want = [&ab, &ba, &ba, &ab, &ab, &ba, &ba, &ab];
        assert_eq!(diff.iter().collect::<Vec<_>>(), want);
    }

    #[test]
    fn variants_sweep_and_repeats_interleave_in_a_serpentine() {
        let l = labels(
            "name = \"s\"\n[defaults]\nrepeats = 2\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n[sweep]\nthreads = [1, 4]\n",
        );
        assert_eq!(
            l,
            [
                "a/threads=1/r1",
                "a/threads=4/r1",
                "b/threads=1/r1",
                "b/threads=4/r1",
                "b/threads=1/r2",
                "b/threads=4/r2",
                "a/threads=1/r2",
                "a/threads=4/r2",
            ]
        );
    }

    #[test]
    fn factorial_is_full_and_named_by_levels() {
        let s = parse(
            "t",
            "name = \"f\"\n[factors.config]\nstock = {}\ntuned = { set = { x = 1 } }\n[factors.malloc]\nsystem = {}\njemalloc = { malloc = \"jemalloc\" }\n[factors.thp]\nmadvise = { os = { thp = \"madvise\" } }\nnever = { os = { thp = \"never\" } }\n[sweep]\nthreads = [2]\n",
        )
        .unwrap();
        let e = expand("t", &s).unwrap();
        assert_eq!(e.setups.len(), 8);
        assert_eq!(e.cells.len(), 8);
        assert_eq!(e.setups[0].name, "stock+system+madvise");
        assert_eq!(e.setups[7].name, "tuned+jemalloc+never");
        assert_eq!(e.setups[7].levels["malloc"], "jemalloc");
        let last = &e.cells[7].cell;
        assert_eq!(
            (last.variant.as_str(), last.repeat),
            ("tuned+jemalloc+never", 1)
        );
        assert_eq!(last.levels, e.setups[7].levels);
        assert_eq!(e.setups[7].setup.os.thp.as_deref(), Some("never"));
        assert_eq!(e.setups[7].setup.set["x"].render(), "1");
        assert!(e.setups[0].setup.set.is_empty());
        let names: std::collections::HashSet<_> = e.setups.iter().map(|s| &s.name).collect();
        assert_eq!(names.len(), 8);
    }

    #[test]
    fn sweep_is_a_cross_product_and_cells_get_their_options() {
        let s = parse(
            "t",
            "name = \"x\"\n[defaults]\nduration = \"2s\"\n[sweep]\nworkload = [\"oltp_read_only\", \"oltp_write_only\"]\nthreads = [1, 2, 4]\n",
        )
        .unwrap();
        let e = expand("t", &s).unwrap();
        assert_eq!(e.cells.len(), 6);
        assert_eq!(
            e.cells[0].cell.label,
            "default/workload=oltp_read_only/threads=1/r1"
        );
        assert_eq!(
            e.cells[5].options.get("threads"),
            Some(&serde_json::json!(4))
        );
        let plan = e.cells[5].options.to_plan().unwrap();
        assert_eq!(plan.threads, vec![4]);
        assert_eq!(plan.workload.kind.name(), "oltp_write_only");
        assert_eq!(e.cells[5].cell.params["threads"], 4);
    }

    #[test]
    fn empty_lists_are_refused() {
        let s = parse("t", "name = \"x\"\n[sweep]\nthreads = []\n").unwrap();
        let e = expand("t", &s).unwrap_err();
        assert!(
            e.to_string().contains("no cells") && e.to_string().contains("threads"),
            "{e}"
        );
        let s = parse("t", "name = \"x\"\n[factors.a]\n").unwrap();
        assert!(expand("t", &s).is_err());
    }
}
