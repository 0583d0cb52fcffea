//! The findings as an aligned table, as Markdown, and as a my.cnf section (the JSON form is
//! the document's serde form).

use crate::render::table as aligned;
use qpslab_advise::{advise as findings, Facts};
use qpslab_core::advise::{Durability, Finding, FindingKind};
use qpslab_core::units::short_size;
use serde::Serialize;
use std::fmt::Write;

/// What every format shows: which server, the facts the findings rest on, the findings.
#[derive(Serialize)]
pub(crate) struct AdviseDoc {
    target: String,
    version: String,
    flavor: String,
    uptime_s: u64,
    innodb_data_bytes: u64,
    /// The host's facts were read (a server on this host).
    local: bool,
    /// RAM of the host, when local.
    memory_bytes: Option<u64>,
    cores: Option<u32>,
    durability: Durability,
    findings: Vec<Finding>,
}

impl AdviseDoc {
    pub(crate) fn new(target: String, facts: &Facts, durability: Durability) -> AdviseDoc {
        let host = facts.local.as_ref().map(|l| &l.host);
        AdviseDoc {
            target,
            version: facts.server.version.clone(),
            flavor: facts.server.flavor.clone(),
            uptime_s: facts.uptime_s(),
            innodb_data_bytes: facts.innodb_bytes,
            local: facts.local.is_some(),
            memory_bytes: host.map(|h| h.memory_bytes),
            cores: host.map(|h| h.cores),
            durability,
            findings: findings(facts, durability),
        }
    }
}

/// `10.11.19-MariaDB (mariadb) at root@localhost/, up 2.0 h, InnoDB data 2 GiB, local host: ...`.
fn header(d: &AdviseDoc) -> String {
    let up = if d.uptime_s >= 7200 {
        format!("{:.1} h", d.uptime_s as f64 / 3600.0)
    } else {
        format!("{} s", d.uptime_s)
    };
    let host = match (d.memory_bytes, d.cores) {
        (Some(m), Some(c)) => format!("local host: {} RAM, {c} CPUs", short_size(m)),
        _ => "remote host: OS settings not read".to_string(),
    };
    format!(
        "{} ({}) at {}, up {up}, InnoDB data {}, {host}",
        d.version,
        d.flavor,
        d.target,
        short_size(d.innodb_data_bytes)
    )
}

fn recommended(f: &Finding) -> String {
    f.recommended.clone().unwrap_or_else(|| "-".into())
}

fn restart(f: &Finding) -> &'static str {
    match (f.kind, f.restart_needed) {
        (FindingKind::Os, _) => "-",
        (_, true) => "yes",
        (_, false) => "no",
    }
}

/// How many findings recommend a change, and what `--durability` did.
fn footer(d: &AdviseDoc) -> String {
    let n = d.findings.iter().filter(|f| f.recommends()).count();
    let restarts = d
        .findings
        .iter()
        .filter(|f| f.recommends() && f.restart_needed)
        .count();
    let durability = match d.durability {
        Durability::Strict => {
            "durability settings are described, not recommended (--durability relaxed recommends them)"
        }
        Durability::Relaxed => "durability relaxed: a crash may lose the last second of commits",
    };
    format!("{n} recommendation(s), {restarts} needing a restart; {durability}\n")
}

/// The aligned table, then each finding's reason by number.
pub(crate) fn table(d: &AdviseDoc) -> String {
    let head = [
        "#",
        "severity",
        "kind",
        "variable",
        "current",
        "recommended",
        "restart",
    ];
    let rows: Vec<Vec<String>> = d
        .findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            vec![
                (i + 1).to_string(),
                f.severity.as_str().into(),
                f.kind.as_str().into(),
                f.variable.clone(),
                f.current.clone(),
                recommended(f),
                restart(f).into(),
            ]
        })
        .collect();
    let mut s = header(d) + "\n\n";
    s += &aligned(&head.map(String::from), &rows);
    s.push('\n');
    for (i, f) in d.findings.iter().enumerate() {
        let _ = writeln!(s, "{:>2}. {}: {}", i + 1, f.variable, f.reason);
    }
    s.push('\n');
    s + &footer(d)
}

