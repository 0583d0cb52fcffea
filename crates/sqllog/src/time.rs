//! The two timestamp shapes the logs write, read as µs since the Unix epoch.
//!
//! MariaDB (and MySQL 5.6) write `YYMMDD H:MM:SS` in the server's local time, without a zone:
//! it is read as if it were UTC ("the log's own clock"). MySQL 5.7+ writes ISO 8601 with µs
//! and `Z` or an offset, which is honoured.

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A run of ASCII digits as a number, `None` if empty or not all digits.
fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 12 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0, |n, &c| n * 10 + i64::from(c - b'0')))
}

fn epoch_us(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64) -> Option<i64> {
    let valid = (1..=12).contains(&mo) && (1..=31).contains(&d) && h < 24 && mi < 60 && s < 61;
    valid
        .then(|| ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 + s)
        .map(|secs| secs * 1_000_000)
}

/// `261123  4:11:58` (the time part's hour may be padded with a space); returns the time
/// and the number of bytes it took.
pub(crate) fn parse_short(b: &[u8]) -> Option<(i64, usize)> {
    let date = digits(b.get(..6)?)?;
    let mut i = 6;
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    let start = i;
    let end = start
        + b[start..]
            .iter()
            .position(|c| !(c.is_ascii_digit() || *c == b':'))
            .unwrap_or(b.len() - start);
    let mut parts = b[start..end].split(|&c| c == b':');
    let h = digits(parts.next()?)?;
    let mi = digits(parts.next()?)?;
    let s = digits(parts.next()?)?;
    if parts.next().is_some() || i == 6 {
        return None;
    }
    let (y, mo, d) = (2000 + date / 10_000, date / 100 % 100, date % 100);
    Some((epoch_us(y, mo, d, h, mi, s)?, end))
}

/// `2026-11-23T04:11:58.123456Z` or with `+01:00`; returns the time and its length.
pub(crate) fn parse_iso(b: &[u8]) -> Option<(i64, usize)> {
    let field = |from: usize, len: usize| digits(b.get(from..from + len)?);
    let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if seps.iter().any(|&(i, c)| b.get(i) != Some(&c)) {
        return None;
    }
    let secs = epoch_us(
        field(0, 4)?,
        field(5, 2)?,
        field(8, 2)?,
        field(11, 2)?,
        field(14, 2)?,
        field(17, 2)?,
    )?;
    let mut i = 19;
    let mut frac = 0;
    if b.get(i) == Some(&b'.') {
        let n = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let kept = &b[i + 1..i + 1 + n.min(6)];
        frac = digits(kept).unwrap_or(0) * 10_i64.pow(6 - kept.len() as u32);
        i += 1 + n;
    }
    let offset = match b.get(i) {
        Some(b'Z') => {
            i += 1;
            0
        }
        Some(&sign @ (b'+' | b'-')) => {
            let off = (field(i + 1, 2)? * 60 + field(i + 4, 2)?) * 60_000_000;
            i += 6;
            if sign == b'+' {
                off
            } else {
                -off
            }
        }
        _ => 0,
    };
    Some((secs + frac - offset, i))
}

/// `2026-11-23T04:11:58Z` (µs kept when there are any) from µs since the epoch.
pub fn format_iso(us: i64) -> String {
    let (secs, frac) = (us.div_euclid(1_000_000), us.rem_euclid(1_000_000));
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // civil_from_days (Howard Hinnant)
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, mi, s) = (rem / 3600, rem / 60 % 60, rem % 60);
    let frac = if frac == 0 {
        String::new()
    } else {
        format!(".{frac:06}")
    };
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}{frac}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_times_read_as_utc() {
        // 2026-11-23 04:11:58 UTC = 1795407118
        assert_eq!(
            parse_short(b"261123  4:11:58"),
            Some((1_795_407_118_000_000, 15))
        );
        assert_eq!(
            parse_short(b"261123 14:11:58\t"),
            Some((1_795_443_118_000_000, 15))
        );
        assert_eq!(parse_short(b"261323  4:11:58"), None);
        assert_eq!(parse_short(b"2611234:11:58"), None);
        assert_eq!(parse_short(b"26112"), None);
    }

    #[test]
    fn iso_times_with_fraction_and_offset() {
        let t = 1_795_407_118_000_000;
        assert_eq!(
            parse_iso(b"2026-11-23T04:11:58.123456Z"),
            Some((t + 123_456, 27))
        );
        assert_eq!(parse_iso(b"2026-11-23T05:11:58+01:00"), Some((t, 25)));
        assert_eq!(
            parse_iso(b"2026-11-23T04:11:58.5Z"),
            Some((t + 500_000, 22))
        );
        assert_eq!(parse_iso(b"2026-11-23 04:11:58Z"), None);
        assert_eq!(parse_iso(b"2026-11-2"), None);
    }

    #[test]
    fn formatting_reads_back() {
        for text in [
            "2026-11-23T04:11:58Z",
            "2000-02-29T23:59:59.000001Z",
            "1970-01-01T00:00:00Z",
        ] {
            let (us, _) = parse_iso(text.as_bytes()).unwrap();
            assert_eq!(format_iso(us), text);
        }
    }
}
