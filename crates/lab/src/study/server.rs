//! The server of the setup being measured: started (with its storage mounted, its replica,
//! its thread placement) when the setup changes, recorded in the study's environment, stopped
//! when the setup ends or dies.

use super::{start_error, Active, Broken, CellError, Runner, StudyObserver};
use crate::server::placement;
use crate::study::sandboxes::{sandbox_spec, start_afresh};
use crate::study::spec::{Setup, SetupError};
use qpslab_core::ConnectOptions;
use qpslab_host::storage::Mounted;
use qpslab_probe::Sampler;
use qpslab_sandbox::{Sandbox, SandboxUse};
use qpslab_wire::Conn;
use serde_json::json;

impl Runner<'_> {
    /// Stops the active server and undoes its storage; the time it took is kept for the
    /// budget, which saves that much for the study's last stop.
    pub(super) fn stop_server(&mut self) {
        let started = std::time::Instant::now();
        let stopped = self.active.is_some() || self.io_mount.is_some();
        if let Some(a) = self.active.take() {
            drop(a.sampler); // its lag monitor first, then the replica, then its primary
            for sb in [a.replica, a.sandbox].into_iter().flatten() {
                let _ = sb.stop();
            }
        }
        // After the server: its files keep the filesystem busy.
        self.io_mount = None;
        let failed = self.storage.restore();
        self.undo_errors.extend(failed);
        if stopped {
            self.stop_s = Some(started.elapsed().as_secs_f64());
        }
    }

    pub(super) fn ensure_server<O: StudyObserver>(
        &mut self,
        setup: usize,
        obs: &mut O,
    ) -> Result<(), CellError> {
        if self.active.as_ref().is_some_and(|a| a.setup == setup) {
            return Ok(());
        }
        if let Some(b) = &self.broken {
            if b.setup == setup {
                return Err(CellError::Failed {
                    error: b.error.clone(),
                    log_tail: b.log_tail.clone(),
                });
            }
        }
        self.stop_server();
        self.broken = None;
        match self.start_server(setup, obs) {
            Ok(a) => {
                self.active = Some(a);
                Ok(())
            }
            Err(CellError::Failed { error, log_tail }) => {
                self.broken = Some(Broken {
                    setup,
                    error: error.clone(),
                    log_tail: log_tail.clone(),
                });
                Err(CellError::Failed { error, log_tail })
            }
            Err(e) => Err(e),
        }
    }

    fn start_server<O: StudyObserver>(
        &mut self,
        idx: usize,
        obs: &mut O,
    ) -> Result<Active, CellError> {
        let sc = &self.loaded.expanded.setups[idx];
        if let Some(thp) = &sc.setup.os.thp {
            self.os.set_thp(thp).map_err(setup_failed)?;
        }
        let (mut mounted, mut held) = (None, None);
        let (sandbox, socket, tcp) = match sc.setup.target_options().map_err(setup_failed)? {
            Some(options) => (None, options, None),
            None => {
                let mut spec = sandbox_spec(&self.loaded.spec.name, &sc.name, &sc.setup)
                    .map_err(setup_failed)?;
                held = Some(SandboxUse::exclusive(self.home, &spec.name).map_err(start_error)?);
                mounted = self.mount_storage(idx, &spec.name, obs)?;
                spec.datadir_root = mounted.as_ref().map(|m| m.dir.clone());
                obs.message(&format!("starting sandbox '{}' for {}", spec.name, sc.name));
                let sb = start_afresh(self.home, &spec).map_err(start_error)?;
                let (s, t) = (sb.connect_options(), sb.tcp_options());
                (Some(sb), s, Some(t))
            }
        };
        let replica_settings: Option<Vec<_>> = sc
            .setup
            .replica
            .as_ref()
            .map(|r| r.set.iter().map(|(k, v)| (k.clone(), v.render())).collect());
        let (replica, monitor) = crate::server::replica::for_setup(
            self.home,
            replica_settings.as_deref(),
            sc.setup.basedir.as_deref(),
            &sandbox,
        )
        .map_err(setup_failed)?;
        let server_opts = ConnectOptions {
            database: None,
            ..socket.clone()
        };
        let mut conn = Conn::connect(&server_opts)
            .map_err(|e| setup_failed(format!("connecting to {}: {e}", server_opts.describe())))?;
        let mut server = qpslab_probe::server_info(&mut conn)
            .map_err(|e| setup_failed(format!("reading server variables: {e}")))?;
        obs.server_started(&sc.name, &server.version);
        // A store on the server under test is refused before its first cell.
        self.store.guard_target(&server).map_err(CellError::Store)?;
        self.record_server(&sc.name, &server, sandbox.as_ref(), &sc.setup)
            .map_err(CellError::Store)?;
        let pid = sandbox.as_ref().map(|s| s.pid());
        let pin = sc.setup.pin_policy().map_err(setup_failed)?;
        let placement = placement::keep(&pin, pid, &server_opts)
            .map_err(|e| setup_failed(SetupError::Placing(e)))?;
        server.cpus = crate::run::ready::affinity(&server_opts, pid);
        Ok(Active {
            setup: idx,
            placement,
            sandbox,
            replica,
            socket,
            tcp,
            server,
            sampler: monitor.watched_by(Sampler::new(conn, pid).reconnect_to(server_opts)),
            storage: mounted,
            settled: false,
            _held: held,
        })
    }

    /// Mounts the `storage` of setup `idx` (sandbox `sandbox`), says so and records it in the
    /// study's environment with how to undo it by hand.
    pub(super) fn mount_storage<O: StudyObserver>(
        &mut self,
        idx: usize,
        sandbox: &str,
        obs: &mut O,
    ) -> Result<Option<Mounted>, CellError> {
        let sc = &self.loaded.expanded.setups[idx];
        let Some(st) = &sc.setup.storage else {
            return Ok(None);
        };
        use crate::study::sandboxes::{describe_storage, mount_storage, storage_record};
        let m = mount_storage(&mut self.storage, self.home, sandbox, st).map_err(setup_failed)?;
        obs.message(&describe_storage(&sc.name, &m, &self.storage));
        let (setup, record) = (sc.name.clone(), storage_record(&m, &self.storage));
        self.update_env(|env| env["storage"][&setup] = record)
            .map_err(CellError::Store)?;
        Ok(Some(m))
    }

    fn record_server(
        &mut self,
        name: &str,
        server: &qpslab_core::ServerInfo,
        sb: Option<&Sandbox>,
        setup: &Setup,
    ) -> Result<(), qpslab_store::Error> {
        let thp = self.os.original_thp().map(str::to_string);
        let record = crate::study::sandboxes::server_record(server, sb, setup);
        self.update_env(|env| {
            env["servers"][name] = record;
            if let Some(t) = thp {
                env["os_toggles"]["thp"]["restore_to"] = json!(t);
            }
        })
    }

    /// Changes the study's stored environment with `f`.
    pub(super) fn update_env(
        &mut self,
        f: impl FnOnce(&mut serde_json::Value),
    ) -> Result<(), qpslab_store::Error> {
        let mut study = self.store.study_by_name(&self.loaded.spec.name)?;
        f(&mut study.env);
        self.store.set_study_env(self.study, &study.env)
    }
}

/// A setup that could not become a server: the failure of its cells, with `e` as their error.
fn setup_failed(e: impl std::fmt::Display) -> CellError {
    CellError::Failed {
        error: e.to_string(),
        log_tail: None,
    }
}
