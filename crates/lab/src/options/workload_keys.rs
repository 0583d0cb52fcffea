//! The workload's options (sysbench's names): the dataset's shape, the transaction's mix, the
//! random distributions. `prepare`, `run` and studies take them.

use super::def::{choices, def, on_off, OptionDef, Scope, ON_OFF, U32};
use super::value::{float, int, switch, text};
use qpslab_core::tpcc::TpccMode;
use qpslab_core::{RandType, Warehouses, WorkloadKind};
use serde_json::Value;

/// A number of the workload's options, `$field` (a path below `plan.workload`), read by
/// `$read` (e.g. [`count`]`(1, U32)` or [`float`]).
macro_rules! number {
    ($name:literal, $($field:ident).+, $read:expr, $ex:literal, $help:literal) => {
        def(
            $name,
            Scope::Workload,
            "N",
            $help,
            $ex,
            |b, v| {
                b.plan.workload.$($field).+ = ($read)(v)?;
                Ok(())
            },
            |b| b.plan.workload.$($field).+.to_string(),
        )
    };
}

/// Reads a whole number in `min..=max` into the field's own integer type.
fn count<T: TryFrom<u64>>(min: u64, max: u64) -> impl Fn(&Value) -> Result<T, String> {
    move |v| {
        int(v, min, max)?
            .try_into()
            .map_err(|_| "too big".to_string())
    }
}

/// An on/off option of the workload.
macro_rules! workload_switch {
    ($name:literal, $field:ident, $ex:literal, $help:literal) => {
        choices(
            def(
                $name,
                Scope::Workload,
                "on|off",
                $help,
                $ex,
                |b, v| {
                    b.plan.workload.$field = switch(v)?;
                    Ok(())
                },
                |b| on_off(b.plan.workload.$field),
            ),
            ON_OFF,
        )
    };
}

/// The workload that runs sysbench's fileio tests through fio instead of the engine.
pub(crate) const FILEIO: &str = "fileio";

