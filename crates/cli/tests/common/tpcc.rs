//! TPC-C helpers shared by the test files that run it.

use super::sql;

/// The figure after `label` on the first line of `out` that starts with it.
pub fn value(out: &str, label: &str) -> String {
    let l = out
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no {label} in {out}"));
    l[l.find(label).unwrap() + label.len()..].trim().to_string()
}

/// Holds DISTRICT's rows of warehouse 1 of database `db`, then asks for warehouse 1's row,
/// which a Payment waiting on a district holds: a deadlock, whose victim InnoDB picks as the
/// transaction that changed fewer rows (the Payment: this one inserted 1000 first). The
/// Payment is retried.
pub fn deadlock_a_payment(db: &str) {
    sql(&format!(
        "USE {db}; CREATE TABLE IF NOT EXISTS scratch (id INT); DO SLEEP(0.5); BEGIN; \
         INSERT INTO scratch SELECT i_id FROM item LIMIT 1000; \
         SELECT COUNT(*) FROM (SELECT d_id FROM district WHERE d_w_id = 1 FOR UPDATE) d; \
         DO SLEEP(1); SELECT w_id FROM warehouse WHERE w_id = 1 FOR UPDATE; COMMIT; \
         DROP TABLE scratch"
    ));
}
