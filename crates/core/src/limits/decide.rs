//! The verdict from the evidence: each limiter has one figure and a threshold; those past it
//! are ranked by how far past (`value / threshold`), and the two strongest are named. A phase
//! with none past its threshold names none, and says which came nearest.

use super::{Evidence, Kind, Limiter, Limits, WaitKind};

/// The thresholds, each the figure at which its limiter is named.
pub mod thresholds {
    /// The server's CPU: share of the CPUs it may run on.
    pub const SERVER_CPU: f64 = 0.85;
    /// The machine's CPUs busy (server, client and others) when the server shares them all.
    pub const MACHINE_BUSY: f64 = 0.9;
    /// Other processes' share of the machine (the stability verdict's own threshold).
    pub const NEIGHBOUR: f64 = crate::stability::OTHERS_SHARE;
    /// Share of the sessions' time waited on row locks, one latch, the redo log's I/O or data
    /// I/O (performance_schema or the row lock counters).
    pub const WAIT_SHARE: f64 = 0.2;
    /// The datadir's device busy share.
    pub const DISK_BUSY: f64 = 0.5;
    /// fsyncs per transaction that make a busy device the redo log's.
    pub const FSYNCS_PER_EVENT: f64 = 0.5;
    /// The redo log's mean fill (checkpoint age against its flushing point) at which commits
    /// wait for pages to be flushed.
    pub const CHECKPOINT_FILL: f64 = 0.8;
    /// Redo log waits (the log buffer full) per transaction.
    pub const LOG_WAITS_PER_EVENT: f64 = 0.01;
    /// Pages read from disk into the buffer pool per transaction.
    pub const POOL_READS_PER_EVENT: f64 = 0.5;
    /// Free-page waits per transaction.
    pub const POOL_WAIT_FREE_PER_EVENT: f64 = 0.01;
    /// Connections queued per thread-pool group.
    pub const POOL_QUEUE: f64 = 1.0;
    /// The host's share in softirq, or retransmitted segments' share.
    pub const SOFTIRQ: f64 = 0.3;
    pub const RETRANSMITS: f64 = 0.01;
    /// A paced phase keeps its schedule (achieved / target) with the server below this CPU.
    pub const PACED_KEPT: f64 = 0.95;
    pub const PACED_IDLE: f64 = 0.5;
}

use thresholds as t;

/// The most limiters a verdict names.
const MOST: usize = 2;
/// Strengths are capped so one runaway figure does not hide the second limiter's rank.
const CAP: f64 = 10.0;

/// One limiter's figure against its threshold.
struct Candidate {
    kind: Kind,
    name: Option<String>,
    ratio: f64,
    evidence: Vec<String>,
}

/// The verdict on a phase from what was seen of it.
pub fn decide(e: Evidence) -> Limits {
    let mut all = candidates(&e);
    all.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
    // One limiter per kind (and latch): a second figure past its threshold for the same
    // limiter is more of its evidence.
    let mut limiters: Vec<Limiter> = Vec::new();
    for c in all.iter().filter(|c| c.ratio >= 1.0) {
        let named = limiters.len();
        if let Some(l) = limiters
            .iter_mut()
            .find(|l| l.kind == c.kind && l.name == c.name)
        {
            l.evidence.extend(c.evidence.iter().cloned());
        } else if named < MOST {
            limiters.push(Limiter {
                kind: c.kind,
                name: c.name.clone(),
                strength: round2(c.ratio.min(CAP)),
                evidence: c.evidence.clone(),
            });
        }
    }
    if limiters.is_empty() {
        if let Some(l) = under_capacity(&e) {
            limiters.push(l);
        }
    }
    let unclear = limiters.is_empty().then(|| {
        let nearest = match all.first() {
            Some(c) => format!(
                "nearest: {} at {:.0}% of its threshold, {}",
                label(c),
                c.ratio * 100.0,
                c.evidence.first().map_or("", String::as_str)
            ),
            None => "nothing was measured beyond throughput".into(),
        };
        match few_sessions(&e) {
            Some(few) => format!("{few}; {nearest}"),
            None => nearest,
        }
    });
    if let Some(l) = limiters.iter_mut().find(|l| l.kind == Kind::ServerCpu) {
        l.evidence.extend(thread_classes(&e));
        l.evidence.extend(hottest(&e));
    }
    Limits {
        limiters,
        unclear,
        unseen: unseen(&e),
        evidence: e,
    }
}

