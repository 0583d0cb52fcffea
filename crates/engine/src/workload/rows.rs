//! Rows of a prepared table, generated as sysbench's `create_table` does: `k` from the default
//! distribution over [1, table_size], `c` and `pad` from their templates.
//!
//! Three encodings of the same rows: binary parameter rows for MariaDB's COM_STMT_BULK_EXECUTE
//! ([`bulk_batch`]), a tab-separated stream for `LOAD DATA LOCAL INFILE` ([`RowStream`], an
//! `io::Read` so nothing touches the disk) and multi-row `INSERT` statements
//! ([`insert_batches`]). A chunk's rows depend only on the seed, the table and the
//! chunk's first id, so loading in parallel gives the same data whatever the interleaving.

use super::{C_TEMPLATE, PAD_TEMPLATE};
use crate::rand::{Distribution, Rng};
use qpslab_core::workload::WorkloadOptions;
use qpslab_wire::codec::{put_bulk_bytes, put_bulk_int, ParamType};
use std::io::{self, Read};
use std::ops::Range;

/// The generator of a chunk's rows.
#[derive(Debug)]
pub struct RowGen {
    rng: Rng,
    k: Distribution,
    ids: Range<u64>,
}

impl RowGen {
    /// Rows with ids in `ids` of table `t`.
    pub fn new(o: &WorkloadOptions, t: u32, ids: Range<u64>) -> RowGen {
        let seed = o.rand.seed
            ^ u64::from(t).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ ids.start.wrapping_mul(0xD1B5_4A32_D192_ED03);
        RowGen {
            rng: Rng::new(seed),
            k: Distribution::new(&o.rand, o.table_size),
            ids,
        }
    }

    /// Appends the next row as `id<sep>k<sep>c<sep>pad`; false when the chunk is done. `quote`
    /// wraps c and pad in single quotes (SQL) or not (TSV).
    fn next_row(&mut self, out: &mut Vec<u8>, sep: &[u8], quote: bool) -> bool {
        let Some(id) = self.ids.next() else {
            return false;
        };
        let k = self.k.sample(&mut self.rng);
        push_u64(out, id);
        out.extend_from_slice(sep);
        push_u64(out, k);
        for tpl in [&C_TEMPLATE[..], &PAD_TEMPLATE[..]] {
            out.extend_from_slice(sep);
            if quote {
                out.push(b'\'');
            }
            let start = out.len();
            out.resize(start + tpl.len(), 0);
            self.rng.fill_template(tpl, &mut out[start..]);
            if quote {
                out.push(b'\'');
            }
        }
        true
    }

    /// Appends the next row as the binary parameters of [`bulk_insert_sql`] (types
    /// [`BULK_PARAM_TYPES`]). False when the chunk is done.
    fn next_row_binary(&mut self, out: &mut Vec<u8>) -> bool {
        let Some(id) = self.ids.next() else {
            return false;
        };
        let k = self.k.sample(&mut self.rng);
        for v in [id, k] {
            put_bulk_int(out, v as i64);
        }
        for tpl in [&C_TEMPLATE[..], &PAD_TEMPLATE[..]] {
            self.rng.fill_template(tpl, put_bulk_bytes(out, tpl.len()));
        }
        true
    }

    /// Rows left in the chunk.
    pub fn remaining(&self) -> u64 {
        self.ids.end.saturating_sub(self.ids.start)
    }
}

