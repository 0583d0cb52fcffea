//! Shards: one run measured by N client processes (on one host or several) against one
//! server, each running its share of the sessions and of the rate, merged exactly afterwards.
//!
//! A shard is told its place by `--shard I/N` or by the launcher it runs under (`--shard
//! auto`: Slurm, Open MPI or a Kubernetes Indexed Job, read by [`from_launcher`] from
//! variables handed in, so the logic here does no I/O). The split of sessions, rate and seed
//! is pure arithmetic ([`share`], [`rate_share`], [`seed_of`]) so every shard computes the
//! same plan for the others without talking to them.

use crate::verdict::Stability;
use serde::{Deserialize, Serialize};

/// Where a shard stands, as asked: `--shard I/N`, `--shard auto`, `--shards N`,
/// `--shard-group NAME`. Once resolved ([`ShardSpec::resolved`]) every field is set, and the
/// stored plan says which shard of which group ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardSpec {
    /// The 0-based index (none: `auto`, read from the launcher).
    pub index: Option<u32>,
    /// The number of shards (none: from the launcher).
    pub count: Option<u32>,
    /// The key every shard of one run shares (none: derived from the launcher's job).
    pub group: Option<String>,
    /// The seed of the whole run, before this shard's own was derived from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_seed: Option<u64>,
    /// `--shard-timeout`: the longest wait for the other shards at a meeting (none: derived
    /// from the plan, see `lab::shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_s: Option<f64>,
}

/// A shard whose place is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 0-based index, below `count`.
    pub index: u32,
    /// How many shards run.
    pub count: u32,
    /// The group's key.
    pub group: String,
}

impl ShardSpec {
    /// The shard's place when index, count and group are all known.
    pub fn resolved(&self) -> Option<Shard> {
        Some(Shard {
            index: self.index?,
            count: self.count?,
            group: self.group.clone()?,
        })
    }
}

/// Why a shard's place could not be found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// `--shard` was not `I/N` or `auto`.
    #[error("--shard: expected I/N (0 <= I < N) or auto, not `{0}`")]
    Syntax(String),
    /// `--shard auto` found no launcher.
    #[error(
        "--shard auto: no launcher found: looked for SLURM_PROCID/SLURM_NTASKS, \
         OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE and JOB_COMPLETION_INDEX (with --shards N)"
    )]
    NoLauncher,
    /// A launcher variable did not hold a number.
    #[error("--shard auto: {name}={value} is not a number")]
    BadVariable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
    /// A Kubernetes Indexed Job names the index but not the count.
    #[error("--shard auto: JOB_COMPLETION_INDEX is set: give the Job's completions as --shards N")]
    NoCount,
    /// The index is not below the count.
    #[error("--shard: index {index} is not below the count {count}")]
    OutOfRange {
        /// The index.
        index: u32,
        /// The count.
        count: u32,
    },
    /// `--shards N` disagrees with the count `--shard I/N` or the launcher gave.
    #[error("--shards {given} disagrees with the {count} shards of --shard")]
    CountDiffers {
        /// `--shards`.
        given: u32,
        /// The other count.
        count: u32,
    },
    /// A thread count too small to give every shard a session.
    #[error(
        "--threads {threads} cannot give each of {count} shards a session: use at least {count}"
    )]
    TooFewSessions {
        /// The thread count.
        threads: u32,
        /// The shards.
        count: u32,
    },
    /// `--events` ends each shard at another time; shards share one end time.
    #[error("--events cannot be split over shards (each would end at its own time): use --time")]
    Events,
}

/// Reads `--shard`'s value: `I/N` gives index and count, `auto` neither.
pub fn parse(text: &str) -> Result<(Option<u32>, Option<u32>), ShardError> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("auto") {
        return Ok((None, None));
    }
    let bad = || ShardError::Syntax(text.to_string());
    let (i, n) = t.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 {
        return Err(bad());
    }
    if i >= n {
        return Err(ShardError::OutOfRange { index: i, count: n });
    }
    Ok((Some(i), Some(n)))
}

/// What a launcher says of this process: its index, the count, and its job's id (for the
/// default group).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launched {
    /// 0-based rank.
    pub index: u32,
    /// Ranks in all (none: the launcher does not say; `--shards` must).
    pub count: Option<u32>,
    /// The job's id, the same for every rank of one run (none: not known).
    pub job: Option<String>,
}

