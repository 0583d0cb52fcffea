//! TPC-C's dataset on the shared test server: `prepare tpcc` loads the spec's population with
//! verified row counts, resumes after `kill -9` loading only what is missing, loads slices
//! (`--warehouses A-B`), and `cleanup tpcc` drops what it created.

mod common;
use common::*;
use std::time::{Duration, Instant};

/// The arguments of `prepare tpcc` into `db` of the shared server (at `sock`) with `extra`.
fn prepare_args<'a>(sock: &'a str, db: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let base = [
        "prepare",
        "tpcc",
        "--socket",
        sock,
        "--database",
        db,
        "--create-db",
    ];
    [&base[..], extra].concat()
}

/// `prepare tpcc` into `db` of the shared server with `extra` options.
fn prepare(s: &Scratch, db: &str, extra: &[&str]) -> std::process::Output {
    s.run(&prepare_args(&socket(), db, extra))
}

/// `db` dropped from the shared server if an earlier run left it.
fn fresh(db: &str) -> &str {
    sql(&format!("DROP DATABASE IF EXISTS {db}"));
    db
}

fn count(db: &str, query: &str) -> u64 {
    sql(&format!("USE {db}; {query}")).trim().parse().unwrap()
}

/// Row counts of every table for warehouses `first..=last`, counted independently of the
/// loader: the spec's population, ORDER-LINE as the orders' line counts say.
fn assert_population(db: &str, first: u32, last: u32, items: u64) {
    let n = u64::from(last - first + 1);
    let range = |col: &str| format!("WHERE {col} BETWEEN {first} AND {last}");
    for (table, col, want) in [
        ("warehouse", "w_id", n),
        ("district", "d_w_id", 10 * n),
        ("customer", "c_w_id", 30_000 * n),
        ("history", "h_w_id", 30_000 * n),
        ("orders", "o_w_id", 30_000 * n),
        ("new_orders", "no_w_id", 9_000 * n),
        ("stock", "s_w_id", 100_000 * n),
    ] {
        let got = count(db, &format!("SELECT COUNT(*) FROM {table} {}", range(col)));
        assert_eq!(got, want, "{db}.{table}");
    }
    let lines = count(
        db,
        &format!("SELECT SUM(o_ol_cnt) FROM orders {}", range("o_w_id")),
    );
    assert!(lines >= 5 * 30_000 * n && lines <= 15 * 30_000 * n);
    let got = count(
        db,
        &format!("SELECT COUNT(*) FROM order_line {}", range("ol_w_id")),
    );
    assert_eq!(got, lines, "{db}.order_line");
    assert_eq!(count(db, "SELECT COUNT(*) FROM item"), items, "{db}.item");
}

