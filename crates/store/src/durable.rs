//! Results written as they are measured.
//!
//! [`Store::begin_phase`] writes the run's row (with its owner: pid, boot id, process start
//! time) and a phase row marked `running`; [`Store::append_interval`] adds one report interval
//! (sample and telemetry tick) in its own small transaction;
//! [`Store::finish_phase`] fills in the summary and histograms (`done`), and
//! [`Store::interrupt_phase`] closes a phase cut short with a summary computed from the samples
//! stored so far (`interrupted`). A run left `running` by a process that no longer exists is
//! closed the same way the next time a store is opened ([`close_dead_runs`]).

use crate::error::Error;
use crate::model::{unix_now, RunId, RunMeta, TelemetrySample};
use crate::write::{fill_phase, insert_children, insert_phase_row, insert_sample, run_row};
use crate::Store;
use qpslab_core::result::{CpuUsage, LatencySummary, PhaseResult, QueryCounts, Sample};
use rusqlite::{params, Connection, OptionalExtension, Transaction, TransactionBehavior};

/// A phase being written: where its rows are, and the next sequence numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseHandle {
    /// The run the phase belongs to.
    pub run_id: RunId,
    phase_id: i64,
    next_sample: u32,
    next_tick: u32,
}

/// The process that writes a run, as `/proc` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Owner {
    pub pid: u32,
    pub boot_id: Option<String>,
    /// Start time since boot in clock ticks (field 22 of `/proc/PID/stat`): tells a reused pid.
    pub started: Option<u64>,
}

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        let pid = std::process::id();
        Owner {
            pid,
            boot_id: boot_id(),
            started: start_ticks(pid),
        }
    }

    /// Whether the process that wrote a run still exists. Only a positive proof of death (another
    /// boot, no such pid, a pid reused by a later process, a zombie) says no.
    pub fn alive(&self) -> bool {
        if let (Some(then), Some(now)) = (&self.boot_id, boot_id()) {
            if *then != now {
                return false;
            }
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) else {
            return false;
        };
        let fields = stat_fields(&stat);
        if fields.first() == Some(&"Z") {
            return false;
        }
        match (
            self.started,
            fields.get(19).and_then(|s| s.parse::<u64>().ok()),
        ) {
            (Some(then), Some(now)) => then == now,
            _ => true,
        }
    }
}

fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
}

/// The fields of `/proc/PID/stat` after the command name (which may hold spaces and parens).
fn stat_fields(stat: &str) -> Vec<&str> {
    stat.rfind(')')
        .map_or(Vec::new(), |i| stat[i + 1..].split_whitespace().collect())
}

fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_fields(&stat).get(19)?.parse().ok()
}

impl Store {
    /// Starts writing a phase of `run` with `threads` sessions: the run's row (written with its
    /// first phase, owned by this process) and a phase row marked `running`, in one transaction.
    pub fn begin_phase(&mut self, run: &RunMeta, threads: u32) -> Result<PhaseHandle, Error> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (run_id, seq) = run_row(&tx, run)?;
        let phase_id = insert_phase_row(&tx, run_id, seq, threads)?;
        tx.commit()?;
        Ok(PhaseHandle {
            run_id: RunId(run_id),
            phase_id,
            next_sample: 0,
            next_tick: 0,
        })
    }

    /// Appends one report interval to a running phase: its sample and, when there is one, its
    /// telemetry tick, in one small transaction.
    pub fn append_interval(
        &mut self,
        h: &mut PhaseHandle,
        s: &Sample,
        tick: Option<&TelemetrySample>,
    ) -> Result<(), Error> {
        let tx = self.conn.transaction()?;
        {
            let mut st = tx.prepare_cached(crate::write::INSERT_SAMPLE)?;
            insert_sample(&mut st, h.phase_id, h.next_sample as usize, s)?;
        }
        if let Some(t) = tick {
            tx.prepare_cached(
                "INSERT INTO telemetry (phase_id, seq, elapsed_s, source, json)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                h.phase_id,
                h.next_tick,
                t.elapsed_s,
                t.reading.source(),
                t.reading.values()?.to_string()
            ])?;
        }
        tx.commit()?;
        h.next_sample += 1;
        if tick.is_some() {
            h.next_tick += 1;
        }
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
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
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
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        close_phase(&tx, h.run_id.0, h.phase_id)?;
        tx.commit()?;
        Ok(())
    }
}

