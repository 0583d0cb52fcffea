//! Helpers for the real-server tests: queries through the `mariadb` command-line client (this
//! crate has no client of its own). Over the socket root logs in by unix_socket (the tests run
//! as root) or with the sandbox's client option file; over TCP only with the password.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

fn run(args: &[String], sql: &str) -> Result<String, String> {
    let out = Command::new("mariadb")
        .args(args)
        .args(["--batch", "--skip-column-names", "-e", sql])
        .output()
        .map_err(|e| format!("running mariadb: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// One query over the Unix socket; panics with the client's error.
pub fn query_socket(socket: &Path, sql: &str) -> String {
    try_socket(socket, sql).unwrap()
}

/// One query over the Unix socket with no password (unix_socket authentication): as root when
/// the tests run as root, else as the lab owner's own account.
pub fn try_socket(socket: &Path, sql: &str) -> Result<String, String> {
    // SAFETY: geteuid cannot fail.
    let user = if unsafe { libc::geteuid() } == 0 {
        "root".to_string()
    } else {
        std::env::var("USER").unwrap_or_default()
    };
    run(
        &[
            "--no-defaults".into(),
            format!("--socket={}", socket.display()),
            format!("--user={user}"),
        ],
        sql,
    )
}

/// One query over TCP to 127.0.0.1 with the sandbox's client option file; panics with the
/// client's error.
pub fn query_tcp(client_file: &Path, port: u16, sql: &str) -> String {
    run(
        &[
            format!("--defaults-file={}", client_file.display()),
            "--protocol=tcp".into(),
            "--host=127.0.0.1".into(),
            format!("--port={port}"),
        ],
        sql,
    )
    .unwrap()
}

/// One query over TCP to 127.0.0.1 as root without a password.
pub fn try_tcp_without_password(port: u16, sql: &str) -> Result<String, String> {
    run(
        &[
            "--no-defaults".into(),
            "--protocol=tcp".into(),
            "--host=127.0.0.1".into(),
            format!("--port={port}"),
            "--user=root".into(),
        ],
        sql,
    )
}
