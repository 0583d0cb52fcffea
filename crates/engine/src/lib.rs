//! qpslab-engine (being built).
