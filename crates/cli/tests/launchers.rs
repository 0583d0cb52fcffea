//! qpslab under the launchers users already have: a real Slurm (`srun -n 3`) and Open MPI
//! (`mpirun -n 3`) on this machine, started by the test (tests/common/launchers.rs). A launcher
//! that cannot run here fails the test with the reason, never passes it silently.

mod common;
use common::launchers::{mpirun, Slurm};
use common::*;
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

/// Runs `qpslab run --shard auto` as three ranks under `launcher` (its command line so far),
/// each rank storing into its own store named by `rank_var` (the launcher's rank variable),
/// merges the three stores and checks the merged run: its events are the shards' sum, and it
/// records three shards, each with its host and measured start.
fn three_shards_merge(s: &Scratch, mut launcher: Command, rank_var: &str, db: &str) {
    let sock = socket();
    prepare_shared(s, "oltp_point_select", db, &DATASET);
    let dir = s.path().display().to_string();
    // Each rank expands its own store's name: the launcher starts one command line for all.
    let script = format!(
        "exec \"$0\" run oltp_point_select --socket {sock} --database {db} {} --threads 3 \
         --time 1 --warmup 0 --shard auto --db {dir}/shard-${rank_var}.db",
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
    let shards: Vec<PathBuf> = (0..3)
        .map(|i| s.path().join(format!("shard-{i}.db")))
        .collect();
    let merged = s.path().join("merged.db");
    let mut args = vec!["merge", "--db", merged.to_str().unwrap()];
    args.extend(shards.iter().map(|p| p.to_str().unwrap()));
    let o = s.run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let id = stored_run_id(&stdout(&o));

    let mut sum = vec![0u64; 1];
    for shard in &shards {
        let doc = run_doc(s, shard, "1");
        let e = events(&doc);
        assert_eq!(e.len(), sum.len(), "every shard measured one phase");
        assert!(e[0] > 0, "a shard measured nothing: {doc}");
        sum[0] += e[0];
    }
    let doc = run_doc(s, &merged, &id);
    assert_eq!(events(&doc), sum, "merged events are the shards' sum");
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
    let spread = starts.iter().fold(f64::MIN, |a, &b| a.max(b))
        - starts.iter().fold(f64::MAX, |a, &b| a.min(b));
    println!(
        "{}merged events {sum:?}, shards' starts {:.1} ms apart",
        stdout(&o),
        spread * 1e3
    );
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
