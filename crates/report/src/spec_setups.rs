//! A study's setups as its spec states them: each `[[variant]]`'s factors (CPU set, allocator,
//! OS settings, storage, my.cnf fragment, target, instrument_waits, server settings...), read
//! from the spec text the store keeps with the study, so "What changed" names what the spec
//! changed and not only what the server's variables show of it.

use std::collections::BTreeMap;

/// One setup of a spec: its name and its factors, readable name → value as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetupDef {
    /// The variant's name.
    pub name: String,
    /// Its factors as the spec states them (absent: not set).
    pub factors: BTreeMap<String, String>,
}

/// The `[[variant]]`s of `spec_toml`, in spec order; none when the text does not parse or
/// names no variant (a spec without variants has one stock setup).
pub fn setups(spec_toml: &str) -> Vec<SetupDef> {
    let Ok(doc) = spec_toml.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(variants) = doc.get("variant").and_then(toml::Value::as_array) else {
        return Vec::new();
    };
    variants
        .iter()
        .filter_map(toml::Value::as_table)
        .filter_map(|t| {
            let name = t.get("name")?.as_str()?.to_string();
            let mut factors = BTreeMap::new();
            for (k, v) in t {
                if k != "name" && k != "password_file" {
                    flatten(k, v, &mut factors);
                }
            }
            Some(SetupDef { name, factors })
        })
        .collect()
}

fn flatten(path: &str, v: &toml::Value, out: &mut BTreeMap<String, String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                flatten(&format!("{path}.{k}"), x, out);
            }
        }
        toml::Value::String(s) => {
            let text = if path == "target" {
                without_password(s)
            } else {
                s.clone()
            };
            out.insert(readable(path), text);
        }
        other => {
            out.insert(readable(path), other.to_string());
        }
    }
}

/// A spec key with what it is: `CPU set (cpus)`, `allocator (malloc)`, `OS thp (os.thp)`,
/// `my.cnf fragment (my_cnf)`; server settings as `set NAME`.
fn readable(path: &str) -> String {
    let gloss = match path {
        "cpus" => Some("CPU set"),
        "malloc" => Some("allocator"),
        "my_cnf" | "profile" => Some("my.cnf fragment"),
        "basedir" => Some("server build"),
        "target" => return "target".into(),
        "instrument_waits" => Some("timed waits"),
        _ => None,
    };
    if let Some(g) = gloss {
        return format!("{g} ({path})");
    }
    if let Some(rest) = path.strip_prefix("os.") {
        return format!("OS {rest} (os.{rest})");
    }
    if let Some(rest) = path.strip_prefix("storage.") {
        return format!("storage {rest}");
    }
    if let Some(rest) = path.strip_prefix("set.") {
        return format!("set {rest}");
    }
    path.replace('.', " ")
}

/// `mysql://user:secret@host/db` without its password: `mysql://user@host/db`.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some(x) => x,
        None => return url.to_string(),
    };
    let user = auth.split_once(':').map_or(auth, |(u, _)| u);
    format!("{scheme}://{user}@{host}")
}

/// The factors that differ between setups `a` and `b`, as `name a → b` (`–`: not set).
pub fn changed(a: &SetupDef, b: &SetupDef) -> Vec<String> {
    let keys: std::collections::BTreeSet<&String> =
        a.factors.keys().chain(b.factors.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            let (x, y) = (a.factors.get(k), b.factors.get(k));
            (x != y).then(|| {
                let dash = |v: Option<&String>| v.map_or("–".to_string(), Clone::clone);
                format!("{k} {} → {}", dash(x), dash(y))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_factor_a_variant_sets_is_read_and_passwords_are_not() {
        let s = setups(
            r#"
name = "x"
[[variant]]
name = "a"
[[variant]]
name = "b"
cpus = "0"
malloc = "jemalloc"
instrument_waits = true
my_cnf = "tuned.cnf"
target = "mysql://bench:hunter2@db1:3306/sbtest"
password_file = "/secret"
os = { thp = "never" }
storage = { fs = "xfs", mount_options = "noatime" }
set = { innodb_buffer_pool_size = "1G" }
"#,
        );
        assert_eq!(s.len(), 2);
        assert_eq!(
            changed(&s[0], &s[1]),
            [
                "CPU set (cpus) – → 0",
                "OS thp (os.thp) – → never",
                "allocator (malloc) – → jemalloc",
                "my.cnf fragment (my_cnf) – → tuned.cnf",
                "set innodb_buffer_pool_size – → 1G",
                "storage fs – → xfs",
                "storage mount_options – → noatime",
                "target – → mysql://bench@db1:3306/sbtest",
                "timed waits (instrument_waits) – → true",
            ]
        );
    }
}
