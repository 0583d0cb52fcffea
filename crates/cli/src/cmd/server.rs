//! `qpslab server start|stop|rm|list|logs`.

use crate::args::{ServerCommand, ServerListArgs, ServerRmArgs, ServerStartArgs};
use crate::plan::sandbox_spec;
use crate::render::table;
use crate::target::sandbox_home;
use anyhow::Result;
use qpslab_core::units::binary_size;
use qpslab_lab::server::{StartRequest, Started};
use qpslab_sandbox::MyCnf;

/// Runs a `server` subcommand.
pub fn server(c: ServerCommand) -> Result<()> {
    match c {
        ServerCommand::Start(a) => start(a),
        ServerCommand::Stop(a) => {
            let home = sandbox_home(&a.home);
            let stopped = qpslab_lab::server::stop_server(&home, &a.name, a.rm)?;
            if stopped.removed {
                println!("sandbox '{}' stopped and removed", a.name);
            } else {
                println!("sandbox '{}' stopped", a.name);
            }
            if let Some(note) = super::replica::stop_note(&a.name, &stopped.replicas) {
                println!("{note}");
            }
            Ok(())
        }
        ServerCommand::Rm(a) => rm(a),
        ServerCommand::List(a) => list(a),
        ServerCommand::Threads(a) => super::threads::server_threads(a),
        ServerCommand::Status(a) => super::replica::status(a),
        ServerCommand::Logs(a) => {
            print!(
                "{}",
                qpslab_sandbox::log_tail(&sandbox_home(&a.home), &a.name, a.lines)?
            );
            Ok(())
        }
    }
}

fn start(a: ServerStartArgs) -> Result<()> {
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
    spec.set_pin(super::threads::policy(&a.pin)?)?;
    let request = StartRequest {
        spec,
        primary: a.replication.primary,
        replica_of: a.replication.replica_of.clone(),
    };
    let Started { info, replication } =
        qpslab_lab::server::start_server(&home, request, &mut super::threads::placed_at_start)
            .map_err(super::replica::server_error)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        println!(
            "sandbox '{}' running: {} pid {}",
            info.name, info.version, info.pid
        );
        println!("  socket   {}", info.socket.display());
        println!("  tcp      127.0.0.1:{}", info.port);
        println!("  datadir  {}", info.datadir.display());
        println!("  log      {}", info.error_log.display());
        if !info.role.is_standalone() {
            println!("  role     {}", info.role.describe());
        }
        if let Some(r) = &replication {
            println!("  {}", super::replica::describe(r));
        }
        println!(
            "  login    user root, password in {} (0600)",
            info.dir().join("password").display()
        );
        println!(
            "connect with: mariadb --defaults-file={}",
            info.client_file().display()
        );
        println!(
            "use it with:  qpslab run oltp_point_select --sandbox {}",
            info.name
        );
    }
    Ok(())
}

fn rm(a: ServerRmArgs) -> Result<()> {
    let home = sandbox_home(&a.home);
    if let Ok(info) = qpslab_sandbox::find(&home, &a.name) {
        return Err(qpslab_sandbox::Error::Running {
            name: info.name,
            pid: info.pid,
        }
        .into());
    }
    qpslab_sandbox::remove(&home, &a.name)?;
    println!("sandbox '{}' removed", a.name);
    Ok(())
}

fn list(a: ServerListArgs) -> Result<()> {
    let infos = qpslab_sandbox::list(&sandbox_home(&a.home))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&infos)?);
        return Ok(());
    }
    if infos.is_empty() {
        println!("no sandboxes");
        return Ok(());
    }
    let header: Vec<String> = [
        "name", "status", "pid", "port", "size", "version", "role", "socket",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = infos
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
                i.disk_bytes.map_or_else(|| "-".into(), binary_size),
                i.version.clone(),
                role_cell(i),
                i.socket.display().to_string(),
            ]
        })
        .collect();
    print!("{}", table(&header, &rows));
    let stopped: u64 = infos
        .iter()
        .filter(|i| !i.alive)
        .filter_map(|i| i.disk_bytes)
        .sum();
    if stopped > 0 {
        println!(
            "stopped sandboxes hold {}; delete one with: qpslab server rm NAME",
            binary_size(stopped)
        );
    }
    Ok(())
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