fn label(c: &Candidate) -> String {
    match &c.name {
        Some(n) => format!("{}: {n}", c.kind.label()),
        None => c.kind.label().to_string(),
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

fn cpus(n: f64) -> String {
    if (n - n.round()).abs() < 1e-9 {
        format!("{n:.0} CPU{}", if n == 1.0 { "" } else { "s" })
    } else {
        format!("{n:.1} CPUs")
    }
}

fn candidates(e: &Evidence) -> Vec<Candidate> {
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

fn kind_seconds(w: &super::Waits, kind: WaitKind) -> f64 {
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
                .find(|c| c.class == super::Class::PageCleaner)
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

/// Sessions too few to load the machine: each spends its time on its own round trips, so
/// the phase measured their latency, not a limit of the server.
fn few_sessions(e: &Evidence) -> Option<String> {
    if e.paced.is_some() || e.machine_cpus <= 0.0 || f64::from(e.sessions) > e.machine_cpus {
        return None;
    }
    let busy =
        (e.server_cpus_used? + e.client_cpus_used) / e.machine_cpus + e.others_share.unwrap_or(0.0);
    (busy < 0.5).then(|| {
        format!(
            "{} session(s) on {}, the machine {} busy: each waited on its own round trips; more \
             sessions would load the server further",
            e.sessions,
            cpus(e.machine_cpus),
            pct(busy)
        )
    })
}

/// A paced phase that kept its schedule with the server mostly idle.
fn under_capacity(e: &Evidence) -> Option<Limiter> {
    let (target, achieved) = e.paced?;
    if target <= 0.0 || achieved / target < t::PACED_KEPT {
        return None;
    }
    let share = match (e.server_cpus_used, e.server_cpus_allowed) {
        (Some(u), Some(a)) if a > 0.0 => Some(u / a),
        _ => None,
    };
    if share.is_some_and(|s| s >= t::PACED_IDLE) {
        return None;
    }
    let cpu = share.map_or(String::new(), |s| format!("; server CPU {}", pct(s)));
    Some(Limiter {
        kind: Kind::UnderCapacity,
        name: None,
        strength: 1.0,
        evidence: vec![format!(
            "paced at {target:.0}/s and kept it ({achieved:.0}/s){cpu}"
        )],
    })
}

/// The server's CPU by thread class, the largest first: `connections 1.62 CPUs (busiest
/// thread 34%), page cleaner 0.05`.
fn thread_classes(e: &Evidence) -> Option<String> {
    let t = e.threads.as_ref()?;
    if t.classes.is_empty() || e.duration_s <= 0.0 {
        return None;
    }
    let parts: Vec<String> = t
        .classes
        .iter()
        .take(4)
        .map(|c| {
            format!(
                "{} {:.2} CPUs (busiest thread {})",
                c.class.label(),
                c.cpu_s / e.duration_s,
                pct(c.busiest_s / e.duration_s)
            )
        })
        .collect();
    Some(format!("by thread class: {}", parts.join(", ")))
}

/// The profile's hottest functions: `on CPU most: ut_delay 23%, ...`.
fn hottest(e: &Evidence) -> Option<String> {
    if e.top_functions.is_empty() {
        return None;
    }
    let parts: Vec<String> = e
        .top_functions
        .iter()
        .map(|(f, share)| format!("{f} {}", pct(*share)))
        .collect();
    Some(format!("on CPU most (profile): {}", parts.join(", ")))
}

/// What the verdict could not look at, and why.
fn unseen(e: &Evidence) -> Vec<String> {
    let mut out = Vec::new();
    if e.remote {
        out.push(
            "the server's host: it is not this machine, so its CPU, threads and disk are not seen"
                .to_string(),
        );
    }
    match &e.waits {
        Some(w) if w.source == "performance_schema" => {}
        Some(w) => out.push(format!(
            "latches and wait times: {}",
            w.reason
                .as_deref()
                .unwrap_or("performance_schema's wait summaries are not available")
        )),
        None => out.push("latches and wait times: not sampled".into()),
    }
    if let Some(r) = e.threads.as_ref().and_then(|t| t.reason.as_deref()) {
        out.push(format!("CPU by thread class: {r}"));
    }
    if let Some(r) = e.disk.as_ref().and_then(|d| d.reason.as_deref()) {
        out.push(format!("the datadir's device: {r}"));
    }
    if let Some(r) = &e.perf_reason {
        // The probe's reasons often name the counters themselves.
        out.push(if r.starts_with("hardware counters") {
            r.clone()
        } else {
            format!("hardware counters: {r}")
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{Class, ClassCpu, DiskUse, ThreadCpu, ThreadPool, WaitTime, Waits};

    fn base() -> Evidence {
        Evidence {
            duration_s: 10.0,
            events: 10_000,
            sessions: 8,
            server_cpus_used: Some(0.4),
            server_cpus_allowed: Some(2.0),
            client_cpus_used: 0.2,
            machine_cpus: 2.0,
            waits: Some(Waits {
                source: "status".into(),
                reason: Some("performance_schema is off".into()),
                ..Waits::default()
            }),
            ..Evidence::default()
        }
    }

    fn kinds(l: &Limits) -> Vec<Kind> {
        l.limiters.iter().map(|l| l.kind).collect()
    }

    #[test]
    fn a_quiet_phase_names_nothing_and_says_what_came_nearest() {
        let l = decide(base());
        assert!(l.limiters.is_empty());
        let why = l.unclear.as_deref().unwrap();
        assert!(why.starts_with("nearest: server CPU at"), "{why}");
        assert!(l.to_string().starts_with("no clear limiter (nearest"));
        assert_eq!(
            l.unseen,
            vec!["latches and wait times: performance_schema is off".to_string()]
        );
    }

    #[test]
    fn one_session_on_an_idle_machine_is_said_to_wait_on_its_round_trips() {
        let mut e = base();
        e.sessions = 1;
        let why = decide(e).unclear.unwrap();
        assert!(
            why.starts_with(
                "1 session(s) on 2 CPUs, the machine 30% busy: each waited on its own round trips"
            ),
            "{why}"
        );
    }

    #[test]
    fn a_server_on_one_busy_cpu_is_server_cpu_with_its_thread_classes() {
        let mut e = base();
        e.server_cpus_used = Some(0.96);
        e.server_cpus_allowed = Some(1.0);
        e.threads = Some(ThreadCpu {
            named_by: "performance_schema".into(),
            classes: vec![ClassCpu {
                class: Class::Connection,
                threads: 8,
                cpu_s: 9.0,
                busiest_s: 1.5,
            }],
            ..ThreadCpu::default()
        });
        let l = decide(e);
        assert_eq!(kinds(&l), [Kind::ServerCpu]);
        assert_eq!(l.limiters[0].evidence[0], "96% of its 1 CPU");
        assert_eq!(
            l.limiters[0].evidence[1],
            "by thread class: connections 0.90 CPUs (busiest thread 15%)"
        );
    }

    #[test]
    fn the_profile_names_the_hottest_functions_of_a_busy_server() {
        let folded = "mariadbd;do_command;ut_delay 30\nmariadbd;do_command;my_hash_sort 10\n\
                      mariadbd;ut_delay 10\nnot a line\nmariadbd;x 50\n";
        let top = crate::limits::top_functions(folded.lines(), 2);
        assert_eq!(top, [("x".to_string(), 0.5), ("ut_delay".to_string(), 0.4)]);
        let mut e = base();
        e.server_cpus_used = Some(1.9);
        e.top_functions = top;
        let l = decide(e);
        assert_eq!(
            l.limiters[0].evidence.last().unwrap(),
            "on CPU most (profile): x 50%, ut_delay 40%"
        );
    }

    #[test]
    fn a_server_sharing_its_busy_cpu_is_server_cpu() {
        let mut e = base();
        e.server_cpus_used = Some(0.7);
        e.server_cpus_allowed = Some(1.0);
        e.threads = Some(ThreadCpu {
            allowed_cpus: Some(1),
            allowed_busy: Some(0.98),
            ..ThreadCpu::default()
        });
        let l = decide(e);
        assert_eq!(kinds(&l), [Kind::ServerCpu]);
        assert_eq!(
            l.limiters[0].evidence[0],
            "its 1 CPU was 98% busy, 70% of it the server's"
        );
    }

    #[test]
    fn a_busy_machine_shared_with_the_client_leaves_the_server_no_more() {
        let mut e = base();
        e.server_cpus_used = Some(1.3);
        e.client_cpus_used = 0.6;
        let l = decide(e);
        assert_eq!(kinds(&l), [Kind::ServerCpu]);
        assert!(l.limiters[0].evidence[0].contains("95% busy"), "{l:?}");
    }

    #[test]
    fn the_client_is_named_first_and_a_neighbour_beside_it() {
        let mut e = base();
        e.client_limited = true;
        e.client_loops = Some((2, 2, 0.99));
        e.others_share = Some(0.5);
        let l = decide(e);
        assert_eq!(kinds(&l), [Kind::Client, Kind::Neighbour]);
        assert_eq!(
            l.to_string(),
            "client (2 of 2 event loop(s) busy at least 90%, the busiest 99% of a CPU); \
             neighbour (other processes used 50% of the machine)"
        );
    }

    #[test]
    fn row_lock_time_names_row_locks_without_performance_schema() {
        let mut e = base();
        e.row_lock_s = Some(60.0);
        let l = decide(e);
        assert_eq!(kinds(&l), [Kind::RowLocks]);
        assert!(l.limiters[0].evidence[0].contains("75% of their time"));
    }

    #[test]
    fn a_latch_is_named_from_performance_schema() {
        let mut e = base();
        e.waits = Some(Waits {
            source: "performance_schema".into(),
            events: vec![
                WaitTime {
                    name: "wait/synch/rwlock/innodb/lock_latch".into(),
                    kind: WaitKind::Latch,
                    seconds: 30.0,
                    count: 1000,
                },
                WaitTime {
                    name: "wait/synch/mutex/sql/LOCK_open".into(),
                    kind: WaitKind::Latch,
                    seconds: 1.0,
                    count: 10,
                },
            ],
            reason: None,
        });
        let l = decide(e);
        assert_eq!(l.limiters[0].label(), "latch: lock_latch");
        assert!(l.unseen.is_empty());
    }

    #[test]
    fn a_busy_device_is_the_redo_log_with_fsyncs_per_commit_else_data_io() {
        let disk = DiskUse {
            device: "loop3".into(),
            elapsed_s: 10.0,
            reads: 10,
            writes: 5000,
            write_ms: 9000,
            busy_ms: 9000,
            queue_ms: 12_000,
            ..DiskUse::default()
        };
        let mut e = base();
        e.disk = Some(disk.clone());
        e.fsyncs = Some(20_000);
        let l = decide(e.clone());
        assert_eq!(kinds(&l), [Kind::RedoLog]);
        assert!(
            l.limiters[0].evidence[0].starts_with("2.00 fsyncs per transaction; loop3 90% busy")
        );
        e.fsyncs = Some(10);
        assert_eq!(kinds(&decide(e)), [Kind::DataIo]);
    }

    #[test]
    fn a_full_redo_log_is_named_with_the_page_cleaners_cpu() {
        let mut e = base();
        e.checkpoint_fill = Some(0.96);
        e.checkpoint_max_age = Some(2 * 1048576);
        e.threads = Some(ThreadCpu {
            classes: vec![ClassCpu {
                class: Class::PageCleaner,
                threads: 1,
                cpu_s: 0.5,
                busiest_s: 0.5,
            }],
            ..ThreadCpu::default()
        });
        let l = decide(e);
        assert_eq!(kinds(&l), [Kind::RedoLog]);
        assert!(l.limiters[0].evidence[0].starts_with("the redo log was 96% full on average"));
        assert_eq!(l.limiters[0].evidence[1], "the page cleaner used 0.050 CPUs");
    }

    #[test]
    fn pages_read_per_transaction_name_the_buffer_pool() {
        let mut e = base();
        e.pool_reads = Some(25_000);
        e.pool_read_requests = Some(100_000);
        e.server_cpus_used = Some(1.9);
        let l = decide(e);
        assert_eq!(kinds(&l), [Kind::BufferPool, Kind::ServerCpu]);
        assert_eq!(
            l.limiters[0].evidence[0],
            "2.50 pages read from disk per transaction (miss ratio 25.0%)"
        );
    }

    #[test]
    fn a_queued_thread_pool_and_a_kept_pace_are_named() {
        let mut e = base();
        e.thread_pool = Some(ThreadPool {
            size: 1,
            queued: 40.0,
        });
        assert_eq!(kinds(&decide(e)), [Kind::ThreadPool]);
        let mut e = base();
        e.paced = Some((1000.0, 999.0));
        let l = decide(e.clone());
        assert_eq!(kinds(&l), [Kind::UnderCapacity]);
        assert_eq!(
            l.limiters[0].evidence[0],
            "paced at 1000/s and kept it (999/s); server CPU 20%"
        );
        e.paced = Some((1000.0, 600.0));
        assert!(decide(e).limiters.is_empty());
    }

    #[test]
    fn a_limiter_past_two_thresholds_is_named_once_with_both_figures() {
        let mut e = base();
        e.pool_reads = Some(25_000);
        e.pool_wait_free = Some(1_000);
        e.row_lock_s = Some(20.0);
        let l = decide(e);
        assert_eq!(kinds(&l), [Kind::BufferPool, Kind::RowLocks]);
        assert_eq!(l.limiters[0].evidence.len(), 2, "{l:?}");
    }

    #[test]
    fn at_most_two_are_named_the_strongest_first() {
        let mut e = base();
        e.row_lock_s = Some(40.0);
        e.others_share = Some(0.9);
        e.server_cpus_used = Some(1.95);
        let l = decide(e);
        assert_eq!(kinds(&l), [Kind::Neighbour, Kind::RowLocks]);
        assert_eq!(l.short(), "neighbour + row locks");
    }

    #[test]
    fn the_verdict_reads_back_as_stored() {
        let l = decide(base());
        let text = serde_json::to_string(&l).unwrap();
        assert_eq!(serde_json::from_str::<Limits>(&text).unwrap(), l);
    }
}
