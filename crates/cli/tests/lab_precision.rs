//! `qpslab lab run` with a precision target (issue 35): rounds stop when the comparison's
//! anytime-valid interval is precise, the rounds not needed are removed from the study, and
//! `lab show --format json` carries each comparison's verdict, interval, precision, rounds and
//! why it stopped.

mod common;

use common::busy::BusyLoops;
use common::{stderr, stdout, Scratch};

/// Two identical setups, one-second cells: an A/A study. Its precision (±100%) is loose so
/// that three stable rounds reach it on a busy machine.
const AA: &str = "name = \"aa\"\nprecision = \"100%\"\nmax_repeats = 4\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\ntable_size = 500\ntime = \"1s\"\nprepare_threads = 1\nwarmup = 0\nretries = 0\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n";

/// `lab show aa --format json`.
fn shown_json(s: &Scratch) -> serde_json::Value {
    let o = s.run(&["lab", "show", "aa", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// The throughput comparison of a study's first comparison, from `lab show --format json`.
fn tps_of(v: &serde_json::Value) -> serde_json::Value {
    v["comparisons"][0]["points"][0]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == "tps")
        .unwrap()
        .clone()
}

#[test]
fn issue_35_a_study_with_a_precision_stops_when_precise_and_says_why() {
    let s = Scratch::new();
    let p = s.path().join("aa.toml");
    std::fs::write(&p, AA).unwrap();
    let o = s.run(&["lab", "run", &p.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // Each round prints the comparison's interval so far.
    assert!(
        out.contains("-- round 1/4: tps intervals (target ±100%)"),
        "{out}"
    );
    assert!(out.contains("   b vs a: "), "{out}");
    // And the ETA of the rounds the open comparisons still need, budget or not.
    let err = stderr(&o);
    assert!(
        err.contains("ETA ~") && err.contains("1 comparison(s) open"),
        "{err}"
    );
    let o = s.run(&["lab", "show", "aa", "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // Only measured cells stay: the rounds not needed were removed, none is pending.
    let cells = v["cells"].as_array().unwrap();
    assert!(cells.iter().all(|c| c["status"] == "done"), "{v}");
    assert!((6..=8).contains(&cells.len()), "{}", cells.len());
    let tps = tps_of(&v);
    assert_eq!(tps["precision"], 100.0, "{tps}");
    let used = tps["rounds"]["used"].as_u64().unwrap();
    let dropped = tps["rounds"]["dropped"].as_u64().unwrap();
    assert_eq!((used + dropped) as usize * 2, cells.len(), "{tps}");
    if used < 3 {
        // Rounds with an unstable side (a busy machine) are left out: too few to conclude.
        assert_eq!(tps["decision"], "undecided", "{tps}");
        assert_eq!(tps["stopped"], "max_repeats", "{tps}");
    } else if tps["stopped"] == "precise" {
        // Precise: an A/A comparison inside ±100%.
        assert_eq!(tps["decision"], "equivalent", "{tps}");
        assert_eq!(tps["verdict"], "equivalent within ±100%", "{tps}");
        assert!(tps["interval"][1].as_f64().unwrap() <= 100.0, "{tps}");
    } else {
        assert_eq!(tps["stopped"], "max_repeats", "{tps}");
        assert_eq!(cells.len(), 8, "{tps}");
    }
    let shown = stdout(&s.run(&["lab", "show", "aa"]));
    assert!(shown.contains("b vs a at threads=1: tps"), "{shown}");
}

#[test]
fn stopping_flags_join_the_spec_and_contradictions_are_user_errors() {
    let s = Scratch::new();
    let p = s.path().join("aa.toml");
    std::fs::write(&p, AA).unwrap();
    let spec = p.display().to_string();
    // The spec sets precision: the flag may not say it again.
    common::assert_user_error(
        &s.run(&["lab", "run", &spec, "--precision", "5%"]),
        "precision is set in the spec and on the command line",
    );
    let fixed = s.path().join("fixed.toml");
    std::fs::write(&fixed, "name = \"f\"\n[defaults]\nrepeats = 2\n").unwrap();
    let fixed = fixed.display().to_string();
    common::assert_user_error(
        &s.run(&["lab", "run", &fixed, "--max-repeats", "4"]),
        "need precision or budget",
    );
    common::assert_user_error(
        &s.run(&["lab", "run", &fixed, "--budget", "10m"]),
        "repeats = N runs exactly N rounds",
    );
    common::assert_user_error(
        &s.run(&["lab", "run", &fixed, "--precision", "nope"]),
        "precision: expects a percentage",
    );
}

/// The comparison's rounds (paired and dropped) in the first round report of `out`, and
/// that round's number.
fn first_round_report(out: &str) -> Option<(usize, usize)> {
    let mut lines = out.lines().skip_while(|l| !l.starts_with("-- round "));
    let head = lines.next()?;
    let round = head["-- round ".len()..].split('/').next()?.parse().ok()?;
    let line = lines.next()?;
    let count = |needle: &str| -> Option<usize> {
        let before = &line[..line.find(needle)?];
        before.rsplit([' ', ',']).next()?.parse().ok()
    };
    let used = count(" round(s)").or_else(|| count(" paired round(s)"))?;
    let dropped = count(" dropped").unwrap_or(0);
    Some((round, used + dropped))
}

/// A study resumed after its process died pairs the rounds measured before with the new
/// ones: its first round report counts every round both sides ran, not only this process's.
#[test]
fn issue_35_a_resumed_study_pairs_the_rounds_measured_before() {
    use qpslab_store::{CellStatus, Store};
    use std::time::{Duration, Instant};
    let s = Scratch::new();
    let p = s.path().join("res.toml");
    // A precision never reached: every one of the three rounds runs.
    let body = AA
        .replace("name = \"aa\"", "name = \"res\"")
        .replace("precision = \"100%\"", "precision = \"0.01%\"")
        .replace("max_repeats = 4", "max_repeats = 3");
    std::fs::write(&p, body).unwrap();
    let spec = p.display().to_string();
    let mut child = s
        .cmd(&["lab", "run", &spec])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once a round is done and a cell of a later one runs.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let going = Store::open(&s.db()).ok().and_then(|store| {
            let cells = store
                .study_cells(store.study_by_name("res").ok()?.id)
                .ok()?;
            let done = cells.iter().filter(|c| c.status == CellStatus::Done);
            Some(done.count() >= 2 && cells.iter().any(|c| c.status == CellStatus::Running))
        });
        if going == Some(true) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the study never reached its second round"
        );
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let o = s.run(&["lab", "resume", &spec]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let (round, paired) = first_round_report(&out).unwrap_or_else(|| panic!("{out}"));
    assert!(round >= 2, "{out}");
    assert_eq!(
        paired, round,
        "rounds before the resume are paired too: {out}"
    );
    // `lab plan` of the same spec now estimates from it.
    let o = s.run(&["lab", "plan", &spec]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("estimate from study 'res' (the same spec, 6 cells"),
        "{out}"
    );
    assert!(out.contains("   b vs a: "), "{out}");
}

/// `lab plan` says where its estimate comes from, and that there is none without an earlier
/// run of the same setups.
#[test]
fn issue_35_lab_plan_says_when_it_has_nothing_to_estimate_from() {
    let s = Scratch::new();
    let p = s.path().join("aa.toml");
    std::fs::write(&p, AA).unwrap();
    let spec = p.display().to_string();
    let out = stdout(&s.run(&["lab", "plan", &spec]));
    assert!(
        out.contains("estimate: none; no earlier run of these setups is in the store"),
        "{out}"
    );
    let o = s.run(&["lab", "plan", &spec, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["estimate"]["source"], serde_json::Value::Null, "{v}");
    assert_eq!(v["estimate"]["precision_pct"], 100.0, "{v}");
}

/// An attempt whose only mark is a busy neighbour: `unstable: other processes used N% ...`.
fn contended_only(reason: &Option<String>) -> bool {
    reason
        .as_deref()
        .is_some_and(|r| r.starts_with("unstable: other processes used") && !r.contains("; "))
}

/// In a study that runs rounds until precise, a cell a busy neighbour marked is not measured
/// again (nor waited on for a quiet machine): its round is paired anyway, the neighbour's noise
/// measured as spread, and waiting would spend the budget.
#[test]
fn issue_35_a_precision_study_keeps_a_cell_a_busy_neighbour_marked() {
    use qpslab_store::Store;
    use std::time::{Duration, Instant};
    let s = Scratch::new();
    let p = s.path().join("busy.toml");
    let body = AA
        .replace("name = \"aa\"", "name = \"busy\"")
        .replace("max_repeats = 4", "max_repeats = 3")
        .replace("retries = 0\n", "");
    std::fs::write(&p, body).unwrap();
    let spec = p.display().to_string();
    let _busy = BusyLoops::start(2);
    let mut child = s
        .cmd(&["lab", "run", &spec])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(180);
    let contended = loop {
        let ended = child.try_wait().unwrap().is_some();
        let attempts = Store::open(&s.db()).ok().and_then(|store| {
            store
                .cell_attempts(store.study_by_name("busy").ok()?.id)
                .ok()
        });
        for a in attempts.iter().flatten() {
            let later = attempts
                .iter()
                .flatten()
                .any(|b| b.cell_id == a.cell_id && b.attempt > a.attempt);
            if contended_only(&a.reason) && later {
                let _ = child.kill();
                let _ = child.wait();
                panic!("a cell marked only by a busy neighbour was measured again: {a:?}");
            }
        }
        if ended {
            break attempts
                .iter()
                .flatten()
                .filter(|a| contended_only(&a.reason))
                .count();
        }
        assert!(Instant::now() < deadline, "the study did not end");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(child.wait().unwrap().success());
    // The busy loops did mark cells: the test saw what it is about.
    assert!(contended > 0, "no attempt was marked by the busy loops");
}

#[test]
fn an_undecided_comparison_says_how_long_the_rounds_that_would_decide_it_take() {
    // Three rounds of an A/A study rarely settle ±5%: the cap ends it, most often undecided.
    let s = Scratch::new();
    let p = s.path().join("aa.toml");
    let spec = AA
        .replace("precision = \"100%\"", "precision = \"5%\"")
        .replace("max_repeats = 4", "max_repeats = 3");
    std::fs::write(&p, spec).unwrap();
    let o = s.run(&["lab", "run", &p.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let tps = tps_of(&shown_json(&s));
    let verdict = tps["verdict"].as_str().unwrap().to_string();
    let timed = tps.get("seconds_to_target").and_then(|t| t.as_f64());
    let n = tps.get("rounds_to_target").and_then(|n| n.as_u64());
    match (tps["decision"].as_str(), n) {
        (Some("undecided"), Some(n)) if tps["rounds"]["used"] == 3 => {
            // Three rounds ran one after another: the pace is known, and so is the time.
            let more = timed.unwrap_or_else(|| panic!("no time: {tps}"));
            assert!(n > 3 && more > 0.0, "{tps}");
            assert!(
                verdict.starts_with(&format!(
                    "undecided within max_repeats: ~{n} rounds would decide at ±5% (~"
                )) && verdict.ends_with("s a round)"),
                "{verdict}"
            );
        }
        // An answer (three very steady rounds), too few stable rounds or more than 1000
        // rounds to go: no time to give.
        _ => assert!(timed.is_none() && !verdict.contains("a round"), "{tps}"),
    }
    // The terminal says what the JSON says.
    let shown = stdout(&s.run(&["lab", "show", "aa"]));
    assert!(shown.contains(&verdict), "{shown}");
}

#[test]
fn a_study_with_planned_looks_stops_only_at_a_look() {
    // ±100% is reached at the first look (round 4) or the second (round 8), never between.
    let s = Scratch::new();
    let p = s.path().join("aa.toml");
    let spec = AA.replace("max_repeats = 4", "max_repeats = 8\nlook_every = 4");
    std::fs::write(&p, spec).unwrap();
    let plan = stdout(&s.run(&["lab", "plan", &p.display().to_string()]));
    assert!(
        plan.contains("looks: decided only after rounds 4, 8"),
        "{plan}"
    );
    let o = s.run(&["lab", "run", &p.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // Before the first look, no interval: the sequence would give one from the third round.
    assert!(out.contains("an interval from 4"), "{out}");
    assert!(!out.contains("an interval from 3"), "{out}");
    let tps = tps_of(&shown_json(&s));
    if tps["decision"] != "undecided" {
        // The interval is the last look's: four rounds or eight.
        let used = tps["rounds"]["used"].as_u64().unwrap();
        assert!(used == 4 || used == 8, "{tps}");
        assert!(out.contains("round(s) at the last look"), "{out}");
    }
    // Looks need precision or budget, and three rounds between them.
    let no_precision = AA
        .replace("precision = \"100%\"\n", "")
        .replace("max_repeats = 4", "look_every = 3");
    std::fs::write(&p, no_precision).unwrap();
    common::assert_user_error(
        &s.run(&["lab", "run", &p.display().to_string()]),
        "look_every need precision or budget",
    );
    std::fs::write(&p, AA).unwrap();
    common::assert_user_error(
        &s.run(&["lab", "run", &p.display().to_string(), "--look-every", "2"]),
        "look_every: looks need at least 3 rounds between them",
    );
}
