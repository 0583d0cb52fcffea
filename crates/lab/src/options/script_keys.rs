//! Script workloads' options: `script` (pgbench-style SQL scripts with weights, instead of a
//! sysbench workload) and `init_sql` (SQL run once before the measured phases). Files are read
//! and checked when the options resolve, so a stored run holds the text that ran; a spec's
//! relative paths are taken from the spec file's directory ([`with_base_dir`]).

use super::builder::Builder;
use super::def::{def, OptionDef, Scope};
use super::value::text;
use qpslab_core::input;
use qpslab_core::workload::ScriptSource;
use qpslab_engine::workload::script::{init_statements, ScriptSet};
use serde_json::Value;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// The script options, in the order `run --help` lists them.
pub(crate) static SCRIPT: &[OptionDef] = &[
    OptionDef {
        repeatable: true,
        file: true,
        ..def(
            "script",
            Scope::Run,
            "FILE[@WEIGHT]",
            "Run this SQL script instead of a sysbench workload (pgbench's custom scripts: \
             statements ending in ';', \\set NAME EXPR, \\sleep N [us|ms|s], :NAME parameters); \
             repeat it for several scripts, each event picking one by weight (default 1)",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/partitioned/lookups.sql@2"
            ),
            apply_script,
            |b| script_text(&b.plan.workload.scripts),
        )
    },
    OptionDef {
        file: true,
        ..def(
            "init_sql",
            Scope::Run,
            "FILE",
            "SQL statements run once before the measured phases (a script's schema and rows)",
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../examples/partitioned/schema_range.sql"
            ),
            |b, v| {
                let src = read(&text(v)?, 1)?;
                init_statements(&src).map_err(|e| e.to_string())?;
                b.plan.workload.init_sql = Some(src);
                Ok(())
            },
            |b| {
                b.plan
                    .workload
                    .init_sql
                    .as_ref()
                    .map_or_else(String::new, |s| s.path.clone())
            },
        )
    },
];

/// `script = "a.sql@3"` (or a repeated flag) adds a script; a list sets them all.
fn apply_script(b: &mut Builder, v: &Value) -> Result<(), String> {
    let items = match v {
        Value::Array(items) => {
            b.plan.workload.scripts.clear();
            items.iter().map(text).collect::<Result<Vec<_>, _>>()?
        }
        _ => vec![text(v)?],
    };
    for item in items {
        let (path, weight) = split_weight(&item)?;
        b.plan.workload.scripts.push(read(path, weight)?);
    }
    ScriptSet::parse(&b.plan.workload.scripts).map_err(|e| e.to_string())?;
    Ok(())
}

fn script_text(scripts: &[ScriptSource]) -> String {
    let items: Vec<String> = scripts
        .iter()
        .map(|s| format!("{}@{}", s.path, s.weight))
        .collect();
    items.join(",")
}

/// `FILE@W` → (FILE, W); a name without a numeric `@` suffix has weight 1.
fn split_weight(item: &str) -> Result<(&str, u32), String> {
    match item.rsplit_once('@') {
        Some((path, w)) if !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()) => {
            let w = w
                .parse()
                .map_err(|_| format!("{item}: weight {w} is too big"))?;
            Ok((path, w))
        }
        _ => Ok((item, 1)),
    }
}

/// Reads a script file.
fn read(path: &str, weight: u32) -> Result<ScriptSource, String> {
    if path.is_empty() {
        return Err("expects a file name".into());
    }
    let text = input::read_text(Path::new(path), "a script", input::SCRIPT_LIMIT)
        .map_err(|e| e.to_string())?;
    let name = Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
    Ok(ScriptSource {
        name,
        path: path.to_string(),
        weight,
        text,
    })
}

