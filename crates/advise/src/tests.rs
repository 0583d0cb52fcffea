//! The rules on synthetic facts: a MariaDB 10.11, a MySQL 8.0 and an old MariaDB (10.3) that
//! lacks variables the newer ones have.

use super::rule::finding;
use super::*;
use qpslab_core::status::StatusValue;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn with(vars: &[(&str, &str)], status: &[(&str, u64)]) -> Facts {
    let mut f = Facts::default();
    for (k, v) in vars {
        f.server.variables.insert(k.to_string(), v.to_string());
    }
    for (k, v) in status {
        f.status.insert(k.to_string(), StatusValue::Int(*v));
    }
    f
}

/// MariaDB 10.11 as installed here: stock settings, 2 GiB of data, two hours of a workload.
fn mariadb_10_11() -> Facts {
    let mut f = with(
        &[
            ("innodb_buffer_pool_size", "134217728"),
            ("innodb_log_file_size", "100663296"),
            ("innodb_flush_method", "O_DIRECT"),
            ("innodb_io_capacity", "200"),
            ("innodb_io_capacity_max", "2000"),
            ("table_open_cache", "2000"),
            ("open_files_limit", "32768"),
            ("thread_cache_size", "151"),
            ("thread_handling", "one-thread-per-connection"),
            ("tmp_table_size", "16777216"),
            ("max_heap_table_size", "16777216"),
            ("max_connections", "151"),
            ("performance_schema", "OFF"),
            ("query_cache_type", "OFF"),
            ("query_cache_size", "1048576"),
            ("innodb_flush_log_at_trx_commit", "1"),
            ("sync_binlog", "0"),
            ("log_bin", "OFF"),
            ("innodb_doublewrite", "ON"),
        ],
        &[
            ("Uptime", 7200),
            ("Innodb_buffer_pool_reads", 81_000),
            ("Innodb_buffer_pool_read_requests", 920_000),
            ("Innodb_os_log_written", 8 * GIB),
            ("Innodb_log_waits", 0),
            ("Opened_tables", 50),
            ("Open_tables", 40),
            ("Connections", 200),
            ("Created_tmp_tables", 10),
            ("Max_used_connections", 20),
        ],
    );
    f.server.flavor = "mariadb".into();
    f.server.version = "10.11.19-MariaDB".into();
    for (k, ro) in [
        ("innodb_log_file_size", false),
        ("innodb_buffer_pool_size", false),
        ("innodb_flush_method", true),
        ("performance_schema", true),
    ] {
        f.read_only.insert(k.into(), ro);
    }
    f.innodb_bytes = 2 * GIB;
    f
}

/// MySQL 8.0.36: redo capacity, buffer pool instances, performance schema on, no query cache;
/// no restart flags from the server.
fn mysql_8() -> Facts {
    let mut f = with(
        &[
            ("innodb_buffer_pool_size", &(4 * GIB).to_string()),
            ("innodb_buffer_pool_instances", "1"),
            ("innodb_redo_log_capacity", "104857600"),
            ("innodb_flush_method", "fsync"),
            ("performance_schema", "ON"),
            ("tmp_table_size", "16777216"),
            ("max_heap_table_size", "16777216"),
            ("max_connections", "151"),
            ("innodb_flush_log_at_trx_commit", "1"),
            ("sync_binlog", "1"),
            ("log_bin", "ON"),
            ("innodb_doublewrite", "ON"),
        ],
        &[
            ("Uptime", 3600),
            ("Innodb_os_log_written", GIB),
            ("Created_tmp_tables", 10_000),
            ("Created_tmp_disk_tables", 3_000),
            ("Max_used_connections", 150),
            ("Connection_errors_max_connections", 12),
        ],
    );
    f.server.flavor = "mysql".into();
    f.server.version = "8.0.36".into();
    f.innodb_bytes = GIB;
    f
}

/// MariaDB 10.3: two redo files, the query cache on, no innodb_io_capacity_max and no
/// max_heap_table_size (removed here to stand for any variable a version lacks).
fn mariadb_10_3() -> Facts {
    let mut f = with(
        &[
            ("innodb_buffer_pool_size", "134217728"),
            ("innodb_log_file_size", "50331648"),
            ("innodb_log_files_in_group", "2"),
            ("innodb_io_capacity", "200"),
            ("tmp_table_size", "16777216"),
            ("query_cache_type", "ON"),
            ("query_cache_size", "1048576"),
            ("table_open_cache", "400"),
            ("thread_cache_size", "8"),
        ],
        &[
            ("Uptime", 7200),
            ("Innodb_os_log_written", 4 * GIB),
            ("Created_tmp_tables", 10_000),
            ("Created_tmp_disk_tables", 5_000),
            ("Opened_tables", 9_000),
            ("Open_tables", 400),
            ("Connections", 50_000),
            ("Threads_created", 20_000),
            ("Max_used_connections", 100),
        ],
    );
    f.server.flavor = "mariadb".into();
    f.read_only.insert("innodb_log_file_size".into(), true);
    f.innodb_bytes = 64 * MIB;
    f
}

