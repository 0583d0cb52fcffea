//! The one output convention (docs/output.md), command by command: `--format json` prints one
//! JSON document, `--format csv` a CSV table with a header where the command has rows, a
//! format the command cannot write is refused in one line (exit 2) naming those it can,
//! `--export-json PATH` writes the very text `--format json` prints, and the older spelling
//! (`--json`, `--json PATH`, `lab show --csv`) still works. The commands read one store built
//! once: a 1 s run, a replay of 20 statements and a one-cell study on the shared test server.

mod common;
use common::*;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The database of the shared server these tests use.
const DB: &str = "output_convention";

/// Its dataset.
const DATASET: [&str; 4] = ["--tables", "1", "--table-size", "500"];

/// What every test reads: a store with run 1 (`run`), run 2 (`replay`) and study `oc` (run 3).
struct Fixture {
    s: &'static Scratch,
    sock: String,
    /// A slow log of point selects on `DB`.
    log: PathBuf,
    /// A one-cell study spec on `DB`.
    spec: String,
    /// What `run --format json --json PATH --export-csv PATH` printed and wrote.
    run: (String, String, String),
    /// What `lab run --format json` printed.
    study: String,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let s = Scratch::new().for_process();
        let sock = socket();
        sql(&format!("DROP DATABASE IF EXISTS {DB}"));
        prepare_shared(s, "oltp_point_select", DB, &DATASET);
        let (json, csv) = (s.path().join("run.json"), s.path().join("run.csv"));
        // The older `--json PATH` is `--export-json PATH`.
        let run = [
            "run",
            "oltp_point_select",
            "--socket",
            &sock,
            "--database",
            DB,
        ];
        let printed = ok(
            s,
            &[
                &run[..],
                &DATASET,
                &[
                    "--threads",
                    "1",
                    "--time",
                    "1",
                    "--warmup",
                    "0",
                    "--format",
                    "json",
                    "--json",
                    json.to_str().unwrap(),
                    "--export-csv",
                    csv.to_str().unwrap(),
                ],
            ]
            .concat(),
        );
        let run = (printed, read(&json), read(&csv));
        let log = s.path().join("slow.log");
        std::fs::write(&log, slow_log()).unwrap();
        ok(
            s,
            &[
                "replay",
                log.to_str().unwrap(),
                "--socket",
                &sock,
                "--speed",
                "0",
            ],
        );
        let spec = s.path().join("oc.toml");
        std::fs::write(
            &spec,
            format!(
                "name = \"oc\"\n[defaults]\nworkload = \"oltp_point_select\"\ntables = 1\n\
                 table_size = 500\nduration = \"1s\"\nwarmup = 0\nthreads = 1\nretries = 0\n\
                 [[variant]]\nname = \"ext\"\n\
                 target = \"mysql://root@localhost/{DB}?socket={sock}\"\n"
            ),
        )
        .unwrap();
        let spec = spec.display().to_string();
        let study = ok(s, &["lab", "run", &spec, "--format", "json"]);
        Fixture {
            s,
            sock,
            log,
            spec,
            run,
            study,
        }
    })
}

/// Twenty point selects on `DB`, as MariaDB's slow log writes them.
fn slow_log() -> String {
    let mut text = String::from(
        "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). started with:\n\
         Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\nTime\t\t    Id Command\tArgument\n",
    );
    for i in 0..20 {
        text.push_str(&format!(
            "# Time: 261123  4:25:49\n# User@Host: root[root] @ localhost []\n\
             # Thread_id: 1  Schema: {DB}  QC_hit: No\n\
             # Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 1\n\
             # Rows_affected: 0  Bytes_sent: 11\n{}SET timestamp=1795407949;\n\
             SELECT c FROM sbtest1 WHERE id = {};\n",
            if i == 0 {
                format!("use `{DB}`;\n")
            } else {
                String::new()
            },
            1 + i
        ));
    }
    text
}

fn read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn ok(s: &Scratch, args: &[&str]) -> String {
    let o = s.run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

fn with<'a>(args: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    args.iter().chain(more).copied().collect()
}

/// `ARGS --format json`: the whole of standard output is one JSON document.
fn json(args: &[&str]) -> Value {
    let out = ok(fixture().s, &with(args, &["--format", "json"]));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}"))
}

/// CSV text: a header and rows of its width (the reader refuses ragged rows).
fn csv_rows(text: &str) -> (Vec<String>, usize) {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert!(
        header.len() > 1 && header.iter().all(|h| !h.is_empty()),
        "{text}"
    );
    let rows = r.records().collect::<Result<Vec<_>, _>>().unwrap().len();
    (header, rows)
}

