//! Live metrics of a measurement for the dashboards SREs already run: `--metrics-addr
//! HOST:PORT` on `run`, `lab run`, `replay` and `tune` serves `GET /metrics` in the
//! Prometheus text format (0.0.4), or OpenMetrics 1.0 when the scraper's `Accept` asks for it.
//!
//! The pieces: a [`Registry`] the runs report each interval into (the engine's
//! [`Sample`](qpslab_core::Sample) and the telemetry of the same tick, under [`Labels`]: run,
//! sessions, study cell), the text of both formats ([`text`]), and the [`Exporter`], one
//! thread serving the registry over a `std::net::TcpListener` until it is dropped. A scraper
//! that is slow or silent costs the exporter at most its timeouts, never the run: the run only
//! takes the registry's lock to add an interval.
//!
//! Its parts, file by file (the crate map in docs/ARCHITECTURE.md points here): the live
//! `--metrics-addr` endpoint (docs/metrics.md): the `Registry` the runs report each interval into
//! (`registry.rs`, one phase's figures in `phase.rs`), the Prometheus 0.0.4 and OpenMetrics text
//! from one list of families (`text.rs`), the `Exporter` thread serving `GET /metrics` on a
//! `TcpListener` (`http.rs`).
//!
//! ```
//! use qpslab_metrics::{Exporter, Labels};
//! let exporter = Exporter::start("127.0.0.1:0").unwrap();
//! let labels = Labels { run: "7".into(), threads: 4, cell: None };
//! let s = qpslab_core::Sample {
//!     interval_s: 1.0,
//!     events: 250,
//!     ..Default::default()
//! };
//! exporter.registry().record(&labels, &s, &[]);
//! let text = exporter.registry().render(qpslab_metrics::Format::Prometheus);
//! assert!(text.contains("qpslab_transactions_per_second{run=\"7\",threads=\"4\"} 250"));
//! ```

use qpslab_core::fault::{user_if, Blame, Fault};

mod http;
mod phase;
mod registry;
pub mod text;

pub use http::Exporter;
pub use phase::Labels;
pub use registry::Registry;
pub use text::Format;

/// Why the endpoint could not be served.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// The address is not `HOST:PORT` or does not resolve.
    #[error("--metrics-addr {addr}: not a HOST:PORT this machine can listen on ({reason})")]
    Address {
        /// What the user gave.
        addr: String,
        /// Why it is not usable.
        reason: String,
    },
    /// The port is taken, or listening on it is not allowed.
    #[error("--metrics-addr {addr}: cannot listen there: {source}")]
    Bind {
        /// What the user gave.
        addr: String,
        /// The system's error (`Address already in use`).
        source: std::io::Error,
    },
    /// The listener could not be set up or its thread started.
    #[error("metrics endpoint: {0}")]
    Io(#[from] std::io::Error),
}

impl Blame for MetricsError {
    /// Whether the user can fix it by choosing another address (exit 2).
    fn fault(&self) -> Fault {
        user_if(matches!(
            self,
            MetricsError::Address { .. } | MetricsError::Bind { .. }
        ))
    }
}
