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
        if b == b'?' {
            write_arg(out, buf, args.next());
        } else {
            out.push(b);
        }
    }
}

/// Like [`render`], with the placeholders at the byte offsets `at` (a script statement whose
/// strings or comments hold a `?`).
pub(super) fn render_at(sql: &str, at: &[u32], buf: &EventBuf, args: &[Arg], out: &mut Vec<u8>) {
    out.clear();
    let mut from = 0;
    let mut args = args.iter();
    for &i in at {
        let i = i as usize;
        out.extend_from_slice(sql.as_bytes().get(from..i).unwrap_or_default());
        write_arg(out, buf, args.next());
        from = i + 1;
    }
    out.extend_from_slice(sql.as_bytes().get(from..).unwrap_or_default());
}

/// One argument as SQL text.
#[inline]
fn write_arg(out: &mut Vec<u8>, buf: &EventBuf, arg: Option<&Arg>) {
    match arg {
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
            pause_us: 0,
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

    #[test]
    fn renders_at_offsets_leaving_other_question_marks() {
        let buf = EventBuf::default();
        let mut out = Vec::new();
        let sql = "SELECT '?', ? /* ? */, ?";
        render_at(sql, &[12, 23], &buf, &[Arg::Int(1), Arg::Int(-2)], &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "SELECT '?', 1 /* ? */, -2");
    }
}
