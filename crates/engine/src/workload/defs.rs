//! The statements of each sysbench script, and the option checks.
//!
//! SQL texts are those of sysbench 1.0.20's `oltp_common.lua` (`stmt_defs`) and of
//! `select_random_points.lua` / `select_random_ranges.lua`, whitespace included, so that
//! statement digests on the server match sysbench's.

use super::{
    ParamKind, StatementDef, StmtClass, WorkloadError, C_TEMPLATE, MAX_TABLE_SIZE, PAD_TEMPLATE,
};
use qpslab_core::workload::{WorkloadKind, WorkloadOptions};

/// A statement kind, by sysbench's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `BEGIN`.
    Begin,
    /// `COMMIT`.
    Commit,
    /// `SELECT c FROM sbtestN WHERE id=?`.
    PointSelects,
    /// `SELECT c ... BETWEEN`.
    SimpleRanges,
    /// `SELECT SUM(k) ... BETWEEN`.
    SumRanges,
    /// `SELECT c ... BETWEEN ... ORDER BY c`.
    OrderRanges,
    /// `SELECT DISTINCT c ... ORDER BY c`.
    DistinctRanges,
    /// `UPDATE ... SET k=k+1`.
    IndexUpdates,
    /// `UPDATE ... SET c=?`.
    NonIndexUpdates,
    /// `DELETE ... WHERE id=?`.
    Deletes,
    /// `INSERT INTO sbtestN (id, k, c, pad) VALUES (?, ?, ?, ?)`.
    Inserts,
    /// select_random_points' `SELECT ... WHERE k IN (...)`.
    RandomPoints,
    /// select_random_ranges' `SELECT count(k) ... WHERE k BETWEEN ... OR ...`.
    RandomRanges,
}

impl Kind {
    /// How many kinds there are.
    pub const COUNT: usize = 13;

    /// sysbench's name, as in [`StatementDef::kind`].
    pub fn name(self) -> &'static str {
        match self {
            Kind::Begin => "begin",
            Kind::Commit => "commit",
            Kind::PointSelects => "point_selects",
            Kind::SimpleRanges => "simple_ranges",
            Kind::SumRanges => "sum_ranges",
            Kind::OrderRanges => "order_ranges",
            Kind::DistinctRanges => "distinct_ranges",
            Kind::IndexUpdates => "index_updates",
            Kind::NonIndexUpdates => "non_index_updates",
            Kind::Deletes => "deletes",
            Kind::Inserts => "inserts",
            Kind::RandomPoints => "random_points",
            Kind::RandomRanges => "random_ranges",
        }
    }

    /// Whether the statement exists once (BEGIN, COMMIT) or once per table.
    fn per_table(self) -> bool {
        !matches!(self, Kind::Begin | Kind::Commit)
    }

    fn class(self) -> StmtClass {
        match self {
            Kind::Begin | Kind::Commit => StmtClass::Other,
            Kind::IndexUpdates | Kind::NonIndexUpdates | Kind::Deletes | Kind::Inserts => {
                StmtClass::Write
            }
            _ => StmtClass::Read,
        }
    }

    /// SQL and parameters for table `t`.
    fn sql(self, t: u32, o: &WorkloadOptions) -> (String, Vec<ParamKind>) {
        use ParamKind::{FixedBytes, Int};
        let range = |s: &str| (s.replace("%u", &t.to_string()), vec![Int, Int]);
        match self {
            Kind::Begin => ("BEGIN".into(), vec![]),
            Kind::Commit => ("COMMIT".into(), vec![]),
            Kind::PointSelects => (format!("SELECT c FROM sbtest{t} WHERE id=?"), vec![Int]),
            Kind::SimpleRanges => range("SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ?"),
            Kind::SumRanges => range("SELECT SUM(k) FROM sbtest%u WHERE id BETWEEN ? AND ?"),
            Kind::OrderRanges => {
                range("SELECT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Kind::DistinctRanges => {
                range("SELECT DISTINCT c FROM sbtest%u WHERE id BETWEEN ? AND ? ORDER BY c")
            }
            Kind::IndexUpdates => (format!("UPDATE sbtest{t} SET k=k+1 WHERE id=?"), vec![Int]),
            Kind::NonIndexUpdates => (
                format!("UPDATE sbtest{t} SET c=? WHERE id=?"),
                vec![FixedBytes(C_TEMPLATE.len()), Int],
            ),
            Kind::Deletes => (format!("DELETE FROM sbtest{t} WHERE id=?"), vec![Int]),
            Kind::Inserts => (
                format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)"),
                vec![
                    Int,
                    Int,
                    FixedBytes(C_TEMPLATE.len()),
                    FixedBytes(PAD_TEMPLATE.len()),
                ],
            ),
            Kind::RandomPoints => {
                let n = o.random_points as usize;
                let points = vec!["?"; n].join(", ");
                (
                    format!(
                        "\n        SELECT id, k, c, pad\n          FROM sbtest{t}\n          WHERE k IN ({points})\n        "
                    ),
                    vec![Int; n],
                )
            }
            Kind::RandomRanges => {
                let n = o.number_of_ranges as usize;
                let ranges = vec!["k BETWEEN ? AND ?"; n].join(" OR ");
                (
                    format!("\n        SELECT count(k)\n          FROM sbtest{t}\n          WHERE {ranges}"),
                    vec![Int; 2 * n],
                )
            }
        }
    }
}

