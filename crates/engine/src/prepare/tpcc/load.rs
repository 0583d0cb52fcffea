//! Loading TPC-C from several connections: each loader takes the next unit (ITEM, or one whole
//! warehouse), deletes whatever rows an interrupted load left of it, streams its rows table by
//! table as batches (bulk execute or multi-row INSERT, see [`Batch`]), and sends its last
//! batches with its catalog row in one transaction, so a unit is either recorded complete with
//! all its rows or reloaded from scratch by the next prepare.

use super::super::load::run_workers;
use super::super::{Context, PrepareError, PrepareProgress};
use super::batch::{Batch, Encoding};
use super::catalog;
use super::gen::{Gen, OrderBatches, CUSTOMERS, DISTRICTS, ITEMS, NEW_ORDERS};
use super::schema::{insert_sql, warehouse_column, TABLES};
use qpslab_core::ConnectOptions;
use qpslab_wire::{Conn, Statement};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// One unit of loading work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// The ITEM table (recorded as warehouse 0).
    Items,
    /// Every row of one warehouse, in every table but ITEM.
    Warehouse(u32),
}

impl Unit {
    /// Its number in the catalog.
    pub fn id(self) -> u32 {
        match self {
            Unit::Items => 0,
            Unit::Warehouse(w) => w,
        }
    }

    /// Rows it loads (ORDER-LINE at its expected 10 lines per order).
    pub fn rows_expected(self) -> u64 {
        match self {
            Unit::Items => ITEMS.into(),
            Unit::Warehouse(_) => {
                let d = u64::from(DISTRICTS);
                let c = u64::from(CUSTOMERS);
                1 + u64::from(ITEMS) + d * (1 + 3 * c + 10 * c + u64::from(NEW_ORDERS))
            }
        }
    }
}

/// What the loaders share.
pub struct LoadSpec<'a> {
    /// Connection options with the database selected.
    pub db_opts: &'a ConnectOptions,
    /// The dataset's seed.
    pub seed: u64,
    /// Whether the tables have foreign keys (recorded with each unit).
    pub foreign_keys: bool,
    /// How rows are sent.
    pub encoding: Encoding,
    /// Bytes per batch.
    pub batch_bytes: usize,
    /// The load's time, as the server wrote it.
    pub now: String,
    /// Whether the units may hold rows of an interrupted load (then they are deleted first).
    pub resumed: bool,
    /// The units to load.
    pub units: Vec<Unit>,
}

struct Shared<'a> {
    spec: &'a LoadSpec<'a>,
    next: AtomicUsize,
    rows_done: AtomicU64,
    units_done: AtomicU32,
    abort: AtomicBool,
}

/// Loads every unit of `spec` with `threads` connections, reporting progress every 200 ms.
pub fn load_units(
    spec: &LoadSpec<'_>,
    threads: u32,
    started: Instant,
    progress: &mut dyn FnMut(PrepareProgress),
) -> Result<u64, PrepareError> {
    let shared = Shared {
        spec,
        next: AtomicUsize::new(0),
        rows_done: AtomicU64::new(0),
        units_done: AtomicU32::new(0),
        abort: AtomicBool::new(false),
    };
    let rows_total: u64 = spec.units.iter().map(|u| u.rows_expected()).sum();
    let units_total = spec.units.len() as u32;
    let mut report = || {
        let done = shared.rows_done.load(Ordering::Relaxed);
        progress(PrepareProgress {
            rows_done: done,
            rows_total: rows_total.max(done),
            tables_done: shared.units_done.load(Ordering::Relaxed),
            tables_total: units_total,
            elapsed: started.elapsed(),
        })
    };
    let workers = (threads.max(1) as usize).min(spec.units.len());
    let job = || {
        let r = worker(&shared);
        if r.is_err() {
            shared.abort.store(true, Ordering::Relaxed);
        }
        r
    };
    let results = run_workers(workers, &job, &mut report);
    report();
    results.into_iter().collect::<Result<(), _>>()?;
    Ok(shared.rows_done.load(Ordering::Relaxed))
}

