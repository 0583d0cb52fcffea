//! Holm's step-down correction for many tests at once.

/// Holm's step-down correction: which of `p` are significant with a family-wise error rate of
/// `alpha`. The smallest p-value is tested at `alpha / m`, the next at `alpha / (m − 1)`...,
/// stopping at the first that fails.
pub fn holm(p: &[f64], alpha: f64) -> Vec<bool> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let m = p.len();
    let mut out = vec![false; m];
    for (k, &i) in order.iter().enumerate() {
        // A NaN p-value (no spread to test) is never significant.
        if p[i].is_nan() || p[i] > alpha / (m - k) as f64 {
            break;
        }
        out[i] = true;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holm_tests_the_smallest_p_at_alpha_over_m_and_stops_at_the_first_failure() {
        // m = 4: 0.01 ≤ 0.05/4, 0.015 ≤ 0.05/3, 0.03 > 0.05/2 stops, 0.04 not tested.
        assert_eq!(
            holm(&[0.04, 0.01, 0.03, 0.015], 0.05),
            [false, true, false, true]
        );
        // Uncorrected, 0.02 would pass at 0.05; among ten tests it does not.
        let mut p = vec![0.5; 9];
        p.push(0.02);
        assert!(holm(&p, 0.05).iter().all(|s| !s));
        assert_eq!(holm(&[0.02], 0.05), [true]);
        assert!(holm(&[], 0.05).is_empty());
    }
}
