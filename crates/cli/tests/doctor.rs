//! `qpslab doctor` on this machine and on one made poorer by a PATH without fio and perf.

mod common;
use common::*;

/// The table line of `part`.
fn line<'a>(table: &'a str, part: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(part.split(' ').next().unwrap()))
        .unwrap_or_else(|| panic!("no {part} line in:\n{table}"))
}

#[test]
fn without_fio_and_perf_on_path_doctor_names_both_with_their_fix() {
    let s = Scratch::new();
    let out = s
        .cmd(&["doctor"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let table = stdout(&out);
    let fio = line(&table, "fio");
    assert!(
        fio.starts_with("missing") && fio.contains("apt-get install fio"),
        "{fio}"
    );
    let perf = line(&table, "perf");
    assert!(
        perf.starts_with("missing") && perf.contains("apt-get install linux-perf"),
        "{perf}"
    );
    // The server is found in /usr/sbin whatever PATH says; only its absence fails doctor.
    let server = line(&table, "server");
    let expected = if server.starts_with("ok") { 0 } else { 1 };
    assert_eq!(out.status.code(), Some(expected), "{out:?}");
    // One line per part, each saying what it is for.
    assert_eq!(table.lines().count(), 13, "{table}");
    assert!(table.lines().all(|l| l.ends_with(')')), "{table}");
}

#[test]
fn json_lists_every_part_and_whether_the_machine_is_ready() {
    let out = Scratch::new().run(&["doctor", "--format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let parts = doc["parts"].as_array().unwrap();
    let names: Vec<&str> = parts.iter().map(|p| p["part"].as_str().unwrap()).collect();
    for want in [
        "server",
        "fio",
        "perf",
        "jemalloc",
        "io_uring",
        "loop devices",
        "prometheus",
    ] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    let server_found = parts[0]["found"].as_bool().unwrap();
    assert_eq!(doc["ready"].as_bool(), Some(server_found));
    assert_eq!(out.status.code(), Some(if server_found { 0 } else { 1 }));
    // The test machine has fio (make deps-test): found, with its version.
    let fio = parts.iter().find(|p| p["part"] == "fio").unwrap();
    assert!(fio["detail"].as_str().unwrap().starts_with("fio-"), "{fio}");
}

#[test]
fn a_missing_server_fails_doctor_with_the_fix() {
    let out = Scratch::new().run(&["doctor", "--basedir", "/nonexistent/server"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let server = line(&stdout(&out), "server").to_string();
    assert!(
        server.starts_with("MISSING") && server.contains("--basedir"),
        "{server}"
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("server missing"), "{err}");
}

#[test]
fn an_unknown_format_is_a_user_error() {
    let out = Scratch::new().run(&["doctor", "--format", "xml"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
}
