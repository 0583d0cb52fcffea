//! TPC-C's five transactions (spec clause 2) as events of the engine, in stress mode (no keying
//! or think time, each on a random warehouse) or spec mode (each session a terminal with a home
//! warehouse and district, keying and think times as [`EventBuf::pause_us`]).
//!
//! An event is a list of statements built before it runs and the engine never reads a
//! result, so the data a transaction carries from one statement to the next stays on the
//! server, in user variables: New-Order reads `d_next_o_id` `INTO @o_id` with `FOR UPDATE` and
//! inserts the order as `@o_id`; Payment and Order-Status by last name pick the middle customer
//! by `c_first` in one statement (`ROW_NUMBER()` and `COUNT(*)` over the name's rows); Delivery
//! takes each district's oldest new order `INTO @no`, and a district with none leaves `@no`
//! NULL, which makes its other statements no-ops, as the spec skips such a district. Every
//! value that is not carried is drawn here: the mix (45/43/4/4/4), NURand with the run's C
//! constants, 60% by last name, remote warehouses (1% of order lines, 15% of payments), and the
//! 1% of New-Orders whose last item is unused: the generator knows it, so the event reads that
//! item and ends in ROLLBACK. Each transaction has its own BEGIN and COMMIT statements
//! (`new_order.commit`, ...), so per-statement counts give NewOrders and transactions.

pub mod spec;

use super::{Arg, Call, EventBuf, ParamKind, StatementDef, StmtClass};
use crate::rand::Rng;
use qpslab_core::tpcc::{TpccMode, TpccRun, KEYING_S, TERMINALS_PER_WAREHOUSE, THINK_MEAN_S};
use spec::{nurand, Constants};
use std::sync::Arc;

/// Items in the catalog; an id past it is the unused item of a rolled-back New-Order.
const ITEMS: u64 = 100_000;

/// The middle customer (by `c_first`) of a district with a last name, `INTO @c_id` (NULL when
/// none has it); the name is built from its three digits (the last three parameters).
macro_rules! by_name {
    () => {
        concat!(
            "SELECT (SELECT c_id FROM (SELECT c_id, ROW_NUMBER() OVER (ORDER BY c_first) AS rn, ",
            "COUNT(*) OVER () AS n FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = CONCAT(",
            "ELT(? + 1, 'BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'), ",
            "ELT(? + 1, 'BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'), ",
            "ELT(? + 1, 'BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'))",
            ") x WHERE rn = CEIL(n / 2)) INTO @c_id"
        )
    };
}

macro_rules! statements {
    ($($id:ident = $name:literal, $sql:expr;)*) => {
        /// Every statement of the five transactions, in the order of [`statements`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum S { $($id,)* }
        const DEFS: &[(&str, &str)] = &[$(($name, $sql),)*];
    };
}

