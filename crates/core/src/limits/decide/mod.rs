//! The verdict from the evidence: each limiter has one figure and a threshold; those past it
//! are ranked by how far past (`value / threshold`), and the two strongest are named. A phase
//! with none past its threshold names none, and says which came nearest.

mod figures;
#[cfg(test)]
mod tests;

use super::{Evidence, Kind, Limiter, Limits};
use figures::{candidates, cpus, pct, Candidate};

/// The thresholds, each the figure at which its limiter is named.
pub mod thresholds {
    /// The server's CPU: share of the CPUs it may run on.
    pub const SERVER_CPU: f64 = 0.85;
    /// The machine's CPUs busy (server, client and others) when the server shares them all.
    pub const MACHINE_BUSY: f64 = 0.9;
    /// Other processes' share of the machine (the stability verdict's own threshold).
    pub const NEIGHBOUR: f64 = crate::stability::OTHERS_SHARE;
    /// Share of the sessions' time waited on row locks, one latch, the redo log's I/O or data
    /// I/O (performance_schema or the row lock counters).
    pub const WAIT_SHARE: f64 = 0.2;
    /// The datadir's device busy share.
    pub const DISK_BUSY: f64 = 0.5;
    /// fsyncs per transaction that make a busy device the redo log's.
    pub const FSYNCS_PER_EVENT: f64 = 0.5;
    /// The redo log's mean fill (checkpoint age against its flushing point) at which commits
    /// wait for pages to be flushed.
    pub const CHECKPOINT_FILL: f64 = 0.8;
    /// Redo log waits (the log buffer full) per transaction.
    pub const LOG_WAITS_PER_EVENT: f64 = 0.01;
    /// Pages read from disk into the buffer pool per transaction.
    pub const POOL_READS_PER_EVENT: f64 = 0.5;
    /// Free-page waits per transaction.
    pub const POOL_WAIT_FREE_PER_EVENT: f64 = 0.01;
    /// Connections queued per thread-pool group.
    pub const POOL_QUEUE: f64 = 1.0;
    /// The host's share in softirq, or retransmitted segments' share.
    pub const SOFTIRQ: f64 = 0.3;
    pub const RETRANSMITS: f64 = 0.01;
    /// A paced phase keeps its schedule (achieved / target) with the server below this CPU.
    pub const PACED_KEPT: f64 = 0.95;
    pub const PACED_IDLE: f64 = 0.5;
}

use thresholds as t;

/// The most limiters a verdict names.
const MOST: usize = 2;
/// Strengths are capped so one runaway figure does not hide the second limiter's rank.
const CAP: f64 = 10.0;

/// The verdict on a phase from what was seen of it.
pub fn decide(e: Evidence) -> Limits {
    let mut all = candidates(&e);
    all.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
    // One limiter per kind (and latch): a second figure past its threshold for the same
    // limiter is more of its evidence.
    let mut limiters: Vec<Limiter> = Vec::new();
    for c in all.iter().filter(|c| c.ratio >= 1.0) {
        let named = limiters.len();
        if let Some(l) = limiters
            .iter_mut()
            .find(|l| l.kind == c.kind && l.name == c.name)
        {
            l.evidence.extend(c.evidence.iter().cloned());
        } else if named < MOST {
            limiters.push(Limiter {
                kind: c.kind,
                name: c.name.clone(),
                strength: round2(c.ratio.min(CAP)),
                evidence: c.evidence.clone(),
            });
        }
    }
    if limiters.is_empty() {
        if let Some(l) = under_capacity(&e) {
            limiters.push(l);
        }
    }
    let unclear = limiters.is_empty().then(|| {
        let nearest = match all.first() {
            Some(c) => format!(
                "nearest: {} at {:.0}% of its threshold, {}",
                label(c),
                c.ratio * 100.0,
                c.evidence.first().map_or("", String::as_str)
            ),
            None => "nothing was measured beyond throughput".into(),
        };
        match few_sessions(&e) {
            Some(few) => format!("{few}; {nearest}"),
            None => nearest,
        }
    });
    if let Some(l) = limiters.iter_mut().find(|l| l.kind == Kind::ServerCpu) {
        l.evidence.extend(thread_classes(&e));
        l.evidence.extend(hottest(&e));
    }
    Limits {
        limiters,
        unclear,
        unseen: unseen(&e),
        evidence: e,
    }
}

