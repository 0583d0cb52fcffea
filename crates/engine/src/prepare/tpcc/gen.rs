//! The TPC-C initial population (spec clause 4.3.3.1), generated per warehouse from a seed so
//! that any loader, on any machine, produces the same rows for the same warehouse: random
//! a-strings and n-strings of the spec's lengths, NURand with the load's C constant for
//! `c_last` (syllables of 3 digits), 10% of item and stock data holding "ORIGINAL", 10% of
//! customers with bad credit, orders with a random permutation of customers, 5-15 lines each,
//! the last 900 of each district undelivered and in NEW-ORDER.

use super::batch::Batch;
use crate::rand::Rng;
use crate::workload::tpcc::spec::{last_name, nurand, stream, Constants};

/// Rows of ITEM, and of STOCK per warehouse.
pub const ITEMS: u32 = 100_000;
/// Districts per warehouse.
pub const DISTRICTS: u32 = 10;
/// Customers per district, and orders per district.
pub const CUSTOMERS: u32 = 3_000;
/// The first undelivered order of a district (orders 2101..=3000 are in NEW-ORDER).
pub const FIRST_NEW_ORDER: u32 = 2_101;
/// Rows of NEW-ORDER per district.
pub const NEW_ORDERS: u32 = CUSTOMERS - FIRST_NEW_ORDER + 1;

const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// One warehouse's (or ITEM's) generator.
#[derive(Debug)]
pub struct Gen {
    rng: Rng,
    /// The load's time as the server wrote it (`YYYY-MM-DD HH:MM:SS`).
    now: Vec<u8>,
    c: Constants,
    name: Vec<u8>,
}

impl Gen {
    /// The generator of `part` of `warehouse` (0: ITEM) for a dataset with `seed`, loaded at
    /// `now`.
    pub fn new(seed: u64, warehouse: u32, part: u64, now: &str) -> Gen {
        Gen {
            rng: Rng::new(stream(seed, warehouse, part)),
            now: now.as_bytes().to_vec(),
            c: Constants::LOAD,
            name: Vec::with_capacity(16),
        }
    }

    fn num(&mut self, lo: u64, hi: u64) -> i64 {
        self.rng.uniform(lo, hi) as i64
    }

    /// A random a-string of `lo..=hi` letters and digits.
    fn astring(&mut self, b: &mut Batch, lo: u64, hi: u64) {
        let len = self.rng.uniform(lo, hi) as usize;
        fill_alnum(&mut self.rng, b.fill(len));
    }

    /// A random n-string of `len` digits.
    fn nstring(&mut self, b: &mut Batch, len: usize) {
        for c in b.fill(len) {
            *c = b'0' + self.rng.uniform(0, 9) as u8;
        }
    }

    /// I_DATA and S_DATA: 26..=50 characters, 10% with "ORIGINAL" at a random place.
    fn data(&mut self, b: &mut Batch) {
        let len = self.rng.uniform(26, 50) as usize;
        let original = self.rng.uniform(1, 10) == 1;
        let at = self.rng.uniform(0, (len - 8) as u64) as usize;
        let out = b.fill(len);
        fill_alnum(&mut self.rng, out);
        if original {
            out[at..at + 8].copy_from_slice(b"ORIGINAL");
        }
    }

    /// Street 1, street 2, city, state and zip (4 random digits then 11111).
    fn address(&mut self, b: &mut Batch) {
        for _ in 0..3 {
            self.astring(b, 10, 20);
        }
        for c in b.fill(2) {
            *c = b'A' + self.rng.uniform(0, 25) as u8;
        }
        let zip = b.fill(9);
        for c in &mut zip[..4] {
            *c = b'0' + self.rng.uniform(0, 9) as u8;
        }
        zip[4..].copy_from_slice(b"11111");
    }

    /// Row `i` of ITEM.
    pub fn item(&mut self, b: &mut Batch, i: u32) {
        b.row();
        b.int(i.into());
        let im = self.num(1, 10_000);
        b.int(im);
        self.astring(b, 14, 24);
        let price = self.num(100, 10_000);
        b.decimal(price, 2);
        self.data(b);
        b.end();
    }

    /// The row of warehouse `w`.
    pub fn warehouse(&mut self, b: &mut Batch, w: u32) {
        b.row();
        b.int(w.into());
        self.astring(b, 6, 10);
        self.address(b);
        let tax = self.num(0, 2000);
        b.decimal(tax, 4);
        b.decimal(30_000_000, 2);
        b.end();
    }

    /// Row `i` of warehouse `w`'s STOCK.
    pub fn stock(&mut self, b: &mut Batch, w: u32, i: u32) {
        b.row();
        b.int(i.into());
        b.int(w.into());
        let q = self.num(10, 100);
        b.int(q);
        for _ in 0..10 {
            self.astring(b, 24, 24);
        }
        for _ in 0..3 {
            b.int(0);
        }
        self.data(b);
        b.end();
    }

    /// District `d` of warehouse `w`.
    pub fn district(&mut self, b: &mut Batch, w: u32, d: u32) {
        b.row();
        b.int(d.into());
        b.int(w.into());
        self.astring(b, 6, 10);
        self.address(b);
        let tax = self.num(0, 2000);
        b.decimal(tax, 4);
        b.decimal(3_000_000, 2);
        b.int(i64::from(CUSTOMERS) + 1);
        b.end();
    }

