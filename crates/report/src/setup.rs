//! What differs between the setups of two runs (plans, servers, hosts, factor levels), and
//! whether two runs measured the same workload at all.
//!
//! Comparing two workloads is meaningless: callers refuse it ([`check_same_workload`]). Runs of
//! one workload with different run options (tables, table size, duration, rate...) can be
//! compared, but the reader must know: [`option_warning`] names what differs.

use crate::error::Error;
use crate::model::{Point, Subject};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A setting that differs between the two sides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    /// Where it comes from and its name, e.g. `server.innodb_buffer_pool_size`.
    pub name: String,
    /// The baseline's value (empty when absent).
    pub a: String,
    /// The candidate's value.
    pub b: String,
}

/// Server variables that differ between any two sandboxes by construction (paths, ports, ids):
/// listing them would bury the differences that matter.
const INCIDENTAL: &[&str] = &[
    "port",
    "socket",
    "datadir",
    "pid_file",
    "log_error",
    "general_log_file",
    "slow_query_log_file",
    "log_bin_basename",
    "log_bin_index",
    "relay_log_basename",
    "relay_log_index",
    "relay_log_info_file",
    "innodb_data_home_dir",
    "innodb_log_group_home_dir",
    "tmpdir",
    "server_uid",
    "server_id",
    "gtid_slave_pos",
    "hostname",
    "report_port",
    "timestamp",
    "gtid_binlog_pos",
    "gtid_current_pos",
    "gtid_binlog_state",
    "wsrep_node_name",
];

/// What differs between two runs' plans, servers and hosts, ignoring the thread sweep (points
/// are matched on it) and incidental paths and ports.
pub fn differences(a: &Subject, b: &Subject) -> Vec<Difference> {
    let (ma, mb) = (&a.run.meta, &b.run.meta);
    let mut fa = BTreeMap::new();
    let mut fb = BTreeMap::new();
    for (meta, f) in [(ma, &mut fa), (mb, &mut fb)] {
        let mut plan = serde_json::to_value(&meta.plan).unwrap_or(Value::Null);
        // A study setup's storage (fs, mount options...) is part of the setup, not a run option.
        if let Some(storage) = plan.as_object_mut().and_then(|p| p.remove("storage")) {
            flatten("storage", &storage, f);
        }
        flatten("plan", &plan, f);
        f.remove("plan.threads");
        // Each run draws its own seed from the clock unless one was given: not a setting.
        f.remove("plan.workload.rand.seed");
        // What settling found and how long auto warm-up took are measurements, not settings.
        f.retain(|k, _| !k.starts_with("plan.settle.report.") && k != "plan.warmup_auto.took_s");
        f.insert("server.version".into(), meta.server.version.clone());
        // Where the server's threads may run: what a CPU set or a pin did to it.
        if let Some(cpus) = &meta.server.cpus {
            f.insert("server.cpus".into(), cpus.clone());
        }
        for (k, v) in &meta.server.variables {
            if !INCIDENTAL.contains(&k.as_str()) {
                f.insert(format!("server.{k}"), in_server_dir(meta, v));
            }
        }
        let host = serde_json::to_value(&meta.host).unwrap_or(Value::Null);
        flatten("host", &host, f);
    }
    for (s, f) in [(a, &mut fa), (b, &mut fb)] {
        for (k, v) in &s.cell.levels {
            f.insert(format!("factor.{k}"), v.clone());
        }
    }
    let keys: std::collections::BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            let (x, y) = (fa.get(k), fb.get(k));
            (x != y).then(|| Difference {
                name: k.clone(),
                a: x.cloned().unwrap_or_default(),
                b: y.cloned().unwrap_or_default(),
            })
        })
        .collect()
}

