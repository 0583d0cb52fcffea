//! History: the runs of one benchmark over builds, versions and days, and where their
//! throughput changed (`qpslab history`, docs/history.md).
//!
//! Runs are grouped into series ([`series`]: one benchmark identity on one client host), each
//! series' points ordered along the axis asked for ([`By`]: start time, server version or a
//! label), and its throughput searched for change points by
//! [`qpslab_stats::changepoint`] (E-divisive means). A phase judged unstable for a reason other
//! than other processes' CPU use is shown but left out of the search: a stall, a trend or a
//! bound client biases the run it hits, while contention on a shared host is the noise the
//! permutation test measures. For each change point the two runs either side are compared as
//! `compare` compares two runs ([`crate::setup::differences`]: version, settings, host, labels).
//! [`gate`] reads the newest points for CI; [`render`] lays a history out as text, Markdown,
//! JSON or CSV.
//!
//! ```no_run
//! # fn demo(store: &qpslab_store::Store) -> Result<(), qpslab_report::history::HistoryError> {
//! use qpslab_report::history::{history, render, Query};
//! let h = history(store, &Query::new(vec!["oltp_point_select".into()]))?;
//! print!("{}", render::text(&h, None));
//! # Ok(()) }
//! ```

pub mod chart;
pub mod gate;
mod order;
pub mod render;
pub mod series;

pub use order::By;
pub use qpslab_stats::changepoint::Level;

use crate::model::Subject;
use crate::setup::{differences, Difference};
use qpslab_core::fault::{user_if, Blame, Fault};
use qpslab_stats::changepoint::{self, ChangePointError, Options};
use qpslab_store::{RunId, RunStatus, Store, StoredRun};
use serde::Serialize;
use series::Identity;
use std::collections::BTreeMap;

/// What a history is asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// Series keys, series names or workloads (empty: every series).
    pub wanted: Vec<String>,
    /// The x axis the points are ordered along.
    pub by: By,
    /// The permutation test's level: on a series without change, the chance of any change
    /// point.
    pub significance: f64,
    /// The smallest relative change of throughput reported, as a fraction (0.05: 5 %).
    pub min_change: f64,
    /// Only runs with this id or a later one.
    pub since: Option<i64>,
    /// Only runs with this id or an earlier one (the store as it was when that run was
    /// stored).
    pub until: Option<i64>,
}

/// The smallest relative change reported unless asked otherwise: smaller steps are within
/// what a shared machine drifts by, and a gate's margin is of this order.
pub const DEFAULT_MIN_CHANGE: f64 = 0.05;

impl Query {
    /// Every default: ordered by time, significance 0.01, changes of 5 % or more.
    pub fn new(wanted: Vec<String>) -> Query {
        Query {
            wanted,
            by: By::Time,
            significance: Options::default().significance,
            min_change: DEFAULT_MIN_CHANGE,
            since: None,
            until: None,
        }
    }

    /// The change point search's options.
    pub fn options(&self) -> Options {
        Options {
            significance: self.significance,
            min_magnitude: self.min_change,
            ..Options::default()
        }
    }
}

/// Why a history cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A word that names no series (the user's mistake).
    #[error("no series matches {word}; the series there are: {there}")]
    UnknownSeries {
        /// What was asked for.
        word: String,
        /// The series of the store, by key and title (or "none").
        there: String,
    },
    /// Too few points to search (the user's mistake: measure more runs first).
    #[error(
        "series {series} has {got} point(s) to search{left_out}; finding a change point needs \
         {needed} (measure {more} more run(s))"
    )]
    TooShort {
        /// The series' key and title.
        series: String,
        /// Points searched (stable ones).
        got: usize,
        /// Points the method needs.
        needed: usize,
        /// How many more runs are needed.
        more: usize,
        /// `, 2 more left out as unstable`, or empty.
        left_out: String,
    },
    /// Points that cannot be ordered along the axis asked for (the user's mistake).
    #[error("{0}")]
    Unordered(String),
    /// An option out of its range, or a gate over several series (the user's mistake).
    #[error("{0}")]
    Bad(String),
    /// The results store could not be read.
    #[error(transparent)]
    Store(#[from] qpslab_store::Error),
}

