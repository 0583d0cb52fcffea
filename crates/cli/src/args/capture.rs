//! `qpslab capture`: what the user typed.

use super::{JsonPath, OutputArgs, SandboxHomeArgs, TableJson, TargetArgs};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// `qpslab capture`.
#[derive(Args, Debug)]
#[command(after_help = "\
Only a server on this host can be captured (--socket, --sandbox, or a localhost target): the log \
is read from the server's own file in its datadir, then removed. At the start, the one SET GLOBAL \
statement that restores every changed variable is printed, for the case qpslab is killed with \
kill -9; Ctrl-C, SIGTERM and SIGHUP restore them and keep what was captured.

Logging every statement costs throughput, and the more statements per second the server runs, \
the more it costs: figures measured during a capture are lower than without one. Connections opened before the capture keep their own \
long_query_time and log nothing (pools): the server's statement count is compared with the \
entries captured, with a warning when the log misses some. The log goes on after a baseline of \
the server's statements (2 s): start the workload once capture says `slow log on` or once \
--ready-file's file exists, never after a fixed sleep.")]
pub struct CaptureArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    #[command(flatten)]
    pub home: SandboxHomeArgs,
    /// How long to capture: seconds or a duration (90, 60s, 5m).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration)]
    pub time: Duration,
    /// Where to write the captured slow log (`-`: standard output). Written whole or not at all.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Replace FILE if it exists.
    #[arg(long)]
    pub force: bool,
    /// Create READY once the log is on (every connection opened from then on is logged) and
    /// remove it when the capture ends: a script waits for it (`until [ -e READY ]; do sleep
    /// 0.1; done`) before it starts the workload. A READY left from before is removed first.
    #[arg(long, value_name = "READY")]
    pub ready_file: Option<PathBuf>,
    /// Output: table or json (what the capture saw and cost).
    #[command(flatten)]
    pub output: OutputArgs<TableJson, JsonPath>,
}

/// A positive duration: a number of seconds or a duration with units.
pub(crate) fn duration(s: &str) -> Result<Duration, String> {
    let v = serde_json::Value::String(s.to_string());
    let secs = qpslab_lab::options::value::seconds(&v)?;
    if secs <= 0.0 || secs > 86_400.0 * 7.0 {
        return Err(format!("must be more than 0 and at most a week, not {s}"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn durations_in_every_spelling() {
        assert_eq!(duration("3").unwrap().as_secs(), 3);
        assert_eq!(duration("1m").unwrap().as_secs(), 60);
        assert_eq!(duration("500ms").unwrap().as_millis(), 500);
        assert!(duration("0").is_err());
        assert!(duration("soon").is_err());
    }
}