    /// Customer `c` of district `d` of warehouse `w`.
    pub fn customer(&mut self, b: &mut Batch, w: u32, d: u32, c: u32) {
        b.row();
        for v in [c, d, w] {
            b.int(v.into());
        }
        self.astring(b, 8, 16);
        b.text(b"OE");
        let n = if c <= 1000 {
            u64::from(c - 1)
        } else {
            nurand(&mut self.rng, 255, 0, 999, self.c.c_last)
        };
        self.name.clear();
        last_name(n, &mut self.name);
        b.text(&self.name);
        self.address(b);
        self.nstring(b, 16);
        b.text(&self.now);
        let bad = self.rng.uniform(1, 10) == 1;
        b.text(if bad { b"BC" } else { b"GC" });
        b.decimal(5_000_000, 2);
        let discount = self.num(0, 5000);
        b.decimal(discount, 4);
        b.decimal(-1000, 2);
        b.decimal(1000, 2);
        b.int(1);
        b.int(0);
        self.astring(b, 300, 500);
        b.end();
    }

    /// The HISTORY row of customer `c` of district `d` of warehouse `w`.
    pub fn history(&mut self, b: &mut Batch, w: u32, d: u32, c: u32) {
        b.row();
        for v in [c, d, w, d, w] {
            b.int(v.into());
        }
        b.text(&self.now);
        b.decimal(1000, 2);
        self.astring(b, 12, 24);
        b.end();
    }

    /// A random permutation of the customer ids 1..=3000 (the orders' `o_c_id`).
    pub fn customer_permutation(&mut self) -> Vec<u32> {
        let mut p: Vec<u32> = (1..=CUSTOMERS).collect();
        for i in (1..p.len()).rev() {
            let j = self.rng.uniform(0, i as u64) as usize;
            p.swap(i, j);
        }
        p
    }

    /// Order `o` of district `d` of warehouse `w` by customer `c`, its lines (5..=15, in
    /// `lines`) and, for an undelivered order, its NEW-ORDER row. Returns the line count.
    pub fn order(&mut self, out: &mut OrderBatches<'_>, w: u32, d: u32, o: u32, c: u32) -> u32 {
        let delivered = o < FIRST_NEW_ORDER;
        let count = self.rng.uniform(5, 15) as u32;
        let b = &mut *out.orders;
        b.row();
        for v in [o, d, w, c] {
            b.int(v.into());
        }
        b.text(&self.now);
        if delivered {
            let carrier = self.num(1, 10);
            b.int(carrier);
        } else {
            b.null();
        }
        b.int(count.into());
        b.int(1);
        b.end();
        for n in 1..=count {
            let b = &mut *out.lines;
            b.row();
            for v in [o, d, w, n] {
                b.int(v.into());
            }
            let item = self.num(1, ITEMS.into());
            b.int(item);
            b.int(w.into());
            if delivered {
                b.text(&self.now);
            } else {
                b.null();
            }
            b.int(5);
            let amount = if delivered { 0 } else { self.num(1, 999_999) };
            b.decimal(amount, 2);
            self.astring(b, 24, 24);
            b.end();
        }
        if !delivered {
            let b = &mut *out.new_orders;
            b.row();
            for v in [o, d, w] {
                b.int(v.into());
            }
            b.end();
        }
        count
    }
}

/// The batches an order's rows go to.
#[derive(Debug)]
pub struct OrderBatches<'a> {
    /// ORDERS.
    pub orders: &'a mut Batch,
    /// ORDER-LINE.
    pub lines: &'a mut Batch,
    /// NEW-ORDER.
    pub new_orders: &'a mut Batch,
}

/// Fills `out` with random letters and digits, ten per 64-bit draw (62^10 < 2^64; the slight
/// bias is irrelevant for filler text).
fn fill_alnum(rng: &mut Rng, out: &mut [u8]) {
    for chunk in out.chunks_mut(10) {
        let mut x = rng.next_u64();
        for c in chunk {
            *c = ALNUM[(x % 62) as usize];
            x /= 62;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::batch::Encoding;
    use super::*;

    #[test]
    fn the_same_warehouse_gives_the_same_rows() {
        let rows = |seed| {
            let mut g = Gen::new(seed, 3, 1, "2026-01-01 00:00:00");
            let mut b = Batch::new("customer", Encoding::Text, 1 << 20);
            for c in 998..1003 {
                g.customer(&mut b, 3, 1, c);
            }
            String::from_utf8_lossy(b.bytes()).into_owned()
        };
        assert_eq!(rows(1), rows(1));
        assert_ne!(rows(1), rows(2));
        assert!(rows(1).contains("'OE','EINGEINGEING'"), "{}", rows(1));
    }

    #[test]
    fn a_tenth_of_items_are_original_and_orders_follow_the_spec() {
        let mut g = Gen::new(0, 0, 0, "2026-01-01 00:00:00");
        let mut b = Batch::new("item", Encoding::Text, 1 << 30);
        for i in 1..=10_000 {
            g.item(&mut b, i);
        }
        let n = String::from_utf8_lossy(b.bytes())
            .matches("ORIGINAL")
            .count();
        assert!((800..1200).contains(&n), "{n}");
        let (mut o, mut l, mut no) = (
            Batch::new("orders", Encoding::Text, 1 << 30),
            Batch::new("order_line", Encoding::Text, 1 << 30),
            Batch::new("new_orders", Encoding::Text, 1 << 30),
        );
        let mut out = OrderBatches {
            orders: &mut o,
            lines: &mut l,
            new_orders: &mut no,
        };
        let perm = g.customer_permutation();
        let mut sorted = perm.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..=CUSTOMERS).collect::<Vec<_>>());
        let mut lines = 0;
        for (i, c) in perm.iter().enumerate() {
            let n = g.order(&mut out, 1, 1, i as u32 + 1, *c);
            assert!((5..=15).contains(&n));
            lines += u64::from(n);
        }
        assert_eq!(l.rows(), lines);
        assert_eq!(no.rows(), u64::from(NEW_ORDERS));
    }
}
