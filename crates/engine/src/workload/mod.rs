//! sysbench 1.0.20's OLTP workloads as statements and events.
//!
//! A [`Workload`] is built once from [`WorkloadOptions`] and shared by every event loop. It
//! lists its [`StatementDef`]s (one per statement kind and table, with `?` placeholders, as
//! sysbench's `oltp_common.lua` prepares them) and hands each session a [`SessionGen`], which
//! fills an [`EventBuf`] with the calls of one event (one sysbench `event()`: a transaction for
//! oltp_read_write, a single point select for oltp_point_select, ...), in sysbench's order and
//! counts, drawing ids from sysbench's distributions. Filling an event allocates nothing once
//! the buffer has grown.
//!
//! ```
//! use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
//! use qpslab_engine::workload::{EventBuf, Workload};
//! let w = Workload::new(&WorkloadOptions::new(WorkloadKind::OltpReadWrite)).unwrap();
//! let mut gen = w.session(0, 42);
//! let mut ev = EventBuf::default();
//! gen.next_event(&mut ev);
//! assert_eq!(ev.calls.len(), 20); // BEGIN, 10 point selects, 4 ranges, 4 writes, COMMIT
//! let mut sql = Vec::new();
//! w.render_text(&ev, &ev.calls[0], &mut sql);
//! assert_eq!(sql, b"BEGIN");
//! ```

pub mod dataset;
mod defs;
pub mod rows;
pub mod schema;
pub mod script;
mod session;
mod text;
pub mod tpcc;

pub use defs::Kind;
pub use session::SessionGen;

use crate::rand::Distribution;
use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use std::ops::Range;
use std::sync::atomic::AtomicU32;
use std::sync::Arc;

/// sysbench's template for `c` values: 10 groups of 11 digits joined by `-` (119 bytes).
pub const C_TEMPLATE: &[u8; 119] = b"###########-###########-###########-###########-###########-###########-###########-###########-###########-###########";
/// sysbench's template for `pad` values: 5 groups of 11 digits joined by `-` (59 bytes).
pub const PAD_TEMPLATE: &[u8; 59] = b"###########-###########-###########-###########-###########";

/// How sysbench counts a statement in its read/write/other totals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StmtClass {
    /// SELECTs.
    Read,
    /// UPDATE, DELETE, INSERT.
    Write,
    /// BEGIN and COMMIT.
    Other,
}

/// The type of one `?` parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// An integer (sysbench binds `INT`).
    Int,
    /// A string parameter of exactly this many bytes (sysbench's c and pad values: 119 and 59).
    FixedBytes(usize),
}

/// One statement a workload runs, on one table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementDef {
    /// sysbench's name for it: `point_selects`, `simple_ranges`, `sum_ranges`, `order_ranges`,
    /// `distinct_ranges`, `index_updates`, `non_index_updates`, `deletes`, `inserts`, `begin`,
    /// `commit`, `random_points`, `random_ranges`.
    pub kind: Arc<str>,
    /// The table number N of `sbtestN`; 0 for BEGIN and COMMIT.
    pub table: u32,
    /// The SQL with `?` placeholders.
    pub sql: String,
    /// Byte offsets of the placeholders in `sql`, when it also holds a `?` that is not one (in
    /// a script's string or comment), which the plain scan of text rendering would take for
    /// one; `None` for every sysbench statement.
    pub placeholders: Option<Vec<u32>>,
    /// One entry per placeholder, in order.
    pub params: Vec<ParamKind>,
    /// Read, write or other, as sysbench counts it.
    pub class: StmtClass,
    /// True when sysbench sends this statement as text even with prepared statements on
    /// (oltp_insert's INSERT goes through `con:query`).
    pub text_only: bool,
}

/// One argument of a [`Call`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// An integer value.
    Int(i64),
    /// A byte string stored in [`EventBuf::bytes`] at `start..start + len`.
    Bytes {
        /// Offset into [`EventBuf::bytes`].
        start: u32,
        /// Length in bytes.
        len: u32,
    },
}

/// One statement execution within an event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// Index into [`Workload::statements`].
    pub stmt: u32,
    /// Range of this call's arguments in [`EventBuf::args`].
    pub args: Range<u32>,
}

