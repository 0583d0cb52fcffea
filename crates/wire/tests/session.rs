//! The blocking session and every supported auth plugin, against a real MariaDB.

use qpslab_core::{ConnectOptions, Endpoint, Secret};
use qpslab_wire::codec::ParamType;
use qpslab_wire::{Conn, Error, Value};

fn root_socket() -> Conn {
    Conn::connect(&qpslab_sandbox::testing::shared_server().connect_options()).unwrap()
}

fn tcp_as(user: &str, password: &str) -> ConnectOptions {
    let mut o = qpslab_sandbox::testing::shared_server().tcp_options();
    o.user = user.into();
    o.password = Secret::new(password);
    o
}

#[test]
fn negotiates_deprecate_eof_and_cache_metadata() {
    let c = root_socket();
    assert!(c.is_mariadb());
    assert!(
        c.server_version().contains("MariaDB"),
        "{}",
        c.server_version()
    );
    assert!(!c.server_version().starts_with("5.5.5-"));
    assert!(c.capabilities().deprecate_eof());
    assert!(c.capabilities().cache_metadata());
    assert!(c.capabilities().bulk_operations());
    let mut c = c;
    let id = c.query("SELECT CONNECTION_ID()").unwrap();
    assert_eq!(
        id.rows[0][0].as_deref(),
        Some(c.connection_id().to_string().as_str())
    );
    assert_eq!(id.first_value(), id.rows[0][0].as_deref());
    assert_eq!(c.query("SELECT NULL").unwrap().first_value(), None);
    assert_eq!(c.query("DO 1").unwrap().first_value(), None);
}

#[test]
fn text_queries_prepared_statements_and_ping() {
    let mut c = root_socket();
    c.execute("CREATE DATABASE IF NOT EXISTS wire_s").unwrap();
    c.execute("DROP TABLE IF EXISTS wire_s.t").unwrap();
    c.execute("CREATE TABLE wire_s.t (id INT AUTO_INCREMENT PRIMARY KEY, k INT UNSIGNED, c CHAR(10), d DATETIME, f DOUBLE)")
        .unwrap();
    let ins = c
        .query("INSERT INTO wire_s.t (k, c, d, f) VALUES (1, 'a', '2024-02-29 13:05:09', 1.5), (4294967295, NULL, NULL, -2)")
        .unwrap();
    assert_eq!(ins.affected_rows, 2);
    assert_eq!(ins.last_insert_id, 1);
    let r = c
        .query("SELECT id, k, c, d, f FROM wire_s.t ORDER BY id")
        .unwrap();
    assert_eq!(r.columns, ["id", "k", "c", "d", "f"]);
    assert_eq!(r.rows.len(), 2);
    assert_eq!(r.rows[1][2], None);
    assert_eq!(r.rows[1][1].as_deref(), Some("4294967295"));

    let s = c
        .prepare("SELECT id, k, c, d, f FROM wire_s.t WHERE id = ? OR c = ?")
        .unwrap();
    assert_eq!((s.params, s.columns), (2, 5));
    // Twice: the second reply comes with cached metadata.
    for _ in 0..2 {
        let b = c
            .exec(&s, &[Value::Int(2), Value::Bytes(b"a".to_vec())])
            .unwrap();
        assert_eq!(b.rows, r.rows, "binary rows render like text rows");
    }
    let none = c.exec(&s, &[Value::Null, Value::Null]).unwrap();
    assert!(none.rows.is_empty());
    assert!(c.exec(&s, &[Value::Int(1)]).is_err());
    let upd = c
        .prepare("UPDATE wire_s.t SET k = k + ? WHERE id = ?")
        .unwrap();
    assert_eq!(
        c.exec(&upd, &[Value::Int(1), Value::Int(1)])
            .unwrap()
            .affected_rows,
        1
    );
    c.close_statement(&upd).unwrap();
    c.close_statement(&s).unwrap();
    let e = c.query("SELECT nosuch").unwrap_err();
    assert_eq!(e.server_code(), Some(1054));
    assert!(!e.is_connection_lost());
    c.ping().unwrap();
    // A multi-result procedure: every result is read, the session stays in step.
    c.execute("CREATE OR REPLACE PROCEDURE wire_s.p() BEGIN SELECT 1; SELECT 2, 3; END")
        .unwrap();
    let m = c.query("CALL wire_s.p()").unwrap();
    assert_eq!(m.rows, [[Some("1".to_string())]]);
    assert_eq!(
        c.query("SELECT 4").unwrap().rows[0][0].as_deref(),
        Some("4")
    );
}

