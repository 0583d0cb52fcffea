//! The launchers users run shards under, started for real: a private Slurm on localhost (its
//! own munged, slurmctld and slurmd, configuration, ports and state in a temporary directory,
//! all stopped by pid when dropped) and Open MPI's `mpirun`.
//!
//! Debian 12's Slurm (22.05) runs as root in a VM or container without systemd when it is told
//! to need nothing of the host: `proctrack/linuxproc` and `task/none` (no cgroups), no
//! accounting, munge on its own socket (`AuthInfo=socket=...`, the clients read it from the
//! same `slurm.conf` through `SLURM_CONF`), and `--overcommit` so that three tasks start on a
//! two-CPU node.

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the daemons may take to come up (a busy machine: other builds run).
const READY_WITHIN: Duration = Duration::from_secs(60);

/// A private Slurm cluster of one node, `localhost`, with its daemons.
pub struct Slurm {
    dir: tempfile::TempDir,
    conf: PathBuf,
    /// munged, slurmctld, slurmd: stopped in reverse order on drop.
    daemons: Vec<(&'static str, Child)>,
}

/// A free TCP port on localhost (free when asked; nothing else here takes ports at random).
fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port on localhost: {e}"))
}

/// Where `program` is: on PATH, or in /usr/sbin where Debian puts the daemons (a user's PATH
/// may lack it).
fn locate(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/bin")])
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Whether `program` can be found.
fn found(program: &str) -> bool {
    locate(program).is_some()
}

/// `program` as a command, by its full path when [`locate`] finds it.
fn daemon(program: &str) -> Command {
    Command::new(locate(program).unwrap_or_else(|| PathBuf::from(program)))
}

/// Starts `cmd` in the foreground of its own, its output to `log`.
fn spawn(
    name: &'static str,
    mut cmd: Command,
    log: &Path,
) -> Result<(&'static str, Child), String> {
    let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map(|c| (name, c))
        .map_err(|e| format!("cannot start {name}: {e}"))
}

/// The last lines of `path`, for a failure's message.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join(" | ")
}

