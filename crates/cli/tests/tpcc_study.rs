//! TPC-C in a study (issue 28): `workload = "tpcc"` with the warehouses swept prepares each
//! count on the study's sandbox (the second cell loads only the warehouse it lacks), runs and
//! stores each cell with its TPC-C figures, and `lab show`, `report` and `compare` work on
//! them, the one-warehouse cell saying warehouses 1 (also when stored by an older version);
//! a bad warehouse count is refused with a line, and `tune` refuses spec mode.

mod common;

use common::{assert_user_error, stderr, stdout, Scratch};

/// The stored phase's TPC-C figures of run `id`.
fn tpcc_of(s: &Scratch, id: &str) -> serde_json::Value {
    let db = s.db().display().to_string();
    let o = s.run(&["show", id, "--db", &db, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    v["phases"][0]["result"]["tpcc"].clone()
}

/// `compare`'s warning and table name the warehouses, 1 against 2: none is missing ("–").
fn assert_warehouses_differ(out: &str) {
    assert!(
        out.contains("run options differ (warehouses.last 1 → 2)"),
        "{out}"
    );
    let row = line_of(out, "plan.workload.warehouses");
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols, ["plan.workload.warehouses.last", "1", "2"], "{out}");
}

/// The line of `text` that starts with `start`.
fn line_of<'a>(text: &'a str, start: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(start))
        .unwrap_or_else(|| panic!("no line starts with {start}: {text}"))
}

#[test]
fn a_study_sweeps_warehouses_and_its_cells_compare() {
    let s = Scratch::new();
    let spec = s.path().join("w.toml");
    std::fs::write(
        &spec,
        "name = \"tpccw\"\n[defaults]\nworkload = \"tpcc\"\nthreads = 2\ntime = \"1s\"\n\
         warmup = 0\nsettle = false\nrepeats = 1\nretries = 0\nprepare_threads = 1\n\
         [sweep]\nwarehouses = [1, 2]\n",
    )
    .unwrap();
    let spec = spec.display().to_string();
    let o = s.run(&["lab", "run", &spec]);
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(o.status.success(), "{all}");
    // The first cell loads warehouse 1 (and ITEM); the second only warehouse 2.
    assert!(
        all.contains("dataset missing: preparing TPC-C warehouse 1"),
        "{all}"
    );
    assert!(
        all.contains(
            "not completely loaded (run prepare again to finish)): loading what is missing"
        ),
        "{all}"
    );
    assert!(
        all.contains("prepared TPC-C warehouses 2 in") && all.contains("row counts verified"),
        "{all}"
    );

    let o = s.run(&["lab", "show", "tpccw", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    let mut ids = vec![];
    for (cell, w) in cells.iter().zip([1, 2]) {
        assert_eq!(cell["status"], "done", "{cell}");
        assert_eq!(cell["params"]["warehouses"], w, "{cell}");
        let id = cell["run_id"].as_i64().unwrap().to_string();
        // Each run ran on its warehouses, and counted New-Orders on the server.
        let t = tpcc_of(&s, &id);
        assert_eq!(t["warehouses"], w, "{t}");
        assert!(t["server_new_orders"].as_u64().unwrap() > 0, "{t}");
        ids.push(id);
    }

    let db = s.db().display().to_string();
    let o = s.run(&["report", "tpccw", "--db", &db, "--format", "md"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(md.contains("## TPC-C"), "{md}");
    for w in [
        "threads=2 warehouses=1 | stress |",
        "threads=2 warehouses=2 | stress |",
    ] {
        assert!(md.contains(w), "{w}: {md}");
    }

    // Issue 28: the one-warehouse cell's context says so, with TPC-C's options only.
    assert!(
        md.contains("| workload | dataset | 1 warehouse(s) |"),
        "{md}"
    );
    let options = line_of(&md, "| workload | options |");
    assert!(options.contains("tpcc.mode=stress"), "{options}");
    assert!(!options.contains("point_selects"), "{options}");

    let o = s.run(&["compare", &ids[0], &ids[1], "--db", &db]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("tps (/s)"), "{out}");
    assert_warehouses_differ(&out);
    // The stored plan says warehouses 1, as the other says 2.
    let o = s.run(&["show", &ids[0], "--db", &db, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let w = &v["meta"]["plan"]["workload"]["warehouses"];
    assert_eq!(*w, serde_json::json!({"first": 1, "last": 1}), "{v}");

    // A run stored by a version that left the TPC-C options out at their defaults reads
    // them as the defaults it ran with.
    rusqlite::Connection::open(s.db())
        .unwrap()
        .execute(
            "UPDATE runs SET plan_json = json_remove(plan_json, '$.workload.warehouses',
             '$.workload.foreign_keys', '$.workload.tpcc') WHERE id = ?1",
            [ids[0].parse::<i64>().unwrap()],
        )
        .unwrap();
    let o = s.run(&["compare", &ids[0], &ids[1], "--db", &db]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_warehouses_differ(&stdout(&o));

    let bad = s.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"bad\"\n[defaults]\nworkload = \"tpcc\"\n[sweep]\nwarehouses = [1, 0]\n",
    )
    .unwrap();
    assert_user_error(
        &s.run(&["lab", "plan", &bad.display().to_string()]),
        "warehouses",
    );
}

#[test]
fn tune_refuses_tpcc_in_spec_mode() {
    let s = Scratch::new();
    let o = s.run(&[
        "tune",
        "tpcc",
        "--mode",
        "spec",
        "--budget",
        "10m",
        "--socket",
        "/nonexistent.sock",
    ]);
    assert_user_error(&o, "tune tpcc measures stress mode only");
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
}
