//! Length-encoded integers and strings, OK/ERR/EOF packets.

use super::alloc_bound;
use crate::proto::*;
use qpslab_fuzzkit::{measure, FuzzRng, Target};

#[test]
fn fuzz_lenenc_round_trips() {
    Target::new("wire_lenenc_round_trip", 20_000).run(
        |r| {
            (0..=r.below(6))
                .map(|_| match r.below(3) {
                    0 => (r.edgy_u64(), None),
                    1 => (0, Some(r.bytes(300))),
                    _ => (r.u64(), None),
                })
                .collect::<Vec<(u64, Option<Vec<u8>>)>>()
        },
        |items| {
            let mut b = Vec::new();
            for (v, s) in items {
                match s {
                    Some(s) => put_lenenc_bytes(&mut b, s),
                    None => {
                        let before = b.len();
                        put_lenenc(&mut b, *v);
                        let width = b.len() - before;
                        let minimal = match *v {
                            0..=250 => 1,
                            251..=0xFFFF => 3,
                            0x1_0000..=0xFF_FFFF => 4,
                            _ => 9,
                        };
                        assert_eq!(width, minimal, "{v} encoded in {width} bytes");
                    }
                }
            }
            let mut r = Reader::new(&b);
            for (v, s) in items {
                match s {
                    Some(s) => assert_eq!(r.lenenc_bytes().unwrap(), Some(&s[..])),
                    None => assert_eq!(r.lenenc().unwrap(), Some(*v)),
                }
            }
            assert_eq!(r.remaining(), 0);
        },
    );
}

/// One read a parser may do on a packet.
#[derive(Clone, Copy, Debug)]
enum Op {
    U8,
    U16,
    U32,
    Lenenc,
    LenencBytes,
    NulStr,
    Take(usize),
    Rest,
}

fn random_packet(r: &mut FuzzRng) -> Vec<u8> {
    let mut p = r.bytes(64);
    if r.one_in(2) {
        // Start with one of the header bytes a reply can begin with.
        let h = *r.pick(&[0x00, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF, 0x01]);
        p.insert(0, h);
    }
    p
}

#[test]
fn fuzz_reader_and_status_packets() {
    Target::new("wire_packet_bodies", 30_000).run(
        |r| {
            let p = random_packet(r);
            let ops: Vec<Op> = (0..r.below(12))
                .map(|_| match r.below(8) {
                    0 => Op::U8,
                    1 => Op::U16,
                    2 => Op::U32,
                    3 => Op::Lenenc,
                    4 => Op::LenencBytes,
                    5 => Op::NulStr,
                    6 => Op::Take(r.len(70)),
                    _ => Op::Rest,
                })
                .collect();
            (p, ops)
        },
        |(p, ops)| {
            let ((), m) = measure(|| {
                let _ = parse_ok(p);
                let _ = parse_eof_status(p);
                let _ = err_code(p);
                let _ = is_eof(p);
                let e = parse_err(p);
                assert!(e.to_string().len() < 64 + 4 * p.len());
                let mut r = Reader::new(p);
                for op in ops {
                    let before = r.remaining();
                    let _ = match op {
                        Op::U8 => r.u8().map(|_| ()),
                        Op::U16 => r.u16().map(|_| ()),
                        Op::U32 => r.u32().map(|_| ()),
                        Op::Lenenc => r.lenenc().map(|_| ()),
                        Op::LenencBytes => r.lenenc_bytes().map(|_| ()),
                        Op::NulStr => Ok(r.nul_str().len()).map(|_| ()),
                        Op::Take(n) => r.take(*n).map(|_| ()),
                        Op::Rest => Ok(r.rest().len()).map(|_| ()),
                    };
                    assert!(r.remaining() <= before);
                }
            });
            assert!(m.largest <= alloc_bound(p.len()), "{m:?}");
        },
    );
}

#[test]
fn fuzz_ok_packets_give_their_fields() {
    Target::new("wire_ok_packet", 20_000).run(
        |r| {
            let ok = OkPacket {
                affected_rows: r.edgy_u64(),
                last_insert_id: r.edgy_u64(),
                status: r.u64() as u16,
                warnings: r.u64() as u16,
            };
            (ok, r.bytes(40), r.one_in(2))
        },
        |(ok, info, eof_header)| {
            let mut p = vec![if *eof_header { 0xFE } else { 0x00 }];
            put_lenenc(&mut p, ok.affected_rows);
            put_lenenc(&mut p, ok.last_insert_id);
            p.extend_from_slice(&ok.status.to_le_bytes());
            p.extend_from_slice(&ok.warnings.to_le_bytes());
            p.extend_from_slice(info);
            assert_eq!(parse_ok(&p).unwrap(), *ok);
            assert_eq!(is_eof(&p), *eof_header);
        },
    );
}