fn local(f: &mut Facts, ram: u64, rotational: bool) {
    let mut l = Local::default();
    l.host.memory_bytes = ram;
    l.host.thp = "always".into();
    l.host.swappiness = "60".into();
    l.host.cpu_governor = Some("powersave".into());
    l.storage.rotational = Some(rotational);
    l.storage.device = Some("/dev/vda1".into());
    l.storage.io_scheduler = Some("bfq".into());
    l.storage.fs_type = Some("ext4".into());
    f.local = Some(l);
}

fn find<'a>(all: &'a [Finding], variable: &str) -> Option<&'a Finding> {
    all.iter().find(|f| f.variable == variable)
}

fn rec(all: &[Finding], variable: &str) -> Option<String> {
    find(all, variable).and_then(|f| f.recommended.clone())
}

#[test]
fn no_rule_names_a_variable_the_server_lacks() {
    for mode in [Durability::Strict, Durability::Relaxed] {
        for (name, mut f) in [
            ("10.11", mariadb_10_11()),
            ("8.0", mysql_8()),
            ("10.3", mariadb_10_3()),
        ] {
            for l in [false, true] {
                if l {
                    local(&mut f, 8 * GIB, false);
                }
                for x in raw(&f, mode) {
                    assert!(
                        names_only_known(&f, &x),
                        "{name}: a rule named {} which the server lacks",
                        x.variable
                    );
                }
            }
        }
    }
}

#[test]
fn advise_drops_a_finding_for_a_missing_variable() {
    let f = mariadb_10_3();
    let rogue = finding(
        FindingKind::Server,
        "innodb_redo_log_capacity",
        "0",
        None,
        Severity::Low,
        String::new(),
    );
    assert!(!names_only_known(&f, &rogue));
    let os = finding(
        FindingKind::Os,
        "vm.swappiness",
        "60",
        None,
        Severity::Low,
        String::new(),
    );
    assert!(names_only_known(&f, &os));
}

#[test]
fn a_stock_pool_in_front_of_more_data_is_the_headline() {
    let mut f = mariadb_10_11();
    local(&mut f, 8 * GIB, false);
    let all = advise(&f, Durability::Strict);
    let bp = &all[0];
    assert_eq!(bp.variable, "innodb_buffer_pool_size");
    assert_eq!(bp.severity, Severity::High);
    assert_eq!(bp.recommended, Some((2 * GIB + GIB / 2).to_string()));
    assert!(!bp.restart_needed);
    assert!(
        bp.reason.starts_with("data 2 GiB, buffer pool 128 MiB, hit ratio 91.2% (Innodb_buffer_pool_reads 81k of 920k)"),
        "{}",
        bp.reason
    );
    // A small machine caps the pool at 70% of its RAM.
    local(&mut f, 2 * GIB, false);
    let capped = rec(&advise(&f, Durability::Strict), "innodb_buffer_pool_size");
    assert_eq!(capped, Some((11 * 128 * MIB).to_string()));
    // A remote server: the host's RAM is unknown, and said so.
    f.local = None;
    let all = advise(&f, Durability::Strict);
    assert!(find(&all, "innodb_buffer_pool_size")
        .unwrap()
        .reason
        .contains("RAM unknown"));
    // A pool larger than the machine's RAM allows comes down to 70% of it.
    f.server
        .variables
        .insert("innodb_buffer_pool_size".into(), (8 * GIB).to_string());
    local(&mut f, 4 * GIB, false);
    let big = advise(&f, Durability::Strict);
    let bp = find(&big, "innodb_buffer_pool_size").unwrap();
    assert_eq!(bp.recommended, Some((22 * 128 * MIB).to_string()));
    assert!(
        bp.reason.contains("more than 90% of RAM 4 GiB"),
        "{}",
        bp.reason
    );
    f.local = None;
    f.server
        .variables
        .insert("innodb_buffer_pool_size".into(), (128 * MIB).to_string());
    // Data that fits: nothing to recommend.
    f.innodb_bytes = 64 * MIB;
    let fits = advise(&f, Durability::Strict);
    let bp = find(&fits, "innodb_buffer_pool_size").unwrap();
    assert_eq!(
        (bp.recommended.as_ref(), bp.severity),
        (None, Severity::Info)
    );
}