/// `text` with the server's own directory (its datadir's parent: a sandbox's home) written
/// `<server dir>`: paths inside it differ between any two sandboxes by construction.
pub(crate) fn in_server_dir(meta: &qpslab_store::RunMeta, text: &str) -> String {
    let home = meta
        .server
        .variables
        .get("datadir")
        .map(|d| d.trim_end_matches('/'))
        .and_then(|d| d.rsplit_once('/'))
        .map(|(parent, _)| parent)
        .filter(|p| p.len() > 1);
    match home {
        Some(h) => text.replace(h, "<server dir>"),
        None => text.to_string(),
    }
}

/// The leaves of `v` as `prefix.key.key` → value text.
pub(crate) fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                flatten(&format!("{prefix}.{k}"), x, out);
            }
        }
        Value::Null => {}
        other => {
            out.insert(prefix.to_string(), crate::model::value_text(other));
        }
    }
}

/// The workload a point measured: the script's name (and a custom script's identity, when the
/// plan names one), from the run's plan.
pub fn workload(p: &Point<'_>) -> String {
    // Two replays of one log (by content) in one mode replayed the same workload.
    if let Some(r) = &p.meta().plan.replay {
        let hash = r.sha256.get(..12).unwrap_or(&r.sha256);
        return format!("replay of log {hash} ({} mode)", r.mode);
    }
    // A fileio run by its mode: its other options are run options (warned about, not refused).
    if let Some(io) = &p.meta().plan.fileio {
        return io.label();
    }
    // Scripts by name, weight and content: an edited script is another workload.
    let w = &p.meta().plan.workload;
    if !w.scripts.is_empty() {
        let texts = w.scripts.iter().map(|s| s.text.as_str());
        return format!("{} (text {:016x})", w.label(), fnv1a(texts));
    }
    let plan = serde_json::to_value(&p.meta().plan.workload).unwrap_or(Value::Null);
    let mut f = BTreeMap::new();
    flatten("", &plan, &mut f);
    let parts: Vec<String> = f
        .into_iter()
        .filter(|(k, _)| k == ".kind" || k.starts_with(".script"))
        .map(|(_, v)| v)
        .collect();
    parts.join(" ")
}

/// Refuses points that share their swept settings (they would be compared or reported side by
/// side) but measured different workloads.
pub fn check_same_workload(points: &[Point<'_>]) -> Result<(), Error> {
    let mut seen: BTreeMap<String, (String, &Point<'_>)> = BTreeMap::new();
    for p in points {
        let w = workload(p);
        match seen.get(&p.key()) {
            Some((other, q)) if *other != w => {
                return Err(Error::MixedWorkloads(format!(
                    "{} ({}) and {} ({}) measured different workloads at {}: {other} and {w}; \
                     compare runs of one workload",
                    q.subject.cell.variant,
                    run_label(q),
                    p.subject.cell.variant,
                    run_label(p),
                    p.key()
                )))
            }
            Some(_) => {}
            None => {
                seen.insert(p.key(), (w, p));
            }
        }
    }
    Ok(())
}

fn run_label(p: &Point<'_>) -> String {
    format!("run {}", p.subject.run.id.0)
}

/// One line naming the run options (`plan.*`) that differ, or `None` when they agree.
pub fn option_warning(diffs: &[Difference]) -> Option<String> {
    let named: Vec<String> = diffs
        .iter()
        .filter_map(|d| {
            let name = d.name.strip_prefix("plan.")?;
            // Labels and a series' name say what the user calls a run, not how it ran.
            if name.starts_with("labels.") || name == "series" {
                return None;
            }
            let name = name.strip_prefix("workload.").unwrap_or(name);
            Some(format!("{name} {} → {}", dash(&d.a), dash(&d.b)))
        })
        .collect();
    (!named.is_empty()).then(|| {
        format!(
            "run options differ ({}): the sides are not repeats of one setup",
            named.join(", ")
        )
    })
}

fn dash(s: &str) -> &str {
    if s.is_empty() {
        "–"
    } else {
        s
    }
}

/// FNV-1a over the texts, each followed by a NUL: a stable identity for script contents.
fn fnv1a<'a>(texts: impl Iterator<Item = &'a str>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in texts.flat_map(|t| t.bytes().chain([0])) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}
