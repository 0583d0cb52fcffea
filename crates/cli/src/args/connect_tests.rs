use crate::args::*;

/// The run command's target and options as parsed from `args` (after `qpslab run`).
fn run(args: &[&str]) -> Result<RunArgs, clap::Error> {
    let argv = ["qpslab", "run"].iter().chain(args).map(|a| a.into());
    match Cli::try_parse_from(attached_password(argv))?.command {
        Command::Run(r) => Ok(*r),
        other => panic!("not run: {other:?}"),
    }
}

fn password(args: &[&str]) -> Option<Option<String>> {
    let t = run(args).unwrap().target;
    t.password.map(|p| p.map(|s| s.expose().to_string()))
}

#[test]
fn takes_the_mysql_clients_password_forms() {
    let w = "oltp_point_select";
    assert_eq!(password(&[w, "-pse cret"]), Some(Some("se cret".into())));
    assert_eq!(password(&[w, "--password=x"]), Some(Some("x".into())));
    assert_eq!(password(&[w, "--password="]), Some(Some(String::new())));
    // Alone it prompts, and the next word stays what it is (mysql -p DB).
    assert_eq!(password(&["-p", w]), Some(None));
    assert_eq!(password(&["--password", w]), Some(None));
    assert_eq!(run(&["-p", w]).unwrap().options.0 .0[0].1, w);
    assert_eq!(password(&[w]), None);
    // After `--`, nothing is rewritten.
    let argv = ["qpslab", "--", "-pxyz"].map(std::ffi::OsString::from);
    assert_eq!(attached_password(argv.clone()), argv);
}

#[test]
fn takes_the_mysql_clients_short_options() {
    let r = run(&[
        "oltp_point_select",
        "--host",
        "db1",
        "-P",
        "3307",
        "-u",
        "bench",
        "-D",
        "shop",
        "--defaults-extra-file",
        "/x.cnf",
    ])
    .unwrap();
    let t = r.target;
    assert_eq!(t.host.as_deref(), Some("db1"));
    assert_eq!(t.port, Some(3307));
    assert_eq!(t.user.as_deref(), Some("bench"));
    assert_eq!(t.database.as_deref(), Some("shop"));
    let t = run(&["oltp_point_select", "-S", "/s.sock"]).unwrap().target;
    assert_eq!(t.socket.as_deref(), Some(std::path::Path::new("/s.sock")));
    // -h is the host, as the mysql client's; help is --help or -?.
    let t = run(&["oltp_point_select", "-h", "db2"]).unwrap().target;
    assert_eq!(t.host.as_deref(), Some("db2"));
    let t = run(&["oltp_point_select", "-hdb3"]).unwrap().target;
    assert_eq!(t.host.as_deref(), Some("db3"));
    for help in ["-?", "--help"] {
        let e = run(&[help]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp, "{help}");
    }
    for clash in [
        &["oltp_point_select", "--sandbox", "a", "--port", "1"][..],
        &["oltp_point_select", "--sandbox", "a", "-px"],
        &["oltp_point_select", "--no-defaults", "--defaults-file", "f"],
        &[
            "oltp_point_select",
            "--defaults-extra-file",
            "e",
            "--defaults-file",
            "f",
        ],
    ] {
        let e = run(clash).unwrap_err();
        assert_eq!(
            e.kind(),
            clap::error::ErrorKind::ArgumentConflict,
            "{clash:?}"
        );
    }
}

#[test]
fn takes_sysbenchs_underscore_spellings() {
    let r = run(&[
        "oltp_read_only",
        "--table_size",
        "10",
        "--rand_type=uniform",
    ])
    .unwrap();
    let given: Vec<(&str, &str)> = r
        .options
        .0
         .0
        .iter()
        .map(|(n, v)| (*n, v.as_str()))
        .collect();
    assert!(given.contains(&("table_size", "10")), "{given:?}");
    assert!(given.contains(&("rand_type", "uniform")), "{given:?}");
    let r = run(&[
        "oltp_read_only",
        "--report_interval",
        "2",
        "--warmup_max",
        "5",
    ])
    .unwrap();
    assert!(r.options.0 .0.contains(&("report_interval", "2".into())));
    // Every run option whose name has an underscore takes that spelling.
    let cmd = <Cli as clap::CommandFactory>::command();
    let run_cmd = cmd.find_subcommand("run").unwrap();
    for a in run_cmd.get_arguments() {
        let id = a.get_id().as_str();
        if a.get_long().is_some_and(|l| l.contains('-'))
            && qpslab_lab::options::OPTIONS.iter().any(|d| d.name == id)
        {
            let aliases = a.get_all_aliases().unwrap_or_default();
            assert!(aliases.contains(&id), "--{id} has no alias");
        }
    }
}

#[test]
fn takes_sysbenchs_connection_options() {
    let t = run(&[
        "oltp_point_select",
        "--mysql-host=db1",
        "--mysql_port",
        "3307",
        "--mysql-user",
        "sb",
        "--mysql-password=pw",
        "--mysql-db",
        "shop",
    ])
    .unwrap()
    .target;
    assert_eq!(
        (t.host.as_deref(), t.port, t.user.as_deref()),
        (Some("db1"), Some(3307), Some("sb"))
    );
    assert_eq!(t.database.as_deref(), Some("shop"));
    assert_eq!(
        t.password.flatten().map(|p| p.expose().to_string()),
        Some("pw".into())
    );
    let t = run(&["oltp_point_select", "--mysql-socket", "/s"])
        .unwrap()
        .target;
    assert!(t.socket.is_some());
}

#[test]
fn the_definitions_hold_together() {
    <Cli as clap::CommandFactory>::command().debug_assert();
}

/// Every command that takes a server reads `-h` as its host; every command's help is `-?`.
#[test]
fn h_is_the_host_of_every_command_with_a_server() {
    use clap::CommandFactory;
    fn walk(path: &str, c: &clap::Command, with_host: &mut Vec<String>) {
        if let Some(host) = c.get_arguments().find(|a| a.get_id() == "host") {
            assert_eq!(host.get_short(), Some('h'), "{path}");
            with_host.push(path.to_string());
        }
        assert!(
            c.get_arguments()
                .any(|a| a.get_id() == "help" && a.get_short() == Some('?')),
            "{path} has no -?"
        );
        // clap's own `help` subcommand takes command names only.
        for s in c.get_subcommands().filter(|s| s.get_name() != "help") {
            walk(&format!("{path} {}", s.get_name()), s, with_host);
        }
    }
    let mut cli = Cli::command();
    cli.build();
    let mut with_host = Vec::new();
    walk("qpslab", &cli, &mut with_host);
    for cmd in [
        "run", "prepare", "cleanup", "replay", "capture", "tune", "advise",
    ] {
        assert!(
            with_host.contains(&format!("qpslab {cmd}")),
            "{with_host:?}"
        );
    }
}
