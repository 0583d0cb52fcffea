//! Thread placement policies: which server thread classes run on which CPUs, at which nice value.
//!
//! A rule reads `CLASS=CPUS[,nice=N]` (`--pin`, repeatable): CLASS is a `performance_schema`
//! thread name such as `thread/innodb/page_cleaner_thread`, or a glob over those names
//! (`thread/innodb/*`; `*` matches any run of characters, `?` one); CPUS is a CPU list with the
//! rules of [`crate::cpus`]. In a study variant the same rules are a table,
//! `pin = { "thread/innodb/page_cleaner_thread" = "1" }`. When several rules match a thread,
//! the last one wins, as with repeated flags.
//!
//! ```
//! use qpslab_core::placement::Rule;
//! let r = Rule::parse("thread/innodb/*=0,nice=5").unwrap();
//! assert!(r.matches("thread/innodb/page_cleaner_thread"));
//! assert_eq!((r.cpus.as_slice(), r.nice), (&[0][..], Some(5)));
//! ```

use serde::{Deserialize, Serialize};

/// The `performance_schema` name of the threads that serve one client connection each.
pub const CONNECTION_CLASS: &str = "thread/sql/one_connection";

/// What is wrong with a placement rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    /// Not `CLASS=CPUS[,nice=N]`.
    #[error(
        "--pin '{rule}': expected CLASS=CPUS[,nice=N], e.g. thread/innodb/page_cleaner_thread=1"
    )]
    Syntax {
        /// The rule as given.
        rule: String,
    },
    /// The class is not a thread name or a glob over thread names.
    #[error("--pin '{rule}': the class must be a performance_schema thread name such as thread/innodb/page_cleaner_thread (globs allowed: thread/innodb/*)")]
    Class {
        /// The rule as given.
        rule: String,
    },
    /// A nice value outside -20..=19.
    #[error("--pin '{rule}': nice must be an integer from -20 to 19")]
    Nice {
        /// The rule as given.
        rule: String,
    },
    /// The CPU list is wrong.
    #[error("--pin '{rule}': {source}")]
    Cpus {
        /// The rule as given.
        rule: String,
        /// What is wrong with the list.
        source: crate::cpus::CpuListError,
    },
}

/// One rule: the threads of a class (or glob) on these CPUs, optionally at this nice value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    /// A thread name or a glob over thread names.
    pub class: String,
    /// The CPUs, sorted and deduplicated.
    pub cpus: Vec<usize>,
    /// The nice value (-20..=19), when the rule sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
}

impl Rule {
    /// Parses `CLASS=CPUS[,nice=N]`; the CPUs must exist on this machine.
    pub fn parse(s: &str) -> Result<Rule, PinError> {
        let rule = || s.to_string();
        let (class, rest) = s
            .split_once('=')
            .ok_or_else(|| PinError::Syntax { rule: rule() })?;
        let class = class.trim();
        if !class.starts_with("thread/") || class.contains(char::is_whitespace) {
            return Err(PinError::Class { rule: rule() });
        }
        let mut nice = None;
        let mut cpus = Vec::new();
        for part in rest.split(',') {
            match part.trim().strip_prefix("nice=") {
                Some(n) => {
                    let n = n
                        .trim()
                        .parse::<i32>()
                        .ok()
                        .filter(|n| (-20..=19).contains(n));
                    nice = Some(n.ok_or_else(|| PinError::Nice { rule: rule() })?);
                }
                None => cpus.push(part),
            }
        }
        if cpus.iter().all(|c| c.trim().is_empty()) {
            return Err(PinError::Syntax { rule: rule() });
        }
        let cpus =
            crate::cpus::parse_cpu_list(&cpus.join(",")).map_err(|source| PinError::Cpus {
                rule: rule(),
                source,
            })?;
        Ok(Rule {
            class: class.to_string(),
            cpus,
            nice,
        })
    }

    /// Whether a thread name matches this rule's class (a glob).
    pub fn matches(&self, name: &str) -> bool {
        glob(self.class.as_bytes(), name.as_bytes())
    }

    /// Whether the rule can match connection threads (which need the thread cache handled).
    pub fn covers_connections(&self) -> bool {
        self.matches(CONNECTION_CLASS)
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.class, crate::cpus::render(&self.cpus))?;
        match self.nice {
            Some(n) => write!(f, ",nice={n}"),
            None => Ok(()),
        }
    }
}

/// A placement policy: rules in the order given; the last matching rule wins.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Policy {
    /// The rules.
    pub rules: Vec<Rule>,
}

impl Policy {
    /// Parses repeated `--pin` values.
    pub fn parse<S: AsRef<str>>(rules: &[S]) -> Result<Policy, PinError> {
        let rules = rules
            .iter()
            .map(|r| Rule::parse(r.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Policy { rules })
    }

    /// A study variant's `pin` table: class → `CPUS[,nice=N]`.
    pub fn from_table<'a>(
        entries: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Policy, PinError> {
        let rules: Vec<String> = entries
            .into_iter()
            .map(|(class, cpus)| format!("{class}={cpus}"))
            .collect();
        Policy::parse(&rules)
    }

    /// No rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rule that decides a thread's placement: the last one matching its name.
    pub fn rule_for(&self, name: &str) -> Option<&Rule> {
        self.rules.iter().rev().find(|r| r.matches(name))
    }

    /// Whether any rule places connection threads.
    pub fn covers_connections(&self) -> bool {
        self.rules.iter().any(Rule::covers_connections)
    }

    /// This policy's rules followed by `other`'s (which win where both match).
    pub fn then(&self, other: &Policy) -> Policy {
        let mut rules = self.rules.clone();
        rules.extend(other.rules.iter().cloned());
        Policy { rules }
    }
}

impl std::fmt::Display for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rules: Vec<String> = self.rules.iter().map(Rule::to_string).collect();
        f.write_str(&rules.join(" "))
    }
}

