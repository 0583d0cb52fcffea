//! One table's pending rows, encoded as the loader sends them: binary parameter rows of the
//! prepared single-row INSERT for MariaDB's COM_STMT_BULK_EXECUTE (as the sysbench loader
//! sends sbtest rows), or the text of one multi-row INSERT. The generator writes values in
//! column order between [`Batch::row`] and [`Batch::end`]; the loader sends the batch when
//! [`Batch::full`] and starts the next with [`Batch::clear`].

use super::schema::{columns, Col};
use qpslab_wire::codec::{put_bulk_bytes, put_bulk_int, put_bulk_null, ParamType};

/// How a batch encodes its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// COM_STMT_BULK_EXECUTE parameter rows.
    Bulk,
    /// One `INSERT INTO t VALUES (...),(...)` statement.
    Text,
}

/// Pending rows of one table.
#[derive(Debug)]
pub struct Batch {
    table: &'static str,
    encoding: Encoding,
    buf: Vec<u8>,
    rows: u64,
    limit: usize,
    /// Text: no value written yet in the current row (no comma before it).
    first: bool,
}

impl Batch {
    /// An empty batch of `table` that counts as full at `limit` bytes.
    pub fn new(table: &'static str, encoding: Encoding, limit: usize) -> Batch {
        let mut b = Batch {
            table,
            encoding,
            buf: Vec::with_capacity(limit + 4096),
            rows: 0,
            limit,
            first: true,
        };
        b.clear();
        b
    }

    /// The table the rows go to.
    pub fn table(&self) -> &'static str {
        self.table
    }

    /// Rows in the batch.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// True when the batch should be sent before more rows are added.
    pub fn full(&self) -> bool {
        self.buf.len() >= self.limit
    }

    /// Forgets the rows (after they were sent).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.rows = 0;
        if self.encoding == Encoding::Text {
            self.buf
                .extend_from_slice(format!("INSERT INTO {} VALUES ", self.table).as_bytes());
        }
    }

    /// The bytes to send: parameter rows ([`Encoding::Bulk`]) or the statement's text.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The declared parameter types of the bulk INSERT.
    pub fn param_types(&self) -> Vec<ParamType> {
        columns(self.table)
            .iter()
            .map(|c| match c {
                Col::Int => ParamType::Int,
                // Declared as a string; each row carries its own length.
                Col::Text => ParamType::FixedBytes(0),
            })
            .collect()
    }

    /// Starts a row.
    pub fn row(&mut self) {
        if self.encoding == Encoding::Text {
            if self.rows > 0 {
                self.buf.push(b',');
            }
            self.buf.push(b'(');
            self.first = true;
        }
        self.rows += 1;
    }

    /// Ends the row started by [`Batch::row`].
    pub fn end(&mut self) {
        if self.encoding == Encoding::Text {
            self.buf.push(b')');
        }
    }

    fn sep(&mut self) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
    }

    /// An integer value.
    pub fn int(&mut self, v: i64) {
        match self.encoding {
            Encoding::Bulk => put_bulk_int(&mut self.buf, v),
            Encoding::Text => {
                self.sep();
                self.buf.extend_from_slice(v.to_string().as_bytes());
            }
        }
    }

    /// A NULL value.
    pub fn null(&mut self) {
        match self.encoding {
            Encoding::Bulk => put_bulk_null(&mut self.buf),
            Encoding::Text => {
                self.sep();
                self.buf.extend_from_slice(b"NULL");
            }
        }
    }

    /// A text value of `len` bytes for the caller to fill. Invariant: the caller writes no
    /// quote or backslash (the generator writes letters, digits, spaces and `.-:`), so the
    /// text form needs no escaping.
    pub fn fill(&mut self, len: usize) -> &mut [u8] {
        match self.encoding {
            Encoding::Bulk => put_bulk_bytes(&mut self.buf, len),
            Encoding::Text => {
                self.sep();
                self.buf.push(b'\'');
                let start = self.buf.len();
                self.buf.resize(start + len + 1, b'\'');
                &mut self.buf[start..start + len]
            }
        }
    }

    /// A text value copied from `s` (see [`Batch::fill`] for what it may hold).
    pub fn text(&mut self, s: &[u8]) {
        self.fill(s.len()).copy_from_slice(s);
    }

    /// A fixed-point value `units / 10^scale`, written as decimal text (`-10.00`, `0.1234`).
    pub fn decimal(&mut self, units: i64, scale: u32) {
        let p = 10i64.pow(scale);
        let sign = if units < 0 { "-" } else { "" };
        let (whole, frac) = (units.abs() / p, units.abs() % p);
        let s = format!("{sign}{whole}.{frac:0w$}", w = scale as usize);
        self.text(s.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_rows_form_one_insert() {
        let mut b = Batch::new("new_orders", Encoding::Text, 1 << 20);
        for o in [2101, 2102] {
            b.row();
            b.int(o);
            b.int(3);
            b.int(1);
            b.end();
        }
        assert_eq!(
            String::from_utf8_lossy(b.bytes()),
            "INSERT INTO new_orders VALUES (2101,3,1),(2102,3,1)"
        );
        assert_eq!(b.rows(), 2);
        b.clear();
        assert_eq!(b.rows(), 0);
        b.row();
        b.text(b"ab");
        b.null();
        b.decimal(-1000, 2);
        b.decimal(1234, 4);
        b.end();
        assert_eq!(
            String::from_utf8_lossy(b.bytes()),
            "INSERT INTO new_orders VALUES ('ab',NULL,'-10.00','0.1234')"
        );
    }

    #[test]
    fn bulk_rows_carry_indicators() {
        let mut b = Batch::new("new_orders", Encoding::Bulk, 10);
        assert!(!b.full());
        b.row();
        b.int(7);
        b.null();
        b.text(b"xy");
        b.end();
        assert_eq!(
            b.bytes(),
            [
                &[0u8, 7, 0, 0, 0, 0, 0, 0, 0][..],
                &[1],
                &[0, 2, b'x', b'y']
            ]
            .concat()
        );
        assert!(b.full());
        assert_eq!(b.param_types().len(), 3);
    }
}
