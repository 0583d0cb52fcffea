//! Rules of the TPC-C spec shared by the load and the transactions: the NURand function and
//! its C constants (clause 2.1.6), and customer last names from syllables (clause 4.3.2.3).

use crate::rand::Rng;

/// The NURand C constants (clause 2.1.6): `c_last` is the one the load uses; the run must use
/// another value for last names at a distance the spec allows (clause 2.1.6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Constants {
    /// C for `c_last` (A = 255) during the load.
    pub c_last: u64,
    /// C for customer ids (A = 1023).
    pub c_id: u64,
    /// C for item ids (A = 8191).
    pub ol_i_id: u64,
}

impl Constants {
    /// The constants of every load. Fixed rather than drawn per dataset: a run must know the
    /// load's `c_last` constant to keep the spec's distance from it, and the engine reads
    /// nothing from the server (the spec asks for values in range, not for fresh ones).
    pub const LOAD: Constants = Constants {
        c_last: 157,
        c_id: 259,
        ol_i_id: 7911,
    };

    /// The constants of every run: C for `c_last` 86 from the load's (the spec allows
    /// 65..=119 but not 96 or 112, clause 2.1.6.1), the others as loaded.
    pub const RUN: Constants = Constants {
        c_last: 71,
        ..Constants::LOAD
    };
}

/// The seed of one independent stream: the dataset's seed, a warehouse (0: ITEM) and a part.
pub fn stream(seed: u64, warehouse: u32, part: u64) -> u64 {
    seed ^ u64::from(warehouse).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ part.wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// NURand(A, x, y) of clause 2.1.6.
pub fn nurand(rng: &mut Rng, a: u64, x: u64, y: u64, c: u64) -> u64 {
    (((rng.uniform(0, a) | rng.uniform(x, y)) + c) % (y - x + 1)) + x
}

const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The last name of number `n` (0..=999): the syllables of its three digits (clause 4.3.2.3).
pub fn last_name(n: u64, out: &mut Vec<u8>) {
    for d in [n / 100, (n / 10) % 10, n % 10] {
        out.extend_from_slice(SYLLABLES[d as usize].as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_keeps_its_distance_from_the_load() {
        let (l, r) = (Constants::LOAD, Constants::RUN);
        let d = l.c_last.abs_diff(r.c_last);
        assert!((65..=119).contains(&d) && d != 96 && d != 112, "{d}");
        assert!(l.c_last <= 255 && l.c_id <= 1023 && l.ol_i_id <= 8191);
    }

    #[test]
    fn last_names_are_three_syllables() {
        let mut s = Vec::new();
        last_name(371, &mut s);
        assert_eq!(s, b"PRICALLYOUGHT");
        s.clear();
        last_name(0, &mut s);
        assert_eq!(s, b"BARBARBAR");
    }

    #[test]
    fn nurand_stays_in_range_and_favours_some_values() {
        let mut rng = Rng::new(7);
        let mut hits = vec![0u32; 1000];
        for _ in 0..100_000 {
            let v = nurand(&mut rng, 255, 0, 999, 123);
            hits[v as usize] += 1;
        }
        let max = *hits.iter().max().unwrap();
        let min = *hits.iter().min().unwrap();
        // Non-uniform: the most frequent value is drawn far more often than the least.
        assert!(max > 4 * min.max(1), "max {max} min {min}");
    }
}