/// What placing one thread did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placed {
    /// The thread's class.
    pub class: String,
    /// Its OS thread id.
    pub tid: u32,
    /// The CPUs asked for.
    pub cpus: Vec<usize>,
    /// The nice value asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    /// Whether `/proc/PID/task/TID/status` showed the CPUs (and `stat` the nice value) afterwards.
    pub took: bool,
    /// The `Cpus_allowed_list` read back.
    pub actual: Vec<usize>,
    /// Why it did not take, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The threads one application of a policy placed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// Each thread placed, in thread-id order.
    pub placed: Vec<Placed>,
}

impl Applied {
    /// The threads that did not take their placement.
    pub fn failed(&self) -> impl Iterator<Item = &Placed> {
        self.placed.iter().filter(|p| !p.took)
    }
}

/// A policy as stored with a run: the rules and what applying them did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementRecord {
    /// The rules.
    pub policy: Policy,
    /// Every thread placed while the run lasted (new threads of a class included), at most
    /// [`MAX_RECORDED`] of them.
    pub applied: Applied,
    /// Threads placed beyond those recorded.
    #[serde(default)]
    pub more: u64,
    /// Errors of the re-applying thread (e.g. the server went away), each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
}

/// How many placed threads a record keeps (connection threads come and go).
pub const MAX_RECORDED: usize = 1000;

/// Glob match: `*` any run of bytes (slashes included), `?` one byte.
fn glob(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|i| glob(rest, &name[i..])),
        Some((p, rest)) => match name.split_first() {
            Some((n, tail)) if *p == b'?' || p == n => glob(rest, tail),
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_class_cpus_and_nice() {
        let r = Rule::parse("thread/innodb/page_cleaner_thread=0").unwrap();
        assert_eq!(r.class, "thread/innodb/page_cleaner_thread");
        assert_eq!((r.cpus.clone(), r.nice), (vec![0], None));
        let r = Rule::parse("thread/sql/*=0,0-0,nice=-5").unwrap();
        assert_eq!((r.cpus.clone(), r.nice), (vec![0], Some(-5)));
        assert_eq!(r.to_string(), "thread/sql/*=0,nice=-5");
    }

    #[test]
    fn malformed_rules_are_refused() {
        let syntax = |s: &str| matches!(Rule::parse(s), Err(PinError::Syntax { .. }));
        assert!(syntax("thread/innodb/page_cleaner_thread"));
        assert!(syntax("thread/innodb/x=nice=3"));
        assert!(matches!(
            Rule::parse("page_cleaner=0"),
            Err(PinError::Class { .. })
        ));
        assert!(matches!(
            Rule::parse("thread/a=0,nice=20"),
            Err(PinError::Nice { .. })
        ));
        assert!(matches!(
            Rule::parse("thread/a=0,nice=x"),
            Err(PinError::Nice { .. })
        ));
        assert!(matches!(
            Rule::parse("thread/a=3-1"),
            Err(PinError::Cpus { .. })
        ));
        assert!(matches!(
            Rule::parse("thread/a=99999"),
            Err(PinError::Cpus { .. })
        ));
    }

    #[test]
    fn globs_match_thread_names() {
        assert!(glob(
            b"thread/innodb/*",
            b"thread/innodb/page_cleaner_thread"
        ));
        assert!(glob(
            b"thread/*/one_connection",
            b"thread/sql/one_connection"
        ));
        assert!(glob(
            b"thread/sql/one_connectio?",
            b"thread/sql/one_connection"
        ));
        assert!(!glob(b"thread/innodb/*", b"thread/sql/one_connection"));
        assert!(!glob(b"thread/sql/one", b"thread/sql/one_connection"));
        assert!(glob(b"*", b""));
    }

    #[test]
    fn the_last_matching_rule_wins() {
        let p = Policy::parse(&["thread/*=0", "thread/innodb/*=0,nice=3"]).unwrap();
        assert_eq!(p.rule_for("thread/innodb/x").unwrap().nice, Some(3));
        assert_eq!(p.rule_for("thread/sql/one_connection").unwrap().nice, None);
        assert!(p.covers_connections());
        assert!(p.rule_for("idle").is_none());
    }

    #[test]
    fn a_variant_table_reads_like_flags() {
        let p = Policy::from_table([("thread/innodb/page_cleaner_thread", "0,nice=1")]).unwrap();
        assert_eq!(
            p,
            Policy::parse(&["thread/innodb/page_cleaner_thread=0,nice=1"]).unwrap()
        );
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<Policy>(&json).unwrap(), p);
    }
}
