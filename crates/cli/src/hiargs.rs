//! From what the user typed to what the libraries take: plans, workload options, CPU lists.
//! Every check that can fail on user input happens here, with one clear line.

use crate::args::{ArrivalArg, OnOff, RunArgs, WorkloadArgs};
use crate::error::user;
use anyhow::Result;
use qpslab_core::plan::{Arrival, RateSpec, RunPlan, StopCondition};
use qpslab_core::{RandType, WorkloadKind, WorkloadOptions};
use qpslab_sandbox::SandboxSpec;

/// The longest `--time` or `--warmup`: a year of seconds.
pub const MAX_SECONDS: f64 = 365.0 * 86_400.0;
/// The slowest fixed rate: one transaction every 1000 s.
const MIN_RATE: f64 = 0.001;
/// The fastest fixed rate; far beyond any server, low enough that schedules stay exact.
const MAX_RATE: f64 = 1e9;
/// The most sessions, event loops or loader connections (MariaDB's own `max_connections`
/// limit is 100000).
pub const MAX_CONNECTIONS: u32 = 100_000;

/// Checks a count of loader connections.
pub fn loader_threads(flag: &str, n: u32) -> Result<u32> {
    if n == 0 || n > 1024 {
        return Err(user(format!("{flag} must be between 1 and 1024 (got {n})")));
    }
    Ok(n)
}

/// Parses `1,4,16` into a non-empty list of positive integers.
pub fn parse_threads(s: &str) -> Result<Vec<u32>> {
    let list: Vec<u32> = s
        .split(',')
        .map(|t| t.trim().parse::<u32>().ok().filter(|n| *n > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| {
            user(format!(
                "--threads '{s}': expected a list of positive integers like 1,4,16"
            ))
        })?;
    if list.iter().any(|n| *n > MAX_CONNECTIONS) {
        return Err(user(format!(
            "--threads '{s}': at most {MAX_CONNECTIONS} sessions"
        )));
    }
    Ok(list)
}

/// Parses a CPU list in taskset's format: `0`, `0-3`, `0-3,6` (the rules of
/// [`qpslab_core::cpus`]: sorted, deduplicated, non-empty, CPUs this machine has).
pub fn parse_cpus(s: &str) -> Result<Vec<usize>> {
    qpslab_core::cpus::parse_cpu_list(s).map_err(|e| user(e.to_string()))
}

/// Parses `50,95,99.9` into percentiles in (0, 100].
pub fn parse_percentiles(s: &str) -> Result<Vec<f64>> {
    s.split(',')
        .map(|p| {
            p.trim()
                .parse::<f64>()
                .ok()
                .filter(|p| *p > 0.0 && *p <= 100.0)
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| {
            user(format!(
                "--percentiles '{s}': expected numbers in (0, 100] like 50,95,99.9"
            ))
        })
}

/// Parses repeated `--set name=value` into pairs.
pub fn parse_settings(items: &[String]) -> Result<Vec<(String, String)>> {
    items
        .iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(user(format!(
                "--set '{s}': expected NAME=VALUE, e.g. innodb_buffer_pool_size=1G"
            ))),
        })
        .collect()
}

fn on(v: Option<OnOff>, default: bool) -> bool {
    v.map_or(default, |v| v == OnOff::On)
}

/// The sandbox spec shared by `server start` and the embedded default: `--set` in the CLI's
/// `NAME=VALUE` form, the rest checked by [`SandboxSpec::build`].
pub fn sandbox_spec(
    name: &str,
    settings: &[String],
    cpus: Option<&str>,
    malloc: Option<&str>,
    basedir: Option<&std::path::Path>,
) -> Result<SandboxSpec> {
    let settings = parse_settings(settings)?;
    Ok(SandboxSpec::build(name, &settings, cpus, malloc, basedir)?)
}

