//! Reading one option value, whether typed on a command line (always text) or written in a
//! spec (a TOML string, number, boolean or array). Errors are the tail of a sentence whose
//! subject is the option's name: "must be at least 1".

use crate::error::OptionError;
use serde_json::Value;

/// The value as text: a string as is, a number or boolean as written.
pub fn text(v: &Value) -> Result<String, OptionError> {
    match v {
        Value::String(s) => Ok(s.trim().to_string()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(if *b { "on" } else { "off" }.into()),
        _ => Err(OptionError(format!("expects a single value, not {v}"))),
    }
}

/// A number (a TOML number or its text).
pub fn float(v: &Value) -> Result<f64, OptionError> {
    let n = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    n.filter(|n| n.is_finite())
        .ok_or_else(|| OptionError(format!("expects a number, not {v}")))
}

/// A whole number in `min..=max`.
pub fn int(v: &Value, min: u64, max: u64) -> Result<u64, OptionError> {
    let n = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if (min..=max).contains(&n) => Ok(n),
        Some(_) if max == u64::MAX => Err(OptionError(format!("must be at least {min}"))),
        _ => Err(OptionError(format!(
            "must be a whole number from {min} to {max}, not {v}"
        ))),
    }
}

/// `on`/`off` (also `true`/`false`, `1`/`0`).
pub fn switch(v: &Value) -> Result<bool, OptionError> {
    match v {
        Value::Bool(b) => Ok(*b),
        _ => match text(v)?.to_ascii_lowercase().as_str() {
            "on" | "true" | "1" => Ok(true),
            "off" | "false" | "0" => Ok(false),
            _ => Err(OptionError(format!("must be on or off, not {v}"))),
        },
    }
}

/// Seconds: a number (`5`, `0.5`) or a duration with units (`"2s"`, `"500ms"`, `"1m30s"`), as
/// [`qpslab_core::units::seconds`] reads them.
pub fn seconds(v: &Value) -> Result<f64, OptionError> {
    let bad = || {
        OptionError(format!(
            "expects seconds (e.g. 5, 0.5, \"2s\", \"500ms\", \"1m30s\"), not {v}"
        ))
    };
    match v {
        Value::Number(n) => n
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .ok_or_else(bad),
        Value::String(t) => qpslab_core::units::seconds(t).map_err(|_| bad()),
        _ => Err(bad()),
    }
}

/// A list: a TOML array, or text separated by commas (`"95,99"`).
pub fn list(v: &Value) -> Result<Vec<Value>, OptionError> {
    match v {
        Value::Array(a) => Ok(a.clone()),
        Value::String(s) => Ok(s
            .split(',')
            .map(|p| Value::String(p.trim().to_string()))
            .collect()),
        Value::Number(_) => Ok(vec![v.clone()]),
        _ => Err(OptionError(format!("expects a list, not {v}"))),
    }
}

/// One of `choices`.
pub fn choice(v: &Value, choices: &[&str]) -> Result<String, OptionError> {
    let t = text(v)?;
    if choices.contains(&t.as_str()) {
        Ok(t)
    } else {
        Err(OptionError(format!(
            "must be one of {}, not '{t}'",
            choices.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn seconds_in_every_spelling() {
        for (v, s) in [
            (json!(5), 5.0),
            (json!(0.5), 0.5),
            (json!("2s"), 2.0),
            (json!("500ms"), 0.5),
            (json!("1m30s"), 90.0),
            (json!("1.5"), 1.5),
        ] {
            assert_eq!(seconds(&v).unwrap(), s, "{v}");
        }
        for bad in [json!(-1), json!("soon"), json!([1]), json!(true)] {
            assert!(seconds(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_switches_lists() {
        assert_eq!(int(&json!("8"), 1, 10).unwrap(), 8);
        assert!(int(&json!(0), 1, 10).is_err());
        assert!(int(&json!(1.5), 1, 10).is_err());
        assert!(int(&json!(-3), 0, 10).is_err());
        assert_eq!(float(&json!("0.25")).unwrap(), 0.25);
        assert!(float(&json!("x")).is_err());
        assert!(switch(&json!("on")).unwrap());
        assert!(!switch(&json!(false)).unwrap());
        assert!(switch(&json!("maybe")).is_err());
        assert_eq!(
            list(&json!("95, 99")).unwrap(),
            vec![json!("95"), json!("99")]
        );
        assert_eq!(list(&json!([1, 2])).unwrap(), vec![json!(1), json!(2)]);
        assert!(choice(&json!("tcp"), &["socket", "tcp"]).is_ok());
        assert!(choice(&json!("udp"), &["socket", "tcp"]).is_err());
    }
}
