//! Fuzzing of the hot path's incremental reply parser: replies of every shape a server sends
//! (OK, ERR, result sets in text and binary, with and without DEPRECATE_EOF and MariaDB's
//! metadata caching, several results, rows larger than the buffer and than 16 MiB), fed in
//! random splits as an event loop receives them, must give the reply they encode, consume
//! exactly their bytes and allocate nothing; random and mutated bytes must give an error or
//! a reply, never a panic or a loop that stops making progress. See `qpslab-fuzzkit` for
//! the long mode.

use qpslab_fuzzkit::bytes::lenenc;
use qpslab_fuzzkit::{measure, FuzzRng, Target};
use qpslab_wire::caps::{CLIENT_DEPRECATE_EOF, MARIADB_CLIENT_CACHE_METADATA};
use qpslab_wire::codec::{Reply, ReplyReader};
use qpslab_wire::Capabilities;

#[global_allocator]
static ALLOC: qpslab_fuzzkit::CountingAlloc = qpslab_fuzzkit::CountingAlloc;

const MAX_PAYLOAD: usize = 0xFF_FFFF;
const MORE_RESULTS: u16 = 0x0008;

/// A reply as the server frames it, with where each packet starts (split points of interest).
#[derive(Default)]
struct Wire {
    bytes: Vec<u8>,
    boundaries: Vec<usize>,
    seq: u8,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let head = &self.bytes[..self.bytes.len().min(300)];
        write!(
            f,
            "{} bytes, packets at {:?}, starting {head:?}",
            self.bytes.len(),
            self.boundaries
        )
    }
}

impl Wire {
    /// Frames one payload (continued in 16 MiB - 1 chunks, as the protocol does).
    fn packet(&mut self, payload: &[u8]) {
        let mut rest = payload;
        loop {
            let n = rest.len().min(MAX_PAYLOAD);
            self.boundaries.push(self.bytes.len());
            self.bytes.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
            self.bytes.push(self.seq);
            self.bytes.extend_from_slice(&rest[..n]);
            self.seq = self.seq.wrapping_add(1);
            rest = &rest[n..];
            if n < MAX_PAYLOAD {
                return;
            }
        }
    }
}

fn ok_payload(r: &mut FuzzRng, header: u8, affected: u64, status: u16) -> Vec<u8> {
    let mut p = vec![header];
    lenenc(&mut p, affected);
    lenenc(&mut p, r.below(1000));
    p.extend_from_slice(&status.to_le_bytes());
    p.extend_from_slice(&(r.u64() as u16).to_le_bytes());
    p.extend_from_slice(&r.bytes(20));
    p
}

/// A row of about `size` bytes: binary rows start with 0x00, text rows with a length.
fn row(r: &mut FuzzRng, binary: bool, size: usize) -> Vec<u8> {
    let mut p = Vec::with_capacity(size + 9);
    if binary {
        p.push(0);
        p.resize(size.max(1), 0);
    } else if r.one_in(8) {
        p.push(0xFB); // a NULL first value
        p.extend_from_slice(&r.bytes(30));
    } else {
        let n = size.saturating_sub(9) as u64;
        lenenc(&mut p, n);
        p.resize(p.len() + n as usize, b'x');
    }
    if p.len() > 1 && size < 100 {
        let last = p.len() - 1;
        p[last] = r.byte();
    }
    p
}

/// A row size: a few bytes mostly, some over the parser's 1 KiB, and with `huge` many at
/// 16 MiB - 1 (continued in a second packet).
fn row_size(r: &mut FuzzRng, huge: bool) -> usize {
    match r.below(if huge { 4 } else { 400 }) {
        0 if huge => MAX_PAYLOAD - 2 + r.index(4) + r.index(2) * 2000,
        0..=20 => 900 + r.index(5000),
        _ => 1 + r.len(200),
    }
}