statements! {
    NoBegin = "new_order.begin", "BEGIN";
    NoCustomer = "new_order.customer", "SELECT c_discount, c_last, c_credit, w_tax INTO @c_discount, @c_last, @c_credit, @w_tax FROM customer, warehouse WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?";
    NoDistrict = "new_order.district", "SELECT d_next_o_id, d_tax INTO @o_id, @d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE";
    NoDistrictUpdate = "new_order.district_update", "UPDATE district SET d_next_o_id = @o_id + 1 WHERE d_w_id = ? AND d_id = ?";
    NoOrder = "new_order.order", "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (@o_id, ?, ?, ?, NOW(), ?, ?)";
    NoNewOrder = "new_order.new_order", "INSERT INTO new_orders (no_o_id, no_d_id, no_w_id) VALUES (@o_id, ?, ?)";
    NoItem = "new_order.item", "SELECT i_price, i_name, i_data INTO @i_price, @i_name, @i_data FROM item WHERE i_id = ?";
    NoStock = "new_order.stock", "SELECT s_quantity, s_data, ELT(?, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10) INTO @s_quantity, @s_data, @s_dist FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE";
    NoStockUpdate = "new_order.stock_update", "UPDATE stock SET s_quantity = IF(s_quantity >= ? + 10, s_quantity - ?, s_quantity - ? + 91), s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_i_id = ? AND s_w_id = ?";
    NoLine = "new_order.order_line", "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) VALUES (@o_id, ?, ?, ?, ?, ?, ?, ? * @i_price, @s_dist)";
    NoCommit = "new_order.commit", "COMMIT";
    NoRollback = "new_order.rollback", "ROLLBACK";
    PayBegin = "payment.begin", "BEGIN";
    PayWarehouseUpdate = "payment.warehouse_update", "UPDATE warehouse SET w_ytd = w_ytd + ? / 100 WHERE w_id = ?";
    PayWarehouse = "payment.warehouse", "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name INTO @w_street_1, @w_street_2, @w_city, @w_state, @w_zip, @w_name FROM warehouse WHERE w_id = ?";
    PayDistrictUpdate = "payment.district_update", "UPDATE district SET d_ytd = d_ytd + ? / 100 WHERE d_w_id = ? AND d_id = ?";
    PayDistrict = "payment.district", "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name INTO @d_street_1, @d_street_2, @d_city, @d_state, @d_zip, @d_name FROM district WHERE d_w_id = ? AND d_id = ?";
    PayById = "payment.customer_id", "SET @c_id = ?";
    PayByName = "payment.customer_by_name", by_name!();
    PayCustomer = "payment.customer", "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance INTO @c_first, @c_middle, @c_last, @c_street_1, @c_street_2, @c_city, @c_state, @c_zip, @c_phone, @c_since, @c_credit, @c_credit_lim, @c_discount, @c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = @c_id FOR UPDATE";
    PayCustomerUpdate = "payment.customer_update", "UPDATE customer SET c_balance = c_balance - ? / 100, c_ytd_payment = c_ytd_payment + ? / 100, c_payment_cnt = c_payment_cnt + 1, c_data = IF(c_credit = 'BC', LEFT(CONCAT_WS(' ', c_id, c_d_id, c_w_id, ?, ?, ? / 100, c_data), 500), c_data) WHERE c_w_id = ? AND c_d_id = ? AND c_id = @c_id";
    PayHistory = "payment.history", "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (@c_id, ?, ?, ?, ?, NOW(), ? / 100, CONCAT(@w_name, '    ', @d_name))";
    PayCommit = "payment.commit", "COMMIT";
    OsBegin = "order_status.begin", "BEGIN";
    OsById = "order_status.customer_id", "SET @c_id = ?";
    OsByName = "order_status.customer_by_name", by_name!();
    OsCustomer = "order_status.customer", "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = @c_id";
    OsLastOrder = "order_status.last_order", "SELECT (SELECT MAX(o_id) FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = @c_id) INTO @o_id";
    OsOrder = "order_status.order", "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = @o_id";
    OsLines = "order_status.order_lines", "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = @o_id";
    OsCommit = "order_status.commit", "COMMIT";
    DlBegin = "delivery.begin", "BEGIN";
    DlNewOrder = "delivery.new_order", "SELECT MIN(no_o_id) INTO @no FROM new_orders WHERE no_w_id = ? AND no_d_id = ? FOR UPDATE";
    DlDelete = "delivery.delete", "DELETE FROM new_orders WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = @no";
    DlOrder = "delivery.order", "SELECT (SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = @no) INTO @c";
    DlOrderUpdate = "delivery.order_update", "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = @no";
    DlLinesUpdate = "delivery.order_line_update", "UPDATE order_line SET ol_delivery_d = NOW() WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = @no";
    DlTotal = "delivery.total", "SELECT (SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = @no) INTO @total";
    DlCustomerUpdate = "delivery.customer_update", "UPDATE customer SET c_balance = c_balance + @total, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = @c";
    DlCommit = "delivery.commit", "COMMIT";
    SlBegin = "stock_level.begin", "BEGIN";
    SlDistrict = "stock_level.district", "SELECT d_next_o_id INTO @next FROM district WHERE d_w_id = ? AND d_id = ?";
    SlCount = "stock_level.count", "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < @next AND ol_o_id >= @next - 20 AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?";
    SlCommit = "stock_level.commit", "COMMIT";
}