impl Blame for HistoryError {
    fn fault(&self) -> Fault {
        match self {
            HistoryError::Store(e) => e.fault(),
            _ => user_if(true),
        }
    }
}

/// A history: each series asked for, its points and change points.
#[derive(Clone, Debug, Serialize)]
pub struct History {
    /// The x axis: `time`, `server_version` or `label:KEY`.
    pub by: String,
    /// The search's level.
    pub significance: f64,
    /// The smallest relative change reported.
    pub min_change: f64,
    /// The method, as the output names it.
    pub method: &'static str,
    /// The series, by title.
    pub series: Vec<Series>,
}

/// One series and what was found in it.
#[derive(Clone, Debug, Serialize)]
pub struct Series {
    /// Its key (`qpslab history KEY`).
    pub key: String,
    /// Its name for people: `oltp_point_select · 4 sessions · c1`.
    pub title: String,
    /// What its runs share.
    pub identity: Identity,
    /// Its points in x order.
    pub points: Vec<Point>,
    /// Points searched (the stable ones).
    pub searched: usize,
    /// Points the search needs.
    pub needed: usize,
    /// The change points found, in x order (none when too short).
    pub change_points: Vec<Change>,
}

/// One run's phase in a series.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    /// The run's id.
    pub run: i64,
    /// When it started (ISO 8601, UTC).
    pub started: String,
    /// Its place on the x axis, as text (the time, the version or the label's value).
    pub x: String,
    /// Transactions per second.
    pub tps: f64,
    /// The 99th percentile of latency in ms, when the phase has one.
    pub p99_ms: Option<f64>,
    /// Why the phase is left out of the search (its stability verdict), when it is.
    pub unstable: Option<String>,
    /// The run's labels.
    pub labels: BTreeMap<String, String>,
}

/// A change point of a series.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    /// The index in the series' points of the first point after the change.
    pub at: usize,
    /// The last searched run before the change.
    pub run_before: i64,
    /// The first run after it.
    pub run_after: i64,
    /// Their places on the x axis.
    pub x_before: String,
    /// The place of the first run after it.
    pub x_after: String,
    /// The permutation test's p-value.
    pub p_value: f64,
    /// The throughput's level before (mean, its 95 % interval, points).
    pub before: Level,
    /// The level after.
    pub after: Level,
    /// `after / before - 1`.
    pub relative_change: f64,
    /// What differs between the two runs either side (as `compare` lists it).
    pub differences: Vec<Difference>,
}

/// The history `q` asks of the runs of `store`.
pub fn history(store: &Store, q: &Query) -> Result<History, HistoryError> {
    build(load(store, q)?, q)
}

/// Every completed run of `store` within `q`'s range, oldest first.
fn load(store: &Store, q: &Query) -> Result<Vec<StoredRun>, HistoryError> {
    let mut runs = Vec::new();
    for r in store.list_runs(usize::MAX)?.into_iter().rev() {
        let in_range = q.since.is_none_or(|s| r.id.0 >= s) && q.until.is_none_or(|u| r.id.0 <= u);
        if r.status == RunStatus::Completed && in_range {
            runs.push(store.load_run(RunId(r.id.0))?);
        }
    }
    Ok(runs)
}

/// The history `q` asks of `runs`.
pub fn build(runs: Vec<StoredRun>, q: &Query) -> Result<History, HistoryError> {
    let opts = q.options();
    check_options(&opts)?;
    let mut groups: BTreeMap<Identity, Vec<(usize, usize)>> = BTreeMap::new();
    for (i, run) in runs.iter().enumerate() {
        for (j, phase) in run.phases.iter().enumerate() {
            let id = Identity::of(&run.meta, phase.result.threads);
            groups.entry(id).or_default().push((i, j));
        }
    }
    for word in &q.wanted {
        if !groups.keys().any(|id| id.matches(word)) {
            return Err(HistoryError::UnknownSeries {
                word: word.clone(),
                there: there(groups.keys()),
            });
        }
    }
    let mut series = Vec::new();
    for (id, members) in groups {
        if q.wanted.is_empty() || q.wanted.iter().any(|w| id.matches(w)) {
            series.push(one_series(&runs, id, &members, q, &opts)?);
        }
    }
    if series.is_empty() {
        return Err(HistoryError::UnknownSeries {
            word: "anything".into(),
            there: "none (no completed run in the range asked)".into(),
        });
    }
    if series.iter().all(|s| s.searched < s.needed) {
        return Err(too_short(&series[0]));
    }
    Ok(History {
        by: q.by.to_string(),
        significance: q.significance,
        min_change: q.min_change,
        method: "E-divisive means with a permutation test",
        series,
    })
}

