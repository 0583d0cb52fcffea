//! Writing runs: a whole phase in one transaction, and the rows that phases written as they
//! are measured share with it (see `durable`).

use crate::db::{params, Behavior, OptionalExtension, Tx};
use crate::error::Error;
use crate::model::{redact_url_passwords, unix_now, RunId, RunMeta, RunStatus, TelemetrySample};
use crate::owner::Owner;
use crate::Store;
use qpslab_core::env::ServerInfo;
use qpslab_core::result::{PhaseResult, Sample};

/// A counter as SQLite's signed integer.
pub(crate) fn int(what: &'static str, value: u64) -> Result<i64, Error> {
    i64::try_from(value).map_err(|_| Error::OutOfRange { what, value })
}

impl Store {
    /// Records one finished phase of `run`, with its samples, histograms and `telemetry`, in one
    /// transaction. The run's row is written with its first phase, so a run whose first phase
    /// fails leaves nothing behind, and a failure while writing a later phase leaves the
    /// earlier ones intact. Returns the run's id.
    pub fn record_phase(
        &mut self,
        run: &RunMeta,
        phase: &PhaseResult,
        telemetry: &[TelemetrySample],
    ) -> Result<RunId, Error> {
        // IMMEDIATE takes the write lock up front, so two processes sharing a store cannot both
        // read the next phase number and then collide on it.
        self.guard_target(&run.server)?;
        self.keep_alive()?;
        let tx = self.conn.transaction_with_behavior(Behavior::Immediate)?;
        let (run_id, seq) = run_row(&tx, run)?;
        let phase_id = insert_phase_row(&tx, run_id, seq, phase.threads)?;
        fill_phase(&tx, phase_id, phase, "done")?;
        insert_children(&tx, phase_id, phase, telemetry)?;
        tx.commit()?;
        Ok(RunId(run_id))
    }

    /// Marks the run `uuid` finished with `status`. Does nothing if no phase of it was recorded.
    pub fn finish_run(&mut self, uuid: &str, status: RunStatus) -> Result<(), Error> {
        self.conn.execute(
            "UPDATE runs SET status = ?1, finished_at = ?2 WHERE uuid = ?3",
            params![status.as_str(), unix_now(), uuid],
        )?;
        Ok(())
    }
}

/// The server facts to store: probe already drops credentials, but a variable named like a
/// password is dropped here too, since the store is what outlives the process.
fn server_without_secrets(server: &ServerInfo) -> ServerInfo {
    let mut s = server.clone();
    s.variables
        .retain(|k, _| !k.to_ascii_lowercase().contains("password"));
    s
}

fn insert_run(tx: &Tx<'_>, run: &RunMeta) -> Result<i64, Error> {
    let owner = Owner::me();
    tx.execute(
        "INSERT INTO runs (uuid, started_at, status, command, workload, plan_json, target,
                           server_version, server_json, host_json, tool_version, study_id,
                           cell_label, owner_pid, owner_boot_id, owner_started)
         VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
        params![
            run.uuid,
            run.started_at,
            redact_url_passwords(&run.command),
            run.plan.workload_name(),
            serde_json::to_string(&run.plan)?,
            redact_url_passwords(&run.target),
            run.server.version,
            serde_json::to_string(&server_without_secrets(&run.server))?,
            serde_json::to_string(&run.host)?,
            run.tool_version,
            run.study_id,
            run.cell_label,
            owner.pid,
            owner.boot_id,
            owner.started.and_then(|t| i64::try_from(t).ok()),
        ],
    )?;
    let id = tx.last_insert_rowid();
    crate::lease::own(tx)?;
    Ok(id)
}

/// The id of `run`'s row, inserted now if this is its first phase, and the next phase number.
pub(crate) fn run_row(tx: &Tx<'_>, run: &RunMeta) -> Result<(i64, i64), Error> {
    let run_id = match tx
        .query_row("SELECT id FROM runs WHERE uuid = ?1", [&run.uuid], |r| {
            r.get(0)
        })
        .optional()?
    {
        Some(id) => id,
        None => insert_run(tx, run)?,
    };
    let seq: i64 = tx.query_row(
        "SELECT coalesce(max(seq), 0) + 1 FROM phases WHERE run_id = ?1",
        [run_id],
        |r| r.get(0),
    )?;
    Ok((run_id, seq))
}

