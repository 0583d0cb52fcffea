//! `qpslab advise` against real servers: a private sandbox whose dataset is larger than its
//! buffer pool (8 MiB here, so a small dataset loads in seconds; the stock 128 MiB pool in front
//! of more data is the same rule) is told to grow the pool, with the figures; no finding names
//! a variable the server lacks; durability is recommended only with `--durability relaxed`;
//! `--cnf` writes the recommended settings; bad arguments are the user's errors.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

/// Starts sandbox `name` with an 8 MiB buffer pool and loads about 26 MiB into it; returns
/// its socket.
fn small_pool_server(s: &Scratch, name: &str) -> String {
    let o = s.run(&[
        "server",
        "start",
        name,
        "--json",
        "--set",
        "innodb_buffer_pool_size=8M",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let o = s.run(&[
        "prepare",
        "oltp_read_only",
        "--sandbox",
        name,
        "--tables",
        "2",
        "--table-size",
        "50000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    info["socket"].as_str().unwrap().to_string()
}

fn variables(socket: &str) -> BTreeSet<String> {
    let o = Command::new("mariadb")
        .args([
            "--socket",
            socket,
            "-uroot",
            "-N",
            "-B",
            "-e",
            "SHOW GLOBAL VARIABLES",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o)
        .lines()
        .filter_map(|l| l.split('\t').next())
        .map(String::from)
        .collect()
}

fn advise_json(s: &Scratch, args: &[&str]) -> Value {
    let mut all = vec!["advise", "--format", "json"];
    all.extend_from_slice(args);
    let o = s.run(&all);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

fn finding<'a>(doc: &'a Value, variable: &str) -> Option<&'a Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["variable"] == variable)
}

#[test]
fn a_pool_smaller_than_the_data_is_named_with_its_figures() {
    let s = Scratch::new();
    let socket = small_pool_server(&s, "adv");
    let doc = advise_json(&s, &["--sandbox", "adv"]);
    assert_eq!(doc["local"], true);
    let bp = finding(&doc, "innodb_buffer_pool_size").expect("buffer pool finding");
    assert_eq!(bp["severity"], "high", "{bp}");
    assert_eq!(bp["current"], "8388608");
    let rec: u64 = bp["recommended"].as_str().unwrap().parse().unwrap();
    assert!(rec >= 32 << 20, "{rec}");
    let reason = bp["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("data ") && reason.contains("buffer pool 8 MiB"),
        "{reason}"
    );
    // MariaDB says the pool resizes at run time.
    assert_eq!(bp["restart_needed"], false);

    // Every server and durability finding names a variable of this server.
    let vars = variables(&socket);
    for f in doc["findings"].as_array().unwrap() {
        if f["kind"] != "os" {
            let v = f["variable"].as_str().unwrap();
            assert!(vars.contains(v), "{v} is not a variable of this server");
        }
    }

    // Durability: described, never recommended unless asked.
    let durable = |d: &Value| -> Vec<Value> {
        d["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "durability")
            .cloned()
            .collect()
    };
    assert!(!durable(&doc).is_empty());
    assert!(
        durable(&doc).iter().all(|f| f["recommended"].is_null()),
        "{doc}"
    );
    let relaxed = advise_json(&s, &["--sandbox", "adv", "--durability", "relaxed"]);
    let flush = finding(&relaxed, "innodb_flush_log_at_trx_commit").unwrap();
    assert_eq!(flush["recommended"], "2");

    // --cnf: the recommended server settings, each under its comment.
    let cnf = s.path().join("advised.cnf");
    let o = s.run(&["advise", "--sandbox", "adv", "--cnf", cnf.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("innodb_buffer_pool_size"),
        "{}",
        stdout(&o)
    );
    let text = std::fs::read_to_string(&cnf).unwrap();
    assert!(text.contains("[mysqld]\n# high"), "{text}");
    assert!(
        text.contains(&format!("\ninnodb_buffer_pool_size = {rec}\n")),
        "{text}"
    );
    assert!(!text.contains("innodb_flush_log_at_trx_commit ="), "{text}");
}

#[test]
fn the_shared_server_by_socket_in_every_format() {
    let s = Scratch::new();
    let sock = socket();
    let table = s.run(&["advise", "--socket", &sock]);
    assert!(table.status.success(), "{}", stderr(&table));
    let out = stdout(&table);
    assert!(out.contains("(mariadb) at root@localhost/"), "{out}");
    assert!(out.contains("recommendation(s)"), "{out}");
    let md = s.run(&["advise", "--socket", &sock, "--format", "md"]);
    assert!(
        stdout(&md).starts_with("# qpslab advise\n"),
        "{}",
        stdout(&md)
    );
    let doc = advise_json(&s, &["--socket", &sock]);
    let vars = variables(&sock);
    for f in doc["findings"].as_array().unwrap() {
        assert!(
            f["kind"] == "os" || vars.contains(f["variable"].as_str().unwrap()),
            "{f}"
        );
    }
}

#[test]
fn user_errors() {
    let s = Scratch::new();
    assert_user_error(&s.run(&["advise"]), "advise needs a server");
    assert_user_error(
        &s.run(&["advise", "--target", "mysql://root@127.0.0.1:1/"]),
        "cannot connect to 127.0.0.1:1",
    );
    assert_user_error(
        &s.run(&["advise", "--socket", &socket(), "--format", "xml"]),
        "invalid value 'xml'",
    );
    assert_user_error(
        &s.run(&[
            "advise",
            "--socket",
            &socket(),
            "--cnf",
            "/nonexistent/a.cnf",
        ]),
        "directory /nonexistent does not exist",
    );
    assert_user_error(&s.run(&["advise", "--sandbox", "nosuch"]), "nosuch");
    // A password in the URL is never printed, not even in the error.
    let o = s.run(&["advise", "--target", "mysql://root:hunter2@127.0.0.1:1/"]);
    assert_user_error(&o, "cannot connect");
    assert!(!stderr(&o).contains("hunter2") && !stdout(&o).contains("hunter2"));
}