impl Slurm {
    /// Starts munged, slurmctld and slurmd and waits (at most [`READY_WITHIN`]) until `sinfo`
    /// shows the node idle. `Err` says in one line why Slurm cannot run here.
    pub fn start() -> Result<Slurm, String> {
        for p in ["munged", "slurmctld", "slurmd", "srun", "sinfo"] {
            if !found(p) {
                return Err(format!(
                    "{p} is not installed (make deps-test installs slurm-wlm and munge)"
                ));
            }
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err(
                "a private Slurm needs root here (slurmd starts tasks as their user)".into(),
            );
        }
        let dir = tempfile::Builder::new()
            .prefix("qpslab-slurm")
            .tempdir_in("/tmp")
            .map_err(|e| e.to_string())?;
        let mut slurm = Slurm {
            conf: dir.path().join("slurm.conf"),
            dir,
            daemons: Vec::new(),
        };
        let d = slurm.dir.path().to_path_buf();
        for sub in ["key", "munge", "state", "spool", "log"] {
            std::fs::create_dir(d.join(sub)).map_err(|e| e.to_string())?;
        }
        // munged checks that its key is private and its socket's directory reachable.
        let perm = |p: &Path, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
                .map_err(|e| e.to_string())
        };
        let mut key = vec![0u8; 1024];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut key))
            .map_err(|e| e.to_string())?;
        let key_file = d.join("key/munge.key");
        std::fs::write(&key_file, key).map_err(|e| e.to_string())?;
        perm(&key_file, 0o400)?;
        perm(&d.join("key"), 0o700)?;
        perm(&d.join("munge"), 0o755)?;
        let socket = d.join("munge/munge.socket");
        let mut munged = daemon("munged");
        munged
            .arg("--foreground")
            .arg("--force")
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key_file.display()))
            .arg(format!(
                "--pid-file={}",
                d.join("munge/munged.pid").display()
            ))
            .arg(format!("--seed-file={}", d.join("munge/seed").display()))
            .arg(format!("--log-file={}", d.join("log/munged.log").display()));
        slurm
            .daemons
            .push(spawn("munged", munged, &d.join("log/munged.out"))?);
        let (ctld_port, d_port) = (free_port()?, free_port()?);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let p = |sub: &str| d.join(sub).display().to_string();
        let conf = format!(
            "ClusterName=qpslabtest
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={socket}
CredType=cred/munge
StateSaveLocation={state}
SlurmdSpoolDir={spool}
SlurmctldPidFile={ctld_pid}
SlurmdPidFile={d_pid}
SlurmctldLogFile={ctld_log}
SlurmdLogFile={d_log}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
NodeName=localhost NodeHostname=localhost CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
",
            socket = socket.display(),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            d_pid = p("slurmd.pid"),
            ctld_log = p("log/slurmctld.log"),
            d_log = p("log/slurmd.log"),
        );
        std::fs::write(&slurm.conf, conf).map_err(|e| e.to_string())?;
        slurm.wait_for("munge socket", || socket.exists())?;
        let mut ctld = daemon("slurmctld");
        ctld.args(["-D", "-i", "-f"]).arg(&slurm.conf);
        slurm
            .daemons
            .push(spawn("slurmctld", ctld, &d.join("log/slurmctld.out"))?);
        let mut slurmd = daemon("slurmd");
        slurmd
            .args(["-D", "-N", "localhost", "-f"])
            .arg(&slurm.conf);
        slurm
            .daemons
            .push(spawn("slurmd", slurmd, &d.join("log/slurmd.out"))?);
        let conf = slurm.conf.clone();
        slurm.wait_for("the node idle in sinfo", || {
            Command::new("sinfo")
                .env("SLURM_CONF", &conf)
                .args(["-h", "-N", "-o", "%T"])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        })?;
        Ok(slurm)
    }

    /// Polls `ready` until it holds, or fails after [`READY_WITHIN`] with the daemons' logs
    /// (or at once when one of them exited).
    fn wait_for(&mut self, what: &str, mut ready: impl FnMut() -> bool) -> Result<(), String> {
        let deadline = Instant::now() + READY_WITHIN;
        while !ready() {
            for (name, child) in &mut self.daemons {
                if let Ok(Some(status)) = child.try_wait() {
                    let log = self.dir.path().join(format!("log/{name}.out"));
                    return Err(format!("{name} exited ({status}): {}", tail(&log)));
                }
            }
            if Instant::now() > deadline {
                let logs = self.dir.path().join("log/slurmctld.log");
                return Err(format!(
                    "Slurm did not show {what} within {READY_WITHIN:?}: {}",
                    tail(&logs)
                ));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(())
    }

    /// A Slurm client command (`srun`, `sinfo`, `scontrol`...) talking to this cluster.
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// `srun -n N` (overcommitted: more tasks than CPUs may share them; killed after 3 min), to
    /// which the caller adds the program and its arguments; every task inherits this process's
    /// environment.
    pub fn srun(&self, tasks: usize) -> Command {
        let mut c = self.command("srun");
        c.args([
            // A task that hangs is killed at Slurm's time limit (minutes), not waited for.
            "--time=3",
            "--overcommit",
            "--kill-on-bad-exit=1",
            "-n",
            &tasks.to_string(),
        ]);
        c
    }
}

impl Drop for Slurm {
    /// Stops slurmd, slurmctld and munged (each by its pid: SIGTERM, then SIGKILL after 10 s).
    fn drop(&mut self) {
        while let Some((_, mut child)) = self.daemons.pop() {
            if let Ok(pid) = i32::try_from(child.id()) {
                // SAFETY: signalling our own child, not yet waited for.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `mpirun -n N` as root with more ranks than CPUs (killed after 180 s), to which the caller
/// adds the program and its arguments; `Err` says in one line why Open MPI cannot run here.
pub fn mpirun(ranks: usize) -> Result<Command, String> {
    if !found("mpirun") {
        return Err("mpirun is not installed (make deps-test installs openmpi-bin)".into());
    }
    let mut c = Command::new("mpirun");
    c.args([
        // A rank that hangs is killed after 180 s, not waited for.
        "--timeout",
        "180",
        "--allow-run-as-root",
        "--oversubscribe",
        "-n",
        &ranks.to_string(),
    ]);
    Ok(c)
}
