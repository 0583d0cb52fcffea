//! The mysql client's option-file format (`--defaults-file`): `[group]` headers, `key=value`
//! lines, `#`/`;` comments, optional quotes, dashes and underscores interchangeable in keys.
//!
//! Only the groups a client reads (`client`, `mysql`, `client-mariadb`, `qpslab`) are kept, later
//! lines overriding earlier ones, as the mysql client does.

use std::collections::BTreeMap;

/// Groups whose options a client honours, in increasing precedence.
pub const CLIENT_GROUPS: [&str; 4] = ["client", "client-mariadb", "mysql", "qpslab"];

/// Parses option-file text into the options of the client groups. Keys are normalised to
/// dashes (`ssl_ca` → `ssl-ca`). Lines that are neither headers nor options are an error.
pub fn parse_client_options(text: &str) -> Result<BTreeMap<String, String>, String> {
    // Collect per group first so precedence follows CLIENT_GROUPS, not file order.
    let mut per_group: BTreeMap<&str, BTreeMap<String, String>> = BTreeMap::new();
    let mut group: Option<String> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty()
            || line.starts_with('#')
            || line.starts_with(';')
            || line.starts_with('!')
        {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .ok_or_else(|| format!("line {}: unclosed group header '{line}'", n + 1))?;
            group = Some(name.trim().to_ascii_lowercase());
            continue;
        }
        let Some(g) = group.as_deref() else {
            return Err(format!(
                "line {}: option '{line}' outside of any [group]",
                n + 1
            ));
        };
        let Some(slot) = CLIENT_GROUPS.iter().find(|c| **c == g) else {
            continue;
        };
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), unquote(strip_comment(v.trim()))),
            None => (line, String::new()),
        };
        per_group
            .entry(slot)
            .or_default()
            .insert(key.replace('_', "-").to_ascii_lowercase(), value);
    }
    let mut out = BTreeMap::new();
    for g in CLIENT_GROUPS {
        if let Some(opts) = per_group.remove(g) {
            out.extend(opts);
        }
    }
    Ok(out)
}

fn strip_comment(v: &str) -> &str {
    if v.starts_with('"') || v.starts_with('\'') {
        return v;
    }
    match v.find(" #") {
        Some(i) => v[..i].trim_end(),
        None => v,
    }
}

fn unquote(v: &str) -> String {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1]
                .replace("\\\\", "\\")
                .replace(&format!("\\{q}"), &q.to_string());
        }
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_client_groups_with_precedence() {
        let text = "# comment\n[mysqld]\nport=1\n[mysql]\nuser=fromMysql\n[client]\nuser = bench\npassword=\"s3 cr#t\"\nssl_ca=/ca.pem # trailing\nport=3307\n";
        let o = parse_client_options(text).unwrap();
        assert_eq!(o["user"], "fromMysql", "[mysql] overrides [client]");
        assert_eq!(o["password"], "s3 cr#t");
        assert_eq!(o["ssl-ca"], "/ca.pem");
        assert_eq!(o["port"], "3307");
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_client_options("user=x\n").is_err());
        assert!(parse_client_options("[client\nuser=x\n").is_err());
    }
}
