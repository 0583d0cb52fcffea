//! `qpslab run --profile DIR`: the embedded sandbox is recorded with perf during each phase,
//! the folded stacks and a flame graph are written per phase, the stored run says where they
//! are, and the flame graph renders in headless Chromium. An external server, whose process
//! qpslab does not know, is refused before anything runs.

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
fn run_profile_of_an_external_server_is_refused_before_it_runs() {
    let s = Scratch::new();
    let dir = s.path().join("profiles");
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--socket",
        &socket(),
        "--profile",
        dir.to_str().unwrap(),
    ]);
    assert_user_error(&o, "--profile");
    assert!(stderr(&o).contains("--sandbox NAME"), "{}", stderr(&o));
    assert!(!dir.exists() && !s.db().exists());
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
