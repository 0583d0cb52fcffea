//! The shape of a prepared dataset, and how a found table compares with the one a workload
//! needs. Pure logic: `prepare` reads the server and feeds these types.

use qpslab_core::workload::{WorkloadKind, WorkloadOptions};

/// Version of the `qpslab_datasets` record layout.
pub const SCHEMA_VERSION: u32 = 1;

/// What a table of the dataset looks like, as recorded by qpslab or read from the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableShape {
    /// Rows loaded at prepare time (or counted, for a table qpslab did not create).
    pub rows: u64,
    /// `id` is a plain key (`KEY xid`) instead of the primary key.
    pub secondary: bool,
    /// `id` is AUTO_INCREMENT.
    pub auto_inc: bool,
    /// The `k_N` index exists.
    pub k_index: bool,
    /// Storage engine, lower case.
    pub engine: String,
}

impl TableShape {
    /// The shape `o` asks prepare to build.
    pub fn wanted(o: &WorkloadOptions) -> TableShape {
        TableShape {
            rows: rows_to_load(o),
            secondary: o.secondary,
            auto_inc: o.auto_inc,
            k_index: o.create_secondary,
            engine: o.storage_engine.to_ascii_lowercase(),
        }
    }

    /// Why `self` (found on `table`) cannot serve a workload that wants `want`; `None` if it
    /// can.
    pub fn mismatch(&self, want: &TableShape, table: &str) -> Option<String> {
        let flag = |b: bool| if b { "on" } else { "off" };
        if self.rows != want.rows {
            return Some(format!(
                "{table} has {} rows, the workload wants {} (--table-size)",
                self.rows, want.rows
            ));
        }
        if self.secondary != want.secondary {
            return Some(format!(
                "{table} was built with --secondary={}, the workload wants {}",
                flag(self.secondary),
                flag(want.secondary)
            ));
        }
        if self.auto_inc != want.auto_inc {
            return Some(format!(
                "{table} was built with --auto-inc={}, the workload wants {}",
                flag(self.auto_inc),
                flag(want.auto_inc)
            ));
        }
        if self.k_index != want.k_index {
            return Some(format!(
                "{table} {} the k_N index, the workload wants --create-secondary={}",
                if self.k_index { "has" } else { "lacks" },
                flag(want.k_index)
            ));
        }
        if self.engine != want.engine {
            return Some(format!(
                "{table} uses engine {}, the workload wants {}",
                self.engine, want.engine
            ));
        }
        None
    }
}

/// Rows per table prepare loads: sysbench's oltp_insert creates empty tables when auto_inc is
/// off, so that its unique ids cannot collide with prepared ones.
pub fn rows_to_load(o: &WorkloadOptions) -> u64 {
    if o.kind == WorkloadKind::OltpInsert && !o.auto_inc {
        0
    } else {
        o.table_size
    }
}

/// Tables a workload uses: select_random_* only ever touch sbtest1; for TPC-C, the units of
/// loading work: its warehouses.
pub fn tables_used(o: &WorkloadOptions) -> u32 {
    match o.kind {
        WorkloadKind::SelectRandomPoints | WorkloadKind::SelectRandomRanges => 1,
        WorkloadKind::Tpcc => o.warehouses.count(),
        _ => o.tables,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatch_names_the_option() {
        let o = WorkloadOptions::new(WorkloadKind::OltpReadWrite);
        let want = TableShape::wanted(&o);
        assert_eq!(want.mismatch(&want, "sbtest1"), None);
        let mut got = want.clone();
        got.rows = 5;
        assert!(got
            .mismatch(&want, "sbtest1")
            .unwrap()
            .contains("--table-size"));
        let mut got = want.clone();
        got.k_index = false;
        assert!(got
            .mismatch(&want, "sbtest1")
            .unwrap()
            .contains("--create-secondary"));
        let mut got = want.clone();
        got.engine = "myisam".into();
        assert!(got.mismatch(&want, "sbtest2").unwrap().contains("myisam"));
    }

    #[test]
    fn insert_without_auto_inc_loads_nothing() {
        let mut o = WorkloadOptions::new(WorkloadKind::OltpInsert);
        assert_eq!(rows_to_load(&o), 10_000);
        o.auto_inc = false;
        assert_eq!(rows_to_load(&o), 0);
        let mut o = WorkloadOptions::new(WorkloadKind::SelectRandomRanges);
        o.tables = 4;
        assert_eq!(tables_used(&o), 1);
    }
}