fn label(c: &Candidate) -> String {
    match &c.name {
        Some(n) => format!("{}: {n}", c.kind.label()),
        None => c.kind.label().to_string(),
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Sessions too few to load the machine: each spends its time on its own round trips, so
/// the phase measured their latency, not a limit of the server.
fn few_sessions(e: &Evidence) -> Option<String> {
    if e.paced.is_some() || e.machine_cpus <= 0.0 || f64::from(e.sessions) > e.machine_cpus {
        return None;
    }
    let busy =
        (e.server_cpus_used? + e.client_cpus_used) / e.machine_cpus + e.others_share.unwrap_or(0.0);
    (busy < 0.5).then(|| {
        format!(
            "{} session(s) on {}, the machine {} busy: each waited on its own round trips; more \
             sessions would load the server further",
            e.sessions,
            cpus(e.machine_cpus),
            pct(busy)
        )
    })
}

/// A paced phase that kept its schedule with the server mostly idle.
fn under_capacity(e: &Evidence) -> Option<Limiter> {
    let (target, achieved) = e.paced?;
    if target <= 0.0 || achieved / target < t::PACED_KEPT {
        return None;
    }
    let share = match (e.server_cpus_used, e.server_cpus_allowed) {
        (Some(u), Some(a)) if a > 0.0 => Some(u / a),
        _ => None,
    };
    if share.is_some_and(|s| s >= t::PACED_IDLE) {
        return None;
    }
    let cpu = share.map_or(String::new(), |s| format!("; server CPU {}", pct(s)));
    Some(Limiter {
        kind: Kind::UnderCapacity,
        name: None,
        strength: 1.0,
        evidence: vec![format!(
            "paced at {target:.0}/s and kept it ({achieved:.0}/s){cpu}"
        )],
    })
}

/// The server's CPU by thread class, the largest first: `connections 1.62 CPUs (busiest
/// thread 34%), page cleaner 0.05`.
fn thread_classes(e: &Evidence) -> Option<String> {
    let t = e.threads.as_ref()?;
    if t.classes.is_empty() || e.duration_s <= 0.0 {
        return None;
    }
    let parts: Vec<String> = t
        .classes
        .iter()
        .take(4)
        .map(|c| {
            format!(
                "{} {:.2} CPUs (busiest thread {})",
                c.class.label(),
                c.cpu_s / e.duration_s,
                pct(c.busiest_s / e.duration_s)
            )
        })
        .collect();
    Some(format!("by thread class: {}", parts.join(", ")))
}

/// The profile's hottest functions: `on CPU most: ut_delay 23%, ...`.
fn hottest(e: &Evidence) -> Option<String> {
    if e.top_functions.is_empty() {
        return None;
    }
    let parts: Vec<String> = e
        .top_functions
        .iter()
        .map(|(f, share)| format!("{f} {}", pct(*share)))
        .collect();
    Some(format!("on CPU most (profile): {}", parts.join(", ")))
}

/// What the verdict could not look at, and why.
fn unseen(e: &Evidence) -> Vec<String> {
    let mut out = Vec::new();
    if e.remote {
        out.push(
            "the server's host: it is not this machine, so its CPU, threads and disk are not seen"
                .to_string(),
        );
    }
    match &e.waits {
        Some(w) if w.source == "performance_schema" => {}
        Some(w) => out.push(format!(
            "latches and wait times: {}",
            w.reason
                .as_deref()
                .unwrap_or("performance_schema's wait summaries are not available")
        )),
        None => out.push("latches and wait times: not sampled".into()),
    }
    if let Some(r) = e.threads.as_ref().and_then(|t| t.reason.as_deref()) {
        out.push(format!("CPU by thread class: {r}"));
    }
    if let Some(r) = e.disk.as_ref().and_then(|d| d.reason.as_deref()) {
        out.push(format!("the datadir's device: {r}"));
    }
    if let Some(r) = &e.perf_reason {
        // The probe's reasons often name the counters themselves.
        out.push(if r.starts_with("hardware counters") {
            r.clone()
        } else {
            format!("hardware counters: {r}")
        });
    }
    out
}
