//! Per-session event generation: sysbench's `event()` functions.
//!
//! Each `push_*` mirrors one `execute_*` function of `oltp_common.lua`, drawing its random
//! values in the same order (table, then per statement its ids and strings).

use super::defs::Kind;
use super::script::ScriptGen;
use super::tpcc;
use super::{Arg, Call, EventBuf, Shared, C_TEMPLATE, PAD_TEMPLATE};
use crate::rand::{unique_permute, Distribution, Rng};
use qpslab_core::workload::WorkloadKind;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The event generator of one session. Owns its random state; shares the workload.
#[derive(Debug)]
pub struct SessionGen {
    shared: Arc<Shared>,
    rng: Rng,
    /// select_random_*: this session's slice of the key range.
    slice: Distribution,
    /// A script workload's per-session state.
    script: Option<ScriptGen>,
    /// TPC-C's terminal this session is (its home warehouse and pending think time).
    terminal: tpcc::Terminal,
}

impl SessionGen {
    pub(super) fn new(shared: Arc<Shared>, session: u32, sessions: u32, seed: u64) -> SessionGen {
        // Mix the session number in so that sessions sharing a seed draw different sequences.
        let rng = Rng::new(seed ^ u64::from(session).wrapping_mul(0xA076_1D64_78BD_642F));
        // sysbench: rlen = table_size / threads (a float), rmin = rlen * tid, rmax = rmin +
        // rlen, each truncated to uint32 when passed to sb_rand(rmin, rmax).
        let rlen = shared.opts.table_size as f64 / f64::from(sessions);
        let rmin = rlen * f64::from(session % sessions);
        let slice = Distribution::with_range(&shared.opts.rand, rmin as u64, (rmin + rlen) as u64);
        let script = shared.scripts.as_ref().map(ScriptGen::new);
        let terminal = shared
            .tpcc
            .as_ref()
            .map(|t| t.terminal(session))
            .unwrap_or_default();
        SessionGen {
            shared,
            rng,
            slice,
            script,
            terminal,
        }
    }

    /// Clears `out` and fills it with the calls of the next event.
    pub fn next_event(&mut self, out: &mut EventBuf) {
        out.clear();
        if let Some(g) = &mut self.script {
            // Invariant: `script` is only set when the shared workload has scripts.
            if let Some(set) = &self.shared.scripts {
                g.fill(set, &mut self.rng, &self.shared.opts.rand, out);
            }
            return;
        }
        if let Some(t) = &self.shared.tpcc {
            t.fill(&mut self.rng, out, &mut self.terminal);
            return;
        }
        let o = &self.shared.opts;
        let trx = !o.skip_trx;
        match o.kind {
            WorkloadKind::OltpPointSelect => self.point_selects(out, 1),
            WorkloadKind::OltpReadOnly | WorkloadKind::OltpReadWrite => {
                let (points, write) = (o.point_selects, o.kind == WorkloadKind::OltpReadWrite);
                if trx {
                    self.push(out, Kind::Begin, 0, &[]);
                }
                self.point_selects(out, points);
                self.ranges(out);
                if write {
                    self.writes(out);
                }
                if trx {
                    self.push(out, Kind::Commit, 0, &[]);
                }
            }
            WorkloadKind::OltpWriteOnly => {
                if trx {
                    self.push(out, Kind::Begin, 0, &[]);
                }
                self.writes(out);
                if trx {
                    self.push(out, Kind::Commit, 0, &[]);
                }
            }
            WorkloadKind::OltpUpdateIndex => self.index_updates(out),
            WorkloadKind::OltpUpdateNonIndex => self.non_index_updates(out),
            WorkloadKind::OltpInsert => self.insert(out),
            WorkloadKind::OltpDelete => {
                let t = self.table();
                let id = self.id();
                self.push(out, Kind::Deletes, t, &[Arg::Int(id)]);
            }
            WorkloadKind::SelectRandomPoints => {
                let start = out.args.len();
                for _ in 0..o.random_points {
                    let v = self.slice.sample(&mut self.rng) as i64;
                    out.args.push(Arg::Int(v));
                }
                self.close_call(out, Kind::RandomPoints, 1, start);
            }
            WorkloadKind::SelectRandomRanges => {
                let start = out.args.len();
                let delta = o.delta as i64;
                for _ in 0..o.number_of_ranges {
                    let v = self.slice.sample(&mut self.rng) as i64;
                    out.args.push(Arg::Int(v));
                    out.args.push(Arg::Int(v + delta));
                }
                self.close_call(out, Kind::RandomRanges, 1, start);
            }
            // Filled by its own generator above.
            WorkloadKind::Tpcc => {}
        }
    }