#[test]
fn bulk_execute_runs_an_insert_over_parameter_rows() {
    let mut c = root_socket();
    c.execute("CREATE DATABASE IF NOT EXISTS wire_b").unwrap();
    c.execute("DROP TABLE IF EXISTS wire_b.t").unwrap();
    c.execute("CREATE TABLE wire_b.t (id BIGINT PRIMARY KEY, c CHAR(20))")
        .unwrap();
    let s = c
        .prepare("INSERT INTO wire_b.t (id, c) VALUES (?, ?)")
        .unwrap();
    // Bulk execute reads only the declared types; each row's string carries its own length.
    let types = [ParamType::Int, ParamType::FixedBytes(0)];
    let mut rows = Vec::new();
    for (id, text) in [(1i64, &b"one"[..]), (2, b""), (3, b"three")] {
        rows.push(0);
        rows.extend_from_slice(&id.to_le_bytes());
        rows.push(0);
        rows.push(text.len() as u8);
        rows.extend_from_slice(text);
    }
    // A NULL (indicator 1) carries no value.
    rows.push(0);
    rows.extend_from_slice(&4i64.to_le_bytes());
    rows.push(1);
    assert_eq!(c.bulk_execute(&s, &types, &rows).unwrap(), 4);
    let r = c
        .query("SELECT GROUP_CONCAT(id, '=', IFNULL(c, 'null') ORDER BY id) FROM wire_b.t")
        .unwrap();
    assert_eq!(r.rows[0][0].as_deref(), Some("1=one,2=,3=three,4=null"));
    // A duplicate key fails the command with the server's error; the session stays usable.
    match c.bulk_execute(&s, &types, &rows) {
        Err(Error::Server { code: 1062, .. }) => {}
        other => panic!("expected a duplicate-key error, got {other:?}"),
    }
    assert_eq!(
        c.query("SELECT COUNT(*) FROM wire_b.t").unwrap().rows[0][0].as_deref(),
        Some("4")
    );
    c.execute("DROP DATABASE wire_b").unwrap();
}

#[test]
fn load_data_local_streams_the_reader() {
    let mut c = root_socket();
    c.execute("SET GLOBAL local_infile = 1").unwrap();
    c.execute("CREATE DATABASE IF NOT EXISTS wire_l").unwrap();
    c.execute("CREATE OR REPLACE TABLE wire_l.t (id INT, v VARCHAR(20))")
        .unwrap();
    let data: String = (1..=5000).map(|i| format!("{i}\tv{i}\n")).collect();
    let n = c
        .load_data_local(
            "LOAD DATA LOCAL INFILE 'ignored.tsv' INTO TABLE wire_l.t",
            &mut data.as_bytes(),
        )
        .unwrap();
    assert_eq!(n, 5000);
    let r = c.query("SELECT COUNT(*), MAX(v) FROM wire_l.t").unwrap();
    assert_eq!(r.rows[0], [Some("5000".into()), Some("v999".into())]);
}

#[test]
fn native_password_over_tcp_and_wrong_password() {
    let mut c = root_socket();
    c.execute("CREATE OR REPLACE USER wire_native@'127.0.0.1' IDENTIFIED BY 's3cret-native'")
        .unwrap();
    let mut u = Conn::connect(&tcp_as("wire_native", "s3cret-native")).unwrap();
    let who = u.query("SELECT CURRENT_USER()").unwrap();
    assert_eq!(who.rows[0][0].as_deref(), Some("wire_native@127.0.0.1"));

    let e = Conn::connect(&tcp_as("wire_native", "not-the-password")).unwrap_err();
    assert_eq!(e.server_code(), Some(1045), "{e}");
    let shown = format!("{e} {e:?}");
    assert!(
        shown.contains("Access denied for user 'wire_native'"),
        "{shown}"
    );
    assert!(!shown.contains("not-the-password"), "{shown}");
}