/// The workload options, in the order `run --help` lists them.
pub(crate) static WORKLOAD: &[OptionDef] = &[
    def(
        "workload",
        Scope::Workload,
        "WORKLOAD",
        "Workload: oltp_point_select, oltp_read_only, oltp_read_write, oltp_write_only, \
         oltp_update_index, oltp_update_non_index, oltp_insert, oltp_delete, \
         select_random_points, select_random_ranges; tpcc; fileio (sysbench's, through fio) in a study",
        "oltp_point_select",
        |b, v| {
            let name = text(v)?;
            if name == FILEIO {
                b.io.get_or_insert_with(Default::default);
                return Ok(());
            }
            let kind: WorkloadKind = name.parse().map_err(|e| format!("{e}"))?;
            b.plan.workload.kind = kind;
            b.oltp_named = true;
            Ok(())
        },
        |b| b.plan.workload.kind.name().to_string(),
    ),
    number!("tables", tables, count(1, U32), "2", "Number of tables"),
    number!(
        "table_size",
        table_size,
        count(1, i32::MAX as u64),
        "500",
        "Rows per table"
    ),
    number!(
        "range_size",
        range_size,
        count(1, U32),
        "50",
        "Range size for range SELECT queries"
    ),
    number!(
        "point_selects",
        point_selects,
        count(0, U32),
        "5",
        "Point SELECT queries per transaction"
    ),
    number!(
        "simple_ranges",
        simple_ranges,
        count(0, U32),
        "2",
        "Simple range SELECT queries per transaction"
    ),
    number!(
        "sum_ranges",
        sum_ranges,
        count(0, U32),
        "2",
        "SELECT SUM() queries per transaction"
    ),
    number!(
        "order_ranges",
        order_ranges,
        count(0, U32),
        "2",
        "SELECT ORDER BY queries per transaction"
    ),
    number!(
        "distinct_ranges",
        distinct_ranges,
        count(0, U32),
        "2",
        "SELECT DISTINCT queries per transaction"
    ),
    number!(
        "index_updates",
        index_updates,
        count(0, U32),
        "2",
        "UPDATE index queries per transaction"
    ),
    number!(
        "non_index_updates",
        non_index_updates,
        count(0, U32),
        "2",
        "UPDATE non-index queries per transaction"
    ),
    number!(
        "delete_inserts",
        delete_inserts,
        count(0, U32),
        "2",
        "DELETE/INSERT combinations per transaction"
    ),
    workload_switch!(
        "range_selects",
        range_selects,
        "off",
        "Enable or disable all range SELECT queries"
    ),
    workload_switch!(
        "auto_inc",
        auto_inc,
        "off",
        "Use AUTO_INCREMENT on the id column"
    ),
    workload_switch!(
        "skip_trx",
        skip_trx,
        "on",
        "Don't start explicit transactions (no BEGIN/COMMIT)"
    ),
    workload_switch!(
        "secondary",
        secondary,
        "on",
        "Use a secondary index in place of the PRIMARY KEY"
    ),
    workload_switch!(
        "create_secondary",
        create_secondary,
        "off",
        "Create the secondary index k_N after loading"
    ),
    def(
        "mysql_storage_engine",
        Scope::Workload,
        "ENGINE",
        "Storage engine of the tables",
        "aria",
        |b, v| {
            b.plan.workload.storage_engine = text(v)?;
            Ok(())
        },
        |b| b.plan.workload.storage_engine.clone(),
    ),
    def(
        "create_table_options",
        Scope::Workload,
        "OPTIONS",
        "Extra CREATE TABLE options",
        "ROW_FORMAT=COMPACT",
        |b, v| {
            b.plan.workload.create_table_options = text(v)?;
            Ok(())
        },
        |b| b.plan.workload.create_table_options.clone(),
    ),
    number!(
        "random_points",
        random_points,
        count(1, U32),
        "5",
        "Points per query of select_random_points"
    ),
    number!(
        "number_of_ranges",
        number_of_ranges,
        count(1, U32),
        "5",
        "Ranges per query of select_random_ranges"
    ),
    number!(
        "delta",
        delta,
        count(1, U32),
        "3",
        "Width of each range of select_random_ranges"
    ),
    choices(
        def(
            "rand_type",
            Scope::Workload,
            "TYPE",
            "Random distribution of ids",
            "uniform",
            |b, v| {
                b.plan.workload.rand.rand_type =
                    text(v)?.parse::<RandType>().map_err(|e| e.to_string())?;
                Ok(())
            },
            |b| b.plan.workload.rand.rand_type.to_string(),
        ),
        &["uniform", "gaussian", "special", "pareto", "zipfian"],
    ),
    number!(
        "rand_spec_iter",
        rand.spec_iter,
        count(1, U32),
        "6",
        "Iterations of the special and gaussian distributions"
    ),
    number!(
        "rand_spec_pct",
        rand.spec_pct,
        count(0, 100),
        "2",
        "Percentage of values treated as special"
    ),
    number!(
        "rand_spec_res",
        rand.spec_res,
        count(0, 100),
        "50",
        "Percentage of draws that hit the special values"
    ),
    number!(
        "rand_pareto_h",
        rand.pareto_h,
        float,
        "0.3",
        "Pareto distribution parameter h"
    ),
    number!(
        "rand_zipfian_exp",
        rand.zipfian_exp,
        float,
        "0.9",
        "Zipfian distribution exponent"
    ),
    def(
        "warehouses",
        Scope::Workload,
        "N|A-B",
        "TPC-C warehouses: N is 1..N; A-B prepares only that slice",
        "2",
        |b, v| {
            b.plan.workload.warehouses = text(v)?.parse::<Warehouses>()?;
            Ok(())
        },
        |b| b.plan.workload.warehouses.to_string(),
    ),
    workload_switch!(
        "foreign_keys",
        foreign_keys,
        "on",
        "TPC-C: create the spec's foreign keys"
    ),
    choices(
        def(
            "mode",
            Scope::Run,
            "stress|spec",
            "TPC-C: stress (no keying or think time: NewOrder/min) or spec (keying and think \
             times, 10 terminals per warehouse: tpmC)",
            "spec",
            |b, v| {
                b.plan.workload.tpcc.mode = text(v)?.parse::<TpccMode>()?;
                Ok(())
            },
            |b| b.plan.workload.tpcc.mode.to_string(),
        ),
        &["stress", "spec"],
    ),
    def(
        "think_scale",
        Scope::Run,
        "X",
        "TPC-C spec mode: multiply keying and think times by X (a scaled run is not \
         spec-compliant)",
        "0.01",
        |b, v| {
            let x = float(v)?;
            if !(x > 0.0 && x <= 100.0) {
                return Err(format!("must be more than 0 and at most 100, not {x}"));
            }
            b.plan.workload.tpcc.think_scale = x;
            Ok(())
        },
        |b| b.plan.workload.tpcc.think_scale.to_string(),
    ),
    choices(
        def(
            "check",
            Scope::Run,
            "on|off",
            "TPC-C: check consistency conditions 1-12 after each phase (11 is not applicable \
             once a Delivery has run since the load), store and print them (exit 1 when one \
             fails)",
            "on",
            |b, v| {
                b.plan.workload.tpcc.check = switch(v)?;
                Ok(())
            },
            |b| on_off(b.plan.workload.tpcc.check),
        ),
        ON_OFF,
    ),
    number!(
        "rand_seed",
        rand.seed,
        count(0, u64::MAX),
        "42",
        "Seed of the random generator (0: from the clock)"
    ),
];
