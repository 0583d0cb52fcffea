//! Quantiles and tail probabilities of the standard normal and of Student's t (statrs).

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The standard normal quantile.
pub fn normal_quantile(p: f64) -> f64 {
    // Normal::new(0, 1) cannot fail: the parameters are finite and the spread positive.
    match Normal::new(0.0, 1.0) {
        Ok(n) => n.inverse_cdf(p.clamp(1e-300, 1.0 - 1e-16)),
        Err(_) => f64::NAN,
    }
}

/// Student's t quantile with `df` degrees of freedom, fractional allowed (statrs: the inverse
/// of the regularized incomplete beta function, exact to floating-point precision). `df` of
/// infinity or above 1e7 is the normal quantile; `df` ≤ 0 has no quantile (NaN).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if df > 1e7 {
        return normal_quantile(p);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => t.inverse_cdf(p.clamp(0.0, 1.0)),
        Err(_) => f64::NAN,
    }
}

/// The two-sided p-value of a mean of `mean` with standard error `se` being 0, from Student's
/// t with `df` degrees of freedom. A mean without spread is certain: 0 unless it is 0.
pub fn t_p_value(mean: f64, se: f64, df: f64) -> f64 {
    if se <= 0.0 || !se.is_finite() {
        return if mean == 0.0 { 1.0 } else { 0.0 };
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(t) => 2.0 * (1.0 - t.cdf((mean / se).abs())),
        Err(_) => f64::NAN,
    }
}

/// The standard normal distribution function.
pub fn normal_cdf(x: f64) -> f64 {
    match Normal::new(0.0, 1.0) {
        Ok(n) => n.cdf(x),
        Err(_) => f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_tables() {
        for (df, want) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (3.0, 3.182),
            (5.0, 2.571),
            (10.0, 2.228),
            (30.0, 2.042),
            (1000.0, 1.962),
        ] {
            let got = t_quantile(0.975, df);
            assert!(
                (got - want).abs() / want < 0.0005,
                "df {df}: {got} vs {want}"
            );
        }
        assert!((normal_quantile(0.975) - 1.959_964).abs() < 1e-5);
        assert!((t_quantile(0.8, 1e9) - 0.841_621).abs() < 1e-5);
        assert!(t_quantile(0.975, 0.0).is_nan());
    }

    #[test]
    fn t_quantiles_are_exact_for_fractional_df() {
        // Welch's df with two repeats a side falls between 1 and 2.
        for (df, want) in [(1.2, 8.649), (1.5, 6.017), (2.5, 3.575), (4.0, 2.776)] {
            let got = t_quantile(0.975, df);
            assert!((got - want).abs() < 0.0015, "df {df}: {got} vs {want}");
        }
        // Monotone in df between the integers, not a step.
        assert!(t_quantile(0.975, 1.2) > t_quantile(0.975, 1.5));
        assert!(t_quantile(0.975, 1.5) > t_quantile(0.975, 1.9));
        assert!(t_quantile(0.975, 1.9) > t_quantile(0.975, 2.0));
        assert!((normal_quantile(0.001) + 3.090_232).abs() < 1e-5);
    }

    #[test]
    fn p_values_of_t_statistics() {
        // t = 2.228 with 10 df is the two-sided 5% point.
        assert!((t_p_value(2.228, 1.0, 10.0) - 0.05).abs() < 1e-4);
        assert!((t_p_value(-2.228, 1.0, 10.0) - 0.05).abs() < 1e-4);
        assert!((t_p_value(0.0, 1.0, 10.0) - 1.0).abs() < 1e-12);
        // No spread: certain.
        assert_eq!(t_p_value(0.3, 0.0, 5.0), 0.0);
        assert_eq!(t_p_value(0.0, 0.0, 5.0), 1.0);
    }
}
