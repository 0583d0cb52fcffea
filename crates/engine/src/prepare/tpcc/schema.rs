//! The nine tables of TPC-C (spec clause 1.3) with their standard names, the primary keys of
//! clause 1.3, the secondary indexes the transactions need (customer by last name, a
//! customer's latest order) and, when asked, the foreign keys of clause 1.3.

/// Every table, in the order they are created (referenced tables first) and counted.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_orders",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// The kinds of column a loader sends: an integer, or bytes (text, decimals and datetimes are
/// all sent as text and converted by the server), either possibly NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Col {
    /// An integer column.
    Int,
    /// A column sent as text.
    Text,
}

use Col::{Int, Text};

/// The columns of `table` as the loader sends them, in the table's column order.
pub fn columns(table: &str) -> &'static [Col] {
    match table {
        "warehouse" => &[Int, Text, Text, Text, Text, Text, Text, Text, Text],
        "district" => &[
            Int, Int, Text, Text, Text, Text, Text, Text, Text, Text, Int,
        ],
        "customer" => &[
            Int, Int, Int, Text, Text, Text, Text, Text, Text, Text, Text, Text, Text, Text, Text,
            Text, Text, Text, Int, Int, Text,
        ],
        "history" => &[Int, Int, Int, Int, Int, Text, Text, Text],
        "new_orders" => &[Int, Int, Int],
        "orders" => &[Int, Int, Int, Int, Text, Int, Int, Int],
        "order_line" => &[Int, Int, Int, Int, Int, Int, Text, Int, Text, Text],
        "item" => &[Int, Int, Text, Text, Text],
        // s_i_id, s_w_id, s_quantity, s_dist_01..10, s_ytd, s_order_cnt, s_remote_cnt, s_data
        _ => &[
            Int, Int, Int, Text, Text, Text, Text, Text, Text, Text, Text, Text, Text, Int, Int,
            Int, Text,
        ],
    }
}

/// `CREATE TABLE` of `table` with the storage engine and extra options of the workload;
/// `foreign_keys` adds the spec's references.
pub fn create_table_sql(table: &str, engine: &str, options: &str, foreign_keys: bool) -> String {
    let (cols, fks) = body(table);
    let mut sql = format!("CREATE TABLE {table} (\n{cols}");
    if foreign_keys {
        for fk in fks {
            sql.push_str(",\n  ");
            sql.push_str(fk);
        }
    }
    sql.push_str(&format!("\n) ENGINE={engine} {options}"));
    sql
}

/// The columns and keys of a table, and its foreign keys.
fn body(table: &str) -> (&'static str, &'static [&'static str]) {
    match table {
        "warehouse" => (
            "  w_id INT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20),
  w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2),
  PRIMARY KEY (w_id)",
            &[],
        ),
        "district" => (
            "  d_id TINYINT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20),
  d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4),
  d_ytd DECIMAL(12,2), d_next_o_id INT,
  PRIMARY KEY (d_w_id, d_id)",
            &["FOREIGN KEY (d_w_id) REFERENCES warehouse (w_id)"],
        ),
        "customer" => (
            "  c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id INT NOT NULL, c_first VARCHAR(16),
  c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20),
  c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), c_phone CHAR(16), c_since DATETIME,
  c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2),
  c_ytd_payment DECIMAL(12,2), c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id),
  KEY idx_customer (c_w_id, c_d_id, c_last, c_first)",
            &["FOREIGN KEY (c_w_id, c_d_id) REFERENCES district (d_w_id, d_id)"],
        ),
        "history" => (
            "  h_c_id INT, h_c_d_id TINYINT, h_c_w_id INT, h_d_id TINYINT, h_w_id INT, h_date DATETIME,
  h_amount DECIMAL(6,2), h_data VARCHAR(24),
  KEY idx_history_w (h_w_id, h_d_id),
  KEY idx_history_c (h_c_w_id, h_c_d_id, h_c_id)",
            &[
                "FOREIGN KEY (h_c_w_id, h_c_d_id, h_c_id) REFERENCES customer (c_w_id, c_d_id, c_id)",
                "FOREIGN KEY (h_w_id, h_d_id) REFERENCES district (d_w_id, d_id)",
            ],
        ),
        "new_orders" => (
            "  no_o_id INT NOT NULL, no_d_id TINYINT NOT NULL, no_w_id INT NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)",
            &["FOREIGN KEY (no_w_id, no_d_id, no_o_id) REFERENCES orders (o_w_id, o_d_id, o_id)"],
        ),
        "orders" => (
            "  o_id INT NOT NULL, o_d_id TINYINT NOT NULL, o_w_id INT NOT NULL, o_c_id INT,
  o_entry_d DATETIME, o_carrier_id TINYINT, o_ol_cnt TINYINT, o_all_local TINYINT,
  PRIMARY KEY (o_w_id, o_d_id, o_id),
  KEY idx_orders (o_w_id, o_d_id, o_c_id, o_id)",
            &["FOREIGN KEY (o_w_id, o_d_id, o_c_id) REFERENCES customer (c_w_id, c_d_id, c_id)"],
        ),
        "order_line" => (
            "  ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id INT NOT NULL,
  ol_number TINYINT NOT NULL, ol_i_id INT, ol_supply_w_id INT, ol_delivery_d DATETIME,
  ol_quantity TINYINT, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)",
            &[
                "FOREIGN KEY (ol_w_id, ol_d_id, ol_o_id) REFERENCES orders (o_w_id, o_d_id, o_id)",
                "FOREIGN KEY (ol_supply_w_id, ol_i_id) REFERENCES stock (s_w_id, s_i_id)",
            ],
        ),
        "item" => (
            "  i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2),
  i_data VARCHAR(50),
  PRIMARY KEY (i_id)",
            &[],
        ),
        _ => (
            "  s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity SMALLINT,
  s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24),
  s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24),
  s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd DECIMAL(8,0), s_order_cnt SMALLINT,
  s_remote_cnt SMALLINT, s_data VARCHAR(50),
  PRIMARY KEY (s_w_id, s_i_id)",
            &[
                "FOREIGN KEY (s_w_id) REFERENCES warehouse (w_id)",
                "FOREIGN KEY (s_i_id) REFERENCES item (i_id)",
            ],
        ),
    }
}

/// The `INSERT` a loader prepares (or starts its multi-row text with) for `table`.
pub fn insert_sql(table: &str) -> String {
    let marks = vec!["?"; columns(table).len()].join(",");
    format!("INSERT INTO {table} VALUES ({marks})")
}

/// The column of `table` that holds the warehouse its rows belong to (`None` for item).
pub fn warehouse_column(table: &str) -> Option<&'static str> {
    Some(match table {
        "warehouse" => "w_id",
        "district" => "d_w_id",
        "customer" => "c_w_id",
        "history" => "h_w_id",
        "new_orders" => "no_w_id",
        "orders" => "o_w_id",
        "order_line" => "ol_w_id",
        "stock" => "s_w_id",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_its_columns_declared() {
        for t in TABLES {
            let sql = create_table_sql(t, "InnoDB", "", true);
            assert!(sql.starts_with(&format!("CREATE TABLE {t} (")), "{t}");
            assert_eq!(insert_sql(t).matches('?').count(), columns(t).len(), "{t}");
        }
        assert_eq!(columns("stock").len(), 17);
        assert_eq!(columns("customer").len(), 21);
        assert!(create_table_sql("customer", "InnoDB", "", false)
            .contains("KEY idx_customer (c_w_id, c_d_id, c_last, c_first)"));
        assert!(!create_table_sql("customer", "InnoDB", "", false).contains("FOREIGN"));
    }
}
