//! TPC-C's transactions on a real MariaDB, on warehouses loaded by qpslab's prepare: each
//! transaction type's statements, executed as the engine sends them (prepared), move the
//! server's Com_* counters by exactly what the generator emitted, Delivery deletes one new
//! order per district through the value it carries in `@no`, and the consistency conditions
//! still hold afterwards (11, which holds only until the first Delivery, reported not
//! applicable). A second test holds each transaction to the spec's own profile
//! (clauses 2.4.2.2-2.8.2.2), derived from the transaction's inputs: the statements per type
//! (Com_*) and the rows written, updated, deleted and read by key (Handler_*).
use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_engine::prepare::{check_tpcc, prepare};
use qpslab_engine::rand::Rng;
use qpslab_engine::workload::tpcc::{TpccGen, Transaction};
use qpslab_engine::workload::{Arg, EventBuf, StatementDef, Workload};
use qpslab_wire::{Conn, Statement, Value};
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

/// Two warehouses loaded by qpslab's prepare into a fresh `db`, and a connection to it with
/// every TPC-C statement prepared (indexed as the workload's statements).
fn loaded(db: &str) -> (Workload, Conn, Vec<Statement>) {
    let mut admin = Conn::connect(&opts("mysql")).unwrap();
    admin
        .execute(&format!("DROP DATABASE IF EXISTS {db}"))
        .unwrap();
    let mut w = WorkloadOptions::new(WorkloadKind::Tpcc);
    w.warehouses = "2".parse().unwrap();
    prepare(&opts(db), &w, 2, &mut |_| {}).unwrap();
    let workload = Workload::new(&w).unwrap();
    let mut conn = Conn::connect(&opts(db)).unwrap();
    let stmts = workload
        .statements()
        .iter()
        .map(|d| {
            conn.prepare(&d.sql)
                .unwrap_or_else(|e| panic!("{}: {e}", d.sql))
        })
        .collect();
    (workload, conn, stmts)
}

/// Executes the event in `ev` as the engine sends it.
fn execute(conn: &mut Conn, stmts: &[Statement], defs: &[StatementDef], ev: &EventBuf) {
    for call in &ev.calls {
        let params: Vec<Value> = ev
            .call_args(call)
            .iter()
            .map(|a| match a {
                Arg::Int(v) => Value::Int(*v),
                other => panic!("TPC-C binds integers only: {other:?}"),
            })
            .collect();
        conn.exec(&stmts[call.stmt as usize], &params)
            .unwrap_or_else(|e| panic!("{}: {e}", defs[call.stmt as usize].kind));
    }
}

#[test]
fn each_transaction_moves_the_counters_by_what_the_generator_emitted() {
    let db = "qp_tpcc_txn";
    let (workload, mut conn, stmts) = loaded(db);
    let defs = workload.statements();
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
            execute(&mut conn, &stmts, defs, &ev);
            for call in &ev.calls {
                *want.entry(com(&defs[call.stmt as usize].sql)).or_default() += 1;
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
    // Every condition the transactions keep holds; 11 (until the first Delivery) is not
    // judged after the Deliveries.
    let conditions = check_tpcc(&opts(db)).unwrap();
    assert_eq!(conditions.len(), 12);
    for c in conditions {
        assert!(c.passed(), "condition {}: {:?}", c.number, c.offenders);
        assert_eq!(c.not_applicable.is_some(), c.number == 11, "{c}");
    }
    conn.execute(&format!("DROP DATABASE {db}")).unwrap();
}

/// A transaction's terminal inputs that shape its profile (clauses 2.4.1-2.8.1), read from the
/// values the generator bound: New-Order's ol_cnt (`o_ol_cnt`) and whether its last item is
/// unused (rbk), whether Payment or Order-Status chose the customer by last name (and how many
/// customers of the district have it), and a Delivery's warehouse.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Inputs {
    ol_cnt: u64,
    rollback: bool,
    by_name: Option<u64>,
    warehouse: i64,
}

/// The last name of number `n` (clause 4.3.2.3), from its three digits.
fn last_name(digits: [i64; 3]) -> String {
    const SYLLABLES: [&str; 10] = [
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
    ];
    digits.iter().map(|&d| SYLLABLES[d as usize]).collect()
}

