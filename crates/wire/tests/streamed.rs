//! Streamed results against a real MariaDB: [`Conn::query_each`] hands every row of every
//! result set to its caller and keeps none, and [`Conn::query_bytes`] sends a statement's bytes
//! as they are, not as UTF-8 would have them.

use qpslab_wire::Conn;

#[test]
fn rows_stream_past_and_bytes_go_as_given() {
    let server = qpslab_sandbox::testing::shared_server();
    let mut c = Conn::connect(&server.connect_options()).unwrap();
    // 200,000 rows of 1 KiB: counted and visited, none kept.
    let sql = b"SELECT seq, REPEAT('x', 1024) FROM mysql.seq_1_to_200000";
    let (mut visited, mut bytes, mut last) = (0u64, 0usize, 0u64);
    let s = c
        .query_each(sql, &mut |row| {
            visited += 1;
            bytes += row.packet().len();
            let v: Vec<_> = row.values().map(|v| v.unwrap()).collect();
            last = std::str::from_utf8(v[0].unwrap()).unwrap().parse().unwrap();
            assert_eq!(v[1].map(<[u8]>::len), Some(1024));
        })
        .unwrap();
    assert_eq!(
        (s.rows, s.sets, visited, last),
        (200_000, 1, 200_000, 200_000)
    );
    assert!(bytes > 200_000 * 1024, "{bytes}");
    // NULL is None; a statement without rows has no set.
    let mut nulls = 0;
    c.query_each(b"SELECT NULL", &mut |r| {
        nulls += r.values().filter(|v| matches!(v, Ok(None))).count()
    })
    .unwrap();
    assert_eq!(nulls, 1);
    let s = c.query_each(b"DO 1", &mut |_| panic!("no row")).unwrap();
    assert_eq!((s.sets, s.rows), (0, 0));
    // 0xFF is no UTF-8: sent as it is, the server sees that byte.
    c.query("SET NAMES latin1").unwrap();
    let r = c.query_bytes(b"SELECT HEX('\xff\xfe')").unwrap();
    assert_eq!(r.first_value(), Some("FFFE"));
    // A server error mid-statement leaves the session usable.
    assert!(c
        .query_each(b"SELECT * FROM no_such_table", &mut |_| {})
        .is_err());
    assert_eq!(c.query("SELECT 1").unwrap().first_value(), Some("1"));
}
