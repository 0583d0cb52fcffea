//! Busy loops (`while :; do :; done`) beside a test: the neighbour a busy CI machine is, made
//! on purpose. Each is ended by its pid when the value is dropped.

use std::process::{Child, Command, Stdio};

/// Busy loops, killed and reaped when dropped.
pub struct BusyLoops(Vec<Child>);

impl BusyLoops {
    /// `n` loops, wherever the scheduler puts them.
    pub fn start(n: usize) -> BusyLoops {
        BusyLoops((0..n).map(|_| spawn(&[])).collect())
    }

    /// One loop pinned to `cpu` (through `taskset`).
    pub fn on_cpu(cpu: usize) -> BusyLoops {
        let cpu = cpu.to_string();
        BusyLoops(vec![spawn(&["taskset", "-c", &cpu])])
    }
}

fn spawn(prefix: &[&str]) -> Child {
    let mut argv: Vec<&str> = prefix.to_vec();
    argv.extend(["sh", "-c", "while :; do :; done"]);
    Command::new(argv[0])
        .args(&argv[1..])
        .stdout(Stdio::null())
        .spawn()
        .expect("a busy loop")
}

impl Drop for BusyLoops {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