fn inputs(conn: &mut Conn, defs: &[StatementDef], ev: &EventBuf) -> Inputs {
    let mut i = Inputs::default();
    for call in &ev.calls {
        let int = |n: usize| match ev.call_args(call)[n] {
            Arg::Int(v) => v,
            ref other => panic!("{other:?}"),
        };
        match &*defs[call.stmt as usize].kind {
            "new_order.order" => i.ol_cnt = int(3) as u64,
            "new_order.item" => i.rollback |= int(0) > 100_000,
            "payment.customer_by_name" | "order_status.customer_by_name" => {
                let name = last_name([int(2), int(3), int(4)]);
                let sql = format!(
                    "SELECT COUNT(*) FROM customer WHERE c_w_id = {} AND c_d_id = {} AND c_last = '{name}'",
                    int(0),
                    int(1)
                );
                i.by_name = Some(
                    conn.query(&sql)
                        .unwrap()
                        .first_value()
                        .unwrap()
                        .parse()
                        .unwrap(),
                );
            }
            "delivery.new_order" => i.warehouse = int(0),
            _ => {}
        }
    }
    i
}

/// What one transaction does by the spec's profile (clauses 2.4.2.2-2.8.2.2): the statements
/// a client sends, as qpslab shapes them, and the rows it writes and reads by key.
#[derive(Debug, Default, PartialEq, Eq)]
struct Profile {
    select: u64,
    insert: u64,
    update: u64,
    delete: u64,
    set: u64,
    commit: u64,
    rollback: u64,
    /// Handler_write: rows inserted.
    rows_written: u64,
    /// Handler_update: rows updated.
    rows_updated: u64,
    /// Handler_delete: rows deleted.
    rows_deleted: u64,
    /// Handler_read_key and Handler_read_next, where they depend on the inputs alone.
    key_reads: Option<(u64, u64)>,
}

/// `t`'s profile for `i`; `delivered` is, for a Delivery, the o_ol_cnt of each district's
/// oldest undelivered order (None: the district has no new order and is skipped).
fn spec_profile(t: Transaction, i: Inputs, delivered: &[Option<u64>]) -> Profile {
    let mut p = Profile {
        commit: 1,
        ..Profile::default()
    };
    // By last name, qpslab picks the middle customer (by c_first) in one select whose window
    // function fills a temporary table: the server counts one Handler_update per customer
    // with the name, besides the rows the spec's transaction updates.
    let name_rows = i.by_name.unwrap_or(0);
    match t {
        Transaction::NewOrder => {
            // Warehouse (w_tax) and customer: one select joining both (a naive client sends
            // two); the district read and its d_next_o_id updated; ORDER and NEW-ORDER
            // inserted. Each item: the item read, its stock read and updated, an order line
            // inserted. With rbk the last item is unused: its select finds nothing and the
            // transaction rolls back.
            let full = if i.rollback { i.ol_cnt - 1 } else { i.ol_cnt };
            p.select = 2 + 2 * full + u64::from(i.rollback);
            p.update = 1 + full;
            p.insert = 2 + full;
            p.rows_written = 2 + full;
            p.rows_updated = 1 + full;
            // Warehouse, customer, district read and updated; per item: item, stock read
            // and updated; the unused item's lookup.
            p.key_reads = Some((4 + 3 * full + u64::from(i.rollback), 0));
            if i.rollback {
                (p.commit, p.rollback) = (0, 1);
            }
        }
        Transaction::Payment => {
            // Warehouse and district each updated (ytd) and read; the customer chosen by id
            // (set in a variable) or by last name (one select, where a naive client counts,
            // then walks a cursor), then read and updated; a HISTORY row inserted.
            p.select = 3 + u64::from(i.by_name.is_some());
            p.set = u64::from(i.by_name.is_none());
            p.update = 3;
            p.insert = 1;
            p.rows_updated = 3 + name_rows;
            p.rows_written = 1;
            // Six rows by key; by name one lookup more and every customer with the name.
            p.key_reads = Some((6 + u64::from(i.by_name.is_some()), name_rows));
        }
        Transaction::OrderStatus => {
            // The customer (as in Payment), the most recent order (its id, then the row: one
            // select more than a naive client's ORDER BY o_id DESC) and its order lines.
            p.select = 4 + u64::from(i.by_name.is_some());
            p.set = u64::from(i.by_name.is_none());
            p.rows_updated = name_rows;
        }
        Transaction::Delivery => {
            // Per district: the oldest NEW-ORDER row read and deleted, the order read and its
            // carrier set, its lines' delivery dates set and their amounts summed, the
            // customer updated. A district with no new order is skipped by the spec; qpslab
            // still sends its statements, which touch no row (a naive client sends one select).
            p.select = 30;
            p.delete = 10;
            p.update = 30;
            for lines in delivered.iter().flatten() {
                p.rows_deleted += 1;
                p.rows_updated += 1 + lines + 1;
            }
        }
        Transaction::StockLevel => {
            // The district's next order id, then one count over the last 20 orders' stock.
            p.select = 2;
        }
    }
    p
}

