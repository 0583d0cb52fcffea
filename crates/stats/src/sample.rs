//! Order statistics of a sample: the median, the upper quartile, and the nearest-rank
//! quantile.

/// The median of `v` (the mean of the two middle values for an even count); 0 when empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The upper quartile of `v`, interpolated linearly between the two nearest ranks; 0 when
/// empty.
pub fn upper_quartile(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let pos = (v.len() - 1) as f64 * 0.75;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
}

/// The `q` quantile (0..1) of `xs` by nearest rank (the smallest value with at least a share
/// `q` of the sample at or below it); 0 when empty.
pub fn nearest_rank(xs: &[u64], q: f64) -> f64 {
    let mut v = xs.to_vec();
    v.sort_unstable();
    match v.len() {
        0 => 0.0,
        n => v[((q * n as f64).ceil() as usize).clamp(1, n) - 1] as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_upper_quartiles() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(Vec::new()), 0.0);
        // Five values: the quartile is the fourth; four: between the third and the fourth.
        assert_eq!(upper_quartile(vec![5.0, 1.0, 4.0, 2.0, 3.0]), 4.0);
        assert_eq!(upper_quartile(vec![1.0, 2.0, 3.0, 5.0]), 3.5);
        assert_eq!(upper_quartile(Vec::new()), 0.0);
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let xs: Vec<u64> = (1..=100).collect();
        assert_eq!(nearest_rank(&xs, 0.5), 50.0);
        assert_eq!(nearest_rank(&xs, 0.95), 95.0);
        assert_eq!(nearest_rank(&[], 0.5), 0.0);
    }
}
