//! qpslab under the launchers users already have: a real Slurm (`srun -n 3`) and Open MPI
//! (`mpirun -n 3`) on this machine, started by the test (tests/common/launchers.rs). A launcher
//! that cannot run here fails the test with the reason, never passes it silently.

mod common;
use common::launchers::{mpirun, Slurm};
use common::*;
use qpslab_store::{RunId, RunStatus, Store};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The rank variables each task printed, one `RANK/SIZE` per line, sorted.
fn ranks(out: &std::process::Output) -> Vec<String> {
    assert!(out.status.success(), "{}", stderr(out));
    let mut r: Vec<String> = stdout(out).lines().map(str::to_string).collect();
    r.sort();
    r
}

#[test]
fn srun_starts_three_tasks_that_know_their_rank() {
    let slurm = Slurm::start().unwrap_or_else(|why| panic!("Slurm cannot run here: {why}"));
    let out = slurm
        .srun(3)
        .args(["sh", "-c", "echo $SLURM_PROCID/$SLURM_NTASKS"])
        .output()
        .expect("srun");
    assert_eq!(ranks(&out), ["0/3", "1/3", "2/3"]);
}

#[test]
fn mpirun_starts_three_ranks_that_know_their_rank() {
    let mut cmd = mpirun(3).unwrap_or_else(|why| panic!("Open MPI cannot run here: {why}"));
    let out = cmd
        .args([
            "sh",
            "-c",
            "echo $OMPI_COMM_WORLD_RANK/$OMPI_COMM_WORLD_SIZE",
        ])
        .output()
        .expect("mpirun");
    assert_eq!(ranks(&out), ["0/3", "1/3", "2/3"]);
}

/// The dataset of the sharded runs (each test its own database on the shared server).
const DATASET: [&str; 4] = ["--tables", "1", "--table-size", "500"];

