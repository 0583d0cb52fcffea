//! Server probes against a real MariaDB (the sandbox crate's shared test server).

use qpslab_probe::{global_status, process_cpu, server_info, StatusDelta};
use qpslab_sandbox::testing::shared_server;
use qpslab_wire::Conn;

fn conn() -> Conn {
    Conn::connect(&shared_server().connect_options()).expect("connect to the test server")
}

#[test]
fn server_info_describes_the_server_without_secrets() {
    let mut c = conn();
    // Give the server a variable that holds a secret; the probe must drop it.
    c.query("SET GLOBAL init_connect = 'SET @probe_marker = \"Zq9SecretValue\"'")
        .unwrap();
    let raw = c
        .query("SHOW GLOBAL VARIABLES LIKE 'init_connect'")
        .unwrap();
    assert!(format!("{:?}", raw.rows).contains("Zq9SecretValue"));
    let info = server_info(&mut c);
    c.query("SET GLOBAL init_connect = ''").unwrap();
    let info = info.unwrap();

    assert_eq!(info.flavor, "mariadb");
    assert_eq!(info.version, c.server_version());
    assert!(info.version.contains("MariaDB"), "{}", info.version);
    assert_eq!(info.variables["version"], info.version);
    assert_eq!(info.variables["version_comment"], info.version_comment);
    assert_eq!(
        info.variables["socket"],
        shared_server().socket().display().to_string()
    );
    assert!(
        info.variables["innodb_buffer_pool_size"]
            .parse::<u64>()
            .unwrap()
            > 0
    );
    assert!(info.variables.len() > 500, "{}", info.variables.len());
    assert!(!info.variables.contains_key("init_connect"));
    assert!(info.variables.keys().all(|k| !k.contains("password")));
    let json = serde_json::to_string(&info).unwrap();
    assert!(!json.contains("Zq9SecretValue"));
}

#[test]
fn status_delta_counts_the_queries_run_between_snapshots() {
    let mut probe = conn();
    let mut load = conn();
    let before = global_status(&mut probe).unwrap();
    for i in 0..25 {
        load.query(&format!("SELECT {i}")).unwrap();
    }
    let after = global_status(&mut probe).unwrap();
    let d = StatusDelta::between(&before, &after, 0.5);
    // Other tests of this process share the server, so at least, not exactly.
    assert!(
        d.counter("Com_select") >= 25,
        "{:?}",
        d.counters.get("Com_select")
    );
    assert!(d.counter("Questions") >= 26, "{}", d.counter("Questions"));
    assert!(d.per_second("Com_select").unwrap() >= 50.0);
    assert!(d.gauges["Threads_connected"] >= 2, "{:?}", d.gauges);
    assert!(d.gauges.contains_key("Threads_running"));
    // A level, not a difference: a fresh server's uptime may still read 0.
    assert!(d.gauges.contains_key("Uptime") && !d.counters.contains_key("Uptime"));
}

#[test]
fn server_process_cpu_grows_under_load() {
    let server = shared_server();
    let mut c = conn();
    let before = process_cpu(server.pid()).unwrap();
    assert!(before.rss_kib > 10 * 1024, "{before:?}");
    c.query("SELECT BENCHMARK(3000000, MD5('qpslab'))").unwrap();
    let after = process_cpu(server.pid()).unwrap();
    let spent = after.user_s + after.sys_s - before.user_s - before.sys_s;
    assert!(
        spent > 0.1,
        "server spent only {spent} s of CPU: {before:?} -> {after:?}"
    );
}
