//! Reports and comparisons of stored runs and studies.
//!
//! The input is a [`ReportInput`]: stored runs placed in a study's design (variant, factor
//! levels, swept settings, repeat). [`build`] turns it into a [`Report`]: its [`context`] (what
//! ran, on what, how the client was placed), what changed, one
//! verdict per comparison, comparisons with 95% confidence intervals of the ratio on the log
//! scale and a minimum detectable effect ([`qpslab_stats::ratio`]) from repeats or, with one run a
//! side, from per-interval samples ([`qpslab_stats::estimate`]), warnings (different run options, unstable phases), each
//! variant's best stable result, factorial effects ([`effects`]), results and SVG charts. Runs of
//! different workloads side by side are refused ([`setup`]). A [`Renderer`] lays it out as HTML, Markdown or JSON; [`png`] renders the charts
//! to PNG. [`subjects`] reads
//! what a report or a comparison is about (runs, repeats, studies, `STUDY/VARIANT`) from the
//! results store.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): what differs
//! between two setups and the same-workload check (`setup.rs`), comparisons, verdicts and warnings
//! from the intervals of `qpslab-stats` (`compare.rs`), factorial effects (`effects.rs`), what
//! limited each side and the figures that moved (`limits.rs`), the report's context (what ran, on
//! what, client placement, provenance: `context.rs`), SVG charts and PNG output (`charts/`: forest
//! plots of the comparisons `forest.rs`, against sessions as lines or, under three session counts,
//! dot plots `scaling.rs`, per interval for every session count, HDR latency distributions
//! `hdr.rs`, server time series from telemetry `server.rs`, how rows and lines name their
//! settings and what throughput is counted in `labels.rs`; `svg.rs` with `svg/`: dot plots
//! `dots.rs`, legends and markers `legend.rs`, text measured in DejaVu Sans' widths `text.rs`;
//! `png.rs`), the summary of verdicts that opens a report (`render/summary.rs`), one renderer per
//! format (`render/`), what a report or a comparison is about read from the store (`subjects.rs`:
//! runs, repeats, studies, `STUDY/VARIANT`), and the history of a benchmark over builds and
//! versions (`history/`: its series, the x axis, the change points of `qpslab_stats` with what
//! differed either side, the CI gate, its renderers).
//!
//! ```no_run
//! # fn demo(run: qpslab_store::StoredRun) -> Result<(), qpslab_report::Error> {
//! use qpslab_report::{build, Format, ReportInput, Subject};
//! let input = ReportInput {
//!     title: "run 1".into(),
//!     subjects: vec![Subject::lone(run)],
//!     ..Default::default()
//! };
//! let html = Format::Html.renderer().render(&build(&input)?)?;
//! # Ok(()) }
//! ```

mod charts;
pub mod compare;
mod compare_rounds;
pub mod context;
pub mod diff;
pub mod effects;
mod error;
pub mod history;
pub mod limits;
pub mod live;
pub mod metrics;
pub mod model;
pub mod png;
mod render;
mod report;
pub mod setup;
pub mod spec_setups;
pub mod subjects;
pub mod svg;
#[cfg(test)]
mod test_runs;
pub mod tpcc;

pub use charts::{verdict_word, Chart, Section};
pub use compare::{
    compare, compare_with, Comparison, Decision, MetricComparison, PointComparison, Rounds,
    Sequential, Stopped,
};
pub use error::Error;
pub use model::{FactorDef, Point, ReportInput, Subject};
pub use render::{
    compared_rows, comparison_markdown, difference_cells, limits_sides_lines, metric_cells,
    metric_header, Format, Html, Json, Markdown, MarkdownWithCharts, Renderer,
};
pub use report::{build, build_with, BestRow, Report, ResultRow};
pub use subjects::{report_input, side};
