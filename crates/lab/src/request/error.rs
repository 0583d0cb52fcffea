//! Why a [`crate::request::run`] failed, said once: the message `qpslab run` prints, with the
//! context each step adds (the connection, the `--replica`, the phase that did not finish, the
//! `qpslab restore` command that puts leftover settings back), and whose fault it is
//! ([`Blame`]), judged as the CLI judges an error chain: by the first error in it that says.

use super::target::TargetError;
use crate::run::ready::{MonitorError, ReadyError};
use crate::run::sweep::{Closed, SweepError};
use crate::run::ExecError;
use crate::server::restore::RestoreError;
use qpslab_core::fault::{Blame, Fault};
use std::error::Error;

/// Why a run failed.
#[derive(Debug)]
pub enum RunError {
    /// The target could not be resolved (the embedded sandbox not started, a bad flag).
    Target(TargetError),
    /// `--profile` cannot work for this server (the user's to fix).
    Profile(crate::request::profile::ProfileCheckError),
    /// The results store could not be opened.
    Store(qpslab_store::Error),
    /// The server could not be readied.
    Ready {
        /// Why.
        source: Box<ReadyError>,
        /// The target options as typed, for the `qpslab restore` command a leftover names.
        target_args: Vec<String>,
    },
    /// The sweep of the workload `label` ended early.
    Sweep {
        /// The workload's label, the context of a phase that did not finish.
        label: String,
        /// The target options as typed, for the `qpslab restore` command a leftover names.
        target_args: Vec<String>,
        /// Why.
        source: Box<SweepError>,
    },
}

impl RunError {
    /// What is said of the error: its causes' texts and whose fault it is.
    fn said(&self) -> Said {
        match self {
            RunError::Target(e) => target(e),
            RunError::Profile(why) => Said::user(why.to_string()),
            RunError::Store(e) => Said::chain(e),
            RunError::Ready {
                source,
                target_args,
            } => ready(source, target_args),
            RunError::Sweep {
                label,
                target_args,
                source,
            } => match source.as_ref() {
                SweepError::Exec(e) => exec(e),
                SweepError::Restore(e) => restore(e, target_args),
                SweepError::Store(e) => Said::chain(e),
                SweepError::Unfinished {
                    threads,
                    closed,
                    source,
                } => unfinished(source, closed, format!("{label} at {threads} thread(s)")),
            },
        }
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.said().line())
    }
}

// The message holds its causes' texts already: no source to print again.
impl Error for RunError {}

impl Blame for RunError {
    fn fault(&self) -> Fault {
        self.said().fault
    }
}

/// An error as it is reported: the texts of its chain, outermost first, and whose fault it is.
struct Said {
    texts: Vec<String>,
    fault: Fault,
}

impl Said {
    /// A mistake of the user's, in these words only.
    fn user(text: impl Into<String>) -> Said {
        Said {
            texts: vec![text.into()],
            fault: Fault::User,
        }
    }

    /// A failure in these words only, the machine's or the server's.
    fn runtime(text: impl Into<String>) -> Said {
        Said {
            texts: vec![text.into()],
            fault: Fault::Runtime,
        }
    }

