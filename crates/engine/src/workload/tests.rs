//! Unit tests of the workload generator against the defaults of sysbench's scripts.

use super::*;
use qpslab_core::workload::WorkloadKind as W;
use std::collections::HashMap;

fn opts(kind: W) -> WorkloadOptions {
    let mut o = WorkloadOptions::new(kind);
    o.tables = 4;
    o.table_size = 1000;
    o
}

/// Statement kinds of one event, in order, as sysbench names them.
fn event_kinds<'a>(w: &'a Workload, ev: &EventBuf) -> Vec<&'a str> {
    ev.calls
        .iter()
        .map(|c| &*w.statements()[c.stmt as usize].kind)
        .collect()
}

fn counts<'a>(kinds: &[&'a str]) -> HashMap<&'a str, usize> {
    let mut m = HashMap::new();
    for k in kinds {
        *m.entry(*k).or_default() += 1;
    }
    m
}

#[test]
fn statement_counts_match_sysbench_defaults() {
    // (workload, expected kinds per event with sysbench 1.0.20's default options)
    let cases: &[(W, &[(&str, usize)])] = &[
        (W::OltpPointSelect, &[("point_selects", 1)]),
        (
            W::OltpReadOnly,
            &[
                ("begin", 1),
                ("point_selects", 10),
                ("simple_ranges", 1),
                ("sum_ranges", 1),
                ("order_ranges", 1),
                ("distinct_ranges", 1),
                ("commit", 1),
            ],
        ),
        (
            W::OltpReadWrite,
            &[
                ("begin", 1),
                ("point_selects", 10),
                ("simple_ranges", 1),
                ("sum_ranges", 1),
                ("order_ranges", 1),
                ("distinct_ranges", 1),
                ("index_updates", 1),
                ("non_index_updates", 1),
                ("deletes", 1),
                ("inserts", 1),
                ("commit", 1),
            ],
        ),
        (
            W::OltpWriteOnly,
            &[
                ("begin", 1),
                ("index_updates", 1),
                ("non_index_updates", 1),
                ("deletes", 1),
                ("inserts", 1),
                ("commit", 1),
            ],
        ),
        (W::OltpUpdateIndex, &[("index_updates", 1)]),
        (W::OltpUpdateNonIndex, &[("non_index_updates", 1)]),
        (W::OltpInsert, &[("inserts", 1)]),
        (W::OltpDelete, &[("deletes", 1)]),
        (W::SelectRandomPoints, &[("random_points", 1)]),
        (W::SelectRandomRanges, &[("random_ranges", 1)]),
    ];
    for (kind, want) in cases {
        let w = Workload::new(&opts(*kind)).unwrap();
        let mut g = w.session(0, 1);
        let mut ev = EventBuf::default();
        for _ in 0..3 {
            g.next_event(&mut ev);
            let got = counts(&event_kinds(&w, &ev));
            let want: HashMap<_, _> = want.iter().copied().collect();
            assert_eq!(got, want, "{kind}");
        }
    }
}

#[test]
fn read_write_order_is_sysbench_order() {
    let w = Workload::new(&opts(W::OltpReadWrite)).unwrap();
    let mut ev = EventBuf::default();
    w.session(0, 9).next_event(&mut ev);
    let k = event_kinds(&w, &ev);
    let mut want = vec!["begin"];
    want.extend(["point_selects"; 10]);
    want.extend([
        "simple_ranges",
        "sum_ranges",
        "order_ranges",
        "distinct_ranges",
        "index_updates",
        "non_index_updates",
        "deletes",
        "inserts",
        "commit",
    ]);
    assert_eq!(k, want);
}

#[test]
fn skip_trx_and_range_selects_shape_the_event() {
    let mut o = opts(W::OltpReadOnly);
    o.skip_trx = true;
    o.range_selects = false;
    o.point_selects = 3;
    let w = Workload::new(&o).unwrap();
    assert!(w.statements().iter().all(|s| &*s.kind == "point_selects"));
    let mut ev = EventBuf::default();
    w.session(0, 1).next_event(&mut ev);
    assert_eq!(event_kinds(&w, &ev), vec!["point_selects"; 3]);
}

