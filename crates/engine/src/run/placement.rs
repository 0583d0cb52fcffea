//! How many event loops drive a phase, and on which CPUs: derived at run time from the CPUs
//! the client may use (`--client-cpus`, else its affinity mask), the session count and whether
//! the server's process runs on those CPUs too, never from a constant measured on one machine.
//!
//! `--event-loops N` sets the count; `--client-cpus` pins one loop on each CPU it names.
//! Otherwise the rule, and the measurements behind it (oltp_point_select over a Unix socket,
//! interleaved with sysbench 1.0.20):
//! - CPUs of its own (the server elsewhere, or remote): one loop per CPU, at most one per
//!   session. On a 16-core host with the client on 4 CPUs of its own, one loop ran its CPU at
//!   100% and gave 0.56-0.76x sysbench's QPS while four loops gave 1.24-1.70x.
//! - CPUs shared with the server, few sessions (at most two per CPU): one loop per session,
//!   so each pairs with its server thread like a blocking client (2 cores, 4 sessions: +30% QPS
//!   and -30% CPU per query against one loop).
//! - Shared, many sessions: one loop per CPU but one, which the server's threads need more
//!   than the client does. On 2 cores one loop beat two at 64-1024 sessions (it batches more
//!   replies per wake-up and leaves the server a core); on 16 shared CPUs 16 loops gave
//!   0.97-1.08x sysbench where 4 gave 0.82-0.93x (a loop preempted by busy server threads
//!   stalls every session it drives, so more loops hold up fewer sessions each).
//!
//! Whatever the rule picks, each loop measures its own CPU time, and a loop busy for 90% of a
//! phase marks the phase client-bound ([`qpslab_core::client::ClientLoops`]).

use super::cpu::allowed_cpus;
use qpslab_core::client::ClientLoops;
use qpslab_core::RunPlan;

/// Where a phase's event loops run.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// Event loops.
    pub loops: usize,
    /// CPUs the client may use.
    pub cpus: Vec<usize>,
    /// Loop `i` is pinned to `cpus[i % cpus.len()]` (`--client-cpus`).
    pub pinned: bool,
    /// Whether the server may run on `cpus` (none: unknown).
    pub shares_server: Option<bool>,
    /// Why this many loops.
    pub chosen_by: String,
}

impl Placement {
    /// The phase's record of the placement, with each loop's busy share.
    pub fn record(&self, busy: Vec<f64>, waited: Vec<f64>) -> ClientLoops {
        ClientLoops {
            cpus: self.cpus.clone(),
            pinned: self.pinned,
            shares_server: self.shares_server,
            chosen_by: self.chosen_by.clone(),
            busy,
            waited,
        }
    }

    /// The CPU loop `index` is pinned to, if loops are pinned.
    pub fn cpu_of(&self, index: usize) -> Option<usize> {
        (self.pinned && !self.cpus.is_empty()).then(|| self.cpus[index % self.cpus.len()])
    }

    /// `4 event loops on CPUs 12-15 (not the server's)`.
    pub fn describe(&self) -> String {
        self.record(vec![0.0; self.loops], Vec::new()).placement()
    }
}

/// The placement of a phase of `sessions` sessions under `plan`, on the CPUs this thread may
/// use now.
pub fn place(plan: &RunPlan, sessions: u32) -> Placement {
    place_on(plan, sessions, allowed_cpus())
}

/// [`place`] with the client's affinity mask given (`own`).
fn place_on(plan: &RunPlan, sessions: u32, own: Vec<usize>) -> Placement {
    let (cpus, pinned) = match &plan.client_cpus {
        Some(c) => (c.clone(), true),
        None if own.is_empty() => ((0..1).collect(), false),
        None => (own, false),
    };
    let shares_server = plan
        .server_cpus
        .as_ref()
        .map(|s| s.iter().any(|c| cpus.contains(c)));
    let sessions = sessions.max(1) as usize;
    let (loops, chosen_by) = match plan.event_loops {
        Some(n) => (n, "--event-loops".to_string()),
        None if pinned => (cpus.len(), "one per --client-cpus entry".to_string()),
        None => default_loops(sessions, cpus.len(), shares_server),
    };
    Placement {
        loops: loops.clamp(1, sessions),
        cpus,
        pinned,
        shares_server,
        chosen_by,
    }
}

