//! `--metrics-addr`: the live endpoint started before a command's work begins (a port in use
//! is the user's error, exit 2, before any server starts) and the one way the printers hand it
//! each interval. The endpoint itself lives in `qpslab-metrics`; it stops when the returned
//! exporter is dropped, at the command's end.

use crate::error::fail;
use anyhow::Result;
use qpslab_metrics::{Exporter, Labels, Registry};

/// Starts the endpoint at `addr` when one was asked for, and says where it serves.
pub fn start(addr: Option<&str>) -> Result<Option<Exporter>> {
    let Some(addr) = addr else {
        return Ok(None);
    };
    let exporter = Exporter::start(addr).map_err(fail)?;
    eprintln!(
        "metrics: http://{}/metrics (Prometheus or OpenMetrics text)",
        exporter.local_addr()
    );
    Ok(Some(exporter))
}

/// Adds one interval to the endpoint's registry, when there is an endpoint.
pub fn report(registry: Option<&Registry>, i: &qpslab_lab::run::exec::Interval<'_>) {
    if let Some(r) = registry {
        let labels = Labels {
            run: i.run.to_string(),
            threads: i.threads,
            cell: i.cell.map(str::to_string),
        };
        r.record(&labels, i.sample, i.telemetry);
    }
}
