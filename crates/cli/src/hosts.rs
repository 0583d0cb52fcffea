//! Which hosts runs were measured on. A store can hold runs of several hosts (`qpslab
//! import`): `compare` says when its two sides ran on different hosts, and `show` lists each
//! run's host when the runs it lists come from more than one.

use qpslab_core::env::HostFacts;
use std::collections::BTreeSet;

/// A host as a reader tells it apart: its name and CPU model.
pub fn describe(h: &HostFacts) -> String {
    match (h.hostname.is_empty(), h.cpu_model.is_empty()) {
        (true, true) => "an unrecorded host".into(),
        (false, true) => h.hostname.clone(),
        (true, false) => h.cpu_model.clone(),
        (false, false) => format!("{} ({})", h.hostname, h.cpu_model),
    }
}

/// One line when side `na`'s runs (`a`) and side `nb`'s (`b`) were not all measured on one
/// host (a name or CPU model differs), naming each side's hosts; `None` on one host.
pub fn sides_differ(na: &str, a: &[&HostFacts], nb: &str, b: &[&HostFacts]) -> Option<String> {
    let hosts =
        |side: &[&HostFacts]| -> BTreeSet<String> { side.iter().map(|h| describe(h)).collect() };
    let (ha, hb) = (hosts(a), hosts(b));
    if ha.union(&hb).count() <= 1 {
        return None;
    }
    let list = |s: BTreeSet<String>| s.into_iter().collect::<Vec<_>>().join(" and ");
    Some(format!(
        "the sides ran on different hosts: {na} on {}, {nb} on {}",
        list(ha),
        list(hb)
    ))
}

/// The hosts of listed runs, when they are not all one (else `None`: a column of one name
/// says nothing).
pub fn column(hosts: Vec<String>) -> Option<Vec<String>> {
    let distinct: BTreeSet<&String> = hosts.iter().collect();
    (distinct.len() > 1).then_some(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, cpu: &str) -> HostFacts {
        HostFacts {
            hostname: name.into(),
            cpu_model: cpu.into(),
            ..Default::default()
        }
    }

    #[test]
    fn sides_on_one_host_say_nothing_and_on_two_name_both() {
        let (x, y) = (host("vm", "AMD EPYC"), host("beta", "Neoverse-V2"));
        assert_eq!(sides_differ("run 1", &[&x], "run 2", &[&x, &x]), None);
        assert_eq!(
            sides_differ("run 1", &[&x], "run 2", &[&y]).as_deref(),
            Some("the sides ran on different hosts: run 1 on vm (AMD EPYC), run 2 on beta (Neoverse-V2)")
        );
        // The same name on another CPU is another machine.
        let z = host("vm", "Xeon");
        assert!(sides_differ("a", &[&x], "b", &[&z]).is_some());
        // A side that ran on both is said so.
        let line = sides_differ("a", &[&x, &y], "b", &[&x]).unwrap();
        assert!(
            line.contains("a on beta (Neoverse-V2) and vm (AMD EPYC)"),
            "{line}"
        );
    }

    #[test]
    fn a_host_column_only_for_several_hosts() {
        assert_eq!(column(vec!["vm".into(), "vm".into()]), None);
        assert_eq!(
            column(vec!["vm".into(), "beta".into()]),
            Some(vec!["vm".into(), "beta".into()])
        );
    }
}
