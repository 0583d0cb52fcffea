//! Helpers for the real-server tests: queries through the `mariadb` command-line client (this
//! crate has no client of its own).
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

fn run(args: &[String], sql: &str) -> Result<String, String> {
    let out = Command::new("mariadb")
        .args(args)
        .args(["--user=root", "--batch", "--skip-column-names", "-e", sql])
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
    run(&[format!("--socket={}", socket.display())], sql).unwrap()
}

/// One query over TCP to 127.0.0.1; panics with the client's error.
pub fn query_tcp(port: u16, sql: &str) -> String {
    try_tcp(port, sql).unwrap()
}

/// One query over TCP to 127.0.0.1.
pub fn try_tcp(port: u16, sql: &str) -> Result<String, String> {
    run(
        &[
            "--protocol=tcp".into(),
            "--host=127.0.0.1".into(),
            format!("--port={port}"),
        ],
        sql,
    )
}
