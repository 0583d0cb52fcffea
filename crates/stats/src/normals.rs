//! Seeded normal values for the simulations in the unit tests: the same on every machine.

/// A seeded xorshift with Box–Muller normals.
pub(crate) struct Normals(pub u64);

impl Normals {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// The next N(0, 1) value.
    pub(crate) fn next(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}
