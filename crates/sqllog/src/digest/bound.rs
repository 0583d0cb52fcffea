//! The digest's bound: how many classes, and how many bytes of them, it keeps ([`Bound`]),
//! what a class takes, and the fold of the lightest classes into one exact [`Other`] tally
//! when the bound is passed.

use super::{add_opt, Class, Digest};
use serde::Serialize;

impl Class {
    /// What the class holds in memory besides its map slot's fixed part: the key, the example
    /// and the databases' names (their capacities), and the histogram's counters.
    pub(super) fn heap_bytes(&self, key: usize) -> usize {
        key + self.example.capacity()
            + self.dbs.iter().map(|d| d.capacity() + 24).sum::<usize>()
            + crate::hist::HEAP_BYTES
    }

    /// The order of weight: total query time, then count (the order of the report).
    pub(super) fn lighter(&self, other: &Class) -> std::cmp::Ordering {
        self.query_total
            .total_cmp(&other.query_total)
            .then(self.count.cmp(&other.count))
    }
}

/// How many classes a digest keeps, and how many bytes they may take, before it folds the
/// lightest into [`Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// Classes kept at most (at least 1).
    pub max_classes: usize,
    /// Bytes the kept classes may take at most (their text, histograms and map slots).
    pub max_bytes: usize,
}

impl Bound {
    /// No bound: every class is kept.
    pub const NONE: Bound = Bound {
        max_classes: usize::MAX,
        max_bytes: usize::MAX,
    };

    /// The bound that fits `budget` bytes of memory: as many classes as `budget` holds at
    /// [`CLASS_BYTES`] each, and `budget` bytes.
    pub fn for_memory(budget: u64) -> Bound {
        let budget = usize::try_from(budget).unwrap_or(usize::MAX);
        Bound {
            max_classes: (budget / CLASS_BYTES).max(1),
            max_bytes: budget,
        }
    }
}

/// What one class takes, counted for [`Bound::for_memory`]: the fixed part (the map's slot,
/// the tally, the histogram's counters) and a statement of about 1 KiB as its key and example.
pub const CLASS_BYTES: usize = SLOT_BYTES + crate::hist::HEAP_BYTES + 1024;
/// A class's slot in the map: its key's box, the tally, and the map's control byte (rounded
/// up for the map's spare capacity).
pub(super) const SLOT_BYTES: usize = 2 * (std::mem::size_of::<(Box<[u8]>, Class)>() + 1);

/// The entries folded out of the classes: exact sums over every entry of every class folded.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Other {
    /// Class tallies folded (a class folded twice counts twice).
    pub tallies: u64,
    /// Entries.
    pub count: u64,
    /// Sum of their query times in seconds (slow logs).
    pub query_time_s: Option<f64>,
    /// Sum of their lock times in seconds.
    pub lock_time_s: Option<f64>,
    /// Rows sent.
    pub rows_sent: Option<u64>,
    /// Rows examined.
    pub rows_examined: Option<u64>,
}

impl Other {
    pub(super) fn fold(&mut self, c: &Class) {
        self.tallies += 1;
        self.count += c.count;
        if c.timed > 0 {
            add_opt(&mut self.query_time_s, Some(c.query_total));
        }
        add_opt(&mut self.lock_time_s, c.lock_total);
        add_opt(&mut self.rows_sent, c.rows_sent);
        add_opt(&mut self.rows_examined, c.rows_examined);
    }
}

impl Digest {
    /// Folds the lightest classes into other until at most three quarters of the bound is
    /// used (so a fold, which sorts the classes, comes once per quarter of them).
    pub(super) fn fold(&mut self) {
        let keep_classes = self.bound.max_classes - self.bound.max_classes / 4;
        let keep_bytes = self.bound.max_bytes - self.bound.max_bytes / 4;
        // The heaviest of those to fold, in the report's order (weight, then key): every
        // class at or below it goes.
        let last = {
            let mut order: Vec<(&[u8], &Class)> =
                self.classes.iter().map(|(k, c)| (&k[..], c)).collect();
            order.sort_by(|a, b| a.1.lighter(b.1).then(a.0.cmp(b.0)));
            let (mut classes, mut bytes) = (self.classes.len(), self.bytes);
            let mut last = None;
            for (k, c) in order {
                if classes <= keep_classes && bytes <= keep_bytes {
                    break;
                }
                classes -= 1;
                bytes = bytes.saturating_sub(c.heap_bytes(k.len()) + SLOT_BYTES);
                last = Some((c.query_total, c.count, k.to_vec()));
            }
            last
        };
        let Some((total, count, key)) = last else {
            return;
        };
        if self.folded.is_empty() {
            // 8 bits per class kept, two per key: a class made again is called partial
            // wrongly for about one in 60 once as many classes are folded as are kept, more
            // as the folds go on (a partial class says "may").
            let bits = self
                .bound
                .max_classes
                .saturating_mul(8)
                .clamp(1 << 16, 1 << 30);
            self.folded = vec![0; bits / 64];
        }
        let (other, folded, bytes) = (&mut self.other, &mut self.folded, &mut self.bytes);
        self.classes.retain(|k, c| {
            let at_or_below = c
                .query_total
                .total_cmp(&total)
                .then(c.count.cmp(&count))
                .then(k[..].cmp(&key[..]))
                .is_le();
            if at_or_below {
                other.fold(c);
                *bytes = bytes.saturating_sub(c.heap_bytes(k.len()) + SLOT_BYTES);
                for b in folded_bits(folded.len(), k) {
                    folded[b / 64] |= 1 << (b % 64);
                }
            }
            !at_or_below
        });
        self.classes
            .shrink_to(self.bound.max_classes.min(self.classes.len() * 2));
    }

    /// Whether the class of the current fingerprint may have been folded before.
    pub(super) fn was_folded(&self) -> bool {
        !self.folded.is_empty()
            && folded_bits(self.folded.len(), &self.fp)
                .iter()
                .all(|&b| self.folded[b / 64] & (1 << (b % 64)) != 0)
    }
}

/// The two bits of `key` among `words` 64-bit words of [`Digest`]'s folded keys.
pub(super) fn folded_bits(words: usize, key: &[u8]) -> [usize; 2] {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    let h = h.finish();
    let n = words as u64 * 64;
    [(h % n) as usize, (h.rotate_left(32) % n) as usize]
}
