//! What a study's budget knows of the time its cells take, and the rule that holds it: a cell
//! starts only if the time cells like it took so far fits in what is left of the budget, so a
//! study ends within its budget and at worst one cell's misjudged length past it.
//!
//! A cell's time is its whole wall time: the server it starts when the setup changes (the
//! previous one stopped, the new one initialised and started), the dataset it prepares and
//! the settling, warm-up and measurement; not just the phase. Cells differ mostly by what
//! they start, so their times are kept by [`CellKind`]: the first cell of a setup in this run
//! (a fresh sandbox, a dataset to load) is slower than one after a setup change (a restart)
//! and that slower than one on the server already up. A kind not measured yet is judged by
//! the slower kinds, never by a faster one, so the budget errs toward ending early.

/// What a cell starts before it measures, which is most of what makes cells differ in length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CellKind {
    /// The first cell of its setup in this run: a new server (or mount), its dataset checked or
    /// loaded.
    FirstOfSetup,
    /// The setup changed since the last cell: its server stopped, this setup's started again.
    SetupChange,
    /// The same setup as the last cell: its server is up.
    SameSetup,
}

impl CellKind {
    /// The kinds whose times stand in for this one's, in order: its own, then slower ones.
    fn judged_by(self) -> &'static [CellKind] {
        use CellKind::*;
        match self {
            FirstOfSetup => &[FirstOfSetup],
            SetupChange => &[SetupChange, FirstOfSetup],
            SameSetup => &[SameSetup, SetupChange, FirstOfSetup],
        }
    }
}

/// The seconds the cells took so far, by kind (`None`: measured before a resume, kind unknown),
/// and the longest a server took to stop.
#[derive(Clone, Debug, Default)]
pub(super) struct Pace {
    cells: Vec<(Option<CellKind>, f64)>,
    stop_s: f64,
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (n, sum) = v.fold((0usize, 0.0), |(n, s), x| (n + 1, s + x));
    (n > 0).then(|| sum / n as f64)
}

impl Pace {
    /// A cell of `kind` took `seconds`.
    pub(super) fn record(&mut self, kind: Option<CellKind>, seconds: f64) {
        self.cells.push((kind, seconds));
    }

    /// Stopping a server took `seconds`: the study's end pays for one stop.
    pub(super) fn record_stop(&mut self, seconds: f64) {
        self.stop_s = self.stop_s.max(seconds);
    }

    /// The longest a server took to stop so far (0 before any stopped).
    pub(super) fn stop_s(&self) -> f64 {
        self.stop_s
    }

    /// Seconds one cell took on average, whatever its kind.
    pub(super) fn mean_s(&self) -> Option<f64> {
        mean(self.cells.iter().map(|(_, s)| *s))
    }

    /// Seconds a cell of `kind` is expected to take: the mean of its kind, else of the first
    /// slower kind measured, else of every cell; `None` before any cell was timed.
    pub(super) fn expected_s(&self, kind: CellKind) -> Option<f64> {
        kind.judged_by()
            .iter()
            .find_map(|k| mean(self.cells.iter().filter(|c| c.0 == Some(*k)).map(|c| c.1)))
            .or_else(|| self.mean_s())
    }

    /// Seconds a cell of a later round is expected to take: the mean of the cells that were
    /// not the first of their setup (those do not come again), else of every cell.
    pub(super) fn round_cell_s(&self) -> Option<f64> {
        let again = self
            .cells
            .iter()
            .filter(|(k, _)| matches!(k, Some(CellKind::SetupChange) | Some(CellKind::SameSetup)));
        mean(again.map(|c| c.1)).or_else(|| self.mean_s())
    }
}

/// Why the budget let no more cells start, as the study stores and prints it.
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetEnd {
    /// The budget, seconds.
    pub budget_s: f64,
    /// Wall time spent when it ended the study, seconds.
    pub used_s: f64,
    /// What the next cell (or round) was expected to take, seconds, with the last server's
    /// stop.
    pub next_s: f64,
}

impl BudgetEnd {
    /// `the budget ended the study: 4m48s of 5m00s used, the next cell needs ~21s`.
    pub fn describe(&self) -> String {
        use qpslab_core::units::duration_text as d;
        format!(
            "the budget ended the study: {} of {} used, the next cell needs ~{} ({} left)",
            d(self.used_s),
            d(self.budget_s),
            d(self.next_s),
            d((self.budget_s - self.used_s).max(0.0))
        )
    }

