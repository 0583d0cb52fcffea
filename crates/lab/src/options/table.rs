//! Every run option, declared once: its name (the study key; the flag is the same with dashes),
//! what it takes, its help, how its value is checked and applied, and how its default is shown.
//! `qpslab run`/`prepare` build their flags from this table and a spec's `[defaults]` and
//! `[sweep]` accept exactly its keys, so an option cannot exist in one and not the other.

use super::builder::{Builder, Warmup, MAX_CONNECTIONS, MAX_LOADERS, MAX_SECONDS};
use super::value::{choice, float, int, list, seconds, switch, text};
use super::Transport;
use qpslab_core::plan::Arrival;
use qpslab_core::{RandType, WorkloadKind};
use serde_json::Value;

/// Where an option applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The workload and its dataset: `prepare`, `run` and studies.
    Workload,
    /// How a workload is measured: `run` and studies.
    Run,
    /// Study keys only (repeats, retries, transport).
    Study,
}

/// One option.
#[derive(Clone, Copy)]
pub struct OptionDef {
    /// The study key, `table_size`; the flag is `--table-size`.
    pub name: &'static str,
    /// An older key still accepted in specs (`duration` for `time`).
    pub alias: Option<&'static str>,
    /// Where it applies.
    pub scope: Scope,
    /// The placeholder in help, `N`.
    pub value_name: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// The values it takes, if it is a choice.
    pub choices: &'static [&'static str],
    /// A valid value other than the default, as typed on a command line.
    pub example: &'static str,
    /// Whether `[sweep]` may list it (a study's shape, such as `repeats`, is set once).
    pub sweepable: bool,
    pub(crate) apply: fn(&mut Builder, &Value) -> Result<(), String>,
    pub(crate) default: fn(&Builder) -> String,
}

impl OptionDef {
    /// The command-line flag, `--table-size`.
    pub fn flag(&self) -> String {
        format!("--{}", self.name.replace('_', "-"))
    }

    /// Whether the option is a command's positional argument rather than a flag.
    pub fn positional(&self) -> bool {
        self.name == "workload"
    }
}

impl std::fmt::Debug for OptionDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

const fn def(
    name: &'static str,
    scope: Scope,
    value_name: &'static str,
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Builder, &Value) -> Result<(), String>,
    default: fn(&Builder) -> String,
) -> OptionDef {
    OptionDef {
        name,
        alias: None,
        scope,
        value_name,
        help,
        choices: &[],
        example,
        sweepable: true,
        apply,
        default,
    }
}

const fn choices(d: OptionDef, choices: &'static [&'static str]) -> OptionDef {
    OptionDef { choices, ..d }
}

const ON_OFF: &[&str] = &["on", "off"];
const U32: u64 = u32::MAX as u64;

fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

/// A count of the workload: `$field` of the plan's workload options, from `$min`.
macro_rules! count {
    ($name:literal, $field:ident, $min:expr, $max:expr, $ex:literal, $help:literal) => {
        def(
            $name,
            Scope::Workload,
            "N",
            $help,
            $ex,
            |b, v| {
                b.plan.workload.$field = int(v, $min, $max)?.try_into().map_err(|_| "too big")?;
                Ok(())
            },
            |b| b.plan.workload.$field.to_string(),
        )
    };
}

/// An on/off option of the workload.
macro_rules! workload_switch {
    ($name:literal, $field:ident, $ex:literal, $help:literal) => {
        choices(
            def(
                $name,
                Scope::Workload,
                "on|off",
                $help,
                $ex,
                |b, v| {
                    b.plan.workload.$field = switch(v)?;
                    Ok(())
                },
                |b| on_off(b.plan.workload.$field),
            ),
            ON_OFF,
        )
    };
}

/// A parameter of the random distributions.
macro_rules! rand_param {
    ($name:literal, $field:ident, $read:expr, $ex:literal, $help:literal) => {
        def(
            $name,
            Scope::Workload,
            "N",
            $help,
            $ex,
            |b, v| {
                let read: fn(&Value) -> Result<_, String> = $read;
                b.plan.workload.rand.$field = read(v)?;
                Ok(())
            },
            |b| b.plan.workload.rand.$field.to_string(),
        )
    };
}

