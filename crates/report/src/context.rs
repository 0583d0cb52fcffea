//! What a report measured, so it stands without the terminal: the workload and its options,
//! the dataset, the run options, the server and the settings that matter, the host, where the
//! client ran each phase and how busy its loops were, and which qpslab, command and dates
//! produced the runs. Facts are taken per setup (variant) from its first run; those every
//! setup shares are listed once, those that differ side by side. A run's random seed is never
//! a fact: every run draws its own.

use crate::model::{self, Point, ReportInput, Subject};
use crate::setup;
use qpslab_core::WorkloadKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Server variables worth stating whether or not they differ.
const KEY_SETTINGS: &[&str] = &[
    "innodb_buffer_pool_size",
    "innodb_log_file_size",
    "innodb_redo_log_capacity",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_io_capacity",
    "sync_binlog",
    "log_bin",
    "max_connections",
    "thread_handling",
    "performance_schema",
    "query_cache_type",
    "transaction_isolation",
];

/// One fact about the setups, with its value in each (in the report's variant order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fact {
    /// What it is about: `workload`, `server`, `host`...
    pub group: String,
    /// Its name.
    pub name: String,
    /// Its value per variant.
    pub values: Vec<String>,
}

impl Fact {
    /// Whether every setup has the same value.
    pub fn same(&self) -> bool {
        self.values.windows(2).all(|w| w[0] == w[1])
    }
}

/// Where the client ran one phase and how busy its event loops were.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlacementRow {
    /// The variant.
    pub variant: String,
    /// The phase's swept settings.
    pub key: String,
    /// Repeat number.
    pub repeat: u32,
    /// `4 event loops on CPUs 12-15 (pinned, not the server's)`, or why it is not known.
    pub placement: String,
    /// Each loop's CPU time as a share of the phase, in %.
    pub busy: String,
    /// Each loop's time waiting for a CPU, in % (empty when not known).
    pub waited: String,
    /// The phase's stability verdict.
    pub stability: String,
}

/// The report's context.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// The variants the facts' values belong to.
    pub variants: Vec<String>,
    /// Facts about the setups; [`Fact::same`] tells the shared ones from the differences.
    pub facts: Vec<Fact>,
    /// One row per measured phase.
    pub placement: Vec<PlacementRow>,
    /// Which qpslab produced the runs, with which command, when: name and value.
    pub provenance: Vec<(String, String)>,
}

impl Context {
    /// Facts every setup shares.
    pub fn common(&self) -> impl Iterator<Item = &Fact> {
        self.facts.iter().filter(|f| f.same())
    }

    /// Facts that differ between setups.
    pub fn differences(&self) -> impl Iterator<Item = &Fact> {
        self.facts.iter().filter(|f| !f.same())
    }
}

/// The context of `input`, whose variants are `variants` in order.
pub fn context(input: &ReportInput, variants: &[String]) -> Context {
    let firsts: Vec<&Subject> = variants
        .iter()
        .filter_map(|v| input.subjects.iter().find(|s| s.cell.variant == *v))
        .collect();
    let points = model::points(input);
    let per_variant: Vec<Vec<(String, String, String)>> =
        firsts.iter().map(|s| setup_facts(s, &points)).collect();
    let mut facts: Vec<Fact> = Vec::new();
    for (i, facts_of) in per_variant.iter().enumerate() {
        for (group, name, value) in facts_of {
            let at = match facts
                .iter()
                .position(|f| f.group == *group && f.name == *name)
            {
                Some(at) => at,
                None => {
                    facts.push(Fact {
                        group: group.clone(),
                        name: name.clone(),
                        values: vec![String::new(); firsts.len()],
                    });
                    facts.len() - 1
                }
            };
            facts[at].values[i] = value.clone();
        }
    }
    facts.extend(other_differences(&firsts));
    // A fact no setup knows (a host not probed) says nothing.
    facts.retain(|f| f.values.iter().any(|v| !v.is_empty()));
    Context {
        variants: variants.to_vec(),
        facts,
        placement: placement(variants, &points),
        provenance: provenance(input),
    }
}

