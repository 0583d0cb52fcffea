//! A study as its stored cells tell it: the one JSON form of a study ([`StudyDoc`], what
//! `qpslab lab show --json` prints), each cell with its headline figures ([`CellFigures`], the
//! one source of `lab show`'s table and CSV), and the study's CSV rows ([`CellFigures::csv_row`]
//! under [`STUDY_CSV_HEADER`], written by the one CSV writer, [`crate::write_csv`]); and every
//! stored study in one line each ([`StudySummary`], `lab show` without a study).

use crate::attempt::{AttemptStatus, CellAttempt};
use crate::cell::{CellRecord, CellStatus};
use crate::error::Error;
use crate::export::RunDoc;
use crate::io_doc::IoHeadline;
use crate::model::{RunId, StudyId, UnixSeconds};
use crate::study::{Factor, StudyRecord, StudyStatus};
use crate::Store;
use qpslab_core::result::PhaseResult;
use serde::Serialize;

/// A study as JSON: its record (without the spec's text) and every cell with its attempts
/// and the run it uses. Printed through a `serde_json::Value`, whose keys are in order.
#[derive(Clone, Debug, Serialize)]
pub struct StudyDoc {
    /// The study's name.
    pub name: String,
    /// Where it stands.
    pub status: StudyStatus,
    /// When it was created.
    pub created_at: UnixSeconds,
    /// When it last stopped.
    pub finished_at: Option<UnixSeconds>,
    /// The hash of its normalized spec.
    pub spec_hash: String,
    /// The factors of a factorial study.
    pub factors: Vec<Factor>,
    /// Host, OS settings and servers.
    pub env: serde_json::Value,
    /// Its cells in order.
    pub cells: Vec<CellDoc>,
}

/// One cell of a [`StudyDoc`]: the record, every attempt (the one used is the cell's
/// `run_id`) and the run it uses in the run's one JSON form (`run`, null when it has none).
#[derive(Clone, Debug, Serialize)]
pub struct CellDoc {
    /// The cell as stored.
    #[serde(flatten)]
    pub cell: CellRecord,
    /// Each measurement, in order.
    pub attempts: Vec<AttemptDoc>,
    /// A fileio cell's MiB/s, IOPS and latency (absent for other cells).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<IoHeadline>,
    /// The run the cell uses.
    pub run: Option<RunDoc>,
}

/// One measurement of a cell in a [`CellDoc`].
#[derive(Clone, Debug, Serialize)]
pub struct AttemptDoc {
    /// From 1.
    pub attempt: u32,
    /// Its run (none once deleted).
    pub run_id: Option<RunId>,
    /// Stable or not.
    pub status: AttemptStatus,
    /// Why it is unstable.
    pub reason: Option<String>,
    /// Whether it is the one the cell uses.
    pub used: bool,
}

/// A cell with what its measurements gave: how many there were and the phase of the run it
/// uses (none while it has no run).
#[derive(Clone, Debug)]
pub struct CellFigures {
    /// The cell as stored.
    pub cell: CellRecord,
    /// Its measurements (re-measured when unstable).
    pub attempts: usize,
    /// The measured phase of its run.
    pub phase: Option<PhaseResult>,
}

/// The header of [`CellFigures::csv_row`].
pub const STUDY_CSV_HEADER: &[&str] = &[
    "seq",
    "label",
    "variant",
    "repeat",
    "status",
    "params",
    "run_id",
    "attempts",
    "tps",
    "qps",
    "lat_avg_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "lat_max_ms",
    "error",
];

