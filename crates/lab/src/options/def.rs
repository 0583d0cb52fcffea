//! What an option is: its name (the study key; the flag is the same with dashes), what it
//! takes, its help, how its value is checked and applied, and how its default is shown.

use super::builder::{Builder, MAX_SECONDS};
use super::value::{float, list, seconds};
use serde_json::Value;

/// Where an option applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The workload and its dataset: `prepare`, `run` and studies.
    Workload,
    /// How a workload is measured: `run` and studies.
    Run,
    /// No flag made from the table: study keys only (repeats, retries, transport), or an
    /// option whose `run` flag is declared with `run`'s own arguments (`max_allowed_packet`,
    /// `histogram`).
    Study,
    /// sysbench fileio's options: `qpslab io` and studies with `workload = "fileio"`.
    FileIo,
}

/// Whether a study takes an option as a `[defaults]`/`[sweep]` key: every `run` option is one,
/// or says here why it makes no sense in a study.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Study {
    /// A study key of the same name, meaning what the flag means.
    Key,
    /// Not a study key, for the reason given (refused in a spec with it).
    Exempt(&'static str),
}

/// One option.
#[derive(Clone, Copy)]
pub struct OptionDef {
    /// The study key, `table_size`; the flag is `--table-size`.
    pub name: &'static str,
    /// An older key still accepted in specs (`duration` for `time`).
    pub alias: Option<&'static str>,
    /// Where it applies.
    pub scope: Scope,
    /// The placeholder in help, `N`.
    pub value_name: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// The values it takes, if it is a choice.
    pub choices: &'static [&'static str],
    /// A valid value other than the default, as typed on a command line.
    pub example: &'static str,
    /// Whether `[sweep]` may list it (a study's shape, such as `repeats`, is set once).
    pub sweepable: bool,
    /// Whether the flag may be given several times (`--script a.sql --script b.sql`); a spec
    /// gives such an option a list.
    pub repeatable: bool,
    /// Whether its values are file paths: a spec's relative paths are taken from the spec
    /// file's directory.
    pub file: bool,
    /// Whether a study takes it, or why not.
    pub study: Study,
    pub(crate) apply: fn(&mut Builder, &Value) -> Result<(), String>,
    pub(crate) default: fn(&Builder) -> String,
}

impl OptionDef {
    /// The command-line flag, `--table-size`.
    pub fn flag(&self) -> String {
        format!("--{}", self.name.replace('_', "-"))
    }

    /// Whether the option is a command's positional argument rather than a flag.
    pub fn positional(&self) -> bool {
        self.name == "workload" || self.name == "file_test_mode"
    }
}

impl std::fmt::Debug for OptionDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

pub(crate) const fn def(
    name: &'static str,
    scope: Scope,
    value_name: &'static str,
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Builder, &Value) -> Result<(), String>,
    default: fn(&Builder) -> String,
) -> OptionDef {
    OptionDef {
        name,
        alias: None,
        scope,
        value_name,
        help,
        choices: &[],
        example,
        sweepable: true,
        repeatable: false,
        file: false,
        study: Study::Key,
        apply,
        default,
    }
}

pub(crate) const fn choices(d: OptionDef, choices: &'static [&'static str]) -> OptionDef {
    OptionDef { choices, ..d }
}

pub(crate) const ON_OFF: &[&str] = &["on", "off"];
pub(crate) const U32: u64 = u32::MAX as u64;

pub(crate) fn on_off(b: bool) -> String {
    if b { "on" } else { "off" }.into()
}

pub(crate) fn percentiles(v: &Value) -> Result<Vec<f64>, String> {
    let ps = list(v)?
        .iter()
        .map(|p| float(p).ok().filter(|p| *p > 0.0 && *p <= 100.0))
        .collect::<Option<Vec<f64>>>()
        .filter(|ps| !ps.is_empty());
    ps.ok_or_else(|| format!("expects numbers in (0, 100] like 50,95,99.9, not {v}"))
}

/// The plan's percentiles as `--percentiles` takes them (`95,99`): the default shown by both
/// `percentiles` and sysbench's `percentile`.
pub(crate) fn percentiles_text(b: &Builder) -> String {
    b.plan
        .percentiles
        .iter()
        .map(f64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Seconds above zero, at most a year.
pub(crate) fn positive_seconds(v: &Value) -> Result<f64, String> {
    match seconds(v) {
        Ok(s) if s > 0.0 && s <= MAX_SECONDS => Ok(s),
        _ => Err(format!(
            "must be a positive number of seconds (5, 0.5, \"2s\", \"500ms\"), at most \
             {MAX_SECONDS} (a year); not {v}"
        )),
    }
}

/// Seconds from zero, at most a year.
pub(crate) fn bounded_seconds(v: &Value) -> Result<f64, String> {
    match seconds(v) {
        Ok(s) if s <= MAX_SECONDS => Ok(s),
        _ => Err(format!(
            "must be zero or a positive number of seconds (5, 0.5, \"2s\", \"500ms\"), at \
             most {MAX_SECONDS} (a year); not {v}"
        )),
    }
}

pub(crate) fn seconds_text(s: f64) -> String {
    format!("{s}")
}
