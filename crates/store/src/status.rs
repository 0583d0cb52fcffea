//! What the study tables share: status enums stored as words, and the errors for a row that
//! does not read back.

use crate::error::Error;

/// `as_str`, `Display` and `FromStr` for a status enum, from its variants' stored words.
macro_rules! status_words {
    ($t:ty, $($v:ident = $s:literal),+) => {
        impl $t {
            /// The word stored in the database.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$v => $s),+ }
            }
        }
        impl ::std::fmt::Display for $t {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl ::std::str::FromStr for $t {
            type Err = $crate::model::UnknownStatus;
            fn from_str(s: &str) -> Result<Self, $crate::model::UnknownStatus> {
                match s {
                    $($s => Ok(Self::$v),)+
                    _ => Err($crate::model::UnknownStatus {
                        kind: stringify!($t),
                        word: s.to_string(),
                    }),
                }
            }
        }
    };
}
pub(crate) use status_words;

/// A row whose stored words do not read back.
pub(crate) fn corrupt(e: crate::model::UnknownStatus) -> Error {
    Error::from(e)
}