impl CellFigures {
    /// The header of [`CellFigures::io_csv_row`], a fileio study's CSV.
    pub const IO_CSV_HEADER: &'static [&'static str] = &[
        "seq",
        "label",
        "variant",
        "repeat",
        "status",
        "params",
        "run_id",
        "attempts",
        "mib_s",
        "read_mib_s",
        "write_mib_s",
        "iops",
        "lat_avg_ms",
        "p99_ms",
        "error",
    ];

    /// A fileio cell's MiB/s, IOPS and latency; `None` without a phase or for another
    /// workload.
    pub fn io(&self) -> Option<IoHeadline> {
        self.phase.as_ref().and_then(IoHeadline::of)
    }

    /// Whether `cells` are a fileio study's: one of them measured I/O.
    pub fn is_io_study(cells: &[CellFigures]) -> bool {
        cells.iter().any(|c| c.io().is_some())
    }

    /// The cell's row under [`CellFigures::IO_CSV_HEADER`]: figures with 3 decimals (latency
    /// in ms to the microsecond), empty where there are none.
    pub fn io_csv_row(&self) -> Result<Vec<String>, Error> {
        let mut row = self.csv_row()?;
        row.truncate(8);
        let io = self.io();
        let figures = [
            io.as_ref().map(|h| h.mib_s),
            io.as_ref().map(|h| h.read_mib_s),
            io.as_ref().map(|h| h.write_mib_s),
            io.as_ref().map(|h| h.iops),
            io.as_ref().map(|h| h.lat_avg_ms),
            io.as_ref().and_then(|h| h.p99_ms),
        ];
        row.extend(figures.map(|v| v.map_or(String::new(), |v| format!("{v:.3}"))));
        row.push(self.cell.error.clone().unwrap_or_default());
        Ok(row)
    }

    /// tps, qps, then the latency's average, p50, p95, p99 and maximum in milliseconds (as
    /// [`PhaseResult::percentile_ms`] gives them); `None` without a phase.
    pub fn headline(&self) -> [Option<f64>; 7] {
        let p = self.phase.as_ref();
        [
            p.map(PhaseResult::tps),
            p.map(PhaseResult::qps),
            p.map(|p| p.latency.avg_ms),
            p.and_then(|p| p.percentile_ms(50.0)),
            p.and_then(|p| p.percentile_ms(95.0)),
            p.and_then(|p| p.percentile_ms(99.0)),
            p.and_then(PhaseResult::max_ms),
        ]
    }

    /// The cell's row under [`STUDY_CSV_HEADER`]: figures with 3 decimals, empty where there
    /// are none.
    pub fn csv_row(&self) -> Result<Vec<String>, Error> {
        let c = &self.cell;
        let mut row = vec![
            c.cell.seq.to_string(),
            c.cell.label.clone(),
            c.cell.variant.clone(),
            c.cell.repeat.to_string(),
            c.status.to_string(),
            serde_json::to_string(&c.cell.params)?,
            c.run_id.map_or(String::new(), |r| r.to_string()),
            self.attempts.to_string(),
        ];
        row.extend(
            self.headline()
                .map(|v| v.map_or(String::new(), |v| format!("{v:.3}"))),
        );
        row.push(c.error.clone().unwrap_or_default());
        Ok(row)
    }
}

impl Store {
    /// The phase of the run cell `c` uses, if it has one that can be read.
    fn cell_phase(&self, c: &CellRecord) -> Option<PhaseResult> {
        let run = self.load_run(c.run_id?).ok()?;
        run.phases.into_iter().next().map(|p| p.result)
    }

    /// Every cell of `study` in order, with its figures.
    pub fn cell_figures(&self, study: StudyId) -> Result<Vec<CellFigures>, Error> {
        let attempts = self.cell_attempts(study)?;
        Ok(self
            .study_cells(study)?
            .into_iter()
            .map(|cell| CellFigures {
                attempts: attempts.iter().filter(|a| a.cell_id == cell.id).count(),
                phase: self.cell_phase(&cell),
                cell,
            })
            .collect())
    }

    /// Study `s` as its [`StudyDoc`].
    pub fn study_doc(&self, s: &StudyRecord) -> Result<StudyDoc, Error> {
        let attempts = self.cell_attempts(s.id)?;
        let cells = self
            .study_cells(s.id)?
            .into_iter()
            .map(|cell| CellDoc {
                attempts: attempts_of(&cell, &attempts),
                io: self.cell_phase(&cell).as_ref().and_then(IoHeadline::of),
                run: cell.run_id.and_then(|id| self.run_doc(id).ok()),
                cell,
            })
            .collect();
        Ok(StudyDoc {
            name: s.name.clone(),
            status: s.status,
            created_at: s.created_at,
            finished_at: s.finished_at,
            spec_hash: s.spec_hash.clone(),
            factors: s.factors.clone(),
            env: s.env.clone(),
            cells,
        })
    }
}

