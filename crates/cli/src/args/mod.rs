//! What the user typed: every clap definition of the CLI, and nothing else. Turning these into
//! plans and targets happens in `plan.rs`, `target.rs` and the `cmd` modules, so that nothing
//! below the CLI ever sees clap. The run options' flags come from the one option table
//! (`flags.rs`).

mod advise;
mod capture;
mod connect;
mod diff;
mod digest;
mod flags;
mod history;
mod import;
mod io;
mod merge;
mod meta;
mod output;
mod replay;
mod replica;
mod restore;
mod study;
mod sysbench;
mod sysbench_meaning;
mod threads;
mod tune;

pub use advise::*;
pub use capture::*;
pub use connect::*;
pub use diff::*;
pub use digest::*;
pub use flags::{Given, RunFlags, WorkloadFlags};
pub use history::HistoryArgs;
pub use import::{ExportArgs, ImportArgs};
pub use io::IoArgs;
pub use merge::MergeArgs;
pub use meta::*;
pub use output::*;
pub use replay::*;
pub use replica::*;
pub use restore::*;
pub use study::*;
pub use threads::*;
pub use tune::*;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// A performance lab for MySQL-family servers.
#[derive(Parser, Debug)]
#[command(
    name = "qpslab",
    version = env!("QPSLAB_LONG_VERSION"),
    about,
    disable_help_flag = true
)]
pub struct Cli {
    /// Print help (`-?` as the mysql client's; `-h` is the server's host, as mysql's).
    #[arg(short = '?', long, global = true, action = clap::ArgAction::Help)]
    help: Option<bool>,
    #[command(flatten)]
    pub verbosity: Verbosity,
    #[command(subcommand)]
    pub command: Command,
    /// Called as sysbench (a link named `sysbench`, or `qpslab sysbench ...`): standard output
    /// is to be sysbench's.
    #[arg(skip)]
    pub sysbench: bool,
}

impl Cli {
    /// Parses the process's arguments (exiting with clap's message on a mistake), reading the
    /// mysql client's `-pVALUE` as `--password=VALUE` ([`attached_password`]) and sysbench's
    /// and mysql's command lines as typed ([`sysbench::rewrite`]: its notes go to standard
    /// error, a line it refuses exits 2 with the reason).
    pub fn parse_args() -> Cli {
        let args = attached_password(std::env::args_os());
        let quiet = args.iter().any(|a| a == "-q" || a == "--quiet");
        match sysbench::rewrite(args) {
            Ok(r) => {
                for note in r.notes.iter().filter(|_| !quiet) {
                    eprintln!("qpslab: note: {note}");
                }
                // `sysbench --version`: the line version checks read (`sysbench 1.`).
                if r.sysbench && r.args.len() == 2 && r.args[1] == "--version" {
                    println!("{}", crate::render::sysbench::version_line());
                    std::process::exit(0)
                }
                Cli {
                    sysbench: r.sysbench,
                    ..Cli::parse_from(r.args)
                }
            }
            Err(why) => {
                eprintln!("qpslab: error: {why}");
                std::process::exit(2)
            }
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a sysbench-compatible workload or SQL scripts (--script) over a sweep of thread counts
    /// and store the results.
    Run(Box<RunArgs>),
    /// Create and load the workload's tables (sysbench's `prepare`).
    Prepare(Box<PrepareArgs>),
    /// Drop the tables qpslab created (never anything else).
    Cleanup(CleanupArgs),
    /// Check a dataset's consistency: TPC-C's conditions 1-12 (exit 1 when one fails; 11 is
    /// not applicable once a Delivery has run since the load).
    Check(CheckArgs),
    /// List stored runs, or show one run's phases.
    Show(ShowArgs),
    /// Start, stop, list and inspect sandbox servers.
    #[command(subcommand)]
    Server(ServerCommand),
    /// Studies: matrices and factorial experiments from a spec file.
    #[command(subcommand)]
    Lab(LabCommand),
    /// Write a report (HTML, Markdown, JSON) of runs or studies.
    Report(ReportArgs),
    /// Compare two runs or two variants of a study, with confidence intervals.
    Compare(CompareArgs),
    /// The runs of a benchmark over builds, versions and days: each series' points, where its
    /// throughput changed and what differed; --check gates CI on a regression.
    History(HistoryArgs),
    /// Copy runs and studies from another store (another host's) into this one.
    Import(ImportArgs),
    /// Copy runs and studies of this store (a server's too) into a new SQLite store file.
    Export(ExportArgs),
    /// Merge the shards of one run (`run --shard I/N`, from their stores or one --db) into one run.
    Merge(MergeArgs),
    /// Log every statement a server runs for a while (slow log, long_query_time=0), then restore its settings.
    Capture(CaptureArgs),
    /// Group a slow or general log's statements into classes (like pt-query-digest).
    Digest(DigestArgs),
    /// Replay a captured slow or general log against a server and store it as a run.
    Replay(Box<ReplayArgs>),
    /// Advise on a server's settings and its host, each finding with the figures behind it.
    Advise(AdviseArgs),
    /// Run a log's statements on two servers, per class: ratio with its interval, verdict, results, EXPLAIN and counters.
    Diff(Box<DiffArgs>),
    /// Run a sysbench fileio test (seqwr, seqrewr, seqrd, rndrd, rndwr, rndrw) through fio and store it as a run.
    Io(Box<IoArgs>),
    /// Search server settings for a workload within a budget; keep only a gain confirmed against the baseline.
    Tune(Box<TuneArgs>),
    /// Put back the settings a killed tune, run --at or capture left changed on a server.
    Restore(RestoreArgs),
    /// Write a shell completion script (bash, zsh, fish, elvish, powershell) to standard output.
    Completions(CompletionsArgs),
    /// Print a man page (qpslab's or one subcommand's), or write them all with --dir.
    Man(ManArgs),
    /// Check the machine: every external part qpslab can use, found or not, with the fix for
    /// each (exit 1 when the server binary is missing).
    Doctor(DoctorArgs),
}

/// Where the results store lives.
#[derive(Args, Debug, Clone)]
pub struct DbArgs {
    /// Results store: an SQLite file, or a schema on a MariaDB/MySQL server
    /// (mysql://user@host:port/schema; docs/store.md).
    #[arg(
        long,
        env = "QPSLAB_DB",
        default_value = "qpslab.db",
        value_name = "PATH|URL"
    )]
    pub db: PathBuf,
}

