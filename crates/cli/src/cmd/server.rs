//! `qpslab server start|stop|list|logs`.

use crate::args::{ServerCommand, ServerListArgs, ServerStartArgs};
use crate::hiargs::sandbox_spec;
use crate::render::table;
use crate::target::lab_dir;
use anyhow::Result;
use qpslab_sandbox::Profile;

/// Runs a `server` subcommand.
pub fn server(c: ServerCommand) -> Result<()> {
    match c {
        ServerCommand::Start(a) => start(a),
        ServerCommand::Stop(a) => {
            let lab = lab_dir(&a.lab);
            if a.rm {
                qpslab_sandbox::remove(&lab, &a.name)?;
                println!("sandbox '{}' stopped and removed", a.name);
            } else {
                qpslab_sandbox::stop_by_name(&lab, &a.name)?;
                println!("sandbox '{}' stopped", a.name);
            }
            Ok(())
        }
        ServerCommand::List(a) => list(a),
        ServerCommand::Logs(a) => {
            print!(
                "{}",
                qpslab_sandbox::log_tail(&lab_dir(&a.lab), &a.name, a.lines)?
            );
            Ok(())
        }
    }
}

fn start(a: ServerStartArgs) -> Result<()> {
    let lab = lab_dir(&a.lab);
    let mut spec = sandbox_spec(
        &a.name,
        &a.settings,
        a.cpus.as_deref(),
        a.malloc,
        a.basedir.as_deref(),
    )?;
    if let Some(p) = &a.profile {
        spec.profile = Profile::File(p.clone());
    }
    spec.port = a.port;
    let info = qpslab_sandbox::start(&lab, &spec)?.keep();
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
        println!(
            "use it with: qpslab run oltp_point_select --sandbox {}",
            info.name
        );
    }
    Ok(())
}

fn list(a: ServerListArgs) -> Result<()> {
    let infos = qpslab_sandbox::list(&lab_dir(&a.lab))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&infos)?);
        return Ok(());
    }
    if infos.is_empty() {
        println!("no sandboxes");
        return Ok(());
    }
    let header: Vec<String> = ["name", "status", "pid", "port", "version", "socket"]
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
                i.version.clone(),
                i.socket.display().to_string(),
            ]
        })
        .collect();
    print!("{}", table(&header, &rows));
    Ok(())
}
