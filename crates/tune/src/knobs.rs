//! The knob space: a curated list of the InnoDB and server variables that matter for OLTP, each
//! with candidate values tied to the host (memory) and the data (its size), kept only when the
//! live server has the variable, can change it with `SET GLOBAL`, and the change can do
//! something here (no larger buffer pool for data the pool already holds, no `sync_binlog`
//! without a binary log). Durability knobs join only with `--durability relaxed`.

use crate::TuneError;
use qpslab_core::advise::Durability;
use qpslab_core::live::sql_literal;
use std::collections::BTreeMap;

const MIB: u64 = 1 << 20;
/// Buffer pool sizes are multiples of this (the default chunk size).
const POOL_STEP: u64 = 128 * MIB;

/// What the candidate values are derived from.
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// The host's memory (0 when unknown: a server elsewhere).
    pub memory_bytes: u64,
    /// The host's memory free to take now (`MemAvailable`; None when unknown: a server
    /// elsewhere).
    pub available_bytes: Option<u64>,
    /// InnoDB data and indexes on the server.
    pub data_bytes: u64,
}

/// A knob's candidate values, or why it has none worth trying on this server.
type Values = Result<Vec<String>, String>;

/// One entry of the curated list.
struct KnobDef {
    name: &'static str,
    /// Changing it trades crash safety for speed.
    durability: bool,
    values: fn(&Sizes, &BTreeMap<String, String>) -> Values,
}

fn fixed(values: &[&str]) -> Values {
    Ok(values.iter().map(|v| v.to_string()).collect())
}

/// What the data warrants, within what the host can spare: a pool that holds the data with
/// half again to grow, and at most one of twice the data; never more than the pool now plus half
/// of the memory free now, nor 60% of the host's memory (the usual ceiling for a dedicated
/// server); in 128 MiB steps. A pool that already holds the data with that room has nothing to
/// gain from growing.
fn pool_sizes(s: &Sizes, vars: &BTreeMap<String, String>) -> Values {
    let step_up = |b: u64| b.div_ceil(POOL_STEP).max(1) * POOL_STEP;
    let current = vars
        .get("innodb_buffer_pool_size")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let fit = step_up(s.data_bytes.saturating_mul(3) / 2);
    if current >= fit {
        return Err(format!(
            "the pool ({} MiB) already holds the data ({} MiB) with room to grow",
            current / MIB,
            s.data_bytes.div_ceil(MIB)
        ));
    }
    let mut ceiling = step_up(s.data_bytes.saturating_mul(2));
    if s.memory_bytes > 0 {
        ceiling = ceiling.min(s.memory_bytes * 6 / 10 / POOL_STEP * POOL_STEP);
    }
    if let Some(free) = s.available_bytes {
        ceiling = ceiling.min((current + free / 2) / POOL_STEP * POOL_STEP);
    }
    let mut sizes: Vec<u64> = [fit, ceiling]
        .into_iter()
        .filter(|&b| b > current && b <= ceiling)
        .collect();
    sizes.dedup();
    if sizes.is_empty() {
        return Err(format!(
            "no room on this host for a pool larger than {} MiB (the data: {} MiB)",
            current / MIB,
            s.data_bytes.div_ceil(MIB)
        ));
    }
    Ok(sizes.iter().map(|b| format!("{}M", b / MIB)).collect())
}

/// Up to the server's own ceiling (`innodb_io_capacity_max`), which refuses more.
fn io_capacity(_: &Sizes, vars: &BTreeMap<String, String>) -> Values {
    let max = vars
        .get("innodb_io_capacity_max")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(2000);
    Ok([200u64, 1000, 2000]
        .into_iter()
        .filter(|&v| v <= max)
        .map(|v| v.to_string())
        .collect())
}

