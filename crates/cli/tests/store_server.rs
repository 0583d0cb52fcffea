//! A results store on a MariaDB server (`--db mysql://...`, issue 50), against real servers:
//! the shared test server holds the store's schema; studies measure sandboxes of their own.
//! A store on the server under test is refused (or accepted with a warning); two studies
//! write one store at once while it is read; a study killed with -9 loses only its
//! unfinished cell, and its lock is taken over once its lease ran out.

mod common;
use common::*;
use serde_json::Value;
use std::time::{Duration, Instant};

/// A fresh schema's URL on the shared test server.
fn store_url(name: &str) -> String {
    format!(
        "mysql://root@localhost/{name}_{}?socket={}",
        std::process::id(),
        socket()
    )
}

/// A raw session on the store's schema.
fn raw(url: &str) -> qpslab_wire::Conn {
    let dsn: qpslab_core::Dsn = url.parse().unwrap();
    qpslab_wire::Conn::connect(dsn.options()).unwrap()
}

#[test]
fn issue_50_a_store_on_the_server_under_test_is_refused_or_accepted_with_a_warning() {
    let s = Scratch::new();
    let sock = socket();
    prepare_shared(
        &s,
        "oltp_point_select",
        "ontarget",
        &["--tables", "1", "--table-size", "500"],
    );
    let url = store_url("ontarget");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "oltp_point_select",
            "--socket",
            &sock,
            "--database",
            "ontarget",
            "--tables",
            "1",
            "--table-size",
            "500",
            "--time",
            "1",
            "--db",
            &url,
        ];
        args.extend_from_slice(extra);
        s.run(&args)
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    let line = err.lines().last().unwrap();
    assert!(
        line.contains("is on the server under test") && line.contains("--db-on-target"),
        "{err}"
    );
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    let o = run(&["--db-on-target"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: the results store mysql://root@localhost/"),
        "{}",
        stderr(&o)
    );
    let o = s.run(&["show", "--db", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("oltp_point_select"), "{}", stdout(&o));
    dashboard_queries_read_the_views(&url);
}

/// Every query of examples/grafana-qpslab-store.json runs on a store holding a run, and finds
/// it: Grafana's macros replaced as its MySQL data source expands them.
fn dashboard_queries_read_the_views(url: &str) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/grafana-qpslab-store.json"
    );
    let d: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let host = String::from_utf8(
        std::process::Command::new("uname")
            .arg("-n")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let mut queries: Vec<String> = d["templating"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["query"].as_str().filter(|q| q.starts_with("SELECT")))
        .map(str::to_string)
        .collect();
    for p in d["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            queries.push(t["rawSql"].as_str().unwrap().to_string());
        }
    }
    assert!(queries.len() >= 6, "{queries:?}");
    let mut c = raw(url);
    for q in queries {
        let mut sql = q
            .replace("$workload", "'oltp_point_select'")
            .replace("$host", &format!("'{host}'"));
        while let Some(at) = sql.find("$__timeFilter(") {
            let end = at + sql[at..].find(')').unwrap();
            let col = sql[at + "$__timeFilter(".len()..end].to_string();
            sql.replace_range(
                at..=end,
                &format!("{col} BETWEEN FROM_UNIXTIME(1) AND NOW() + INTERVAL 1 DAY"),
            );
        }
        let r = c.query(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert!(!r.rows.is_empty(), "no row: {sql}");
    }
}

