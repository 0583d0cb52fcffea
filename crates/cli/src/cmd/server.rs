//! `qpslab server start|stop|rm|list|logs`.

use crate::args::Format::{Csv, Json};
use crate::args::{ServerCommand, ServerListArgs, ServerRmArgs, ServerStartArgs, ServerStopArgs};
use crate::out::Output;
use crate::plan::sandbox_spec;
use crate::render::table;
use crate::target::sandbox_home;
use anyhow::Result;
use qpslab_core::units::binary_size;
use qpslab_lab::server::{StartRequest, Started};
use qpslab_probe::replica::ReplicaStatus;
use qpslab_sandbox::MyCnf;

/// Runs a `server` subcommand.
pub fn server(c: ServerCommand) -> Result<()> {
    match c {
        ServerCommand::Start(a) => start(a),
        ServerCommand::Stop(a) => stop(a),
        ServerCommand::Rm(a) => rm(a),
        ServerCommand::List(a) => list(a),
        ServerCommand::Threads(a) => super::threads::server_threads(a),
        ServerCommand::Status(a) => super::replica::status(a),
        ServerCommand::Logs(a) => {
            let out = Output::new(&a.output, "server logs")?;
            let tail = qpslab_sandbox::log_tail(&sandbox_home(&a.home), &a.name, a.lines)?;
            out.emit(|f| match f {
                Json => crate::out::json(&serde_json::json!({
                    "name": a.name,
                    "lines": tail.lines().collect::<Vec<_>>(),
                })),
                _ => Ok(tail.clone()),
            })
        }
    }
}

fn start(a: ServerStartArgs) -> Result<()> {
    let out = Output::new(&a.output, "server start")?;
    let home = sandbox_home(&a.home);
    let mut spec = sandbox_spec(
        &a.name,
        &a.settings,
        a.cpus.as_deref(),
        a.malloc.as_deref(),
        a.basedir.as_deref(),
    )?;
    if let Some(p) = &a.my_cnf {
        spec.my_cnf = MyCnf::File(p.clone());
    }
    spec.port = a.port;
    if a.instrument_waits {
        spec.instrument_waits()?;
    }
    spec.set_pin(super::threads::policy(&a.pin)?)?;
    let request = StartRequest {
        spec,
        primary: a.replication.primary,
        replica_of: a.replication.replica_of.clone(),
    };
    let Started { info, replication } =
        qpslab_lab::server::start_server(&home, request, &mut super::threads::placed_at_start)
            .map_err(crate::error::fail)?;
    out.emit(|f| match f {
        Json => crate::out::json(&info),
        _ => Ok(start_text(&info, replication.as_ref())),
    })
}

/// What `server start` says of the started sandbox.
fn start_text(info: &qpslab_sandbox::SandboxInfo, replication: Option<&ReplicaStatus>) -> String {
    let mut t = format!(
        "sandbox '{}' running: {} pid {}\n",
        info.name, info.version, info.pid
    );
    let mut line = |s: String| {
        t.push_str(&s);
        t.push('\n');
    };
    line(format!("  socket   {}", info.socket.display()));
    line(format!("  tcp      127.0.0.1:{}", info.port));
    line(format!("  datadir  {}", info.datadir.display()));
    line(format!("  log      {}", info.error_log.display()));
    if !info.role.is_standalone() {
        line(format!("  role     {}", info.role.describe()));
    }
    if let Some(r) = replication {
        line(format!("  {}", super::replica::describe(r)));
    }
    line(format!(
        "  login    user root, password in {} (0600)",
        info.dir().join("password").display()
    ));
    line(format!(
        "connect with: mariadb --defaults-file={}",
        info.client_file().display()
    ));
    line(format!(
        "use it with:  qpslab run oltp_point_select --sandbox {}",
        info.name
    ));
    t
}

