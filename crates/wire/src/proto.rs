//! Protocol primitives: length-encoded integers and strings, and OK/ERR packet bodies.

use crate::error::Error;

/// A cursor over one packet payload.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

fn short() -> Error {
    Error::Protocol("packet shorter than its contents claim".into())
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let r = &self.buf[self.pos..];
        self.pos = self.buf.len();
        r
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.buf.len());
        let end = end.ok_or_else(short)?;
        let r = &self.buf[self.pos..end];
        self.pos = end;
        Ok(r)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16, Error> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    pub(crate) fn u32(&mut self) -> Result<u32, Error> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A length-encoded integer; `None` for the NULL marker 0xFB.
    pub(crate) fn lenenc(&mut self) -> Result<Option<u64>, Error> {
        let first = self.u8()?;
        let (width, v) = match first {
            0xFB => return Ok(None),
            0xFC => (2, 0),
            0xFD => (3, 0),
            0xFE => (8, 0),
            0xFF => {
                return Err(Error::Protocol(
                    "0xFF is not a length-encoded integer".into(),
                ))
            }
            n => (0, n as u64),
        };
        if width == 0 {
            return Ok(Some(v));
        }
        let b = self.take(width)?;
        let mut out = [0u8; 8];
        out[..width].copy_from_slice(b);
        Ok(Some(u64::from_le_bytes(out)))
    }
    /// A length-encoded integer that must not be NULL.
    pub(crate) fn lenenc_int(&mut self) -> Result<u64, Error> {
        self.lenenc()?
            .ok_or_else(|| Error::Protocol("unexpected NULL length".into()))
    }
    /// A length-encoded string; `None` for NULL.
    pub(crate) fn lenenc_bytes(&mut self) -> Result<Option<&'a [u8]>, Error> {
        match self.lenenc()? {
            None => Ok(None),
            Some(n) => Ok(Some(self.take(usize::try_from(n).map_err(|_| short())?)?)),
        }
    }
    /// A NUL-terminated string (or the rest of the packet when there is no NUL).
    pub(crate) fn nul_str(&mut self) -> &'a [u8] {
        let rest = &self.buf[self.pos..];
        match rest.iter().position(|b| *b == 0) {
            Some(i) => {
                self.pos += i + 1;
                &rest[..i]
            }
            None => self.rest(),
        }
    }
}

/// The most columns a result set may have: MySQL's limit on a table's and a query's columns.
pub(crate) const MAX_COLUMNS: u64 = 4096;

/// A result set's column count as the server sent it, refused above [`MAX_COLUMNS`] before
/// anything is read or allocated for the columns.
pub(crate) fn column_count(n: u64) -> Result<usize, Error> {
    if n > MAX_COLUMNS {
        return Err(Error::Protocol(format!(
            "the server announced {n} columns, more than the {MAX_COLUMNS} a result set can have"
        )));
    }
    Ok(n as usize)
}

/// Appends a length-encoded integer.
pub(crate) fn put_lenenc(buf: &mut Vec<u8>, v: u64) {
    if v < 0xFB {
        buf.push(v as u8);
    } else if v <= 0xFFFF {
        buf.push(0xFC);
        buf.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v <= 0xFF_FFFF {
        buf.push(0xFD);
        buf.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        buf.push(0xFE);
        buf.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends a length-encoded string.
pub(crate) fn put_lenenc_bytes(buf: &mut Vec<u8>, b: &[u8]) {
    put_lenenc(buf, b.len() as u64);
    buf.extend_from_slice(b);
}

/// The fields of an OK packet (header 0x00, or 0xFE in place of EOF) this client uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct OkPacket {
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub status: u16,
    pub warnings: u16,
}

/// `SERVER_MORE_RESULTS_EXISTS` in the status flags.
pub(crate) const SERVER_MORE_RESULTS_EXISTS: u16 = 0x0008;

/// Parses an OK packet payload (header byte included).
pub(crate) fn parse_ok(p: &[u8]) -> Result<OkPacket, Error> {
    let mut r = Reader::new(p);
    r.u8()?;
    let affected_rows = r.lenenc_int()?;
    let last_insert_id = r.lenenc_int()?;
    // CLIENT_PROTOCOL_41 is always negotiated: status and warnings follow.
    let status = r.u16()?;
    let warnings = r.u16()?;
    Ok(OkPacket {
        affected_rows,
        last_insert_id,
        status,
        warnings,
    })
}

/// Parses an old-style EOF packet (0xFE, warnings, status); returns the status flags.
pub(crate) fn parse_eof_status(p: &[u8]) -> u16 {
    if p.len() >= 5 {
        u16::from_le_bytes([p[3], p[4]])
    } else {
        0
    }
}

/// Turns an ERR packet payload into [`Error::Server`].
pub(crate) fn parse_err(p: &[u8]) -> Error {
    let mut r = Reader::new(p);
    let code = r.u8().and_then(|_| r.u16()).unwrap_or(0);
    let mut sqlstate = "HY000".to_string();
    if r.remaining() >= 6 && p.get(3) == Some(&b'#') {
        let _ = r.u8();
        if let Ok(s) = r.take(5) {
            sqlstate = String::from_utf8_lossy(s).into_owned();
        }
    }
    let message = String::from_utf8_lossy(r.rest()).into_owned();
    Error::Server {
        code,
        sqlstate,
        message,
    }
}

/// The error code of an ERR payload, without allocating.
pub(crate) fn err_code(p: &[u8]) -> u16 {
    if p.len() >= 3 {
        u16::from_le_bytes([p[1], p[2]])
    } else {
        0
    }
}

/// True when `p` is an EOF/OK-as-EOF packet: header 0xFE and shorter than 16 MiB - 1
/// (a longer 0xFE packet is a row whose first value has an 8-byte length).
pub(crate) fn is_eof(p: &[u8]) -> bool {
    p.first() == Some(&0xFE) && p.len() < 0xFF_FFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trips() {
        for v in [
            0u64,
            250,
            251,
            0xFFFF,
            0x10000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_lenenc(&mut b, v);
            let mut r = Reader::new(&b);
            assert_eq!(r.lenenc().unwrap(), Some(v), "{v}");
            assert_eq!(r.remaining(), 0);
        }
        assert_eq!(Reader::new(&[0xFB]).lenenc().unwrap(), None);
        assert!(Reader::new(&[0xFC, 1]).lenenc().is_err());
    }

    #[test]
    fn parses_err_packet() {
        let mut p = vec![0xFF, 0x1D, 0x04, b'#'];
        p.extend_from_slice(b"28000Access denied");
        match parse_err(&p) {
            Error::Server {
                code,
                sqlstate,
                message,
            } => {
                assert_eq!(code, 1053);
                assert_eq!(sqlstate, "28000");
                assert_eq!(message, "Access denied");
            }
            e => panic!("{e:?}"),
        }
    }
}
