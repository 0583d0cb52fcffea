//! TPC-C's consistency conditions (spec clause 3.3.2). Conditions 1 to 10 and 12 hold after a
//! load and during and after any run of the transactions; condition 11 holds after a load
//! until the first Delivery, so it is judged only while no Delivery has run since the load
//! (the load's oldest undelivered order, 2101, still has no carrier in every district) and
//! reported not applicable otherwise. Each condition is one query returning the warehouses or
//! districts breaking it, with the figures that disagree (for the order- and customer-level
//! conditions, how many orders or customers of the district and the first one's figures).
//! Every query reads a table once in key order and reaches the rows it relates through a
//! primary key or the orders and history indexes, so a check costs a few scans of the
//! tables, not a join of two whole tables.

use super::super::{Context, PrepareError};
use qpslab_core::ConsistencyCondition;
use qpslab_wire::Conn;

/// At most this many offenders are listed per condition (the count says how many more).
const LISTED: usize = 10;

/// Condition 11, which holds only until the first Delivery after the load.
const AFTER_LOAD: u32 = 11;

/// The conditions: number, rule, and the query returning one row per offender whose first
/// column is the offender's description. Condition 11's rows have a second column, 1 for a
/// district where a Delivery has run since the load (its rows are then not offenders).
const CONDITIONS: [(u32, &str, &str); 12] = [
    (
        1,
        "W_YTD = sum(D_YTD)",
        "SELECT CONCAT('warehouse ', w_id, ': w_ytd ', w_ytd, ', sum(d_ytd) ', IFNULL(s, 'none'))
         FROM warehouse LEFT JOIN (SELECT d_w_id, SUM(d_ytd) AS s FROM district GROUP BY d_w_id) d
           ON d.d_w_id = w_id
         WHERE NOT (w_ytd <=> s) ORDER BY w_id",
    ),
    (
        2,
        "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
        "SELECT CONCAT('warehouse ', d_w_id, ' district ', d_id, ': d_next_o_id - 1 = ',
                      d_next_o_id - 1, ', max(o_id) ', IFNULL(mo, 'none'), ', max(no_o_id) ',
                      IFNULL(mno, 'none'))
         FROM (SELECT d_w_id, d_id, d_next_o_id,
                 (SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS mo,
                 (SELECT MAX(no_o_id) FROM new_orders WHERE no_w_id = d_w_id AND no_d_id = d_id) AS mno
               FROM district) x
         -- A district whose orders are all delivered has no max(NO_O_ID) to compare.
         WHERE NOT (d_next_o_id - 1 <=> mo AND (mno IS NULL OR mno = mo))
         ORDER BY d_w_id, d_id",
    ),
    (
        3,
        "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER",
        "SELECT CONCAT('warehouse ', no_w_id, ' district ', no_d_id, ': max - min + 1 = ',
                      MAX(no_o_id) - MIN(no_o_id) + 1, ', rows ', COUNT(*))
         FROM new_orders GROUP BY no_w_id, no_d_id
         HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*)
         ORDER BY no_w_id, no_d_id",
    ),
    (
        4,
        "sum(O_OL_CNT) = rows in ORDER-LINE",
        "SELECT CONCAT('warehouse ', o_w_id, ' district ', o_d_id, ': sum(o_ol_cnt) ', s,
                      ', order lines ', IFNULL(n, 0))
         FROM (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) AS s FROM orders GROUP BY o_w_id, o_d_id) o
         LEFT JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) AS n FROM order_line
                    GROUP BY ol_w_id, ol_d_id) l ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id
         WHERE NOT (s <=> n)
         ORDER BY o_w_id, o_d_id",
    ),
    (
        5,
        "O_CARRIER_ID is null iff the order has a NEW-ORDER row",
        "SELECT CONCAT('warehouse ', o_w_id, ' district ', o_d_id, ': ',
                      SUM(o_carrier_id IS NULL), ' order(s) without a carrier nor a NEW-ORDER row, ',
                      SUM(o_carrier_id IS NOT NULL), ' with a carrier and a NEW-ORDER row, first o_id ',
                      MIN(o_id))
         FROM orders LEFT JOIN new_orders
           ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
         WHERE (o_carrier_id IS NULL) = (no_o_id IS NULL)
         GROUP BY o_w_id, o_d_id ORDER BY o_w_id, o_d_id",
    ),
    (
        6,
        "O_OL_CNT = rows of the order in ORDER-LINE",
        "SELECT CONCAT('warehouse ', o_w_id, ' district ', o_d_id, ': ', COUNT(*),
                      ' order(s), first ', SUBSTRING_INDEX(GROUP_CONCAT(
                        CONCAT('o_id ', o_id, ': o_ol_cnt ', o_ol_cnt, ', order lines ', n)
                        ORDER BY o_id SEPARATOR '|'), '|', 1))
         FROM (SELECT o_w_id, o_d_id, o_id, o_ol_cnt,
                 (SELECT COUNT(*) FROM order_line
                  WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id) AS n
               FROM orders) x
         WHERE o_ol_cnt <> n
         GROUP BY o_w_id, o_d_id ORDER BY o_w_id, o_d_id",
    ),
    (
        7,
        "OL_DELIVERY_D is null iff the order's O_CARRIER_ID is null",
        "SELECT CONCAT('warehouse ', o_w_id, ' district ', o_d_id, ': ', COUNT(*),
                      ' order(s), first o_id ', MIN(o_id))
         FROM (SELECT o_w_id, o_d_id, o_id, o_carrier_id,
                 (SELECT COUNT(*) FROM order_line
                  WHERE ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
                    AND (ol_delivery_d IS NULL) <> (o_carrier_id IS NULL)) AS n
               FROM orders) x
         WHERE n > 0
         GROUP BY o_w_id, o_d_id ORDER BY o_w_id, o_d_id",
    ),
    (
        8,
        "W_YTD = sum(H_AMOUNT)",
        "SELECT CONCAT('warehouse ', w_id, ': w_ytd ', w_ytd, ', sum(h_amount) ', IFNULL(s, 'none'))
         FROM warehouse LEFT JOIN (SELECT h_w_id, SUM(h_amount) AS s FROM history GROUP BY h_w_id) h
           ON h.h_w_id = w_id
         WHERE NOT (w_ytd <=> s) ORDER BY w_id",
    ),
    (
        9,
        "D_YTD = sum(H_AMOUNT)",
        "SELECT CONCAT('warehouse ', d_w_id, ' district ', d_id, ': d_ytd ', d_ytd,
                      ', sum(h_amount) ', IFNULL(s, 'none'))
         FROM district LEFT JOIN (SELECT h_w_id, h_d_id, SUM(h_amount) AS s FROM history
                                  GROUP BY h_w_id, h_d_id) h
           ON h.h_w_id = d_w_id AND h.h_d_id = d_id
         WHERE NOT (d_ytd <=> s) ORDER BY d_w_id, d_id",
    ),
    (
        10,
        "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)",
        "SELECT CONCAT('warehouse ', c_w_id, ' district ', c_d_id, ': ', COUNT(*),
                      ' customer(s), first ', SUBSTRING_INDEX(GROUP_CONCAT(
                        CONCAT('c_id ', c_id, ': c_balance ', c_balance, ', delivered ol_amount ',
                               ol, ', h_amount ', h)
                        ORDER BY c_id SEPARATOR '|'), '|', 1))
         FROM (SELECT c_w_id, c_d_id, c_id, c_balance,
                 IFNULL((SELECT SUM(ol_amount) FROM orders FORCE INDEX (idx_orders) STRAIGHT_JOIN order_line
                           ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
                         WHERE o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id
                           AND ol_delivery_d IS NOT NULL), 0) AS ol,
                 IFNULL((SELECT SUM(h_amount) FROM history
                         WHERE h_c_w_id = c_w_id AND h_c_d_id = c_d_id AND h_c_id = c_id), 0) AS h
               FROM customer) x
         WHERE c_balance <> ol - h
         GROUP BY c_w_id, c_d_id ORDER BY c_w_id, c_d_id",
    ),
    (
        11,
        "rows in ORDER - rows in NEW-ORDER = 2100",
        "SELECT CONCAT('warehouse ', d_w_id, ' district ', d_id, ': ', o, ' orders, ', n,
                      ' new orders, difference ', o - n), delivered
         FROM (SELECT d_w_id, d_id,
                 (SELECT COUNT(*) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id) AS o,
                 (SELECT COUNT(*) FROM new_orders WHERE no_w_id = d_w_id AND no_d_id = d_id) AS n,
                 EXISTS (SELECT 1 FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id
                           AND o_id = 2101 AND o_carrier_id IS NOT NULL) AS delivered
               FROM district) x
         WHERE o - n <> 2100 OR delivered
         ORDER BY d_w_id, d_id",
    ),
    (
        12,
        "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
        "SELECT CONCAT('warehouse ', c_w_id, ' district ', c_d_id, ': ', COUNT(*),
                      ' customer(s), first ', SUBSTRING_INDEX(GROUP_CONCAT(
                        CONCAT('c_id ', c_id, ': c_balance + c_ytd_payment ', c_balance + c_ytd_payment,
                               ', delivered ol_amount ', ol)
                        ORDER BY c_id SEPARATOR '|'), '|', 1))
         FROM (SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment,
                 IFNULL((SELECT SUM(ol_amount) FROM orders FORCE INDEX (idx_orders) STRAIGHT_JOIN order_line
                           ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
                         WHERE o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id
                           AND ol_delivery_d IS NOT NULL), 0) AS ol
               FROM customer) x
         WHERE c_balance + c_ytd_payment <> ol
         GROUP BY c_w_id, c_d_id ORDER BY c_w_id, c_d_id",
    ),
];

