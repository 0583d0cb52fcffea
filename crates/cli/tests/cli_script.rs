//! `qpslab run --script` and `script = ...` in studies, end to end against a real MariaDB.

mod common;

use common::*;
use std::path::PathBuf;

/// A file of the repository's `examples/partitioned/`.
fn example(name: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/partitioned");
    root.join(name).display().to_string()
}

fn write(s: &Scratch, name: &str, text: &str) -> String {
    let p = s.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn run_script_with_init_sql_runs_the_mix_and_names_statements_file_line() {
    let s = Scratch::new();
    let sock = socket();
    sql("DROP DATABASE IF EXISTS script_run; CREATE DATABASE script_run");
    let json = s.path().join("run.json");
    let lookups = format!("{}@3", example("lookups.sql"));
    let o = s.run(&[
        "run",
        "--script",
        &lookups,
        "--script",
        &example("ranges.sql"),
        "--init-sql",
        &example("schema_range.sql"),
        "--socket",
        &sock,
        "--database",
        "script_run",
        "--threads",
        "2",
        "--events",
        "400",
        "--json",
        json.to_str().unwrap(),
    ]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    assert!(out.contains("script lookups.sql@3 ranges.sql@1"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let phase = &v["phases"][0];
    assert_eq!(phase["events"], 400, "{phase}");
    assert_eq!(phase["queries"]["read"], 400, "{phase}");
    let text = phase.to_string();
    for name in ["lookups.sql:3", "ranges.sql:3"] {
        assert!(text.contains(name), "{name} missing: {text}");
    }
    assert_eq!(
        sql("SELECT COUNT(*) FROM script_run.events").trim(),
        "100000"
    );
    let show = stdout(&s.run(&["show", "1"]));
    assert!(show.contains("script lookups.sql@3 ranges.sql@1"), "{show}");
    sql("DROP DATABASE IF EXISTS script_run");
}

#[test]
fn an_unknown_variable_is_a_user_error_naming_file_and_line() {
    let s = Scratch::new();
    let bad = write(&s, "bad.sql", "\\set id random(1, 10)\nSELECT :idd;\n");
    let o = s.run(&["run", "--script", &bad, "--socket", "/nonexistent.sock"]);
    assert_user_error(&o, "bad.sql:2: unknown variable ':idd'");
}

#[test]
fn a_script_and_a_workload_together_are_a_user_error() {
    let s = Scratch::new();
    let w = write(&s, "w.sql", "SELECT 1;\n");
    let o = s.run(&["run", "oltp_point_select", "--script", &w]);
    assert_user_error(&o, "--script");
    let o = s.run(&["run", "--script", "/nonexistent/w.sql"]);
    assert_user_error(&o, "cannot read /nonexistent/w.sql");
}

#[test]
fn a_failing_init_statement_names_its_line() {
    let s = Scratch::new();
    let sock = socket();
    sql("CREATE DATABASE IF NOT EXISTS script_init");
    let w = write(&s, "w.sql", "SELECT 1;\n");
    let init = write(&s, "init.sql", "DO 1;\n\nSELECT * FROM no_such_table;\n");
    let o = s.run(&[
        "run",
        "--script",
        &w,
        "--init-sql",
        &init,
        "--socket",
        &sock,
        "--database",
        "script_init",
        "--events",
        "1",
    ]);
    assert_user_error(&o, "init.sql:3: ");
    assert!(stderr(&o).contains("no_such_table"), "{}", stderr(&o));
    sql("DROP DATABASE IF EXISTS script_init");
}

#[test]
fn a_study_runs_a_script_from_its_spec_directory() {
    let s = Scratch::new();
    let sock = socket();
    sql("CREATE DATABASE IF NOT EXISTS script_study");
    write(&s, "a.sql", "\\set n random(1, 5)\nSELECT :n;\n");
    write(&s, "b.sql", "DO 1;\n");
    let spec = write(
        &s,
        "study.toml",
        &format!(
            "name = \"scripted\"\n[defaults]\nscript = [\"a.sql@3\", \"b.sql\"]\n\
             events = 50\nwarmup = 0\nretries = 0\nthreads = 2\n[[variant]]\nname = \"ext\"\n\
             target = \"mysql://root@localhost/script_study?socket={sock}\"\n"
        ),
    );
    let o = s.run(&["lab", "run", &spec]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    let show = stdout(&s.run(&["lab", "show", "scripted"]));
    assert!(show.contains("done"), "{show}");
    let run = stdout(&s.run(&["show", "1"]));
    assert!(run.contains("script a.sql@3 b.sql@1"), "{run}");
    sql("DROP DATABASE IF EXISTS script_study");
}
