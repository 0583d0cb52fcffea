//! The `testing` fixture against the real installed MariaDB: one server per test process,
//! reachable over its socket (unix_socket as OS root) and over TCP as root with its password.

mod common;

use qpslab_sandbox::testing::shared_server;

#[test]
fn shared_server_answers_on_socket_and_tcp() {
    let s = shared_server();
    assert_eq!(common::query_socket(s.socket(), "SELECT 1+1"), "2");
    // Over TCP the session's host carries the client port; over the socket it does not.
    let host = "SELECT HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()";
    let client = s.info().client_file();
    assert!(common::query_tcp(&client, s.port(), host).starts_with("localhost:"));
    assert!(common::try_tcp_without_password(s.port(), "SELECT 1").is_err());
    assert_eq!(common::query_socket(s.socket(), host), "localhost");
    // The TCP account also exists by address, for servers started with skip-name-resolve.
    let by_ip = "SELECT COUNT(*) FROM mysql.user WHERE User = 'root' AND Host = '127.0.0.1'";
    assert_eq!(common::query_socket(s.socket(), by_ip), "1");
    assert!(s.version().contains("MariaDB") || !s.version().is_empty());
    let v = common::query_socket(s.socket(), "SELECT VERSION()");
    assert_eq!(v, s.version());
}

#[test]
fn shared_server_is_the_same_instance() {
    let a = shared_server();
    let b = shared_server();
    assert_eq!(a.pid(), b.pid());
    let live = qpslab_sandbox::list(&qpslab_sandbox::SandboxHome::new(
        // <lab>/sandboxes/<name>
        a.info().dir().parent().unwrap().parent().unwrap(),
    ))
    .unwrap();
    assert_eq!(live.len(), 1);
    assert!(live[0].alive);
}