#[test]
fn ed25519_password() {
    let mut c = root_socket();
    let installed = c
        .query("SELECT COUNT(*) FROM information_schema.plugins WHERE plugin_name = 'ed25519'")
        .unwrap();
    if installed.rows[0][0].as_deref() == Some("0") {
        c.execute("INSTALL SONAME 'auth_ed25519'").unwrap();
    }
    c.execute("CREATE OR REPLACE USER wire_ed@'127.0.0.1' IDENTIFIED VIA ed25519 USING PASSWORD('ed-pass')")
        .unwrap();
    let mut u = Conn::connect(&tcp_as("wire_ed", "ed-pass")).unwrap();
    let who = u.query("SELECT CURRENT_USER()").unwrap();
    assert_eq!(who.rows[0][0].as_deref(), Some("wire_ed@127.0.0.1"));
    let e = Conn::connect(&tcp_as("wire_ed", "wrong")).unwrap_err();
    assert_eq!(e.server_code(), Some(1045), "{e}");
}

/// unix_socket lets in the OS user of the same name, so the check runs in a child process as
/// another OS user (the test itself runs as root in CI and here). Sandboxes are closed to other
/// local users, so that user is the one the server runs as: the owner of its socket's directory.
#[test]
fn unix_socket_auth() {
    if std::env::var_os("WIRE_UNIX_SOCKET_CHILD").is_some() {
        return;
    }
    use std::os::unix::process::CommandExt;
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        eprintln!("skipped: needs root to run the client as another OS user");
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let server = qpslab_sandbox::testing::shared_server();
    let dir = std::fs::metadata(server.socket().parent().unwrap()).unwrap();
    // SAFETY: getpwuid returns null or an entry valid until the next call on this thread.
    let name = unsafe {
        let pw = libc::getpwuid(dir.uid());
        assert!(!pw.is_null(), "no account for uid {}", dir.uid());
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_string_lossy()
            .into_owned()
    };
    let mut c = root_socket();
    c.execute(&format!(
        "CREATE OR REPLACE USER '{name}'@localhost IDENTIFIED VIA unix_socket"
    ))
    .unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "unix_socket_child", "--nocapture"])
        .env("WIRE_UNIX_SOCKET_CHILD", server.socket())
        .env("WIRE_UNIX_SOCKET_USER", &name)
        .uid(dir.uid())
        .gid(dir.gid())
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(&format!("CURRENT_USER={name}@localhost")),
        "{text}"
    );
}

/// The child half of [`unix_socket_auth`]; does nothing unless started by it.
#[test]
fn unix_socket_child() {
    let Some(sock) = std::env::var_os("WIRE_UNIX_SOCKET_CHILD") else {
        return;
    };
    let o = ConnectOptions {
        endpoint: Endpoint::Unix { path: sock.into() },
        user: std::env::var("WIRE_UNIX_SOCKET_USER").unwrap_or_default(),
        password: Secret::default(),
        database: None,
        ssl_mode: qpslab_core::SslMode::Disabled,
        ssl_ca: None,
        timeouts: Default::default(),
        max_allowed_packet: ConnectOptions::DEFAULT_MAX_ALLOWED_PACKET,
    };
    let mut c = Conn::connect(&o).unwrap();
    let who = c.query("SELECT CURRENT_USER()").unwrap();
    println!("CURRENT_USER={}", who.rows[0][0].as_deref().unwrap_or(""));
}

#[test]
fn refused_connection_names_the_endpoint() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let mut o = tcp_as("root", "");
    o.endpoint = Endpoint::Tcp {
        host: "127.0.0.1".into(),
        port,
    };
    match Conn::connect(&o) {
        Err(e @ Error::Io(_)) => {
            assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}");
            assert!(e.is_connection_lost());
        }
        other => panic!("expected Io error, got {other:?}"),
    }
}