/// One result set; returns its row count.
fn result_set(
    r: &mut FuzzRng,
    w: &mut Wire,
    caps: u64,
    binary: bool,
    status: u16,
    huge: bool,
) -> u64 {
    let deprecate_eof = caps & CLIENT_DEPRECATE_EOF != 0;
    let n = 1 + r.below(4);
    let mut count = Vec::new();
    lenenc(&mut count, n);
    let follows = caps & MARIADB_CLIENT_CACHE_METADATA == 0 || r.one_in(2);
    if caps & MARIADB_CLIENT_CACHE_METADATA != 0 {
        count.push(follows as u8);
    }
    w.packet(&count);
    if follows {
        for _ in 0..n {
            let mut def = b"\x03def".to_vec();
            let size = if r.one_in(30) { 1100 } else { r.len(60) };
            def.extend((0..size).map(|_| r.byte()));
            w.packet(&def);
        }
        if !deprecate_eof {
            w.packet(&[0xFE, 0, 0, 2, 0]);
        }
    }
    let rows = r.below(5);
    for _ in 0..rows {
        let size = row_size(r, huge);
        w.packet(&row(r, binary, size));
    }
    if deprecate_eof {
        let p = ok_payload(r, 0xFE, 0, status);
        w.packet(&p);
    } else {
        let mut p = vec![0xFE, r.byte(), r.byte()];
        p.extend_from_slice(&status.to_le_bytes());
        w.packet(&p);
    }
    rows
}

/// A whole reply of one command, and the reply the parser must give.
fn reply(r: &mut FuzzRng, huge: bool) -> (u64, bool, Wire, Reply) {
    let caps = *r.pick(&[
        0,
        CLIENT_DEPRECATE_EOF,
        CLIENT_DEPRECATE_EOF | MARIADB_CLIENT_CACHE_METADATA,
        MARIADB_CLIENT_CACHE_METADATA,
    ]);
    let binary = r.one_in(2);
    let mut w = Wire {
        seq: 1,
        ..Wire::default()
    };
    let results = 1 + r.below(3);
    let (mut rows, mut affected, mut saw_rows) = (0, 0u64, false);
    for i in 0..results {
        let last = i + 1 == results;
        let status = (r.u64() as u16 & !MORE_RESULTS) | if last { 0 } else { MORE_RESULTS };
        match r.below(if huge { 8 } else { 5 }) {
            0 if last => {
                let code = r.u64() as u16;
                let mut p = vec![0xFF];
                p.extend_from_slice(&code.to_le_bytes());
                p.extend_from_slice(b"#42000");
                p.extend_from_slice(&r.bytes(40));
                w.packet(&p);
                return (caps, binary, w, Reply::Err { code });
            }
            1 | 2 => {
                let a = r.below(1 << 20);
                affected += a;
                let p = ok_payload(r, 0, a, status);
                w.packet(&p);
            }
            _ => {
                saw_rows = true;
                rows += result_set(r, &mut w, caps, binary, status, huge);
            }
        }
    }
    let want = if saw_rows {
        Reply::Rows { rows }
    } else {
        Reply::Ok {
            affected_rows: affected,
        }
    };
    (caps, binary, w, want)
}

/// Where the bytes arrive: random cuts, many near packet boundaries.
fn cuts(r: &mut FuzzRng, w: &Wire) -> Vec<usize> {
    let len = w.bytes.len();
    let mut c: Vec<usize> = (0..r.below(12))
        .map(|_| {
            if r.one_in(2) && !w.boundaries.is_empty() {
                (r.pick(&w.boundaries) + r.index(6)).min(len)
            } else {
                r.index(len + 1)
            }
        })
        .collect();
    c.push(len);
    c.sort_unstable();
    c
}

struct Fed {
    consumed: usize,
    reply: Option<Reply>,
    error: bool,
}

/// Feeds `bytes` as they arrive at `cuts`, as an event loop does: unconsumed bytes stay in
/// its buffer and are offered again with the next ones.
fn feed(reader: &mut ReplyReader, bytes: &[u8], cuts: &[usize], zero_alloc: bool) -> Fed {
    let mut used = 0;
    for &have in cuts {
        loop {
            let (res, m) = measure(|| reader.feed(&bytes[used..have]));
            let (n, reply) = match res {
                Ok(x) => x,
                Err(_) => {
                    return Fed {
                        consumed: used,
                        reply: None,
                        error: true,
                    }
                }
            };
            assert!(!zero_alloc || m.total == 0, "the parser allocated {m:?}");
            assert!(n <= have - used, "consumed {n} of {} bytes", have - used);
            used += n;
            if reply.is_some() {
                return Fed {
                    consumed: used,
                    reply,
                    error: false,
                };
            }
            if n == 0 {
                break; // needs more bytes
            }
        }
    }
    Fed {
        consumed: used,
        reply: None,
        error: false,
    }
}

