//! Durations and sizes as people type and read them: every parser and formatter of seconds and
//! bytes in qpslab lives here.
//!
//! Each syntax below is the one a command has always accepted, kept exactly (a value that was
//! refused stays refused):
//! - [`seconds`]: the run options' times (`--time`, `--warmup`, a spec's `time`, `capture
//!   --for`): a number of seconds (`5`, `0.5`) or a duration with units as `humantime` reads
//!   it (`2s`, `500ms`, `1m30s`, `1 min`, `2h`).
//! - [`budget_seconds`]: `tune --budget`: a positive number with one optional unit (`90`,
//!   `10m`, `1h`).
//! - [`offset_seconds`]: the time of a live action (`--at 1m30s:...`): a number, or numbers
//!   with `ms`, `s`, `m`, `h` written together (`1m30s`, `1.5m`).
//! - [`parse_size`]: a `storage` table's image size (`4G`, `512m`, `1GiB`, `1048576`).
//! - [`sysbench_size`]: fileio's sizes as sysbench reads them (`16384`, `16K`, `8kb`, `2 G`).
//! - [`cnf_size`]: a server variable's value as my.cnf reads it (`512M`; a unit is required).
//!
//! Sizes print in three ways: [`size_text`] as sysbench writes them (`2G`), [`binary_size`]
//! as `du -h` reads (`312.0 MiB`), [`short_size`] as advice reads (`128 MiB`, `1.9 GiB`).
//! Times print in four: [`duration_text`] for elapsed times and ETAs (`2m05s`),
//! [`span_text`] for advice's long spans (`15 min`, `2.0 h`), [`latency_text`] for a latency
//! (`12.3 ms`), [`timeout_text`] for a limit as it was typed (`5 s`, `500 ms`).
//!
//! ```
//! use qpslab_core::units;
//! assert_eq!(units::seconds("1m30s"), Ok(90.0));
//! assert_eq!(units::parse_size("4G"), Ok(4 << 30));
//! assert_eq!(units::binary_size(1536), "1.5 KiB");
//! ```

use thiserror::Error;

/// A text that is not a time or a size in the syntax asked for. The Display is the line the
/// user reads (`size 'lots': a number with K, M, G or T, e.g. 4G`).
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    /// Not a time (the text, trimmed).
    #[error("'{0}' is not a time (30, 30s, 1m30s, 500ms)")]
    Time(String),
    /// Not a size (the text as given).
    #[error("size '{0}': a number with K, M, G or T, e.g. 4G")]
    Size(String),
    /// A size of 2^64 bytes or more (the text as given).
    #[error("size '{0}' is too large")]
    TooLarge(String),
}

/// Seconds as the run options read them: a number (`5`, `0.5`, `1e3`) or a duration with
/// units as `humantime` reads it (`2s`, `1.5s`, `500ms`, `1m30s`, `1 min`, `2h`, `1day`);
/// never negative or infinite. The text is trimmed first.
pub fn seconds(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let bad = || UnitError::Time(t.to_string());
    let s = match t.parse::<f64>() {
        Ok(n) => n,
        Err(_) => humantime::parse_duration(t)
            .map_err(|_| bad())?
            .as_secs_f64(),
    };
    if s.is_finite() && s >= 0.0 {
        Ok(s)
    } else {
        Err(bad())
    }
}

/// Seconds from zero as a live action's time reads them: a number (`30`, `0.5`), or numbers
/// each followed by `ms`, `s`, `m` or `h`, written together (`30s`, `1m30s`, `500ms`,
/// `1.5m`). The text is trimmed first.
pub fn offset_seconds(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let bad = || UnitError::Time(t.to_string());
    let mut total = 0.0;
    let mut rest = t;
    if let Ok(s) = t.parse::<f64>() {
        return (s.is_finite() && s >= 0.0).then_some(s).ok_or_else(bad);
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let n: f64 = rest[..digits].parse().map_err(|_| bad())?;
        let unit_len = rest[digits..]
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len() - digits);
        let scale = match &rest[digits..digits + unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += n * scale;
        rest = &rest[digits + unit_len..];
    }
    (!t.is_empty() && total.is_finite())
        .then_some(total)
        .ok_or_else(bad)
}

/// A positive time budget as `tune --budget` reads it: a number, then nothing, `s`, `m`,
/// `min` or `h`, spaces allowed between (`90`, `90s`, `1.5m`, `10 min`, `1h`). No sum of parts
/// (`1m30s`), no exponent (`1e3`). The text is trimmed first.
pub fn budget_seconds(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let bad = || UnitError::Time(t.to_string());
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let mult = match unit {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(bad()),
    };
    match num.trim().parse::<f64>() {
        Ok(n) if n > 0.0 && n.is_finite() => Ok(n * mult),
        _ => Err(bad()),
    }
}