/// Whether a measuring command accepts its results store on the server it measures.
#[derive(Args, Debug, Clone)]
pub struct OnTargetArgs {
    /// Accept a results store on the server under test (refused otherwise: its writes would
    /// disturb the measurement), with a warning.
    #[arg(long)]
    pub db_on_target: bool,
}

/// Where sandboxes live.
#[derive(Args, Debug, Clone)]
pub struct SandboxHomeArgs {
    /// Lab directory holding sandbox servers (default: $QPSLAB_LAB or ~/.qpslab).
    #[arg(long = "lab", value_name = "DIR")]
    pub home: Option<PathBuf>,
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
    /// Time the embedded sandbox's waits: performance_schema=ON and every wait/% instrument
    /// (MariaDB's wait/synch latches included) enabled and timed from its start, so a phase's
    /// verdict can weigh latches. Costs throughput: measured in bench/RESULTS.md ("The cost of
    /// seeing why").
    #[arg(long)]
    pub instrument_waits: bool,
    /// Server installation (unpacked tarball) for the embedded sandbox.
    #[arg(long, value_name = "DIR")]
    pub basedir: Option<PathBuf>,
    /// Leave the embedded sandbox running afterwards (it is listed by `qpslab server list`).
    #[arg(long)]
    pub keep: bool,
}

/// `qpslab run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The workload and run options (one table with the study keys).
    #[command(flatten)]
    pub options: RunFlags,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
    #[command(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub on_target: OnTargetArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Output: table (the live lines), json or csv (the stored run, printed at its end).
    #[command(flatten)]
    pub output: OutputArgs<TableJsonCsv, JsonPath>,
    /// Record the server (a sandbox) with perf during each phase: DIR/RUN-tN.folded and .svg.
    #[arg(long, value_name = "DIR")]
    pub profile: Option<PathBuf>,
    #[command(flatten)]
    pub replica: ReplicaRunArgs,
    /// Print each phase's latency histogram at its end, as sysbench's --histogram (on, off).
    #[arg(
        long,
        value_name = "on|off",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "on",
        value_parser = ["on", "off"]
    )]
    pub histogram: Option<String>,
    /// No interval lines (sysbench's --report-interval=0); the intervals are still measured
    /// and stored at the default interval.
    #[arg(long, hide = true)]
    pub no_live_lines: bool,
    /// Serve the live interval figures for Prometheus at HOST:PORT (GET /metrics) while it
    /// runs (docs/metrics.md).
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics_addr: Option<String>,
}

