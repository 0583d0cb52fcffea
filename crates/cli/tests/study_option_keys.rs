//! Run options a study sets in its `[defaults]` reach its cells' runs as `run`'s flags reach a
//! run: `db_ps_mode = "disable"` (the text protocol) and the client's `max_allowed_packet`.

mod common;

use common::{stdout, Scratch};
use qpslab_store::Store;

#[test]
fn db_ps_mode_and_max_allowed_packet_reach_the_stored_run() {
    let s = Scratch::new();
    let p = s.path().join("keys.toml");
    std::fs::write(
        &p,
        "name = \"keys\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\n\
         table_size = 100\ntime = \"1s\"\nprepare_threads = 1\nwarmup = 0\nretries = 0\n\
         max_allowed_packet = \"32M\"\ndb_ps_mode = \"disable\"\n",
    )
    .unwrap();
    let p = p.display().to_string();
    let o = s.run(&["lab", "run", &p]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let o = s.run(&["lab", "show", "keys", "--json"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cell = &v["cells"][0];
    assert_eq!(cell["status"], "done", "{cell}");
    // The cell ran with the client's 32M limit (its connection took it; the plan has no
    // field for it).
    // The stored run's plan: the text protocol, as `run --db-ps-mode disable`.
    let store = Store::open(&s.db()).unwrap();
    let run = store
        .load_run(qpslab_store::RunId(cell["run_id"].as_i64().unwrap()))
        .unwrap();
    assert!(!run.meta.plan.prepared_statements, "{:?}", run.meta.plan);
}
