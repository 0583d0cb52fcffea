//! What the user typed: every clap definition of the CLI, and nothing else. Turning these into
//! plans and targets happens in `plan.rs`, `target.rs` and the `cmd` modules, so that nothing
//! below the CLI ever sees clap. The run options' flags come from the one option table
//! (`flags.rs`).

mod advise;
mod capture;
mod diff;
mod digest;
mod flags;
mod io;
mod replay;
mod replica;
mod restore;
mod study;
mod threads;
mod tune;

pub use advise::*;
pub use capture::*;
pub use diff::*;
pub use digest::*;
pub use flags::{Given, RunFlags, WorkloadFlags};
pub use io::IoArgs;
pub use replay::*;
pub use replica::*;
pub use restore::*;
pub use study::*;
pub use threads::*;
pub use tune::*;

use clap::{Args, Parser, Subcommand, ValueEnum};
use qpslab_core::Secret;
use std::path::PathBuf;

/// A performance lab for MySQL-family servers.
#[derive(Parser, Debug)]
#[command(name = "qpslab", version, about, disable_help_subcommand = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses the process's arguments (exiting with clap's message on a mistake), reading the
    /// mysql client's `-pVALUE` as `--password=VALUE` ([`attached_password`]).
    pub fn parse_args() -> Cli {
        Cli::parse_from(attached_password(std::env::args_os()))
    }
}

/// The arguments with each `-pVALUE` before any `--` rewritten as `--password=VALUE`. clap
/// reads an optional value only after `=` (so that `-p WORKLOAD` prompts rather than taking
/// the workload for the password, as `mysql -p DB` does), and would read `-pVALUE` as a run
/// of short flags.
pub fn attached_password(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let mut escaped = false;
    args.into_iter()
        .map(|a| {
            escaped |= a == "--";
            match a.to_str().and_then(|s| s.strip_prefix("-p")) {
                Some(v) if !escaped && !v.is_empty() && !v.starts_with('=') => {
                    format!("--password={v}").into()
                }
                _ => a,
            }
        })
        .collect()
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
    /// Check a dataset's consistency: TPC-C's conditions 1-4 (exit 1 when one fails).
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
pub struct SandboxHomeArgs {
    /// Lab directory holding sandbox servers (default: $QPSLAB_LAB or ~/.qpslab).
    #[arg(long = "lab", value_name = "DIR")]
    pub home: Option<PathBuf>,
}

/// Which server to talk to. With none of these, an embedded sandbox is started for the command.
///
/// The mysql client's options, with its short forms where `qpslab` has no other use for them:
/// `-P` port, `-p` password, `-u` user, `-S` socket, `-D` database. `-h` stays help, as in every
/// clap program: the host is `--host` only. The option files a mysql client reads by default
/// (/etc/my.cnf, /etc/mysql/my.cnf, ~/.my.cnf) are read only once a server is named here
/// (--target, --host, --port, --socket, -p, --password-file or an option file flag): with none,
/// the command uses its embedded sandbox, whatever those files say.
#[derive(Args, Debug, Clone, Default)]
pub struct TargetArgs {
    /// Server URL: mysql://user[:pass]@host[:port]/db[?socket=PATH&ssl-mode=..&ssl-ca=..].
    /// A password in the URL is visible to other local users (ps, /proc): prefer
    /// --password-file, MYSQL_PWD or an option file. `run` never changes an external server
    /// (a script's `--init-sql` runs what it says); `prepare`, `cleanup` and `replay` (unless
    /// --read-only) write there, and `capture` changes its slow-log settings for the window.
    /// --host, --port, -u, -p, -S and -D given too override its parts.
    #[arg(long, help_heading = CONNECTION, value_name = "DSN")]
    pub target: Option<String>,
    /// Host name or IP of the server, over TCP (long form only: -h is help). `localhost`
    /// without --port uses the option files' socket when they name one, as the mysql client.
    #[arg(long, help_heading = CONNECTION, value_name = "NAME")]
    pub host: Option<String>,
    /// TCP port of the server (default 3306): connects over TCP, to --host or localhost.
    #[arg(help_heading = CONNECTION, short = 'P', long, value_name = "PORT")]
    pub port: Option<u16>,
    /// Unix socket of the server.
    #[arg(help_heading = CONNECTION, short = 'S', long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// A running sandbox started with `qpslab server start NAME`.
    #[arg(
        long,
        help_heading = CONNECTION,
        value_name = "NAME",
        conflicts_with_all = ["target", "socket", "host", "port"]
    )]
    pub sandbox: Option<String>,
    /// Account name (overrides the DSN's and the option files').
    #[arg(help_heading = CONNECTION, short = 'u', long)]
    pub user: Option<String>,
    /// Password, as the mysql client takes it: -p or --password alone asks for it on the
    /// terminal (not echoed); -pVALUE or --password=VALUE gives it, visible to other local
    /// users (ps, /proc): prefer the prompt, --password-file, MYSQL_PWD or an option file.
    #[arg(
        help_heading = CONNECTION,
        short = 'p',
        long,
        value_name = "PASSWORD",
        num_args = 0..=1,
        require_equals = true,
        value_parser = secret,
        conflicts_with_all = ["sandbox", "password_file"]
    )]
    pub password: Option<Option<Secret>>,
    /// Schema holding the sbtest tables or a script's tables (default: the DSN's, else
    /// `sbtest`); for `replay`, the schema every logged statement runs in.
    #[arg(help_heading = CONNECTION, short = 'D', long, value_name = "NAME")]
    pub database: Option<String>,
    /// Read [client] options (user, password, host, port, socket, database, ssl-*) from this
    /// file only, not from the default option files.
    #[arg(long, help_heading = CONNECTION, value_name = "FILE")]
    pub defaults_file: Option<PathBuf>,
    /// Read this option file after the default ones (/etc/my.cnf, /etc/mysql/my.cnf) and
    /// before ~/.my.cnf, as the mysql client.
    #[arg(long, help_heading = CONNECTION, value_name = "FILE", conflicts_with = "defaults_file")]
    pub defaults_extra_file: Option<PathBuf>,
    /// Read no option file (neither the default ones nor ~/.my.cnf).
    #[arg(long, help_heading = CONNECTION, conflicts_with_all = ["defaults_file", "defaults_extra_file"])]
    pub no_defaults: bool,
    /// Read the password from the first line of this file (instead of the URL, where `ps`
    /// shows it).
    #[arg(long, help_heading = CONNECTION, value_name = "FILE", conflicts_with = "sandbox")]
    pub password_file: Option<PathBuf>,
    /// TLS: DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY (as the mysql client).
    #[arg(long, help_heading = CONNECTION, value_name = "MODE")]
    pub ssl_mode: Option<String>,
    /// CA certificate (PEM) for VERIFY_CA / VERIFY_IDENTITY.
    #[arg(long, help_heading = CONNECTION, value_name = "FILE")]
    pub ssl_ca: Option<PathBuf>,
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// The help heading of the options that say how to reach a server.
const CONNECTION: &str = "Connection options";

