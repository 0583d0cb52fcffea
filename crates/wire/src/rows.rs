//! Column definitions and row decoding (text and binary protocol) for the blocking session,
//! and where a result set's rows go as they arrive: kept ([`Keep`], for
//! [`crate::Conn::query`]) or handed to the caller one by one and dropped ([`Row`], for
//! [`crate::Conn::query_each`]).

use crate::error::Error;
use crate::proto::Reader;

/// Result of a text-protocol query or a statement execution, fully read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueryResult {
    /// Column names (empty for statements without a result set).
    pub columns: Vec<String>,
    /// Rows, each value as text or NULL.
    pub rows: Vec<Vec<Option<String>>>,
    /// Rows changed (OK packet).
    pub affected_rows: u64,
    /// Last AUTO_INCREMENT value generated (OK packet).
    pub last_insert_id: u64,
    /// Warning count.
    pub warnings: u16,
}

impl QueryResult {
    /// The first column of the first row, when there is one and it is not NULL.
    pub fn first_value(&self) -> Option<&str> {
        self.rows.first()?.first()?.as_deref()
    }
}

/// A row of a streamed text-protocol result, as the server sent it: valid during the callback
/// only, nothing of it is kept.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    /// Which result set of the statement it belongs to (0: the first with columns).
    pub set: usize,
    packet: &'a [u8],
    columns: usize,
}

impl<'a> Row<'a> {
    /// The row's packet: each value length-encoded, `0xFB` for NULL.
    pub fn packet(&self) -> &'a [u8] {
        self.packet
    }

    /// The row's values in column order, each as its bytes or `None` for NULL; a malformed
    /// packet ends with an error.
    pub fn values(&self) -> impl Iterator<Item = Result<Option<&'a [u8]>, Error>> + 'a {
        let mut r = Reader::new(self.packet);
        (0..self.columns).map(move |_| r.lenenc_bytes())
    }
}

/// What a statement returned besides its rows, counted as they streamed past.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Streamed {
    /// Result sets with columns.
    pub sets: usize,
    /// Rows of every result set.
    pub rows: u64,
    /// Rows changed (OK packets, summed).
    pub affected_rows: u64,
    /// Last AUTO_INCREMENT value generated.
    pub last_insert_id: u64,
    /// Warning count.
    pub warnings: u16,
}

/// Where the rows of a command's result sets go as they are read.
pub(crate) trait Sink {
    /// Result set `set` begins, with `cols`.
    fn columns(&mut self, set: usize, cols: &[Column]);
    /// A row packet of result set `set`.
    fn row(&mut self, set: usize, packet: &[u8], cols: &[Column]) -> Result<(), Error>;
}

/// Keeps the first result set's column names and rows, decoded to text.
pub(crate) struct Keep {
    binary: bool,
    columns: Vec<String>,
    rows: Vec<Vec<Option<String>>>,
}

impl Keep {
    /// Rows in the binary protocol (a prepared statement's) when `binary`, else text.
    pub(crate) fn new(binary: bool) -> Keep {
        Keep {
            binary,
            columns: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// The kept rows with the counts of `s`.
    pub(crate) fn into_result(self, s: &Streamed) -> QueryResult {
        QueryResult {
            columns: self.columns,
            rows: self.rows,
            affected_rows: s.affected_rows,
            last_insert_id: s.last_insert_id,
            warnings: s.warnings,
        }
    }
}

impl Sink for Keep {
    fn columns(&mut self, set: usize, cols: &[Column]) {
        if set == 0 {
            self.columns = cols.iter().map(|c| c.name.clone()).collect();
        }
    }

    fn row(&mut self, set: usize, p: &[u8], cols: &[Column]) -> Result<(), Error> {
        if set == 0 {
            self.rows.push(if self.binary {
                binary_row(p, cols)?
            } else {
                text_row(p, cols.len())?
            });
        }
        Ok(())
    }
}

/// A value of a binary-protocol row as the server sent it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// NULL.
    Null,
    /// A signed integer column.
    Int(i64),
    /// An unsigned integer column.
    UInt(u64),
    /// A FLOAT or DOUBLE column (a DECIMAL, parsed).
    Double(f64),
    /// A column of the binary character set (BLOB, VARBINARY).
    Bytes(Vec<u8>),
    /// Any other column, as text (temporal types formatted as the text protocol does).
    Text(String),
}

/// A prepared statement's result with its values as sent ([`crate::Conn::exec_typed`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Typed {
    /// Rows of the first result set.
    pub rows: Vec<Vec<Cell>>,
    /// Rows changed (OK packet).
    pub affected_rows: u64,
    /// Last AUTO_INCREMENT value generated (OK packet).
    pub last_insert_id: u64,
}

