//! Replication in the CLI: `server status`, and what stopping a primary leaves behind.

use crate::args::{Format, ServerStatusArgs};
use crate::out::Output;
use crate::target::sandbox_home;
use anyhow::Result;
use qpslab_probe::replica::ReplicaStatus;
use qpslab_sandbox::{SandboxHome, SandboxInfo};

/// `qpslab server status NAME`.
pub fn status(a: ServerStatusArgs) -> Result<()> {
    let out = Output::new(&a.output, "server status")?;
    let home = sandbox_home(&a.home);
    let info = qpslab_sandbox::find(&home, &a.name)?;
    let replication = replication_of(&info);
    let replicas = replicas_of(&home, &a.name);
    out.emit(|f| match f {
        Format::Json => crate::out::json(&serde_json::json!({
            "sandbox": info,
            "replication": replication.as_ref().map_err(ToString::to_string),
            "replicas": replicas,
        })),
        _ => {
            let mut t = format!(
                "sandbox '{}' running: {} pid {} port {}\n  role     {}\n",
                info.name,
                info.version,
                info.pid,
                info.port,
                info.role.describe()
            );
            if !replicas.is_empty() {
                t += &format!("  replicas {}\n", replicas.join(", "));
            }
            match &replication {
                Ok(Some(s)) => t += &format!("  {}\n", describe(s)),
                Ok(None) => {}
                Err(e) => t += &format!("  replication: unknown ({e})\n"),
            }
            Ok(t)
        }
    })
}

/// `IO Yes, SQL Yes, behind 0 s, gtid_io_pos 0-3306-42, last error -`.
pub fn describe(s: &ReplicaStatus) -> String {
    format!(
        "from {}: IO {}, SQL {}, behind {}, gtid_io_pos {}, last error {}",
        s.source,
        s.io_running,
        s.sql_running,
        s.sbm_s.map_or("NULL".into(), |v| format!("{v} s")),
        if s.gtid_io_pos.is_empty() {
            "-"
        } else {
            &s.gtid_io_pos
        },
        s.last_error.as_deref().unwrap_or("-")
    )
}

/// The replication state of a running sandbox, `None` for one that is no replica.
pub fn replication_of(info: &SandboxInfo) -> Result<Option<ReplicaStatus>> {
    Ok(qpslab_lab::server::replica::replication_of(info)?)
}

/// The names of the running sandboxes that replicate from `name`.
pub fn replicas_of(home: &SandboxHome, name: &str) -> Vec<String> {
    qpslab_lab::server::replica::replicas_of(home, name)
}

/// What stopping `name` leaves behind, if anything: its running `replicas`.
pub fn stop_note(name: &str, replicas: &[String]) -> Option<String> {
    (!replicas.is_empty()).then(|| {
        format!(
            "note: '{name}' is the primary of {} (still running; they reconnect when '{name}' \
             is back on the same port, or start them again with --replica-of {name}); stop \
             them with: qpslab server stop NAME",
            replicas.join(", ")
        )
    })
}
