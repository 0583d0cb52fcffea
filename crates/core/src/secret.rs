//! A password that never leaves memory: Debug and Display print `<REDACTED>`, and it does not
//! implement `Serialize`, so a plan or result holding one cannot be written out by accident.

use std::fmt;

/// A secret string (a password). Read it with [`Secret::expose`] only where the protocol needs it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }
    /// The secret itself, for the authentication exchange and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
    /// True when the secret is the empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<REDACTED>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<REDACTED>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_the_secret() {
        let s = Secret::new("hunter2");
        assert_eq!(format!("{s} {s:?}"), "<REDACTED> <REDACTED>");
        assert_eq!(s.expose(), "hunter2");
    }
}