/// The power of 1024 of a unit letter: K 10, M 20, G 30, T 40 (either case).
fn shift_of(unit: char) -> Option<u32> {
    match unit.to_ascii_uppercase() {
        'K' => Some(10),
        'M' => Some(20),
        'G' => Some(30),
        'T' => Some(40),
        _ => None,
    }
}

/// `n << shift`, `None` when it does not fit in 64 bits.
fn scaled(n: u64, shift: u32) -> Option<u64> {
    n.checked_mul(1u64 << shift)
}

/// A size as a `storage` table reads it: digits, then nothing, `B`, or K, M, G, T in either
/// case with `B`/`iB` after it (`4G`, `512m`, `1GiB`, `1KB`, `1048576`). Spaces around the
/// whole are ignored; none may sit between the number and its unit.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let bad = || UnitError::Size(text.to_string());
    let shift = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 0,
        u => {
            let mut chars = u.chars();
            match (chars.next().and_then(shift_of), chars.next()) {
                (Some(s), None) => s,
                _ => return Err(bad()),
            }
        }
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    scaled(n, shift).ok_or_else(|| UnitError::TooLarge(text.to_string()))
}

/// A size as sysbench's fileio reads it: a whole number with an optional K, M, G or T
/// (powers of 1024, either case), any trailing `b`/`B` ignored, spaces allowed between the
/// number and its unit (`16384`, `16K`, `64M`, `8kb`, `2 G`). Every refusal, a size too
/// large included, is [`UnitError::Size`].
pub fn sysbench_size(text: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::Size(text.to_string());
    let t = text.trim_end_matches(['b', 'B']);
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], shift_of(c).ok_or_else(bad)?),
        _ => (t, 0),
    };
    let n: u64 = digits.trim().parse().map_err(|_| bad())?;
    scaled(n, shift).ok_or_else(bad)
}

/// A size as my.cnf reads a server variable: a whole number followed by K, M, G or T
/// (powers of 1024, either case), the unit required (`512M`, `2k`). Every refusal is
/// [`UnitError::Size`].
pub fn cnf_size(text: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::Size(text.to_string());
    let (last, unit) = text.char_indices().next_back().ok_or_else(bad)?;
    let shift = shift_of(unit).ok_or_else(bad)?;
    let n: u64 = text[..last].parse().map_err(|_| bad())?;
    scaled(n, shift).ok_or_else(bad)
}

