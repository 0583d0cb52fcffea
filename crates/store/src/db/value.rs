//! Values crossing the store's door: parameters in ([`ToValue`]), columns out ([`FromValue`]).

use crate::error::Error;

/// One SQL value, as both backends store it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    /// NULL.
    Null,
    /// A 64-bit signed integer.
    Integer(i64),
    /// A double.
    Real(f64),
    /// UTF-8 text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

/// A Rust value given as a statement's parameter.
pub(crate) trait ToValue {
    /// The value; a counter beyond the store's signed 64-bit integers is refused.
    fn to_value(&self) -> Result<Value, Error>;
}

macro_rules! to_integer {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Result<Value, Error> {
                Ok(Value::Integer(i64::from(*self)))
            }
        }
    )*};
}
to_integer!(i64, i32, i16, i8, u32, u16, u8, bool);

macro_rules! to_checked_integer {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Result<Value, Error> {
                i64::try_from(*self).map(Value::Integer).map_err(|_| Error::OutOfRange {
                    what: "a value",
                    value: u64::try_from(*self).unwrap_or(u64::MAX),
                })
            }
        }
    )*};
}
to_checked_integer!(u64, usize);

impl ToValue for f64 {
    fn to_value(&self) -> Result<Value, Error> {
        Ok(Value::Real(*self))
    }
}

impl ToValue for f32 {
    fn to_value(&self) -> Result<Value, Error> {
        Ok(Value::Real(f64::from(*self)))
    }
}

impl ToValue for str {
    fn to_value(&self) -> Result<Value, Error> {
        Ok(Value::Text(self.to_string()))
    }
}

impl ToValue for String {
    fn to_value(&self) -> Result<Value, Error> {
        Ok(Value::Text(self.clone()))
    }
}

impl ToValue for [u8] {
    fn to_value(&self) -> Result<Value, Error> {
        Ok(Value::Blob(self.to_vec()))
    }
}

impl ToValue for Vec<u8> {
    fn to_value(&self) -> Result<Value, Error> {
        Ok(Value::Blob(self.clone()))
    }
}

impl ToValue for Value {
    fn to_value(&self) -> Result<Value, Error> {
        Ok(self.clone())
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Result<Value, Error> {
        match self {
            Some(v) => v.to_value(),
            None => Ok(Value::Null),
        }
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Result<Value, Error> {
        (**self).to_value()
    }
}

/// A column read back as a Rust value.
pub(crate) trait FromValue: Sized {
    /// The value, or why it cannot be this type.
    fn from_value(v: &Value) -> Result<Self, String>;
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "NULL",
        Value::Integer(_) => "an integer",
        Value::Real(_) => "a real",
        Value::Text(_) => "text",
        Value::Blob(_) => "a blob",
    }
}

impl FromValue for i64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Integer(i) => Ok(*i),
            // A server's SUM of integers is a DECIMAL, sent as a number.
            Value::Real(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(*f as i64),
            other => Err(format!("{} where an integer was expected", kind(other))),
        }
    }
}

macro_rules! from_integer {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(v: &Value) -> Result<Self, String> {
                let i = i64::from_value(v)?;
                <$t>::try_from(i).map_err(|_| format!("{i} is out of range for {}", stringify!($t)))
            }
        }
    )*};
}
from_integer!(i32, u32, u16, u8, u64, usize);

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(i64::from_value(v)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Real(f) => Ok(*f),
            // SQLite keeps a whole REAL as an integer where it can; so may a server's SUM.
            Value::Integer(i) => Ok(*i as f64),
            other => Err(format!("{} where a number was expected", kind(other))),
        }
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Text(s) => Ok(s.clone()),
            other => Err(format!("{} where text was expected", kind(other))),
        }
    }
}

impl FromValue for Vec<u8> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Blob(b) => Ok(b.clone()),
            Value::Text(s) => Ok(s.as_bytes().to_vec()),
            other => Err(format!("{} where bytes were expected", kind(other))),
        }
    }
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(v.clone())
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Null => Ok(None),
            other => T::from_value(other).map(Some),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_convert_both_ways_and_refuse_what_does_not_fit() {
        assert_eq!(7u32.to_value().unwrap(), Value::Integer(7));
        assert!(matches!(u64::MAX.to_value(), Err(Error::OutOfRange { .. })));
        assert_eq!(None::<i64>.to_value().unwrap(), Value::Null);
        assert_eq!(u32::from_value(&Value::Integer(3)), Ok(3));
        assert!(u32::from_value(&Value::Integer(-1)).is_err());
        assert_eq!(f64::from_value(&Value::Integer(2)), Ok(2.0));
        assert_eq!(Option::<String>::from_value(&Value::Null), Ok(None));
        assert!(String::from_value(&Value::Integer(1)).is_err());
    }
}
