//! Figures as the reasons print them: sizes in binary units, counts with k/M.

/// `1.9 GiB`, `128 MiB`, `512 KiB`, `12 B`.
pub fn bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (unit, size) in UNITS {
        if n >= size {
            let v = n as f64 / size as f64;
            return if v >= 100.0 || (v.fract() == 0.0) {
                format!("{v:.0} {unit}")
            } else {
                format!("{v:.1} {unit}")
            };
        }
    }
    format!("{n} B")
}

/// `920`, `81k`, `1.2M`.
pub fn count(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.0}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// `n` rounded up to a multiple of `step`.
pub(crate) fn round_up(n: u64, step: u64) -> u64 {
    n.div_ceil(step).saturating_mul(step)
}

/// A duration in seconds as minutes or hours.
pub(crate) fn span(s: u64) -> String {
    if s >= 7200 {
        format!("{:.1} h", s as f64 / 3600.0)
    } else {
        format!("{} min", s / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures() {
        assert_eq!(bytes(128 << 20), "128 MiB");
        assert_eq!(bytes(2040109465), "1.9 GiB");
        assert_eq!(bytes(12), "12 B");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(count(920), "920");
        assert_eq!(count(81_234), "81k");
        assert_eq!(count(1_234_567), "1.2M");
        assert_eq!(round_up(129 << 20, 128 << 20), 256 << 20);
        assert_eq!(round_up(128 << 20, 128 << 20), 128 << 20);
        assert_eq!(span(7200), "2.0 h");
        assert_eq!(span(900), "15 min");
    }
}