/// A bound in seconds (zero or more, at most a year) kept in the builder's `$field`.
macro_rules! seconds_bound {
    ($name:literal, $field:ident, $ex:literal, $help:literal) => {
        def(
            $name,
            Scope::Run,
            "S",
            $help,
            $ex,
            |b, v| {
                b.$field = bounded_seconds(v)?;
                Ok(())
            },
            |b| seconds_text(b.$field),
        )
    };
}

fn percent(v: &Value) -> Result<u32, String> {
    Ok(int(v, 0, 100)? as u32)
}

fn percentiles(v: &Value) -> Result<Vec<f64>, String> {
    let ps = list(v)?
        .iter()
        .map(|p| float(p).ok().filter(|p| *p > 0.0 && *p <= 100.0))
        .collect::<Option<Vec<f64>>>()
        .filter(|ps| !ps.is_empty());
    ps.ok_or_else(|| format!("expects numbers in (0, 100] like 50,95,99.9, not {v}"))
}

fn positive_seconds(v: &Value) -> Result<f64, String> {
    match seconds(v)? {
        s if s > 0.0 && s <= MAX_SECONDS => Ok(s),
        _ => Err(format!(
            "must be a positive number of seconds, at most {MAX_SECONDS} (a year)"
        )),
    }
}

fn bounded_seconds(v: &Value) -> Result<f64, String> {
    match seconds(v)? {
        s if s <= MAX_SECONDS => Ok(s),
        _ => Err(format!(
            "must be zero or a positive number of seconds, at most {MAX_SECONDS} (a year)"
        )),
    }
}

fn seconds_text(s: f64) -> String {
    format!("{s}")
}