#[test]
fn point_selects_of_one_event_share_a_table() {
    let w = Workload::new(&opts(W::OltpReadOnly)).unwrap();
    let mut g = w.session(3, 5);
    let mut ev = EventBuf::default();
    let mut tables_seen = std::collections::HashSet::new();
    for _ in 0..50 {
        g.next_event(&mut ev);
        let t: std::collections::HashSet<u32> = ev
            .calls
            .iter()
            .map(|c| &w.statements()[c.stmt as usize])
            .filter(|s| &*s.kind == "point_selects")
            .map(|s| s.table)
            .collect();
        assert_eq!(t.len(), 1);
        tables_seen.extend(t);
    }
    assert_eq!(tables_seen.len(), 4, "every table gets picked");
}

#[test]
fn delete_then_insert_same_id_and_values_in_range() {
    let w = Workload::new(&opts(W::OltpWriteOnly)).unwrap();
    let mut g = w.session(0, 77);
    let mut ev = EventBuf::default();
    for _ in 0..200 {
        g.next_event(&mut ev);
        let del = &ev.calls[3];
        let ins = &ev.calls[4];
        let (sd, si) = (
            &w.statements()[del.stmt as usize],
            &w.statements()[ins.stmt as usize],
        );
        assert_eq!((&*sd.kind, &*si.kind), ("deletes", "inserts"));
        assert_eq!(sd.table, si.table);
        let (da, ia) = (ev.call_args(del), ev.call_args(ins));
        assert_eq!(da[0], ia[0]);
        for a in [&ia[0], &ia[1]] {
            let Arg::Int(v) = a else {
                panic!("int expected")
            };
            assert!((1..=1000).contains(v), "{v}");
        }
        let c = ev.arg_bytes(&ia[2]).unwrap();
        let pad = ev.arg_bytes(&ia[3]).unwrap();
        assert_value_format(c, 10);
        assert_value_format(pad, 5);
    }
}

/// sysbench's c/pad format: `groups` groups of 11 digits joined by '-'.
fn assert_value_format(v: &[u8], groups: usize) {
    let s = std::str::from_utf8(v).unwrap();
    let parts: Vec<&str> = s.split('-').collect();
    assert_eq!(parts.len(), groups, "{s}");
    assert!(
        parts
            .iter()
            .all(|p| p.len() == 11 && p.bytes().all(|b| b.is_ascii_digit())),
        "{s}"
    );
}

#[test]
fn ranges_span_range_size() {
    let mut o = opts(W::OltpReadOnly);
    o.range_size = 37;
    let w = Workload::new(&o).unwrap();
    let mut ev = EventBuf::default();
    w.session(0, 3).next_event(&mut ev);
    let r = &ev.calls[11];
    assert_eq!(&*w.statements()[r.stmt as usize].kind, "simple_ranges");
    let [Arg::Int(a), Arg::Int(b)] = ev.call_args(r) else {
        panic!("two ints expected")
    };
    assert_eq!(b - a, 36);
}

#[test]
fn statements_are_per_table_with_sysbench_sql() {
    let w = Workload::new(&opts(W::OltpReadWrite)).unwrap();
    let s = w.statements();
    // begin + commit + 9 kinds x 4 tables
    assert_eq!(s.len(), 2 + 9 * 4);
    let find = |kind: &str, t: u32| {
        s.iter()
            .find(|d| &*d.kind == kind && d.table == t)
            .unwrap()
            .sql
            .clone()
    };
    assert_eq!(find("point_selects", 3), "SELECT c FROM sbtest3 WHERE id=?");
    assert_eq!(
        find("distinct_ranges", 2),
        "SELECT DISTINCT c FROM sbtest2 WHERE id BETWEEN ? AND ? ORDER BY c"
    );
    assert_eq!(
        find("non_index_updates", 4),
        "UPDATE sbtest4 SET c=? WHERE id=?"
    );
    assert_eq!(
        find("inserts", 1),
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)"
    );
    for d in s {
        assert_eq!(d.sql.matches('?').count(), d.params.len(), "{}", d.sql);
        assert!(!d.text_only);
    }
}

#[test]
fn insert_renders_like_sysbench_text() {
    let w = Workload::new(&opts(W::OltpInsert)).unwrap();
    assert!(w.statements().iter().all(|s| s.text_only));
    let mut ev = EventBuf::default();
    w.session(0, 1).next_event(&mut ev);
    let mut sql = Vec::new();
    w.render_text(&ev, &ev.calls[0], &mut sql);
    let sql = String::from_utf8(sql).unwrap();
    assert!(
        sql.starts_with("INSERT INTO sbtest") && sql.contains(" (id, k, c, pad) VALUES (0, "),
        "{sql}"
    );
    assert_eq!(sql.matches('\'').count(), 4, "{sql}");
}

