//! Measuring every class on both sides: results, timed ABBA rounds, plans and counters.

use super::session::SideConn;
use super::MIN_ROUNDS;

/// Rounds on one pair of timed connections (one AB/BA pair): then both are reopened, so that
/// what is peculiar to one connection (its server thread, the CPU it landed on) stays inside
/// one unit of the analysis (`report::diff::paired`) instead of biasing a run of them. With
/// ten rounds per connection an A/A on this 2-core machine came out "significant" 1 time in 5.
const ROUNDS_PER_CONNECTION: usize = 2;
use super::{check, counters, explain, ClassWork, DiffObserver, DiffOptions, DiffSide, Work};
use qpslab_core::diff::{ClassMeasure, DiffMeasurement, Pair, SkippedClass};
use qpslab_engine::RunError;
use qpslab_lab::study::expand::round_order;
use qpslab_lab::ExecError;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The connections of one side: one timed, one for plans and counters.
struct Conns {
    timed: SideConn,
    probe: SideConn,
}

impl Conns {
    fn open(side: &DiffSide) -> Result<Conns, ExecError> {
        Ok(Conns {
            timed: SideConn::open(side)?,
            probe: SideConn::open(side)?,
        })
    }
}

/// Measures `work` on sides `a` and `b`. A statement the server refuses (a read-only
/// transaction, a privilege the account lacks) skips its class, with the server's reason; one
/// failing otherwise on both sides marks its class (`error`); either way the next class is
/// measured; a lost connection or `stop` ends everything.
pub fn measure(
    sides: &Pair<DiffSide>,
    work: &Work,
    skipped: Vec<SkippedClass>,
    o: &DiffOptions,
    obs: &mut dyn DiffObserver,
    stop: &AtomicBool,
) -> Result<DiffMeasurement, ExecError> {
    let mut conns = [Conns::open(&sides[0])?, Conns::open(&sides[1])?];
    let mut out = DiffMeasurement {
        sides: [sides[0].label.clone(), sides[1].label.clone()],
        versions: [
            conns[0].timed.version().to_string(),
            conns[1].timed.version().to_string(),
        ],
        skipped,
        ..Default::default()
    };
    let n = work.classes.len();
    for (i, c) in work.classes.iter().enumerate() {
        let m = match class(sides, &mut conns, c, o, obs, stop) {
            Ok(m) => m,
            // A statement outlived the timeout: a locked table, a hung server.
            Err(e) if super::session::timed_out(&e) => {
                let limit = sides[0].statement_timeout.unwrap_or_default().as_secs_f64();
                return Err(ExecError::Stalled(format!(
                    "a statement of class `{}` ran longer than {limit:.0} s on {} or {} (a \
                     locked table? a hung server?); raise --statement-timeout if it is just slow",
                    c.fingerprint, sides[0].label, sides[1].label
                )));
            }
            // The server went away mid-measurement (killed, restarted): a runtime failure.
            Err(e) if e.is_connection_lost() => {
                return Err(ExecError::Run(RunError::Reconnect {
                    target: format!("{} or {}", sides[0].label, sides[1].label),
                    source: e,
                }))
            }
            Err(e) => match crate::replay::exec::refusal(&e, sides[0].read_only) {
                // The server refused it (a read-only side): the class is skipped, with why.
                Some(reason) => {
                    out.skipped.push(SkippedClass {
                        fingerprint: c.fingerprint.clone(),
                        count: c.count,
                        reason,
                    });
                    continue;
                }
                None => ClassMeasure {
                    fingerprint: c.fingerprint.clone(),
                    count: c.count,
                    sample: c.sample.len(),
                    error: Some(e.to_string()),
                    ..Default::default()
                },
            },
        };
        if stop.load(Ordering::Relaxed) {
            return Err(ExecError::Run(RunError::Interrupted));
        }
        obs.class_done(i, n, &m);
        out.classes.push(m);
    }
    Ok(out)
}

fn class(
    sides: &Pair<DiffSide>,
    conns: &mut [Conns; 2],
    c: &ClassWork,
    o: &DiffOptions,
    obs: &dyn DiffObserver,
    stop: &AtomicBool,
) -> Result<ClassMeasure, qpslab_wire::Error> {
    let [ca, cb] = conns;
    let results = check::compare(&mut ca.timed, &mut cb.timed, c)?;
    let mut m = ClassMeasure {
        fingerprint: c.fingerprint.clone(),
        count: c.count,
        sample: c.sample.len(),
        results,
        ..Default::default()
    };
    let timed = Timed {
        sides,
        conns: [&mut ca.timed, &mut cb.timed],
    };
    timed_rounds(timed, c, o, obs, stop, &mut m)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(m);
    }
    for (side, conn) in [&mut ca.probe, &mut cb.probe].into_iter().enumerate() {
        if !c.write {
            if let Some(s) = c.sample.first() {
                conn.use_database(s)?;
                m.explain[side] = match conn.guard(|c| explain::explain(c, &s.sql)) {
                    Ok(facts) => facts,
                    // A read the server cannot EXPLAIN (SHOW...) just has no plan to compare.
                    Err(e) if !e.is_connection_lost() => Vec::new(),
                    Err(e) => return Err(e),
                };
            }
        }
        m.counters[side] = counters::measure(conn, c)?;
    }
    Ok(m)
}

/// A warm-up round, then rounds of the sample on both sides in AB/BA pairs (the order of each
/// pair alternating), until `--repeats`, or precise enough, or out of time (at least
/// [`MIN_ROUNDS`]), always an even number of rounds.
/// The timed connections of both sides, and where to reopen them.
struct Timed<'a> {
    sides: &'a Pair<DiffSide>,
    conns: [&'a mut SideConn; 2],
}

fn timed_rounds(
    mut t: Timed<'_>,
    c: &ClassWork,
    o: &DiffOptions,
    obs: &dyn DiffObserver,
    stop: &AtomicBool,
    m: &mut ClassMeasure,
) -> Result<(), qpslab_wire::Error> {
    // One warm-up round, not counted: caches, plans and connections settle on both sides.
    let mut warm = Vec::new();
    for conn in t.conns.iter_mut() {
        conn.run_class(c, &mut warm)?;
    }
    let t0 = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        // Pairs alternate AB,BA and BA,AB: each side runs once first and once second in a
        // pair, and each is the first on fresh connections in every other pair. Pair `p`
        // runs its first round in `round_order(p)`, its second reversed.
        let r = m.rounds.len();
        let order = round_order(r / 2 + r % 2, 2);
        let mut round = [0u64; 2];
        for side in order {
            round[side] = t.conns[side].run_class(c, &mut m.latencies_us[side])?;
        }
        m.rounds.push(round);
        if m.rounds.len().is_multiple_of(ROUNDS_PER_CONNECTION) {
            for (conn, side) in t.conns.iter_mut().zip(t.sides) {
                conn.reopen(side)?;
                // A fresh connection's first statement also sets up its session: not timed.
                if let Some(first) = c.sample.first() {
                    conn.run(first, c.write)?;
                }
            }
        }
        // Stop only after a B-first round: the second position of a round runs on caches the
        // first warmed, and only whole AB/BA pairs give each side that advantage equally.
        let n = m.rounds.len();
        let done = n.is_multiple_of(2)
            && match o.repeats {
                Some(r) => n >= r,
                None => {
                    n >= MIN_ROUNDS
                        && (t0.elapsed() >= o.max_time_per_class || obs.precise_enough(&m.rounds))
                }
            };
        if done {
            break;
        }
    }
    Ok(())
}
