//! Commands that run at the same time on one sandbox or one new store (issue 25, items 6 and 7):
//! a run that would rebuild a dataset another run is measuring is refused, runs reading the same
//! dataset share the sandbox and say so, and processes creating one new store all succeed.

mod common;

use common::{assert_user_error, socket, stderr, stdout, Scratch};
use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;

fn run_args<'a>(size: &'a str, time: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "oltp_point_select",
        "--sandbox",
        "a",
        "--tables",
        "1",
        "--table-size",
        size,
        "--threads",
        "2",
        "--time",
        time,
        "--warmup",
        "0",
    ]
}

/// Issue 25, item 6: a second `run --sandbox a` with another `--table-size` dropped the first's
/// tables while it measured (error 1146).
#[test]
fn a_run_never_rebuilds_a_dataset_another_run_measures() {
    let s = Scratch::new();
    let o = s.run(&["server", "start", "a"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The first run builds its dataset alone, then measures for 8 s sharing the sandbox.
    let mut first = s
        .cmd(&run_args("1000", "8"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = first.id();
    let mut out = BufReader::new(first.stdout.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the first run ended before measuring: {seen}"
        );
        seen.push_str(&line);
        if line.starts_with("[ 1s ]") {
            break;
        }
    }
    let rest = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).map(|_| s)
    });

    // Another shape needs a rebuild: refused, naming the run that measures.
    let o = s.run(&run_args("2000", "1"));
    assert_user_error(&o, &format!("pid {pid}"));
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.matches("error").count(), 1, "one line says why: {err}");
    assert_user_error(&s.run(&["cleanup", "--sandbox", "a"]), "in use");
    let mut prepare = run_args("2000", "1");
    prepare[0] = "prepare";
    prepare.truncate(8);
    assert_user_error(&s.run(&prepare), "in use");
    // The same dataset: the sandbox is shared, and the run says with whom.
    let o = s.run(&run_args("1000", "1"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("sharing sandbox 'a' with qpslab pid {pid}")),
        "{}",
        stderr(&o)
    );

    let status = first.wait().unwrap();
    let mut err = String::new();
    first
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let rest = rest.join().unwrap().unwrap();
    assert!(status.success(), "the first run was disturbed: {err}{rest}");
    assert!(!format!("{err}{rest}").contains("1146"), "{err}{rest}");
    let o = s.run(&["show", "--json"]);
    let runs: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let mine = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].to_string())
        .min_by_key(|id| id.parse::<i64>().unwrap())
        .unwrap();
    let o = s.run(&["show", &mine, "--json"]);
    let run: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(run["status"], "completed", "{run}");
    let errors = &run["phases"][0]["result"]["errors"];
    assert!(errors.as_object().is_none_or(|e| e.is_empty()), "{errors}");

    // Once it has ended, the rebuild goes through.
    let o = s.run(&run_args("2000", "1"));
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Issue 25, item 7: two commands creating one new `--db` at once failed 2 times in 5 ("table
/// runs already exists", "not a qpslab results store").
#[test]
fn commands_creating_one_new_store_at_once_all_succeed() {
    let s = Scratch::new();
    common::prepare_shared(
        &s,
        "oltp_point_select",
        "locks_new_db",
        &["--tables", "1", "--table-size", "200"],
    );
    let sock = socket();
    for attempt in 0..3 {
        let db = s.path().join(format!("new-{attempt}.db"));
        let db = db.to_str().unwrap();
        let children: Vec<_> = (0..4)
            .map(|_| {
                s.cmd(&[
                    "run",
                    "oltp_point_select",
                    "--socket",
                    &sock,
                    "--database",
                    "locks_new_db",
                    "--tables",
                    "1",
                    "--table-size",
                    "200",
                    "--threads",
                    "1",
                    "--time",
                    "1",
                    "--warmup",
                    "0",
                    "--db",
                    db,
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "try {attempt}: {}", stderr(&o));
        }
        let o = s.run(&["show", "--db", db, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let runs: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(runs.as_array().unwrap().len(), 4, "{runs}");
    }
}