/// Checks every condition over every warehouse of the connection's database.
pub fn check(conn: &mut Conn) -> Result<Vec<ConsistencyCondition>, PrepareError> {
    let mut out = Vec::new();
    for (number, rule, sql) in CONDITIONS {
        let rows = conn
            .query(sql)
            .context(|| format!("checking TPC-C consistency condition {number}"))?
            .rows;
        let text = |r: &Vec<Option<String>>, i: usize| r.get(i).cloned().flatten();
        let rows: Vec<(String, bool)> = rows
            .iter()
            .map(|r| {
                let delivered = text(r, 1).is_some_and(|v| v == "1");
                (text(r, 0).unwrap_or_default(), delivered)
            })
            .collect();
        let (offenders, not_applicable) = if number == AFTER_LOAD {
            after_load(rows)
        } else {
            (listed(rows.into_iter().map(|r| r.0).collect()), None)
        };
        out.push(ConsistencyCondition {
            number,
            rule: rule.to_string(),
            offenders,
            not_applicable,
        });
    }
    Ok(out)
}

/// The units (warehouse numbers, 0 for ITEM) that have rows in the connection's database,
/// whether their load finished or not: ITEM when it has a row, and each warehouse found in
/// STOCK (loaded first), DISTRICT, CUSTOMER or WAREHOUSE (loaded last). Each is read on its
/// primary key's first column, a few index dives per warehouse, not a scan of the table.
pub fn units_with_rows(conn: &mut Conn) -> Result<Vec<u32>, PrepareError> {
    let sql = "SELECT 0 FROM item HAVING COUNT(*) > 0
         UNION SELECT DISTINCT s_w_id FROM stock
         UNION SELECT DISTINCT d_w_id FROM district
         UNION SELECT DISTINCT c_w_id FROM customer
         UNION SELECT w_id FROM warehouse";
    let rows = conn
        .query(sql)
        .context(|| "listing the loaded TPC-C warehouses".into())?
        .rows;
    let mut units: Vec<u32> = rows
        .iter()
        .filter_map(|r| r.first().cloned().flatten()?.parse().ok())
        .collect();
    units.sort_unstable();
    units.dedup();
    Ok(units)
}

