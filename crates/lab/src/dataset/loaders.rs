//! How many connections load a dataset ([`default_loaders`]): derived at run time from the
//! CPUs the server may use, never from a constant measured on one machine.

use qpslab_core::{ConnectOptions, WorkloadOptions};

/// The default number of loader connections for `w`'s dataset on the server `target` reaches
/// (`server_pid`: its process, when known): see [`loaders_for`].
pub fn default_loaders(
    w: &WorkloadOptions,
    target: &ConnectOptions,
    server_pid: Option<u32>,
) -> u32 {
    let cpus = qpslab_probe::threads::server_cpus(target, server_pid)
        .filter(|c| !c.is_empty())
        .map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |c| c.len(),
        );
    loaders_for(qpslab_engine::workload::dataset::tables_used(w), cpus)
}

/// One loader per table, never more than two per CPU of the server (its CPUs when it runs
/// here, else this machine's): a table loaded by one connection gets its ids in ascending
/// order and InnoDB appends to full pages, while two loaders on one table split pages and
/// fight over its index. On a 16-core host, 8 x 500k rows: 8 loaders 643-664k rows/s (server
/// CPU 30 s), 16 loaders 391-399k rows/s (server CPU 103-106 s), sysbench's 8 threads
/// 494-527k. On 2 cores the cap keeps the earlier two per core (8 tables: 4 loaders).
pub fn loaders_for(tables: u32, server_cpus: usize) -> u32 {
    let most = 2 * u32::try_from(server_cpus).unwrap_or(u32::MAX / 2).max(1);
    tables.clamp(1, most)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loaders_follow_the_tables_and_never_oversubscribe_the_server() {
        assert_eq!(loaders_for(8, 16), 8, "one per table");
        assert_eq!(loaders_for(8, 2), 4, "two per server CPU at most");
        assert_eq!(loaders_for(64, 16), 32);
        assert_eq!(loaders_for(1, 64), 1);
        assert_eq!(loaders_for(0, 0), 1);
    }
}