/// Marks `interrupted` every run left `running` by a process that is gone, closing its running
/// phases from their stored samples. Runs of live processes, and runs written before owners were
/// recorded, are left alone. Returns how many runs were closed.
pub(crate) fn close_dead_runs(conn: &mut Connection) -> Result<usize, Error> {
    let owners: Vec<(i64, Owner)> = {
        let mut st = conn.prepare(
            "SELECT id, owner_pid, owner_boot_id, owner_started FROM runs
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
            ))
        })?;
        rows.collect::<Result<_, _>>()?
    };
    let dead: Vec<i64> = owners
        .into_iter()
        .filter(|(_, o)| !o.alive())
        .map(|(id, _)| id)
        .collect();
    if dead.is_empty() {
        return Ok(0);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
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

fn close_phase(tx: &Transaction<'_>, run_id: i64, phase_id: i64) -> Result<(), Error> {
    let threads: u32 = tx.query_row(
        "SELECT threads FROM phases WHERE id = ?1",
        [phase_id],
        |r| r.get(0),
    )?;
    let samples = crate::read::samples_of(tx, phase_id)?;
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

/// What a phase's samples say about it as a whole, for a phase that never got its own summary:
/// counts and CPU are sums, latency min/max/mean are exact, percentiles and per-statement
/// latency are left out (intervals' percentiles do not combine), and errors are not by code.
pub fn summary_of_samples(threads: u32, samples: Vec<Sample>) -> PhaseResult {
    let mut p = PhaseResult {
        threads,
        ..Default::default()
    };
    let mut lat = LatencySummary::default();
    let mut weighted = 0.0;
    for s in &samples {
        p.duration_s += s.interval_s;
        p.events += s.events;
        p.queries = QueryCounts {
            read: p.queries.read + s.queries.read,
            write: p.queries.write + s.queries.write,
            other: p.queries.other + s.queries.other,
        };
        p.reconnects += s.reconnects;
        p.client_cpu = CpuUsage {
            user_s: p.client_cpu.user_s + s.client_cpu.user_s,
            sys_s: p.client_cpu.sys_s + s.client_cpu.sys_s,
            max_rss_kib: p.client_cpu.max_rss_kib.max(s.client_cpu.max_rss_kib),
        };
        if s.latency.count > 0 {
            lat.min_ms = if lat.count == 0 {
                s.latency.min_ms
            } else {
                lat.min_ms.min(s.latency.min_ms)
            };
            lat.max_ms = lat.max_ms.max(s.latency.max_ms);
            lat.count += s.latency.count;
            weighted += s.latency.avg_ms * s.latency.count as f64;
        }
    }
    if lat.count > 0 {
        lat.avg_ms = weighted / lat.count as f64;
    }
    p.latency = lat;
    p.samples = samples;
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reused_pid_or_another_boot_is_not() {
        let me = Owner::me();
        assert!(me.boot_id.is_some() && me.started.is_some(), "{me:?}");
        assert!(me.alive());
        let reused = Owner {
            started: me.started.map(|t| t + 1),
            ..me.clone()
        };
        assert!(!reused.alive());
        let other_boot = Owner {
            boot_id: Some("not-this-boot".into()),
            ..me.clone()
        };
        assert!(!other_boot.alive());
        // A child that has exited and been waited for no longer exists.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let gone = Owner {
            pid,
            boot_id: me.boot_id.clone(),
            started: None,
        };
        assert!(!gone.alive());
    }

    #[test]
    fn stat_fields_survive_spaces_and_parens_in_the_name() {
        let stat = "42 (a) b (c)) S 1 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 777 0";
        let f = stat_fields(stat);
        assert_eq!(f[0], "S");
        assert_eq!(f[19], "777");
    }

    #[test]
    fn a_summary_of_samples_adds_counts_and_weights_the_mean() {
        let s = |events, count, min, avg, max| Sample {
            elapsed_s: 0.0,
            interval_s: 1.0,
            events,
            queries: QueryCounts {
                read: events * 10,
                write: 0,
                other: 1,
            },
            latency: LatencySummary {
                count,
                min_ms: min,
                avg_ms: avg,
                max_ms: max,
                percentiles: Vec::new(),
            },
            ..Default::default()
        };
        let p = summary_of_samples(
            4,
            vec![s(100, 100, 0.5, 1.0, 3.0), s(300, 300, 0.2, 2.0, 9.0)],
        );
        assert_eq!((p.threads, p.events, p.duration_s), (4, 400, 2.0));
        assert_eq!(p.queries.read, 4000);
        assert_eq!(p.tps(), 200.0);
        assert_eq!((p.latency.min_ms, p.latency.max_ms), (0.2, 9.0));
        assert!((p.latency.avg_ms - 1.75).abs() < 1e-9);
        assert_eq!(p.samples.len(), 2);
        let empty = summary_of_samples(1, vec![s(0, 0, 0.0, 0.0, 0.0)]);
        assert_eq!(empty.latency.count, 0);
    }
}
