//! The `--out` file: a my.cnf `[mysqld]` section of only the settings the tuner changed and
//! confirmed, each with a comment on its measured effect; or, without a confirmed gain, a
//! section that changes nothing and says why. Pure, tested against a golden file.

/// One confirmed setting.
#[derive(Clone, Debug)]
pub struct CnfSetting {
    /// The variable.
    pub name: String,
    /// Its tuned value.
    pub value: String,
    /// Its measured effect in words.
    pub effect: String,
    /// It trades crash safety for speed.
    pub durability: bool,
}

/// The file: header lines (without `# `), then the settings (none: no significant gain).
#[derive(Clone, Debug)]
pub struct Cnf {
    /// What was tuned, on which server, and the confirmation's result.
    pub header: Vec<String>,
    /// The confirmed settings.
    pub settings: Vec<CnfSetting>,
}

/// The file's text.
pub fn render(c: &Cnf) -> String {
    let mut out = String::new();
    for line in &c.header {
        out.push_str(&format!("# {line}\n"));
    }
    out.push_str("[mysqld]\n");
    if c.settings.is_empty() {
        out.push_str("# no significant gain: nothing to change\n");
    }
    for s in &c.settings {
        out.push_str(&format!("# {}\n", s.effect));
        if s.durability {
            out.push_str("# durability: trades crash safety for speed (--durability relaxed)\n");
        }
        out.push_str(&format!("{} = {}\n", s.name, s.value));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::tests::golden;

    #[test]
    fn tuned_cnf_golden() {
        let c = Cnf {
            header: vec![
                "qpslab tune: oltp_read_only, 4 thread(s), 10.11.6-MariaDB, budget 90 s".into(),
                "confirmed: tuned/baseline tps 3.12 [2.80, 3.47] (95%, 3 runs each, study tune-1)"
                    .into(),
            ],
            settings: vec![
                CnfSetting {
                    name: "innodb_buffer_pool_size".into(),
                    value: "512M".into(),
                    effect: "was 8M; alone in the search: tps ×3.05 (rung 0)".into(),
                    durability: false,
                },
                CnfSetting {
                    name: "innodb_flush_log_at_trx_commit".into(),
                    value: "2".into(),
                    effect: "was 1; not measured alone (part of the confirmed set)".into(),
                    durability: true,
                },
            ],
        };
        golden("tune.cnf", &render(&c));
        let none = Cnf {
            header: vec!["qpslab tune: no significant gain".into()],
            settings: vec![],
        };
        golden("tune_none.cnf", &render(&none));
    }
}