/// A size as sysbench writes it: `2G`, `16K`, or bytes when not a whole unit.
pub fn size_text(bytes: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Bytes as `du -h` reads them, in the largest unit that keeps one decimal: `312.0 MiB`,
/// `1.5 KiB`; under 1 KiB, whole bytes: `1023 B`.
pub fn binary_size(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Bytes as a short figure: whole units when exact or 100 and over, one decimal otherwise
/// (`1.9 GiB`, `128 MiB`, `512 KiB`, `12 B`).
pub fn short_size(n: u64) -> String {
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

/// Seconds as progress lines and estimates write them, rounded to whole seconds: `16s`,
/// `2m05s`, `1h02m`; a negative time is `0s`.
pub fn duration_text(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// A long span of seconds as advice reads it: whole minutes, or hours with one decimal from
/// two hours on (`15 min`, `2.0 h`).
pub fn span_text(s: u64) -> String {
    if s >= 7200 {
        format!("{:.1} h", s as f64 / 3600.0)
    } else {
        format!("{} min", s / 60)
    }
}

/// A latency in microseconds, in the unit that reads best: `850 µs`, `12.3 ms`, `1.25 s`.
pub fn latency_text(us: f64) -> String {
    let a = us.abs();
    if a >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{us:.0} µs")
    }
}

/// A time limit as the user typed it: whole seconds when it is (`5 s`), else milliseconds
/// (`500 ms`).
pub fn timeout_text(d: std::time::Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_print_in_four_ways() {
        use std::time::Duration;
        assert_eq!(duration_text(16.4), "16s");
        assert_eq!(duration_text(125.0), "2m05s");
        assert_eq!(duration_text(3720.0), "1h02m");
        assert_eq!(duration_text(-3.0), "0s");
        assert_eq!(span_text(7200), "2.0 h");
        assert_eq!(span_text(900), "15 min");
        assert_eq!(latency_text(850.2), "850 µs");
        assert_eq!(latency_text(12_345.0), "12.3 ms");
        assert_eq!(latency_text(-1_250_000.0), "-1.25 s");
        assert_eq!(timeout_text(Duration::from_secs(5)), "5 s");
        assert_eq!(timeout_text(Duration::from_millis(1500)), "1500 ms");
    }

    #[test]
    fn option_seconds_in_every_spelling() {
        for (t, s) in [
            ("5", 5.0),
            (" 0.5 ", 0.5),
            ("1.5", 1.5),
            ("1e3", 1000.0),
            ("2s", 2.0),
            ("500ms", 0.5),
            ("1m30s", 90.0),
            ("1m 30s", 90.0),
            ("1 min", 60.0),
            ("2h", 7200.0),
            ("1day", 86400.0),
            ("0", 0.0),
            ("1.5s", 1.5),
        ] {
            assert_eq!(seconds(t), Ok(s), "{t}");
        }
        // Fractions of a unit, negative and endless times, and words are refused.
        for bad in ["", "soon", "-1", "inf", "NaN", "-2s", "5x", "1m30"] {
            assert_eq!(
                seconds(bad),
                Err(UnitError::Time(bad.trim().into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn offsets_in_every_spelling() {
        for (t, s) in [
            ("30", 30.0),
            ("30s", 30.0),
            ("1m30s", 90.0),
            ("500ms", 0.5),
            ("0.5", 0.5),
            ("1.5m", 90.0),
            ("1h", 3600.0),
            (" 2s ", 2.0),
        ] {
            assert_eq!(offset_seconds(t), Ok(s), "{t}");
        }
        for bad in [
            "", "soon", "-1", "5x", "s", "1m30", "1 min", "1day", "inf", "m5",
        ] {
            assert!(offset_seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(
            offset_seconds(" soon ").unwrap_err().to_string(),
            "'soon' is not a time (30, 30s, 1m30s, 500ms)"
        );
    }

    #[test]
    fn budgets_in_every_spelling() {
        for (t, s) in [
            ("90", 90.0),
            ("90s", 90.0),
            ("10m", 600.0),
            ("10 min", 600.0),
            ("1.5m", 90.0),
            ("1h", 3600.0),
            (" 2 h ", 7200.0),
        ] {
            assert_eq!(budget_seconds(t), Ok(s), "{t}");
        }
        for bad in ["0", "ten", "5d", "-5", "1m30s", "1e3", "inf", "", "m"] {
            assert!(budget_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn storage_sizes() {
        for (t, n) in [
            ("4G", 4u64 << 30),
            ("512m", 512 << 20),
            ("1GiB", 1 << 30),
            ("1KB", 1 << 10),
            ("2tib", 2 << 40),
            ("1048576", 1 << 20),
            ("7B", 7),
            (" 4G ", 4 << 30),
        ] {
            assert_eq!(parse_size(t), Ok(n), "{t}");
        }
        for bad in ["", "G", "4X", "-1G", "1.5G", "4 G", "+4G", "4GX", "lots"] {
            assert_eq!(parse_size(bad), Err(UnitError::Size(bad.into())), "{bad}");
        }
        let e = parse_size("99999999999T").unwrap_err();
        assert_eq!(e.to_string(), "size '99999999999T' is too large");
        assert_eq!(
            parse_size("lots").unwrap_err().to_string(),
            "size 'lots': a number with K, M, G or T, e.g. 4G"
        );
    }

    #[test]
    fn sysbench_sizes() {
        for (t, n) in [
            ("16384", 16384u64),
            ("16K", 16384),
            ("64M", 64 << 20),
            ("2G", 2 << 30),
            ("1t", 1 << 40),
            ("8kb", 8192),
            ("2 G", 2 << 30),
            ("+5", 5),
            ("5bb", 5),
        ] {
            assert_eq!(sysbench_size(t), Ok(n), "{t}");
        }
        for bad in ["2X", "-1", "M", "99999999999T", "1KiB", "1.5G", ""] {
            assert_eq!(
                sysbench_size(bad),
                Err(UnitError::Size(bad.into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn cnf_sizes() {
        assert_eq!(cnf_size("512M"), Ok(512 << 20));
        assert_eq!(cnf_size("2k"), Ok(2048));
        assert_eq!(cnf_size("1T"), Ok(1 << 40));
        for bad in [
            "",
            "512",
            "512MB",
            "M",
            "1é",
            "é",
            "5 M",
            "99999999999T",
            "-1K",
        ] {
            assert!(cnf_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_printed() {
        assert_eq!(size_text(2 << 30), "2G");
        assert_eq!(size_text(16384), "16K");
        assert_eq!(size_text(1000), "1000");
        assert_eq!(size_text(0), "0");
        assert_eq!(binary_size(0), "0 B");
        assert_eq!(binary_size(1023), "1023 B");
        assert_eq!(binary_size(1536), "1.5 KiB");
        assert_eq!(binary_size(7815), "7.6 KiB");
        assert_eq!(binary_size(312 << 20), "312.0 MiB");
        assert_eq!(binary_size(3 << 30), "3.0 GiB");
        assert_eq!(short_size(128 << 20), "128 MiB");
        assert_eq!(short_size(2040109465), "1.9 GiB");
        assert_eq!(short_size(12), "12 B");
        assert_eq!(short_size(1536), "1.5 KiB");
        assert_eq!(short_size(150 << 30), "150 GiB");
    }
}