/// A stored study in one line: what `qpslab lab show --json` (no study named) prints per
/// study, fields in the order they print.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StudySummary {
    /// How many cells it has.
    pub cells: usize,
    /// When it was created.
    pub created_at: UnixSeconds,
    /// How many cells are done.
    pub done: usize,
    /// How many cells failed.
    pub failed: usize,
    /// When it last stopped.
    pub finished_at: Option<UnixSeconds>,
    /// The study's name.
    pub name: String,
    /// Where it stands.
    pub status: StudyStatus,
}

/// The header of [`StudySummary::csv_row`].
pub const STUDY_LIST_CSV_HEADER: &[&str] = &["name", "status", "cells", "done", "failed"];

impl StudySummary {
    /// The study's row under [`STUDY_LIST_CSV_HEADER`].
    pub fn csv_row(&self) -> Vec<String> {
        vec![
            self.name.clone(),
            self.status.to_string(),
            self.cells.to_string(),
            self.done.to_string(),
            self.failed.to_string(),
        ]
    }
}

impl Store {
    /// Every stored study, with how many of its cells are done and failed.
    pub fn study_summaries(&self) -> Result<Vec<StudySummary>, Error> {
        let mut out = Vec::new();
        for s in self.list_studies()? {
            let cells = self.study_cells(s.id)?;
            let count = |st: CellStatus| cells.iter().filter(|c| c.status == st).count();
            out.push(StudySummary {
                cells: cells.len(),
                created_at: s.created_at,
                done: count(CellStatus::Done),
                failed: count(CellStatus::Failed),
                finished_at: s.finished_at,
                name: s.name,
                status: s.status,
            });
        }
        Ok(out)
    }
}

/// The attempts of cell `c` among a study's `all`.
fn attempts_of(c: &CellRecord, all: &[CellAttempt]) -> Vec<AttemptDoc> {
    all.iter()
        .filter(|a| a.cell_id == c.id)
        .map(|a| AttemptDoc {
            attempt: a.attempt,
            run_id: a.run_id,
            status: a.status,
            reason: a.reason.clone(),
            used: a.run_id.is_some() && a.run_id == c.run_id,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::CellId;
    use qpslab_core::fileio::IoFigures;

    fn figures(io: Option<IoFigures>) -> CellFigures {
        CellFigures {
            cell: CellRecord {
                id: CellId(1),
                study_id: StudyId(1),
                cell: qpslab_core::Cell {
                    seq: 1,
                    label: "default/file_test_mode=rndrd/r1".into(),
                    variant: "default".into(),
                    levels: Default::default(),
                    params: Default::default(),
                    repeat: 1,
                },
                status: CellStatus::Done,
                run_id: Some(RunId(7)),
                error: None,
                log_tail: None,
                started_at: None,
                finished_at: None,
            },
            attempts: 1,
            phase: Some(PhaseResult {
                events: 3000,
                duration_s: 1.0,
                latency: qpslab_core::result::LatencySummary {
                    avg_ms: 0.0042,
                    ..Default::default()
                },
                io,
                ..Default::default()
            }),
        }
    }

    #[test]
    fn a_fileio_cells_csv_row_gives_mib_s_iops_and_latency_under_its_header() {
        let io = figures(Some(IoFigures {
            read_mib_s: 46.875,
            ..Default::default()
        }));
        assert!(CellFigures::is_io_study(std::slice::from_ref(&io)));
        let row = io.io_csv_row().unwrap();
        assert_eq!(row.len(), CellFigures::IO_CSV_HEADER.len());
        let at = |name: &str| {
            let i = CellFigures::IO_CSV_HEADER.iter().position(|h| *h == name);
            row[i.unwrap()].clone()
        };
        assert_eq!(at("mib_s"), "46.875");
        assert_eq!(at("iops"), "3000.000");
        assert_eq!(at("lat_avg_ms"), "0.004");
        assert_eq!(at("run_id"), "7");
        // An OLTP cell is not a fileio study's.
        assert!(!CellFigures::is_io_study(&[figures(None)]));
    }
}
