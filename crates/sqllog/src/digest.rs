//! The digest: entries grouped by fingerprint into classes, with per-class sums, a p95 from a
//! fixed-size histogram and the slowest example. Memory grows with the number of classes
//! (and connections), never with the log's length; no allocation per entry once a class
//! exists.
//!
//! The classes are bounded ([`Bound`]): past `max_classes` classes, or `max_bytes` of them,
//! the lightest quarter is folded into one [`Other`] tally, whose sums are exact, so every
//! entry is counted once, in a class or in other. A class folded and seen again starts a new
//! tally; it says that some of its entries may be in other ([`ClassSummary::partial`]).
//! pt-query-digest keeps every class (its memory grows with them) and lists those beyond
//! `--limit` in one `MISC` row; here `other` holds both.

use std::collections::HashMap;
use std::io::BufRead;

use serde::Serialize;

use crate::entry::EntryRef;
use crate::fingerprint::{fingerprint_into, statement_kind, StatementKind};
use crate::hist::Hist;
use crate::time::format_iso;
use crate::{LogError, LogReader, LogType};

/// The databases listed per class at most (a class seen in more says so with `+`).
const MAX_DBS: usize = 4;

/// What one class has accumulated.
#[derive(Debug, Default)]
struct Class {
    count: u64,
    timed: u64,
    query_total: f64,
    query_min: f64,
    query_max: f64,
    hist: Hist,
    lock_total: Option<f64>,
    rows_sent: Option<u64>,
    rows_examined: Option<u64>,
    first: Option<i64>,
    last: Option<i64>,
    example: Vec<u8>,
    example_line: u64,
    example_time: Option<f64>,
    dbs: Vec<String>,
    more_dbs: bool,
    /// Made after a fold that may have taken some of its entries.
    partial: bool,
}

fn add_opt<T: std::ops::Add<Output = T> + Copy>(sum: &mut Option<T>, v: Option<T>) {
    if let Some(v) = v {
        *sum = Some(sum.map_or(v, |s| s + v));
    }
}

impl Class {
    fn add(&mut self, e: &EntryRef<'_>) {
        self.count += 1;
        if let Some(t) = e.query_time_s {
            self.timed += 1;
            self.query_total += t;
            self.query_min = if self.timed == 1 {
                t
            } else {
                self.query_min.min(t)
            };
            self.query_max = self.query_max.max(t);
            self.hist.record(t);
        }
        add_opt(&mut self.lock_total, e.lock_time_s);
        add_opt(&mut self.rows_sent, e.rows_sent);
        add_opt(&mut self.rows_examined, e.rows_examined);
        if let Some(at) = e.at_us {
            self.first = Some(self.first.map_or(at, |f| f.min(at)));
            self.last = Some(self.last.map_or(at, |l| l.max(at)));
        }
        let slower = match (e.query_time_s, self.example_time) {
            (Some(t), Some(best)) => t > best,
            (Some(_), None) => true,
            (None, _) => self.count == 1,
        };
        if slower {
            self.example.clear();
            self.example.extend_from_slice(e.sql);
            self.example_line = e.line;
            self.example_time = e.query_time_s;
        }
        if let Some(db) = e.db {
            if !self.dbs.iter().any(|d| d == db) {
                if self.dbs.len() < MAX_DBS {
                    self.dbs.push(db.to_string());
                } else {
                    self.more_dbs = true;
                }
            }
        }
    }
}

/// Entries grouped into classes.
#[derive(Debug)]
pub struct Digest {
    classes: HashMap<Box<[u8]>, Class>,
    fp: Vec<u8>,
    entries: u64,
    first: Option<i64>,
    last: Option<i64>,
    bound: Bound,
    /// Bytes the classes take (as [`Class::heap_bytes`] counts, plus a slot each).
    bytes: usize,
    other: Other,
    /// One bit per hash of a folded class's key (empty until the first fold): a class made
    /// again whose bit is set may have entries in other.
    folded: Vec<u64>,
}

impl Default for Digest {
    fn default() -> Digest {
        Digest::new(Bound::NONE)
    }
}