    /// The study environment's record of it (`env.budget`).
    pub fn record(&self) -> serde_json::Value {
        serde_json::json!({
            "ended_study": true,
            "budget_s": self.budget_s,
            "used_s": self.used_s,
            "next_cell_s": self.next_s,
            "reason": self.describe(),
        })
    }
}

/// Whether a cell expected to take `expected_s` (`None`: nothing timed yet) may start with
/// `used_s` of `budget_s` spent, leaving `stop_s` for stopping the server at the end; `Err`
/// says why not. With nothing timed the first cell starts while any budget is left: there is
/// nothing to judge it by.
pub(super) fn may_start(
    budget_s: f64,
    used_s: f64,
    expected_s: Option<f64>,
    stop_s: f64,
) -> Result<(), BudgetEnd> {
    let next_s = expected_s.unwrap_or(0.0) + stop_s;
    let fits = match expected_s {
        Some(_) => used_s + next_s <= budget_s,
        None => used_s < budget_s,
    };
    if fits {
        Ok(())
    } else {
        Err(BudgetEnd {
            budget_s,
            used_s,
            next_s,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::CellKind::*;
    use super::*;

    #[test]
    fn a_cell_starts_only_if_its_kind_fits_in_what_is_left() {
        let mut p = Pace::default();
        // Nothing timed: the first cell starts while any budget is left.
        assert!(may_start(40.0, 0.5, p.expected_s(FirstOfSetup), 0.0).is_ok());
        assert!(may_start(40.0, 40.0, p.expected_s(FirstOfSetup), 0.0).is_err());
        p.record(Some(FirstOfSetup), 12.0);
        p.record(Some(SameSetup), 5.0);
        p.record_stop(1.5);
        // A cell on the server already up needs 5 s and the stop 1.5 s.
        assert!(may_start(40.0, 33.5, p.expected_s(SameSetup), p.stop_s()).is_ok());
        let end = may_start(40.0, 34.0, p.expected_s(SameSetup), p.stop_s()).unwrap_err();
        assert_eq!(end.next_s, 6.5);
        // A setup change, not measured yet, is judged by the first start, the slower kind.
        assert_eq!(p.expected_s(SetupChange), Some(12.0));
        assert!(may_start(40.0, 30.0, p.expected_s(SetupChange), p.stop_s()).is_err());
        p.record(Some(SetupChange), 8.0);
        assert_eq!(p.expected_s(SetupChange), Some(8.0));
        assert!(may_start(40.0, 30.0, p.expected_s(SetupChange), p.stop_s()).is_ok());
    }

    #[test]
    fn a_kind_never_measured_is_judged_by_slower_ones_or_every_cell() {
        let mut p = Pace::default();
        assert_eq!(p.expected_s(SameSetup), None);
        // Cells of a resumed study have no kind: they stand for every kind.
        p.record(None, 9.0);
        assert_eq!(p.expected_s(SameSetup), Some(9.0));
        p.record(Some(SameSetup), 3.0);
        assert_eq!(p.expected_s(SameSetup), Some(3.0));
        assert_eq!(p.expected_s(FirstOfSetup), Some(6.0));
    }

    #[test]
    fn later_rounds_go_at_the_pace_of_cells_that_come_again() {
        let mut p = Pace::default();
        p.record(Some(FirstOfSetup), 30.0);
        p.record(Some(FirstOfSetup), 30.0);
        assert_eq!(p.round_cell_s(), Some(30.0));
        p.record(Some(SetupChange), 6.0);
        p.record(Some(SameSetup), 4.0);
        assert_eq!(p.round_cell_s(), Some(5.0));
        assert_eq!(p.mean_s(), Some(17.5));
    }

    #[test]
    fn the_end_says_what_was_used_and_what_the_next_cell_needed() {
        let end = may_start(300.0, 288.0, Some(19.0), 2.0).unwrap_err();
        let text = end.describe();
        assert!(text.starts_with("the budget ended the study: "), "{text}");
        assert_eq!(end.record()["ended_study"], true);
        assert_eq!(end.record()["next_cell_s"], 21.0);
    }
}
