//! `EXPLAIN FORMAT=JSON` flattened into per-table facts, from MariaDB's shape (`nested_loop` of
//! `table` objects under `filesort` / `temporary_table` nodes, numbers as numbers) and MySQL's
//! (`ordering_operation` / `grouping_operation` with `using_filesort` /
//! `using_temporary_table` flags, `rows_examined_per_scan`, `filtered` as a string). On MariaDB
//! ≥ 10.9, `ANALYZE FORMAT=JSON` adds each table's `r_engine_stats.pages_accessed`.

use qpslab_core::diff::TableFacts;
use qpslab_wire::Conn;
use serde_json::Value;

/// Flags inherited from the plan nodes above a table.
#[derive(Clone, Copy, Default)]
struct Above {
    filesort: bool,
    temporary: bool,
}

/// The tables of a plan in JSON, in plan order.
pub fn facts(plan: &Value) -> Vec<TableFacts> {
    let mut out = Vec::new();
    walk(plan, Above::default(), &mut out);
    out
}

fn walk(v: &Value, above: Above, out: &mut Vec<TableFacts>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| walk(i, above, out)),
        Value::Object(map) => {
            let above = Above {
                filesort: above.filesort
                    || map.contains_key("filesort")
                    || flag(map.get("using_filesort")),
                temporary: above.temporary
                    || map.contains_key("temporary_table")
                    || flag(map.get("using_temporary_table")),
            };
            for (key, child) in map {
                match child.get("table_name") {
                    Some(_) if key == "table" => out.push(table(child, above)),
                    _ => walk(child, above, out),
                }
            }
        }
        _ => {}
    }
}

fn flag(v: Option<&Value>) -> bool {
    v.and_then(Value::as_bool).unwrap_or(false)
}

/// A number, or a number in a string (MySQL writes `"filtered": "24.14"`).
fn number(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn table(t: &Value, above: Above) -> TableFacts {
    let text = |k: &str| t.get(k).and_then(Value::as_str).map(String::from);
    TableFacts {
        table: text("table_name").unwrap_or_default(),
        access_type: text("access_type"),
        key: text("key"),
        possible_keys: strings(t.get("possible_keys")),
        partitions: strings(t.get("partitions")),
        rows: number(t.get("rows")).or_else(|| number(t.get("rows_examined_per_scan"))),
        filtered: number(t.get("filtered")),
        using_filesort: above.filesort || flag(t.get("using_filesort")),
        using_temporary: above.temporary || flag(t.get("using_temporary_table")),
        pages_accessed: t
            .get("r_engine_stats")
            .and_then(|s| number(s.get("pages_accessed"))),
    }
}

/// The facts of `sql` on `conn`: its EXPLAIN, with pages accessed from ANALYZE where the
/// server has it (MariaDB ≥ 10.9; ANALYZE runs the statement, so only for reads).
pub fn explain(conn: &mut Conn, sql: &[u8]) -> Result<Vec<TableFacts>, qpslab_wire::Error> {
    let plan = json(conn, &[&b"EXPLAIN FORMAT=JSON "[..], sql].concat())?;
    let mut tables = facts(&plan);
    if conn.is_mariadb() {
        // Older servers lack r_engine_stats (or ANALYZE): the plan alone is still evidence.
        match json(conn, &[&b"ANALYZE FORMAT=JSON "[..], sql].concat()) {
            Ok(analyzed) => add_pages(&mut tables, &facts(&analyzed)),
            // The reply not read: the statement may still run, the caller kills it.
            Err(e) if crate::replay::exec::limits::left_running(&e) => return Err(e),
            Err(_) => {}
        }
    }
    Ok(tables)
}

fn add_pages(tables: &mut [TableFacts], analyzed: &[TableFacts]) {
    for (t, a) in tables.iter_mut().zip(analyzed) {
        if t.table == a.table {
            t.pages_accessed = a.pages_accessed;
        }
    }
}

fn json(conn: &mut Conn, sql: &[u8]) -> Result<Value, qpslab_wire::Error> {
    let r = conn.query_bytes(sql)?;
    let text = r.first_value().unwrap_or("{}");
    Ok(serde_json::from_str(text).unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/diff/testdata")
            .join(name);
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn a_mariadb_plan_pruned_to_one_partition() {
        let t = facts(&fixture("mariadb-range-pruned.json"));
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].table, "events");
        assert_eq!(t[0].partitions, ["p2024_02"]);
        assert_eq!(t[0].access_type.as_deref(), Some("ALL"));
        assert_eq!(t[0].key, None);
        assert_eq!(t[0].possible_keys, ["created"]);
        assert_eq!(t[0].rows, Some(7946.0));
        assert!((t[0].filtered.unwrap() - 24.138).abs() < 0.01);
        assert!(!t[0].using_filesort && !t[0].using_temporary);
    }

    #[test]
    fn a_mariadb_analyze_gives_pages_accessed_over_every_partition() {
        let t = facts(&fixture("mariadb-analyze-hash.json"));
        assert_eq!(t[0].partitions.len(), 12);
        assert_eq!(t[0].key.as_deref(), Some("created"));
        assert_eq!(t[0].pages_accessed, Some(3946.0));
    }

    #[test]
    fn filesort_and_temporary_table_nodes_mark_the_tables_below() {
        let t = facts(&fixture("mariadb-filesort.json"));
        assert_eq!(t.len(), 1);
        assert!(t[0].using_filesort && t[0].using_temporary);
        assert_eq!(t[0].rows, Some(500.0));
    }

    #[test]
    fn mysql_shapes_its_flags_and_numbers_differently() {
        // MySQL 8.0's documented shape (no MySQL server here to capture one).
        let plan: Value = serde_json::from_str(
            r#"{"query_block": {"select_id": 1, "ordering_operation": {"using_filesort": true,
              "grouping_operation": {"using_temporary_table": true, "table": {
                "table_name": "events", "partitions": ["p0", "p1"], "access_type": "range",
                "possible_keys": ["created"], "key": "created", "rows_examined_per_scan": 1918,
                "filtered": "100.00"}}}}}"#,
        )
        .unwrap();
        let t = facts(&plan);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].rows, Some(1918.0));
        assert_eq!(t[0].filtered, Some(100.0));
        assert!(t[0].using_filesort && t[0].using_temporary);
        assert_eq!(t[0].partitions, ["p0", "p1"]);
    }
}