impl Digest {
    /// An empty digest that keeps its classes within `bound`.
    pub fn new(bound: Bound) -> Digest {
        Digest {
            classes: HashMap::new(),
            fp: Vec::new(),
            entries: 0,
            first: None,
            last: None,
            bound: Bound {
                max_classes: bound.max_classes.max(1),
                ..bound
            },
            bytes: 0,
            other: Other::default(),
            folded: Vec::new(),
        }
    }

    /// Adds one entry to its class: statements by fingerprint, other commands as
    /// `administrator command: NAME` (as pt-query-digest names them).
    pub fn add(&mut self, e: &EntryRef<'_>) {
        self.entries += 1;
        if let Some(at) = e.at_us {
            self.first = Some(self.first.map_or(at, |f| f.min(at)));
            self.last = Some(self.last.map_or(at, |l| l.max(at)));
        }
        if matches!(e.command, "Query" | "Execute") {
            fingerprint_into(e.sql, &mut self.fp);
        } else {
            self.fp.clear();
            self.fp.extend_from_slice(b"administrator command: ");
            self.fp.extend_from_slice(e.command.as_bytes());
        }
        let key = self.fp.len();
        match self.classes.get_mut(self.fp.as_slice()) {
            Some(c) => {
                let before = c.heap_bytes(key);
                c.add(e);
                self.bytes = (self.bytes + c.heap_bytes(key)).saturating_sub(before);
            }
            None => {
                let mut c = Class {
                    partial: self.was_folded(),
                    ..Class::default()
                };
                c.add(e);
                self.bytes += c.heap_bytes(key) + SLOT_BYTES;
                self.classes.insert(self.fp.as_slice().into(), c);
            }
        }
        if self.classes.len() > self.bound.max_classes || self.bytes > self.bound.max_bytes {
            self.fold();
        }
    }

    /// What was folded out of the classes.
    pub fn other(&self) -> &Other {
        &self.other
    }

    /// Entries added.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// The classes, heaviest first: by total query time (then count) when the log has
    /// times, by count otherwise; at most `limit`.
    pub fn summaries(&self, limit: Option<usize>) -> Vec<ClassSummary> {
        let mut all: Vec<(&[u8], &Class)> = self.classes.iter().map(|(k, c)| (&k[..], c)).collect();
        all.sort_by(|a, b| b.1.lighter(a.1).then(a.0.cmp(b.0)));
        all.iter()
            .take(limit.unwrap_or(usize::MAX))
            .map(|(k, c)| summary(k, c))
            .collect()
    }
}

/// Query times of one class, in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    /// Sum.
    pub total_s: f64,
    /// Mean.
    pub avg_s: f64,
    /// 95th percentile (from the class's histogram: within ±6 %).
    pub p95_s: f64,
    /// Largest.
    pub max_s: f64,
}

/// Rows of one class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rows {
    /// Sum.
    pub total: u64,
    /// Mean per entry.
    pub avg: f64,
}

/// The class's slowest entry (its first one when the log has no times).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Example {
    /// Where it starts in the log.
    pub line: u64,
    /// Its query time.
    pub query_time_s: Option<f64>,
    /// Its full text.
    pub sql: String,
}

/// One class of the digest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassSummary {
    /// The class key (see [`crate::fingerprint`]).
    pub fingerprint: String,
    /// `read`, `write` or `other` (see [`StatementKind`]).
    pub kind: &'static str,
    /// Entries.
    pub count: u64,
    /// Query times (slow logs).
    pub query_time: Option<Timing>,
    /// Sum of the lock times in seconds (slow logs).
    pub lock_time_s: Option<f64>,
    /// Rows sent.
    pub rows_sent: Option<Rows>,
    /// Rows examined.
    pub rows_examined: Option<Rows>,
    /// The earliest entry's time (the log's clock, ISO 8601).
    pub first_seen: Option<String>,
    /// The latest entry's time.
    pub last_seen: Option<String>,
    /// The databases in effect (at most four; `+` last when there were more).
    pub databases: Vec<String>,
    /// One entry of the class.
    pub example: Example,
    /// Some of the class's entries may be in [`Report::other`]: it was folded and seen again.
    pub partial: bool,
}

