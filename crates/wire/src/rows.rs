//! Column definitions and row decoding (text and binary protocol) for the blocking session.

use crate::error::Error;
use crate::proto::Reader;

/// The parts of a column definition needed to decode binary rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Column {
    pub name: String,
    pub kind: u8,
    pub unsigned: bool,
}

/// `UNSIGNED_FLAG` in column flags.
const UNSIGNED: u16 = 0x20;

/// Parses a ColumnDefinition41 payload.
pub(crate) fn parse_column(p: &[u8]) -> Result<Column, Error> {
    let mut r = Reader::new(p);
    for _ in 0..4 {
        r.lenenc_bytes()?; // catalog, schema, table, org_table
    }
    let name = String::from_utf8_lossy(r.lenenc_bytes()?.unwrap_or(&[])).into_owned();
    r.lenenc_bytes()?; // org_name
    r.lenenc_int()?; // length of the fixed fields (0x0c)
    r.u16()?; // character set
    r.u32()?; // column length
    let kind = r.u8()?;
    let flags = r.u16()?;
    Ok(Column {
        name,
        kind,
        unsigned: flags & UNSIGNED != 0,
    })
}

/// Decodes a text-protocol row.
pub(crate) fn text_row(p: &[u8], ncols: usize) -> Result<Vec<Option<String>>, Error> {
    let mut r = Reader::new(p);
    (0..ncols)
        .map(|_| {
            Ok(r.lenenc_bytes()?
                .map(|b| String::from_utf8_lossy(b).into_owned()))
        })
        .collect()
}

/// Decodes a binary-protocol row (header 0x00, NULL bitmap with a 2-bit offset, values)
/// into text, formatted as the text protocol would.
pub(crate) fn binary_row(p: &[u8], cols: &[Column]) -> Result<Vec<Option<String>>, Error> {
    let mut r = Reader::new(p);
    r.u8()?;
    let bitmap = r.take((cols.len() + 7 + 2) / 8)?;
    let mut out = Vec::with_capacity(cols.len());
    for (i, c) in cols.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            out.push(None);
            continue;
        }
        out.push(Some(binary_value(&mut r, c)?));
    }
    Ok(out)
}

fn int_text(b: &[u8], unsigned: bool) -> String {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    let u = u64::from_le_bytes(w);
    if unsigned {
        return u.to_string();
    }
    let shift = 64 - 8 * b.len() as u32;
    (((u << shift) as i64) >> shift).to_string()
}

fn binary_value(r: &mut Reader<'_>, c: &Column) -> Result<String, Error> {
    Ok(match c.kind {
        1 => int_text(r.take(1)?, c.unsigned),      // TINY
        2 | 13 => int_text(r.take(2)?, c.unsigned), // SHORT, YEAR
        3 | 9 => int_text(r.take(4)?, c.unsigned),  // LONG, INT24
        8 => int_text(r.take(8)?, c.unsigned),      // LONGLONG
        4 => {
            let b = r.take(4)?;
            f32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string()
        }
        5 => {
            let b = r.take(8)?;
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            f64::from_le_bytes(w).to_string()
        }
        7 | 10 | 12 => {
            let n = r.u8()? as usize;
            datetime_text(r.take(n)?, c.kind == 10)
        }
        11 => {
            let n = r.u8()? as usize;
            time_text(r.take(n)?)
        }
        6 => String::new(),
        _ => String::from_utf8_lossy(r.lenenc_bytes()?.unwrap_or(&[])).into_owned(),
    })
}

fn datetime_text(b: &[u8], date_only: bool) -> String {
    let g = |i: usize| b.get(i).copied().unwrap_or(0) as u32;
    let year = g(0) | (g(1) << 8);
    let date = format!("{year:04}-{:02}-{:02}", g(2), g(3));
    if date_only {
        return date;
    }
    let mut s = format!("{date} {:02}:{:02}:{:02}", g(4), g(5), g(6));
    if b.len() >= 11 {
        let us = g(7) | (g(8) << 8) | (g(9) << 16) | (g(10) << 24);
        s.push_str(&format!(".{us:06}"));
    }
    s
}

fn time_text(b: &[u8]) -> String {
    if b.is_empty() {
        return "00:00:00".into();
    }
    let g = |i: usize| b.get(i).copied().unwrap_or(0) as u32;
    let neg = g(0) == 1;
    let days = g(1) | (g(2) << 8) | (g(3) << 16) | (g(4) << 24);
    // u64: a hostile day count times 24 overflows u32.
    let hours = days as u64 * 24 + g(5) as u64;
    let mut s = format!(
        "{}{hours:02}:{:02}:{:02}",
        if neg { "-" } else { "" },
        g(6),
        g(7)
    );
    if b.len() >= 12 {
        let us = g(8) | (g(9) << 8) | (g(10) << 16) | (g(11) << 24);
        s.push_str(&format!(".{us:06}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_binary_integers_and_dates() {
        assert_eq!(int_text(&[0xFF], false), "-1");
        assert_eq!(int_text(&[0xFF], true), "255");
        assert_eq!(int_text(&[0xFE, 0xFF, 0xFF, 0xFF], false), "-2");
        assert_eq!(datetime_text(&[0xE8, 0x07, 2, 29], true), "2024-02-29");
        assert_eq!(
            datetime_text(&[0xE8, 0x07, 2, 29, 13, 5, 9], false),
            "2024-02-29 13:05:09"
        );
        assert_eq!(time_text(&[1, 1, 0, 0, 0, 2, 3, 4]), "-26:03:04");
    }
}
