//! Figures as the reasons print them: counts with k/M, spans in minutes or hours (sizes in
//! binary units are `qpslab_core::units::short_size`).

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
        assert_eq!(count(920), "920");
        assert_eq!(count(81_234), "81k");
        assert_eq!(count(1_234_567), "1.2M");
        assert_eq!(round_up(129 << 20, 128 << 20), 256 << 20);
        assert_eq!(round_up(128 << 20, 128 << 20), 128 << 20);
        assert_eq!(span(7200), "2.0 h");
        assert_eq!(span(900), "15 min");
    }
}