#[test]
fn the_redo_log_holds_an_hour_of_writes_and_waits_for_evidence() {
    let mut f = mariadb_10_11();
    let all = advise(&f, Durability::Strict);
    let redo = find(&all, "innodb_log_file_size").unwrap();
    // 8 GiB in 2 h: 4 GiB an hour; MariaDB 10.11 resizes it at run time (its own flag).
    assert_eq!(redo.recommended, Some((4 * GIB).to_string()));
    assert!(!redo.restart_needed);
    assert!(
        redo.reason.contains("Innodb_os_log_written 8 GiB in 2.0 h"),
        "{}",
        redo.reason
    );
    f.status.insert("Uptime".into(), StatusValue::Int(60));
    let early = advise(&f, Durability::Strict);
    let redo = find(&early, "innodb_log_file_size").unwrap();
    assert_eq!(redo.recommended, None);
    assert!(
        redo.reason.starts_with("uptime 60 s: too short"),
        "{}",
        redo.reason
    );
    // Two files in the group: the size is per file, and 10.3 needs a restart.
    let old = advise(&mariadb_10_3(), Durability::Strict);
    let redo = find(&old, "innodb_log_file_size").unwrap();
    assert_eq!(redo.recommended, Some((GIB).to_string()));
    assert!(redo.restart_needed);
}

#[test]
fn mysql_8_knobs_and_its_restart_table() {
    let all = advise(&mysql_8(), Durability::Strict);
    assert_eq!(rec(&all, "innodb_redo_log_capacity"), Some(GIB.to_string()));
    assert!(find(&all, "innodb_log_file_size").is_none());
    assert_eq!(rec(&all, "innodb_buffer_pool_instances"), Some("4".into()));
    assert!(
        find(&all, "innodb_buffer_pool_instances")
            .unwrap()
            .restart_needed
    );
    let ps = find(&all, "performance_schema").unwrap();
    assert_eq!(
        (ps.recommended.as_deref(), ps.restart_needed),
        (Some("OFF"), true)
    );
    assert_eq!(rec(&all, "innodb_flush_method"), Some("O_DIRECT".into()));
    assert_eq!(rec(&all, "max_connections"), Some("226".into()));
    assert_eq!(rec(&all, "tmp_table_size"), Some((64 * MIB).to_string()));
    assert_eq!(
        rec(&all, "max_heap_table_size"),
        Some((64 * MIB).to_string())
    );
    assert!(find(&all, "query_cache_type").is_none());
    // MariaDB ignores the instances (10.5) and drops the variable (10.6).
    let mut maria = mysql_8();
    maria.server.flavor = "mariadb".into();
    assert!(find(
        &advise(&maria, Durability::Strict),
        "innodb_buffer_pool_instances"
    )
    .is_none());
}

#[test]
fn old_mariadb_caches_and_its_missing_variables() {
    let all = advise(&mariadb_10_3(), Durability::Strict);
    assert_eq!(rec(&all, "query_cache_type"), Some("OFF".into()));
    assert_eq!(rec(&all, "table_open_cache"), Some("800".into()));
    assert_eq!(rec(&all, "thread_cache_size"), Some("100".into()));
    assert!(find(&all, "thread_cache_size")
        .unwrap()
        .reason
        .contains("Threads_created 20k of 50k connections (40.0%)"));
    // The in-memory limit is the smaller of two variables: with one missing, no advice.
    assert!(find(&all, "tmp_table_size").is_none());
    assert!(find(&all, "max_heap_table_size").is_none());
    // The 10.11 set has too few connections and temporary tables to judge: it says so.
    let stock = advise(&mariadb_10_11(), Durability::Strict);
    let t = find(&stock, "thread_cache_size").unwrap();
    assert!(
        t.recommended.is_none() && t.reason.contains("too few"),
        "{}",
        t.reason
    );
    assert!(find(&stock, "tmp_table_size")
        .unwrap()
        .reason
        .contains("too few"));
}

