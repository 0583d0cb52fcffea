//! sysbench's table definition and index, as `oltp_common.lua`'s `create_table` writes them.

use qpslab_core::workload::WorkloadOptions;

/// `sbtestN`.
pub fn table_name(t: u32) -> String {
    format!("sbtest{t}")
}

/// The `CREATE TABLE sbtestN(...)` statement, byte for byte as sysbench 1.0.20 sends it for
/// MySQL, with `create_table_options` appended where sysbench puts its table options.
pub fn create_table_sql(o: &WorkloadOptions, t: u32) -> String {
    let id_def = if o.auto_inc {
        "INTEGER NOT NULL AUTO_INCREMENT"
    } else {
        "INTEGER NOT NULL"
    };
    let id_index_def = if o.secondary {
        "KEY xid"
    } else {
        "PRIMARY KEY"
    };
    format!(
        "CREATE TABLE sbtest{t}(\n  id {id_def},\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  {id_index_def} (id)\n) /*! ENGINE = {engine} */ {extra}",
        engine = o.storage_engine,
        extra = o.create_table_options,
    )
}

/// The secondary index sysbench builds after loading (`--create-secondary`).
pub fn create_index_sql(t: u32) -> String {
    format!("CREATE INDEX k_{t} ON sbtest{t}(k)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::workload::WorkloadKind;

    #[test]
    fn create_table_follows_options() {
        let mut o = WorkloadOptions::new(WorkloadKind::OltpReadWrite);
        let sql = create_table_sql(&o, 3);
        assert!(sql.starts_with("CREATE TABLE sbtest3(\n  id INTEGER NOT NULL AUTO_INCREMENT,"));
        assert!(sql.contains("  PRIMARY KEY (id)\n) /*! ENGINE = innodb */ "));
        o.auto_inc = false;
        o.secondary = true;
        o.storage_engine = "aria".into();
        o.create_table_options = "ROW_FORMAT=DYNAMIC".into();
        let sql = create_table_sql(&o, 1);
        assert!(sql.contains("id INTEGER NOT NULL,"), "{sql}");
        assert!(sql.contains("KEY xid (id)"), "{sql}");
        assert!(
            sql.ends_with("/*! ENGINE = aria */ ROW_FORMAT=DYNAMIC"),
            "{sql}"
        );
        assert_eq!(create_index_sql(2), "CREATE INDEX k_2 ON sbtest2(k)");
    }
}