/// The statements, indexed by [`S`].
pub(crate) fn statements() -> Vec<StatementDef> {
    DEFS.iter()
        .map(|(name, sql)| StatementDef {
            kind: Arc::from(*name),
            table: 0,
            sql: sql.to_string(),
            placeholders: None,
            params: vec![ParamKind::Int; sql.matches('?').count()],
            class: class(sql),
            text_only: false,
        })
        .collect()
}

/// The transaction whose event statement `kind` ends (`new_order.commit` -> `new_order`).
pub fn transaction_ended_by(kind: &str) -> Option<&str> {
    kind.strip_suffix(".commit")
        .or_else(|| kind.strip_suffix(".rollback"))
}

/// Read, write or other by the first keyword.
fn class(sql: &str) -> StmtClass {
    match sql.split(' ').next() {
        Some("SELECT") => StmtClass::Read,
        Some("INSERT" | "UPDATE" | "DELETE") => StmtClass::Write,
        _ => StmtClass::Other,
    }
}

/// The five transactions, for the mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transaction {
    /// New-Order (45%).
    NewOrder,
    /// Payment (43%).
    Payment,
    /// Order-Status (4%).
    OrderStatus,
    /// Delivery (4%).
    Delivery,
    /// Stock-Level (4%).
    StockLevel,
}

/// The transactions' generator, shared by a run's sessions.
#[derive(Debug)]
pub struct TpccGen {
    warehouses: u64,
    c: Constants,
    mode: TpccMode,
    /// Keying and think times' scale.
    scale: f64,
}

/// One session as a terminal: in spec mode it has a home warehouse and district (clause
/// 2.4.1.1, 2.8.1.1) and owes the think time of its last transaction.
#[derive(Debug, Default)]
pub struct Terminal {
    /// Home warehouse and district (none: stress mode, a random warehouse per transaction).
    home: Option<(i64, i64)>,
    /// Think time still owed after the last transaction, µs.
    think_us: u64,
}

impl TpccGen {
    /// The generator of a stress-mode run over warehouses 1..=`warehouses`.
    pub fn new(warehouses: u32) -> TpccGen {
        TpccGen {
            warehouses: u64::from(warehouses.max(1)),
            c: Constants::RUN,
            mode: TpccMode::Stress,
            scale: 1.0,
        }
    }

    /// The same generator with `run`'s mode and think-time scale.
    pub fn with_run(mut self, run: &TpccRun) -> TpccGen {
        self.mode = run.mode;
        self.scale = run.think_scale;
        self
    }

    /// Session `session` as a terminal: in spec mode, terminals 0-9 are warehouse 1's
    /// districts 1-10, 10-19 warehouse 2's, and so on around the warehouses.
    pub fn terminal(&self, session: u32) -> Terminal {
        let home = (self.mode == TpccMode::Spec).then(|| {
            let per = u64::from(TERMINALS_PER_WAREHOUSE);
            let s = u64::from(session);
            ((s / per % self.warehouses + 1) as i64, (s % per + 1) as i64)
        });
        Terminal { home, think_us: 0 }
    }

    /// Draws the next transaction of the standard mix and fills `out` with it for `terminal`;
    /// in spec mode `out.pause_us` is the think time owed plus this transaction's keying time,
    /// and the terminal then owes this transaction's think time.
    pub fn fill(&self, rng: &mut Rng, out: &mut EventBuf, terminal: &mut Terminal) -> Transaction {
        let t = match rng.uniform(1, 100) {
            1..=45 => Transaction::NewOrder,
            46..=88 => Transaction::Payment,
            89..=92 => Transaction::OrderStatus,
            93..=96 => Transaction::Delivery,
            _ => Transaction::StockLevel,
        };
        self.transaction_at(t, rng, out, terminal.home);
        if self.mode == TpccMode::Spec {
            let keying = seconds_us(KEYING_S[t as usize] * self.scale);
            out.pause_us = terminal.think_us + keying;
            terminal.think_us = think_us(rng, THINK_MEAN_S[t as usize] * self.scale);
        }
        t
    }