/// `ARGS --format csv`: a CSV table with a header.
fn csv(args: &[&str]) -> (Vec<String>, usize) {
    csv_rows(&ok(fixture().s, &with(args, &["--format", "csv"])))
}

/// `ARGS --format FORMAT` is refused in one line naming what `qpslab COMMAND` writes.
fn refused(args: &[&str], format: &str, command: &str, can: &str) {
    let o = fixture().s.run(&with(args, &["--format", format]));
    assert_user_error(
        &o,
        &format!("--format {format}: `qpslab {command}` writes {can}"),
    );
}

/// `ARGS --format json --export-json PATH` writes exactly what it prints; returns it parsed.
fn exported(args: &[&str], name: &str) -> Value {
    let f = fixture();
    let path = f.s.path().join(name);
    let path_arg = path.to_str().unwrap();
    let printed = ok(
        f.s,
        &with(args, &["--format", "json", "--export-json", path_arg]),
    );
    assert_eq!(printed, read(&path), "{args:?}");
    serde_json::from_str(&printed).unwrap()
}

#[test]
fn run_prints_the_stored_run_and_writes_its_exports() {
    let (printed, file, csv) = &fixture().run;
    // Only the document on standard output: the live lines went to standard error.
    assert_eq!(printed, file);
    let doc: Value = serde_json::from_str(printed).unwrap();
    assert_eq!(doc["phases"].as_array().unwrap().len(), 1, "{doc}");
    let (header, rows) = csv_rows(csv);
    assert!(header.contains(&"threads".to_string()), "{header:?}");
    assert_eq!(rows, 1);
    // Refused before anything connects.
    refused(
        &["run", "oltp_point_select"],
        "md",
        "run",
        "table, json, csv",
    );
    let o = fixture()
        .s
        .run(&["run", "oltp_point_select", "--export-md", "x.md"]);
    assert_user_error(&o, "--export-md x.md: `qpslab run` writes table, json, csv");
    let o = fixture().s.run(&[
        "run",
        "oltp_point_select",
        "--export-json",
        "/no/such/dir/run.json",
    ]);
    assert_user_error(&o, "--export-json /no/such/dir/run.json: directory");
}

