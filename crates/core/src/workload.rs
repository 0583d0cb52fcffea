//! The sysbench 1.0.20 workload names and the options that shape them, with sysbench's defaults;
//! and TPC-C (`tpcc`), whose dataset is shaped by its warehouses.
//!
//! This is plain data: statement generation lives in `qpslab-engine`'s `workload` module.

pub use crate::tpcc::ConsistencyCondition;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One of sysbench's bundled OLTP scripts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkloadKind {
    OltpPointSelect,
    OltpReadOnly,
    OltpReadWrite,
    OltpWriteOnly,
    OltpUpdateIndex,
    OltpUpdateNonIndex,
    OltpInsert,
    OltpDelete,
    SelectRandomPoints,
    SelectRandomRanges,
    /// TPC-C: the nine tables of the spec, loaded per warehouse ([`Warehouses`]).
    Tpcc,
}

impl WorkloadKind {
    /// Every sysbench script, in the order `--help` lists them ([`WorkloadKind::Tpcc`] is not
    /// one: it is named apart wherever workloads are listed).
    pub const ALL: [WorkloadKind; 10] = [
        WorkloadKind::OltpPointSelect,
        WorkloadKind::OltpReadOnly,
        WorkloadKind::OltpReadWrite,
        WorkloadKind::OltpWriteOnly,
        WorkloadKind::OltpUpdateIndex,
        WorkloadKind::OltpUpdateNonIndex,
        WorkloadKind::OltpInsert,
        WorkloadKind::OltpDelete,
        WorkloadKind::SelectRandomPoints,
        WorkloadKind::SelectRandomRanges,
    ];

    /// The sysbench script name, e.g. `oltp_read_write`.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::OltpPointSelect => "oltp_point_select",
            WorkloadKind::OltpReadOnly => "oltp_read_only",
            WorkloadKind::OltpReadWrite => "oltp_read_write",
            WorkloadKind::OltpWriteOnly => "oltp_write_only",
            WorkloadKind::OltpUpdateIndex => "oltp_update_index",
            WorkloadKind::OltpUpdateNonIndex => "oltp_update_non_index",
            WorkloadKind::OltpInsert => "oltp_insert",
            WorkloadKind::OltpDelete => "oltp_delete",
            WorkloadKind::SelectRandomPoints => "select_random_points",
            WorkloadKind::SelectRandomRanges => "select_random_ranges",
            WorkloadKind::Tpcc => "tpcc",
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown workload name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown workload '{0}' (known: {known}, tpcc)", known = WorkloadKind::ALL.map(|w| w.name()).join(", "))]
pub struct UnknownWorkload(pub String);

impl FromStr for WorkloadKind {
    type Err = UnknownWorkload;
    fn from_str(s: &str) -> Result<Self, UnknownWorkload> {
        let s = s.trim_end_matches(".lua");
        WorkloadKind::ALL
            .into_iter()
            .chain([WorkloadKind::Tpcc])
            .find(|w| w.name() == s)
            .ok_or_else(|| UnknownWorkload(s.to_string()))
    }
}

/// sysbench's `--rand-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

impl RandType {
    /// sysbench's name of the distribution.
    pub fn name(self) -> &'static str {
        match self {
            RandType::Uniform => "uniform",
            RandType::Gaussian => "gaussian",
            RandType::Special => "special",
            RandType::Pareto => "pareto",
            RandType::Zipfian => "zipfian",
        }
    }
}

impl std::fmt::Display for RandType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown `--rand-type` name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown rand-type '{0}' (known: uniform, gaussian, special, pareto, zipfian)")]
pub struct UnknownRandType(pub String);

impl FromStr for RandType {
    type Err = UnknownRandType;
    fn from_str(s: &str) -> Result<Self, UnknownRandType> {
        Ok(match s {
            "uniform" => RandType::Uniform,
            "gaussian" => RandType::Gaussian,
            "special" => RandType::Special,
            "pareto" => RandType::Pareto,
            "zipfian" => RandType::Zipfian,
            _ => return Err(UnknownRandType(s.to_string())),
        })
    }
}