/// Run `id` of store `db` as `show --format json` writes it.
fn run_doc(s: &Scratch, db: &Path, id: &str) -> Value {
    let o = s.run(&["show", id, "--format", "json", "--db", db.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// Events of each phase of a run document.
fn events(doc: &Value) -> Vec<u64> {
    doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["events"].as_u64().unwrap())
        .collect()
}

/// Runs `qpslab run --shard auto` as three ranks under `launcher` (its command line so far)
/// on database `db` of the shared server, each rank storing into the store `store` spells
/// (a shell word: the launcher starts one command line for all, each rank expands it).
fn three_shards(s: &Scratch, mut launcher: Command, store: &str, db: &str) {
    let sock = socket();
    prepare_shared(s, "oltp_point_select", db, &DATASET);
    let script = format!(
        "exec \"$0\" run oltp_point_select --socket {sock} --database {db} {} --threads 3 \
         --time 1 --warmup 0 --shard auto --db {store}",
        DATASET.join(" ")
    );
    let out = launcher
        .args(["sh", "-c", &script, env!("CARGO_BIN_EXE_qpslab")])
        .env("QPSLAB_LAB", s.lab())
        .env("QPSLAB_TEMPLATES", templates())
        .env_remove("QPSLAB_DB")
        .env_remove("MYSQL_PWD")
        .output()
        .expect("launcher");
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
}

/// Checks merged run `doc` against its shards' documents: its events are their sum, and it
/// records three shards, each with its host and measured start. Returns the starts' spread (s).
fn check_merged(doc: &Value, shards: &[Value]) -> f64 {
    let mut sum = vec![0u64; 1];
    for shard in shards {
        let e = events(shard);
        assert_eq!(e.len(), sum.len(), "every shard measured one phase");
        assert!(e[0] > 0, "a shard measured nothing: {shard}");
        sum[0] += e[0];
    }
    assert_eq!(events(doc), sum, "merged events are the shards' sum");
    let members = doc["phases"][0]["result"]["shard"]["members"]
        .as_array()
        .unwrap_or_else(|| panic!("no shard members in {doc}"));
    assert_eq!(members.len(), 3);
    let mut indexes: Vec<u64> = members
        .iter()
        .map(|m| m["index"].as_u64().unwrap())
        .collect();
    indexes.sort_unstable();
    assert_eq!(indexes, [0, 1, 2]);
    let starts: Vec<f64> = members
        .iter()
        .map(|m| {
            assert!(!m["host"].as_str().unwrap().is_empty(), "{m}");
            m["start_unix_s"].as_f64().unwrap()
        })
        .collect();
    assert!(starts.iter().all(|&t| t > 1e9), "{members:?}");
    starts.iter().fold(f64::MIN, |a, &b| a.max(b)) - starts.iter().fold(f64::MAX, |a, &b| a.min(b))
}

/// Runs three shards under `launcher`, each rank storing into its own store named by
/// `rank_var` (the launcher's rank variable), merges the three stores and checks the merged
/// run (`check_merged`).
fn three_shards_merge(s: &Scratch, launcher: Command, rank_var: &str, db: &str) {
    let dir = s.path().display().to_string();
    three_shards(s, launcher, &format!("{dir}/shard-${rank_var}.db"), db);
    let shards: Vec<PathBuf> = (0..3)
        .map(|i| s.path().join(format!("shard-{i}.db")))
        .collect();
    let merged = s.path().join("merged.db");
    let mut args = vec!["merge", "--db", merged.to_str().unwrap()];
    args.extend(shards.iter().map(|p| p.to_str().unwrap()));
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let id = stored_run_id(&stdout(&o));
    let docs: Vec<Value> = shards.iter().map(|p| run_doc(s, p, "1")).collect();
    let spread = check_merged(&run_doc(s, &merged, &id), &docs);
    println!("{}shards' starts {:.1} ms apart", stdout(&o), spread * 1e3);
}

#[test]
fn three_shards_under_srun_merge_into_one_run() {
    let slurm = Slurm::start().unwrap_or_else(|why| panic!("Slurm cannot run here: {why}"));
    let s = Scratch::new();
    three_shards_merge(&s, slurm.srun(3), "SLURM_PROCID", "shards_srun");
}

#[test]
fn three_shards_under_mpirun_merge_into_one_run() {
    let launcher = mpirun(3).unwrap_or_else(|why| panic!("Open MPI cannot run here: {why}"));
    let s = Scratch::new();
    three_shards_merge(&s, launcher, "OMPI_COMM_WORLD_RANK", "shards_mpirun");
}

/// `doc` without what two merges of the same shards legitimately write differently: the id
/// the store gave the merged run, its fresh uuid, the command line that merged it (its
/// sources and --db) and when the merge finished writing it (`finished_utc`). Everything
/// measured stays: events, phases, percentiles, intervals, histograms, members (with the
/// shards' own uuids), the start (the first shard's), plan, host, server, telemetry.
fn measured(mut doc: Value) -> Value {
    let o = doc.as_object_mut().unwrap();
    for key in ["id", "finished_utc"] {
        assert!(o.remove(key).is_some(), "no {key} in the run document");
    }
    let meta = o["meta"].as_object_mut().unwrap();
    for key in ["uuid", "command"] {
        assert!(
            meta.remove(key).is_some(),
            "no meta.{key} in the run document"
        );
    }
    doc
}

/// A user error of `merge`: exit 2 with one line that says `needle`.
fn one_line_user_error(o: &std::process::Output, needle: &str) {
    assert_user_error(o, needle);
    assert_eq!(stderr(o).trim().lines().count(), 1, "{}", stderr(o));
}

/// Copies runs `ids` of the store `from` into the new file store `to` (`qpslab export`),
/// as the stores of shards that each wrote their own file would hold them.
fn export(s: &Scratch, from: &str, ids: &[RunId], to: &Path) {
    let ids: Vec<String> = ids.iter().map(|id| id.0.to_string()).collect();
    let mut args = vec!["export", "--db", from, "--out", to.to_str().unwrap()];
    args.extend(ids.iter().map(String::as_str));
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Issue 50: three shards under srun all write into one server store (a fresh schema of the
/// shared server), each run with its place in the group; `merge --group` there gives the
/// same merged run as `merge` of the three shards' own files (the same shard runs, exported
/// from the server store), and as `merge --group` of one file holding all three. A group
/// merged already, an unknown one and one missing a shard are refused with one line.
#[test]
fn three_shards_under_srun_into_one_server_store_merge_there_as_from_files() {
    let slurm = Slurm::start().unwrap_or_else(|why| panic!("Slurm cannot run here: {why}"));
    let s = Scratch::new();
    let schema = format!("qpslab_store_shards_{}", std::process::id());
    sql(&format!("DROP DATABASE IF EXISTS {schema}"));
    let url = format!("mysql://root@localhost/{schema}?socket={}", socket());
    // A new schema: the three shards make it at once.
    // The store is on the server the shards measure, as the test has one server: accepted.
    let db = format!("'{url}' --db-on-target");
    three_shards(&s, slurm.srun(3), &db, "shards_srun_store");

    // Each shard's run landed in the one store with its place in one group of three.
    let store = Store::open(Path::new(&url)).unwrap();
    let runs = store.list_runs(usize::MAX).unwrap();
    assert_eq!(runs.len(), 3, "{runs:?}");
    let mut ids = vec![RunId(0); 3];
    let mut groups = Vec::new();
    for r in &runs {
        assert_eq!(r.status, RunStatus::Completed, "{r:?}");
        let run = store.load_run(r.id).unwrap();
        let place = run.meta.plan.shard.as_ref().unwrap().resolved().unwrap();
        assert_eq!(place.count, 3);
        ids[place.index as usize] = r.id;
        groups.push(place.group);
    }
    groups.dedup();
    assert_eq!(groups.len(), 1, "{groups:?}");
    let group = groups.remove(0);
    assert!(group.starts_with("slurm-"), "{group}");
    assert!(ids.iter().all(|id| id.0 > 0), "{ids:?}");

    // The existing way: each shard in its own file, merged from the three files.
    let files: Vec<PathBuf> = (0..3)
        .map(|i| s.path().join(format!("shard-{i}.db")))
        .collect();
    for (id, file) in ids.iter().zip(&files) {
        export(&s, &url, &[*id], file);
    }
    let from_files = s.path().join("merged.db");
    let mut args = vec!["merge", "--db", from_files.to_str().unwrap()];
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let file_id = stored_run_id(&stdout(&o));

    // The server's way: merged by group where the shards wrote.
    let o = s.run(&["merge", "--group", &group, "--db", &url]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains(&format!("merged 3 shards of group {group}")),
        "{out}"
    );
    assert!(out.contains("in mysql://root@localhost"), "{out}");
    let server_id = stored_run_id(&out);

    // One file holding all three shards: the same command.
    let all = s.path().join("all.db");
    export(&s, &url, &ids, &all);
    let o = s.run(&["merge", "--group", &group, "--db", all.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let all_id = stored_run_id(&stdout(&o));

    let shards: Vec<Value> = ids
        .iter()
        .map(|id| run_doc(&s, Path::new(&url), &id.0.to_string()))
        .collect();
    let on_server = run_doc(&s, Path::new(&url), &server_id);
    check_merged(&on_server, &shards);
    let p99 = &on_server["phases"][0]["latency_ms"]["p99"];
    assert!(p99.as_f64().is_some_and(|ms| ms > 0.0), "{on_server}");
    let on_server = measured(on_server);
    assert_eq!(on_server, measured(run_doc(&s, &from_files, &file_id)));
    assert_eq!(on_server, measured(run_doc(&s, &all, &all_id)));

    // Merged once per store: again by group, or again from the files into the same store.
    let o = s.run(&["merge", "--group", &group, "--db", &url]);
    one_line_user_error(
        &o,
        &format!("group {group} is already merged in mysql://root@localhost/{schema}"),
    );
    assert!(
        stderr(&o).contains(&format!("as run {server_id}")),
        "{}",
        stderr(&o)
    );
    let mut again = vec!["merge", "--db", from_files.to_str().unwrap()];
    again.extend(files.iter().map(|p| p.to_str().unwrap()));
    one_line_user_error(&s.run(&again), &format!("as run {file_id}"));
    assert_eq!(store.list_runs(usize::MAX).unwrap().len(), 4);

    // An unknown group: what is there is said.
    let o = s.run(&["merge", "--group", "nosuch", "--db", &url]);
    one_line_user_error(
        &o,
        &format!(
            "no shards of group nosuch in mysql://root@localhost/{schema}?socket={}; \
             it holds group(s) {group} (3 of 3 shards, merged as run {server_id})",
            socket()
        ),
    );
    // The server store named as a SOURCE: the same merged run, into a file.
    let x = s.path().join("x.db");
    let o = s.run(&["merge", &url, "--db", x.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let x_id = stored_run_id(&stdout(&o));
    assert_eq!(on_server, measured(run_doc(&s, &x, &x_id)));
    // An unknown group among the shards' own files: the merge writes nothing.
    let y = s.path().join("y.db");
    let mut args = vec!["merge", "--group", "nosuch", "--db", y.to_str().unwrap()];
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    one_line_user_error(
        &s.run(&args),
        &format!("no shards of group nosuch in {}", files[0].display()),
    );
    assert!(!y.exists());
    // A group missing a shard.
    let partial = s.path().join("partial.db");
    export(&s, &url, &[ids[0], ids[2]], &partial);
    let o = s.run(&[
        "merge",
        "--group",
        &group,
        "--db",
        partial.to_str().unwrap(),
    ]);
    one_line_user_error(&o, &format!("group {group}: shard(s) 1 of 3 missing"));
    // No store there: refused, and none created.
    let none = s.path().join("none.db");
    let o = s.run(&["merge", "--group", &group, "--db", none.to_str().unwrap()]);
    one_line_user_error(&o, "no such store");
    assert!(!none.exists());
    let nothing = format!("mysql://root@localhost/{schema}_none?socket={}", socket());
    let o = s.run(&["merge", "--group", &group, "--db", &nothing]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    let made = sql(&format!("SHOW DATABASES LIKE '{schema}_none'"));
    assert!(made.trim().is_empty(), "{made}");
    drop(store);
    sql(&format!("DROP DATABASE {schema}"));
}