/// `(group, name, value)` facts of one setup: its first run, and the sessions its points
/// measured.
fn setup_facts(s: &Subject, points: &[Point<'_>]) -> Vec<(String, String, String)> {
    let m = &s.run.meta;
    let plan = &m.plan;
    let mut out: Vec<(String, String, String)> = Vec::new();
    let mut push = |g: &str, n: &str, v: String| out.push((g.into(), n.into(), v));
    // Every value the setup's points took, not its first run's: a study sweeping the workload
    // names each one.
    let mine: Vec<&Point<'_>> = points
        .iter()
        .filter(|p| p.subject.cell.variant == s.cell.variant)
        .collect();
    let mut workloads: Vec<String> = Vec::new();
    for p in &mine {
        let w = setup::workload(p);
        if !workloads.contains(&w) {
            workloads.push(w);
        }
    }
    if !workloads.is_empty() {
        push("workload", "workload", workloads.join(", "));
    }
    let mut swept: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for p in &mine {
        for (k, v) in &p.subject.cell.params {
            let values = swept.entry(k.as_str()).or_default();
            let v = crate::model::value_text(v);
            if k != "workload" && k != "threads" && !values.contains(&v) {
                values.push(v);
            }
        }
    }
    for (k, values) in swept.into_iter().filter(|(_, v)| !v.is_empty()) {
        push("run", k, values.join(", "));
    }
    if plan.replay.is_none() && plan.fileio.is_none() {
        let w = &plan.workload;
        let dataset = if w.kind == WorkloadKind::Tpcc {
            format!("{} warehouse(s)", w.warehouses)
        } else {
            format!(
                "{} table(s) × {} rows = {} rows",
                w.tables,
                w.table_size,
                u64::from(w.tables).saturating_mul(w.table_size)
            )
        };
        push("workload", "dataset", dataset);
        // The dataset's shape is on the line above; of the rest, what this workload reads.
        let shape = [
            "kind",
            "tables",
            "table_size",
            "warehouses",
            "scripts",
            "rand.seed",
        ];
        push(
            "workload",
            "options",
            options(w, "", |k| w.applies(k) && !under(k, &shape)),
        );
    }
    let mut threads: Vec<u32> = points
        .iter()
        .filter(|p| p.subject.cell.variant == s.cell.variant)
        .map(Point::threads)
        .collect();
    threads.sort_unstable();
    threads.dedup();
    let threads: Vec<String> = threads.iter().map(u32::to_string).collect();
    push("run", "sessions", threads.join(", "));
    push(
        "run",
        "options",
        options(plan, "", |k| {
            !under(
                k,
                &[
                    "workload",
                    "threads",
                    "replay",
                    "fileio",
                    "storage",
                    "server_cpus",
                    "placement",
                    "live",
                    "settle.report",
                    "warmup_auto.took_s",
                    "percentiles",
                ],
            )
        }),
    );
    push("run", "target", setup::in_server_dir(m, &m.target));
    let srv = &m.server;
    let comment = if srv.version_comment.is_empty() {
        String::new()
    } else {
        format!(" ({})", srv.version_comment)
    };
    push(
        "server",
        "version",
        format!("{} {}{comment}", srv.flavor, srv.version),
    );
    for k in KEY_SETTINGS {
        if let Some(v) = srv.variables.get(*k) {
            push("server", k, v.clone());
        }
    }
    if let Some(storage) = &plan.storage {
        for (k, v) in storage {
            push("storage", k, v.clone());
        }
    }
    let h = &m.host;
    push("host", "hostname", h.hostname.clone());
    push("host", "CPU", h.cpu_model.clone());
    if h.cores > 0 {
        push(
            "host",
            "cores",
            match h.physical_cores {
                Some(p) => format!("{} logical, {p} physical", h.cores),
                None => format!("{} logical", h.cores),
            },
        );
    }
    if h.memory_bytes > 0 {
        push(
            "host",
            "memory",
            format!("{:.1} GiB", h.memory_bytes as f64 / (1u64 << 30) as f64),
        );
    }
    push("host", "kernel", h.kernel.clone());
    push("host", "OS", h.os.clone());
    push("host", "transparent huge pages", h.thp.clone());
    push("host", "swappiness", h.swappiness.clone());
    if let Some(g) = &h.cpu_governor {
        push("host", "CPU governor", g.clone());
    }
    if let Some(n) = h.numa_nodes {
        push("host", "NUMA nodes", n.to_string());
    }
    out
}

/// `name=value` pairs of a serialized value's leaves, those whose name `keep` keeps.
fn options(v: &impl Serialize, prefix: &str, keep: impl Fn(&str) -> bool) -> String {
    let v = serde_json::to_value(v).unwrap_or(Value::Null);
    let mut flat = BTreeMap::new();
    setup::flatten(prefix, &v, &mut flat);
    flat.into_iter()
        .filter_map(|(k, v)| {
            let k = k.trim_start_matches('.');
            keep(k).then(|| format!("{k}={v}"))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the leaf `key` is one of `names` or lies under one.
fn under(key: &str, names: &[&str]) -> bool {
    names.iter().any(|s| {
        key.strip_prefix(s)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    })
}

/// Server variables (beyond [`KEY_SETTINGS`]) and factor levels that differ between the first
/// setup and any other, with each setup's value.
fn other_differences(firsts: &[&Subject]) -> Vec<Fact> {
    let Some((base, rest)) = firsts.split_first() else {
        return Vec::new();
    };
    let diffs: Vec<Vec<setup::Difference>> =
        rest.iter().map(|s| setup::differences(base, s)).collect();
    let mut names: Vec<(String, String, String)> = Vec::new();
    for d in diffs.iter().flatten() {
        let (group, name) = match d.name.split_once('.') {
            Some(("server", n)) if n != "version" && !KEY_SETTINGS.contains(&n) => ("server", n),
            Some(("factor", n)) => ("factor", n),
            _ => continue,
        };
        if !names.iter().any(|(_, n, _)| n == name) {
            names.push((group.into(), name.into(), d.name.clone()));
        }
    }
    names
        .into_iter()
        .map(|(group, name, full)| {
            let base_value = diffs
                .iter()
                .flatten()
                .find(|d| d.name == full)
                .map(|d| d.a.clone())
                .unwrap_or_default();
            let mut values = vec![base_value.clone()];
            values.extend(diffs.iter().map(|ds| {
                ds.iter()
                    .find(|d| d.name == full)
                    .map_or_else(|| base_value.clone(), |d| d.b.clone())
            }));
            Fact {
                group,
                name,
                values,
            }
        })
        .collect()
}

/// One row per phase, by variant (in report order), sessions, settings and repeat.
fn placement(variants: &[String], points: &[Point<'_>]) -> Vec<PlacementRow> {
    let mut ps: Vec<&Point<'_>> = points.iter().collect();
    ps.sort_by_key(|p| {
        let v = variants.iter().position(|v| *v == p.subject.cell.variant);
        (v, p.threads(), p.key(), p.subject.cell.repeat)
    });
    ps.into_iter().map(placement_row).collect()
}

fn placement_row(p: &Point<'_>) -> PlacementRow {
    let r = &p.phase.result;
    let pct = |xs: &[f64]| {
        xs.iter()
            .map(|x| format!("{:.0}%", 100.0 * x))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (placement, busy, waited) = match &r.client {
        Some(c) => (c.placement(), pct(&c.busy), pct(&c.waited)),
        None => ("not recorded".into(), String::new(), String::new()),
    };
    PlacementRow {
        variant: p.subject.cell.variant.clone(),
        key: p.key(),
        repeat: p.subject.cell.repeat,
        placement,
        busy,
        waited,
        stability: r
            .stability
            .as_ref()
            .map_or_else(|| "not judged".into(), ToString::to_string),
    }
}

/// The qpslab versions, commands, dates and runs of the input, each listed once.
fn provenance(input: &ReportInput) -> Vec<(String, String)> {
    let mut versions: Vec<String> = Vec::new();
    let mut commands: Vec<String> = Vec::new();
    for s in &input.subjects {
        let m = &s.run.meta;
        if !versions.contains(&m.tool_version) {
            versions.push(m.tool_version.clone());
        }
        if !commands.contains(&m.command) {
            commands.push(m.command.clone());
        }
    }
    let times = input.subjects.iter().map(|s| s.run.meta.started_at);
    let first = times.clone().fold(f64::MAX, f64::min);
    let last = times.fold(f64::MIN, f64::max);
    let date = |t: f64| {
        qpslab_store::iso8601_utc(t)
            .replace('T', " ")
            .replace('Z', " UTC")
    };
    let mut out = vec![("qpslab".to_string(), versions.join(", "))];
    const SHOWN: usize = 3;
    let more = commands.len().saturating_sub(SHOWN);
    let mut cmds: Vec<String> = commands.into_iter().take(SHOWN).collect();
    if more > 0 {
        cmds.push(format!("(+{more} more)"));
    }
    out.push(("command".into(), cmds.join("; ")));
    if !input.subjects.is_empty() {
        out.push((
            "started".into(),
            if last > first {
                format!("{} to {}", date(first), date(last))
            } else {
                date(first)
            },
        ));
    }
    let runs: Vec<i64> = input.subjects.iter().map(|s| s.run.id.0).collect();
    out.push(("runs".into(), id_ranges(&runs)));
    out
}

/// Run ids as ranges, `1–36` or `3, 5–9, 12`: a study's dozens of runs in a few characters.
pub(crate) fn id_ranges(ids: &[i64]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => ids[i].to_string(),
            1 => format!("{}, {}", ids[i], ids[j]),
            _ => format!("{}–{}", ids[i], ids[j]),
        });
        i = j + 1;
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn run_ids_read_as_ranges() {
        assert_eq!(super::id_ranges(&[3, 1, 2, 4, 7, 9, 10]), "1–4, 7, 9, 10");
        assert_eq!(super::id_ranges(&[5]), "5");
        assert_eq!(super::id_ranges(&[]), "");
    }

    use super::*;
    use qpslab_core::cell::Cell;
    use qpslab_core::{PhaseResult, RunPlan, WorkloadKind, WorkloadOptions};
    use qpslab_store::{RunId, RunMeta, RunStatus, StoredPhase, StoredRun};

    /// A study cell of `variant` (run `id`) with its own seed and a buffer pool of `pool`.
    fn cell(id: i64, variant: &str, pool: &str) -> Subject {
        let mut plan = RunPlan::new(WorkloadOptions::new(WorkloadKind::OltpPointSelect));
        plan.workload.rand.seed = 1000 + id as u64;
        let mut server = qpslab_core::ServerInfo {
            version: "10.11.6-MariaDB".into(),
            flavor: "mariadb".into(),
            ..Default::default()
        };
        server
            .variables
            .insert("innodb_buffer_pool_size".into(), pool.into());
        server
            .variables
            .insert("datadir".into(), format!("/lab/s{id}/data"));
        let run = StoredRun {
            id: RunId(id),
            meta: RunMeta {
                uuid: format!("run-{id}"),
                started_at: 1_700_000_000.0 + id as f64,
                command: "qpslab lab run s.toml".into(),
                plan,
                target: format!("root@localhost/sbtest?socket=/lab/s{id}/mysqld.sock"),
                server,
                host: Default::default(),
                tool_version: "0.1.0".into(),
                study_id: None,
                cell_label: None,
            },
            status: RunStatus::Completed,
            finished_at: None,
            phases: vec![StoredPhase {
                seq: 1,
                recorded_at: 0.0,
                result: PhaseResult {
                    threads: 4,
                    ..Default::default()
                },
                telemetry: Vec::new(),
            }],
        };
        Subject {
            run,
            cell: Cell::lone(variant.to_string()),
        }
    }

    #[test]
    fn differences_by_variant_name_without_seeds_or_sandbox_paths() {
        let input = ReportInput {
            subjects: vec![
                cell(1, "small", "8M"),
                cell(2, "big", "1G"),
                cell(3, "big_again", "1G"),
                cell(4, "small", "8M"),
            ],
            ..Default::default()
        };
        let variants = model::variants(&input);
        let c = context(&input, &variants);
        assert_eq!(c.variants, ["small", "big", "big_again"]);
        let diffs: Vec<&Fact> = c.differences().collect();
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        assert_eq!(diffs[0].name, "innodb_buffer_pool_size");
        assert_eq!(diffs[0].values, ["8M", "1G", "1G"]);
        let all = serde_json::to_string(&c).unwrap();
        assert!(!all.contains("seed"), "{all}");
        let target = c.common().find(|f| f.name == "target").unwrap();
        assert_eq!(
            target.values[0],
            "root@localhost/sbtest?socket=<server dir>/mysqld.sock"
        );
        // Every phase has its row, by variant in report order.
        let rows: Vec<(&str, u32)> = c
            .placement
            .iter()
            .map(|p| (p.variant.as_str(), p.repeat))
            .collect();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].0, "small");
        assert_eq!(rows[1].0, "small");
        let started = &c.provenance.iter().find(|(k, _)| k == "started").unwrap().1;
        assert_eq!(
            started,
            "2023-11-14 22:13:21 UTC to 2023-11-14 22:13:24 UTC"
        );
    }
}