/// sysbench's random-number options (`--rand-*`), with 1.0.20's defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RandOptions {
    /// `--rand-type` (default `special`).
    pub rand_type: RandType,
    /// `--rand-spec-iter` (12): iterations for the gaussian and special distributions.
    pub spec_iter: u32,
    /// `--rand-spec-pct` (1): percentage of values treated as "special".
    pub spec_pct: u32,
    /// `--rand-spec-res` (75): percentage of draws that hit the special values.
    pub spec_res: u32,
    /// `--rand-pareto-h` (0.2).
    pub pareto_h: f64,
    /// `--rand-zipfian-exp` (0.8).
    pub zipfian_exp: f64,
    /// `--rand-seed` (0: seed from the clock).
    pub seed: u64,
}

impl Default for RandOptions {
    fn default() -> Self {
        RandOptions {
            rand_type: RandType::Special,
            spec_iter: 12,
            spec_pct: 1,
            spec_res: 75,
            pareto_h: 0.2,
            zipfian_exp: 0.8,
            seed: 0,
        }
    }
}

/// Options of sysbench's `oltp_common.lua` and the `select_random_*` scripts, by their sysbench
/// names (dashes become underscores). Defaults are sysbench 1.0.20's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadOptions {
    /// Which script.
    pub kind: WorkloadKind,
    /// `--tables` (1).
    pub tables: u32,
    /// `--table-size` (10000).
    pub table_size: u64,
    /// `--range-size` (100).
    pub range_size: u64,
    /// `--point-selects` (10; oltp_point_select always runs 1 per event, as sysbench does).
    pub point_selects: u32,
    /// `--simple-ranges` (1).
    pub simple_ranges: u32,
    /// `--sum-ranges` (1).
    pub sum_ranges: u32,
    /// `--order-ranges` (1).
    pub order_ranges: u32,
    /// `--distinct-ranges` (1).
    pub distinct_ranges: u32,
    /// `--index-updates` (1).
    pub index_updates: u32,
    /// `--non-index-updates` (1).
    pub non_index_updates: u32,
    /// `--delete-inserts` (1).
    pub delete_inserts: u32,
    /// `--range-selects` (on).
    pub range_selects: bool,
    /// `--auto-inc` (on).
    pub auto_inc: bool,
    /// `--skip-trx` (off).
    pub skip_trx: bool,
    /// `--secondary` (off): `id` is a secondary key instead of the primary key.
    pub secondary: bool,
    /// `--create-secondary` (on): build the `k_N` index after loading.
    pub create_secondary: bool,
    /// `--mysql-storage-engine` (innodb).
    pub storage_engine: String,
    /// `--create-table-options` (empty).
    pub create_table_options: String,
    /// `--random-points` of select_random_points (10).
    pub random_points: u32,
    /// `--number-of-ranges` of select_random_ranges (10).
    pub number_of_ranges: u32,
    /// `--delta` of select_random_ranges (5).
    pub delta: u64,
    /// The `--rand-*` options.
    pub rand: RandOptions,
    /// Script workloads (`--script FILE[@WEIGHT]`): when not empty, the run executes these
    /// instead of `kind`'s sysbench statements. Stored whole so a run says exactly what ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<ScriptSource>,
    /// `--init-sql FILE`: SQL run once on a control connection before the measured phases
    /// (a script workload's schema and data); its weight is unused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_sql: Option<ScriptSource>,
    /// `--warehouses` of TPC-C (1): the warehouses to load (a slice `A-B` loads only those)
    /// or to run on.
    ///
    /// This and the two TPC-C options below are always written, at their defaults too, so a
    /// stored plan says `warehouses` 1 wherever another says 2. A plan stored without them
    /// (before TPC-C, or by a version that left defaults out) ran with the defaults, and
    /// reads so.
    #[serde(default)]
    pub warehouses: Warehouses,
    /// `--foreign-keys` of TPC-C (off): create the spec's foreign keys.
    #[serde(default)]
    pub foreign_keys: bool,
    /// `run tpcc`'s mode, think-time scale and consistency check.
    #[serde(default)]
    pub tpcc: crate::tpcc::TpccRun,
}