/// `sync_binlog` does nothing without a binary log.
fn sync_binlog(_: &Sizes, vars: &BTreeMap<String, String>) -> Values {
    match vars.get("log_bin").map(|v| v.to_ascii_uppercase()) {
        Some(v) if v == "OFF" || v == "0" => {
            Err("no binary log here (log_bin is OFF): it does nothing".into())
        }
        _ => fixed(&["0", "1"]),
    }
}

const KNOBS: &[KnobDef] = &[
    KnobDef {
        name: "innodb_buffer_pool_size",
        durability: false,
        values: pool_sizes,
    },
    KnobDef {
        name: "innodb_log_file_size",
        durability: false,
        values: |_, _| fixed(&["256M", "1G"]),
    },
    KnobDef {
        name: "innodb_io_capacity",
        durability: false,
        values: io_capacity,
    },
    KnobDef {
        name: "innodb_flush_method",
        durability: false,
        values: |_, _| fixed(&["O_DIRECT", "fsync"]),
    },
    KnobDef {
        name: "innodb_adaptive_hash_index",
        durability: false,
        values: |_, _| fixed(&["ON", "OFF"]),
    },
    KnobDef {
        name: "innodb_flush_neighbors",
        durability: false,
        values: |_, _| fixed(&["0", "1"]),
    },
    KnobDef {
        name: "table_open_cache",
        durability: false,
        values: |_, _| fixed(&["2000", "8000"]),
    },
    KnobDef {
        name: "thread_cache_size",
        durability: false,
        values: |_, _| fixed(&["16", "128"]),
    },
    KnobDef {
        name: "innodb_flush_log_at_trx_commit",
        durability: true,
        values: |_, _| fixed(&["1", "2", "0"]),
    },
    KnobDef {
        name: "sync_binlog",
        durability: true,
        values: sync_binlog,
    },
    KnobDef {
        name: "innodb_doublewrite",
        durability: true,
        values: |_, _| fixed(&["ON", "OFF"]),
    },
];

/// A knob of this server: its current value and the other values worth trying.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    /// The variable.
    pub name: String,
    /// Its value now (the baseline).
    pub current: String,
    /// Candidate values, none equal to the current one.
    pub values: Vec<String>,
    /// It trades crash safety for speed.
    pub durability: bool,
}

/// The knobs to search, and those of the list left out with the reason.
#[derive(Clone, Debug, Default)]
pub struct Space {
    /// The knobs, in the list's order.
    pub knobs: Vec<Knob>,
    /// `name: reason` for each knob of the list not searched.
    pub skipped: Vec<String>,
}

/// Whether two spellings of a value are the same setting (`256M` and `268435456`, `on`/`ON`).
pub fn same_value(a: &str, b: &str) -> bool {
    sql_literal(a).trim_matches('\'') == sql_literal(b).trim_matches('\'')
}

/// What the server says about its variables.
pub struct ServerVariables<'a> {
    /// `SHOW GLOBAL VARIABLES`.
    pub variables: &'a BTreeMap<String, String>,
    /// Whether a variable needs a restart to change.
    pub needs_restart: &'a dyn Fn(&str) -> bool,
}

/// The knob space of `server` under `durability`, narrowed to `only` when given. A named knob
/// that is not in the list, that the server lacks, that needs a restart, or that changes
/// durability under `strict` is the user's error (one line).
pub fn space(
    server: &ServerVariables,
    sizes: &Sizes,
    durability: Durability,
    only: &[String],
) -> Result<Space, TuneError> {
    for name in only {
        check_named(server, durability, name)?;
    }
    let mut out = Space::default();
    for def in KNOBS {
        if !only.is_empty() && !only.iter().any(|n| n == def.name) {
            continue;
        }
        let Some(current) = server.variables.get(def.name) else {
            continue; // a variable the server lacks is never named
        };
        if (server.needs_restart)(def.name) {
            out.skipped.push(format!("{}: needs a restart", def.name));
            continue;
        }
        if def.durability && durability == Durability::Strict {
            out.skipped
                .push(format!("{}: durability (strict)", def.name));
            continue;
        }
        let values: Vec<String> = match (def.values)(sizes, server.variables) {
            Ok(values) => values,
            Err(why) => {
                out.skipped.push(format!("{}: {why}", def.name));
                continue;
            }
        };
        let values: Vec<String> = values
            .into_iter()
            .filter(|v| !same_value(v, current))
            .collect();
        if !values.is_empty() {
            out.knobs.push(Knob {
                name: def.name.to_string(),
                current: current.clone(),
                values,
                durability: def.durability,
            });
        }
    }
    if out.knobs.is_empty() {
        let why = match out.skipped.is_empty() {
            true => String::new(),
            false => format!(": {}", out.skipped.join("; ")),
        };
        return Err(TuneError::Knobs(format!(
            "no knob left to tune on this server (see --knobs and --durability){why}"
        )));
    }
    Ok(out)
}