    /// Fills `out` with transaction `t` on a random warehouse.
    pub fn transaction(&self, t: Transaction, rng: &mut Rng, out: &mut EventBuf) {
        self.transaction_at(t, rng, out, None);
    }

    /// Fills `out` with transaction `t` for a terminal at `home` (warehouse, district), or on
    /// a random warehouse.
    fn transaction_at(
        &self,
        t: Transaction,
        rng: &mut Rng,
        out: &mut EventBuf,
        home: Option<(i64, i64)>,
    ) {
        let w = match home {
            Some((w, _)) => w,
            None => rng.uniform(1, self.warehouses) as i64,
        };
        let mut e = Event { out };
        match t {
            Transaction::NewOrder => self.new_order(rng, &mut e, w),
            Transaction::Payment => self.payment(rng, &mut e, w),
            Transaction::OrderStatus => self.order_status(rng, &mut e, w),
            Transaction::Delivery => {
                let carrier = rng.uniform(1, 10) as i64;
                e.push(S::DlBegin, &[]);
                for d in 1..=10 {
                    e.push(S::DlNewOrder, &[w, d]);
                    e.push(S::DlDelete, &[w, d]);
                    e.push(S::DlOrder, &[w, d]);
                    e.push(S::DlOrderUpdate, &[carrier, w, d]);
                    e.push(S::DlLinesUpdate, &[w, d]);
                    e.push(S::DlTotal, &[w, d]);
                    e.push(S::DlCustomerUpdate, &[w, d]);
                }
                e.push(S::DlCommit, &[]);
            }
            Transaction::StockLevel => {
                // A terminal's Stock-Level is for its own district (clause 2.8.1.1).
                let d = match home {
                    Some((_, d)) => d,
                    None => rng.uniform(1, 10) as i64,
                };
                let threshold = rng.uniform(10, 20) as i64;
                e.push(S::SlBegin, &[]);
                e.push(S::SlDistrict, &[w, d]);
                e.push(S::SlCount, &[w, d, w, threshold]);
                e.push(S::SlCommit, &[]);
            }
        }
    }

    /// Another warehouse than `w` (or `w` itself when it is the only one).
    fn other(&self, rng: &mut Rng, w: i64) -> i64 {
        if self.warehouses == 1 {
            return w;
        }
        let o = rng.uniform(1, self.warehouses - 1) as i64;
        if o >= w {
            o + 1
        } else {
            o
        }
    }

    fn customer_id(&self, rng: &mut Rng) -> i64 {
        nurand(rng, 1023, 1, 3000, self.c.c_id) as i64
    }

    fn new_order(&self, rng: &mut Rng, e: &mut Event<'_>, w: i64) {
        let d = rng.uniform(1, 10) as i64;
        let c = self.customer_id(rng);
        let lines = rng.uniform(5, 15);
        let rollback = rng.uniform(1, 100) == 1;
        let items: Vec<(i64, i64, i64)> = (1..=lines)
            .map(|n| {
                let item = if rollback && n == lines {
                    ITEMS as i64 + 1
                } else {
                    nurand(rng, 8191, 1, ITEMS, self.c.ol_i_id) as i64
                };
                let supply = if rng.uniform(1, 100) == 1 {
                    self.other(rng, w)
                } else {
                    w
                };
                (item, supply, rng.uniform(1, 10) as i64)
            })
            .collect();
        let all_local = i64::from(items.iter().all(|&(_, s, _)| s == w));
        e.push(S::NoBegin, &[]);
        e.push(S::NoCustomer, &[w, d, c]);
        e.push(S::NoDistrict, &[w, d]);
        e.push(S::NoDistrictUpdate, &[w, d]);
        e.push(S::NoOrder, &[d, w, c, lines as i64, all_local]);
        e.push(S::NoNewOrder, &[d, w]);
        for (n, &(item, supply, q)) in (1..).zip(&items) {
            e.push(S::NoItem, &[item]);
            if item > ITEMS as i64 {
                // The unused item: the spec's 1% of New-Orders that roll back.
                e.push(S::NoRollback, &[]);
                return;
            }
            let remote = i64::from(supply != w);
            e.push(S::NoStock, &[d, item, supply]);
            e.push(S::NoStockUpdate, &[q, q, q, q, remote, item, supply]);
            e.push(S::NoLine, &[d, w, n, item, supply, q, q]);
        }
        e.push(S::NoCommit, &[]);
    }

