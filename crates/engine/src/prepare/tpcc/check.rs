//! TPC-C's consistency conditions 1 to 4 (spec clause 3.3.2.1-4), which hold after a load and
//! during and after any run of the transactions: each is one query that returns the
//! warehouses or districts breaking it, with the figures that disagree.

use super::super::{Context, PrepareError};
use qpslab_core::ConsistencyCondition;
use qpslab_wire::Conn;

/// At most this many offenders are listed per condition (the count says how many more).
const LISTED: usize = 10;

/// The conditions: number, rule, and the query returning one row per offender whose columns
/// are the offender's description.
const CONDITIONS: [(u32, &str, &str); 4] = [
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
];

/// Checks conditions 1 to 4 over every warehouse of the connection's database.
pub fn check(conn: &mut Conn) -> Result<Vec<ConsistencyCondition>, PrepareError> {
    let mut out = Vec::new();
    for (number, rule, sql) in CONDITIONS {
        let rows = conn
            .query(sql)
            .context(|| format!("checking TPC-C consistency condition {number}"))?
            .rows;
        let mut offenders: Vec<String> = rows
            .iter()
            .take(LISTED)
            .map(|r| r.first().cloned().flatten().unwrap_or_default())
            .collect();
        if rows.len() > LISTED {
            offenders.push(format!("and {} more", rows.len() - LISTED));
        }
        out.push(ConsistencyCondition {
            number,
            rule: rule.to_string(),
            offenders,
        });
    }
    Ok(out)
}
