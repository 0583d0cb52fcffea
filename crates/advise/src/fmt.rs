//! Figures as the reasons print them: counts with k/M (sizes in binary units are
//! `qpslab_core::units::short_size`, spans in minutes or hours `qpslab_core::units::span_text`).

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
    }
}
