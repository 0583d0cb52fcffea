//! TPC-C in a study (issue 28): `workload = "tpcc"` with the warehouses swept prepares each
//! count on the study's sandbox (the second cell loads only the warehouse it lacks), runs and
//! stores each cell with its TPC-C figures, and `lab show`, `report` and `compare` work on
//! them; a bad warehouse count is refused with a line, and `tune` refuses spec mode.

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

    let o = s.run(&["compare", &ids[0], &ids[1], "--db", &db]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("tps (/s)"), "{out}");
    // The two cells differ by their warehouses, and compare says so.
    assert!(
        out.contains("run options differ") && out.contains("plan.workload.warehouses.last"),
        "{out}"
    );

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