/// Builds the workload options: sysbench's defaults, overridden by what was given.
pub fn workload_options(a: &WorkloadArgs) -> Result<WorkloadOptions> {
    let kind: WorkloadKind = a
        .workload
        .parse()
        .map_err(|e: qpslab_core::workload::UnknownWorkload| user(e.to_string()))?;
    let mut w = WorkloadOptions::new(kind);
    macro_rules! set {
        ($($field:ident <- $arg:ident),* $(,)?) => { $( if let Some(v) = a.$arg.clone() { w.$field = v; } )* };
    }
    set!(tables <- tables, table_size <- table_size, range_size <- range_size,
         point_selects <- point_selects, simple_ranges <- simple_ranges, sum_ranges <- sum_ranges,
         order_ranges <- order_ranges, distinct_ranges <- distinct_ranges,
         index_updates <- index_updates, non_index_updates <- non_index_updates,
         delete_inserts <- delete_inserts, storage_engine <- mysql_storage_engine,
         create_table_options <- create_table_options, random_points <- random_points,
         number_of_ranges <- number_of_ranges, delta <- delta);
    w.range_selects = on(a.range_selects, w.range_selects);
    w.auto_inc = on(a.auto_inc, w.auto_inc);
    w.skip_trx = on(a.skip_trx, w.skip_trx);
    w.secondary = on(a.secondary, w.secondary);
    w.create_secondary = on(a.create_secondary, w.create_secondary);
    if let Some(t) = &a.rand_type {
        w.rand.rand_type = t.parse::<RandType>().map_err(user)?;
    }
    macro_rules! set_rand {
        ($($field:ident <- $arg:ident),* $(,)?) => { $( if let Some(v) = a.$arg { w.rand.$field = v; } )* };
    }
    set_rand!(spec_iter <- rand_spec_iter, spec_pct <- rand_spec_pct, spec_res <- rand_spec_res,
              pareto_h <- rand_pareto_h, zipfian_exp <- rand_zipfian_exp, seed <- rand_seed);
    if w.tables == 0 {
        return Err(user("--tables must be at least 1"));
    }
    if w.table_size == 0 {
        return Err(user("--table-size must be at least 1"));
    }
    if w.table_size > i32::MAX as u64 {
        return Err(user(
            "--table-size: ids are INTEGER columns, at most 2147483647 rows",
        ));
    }
    if w.rand.spec_pct > 100 || w.rand.spec_res > 100 {
        return Err(user(
            "--rand-spec-pct and --rand-spec-res are percentages (0-100)",
        ));
    }
    // Every limit the engine enforces, checked before a server starts or anything is built.
    qpslab_engine::workload::validate(&w).map_err(|e| user(e.to_string()))?;
    Ok(w)
}

