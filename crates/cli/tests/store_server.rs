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