    /// `e` and its sources, judged by the first of them that says whose fault it is: the
    /// sandbox's, the engine's, the client's or the store's error (a failed statement of the
    /// dataset's is judged by the client's error below it).
    fn chain(e: &(dyn Error + 'static)) -> Said {
        let mut texts = Vec::new();
        let mut fault = None;
        let mut cause = Some(e);
        while let Some(c) = cause {
            texts.push(c.to_string());
            fault = fault.or_else(|| judged(c));
            cause = c.source();
        }
        Said {
            texts,
            fault: fault.unwrap_or(Fault::Runtime),
        }
    }

    /// The same in the context `what`.
    fn context(mut self, what: impl Into<String>) -> Said {
        self.texts.insert(0, what.into());
        self
    }

    /// The texts on one line, each left out when the line already holds it (library errors
    /// often print their source themselves).
    fn line(&self) -> String {
        let mut line = String::new();
        for text in &self.texts {
            if line.contains(text.as_str()) {
                continue;
            }
            if !line.is_empty() {
                line.push_str(": ");
            }
            line.push_str(text);
        }
        line
    }
}

/// Whose fault one error of a chain says it is, when it says.
fn judged(e: &(dyn Error + 'static)) -> Option<Fault> {
    if let Some(e) = e.downcast_ref::<qpslab_sandbox::Error>() {
        return Some(e.fault());
    }
    if let Some(e) = e.downcast_ref::<qpslab_engine::RunError>() {
        return Some(e.fault());
    }
    if let Some(e) = e.downcast_ref::<qpslab_engine::prepare::PrepareError>() {
        // A failed statement is judged by the client's error further down the chain.
        return e.is_user_error().then_some(Fault::User);
    }
    if let Some(e) = e.downcast_ref::<qpslab_wire::Error>() {
        return Some(e.fault());
    }
    if let Some(e) = e.downcast_ref::<qpslab_store::Error>() {
        return Some(e.fault());
    }
    None
}

/// The target could not be resolved: the user's input in its own words, or the sandbox's
/// error as it says.
fn target(e: &TargetError) -> Said {
    match e {
        TargetError::Input(why) => Said::user(why.clone()),
        TargetError::Sandbox(e) => Said::chain(e),
        TargetError::Stop(source) => Said::chain(source).context(e.to_string()),
    }
}

/// Readying failed.
fn ready(e: &ReadyError, target_args: &[String]) -> Said {
    match e {
        ReadyError::Connect { target, source } => {
            Said::chain(source).context(format!("connecting to {target}"))
        }
        ReadyError::ServerInfo(e) => Said::chain(e).context("reading server variables"),
        ReadyError::Restore(e) => restore(e, target_args),
        ReadyError::Limits(e) => Said::user(e.clone()),
        ReadyError::Sandbox(e) => Said::chain(e),
        ReadyError::Dataset(e) => exec(e),
        ReadyError::Replica { replica, source } => monitor(replica, source),
        ReadyError::NotOurs => Said::user(
            "--pin places a sandbox's threads (the embedded one or --sandbox NAME); qpslab never changes another server",
        ),
        ReadyError::Placement(e) => placement(e),
        // Only `qpslab cleanup` drops tables.
        e @ ReadyError::Cleanup(_) => Said::chain(e),
    }
}

/// A measurement failed: the user's when the error says so (in its own words), else as its
/// engine's or client's error says.
fn exec(e: &ExecError) -> Said {
    if e.is_user_error() {
        return Said::user(e.to_string());
    }
    match e {
        ExecError::Run(e) => Said::chain(e),
        ExecError::Connect { target, source } => {
            Said::chain(source).context(format!("connecting to {target}"))
        }
        // Its message names the step that failed (checking, loading, dropping, ...).
        ExecError::Dataset(e) => Said::chain(e),
        other => Said::chain(other),
    }
}

/// The settings a killed process left changed (with the command that puts them back), or
/// another process changing them now.
fn restore(e: &RestoreError, target_args: &[String]) -> Said {
    if !e.is_user_error() {
        return Said::chain(e);
    }
    match e {
        RestoreError::Leftover(_) => Said::user(format!(
            "{e} (or run: qpslab restore {})",
            target_args.join(" ")
        )),
        _ => Said::user(e.to_string()),
    }
}

/// The lag monitor of `--replica` could not start.
fn monitor(replica: &str, e: &MonitorError) -> Said {
    match e {
        MonitorError::Dsn(e) => Said::user(format!("--replica: {e}")),
        MonitorError::Sandbox(e) => Said::chain(e).context(format!("--replica {replica}")),
        MonitorError::SameServer => Said::user(format!(
            "--replica {replica} is the server the run loads: name its replica"
        )),
        MonitorError::Start(e) if e.is_user_error() => {
            Said::user(format!("--replica {replica}: {e}"))
        }
        // The client's error decides (nothing listening there is the user's).
        MonitorError::Start(qpslab_probe::Error::Wire(w)) => {
            Said::chain(w).context(format!("--replica {replica}"))
        }
        MonitorError::Start(e) => Said::chain(e).context(format!("--replica {replica}")),
    }
}

/// The run's thread placement could not start.
fn placement(e: &crate::server::placement::PlacementError) -> Said {
    use crate::server::placement::PlacementError;
    match e {
        PlacementError::Connect { target, source } => {
            Said::chain(source).context(format!("connecting to {target}"))
        }
        PlacementError::Probe(e) if e.is_user_error() => Said::user(e.to_string()),
        PlacementError::Probe(e) => Said::chain(e),
    }
}

/// A phase that did not finish, in the context `what`; for a phase the store could not keep,
/// where it went instead.
fn unfinished(e: &ExecError, closed: &Closed, what: String) -> Said {
    if let (ExecError::Unstored { source, .. }, Some(kept)) = (e, &closed.kept) {
        let whereto = match kept {
            Ok(path) => format!("it is kept in {} (the run's JSON form)", path.display()),
            Err(why) => format!("it could not be written anywhere either ({why})"),
        };
        return Said::runtime(format!(
            "{what}: the results store {} could not keep the measured phase ({source}); {whereto}",
            closed.store.display()
        ));
    }
    exec(e).context(what)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ready(source: ReadyError) -> RunError {
        RunError::Ready {
            source: Box::new(source),
            target_args: vec!["--sandbox".into(), "s1".into()],
        }
    }

    #[test]
    fn a_refused_connection_names_the_server_and_is_the_users() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        let e = ready(ReadyError::Connect {
            target: "127.0.0.1:1".into(),
            source: qpslab_wire::Error::Io(refused),
        });
        assert!(
            e.to_string().starts_with("connecting to 127.0.0.1:1: "),
            "{e}"
        );
        assert!(e.to_string().contains("refused"), "{e}");
        assert_eq!(e.fault(), Fault::User);
    }

    #[test]
    fn the_users_mistakes_say_so_in_the_words_of_the_flag() {
        let e = ready(ReadyError::NotOurs);
        assert!(e
            .to_string()
            .starts_with("--pin places a sandbox's threads"));
        assert_eq!(e.fault(), Fault::User);
        let e = ready(ReadyError::Replica {
            replica: "r1".into(),
            source: MonitorError::SameServer,
        });
        assert_eq!(
            e.to_string(),
            "--replica r1 is the server the run loads: name its replica"
        );
        assert_eq!(e.fault(), Fault::User);
        let e = RunError::Profile(crate::request::profile::ProfileCheckError::UnknownPid {
            dir: "prof".into(),
            what: "db.example:3306".into(),
        });
        assert!(e
            .to_string()
            .starts_with("--profile prof: the server's process is not known for db.example:3306 "));
        assert_eq!(e.fault(), Fault::User);
    }

    #[test]
    fn a_cause_the_message_already_holds_is_said_once() {
        let said = Said {
            texts: vec!["a: b".into(), "b".into(), "c".into()],
            fault: Fault::Runtime,
        };
        assert_eq!(said.line(), "a: b: c");
        assert_eq!(Said::runtime("b").context("a").line(), "a: b");
    }
}