/// TPC-C warehouses `first..=last`: `N` is `1..=N`; `A-B` is a slice that one machine loads
/// while others load the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warehouses {
    /// The first warehouse (at least 1).
    pub first: u32,
    /// The last warehouse (at least `first`).
    pub last: u32,
}

impl Default for Warehouses {
    fn default() -> Self {
        Warehouses { first: 1, last: 1 }
    }
}

impl Warehouses {
    /// How many warehouses the range holds.
    pub fn count(&self) -> u32 {
        self.last - self.first + 1
    }

    /// The warehouses, in order.
    pub fn iter(&self) -> std::ops::RangeInclusive<u32> {
        self.first..=self.last
    }
}

impl fmt::Display for Warehouses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.first == 1 {
            write!(f, "{}", self.last)
        } else {
            write!(f, "{}-{}", self.first, self.last)
        }
    }
}

impl FromStr for Warehouses {
    type Err = String;
    /// `N` (1..=N) or `A-B` (A..=B), each at least 1 and A <= B.
    fn from_str(s: &str) -> Result<Self, String> {
        let num = |t: &str| {
            t.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=1_000_000).contains(n))
        };
        let w = match s.split_once('-') {
            None => num(s).map(|last| Warehouses { first: 1, last }),
            Some((a, b)) => num(a)
                .zip(num(b))
                .map(|(first, last)| Warehouses { first, last }),
        };
        w.filter(|w| w.first <= w.last).ok_or_else(|| {
            format!("must be N or A-B (warehouses from 1 to 1000000, A <= B), not '{s}'")
        })
    }
}

/// One script of a script workload, as read when the options resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScriptSource {
    /// The file's base name, used in statement names (`name:LINE`).
    pub name: String,
    /// The path as given (resolved against the study spec's directory).
    pub path: String,
    /// How often an event picks this script relative to the others (pgbench's `-f FILE@W`).
    pub weight: u32,
    /// The script's text.
    pub text: String,
}

impl WorkloadOptions {
    /// sysbench 1.0.20's defaults for `kind`.
    pub fn new(kind: WorkloadKind) -> Self {
        WorkloadOptions {
            kind,
            tables: 1,
            table_size: 10_000,
            range_size: 100,
            point_selects: 10,
            simple_ranges: 1,
            sum_ranges: 1,
            order_ranges: 1,
            distinct_ranges: 1,
            index_updates: 1,
            non_index_updates: 1,
            delete_inserts: 1,
            range_selects: true,
            auto_inc: true,
            skip_trx: false,
            secondary: false,
            create_secondary: true,
            storage_engine: "innodb".into(),
            create_table_options: String::new(),
            random_points: 10,
            number_of_ranges: 10,
            delta: 5,
            rand: RandOptions::default(),
            scripts: Vec::new(),
            init_sql: None,
            warehouses: Warehouses::default(),
            foreign_keys: false,
            tpcc: crate::tpcc::TpccRun::default(),
        }
    }

    /// Whether this workload reads the option `key`, by its stored name (the study key:
    /// `table_size`, `warehouses`, `tpcc.mode`, `rand.seed`): TPC-C's own options apply to
    /// TPC-C only, and TPC-C reads of sysbench's only the storage engine, the table options and
    /// the seed. Listings of a run's options show those that apply.
    pub fn applies(&self, key: &str) -> bool {
        /// The options only TPC-C reads.
        const TPCC_ONLY: &[&str] = &["warehouses", "foreign_keys", "tpcc"];
        /// The keys every workload reads.
        const SHARED: &[&str] = &[
            "kind",
            "scripts",
            "init_sql",
            "storage_engine",
            "create_table_options",
        ];
        let top = key.split('.').next().unwrap_or(key);
        if self.kind != WorkloadKind::Tpcc {
            return !TPCC_ONLY.contains(&top);
        }
        TPCC_ONLY.contains(&top) || SHARED.contains(&top) || key == "rand.seed"
    }