/// The series' list for an error: `3f2a9c1e (oltp_point_select · 4 sessions · c1)`, ...
fn there<'a>(ids: impl Iterator<Item = &'a Identity>) -> String {
    let all: Vec<String> = ids
        .map(|id| format!("{} ({})", id.key(), id.title()))
        .collect();
    if all.is_empty() {
        "none".into()
    } else {
        all.join(", ")
    }
}

/// The error of a series too short to search.
pub(crate) fn too_short(s: &Series) -> HistoryError {
    let left = s.points.len() - s.searched;
    HistoryError::TooShort {
        series: format!("{} ({})", s.key, s.title),
        got: s.searched,
        needed: s.needed,
        more: s.needed - s.searched,
        left_out: if left > 0 {
            format!(", {left} more left out as unstable")
        } else {
            String::new()
        },
    }
}

fn check_options(opts: &Options) -> Result<(), HistoryError> {
    match changepoint::detect(&[], opts) {
        Err(ChangePointError::BadOption {
            option,
            value,
            expected,
        }) => Err(HistoryError::Bad(format!(
            "{}: {value} is out of range: {expected}",
            match option {
                "min_magnitude" => "--min-change",
                "significance" => "--significance",
                other => other,
            }
        ))),
        _ => Ok(()),
    }
}

/// One series: its points ordered, its stable points searched.
fn one_series(
    runs: &[StoredRun],
    id: Identity,
    members: &[(usize, usize)],
    q: &Query,
    opts: &Options,
) -> Result<Series, HistoryError> {
    let ordered = order::order(runs, members, &q.by)?;
    let points: Vec<Point> = ordered
        .iter()
        .map(|(i, j, x)| point(&runs[*i], *j, x.clone()))
        .collect();
    let stable: Vec<usize> = (0..points.len())
        .filter(|k| points[*k].unstable.is_none())
        .collect();
    let tps: Vec<f64> = stable.iter().map(|k| points[*k].tps).collect();
    let needed = changepoint::min_points(opts);
    let found = match changepoint::detect(&tps, opts) {
        Ok(found) => found,
        Err(ChangePointError::TooShort { .. }) => Vec::new(),
        Err(e) => return Err(HistoryError::Bad(e.to_string())),
    };
    // A label's value named with its key where it stands alone: `build=13`.
    let named = |x: &str| match &q.by {
        By::Label(k) => format!("{k}={x}"),
        _ => x.to_string(),
    };
    let change_points = found
        .iter()
        .map(|c| {
            let (b, a) = (stable[c.index - 1], stable[c.index]);
            let run_of = |k: usize| &runs[ordered[k].0];
            Change {
                at: a,
                run_before: points[b].run,
                run_after: points[a].run,
                x_before: named(&points[b].x),
                x_after: named(&points[a].x),
                p_value: c.p_value,
                before: c.before,
                after: c.after,
                relative_change: c.relative_change,
                differences: differences(
                    &Subject::lone(run_of(b).clone()),
                    &Subject::lone(run_of(a).clone()),
                ),
            }
        })
        .collect();
    Ok(Series {
        key: id.key(),
        title: id.title(),
        identity: id,
        searched: tps.len(),
        needed,
        points,
        change_points,
    })
}

/// Phase `j` of `run` as a point at `x`.
fn point(run: &StoredRun, j: usize, x: String) -> Point {
    let r = &run.phases[j].result;
    let p99 = r
        .latency
        .percentiles
        .iter()
        .find(|p| p.p == 99.0)
        .map(|p| p.ms);
    let unstable = r
        .stability
        .as_ref()
        .filter(|s| !s.fit_to_pair())
        .map(ToString::to_string);
    Point {
        run: run.id.0,
        started: qpslab_store::iso8601_utc(run.meta.started_at),
        x,
        tps: r.tps(),
        p99_ms: p99,
        unstable,
        labels: run.meta.plan.labels.clone(),
    }
}

#[cfg(test)]
mod tests;
