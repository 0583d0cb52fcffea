//! What the user typed: clap definitions only. Turning these into plans and targets happens in
//! `target.rs` and the `cmd` modules, so that nothing below the CLI ever sees clap.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// A performance lab for MySQL-family servers.
#[derive(Parser, Debug)]
#[command(name = "qpslab", version, about, disable_help_subcommand = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a sysbench-compatible workload over a sweep of thread counts and store the results.
    Run(Box<RunArgs>),
    /// Create and load the workload's tables (sysbench's `prepare`).
    Prepare(Box<PrepareArgs>),
    /// Drop the tables qpslab created (never anything else).
    Cleanup(CleanupArgs),
    /// List stored runs, or show one run's phases.
    Show(ShowArgs),
    /// Start, stop, list and inspect sandbox servers.
    #[command(subcommand)]
    Server(ServerCommand),
    /// Studies: matrices and factorial experiments from a spec file.
    #[command(subcommand)]
    Lab(crate::cmd::lab::LabCommand),
    /// Write a report (HTML, Markdown, JSON) of runs or studies.
    Report(crate::cmd::report::ReportArgs),
    /// Compare two runs or two variants of a study, with confidence intervals.
    Compare(crate::cmd::report::CompareArgs),
}

/// Where the results store lives.
#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// Results database (SQLite).
    #[arg(
        long,
        env = "QPSLAB_DB",
        default_value = "qpslab.db",
        value_name = "PATH"
    )]
    pub db: PathBuf,
}

/// Where sandboxes live.
#[derive(Args, Debug, Clone)]
pub struct LabArgs {
    /// Lab directory holding sandbox servers (default: $QPSLAB_LAB or ~/.qpslab).
    #[arg(long, value_name = "DIR")]
    pub lab: Option<PathBuf>,
}

/// Which server to talk to. With none of these, an embedded sandbox is started for the command.
#[derive(Args, Debug, Clone, Default)]
pub struct TargetArgs {
    /// Server URL: mysql://user[:pass]@host[:port]/db[?socket=PATH&ssl-mode=..&ssl-ca=..].
    /// A password in the URL is visible to other local users (ps, /proc): prefer
    /// --password-file, MYSQL_PWD or --defaults-file. An external server is never changed by
    /// `run`; only `prepare` and `cleanup` write there.
    #[arg(long, value_name = "DSN")]
    pub target: Option<String>,
    /// Unix socket of the server.
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// A running sandbox started with `qpslab server start NAME`.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["target", "socket"])]
    pub sandbox: Option<String>,
    /// Account name (overrides the DSN's and the option file's).
    #[arg(long)]
    pub user: Option<String>,
    /// Schema holding the sbtest tables (default: the DSN's, else `sbtest`).
    #[arg(long, value_name = "NAME")]
    pub database: Option<String>,
    /// Read [client] options (user, password, host, port, socket, database, ssl-*) from this file.
    #[arg(long, value_name = "FILE")]
    pub defaults_file: Option<PathBuf>,
    /// Read the password from the first line of this file (instead of the URL, where `ps`
    /// shows it).
    #[arg(long, value_name = "FILE", conflicts_with = "sandbox")]
    pub password_file: Option<PathBuf>,
    /// TLS: DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY (as the mysql client).
    #[arg(long, value_name = "MODE")]
    pub ssl_mode: Option<String>,
    /// CA certificate (PEM) for VERIFY_CA / VERIFY_IDENTITY.
    #[arg(long, value_name = "FILE")]
    pub ssl_ca: Option<PathBuf>,
}

