//! The digest path allocates nothing per entry: digesting a log fifty times over allocates
//! what digesting it once does, plus a small record per connection the log opens.

use qpslab_fuzzkit::measure;
use qpslab_sqllog::digest::{digest_log, Bound};
use qpslab_sqllog::{LogReader, LogType};

#[global_allocator]
static ALLOC: qpslab_fuzzkit::CountingAlloc = qpslab_fuzzkit::CountingAlloc;

fn allocated(log: &[u8], kind: LogType) -> (usize, u64) {
    let (entries, used) = measure(|| {
        let mut r = LogReader::new(log, kind).unwrap();
        digest_log(&mut r, "x", Some(3), Bound::NONE, |_| {})
            .unwrap()
            .entries
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
        // the slack is for a hash map's growth and the record of each new connection (a
        // general log's `Connect` lines), never a multiple of the entries
        let connects = log.windows(9).filter(|w| w == b" Connect\t").count();
        assert!(
            fifty <= once + 4096 + 50 * connects * 128,
            "{n50} entries allocated {fifty} bytes, {n} entries {once}"
        );
    }
}