/// Keeps the first result set's rows as [`Cell`]s.
#[derive(Default)]
pub(crate) struct KeepTyped {
    pub rows: Vec<Vec<Cell>>,
}

impl Sink for KeepTyped {
    fn columns(&mut self, _set: usize, _cols: &[Column]) {}

    fn row(&mut self, set: usize, p: &[u8], cols: &[Column]) -> Result<(), Error> {
        if set == 0 {
            self.rows.push(typed_row(p, cols)?);
        }
        Ok(())
    }
}

/// Decodes a binary-protocol row into [`Cell`]s.
pub(crate) fn typed_row(p: &[u8], cols: &[Column]) -> Result<Vec<Cell>, Error> {
    binary_values(p, cols, Cell::Null, typed_value)
}

/// One non-NULL value of a binary row, as the server sent it.
fn typed_value(r: &mut Reader<'_>, c: &Column) -> Result<Cell, Error> {
    Ok(match c.kind {
        1 => int_cell(r.take(1)?, c.unsigned),
        2 | 13 => int_cell(r.take(2)?, c.unsigned),
        3 | 9 => int_cell(r.take(4)?, c.unsigned),
        8 => int_cell(r.take(8)?, c.unsigned),
        4 => {
            let b = r.take(4)?;
            Cell::Double(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        }
        5 => {
            let mut w = [0u8; 8];
            w.copy_from_slice(r.take(8)?);
            Cell::Double(f64::from_le_bytes(w))
        }
        0 | 246 => {
            let t = String::from_utf8_lossy(r.lenenc_bytes()?.unwrap_or(&[])).into_owned();
            match t.parse::<f64>() {
                Ok(f) => Cell::Double(f),
                Err(_) => Cell::Text(t),
            }
        }
        7 | 10 | 11 | 12 | 6 => Cell::Text(binary_value(r, c)?),
        _ => {
            let b = r.lenenc_bytes()?.unwrap_or(&[]).to_vec();
            if c.binary {
                Cell::Bytes(b)
            } else {
                Cell::Text(String::from_utf8_lossy(&b).into_owned())
            }
        }
    })
}

/// Hands each row to a callback and keeps nothing.
pub(crate) struct Each<'f, 'g>(pub &'f mut (dyn FnMut(&Row<'_>) + 'g));

impl Sink for Each<'_, '_> {
    fn columns(&mut self, _set: usize, _cols: &[Column]) {}

    fn row(&mut self, set: usize, packet: &[u8], cols: &[Column]) -> Result<(), Error> {
        (self.0)(&Row {
            set,
            packet,
            columns: cols.len(),
        });
        Ok(())
    }
}

/// The parts of a column definition needed to decode binary rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Column {
    pub name: String,
    pub kind: u8,
    pub unsigned: bool,
    /// The binary character set (63): bytes, not text.
    pub binary: bool,
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
    let charset = r.u16()?;
    r.u32()?; // column length
    let kind = r.u8()?;
    let flags = r.u16()?;
    Ok(Column {
        name,
        kind,
        unsigned: flags & UNSIGNED != 0,
        binary: charset == 63,
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
    binary_values(p, cols, None, |r, c| Ok(Some(binary_value(r, c)?)))
}

/// Walks a binary-protocol row (header 0x00, NULL bitmap with a 2-bit offset, values): `null`
/// for each NULL column, `value` reading each other one.
fn binary_values<T: Clone>(
    p: &[u8],
    cols: &[Column],
    null: T,
    mut value: impl FnMut(&mut Reader<'_>, &Column) -> Result<T, Error>,
) -> Result<Vec<T>, Error> {
    let mut r = Reader::new(p);
    r.u8()?;
    let bitmap = r.take((cols.len() + 7 + 2) / 8)?;
    let mut out = Vec::with_capacity(cols.len());
    for (i, c) in cols.iter().enumerate() {
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            out.push(null.clone());
        } else {
            out.push(value(&mut r, c)?);
        }
    }
    Ok(out)
}

/// A little-endian integer of `b.len()` bytes, sign-extended unless `unsigned`.
fn int_cell(b: &[u8], unsigned: bool) -> Cell {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    let u = u64::from_le_bytes(w);
    if unsigned {
        return Cell::UInt(u);
    }
    let shift = 64 - 8 * b.len() as u32;
    Cell::Int(((u << shift) as i64) >> shift)
}

fn int_text(b: &[u8], unsigned: bool) -> String {
    match int_cell(b, unsigned) {
        Cell::UInt(u) => u.to_string(),
        Cell::Int(i) => i.to_string(),
        _ => String::new(),
    }
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
