//! The digest path allocates nothing per entry: digesting a log fifty times over allocates
//! about what digesting it once does (buffers and one record per class and connection).

use qpslab_fuzzkit::measure;
use qpslab_sqllog::digest::digest_log;
use qpslab_sqllog::{LogReader, LogType};

#[global_allocator]
static ALLOC: qpslab_fuzzkit::CountingAlloc = qpslab_fuzzkit::CountingAlloc;

fn allocated(log: &[u8], kind: LogType) -> (usize, u64) {
    let (entries, used) = measure(|| {
        let mut r = LogReader::new(log, kind).unwrap();
        digest_log(&mut r, "x", Some(3), |_| {}).unwrap().entries
    });
    (used.total, entries)
}

#[test]
fn digesting_allocates_per_class_not_per_entry() {
    let logs = [
        (
            &include_bytes!("data/mariadb-10.11-slow.log")[..],
            LogType::Slow,
        ),
        (include_bytes!("data/mysql-8.0-slow.log"), LogType::Slow),
        (
            include_bytes!("data/mariadb-10.11-general.log"),
            LogType::General,
        ),
    ];
    for (log, kind) in logs {
        let (once, n) = allocated(log, kind);
        let (fifty, n50) = allocated(&log.repeat(50), kind);
        assert_eq!(n50, 50 * n);
        assert!(
            fifty < once + once / 2,
            "{n50} entries allocated {fifty} bytes, {n} entries {once}"
        );
    }
}
