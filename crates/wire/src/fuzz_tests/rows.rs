//! Column definitions, text rows and binary rows.

use super::alloc_bound;
use crate::proto::{put_lenenc, put_lenenc_bytes};
use crate::rows::*;
use qpslab_fuzzkit::{measure, FuzzRng, Target};

/// A column definition with random names and type, and its payload.
fn column(r: &mut FuzzRng) -> (Column, Vec<u8>) {
    let kind = *r.pick(&[
        1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 246, 252, 253, 254,
    ]);
    let flags = r.u64() as u16;
    let name = String::from_utf8_lossy(&r.bytes(20)).into_owned();
    let mut p = Vec::new();
    for _ in 0..4 {
        put_lenenc_bytes(&mut p, &r.bytes(12));
    }
    put_lenenc_bytes(&mut p, name.as_bytes());
    put_lenenc_bytes(&mut p, &r.bytes(12));
    put_lenenc(&mut p, 0x0c);
    let charset = if r.one_in(4) { 63 } else { r.u64() as u16 };
    p.extend_from_slice(&charset.to_le_bytes());
    p.extend_from_slice(&(r.u64() as u32).to_le_bytes());
    p.push(kind);
    p.extend_from_slice(&flags.to_le_bytes());
    p.extend_from_slice(&[r.byte(), 0, 0]);
    let c = Column {
        name,
        kind,
        unsigned: flags & 0x20 != 0,
        binary: charset == 63,
    };
    (c, p)
}

#[test]
fn fuzz_column_definitions() {
    Target::new("wire_column_definition", 20_000).run(
        |r| {
            let (c, p) = column(r);
            let bad = r.mutate(&p);
            (c, p, bad)
        },
        |(c, p, bad)| {
            assert_eq!(&parse_column(p).unwrap(), c);
            let (_, m) = measure(|| parse_column(bad));
            assert!(m.largest <= alloc_bound(bad.len()), "{m:?}");
        },
    );
}

#[test]
fn fuzz_text_rows() {
    Target::new("wire_text_row", 20_000).run(
        |r| {
            let values: Vec<Option<Vec<u8>>> = (0..r.below(8))
                .map(|_| (!r.one_in(4)).then(|| r.bytes(300)))
                .collect();
            let mut p = Vec::new();
            for v in &values {
                match v {
                    Some(v) => put_lenenc_bytes(&mut p, v),
                    None => p.push(0xFB),
                }
            }
            let bad = r.mutate(&p);
            let claimed = r.below(3) as usize + values.len().saturating_sub(1);
            (values, p, bad, claimed)
        },
        |(values, p, bad, claimed)| {
            let want: Vec<Option<String>> = values
                .iter()
                .map(|v| v.as_ref().map(|v| String::from_utf8_lossy(v).into_owned()))
                .collect();
            assert_eq!(text_row(p, values.len()).unwrap(), want);
            let (_, m) = measure(|| text_row(bad, *claimed));
            assert!(m.largest <= alloc_bound(bad.len()), "{m:?}");
        },
    );
}

/// A binary-protocol value of column kind `kind`, and its text form.
fn binary_value(r: &mut FuzzRng, kind: u8, unsigned: bool) -> (Vec<u8>, String) {
    let int = |r: &mut FuzzRng, width: usize| {
        let v = r.edgy_u64();
        let b = v.to_le_bytes()[..width].to_vec();
        let mut w = [0u8; 8];
        w[..width].copy_from_slice(&b);
        let u = u64::from_le_bytes(w);
        let shift = 64 - 8 * width as u32;
        let text = if unsigned {
            u.to_string()
        } else {
            (((u << shift) as i64) >> shift).to_string()
        };
        (b, text)
    };
    match kind {
        1 => int(r, 1),
        2 | 13 => int(r, 2),
        3 | 9 => int(r, 4),
        8 => int(r, 8),
        4 => {
            let f = f32::from_bits(r.u64() as u32);
            (f.to_le_bytes().to_vec(), f.to_string())
        }
        5 => {
            let f = f64::from_bits(r.u64());
            (f.to_le_bytes().to_vec(), f.to_string())
        }
        10 => {
            let (y, m, d) = (r.below(10_000) as u16, r.below(13) as u8, r.below(32) as u8);
            let mut b = vec![4];
            b.extend_from_slice(&y.to_le_bytes());
            b.extend_from_slice(&[m, d]);
            (b, format!("{y:04}-{m:02}-{d:02}"))
        }
        7 | 12 => {
            let (y, mo, d) = (r.below(10_000) as u16, r.below(13) as u8, r.below(32) as u8);
            let (h, mi, s) = (r.below(24) as u8, r.below(60) as u8, r.below(60) as u8);
            let us = r.below(1_000_000) as u32;
            let mut b = vec![11];
            b.extend_from_slice(&y.to_le_bytes());
            b.extend_from_slice(&[mo, d, h, mi, s]);
            b.extend_from_slice(&us.to_le_bytes());
            let text = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{us:06}");
            (b, text)
        }
        11 => {
            // Days as the server sends them: up to 34 for TIME's ±838:59:59, any u32 when hostile.
            let days = if r.one_in(2) {
                r.below(35) as u32
            } else {
                r.u64() as u32
            };
            let (neg, h, mi, s) = (r.one_in(2), r.below(24), r.below(60), r.below(60));
            let mut b = vec![8, neg as u8];
            b.extend_from_slice(&days.to_le_bytes());
            b.extend_from_slice(&[h as u8, mi as u8, s as u8]);
            let hours = days as u64 * 24 + h;
            let sign = if neg { "-" } else { "" };
            (b, format!("{sign}{hours:02}:{mi:02}:{s:02}"))
        }
        6 => (Vec::new(), String::new()),
        _ => {
            let s = r.bytes(40);
            let mut b = Vec::new();
            put_lenenc_bytes(&mut b, &s);
            (b, String::from_utf8_lossy(&s).into_owned())
        }
    }
}

#[test]
fn fuzz_binary_rows() {
    Target::new("wire_binary_row", 20_000).run(
        |r| {
            let mut cols = Vec::new();
            let mut want = Vec::new();
            let mut values = Vec::new();
            let n = r.below(12) as usize;
            let mut bitmap = vec![0u8; (n + 9) / 8];
            for i in 0..n {
                let (c, _) = column(r);
                if r.one_in(5) {
                    bitmap[(i + 2) / 8] |= 1 << ((i + 2) % 8);
                    want.push(None);
                } else {
                    let (b, text) = binary_value(r, c.kind, c.unsigned);
                    values.extend_from_slice(&b);
                    want.push(Some(text));
                }
                cols.push(c);
            }
            let mut p = vec![0];
            p.extend_from_slice(&bitmap);
            p.extend_from_slice(&values);
            let bad = r.mutate(&p);
            (cols, want, p, bad)
        },
        |(cols, want, p, bad)| {
            assert_eq!(&binary_row(p, cols).unwrap(), want);
            let (_, m) = measure(|| binary_row(bad, cols));
            assert!(m.largest <= alloc_bound(bad.len()), "{m:?}");
            // The same row kept as sent: NULL where the text form has none, and the same
            // bounded allocation on garbage.
            let typed = typed_row(p, cols).unwrap();
            assert_eq!(typed.len(), want.len());
            for (t, w) in typed.iter().zip(want) {
                assert_eq!(*t == Cell::Null, w.is_none(), "{t:?} {w:?}");
            }
            let (_, m) = measure(|| typed_row(bad, cols));
            assert!(m.largest <= alloc_bound(bad.len()), "{m:?}");
        },
    );
}