/// The options, in the order `run --help` lists them.
pub static OPTIONS: &[OptionDef] = &[
    def(
        "workload",
        Scope::Workload,
        "WORKLOAD",
        "Workload: oltp_point_select, oltp_read_only, oltp_read_write, oltp_write_only, \
         oltp_update_index, oltp_update_non_index, oltp_insert, oltp_delete, \
         select_random_points, select_random_ranges",
        "oltp_point_select",
        |b, v| {
            let kind: WorkloadKind = text(v)?.parse().map_err(|e| format!("{e}"))?;
            b.plan.workload.kind = kind;
            Ok(())
        },
        |b| b.plan.workload.kind.name().to_string(),
    ),
    count!("tables", tables, 1, U32, "2", "Number of tables"),
    count!(
        "table_size",
        table_size,
        1,
        i32::MAX as u64,
        "500",
        "Rows per table"
    ),
    count!(
        "range_size",
        range_size,
        1,
        U32,
        "50",
        "Range size for range SELECT queries"
    ),
    count!(
        "point_selects",
        point_selects,
        0,
        U32,
        "5",
        "Point SELECT queries per transaction"
    ),
    count!(
        "simple_ranges",
        simple_ranges,
        0,
        U32,
        "2",
        "Simple range SELECT queries per transaction"
    ),
    count!(
        "sum_ranges",
        sum_ranges,
        0,
        U32,
        "2",
        "SELECT SUM() queries per transaction"
    ),
    count!(
        "order_ranges",
        order_ranges,
        0,
        U32,
        "2",
        "SELECT ORDER BY queries per transaction"
    ),
    count!(
        "distinct_ranges",
        distinct_ranges,
        0,
        U32,
        "2",
        "SELECT DISTINCT queries per transaction"
    ),
    count!(
        "index_updates",
        index_updates,
        0,
        U32,
        "2",
        "UPDATE index queries per transaction"
    ),
    count!(
        "non_index_updates",
        non_index_updates,
        0,
        U32,
        "2",
        "UPDATE non-index queries per transaction"
    ),
    count!(
        "delete_inserts",
        delete_inserts,
        0,
        U32,
        "2",
        "DELETE/INSERT combinations per transaction"
    ),
    workload_switch!(
        "range_selects",
        range_selects,
        "off",
        "Enable or disable all range SELECT queries"
    ),
    workload_switch!(
        "auto_inc",
        auto_inc,
        "off",
        "Use AUTO_INCREMENT on the id column"
    ),
    workload_switch!(
        "skip_trx",
        skip_trx,
        "on",
        "Don't start explicit transactions (no BEGIN/COMMIT)"
    ),
    workload_switch!(
        "secondary",
        secondary,
        "on",
        "Use a secondary index in place of the PRIMARY KEY"
    ),
    workload_switch!(
        "create_secondary",
        create_secondary,
        "off",
        "Create the secondary index k_N after loading"
    ),
    def(
        "mysql_storage_engine",
        Scope::Workload,
        "ENGINE",
        "Storage engine of the tables",
        "aria",
        |b, v| {
            b.plan.workload.storage_engine = text(v)?;
            Ok(())
        },
        |b| b.plan.workload.storage_engine.clone(),
    ),
    def(
        "create_table_options",
        Scope::Workload,
        "OPTIONS",
        "Extra CREATE TABLE options",
        "ROW_FORMAT=COMPACT",
        |b, v| {
            b.plan.workload.create_table_options = text(v)?;
            Ok(())
        },
        |b| b.plan.workload.create_table_options.clone(),
    ),
    count!(
        "random_points",
        random_points,
        1,
        U32,
        "5",
        "Points per query of select_random_points"
    ),
    count!(
        "number_of_ranges",
        number_of_ranges,
        1,
        U32,
        "5",
        "Ranges per query of select_random_ranges"
    ),
    count!(
        "delta",
        delta,
        1,
        U32,
        "3",
        "Width of each range of select_random_ranges"
    ),
    choices(
        def(
            "rand_type",
            Scope::Workload,
            "TYPE",
            "Random distribution of ids",
            "uniform",
            |b, v| {
                b.plan.workload.rand.rand_type = text(v)?.parse::<RandType>()?;
                Ok(())
            },
            |b| b.plan.workload.rand.rand_type.to_string(),
        ),
        &["uniform", "gaussian", "special", "pareto", "zipfian"],
    ),
    rand_param!(
        "rand_spec_iter",
        spec_iter,
        |v| Ok(int(v, 1, U32)? as u32),
        "6",
        "Iterations of the special and gaussian distributions"
    ),
    rand_param!(
        "rand_spec_pct",
        spec_pct,
        percent,
        "2",
        "Percentage of values treated as special"
    ),
    rand_param!(
        "rand_spec_res",
        spec_res,
        percent,
        "50",
        "Percentage of draws that hit the special values"
    ),
    rand_param!(
        "rand_pareto_h",
        pareto_h,
        float,
        "0.3",
        "Pareto distribution parameter h"
    ),
    rand_param!(
        "rand_zipfian_exp",
        zipfian_exp,
        float,
        "0.9",
        "Zipfian distribution exponent"
    ),
    rand_param!(
        "rand_seed",
        seed,
        |v| int(v, 0, u64::MAX),
        "42",
        "Seed of the random generator (0: from the clock)"
    ),
    def(
        "threads",
        Scope::Run,
        "LIST",
        "Sessions; on the command line a list sweeps, one measured phase each: 1,4,16",
        "4",
        |b, v| {
            b.plan.threads = list(v)?
                .iter()
                .map(|t| int(t, 1, MAX_CONNECTIONS).map(|t| t as u32))
                .collect::<Result<_, _>>()?;
            Ok(())
        },
        |b| {
            b.plan
                .threads
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        },
    ),
    OptionDef {
        alias: Some("duration"),
        ..def(
            "time",
            Scope::Run,
            "S",
            "Seconds of measurement per phase (10 unless --events is given)",
            "3",
            |b, v| {
                b.time_s = Some(positive_seconds(v)?);
                Ok(())
            },
            |b| {
                b.time_s
                    .or(b.plan.stop.time_s)
                    .map_or("none".into(), seconds_text)
            },
        )
    },
    def(
        "events",
        Scope::Run,
        "N",
        "Transactions per phase across all sessions",
        "1000",
        |b, v| {
            b.events = Some(int(v, 1, u64::MAX)?);
            Ok(())
        },
        |b| b.events.map_or("none".into(), |e| e.to_string()),
    ),
    def(
        "warmup",
        Scope::Run,
        "S|auto",
        "Seconds run before each measured phase and discarded, or auto: until throughput has \
         no trend, at most --warmup-max (studies' default: auto)",
        "auto",
        |b, v| {
            b.warmup = match text(v)?.as_str() {
                "auto" => Warmup::Auto,
                _ => Warmup::Seconds(bounded_seconds(v).map_err(|_| {
                    format!("must be zero or a positive number of seconds (at most a year), or auto; not {v}")
                })?),
            };
            Ok(())
        },
        |b| match b.warmup {
            Warmup::Auto => "auto".into(),
            Warmup::Seconds(s) => seconds_text(s),
        },
    ),
    seconds_bound!(
        "warmup_max",
        warmup_max_s,
        "30",
        "The longest auto warm-up, in seconds"
    ),
    choices(
        def(
            "settle",
            Scope::Run,
            "on|off",
            "Settle a sandbox before measuring (drain dirty pages and purge, warm the buffer \
             pool); an external server is only checked",
            "off",
            |b, v| {
                b.settle = switch(v)?;
                Ok(())
            },
            |b| on_off(b.settle),
        ),
        ON_OFF,
    ),
    seconds_bound!(
        "settle_max",
        settle_max_s,
        "30",
        "The longest wait for the drain when settling, in seconds"
    ),
    def(
        "report_interval",
        Scope::Run,
        "S",
        "Seconds per live line and stored sample",
        "0.5",
        |b, v| match seconds(v)? {
            s if (0.1..=86_400.0).contains(&s) => {
                b.plan.report_interval_s = s;
                Ok(())
            }
            _ => Err("must be between 0.1 s and 86400 s (a day)".into()),
        },
        |b| seconds_text(b.plan.report_interval_s),
    ),
    def(
        "percentiles",
        Scope::Run,
        "LIST",
        "Latency percentiles to report",
        "50,99.9",
        |b, v| {
            b.plan.percentiles = percentiles(v)?;
            Ok(())
        },
        |b| {
            b.plan
                .percentiles
                .iter()
                .map(f64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        },
    ),
    def(
        "rate",
        Scope::Run,
        "N",
        "Fixed arrival rate in transactions per second across all sessions (0: as fast as \
         possible)",
        "100",
        |b, v| match float(v)? {
            r if r == 0.0 || (0.001..=1e9).contains(&r) => {
                b.rate = r;
                Ok(())
            }
            _ => Err("must be between 0.001 and 1e9 transactions per second (0: unlimited)".into()),
        },
        |b| b.rate.to_string(),
    ),
    choices(
        def(
            "rate_arrival",
            Scope::Run,
            "KIND",
            "Spacing of arrivals with --rate",
            "uniform",
            |b, v| {
                b.arrival = match choice(v, &["uniform", "poisson"])?.as_str() {
                    "uniform" => Arrival::Uniform,
                    _ => Arrival::Poisson,
                };
                Ok(())
            },
            |b| match b.arrival {
                Arrival::Uniform => "uniform".into(),
                Arrival::Poisson => "poisson".into(),
            },
        ),
        &["uniform", "poisson"],
    ),
    choices(
        def(
            "ps",
            Scope::Run,
            "on|off",
            "Server-side prepared statements (on) or the text protocol (off)",
            "off",
            |b, v| {
                b.plan.prepared_statements = switch(v)?;
                Ok(())
            },
            |b| on_off(b.plan.prepared_statements),
        ),
        ON_OFF,
    ),
    def(
        "client_cpus",
        Scope::Run,
        "LIST",
        "CPUs for qpslab's own event loops, e.g. 1 or 2-3",
        "0",
        |b, v| {
            b.plan.client_cpus = Some(super::parse_cpu_list(&text(v)?)?);
            Ok(())
        },
        |b| {
            b.plan
                .client_cpus
                .as_ref()
                .map_or("none".into(), |c| format!("{c:?}"))
        },
    ),
    def(
        "event_loops",
        Scope::Run,
        "N",
        "Event-loop threads (default: one per --client-cpus entry; else one per session up to \
         two sessions per core, else one per four cores)",
        "1",
        |b, v| {
            b.plan.event_loops = Some(int(v, 1, MAX_CONNECTIONS)? as usize);
            Ok(())
        },
        |b| b.plan.event_loops.map_or("auto".into(), |n| n.to_string()),
    ),
    def(
        "prepare_threads",
        Scope::Run,
        "N",
        "Loader connections if the dataset has to be prepared first (default: 2 per core)",
        "2",
        |b, v| {
            b.prepare_threads = Some(int(v, 1, MAX_LOADERS)? as u32);
            Ok(())
        },
        |b| b.prepare_threads.map_or("auto".into(), |n| n.to_string()),
    ),
    choices(
        def(
            "io_uring",
            Scope::Run,
            "on|off",
            "Write the requests of one wake-up with a single io_uring submission (off: plain \
             writes; for A/B runs of the client)",
            "off",
            |b, v| {
                b.plan.engine.io_uring = switch(v)?;
                Ok(())
            },
            |b| on_off(b.plan.engine.io_uring),
        ),
        ON_OFF,
    ),
    def(
        "linger_us",
        Scope::Run,
        "US",
        "Microseconds an event loop naps before waiting when many requests are in flight, so \
         one wake-up serves many replies (0: never)",
        "0",
        |b, v| {
            b.plan.engine.linger_us = int(v, 0, 1_000_000)?;
            Ok(())
        },
        |b| b.plan.engine.linger_us.to_string(),
    ),
    choices(
        def(
            "transport",
            Scope::Study,
            "KIND",
            "How a study reaches a sandbox: its Unix socket or TCP to 127.0.0.1",
            "tcp",
            |b, v| {
                b.transport = match choice(v, &["socket", "tcp"])?.as_str() {
                    "tcp" => Transport::Tcp,
                    _ => Transport::Socket,
                };
                Ok(())
            },
            |b| b.transport.to_string(),
        ),
        &["socket", "tcp"],
    ),
    def(
        "retries",
        Scope::Study,
        "N",
        "Measurements again of a cell whose verdict is unstable (0: none)",
        "1",
        |b, v| {
            b.retries = int(v, 0, 100)? as u32;
            Ok(())
        },
        |b| b.retries.to_string(),
    ),
    OptionDef {
        sweepable: false,
        ..def(
            "repeats",
            Scope::Study,
            "N",
            "Measured cells per point of the matrix (set once, in [defaults])",
            "2",
            |b, v| {
                b.repeats = int(v, 1, U32)? as u32;
                Ok(())
            },
            |b| b.repeats.to_string(),
        )
    },
];

/// The option named `name` (or an alias of it).
pub fn find(name: &str) -> Option<&'static OptionDef> {
    OPTIONS
        .iter()
        .find(|d| d.name == name || d.alias == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::builder::Origin;
    use crate::options::resolve::resolve;

    #[test]
    fn names_are_unique_and_examples_apply() {
        let mut seen = std::collections::HashSet::new();
        for d in OPTIONS {
            assert!(seen.insert(d.name), "{} twice", d.name);
            let ex = Value::String(d.example.into());
            let r = resolve([(d.name, &ex)], Origin::Flags)
                .unwrap_or_else(|e| panic!("{}: example {}: {e}", d.name, d.example));
            let default = super::super::resolve::default_text(d);
            assert_ne!(
                (d.default)(&{
                    let mut b = Builder::new(Origin::Flags);
                    (d.apply)(&mut b, &ex).unwrap();
                    b
                }),
                default,
                "{}: the example {} should differ from the default",
                d.name,
                d.example
            );
            drop(r);
            for c in d.choices {
                assert!((d.apply)(
                    &mut Builder::new(Origin::Flags),
                    &Value::String((*c).into())
                )
                .is_ok());
            }
        }
    }

    #[test]
    fn errors_name_the_option_as_written() {
        let v = Value::String("0".into());
        let e = resolve([("table_size", &v)], Origin::Flags).unwrap_err();
        assert!(e.starts_with("--table-size:"), "{e}");
        let e = resolve([("table_size", &v)], Origin::Spec).unwrap_err();
        assert!(e.starts_with("table_size:"), "{e}");
        assert_eq!(find("duration").map(|d| d.name), Some("time"));
    }
}