/// The calls of one event, with their arguments; reused from event to event.
#[derive(Clone, Debug, Default)]
pub struct EventBuf {
    /// The calls, in the order they must run.
    pub calls: Vec<Call>,
    /// Every call's arguments, back to back.
    pub args: Vec<Arg>,
    /// Storage of every byte-string argument.
    pub bytes: Vec<u8>,
    /// Microseconds the session waits before the event's first call, counted in no latency:
    /// TPC-C spec mode's think time after the last transaction and keying time of this one.
    pub pause_us: u64,
}

impl EventBuf {
    /// Empties the buffer, keeping its capacity.
    pub fn clear(&mut self) {
        self.calls.clear();
        self.args.clear();
        self.bytes.clear();
        self.pause_us = 0;
    }

    /// The bytes of a [`Arg::Bytes`] argument; `None` for an integer.
    pub fn arg_bytes(&self, a: &Arg) -> Option<&[u8]> {
        match *a {
            Arg::Int(_) => None,
            Arg::Bytes { start, len } => self
                .bytes
                .get(start as usize..start as usize + len as usize),
        }
    }

    /// The arguments of `call`.
    pub fn call_args(&self, call: &Call) -> &[Arg] {
        &self.args[call.args.start as usize..call.args.end as usize]
    }
}

/// Options that cannot make a valid workload.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkloadError {
    /// An option is out of range; the message names it and says what is allowed.
    #[error("invalid workload option: {0}")]
    InvalidOption(String),
    /// The options leave the event without any statement (e.g. `--index-updates=0` with
    /// oltp_update_index).
    #[error("{0}: these options leave no statement to run per event")]
    EmptyEvent(&'static str),
    /// A script of a script workload cannot run (`FILE:LINE: message`).
    #[error(transparent)]
    Script(#[from] script::ScriptError),
}

/// The largest table size: `id` is a signed 32-bit INTEGER in sysbench's schema.
pub const MAX_TABLE_SIZE: u64 = i32::MAX as u64;

/// The most tables a workload may use. Every session prepares each statement once per table
/// (as sysbench does), so the statements are built per table before anything connects, and a
/// server holds at most `max_prepared_stmt_count` (16382 by default) of them in all.
pub const MAX_TABLES: u32 = 10_000;

/// The most queries of one kind per event (sysbench's defaults are 1 to 10): an event's calls
/// are built in one buffer per session.
pub const MAX_PER_EVENT: u32 = 100_000;

/// Checks workload options without building anything: what [`Workload::new`] refuses, for
/// callers that want to reject input before starting a server or connecting.
pub fn validate(opts: &WorkloadOptions) -> Result<(), WorkloadError> {
    if !opts.scripts.is_empty() {
        script::ScriptSet::parse(&opts.scripts)?;
        return crate::rand::validate(&opts.rand)
            .map_err(|e| WorkloadError::InvalidOption(e.to_string()));
    }
    if opts.kind == WorkloadKind::Tpcc {
        // Valid whatever the sysbench options say (warehouses are checked where they are read).
        return crate::rand::validate(&opts.rand)
            .map_err(|e| WorkloadError::InvalidOption(e.to_string()));
    }
    defs::validate(opts)
}

/// What every [`SessionGen`] of a workload shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) opts: WorkloadOptions,
    pub(crate) statements: Vec<StatementDef>,
    /// `base[kind]` is the index of the kind's statement for table 1 (tables follow in order).
    pub(crate) base: [Option<u32>; Kind::COUNT],
    /// Draws ids in [1, table_size], as `sysbench.rand.default(1, table_size)`.
    pub(crate) ids: Distribution,
    /// sysbench's `sb_rand_unique` counter, shared by all sessions (oltp_insert, auto_inc off).
    pub(crate) unique_index: AtomicU32,
    pub(crate) unique_offset: u32,
    /// The scripts of a script workload (then `statements` are theirs).
    pub(crate) scripts: Option<script::ScriptSet>,
    /// TPC-C's transactions (then `statements` are theirs).
    pub(crate) tpcc: Option<tpcc::TpccGen>,
}