/// A phase row with nothing measured yet, status `running`.
pub(crate) fn insert_phase_row(
    tx: &Tx<'_>,
    run_id: i64,
    seq: i64,
    threads: u32,
) -> Result<i64, Error> {
    let empty = PhaseResult {
        threads,
        ..Default::default()
    };
    tx.execute(
        "INSERT INTO phases (run_id, seq, recorded_at, threads, duration_s, events, reads, writes,
                             other, errors_json, reconnects, tps, qps, lat_min_ms, lat_avg_ms,
                             lat_max_ms, percentiles_json, statements_json, client_cpu_user_s,
                             client_cpu_sys_s, client_max_rss_kib, summary_json, status)
         VALUES (?1, ?2, ?3, ?4, 0, 0, 0, 0, 0, '{}', 0, 0, 0, 0, 0, 0, '[]', '[]', 0, 0, 0, ?5,
                 'running')",
        params![
            run_id,
            seq,
            unix_now(),
            threads,
            serde_json::to_string(&empty)?
        ],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Writes the summary of phase `phase_id` from `p` and sets its status.
pub(crate) fn fill_phase(
    tx: &Tx<'_>,
    phase_id: i64,
    p: &PhaseResult,
    status: &str,
) -> Result<(), Error> {
    let summary = PhaseResult {
        samples: Vec::new(),
        histograms: Vec::new(),
        ..p.clone()
    };
    let rate = p.rate.as_ref().map(serde_json::to_string).transpose()?;
    tx.execute(
        "UPDATE phases SET recorded_at = ?2, threads = ?3, duration_s = ?4, events = ?5,
                reads = ?6, writes = ?7, other = ?8, errors_json = ?9, reconnects = ?10,
                tps = ?11, qps = ?12, lat_min_ms = ?13, lat_avg_ms = ?14, lat_max_ms = ?15,
                percentiles_json = ?16, statements_json = ?17, client_cpu_user_s = ?18,
                client_cpu_sys_s = ?19, client_max_rss_kib = ?20, rate_json = ?21,
                summary_json = ?22, status = ?23
         WHERE id = ?1",
        params![
            phase_id,
            unix_now(),
            p.threads,
            p.duration_s,
            int("events", p.events)?,
            int("reads", p.queries.read)?,
            int("writes", p.queries.write)?,
            int("other", p.queries.other)?,
            serde_json::to_string(&p.errors)?,
            int("reconnects", p.reconnects)?,
            p.tps(),
            p.qps(),
            p.latency.min_ms,
            p.latency.avg_ms,
            p.latency.max_ms,
            serde_json::to_string(&p.latency.percentiles)?,
            serde_json::to_string(&p.statements)?,
            p.client_cpu.user_s,
            p.client_cpu.sys_s,
            int("client_max_rss_kib", p.client_cpu.max_rss_kib)?,
            rate,
            serde_json::to_string(&summary)?,
            status,
        ],
    )?;
    Ok(())
}

pub(crate) fn insert_children(
    tx: &Tx<'_>,
    phase_id: i64,
    p: &PhaseResult,
    telemetry: &[TelemetrySample],
) -> Result<(), Error> {
    let mut st = tx.prepare(INSERT_SAMPLE)?;
    for (seq, s) in p.samples.iter().enumerate() {
        insert_sample(&mut st, phase_id, seq, s)?;
    }
    let mut st =
        tx.prepare("INSERT INTO histograms (phase_id, seq, name, v2) VALUES (?1, ?2, ?3, ?4)")?;
    for (seq, h) in p.histograms.iter().enumerate() {
        st.execute(params![phase_id, seq as i64, h.name, h.v2])?;
    }
    let mut st = tx.prepare(
        "INSERT INTO telemetry (phase_id, seq, elapsed_s, source, json) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (seq, t) in telemetry.iter().enumerate() {
        st.execute(params![
            phase_id,
            seq as i64,
            t.elapsed_s,
            t.reading.source(),
            t.reading.values()?.to_string()
        ])?;
    }
    crate::actions::write_actions(tx, phase_id, &p.actions)
}

/// Inserts one sample row.
pub(crate) const INSERT_SAMPLE: &str =
    "INSERT INTO samples (phase_id, seq, elapsed_s, interval_s, events, reads, writes, other,
                          errors, reconnects, lat_count, lat_min_ms, lat_avg_ms, lat_max_ms,
                          p_json, client_cpu_user_s, client_cpu_sys_s, client_max_rss_kib,
                          late_events, max_lag_ms, client_late_events, client_max_late_ms,
                          stuck_sessions, longest_in_flight_s, histogram)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
             ?19, ?20, ?21, ?22, ?23, ?24, ?25)";

pub(crate) fn insert_sample(
    st: &mut crate::db::Stmt<'_>,
    phase_id: i64,
    seq: usize,
    s: &Sample,
) -> Result<(), Error> {
    st.execute(params![
        phase_id,
        seq as i64,
        s.elapsed_s,
        s.interval_s,
        int("sample events", s.events)?,
        int("sample reads", s.queries.read)?,
        int("sample writes", s.queries.write)?,
        int("sample other", s.queries.other)?,
        int("sample errors", s.errors)?,
        int("sample reconnects", s.reconnects)?,
        int("sample latency count", s.latency.count)?,
        s.latency.min_ms,
        s.latency.avg_ms,
        s.latency.max_ms,
        serde_json::to_string(&s.latency.percentiles)?,
        s.client_cpu.user_s,
        s.client_cpu.sys_s,
        int("sample max_rss_kib", s.client_cpu.max_rss_kib)?,
        int("sample late_events", s.late_events)?,
        s.max_lag_ms,
        int("sample client_late_events", s.client_late_events)?,
        s.client_max_late_ms,
        s.stuck_sessions,
        s.longest_in_flight_s,
        s.histogram.as_ref().map(|h| h.v2.as_slice()),
    ])?;
    Ok(())
}