    /// What runs, for headers and listings: the sysbench workload's name, or the scripts
    /// with their weights (`script a.sql@3 b.sql@1`).
    pub fn label(&self) -> String {
        if self.scripts.is_empty() {
            return self.kind.name().to_string();
        }
        let names: Vec<String> = self
            .scripts
            .iter()
            .map(|s| format!("{}@{}", s.name, s.weight))
            .collect();
        format!("script {}", names.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_names_the_scripts_and_weights() {
        let mut o = WorkloadOptions::new(WorkloadKind::OltpPointSelect);
        assert_eq!(o.label(), "oltp_point_select");
        for (name, weight) in [("a.sql", 3), ("b.sql", 1)] {
            o.scripts.push(ScriptSource {
                name: name.into(),
                path: format!("/x/{name}"),
                weight,
                text: "SELECT 1;".into(),
            });
        }
        assert_eq!(o.label(), "script a.sql@3 b.sql@1");
    }

    #[test]
    fn warehouses_read_a_count_or_a_slice() {
        let w: Warehouses = "4".parse().unwrap();
        assert_eq!((w.first, w.last, w.count()), (1, 4, 4));
        assert_eq!(w.to_string(), "4");
        let w: Warehouses = "3-5".parse().unwrap();
        assert_eq!((w.first, w.last, w.count()), (3, 5, 3));
        assert_eq!(w.to_string(), "3-5");
        for bad in ["0", "5-3", "x", "1-", "-2", "0-2"] {
            assert!(bad.parse::<Warehouses>().is_err(), "{bad}");
        }
    }

    /// Issue 28: one warehouse is written as such, so it shows as 1 beside another plan's 2;
    /// a plan stored without the TPC-C options (by an older version) reads their defaults.
    #[test]
    fn tpcc_options_are_written_at_their_defaults_and_read_when_missing() {
        let o = WorkloadOptions::new(WorkloadKind::Tpcc);
        let mut v = serde_json::to_value(&o).unwrap();
        assert_eq!(v["warehouses"], serde_json::json!({"first": 1, "last": 1}));
        assert_eq!(v["foreign_keys"], false);
        assert_eq!(v["tpcc"]["mode"], "stress");
        for k in ["warehouses", "foreign_keys", "tpcc"] {
            v.as_object_mut().unwrap().remove(k);
        }
        let old: WorkloadOptions = serde_json::from_value(v).unwrap();
        assert_eq!(old, o);
    }

    #[test]
    fn tpcc_options_apply_to_tpcc_only_and_sysbench_shapes_not_to_it() {
        let t = WorkloadOptions::new(WorkloadKind::Tpcc);
        let o = WorkloadOptions::new(WorkloadKind::OltpReadWrite);
        for k in ["warehouses.last", "foreign_keys", "tpcc.mode"] {
            assert!(t.applies(k) && !o.applies(k), "{k}");
        }
        for k in ["tables", "table_size", "point_selects", "rand.rand_type"] {
            assert!(!t.applies(k) && o.applies(k), "{k}");
        }
        for k in [
            "kind",
            "storage_engine",
            "create_table_options",
            "rand.seed",
        ] {
            assert!(t.applies(k) && o.applies(k), "{k}");
        }
    }

    #[test]
    fn names_round_trip() {
        assert_eq!("tpcc".parse::<WorkloadKind>().unwrap(), WorkloadKind::Tpcc);
        for w in WorkloadKind::ALL {
            assert_eq!(w.name().parse::<WorkloadKind>().unwrap(), w);
        }
        assert_eq!(
            "oltp_read_only.lua".parse::<WorkloadKind>().unwrap(),
            WorkloadKind::OltpReadOnly
        );
        let err = "oltp_foo".parse::<WorkloadKind>().unwrap_err().to_string();
        assert!(
            err.contains("oltp_foo") && err.contains("oltp_point_select"),
            "{err}"
        );
    }
}