#[test]
fn show_lists_and_shows_runs_in_every_format() {
    let f = fixture();
    // The run, the replay and the study's cell.
    let runs = json(&["show"]);
    assert_eq!(runs.as_array().unwrap().len(), 3, "{runs}");
    let doc = exported(&["show", "1"], "show.json");
    assert_eq!(doc, serde_json::from_str::<Value>(&f.run.1).unwrap());
    assert_eq!(csv(&["show"]).1, 3);
    assert_eq!(csv(&["show", "1"]).1, 1);
    refused(&["show"], "md", "show", "table, json, csv");
    // The older switch.
    let old: Value = serde_json::from_str(&ok(f.s, &["show", "1", "--json"])).unwrap();
    assert_eq!(old, doc);
    let o = f.s.run(&["show", "--json", "--format", "csv"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn replay_writes_its_stored_run() {
    let f = fixture();
    let doc = json(&["show", "2"]);
    assert!(doc["meta"]["plan"]["replay"].is_object(), "{doc}");
    refused(
        &["replay", f.log.to_str().unwrap(), "--socket", &f.sock],
        "html",
        "replay",
        "table, json, csv",
    );
}

#[test]
fn lab_plan_and_show_in_every_format() {
    let f = fixture();
    let plan = exported(&["lab", "plan", &f.spec], "plan.json");
    assert_eq!(plan["cells"].as_array().unwrap().len(), 1, "{plan}");
    assert_eq!(csv(&["lab", "plan", &f.spec]).1, 1);
    refused(
        &["lab", "plan", &f.spec],
        "md",
        "lab plan",
        "table, json, csv",
    );
    let old: Value = serde_json::from_str(&ok(f.s, &["lab", "plan", &f.spec, "--json"])).unwrap();
    assert_eq!(old, plan);

    let study = exported(&["lab", "show", "oc"], "study.json");
    assert_eq!(study["cells"].as_array().unwrap().len(), 1, "{study}");
    // `lab run` ends with the study's document, as `lab show` writes it.
    let shown = ok(f.s, &["lab", "show", "oc", "--format", "json"]);
    assert!(f.study == shown, "lab run and lab show differ");
    refused(
        &["lab", "run", &f.spec],
        "md",
        "lab run",
        "table, json, csv",
    );
    assert_eq!(json(&["lab", "show"]).as_array().unwrap().len(), 1);
    let (header, rows) = csv(&["lab", "show", "oc"]);
    assert_eq!(rows, 1);
    // The older `--csv` switch prints the same table.
    let old = ok(f.s, &["lab", "show", "oc", "--csv"]);
    assert_eq!(csv_rows(&old), (header, rows));
    assert_eq!(csv(&["lab", "show"]).1, 1);
    refused(&["lab", "show"], "html", "lab show", "table, json, csv");
}

#[test]
fn report_and_compare() {
    let f = fixture();
    let report = exported(&["report", "1"], "report.json");
    assert!(report.is_object(), "{report}");
    // html stays the default, md its other form.
    assert!(ok(f.s, &["report", "1"]).contains("<html"));
    let md = f.s.path().join("report.md");
    ok(
        f.s,
        &[
            "report",
            "1",
            "--export-md",
            md.to_str().unwrap(),
            "--format",
            "html",
        ],
    );
    assert!(read(&md).starts_with('#'), "{}", read(&md));
    refused(&["report", "1"], "csv", "report", "html, md, json");

    let c = exported(&["compare", "1", "oc/ext"], "compare.json");
    assert!(c["points"].is_array(), "{c}");
    refused(
        &["compare", "1", "oc/ext"],
        "csv",
        "compare",
        "table, json, md",
    );
}

#[test]
fn digest_and_diff_of_a_log() {
    let f = fixture();
    let log = f.log.to_str().unwrap();
    // The class bound is fixed: its default follows the memory free at each start.
    let d = exported(&["digest", log, "--max-classes", "1000"], "digest.json");
    assert_eq!(
        (d["entries"].as_u64(), d["classes"].as_u64()),
        (Some(20), Some(1)),
        "{d}"
    );
    let file = f.s.path().join("old-digest.json");
    let table = ok(
        f.s,
        &[
            "digest",
            log,
            "--max-classes",
            "1000",
            "--json",
            file.to_str().unwrap(),
        ],
    );
    assert!(!table.trim_start().starts_with('{'), "{table}");
    assert_eq!(serde_json::from_str::<Value>(&read(&file)).unwrap(), d);
    refused(&["digest", log], "csv", "digest", "table, json, md");

    let side = format!("mysql://root@localhost/{DB}?socket={}", f.sock);
    let args = [
        "diff",
        log,
        "--a",
        &side,
        "--b",
        &side,
        "--sample",
        "2",
        "--max-time-per-class",
        "1",
    ];
    let r = exported(&args, "diff.json");
    assert_eq!(r["classes"].as_array().unwrap().len(), 1, "{r}");
    refused(&args, "csv", "diff", "table, json, md, html");
}

#[test]
fn server_commands() {
    let f = fixture();
    // The shared server is outside this lab: an empty list.
    assert_eq!(json(&["server", "list"]), Value::Array(vec![]));
    assert_eq!(csv(&["server", "list"]).1, 0);
    let old = ok(f.s, &["server", "list", "--json"]);
    assert_eq!(
        serde_json::from_str::<Value>(&old).unwrap(),
        Value::Array(vec![])
    );
    refused(&["server", "list"], "md", "server list", "table, json, csv");
    refused(
        &["server", "status", "x"],
        "csv",
        "server status",
        "table, json",
    );
    refused(
        &["server", "start", "x"],
        "csv",
        "server start",
        "table, json",
    );
    // One sandbox: started, listed, its status (the older switch), stopped.
    let started = json(&["server", "start", "oc"]);
    assert_eq!(started["name"], "oc", "{started}");
    assert_eq!(csv(&["server", "list"]).1, 1);
    let status = ok(f.s, &["server", "status", "oc", "--json"]);
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["sandbox"]["pid"], started["pid"], "{status}");
    let logs = json(&["server", "logs", "oc", "-n", "3"]);
    assert!(
        logs["lines"].as_array().is_some_and(|l| !l.is_empty()),
        "{logs}"
    );
    refused(
        &["server", "logs", "oc"],
        "csv",
        "server logs",
        "table, json",
    );
    let stopped = json(&["server", "stop", "oc"]);
    assert_eq!(stopped["removed"], false, "{stopped}");
    refused(
        &["server", "stop", "oc"],
        "csv",
        "server stop",
        "table, json",
    );
    refused(&["server", "rm", "oc"], "md", "server rm", "table, json");
    assert_eq!(json(&["server", "rm", "oc"])["removed"], true);
    // Nothing left changed in a lab of its own (the capture of another test records its
    // settings in this one while it runs).
    let lab = f.s.path().join("restore-lab");
    let restore = ["restore", "--lab", lab.to_str().unwrap()];
    assert_eq!(json(&restore)["restored"], Value::Null);
    refused(&restore, "csv", "restore", "table, json");

    let t = exported(&["server", "threads", "--socket", &f.sock], "threads.json");
    assert!(
        t["threads"].as_array().is_some_and(|a| !a.is_empty()),
        "{t}"
    );
    refused(
        &["server", "threads", "--socket", &f.sock],
        "csv",
        "server threads",
        "table, json",
    );
}

#[test]
fn advise_capture_io_tune_check_prepare_and_cleanup() {
    let f = fixture();
    let a = exported(&["advise", "--socket", &f.sock], "advise.json");
    assert!(a["findings"].is_array(), "{a}");
    refused(
        &["advise", "--socket", &f.sock],
        "csv",
        "advise",
        "table, json, md",
    );
    // Refused before anything starts.
    refused(
        &["capture", "--socket", &f.sock, "--out", "x.log"],
        "csv",
        "capture",
        "table, json",
    );
    let o = f.s.run(&[
        "capture", "--socket", &f.sock, "--out", "-", "--format", "json",
    ]);
    assert_user_error(&o, "--out - writes the log to standard output");
    let cap = f.s.path().join("capture.log");
    let doc = json(&[
        "capture",
        "--socket",
        &f.sock,
        "--time",
        "1",
        "--out",
        cap.to_str().unwrap(),
    ]);
    assert!(doc["entries"].is_u64(), "{doc}");
    refused(&["io", "seqrd"], "md", "io", "table, json, csv");
    refused(&["check", "tpcc"], "csv", "check", "table, json");
    // The fixture's dataset, found in place.
    let prepare = [
        &[
            "prepare",
            "oltp_point_select",
            "--socket",
            &f.sock,
            "--database",
            DB,
        ][..],
        &DATASET,
    ]
    .concat();
    let p = json(&prepare);
    assert_eq!(
        (&p["already_present"], &p["rows"]),
        (&Value::Bool(true), &Value::from(0)),
        "{p}"
    );
    refused(&prepare, "md", "prepare", "table, json");
    // A database with no table of ours: nothing dropped.
    sql("CREATE DATABASE IF NOT EXISTS output_convention_empty");
    let empty = [
        "cleanup",
        "--socket",
        &f.sock,
        "--database",
        "output_convention_empty",
    ];
    assert_eq!(json(&empty)["dropped"], Value::Array(vec![]));
    refused(&empty, "md", "cleanup", "table, json");
    // Its own store: the other tests count the runs of the shared one.
    let (dir, db) = (f.s.path().join("io"), f.s.path().join("io.db"));
    std::fs::create_dir(&dir).unwrap();
    let io = [
        "io",
        "seqrd",
        "--time",
        "1",
        "--threads",
        "1",
        "--file-total-size",
        "8M",
        "--file-num",
        "1",
        "--dir",
        dir.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ];
    let doc = exported(&io, "io.json");
    assert!(doc["phases"][0]["io"].is_object(), "{doc}");
    refused(
        &["tune", "oltp_point_select", "--budget", "10s"],
        "csv",
        "tune",
        "table, json",
    );
}

#[test]
fn help_lists_each_commands_formats_and_hides_the_older_spellings() {
    let s = Scratch::new();
    let (rows, doc, md) = ("table, json, csv", "table, json", "table, json, md");
    for (cmd, can) in [
        (&["run"][..], rows),
        (&["prepare"], doc),
        (&["cleanup"], doc),
        (&["check"], doc),
        (&["show"], rows),
        (&["server", "start"], doc),
        (&["server", "stop"], doc),
        (&["server", "rm"], doc),
        (&["server", "list"], rows),
        (&["server", "logs"], doc),
        (&["server", "threads"], doc),
        (&["server", "status"], doc),
        (&["lab", "plan"], rows),
        (&["lab", "run"], rows),
        (&["lab", "resume"], rows),
        (&["lab", "show"], rows),
        (&["report"], "html, md, json"),
        (&["compare"], md),
        (&["capture"], doc),
        (&["digest"], md),
        (&["replay"], rows),
        (&["advise"], md),
        (&["diff"], "table, json, md, html"),
        (&["io"], rows),
        (&["tune"], doc),
        (&["restore"], doc),
        (&["doctor"], doc),
    ] {
        let help = ok(&s, &with(cmd, &["--help"]));
        let line = format!("What to print on standard output: {can} (default: ");
        assert!(help.contains(&line), "{cmd:?}: {help}");
        assert!(
            !help.contains("--json ") && !help.contains("--csv"),
            "{cmd:?}: {help}"
        );
        assert_eq!(
            help.contains("--export-csv"),
            can.contains("csv"),
            "{cmd:?}"
        );
        assert_eq!(help.contains("--export-md"), can.contains("md"), "{cmd:?}");
    }
}
