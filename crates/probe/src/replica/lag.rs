//! The lag arithmetic, apart from any connection.

/// The heartbeat lag seen by a read of the replica at `now_us`, in microseconds, or `None`
/// when the read tells nothing new. `arrived_us` is the newest heartbeat the replica holds,
/// `seen_before_us` the one the previous read found, `writes_us` the heartbeats written since
/// the newest one seen (ascending).
///
/// - A heartbeat that arrived since the previous read took `now − its write time`, to within
///   the read interval (it arrived between the two reads).
/// - Otherwise, while heartbeats are missing, the lag is at least the age of the oldest one
///   (it grows while the replica is stuck).
/// - Otherwise nothing new: every heartbeat written has arrived and was counted.
///
/// pt-heartbeat's `now − newest ts` would add the time since that heartbeat was written, up to
/// a whole write interval, to every reading.
pub fn heartbeat_lag_us(
    now_us: i64,
    arrived_us: Option<i64>,
    seen_before_us: Option<i64>,
    writes_us: &[i64],
) -> Option<i64> {
    if let Some(a) = arrived_us.filter(|a| seen_before_us != Some(*a)) {
        return Some((now_us - a).max(0));
    }
    writes_us
        .iter()
        .find(|&&w| arrived_us.is_none_or(|a| w > a))
        .map(|&w| (now_us - w).max(0))
}

/// Microseconds since the Unix epoch read from `UNIX_TIMESTAMP(ts)` (`1700000000.123456`).
pub(super) fn parse_unix_us(text: &str) -> Option<i64> {
    let (secs, frac) = text.split_once('.').unwrap_or((text, ""));
    let secs: i64 = secs.parse().ok()?;
    let digits: String = frac.chars().chain("000000".chars()).take(6).collect();
    Some(secs * 1_000_000 + digits.parse::<i64>().ok()?)
}

/// `FROM_UNIXTIME`'s argument for `us` microseconds since the epoch.
pub(super) fn unix_text(us: i64) -> String {
    format!(
        "{}.{:06}",
        us.div_euclid(1_000_000),
        us.rem_euclid(1_000_000)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_is_the_time_a_heartbeat_took_or_the_age_of_the_oldest_missing() {
        let writes = [1_400, 1_600];
        // 1200 arrived since the last read (which saw 1000): it took 550 µs.
        assert_eq!(
            heartbeat_lag_us(1_750, Some(1_200), Some(1_000), &writes),
            Some(550)
        );
        // Nothing new since: 1400 is missing, written 350 µs ago.
        assert_eq!(
            heartbeat_lag_us(1_750, Some(1_200), Some(1_200), &writes),
            Some(350)
        );
        // All arrived and counted: nothing to say, not `now − 1600` as pt-heartbeat would.
        assert_eq!(heartbeat_lag_us(1_750, Some(1_600), Some(1_600), &[]), None);
        // Nothing arrived yet: since the first write.
        assert_eq!(heartbeat_lag_us(1_750, None, None, &writes), Some(350));
        assert_eq!(heartbeat_lag_us(1_750, None, None, &[]), None);
        // A clock read before the write it is compared to never gives a negative lag.
        assert_eq!(heartbeat_lag_us(1_300, None, None, &[1_400]), Some(0));
    }

    #[test]
    fn timestamps_round_trip_through_their_sql_text() {
        assert_eq!(unix_text(1_700_000_000_123_456), "1700000000.123456");
        assert_eq!(unix_text(5), "0.000005");
        assert_eq!(
            parse_unix_us("1700000000.123456"),
            Some(1_700_000_000_123_456)
        );
        assert_eq!(parse_unix_us("1700000000.12"), Some(1_700_000_000_120_000));
        assert_eq!(parse_unix_us("17"), Some(17_000_000));
        assert_eq!(parse_unix_us("x"), None);
    }
}