/// How an embedded sandbox (no target given) is started.
#[derive(Args, Debug, Clone, Default)]
pub struct EmbeddedArgs {
    /// Server setting for the embedded sandbox, my.cnf style (repeatable): --set innodb_buffer_pool_size=1G.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub settings: Vec<String>,
    /// CPUs for the embedded sandbox server, e.g. 0 or 0-3,6.
    #[arg(long, value_name = "LIST")]
    pub server_cpus: Option<String>,
    /// Allocator preloaded into the embedded sandbox server: jemalloc, tcmalloc, system, or the
    /// path of a shared library.
    #[arg(long, value_name = "ALLOCATOR")]
    pub malloc: Option<String>,
    /// Server installation (unpacked tarball) for the embedded sandbox.
    #[arg(long, value_name = "DIR")]
    pub basedir: Option<PathBuf>,
    /// Leave the embedded sandbox running afterwards (it is listed by `qpslab server list`).
    #[arg(long)]
    pub keep: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrivalArg {
    Uniform,
    Poisson,
}

/// sysbench's workload options, by their sysbench names.
#[derive(Args, Debug, Clone)]
pub struct WorkloadArgs {
    /// Workload: oltp_point_select, oltp_read_only, oltp_read_write, oltp_write_only,
    /// oltp_update_index, oltp_update_non_index, oltp_insert, oltp_delete, select_random_points,
    /// select_random_ranges.
    pub workload: String,
    /// Number of tables.
    #[arg(long)]
    pub tables: Option<u32>,
    /// Rows per table.
    #[arg(long)]
    pub table_size: Option<u64>,
    /// Range size for range SELECT queries.
    #[arg(long)]
    pub range_size: Option<u64>,
    /// Point SELECT queries per transaction.
    #[arg(long)]
    pub point_selects: Option<u32>,
    /// Simple range SELECT queries per transaction.
    #[arg(long)]
    pub simple_ranges: Option<u32>,
    /// SELECT SUM() queries per transaction.
    #[arg(long)]
    pub sum_ranges: Option<u32>,
    /// SELECT ORDER BY queries per transaction.
    #[arg(long)]
    pub order_ranges: Option<u32>,
    /// SELECT DISTINCT queries per transaction.
    #[arg(long)]
    pub distinct_ranges: Option<u32>,
    /// UPDATE index queries per transaction.
    #[arg(long)]
    pub index_updates: Option<u32>,
    /// UPDATE non-index queries per transaction.
    #[arg(long)]
    pub non_index_updates: Option<u32>,
    /// DELETE/INSERT combinations per transaction.
    #[arg(long)]
    pub delete_inserts: Option<u32>,
    /// Enable or disable all range SELECT queries.
    #[arg(long, value_enum)]
    pub range_selects: Option<OnOff>,
    /// Use AUTO_INCREMENT on the id column.
    #[arg(long, value_enum)]
    pub auto_inc: Option<OnOff>,
    /// Don't start explicit transactions (no BEGIN/COMMIT).
    #[arg(long, value_enum)]
    pub skip_trx: Option<OnOff>,
    /// Use a secondary index in place of the PRIMARY KEY.
    #[arg(long, value_enum)]
    pub secondary: Option<OnOff>,
    /// Create the secondary index k_N after loading.
    #[arg(long, value_enum)]
    pub create_secondary: Option<OnOff>,
    /// Storage engine of the tables.
    #[arg(long, value_name = "ENGINE")]
    pub mysql_storage_engine: Option<String>,
    /// Extra CREATE TABLE options.
    #[arg(long, value_name = "OPTIONS")]
    pub create_table_options: Option<String>,
    /// Points per query of select_random_points.
    #[arg(long)]
    pub random_points: Option<u32>,
    /// Ranges per query of select_random_ranges.
    #[arg(long)]
    pub number_of_ranges: Option<u32>,
    /// Width of each range of select_random_ranges.
    #[arg(long)]
    pub delta: Option<u64>,
    /// Random distribution of ids: uniform, gaussian, special, pareto, zipfian.
    #[arg(long, value_name = "TYPE")]
    pub rand_type: Option<String>,
    /// Iterations of the special and gaussian distributions.
    #[arg(long)]
    pub rand_spec_iter: Option<u32>,
    /// Percentage of values treated as special.
    #[arg(long)]
    pub rand_spec_pct: Option<u32>,
    /// Percentage of draws that hit the special values.
    #[arg(long)]
    pub rand_spec_res: Option<u32>,
    /// Pareto distribution parameter h.
    #[arg(long)]
    pub rand_pareto_h: Option<f64>,
    /// Zipfian distribution exponent.
    #[arg(long)]
    pub rand_zipfian_exp: Option<f64>,
    /// Seed of the random generator (0: from the clock).
    #[arg(long)]
    pub rand_seed: Option<u64>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub lab: LabArgs,
    /// Sessions, one measured phase each: 1,4,16 (a list sweeps).
    #[arg(long, value_name = "LIST", default_value = "1")]
    pub threads: String,
    /// Seconds of measurement per phase (default 10 unless --events is given).
    #[arg(long, value_name = "S")]
    pub time: Option<f64>,
    /// Transactions per phase across all sessions.
    #[arg(long, value_name = "N")]
    pub events: Option<u64>,
    /// Seconds run before each measured phase and discarded, or `auto`: until throughput has
    /// no trend, at most --warmup-max.
    #[arg(long, value_name = "S|auto", default_value = "0")]
    pub warmup: String,
    /// The longest `--warmup auto`, in seconds.
    #[arg(long, value_name = "S", default_value_t = 60.0)]
    pub warmup_max: f64,
    /// Settle a sandbox before measuring (drain dirty pages and purge, warm the buffer pool);
    /// an external server is only checked.
    #[arg(long, value_name = "on|off", default_value = "on")]
    pub settle: OnOff,
    /// The longest wait for the drain when settling, in seconds.
    #[arg(long, value_name = "S", default_value_t = 120.0)]
    pub settle_max: f64,
    /// Seconds per live line and stored sample.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub report_interval: f64,
    /// Latency percentiles to report.
    #[arg(long, value_name = "LIST", default_value = "95,99")]
    pub percentiles: String,
    /// Fixed arrival rate in transactions per second across all sessions (0: as fast as possible).
    #[arg(long, value_name = "N")]
    pub rate: Option<f64>,
    /// Spacing of arrivals with --rate.
    #[arg(long, value_enum, default_value = "poisson")]
    pub rate_arrival: ArrivalArg,
    /// Server-side prepared statements (on) or the text protocol (off).
    #[arg(long, value_enum, default_value = "on")]
    pub ps: OnOff,
    /// CPUs for qpslab's own event loops, e.g. 1 or 2-3.
    #[arg(long, value_name = "LIST")]
    pub client_cpus: Option<String>,
    /// Event-loop threads (default: one per --client-cpus entry; else one per session up to two
    /// sessions per core, else one per four cores).
    #[arg(long, value_name = "N")]
    pub event_loops: Option<usize>,
    /// Threads used if the dataset has to be prepared first.
    #[arg(long, value_name = "N")]
    pub prepare_threads: Option<u32>,
    /// Also write the run as JSON to this file.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub workload: WorkloadArgs,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
    #[command(flatten)]
    pub lab: LabArgs,
    /// Loader connections (default: 2 per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
    /// Create the database when it does not exist (on an external server it is otherwise an
    /// error; sandboxes get theirs created anyway).
    #[arg(long)]
    pub create_db: bool,
}

#[derive(Args, Debug)]
pub struct CleanupArgs {
    /// Workload (accepted for sysbench symmetry; every qpslab-created table is dropped).
    pub workload: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub lab: LabArgs,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Run id (default: list the latest runs).
    pub run: Option<i64>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// With no RUN: how many runs to list.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Subcommand, Debug)]
pub enum ServerCommand {
    /// Start a sandbox server and leave it running.
    Start(ServerStartArgs),
    /// Stop a sandbox server (its data directory is kept unless --rm).
    Stop(ServerStopArgs),
    /// Delete a stopped sandbox (its data directory, logs and password).
    Rm(ServerRmArgs),
    /// List sandbox servers, running and stopped, with their size on disk.
    List(ServerListArgs),
    /// Print the tail of a sandbox server's error log.
    Logs(ServerLogsArgs),
}

#[derive(Args, Debug)]
pub struct ServerStartArgs {
    /// Sandbox name ([A-Za-z0-9_-], at most 32 characters).
    pub name: String,
    #[command(flatten)]
    pub lab: LabArgs,
    /// Server setting, my.cnf style (repeatable): --set innodb_buffer_pool_size=1G.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub settings: Vec<String>,
    /// A my.cnf fragment applied before --set overrides.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// CPUs the server may run on, e.g. 0 or 0-3,6.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Allocator to preload: jemalloc, tcmalloc, system, or the path of a shared library.
    #[arg(long, value_name = "ALLOCATOR")]
    pub malloc: Option<String>,
    /// Unpacked server tarball to run instead of the installed server.
    #[arg(long, value_name = "DIR")]
    pub basedir: Option<PathBuf>,
    /// TCP port (default: a free one).
    #[arg(long)]
    pub port: Option<u16>,
    /// Print the started sandbox as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ServerStopArgs {
    /// Sandbox name.
    pub name: String,
    #[command(flatten)]
    pub lab: LabArgs,
    /// Also delete its directory (datadir, logs).
    #[arg(long)]
    pub rm: bool,
}

#[derive(Args, Debug)]
pub struct ServerRmArgs {
    /// Sandbox name.
    pub name: String,
    #[command(flatten)]
    pub lab: LabArgs,
}

#[derive(Args, Debug)]
pub struct ServerListArgs {
    #[command(flatten)]
    pub lab: LabArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ServerLogsArgs {
    /// Sandbox name.
    pub name: String,
    #[command(flatten)]
    pub lab: LabArgs,
    /// Number of lines.
    #[arg(short = 'n', long, default_value_t = 40)]
    pub lines: usize,
}
