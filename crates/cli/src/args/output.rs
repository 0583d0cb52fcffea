//! The one output convention of every command, declared once: `--format` for what goes to
//! standard output, `--export-json/-csv/-md PATH` for files (as hyperfine does).
//!
//! A command's [`OutputArgs`] names in its `F` parameter the formats it writes ([`Formats`]):
//! its `--help` lists them (and hides `--export-csv`/`--export-md` where it has no such form),
//! and `crate::out::Output::new` refuses the others. The spellings of older versions stay as
//! hidden aliases, through the `L` parameter: a `--json` switch ([`JsonSwitch`]: `--format
//! json`), a `--json PATH` ([`JsonPath`]: `--export-json PATH`), or neither ([`NoLegacy`]).

use clap::{Args, Command, FromArgMatches, ValueEnum};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// Every output format; each command writes some of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for a terminal.
    Table,
    /// JSON (the same document as --export-json writes).
    Json,
    /// CSV with a header line, where the output is a table of rows.
    Csv,
    /// Markdown.
    Md,
    /// One self-contained HTML file.
    Html,
}

impl Format {
    /// The name the user types.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Md => "md",
            Format::Html => "html",
        }
    }
}

/// The formats a command writes, the first its default.
pub trait Formats {
    /// The formats, the default first.
    const CAN: &'static [Format];
    /// The default, as `--help` says it.
    const DEFAULT: &'static str;
}

macro_rules! formats {
    ($(#[$doc:meta])* $name:ident = [$($f:ident),+], $default:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        impl Formats for $name {
            const CAN: &'static [Format] = &[$(Format::$f),+];
            const DEFAULT: &'static str = $default;
        }
    };
}

formats!(
    /// A result that is one document.
    TableJson = [Table, Json], "table"
);
formats!(
    /// A result that is rows.
    TableJsonCsv = [Table, Json, Csv], "table"
);
formats!(
    /// A result that is rows, with a Markdown form (`history`).
    TableJsonCsvMd = [Table, Json, Csv, Md], "table"
);
formats!(
    /// A result with a Markdown form.
    TableJsonMd = [Table, Json, Md], "table"
);
formats!(
    /// A result with a Markdown and an HTML form (`diff`).
    TableJsonMdHtml = [Table, Json, Md, Html], "table"
);
formats!(
    /// A report (`report`): html unless `--out`'s extension says md or json.
    HtmlMdJson = [Html, Md, Json], "html, or from --out's extension"
);

/// `--format` and the `--export-*` files of a command that writes the formats `F`.
#[derive(Debug, Clone, Default)]
pub struct OutputArgs<F: Formats, L: Args + FromArgMatches + Legacy = NoLegacy> {
    /// The flags as typed.
    pub flags: OutputFlags<L>,
    formats: PhantomData<F>,
}

/// The flags of [`OutputArgs`], the same for every command.
#[derive(Args, Debug, Clone, Default)]
pub struct OutputFlags<L: Args + FromArgMatches + Legacy = NoLegacy> {
    /// What to print on standard output (each command says which formats it writes).
    #[arg(
        long,
        value_enum,
        value_name = "FORMAT",
        hide_possible_values = true,
        help_heading = "Output"
    )]
    pub format: Option<Format>,
    /// Also write the JSON document (the one --format json prints) to PATH, atomically.
    #[arg(long, value_name = "PATH", help_heading = "Output")]
    pub export_json: Option<PathBuf>,
    /// Also write the CSV table to PATH, atomically.
    #[arg(long, value_name = "PATH", help_heading = "Output")]
    pub export_csv: Option<PathBuf>,
    /// Also write the Markdown form to PATH, atomically.
    #[arg(long, value_name = "PATH", help_heading = "Output")]
    pub export_md: Option<PathBuf>,
    #[command(flatten)]
    pub legacy: L,
}

/// An older spelling kept as a hidden alias.
pub trait Legacy {
    /// The format it asks for on standard output.
    fn format(&self) -> Option<Format> {
        None
    }
    /// The JSON file it asks for.
    fn export_json(&self) -> Option<&Path> {
        None
    }
}

/// No older spelling.
#[derive(Args, Debug, Clone, Default)]
pub struct NoLegacy {}

impl Legacy for NoLegacy {}

