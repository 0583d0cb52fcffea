//! Rows as stores hold them read back as typed readings, and write back unchanged.

use super::*;
use serde_json::{json, Value};

/// One row of each kind, as the untyped telemetry of earlier versions wrote them.
fn stored_rows() -> Vec<Value> {
    let proc = json!({"user_s": 1.5, "sys_s": 0.25, "rss_kib": 2048,
                      "io": {"rchar": 1, "wchar": 2, "read_bytes": 3, "write_bytes": 4}});
    vec![
        json!({"elapsed_s": 1.0, "source": "tick", "values": {
            "interval_s": 1.0,
            "status": {"counters": {"Questions": 10}, "gauges": {"Threads_running": 2}},
            "server": proc, "client": {"user_s": 0.5, "sys_s": 0.1, "rss_kib": 10}}}),
        json!({"elapsed_s": 2.0, "source": "tick", "values": {
            "interval_s": 1.0, "status": {"counters": {}, "gauges": {}}}}),
        json!({"elapsed_s": 3.0, "source": "tick", "values": {"error": "connection lost"}}),
        json!({"elapsed_s": 3.5, "source": "tick", "values": {}}),
        json!({"elapsed_s": 4.0, "source": "gap", "values": {
            "from_s": 2.0, "to_s": 4.0, "reason": "server gone", "readings_resumed": true}}),
        json!({"elapsed_s": 5.0, "source": "server_status_delta", "values": {
            "elapsed_s": 5.0, "counters": {"Com_select": 7}, "gauges": {"Uptime": 9}}}),
        json!({"elapsed_s": 5.0, "source": "server_proc", "values": proc}),
        json!({"elapsed_s": 5.0, "source": "client_proc", "values": {
            "user_s": 0.5, "sys_s": 0.1, "rss_kib": 10}}),
        json!({"elapsed_s": 5.0, "source": "perf", "values": {
            "supported": true, "counters": {"instructions": 15, "cycles": 4}, "processes": 2}}),
        json!({"elapsed_s": 5.0, "source": "perf", "values": {
            "supported": false, "reason": "perf is not installed"}}),
        json!({"elapsed_s": 5.0, "source": "telemetry", "values": {"reconnects": 1, "gaps": 1}}),
        json!({"elapsed_s": 6.0, "source": "replica_lag", "values": {
            "heartbeat_lag_ms": {"max": 120.5, "last": 80.0},
            "sbm_s": {"max": 1.0, "last": 0.0}}}),
        json!({"elapsed_s": 7.0, "source": "replica_lag", "values": {
            "error": "replica stopped: Duplicate entry"}}),
    ]
}

#[test]
fn stored_rows_read_back_typed_and_write_back_unchanged() {
    for row in stored_rows() {
        let t: TelemetrySample = serde_json::from_value(row.clone()).unwrap();
        assert_eq!(t.reading.source(), row["source"], "{row}");
        assert_eq!(serde_json::to_value(&t).unwrap(), row);
    }
}

#[test]
fn rows_read_as_the_variant_their_source_names() {
    let t: Vec<TelemetrySample> = stored_rows()
        .into_iter()
        .map(|r| serde_json::from_value(r).unwrap())
        .collect();
    let Reading::Tick(Tick::Change(c)) = &t[0].reading else {
        panic!("{:?}", t[0]);
    };
    assert_eq!(c.status.counters["Questions"], 10);
    assert_eq!(c.server.unwrap().io.unwrap().write_bytes, 4);
    assert!(
        matches!(&t[2].reading, Reading::Tick(Tick::Failed { error }) if error == "connection lost")
    );
    assert!(matches!(t[3].reading, Reading::Tick(Tick::First {})));
    assert!(matches!(&t[4].reading, Reading::Gap(g) if g.readings_resumed && g.to_s == 4.0));
    assert!(matches!(&t[5].reading, Reading::ServerStatusDelta(d) if d.counter("Com_select") == 7));
    assert!(matches!(t[6].reading, Reading::ServerProc(p) if p.cpu_s() == 1.75));
    assert!(matches!(&t[8].reading, Reading::Perf(p) if p.counters["instructions"] == 15));
    assert!(matches!(&t[9].reading, Reading::Perf(p) if !p.supported && p.counters.is_empty()));
    assert!(matches!(t[10].reading, Reading::Telemetry(a) if a.reconnects == 1));
}

#[test]
fn parts_as_stored_in_columns_round_trip() {
    for row in stored_rows() {
        let source = row["source"].as_str().unwrap();
        let r = Reading::from_parts(source, row["values"].clone()).unwrap();
        assert_eq!(
            (r.source(), r.values().unwrap()),
            (source, row["values"].clone())
        );
    }
}

#[test]
fn an_unknown_source_is_an_error() {
    let row = json!({"elapsed_s": 1.0, "source": "weather", "values": {}});
    assert!(serde_json::from_value::<TelemetrySample>(row).is_err());
}

#[test]
fn replica_lag_keeps_the_largest_and_the_latest() {
    let mut m = None;
    for v in [3.0, 9.0, 4.0] {
        MaxLast::push(&mut m, v);
    }
    assert_eq!(
        m,
        Some(MaxLast {
            max: 9.0,
            last: 4.0
        })
    );
    let lag = ReplicaLag {
        gtid_lag_ms: m,
        ..ReplicaLag::default()
    };
    assert_eq!(lag.headline_ms(), Some(9.0));
}
