//! The commands a user runs to build or drop a dataset on their own server, as `run` prints
//! them when it only checks (see `check::check_only`): the target without its password, every
//! argument quoted for a POSIX shell.

use qpslab_core::WorkloadOptions;

/// The `qpslab prepare` command that builds the dataset of `w` on the target that
/// `target_args` name (already free of passwords): the options that shape the tables, each
/// argument quoted for a POSIX shell when it needs it.
pub fn prepare_command(w: &WorkloadOptions, target_args: &[String]) -> String {
    let d = WorkloadOptions::new(w.kind);
    let mut args: Vec<String> = ["qpslab", "prepare", w.kind.name()]
        .map(String::from)
        .to_vec();
    let mut opt = |name: &str, value: String| {
        args.push(format!("--{name}"));
        args.push(value);
    };
    opt("tables", w.tables.to_string());
    opt("table-size", w.table_size.to_string());
    let onoff = |b: bool| if b { "on" } else { "off" }.to_string();
    if w.auto_inc != d.auto_inc {
        opt("auto-inc", onoff(w.auto_inc));
    }
    if w.secondary != d.secondary {
        opt("secondary", onoff(w.secondary));
    }
    if w.create_secondary != d.create_secondary {
        opt("create-secondary", onoff(w.create_secondary));
    }
    if w.storage_engine != d.storage_engine {
        opt("mysql-storage-engine", w.storage_engine.clone());
    }
    if w.create_table_options != d.create_table_options {
        opt("create-table-options", w.create_table_options.clone());
    }
    args.extend(target_args.iter().cloned());
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `qpslab cleanup` command for the target that `target_args` name (no password).
pub fn cleanup_command(target_args: &[String]) -> String {
    std::iter::once("qpslab cleanup".to_string())
        .chain(target_args.iter().map(|a| shell_quote(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `a` as one POSIX shell word.
pub fn shell_quote(a: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@,+%".contains(c);
    if !a.is_empty() && a.chars().all(plain) {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::WorkloadKind;

    #[test]
    fn prepare_command_names_the_shape_and_quotes() {
        let mut w = WorkloadOptions::new(WorkloadKind::OltpReadOnly);
        w.tables = 3;
        w.table_size = 500;
        w.auto_inc = !w.auto_inc;
        let target = [
            "--target".to_string(),
            "mysql://u@h/db?ssl-mode=REQUIRED".into(),
        ];
        let c = prepare_command(&w, &target);
        assert!(
            c.starts_with("qpslab prepare oltp_read_only --tables 3 --table-size 500 --auto-inc "),
            "{c}"
        );
        assert!(
            c.ends_with(" --target 'mysql://u@h/db?ssl-mode=REQUIRED'"),
            "{c}"
        );
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
