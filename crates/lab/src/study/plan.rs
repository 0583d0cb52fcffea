//! What `qpslab lab plan` shows of a loaded study before it runs: each cell's workload,
//! threads and time, the server starts and the time at least spent ([`Plan`]), and the cells
//! as JSON ([`PlanDoc`]).

use super::Loaded;
use qpslab_core::cell::Cell;
use serde::Serialize;

/// A study's plan: its cells in execution order, with what they cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The study's name.
    pub name: String,
    /// How many setups it has.
    pub setups: usize,
    /// Its cells, in execution order.
    pub cells: Vec<CellPlan>,
    /// How many times a server starts (a fileio cell starts none).
    pub restarts: usize,
    /// The seconds of warm-up and measurement, at least.
    pub seconds: f64,
}

/// One cell of a [`Plan`].
#[derive(Clone, Debug, PartialEq)]
pub struct CellPlan {
    /// The cell.
    pub cell: Cell,
    /// Its workload's name.
    pub workload: String,
    /// Its (first) thread count.
    pub threads: u32,
    /// Its warm-up and measurement time (none for a fileio cell's warm-up).
    pub seconds: f64,
}

/// The plan as `lab plan --json` prints it: the study's name and its cells. Printed through a
/// `serde_json::Value`, whose keys are in order.
#[derive(Clone, Debug, Serialize)]
pub struct PlanDoc<'a> {
    /// The cells, in execution order.
    pub cells: Vec<&'a Cell>,
    /// The study's name.
    pub name: &'a str,
}

impl Loaded {
    /// The study's plan.
    pub fn plan(&self) -> Plan {
        let e = &self.expanded;
        let mut seconds = 0.0;
        let mut restarts = 0;
        let mut prev = None;
        let cells = e
            .cells
            .iter()
            .map(|c| {
                let p = c.options.to_plan().unwrap_or_else(|_| {
                    // load() checked every cell's plan.
                    qpslab_core::RunPlan::new(qpslab_core::WorkloadOptions::new(
                        qpslab_core::WorkloadKind::OltpReadOnly,
                    ))
                });
                // A fileio cell runs fio: no server, no warm-up.
                let io = p.fileio.is_some();
                let t = if io { 0.0 } else { p.warmup_s } + p.stop.time_s.unwrap_or(0.0);
                seconds += t;
                if !io && prev != Some(c.setup) {
                    restarts += 1;
                    prev = Some(c.setup);
                }
                CellPlan {
                    cell: c.cell.clone(),
                    workload: p.workload_name(),
                    threads: p.threads[0],
                    seconds: t,
                }
            })
            .collect();
        Plan {
            name: self.spec.name.clone(),
            setups: e.setups.len(),
            cells,
            restarts,
            seconds,
        }
    }

    /// The study's cells as `lab plan --json` prints them.
    pub fn plan_doc(&self) -> PlanDoc<'_> {
        PlanDoc {
            cells: self.expanded.cells.iter().map(|c| &c.cell).collect(),
            name: &self.spec.name,
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_plan_counts_server_starts_and_time_and_its_doc_holds_every_cell() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::fs::write(
            &path,
            "name = \"p\"\n[defaults]\nthreads = 4\nwarmup = \"5s\"\ntime = \"10s\"\n\
             [[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n\
             set = { innodb_buffer_pool_size = \"64M\" }\n\
             [sweep]\nworkload = [\"oltp_read_only\", \"oltp_point_select\"]\n",
        )
        .unwrap();
        let l = super::super::load(&path).unwrap();
        let plan = l.plan();
        assert_eq!(plan.name, "p");
        assert_eq!(plan.setups, 2);
        assert_eq!(plan.cells.len(), 4);
        assert_eq!(plan.seconds, 60.0);
        assert!(plan.restarts >= 2, "{}", plan.restarts);
        let v = serde_json::to_value(l.plan_doc()).unwrap();
        assert_eq!(v["name"], "p");
        assert_eq!(v["cells"].as_array().unwrap().len(), 4);
        assert_eq!(v["cells"][3]["seq"], 4);
    }
}