/// The first [`LISTED`] offenders, then `and N more`.
fn listed(mut offenders: Vec<String>) -> Vec<String> {
    if offenders.len() > LISTED {
        let more = offenders.len() - LISTED;
        offenders.truncate(LISTED);
        offenders.push(format!("and {more} more"));
    }
    offenders
}

/// Condition 11's verdict from its rows (a district's figures, and whether a Delivery has run
/// in it since the load): not applicable once a Delivery has run in any district, since from
/// then on the count of orders minus new orders grows with each Delivery; else the districts
/// breaking it.
fn after_load(rows: Vec<(String, bool)>) -> (Vec<String>, Option<String>) {
    let delivered: Vec<&String> = rows.iter().filter(|r| r.1).map(|r| &r.0).collect();
    if let Some(first) = delivered.first() {
        let district = first.split(':').next().unwrap_or_default();
        let why = format!(
            "holds only until the first Delivery after the load, and order 2101 (the load's \
             oldest undelivered) has a carrier in {} district(s), the first {district}",
            delivered.len()
        );
        return (Vec::new(), Some(why));
    }
    (listed(rows.into_iter().map(|r| r.0).collect()), None)
}

#[cfg(test)]
mod tests {
    use super::super::gen::{CUSTOMERS, FIRST_NEW_ORDER, NEW_ORDERS};
    use super::*;

