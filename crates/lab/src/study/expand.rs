//! From a spec to its cells, in execution order.
//!
//! Setups: each `[[variant]]` (or one stock sandbox named `default`), times the full
//! factorial of `[factors]` levels. Points: the cross product of the `[sweep]` lists. Cells:
//! setups × points × repeats.
//!
//! Order: repeat rounds; in each round, by default, each point's setups run back to back (A1
//! B1, B2 A2, A3 B3), alternating from point to point and across rounds ([`round_cells`]). A
//! comparison pairs A and B of one point in one round, and run seconds apart they share the
//! machine's state: on a 2-core VM the round-to-round spread of `ln(B/A)` was several times
//! smaller so than with each setup's points in one block (bench/RESULTS.md). A sandbox restarts
//! when the setup changes, so a round costs (setups − 1) restarts per point; the serpentine
//! starts each point with the server just measured. `order = "setups"` runs each setup's
//! points in one block instead (A1 A2 A3, B3... as before: one restart per setup and round), and
//! is the order of setups whose `storage` must be mounted for them.

use crate::error::SpecError;
use crate::options::RunOptions;
use crate::study::spec::{Levels, Setup, Spec};
use crate::study::stop::CellOrder;
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

/// The (setup, point) pairs of round `round` (from 0) of `setups` setups over `points`
/// points, in the order they run.
///
/// [`CellOrder::Points`]: each point's setups back to back, their order alternating from one
/// point to the next and, at each point, from one round to the next (A B, B A, A B | B A, A B,
/// B A), so the server just measured is the first of the next point, a point's setups run
/// seconds apart, and at each point every side is in turn the one that follows a restart. (The
/// one that keeps its server from the point before ran about 5% faster in an A/A study where
/// it was always the same side.)
/// [`CellOrder::Setups`]: each setup's points back to back, the setups alternating by round.
///
/// ```
/// use qpslab_lab::study::expand::round_cells;
/// use qpslab_lab::study::stop::CellOrder;
/// assert_eq!(round_cells(CellOrder::Points, 0, 2, 2), [(0, 0), (1, 0), (1, 1), (0, 1)]);
/// assert_eq!(round_cells(CellOrder::Points, 1, 2, 2), [(1, 0), (0, 0), (0, 1), (1, 1)]);
/// assert_eq!(round_cells(CellOrder::Points, 1, 2, 3), [(1, 0), (0, 0), (0, 1), (1, 1), (1, 2), (0, 2)]);
/// assert_eq!(round_cells(CellOrder::Setups, 1, 2, 2), [(1, 0), (1, 1), (0, 0), (0, 1)]);
/// ```
pub fn round_cells(
    order: CellOrder,
    round: usize,
    setups: usize,
    points: usize,
) -> Vec<(usize, usize)> {
    match order {
        CellOrder::Points => (0..points)
            .flat_map(|pi| {
                round_order(round + pi, setups)
                    .into_iter()
                    .map(move |si| (si, pi))
            })
            .collect(),
        CellOrder::Setups => round_order(round, setups)
            .into_iter()
            .flat_map(|si| (0..points).map(move |pi| (si, pi)))
            .collect(),
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
    let mut cells = Vec::new();
    for round in 1..=spec.rounds() {
        for (si, pi) in round_cells(spec.order(), round as usize - 1, setups.len(), points.len()) {
            let point = &points[pi];
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
    fn each_points_setups_run_back_to_back_in_a_serpentine() {
        let l = labels(
            "name = \"s\"\n[defaults]\nrepeats = 2\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n[sweep]\nthreads = [1, 4]\n",
        );
        assert_eq!(
            l,
            [
                "a/threads=1/r1",
                "b/threads=1/r1",
                "b/threads=4/r1",
                "a/threads=4/r1",
                "b/threads=1/r2",
                "a/threads=1/r2",
                "a/threads=4/r2",
                "b/threads=4/r2",
            ]
        );
        // At each point the side that follows a restart alternates from round to round (with
        // an even number of points, a fixed serpentine would always restart the same side).
        for points in [1, 2, 3, 4] {
            for pi in 0..points {
                let first = |r| round_cells(CellOrder::Points, r, 2, points)[2 * pi].0;
                assert_ne!(first(0), first(1), "{points} points, point {pi}");
                assert_eq!(first(0), first(2), "{points} points, point {pi}");
            }
        }
        // Three setups over three points: each point starts with the server just measured.
        let cells = round_cells(CellOrder::Points, 0, 3, 3);
        assert_eq!(
            cells,
            [
                (0, 0),
                (1, 0),
                (2, 0),
                (2, 1),
                (1, 1),
                (0, 1),
                (0, 2),
                (1, 2),
                (2, 2)
            ]
        );
        let next = round_cells(CellOrder::Points, 1, 3, 3);
        assert_eq!(next[0].0, cells[8].0);
        // Every (setup, point) once a round.
        let mut seen = round_cells(CellOrder::Points, 5, 4, 3);
        seen.sort_unstable();
        assert_eq!(seen.len(), 12);
        seen.dedup();
        assert_eq!(seen.len(), 12);
    }

    #[test]
    fn order_setups_runs_each_setups_points_in_one_block() {
        let l = labels(
            "name = \"s\"\norder = \"setups\"\n[defaults]\nrepeats = 2\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n[sweep]\nthreads = [1, 4]\n",
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
    fn storage_setups_keep_their_blocks_and_an_unknown_order_is_refused() {
        let s = parse(
            "t",
            "name = \"s\"\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nstorage = { fs = \"ext4\", size = \"4G\" }\n",
        )
        .unwrap();
        assert_eq!(s.order(), CellOrder::Setups);
        let plain = parse("t", "name = \"s\"\n[[variant]]\nname = \"a\"\n").unwrap();
        assert_eq!(plain.order(), CellOrder::Points);
        let e = parse("t", "name = \"s\"\norder = \"random\"\n").unwrap_err();
        assert!(e.to_string().contains("order"), "{e}");
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
