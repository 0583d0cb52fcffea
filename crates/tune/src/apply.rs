//! Putting a configuration on the server between trials with `SET GLOBAL` (the live actions'
//! `qpslab_lab::run::live::set_global`), waiting for a buffer-pool resize to finish, and putting
//! every changed variable back at the end, on error, and on Ctrl-C (the caller's stop flag only
//! stops the trial, and this runs).

use crate::knobs::{same_value, Knob};
use crate::search::Config;
use crate::TuneError;
use qpslab_core::ConnectOptions;
use qpslab_lab::run::live::{set_global, Changed};
use qpslab_wire::Conn;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Longest wait for a buffer-pool resize.
const RESIZE_PATIENCE: Duration = Duration::from_secs(120);

/// The server's knob values as the tuner left them, and what to put back.
pub struct Applier {
    target: ConnectOptions,
    /// Each knob's baseline value.
    baseline: BTreeMap<String, String>,
    /// Each knob's value now.
    now: BTreeMap<String, String>,
    /// The first change of each variable, in order.
    changed: Vec<Changed>,
}

impl Applier {
    /// For the `knobs` of the server at `target`, as they are now.
    pub fn new(target: &ConnectOptions, knobs: &[Knob]) -> Applier {
        let baseline: BTreeMap<String, String> = knobs
            .iter()
            .map(|k| (k.name.clone(), k.current.clone()))
            .collect();
        Applier {
            target: target.clone(),
            now: baseline.clone(),
            baseline,
            changed: Vec::new(),
        }
    }

    /// Sets every knob to `config`'s value, or the baseline's where it has none; only the
    /// variables whose value differs are changed. Returns the seconds it took.
    pub fn apply(&mut self, config: &Config) -> Result<f64, TuneError> {
        let started = Instant::now();
        let wanted: Vec<(String, String)> = self
            .baseline
            .iter()
            .map(|(k, v)| (k.clone(), config.get(k).unwrap_or(v).clone()))
            .collect();
        for (name, value) in wanted {
            if !same_value(&self.now[&name], &value) {
                self.set(&name, &value)?;
            }
        }
        Ok(started.elapsed().as_secs_f64())
    }

    fn set(&mut self, name: &str, value: &str) -> Result<(), TuneError> {
        let status = resize_status(&self.target, name);
        let changed = set_global(&self.target, name, value).map_err(|reason| TuneError::Set {
            name: name.to_string(),
            value: value.to_string(),
            reason,
        })?;
        if !self.changed.iter().any(|c| c.name == changed.name) {
            self.changed.push(changed);
        }
        self.now.insert(name.to_string(), value.to_string());
        if let Some(before) = status {
            wait_resize(&self.target, &before)?;
        }
        Ok(())
    }

    /// Puts every changed variable back, last changed first; each outcome in words.
    pub fn restore(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for c in std::mem::take(&mut self.changed).into_iter().rev() {
            let before = resize_status(&self.target, &c.name);
            out.push(format!("restored {}", c.restore(&self.target)));
            if let Some(before) = before {
                if let Err(e) = wait_resize(&self.target, &before) {
                    out.push(format!("warning: {e}"));
                }
            }
        }
        self.now = self.baseline.clone();
        out
    }
}

impl Drop for Applier {
    /// A panic between trials still puts the server back. The session restores explicitly on
    /// success and on error, telling the outcome to its observer; here nothing is left to tell
    /// it to.
    fn drop(&mut self) {
        let _ = self.restore();
    }
}

/// For the buffer pool: its resize status before a change (`None` for other variables).
fn resize_status(target: &ConnectOptions, name: &str) -> Option<String> {
    (name == "innodb_buffer_pool_size").then(|| read_status(target).unwrap_or_default())
}

fn read_status(target: &ConnectOptions) -> Result<String, TuneError> {
    let mut c = Conn::connect(target)?;
    let r = c.query("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_resize_status'")?;
    Ok(r.rows
        .first()
        .and_then(|row| row.get(1).cloned().flatten())
        .unwrap_or_default())
}

/// Waits until the buffer pool's resize that began after status `before` has completed
/// (MariaDB resizes in the background and reports it in `Innodb_buffer_pool_resize_status`). A
/// status that stays as it was for 2 s means nothing needed resizing.
fn wait_resize(target: &ConnectOptions, before: &str) -> Result<(), TuneError> {
    let started = Instant::now();
    loop {
        let now = read_status(target)?;
        let finished = now.is_empty() || now.starts_with("Completed");
        if finished && (now != before || started.elapsed() > Duration::from_secs(2)) {
            return Ok(());
        }
        if started.elapsed() > RESIZE_PATIENCE {
            return Err(TuneError::Resize {
                secs: RESIZE_PATIENCE.as_secs(),
                status: now,
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
