//! `qpslab tune` against real servers (oltp_write_only: with an 8 MiB pool the page cleaner
//! holds writes back, 4× slower here than with 256 MiB): a sandbox whose pool is several times
//! smaller than its data gets a larger pool, confirmed significant against the baseline, and
//! its setting is put back afterwards; a sandbox whose pool already holds its data has no pool
//! to try (issue 47: no larger pool than the data warrants); bad arguments are the user's
//! errors, before anything is measured.

mod common;
use common::*;
use serde_json::Value;
use std::sync::Mutex;

/// The two tuning tests measure one at a time: on a 2-core machine each would be the other's
/// noise.
static MEASURING: Mutex<()> = Mutex::new(());

/// Starts sandbox `name` with `pool` and loads about 50 MiB of oltp_read_only into it.
fn sandbox_with_pool(s: &Scratch, name: &str, pool: &str) {
    let set = format!("innodb_buffer_pool_size={pool}");
    let o = s.run(&["server", "start", name, "--set", &set]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&[
        "prepare",
        "oltp_read_only",
        "--sandbox",
        name,
        "--tables",
        "2",
        "--table-size",
        "100000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

fn tune(s: &Scratch, name: &str, budget: &str) -> (std::process::Output, Value, String) {
    let (json, cnf) = (s.path().join("t.json"), s.path().join("tuned.cnf"));
    let o = s.run(&[
        "tune",
        "oltp_write_only",
        "--sandbox",
        name,
        "--tables",
        "2",
        "--table-size",
        "100000",
        "--threads",
        "2",
        "--budget",
        budget,
        "--trial-time",
        "3",
        "--knobs",
        "innodb_buffer_pool_size",
        "--metrics-addr",
        "127.0.0.1:0",
        "--out",
        cnf.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (o, doc, std::fs::read_to_string(&cnf).unwrap())
}

fn pool_of(s: &Scratch, name: &str) -> String {
    let sock = s.lab().join(name);
    let o = s.run(&["server", "list", "--json"]);
    let list: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let socket = list
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == name)
        .map(|x| x["socket"].as_str().unwrap().to_string())
        .unwrap_or_else(|| sock.display().to_string());
    let o = std::process::Command::new("mariadb")
        .args([
            "--socket",
            &socket,
            "-uroot",
            "-NBe",
            "SELECT @@innodb_buffer_pool_size",
        ])
        .output()
        .unwrap();
    stdout(&o).trim().to_string()
}

#[test]
fn a_small_pool_is_tuned_with_a_confirmed_gain_and_put_back() {
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new();
    sandbox_with_pool(&s, "small", "8M");
    let (o, doc, cnf) = tune(&s, "small", "80s");
    assert_eq!(doc["significant"], true, "{doc}\n{}", stderr(&o));
    assert!(doc["interval"][0].as_f64().unwrap() > 1.0, "{doc}");
    assert!(cnf.contains("\ninnodb_buffer_pool_size = "), "{cnf}");
    assert!(cnf.contains("# was 8388608"), "{cnf}");
    let trials = doc["trials"].as_array().unwrap();
    assert!(trials.len() >= 8, "search and six confirmation runs: {doc}");
    assert!(trials.iter().filter(|t| t["run_id"].is_number()).count() == 6);
    assert!(stderr(&o).contains("trial 1 · rung 0"), "{}", stderr(&o));
    // Each trial says how much of the budget is spent and what it leaves.
    assert!(
        stderr(&o).contains("of the 1m20s budget, ETA "),
        "{}",
        stderr(&o)
    );
    assert_eq!(pool_of(&s, "small"), "8388608", "the setting is put back");
    // The proof study is a study like any other.
    let study = doc["study"].as_str().unwrap();
    let md = s.path().join("proof.md");
    let o = s.run(&[
        "report",
        study,
        "--format",
        "md",
        "-o",
        md.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = s.run(&["server", "stop", "small", "--rm"]);
}

#[test]
fn a_pool_that_holds_the_data_is_not_grown() {
    let s = Scratch::new();
    sandbox_with_pool(&s, "big", "512M");
    let o = s.run(&[
        "tune",
        "oltp_write_only",
        "--sandbox",
        "big",
        "--tables",
        "2",
        "--table-size",
        "100000",
        "--budget",
        "60s",
        "--trial-time",
        "3",
        "--knobs",
        "innodb_buffer_pool_size",
    ]);
    assert_user_error(
        &o,
        "innodb_buffer_pool_size: the pool (512 MiB) already holds the data",
    );
    assert_eq!(pool_of(&s, "big"), "536870912");
    let _ = s.run(&["server", "stop", "big", "--rm"]);
}

#[test]
fn bad_arguments_are_user_errors() {
    let s = Scratch::new();
    let sock = socket();
    let base = [
        "tune",
        "oltp_read_only",
        "--socket",
        sock.as_str(),
        "--trial-time",
        "3",
    ];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        s.run(&args)
    };
    assert_user_error(&with(&["--budget", "ten"]), "--budget ten");
    assert_user_error(&with(&["--budget", "20s"]), "too small");
    assert_user_error(
        &with(&["--budget", "5m", "--knobs", "query_cache_size"]),
        "unknown knob 'query_cache_size'",
    );
    assert_user_error(
        &with(&["--budget", "5m", "--out", "/nonexistent/dir/t.cnf"]),
        "--out",
    );
    assert_user_error(
        &with(&["--budget", "5m", "--knobs", "sync_binlog"]),
        "--durability relaxed",
    );
    assert_user_error(&with(&["--budget", "5m", "--repeats", "2"]), "--repeats");
    // --trial-time takes a duration as --budget does.
    let trial = |t: &str, budget: &str| {
        s.run(&[&base[..4], &["--trial-time", t, "--budget", budget]].concat())
    };
    assert_user_error(&trial("3s", "20s"), "of 3 s");
    assert_user_error(&trial("500ms", "5m"), "at least 1 second");
    assert_user_error(&trial("soon", "5m"), "soon");
}
