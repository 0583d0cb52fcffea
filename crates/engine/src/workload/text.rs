//! Text-protocol rendering of a call (`--ps off`, and oltp_insert which sysbench always sends
//! as text).

use super::{Arg, EventBuf};

/// Writes `sql` into `out` (cleared first) with each `?` replaced by the next argument.
///
/// The statement texts contain no `?` other than placeholders and no quoted literals, so a
/// plain scan is exact. Extra placeholders (a bug upstream) render as NULL rather than panic.
pub(super) fn render(sql: &[u8], buf: &EventBuf, args: &[Arg], out: &mut Vec<u8>) {
    out.clear();
    let mut args = args.iter();
    for &b in sql {
        if b != b'?' {
            out.push(b);
            continue;
        }
        match args.next() {
            Some(Arg::Int(v)) => write_int(out, *v),
            Some(a @ Arg::Bytes { .. }) => {
                out.push(b'\'');
                for &c in buf.arg_bytes(a).unwrap_or_default() {
                    // The escapes the server's default sql_mode understands.
                    match c {
                        b'\'' => out.extend_from_slice(b"\\'"),
                        b'\\' => out.extend_from_slice(b"\\\\"),
                        0 => out.extend_from_slice(b"\\0"),
                        _ => out.push(c),
                    }
                }
                out.push(b'\'');
            }
            None => out.extend_from_slice(b"NULL"),
        }
    }
}

/// Decimal without allocating.
fn write_int(out: &mut Vec<u8>, v: i64) {
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_ints_and_quoted_bytes() {
        let buf = EventBuf {
            calls: vec![],
            args: vec![],
            bytes: b"a'b\\c".to_vec(),
        };
        let args = [
            Arg::Int(-42),
            Arg::Int(i64::MIN),
            Arg::Bytes { start: 0, len: 5 },
        ];
        let mut out = Vec::new();
        render(b"X ? ? ? ?", &buf, &args, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "X -42 -9223372036854775808 'a\\'b\\\\c' NULL"
        );
    }
}