fn summary(key: &[u8], c: &Class) -> ClassSummary {
    let fingerprint = String::from_utf8_lossy(key).into_owned();
    let example = String::from_utf8_lossy(&c.example).into_owned();
    // A command that is no statement (`administrator command: Connect`) is other; a statement
    // is judged by its example's own text (a fingerprint has folded what `PREPARE s FROM '...'`
    // prepares).
    let kind = if fingerprint.starts_with("administrator command") {
        "other"
    } else {
        match statement_kind(&example) {
            StatementKind::Read => "read",
            StatementKind::Write => "write",
            StatementKind::Other => "other",
        }
    };
    let rows = |total: Option<u64>| {
        total.map(|total| Rows {
            total,
            avg: total as f64 / c.count as f64,
        })
    };
    let query_time = (c.timed > 0).then(|| Timing {
        total_s: c.query_total,
        avg_s: c.query_total / c.timed as f64,
        p95_s: c
            .hist
            .quantile(0.95)
            .unwrap_or(0.0)
            .clamp(c.query_min, c.query_max),
        max_s: c.query_max,
    });
    let mut databases = c.dbs.clone();
    if c.more_dbs {
        databases.push("+".into());
    }
    ClassSummary {
        fingerprint,
        kind,
        count: c.count,
        query_time,
        lock_time_s: c.lock_total,
        rows_sent: rows(c.rows_sent),
        rows_examined: rows(c.rows_examined),
        first_seen: c.first.map(format_iso),
        last_seen: c.last.map(format_iso),
        databases,
        example: Example {
            line: c.example_line,
            query_time_s: c.example_time,
            sql: example,
        },
        partial: c.partial,
    }
}

/// A whole digest: the log's facts, then its classes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The log's path as given (`-` for standard input).
    pub log: String,
    /// Its size in bytes (bytes read, for standard input).
    pub size_bytes: u64,
    /// `slow` or `general`.
    pub log_type: &'static str,
    /// `MariaDB` or `MySQL`.
    pub flavor: &'static str,
    /// Entries read.
    pub entries: u64,
    /// Incomplete entries skipped.
    pub skipped: u64,
    /// Classes kept (all of them, whatever the limit, but those folded into `other`).
    pub classes: usize,
    /// Classes kept at most (`None`: no bound).
    pub max_classes: Option<usize>,
    /// The entries of the classes folded beyond the bound.
    pub other: Other,
    /// The earliest entry's time.
    pub first_seen: Option<String>,
    /// The latest entry's time.
    pub last_seen: Option<String>,
    /// Seconds between the two.
    pub span_s: Option<f64>,
    /// The heaviest classes, heaviest first.
    pub top: Vec<ClassSummary>,
}

/// Reads the whole log into a digest kept within `bound`, calling `progress` with the bytes
/// read every few thousand entries; returns the report of its `limit` heaviest classes.
pub fn digest_log<R: BufRead>(
    reader: &mut LogReader<R>,
    log: &str,
    limit: Option<usize>,
    bound: Bound,
    mut progress: impl FnMut(u64),
) -> Result<Report, LogError> {
    let mut d = Digest::new(bound);
    while let Some(e) = reader.next_ref() {
        d.add(&e?);
        if d.entries.is_multiple_of(4096) {
            progress(reader.bytes_read());
        }
    }
    Ok(Report {
        log: log.to_string(),
        size_bytes: reader.bytes_read(),
        log_type: match reader.log_type() {
            LogType::Slow => "slow",
            LogType::General => "general",
        },
        flavor: reader.flavor().name(),
        entries: d.entries,
        skipped: reader.skipped(),
        classes: d.classes.len(),
        max_classes: (d.bound.max_classes != usize::MAX).then_some(d.bound.max_classes),
        other: d.other.clone(),
        first_seen: d.first.map(format_iso),
        last_seen: d.last.map(format_iso),
        span_s: d.first.zip(d.last).map(|(f, l)| (l - f) as f64 / 1e6),
        top: d.summaries(limit),
    })
}

mod bound;
use bound::SLOT_BYTES;
pub use bound::{Bound, Other, CLASS_BYTES};

#[cfg(test)]
#[path = "digest_tests.rs"]
mod tests;
