//! The same placement policy on MySQL 8, as resource groups: one group per rule and thread type
//! (`TYPE=SYSTEM` for background threads, `USER` for connections), with the rule's CPUs as
//! `VCPU` and its nice value as `THREAD_PRIORITY`, then `SET RESOURCE GROUP g FOR id, ...` with
//! the `performance_schema.threads` THREAD_IDs of the class (not the OS ids).
//!
//! `Placer` uses these on MySQL 8 and later (`place::uses_resource_groups`): it creates the
//! groups once (one already there is reused), moves each new thread of a class with `SET
//! RESOURCE GROUP`, and reads the result back in `/proc` as on MariaDB; letting a thread go sets
//! its OS affinity back, the thread staying in its group. Written and unit-tested only: no
//! MySQL 8 server was available to run it against.
//! MySQL allows priorities -20..0 for SYSTEM groups and 0..19 for USER groups; a rule outside
//! those is refused here rather than by the server.

use qpslab_core::placement::{Policy, Rule, CONNECTION_CLASS};

/// The statements for one rule and one thread type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceGroupSql {
    /// The group's name (`qpslab_` and the class, made an identifier).
    pub group: String,
    /// `CREATE RESOURCE GROUP ...`.
    pub create: String,
    /// The query listing the THREAD_IDs to move into the group.
    pub find_threads: String,
}

impl ResourceGroupSql {
    /// `SET RESOURCE GROUP` for the thread ids `find_threads` returned; none for no ids.
    pub fn assign(&self, thread_ids: &[u64]) -> Option<String> {
        let ids: Vec<String> = thread_ids.iter().map(u64::to_string).collect();
        (!ids.is_empty())
            .then(|| format!("SET RESOURCE GROUP {} FOR {}", self.group, ids.join(", ")))
    }
}

/// A rule whose nice value MySQL refuses for its resource group's type (the user's to fix).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: MySQL allows THREAD_PRIORITY {low}..{high} for {kind} resource groups")]
pub struct PriorityError {
    /// The rule as written.
    pub rule: String,
    /// `SYSTEM` or `USER`.
    pub kind: &'static str,
    /// The lowest priority allowed.
    pub low: i32,
    /// The highest priority allowed.
    pub high: i32,
}

/// The resource groups of `policy`, or why MySQL would refuse one.
pub fn resource_group_sql(policy: &Policy) -> Result<Vec<ResourceGroupSql>, PriorityError> {
    let mut out = Vec::new();
    for (i, rule) in policy.rules.iter().enumerate() {
        let exact_connection = rule.class == CONNECTION_CLASS;
        if !exact_connection {
            out.push(group(i, rule, false)?);
        }
        if rule.covers_connections() {
            out.push(group(i, rule, true)?);
        }
    }
    Ok(out)
}

fn group(i: usize, rule: &Rule, user: bool) -> Result<ResourceGroupSql, PriorityError> {
    let (kind, ps_type, range) = if user {
        ("USER", "FOREGROUND", 0..=19)
    } else {
        ("SYSTEM", "BACKGROUND", -20..=0)
    };
    let base: String = rule
        .class
        .trim_start_matches("thread/")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut name = format!("qpslab_{i}_{}_{base}", kind.to_lowercase());
    name.truncate(64);
    let mut create = format!(
        "CREATE RESOURCE GROUP {name} TYPE={kind} VCPU={}",
        vcpus(&rule.cpus)
    );
    if let Some(n) = rule.nice {
        if !range.contains(&n) {
            return Err(PriorityError {
                rule: rule.to_string(),
                kind,
                low: *range.start(),
                high: *range.end(),
            });
        }
        create.push_str(&format!(" THREAD_PRIORITY={n}"));
    }
    let find_threads = format!(
        "SELECT THREAD_ID FROM performance_schema.threads WHERE NAME LIKE '{}' ESCAPE '!' AND TYPE = '{ps_type}'",
        like(&rule.class)
    );
    Ok(ResourceGroupSql {
        group: name,
        create,
        find_threads,
    })
}

/// CPUs as ranges: `0-3,6`.
fn vcpus(cpus: &[usize]) -> String {
    qpslab_core::cpus::render_ranges(cpus)
}

/// A class glob as a LIKE pattern (escape character `!`); class names hold no quotes (checked
/// when the rule was parsed: they start with `thread/` and hold no spaces), quotes are doubled
/// anyway.
fn like(glob: &str) -> String {
    let mut s = String::new();
    for c in glob.chars() {
        match c {
            '*' => s.push('%'),
            '?' => s.push('_'),
            '%' | '_' | '!' => {
                s.push('!');
                s.push(c);
            }
            '\'' => s.push_str("''"),
            c => s.push(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(rules: &[&str]) -> Result<Vec<ResourceGroupSql>, PriorityError> {
        resource_group_sql(&Policy::parse(rules).unwrap())
    }

    #[test]
    fn a_background_class_becomes_a_system_group() {
        let g = sql(&["thread/innodb/page_cleaner_thread=0,nice=-5"]).unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!(
            g[0].create,
            "CREATE RESOURCE GROUP qpslab_0_system_innodb_page_cleaner_thread TYPE=SYSTEM VCPU=0 THREAD_PRIORITY=-5"
        );
        assert_eq!(
            g[0].find_threads,
            "SELECT THREAD_ID FROM performance_schema.threads WHERE NAME LIKE 'thread/innodb/page!_cleaner!_thread' ESCAPE '!' AND TYPE = 'BACKGROUND'"
        );
        assert_eq!(
            g[0].assign(&[41, 42]).unwrap(),
            "SET RESOURCE GROUP qpslab_0_system_innodb_page_cleaner_thread FOR 41, 42"
        );
        assert_eq!(g[0].assign(&[]), None);
    }

    #[test]
    fn connections_become_a_user_group_and_globs_both() {
        let g = sql(&["thread/sql/one_connection=0,nice=3"]).unwrap();
        assert_eq!(g.len(), 1);
        assert!(g[0].create.contains("TYPE=USER VCPU=0 THREAD_PRIORITY=3"));
        assert!(g[0].find_threads.ends_with("TYPE = 'FOREGROUND'"));
        let g = sql(&["thread/*=0"]).unwrap();
        assert_eq!(g.len(), 2);
        assert!(g[0].find_threads.contains("LIKE 'thread/%'"));
        assert!(g[1].create.contains("TYPE=USER"));
    }

    #[test]
    fn priorities_mysql_refuses_are_refused_here() {
        assert_eq!(
            sql(&["thread/innodb/*=0,nice=5"]).unwrap_err().to_string(),
            "thread/innodb/*=0,nice=5: MySQL allows THREAD_PRIORITY -20..0 for SYSTEM resource groups"
        );
        assert!(sql(&["thread/sql/one_connection=0,nice=-1"]).is_err());
    }

    #[test]
    fn cpu_ranges_are_written_as_ranges() {
        assert_eq!(vcpus(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(vcpus(&[1]), "1");
    }
}
