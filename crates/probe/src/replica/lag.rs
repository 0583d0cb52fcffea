//! The lag arithmetic, apart from any connection.

/// The heartbeat lag at `now_us`, in microseconds: the age of the oldest heartbeat written
/// (`writes_us`, ascending) that is newer than the newest one the replica holds (`arrived_us`;
/// `None` before the first arrives). 0 when every heartbeat written has arrived: the lag is
/// then below the write interval, the method's resolution. pt-heartbeat's `now − arrived`
/// would add the time since that heartbeat was written.
pub fn heartbeat_lag_us(now_us: i64, arrived_us: Option<i64>, writes_us: &[i64]) -> i64 {
    writes_us
        .iter()
        .find(|&&w| arrived_us.is_none_or(|a| w > a))
        .map_or(0, |&w| (now_us - w).max(0))
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
    fn lag_is_the_age_of_the_oldest_heartbeat_not_yet_arrived() {
        let writes = [1_000, 1_200, 1_400, 1_600];
        // The 1200 one arrived: 1400 is the oldest missing, written 350 µs before now.
        assert_eq!(heartbeat_lag_us(1_750, Some(1_200), &writes), 350);
        // All arrived: below the resolution, not `now − 1600` as pt-heartbeat would say.
        assert_eq!(heartbeat_lag_us(1_750, Some(1_600), &writes), 0);
        // Nothing arrived yet: since the first write.
        assert_eq!(heartbeat_lag_us(1_750, None, &writes), 750);
        assert_eq!(heartbeat_lag_us(1_750, None, &[]), 0);
        // A clock read before the write it is compared to never gives a negative lag.
        assert_eq!(heartbeat_lag_us(1_300, Some(1_000), &[1_400]), 0);
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