/// A workload: its statements and the generator of its events. Cheap to clone, `Send + Sync`.
#[derive(Clone, Debug)]
pub struct Workload {
    shared: Arc<Shared>,
    sessions: u32,
}

impl Workload {
    /// Validates the options and builds the statements.
    pub fn new(opts: &WorkloadOptions) -> Result<Workload, WorkloadError> {
        validate(opts)?;
        let tpcc = (opts.kind == WorkloadKind::Tpcc && opts.scripts.is_empty())
            .then(|| tpcc::TpccGen::new(opts.warehouses.last).with_run(&opts.tpcc));
        let (statements, base, scripts) = if tpcc.is_some() {
            (tpcc::statements(), [None; Kind::COUNT], None)
        } else if opts.scripts.is_empty() {
            let (statements, base) = defs::build(opts);
            (statements, base, None)
        } else {
            let set = script::ScriptSet::parse(&opts.scripts)?;
            (set.statements().to_vec(), [None; Kind::COUNT], Some(set))
        };
        let seed = opts.rand.seed;
        let index = crate::rand::unique_permute(
            crate::rand::unique_permute(seed as u32).wrapping_add(0x682f_0161),
        );
        let offset = crate::rand::unique_permute(
            crate::rand::unique_permute((seed >> 32) as u32).wrapping_add(0x4679_0905),
        );
        let shared = Shared {
            opts: opts.clone(),
            statements,
            base,
            ids: Distribution::new(&opts.rand, opts.table_size),
            unique_index: AtomicU32::new(index),
            unique_offset: offset,
            scripts,
            tpcc,
        };
        Ok(Workload {
            shared: Arc::new(shared),
            sessions: 1,
        })
    }

    /// Sets how many sessions run this workload; select_random_points and select_random_ranges
    /// give each session its own slice of the key range, as sysbench does per thread.
    pub fn with_sessions(mut self, sessions: u32) -> Workload {
        self.sessions = sessions.max(1);
        self
    }

    /// The options this workload was built from.
    pub fn options(&self) -> &WorkloadOptions {
        &self.shared.opts
    }

    /// The workload's kind.
    pub fn kind(&self) -> WorkloadKind {
        self.shared.opts.kind
    }

    /// Every statement the workload may run, one per (kind, table); calls index into this.
    pub fn statements(&self) -> &[StatementDef] {
        &self.shared.statements
    }

    /// The generator of session number `session` (0-based) among [`Workload::with_sessions`]
    /// sessions, seeded with `seed` (mixed with the session number so sessions differ).
    pub fn session(&self, session: u32, seed: u64) -> SessionGen {
        self.session_in(session, self.sessions, seed)
    }

    /// Like [`Workload::session`] with an explicit session count.
    pub fn session_in(&self, session: u32, sessions: u32, seed: u64) -> SessionGen {
        SessionGen::new(Arc::clone(&self.shared), session, sessions.max(1), seed)
    }

    /// Whether the events are TPC-C's transactions.
    pub fn is_tpcc(&self) -> bool {
        self.shared.tpcc.is_some()
    }

    /// The type of the events that statement `stmt` ends (`new_order` for TPC-C's
    /// `new_order.commit` and `new_order.rollback`); `None` for workloads whose events have no
    /// types.
    pub fn event_type(&self, stmt: usize) -> Option<&str> {
        self.shared.tpcc.as_ref()?;
        tpcc::transaction_ended_by(&self.shared.statements.get(stmt)?.kind)
    }

    /// Renders `call` as text-protocol SQL into `out` (cleared first): integers in decimal,
    /// byte strings quoted `'...'` with quotes and backslashes escaped.
    pub fn render_text(&self, buf: &EventBuf, call: &Call, out: &mut Vec<u8>) {
        let def = &self.shared.statements[call.stmt as usize];
        match &def.placeholders {
            None => text::render(def.sql.as_bytes(), buf, buf.call_args(call), out),
            Some(at) => text::render_at(&def.sql, at, buf, buf.call_args(call), out),
        }
    }
}

#[cfg(test)]
mod tests;
