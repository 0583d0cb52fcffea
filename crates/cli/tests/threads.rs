//! `qpslab server threads` and `--pin` against real sandboxes: a sandbox started with a policy
//! has its page cleaner on CPU 1 (read back from /proc), its threads are listed by class with
//! their ids and CPU, a run against it keeps connection threads placed; and the user's mistakes.

mod common;
use common::*;

/// The `Cpus_allowed_list` of one thread of `pid`.
fn allowed(pid: u64, tid: u64) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")).unwrap();
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    line.trim().to_string()
}

#[test]
fn a_sandbox_started_with_a_policy_has_its_page_cleaner_pinned() {
    let s = Scratch::new();
    let o = s.run(&[
        "server",
        "start",
        "pinned",
        "--pin",
        "thread/innodb/page_cleaner_thread=1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("thread(s) placed, verified in /proc"),
        "{}",
        stderr(&o)
    );
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let pid = info["pid"].as_u64().unwrap();
    assert_eq!(info["pin"][0]["class"], "thread/innodb/page_cleaner_thread");

    let o = s.run(&["server", "threads", "pinned", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["performance_schema"], true);
    let classes = doc["classes"].as_array().unwrap();
    let cleaner = classes
        .iter()
        .find(|c| c["class"] == "thread/innodb/page_cleaner_thread")
        .expect("a page cleaner class");
    let tids = cleaner["tids"].as_array().unwrap();
    assert!(!tids.is_empty());
    for tid in tids {
        assert_eq!(allowed(pid, tid.as_u64().unwrap()), "1");
    }
    assert!(classes.iter().all(|c| c["cpu"].as_f64().unwrap() >= 0.0));

    let o = s.run(&["server", "threads", "pinned", "--interval", "0.3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("cpu% (0.3 s)") && text.contains("thread/sql/main"),
        "{text}"
    );

    // A run against it keeps the sandbox's policy and places its connection threads too.
    let o = s.run(&[
        "prepare",
        "oltp_point_select",
        "--sandbox",
        "pinned",
        "--table-size",
        "200",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = s.path().join("run.json");
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--sandbox",
        "pinned",
        "--table-size",
        "200",
        "--time",
        "2",
        "--threads",
        "2",
        "--pin",
        "thread/sql/one_connection=0",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let placement = &doc["meta"]["plan"]["placement"];
    assert_eq!(placement["policy"][1]["class"], "thread/sql/one_connection");
    let placed = placement["applied"]["placed"].as_array().unwrap();
    assert!(placed
        .iter()
        .any(|p| p["class"] == "thread/innodb/page_cleaner_thread" && p["took"] == true));
    assert!(
        stderr(&o).contains("placed during the run, 0 did not take"),
        "{}",
        stderr(&o)
    );
    // The run's own rule is undone and the sandbox's re-applied: the cleaner stays on CPU 1.
    for tid in tids {
        assert_eq!(allowed(pid, tid.as_u64().unwrap()), "1");
    }

    // A live `pin` action places a class mid-run and gives it back at the end of the phase.
    let o = s.run(&[
        "run",
        "oltp_point_select",
        "--sandbox",
        "pinned",
        "--table-size",
        "200",
        "--time",
        "3",
        "--at",
        "1s:pin thread/sql/signal_handler=0",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let action = &doc["phases"][0]["actions"][0];
    assert_eq!(action["action"], "pin thread/sql/signal_handler=0");
    assert_eq!(action["outcome"], "ok (1 thread(s) placed)", "{action}");
    assert_eq!(
        action["restored"], "thread/sql/signal_handler back on the server's CPUs",
        "{action}"
    );

    let o = s.run(&["server", "stop", "pinned", "--rm"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn threads_without_performance_schema_are_listed_without_classes() {
    let s = Scratch::new();
    let o = s.run(&["server", "threads", "--socket", &socket()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("performance_schema is OFF"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("(unnamed)"), "{}", stdout(&o));
}

#[test]
fn mistakes_are_one_line_and_exit_2() {
    let s = Scratch::new();
    assert_user_error(&s.run(&["server", "threads", "nosuch"]), "nosuch");
    assert_user_error(&s.run(&["server", "threads"]), "name a sandbox");
    assert_user_error(
        &s.run(&[
            "server",
            "threads",
            "--target",
            "mysql://root@192.0.2.1:3306/",
        ]),
        "is not this machine",
    );
    assert_user_error(
        &s.run(&["server", "start", "bad", "--pin", "page_cleaner"]),
        "expected CLASS=CPUS",
    );
    assert_user_error(
        &s.run(&[
            "server",
            "start",
            "bad",
            "--pin",
            "thread/innodb/x=0,nice=40",
        ]),
        "nice must be",
    );
    // Under the thread pool a connection has no thread of its own: refused, and the sandbox
    // started for it is stopped again.
    let o = s.run(&[
        "server",
        "start",
        "pool",
        "--set",
        "thread_handling=pool-of-threads",
        "--pin",
        "thread/sql/one_connection=0",
    ]);
    assert_user_error(&o, "pool-of-threads");
    let o = s.run(&["server", "list", "--json"]);
    let list: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        list.as_array().unwrap().iter().all(|i| i["alive"] == false),
        "{list}"
    );
    // The shared test server runs without performance_schema: a run cannot place its threads.
    assert_user_error(
        &s.run(&[
            "run",
            "oltp_point_select",
            "--socket",
            &socket(),
            "--pin",
            "thread/innodb/*=0",
        ]),
        "--pin places a sandbox's threads",
    );
}

#[test]
fn placement_is_a_study_factor() {
    let s = Scratch::new();
    let path = s.path().join("pin.toml");
    std::fs::write(
        &path,
        "name = \"pin\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\ntable_size = 200\nduration = \"1s\"\nprepare_threads = 1\nwarmup = 0\nretries = 0\n\
         [factors.placement]\nshared = { pin = { \"thread/innodb/page_cleaner_thread\" = \"0-1\" } }\n\
         split = { pin = { \"thread/innodb/page_cleaner_thread\" = \"1\", \"thread/sql/one_connection\" = \"0\" } }\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let o = s.run(&["lab", "run", p]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.run(&["lab", "show", "pin", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for cell in cells {
        let placement = &cell["run"]["meta"]["plan"]["placement"];
        let want = if cell["variant"] == "split" {
            "[1]"
        } else {
            "[0,1]"
        };
        let placed = placement["applied"]["placed"].as_array().unwrap();
        let cleaner = placed
            .iter()
            .find(|p| p["class"] == "thread/innodb/page_cleaner_thread")
            .unwrap_or_else(|| panic!("{placement}"));
        assert_eq!(cleaner["actual"].to_string(), want, "{cell}");
        assert_eq!(cleaner["took"], true);
    }

    std::fs::write(
        &path,
        "name = \"bad\"\n[[variant]]\nname = \"a\"\npin = { \"thread/x\" = \"0-\" }\n",
    )
    .unwrap();
    assert_user_error(&s.run(&["lab", "plan", p]), "pin 'thread/x=0-'");
}
