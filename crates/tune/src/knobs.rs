//! The knob space: a curated list of the InnoDB and server variables that matter for OLTP, each
//! with candidate values tied to the host (memory) and the data (its size), kept only when the
//! live server has the variable and can change it with `SET GLOBAL`. Durability knobs join only
//! with `--durability relaxed`.

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
    /// InnoDB data and indexes on the server.
    pub data_bytes: u64,
}

/// One entry of the curated list.
struct KnobDef {
    name: &'static str,
    /// Changing it trades crash safety for speed.
    durability: bool,
    values: fn(&Sizes, &BTreeMap<String, String>) -> Vec<String>,
}

fn fixed(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

/// Enough for the data with room to grow, a quarter of memory, and 60% of it (the usual ceiling
/// for a dedicated server), in 128 MiB steps.
fn pool_sizes(s: &Sizes, _: &BTreeMap<String, String>) -> Vec<String> {
    let fit = (s.data_bytes * 3 / 2).div_ceil(POOL_STEP).max(1) * POOL_STEP;
    let mut sizes = vec![fit];
    if s.memory_bytes > 0 {
        let cap = s.memory_bytes * 6 / 10 / POOL_STEP * POOL_STEP;
        sizes.retain(|&b| b <= cap);
        sizes.extend([s.memory_bytes / 4 / POOL_STEP * POOL_STEP, cap]);
    }
    sizes.retain(|&b| b >= POOL_STEP);
    sizes.sort_unstable();
    sizes.dedup();
    sizes.iter().map(|b| format!("{}M", b / MIB)).collect()
}

/// Up to the server's own ceiling (`innodb_io_capacity_max`), which refuses more.
fn io_capacity(_: &Sizes, vars: &BTreeMap<String, String>) -> Vec<String> {
    let max = vars
        .get("innodb_io_capacity_max")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(2000);
    [200u64, 1000, 2000]
        .into_iter()
        .filter(|&v| v <= max)
        .map(|v| v.to_string())
        .collect()
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
        values: |_, _| fixed(&["0", "1"]),
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
        let values: Vec<String> = (def.values)(sizes, server.variables)
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
        return Err(TuneError::Knobs(
            "no knob left to tune on this server (see --knobs and --durability)".into(),
        ));
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

    #[test]
    fn pool_sizes_follow_data_and_memory_and_skip_the_current_value() {
        let v = vars(&[("innodb_buffer_pool_size", "512M")]);
        let s = space_of(&v, Durability::Strict, &[]).unwrap();
        // 300 MiB of data → 512 MiB (the current value, dropped), 4 GiB, 60% of 16 GiB.
        assert_eq!(s.knobs[0].values, ["4096M", "9728M"]);
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
