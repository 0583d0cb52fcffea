//! A small deterministic generator (SplitMix64) and the draws the targets need.

/// The seeded pseudo-random generator of fuzz cases; not for cryptography. (Workloads draw from
/// `qpslab_engine::rand::Rng`, which reproduces sysbench's distributions.)
#[derive(Clone, Debug)]
pub struct FuzzRng(u64);

impl FuzzRng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> FuzzRng {
        FuzzRng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// The generator of case `case` of a run seeded with `seed`.
    pub fn for_case(seed: u64, case: u64) -> FuzzRng {
        let mut r = FuzzRng::new(seed.wrapping_add(case.wrapping_mul(0xD1B5_4A32_D192_ED03)));
        r.u64();
        r
    }

    /// 64 random bits.
    pub fn u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            ((self.u64() as u128 * n as u128) >> 64) as u64
        }
    }

    /// An index in `0..n` (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// True with probability `1/n`.
    pub fn one_in(&mut self, n: u64) -> bool {
        self.below(n) == 0
    }

    /// A random byte.
    pub fn byte(&mut self) -> u8 {
        self.u64() as u8
    }

    /// A length in `0..=max`, small lengths much more likely than large ones.
    pub fn len(&mut self, max: usize) -> usize {
        let bits = self.below(usize::BITS as u64 + 1) as u32;
        let cap = if bits >= usize::BITS {
            max
        } else {
            ((1usize << bits) - 1).min(max)
        };
        self.index(cap + 1)
    }

    /// Up to `max` random bytes.
    pub fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.len(max);
        (0..n).map(|_| self.byte()).collect()
    }

    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// An integer that is often at a boundary (0, 1, 250..=252, 0xFFFF, 0xFF_FFFF, 2^32, max).
    pub fn edgy_u64(&mut self) -> u64 {
        const EDGES: [u64; 12] = [
            0,
            1,
            250,
            251,
            252,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u32::MAX as u64,
            1 << 32,
            u64::MAX,
        ];
        match self.below(3) {
            0 => *self.pick(&EDGES),
            1 => self.below(300),
            _ => self.u64() >> self.below(64),
        }
    }

    /// `input` changed at random: bytes flipped, inserted, removed, duplicated or truncated.
    pub fn mutate(&mut self, input: &[u8]) -> Vec<u8> {
        let mut v = input.to_vec();
        for _ in 0..=self.below(4) {
            let at = self.index(v.len() + 1);
            match self.below(7) {
                0 if at < v.len() => v[at] ^= 1 << self.below(8),
                1 if at < v.len() => v[at] = self.byte(),
                2 if at < v.len() => v[at] = *self.pick(&[0, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF]),
                3 => v.insert(at, self.byte()),
                4 if at < v.len() => {
                    let n = self.index(v.len() - at) + 1;
                    v.drain(at..at + n.min(8));
                }
                5 => {
                    let from = self.index(v.len() + 1);
                    let n = self.index(v.len() - from + 1).min(16);
                    let chunk: Vec<u8> = v[from..from + n].to_vec();
                    v.splice(at..at, chunk);
                }
                _ => v.truncate(at),
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| FuzzRng::for_case(7, 3).u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(FuzzRng::for_case(7, 3).u64(), FuzzRng::for_case(7, 4).u64());
        let mut r = FuzzRng::new(1);
        assert!((0..1000).all(|_| r.below(10) < 10));
        assert!((0..1000).all(|_| r.len(5) <= 5));
        assert_eq!(r.below(0), 0);
    }
}
