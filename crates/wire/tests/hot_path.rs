//! The hot-path codecs against a real MariaDB: bytes written by `ExecPacket`/`write_com_query`
//! and replies parsed by `ReplyReader` straight off the socket.

use qpslab_wire::codec::{write_com_query, ExecPacket, ParamType, Reply, ReplyReader};
use qpslab_wire::{Conn, Stream};
use std::io::{Read, Write};

/// sysbench's `c` format: ten groups of 11 digits joined by '-' (119 bytes in a CHAR(120)).
fn sysbench_c(seed: u64) -> String {
    (0..10)
        .map(|g| format!("{:011}", (seed * 7919 + g * 104_729) % 100_000_000_000))
        .collect::<Vec<_>>()
        .join("-")
}

fn prepared_session(table: &str) -> (Stream, qpslab_wire::SessionInfo, u32, u32) {
    let mut c = Conn::connect(&qpslab_sandbox::testing::shared_server().connect_options()).unwrap();
    c.execute("CREATE DATABASE IF NOT EXISTS wire_hot").unwrap();
    c.execute(&format!(
        "CREATE OR REPLACE TABLE wire_hot.{table} (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, \
         k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '')"
    ))
    .unwrap();
    for id in 1..=10u64 {
        c.execute(&format!(
            "INSERT INTO wire_hot.{table} VALUES ({id}, {id}, '{}', '{}')",
            sysbench_c(id),
            &sysbench_c(id + 100)[..59]
        ))
        .unwrap();
    }
    let sel = c
        .prepare(&format!("SELECT c FROM wire_hot.{table} WHERE id=?"))
        .unwrap();
    let upd = c
        .prepare(&format!("UPDATE wire_hot.{table} SET c=? WHERE id=?"))
        .unwrap();
    let (s, info) = c.into_stream();
    (s, info, sel.id, upd.id)
}

#[test]
fn point_select_reply_is_one_143_byte_read() {
    let (mut s, info, sel, _) = prepared_session("sbtest1");
    assert!(info.caps.cache_metadata() && info.caps.deprecate_eof());
    let mut exec = ExecPacket::new(sel, &[ParamType::Int]);
    let mut reader = ReplyReader::new(info.caps, true);
    let mut buf = vec![0u8; 16 * 1024];
    for id in [3i64, 7, 3, 10] {
        exec.set_int(0, id);
        s.write_all(exec.packet()).unwrap();
        let n = s.read(&mut buf).unwrap();
        // 6 (count + "no metadata") + 4 + 1 + 1 + 1 + 119 (row) + 11 (OK as EOF) = 143.
        assert_eq!(n, 143, "one read holds the whole reply");
        assert_eq!(
            reader.feed(&buf[..n]).unwrap(),
            (143, Some(Reply::Rows { rows: 1 }))
        );
        assert_eq!(&buf[13..132], sysbench_c(id as u64).as_bytes());
    }
    exec.set_int(0, 999);
    s.write_all(exec.packet()).unwrap();
    let n = s.read(&mut buf).unwrap();
    assert_eq!(
        reader.feed(&buf[..n]).unwrap(),
        (n, Some(Reply::Rows { rows: 0 }))
    );
}

#[test]
fn update_with_fixed_bytes_and_text_queries() {
    let (mut s, info, _, upd) = prepared_session("sbtest2");
    let mut exec = ExecPacket::new(upd, &[ParamType::FixedBytes(119), ParamType::Int]);
    exec.set_bytes(0, sysbench_c(42).as_bytes());
    exec.set_int(1, 5);
    let mut reader = ReplyReader::new(info.caps, true);
    let mut buf = vec![0u8; 64 * 1024];
    s.write_all(exec.packet()).unwrap();
    let n = s.read(&mut buf).unwrap();
    assert_eq!(
        reader.feed(&buf[..n]).unwrap(),
        (n, Some(Reply::Ok { affected_rows: 1 }))
    );

    let mut text = ReplyReader::new(info.caps, false);
    let mut q = Vec::new();
    write_com_query(
        &mut q,
        b"SELECT c FROM wire_hot.sbtest2 WHERE id BETWEEN 1 AND 10",
    );
    write_com_query(&mut q, b"SELECT c FROM wire_hot.sbtest2 WHERE id = 5");
    // Two commands pipelined: the reader stops at the end of the first reply.
    s.write_all(&q).unwrap();
    let mut have = 0;
    let mut replies = Vec::new();
    while replies.len() < 2 {
        have += s.read(&mut buf[have..]).unwrap();
        let mut used = 0;
        loop {
            let (n, r) = text.feed(&buf[used..have]).unwrap();
            used += n;
            match r {
                Some(r) => replies.push(r),
                None => break,
            }
        }
        buf.copy_within(used..have, 0);
        have -= used;
    }
    assert_eq!(replies, [Reply::Rows { rows: 10 }, Reply::Rows { rows: 1 }]);
    q.clear();
    write_com_query(&mut q, b"SELECT c FROM wire_hot.no_such_table");
    s.write_all(&q).unwrap();
    let n = s.read(&mut buf).unwrap();
    assert_eq!(
        text.feed(&buf[..n]).unwrap(),
        (n, Some(Reply::Err { code: 1146 }))
    );
}
