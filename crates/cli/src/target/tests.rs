//! Unit tests of target resolution: shown commands without passwords, option files, overrides.

use super::*;

#[test]
fn a_shown_command_holds_no_password() {
    let args = [
        "qpslab",
        "run",
        "-pse cret",
        "--password=s2",
        "-p=s3",
        "-p",
        "--mysql_password=s5",
        "--target",
        "mysql://u:s4@h/db",
    ];
    assert_eq!(
        shown_command(args.map(Into::into)),
        "qpslab run --password --password -p -p --mysql_password --target mysql://u@h/db"
    );
}

/// Where the flags, with `cnf` as the only option file, connect.
fn endpoint(cnf: &str, t: TargetArgs) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my.cnf");
    std::fs::write(&path, cnf).unwrap();
    let t = TargetArgs {
        defaults_file: Some(path),
        ..t
    };
    let o = explicit_options(&t).unwrap();
    format!("{}@{}", o.user, o.endpoint)
}

#[test]
fn max_allowed_packet_comes_from_the_option_file_then_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my.cnf");
    std::fs::write(&path, "[client]\nmax_allowed_packet=64M\n").unwrap();
    let t = TargetArgs {
        defaults_file: Some(path),
        target: Some("mysql://u@h/db".into()),
        ..Default::default()
    };
    let mut o = explicit_options(&t).unwrap();
    assert_eq!(o.max_allowed_packet, 64 << 20);
    let t = TargetArgs {
        max_allowed_packet: Some("1G".into()),
        ..t
    };
    overrides(&t).apply(&mut o).unwrap();
    assert_eq!(o.max_allowed_packet, 1 << 30);
    let t = TargetArgs {
        max_allowed_packet: Some("2G".into()),
        ..t
    };
    let e = overrides(&t).apply(&mut o).unwrap_err().to_string();
    assert!(e.contains("from 4K to 1G"), "{e}");
    let d = TargetArgs::default();
    assert_eq!(
        explicit_options(&TargetArgs {
            no_defaults: true,
            ..d
        })
        .unwrap()
        .max_allowed_packet,
        ConnectOptions::DEFAULT_MAX_ALLOWED_PACKET
    );
}

#[test]
fn flags_layer_over_the_dsn_and_the_option_file() {
    let cnf = "[client]\nsocket=/s.sock\nport=3307\nuser=f\n";
    let host = |h: &str| Some(h.to_string());
    let at = |t| endpoint(cnf, t);
    assert_eq!(at(TargetArgs::default()), "f@/s.sock");
    // localhost alone keeps the file's socket; a port, or another host, means TCP.
    let t = TargetArgs {
        host: host("localhost"),
        ..Default::default()
    };
    assert_eq!(at(t), "f@/s.sock");
    let t = TargetArgs {
        port: Some(4000),
        ..Default::default()
    };
    assert_eq!(at(t), "f@localhost:4000");
    let t = TargetArgs {
        host: host("10.0.0.9"),
        ..Default::default()
    };
    assert_eq!(at(t), "f@10.0.0.9:3307");
    // The DSN over the file, the flags over the DSN.
    let dsn = Some("mysql://d@db1:5000/x".to_string());
    let t = TargetArgs {
        target: dsn.clone(),
        ..Default::default()
    };
    assert_eq!(at(t), "d@db1:5000");
    let t = TargetArgs {
        target: dsn,
        port: Some(6000),
        ..Default::default()
    };
    assert_eq!(at(t), "d@db1:6000");
}