#[test]
fn os_settings_only_for_a_local_server() {
    let mut f = mariadb_10_11();
    assert!(advise(&f, Durability::Strict)
        .iter()
        .all(|x| x.kind != FindingKind::Os));
    local(&mut f, 8 * GIB, false);
    let all = advise(&f, Durability::Strict);
    assert_eq!(rec(&all, "transparent_hugepage"), Some("madvise".into()));
    assert_eq!(rec(&all, "vm.swappiness"), Some("1".into()));
    assert_eq!(
        rec(&all, "cpufreq scaling_governor"),
        Some("performance".into())
    );
    assert_eq!(rec(&all, "I/O scheduler of /dev/vda1"), Some("none".into()));
    assert!(all
        .iter()
        .filter(|x| x.kind == FindingKind::Os)
        .all(|x| !x.restart_needed));
    // SSD: io_capacity 200 → 1000 (the max of 2000 is already twice that).
    assert_eq!(rec(&all, "innodb_io_capacity"), Some("1000".into()));
    assert!(find(&all, "innodb_io_capacity_max").is_none());
    // A spinning disk with the stock 200 is fine; bfq is fine for it too.
    local(&mut f, 8 * GIB, true);
    let all = advise(&f, Durability::Strict);
    assert!(find(&all, "innodb_io_capacity").is_none());
    assert!(find(&all, "I/O scheduler of /dev/vda1").is_none());
}

#[test]
fn flush_method_is_left_alone_on_tmpfs() {
    let mut f = mysql_8();
    local(&mut f, 8 * GIB, false);
    f.local.as_mut().unwrap().storage.fs_type = Some("tmpfs".into());
    assert!(find(&advise(&f, Durability::Strict), "innodb_flush_method").is_none());
}

#[test]
fn durability_is_recommended_only_when_asked() {
    let f = mysql_8();
    let strict = advise(&f, Durability::Strict);
    let durable: Vec<_> = strict
        .iter()
        .filter(|x| x.kind == FindingKind::Durability)
        .collect();
    assert_eq!(durable.len(), 3);
    assert!(
        durable.iter().all(|x| x.recommended.is_none()),
        "{durable:?}"
    );
    assert!(durable[0]
        .reason
        .contains("not recommended without --durability relaxed"));
    let relaxed = advise(&f, Durability::Relaxed);
    assert_eq!(
        rec(&relaxed, "innodb_flush_log_at_trx_commit"),
        Some("2".into())
    );
    assert_eq!(rec(&relaxed, "sync_binlog"), Some("0".into()));
    assert_eq!(rec(&relaxed, "innodb_doublewrite"), None);
    // Without a binary log, sync_binlog is not mentioned.
    let maria = advise(&mariadb_10_11(), Durability::Relaxed);
    assert!(find(&maria, "sync_binlog").is_none());
}

/// The variables of the MariaDB 10.11 installed here (captured by the probe's tests), with the
/// counters of the MySQL 8 set so every counter rule has something to say.
fn captured_10_11() -> Facts {
    let mut f = mysql_8();
    f.server.variables = include_str!("../../probe/tests/data/mariadb-10.11-global-variables.tsv")
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    f.server.flavor = "mariadb".into();
    f
}

#[test]
fn a_real_10_11_variable_list_gets_no_advice_on_variables_it_lacks() {
    let mut f = captured_10_11();
    local(&mut f, 8 * GIB, false);
    for mode in [Durability::Strict, Durability::Relaxed] {
        let all = raw(&f, mode);
        assert!(all.iter().all(|x| names_only_known(&f, x)), "{all:?}");
        // Gone in 10.6 / absent in 10.11: never named.
        for gone in [
            "innodb_buffer_pool_instances",
            "innodb_log_files_in_group",
            "innodb_redo_log_capacity",
        ] {
            assert!(
                f.var(gone).is_none() && find(&all, gone).is_none(),
                "{gone}"
            );
        }
        // The redo log is sized by innodb_log_file_size on MariaDB.
        assert!(find(&all, "innodb_log_file_size").is_some());
    }
}

#[test]
fn applied_advice_is_not_repeated() {
    for (name, mut f) in [
        ("10.11", mariadb_10_11()),
        ("8.0", mysql_8()),
        ("10.3", mariadb_10_3()),
    ] {
        local(&mut f, 8 * GIB, false);
        let first = advise(&f, Durability::Relaxed);
        for x in first.iter().filter(|x| x.kind != FindingKind::Os) {
            if let Some(v) = &x.recommended {
                f.server.variables.insert(x.variable.clone(), v.clone());
            }
        }
        let again: Vec<_> = advise(&f, Durability::Relaxed)
            .into_iter()
            .filter(|x| x.kind != FindingKind::Os && x.recommends())
            .collect();
        assert!(
            again.is_empty(),
            "{name}: advised again after applying: {again:?}"
        );
    }
}