fn stop(a: ServerStopArgs) -> Result<()> {
    let out = Output::new(&a.output, "server stop")?;
    let home = sandbox_home(&a.home);
    let stopped = qpslab_lab::server::stop_server(&home, &a.name, a.rm)?;
    out.emit(|f| match f {
        Json => crate::out::json(&serde_json::json!({
            "name": a.name,
            "removed": stopped.removed,
            "replicas": stopped.replicas,
        })),
        _ => {
            let mut t = format!("sandbox '{}' stopped", a.name);
            if stopped.removed {
                t += " and removed";
            }
            t.push('\n');
            if let Some(note) = super::replica::stop_note(&a.name, &stopped.replicas) {
                t += &format!("{note}\n");
            }
            Ok(t)
        }
    })
}

fn rm(a: ServerRmArgs) -> Result<()> {
    let out = Output::new(&a.output, "server rm")?;
    let home = sandbox_home(&a.home);
    if let Ok(info) = qpslab_sandbox::find(&home, &a.name) {
        return Err(qpslab_sandbox::Error::Running {
            name: info.name,
            pid: info.pid,
        }
        .into());
    }
    qpslab_sandbox::remove(&home, &a.name)?;
    out.emit(|f| match f {
        Json => crate::out::json(&serde_json::json!({ "name": a.name, "removed": true })),
        _ => Ok(format!("sandbox '{}' removed\n", a.name)),
    })
}

/// The columns of `server list` (the CSV's `size` in bytes).
const LIST_HEADER: [&str; 8] = [
    "name", "status", "pid", "port", "size", "version", "role", "socket",
];

fn list(a: ServerListArgs) -> Result<()> {
    let out = Output::new(&a.output, "server list")?;
    let infos = qpslab_sandbox::list(&sandbox_home(&a.home))?;
    out.emit(|f| match f {
        Json => crate::out::json(&infos),
        Csv => crate::out::csv(&LIST_HEADER, list_rows(&infos, |b| b.to_string())),
        _ => Ok(list_table(&infos)),
    })
}

/// `server list`'s table, and what the stopped sandboxes hold.
fn list_table(infos: &[qpslab_sandbox::SandboxInfo]) -> String {
    if infos.is_empty() {
        return "no sandboxes\n".into();
    }
    let header = LIST_HEADER.map(String::from).to_vec();
    let mut text = table(&header, &list_rows(infos, binary_size));
    let stopped: u64 = infos
        .iter()
        .filter(|i| !i.alive)
        .filter_map(|i| i.disk_bytes)
        .sum();
    if stopped > 0 {
        text += &format!(
            "stopped sandboxes hold {}; delete one with: qpslab server rm NAME\n",
            binary_size(stopped)
        );
    }
    text
}

/// One row per sandbox, its size on disk written by `size`.
fn list_rows(infos: &[qpslab_sandbox::SandboxInfo], size: fn(u64) -> String) -> Vec<Vec<String>> {
    infos
        .iter()
        .map(|i| {
            vec![
                i.name.clone(),
                if i.alive { "running" } else { "stopped" }.to_string(),
                if i.alive {
                    i.pid.to_string()
                } else {
                    "-".into()
                },
                i.port.to_string(),
                i.disk_bytes.map_or_else(|| "-".into(), size),
                i.version.clone(),
                role_cell(i),
                i.socket.display().to_string(),
            ]
        })
        .collect()
}

/// The role, and for a running replica whether its threads run and how far behind it is.
fn role_cell(i: &qpslab_sandbox::SandboxInfo) -> String {
    let role = i.role.describe();
    if !matches!(i.role, qpslab_sandbox::Role::Replica { .. }) || !i.alive {
        return role;
    }
    match super::replica::replication_of(i) {
        Ok(Some(s)) if s.running() => {
            let sbm = s.sbm_s.map_or("?".into(), |v| v.to_string());
            format!("{role} (running, {sbm} s behind)")
        }
        Ok(Some(s)) => format!(
            "{role} ({})",
            s.stopped()
                .unwrap_or_else(|| format!("IO thread {}", s.io_running))
        ),
        Ok(None) => format!("{role} (not replicating)"),
        Err(_) => format!("{role} (state unknown)"),
    }
}