/// A password typed on the command line, kept as a [`Secret`] so that no Debug print shows it.
fn secret(s: &str) -> Result<Secret, std::convert::Infallible> {
    Ok(Secret::new(s))
}

/// How long to wait for a server before giving up on it.
#[derive(Args, Debug, Clone, Default)]
pub struct WaitArgs {
    /// Seconds to wait for the server to accept a connection and for each step of its
    /// handshake, as the mysql client's (default 10); a server silent that long, or not
    /// speaking MySQL, is unreachable (exit 2).
    #[arg(long, help_heading = CONNECTION, value_name = "SECONDS", allow_negative_numbers = true)]
    pub connect_timeout: Option<f64>,
    /// Seconds one read or write of a control connection (queries, prepare, replay) may wait
    /// for the server (default 3600; 0: no limit); the measured sessions are not affected.
    #[arg(long, help_heading = CONNECTION, value_name = "SECONDS", allow_negative_numbers = true)]
    pub read_timeout: Option<f64>,
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
    pub home: SandboxHomeArgs,
    /// Also write the run as JSON to this file.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
    /// Record the server (a sandbox) with perf during each phase: DIR/RUN-tN.folded and .svg.
    #[arg(long, value_name = "DIR")]
    pub profile: Option<PathBuf>,
    #[command(flatten)]
    pub replica: ReplicaRunArgs,
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
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Workload whose consistency conditions to check (tpcc).
    pub workload: String,
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Run id (default: list the latest runs).
    pub run: Option<i64>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Print JSON instead of a table (the same as --format json).
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Output format; csv gives one row per phase, the same columns for every run (with no
    /// RUN: every phase of the listed runs).
    #[arg(long, value_enum)]
    pub format: Option<ShowFormat>,
    /// Write RUN's latency histograms (each phase's events, then each statement kind) to FILE
    /// in HdrHistogram's interval log format ('-': standard output).
    #[arg(long, value_name = "FILE", requires = "run")]
    pub hlog: Option<PathBuf>,
    /// With no RUN: how many runs to list.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

/// Output formats of `qpslab show`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ShowFormat {
    /// Aligned terminal tables.
    Table,
    /// The run's one JSON form (a list of runs with no RUN).
    Json,
    /// CSV, one row per phase.
    Csv,
}

impl ShowArgs {
    /// The format asked for, `--json` included.
    pub fn format(&self) -> ShowFormat {
        match (self.json, self.format) {
            (true, _) => ShowFormat::Json,
            (false, f) => f.unwrap_or(ShowFormat::Table),
        }
    }
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
    /// Print the started sandbox as JSON.
    #[arg(long)]
    pub json: bool,
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
}

#[derive(Args, Debug)]
pub struct ServerRmArgs {
    /// Sandbox name.
    pub name: String,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
}

#[derive(Args, Debug)]
pub struct ServerListArgs {
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run command's target and options as parsed from `args` (after `qpslab run`).
    fn run(args: &[&str]) -> Result<RunArgs, clap::Error> {
        let argv = ["qpslab", "run"].iter().chain(args).map(|a| a.into());
        match Cli::try_parse_from(attached_password(argv))?.command {
            Command::Run(r) => Ok(*r),
            other => panic!("not run: {other:?}"),
        }
    }