/// The profile the server counted between `before` and `after` (`key_reads` as `like` has it).
fn counted(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
    like: &Profile,
) -> Profile {
    let d = |name: &str| after[name] - before[name];
    Profile {
        select: d("Com_select"),
        insert: d("Com_insert"),
        update: d("Com_update"),
        delete: d("Com_delete"),
        set: d("Com_set_option"),
        commit: d("Com_commit"),
        rollback: d("Com_rollback"),
        rows_written: d("Handler_write"),
        rows_updated: d("Handler_update"),
        rows_deleted: d("Handler_delete"),
        key_reads: like
            .key_reads
            .map(|_| (d("Handler_read_key"), d("Handler_read_next"))),
    }
}

/// The line count of each district's oldest new order on warehouse `w` (the order clause
/// 2.7.4.2 delivers), None where the district has none.
fn oldest_new_orders(conn: &mut Conn, w: i64) -> Vec<Option<u64>> {
    (1..=10)
        .map(|d| {
            let r = conn
                .query(&format!(
                    "SELECT o_ol_cnt FROM orders WHERE o_w_id = {w} AND o_d_id = {d} AND o_id = \
                     (SELECT MIN(no_o_id) FROM new_orders WHERE no_w_id = {w} AND no_d_id = {d})"
                ))
                .unwrap();
            r.rows
                .first()
                .map(|row| row[0].clone().unwrap().parse().unwrap())
        })
        .collect()
}

#[test]
fn each_transaction_has_the_statements_and_row_counts_of_the_spec_profile() {
    let db = "qp_tpcc_profile";
    let (workload, mut conn, stmts) = loaded(db);
    let defs = workload.statements();
    // District 10 of warehouse 2 has no new order left: Delivery must skip it.
    conn.execute("DELETE FROM new_orders WHERE no_w_id = 2 AND no_d_id = 10")
        .unwrap();
    let gen = TpccGen::new(2);
    let mut rng = Rng::new(11);
    let mut ev = EventBuf::default();
    for (t, shapes_wanted) in [
        (Transaction::NewOrder, 2),
        (Transaction::Payment, 2),
        (Transaction::OrderStatus, 2),
        (Transaction::Delivery, 2),
        (Transaction::StockLevel, 1),
    ] {
        // Every shape its inputs give a transaction, a few times each: rolled back or not, by
        // name or by id, each warehouse's Delivery (warehouse 2's with a district skipped).
        let mut shapes = BTreeMap::new();
        for _ in 0..5000 {
            ev.clear();
            gen.transaction(t, &mut rng, &mut ev);
            let i = inputs(&mut conn, defs, &ev);
            let shape = (i.rollback, i.by_name.is_some(), i.warehouse);
            let seen = shapes.entry(shape).or_insert(0);
            if *seen == 6 {
                continue;
            }
            *seen += 1;
            let delivered = match t {
                Transaction::Delivery => oldest_new_orders(&mut conn, i.warehouse),
                _ => vec![],
            };
            let want = spec_profile(t, i, &delivered);
            let before = counters(&mut conn);
            execute(&mut conn, &stmts, defs, &ev);
            let after = counters(&mut conn);
            assert_eq!(counted(&before, &after, &want), want, "{t:?} with {i:?}");
        }
        assert_eq!(shapes.len(), shapes_wanted, "{t:?}: {shapes:?}");
    }
    conn.execute(&format!("DROP DATABASE {db}")).unwrap();
}
