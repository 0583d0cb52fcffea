-- One week of events from a random day of 2024: a date-range read.
\set day random(0, 358)
SELECT COUNT(*), SUM(amount)
  FROM events
 WHERE created >= DATE '2024-01-01' + INTERVAL :day DAY
   AND created < DATE '2024-01-01' + INTERVAL :day + 7 DAY;
