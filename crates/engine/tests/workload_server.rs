//! Every workload's events, executed against a real MariaDB both as text (`--ps off`) and as
//! prepared statements, on tables built by qpslab's prepare.

use qpslab_core::workload::{WorkloadKind, WorkloadOptions};
use qpslab_engine::prepare::prepare;
use qpslab_engine::workload::{Arg, EventBuf, ParamKind, StmtClass, Workload};
use qpslab_wire::{Conn, Value};

fn opts(db: &str) -> qpslab_core::ConnectOptions {
    let mut o = qpslab_sandbox::testing::shared_server().connect_options();
    o.database = Some(db.to_string());
    o
}

fn workload(kind: WorkloadKind) -> WorkloadOptions {
    let mut w = WorkloadOptions::new(kind);
    w.tables = if matches!(
        kind,
        WorkloadKind::SelectRandomPoints | WorkloadKind::SelectRandomRanges
    ) {
        1
    } else {
        2
    };
    w.table_size = 500;
    w
}

/// Runs `events` events of `kind` through `conn`; returns (reads, writes, others, rows read).
fn run_events(conn: &mut Conn, w: &Workload, events: usize, ps: bool) -> (u64, u64, u64, u64) {
    let mut stmts = Vec::new();
    if ps {
        for d in w.statements() {
            stmts.push(Some(
                conn.prepare(&d.sql)
                    .unwrap_or_else(|e| panic!("{}: {e}", d.sql)),
            ));
        }
    }
    let mut gen = w.session(0, 99);
    let mut ev = EventBuf::default();
    let mut sql = Vec::new();
    let (mut r, mut wr, mut o, mut rows) = (0, 0, 0, 0);
    for _ in 0..events {
        gen.next_event(&mut ev);
        for call in &ev.calls {
            let def = &w.statements()[call.stmt as usize];
            let res = if ps && !def.text_only {
                let params: Vec<Value> = ev
                    .call_args(call)
                    .iter()
                    .zip(&def.params)
                    .map(|(a, k)| match (a, k) {
                        (Arg::Int(v), ParamKind::Int) => Value::Int(*v),
                        (a @ Arg::Bytes { .. }, ParamKind::FixedBytes(max)) => {
                            let b = ev.arg_bytes(a).unwrap();
                            assert!(b.len() <= *max);
                            Value::Bytes(b.to_vec())
                        }
                        other => panic!("argument does not fit its parameter: {other:?}"),
                    })
                    .collect();
                let st = stmts[call.stmt as usize].as_ref().unwrap();
                conn.exec(st, &params)
            } else {
                w.render_text(&ev, call, &mut sql);
                conn.query(std::str::from_utf8(&sql).unwrap())
            };
            let res = res.unwrap_or_else(|e| panic!("{} (ps={ps}): {e}", def.sql));
            rows += res.rows.len() as u64;
            match def.class {
                StmtClass::Read => r += 1,
                StmtClass::Write => {
                    wr += 1;
                }
                StmtClass::Other => o += 1,
            }
        }
    }
    (r, wr, o, rows)
}

#[test]
fn every_workload_runs_on_the_server_as_text_and_prepared() {
    let db = "qp_workloads";
    let mut admin = Conn::connect(&opts("mysql")).unwrap();
    admin
        .execute(&format!("DROP DATABASE IF EXISTS {db}"))
        .unwrap();
    prepare(
        &opts(db),
        &workload(WorkloadKind::OltpReadWrite),
        2,
        &mut |_| {},
    )
    .unwrap();
    let mut conn = Conn::connect(&opts(db)).unwrap();
    for kind in WorkloadKind::ALL {
        let w = Workload::new(&workload(kind)).unwrap();
        for ps in [false, true] {
            let (r, wr, o, rows) = run_events(&mut conn, &w, 20, ps);
            let per = |n: u64| n / 20;
            let want = match kind {
                WorkloadKind::OltpPointSelect => (1, 0, 0),
                WorkloadKind::OltpReadOnly => (14, 0, 2),
                WorkloadKind::OltpReadWrite => (14, 4, 2),
                WorkloadKind::OltpWriteOnly => (0, 4, 2),
                WorkloadKind::OltpUpdateIndex
                | WorkloadKind::OltpUpdateNonIndex
                | WorkloadKind::OltpInsert
                | WorkloadKind::OltpDelete => (0, 1, 0),
                WorkloadKind::SelectRandomPoints | WorkloadKind::SelectRandomRanges => (1, 0, 0),
                WorkloadKind::Tpcc => unreachable!("not a sysbench script"),
            };
            assert_eq!((per(r), per(wr), per(o)), want, "{kind} ps={ps}");
            if kind == WorkloadKind::OltpReadOnly {
                // Point selects hit existing ids, ranges return up to range_size rows.
                assert!(rows > 20 * 10, "{kind}: {rows} rows");
            }
        }
    }
    // The deletes and inserts kept ids within the table (delete-then-insert of the same id).
    let max_id = conn.query("SELECT MAX(id) FROM sbtest1").unwrap().rows[0][0].clone();
    assert!(max_id.unwrap().parse::<u64>().unwrap() <= 500 + 40);
}
