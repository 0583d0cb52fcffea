-- The same `events` table and rows as schema_range.sql, partitioned by HASH on its id
-- instead: the other layout the same workload scripts run against. Idempotent.
CREATE TABLE IF NOT EXISTS events (
  id BIGINT NOT NULL,
  created DATE NOT NULL,
  account INT NOT NULL,
  amount INT NOT NULL,
  PRIMARY KEY (id),
  KEY created (created)
) ENGINE=InnoDB
PARTITION BY HASH (id) PARTITIONS 12;

INSERT IGNORE INTO events (id, created, account, amount)
SELECT seq, DATE '2024-01-01' + INTERVAL (seq % 366) DAY, seq % 1000, (seq * 7919) % 10000
  FROM seq_1_to_100000;
