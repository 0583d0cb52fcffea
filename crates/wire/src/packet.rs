//! Blocking packet I/O.
