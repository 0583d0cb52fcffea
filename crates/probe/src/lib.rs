//! qpslab-probe (being built).
