//! `qpslab diff`: the same logged SQL on two servers, per class, with the evidence.

use super::{JsonPath, LogTypeArg, OutputArgs, SandboxHomeArgs, TableJsonMdHtml, WaitArgs};
use clap::Args;
use std::path::PathBuf;

/// `qpslab diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The captured log (MariaDB or MySQL slow or general log).
    #[arg(value_name = "LOG")]
    pub log: PathBuf,
    /// Side A: a DSN (mysql://user@host:port/db, password from MYSQL_PWD rather than the URL)
    /// or a sandbox NAME or NAME/DB. With a database, every statement runs there; without,
    /// in its logged database.
    #[arg(long = "a", value_name = "SIDE")]
    pub a: String,
    /// Side B, as side A.
    #[arg(long = "b", value_name = "SIDE")]
    pub b: String,
    #[command(flatten)]
    pub wait: WaitArgs,
    /// What kind of log it is.
    #[arg(long, value_enum, default_value = "slow")]
    pub log_type: LogTypeArg,
    /// Output: table (one line per class, then the regressions' evidence), json (the whole
    /// analysis), md or html (a report opening with the regressions).
    #[command(flatten)]
    pub output: OutputArgs<TableJsonMdHtml, JsonPath>,
    /// Write the --format report to FILE (atomically) instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    // The numbers in these two help texts come from the constants the rounds obey.
    #[arg(long, value_name = "N", help = format!(
        "Measured rounds per class (default: until the ratio's 95% interval is within ±{}%, \
         or --max-time-per-class, at least {})",
        qpslab_traffic::diff::PRECISION_PCT,
        qpslab_traffic::diff::MIN_ROUNDS
    ))]
    pub repeats: Option<usize>,
    #[arg(
        long,
        help = format!(
            "Seconds of rounds per class, at most (after the first {} rounds)",
            qpslab_traffic::diff::MIN_ROUNDS
        ),
        value_name = "S",
        default_value_t = 5.0,
        allow_negative_numbers = true
    )]
    pub max_time_per_class: f64,
    /// Changes smaller than this many percent are `same`, however significant.
    #[arg(
        long,
        value_name = "PCT",
        default_value_t = 5.0,
        allow_negative_numbers = true
    )]
    pub threshold: f64,
    /// Run writes, each inside BEGIN ... ROLLBACK (DDL is never run). Without it the log runs
    /// read-only: as an account that only reads (created for the diff where the connecting
    /// account may create users, else the connecting one, which must hold no write grant), in
    /// read-only transactions.
    #[arg(long)]
    pub allow_writes: bool,
    /// Without --allow-writes: run as the connecting account even when it can write or
    /// administer (you accept the risk).
    #[arg(long, conflicts_with = "allow_writes")]
    pub trust_account: bool,
    /// Without --allow-writes: also grant the diff's account EXECUTE on each SQL SECURITY
    /// INVOKER routine of its databases (they run with its read privileges); DEFINER routines
    /// run with their definer's rights and stay refused by the server.
    #[arg(long, conflicts_with = "allow_writes")]
    pub grant_execute: bool,
    /// Compare only the N most frequent classes.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Seconds a statement may run before its side is called stalled (a locked table, a hung
    /// server) and the diff stops.
    #[arg(
        long,
        value_name = "S",
        default_value_t = 60.0,
        allow_negative_numbers = true
    )]
    pub statement_timeout: f64,
    /// Statements sampled per class.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub sample: usize,
    /// After the measurement, run each side alone under `perf record -g` and write its
    /// folded stacks and flame graph (and a differential one, B against A) into DIR. Both
    /// servers must run on this machine (sandboxes, or sockets).
    #[arg(long, value_name = "DIR")]
    pub profile: Option<PathBuf>,
    /// Seconds each side runs under the profiler.
    #[arg(
        long,
        value_name = "S",
        default_value_t = 10.0,
        allow_negative_numbers = true,
        requires = "profile"
    )]
    pub profile_time: f64,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
}