/// The default loop count for `sessions` on `cpus` CPUs, and why (see the module's rule).
/// A server whose placement is unknown is taken to share the CPUs (a local server is the
/// common case, and the shared rule is the cautious one).
fn default_loops(sessions: usize, cpus: usize, shares_server: Option<bool>) -> (usize, String) {
    let cpus = cpus.max(1);
    if shares_server == Some(false) {
        return (cpus.min(sessions), "one per CPU of the client's own".into());
    }
    if sessions <= 2 * cpus {
        return (
            sessions,
            "one per session (at most two per CPU shared with the server)".into(),
        );
    }
    (
        (cpus - 1).max(1),
        "one per CPU but one, the rest left to the server".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::WorkloadOptions;

    fn plan() -> RunPlan {
        RunPlan::new(WorkloadOptions::new(
            qpslab_core::WorkloadKind::OltpPointSelect,
        ))
    }

    fn cpus(r: std::ops::RangeInclusive<usize>) -> Vec<usize> {
        r.collect()
    }

    #[test]
    fn a_client_on_cpus_of_its_own_runs_a_loop_per_cpu() {
        // The 16-core split placement: server on 0-11, client (by taskset) on 12-15.
        let mut p = plan();
        p.server_cpus = Some(cpus(0..=11));
        for sessions in [32, 256, 1024] {
            let pl = place_on(&p, sessions, cpus(12..=15));
            assert_eq!(pl.loops, 4, "{sessions}");
            assert_eq!(pl.shares_server, Some(false));
            assert!(!pl.pinned);
        }
        assert_eq!(
            place_on(&p, 2, cpus(12..=15)).loops,
            2,
            "never more than sessions"
        );
        assert_eq!(
            place_on(&p, 32, cpus(12..=15)).describe(),
            "4 event loops on CPUs 12-15 (not the server's)"
        );
        // A remote server: none of this machine's CPUs are its.
        p.server_cpus = Some(Vec::new());
        assert_eq!(place_on(&p, 1024, cpus(0..=63)).loops, 64);
    }

    #[test]
    fn a_client_sharing_cpus_with_the_server() {
        let mut p = plan();
        p.server_cpus = Some(cpus(0..=15));
        // Few sessions: one loop each.
        assert_eq!(place_on(&p, 32, cpus(0..=15)).loops, 32);
        assert_eq!(place_on(&p, 4, cpus(0..=1)).loops, 4);
        // Many: all CPUs but one.
        assert_eq!(place_on(&p, 256, cpus(0..=15)).loops, 15);
        assert_eq!(place_on(&p, 1024, cpus(0..=15)).loops, 15);
        // On 2 cores, one loop for many sessions (as measured there).
        assert_eq!(place_on(&p, 64, cpus(0..=1)).loops, 1);
        assert_eq!(place_on(&p, 1024, cpus(0..=1)).loops, 1);
        // An unknown server placement is taken as shared.
        p.server_cpus = None;
        let pl = place_on(&p, 1024, cpus(0..=15));
        assert_eq!((pl.loops, pl.shares_server), (15, None));
        // A partial overlap is sharing.
        p.server_cpus = Some(vec![3, 4]);
        assert_eq!(place_on(&p, 1024, cpus(4..=7)).shares_server, Some(true));
    }

    #[test]
    fn client_cpus_pin_a_loop_each_and_event_loops_overrides() {
        let mut p = plan();
        p.client_cpus = Some(vec![1]);
        p.server_cpus = Some(vec![0]);
        let pl = place_on(&p, 64, cpus(0..=1));
        assert_eq!((pl.loops, pl.pinned, pl.cpu_of(0)), (1, true, Some(1)));
        assert_eq!(
            pl.describe(),
            "1 event loop on CPU 1 (pinned, not the server's)"
        );
        // The CPUs named are the client's: a loop on each, shared with the server or not.
        p.client_cpus = Some(vec![2, 3]);
        p.server_cpus = Some(cpus(0..=3));
        let pl = place_on(&p, 64, cpus(0..=3));
        assert_eq!(
            (pl.loops, pl.cpu_of(0), pl.cpu_of(1)),
            (2, Some(2), Some(3))
        );
        p.event_loops = Some(8);
        let pl = place_on(&p, 64, cpus(0..=3));
        assert_eq!((pl.loops, pl.cpu_of(3)), (8, Some(3)));
        assert_eq!(pl.chosen_by, "--event-loops");
        assert_eq!(
            place_on(&p, 3, cpus(0..=3)).loops,
            3,
            "at most one per session"
        );
        // An affinity mask the kernel would not tell: one CPU assumed.
        let mut p = plan();
        p.server_cpus = Some(Vec::new());
        assert_eq!(place_on(&p, 8, Vec::new()).loops, 1);
    }
}