    fn password(args: &[&str]) -> Option<Option<String>> {
        let t = run(args).unwrap().target;
        t.password.map(|p| p.map(|s| s.expose().to_string()))
    }

    #[test]
    fn takes_the_mysql_clients_password_forms() {
        let w = "oltp_point_select";
        assert_eq!(password(&[w, "-pse cret"]), Some(Some("se cret".into())));
        assert_eq!(password(&[w, "--password=x"]), Some(Some("x".into())));
        assert_eq!(password(&[w, "--password="]), Some(Some(String::new())));
        // Alone it prompts, and the next word stays what it is (mysql -p DB).
        assert_eq!(password(&["-p", w]), Some(None));
        assert_eq!(password(&["--password", w]), Some(None));
        assert_eq!(run(&["-p", w]).unwrap().options.0 .0[0].1, w);
        assert_eq!(password(&[w]), None);
        // After `--`, nothing is rewritten.
        let argv = ["qpslab", "--", "-pxyz"].map(std::ffi::OsString::from);
        assert_eq!(attached_password(argv.clone()), argv);
    }

    #[test]
    fn takes_the_mysql_clients_short_options() {
        let r = run(&[
            "oltp_point_select",
            "--host",
            "db1",
            "-P",
            "3307",
            "-u",
            "bench",
            "-D",
            "shop",
            "--defaults-extra-file",
            "/x.cnf",
        ])
        .unwrap();
        let t = r.target;
        assert_eq!(t.host.as_deref(), Some("db1"));
        assert_eq!(t.port, Some(3307));
        assert_eq!(t.user.as_deref(), Some("bench"));
        assert_eq!(t.database.as_deref(), Some("shop"));
        let t = run(&["oltp_point_select", "-S", "/s.sock"]).unwrap().target;
        assert_eq!(t.socket.as_deref(), Some(std::path::Path::new("/s.sock")));
        // -h stays help.
        let e = run(&["-h"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp);
        for clash in [
            &["oltp_point_select", "--sandbox", "a", "--port", "1"][..],
            &["oltp_point_select", "--sandbox", "a", "-px"],
            &["oltp_point_select", "--no-defaults", "--defaults-file", "f"],
            &[
                "oltp_point_select",
                "--defaults-extra-file",
                "e",
                "--defaults-file",
                "f",
            ],
        ] {
            let e = run(clash).unwrap_err();
            assert_eq!(
                e.kind(),
                clap::error::ErrorKind::ArgumentConflict,
                "{clash:?}"
            );
        }
    }

    #[test]
    fn takes_sysbenchs_underscore_spellings() {
        let r = run(&[
            "oltp_read_only",
            "--table_size",
            "10",
            "--rand_type=uniform",
        ])
        .unwrap();
        let given: Vec<(&str, &str)> = r
            .options
            .0
             .0
            .iter()
            .map(|(n, v)| (*n, v.as_str()))
            .collect();
        assert!(given.contains(&("table_size", "10")), "{given:?}");
        assert!(given.contains(&("rand_type", "uniform")), "{given:?}");
        let r = run(&[
            "oltp_read_only",
            "--report_interval",
            "2",
            "--warmup_max",
            "5",
        ])
        .unwrap();
        assert!(r.options.0 .0.contains(&("report_interval", "2".into())));
        // Every run option whose name has an underscore takes that spelling.
        let cmd = <Cli as clap::CommandFactory>::command();
        let run_cmd = cmd.find_subcommand("run").unwrap();
        for a in run_cmd.get_arguments() {
            let id = a.get_id().as_str();
            if a.get_long().is_some_and(|l| l.contains('-'))
                && qpslab_lab::options::OPTIONS.iter().any(|d| d.name == id)
            {
                let aliases = a.get_all_aliases().unwrap_or_default();
                assert!(aliases.contains(&id), "--{id} has no alias");
            }
        }
    }

    #[test]
    fn the_definitions_hold_together() {
        <Cli as clap::CommandFactory>::command().debug_assert();
    }
}