/// The launcher's view of this process, from `var` (the environment, handed in): Slurm's
/// `SLURM_PROCID`/`SLURM_NTASKS`, Open MPI's `OMPI_COMM_WORLD_RANK`/`OMPI_COMM_WORLD_SIZE`, a
/// Kubernetes Indexed Job's `JOB_COMPLETION_INDEX`, in that order.
pub fn from_launcher(var: &dyn Fn(&str) -> Option<String>) -> Result<Launched, ShardError> {
    let num = |name: &'static str| -> Result<Option<u32>, ShardError> {
        match var(name) {
            None => Ok(None),
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| ShardError::BadVariable { name, value: v }),
        }
    };
    if let (Some(index), Some(count)) = (num("SLURM_PROCID")?, num("SLURM_NTASKS")?) {
        let job = var("SLURM_JOB_ID").map(|j| match var("SLURM_STEP_ID") {
            Some(step) => format!("slurm-{j}.{step}"),
            None => format!("slurm-{j}"),
        });
        return Ok(Launched {
            index,
            count: Some(count),
            job,
        });
    }
    if let (Some(index), Some(count)) = (num("OMPI_COMM_WORLD_RANK")?, num("OMPI_COMM_WORLD_SIZE")?)
    {
        let job = var("OMPI_MCA_orte_hnp_uri")
            .or_else(|| var("PMIX_NAMESPACE"))
            .map(|j| format!("mpi-{}", short_hash(&j)));
        return Ok(Launched {
            index,
            count: Some(count),
            job,
        });
    }
    if let Some(index) = num("JOB_COMPLETION_INDEX")? {
        // The Job's pods share its name as the prefix of their hostnames.
        let job = var("JOB_NAME").map(|j| format!("k8s-{j}"));
        return Ok(Launched {
            index,
            count: None,
            job,
        });
    }
    Err(ShardError::NoLauncher)
}

/// The spec with index, count and group filled: from itself, then from `launcher` (asked only
/// for `auto`), with `plan_key` (a stable text of the run's plan) hashed into a derived group
/// so two different runs under one job do not meet.
pub fn resolve(
    spec: &ShardSpec,
    launcher: impl FnOnce() -> Result<Launched, ShardError>,
    plan_key: &str,
) -> Result<Shard, ShardError> {
    let (index, count, job) = match spec.index {
        Some(i) => (i, spec.count, None),
        None => {
            let l = launcher()?;
            (l.index, l.count, l.job)
        }
    };
    let count = match (count, spec.count) {
        (Some(c), Some(given)) if c != given && spec.index.is_none() => {
            return Err(ShardError::CountDiffers { given, count: c })
        }
        (Some(c), _) => c,
        (None, Some(given)) => given,
        (None, None) => return Err(ShardError::NoCount),
    };
    if index >= count {
        return Err(ShardError::OutOfRange { index, count });
    }
    let group = match &spec.group {
        Some(g) => g.clone(),
        None => format!(
            "{}-{}",
            job.as_deref().unwrap_or("local"),
            short_hash(plan_key)
        ),
    };
    Ok(Shard {
        index,
        count,
        group,
    })
}

/// Shard `index`'s share of `total` sessions among `count` shards: as even as possible, the
/// first shards taking one more (10 over 3: 4, 3, 3).
pub fn share(total: u32, index: u32, count: u32) -> u32 {
    if count == 0 {
        return total;
    }
    total / count + u32::from(index < total % count)
}

/// Shard `index`'s share of a rate of `per_second`: in proportion to its sessions, so each
/// session is paced as it would be in one process.
pub fn rate_share(per_second: f64, sessions: u32, total_sessions: u32) -> f64 {
    if total_sessions == 0 {
        return per_second;
    }
    per_second * f64::from(sessions) / f64::from(total_sessions)
}

/// Shard `index`'s seed, derived from the run's: shard 0 of 1 keeps it (an ordinary run);
/// others get a well-mixed one (splitmix64), never 0 (which means "from the clock").
pub fn seed_of(run_seed: u64, index: u32, count: u32) -> u64 {
    if count <= 1 {
        return run_seed;
    }
    let mut z = run_seed ^ (u64::from(index) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)).max(1)
}

/// A short stable hash of `text` (FNV-1a, 8 hex digits): the same on every host and build.
pub fn short_hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", (h ^ (h >> 32)) as u32)
}

/// One shard of a merged phase: where it ran, when it measured, what it found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardMember {
    /// Its index.
    pub index: u32,
    /// The host it ran on.
    pub host: String,
    /// Its stored run's uuid.
    pub run_uuid: String,
    /// Its sessions.
    pub threads: u32,
    /// Its events.
    pub events: u64,
    /// When its measurement started and ended (Unix seconds).
    pub start_unix_s: f64,
    /// See `start_unix_s`.
    pub end_unix_s: f64,
    /// Its client CPU over the phase (user + sys, seconds).
    pub client_cpu_s: f64,
    /// Its stability verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<Stability>,
    /// Where its client's event loops ran and how busy each was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<crate::client::ClientLoops>,
}

