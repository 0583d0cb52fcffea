//! Protocol primitives.