#[test]
fn insert_without_auto_inc_draws_unique_ids() {
    let mut o = opts(W::OltpInsert);
    o.auto_inc = false;
    let w = Workload::new(&o).unwrap();
    let mut ids = std::collections::HashSet::new();
    let mut ev = EventBuf::default();
    for s in 0..4 {
        let mut g = w.session(s, 1);
        for _ in 0..1000 {
            g.next_event(&mut ev);
            let Arg::Int(id) = ev.args[0] else { panic!() };
            assert!((i64::from(i32::MIN)..=i64::from(i32::MAX)).contains(&id));
            assert!(ids.insert(id), "duplicate id {id}");
        }
    }
}

#[test]
fn random_points_stay_in_the_session_slice() {
    let mut o = opts(W::SelectRandomPoints);
    o.rand.rand_type = qpslab_core::RandType::Uniform;
    let w = Workload::new(&o).unwrap().with_sessions(4);
    assert_eq!(w.statements().len(), 1);
    assert!(w.statements()[0]
        .sql
        .contains("WHERE k IN (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    let mut ev = EventBuf::default();
    let mut g = w.session(2, 1);
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for _ in 0..500 {
        g.next_event(&mut ev);
        assert_eq!(ev.args.len(), 10);
        for a in &ev.args {
            let Arg::Int(v) = *a else { panic!() };
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    // table_size 1000 over 4 sessions: session 2 draws in [500, 750].
    assert!(lo >= 500 && hi <= 750 && lo < 510 && hi > 740, "{lo}..{hi}");
}

#[test]
fn random_ranges_pairs_are_delta_apart() {
    let o = opts(W::SelectRandomRanges);
    let w = Workload::new(&o).unwrap();
    assert!(w.statements()[0].sql.ends_with("WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ? OR k BETWEEN ? AND ?"));
    let mut ev = EventBuf::default();
    w.session(0, 1).next_event(&mut ev);
    assert_eq!(ev.args.len(), 20);
    for pair in ev.args.chunks(2) {
        let [Arg::Int(a), Arg::Int(b)] = pair else {
            panic!()
        };
        assert_eq!(b - a, 5);
    }
}

#[test]
fn rejects_bad_options_with_clear_messages() {
    let mut o = opts(W::OltpReadWrite);
    o.tables = 0;
    assert!(Workload::new(&o)
        .unwrap_err()
        .to_string()
        .contains("--tables"));
    let mut o = opts(W::OltpReadWrite);
    o.table_size = 0;
    assert!(Workload::new(&o)
        .unwrap_err()
        .to_string()
        .contains("--table-size"));
    let mut o = opts(W::OltpUpdateIndex);
    o.index_updates = 0;
    assert!(matches!(
        Workload::new(&o),
        Err(WorkloadError::EmptyEvent(_))
    ));
    let mut o = opts(W::OltpReadWrite);
    o.storage_engine = "innodb; DROP".into();
    assert!(Workload::new(&o)
        .unwrap_err()
        .to_string()
        .contains("engine"));
    let mut o = opts(W::OltpReadWrite);
    o.rand.spec_iter = 0;
    assert!(Workload::new(&o)
        .unwrap_err()
        .to_string()
        .contains("--rand-spec-iter"));
}

#[test]
fn next_event_does_not_grow_buffers_after_warmup() {
    let w = Workload::new(&opts(W::OltpReadWrite)).unwrap();
    let mut g = w.session(0, 1);
    let mut ev = EventBuf::default();
    g.next_event(&mut ev);
    let caps = (ev.calls.capacity(), ev.args.capacity(), ev.bytes.capacity());
    for _ in 0..1000 {
        g.next_event(&mut ev);
    }
    assert_eq!(
        caps,
        (ev.calls.capacity(), ev.args.capacity(), ev.bytes.capacity())
    );
}

#[test]
fn sessions_differ_and_seeds_reproduce() {
    let w = Workload::new(&opts(W::OltpPointSelect)).unwrap();
    let draw = |s: u32, seed: u64| {
        let mut g = w.session(s, seed);
        let mut ev = EventBuf::default();
        (0..20)
            .map(|_| {
                g.next_event(&mut ev);
                ev.args[0]
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(draw(1, 5), draw(1, 5));
    assert_ne!(draw(1, 5), draw(2, 5));
}
