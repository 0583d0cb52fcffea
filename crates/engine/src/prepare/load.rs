//! Loading rows from several connections: the tables' id ranges are cut into chunks that
//! loader threads take in turn; whoever loads a table's last chunk builds its `k_N` index, so
//! index builds overlap the loading of other tables.

use super::{Context, LoadMethod, PrepareConfig, PrepareError, PrepareProgress};
use crate::workload::dataset::{rows_to_load, tables_used};
use crate::workload::rows::{
    bulk_batch, bulk_insert_sql, insert_batches, load_data_sql, RowGen, RowStream, BULK_PARAM_TYPES,
};
use crate::workload::schema::{create_index_sql, table_name};
use qpslab_core::workload::WorkloadOptions;
use qpslab_core::ConnectOptions;
use qpslab_wire::Conn;
use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One unit of loading work: a range of ids of one table.
struct Chunk {
    table: u32,
    ids: std::ops::Range<u64>,
}

/// State shared by the loading threads.
struct Shared<'a> {
    w: &'a WorkloadOptions,
    method: LoadMethod,
    /// Bytes of parameter rows per bulk command.
    bulk_bytes: usize,
    chunks: Vec<Chunk>,
    next: AtomicUsize,
    /// Chunks still to load, per table (index t - 1); whoever loads the last builds the index.
    chunks_left: Vec<AtomicU32>,
    rows_done: AtomicU64,
    tables_done: AtomicU32,
    abort: AtomicBool,
}

/// Loads every table's rows with `cfg.threads` connections, reporting progress every 200 ms.
pub(super) fn load_all(
    db_opts: &ConnectOptions,
    w: &WorkloadOptions,
    cfg: &PrepareConfig,
    method: LoadMethod,
    max_packet: Option<usize>,
    started: Instant,
    progress: &mut dyn FnMut(PrepareProgress),
) -> Result<(), PrepareError> {
    let tables = tables_used(w);
    let rows = rows_to_load(w);
    let threads = cfg.threads.max(1);
    let (chunks, chunks_left) = cut_chunks(tables, rows, chunk_rows(cfg, tables, rows, threads));
    let shared = Shared {
        w,
        method,
        bulk_bytes: batch_bytes(max_packet),
        chunks,
        next: AtomicUsize::new(0),
        chunks_left,
        rows_done: AtomicU64::new(0),
        tables_done: AtomicU32::new(0),
        abort: AtomicBool::new(false),
    };
    let workers = (threads as usize).min(shared.chunks.len());
    let rows_total = rows * u64::from(tables);
    let mut report = || {
        progress(PrepareProgress {
            rows_done: shared.rows_done.load(Ordering::Relaxed),
            rows_total,
            tables_done: shared.tables_done.load(Ordering::Relaxed),
            tables_total: tables,
            elapsed: started.elapsed(),
        })
    };
    let results = run_workers(workers, &|| worker(db_opts, &shared), &mut report);
    report();
    results.into_iter().collect()
}

/// Rows per chunk: `cfg.chunk_rows` when set, else a whole table per chunk when there are
/// enough tables for every thread, else about four chunks per thread.
fn chunk_rows(cfg: &PrepareConfig, tables: u32, rows: u64, threads: u32) -> u64 {
    if cfg.chunk_rows > 0 {
        cfg.chunk_rows
    } else if tables >= threads {
        // Enough tables for every thread: one chunk per table, so each table's ids arrive in
        // ascending order from one connection and InnoDB appends to full pages instead of
        // splitting pages between interleaved id ranges.
        rows.max(1)
    } else {
        // About four chunks per thread overall keeps threads busy to the end without paying
        // a statement per few rows.
        let per = (rows * u64::from(tables)) / (u64::from(threads) * 4);
        per.clamp(10_000, 1_000_000)
    }
}

/// Cuts ids 1..=`rows` of tables 1..=`tables` into chunks of `chunk` rows, table by table;
/// also returns how many chunks each table has.
fn cut_chunks(tables: u32, rows: u64, chunk: u64) -> (Vec<Chunk>, Vec<AtomicU32>) {
    let mut chunks = Vec::new();
    let mut chunks_left = Vec::new();
    for t in 1..=tables {
        let mut n = 0;
        let mut start = 1;
        while start <= rows {
            let end = (start + chunk).min(rows + 1);
            chunks.push(Chunk {
                table: t,
                ids: start..end,
            });
            start = end;
            n += 1;
        }
        if n == 0 {
            // An empty table still needs its index: one empty chunk carries that duty.
            chunks.push(Chunk {
                table: t,
                ids: 1..1,
            });
            n = 1;
        }
        chunks_left.push(AtomicU32::new(n));
    }
    (chunks, chunks_left)
}

/// Runs `workers` threads of `job` to the end, calling `report` every 200 ms meanwhile; one
/// result per thread.
pub(super) fn run_workers(
    workers: usize,
    job: &(dyn Fn() -> Result<(), PrepareError> + Sync),
    report: &mut dyn FnMut(),
) -> Vec<Result<(), PrepareError>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(job)).collect();
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(200));
            report();
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(PrepareError::Unsupported(
                        "a loading thread panicked".into(),
                    ))
                })
            })
            .collect()
    })
}

fn worker(db_opts: &ConnectOptions, s: &Shared) -> Result<(), PrepareError> {
    let r = worker_loop(db_opts, s);
    if r.is_err() {
        s.abort.store(true, Ordering::Relaxed);
    }
    r
}