fn push_u64(out: &mut Vec<u8>, v: u64) {
    let mut digits = [0u8; 20];
    let mut n = v;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// The `LOAD DATA LOCAL INFILE` statement matching [`RowStream`]'s format.
pub fn load_data_sql(t: u32) -> String {
    format!(
        "LOAD DATA LOCAL INFILE 'qpslab-sbtest{t}' INTO TABLE sbtest{t} \
         FIELDS TERMINATED BY '\\t' ESCAPED BY '' LINES TERMINATED BY '\\n' (id, k, c, pad)"
    )
}

/// A chunk's rows as tab-separated lines, produced on demand as the server reads them.
#[derive(Debug)]
pub struct RowStream {
    gen: RowGen,
    buf: Vec<u8>,
    pos: usize,
    /// Rows handed out so far (for progress).
    pub rows: u64,
}

/// Bytes generated per refill: large enough to amortize, small enough to stay in cache.
const STREAM_BATCH: usize = 64 * 1024;

impl RowStream {
    /// A stream of `gen`'s rows.
    pub fn new(gen: RowGen) -> RowStream {
        RowStream {
            gen,
            buf: Vec::with_capacity(STREAM_BATCH + 256),
            pos: 0,
            rows: 0,
        }
    }
}

impl Read for RowStream {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            while self.buf.len() < STREAM_BATCH && self.gen.next_row(&mut self.buf, b"\t", false) {
                self.buf.push(b'\n');
                self.rows += 1;
            }
        }
        let n = dst.len().min(self.buf.len() - self.pos);
        dst[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// sysbench's bulk-insert statement size (its MySQL driver flushes at 512 KiB).
pub const INSERT_BATCH_BYTES: usize = 512 * 1024;

/// Fills `sql` with the next multi-row INSERT of at most about [`INSERT_BATCH_BYTES`]; returns
/// the number of rows in it (0 when the chunk is done).
pub fn insert_batches(gen: &mut RowGen, t: u32, sql: &mut Vec<u8>) -> u64 {
    sql.clear();
    sql.extend_from_slice(format!("INSERT INTO sbtest{t}(id, k, c, pad) VALUES").as_bytes());
    let mut rows = 0;
    while sql.len() < INSERT_BATCH_BYTES {
        let mark = sql.len();
        sql.extend_from_slice(if rows == 0 { b"(" } else { b",(" });
        if !gen.next_row(sql, b", ", true) {
            sql.truncate(mark);
            break;
        }
        sql.push(b')');
        rows += 1;
    }
    rows
}

/// The single-row INSERT that [`bulk_batch`]'s parameter rows are bound to.
pub fn bulk_insert_sql(t: u32) -> String {
    format!("INSERT INTO sbtest{t}(id, k, c, pad) VALUES (?, ?, ?, ?)")
}

/// [`bulk_insert_sql`]'s parameters: two BIGINTs, then `c` and `pad`.
pub const BULK_PARAM_TYPES: [ParamType; 4] = [
    ParamType::Int,
    ParamType::Int,
    ParamType::FixedBytes(C_TEMPLATE.len()),
    ParamType::FixedBytes(PAD_TEMPLATE.len()),
];

/// Fills `out` with up to about `max_bytes` of `gen`'s rows as COM_STMT_BULK_EXECUTE
/// parameter rows. Returns the number of rows (0: the chunk is done).
pub fn bulk_batch(gen: &mut RowGen, out: &mut Vec<u8>, max_bytes: usize) -> u64 {
    out.clear();
    let mut rows = 0;
    while out.len() < max_bytes && gen.next_row_binary(out) {
        rows += 1;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::workload::WorkloadKind;

    fn opts() -> WorkloadOptions {
        let mut o = WorkloadOptions::new(WorkloadKind::OltpReadWrite);
        o.table_size = 1000;
        o
    }

    #[test]
    fn stream_yields_every_row_in_tsv() {
        let mut s = RowStream::new(RowGen::new(&opts(), 1, 11..21));
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 10);
        for (i, l) in lines.iter().enumerate() {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "{l}");
            assert_eq!(f[0], (11 + i).to_string());
            let k: u64 = f[1].parse().unwrap();
            assert!((1..=1000).contains(&k));
            assert_eq!((f[2].len(), f[3].len()), (119, 59));
        }
        assert_eq!(s.rows, 10);
    }

    #[test]
    fn same_chunk_same_rows_in_both_encodings() {
        let mut tsv = String::new();
        RowStream::new(RowGen::new(&opts(), 2, 1..4))
            .read_to_string(&mut tsv)
            .unwrap();
        let mut sql = Vec::new();
        let mut g = RowGen::new(&opts(), 2, 1..4);
        assert_eq!(insert_batches(&mut g, 2, &mut sql), 3);
        assert_eq!(insert_batches(&mut g, 2, &mut sql), 0);
        let mut g = RowGen::new(&opts(), 2, 1..4);
        insert_batches(&mut g, 2, &mut sql);
        let sql = String::from_utf8(sql).unwrap();
        let want: Vec<String> = tsv
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                format!("({}, {}, '{}', '{}')", f[0], f[1], f[2], f[3])
            })
            .collect();
        assert_eq!(
            sql,
            format!(
                "INSERT INTO sbtest2(id, k, c, pad) VALUES{}",
                want.join(",")
            )
        );
    }

    #[test]
    fn insert_batches_stay_near_the_batch_size() {
        let mut g = RowGen::new(&opts(), 1, 1..20_001);
        let mut sql = Vec::new();
        let mut total = 0;
        loop {
            let n = insert_batches(&mut g, 1, &mut sql);
            if n == 0 {
                break;
            }
            assert!(sql.len() < INSERT_BATCH_BYTES + 256);
            total += n;
        }
        assert_eq!(total, 20_000);
    }

    #[test]
    fn bulk_rows_decode_to_the_tsv_rows() {
        let mut tsv = String::new();
        RowStream::new(RowGen::new(&opts(), 3, 5..9))
            .read_to_string(&mut tsv)
            .unwrap();
        let mut g = RowGen::new(&opts(), 3, 5..9);
        let mut out = Vec::new();
        assert_eq!(bulk_batch(&mut g, &mut out, 1 << 20), 4);
        // Decode: per parameter an indicator 0, then i64 LE or a 1-byte length and bytes.
        let mut p = &out[..];
        let mut decoded = Vec::new();
        for _ in 0..4 {
            let mut f = Vec::new();
            for ty in BULK_PARAM_TYPES {
                assert_eq!(p[0], 0, "indicator");
                p = &p[1..];
                if ty == ParamType::Int {
                    f.push(i64::from_le_bytes(p[..8].try_into().unwrap()).to_string());
                    p = &p[8..];
                } else {
                    let n = usize::from(p[0]);
                    f.push(String::from_utf8(p[1..1 + n].to_vec()).unwrap());
                    p = &p[1 + n..];
                }
            }
            decoded.push(f.join("\t"));
        }
        assert!(p.is_empty());
        assert_eq!(decoded, tsv.lines().collect::<Vec<_>>());
        // The byte budget bounds a batch; the rest follows in the next one.
        let mut g = RowGen::new(&opts(), 3, 1..1001);
        let first = bulk_batch(&mut g, &mut out, 4096);
        assert!(
            first > 1 && out.len() < 4096 + 256,
            "{first} rows, {} bytes",
            out.len()
        );
        assert_eq!(first + bulk_batch(&mut g, &mut out, 1 << 20), 1000);
        assert_eq!(bulk_batch(&mut g, &mut out, 1 << 20), 0);
    }
}
