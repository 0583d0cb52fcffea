//! Each limiter's figure against its threshold, from the evidence: the candidates
//! [`super::decide`] ranks.

use super::{t, CAP};
use crate::limits::{Evidence, Kind, WaitKind};

/// One limiter's figure against its threshold.
pub(super) struct Candidate {
    pub kind: Kind,
    pub name: Option<String>,
    pub ratio: f64,
    pub evidence: Vec<String>,
}

pub(super) fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

pub(super) fn cpus(n: f64) -> String {
    if (n - n.round()).abs() < 1e-9 {
        format!("{n:.0} CPU{}", if n == 1.0 { "" } else { "s" })
    } else {
        format!("{n:.1} CPUs")
    }
}
pub(super) fn candidates(e: &Evidence) -> Vec<Candidate> {
    let mut out = Vec::new();
    let mut push = |kind, name, ratio: f64, evidence: Vec<String>| {
        if ratio.is_finite() && ratio > 0.0 {
            out.push(Candidate {
                kind,
                name,
                ratio,
                evidence,
            })
        }
    };
    // The client: decided by the client check (its loops, or the machine).
    if e.client_limited {
        let why = match e.client_loops {
            Some((sat, loops, busiest)) if sat > 0 => format!(
                "{sat} of {loops} event loop(s) busy at least 90%, the busiest {} of a CPU",
                pct(busiest)
            ),
            _ => match e.server_cpus_used {
                Some(s) if e.client_cpus_used > s => format!(
                    "the client used {:.2} CPUs, more than the server's {s:.2}",
                    e.client_cpus_used
                ),
                _ => format!(
                    "the client used {:.2} of the machine's {}",
                    e.client_cpus_used,
                    cpus(e.machine_cpus)
                ),
            },
        };
        // Named whatever else is past its threshold: the phase measured the client.
        push(Kind::Client, None, CAP, vec![why]);
    }
    if let Some(s) = e.others_share {
        push(
            Kind::Neighbour,
            None,
            s / t::NEIGHBOUR,
            vec![format!("other processes used {} of the machine", pct(s))],
        );
    }
    server_cpu(e, &mut push);
    waits(e, &mut push);
    storage(e, &mut push);
    if let Some(p) = e.thread_pool.filter(|p| p.size > 0) {
        let per_group = p.queued / f64::from(p.size);
        push(
            Kind::ThreadPool,
            None,
            per_group / t::POOL_QUEUE,
            vec![format!(
                "{:.1} connection(s) queued for a thread on average, thread_pool_size {}",
                p.queued, p.size
            )],
        );
    }
    if let Some(n) = &e.net {
        let retrans = if n.segments_out > 0 {
            n.retransmits as f64 / n.segments_out as f64
        } else {
            0.0
        };
        let ratio = (n.softirq_share() / t::SOFTIRQ).max(retrans / t::RETRANSMITS);
        push(
            Kind::Network,
            None,
            ratio,
            vec![format!(
                "softirq {} of the machine, {} of TCP segments retransmitted",
                pct(n.softirq_share()),
                pct(retrans)
            )],
        );
    }
    out
}

type Push<'a> = dyn FnMut(Kind, Option<String>, f64, Vec<String>) + 'a;

fn server_cpu(e: &Evidence, push: &mut Push) {
    let (Some(used), Some(allowed)) = (e.server_cpus_used, e.server_cpus_allowed) else {
        return;
    };
    if allowed <= 0.0 {
        return;
    }
    let share = used / allowed;
    let mut ratio = share / t::SERVER_CPU;
    let mut why = format!("{} of its {}", pct(share), cpus(allowed));
    // A server on every CPU shares them with the client and others: a machine that was busy
    // throughout left it no more, whatever its own share.
    if e.machine_cpus > 0.0 && allowed >= e.machine_cpus && !e.client_limited {
        let busy = (used + e.client_cpus_used) / e.machine_cpus + e.others_share.unwrap_or(0.0);
        let machine = busy.min(1.0) / t::MACHINE_BUSY;
        if machine > ratio && used >= e.client_cpus_used {
            ratio = machine;
            why = format!(
                "the machine's {} were {} busy: the server used {used:.2}, the client {:.2}",
                cpus(e.machine_cpus),
                pct(busy.min(1.0)),
                e.client_cpus_used
            );
        }
    }
    // The CPUs it may run on, busy throughout (with whoever else ran there), left it no more
    // when it was their main user.
    if let Some(busy) = e.threads.as_ref().and_then(|t| t.allowed_busy) {
        let ours = busy / t::MACHINE_BUSY;
        if ours > ratio && share >= 0.5 {
            ratio = ours;
            why = format!(
                "its {} {} {} busy, {} of it the server's",
                cpus(allowed),
                if allowed == 1.0 { "was" } else { "were" },
                pct(busy),
                pct(share)
            );
        }
    }
    push(Kind::ServerCpu, None, ratio, vec![why]);
}

