//! A replica's lag on the live line of a phase (`run --replica`).

use qpslab_core::telemetry::{MaxLast, ReplicaLag};

/// `lag 120 ms (gtid 95 ms, sbm 0 s)`: the interval's largest heartbeat lag, then the GTID
/// waits' and Seconds_Behind_Master's; `replica stopped: ERROR` the one time it stopped.
pub fn lag_text(lag: &ReplicaLag) -> String {
    if let Some(e) = &lag.error {
        return e.clone();
    }
    let ms = |m: Option<MaxLast>| m.map_or("-".into(), |m| format!("{:.0} ms", m.max));
    let sbm = lag.sbm_s.map_or("-".into(), |m| format!("{:.0} s", m.max));
    format!(
        "lag {} (gtid {}, sbm {sbm})",
        ms(lag.heartbeat_lag_ms),
        ms(lag.gtid_lag_ms)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_on_the_live_line() {
        let mut lag = ReplicaLag {
            heartbeat_lag_ms: Some(MaxLast {
                max: 120.4,
                last: 3.0,
            }),
            sbm_s: Some(MaxLast::new(0.0)),
            ..ReplicaLag::default()
        };
        assert_eq!(lag_text(&lag), "lag 120 ms (gtid -, sbm 0 s)");
        lag.error = Some("replica stopped: Duplicate entry".into());
        assert_eq!(lag_text(&lag), "replica stopped: Duplicate entry");
    }
}