#[derive(Args, Debug)]
pub struct PrepareArgs {
    /// The workload's options.
    #[command(flatten)]
    pub workload: WorkloadFlags,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub embedded: EmbeddedArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Loader connections (default: 2 per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<u32>,
    /// Create the database when it does not exist (on an external server it is otherwise an
    /// error; sandboxes get theirs created anyway).
    #[arg(long)]
    pub create_db: bool,
    /// Output: table (progress, then a line) or json (database, tables, rows, seconds, method).
    #[command(flatten)]
    pub output: OutputArgs<TableJson>,
}

#[derive(Args, Debug)]
pub struct CleanupArgs {
    /// Workload: `tpcc` drops the TPC-C tables, a sysbench workload the sbtest tables
    /// (every one qpslab created); none drops both.
    pub workload: Option<String>,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Output: table (a line) or json (the tables dropped).
    #[command(flatten)]
    pub output: OutputArgs<TableJson>,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Workload whose consistency conditions to check (tpcc).
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Output: table (a line per condition) or json (each condition with its offenders).
    #[command(flatten)]
    pub output: OutputArgs<TableJson>,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Run id (default: list the latest runs).
    pub run: Option<i64>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Output: table, json (the run's one JSON form; a list of runs with no RUN) or csv (one
    /// row per phase, the same columns for every run; with no RUN, every phase of the listed
    /// runs).
    #[command(flatten)]
    pub output: OutputArgs<TableJsonCsv, JsonSwitch>,
    /// Write RUN's latency histograms (each phase's events, then each statement kind) to FILE
    /// in HdrHistogram's interval log format ('-': standard output).
    #[arg(
        long,
        value_name = "FILE",
        requires = "run",
        conflicts_with_all = ["format", "json", "export_json", "export_csv", "export_md"]
    )]
    pub hlog: Option<PathBuf>,
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
    /// The server's OS threads by class (not client sessions, which --threads counts): OS ids,
    /// CPU use, affinity and nice (local servers).
    Threads(ServerThreadsArgs),
    /// One sandbox: its role and, for a replica, its replication state.
    Status(ServerStatusArgs),
}

#[derive(Args, Debug)]
pub struct ServerStartArgs {
    /// Sandbox name ([A-Za-z0-9_-], at most 32 characters).
    pub name: String,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Server setting, my.cnf style (repeatable): --set innodb_buffer_pool_size=1G.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub settings: Vec<String>,
    /// A my.cnf fragment applied before --set overrides (not a perf profile).
    #[arg(long = "my-cnf", alias = "profile", value_name = "FILE")]
    pub my_cnf: Option<PathBuf>,
    /// CPUs the server may run on, e.g. 0 or 0-3,6.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Allocator to preload: jemalloc, tcmalloc, system, or the path of a shared library.
    #[arg(long, value_name = "ALLOCATOR")]
    pub malloc: Option<String>,
    /// Time the server's waits: performance_schema=ON and every wait/% instrument (MariaDB's
    /// wait/synch latches included) enabled and timed from its start, so a phase's verdict can
    /// weigh latches. Costs throughput: measured in bench/RESULTS.md ("The cost of seeing why").
    #[arg(long)]
    pub instrument_waits: bool,
    /// Unpacked server tarball to run instead of the installed server.
    #[arg(long, value_name = "DIR")]
    pub basedir: Option<PathBuf>,
    /// TCP port (default: a free one).
    #[arg(long)]
    pub port: Option<u16>,
    #[command(flatten)]
    pub pin: PinArgs,
    #[command(flatten)]
    pub replication: ReplicationArgs,
    #[command(flatten)]
    pub output: OutputArgs<TableJson, JsonSwitch>,
}

#[derive(Args, Debug)]
pub struct ServerStopArgs {
    /// Sandbox name.
    pub name: String,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Also delete its directory (datadir, logs).
    #[arg(long)]
    pub rm: bool,
    /// Output: table (a line) or json (name, removed, the replicas left running).
    #[command(flatten)]
    pub output: OutputArgs<TableJson>,
}

#[derive(Args, Debug)]
pub struct ServerRmArgs {
    /// Sandbox name.
    pub name: String,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Output: table (a line) or json (the name of the sandbox removed).
    #[command(flatten)]
    pub output: OutputArgs<TableJson>,
}

#[derive(Args, Debug)]
pub struct ServerListArgs {
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    #[command(flatten)]
    pub output: OutputArgs<TableJsonCsv, JsonSwitch>,
}

#[derive(Args, Debug)]
pub struct ServerLogsArgs {
    /// Sandbox name.
    pub name: String,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Number of lines.
    #[arg(short = 'n', long, default_value_t = 40)]
    pub lines: usize,
    /// Output: table (the lines as the server wrote them) or json (name, log file, lines).
    #[command(flatten)]
    pub output: OutputArgs<TableJson>,
}
