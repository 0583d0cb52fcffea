//! The options that say which server a command talks to and how: the mysql client's
//! (`--host`, `-P`, `-S`, `-u`, `-p`, `-D`, its option files), a DSN, a sandbox, TLS and the
//! waits. Flattened into every command that takes a server; `target.rs` turns them into
//! connection options.

use clap::Args;
use qpslab_core::Secret;
use std::path::PathBuf;

/// Which server to talk to. With none of these, an embedded sandbox is started for the command.
///
/// The mysql client's options, with its short forms where `qpslab` has no other use for them:
/// `-h` host, `-P` port, `-p` password, `-u` user, `-S` socket, `-D` database. Help is `--help`
/// or `-?`, as the mysql client's. The option files a mysql client reads by default
/// (/etc/my.cnf, /etc/mysql/my.cnf, ~/.my.cnf) are read only once a server is named here
/// (--target, --host, --port, --socket, -p, --password-file or an option file flag): with none,
/// the command uses its embedded sandbox, whatever those files say. sysbench's names
/// (`--mysql-host`, `--mysql-port`, `--mysql-socket`, `--mysql-user`, `--mysql-password=`,
/// `--mysql-db`, with dashes or underscores) are hidden aliases.
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
    /// Host name or IP of the server, over TCP (help is --help or -?). `localhost` without
    /// --port uses the option files' socket when they name one, as the mysql client.
    #[arg(short = 'h', long, help_heading = CONNECTION, value_name = "NAME", aliases = ["mysql-host", "mysql_host"])]
    pub host: Option<String>,
    /// TCP port of the server (default 3306): connects over TCP, to --host or localhost.
    #[arg(help_heading = CONNECTION, short = 'P', long, value_name = "PORT", aliases = ["mysql-port", "mysql_port"])]
    pub port: Option<u16>,
    /// Unix socket of the server.
    #[arg(help_heading = CONNECTION, short = 'S', long, value_name = "PATH", aliases = ["mysql-socket", "mysql_socket"])]
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
    #[arg(help_heading = CONNECTION, short = 'u', long, aliases = ["mysql-user", "mysql_user"])]
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
        aliases = ["mysql-password", "mysql_password"],
        conflicts_with_all = ["sandbox", "password_file"]
    )]
    pub password: Option<Option<Secret>>,
    /// Schema holding the sbtest tables or a script's tables (default: the DSN's, else
    /// `sbtest`); for `replay`, the schema every logged statement runs in.
    #[arg(help_heading = CONNECTION, short = 'D', long, value_name = "NAME", aliases = ["mysql-db", "mysql_db"])]
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
    /// The largest reply packet accepted from the server (default 1G, as the mysql client's;
    /// 4K to 1G, e.g. 64M): a longer one is a protocol error, never an allocation. Also read
    /// from the option files' max_allowed_packet / max-allowed-packet.
    #[arg(long, help_heading = CONNECTION, value_name = "SIZE", alias = "max_allowed_packet")]
    pub max_allowed_packet: Option<String>,
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

#[cfg(test)]
#[path = "connect_tests.rs"]
mod tests;
