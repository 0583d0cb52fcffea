//! CPU lists in taskset's format (`0`, `0-3`, `0-3,6`), one set of rules for every place that
//! takes one (`--client-cpus`, `--server-cpus`, `server start --cpus`, a study's `cpus` and
//! `client_cpus`): ranges are bounded, the list is sorted, deduplicated and non-empty, and every
//! CPU exists on this machine.
//!
//! ```
//! use qpslab_core::cpus::parse_cpu_list;
//! assert_eq!(parse_cpu_list("0,0-0").unwrap(), vec![0]);
//! assert!(parse_cpu_list("3-1").is_err());
//! ```

/// CPU numbers at or above this are refused before a range is listed: Linux builds for at most
/// 8192 CPUs, and `0-18446744073709551615` must not list every number.
pub const MAX_CPUS: usize = 1 << 16;

/// What is wrong with a CPU list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    /// Not taskset's format, a range that runs backwards, or a number beyond [`MAX_CPUS`].
    #[error("CPU list '{list}': expected e.g. 0 or 0-3,6")]
    Syntax {
        /// The list as given.
        list: String,
    },
    /// The list names no CPU.
    #[error("the CPU list is empty")]
    Empty,
    /// A CPU this machine does not have.
    #[error("CPU list '{list}': CPU {cpu} does not exist (this machine has CPUs 0-{})", configured - 1)]
    Missing {
        /// The list as given.
        list: String,
        /// The first CPU that does not exist.
        cpu: usize,
        /// How many CPUs the machine has.
        configured: usize,
    },
}

/// Parses a CPU list and checks it with [`check_cpus`]: sorted, deduplicated, non-empty, every
/// CPU present on this machine.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, CpuListError> {
    let bad = || CpuListError::Syntax {
        list: s.to_string(),
    };
    let number = |t: &str| t.trim().parse::<usize>().ok().filter(|c| *c < MAX_CPUS);
    let mut cpus = Vec::new();
    for part in s.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (number(a).ok_or_else(bad)?, number(b).ok_or_else(bad)?);
                if a > b {
                    return Err(bad());
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(number(part).ok_or_else(bad)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    check_cpus(&cpus).map_err(|e| match e {
        CpuListError::Missing {
            cpu, configured, ..
        } => CpuListError::Missing {
            list: s.to_string(),
            cpu,
            configured,
        },
        other => other,
    })?;
    Ok(cpus)
}

/// Checks a list of CPUs: non-empty, and every CPU one this machine has (whatever this process's
/// own affinity: a qpslab started under `taskset -c 1` may still place a server on CPU 0).
pub fn check_cpus(cpus: &[usize]) -> Result<(), CpuListError> {
    if cpus.is_empty() {
        return Err(CpuListError::Empty);
    }
    let configured = configured_cpus();
    match cpus.iter().find(|c| **c >= configured) {
        Some(&cpu) => Err(CpuListError::Missing {
            list: render(cpus),
            cpu,
            configured,
        }),
        None => Ok(()),
    }
}

/// How many CPUs the machine has (`_SC_NPROCESSORS_CONF`, online or not).
pub fn configured_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    if n > 0 {
        n as usize
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// A CPU list written back as numbers joined by commas (`0,1,3`), which [`parse_cpu_list`] reads.
pub fn render(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// A CPU list in taskset's compact form, runs as ranges (`0-3,6`), which [`parse_cpu_list`]
/// reads; `cpus` must be sorted.
pub fn render_ranges(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_written_compactly_and_read_back() {
        assert_eq!(render_ranges(&[12, 13, 14, 15]), "12-15");
        assert_eq!(render_ranges(&[0, 2, 3, 4, 7]), "0,2-4,7");
        assert_eq!(render_ranges(&[1]), "1");
        assert_eq!(render_ranges(&[]), "");
    }

    #[test]
    fn lists_are_sorted_and_deduplicated() {
        assert_eq!(parse_cpu_list("0").unwrap(), vec![0]);
        assert_eq!(parse_cpu_list(" 0 - 0 ,0").unwrap(), vec![0]);
        if configured_cpus() >= 2 {
            assert_eq!(parse_cpu_list("1,0-1").unwrap(), vec![0, 1]);
        }
    }

    #[test]
    fn malformed_lists_are_refused() {
        for bad in [
            "",
            "x",
            "1-0",
            "0,",
            "-1",
            "0-",
            "0-18446744073709551615",
            "65536",
        ] {
            let e = parse_cpu_list(bad).unwrap_err();
            assert!(matches!(e, CpuListError::Syntax { .. }), "{bad}: {e}");
            assert!(e.to_string().contains("CPU list"), "{e}");
        }
    }

    #[test]
    fn cpus_must_exist_here() {
        let n = configured_cpus();
        let e = parse_cpu_list(&format!("0,{n}")).unwrap_err();
        let text = format!(
            "CPU list '0,{n}': CPU {n} does not exist (this machine has CPUs 0-{})",
            n - 1
        );
        assert_eq!(e.to_string(), text);
        assert!(check_cpus(&[0]).is_ok());
        assert_eq!(check_cpus(&[]), Err(CpuListError::Empty));
        assert!(matches!(
            check_cpus(&[100_000]),
            Err(CpuListError::Missing { cpu: 100_000, .. })
        ));
    }
}