fn check_reply(caps: u64, binary: bool, len: usize, w: &Wire, cuts: &[usize], want: Reply) {
    {
        let mut bytes = w.bytes.clone();
        bytes.extend_from_slice(&[7, 0, 0, 1, 0, 1, 0, 2, 0, 0, 0]); // the next reply
        let mut reader = ReplyReader::new(Capabilities(caps), binary);
        let fed = feed(&mut reader, &bytes, cuts, true);
        assert!(!fed.error, "a valid reply was refused");
        assert_eq!(fed.reply, Some(want));
        assert_eq!(fed.consumed, len, "the reply's bytes, not the next one's");
        // The reader is ready for the next command.
        let fed = feed(&mut reader, &bytes[len..], &[11], true);
        assert_eq!(fed.reply, Some(Reply::Ok { affected_rows: 1 }));
    }
}

#[test]
fn fuzz_replies_in_random_splits() {
    Target::weighted("wire_reply_reader", 3_000, 0.5).run(
        |r| {
            let (caps, binary, w, want) = reply(r, false);
            let c = cuts(r, &w);
            (caps, binary, w.bytes.len(), w, c, want)
        },
        |(caps, binary, len, w, cuts, want)| check_reply(*caps, *binary, *len, w, cuts, *want),
    );
}

#[test]
fn fuzz_replies_with_16_mib_rows() {
    Target::weighted("wire_reply_reader_16mib", 10, 0.000_1).run(
        |r| {
            let (caps, binary, w, want) = reply(r, true);
            let c = cuts(r, &w);
            (caps, binary, w.bytes.len(), w, c, want)
        },
        |(caps, binary, len, w, cuts, want)| check_reply(*caps, *binary, *len, w, cuts, *want),
    );
}

#[test]
fn fuzz_replies_mutated_and_random() {
    Target::weighted("wire_reply_reader_hostile", 10_000, 0.5).run(
        |r| {
            let (caps, binary, w, _) = reply(r, false);
            let bytes = if w.bytes.len() > 20_000 {
                w.bytes[..20_000].to_vec()
            } else if r.one_in(5) {
                r.bytes(300)
            } else {
                r.mutate(&w.bytes)
            };
            let w = Wire {
                boundaries: w
                    .boundaries
                    .into_iter()
                    .filter(|b| *b < bytes.len())
                    .collect(),
                bytes,
                seq: 0,
            };
            let c = cuts(r, &w);
            (caps, binary, w.bytes, c)
        },
        |(caps, binary, bytes, cuts)| {
            let mut reader = ReplyReader::new(Capabilities(*caps), *binary);
            let fed = feed(&mut reader, bytes, cuts, false);
            assert!(fed.consumed <= bytes.len());
        },
    );
}

/// A text-protocol reply (cached metadata, DEPRECATE_EOF): count, one row of `row_len`
/// payload bytes (framed in 16 MiB - 1 chunks), OK.
fn one_big_row(row_len: usize) -> (Wire, ReplyReader) {
    let mut w = Wire {
        seq: 1,
        ..Wire::default()
    };
    w.packet(&[1, 0]);
    let mut row = vec![0xFE];
    row.extend_from_slice(&(row_len as u64 - 9).to_le_bytes());
    row.resize(row_len, b'x');
    w.packet(&row);
    w.packet(&[0xFE, 0, 0, 2, 0, 0, 0]);
    let caps = Capabilities(CLIENT_DEPRECATE_EOF | MARIADB_CLIENT_CACHE_METADATA);
    (w, ReplyReader::new(caps, false))
}

#[test]
fn continuation_header_arriving_alone_is_not_a_panic() {
    // Found by fuzz_replies_with_16_mib_rows: a row of 16 MiB - 1 + 2000 bytes, read up to
    // the second packet's header only, indexed the missing body.
    let (w, mut reader) = one_big_row(MAX_PAYLOAD + 2000);
    let second = w.boundaries[2];
    let fed = feed(&mut reader, &w.bytes, &[second + 4, w.bytes.len()], true);
    assert_eq!(fed.reply, Some(Reply::Rows { rows: 1 }));
    assert_eq!(fed.consumed, w.bytes.len());
}

#[test]
fn header_of_a_16_mib_row_arriving_alone_still_counts_the_row() {
    // The packet header alone used to mark the packet as a continuation before it was
    // classified, so the row was skipped without being counted.
    let (w, mut reader) = one_big_row(MAX_PAYLOAD + 10);
    let first_row = w.boundaries[1];
    let fed = feed(&mut reader, &w.bytes, &[first_row + 4, w.bytes.len()], true);
    assert_eq!(fed.reply, Some(Reply::Rows { rows: 1 }));
}
