//! How a workload is measured (`run` and studies), and the keys only studies take.

use super::builder::{Warmup, MAX_CONNECTIONS, MAX_LOADERS};
use super::def::{
    bounded_seconds, choices, def, on_off, percentiles, percentiles_text, positive_seconds,
    seconds_text, OptionDef, Scope, ON_OFF, U32,
};
use super::value::{choice, float, int, list, seconds, switch, text};
use super::Transport;
use qpslab_core::plan::{Arrival, Isolation};

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

/// The run options, in the order `run --help` lists them.
pub(crate) static RUN: &[OptionDef] = &[
    def(
        "threads",
        Scope::Run,
        "LIST",
        "Client sessions, sysbench's --threads (for io: fio jobs; the server's OS threads are `server threads`); on the command line a list sweeps, one measured phase each: 1,4,16",
        "4",
        |b, v| {
            b.plan.threads = list(v)?
                .iter()
                .map(|t| int(t, 1, MAX_CONNECTIONS).map(|t| t as u32))
                .collect::<Result<_, _>>()?;
            b.threads_given = true;
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
    OptionDef {
        // sysbench's name for a warm-up in seconds (`--warmup-time=N`).
        alias: Some("warmup_time"),
        ..def(
            "warmup",
            Scope::Run,
            "S|auto",
            "Seconds run before each measured phase and never counted (its intervals are kept \
             apart and drawn in reports), or auto: until throughput has no trend, at most \
             --warmup-max (studies' default: auto)",
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
        )
    },
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
        percentiles_text,
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
    choices(
        def(
            "pipeline",
            Scope::Run,
            "on|off",
            "Write a transaction's statements back to back and read their replies together, \
             its COMMIT once all are in (off: one statement per round trip, as sysbench sends \
             them). The server then runs each transaction without network waits between its \
             statements: a different measurement, for transactional workloads (tpcc, \
             oltp_read_only/read_write/write_only)",
            "on",
            |b, v| {
                b.plan.pipeline = switch(v)?;
                Ok(())
            },
            |b| on_off(b.plan.pipeline),
        ),
        ON_OFF,
    ),
    def(
        "isolation",
        Scope::Run,
        "LEVEL",
        "Transaction isolation level every session sets: read-uncommitted, read-committed, \
         repeatable-read, serializable (sysbench-tpcc's RU, RC, RR, SER too); server: the \
         server's transaction_isolation",
        "read-committed",
        |b, v| {
            let t = text(v)?;
            b.plan.isolation = match t.as_str() {
                "server" => None,
                _ => Some(Isolation::parse(&t).ok_or_else(|| {
                    format!(
                        "must be one of {}, or server; not {t}",
                        Isolation::NAMES.join(", ")
                    )
                })?),
            };
            Ok(())
        },
        |b| b.plan.isolation.map_or("server", Isolation::name).to_string(),
    ),
    def(
        "client_cpus",
        Scope::Run,
        "LIST",
        "CPUs for qpslab's own event loops, e.g. 1 or 2-3",
        "0",
        |b, v| {
            b.plan.client_cpus =
                Some(qpslab_core::cpus::parse_cpu_list(&text(v)?).map_err(|e| e.to_string())?);
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
        "Event-loop threads (default: one per --client-cpus entry; else, on CPUs of the \
         client's own, one per CPU; sharing the server's CPUs, one per session up to two per \
         CPU, else one per CPU but one)",
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
        "Loader connections if the dataset has to be prepared first (default: one per table, \
         at most two per server CPU)",
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
         one wake-up serves many replies (0: never; tpcc's default, its transactions hold locks \
         across round trips)",
        "0",
        |b, v| {
            b.plan.engine.linger_us = int(v, 0, 1_000_000)?;
            b.linger_given = true;
            Ok(())
        },
        |b| b.plan.engine.linger_us.to_string(),
    ),
];

/// Keys only a study takes.
pub(crate) static STUDY: &[OptionDef] = &[
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
    choices(
        def(
            // Not `profile`: a variant's `profile` is its server's option file.
            "perf_profile",
            Scope::Study,
            "on|off",
            "Record the server with perf during each measured phase: folded stacks and a flame \
             graph per cell in the lab's profiles/STUDY directory",
            "on",
            |b, v| {
                b.profile = switch(v)?;
                Ok(())
            },
            |b| on_off(b.profile),
        ),
        ON_OFF,
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
