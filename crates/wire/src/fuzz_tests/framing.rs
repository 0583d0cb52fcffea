//! Packet framing over a real socket: lengths, sequence ids, 16 MiB continuation.

use crate::packet::{frame, PacketIo, MAX_PAYLOAD};
use crate::stream::Stream;
use qpslab_fuzzkit::{measure, FuzzRng, Target};
use std::io::Write;
use std::os::unix::net::UnixStream;

/// Writes `bytes` into one end of a socket pair (from a thread when they may not fit the
/// socket's buffer) and returns a packet reader on the other end, with the writer's handle.
fn feed(bytes: Vec<u8>, start_seq: u8) -> (PacketIo, std::thread::JoinHandle<()>) {
    let (mut w, r) = UnixStream::pair().expect("a socket pair");
    let writer = std::thread::spawn(move || {
        let _ = w.write_all(&bytes);
    });
    let mut io = PacketIo::new(Stream::Unix(r), None);
    io.set_seq(start_seq);
    (io, writer)
}

/// A payload length, sometimes at the 16 MiB - 1 boundary.
fn payload_len(r: &mut FuzzRng, big: bool) -> usize {
    if big {
        MAX_PAYLOAD - 2 + r.index(5) + r.index(2) * MAX_PAYLOAD
    } else {
        r.len(70_000)
    }
}

#[test]
fn fuzz_framing_round_trips() {
    Target::weighted("wire_framing_round_trip", 200, 0.002).run(
        |r| {
            let big = r.one_in(200);
            let lens: Vec<usize> = (0..=r.below(4)).map(|_| payload_len(r, big)).collect();
            (lens, r.byte(), r.u64())
        },
        |(lens, seq, fill)| {
            let payloads: Vec<Vec<u8>> = lens
                .iter()
                .enumerate()
                .map(|(i, n)| vec![(*fill as u8).wrapping_add(i as u8); *n])
                .collect();
            let mut bytes = Vec::new();
            let mut s = *seq;
            for p in &payloads {
                s = frame(&mut bytes, p, s);
            }
            let (mut io, writer) = feed(bytes, *seq);
            let mut out = Vec::new();
            for p in &payloads {
                io.read_into(&mut out).unwrap();
                assert!(
                    out == *p,
                    "payload of {} bytes came back as {}",
                    p.len(),
                    out.len()
                );
            }
            writer.join().unwrap();
        },
    );
}

#[test]
fn fuzz_framing_of_random_streams() {
    Target::weighted("wire_framing_random", 1_500, 0.02).run(
        |r| {
            let mut b = Vec::new();
            for _ in 0..=r.below(4) {
                let len = if r.one_in(3) {
                    r.u64() as u32 & 0xFF_FFFF
                } else {
                    r.below(40) as u32
                };
                b.extend_from_slice(&len.to_le_bytes()[..3]);
                b.push(if r.one_in(4) {
                    r.byte()
                } else {
                    b.len() as u8 / 44
                });
                let body = r.bytes(60);
                b.extend_from_slice(&body);
            }
            r.mutate(&b)
        },
        |bytes| {
            let n = bytes.len();
            let (mut io, writer) = feed(bytes.clone(), 0);
            let mut out = Vec::new();
            let (_, m) = measure(|| while io.read_into(&mut out).is_ok() {});
            // The reader's buffer grows by at most 64 KiB beyond what arrived.
            assert!(m.largest <= 256 * 1024 + 4 * n, "{m:?} for {n} bytes");
            drop(io);
            writer.join().unwrap();
        },
    );
}

#[test]
fn fuzz_com_query_framing_round_trips() {
    // The hot path's COM_QUERY encoder against the session's packet reader.
    Target::weighted("wire_com_query_round_trip", 100, 0.001).run(
        |r| {
            let big = r.one_in(40);
            let n = if big {
                MAX_PAYLOAD - 3 + r.index(6)
            } else {
                r.len(70_000)
            };
            (n, r.byte())
        },
        |(n, fill)| {
            let sql = vec![*fill; *n];
            let mut bytes = Vec::new();
            crate::codec::write_com_query(&mut bytes, &sql);
            let (mut io, writer) = feed(bytes, 0);
            let p = io.read().unwrap();
            assert_eq!(p.len(), n + 1);
            assert!(
                p[0] == 0x03 && p[1..] == sql[..],
                "{n} bytes came back changed"
            );
            writer.join().unwrap();
        },
    );
}