    /// The customer of a Payment or Order-Status: 60% by last name, else by id.
    fn customer(&self, rng: &mut Rng, e: &mut Event<'_>, by: (S, S), w: i64, d: i64) {
        if rng.uniform(1, 100) <= 60 {
            let n = nurand(rng, 255, 0, 999, self.c.c_last) as i64;
            e.push(by.1, &[w, d, n / 100, n / 10 % 10, n % 10]);
        } else {
            let c = self.customer_id(rng);
            e.push(by.0, &[c]);
        }
    }

    fn payment(&self, rng: &mut Rng, e: &mut Event<'_>, w: i64) {
        let d = rng.uniform(1, 10) as i64;
        let (cw, cd) = if rng.uniform(1, 100) <= 85 {
            (w, d)
        } else {
            (self.other(rng, w), rng.uniform(1, 10) as i64)
        };
        let cents = rng.uniform(100, 500_000) as i64;
        e.push(S::PayBegin, &[]);
        e.push(S::PayWarehouseUpdate, &[cents, w]);
        e.push(S::PayWarehouse, &[w]);
        e.push(S::PayDistrictUpdate, &[cents, w, d]);
        e.push(S::PayDistrict, &[w, d]);
        self.customer(rng, e, (S::PayById, S::PayByName), cw, cd);
        e.push(S::PayCustomer, &[cw, cd]);
        e.push(S::PayCustomerUpdate, &[cents, cents, d, w, cents, cw, cd]);
        e.push(S::PayHistory, &[cd, cw, d, w, cents]);
        e.push(S::PayCommit, &[]);
    }

    fn order_status(&self, rng: &mut Rng, e: &mut Event<'_>, w: i64) {
        let d = rng.uniform(1, 10) as i64;
        e.push(S::OsBegin, &[]);
        self.customer(rng, e, (S::OsById, S::OsByName), w, d);
        e.push(S::OsCustomer, &[w, d]);
        e.push(S::OsLastOrder, &[w, d]);
        e.push(S::OsOrder, &[w, d]);
        e.push(S::OsLines, &[w, d]);
        e.push(S::OsCommit, &[]);
    }
}

/// `s` seconds in µs.
fn seconds_us(s: f64) -> u64 {
    (s * 1e6).round() as u64
}

/// A think time with mean `mean_s` seconds, µs: negative exponential, truncated at 10 times
/// the mean (clause 5.2.5.4).
fn think_us(rng: &mut Rng, mean_s: f64) -> u64 {
    // 1 - u lies in (0, 1], so the logarithm is finite.
    let t = -(1.0 - rng.next_f64()).ln() * mean_s;
    seconds_us(t.min(10.0 * mean_s))
}

/// Appends calls to an event.
struct Event<'a> {
    out: &'a mut EventBuf,
}

