//! qpslab under the launchers users already have: a real Slurm (`srun -n 3`) and Open MPI
//! (`mpirun -n 3`) on this machine, started by the test (tests/common/launchers.rs). A launcher
//! that cannot run here fails the test with the reason, never passes it silently.

mod common;
use common::launchers::{mpirun, Slurm};
use common::*;

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
