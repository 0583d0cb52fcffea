//! User errors of every subcommand: one clear line on stderr, exit 2, nothing written.

mod common;
use common::*;

#[test]
fn unknown_subcommand_and_option_exit_2() {
    let s = Scratch::new();
    assert_eq!(s.run(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        s.run(&["run", "oltp_point_select", "--no-such-option"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn run_rejects_bad_values_before_touching_anything() {
    let s = Scratch::new();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "oltp_foo"], "unknown workload 'oltp_foo'"),
        (&["run", "oltp_point_select", "--threads", "0"], "--threads"),
        (
            &["run", "oltp_point_select", "--table-size", "0"],
            "--table-size",
        ),
        (
            &["run", "oltp_point_select", "--percentiles", "150"],
            "--percentiles",
        ),
        (
            &["run", "oltp_point_select", "--rand-type", "bogus"],
            "rand-type",
        ),
        (
            &["run", "oltp_point_select", "--target", "postgres://x@y/z"],
            "mysql://",
        ),
        (
            &[
                "run",
                "oltp_point_select",
                "--target",
                "mysql://u:pw@h:0/db",
            ],
            "port",
        ),
        (&["run", "oltp_point_select", "--client-cpus", "999"], "CPU"),
        (
            &["run", "oltp_point_select", "--label", "build"],
            "--label: expects KEY=VALUE",
        ),
        (
            &["run", "oltp_point_select", "--series", "a b"],
            "--series: a series name",
        ),
        (
            &["run", "oltp_point_select", "--malloc", "mimalloc"],
            "unknown allocator; use jemalloc, tcmalloc, system, or the path of a shared library",
        ),
        (
            &["run", "oltp_point_select", "--server-cpus", "1-0"],
            "CPU list",
        ),
        // Limits checked before anything is built: 99999999 tables once took 4.6 GiB.
        (
            &["run", "oltp_point_select", "--tables", "99999999"],
            "--tables",
        ),
        (
            &["run", "oltp_read_only", "--point-selects", "4000000000"],
            "--point-selects",
        ),
        (&["run", "oltp_point_select", "--time", "1e30"], "--time"),
        (
            &["run", "oltp_point_select", "--warmup", "1e300"],
            "--warmup",
        ),
        (&["run", "oltp_point_select", "--rate", "1e-300"], "--rate"),
        (
            &["run", "oltp_point_select", "--event-loops", "999999"],
            "--event-loops",
        ),
        (
            &["run", "oltp_point_select", "--prepare-threads", "5000"],
            "--prepare-threads",
        ),
        (
            &["prepare", "oltp_point_select", "--threads", "5000"],
            "--threads",
        ),
        (
            &["prepare", "oltp_point_select", "--tables", "10001"],
            "--tables",
        ),
        // Mistyped paths fail before a server starts, not after the run.
        (
            &["run", "oltp_point_select", "--db", "/nonexistent/dir/q.db"],
            "/nonexistent/dir",
        ),
        (
            &[
                "run",
                "oltp_point_select",
                "--json",
                "/nonexistent/dir/r.json",
            ],
            "/nonexistent/dir",
        ),
        (
            &[
                "run",
                "oltp_point_select",
                "--target",
                "mysql://u@127.0.0.1:1/x",
                "--ssl-mode",
                "VERIFY_CA",
                "--ssl-ca",
                "/nonexistent/ca.pem",
            ],
            "--ssl-ca",
        ),
        (
            &[
                "run",
                "oltp_point_select",
                "--password-file",
                "/nonexistent/pw",
            ],
            "password file",
        ),
    ];
    for (args, needle) in cases {
        let o = s.run(args);
        assert_user_error(&o, needle);
        assert_eq!(stderr(&o).lines().count(), 1, "one line: {}", stderr(&o));
    }
    assert!(
        !s.db().exists(),
        "nothing may be written for rejected input"
    );
    assert!(!s.lab().exists() || std::fs::read_dir(s.lab()).unwrap().next().is_none());
}

#[test]
fn unreachable_server_is_a_user_error() {
    let s = Scratch::new();
    // Port 1 on loopback: nothing listens there.
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--target",
        "mysql://root@127.0.0.1:1/sbtest",
        "--time",
        "1",
    ]);
    assert_user_error(&o, "127.0.0.1:1");
    // A host name that does not resolve is a mistake too.
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--target",
        "mysql://root@no-such-host.invalid/sbtest",
        "--time",
        "1",
    ]);
    assert_user_error(&o, "no-such-host.invalid");
}

