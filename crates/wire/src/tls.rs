//! TLS configuration.
