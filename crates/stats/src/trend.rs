//! Trends in a series: Mann–Kendall's rank statistic, the Theil–Sen slope, and a least-squares
//! line with the standard error of its slope.

use crate::sample::median;

/// Mann–Kendall's statistic of `ys` in their order, as a standard normal `z` (with the
/// continuity correction, without a correction for ties; its sign dropped): `S` counts the
/// pairs that rise minus those that fall, its variance without a trend is
/// `n(n − 1)(2n + 5) / 18`, and `z = max(|S| − 1, 0) / √var`. Ranks only, so one wild value
/// can neither make nor hide a trend. 0 for fewer than two values.
pub fn mann_kendall_z(ys: &[f64]) -> f64 {
    let n = ys.len();
    if n < 2 {
        return 0.0;
    }
    let mut score = 0i64;
    for i in 0..n {
        for j in i + 1..n {
            let dy = ys[j] - ys[i];
            score += (dy > 0.0) as i64 - (dy < 0.0) as i64;
        }
    }
    let nf = n as f64;
    let var = nf * (nf - 1.0) * (2.0 * nf + 5.0) / 18.0;
    (score.abs() as f64 - 1.0).max(0.0) / var.sqrt()
}

/// The Theil–Sen slope of `pts` (x, y): the median of the slopes between every two points, in
/// their order, whose x differ (a later point with a larger x); 0 when no two do.
pub fn theil_sen_slope(pts: &[(f64, f64)]) -> f64 {
    let n = pts.len();
    let mut slopes = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            if pts[j].0 > pts[i].0 {
                slopes.push((pts[j].1 - pts[i].1) / (pts[j].0 - pts[i].0));
            }
        }
    }
    median(slopes)
}

/// A least-squares line through `pts` (x, y): its slope, the slope's standard error and the
/// mean of y; none for fewer than 3 points or a mean of y that is not positive.
pub fn fit(pts: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = pts.len() as f64;
    if pts.len() < 3 {
        return None;
    }
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 || my <= 0.0 {
        return None;
    }
    let slope = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx;
    let rss: f64 = pts
        .iter()
        .map(|p| (p.1 - my - slope * (p.0 - mx)).powi(2))
        .sum();
    let se = (rss / (n - 2.0) / sxx).sqrt();
    Some((slope, se, my))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mann_kendall_counts_rises_and_falls() {
        // Ten rising values: S = 45, var = 10·9·25/18 = 125.
        let rising: Vec<f64> = (0..10).map(f64::from).collect();
        assert!((mann_kendall_z(&rising) - 44.0 / 125f64.sqrt()).abs() < 1e-12);
        // Falling gives the same size; the sign is dropped.
        let falling: Vec<f64> = rising.iter().rev().copied().collect();
        assert_eq!(mann_kendall_z(&falling), mann_kendall_z(&rising));
        // Ranks only: one huge value changes nothing.
        let mut wild = rising.clone();
        wild[9] = 1e9;
        assert_eq!(mann_kendall_z(&wild), mann_kendall_z(&rising));
        assert_eq!(mann_kendall_z(&[5.0; 8]), 0.0);
        assert_eq!(mann_kendall_z(&[1.0]), 0.0);
    }

    #[test]
    fn theil_sen_ignores_an_outlier() {
        let mut pts: Vec<(f64, f64)> = (0..9).map(|i| (i as f64, 3.0 * i as f64 + 1.0)).collect();
        pts[4].1 = 1000.0;
        assert_eq!(theil_sen_slope(&pts), 3.0);
        // Points that share an x give no slope.
        assert_eq!(theil_sen_slope(&[(1.0, 2.0), (1.0, 5.0)]), 0.0);
    }

    #[test]
    fn least_squares_slope_and_its_error() {
        let line: Vec<(f64, f64)> = (0..5).map(|i| (i as f64, 10.0 + 2.0 * i as f64)).collect();
        let (slope, se, mean) = fit(&line).unwrap();
        assert!((slope - 2.0).abs() < 1e-12 && se.abs() < 1e-12 && (mean - 14.0).abs() < 1e-12);
        // Residuals 2/3, -4/3, 2/3 around the mean 31/3: rss 8/3, se √(rss / (n − 2) / sxx).
        let (slope, se, _) = fit(&[(0.0, 11.0), (1.0, 9.0), (2.0, 11.0)]).unwrap();
        assert!(slope.abs() < 1e-12);
        assert!((se - (8.0f64 / 3.0 / 2.0).sqrt()).abs() < 1e-12, "{se}");
        assert_eq!(fit(&[(0.0, 1.0), (1.0, 2.0)]), None);
        assert_eq!(fit(&[(0.0, -1.0), (1.0, -2.0), (2.0, -3.0)]), None);
        assert_eq!(fit(&[(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)]), None);
    }
}
