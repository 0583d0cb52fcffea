//! Protocol bytes written independently of the wire crate, so fuzz targets can check its parsers
//! against an encoder that does not share its code.

/// Appends `v` as a MySQL length-encoded integer.
pub fn lenenc(b: &mut Vec<u8>, v: u64) {
    match v {
        0..=250 => b.push(v as u8),
        251..=0xFFFF => {
            b.push(0xFC);
            b.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            b.push(0xFD);
            b.extend_from_slice(&v.to_le_bytes()[..3]);
        }
        _ => {
            b.push(0xFE);
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Appends `s` as a MySQL length-encoded string.
pub fn lenenc_str(b: &mut Vec<u8>, s: &[u8]) {
    lenenc(b, s.len() as u64);
    b.extend_from_slice(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_width_has_its_prefix() {
        let enc = |v| {
            let mut b = Vec::new();
            lenenc(&mut b, v);
            b
        };
        assert_eq!(enc(250), [250]);
        assert_eq!(enc(251), [0xFC, 251, 0]);
        assert_eq!(enc(0x1_0000), [0xFD, 0, 0, 1]);
        assert_eq!(enc(1 << 24), [0xFE, 0, 0, 0, 1, 0, 0, 0, 0]);
    }
}