    /// Why a script workload's last event came out empty (`FILE:LINE: message`): an
    /// expression failed (division by zero, overflow, an empty random range).
    pub fn script_failure(&self) -> Option<&str> {
        self.script.as_ref().and_then(ScriptGen::failure)
    }

    /// `sysbench.rand.uniform(1, tables)`.
    fn table(&mut self) -> u32 {
        self.rng.uniform(1, u64::from(self.shared.opts.tables)) as u32
    }

    /// `sysbench.rand.default(1, table_size)`.
    fn id(&mut self) -> i64 {
        self.shared.ids.sample(&mut self.rng) as i64
    }

    /// Appends a random string from `template` to the byte store.
    fn rand_str(&mut self, out: &mut EventBuf, template: &[u8]) -> Arg {
        let start = out.bytes.len();
        out.bytes.resize(start + template.len(), 0);
        self.rng.fill_template(template, &mut out.bytes[start..]);
        Arg::Bytes {
            start: start as u32,
            len: template.len() as u32,
        }
    }

    fn stmt(&self, kind: Kind, table: u32) -> u32 {
        // Invariant: `next_event` only pushes kinds that `defs::kinds` listed for this
        // workload's options, and `build` gave each of them a base index.
        let base = self.shared.base[kind as usize].expect("statement kind prepared for workload");
        base + table.saturating_sub(1)
    }

    fn push(&self, out: &mut EventBuf, kind: Kind, table: u32, args: &[Arg]) {
        let start = out.args.len();
        out.args.extend_from_slice(args);
        self.close_call(out, kind, table, start);
    }

    /// Records a call whose arguments were pushed from `start` on.
    fn close_call(&self, out: &mut EventBuf, kind: Kind, table: u32, start: usize) {
        out.calls.push(Call {
            stmt: self.stmt(kind, table),
            args: start as u32..out.args.len() as u32,
        });
    }

    fn point_selects(&mut self, out: &mut EventBuf, n: u32) {
        let t = self.table();
        for _ in 0..n {
            let id = self.id();
            self.push(out, Kind::PointSelects, t, &[Arg::Int(id)]);
        }
    }

    fn ranges(&mut self, out: &mut EventBuf) {
        let o = &self.shared.opts;
        if !o.range_selects {
            return;
        }
        let plan = [
            (Kind::SimpleRanges, o.simple_ranges),
            (Kind::SumRanges, o.sum_ranges),
            (Kind::OrderRanges, o.order_ranges),
            (Kind::DistinctRanges, o.distinct_ranges),
        ];
        let span = o.range_size as i64 - 1;
        for (kind, n) in plan {
            let t = self.table();
            for _ in 0..n {
                let id = self.id();
                self.push(out, kind, t, &[Arg::Int(id), Arg::Int(id + span)]);
            }
        }
    }

    fn writes(&mut self, out: &mut EventBuf) {
        self.index_updates(out);
        self.non_index_updates(out);
        let t = self.table();
        for _ in 0..self.shared.opts.delete_inserts {
            let id = self.id();
            let k = self.id();
            let c = self.rand_str(out, C_TEMPLATE);
            let pad = self.rand_str(out, PAD_TEMPLATE);
            self.push(out, Kind::Deletes, t, &[Arg::Int(id)]);
            self.push(out, Kind::Inserts, t, &[Arg::Int(id), Arg::Int(k), c, pad]);
        }
    }

    fn index_updates(&mut self, out: &mut EventBuf) {
        let t = self.table();
        for _ in 0..self.shared.opts.index_updates {
            let id = self.id();
            self.push(out, Kind::IndexUpdates, t, &[Arg::Int(id)]);
        }
    }

    fn non_index_updates(&mut self, out: &mut EventBuf) {
        let t = self.table();
        for _ in 0..self.shared.opts.non_index_updates {
            let c = self.rand_str(out, C_TEMPLATE);
            let id = self.id();
            self.push(out, Kind::NonIndexUpdates, t, &[c, Arg::Int(id)]);
        }
    }

    /// oltp_insert: id 0 lets AUTO_INCREMENT pick; without auto_inc, sysbench's unique
    /// sequence shifted into the signed INT range.
    fn insert(&mut self, out: &mut EventBuf) {
        let t = self.table();
        let k = self.id();
        let c = self.rand_str(out, C_TEMPLATE);
        let pad = self.rand_str(out, PAD_TEMPLATE);
        let id = if self.shared.opts.auto_inc {
            0
        } else {
            let s = &self.shared;
            let index = s.unique_index.fetch_add(1, Ordering::Relaxed);
            let v =
                unique_permute(unique_permute(index).wrapping_add(s.unique_offset) ^ 0x5bf0_3635);
            i64::from(v) - 2_147_483_648
        };
        self.push(out, Kind::Inserts, t, &[Arg::Int(id), Arg::Int(k), c, pad]);
    }
}
