//! Axis ticks and the numbers written at them: linear steps of 1, 2 and 5, log decades, the
//! percentile axis's labels.

/// A tick of the percentile axis (`1/(1-p)`: 2 or a power of ten) as its percentile: `0%`,
/// `50%`, `90%`, `99.9%`.
pub(crate) fn percentile_label(x: f64) -> String {
    let k = x.max(1.0).log10().round() as i32;
    let p = 100.0 - 100.0 / x.max(1.0);
    format!("{p:.*}%", (k - 2).max(0) as usize)
}

/// A tick of a log axis: as [`fmt_num`], with the digits a value under 0.01 needs (`0.002`,
/// `0.0005`).
pub(crate) fn fmt_small(v: f64) -> String {
    if v > 0.0 && v < 0.01 {
        let digits = (-v.log10()).ceil() as usize;
        format!("{v:.digits$}")
    } else {
        fmt_num(v)
    }
}

pub(crate) fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let n = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// Ticks of a log axis over `[lo, hi]` (both above 0) and the axis' ends: the ends snap to the
/// nearest 1, 2 or 5 times a power of ten outside the range, and the ticks between are those
/// values too, or only the powers of ten when the range spans more than three decades, so
/// labels never crowd.
pub(crate) fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, f64, f64) {
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let b = b.max(a + 1);
    let all: Vec<f64> = (a..=b)
        .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
        .collect();
    let bottom = all
        .iter()
        .copied()
        .rfind(|t| *t <= lo * (1.0 + 1e-9))
        .unwrap_or(all[0]);
    let top = all
        .iter()
        .copied()
        .find(|t| *t >= hi * (1.0 - 1e-9) && *t > bottom)
        .unwrap_or(all[all.len() - 1]);
    let decades_only = b - a > 3;
    let ticks = all
        .into_iter()
        .filter(|t| *t >= bottom && *t <= top)
        .filter(|t| {
            let power = (t.log10() - t.log10().round()).abs() < 1e-9;
            !decades_only || power || *t == bottom || *t == top
        })
        .collect();
    (ticks, bottom, top)
}

/// Ticks from 0 to a round maximum at or above `max`, and that maximum.
pub(crate) fn nice_ticks(max: f64) -> (Vec<f64>, f64) {
    let step = nice_step(max / 5.0);
    let top = (max / step).ceil() * step;
    let n = (top / step).round() as usize;
    ((0..=n).map(|i| i as f64 * step).collect(), top)
}

/// A number as a short label: `12k`, `1.5M`, `0.25`.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if a >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if a >= 1e4 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else {
        trim(format!("{v:.3}"))
    }
}
