//! `qpslab import`: runs measured into two stores (one standing for another host's) meet in
//! one, where `compare` names the hosts, `show` lists them and `report` covers both; an import
//! done twice is recognised; a file that is no store, or an id it does not hold, is the user's
//! error.

mod common;
use common::*;
use std::path::Path;

/// The database of the shared server these tests use, and its dataset.
const DB: &str = "import_hosts";
const DATASET: [&str; 4] = ["--tables", "1", "--table-size", "500"];

/// A 1 s run on the shared server stored in `db`; its id.
fn measure(s: &Scratch, sock: &str, db: &Path) -> String {
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--socket",
        sock,
        "--database",
        DB,
    ];
    args.extend_from_slice(&DATASET);
    args.extend_from_slice(&["--threads", "1", "--time", "1", "--warmup", "0", "--db"]);
    args.push(db.to_str().unwrap());
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    stored_run_id(&stdout(&o))
}

#[test]
fn runs_of_two_hosts_meet_in_one_store_where_compare_and_show_name_the_hosts() {
    let s = Scratch::new();
    let sock = socket();
    prepare_shared(&s, "oltp_point_select", DB, &DATASET);
    let there = s.path().join("there.db");
    assert_eq!(measure(&s, &sock, &s.db()), "1");
    assert_eq!(measure(&s, &sock, &there), "1");
    // The other store as its host left it: another machine's name and CPU.
    let other = rusqlite::Connection::open(&there).unwrap();
    other
        .execute(
            "UPDATE runs SET host_json = json_set(host_json, '$.hostname', 'arm-host',
                                                  '$.cpu_model', 'Neoverse-V2')",
            [],
        )
        .unwrap();
    let uuid: String = other
        .query_row("SELECT uuid FROM runs", [], |r| r.get(0))
        .unwrap();
    drop(other);
    let there = there.to_str().unwrap();

    let o = s.run(&["import", there]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("run 1 (oltp_point_select, measured on arm-host): imported as run 2"),
        "{}",
        stdout(&o)
    );
    let o = s.run(&["import", there]);
    assert!(
        stdout(&o).contains("already here as run 2") && stdout(&o).contains("0 of 1 runs"),
        "{}",
        stdout(&o)
    );

    let shown = stdout(&s.run(&["show", "2", "--format", "json"]));
    assert!(
        shown.contains(&uuid) && shown.contains("Neoverse-V2"),
        "{shown}"
    );
    let list = stdout(&s.run(&["show"]));
    assert!(
        list.contains(" host") && list.contains("arm-host"),
        "{list}"
    );

    let o = s.run(&["compare", "1", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let line = text
        .lines()
        .find(|l| l.contains("the sides ran on different hosts"))
        .unwrap_or_else(|| panic!("no hosts line in {text}"));
    assert!(
        line.contains("run 1 on ") && line.ends_with("run 2 on arm-host (Neoverse-V2)"),
        "{line}"
    );

    let md = s.path().join("report.md");
    let o = s.run(&["report", "1", "2", "--out", md.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(md).unwrap();
    assert!(
        md.contains("arm-host"),
        "the report names the other host: {md}"
    );

    let notes = s.path().join("notes.txt");
    std::fs::write(&notes, "some words, not a store").unwrap();
    assert_user_error(
        &s.run(&["import", notes.to_str().unwrap()]),
        "is not a qpslab results store",
    );
    assert_user_error(&s.run(&["import", there, "9"]), "has no run 9");
    let fresh = s.path().join("fresh.db");
    let o = s.run(&["import", "missing.db", "--db", fresh.to_str().unwrap()]);
    assert_user_error(&o, "missing.db is not a file");
    assert!(!fresh.exists(), "a failed import creates no store");
    assert_eq!(
        stdout(&s.run(&["show", "--format", "csv"])).lines().count(),
        3,
        "nothing more was imported"
    );
}