#[test]
fn two_warehouses_load_with_verified_counts_and_clean_up() {
    let (s, db) = (Scratch::new(), fresh("tpcc_two"));
    let o = prepare(&s, db, &["--warehouses", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("prepared TPC-C warehouses 2") && stdout(&o).contains("verified"),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("ETA"), "progress: {}", stderr(&o));
    assert_population(db, 1, 2, 100_000);
    // The spec's data rules, read back from the server.
    assert_eq!(
        count(
            db,
            "SELECT COUNT(*) FROM district WHERE d_next_o_id = 3001 AND d_ytd = 30000"
        ),
        20
    );
    assert_eq!(
        count(db, "SELECT COUNT(*) FROM customer WHERE c_id <= 1000 AND c_last NOT REGEXP '^(BAR|OUGHT|ABLE|PRI|PRES|ESE|ANTI|CALLY|ATION|EING){3}$'"),
        0
    );
    let original = count(
        db,
        "SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'",
    );
    assert!((8_000..12_000).contains(&original), "{original}");
    let undelivered = count(db, "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NULL");
    assert_eq!(undelivered, 18_000);
    let idx = sql(&format!(
        "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS \
         WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'customer' AND INDEX_NAME = 'idx_customer'"
    ));
    assert_eq!(idx.trim(), "c_w_id,c_d_id,c_last,c_first");

    // Loaded already: nothing is reloaded, the counts are checked again.
    let again = prepare(&s, db, &["--warehouses", "2"]);
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(
        stdout(&again).contains("already loaded"),
        "{}",
        stdout(&again)
    );

    // The consistency conditions hold after a load, and fail, naming the district's
    // warehouse, once a row is damaged on purpose.
    let sock = socket();
    let check = || s.run(&["check", "tpcc", "--socket", &sock, "--database", db]);
    let ok = check();
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(stdout(&ok).matches(": pass").count(), 4, "{}", stdout(&ok));
    sql(&format!(
        "UPDATE {db}.district SET d_ytd = d_ytd + 1 WHERE d_w_id = 2 AND d_id = 7"
    ));
    let one_order = "WHERE o_w_id = 1 AND o_d_id = 3 AND o_id = 10";
    sql(&format!(
        "UPDATE {db}.orders SET o_ol_cnt = o_ol_cnt + 1 {one_order}"
    ));
    let bad = check();
    assert_eq!(bad.status.code(), Some(1), "{}", stderr(&bad));
    let out = stdout(&bad);
    assert!(
        out.contains("condition 1 (W_YTD = sum(D_YTD)): FAIL: warehouse 2: w_ytd 300000.00, sum(d_ytd) 300001.00"),
        "{out}"
    );
    assert!(
        out.contains(
            "condition 4 (sum(O_OL_CNT) = rows in ORDER-LINE): FAIL: warehouse 1 district 3:"
        ),
        "{out}"
    );
    assert_eq!(out.matches(": pass").count(), 2, "{out}");
    assert!(
        stderr(&bad).contains("condition(s) 1, 4 failed"),
        "{}",
        stderr(&bad)
    );
    sql(&format!(
        "UPDATE {db}.district SET d_ytd = d_ytd - 1 WHERE d_w_id = 2 AND d_id = 7"
    ));
    sql(&format!(
        "UPDATE {db}.orders SET o_ol_cnt = o_ol_cnt - 1 {one_order}"
    ));
    assert!(check().status.success());

    // A damaged table fails the verification (exit 1, one line naming the table); the
    // tables runs grow (history, orders...) are checked only for warehouses loaded now.
    sql(&format!(
        "DELETE FROM {db}.history WHERE h_w_id = 2 LIMIT 5"
    ));
    let grown = prepare(&s, db, &["--warehouses", "2"]);
    assert!(grown.status.success(), "{}", stderr(&grown));
    sql(&format!(
        "DELETE FROM {db}.customer WHERE c_w_id = 2 LIMIT 5"
    ));
    let bad = prepare(&s, db, &["--warehouses", "2"]);
    assert_eq!(bad.status.code(), Some(1), "{}", stderr(&bad));
    assert!(
        stderr(&bad).contains("customer has 59995 rows, expected 60000"),
        "{}",
        stderr(&bad)
    );

    let sock = socket();
    let c = s.run(&["cleanup", "tpcc", "--socket", &sock, "--database", db]);
    assert!(c.status.success(), "{}", stderr(&c));
    assert!(stdout(&c).contains("dropped 10 table(s)"), "{}", stdout(&c));
    let left = sql(&format!(
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{db}'"
    ));
    assert_eq!(left.trim(), "0");
}

#[test]
fn a_load_killed_mid_way_resumes_and_ends_complete() {
    let (s, db) = (Scratch::new(), fresh("tpcc_resume"));
    let sock = socket();
    let mut child = s
        .cmd(&prepare_args(&sock, db, &["--warehouses", "4"]))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some unit is recorded complete and others are still loading.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "no unit completed in time");
        assert!(
            child.try_wait().unwrap().is_none(),
            "prepare ended before the kill"
        );
        let done = sql(&format!(
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'qpslab_tpcc'"
        ));
        if done.trim() == "1" && count(db, "SELECT COUNT(*) FROM qpslab_tpcc") >= 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: kill on the pid of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let recorded = count(db, "SELECT COUNT(*) FROM qpslab_tpcc");
    assert!(
        recorded < 5,
        "killed after everything loaded: {recorded} units"
    );
    // Partial rows of the unrecorded warehouses are there and must not be loaded twice.
    let partial = count(db, "SELECT COUNT(*) FROM stock");
    assert!(partial > 0);

    let o = prepare(&s, db, &["--warehouses", "4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("verified"), "{}", stdout(&o));
    // Only what was missing was loaded: fewer rows than four warehouses and the items.
    let loaded: u64 = stdout(&o)
        .split(" rows,")
        .next()
        .and_then(|t| t.rsplit('(').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}", stdout(&o)));
    assert!(loaded < 4 * 499_000 + 100_000, "{loaded}");
    assert_population(db, 1, 4, 100_000);
    assert_eq!(count(db, "SELECT COUNT(*) FROM qpslab_tpcc"), 5);
    let check = s.run(&["check", "tpcc", "--socket", &sock, "--database", db]);
    assert!(check.status.success(), "{}", stdout(&check));
    sql(&format!("DROP DATABASE {db}"));
}

#[test]
fn a_slice_loads_only_its_warehouses_and_the_rest_completes_it() {
    let (s, db) = (Scratch::new(), fresh("tpcc_slice"));
    let o = prepare(&s, db, &["--warehouses", "2-3", "--foreign-keys", "on"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("warehouses 2-3"), "{}", stdout(&o));
    // Warehouse 1's slice loads the items: this one has none.
    assert_population(db, 2, 3, 0);
    assert_eq!(count(db, "SELECT COUNT(*) FROM warehouse"), 2);
    let fks = count(
        db,
        &format!("SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = '{db}'"),
    );
    assert!(fks >= 8, "{fks} foreign keys");
    // Tables without foreign keys cannot join this dataset.
    let other = prepare(&s, db, &["--warehouses", "1", "--foreign-keys", "off"]);
    assert_user_error(&other, "cleanup tpcc");
    let o = prepare(&s, db, &["--warehouses", "1", "--foreign-keys", "on"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_population(db, 1, 3, 100_000);
    let sock = socket();
    let c = s.run(&["cleanup", "--socket", &sock, "--database", db]);
    assert!(c.status.success(), "{}", stderr(&c));
    assert!(stdout(&c).contains("qpslab_tpcc"), "{}", stdout(&c));
    sql(&format!("DROP DATABASE {db}"));
}

#[test]
fn bad_warehouses_are_refused_in_one_line() {
    let s = Scratch::new();
    for bad in ["0", "3-2", "x"] {
        let o = prepare(&s, "tpcc_never", &["--warehouses", bad]);
        assert_user_error(&o, "warehouses");
    }
    let missing =
        sql("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'tpcc_never'");
    assert_eq!(missing.trim(), "0");
}

#[test]
fn a_short_stress_run_reports_new_orders_and_keeps_the_conditions() {
    let (s, db) = (Scratch::new(), fresh("tpcc_run"));
    let o = prepare(&s, db, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let sock = socket();
    let target = ["--socket", &sock, "--database", db];
    let run = s.run(
        &[
            &[
                "run",
                "tpcc",
                "--threads",
                "4",
                "--time",
                "3",
                "--warmup",
                "0",
            ][..],
            &target,
        ]
        .concat(),
    );
    assert!(run.status.success(), "{}", stderr(&run));
    let out = stdout(&run);
    assert!(out.contains("not tpmC") && !out.contains("tpmC:"), "{out}");
    let per_min = |label: &str| -> f64 {
        out.lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {label} in {out}"))
    };
    let (no, tx) = (per_min("NewOrder/min:"), per_min("transactions/min:"));
    assert!(no > 0.0 && no < tx, "{no} {tx}");
    // About 45% of the transactions are New-Orders.
    assert!((0.30..0.60).contains(&(no / tx)), "{no} {tx}");
    // Each type's latency counts its events: committed and rolled-back New-Orders alike.
    let value = |label: &str| -> String {
        let l = out
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in {out}"));
        l[l.find(label).unwrap() + label.len()..].trim().to_string()
    };
    let committed: u64 = value("committed:")
        .split(", ")
        .find_map(|t| t.strip_prefix("new_order "))
        .and_then(|n| n.parse().ok())
        .unwrap();
    let rolled_back: u64 = value("new_order rolled back:").parse().unwrap();
    let events = value("new_order:");
    assert!(
        events.ends_with(&format!("({} events)", committed + rolled_back)),
        "{events}: {committed} + {rolled_back}"
    );
    for t in ["payment:", "order_status:", "delivery:", "stock_level:"] {
        assert!(value(t).ends_with("events)"), "{out}");
    }
    let orders = sql(&format!(
        "SELECT COUNT(*) FROM {db}.orders WHERE o_id > 3000"
    ));
    assert!(orders.trim().parse::<u64>().unwrap() > 0);
    let check = s.run(&[&["check", "tpcc"][..], &target].concat());
    assert!(check.status.success(), "{}", stdout(&check));
    sql(&format!("DROP DATABASE {db}"));
}
