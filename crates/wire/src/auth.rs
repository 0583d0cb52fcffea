//! Authentication plugins.