fn waits(e: &Evidence, push: &mut Push) {
    let session_s = e.session_s();
    let share = |s: f64| s / session_s;
    let ps = e
        .waits
        .as_ref()
        .filter(|w| w.source == "performance_schema");
    // Row locks: performance_schema's row lock waits where it has them, else the counter.
    let row_s = ps
        .map(|w| kind_seconds(w, WaitKind::RowLock))
        .filter(|s| *s > 0.0)
        .or(e.row_lock_s);
    if let Some(s) = row_s {
        push(
            Kind::RowLocks,
            None,
            share(s) / t::WAIT_SHARE,
            vec![format!(
                "sessions waited {} of their time on row locks ({s:.1} s over {} session(s))",
                pct(share(s)),
                e.sessions
            )],
        );
    }
    let Some(w) = ps else { return };
    if let Some(top) = w
        .events
        .iter()
        .filter(|x| x.kind == WaitKind::Latch)
        .max_by(|a, b| a.seconds.total_cmp(&b.seconds))
    {
        let short = top.name.rsplit('/').next().unwrap_or(&top.name).to_string();
        push(
            Kind::Latch,
            Some(short),
            share(top.seconds) / t::WAIT_SHARE,
            vec![format!(
                "sessions waited {} of their time on {} ({} waits)",
                pct(share(top.seconds)),
                top.name,
                top.count
            )],
        );
    }
    for (kind, limiter, what) in [
        (WaitKind::LogIo, Kind::RedoLog, "the redo log's file I/O"),
        (WaitKind::DataIo, Kind::DataIo, "data file I/O"),
        (
            WaitKind::TableLock,
            Kind::RowLocks,
            "table and metadata locks",
        ),
    ] {
        let s = kind_seconds(w, kind);
        push(
            limiter,
            None,
            share(s) / t::WAIT_SHARE,
            vec![format!(
                "sessions waited {} of their time on {what}",
                pct(share(s))
            )],
        );
    }
}

fn kind_seconds(w: &crate::limits::Waits, kind: WaitKind) -> f64 {
    w.events
        .iter()
        .filter(|x| x.kind == kind)
        .map(|x| x.seconds)
        .sum()
}

fn storage(e: &Evidence, push: &mut Push) {
    let fsyncs = e.fsyncs.and_then(|n| e.per_event(n));
    if let Some(fill) = e.checkpoint_fill {
        let mut why = vec![format!(
            "the redo log was {} full on average (checkpoint age against the {:.1} MiB at \
             which InnoDB flushes for it): commits waited for pages to be flushed",
            pct(fill),
            e.checkpoint_max_age.unwrap_or(0) as f64 / 1048576.0
        )];
        let cleaner = e.threads.as_ref().and_then(|t| {
            t.classes
                .iter()
                .find(|c| c.class == crate::limits::Class::PageCleaner)
        });
        if let Some(c) = cleaner.filter(|_| e.duration_s > 0.0) {
            why.push(format!(
                "the page cleaner used {:.3} CPUs",
                c.cpu_s / e.duration_s
            ));
        }
        push(Kind::RedoLog, None, fill / t::CHECKPOINT_FILL, why);
    }
    if let Some(n) = e.log_waits.and_then(|n| e.per_event(n)) {
        push(
            Kind::RedoLog,
            None,
            n / t::LOG_WAITS_PER_EVENT,
            vec![format!(
                "{n:.3} redo log waits per transaction (the log buffer was full)"
            )],
        );
    }
    if let Some(d) = e
        .disk
        .as_ref()
        .filter(|d| d.reason.is_none() && d.elapsed_s > 0.0)
    {
        let util = d.utilization();
        let device = format!(
            "{} {} busy, {:.0} requests/s, {:.1} ms each, queue {:.1}",
            d.device,
            pct(util),
            d.iops(),
            d.await_ms(),
            d.queue()
        );
        let redo = fsyncs.is_some_and(|f| f >= t::FSYNCS_PER_EVENT) && d.writes >= d.reads;
        if redo {
            push(
                Kind::RedoLog,
                None,
                util / t::DISK_BUSY,
                vec![format!(
                    "{:.2} fsyncs per transaction; {device}",
                    fsyncs.unwrap_or(0.0)
                )],
            );
        } else {
            push(Kind::DataIo, None, util / t::DISK_BUSY, vec![device]);
        }
    }
    if let Some(r) = e.pool_reads.and_then(|n| e.per_event(n)) {
        let miss = match e.pool_read_requests {
            Some(q) if q > 0 => format!(
                " (miss ratio {:.1}%)",
                e.pool_reads.unwrap_or(0) as f64 / q as f64 * 100.0
            ),
            _ => String::new(),
        };
        push(
            Kind::BufferPool,
            None,
            r / t::POOL_READS_PER_EVENT,
            vec![format!("{r:.2} pages read from disk per transaction{miss}")],
        );
    }
    if let Some(w) = e.pool_wait_free.and_then(|n| e.per_event(n)) {
        push(
            Kind::BufferPool,
            None,
            w / t::POOL_WAIT_FREE_PER_EVENT,
            vec![format!("{w:.3} waits for a free page per transaction")],
        );
    }
}