/// Checks that a file can be created at `path` (its directory exists), so a mistyped path
/// fails before a server starts or a run is measured, not after.
pub fn output_path(flag: &str, path: &std::path::Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if path.is_dir() {
        return Err(user(format!("{flag} {}: is a directory", path.display())));
    }
    if !dir.is_dir() {
        return Err(user(format!(
            "{flag} {}: directory {} does not exist",
            path.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// Builds the run plan of `qpslab run`.
pub fn run_plan(a: &RunArgs) -> Result<RunPlan> {
    output_path("--db", &a.db.db)?;
    if let Some(json) = &a.json {
        output_path("--json", json)?;
    }
    let mut plan = RunPlan::new(workload_options(&a.workload)?);
    plan.threads = parse_threads(&a.threads)?;
    if a.time.is_some_and(|t| !(t > 0.0 && t <= MAX_SECONDS)) {
        return Err(user(format!(
            "--time must be a positive number of seconds, at most {MAX_SECONDS} (a year)"
        )));
    }
    if a.events == Some(0) {
        return Err(user("--events must be at least 1"));
    }
    plan.stop = match (a.time, a.events) {
        (None, None) => StopCondition {
            time_s: Some(10.0),
            events: None,
        },
        (time_s, events) => StopCondition { time_s, events },
    };
    let seconds = |flag: &str, v: f64| {
        if (0.0..=MAX_SECONDS).contains(&v) {
            Ok(v)
        } else {
            Err(user(format!(
                "{flag} must be zero or a positive number of seconds, at most {MAX_SECONDS}"
            )))
        }
    };
    if a.warmup.trim() == "auto" {
        let max_s = seconds("--warmup-max", a.warmup_max)?;
        plan.warmup_auto = Some(qpslab_core::AutoWarmup {
            max_s,
            took_s: None,
        });
        plan.warmup_s = qpslab_lab::options::AUTO_SESSION_WARMUP_S;
    } else {
        let w =
            a.warmup.trim().parse::<f64>().map_err(|_| {
                user("--warmup must be zero, a positive number of seconds, or auto")
            })?;
        plan.warmup_s = seconds("--warmup", w)?;
    }
    if a.settle == OnOff::On {
        let max_s = seconds("--settle-max", a.settle_max)?;
        plan.settle = Some(qpslab_core::SettleSpec {
            max_s,
            report: None,
        });
    }
    if !(a.report_interval >= 0.1 && a.report_interval <= 86_400.0) {
        return Err(user(
            "--report-interval must be between 0.1 s and 86400 s (a day)",
        ));
    }
    plan.report_interval_s = a.report_interval;
    plan.percentiles = parse_percentiles(&a.percentiles)?;
    plan.rate = match a.rate {
        None => None,
        Some(0.0) => None,
        Some(r) if (MIN_RATE..=MAX_RATE).contains(&r) => Some(RateSpec {
            per_second: r,
            arrival: match a.rate_arrival {
                ArrivalArg::Uniform => Arrival::Uniform,
                ArrivalArg::Poisson => Arrival::Poisson,
            },
        }),
        Some(_) => {
            return Err(user(format!(
                "--rate must be between {MIN_RATE} and {MAX_RATE} transactions per second (0: unlimited)"
            )))
        }
    };
    plan.prepared_statements = a.ps == OnOff::On;
    plan.client_cpus = a.client_cpus.as_deref().map(parse_cpus).transpose()?;
    if a.event_loops
        .is_some_and(|n| n == 0 || n > MAX_CONNECTIONS as usize)
    {
        return Err(user(format!(
            "--event-loops must be between 1 and {MAX_CONNECTIONS}"
        )));
    }
    if let Some(n) = a.prepare_threads {
        loader_threads("--prepare-threads", n)?;
    }
    plan.event_loops = a.event_loops;
    // sysbench: --rand-seed=0 seeds from the clock. Resolve it here so the stored plan holds the
    // seed actually used and the run can be repeated exactly.
    if plan.workload.rand.seed == 0 {
        plan.workload.rand.seed = clock_seed();
    }
    Ok(plan)
}

/// Checks the plan against the server's own limits before any session opens: each session
/// prepares every statement of the workload once per table, and one connection per session
/// plus our control and telemetry connections must fit.
pub fn check_server_limits(
    plan: &RunPlan,
    statements: usize,
    server: &qpslab_core::ServerInfo,
) -> Result<()> {
    let var = |name: &str| {
        server
            .variables
            .get(name)
            .and_then(|v| v.parse::<u64>().ok())
    };
    let sessions = u64::from(plan.threads.iter().copied().max().unwrap_or(1));
    if let Some(max) = var("max_connections") {
        if sessions + 2 > max {
            return Err(user(format!(
                "--threads {sessions}: the server accepts at most {max} connections \
                 (max_connections), and qpslab needs one per session plus 2"
            )));
        }
    }
    if let Some(max) = var("max_prepared_stmt_count") {
        let need = sessions * statements as u64;
        if plan.prepared_statements && need > max {
            return Err(user(format!(
                "{sessions} session(s) × {statements} prepared statements ({} table(s)) = {need}, \
                 more than the server's max_prepared_stmt_count {max}: use fewer --tables or \
                 --threads, --ps off, or raise max_prepared_stmt_count",
                plan.workload.tables
            )));
        }
    }
    Ok(())
}

fn clock_seed() -> u64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    (now.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_limits() {
        let mut plan = RunPlan::new(qpslab_core::WorkloadOptions::new(
            qpslab_core::WorkloadKind::OltpPointSelect,
        ));
        plan.threads = vec![1, 64];
        let mut server = qpslab_core::ServerInfo::default();
        assert!(
            check_server_limits(&plan, 300, &server).is_ok(),
            "unknown limits"
        );
        server
            .variables
            .insert("max_prepared_stmt_count".into(), "16382".into());
        server
            .variables
            .insert("max_connections".into(), "151".into());
        assert!(check_server_limits(&plan, 255, &server).is_ok());
        let e = check_server_limits(&plan, 257, &server).unwrap_err();
        assert!(e.to_string().contains("max_prepared_stmt_count"), "{e}");
        plan.prepared_statements = false;
        assert!(check_server_limits(&plan, 257, &server).is_ok());
        plan.threads = vec![150];
        let e = check_server_limits(&plan, 1, &server).unwrap_err();
        assert!(e.to_string().contains("max_connections"), "{e}");
    }

    #[test]
    fn thread_lists() {
        assert_eq!(parse_threads("1,4, 16").unwrap(), vec![1, 4, 16]);
        for bad in ["", "0", "1,,2", "a", "-1", "200000"] {
            assert!(parse_threads(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpus("0").unwrap(), vec![0]);
        assert!(parse_cpus("1-0").is_err());
        assert!(parse_cpus("x").is_err());
        assert!(parse_cpus("100000").is_err());
    }

    #[test]
    fn percentiles_and_settings() {
        assert_eq!(parse_percentiles("50,99.9").unwrap(), vec![50.0, 99.9]);
        assert!(parse_percentiles("0").is_err());
        assert!(parse_percentiles("101").is_err());
        let s = parse_settings(&["a=1".into(), "b = x=y".into()]).unwrap();
        assert_eq!(
            s,
            vec![("a".into(), "1".into()), ("b".into(), "x=y".into())]
        );
        assert!(parse_settings(&["novalue".into()]).is_err());
    }
}
