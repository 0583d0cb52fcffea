//! TPC-C's transactions on a real MariaDB, on a warehouse loaded by qpslab's prepare: each
//! transaction type's statements, executed as the engine sends them (prepared), move the
//! server's Com_* counters by exactly what the generator emitted, Delivery deletes one new
//! order per district through the value it carries in `@no`, and the consistency conditions
//! still hold afterwards.

use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_engine::prepare::{check_tpcc, prepare};
use qpslab_engine::rand::Rng;
use qpslab_engine::workload::tpcc::{TpccGen, Transaction};
use qpslab_engine::workload::{Arg, EventBuf, Workload};
use qpslab_wire::{Conn, Value};
use std::collections::BTreeMap;

fn opts(db: &str) -> qpslab_core::ConnectOptions {
    let mut o = qpslab_sandbox::testing::shared_server().connect_options();
    o.database = Some(db.to_string());
    o
}

/// The session's Com_* and Handler_* counters.
fn counters(conn: &mut Conn) -> BTreeMap<String, u64> {
    let r = conn
        .query("SHOW SESSION STATUS WHERE Variable_name LIKE 'Com\\_%' OR Variable_name LIKE 'Handler\\_%'")
        .unwrap();
    r.rows
        .into_iter()
        .filter_map(|row| {
            let v = row.get(1).cloned().flatten()?.parse().ok()?;
            Some((row.first().cloned().flatten()?, v))
        })
        .collect()
}

/// The Com_* counter a statement moves.
fn com(sql: &str) -> &'static str {
    match sql.split(' ').next().unwrap() {
        "SELECT" => "Com_select",
        "INSERT" => "Com_insert",
        "UPDATE" => "Com_update",
        "DELETE" => "Com_delete",
        "BEGIN" => "Com_begin",
        "COMMIT" => "Com_commit",
        "ROLLBACK" => "Com_rollback",
        "SET" => "Com_set_option",
        other => panic!("unexpected statement {other}"),
    }
}

#[test]
fn each_transaction_moves_the_counters_by_what_the_generator_emitted() {
    let db = "qp_tpcc_txn";
    let mut admin = Conn::connect(&opts("mysql")).unwrap();
    admin
        .execute(&format!("DROP DATABASE IF EXISTS {db}"))
        .unwrap();
    let mut w = WorkloadOptions::new(WorkloadKind::Tpcc);
    w.warehouses = "2".parse().unwrap();
    prepare(&opts(db), &w, 2, &mut |_| {}).unwrap();
    let workload = Workload::new(&w).unwrap();
    let defs = workload.statements();
    let mut conn = Conn::connect(&opts(db)).unwrap();
    let stmts: Vec<_> = defs
        .iter()
        .map(|d| {
            conn.prepare(&d.sql)
                .unwrap_or_else(|e| panic!("{}: {e}", d.sql))
        })
        .collect();
    let gen = TpccGen::new(2);
    let mut rng = Rng::new(5);
    let mut ev = EventBuf::default();
    for t in [
        Transaction::NewOrder,
        Transaction::Payment,
        Transaction::OrderStatus,
        Transaction::Delivery,
        Transaction::StockLevel,
    ] {
        let before = counters(&mut conn);
        let mut want: BTreeMap<&str, u64> = BTreeMap::new();
        for _ in 0..30 {
            ev.clear();
            gen.transaction(t, &mut rng, &mut ev);
            for call in &ev.calls {
                let def = &defs[call.stmt as usize];
                let params: Vec<Value> = ev
                    .call_args(call)
                    .iter()
                    .map(|a| match a {
                        Arg::Int(v) => Value::Int(*v),
                        other => panic!("TPC-C binds integers only: {other:?}"),
                    })
                    .collect();
                conn.exec(&stmts[call.stmt as usize], &params)
                    .unwrap_or_else(|e| panic!("{}: {e}", def.kind));
                *want.entry(com(&def.sql)).or_default() += 1;
            }
        }
        let after = counters(&mut conn);
        for (name, n) in &want {
            assert_eq!(after[*name] - before[*name], *n, "{t:?}: {name}");
        }
        // Commands the transactions never send stay still (SHOW STATUS itself aside).
        for name in ["Com_insert", "Com_update", "Com_delete", "Com_rollback"] {
            let moved = after[name] - before[name];
            assert_eq!(moved, want.get(name).copied().unwrap_or(0), "{t:?}: {name}");
        }
        if t == Transaction::Delivery {
            // 30 deliveries x 10 districts, each deleting its oldest new order through @no.
            assert_eq!(after["Handler_delete"] - before["Handler_delete"], 300);
        }
    }
    let new_orders = |c: &mut Conn| {
        c.query("SELECT COUNT(*) FROM orders WHERE o_id > 3000")
            .unwrap()
            .first_value()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    assert!(
        new_orders(&mut conn) >= 25,
        "New-Orders inserted their orders"
    );
    let conditions = check_tpcc(&opts(db)).unwrap();
    assert_eq!(conditions.len(), 4);
    for c in conditions {
        assert!(c.passed(), "condition {}: {:?}", c.number, c.offenders);
    }
    admin.execute(&format!("DROP DATABASE {db}")).unwrap();
}
