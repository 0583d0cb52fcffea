//! `qpslab run --profile DIR`: the embedded sandbox is recorded with perf during each phase,
//! the folded stacks and a flame graph are written per phase, the stored run says where they
//! are, and the flame graph renders in headless Chromium. A server of the user's on this machine
//! is found through its Unix socket; one whose process qpslab cannot know (over TCP) is refused
//! before anything runs.

mod common;
use common::*;

#[test]
fn run_profile_writes_stacks_and_a_flame_graph_that_chromium_draws() {
    let s = Scratch::new();
    let dir = s.path().join("profiles");
    let json = s.path().join("run.json");
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--table-size",
        "500",
        "--threads",
        "2",
        "--time",
        "2",
        "--profile",
        dir.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let id = v["id"].as_i64().unwrap();
    let folded = dir.join(format!("{id}-t2.folded"));
    let svg = dir.join(format!("{id}-t2.svg"));
    let out = stdout(&o);
    assert!(
        out.contains(&format!("flame graph: {}", svg.display())),
        "{out}"
    );
    // The stored phase names the files and the event.
    let profile = v["phases"][0]["telemetry"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["source"] == "profile")
        .expect("a profile reading")["values"]
        .clone();
    assert_eq!(profile["folded"], folded.to_str().unwrap());
    assert_eq!(profile["svg"], svg.to_str().unwrap());
    assert!(profile["samples"].as_u64().unwrap() > 0, "{profile}");
    let stacks = std::fs::read_to_string(&folded).unwrap();
    assert!(stacks.contains("do_command"), "{stacks}");

    let url = format!("file://{}", svg.display());
    let user_dir = tempfile::tempdir().unwrap();
    let dom = chromium(&["--dump-dom", &url], user_dir.path());
    assert!(dom.status.success(), "{}", stderr(&dom));
    for bad in ["Uncaught", "ERR_", "error on line"] {
        assert!(!stderr(&dom).contains(bad), "chromium: {}", stderr(&dom));
    }
    let page = stdout(&dom);
    assert!(page.contains("id=\"frames\"") && page.contains("do_command"));
    let shot = artifacts().join("flamegraph.png");
    let _ = std::fs::remove_file(&shot);
    let o = chromium(
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,900",
            &url,
        ],
        user_dir.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.len() > 10_000 && &png[1..4] == b"PNG",
        "{} bytes",
        png.len()
    );
}

#[test]
fn a_local_server_is_found_by_its_socket_and_one_over_tcp_is_refused() {
    let s = Scratch::new();
    let dir = s.path().join("profiles");
    // Over TCP the server's process is unknown: refused before anything is stored.
    let tcp = qpslab_sandbox::testing::shared_server().port().to_string();
    let url = format!("mysql://root@127.0.0.1:{tcp}/sbtest");
    let args = |target: &[&str]| {
        let mut a = vec![
            "run",
            "oltp_point_select",
            "--table-size",
            "500",
            "--time",
            "1",
        ];
        a.extend_from_slice(target);
        a.extend_from_slice(&["--profile", dir.to_str().unwrap()]);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let argv = args(&["--target", &url]);
    let o = s.run(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    assert_user_error(&o, "--profile");
    assert!(stderr(&o).contains("--socket"), "{}", stderr(&o));
    assert!(!dir.exists() && !s.db().exists());

    // Through its Unix socket the same server is found (SO_PEERCRED) and profiled.
    prepare_shared(
        &s,
        "oltp_point_select",
        "proftest",
        &["--table-size", "500"],
    );
    let sock = socket();
    let argv = args(&["--socket", &sock, "--database", "proftest"]);
    let o = s.run(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let stacks = std::fs::read_to_string(dir.join("1-t1.folded")).unwrap();
    assert!(stacks.contains("do_command"), "{stacks}");
}

#[test]
fn a_study_with_perf_profile_on_profiles_each_cell_into_the_lab() {
    let s = Scratch::new();
    let spec = s.path().join("p.toml");
    std::fs::write(
        &spec,
        "name = \"prof\"\n[defaults]\nworkload = \"oltp_point_select\"\ntable_size = 500\n\
         duration = \"1s\"\nwarmup = 0\nretries = 0\nthreads = 2\nperf_profile = true\n",
    )
    .unwrap();
    let o = s.run(&["lab", "run", spec.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let dir = s.lab().join("profiles/prof");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".perf.data"))
        .collect();
    files.sort();
    assert_eq!(files, ["1-t2.folded", "1-t2.svg"], "in {}", dir.display());
    assert!(stdout(&o).contains("flame graph:"), "{}", stdout(&o));
    // A bad value is refused with its line, as every key is.
    std::fs::write(
        &spec,
        "name = \"prof2\"\n[defaults]\nperf_profile = \"sometimes\"\n",
    )
    .unwrap();
    assert_user_error(&s.run(&["lab", "plan", spec.to_str().unwrap()]), "line 3");
}