fn worker(s: &Shared<'_>) -> Result<(), PrepareError> {
    let mut conn =
        Conn::connect(s.spec.db_opts).context(|| "connecting a loading session".into())?;
    // The generated strings are ASCII: sent as binary they are stored without a conversion
    // per character (see the sysbench loader). Foreign keys, when the tables have them, are
    // satisfied once every unit is loaded; a warehouse's own row comes last.
    conn.execute("SET NAMES binary, foreign_key_checks = 0")
        .context(|| "setting up a loading session".into())?;
    while !s.abort.load(Ordering::Relaxed) {
        let Some(&unit) = s.spec.units.get(s.next.fetch_add(1, Ordering::Relaxed)) else {
            break;
        };
        let mut l = Loader {
            conn: &mut conn,
            spec: s.spec,
            done: &s.rows_done,
            stmts: HashMap::new(),
        };
        l.unit(unit)?;
        l.close()?;
        s.units_done.fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// One connection loading one unit.
struct Loader<'a> {
    conn: &'a mut Conn,
    spec: &'a LoadSpec<'a>,
    done: &'a AtomicU64,
    stmts: HashMap<&'static str, Statement>,
}

impl Loader<'_> {
    fn batch(&self, table: &'static str) -> Batch {
        Batch::new(table, self.spec.encoding, self.spec.batch_bytes)
    }

    /// Sends `b`'s rows if it is full.
    fn maybe(&mut self, b: &mut Batch) -> Result<(), PrepareError> {
        if b.full() {
            self.send(b)?;
        }
        Ok(())
    }

    /// Sends `b`'s rows (if any) and empties it.
    fn send(&mut self, b: &mut Batch) -> Result<(), PrepareError> {
        if b.rows() == 0 {
            return Ok(());
        }
        let table = b.table();
        match self.spec.encoding {
            Encoding::Bulk => {
                if !self.stmts.contains_key(table) {
                    let st = self
                        .conn
                        .prepare(&insert_sql(table))
                        .context(|| format!("preparing the insert into {table}"))?;
                    self.stmts.insert(table, st);
                }
                let st = &self.stmts[table];
                self.conn
                    .bulk_execute(st, &b.param_types(), b.bytes())
                    .context(|| format!("inserting into {table} (COM_STMT_BULK_EXECUTE)"))?;
            }
            Encoding::Text => {
                // The batch holds only ASCII (see `Batch::fill`).
                let text = String::from_utf8_lossy(b.bytes());
                self.conn
                    .execute(&text)
                    .context(|| format!("inserting into {table}"))?;
            }
        }
        self.done.fetch_add(b.rows(), Ordering::Relaxed);
        b.clear();
        Ok(())
    }

    fn close(self) -> Result<(), PrepareError> {
        for (table, st) in self.stmts {
            self.conn
                .close_statement(&st)
                .context(|| format!("closing the insert into {table}"))?;
        }
        Ok(())
    }

    fn sql(&mut self, sql: &str, what: impl FnOnce() -> String) -> Result<(), PrepareError> {
        self.conn.execute(sql).context(what)?;
        Ok(())
    }

    /// Loads `unit` after removing what an interrupted load left of it.
    fn unit(&mut self, unit: Unit) -> Result<(), PrepareError> {
        if self.spec.resumed {
            self.clear(unit)?;
        }
        match unit {
            Unit::Items => self.items(),
            Unit::Warehouse(w) => self.warehouse(w),
        }
    }

    fn clear(&mut self, unit: Unit) -> Result<(), PrepareError> {
        let Unit::Warehouse(w) = unit else {
            return self.sql("DELETE FROM item", || {
                "removing a partial item table".into()
            });
        };
        for t in TABLES {
            if let Some(col) = warehouse_column(t) {
                self.sql(&format!("DELETE FROM {t} WHERE {col} = {w}"), || {
                    format!("removing the partial rows of warehouse {w} from {t}")
                })?;
            }
        }
        Ok(())
    }

    /// Sends the last batches and the unit's catalog row in one transaction.
    fn finish(
        &mut self,
        unit: Unit,
        last: &mut [Batch],
        order_lines: u64,
    ) -> Result<(), PrepareError> {
        let id = unit.id();
        self.sql("BEGIN", || format!("finishing unit {id}"))?;
        for b in last {
            self.send(b)?;
        }
        let s = self.spec;
        self.sql(
            &catalog::complete_sql(id, s.seed, s.foreign_keys, order_lines),
            || format!("recording warehouse {id} in {}", catalog::CATALOG),
        )?;
        self.sql("COMMIT", || format!("committing warehouse {id}"))
    }

    fn items(&mut self) -> Result<(), PrepareError> {
        let mut g = Gen::new(self.spec.seed, 0, 0, &self.spec.now);
        let mut b = self.batch("item");
        for i in 1..=ITEMS {
            g.item(&mut b, i);
            self.maybe(&mut b)?;
        }
        self.finish(Unit::Items, &mut [b], 0)
    }

    fn warehouse(&mut self, w: u32) -> Result<(), PrepareError> {
        let (seed, now) = (self.spec.seed, self.spec.now.clone());
        let mut stock = self.batch("stock");
        let mut g = Gen::new(seed, w, 1, &now);
        for i in 1..=ITEMS {
            g.stock(&mut stock, w, i);
            self.maybe(&mut stock)?;
        }
        self.send(&mut stock)?;
        let [mut dist, mut cust, mut hist, mut ord, mut lines, mut no] = [
            "district",
            "customer",
            "history",
            "orders",
            "order_line",
            "new_orders",
        ]
        .map(|t| self.batch(t));
        let mut order_lines = 0u64;
        for d in 1..=DISTRICTS {
            let mut g = Gen::new(seed, w, 10 + u64::from(d), &now);
            g.district(&mut dist, w, d);
            for c in 1..=CUSTOMERS {
                g.customer(&mut cust, w, d, c);
                self.maybe(&mut cust)?;
                g.history(&mut hist, w, d, c);
                self.maybe(&mut hist)?;
            }
            for (o, c) in (1..).zip(g.customer_permutation()) {
                let mut out = OrderBatches {
                    orders: &mut ord,
                    lines: &mut lines,
                    new_orders: &mut no,
                };
                order_lines += u64::from(g.order(&mut out, w, d, o, c));
                for b in [&mut ord, &mut lines, &mut no] {
                    self.maybe(b)?;
                }
            }
        }
        let mut wh = self.batch("warehouse");
        Gen::new(seed, w, 0, &now).warehouse(&mut wh, w);
        self.finish(
            Unit::Warehouse(w),
            &mut [dist, cust, hist, ord, lines, no, wh],
            order_lines,
        )
    }
}