    #[test]
    fn conditions_are_numbered_in_order_and_condition_11_uses_the_loaders_figures() {
        for (i, (n, _, _)) in CONDITIONS.iter().enumerate() {
            assert_eq!(*n as usize, i + 1);
        }
        let (_, rule, sql) = CONDITIONS[AFTER_LOAD as usize - 1];
        let delivered = CUSTOMERS - NEW_ORDERS;
        assert!(rule.ends_with(&format!("= {delivered}")), "{rule}");
        assert!(sql.contains(&format!("o - n <> {delivered}")), "{sql}");
        assert!(
            sql.contains(&format!("o_id = {FIRST_NEW_ORDER} AND")),
            "{sql}"
        );
    }

    #[test]
    fn condition_11_is_not_applicable_once_a_delivery_ran() {
        let row = |w: u32, d: u32, diff: u32, delivered| {
            (
                format!("warehouse {w} district {d}: difference {diff}"),
                delivered,
            )
        };
        // After a load: the districts breaking it.
        let (offenders, na) = after_load(vec![row(1, 3, 2099, false)]);
        assert_eq!(offenders, vec!["warehouse 1 district 3: difference 2099"]);
        assert_eq!(na, None);
        assert_eq!(after_load(vec![]), (vec![], None));
        // Once a Delivery ran somewhere, nothing is judged, and the line says why and where.
        let (offenders, na) = after_load(vec![
            row(1, 3, 2099, false),
            row(2, 1, 2101, true),
            row(2, 2, 2101, true),
        ]);
        assert!(offenders.is_empty());
        let na = na.unwrap();
        assert!(
            na.ends_with("has a carrier in 2 district(s), the first warehouse 2 district 1"),
            "{na}"
        );
        assert!(
            na.starts_with("holds only until the first Delivery"),
            "{na}"
        );
    }

    #[test]
    fn at_most_ten_offenders_are_listed() {
        let many: Vec<String> = (1..=13).map(|i| format!("warehouse {i}")).collect();
        let l = listed(many);
        assert_eq!(l.len(), 11);
        assert_eq!(l[9], "warehouse 10");
        assert_eq!(l[10], "and 3 more");
        assert_eq!(listed(vec!["w".into()]), vec!["w".to_string()]);
    }
}
