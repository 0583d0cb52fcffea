//! How a line or a row names its setting of the swept parameters, and what its throughput is
//! counted in. A label is cut to fit its chart, so it leads with what ran (the workload, a
//! fileio test mode) and says each setting by its short value: `rndrd · 4K`, not
//! `file_block_size=4K · file_test_mode=rndrd`. A fileio phase counts I/O operations and MiB,
//! never transactions.

use super::Line;

/// A swept setting `name=value` as a label says it, and its place (0: what ran, first).
fn short(kv: &str) -> (u8, String) {
    let Some((name, value)) = kv.split_once('=') else {
        return (1, kv.to_string());
    };
    let text = match name {
        "workload" | "file_test_mode" => return (0, value.to_string()),
        "file_block_size" | "file_io_mode" | "file_extra_flags" | "file_fsync_mode" => bytes(value),
        "file_total_size" => format!("{} total", bytes(value)),
        "file_num" => format!("{value} files"),
        "file_fsync_freq" => format!("fsync every {value}"),
        "file_rw_ratio" => format!("{value} reads per write"),
        _ => kv.to_string(),
    };
    (1, text)
}

/// A size in bytes as its short form (`4096` → `4K`); any other text as it is.
fn bytes(value: &str) -> String {
    match value.parse::<u64>() {
        Ok(n) if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{}G", n >> 30),
        Ok(n) if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{}M", n >> 20),
        Ok(n) if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{}K", n >> 10),
        _ => value.to_string(),
    }
}

/// The parts of a point's key (`file_block_size=4K file_test_mode=rndrd threads=16`) other
/// than its sessions, as a label says them: what ran first, then the rest in the key's order
/// (`rndrd`, `4K`).
pub(crate) fn parts(key: &str) -> Vec<String> {
    let mut out: Vec<(u8, String)> = key
        .split(' ')
        .filter(|kv| !kv.is_empty() && !kv.starts_with("threads="))
        .map(short)
        .collect();
    out.sort_by_key(|(rank, _)| *rank);
    out.into_iter().map(|(_, text)| text).collect()
}

/// Whether the lines measured file I/O (fileio cells, `qpslab io`): their throughput is I/O
/// operations per second and MiB/s.
pub(super) fn is_io(lines: &[Line<'_>]) -> bool {
    lines
        .iter()
        .flat_map(|l| l.by_threads.values().flatten())
        .any(|p| p.phase.result.io.is_some())
}

/// The unit of the lines' events per second: `IOPS` for file I/O, else `transactions/s`.
pub(super) fn throughput_unit(lines: &[Line<'_>]) -> &'static str {
    if is_io(lines) {
        "IOPS"
    } else {
        "transactions/s"
    }
}

/// MiB per I/O operation of a line: its requests' block size (none: not file I/O).
pub(super) fn mib_per_op(l: &Line<'_>) -> Option<f64> {
    let p = l.by_threads.values().flatten().next()?;
    p.phase.result.io.as_ref()?;
    let io = p.meta().plan.fileio.as_ref()?;
    Some(io.block_size as f64 / qpslab_core::fileio::MIB)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fileio_setting_is_named_by_its_mode_first_and_short_values() {
        assert_eq!(
            parts("file_block_size=4K file_test_mode=rndrd threads=16"),
            ["rndrd", "4K"]
        );
        assert_eq!(
            parts("file_block_size=16384 file_num=4 file_test_mode=seqwr threads=1"),
            ["seqwr", "16K", "4 files"]
        );
        assert_eq!(
            parts("threads=8 transport=tcp workload=oltp_read_write"),
            ["oltp_read_write", "transport=tcp"]
        );
    }
}