/// `--json` as a switch: `--format json`.
#[derive(Args, Debug, Clone, Default)]
pub struct JsonSwitch {
    /// Same as --format json (older spelling).
    #[arg(long = "json", hide = true, conflicts_with = "format")]
    pub json: bool,
}

impl Legacy for JsonSwitch {
    fn format(&self) -> Option<Format> {
        self.json.then_some(Format::Json)
    }
}

/// `--json PATH`: `--export-json PATH`.
#[derive(Args, Debug, Clone, Default)]
pub struct JsonPath {
    /// Same as --export-json PATH (older spelling).
    #[arg(
        long = "json",
        value_name = "PATH",
        hide = true,
        conflicts_with = "export_json"
    )]
    pub json: Option<PathBuf>,
}

impl Legacy for JsonPath {
    fn export_json(&self) -> Option<&Path> {
        self.json.as_deref()
    }
}

impl<F: Formats, L: Args + FromArgMatches + Legacy> OutputArgs<F, L> {
    /// The output `flags` ask of a command that writes `F`.
    pub fn new(flags: OutputFlags<L>) -> Self {
        OutputArgs {
            flags,
            formats: PhantomData,
        }
    }
}

/// `--format`'s help from the formats `F`, and the exports `F` has no form for hidden.
fn tailor<F: Formats>(cmd: Command) -> Command {
    let names: Vec<_> = F::CAN.iter().map(|f| f.name()).collect();
    let help = format!(
        "What to print on standard output: {} (default: {})",
        names.join(", "),
        F::DEFAULT
    );
    cmd.mut_arg("format", |a| {
        a.help(help).value_parser(FormatParser(F::CAN))
    })
    .mut_arg("export_csv", |a| a.hide(!F::CAN.contains(&Format::Csv)))
    .mut_arg("export_md", |a| a.hide(!F::CAN.contains(&Format::Md)))
}

/// `--format`'s parser: reads every format (so that `Output::new` refuses one the command does
/// not write with its own message) but lists only the command's, for the completion scripts.
#[derive(Clone)]
struct FormatParser(&'static [Format]);

impl clap::builder::TypedValueParser for FormatParser {
    type Value = Format;

    fn parse_ref(
        &self,
        cmd: &Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Format, clap::Error> {
        clap::builder::EnumValueParser::<Format>::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.0
                .iter()
                .map(|f| clap::builder::PossibleValue::new(f.name())),
        ))
    }
}

impl<F: Formats, L: Args + FromArgMatches + Legacy> Args for OutputArgs<F, L> {
    fn augment_args(cmd: Command) -> Command {
        tailor::<F>(OutputFlags::<L>::augment_args(cmd))
    }
    fn augment_args_for_update(cmd: Command) -> Command {
        tailor::<F>(OutputFlags::<L>::augment_args_for_update(cmd))
    }
}

impl<F: Formats, L: Args + FromArgMatches + Legacy> FromArgMatches for OutputArgs<F, L> {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(OutputArgs::new(OutputFlags::from_arg_matches(m)?))
    }
    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        self.flags.update_from_arg_matches(m)
    }
}

/// What the user asked for, older spellings resolved, and what the command can write: all
/// `crate::out::Output` needs to know of the flags (so that clap stays in `args`).
pub trait Asked {
    /// The formats the command writes, the default first.
    fn can(&self) -> &'static [Format];
    /// The format asked for, if any.
    fn format(&self) -> Option<Format>;
    /// Each file asked for, with the flag that named it and its format.
    fn exports(&self) -> Vec<(&'static str, Format, &Path)>;
}

impl<F: Formats, L: Args + FromArgMatches + Legacy> Asked for OutputArgs<F, L> {
    fn can(&self) -> &'static [Format] {
        F::CAN
    }

    fn format(&self) -> Option<Format> {
        let f = &self.flags;
        f.format.or(f.legacy.format())
    }

    fn exports(&self) -> Vec<(&'static str, Format, &Path)> {
        let f = &self.flags;
        let json = f.export_json.as_deref().map(|p| ("--export-json", p));
        let legacy = f.legacy.export_json().map(|p| ("--json", p));
        [
            json.or(legacy).map(|(flag, p)| (flag, Format::Json, p)),
            f.export_csv
                .as_deref()
                .map(|p| ("--export-csv", Format::Csv, p)),
            f.export_md
                .as_deref()
                .map(|p| ("--export-md", Format::Md, p)),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}