#[test]
fn wrong_password_is_a_user_error_and_never_printed() {
    let s = Scratch::new();
    let sock = socket();
    sql("CREATE USER IF NOT EXISTS 'pwtest'@'localhost' IDENTIFIED BY 'right-pass'");
    let url = format!("mysql://pwtest:Sup3rSecretWrong@localhost/sbtest?socket={sock}");
    let o = s.run(&["run", "oltp_point_select", "--target", &url, "--time", "1"]);
    assert_user_error(&o, "1045");
    let all = format!("{}{}", stdout(&o), stderr(&o));
    assert!(!all.contains("Sup3rSecretWrong"), "password leaked: {all}");
    assert!(
        !s.db().exists()
            || std::fs::read(s.db())
                .unwrap()
                .windows(16)
                .all(|w| w != b"Sup3rSecretWrong")
    );
}

#[test]
fn show_errors() {
    let s = Scratch::new();
    assert_user_error(&s.run(&["show"]), "no results store");
    std::fs::write(s.db(), b"this is not sqlite at all, just text").unwrap();
    let o = s.run(&["show"]);
    assert_ne!(o.status.code(), Some(0));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn server_subcommand_errors() {
    let s = Scratch::new();
    assert_user_error(&s.run(&["server", "start", "bad name!"]), "name");
    assert_user_error(&s.run(&["server", "stop", "nosuch"]), "nosuch");
    assert_user_error(&s.run(&["server", "logs", "nosuch"]), "nosuch");
    assert_user_error(&s.run(&["cleanup", "--sandbox", "nosuch"]), "nosuch");
    assert_user_error(
        &s.run(&["prepare", "oltp_point_select", "--sandbox", "nosuch"]),
        "nosuch",
    );
}

/// A reader that goes away (`| head -1`) is a normal end: no panic, no backtrace, exit 0.
#[test]
fn closed_stdout_is_a_normal_end() {
    let s = Scratch::new();
    let spec = s.path().join("plan.toml");
    std::fs::write(
        &spec,
        "name = \"pipe\"\n[defaults]\nduration = \"1s\"\n[sweep]\nthreads = [1, 2, 3, 4, 5, 6, 7, 8]\n",
    )
    .unwrap();
    for args in [
        vec!["lab", "plan", spec.to_str().unwrap()],
        vec!["server", "list"],
    ] {
        let mut child = s
            .cmd(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end before qpslab writes: its first line meets EPIPE.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn spec_limits_are_user_errors() {
    let s = Scratch::new();
    for (body, needle) in [
        ("[defaults]\ntables = 99999999\n", "--tables"),
        ("[defaults]\nduration = 1e30\n", "time"),
        ("[defaults]\ntime = 1e30\n", "time"),
        ("[defaults]\nrate = 1e-300\n", "rate"),
        ("[sweep]\nthreads = [1, 200000]\n", "threads"),
        (
            "[[variant]]\nname = \"x\"\ntarget = \"postgres://h/db\"\n",
            "mysql://",
        ),
        (
            "[[variant]]\nname = \"x\"\ntarget = \"mysql://u@h/db\"\npassword_file = \"/nonexistent/pw\"\n",
            "password file",
        ),
    ] {
        let spec = s.path().join("limits.toml");
        std::fs::write(&spec, format!("name = \"limits\"\n{body}")).unwrap();
        assert_user_error(&s.run(&["lab", "plan", spec.to_str().unwrap()]), needle);
    }
    let spec = s.path().join("ok.toml");
    std::fs::write(&spec, "name = \"ok\"\n").unwrap();
    assert_user_error(
        &s.run(&[
            "lab",
            "run",
            spec.to_str().unwrap(),
            "--db",
            "/nonexistent/d/q.db",
        ]),
        "/nonexistent/d",
    );
}