/// The kinds a script prepares, given its options (sysbench's `prepare_statements`).
pub(super) fn kinds(o: &WorkloadOptions) -> Vec<Kind> {
    use Kind::*;
    let trx = |mut v: Vec<Kind>| {
        if !o.skip_trx {
            v.splice(0..0, [Begin, Commit]);
        }
        v
    };
    let ranges: &[Kind] = if o.range_selects {
        &[SimpleRanges, SumRanges, OrderRanges, DistinctRanges]
    } else {
        &[]
    };
    match o.kind {
        WorkloadKind::OltpPointSelect => vec![PointSelects],
        WorkloadKind::OltpReadOnly => trx([&[PointSelects][..], ranges].concat()),
        WorkloadKind::OltpReadWrite => trx([
            &[PointSelects][..],
            ranges,
            &[IndexUpdates, NonIndexUpdates, Deletes, Inserts],
        ]
        .concat()),
        WorkloadKind::OltpWriteOnly => trx(vec![IndexUpdates, NonIndexUpdates, Deletes, Inserts]),
        WorkloadKind::OltpUpdateIndex => vec![IndexUpdates],
        WorkloadKind::OltpUpdateNonIndex => vec![NonIndexUpdates],
        WorkloadKind::OltpInsert => vec![Inserts],
        WorkloadKind::OltpDelete => vec![Deletes],
        WorkloadKind::SelectRandomPoints => vec![RandomPoints],
        WorkloadKind::SelectRandomRanges => vec![RandomRanges],
        // TPC-C has no sysbench statements (validate refuses to build it).
        WorkloadKind::Tpcc => vec![],
    }
}

/// Builds the statement list and, per kind, the index of its first statement.
pub(super) fn build(o: &WorkloadOptions) -> (Vec<StatementDef>, [Option<u32>; Kind::COUNT]) {
    let mut defs = Vec::new();
    let mut base = [None; Kind::COUNT];
    // select_random_* hard-code sbtest1 whatever --tables says.
    let tables = match o.kind {
        WorkloadKind::SelectRandomPoints | WorkloadKind::SelectRandomRanges => 1,
        _ => o.tables,
    };
    for k in kinds(o) {
        base[k as usize] = Some(defs.len() as u32);
        let range = if k.per_table() { 1..=tables } else { 0..=0 };
        for t in range {
            let (sql, params) = k.sql(t, o);
            defs.push(StatementDef {
                kind: k.name().into(),
                table: t,
                sql,
                placeholders: None,
                params,
                class: k.class(),
                text_only: k == Kind::Inserts && o.kind == WorkloadKind::OltpInsert,
            });
        }
    }
    (defs, base)
}