/// Bytes of parameter rows per COM_STMT_BULK_EXECUTE (at most half of `max_allowed_packet`).
/// 2 000 to 32 000 rows per command measured the same (8 × 1M rows, 8 threads, 2 cores).
const BULK_BATCH_BYTES: usize = 512 * 1024;

/// Bytes of rows per bulk command or multi-row INSERT on a server whose
/// `max_allowed_packet` is `max_packet` (when known).
pub(super) fn batch_bytes(max_packet: Option<usize>) -> usize {
    max_packet.map_or(BULK_BATCH_BYTES, |m| BULK_BATCH_BYTES.min(m / 2))
}

fn worker_loop(db_opts: &ConnectOptions, s: &Shared) -> Result<(), PrepareError> {
    let mut conn = Conn::connect(db_opts).context(|| "connecting a loading session".into())?;
    let mut sql = Vec::new();
    if s.method == LoadMethod::Bulk {
        // Parameter strings in the connection's character set (utf8mb4) would be converted
        // character by character into the column's (sysbench's tables take the database
        // default, often latin1): 17% of the server's CPU while loading. The rows are ASCII,
        // so binary strings store the same bytes without a conversion.
        conn.execute("SET NAMES binary")
            .context(|| "setting the loading session's character set".into())?;
    }
    while !s.abort.load(Ordering::Relaxed) {
        let i = s.next.fetch_add(1, Ordering::Relaxed);
        let Some(c) = s.chunks.get(i) else {
            break;
        };
        let name = table_name(c.table);
        let mut gen = RowGen::new(s.w, c.table, c.ids.clone());
        if gen.remaining() > 0 {
            match s.method {
                LoadMethod::Bulk => {
                    let stmt = conn
                        .prepare(&bulk_insert_sql(c.table))
                        .context(|| format!("preparing the insert into {name}"))?;
                    loop {
                        let n = bulk_batch(&mut gen, &mut sql, s.bulk_bytes);
                        if n == 0 {
                            break;
                        }
                        conn.bulk_execute(&stmt, &BULK_PARAM_TYPES, &sql)
                            .context(|| format!("inserting into {name} (COM_STMT_BULK_EXECUTE)"))?;
                        s.rows_done.fetch_add(n, Ordering::Relaxed);
                    }
                    conn.close_statement(&stmt)
                        .context(|| format!("closing the insert into {name}"))?;
                }
                LoadMethod::Insert => loop {
                    let n = insert_batches(&mut gen, c.table, &mut sql);
                    if n == 0 {
                        break;
                    }
                    // The generator writes only ASCII digits, quotes and punctuation.
                    let text = String::from_utf8_lossy(&sql);
                    conn.execute(&text)
                        .context(|| format!("inserting into {name}"))?;
                    s.rows_done.fetch_add(n, Ordering::Relaxed);
                },
                LoadMethod::LoadData | LoadMethod::Auto => {
                    let mut stream = Counted {
                        inner: RowStream::new(gen),
                        done: &s.rows_done,
                        seen: 0,
                    };
                    conn.load_data_local(&load_data_sql(c.table), &mut stream)
                        .context(|| format!("loading {name} with LOAD DATA LOCAL INFILE (set the server's local_infile=ON, or load with INSERTs)"))?;
                }
            }
        }
        if s.chunks_left[c.table as usize - 1].fetch_sub(1, Ordering::AcqRel) == 1 {
            if s.w.create_secondary {
                conn.execute(&create_index_sql(c.table))
                    .context(|| format!("creating index k_{} on {name}", c.table))?;
            }
            s.tables_done.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// A row stream that publishes how many rows it handed out.
struct Counted<'a> {
    inner: RowStream,
    done: &'a AtomicU64,
    seen: u64,
}

impl Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let delta = self.inner.rows - self.seen;
        if delta > 0 {
            self.done.fetch_add(delta, Ordering::Relaxed);
            self.seen = self.inner.rows;
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(chunks: &[Chunk]) -> Vec<(u32, std::ops::Range<u64>)> {
        chunks.iter().map(|c| (c.table, c.ids.clone())).collect()
    }

    #[test]
    fn chunks_cover_every_id_once_table_by_table() {
        let (chunks, left) = cut_chunks(2, 25, 10);
        assert_eq!(
            ranges(&chunks),
            [
                (1, 1..11),
                (1, 11..21),
                (1, 21..26),
                (2, 1..11),
                (2, 11..21),
                (2, 21..26)
            ]
        );
        let left: Vec<u32> = left.iter().map(|n| n.load(Ordering::Relaxed)).collect();
        assert_eq!(left, [3, 3]);
    }

    #[test]
    fn an_empty_table_gets_one_empty_chunk() {
        let (chunks, left) = cut_chunks(1, 0, 10);
        assert_eq!(ranges(&chunks), [(1, 1..1)]);
        assert_eq!(left[0].load(Ordering::Relaxed), 1);
    }

    #[test]
    fn chunk_size_follows_tables_and_threads() {
        let mut cfg = PrepareConfig::new(4);
        // As many tables as threads: a whole table per chunk.
        assert_eq!(chunk_rows(&cfg, 4, 50_000, 4), 50_000);
        // Fewer tables: about four chunks per thread, within 10k..1M rows.
        assert_eq!(chunk_rows(&cfg, 1, 800_000, 4), 50_000);
        assert_eq!(chunk_rows(&cfg, 1, 1_000, 4), 10_000);
        assert_eq!(chunk_rows(&cfg, 1, 100_000_000, 4), 1_000_000);
        cfg.chunk_rows = 123;
        assert_eq!(chunk_rows(&cfg, 1, 800_000, 4), 123);
    }
}