#[test]
fn issue_50_bad_store_urls_get_one_line() {
    let s = Scratch::new();
    let o = s.run(&["show", "--db", "mysql://root@localhost/"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("names no schema"), "{}", stderr(&o));
    let o = s.run(&["show", "--db", "mysql://nobody:s3cret@127.0.0.1:1/results"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!stderr(&o).contains("s3cret"), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    // A schema that holds another program's tables is not taken over.
    let url = store_url("foreign");
    let mut c = raw(&format!("mysql://root@localhost/mysql?socket={}", socket()));
    let schema = format!("foreign_{}", std::process::id());
    c.query(&format!("CREATE DATABASE IF NOT EXISTS {schema}"))
        .unwrap();
    c.query(&format!("CREATE TABLE {schema}.t (x INT)"))
        .unwrap();
    let o = s.run(&["show", "--db", &url]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not a qpslab results store"),
        "{}",
        stderr(&o)
    );
}

/// A study of one sandbox setup and `cells` short cells.
fn spec(name: &str, cells: u32) -> String {
    format!(
        "name = \"{name}\"\nrepeats = {cells}\n[defaults]\nworkload = \"oltp_point_select\"\n\
         tables = 1\ntable_size = 500\nprepare_threads = 1\nthreads = 1\ntime = \"2s\"\n\
         warmup = 0\nretries = 0\n[[variant]]\nname = \"v\"\n"
    )
}

fn cells(s: &Scratch, url: &str, study: &str) -> Vec<Value> {
    let o = s.run(&["lab", "show", study, "--format", "json", "--db", url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    doc["cells"].as_array().unwrap().clone()
}

#[test]
fn issue_50_two_studies_write_one_store_at_once_and_a_killed_one_is_taken_over_after_its_lease() {
    let s = Scratch::new();
    let url = store_url("twostudies");
    let spec_a = s.path().join("a.toml");
    let spec_b = s.path().join("b.toml");
    std::fs::write(&spec_a, spec("study-a", 4)).unwrap();
    std::fs::write(&spec_b, spec("study-b", 6)).unwrap();
    let a = s
        .cmd(&["lab", "run", spec_a.to_str().unwrap(), "--db", &url])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut b = s
        .cmd(&["lab", "run", spec_b.to_str().unwrap(), "--db", &url])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // A third process reads the store meanwhile; b is killed once one of its cells is done.
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut reads = 0;
    loop {
        let o = s.run(&["show", "--db", &url]);
        // Until the first study has made the schema's tables, there is no store to read (a
        // reader never makes one); from then on every read succeeds.
        if reads == 0 && stderr(&o).contains("no results store at") {
            assert!(Instant::now() < deadline, "no study made the store");
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        assert!(o.status.success(), "{}", stderr(&o));
        reads += 1;
        let lab = s.run(&["lab", "show", "study-b", "--format", "json", "--db", &url]);
        let done = serde_json::from_str::<Value>(&stdout(&lab))
            .ok()
            .and_then(|d| d["cells"].as_array().cloned())
            .map_or(0, |c| c.iter().filter(|c| c["status"] == "done").count());
        if done >= 1 {
            break;
        }
        assert!(Instant::now() < deadline, "study b never finished a cell");
        std::thread::sleep(Duration::from_millis(300));
    }
    b.kill().unwrap();
    b.wait().unwrap();
    let out = a.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(reads >= 1);
    // a measured everything; b kept every cell it finished, and only the cut one is not done.
    let a_cells = cells(&s, &url, "study-a");
    assert_eq!(a_cells.len(), 4);
    assert!(a_cells.iter().all(|c| c["status"] == "done"), "{a_cells:?}");
    let b_cells = cells(&s, &url, "study-b");
    let done_before = b_cells.iter().filter(|c| c["status"] == "done").count();
    assert!(done_before >= 1, "{b_cells:?}");
    assert!(
        b_cells.iter().filter(|c| c["status"] == "running").count() <= 1,
        "{b_cells:?}"
    );

    // As if b had run on another host: its lock is held while its heartbeat is fresh...
    let mut c = raw(&url);
    c.query(
        "UPDATE studies SET owner_boot_id = 'another-host', heartbeat_at = UNIX_TIMESTAMP(NOW(6))
          WHERE name = 'study-b'",
    )
    .unwrap();
    let o = s.run(&["lab", "resume", spec_b.to_str().unwrap(), "--db", &url]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("being measured by another qpslab"),
        "{}",
        stderr(&o)
    );
    // ...and taken over once its lease ran out.
    c.query("UPDATE studies SET heartbeat_at = UNIX_TIMESTAMP(NOW(6)) - 31 WHERE name = 'study-b'")
        .unwrap();
    let o = s.run(&["lab", "resume", spec_b.to_str().unwrap(), "--db", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let b_cells = cells(&s, &url, "study-b");
    assert!(b_cells.iter().all(|c| c["status"] == "done"), "{b_cells:?}");
    assert_eq!(b_cells.len(), 6);
}

/// The store's server stopped while a run measures, and started again before the phase ends:
/// the run reopens its session and is stored whole. Stopped for good: the measured phase is
/// kept in a file, and the run says where.
#[test]
fn issue_50_a_store_server_that_goes_away_mid_run_loses_nothing() {
    let s = Scratch::new();
    let sock = socket();
    prepare_shared(
        &s,
        "oltp_point_select",
        "away",
        &["--tables", "1", "--table-size", "500"],
    );
    let o = s.run(&["server", "start", "storebox"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["server", "list", "--format", "json"]);
    let list: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let store_sock = list
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == "storebox")
        .and_then(|b| b["socket"].as_str())
        .unwrap()
        .to_string();
    let url = format!("mysql://root@localhost/results?socket={store_sock}");
    let run = |time: &str| {
        s.cmd(&[
            "run",
            "oltp_point_select",
            "--socket",
            &sock,
            "--database",
            "away",
            "--tables",
            "1",
            "--table-size",
            "500",
            "--time",
            time,
            "--db",
            &url,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
    };
    // Away and back within the phase.
    let child = run("10");
    std::thread::sleep(Duration::from_secs(3));
    let o = s.run(&["server", "stop", "storebox"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["server", "start", "storebox"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = child.wait_with_output().unwrap();
    let (o_out, o_err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{o_out}\n{o_err}");
    let id = o_out
        .lines()
        .find_map(|l| l.strip_prefix("stored as run "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_string();
    let o = s.run(&["show", &id, "--format", "json", "--db", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["status"], "completed", "{doc}");
    let samples = doc["phases"][0]["result"]["samples"]
        .as_array()
        .unwrap()
        .len();
    assert!(samples >= 9, "every interval kept: {samples}");

    // Away for good: the phase is kept in a file named on standard error.
    let child = run("4");
    std::thread::sleep(Duration::from_secs(2));
    let o = s.run(&["server", "stop", "storebox"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{err}");
    let kept = err
        .split("it is kept in ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("{err}"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(kept).unwrap()).unwrap();
    assert!(
        doc["phases"][0]["result"]["events"].as_u64().unwrap() > 0,
        "{doc}"
    );
    let _ = std::fs::remove_file(kept);
}
