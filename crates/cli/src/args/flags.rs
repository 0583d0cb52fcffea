//! The run options' flags, made from the one option table (`qpslab_lab::options::OPTIONS`), so
//! that every flag of `run` and `prepare` is also a study key and is checked by the same code.
//! Each flag also takes sysbench's underscore spelling (`--table_size`) and the table's alias
//! (`--warmup-time`, `--duration`) as hidden aliases.

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use qpslab_lab::options::{resolve::default_text, OptionDef, Scope, OPTIONS};

/// Options as typed: `(option name, value)` in table order, only those given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Given(pub Vec<(&'static str, String)>);

/// The workload and its dataset's options (`prepare`).
#[derive(Clone, Debug, Default)]
pub struct WorkloadFlags(pub Given);

/// The workload's and the measurement's options (`run`).
#[derive(Clone, Debug, Default)]
pub struct RunFlags(pub Given);

/// sysbench fileio's options and the run options that apply to it (`io`).
#[derive(Clone, Debug, Default)]
pub struct IoFlags(pub Given);

/// Which options a command takes.
type Keep = fn(&OptionDef) -> bool;

const WORKLOAD: Keep = |d| d.scope == Scope::Workload;
const RUN: Keep = |d| matches!(d.scope, Scope::Workload | Scope::Run);
/// The run options `qpslab io` takes besides the fileio ones (sysbench fileio's names).
const IO_RUN: &[&str] = &["threads", "time", "report_interval"];
const IO: Keep = |d| d.scope == Scope::FileIo || IO_RUN.contains(&d.name);

/// The option given instead of the positional workload (`run --script FILE`).
const INSTEAD_OF_WORKLOAD: &str = "script";

fn arg(def: &OptionDef) -> Arg {
    let mut help = def.help.to_string();
    if !def.choices.is_empty() && !def.value_name.contains('|') {
        help.push_str(&format!(" ({})", def.choices.join(", ")));
    }
    let default = default_text(def);
    if !matches!(default.as_str(), "" | "none" | "auto") && !def.positional() {
        help.push_str(&format!(" [default: {default}]"));
    }
    let action = if def.repeatable {
        ArgAction::Append
    } else {
        ArgAction::Set
    };
    let a = Arg::new(def.name)
        .value_name(def.value_name)
        .help(help)
        .action(action);
    if def.positional() {
        a.required(true).index(1)
    } else {
        let heading = match def.scope {
            Scope::Workload => "Workload options",
            Scope::FileIo => "fileio options",
            _ => "Run options",
        };
        let a = a
            .long(def.flag().trim_start_matches('-').to_string())
            .allow_negative_numbers(true)
            .help_heading(heading);
        // sysbench's own spelling (`--table_size`) and an older or sysbench name of the
        // option (`--warmup-time`), accepted but not listed in the help.
        let a = if def.name.contains('_') {
            a.alias(def.name)
        } else {
            a
        };
        match def.alias {
            Some(alias) if alias.contains('_') => {
                a.aliases([alias.to_string(), alias.replace('_', "-")])
            }
            Some(alias) => a.alias(alias),
            None => a,
        }
    }
}

/// `io`'s switches that take no test mode (`io --prepare`, `io --cleanup`: declared in
/// `io.rs`).
const IO_WITHOUT_MODE: [&str; 2] = ["prepare", "cleanup"];

fn augment(cmd: Command, keep: Keep) -> Command {
    let defs = || OPTIONS.iter().filter(|d| keep(d));
    let cmd = defs().fold(cmd, |cmd, d| cmd.arg(arg(d)));
    let positional = defs().find(|d| d.positional());
    if positional.is_some_and(|p| p.scope == Scope::FileIo) {
        return cmd.mut_arg("file_test_mode", |a| {
            a.required(false)
                .required_unless_present_any(IO_WITHOUT_MODE)
        });
    }
    match (positional, defs().any(|d| d.name == INSTEAD_OF_WORKLOAD)) {
        (Some(p), true) => cmd.mut_arg(p.name, |a| {
            a.required(false)
                .required_unless_present(INSTEAD_OF_WORKLOAD)
                .conflicts_with(INSTEAD_OF_WORKLOAD)
        }),
        _ => cmd,
    }
}

fn given(m: &ArgMatches, keep: Keep) -> Given {
    Given(
        OPTIONS
            .iter()
            .filter(|d| keep(d))
            .flat_map(|d| {
                let values = m.get_many::<String>(d.name).into_iter().flatten();
                values.map(|v| (d.name, v.clone()))
            })
            .collect(),
    )
}

macro_rules! flag_set {
    ($ty:ident, $scopes:expr) => {
        impl FromArgMatches for $ty {
            fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
                Ok($ty(given(m, $scopes)))
            }
            fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
                self.0 = given(m, $scopes);
                Ok(())
            }
        }
        impl Args for $ty {
            fn augment_args(cmd: Command) -> Command {
                augment(cmd, $scopes)
            }
            fn augment_args_for_update(cmd: Command) -> Command {
                augment(cmd, $scopes)
            }
        }
    };
}

flag_set!(WorkloadFlags, WORKLOAD);
flag_set!(RunFlags, RUN);
flag_set!(IoFlags, IO);
