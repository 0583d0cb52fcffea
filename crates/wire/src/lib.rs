//! qpslab-wire (being built).
