//! `--pipeline on` against the shared real server: a transaction's statements written back to
//! back, its COMMIT once their replies are in. What it must keep: a statement that fails in
//! the middle (a deadlock, which ends the server's transaction) leaves nothing of its
//! transaction behind, though the statements after it were already sent and ran; the
//! consistency conditions hold during and after the run; the run's figures agree with the
//! server's; workloads whose events are not transactions refuse it.

mod common;
use common::tpcc::{deadlock_a_payment, value};
use common::*;

/// `N` of `name N` in a list like `new_order 12, payment 10`.
fn of_type(list: &str, name: &str) -> u64 {
    list.split(", ")
        .find_map(|t| t.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {list}"))
}

fn count(db: &str, query: &str) -> u64 {
    sql(&format!("USE {db}; {query}")).trim().parse().unwrap()
}

#[test]
fn a_deadlock_mid_pipeline_leaves_nothing_of_its_transaction() {
    let db = "tpcc_pipe";
    sql(&format!("DROP DATABASE IF EXISTS {db}"));
    let s = Scratch::new();
    prepare_shared(&s, "tpcc", db, &[]);
    let loaded_history = count(db, "SELECT COUNT(*) FROM history");
    let sock = socket();
    // A Payment deadlocked on purpose (its warehouse row taken, it waits for a district the
    // other session holds, which then asks for the warehouse row): InnoDB rolls the Payment
    // back, and the customer update and history insert pipelined after the statement that
    // failed still run on the server. With autocommit on they would each commit: a history
    // row without its payment.
    let lock = std::thread::spawn(move || deadlock_a_payment(db));
    let (r, during) = std::thread::scope(|scope| {
        // The conditions also hold while the run goes on (each is one consistent read), here
        // 3 s in, after the deadlock.
        let during = scope.spawn(|| {
            std::thread::sleep(std::time::Duration::from_secs(3));
            s.run(&["check", "tpcc", "--socket", &sock, "--database", db])
        });
        let r = s.run(&[
            "run",
            "tpcc",
            "--pipeline",
            "on",
            "--threads",
            "16",
            "--time",
            "5",
            "--warmup",
            "0",
            "--check",
            "on",
            "--socket",
            &sock,
            "--database",
            db,
        ]);
        (r, during.join().unwrap())
    });
    lock.join().unwrap();
    assert!(
        during.status.success(),
        "{}{}",
        stdout(&during),
        stderr(&during)
    );
    assert!(!stdout(&during).contains("FAIL"), "{}", stdout(&during));
    assert!(r.status.success(), "{}", stderr(&r));
    let out = stdout(&r);
    assert!(out.contains("· 5 s · pipelined =="), "{out}");
    let retried = value(&out, "retried (deadlock, lock wait):");
    assert!(
        retried
            .split(", ")
            .any(|t| t.starts_with("payment ") && t.contains("1213: ")),
        "{out}"
    );
    // Every history row is a loaded one or a committed Payment's (without a warm-up every
    // event is counted): none from the rolled-back one.
    let payments = of_type(&value(&out, "committed:"), "payment");
    assert!(payments > 0, "{out}");
    assert_eq!(
        count(db, "SELECT COUNT(*) FROM history"),
        loaded_history + payments,
        "{out}"
    );
    // The client's New-Orders are the server's, and the conditions hold.
    assert_eq!(
        value(&out, "NewOrder/min:"),
        value(&out, "server NOPM (sum(d_next_o_id)):")
    );
    assert!(out.matches("): pass").count() >= 4, "{out}");
    assert!(!out.contains("FAIL"), "{out}");
    // The stored plan says the run was pipelined.
    let id = stored_run_id(&out);
    let db_path = s.db().display().to_string();
    let json = stdout(&s.run(&["show", &id, "--db", &db_path, "--format", "json"]));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["meta"]["plan"]["pipeline"], true, "{json}");
    sql(&format!("DROP DATABASE {db}"));
}

#[test]
fn oltp_read_write_pipelined_runs_sysbenchs_transaction() {
    let db = "pipe_rw";
    sql(&format!("DROP DATABASE IF EXISTS {db}"));
    let s = Scratch::new();
    prepare_shared(&s, "oltp_read_write", db, &["--table-size", "1000"]);
    let sock = socket();
    for ps in ["on", "off"] {
        let r = s.run(&[
            "run",
            "oltp_read_write",
            "--pipeline",
            "on",
            "--ps",
            ps,
            "--table-size",
            "1000",
            "--threads",
            "4",
            "--time",
            "2",
            "--format",
            "json",
            "--socket",
            &sock,
            "--database",
            db,
        ]);
        assert!(r.status.success(), "{}", stderr(&r));
        let doc: serde_json::Value = serde_json::from_str(&stdout(&r)).unwrap();
        let phase = &doc["phases"][0];
        let events = phase["events"].as_u64().unwrap();
        assert!(events > 10, "{doc}");
        // BEGIN, 10 point selects, 4 ranges, 4 writes, COMMIT per event, as without a
        // pipeline; an attempt rolled back after a deadlock adds its BEGIN and ROLLBACK, and
        // the statements it had answered before the failing one (not those after it).
        let q = &phase["queries"];
        let retried: u64 = phase["errors"].as_object().map_or(0, |e| {
            e.values().filter_map(serde_json::Value::as_u64).sum()
        });
        let (read, write) = (q["read"].as_u64().unwrap(), q["write"].as_u64().unwrap());
        assert!(
            (14 * events..=14 * (events + retried)).contains(&read),
            "{doc}"
        );
        assert!(
            (4 * events..=4 * (events + retried)).contains(&write),
            "{doc}"
        );
        assert_eq!(
            q["other"].as_u64().unwrap(),
            2 * (events + retried),
            "{doc}"
        );
        assert_eq!(doc["meta"]["plan"]["pipeline"], true, "{doc}");
    }
    sql(&format!("DROP DATABASE {db}"));
}

#[test]
fn workloads_whose_events_are_not_transactions_refuse_a_pipeline() {
    let s = Scratch::new();
    let sock = socket();
    for (args, needle) in [
        (&["run", "oltp_point_select"][..], "not oltp_point_select"),
        (
            &["run", "oltp_read_write", "--skip-trx", "on"][..],
            "with skip_trx",
        ),
        (&["run", "oltp_insert"][..], "events are transactions"),
    ] {
        let o = s.run(
            &[
                args,
                &["--pipeline", "on", "--socket", &sock, "--database", "never"],
            ]
            .concat(),
        );
        assert_user_error(&o, needle);
    }
    let o = s.run(&["run", "tpcc", "--pipeline", "maybe"]);
    assert_user_error(&o, "on");
}