/// Markdown: the header, a table with the reasons in it, the footer.
pub(crate) fn markdown(d: &AdviseDoc) -> String {
    let cell = |t: &str| t.replace('|', "\\|");
    let mut s = format!("# qpslab advise\n\n{}\n\n", header(d));
    s += "| severity | kind | variable | current | recommended | restart | reason |\n";
    s += "|---|---|---|---|---|---|---|\n";
    for f in &d.findings {
        let _ = writeln!(
            s,
            "| {} | {} | `{}` | {} | {} | {} | {} |",
            f.severity.as_str(),
            f.kind.as_str(),
            f.variable,
            cell(&f.current),
            cell(&recommended(f)),
            restart(f),
            cell(&f.reason)
        );
    }
    s + "\n" + &footer(d)
}

/// The recommended server settings as a `[mysqld]` section, each under a comment with its
/// reason; OS recommendations follow as comments (they are not server settings).
pub(crate) fn cnf(d: &AdviseDoc) -> String {
    let mut s = format!("# qpslab advise for {}\n[mysqld]\n", header(d));
    let recs = d.findings.iter().filter(|f| f.recommends());
    for f in recs.clone().filter(|f| f.kind != FindingKind::Os) {
        let how = if f.restart_needed {
            "needs a restart"
        } else {
            "dynamic: SET GLOBAL applies it"
        };
        let _ = writeln!(
            s,
            "# {} ({how}; was {}): {}",
            f.severity.as_str(),
            f.current,
            f.reason
        );
        let _ = writeln!(s, "{} = {}", f.variable, recommended(f));
    }
    let os: Vec<&Finding> = recs.filter(|f| f.kind == FindingKind::Os).collect();
    if !os.is_empty() {
        s += "\n# Host settings (not my.cnf options; set them in the OS):\n";
        for f in os {
            let _ = writeln!(
                s,
                "#   {} = {} (now {}): {}",
                f.variable,
                recommended(f),
                f.current,
                f.reason
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::tests::golden;
    use qpslab_core::advise::Severity;

    fn f(
        kind: FindingKind,
        variable: &str,
        current: &str,
        rec: Option<&str>,
        severity: Severity,
        restart: bool,
        reason: &str,
    ) -> Finding {
        Finding {
            variable: variable.into(),
            current: current.into(),
            recommended: rec.map(String::from),
            reason: reason.into(),
            severity,
            restart_needed: restart,
            kind,
        }
    }

    fn doc() -> AdviseDoc {
        use FindingKind::*;
        AdviseDoc {
            target: "root@localhost/?socket=/tmp/lab/mysqld.sock".into(),
            version: "10.11.19-MariaDB-0+deb12u1".into(),
            flavor: "mariadb".into(),
            uptime_s: 7200,
            innodb_data_bytes: 2 << 30,
            local: true,
            memory_bytes: Some(8 << 30),
            cores: Some(2),
            durability: super::Durability::Strict,
            findings: vec![
                f(Server, "innodb_buffer_pool_size", "134217728", Some("2684354560"), Severity::High, false, "data 2 GiB, buffer pool 128 MiB, hit ratio 91.2% (Innodb_buffer_pool_reads 81k of 920k): reads miss the pool and go to disk; 2.5 GiB holds the data with 25% to spare; RAM 8 GiB (70%: 5.5 GiB)"),
                f(Server, "performance_schema", "ON", Some("OFF"), Severity::Low, true, "performance_schema ON: a few percent | on short queries"),
                f(Os, "vm.swappiness", "60", Some("1"), Severity::Low, false, "vm.swappiness 60: the kernel may swap out buffer pool pages"),
                f(Durability, "innodb_flush_log_at_trx_commit", "1", None, Severity::Info, false, "innodb_flush_log_at_trx_commit 1; 2 syncs once a second (not recommended without --durability relaxed)"),
            ],
        }
    }

    #[test]
    fn advise_table_golden() {
        golden("advise.txt", &table(&doc()));
    }

    #[test]
    fn advise_markdown_golden() {
        golden("advise.md", &markdown(&doc()));
    }

    #[test]
    fn advise_json_golden() {
        golden(
            "advise.json",
            &(serde_json::to_string_pretty(&doc()).unwrap() + "\n"),
        );
    }

    #[test]
    fn advise_cnf_golden() {
        let text = cnf(&doc());
        // Only recommended server settings are options; the rest are comments.
        let options: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .collect();
        assert_eq!(
            options,
            [
                "[mysqld]",
                "innodb_buffer_pool_size = 2684354560",
                "performance_schema = OFF"
            ]
        );
        golden("advise.cnf", &text);
    }
}