thread_local! {
    /// The directory a spec being read lives in.
    static BASE: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// Runs `f` (reading a spec) with relative file paths taken from `dir`.
pub fn with_base_dir<T>(dir: &Path, f: impl FnOnce() -> T) -> T {
    let old = BASE.with(|b| b.replace(Some(dir.to_path_buf())));
    let out = f();
    BASE.with(|b| *b.borrow_mut() = old);
    out
}

/// A spec's file value (a string, or a list of them) with relative paths made relative to
/// the spec's directory.
pub(crate) fn rebase(v: Value) -> Value {
    match v {
        Value::String(s) => Value::String(BASE.with(|b| match &*b.borrow() {
            Some(dir) if !Path::new(&s).is_absolute() && !dir.as_os_str().is_empty() => {
                dir.join(&s).to_string_lossy().into_owned()
            }
            _ => s,
        })),
        Value::Array(items) => Value::Array(items.into_iter().map(rebase).collect()),
        v => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::builder::Origin;
    use crate::options::resolve::resolve;

    struct Dir(tempfile::TempDir);

    impl Dir {
        fn path(&self) -> &Path {
            self.0.path()
        }

        fn file(&self, name: &str, text: &str) -> String {
            let p = self.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        }
    }

    fn dir() -> Dir {
        Dir(tempfile::tempdir().unwrap())
    }

    fn flags(pairs: &[(&'static str, &str)]) -> Result<qpslab_core::RunPlan, String> {
        let values: Vec<(&str, Value)> = pairs
            .iter()
            .map(|(n, v)| (*n, Value::String(v.to_string())))
            .collect();
        resolve(values.iter().map(|(n, v)| (*n, v)), Origin::Flags)
            .map(|r| r.plan)
            .map_err(String::from)
    }

    #[test]
    fn repeated_flags_add_scripts_with_weights() {
        let d = dir();
        let a = d.file("a.sql", "SELECT 1;\n");
        let b = d.file("b.sql", "SELECT 2;\n");
        let plan = flags(&[("script", &format!("{a}@3")), ("script", &b)]).unwrap();
        let got: Vec<(&str, u32)> = plan
            .workload
            .scripts
            .iter()
            .map(|s| (s.name.as_str(), s.weight))
            .collect();
        assert_eq!(got, [("a.sql", 3), ("b.sql", 1)]);
        assert_eq!(plan.workload.scripts[1].text, "SELECT 2;\n");
        assert_eq!(plan.workload.label(), "script a.sql@3 b.sql@1");
    }

    #[test]
    fn bad_files_are_one_line_naming_the_flag_and_the_line() {
        let d = dir();
        let bad = d.file("bad.sql", "SELECT 1;\nSELECT :nope;\n");
        let e = flags(&[("script", &bad)]).unwrap_err();
        assert_eq!(
            e,
            "--script: bad.sql:2: unknown variable ':nope' (no \\set before this line)"
        );
        let e = flags(&[("script", "/nonexistent/x.sql")]).unwrap_err();
        assert!(
            e.starts_with("--script: cannot read /nonexistent/x.sql: "),
            "{e}"
        );
        let e = flags(&[("script", "/dev/zero")]).unwrap_err();
        assert_eq!(
            e,
            "--script: /dev/zero is a character device, not a regular file"
        );
        let init = d.file("init.sql", "CREATE TABLE t (id INT);\n\\set a 1\n");
        let e = flags(&[("init_sql", &init)]).unwrap_err();
        assert_eq!(
            e,
            "--init-sql: init.sql:2: '\\set': an init file takes no meta-commands"
        );
    }

    #[test]
    fn spec_paths_are_relative_to_the_spec() {
        let d = dir();
        d.file("w.sql", "SELECT 1;\n");
        let spec = "name = \"s\"\n[defaults]\nscript = [\"w.sql@2\"]\n";
        let file = d.path().join("s.toml").display().to_string();
        let spec = with_base_dir(d.path(), || crate::study::spec::parse(&file, spec)).unwrap();
        let plan = spec.defaults.to_plan().unwrap();
        let s = &plan.workload.scripts[0];
        assert_eq!(
            (s.path.as_str(), s.weight),
            (d.path().join("w.sql").to_str().unwrap(), 2)
        );
    }

    #[test]
    fn weights_split_off_the_name() {
        assert_eq!(split_weight("a.sql@3"), Ok(("a.sql", 3)));
        assert_eq!(split_weight("a@b.sql"), Ok(("a@b.sql", 1)));
        assert_eq!(split_weight("a.sql"), Ok(("a.sql", 1)));
        assert!(split_weight("a.sql@99999999999").is_err());
    }
}