/// The first of `names` that is not in the list, as the user's error ([`TuneError::Knobs`]).
pub fn check_known(names: &[String]) -> Result<(), TuneError> {
    for name in names {
        if !KNOBS.iter().any(|d| d.name == name) {
            let known: Vec<&str> = KNOBS.iter().map(|d| d.name).collect();
            return Err(TuneError::Knobs(format!(
                "--knobs: unknown knob '{name}' (tunable: {})",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

fn check_named(
    server: &ServerVariables,
    durability: Durability,
    name: &str,
) -> Result<(), TuneError> {
    check_known(&[name.to_string()])?;
    let Some(def) = KNOBS.iter().find(|d| d.name == name) else {
        return Ok(());
    };
    if !server.variables.contains_key(name) {
        return Err(TuneError::Knobs(format!(
            "--knobs: this server has no variable '{name}'"
        )));
    }
    if (server.needs_restart)(name) {
        return Err(TuneError::Knobs(format!(
            "--knobs: '{name}' needs a restart on this server; tune changes only what SET GLOBAL can"
        )));
    }
    if def.durability && durability == Durability::Strict {
        return Err(TuneError::Knobs(format!(
            "--knobs: '{name}' trades durability for speed; add --durability relaxed to tune it"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    const SIZES: Sizes = Sizes {
        memory_bytes: 16 << 30,
        available_bytes: Some(12 << 30),
        data_bytes: 300 * MIB,
    };

    fn space_of(
        v: &BTreeMap<String, String>,
        d: Durability,
        only: &[&str],
    ) -> Result<Space, String> {
        let restart = |n: &str| n == "innodb_flush_method";
        let server = ServerVariables {
            variables: v,
            needs_restart: &restart,
        };
        let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
        space(&server, &SIZES, d, &only).map_err(|e| e.to_string())
    }

    #[test]
    fn a_variable_the_server_lacks_is_dropped() {
        let v = vars(&[
            ("innodb_buffer_pool_size", "134217728"),
            ("innodb_flush_method", "O_DIRECT"),
            ("thread_cache_size", "8"),
        ]);
        let s = space_of(&v, Durability::Strict, &[]).unwrap();
        let names: Vec<&str> = s.knobs.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["innodb_buffer_pool_size", "thread_cache_size"]);
        assert_eq!(s.skipped, ["innodb_flush_method: needs a restart"]);
        let e = space_of(&v, Durability::Strict, &["innodb_io_capacity"]).unwrap_err();
        assert!(e.contains("no variable 'innodb_io_capacity'"), "{e}");
    }

    fn pools(current: u64, sizes: Sizes) -> Values {
        pool_sizes(
            &sizes,
            &vars(&[("innodb_buffer_pool_size", &current.to_string())]),
        )
    }

    #[test]
    fn pool_sizes_follow_the_data_within_the_memory_free() {
        // 300 MiB of data behind the stock 128 MiB: 1.5x and 2x the data, in 128 MiB steps.
        assert_eq!(pools(128 * MIB, SIZES).unwrap(), ["512M", "640M"]);
        // Issue 47: 20 MB of data on a 24 GiB host: the stock pool holds it, nothing to grow.
        let small = Sizes {
            memory_bytes: 24 << 30,
            available_bytes: Some(20 << 30),
            data_bytes: 20 * MIB,
        };
        let why = pools(128 * MIB, small).unwrap_err();
        assert!(why.contains("already holds the data (20 MiB)"), "{why}");
        // Little memory free: no more than the pool now plus half of it.
        let tight = Sizes {
            available_bytes: Some(600 * MIB),
            ..SIZES
        };
        assert_eq!(pools(128 * MIB, tight).unwrap(), ["384M"]);
        let none = Sizes {
            available_bytes: Some(100 * MIB),
            ..SIZES
        };
        assert!(pools(128 * MIB, none).unwrap_err().contains("no room"));
        // A server elsewhere: the data alone decides.
        let remote = Sizes {
            memory_bytes: 0,
            available_bytes: None,
            data_bytes: 10 << 30,
        };
        assert_eq!(pools(128 * MIB, remote).unwrap(), ["15360M", "20480M"]);
        // Data far beyond the host: half the memory free binds first...
        let big = Sizes {
            data_bytes: 40 << 30,
            available_bytes: Some(15 << 30),
            ..SIZES
        };
        assert_eq!(pools(128 * MIB, big).unwrap(), ["7808M"]);
        // ...and 60% of the host's memory above a pool that is large already.
        let grown = Sizes {
            available_bytes: Some(6 << 30),
            ..big
        };
        assert_eq!(pools(8 << 30, grown).unwrap(), ["9728M"]);
    }

    #[test]
    fn sync_binlog_is_left_out_without_a_binary_log() {
        let v = vars(&[
            ("innodb_flush_log_at_trx_commit", "1"),
            ("sync_binlog", "0"),
            ("log_bin", "OFF"),
        ]);
        let s = space_of(&v, Durability::Relaxed, &[]).unwrap();
        let names: Vec<&str> = s.knobs.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["innodb_flush_log_at_trx_commit"]);
        assert!(
            s.skipped[0].starts_with("sync_binlog: no binary log"),
            "{:?}",
            s.skipped
        );
    }

    #[test]
    fn durability_knobs_need_relaxed_and_are_marked() {
        let v = vars(&[
            ("innodb_flush_log_at_trx_commit", "1"),
            ("sync_binlog", "0"),
        ]);
        assert!(space_of(&v, Durability::Strict, &[]).is_err());
        let e = space_of(&v, Durability::Strict, &["sync_binlog"]).unwrap_err();
        assert!(e.contains("--durability relaxed"), "{e}");
        let s = space_of(&v, Durability::Relaxed, &[]).unwrap();
        assert!(s.knobs.iter().all(|k| k.durability));
        assert_eq!(s.knobs[0].values, ["2", "0"]);
        assert_eq!(s.knobs[1].values, ["1"]);
    }

    #[test]
    fn named_knobs_are_checked() {
        let v = vars(&[
            ("innodb_flush_method", "fsync"),
            ("table_open_cache", "2000"),
        ]);
        let e = space_of(&v, Durability::Strict, &["query_cache_size"]).unwrap_err();
        assert!(
            e.starts_with("--knobs: unknown knob 'query_cache_size'"),
            "{e}"
        );
        let e = space_of(&v, Durability::Strict, &["innodb_flush_method"]).unwrap_err();
        assert!(e.contains("needs a restart"), "{e}");
        let s = space_of(&v, Durability::Strict, &["table_open_cache"]).unwrap();
        assert_eq!(s.knobs.len(), 1);
        assert_eq!(s.knobs[0].values, ["8000"]);
    }

    #[test]
    fn values_compare_across_spellings() {
        assert!(same_value("256M", "268435456"));
        assert!(same_value("on", "ON"));
        assert!(!same_value("1", "2"));
    }
}