/// A phase's shard figures: for a shard, when its measurement started and ended; for a merged
/// phase, the same over all shards and each shard's record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardPhase {
    /// When measurement started (Unix seconds; merged: the earliest shard's).
    pub start_unix_s: f64,
    /// When it ended (Unix seconds; merged: the latest shard's).
    pub end_unix_s: f64,
    /// The shards merged into this phase (empty for a shard's own phase).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<ShardMember>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn sessions_split_evenly_first_shards_take_the_rest() {
        assert_eq!(
            (0..3).map(|i| share(10, i, 3)).collect::<Vec<_>>(),
            [4, 3, 3]
        );
        assert_eq!((0..4).map(|i| share(8, i, 4)).sum::<u32>(), 8);
        assert_eq!(share(2, 2, 3), 0);
        assert_eq!(share(7, 0, 1), 7);
        let r: f64 = (0..3).map(|i| rate_share(900.0, share(10, i, 3), 10)).sum();
        assert!((r - 900.0).abs() < 1e-9);
        assert_eq!(rate_share(900.0, 4, 10), 360.0);
    }

    #[test]
    fn seeds_differ_per_shard_and_repeat() {
        assert_eq!(seed_of(42, 0, 1), 42);
        let s: Vec<u64> = (0..3).map(|i| seed_of(42, i, 3)).collect();
        assert!(s[0] != s[1] && s[1] != s[2] && s[0] != 42, "{s:?}");
        assert_eq!(s, (0..3).map(|i| seed_of(42, i, 3)).collect::<Vec<_>>());
        assert_ne!(seed_of(43, 1, 3), s[1]);
    }

    #[test]
    fn parse_index_and_count() {
        assert_eq!(parse("1/3"), Ok((Some(1), Some(3))));
        assert_eq!(parse("auto"), Ok((None, None)));
        assert!(matches!(parse("3/3"), Err(ShardError::OutOfRange { .. })));
        for bad in ["1", "a/3", "1/0", "-1/2", ""] {
            assert!(matches!(parse(bad), Err(ShardError::Syntax(_))), "{bad}");
        }
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn launchers_are_read_from_their_variables() {
        let slurm = env(&[
            ("SLURM_PROCID", "2"),
            ("SLURM_NTASKS", "3"),
            ("SLURM_JOB_ID", "77"),
            ("SLURM_STEP_ID", "0"),
        ]);
        let l = from_launcher(&slurm).unwrap();
        assert_eq!((l.index, l.count), (2, Some(3)));
        assert_eq!(l.job.as_deref(), Some("slurm-77.0"));
        let mpi = env(&[
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("PMIX_NAMESPACE", "prterun-x-1@1"),
        ]);
        let l = from_launcher(&mpi).unwrap();
        assert_eq!((l.index, l.count), (1, Some(4)));
        assert!(l.job.unwrap().starts_with("mpi-"));
        let k8s = env(&[("JOB_COMPLETION_INDEX", "0")]);
        assert_eq!(from_launcher(&k8s).unwrap().count, None);
        assert_eq!(from_launcher(&env(&[])), Err(ShardError::NoLauncher));
        let bad = env(&[("SLURM_PROCID", "x"), ("SLURM_NTASKS", "3")]);
        assert!(matches!(
            from_launcher(&bad),
            Err(ShardError::BadVariable { .. })
        ));
        assert!(ShardError::NoLauncher.to_string().contains("SLURM_PROCID"));
    }

    #[test]
    fn resolve_fills_count_and_group() {
        let auto = ShardSpec::default();
        let k8s = || from_launcher(&env(&[("JOB_COMPLETION_INDEX", "1")]));
        assert_eq!(resolve(&auto, k8s, "p"), Err(ShardError::NoCount));
        let with_count = ShardSpec {
            count: Some(2),
            ..auto.clone()
        };
        let s = resolve(&with_count, k8s, "p").unwrap();
        assert_eq!((s.index, s.count), (1, 2));
        assert!(s.group.starts_with("local-"), "{}", s.group);
        let fixed = ShardSpec {
            index: Some(0),
            count: Some(3),
            group: Some("g".into()),
            ..ShardSpec::default()
        };
        let s = resolve(&fixed, || Err(ShardError::NoLauncher), "p").unwrap();
        assert_eq!(s.group, "g");
        // Two plans under one job meet apart.
        let a = resolve(&with_count, k8s, "plan a").unwrap().group;
        let b = resolve(&with_count, k8s, "plan b").unwrap().group;
        assert_ne!(a, b);
        let slurm = || from_launcher(&env(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "3")]));
        let wrong = ShardSpec {
            count: Some(2),
            ..ShardSpec::default()
        };
        assert!(matches!(
            resolve(&wrong, slurm, "p"),
            Err(ShardError::CountDiffers { .. })
        ));
    }
}
