//! Results written as they are measured.
//!
//! [`Store::begin_phase`] writes the run's row (with its owner: pid, boot id, process start
//! time) and a phase row marked `running`; [`Store::append_interval`] adds one report interval
//! (sample and telemetry tick) in its own small transaction;
//! [`Store::finish_phase`] fills in the summary and histograms (`done`), and
//! [`Store::interrupt_phase`] closes a phase cut short with a summary computed from the samples
//! stored so far (`interrupted`). A run left `running` by a process that no longer exists is
//! closed the same way the next time a store is opened ([`close_dead_runs`]).

use crate::db::{params, Behavior, Conn, OptionalExtension, Tx};
use crate::error::Error;
use crate::model::{unix_now, RunId, RunMeta, TelemetrySample};
use crate::owner::Owner;
use crate::read::{samples_of, summary_of_samples};
use crate::write::{fill_phase, insert_children, insert_phase_row, insert_sample, run_row};
use crate::Store;
use qpslab_core::result::{PhaseResult, Sample};

/// A phase being written: where its rows are, and the next sequence numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseHandle {
    /// The run the phase belongs to.
    pub run_id: RunId,
    /// The phase's order within the run, from 1.
    pub seq: u32,
    phase_id: i64,
    next_sample: u32,
    next_tick: u32,
}

impl Store {
    /// Starts writing a phase of `run` with `threads` sessions: the run's row (written with its
    /// first phase, owned by this process) and a phase row marked `running`, in one transaction.
    pub fn begin_phase(&mut self, run: &RunMeta, threads: u32) -> Result<PhaseHandle, Error> {
        self.guard_target(&run.server)?;
        self.keep_alive()?;
        let tx = self.conn.transaction_with_behavior(Behavior::Immediate)?;
        let (run_id, seq) = run_row(&tx, run)?;
        let phase_id = insert_phase_row(&tx, run_id, seq, threads)?;
        tx.commit()?;
        Ok(PhaseHandle {
            run_id: RunId(run_id),
            seq: seq as u32,
            phase_id,
            next_sample: 0,
            next_tick: 0,
        })
    }

    /// Appends one report interval to a running phase: its sample and the telemetry readings
    /// of its tick (none, the tick, a gap that ended, a replica's lag), in one small
    /// transaction.
    pub fn append_interval(
        &mut self,
        h: &mut PhaseHandle,
        s: &Sample,
        tick: &[TelemetrySample],
    ) -> Result<(), Error> {
        let tx = self.conn.transaction()?;
        {
            let mut st = tx.prepare_cached(crate::write::INSERT_SAMPLE)?;
            insert_sample(&mut st, h.phase_id, h.next_sample as usize, s)?;
        }
        for (i, t) in tick.iter().enumerate() {
            tx.prepare_cached(
                "INSERT INTO telemetry (phase_id, seq, elapsed_s, source, json)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                h.phase_id,
                h.next_tick + i as u32,
                t.elapsed_s,
                t.reading.source(),
                t.reading.values()?.to_string()
            ])?;
        }
        tx.commit()?;
        h.next_sample += 1;
        h.next_tick += tick.len() as u32;
        Ok(())
    }

    /// Completes a phase: its summary, and the final samples, histograms and telemetry in place
    /// of what was appended, in one transaction. It then reads back exactly as a phase written
    /// whole by [`Store::record_phase`].
    pub fn finish_phase(
        &mut self,
        h: &PhaseHandle,
        phase: &PhaseResult,
        telemetry: &[TelemetrySample],
    ) -> Result<(), Error> {
        let tx = self.conn.transaction_with_behavior(Behavior::Immediate)?;
        for table in ["samples", "histograms", "telemetry"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE phase_id = ?1"),
                [h.phase_id],
            )?;
        }
        fill_phase(&tx, h.phase_id, phase, "done")?;
        insert_children(&tx, h.phase_id, phase, telemetry)?;
        tx.commit()?;
        Ok(())
    }

    /// Closes a phase cut short (signal, error) with what was stored of it: a summary computed
    /// from its samples, status `interrupted`. A phase without a single sample is removed, and
    /// its run too when nothing else was recorded in it.
    pub fn interrupt_phase(&mut self, h: &PhaseHandle) -> Result<(), Error> {
        let tx = self.conn.transaction_with_behavior(Behavior::Immediate)?;
        close_phase(&tx, h.run_id.0, h.phase_id)?;
        tx.commit()?;
        Ok(())
    }
}

/// Marks `interrupted` every run left `running` by a process that is gone, closing its running
/// phases from their stored samples. Runs of live processes, and runs written before owners were
/// recorded, are left alone. Returns how many runs were closed.
pub(crate) fn close_dead_runs(conn: &mut Conn) -> Result<usize, Error> {
    let owners: Vec<(i64, Owner, Option<f64>)> = {
        let mut st = conn.prepare(
            "SELECT id, owner_pid, owner_boot_id, owner_started, heartbeat_at FROM runs
             WHERE status = 'running' AND owner_pid IS NOT NULL",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                Owner {
                    pid: r.get(1)?,
                    boot_id: r.get(2)?,
                    started: r.get::<_, Option<i64>>(3)?.map(|t| t as u64),
                },
                r.get::<_, Option<f64>>(4)?,
            ))
        })?;
        rows.collect::<Result<_, _>>()?
    };
    let (shared, now) = (conn.is_server(), crate::lease::now(conn)?);
    let dead: Vec<i64> = owners
        .into_iter()
        .filter(|(_, o, beat)| !crate::lease::alive(o, shared, *beat, now))
        .map(|(id, _, _)| id)
        .collect();
    if dead.is_empty() {
        return Ok(0);
    }
    let tx = conn.transaction_with_behavior(Behavior::Immediate)?;
    for &run in &dead {
        // Another process may have closed it between the read and this write lock.
        let still: Option<i64> = tx
            .query_row(
                "SELECT id FROM runs WHERE id = ?1 AND status = 'running'",
                [run],
                |r| r.get(0),
            )
            .optional()?;
        if still.is_none() {
            continue;
        }
        let phases: Vec<i64> = tx
            .prepare("SELECT id FROM phases WHERE run_id = ?1 AND status = 'running'")?
            .query_map([run], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for phase in phases {
            close_phase(&tx, run, phase)?;
        }
        tx.execute(
            "UPDATE runs SET status = 'interrupted', finished_at = ?1 WHERE id = ?2",
            params![unix_now(), run],
        )?;
    }
    tx.commit()?;
    Ok(dead.len())
}

fn close_phase(tx: &Tx<'_>, run_id: i64, phase_id: i64) -> Result<(), Error> {
    let threads: u32 = tx.query_row(
        "SELECT threads FROM phases WHERE id = ?1",
        [phase_id],
        |r| r.get(0),
    )?;
    let samples = samples_of(tx, phase_id)?;
    if samples.is_empty() {
        tx.execute("DELETE FROM phases WHERE id = ?1", [phase_id])?;
        tx.execute(
            "DELETE FROM runs WHERE id = ?1 AND NOT EXISTS
               (SELECT 1 FROM phases WHERE run_id = ?1)",
            [run_id],
        )?;
        return Ok(());
    }
    fill_phase(
        tx,
        phase_id,
        &summary_of_samples(threads, samples),
        "interrupted",
    )
}