/// Rejects options sysbench would reject or that cannot produce a statement.
pub(super) fn validate(o: &WorkloadOptions) -> Result<(), WorkloadError> {
    let bad = |m: String| Err(WorkloadError::InvalidOption(m));
    if o.tables == 0 || o.tables > super::MAX_TABLES {
        return bad(format!(
            "--tables must be between 1 and {} (got {})",
            super::MAX_TABLES,
            o.tables
        ));
    }
    let counts = [
        ("--point-selects", o.point_selects),
        ("--simple-ranges", o.simple_ranges),
        ("--sum-ranges", o.sum_ranges),
        ("--order-ranges", o.order_ranges),
        ("--distinct-ranges", o.distinct_ranges),
        ("--index-updates", o.index_updates),
        ("--non-index-updates", o.non_index_updates),
        ("--delete-inserts", o.delete_inserts),
        ("--random-points", o.random_points),
        ("--number-of-ranges", o.number_of_ranges),
    ];
    if let Some((name, n)) = counts.iter().find(|(_, n)| *n > super::MAX_PER_EVENT) {
        return bad(format!(
            "{name} {n}: at most {} queries of a kind per event",
            super::MAX_PER_EVENT
        ));
    }
    if o.table_size == 0 || o.table_size > MAX_TABLE_SIZE {
        return bad(format!(
            "--table-size must be between 1 and {MAX_TABLE_SIZE} (got {})",
            o.table_size
        ));
    }
    if o.range_size == 0 || o.range_size > MAX_TABLE_SIZE {
        return bad(format!(
            "--range-size must be between 1 and {MAX_TABLE_SIZE} (got {})",
            o.range_size
        ));
    }
    if o.kind == WorkloadKind::SelectRandomPoints && o.random_points == 0 {
        return bad("--random-points must be at least 1".into());
    }
    if o.kind == WorkloadKind::SelectRandomRanges && o.number_of_ranges == 0 {
        return bad("--number-of-ranges must be at least 1".into());
    }
    if o.delta > MAX_TABLE_SIZE {
        return bad(format!("--delta must be at most {MAX_TABLE_SIZE}"));
    }
    if o.storage_engine.is_empty()
        || !o
            .storage_engine
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return bad(format!(
            "--mysql-storage-engine must be an engine name such as innodb (got '{}')",
            o.storage_engine
        ));
    }
    crate::rand::validate(&o.rand).map_err(|e| WorkloadError::InvalidOption(e.to_string()))?;
    let point = u64::from(o.point_selects);
    let per_event: u64 = match o.kind {
        WorkloadKind::OltpPointSelect => 1,
        WorkloadKind::OltpReadOnly => point + ranges_per_event(o),
        WorkloadKind::OltpReadWrite => point + ranges_per_event(o) + writes(o),
        WorkloadKind::OltpWriteOnly => writes(o),
        WorkloadKind::OltpUpdateIndex => o.index_updates.into(),
        WorkloadKind::OltpUpdateNonIndex => o.non_index_updates.into(),
        _ => 1,
    };
    if per_event == 0 {
        return Err(WorkloadError::EmptyEvent(o.kind.name()));
    }
    Ok(())
}

fn ranges_per_event(o: &WorkloadOptions) -> u64 {
    if o.range_selects {
        [
            o.simple_ranges,
            o.sum_ranges,
            o.order_ranges,
            o.distinct_ranges,
        ]
        .iter()
        .map(|&n| u64::from(n))
        .sum()
    } else {
        0
    }
}

fn writes(o: &WorkloadOptions) -> u64 {
    [o.index_updates, o.non_index_updates, o.delete_inserts]
        .iter()
        .map(|&n| u64::from(n))
        .sum()
}