impl Event<'_> {
    fn push(&mut self, s: S, args: &[i64]) {
        let start = self.out.args.len() as u32;
        self.out.args.extend(args.iter().map(|&v| Arg::Int(v)));
        debug_assert_eq!(args.len(), DEFS[s as usize].1.matches('?').count(), "{s:?}");
        self.out.calls.push(Call {
            stmt: s as u32,
            args: start..self.out.args.len() as u32,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_binds_each_placeholder_and_the_mix_is_the_standard_one() {
        let defs = statements();
        let g = TpccGen::new(4);
        let mut rng = Rng::new(1);
        let mut ev = EventBuf::default();
        let mut seen = [0u32; 5];
        let mut rollbacks = 0;
        for _ in 0..20_000 {
            ev.clear();
            let t = g.fill(&mut rng, &mut ev, &mut Terminal::default());
            assert_eq!(ev.pause_us, 0, "stress mode has no pause");
            seen[t as usize] += 1;
            for c in &ev.calls {
                assert_eq!(
                    (c.args.end - c.args.start) as usize,
                    defs[c.stmt as usize].params.len(),
                    "{}",
                    defs[c.stmt as usize].kind
                );
            }
            let last = &defs[ev.calls.last().unwrap().stmt as usize];
            assert!(last.sql == "COMMIT" || last.sql == "ROLLBACK");
            rollbacks += u32::from(last.sql == "ROLLBACK");
        }
        let pct = |n: u32| f64::from(n) / 200.0;
        assert!((43.0..47.0).contains(&pct(seen[0])), "{seen:?}");
        assert!((41.0..45.0).contains(&pct(seen[1])), "{seen:?}");
        for n in &seen[2..] {
            assert!((3.0..5.0).contains(&pct(*n)), "{seen:?}");
        }
        // 1% of New-Orders roll back.
        let share = f64::from(rollbacks) / f64::from(seen[0]) * 100.0;
        assert!((0.5..1.6).contains(&share), "{share}");
        assert_eq!(class("SELECT 1"), StmtClass::Read);
        assert_eq!(
            transaction_ended_by("new_order.rollback"),
            Some("new_order")
        );
        assert_eq!(transaction_ended_by("payment.commit"), Some("payment"));
        assert_eq!(transaction_ended_by("payment.begin"), None);
        assert_eq!(class("SET @c_id = ?"), StmtClass::Other);
    }

    #[test]
    fn spec_mode_terminals_have_a_home_and_pause_for_keying_and_think_time() {
        let run = TpccRun {
            mode: TpccMode::Spec,
            think_scale: 0.5,
            check: false,
        };
        let g = TpccGen::new(3).with_run(&run);
        assert_eq!(g.terminal(0).home, Some((1, 1)));
        assert_eq!(g.terminal(19).home, Some((2, 10)));
        assert_eq!(g.terminal(30).home, Some((1, 1)), "around the warehouses");
        let defs = statements();
        let mut term = g.terminal(13);
        let (mut rng, mut ev) = (Rng::new(3), EventBuf::default());
        let mut owed = 0;
        let (mut thinks, mut n) = (0.0, 0.0);
        for _ in 0..20_000 {
            ev.clear();
            let t = g.fill(&mut rng, &mut ev, &mut term);
            let keying = seconds_us(KEYING_S[t as usize] * 0.5);
            assert_eq!(ev.pause_us, owed + keying, "{t:?}");
            owed = term.think_us;
            let mean = THINK_MEAN_S[t as usize] * 0.5;
            assert!(owed as f64 <= 10.0 * mean * 1e6 + 1.0, "truncated at 10x");
            if t == Transaction::Payment {
                thinks += owed as f64 / 1e6;
                n += 1.0;
            }
            // Every transaction is on the terminal's warehouse 2 (Payment's customer and a
            // New-Order's supply warehouse may be remote); Stock-Level on its district 4.
            let first = &ev.calls[1];
            let args = ev.call_args(first);
            if defs[first.stmt as usize].kind.starts_with("stock_level") {
                assert_eq!((&args[0], &args[1]), (&Arg::Int(2), &Arg::Int(4)));
            }
        }
        // Payment's think time: mean 12 s x 0.5 (a little less, truncated at 10x).
        let mean = thinks / n;
        assert!((5.5..6.3).contains(&mean), "{mean}");
    }
}
