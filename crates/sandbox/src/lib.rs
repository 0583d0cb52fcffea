//! qpslab-sandbox (being built).
