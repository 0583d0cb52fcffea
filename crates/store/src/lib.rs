//! qpslab-store (being built).
