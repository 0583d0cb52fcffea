//! What the completion scripts offer for a value, added to the command only to generate them
//! (parsing never sees it): the option table's choices (`--rand-type`, `--ps`), the workload
//! names, each command's own formats (from its `OutputArgs`), file names only for a value that
//! is a file, and the lab's sandbox names, looked up when the user presses TAB.
//!
//! clap_complete writes static scripts; the sandboxes are a placeholder value that
//! [`dynamic`] turns into a call of `qpslab completions --sandbox-names` in each shell's
//! syntax.

use clap::builder::PossibleValuesParser;
use clap::{Arg, Command, ValueHint};
use qpslab_core::WorkloadKind;
use qpslab_lab::options::OPTIONS;

/// The value clap_complete writes where sandbox names go; [`dynamic`] replaces it.
const SANDBOXES: &str = "QPSLAB_SANDBOX_NAMES";

/// The shell command printing the lab's sandbox names, one a line.
const LIST_SANDBOXES: &str = "qpslab completions --sandbox-names 2>/dev/null";

/// `cmd` (a whole tree) with the values completion offers.
pub(crate) fn for_completion(cmd: Command) -> Command {
    walk(cmd, &[])
}

fn walk(mut cmd: Command, path: &[String]) -> Command {
    let mut here = path.to_vec();
    here.push(cmd.get_name().to_string());
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    for id in ids {
        let at = here.clone();
        cmd = cmd.mut_arg(id, |a| decorate(a, &at));
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for sub in subs {
        let at = here.clone();
        cmd = cmd.mut_subcommand(sub, |s| walk(s, &at));
    }
    cmd
}

/// The values of one argument of the command at `path` (`["qpslab", "server", "stop"]`).
fn decorate(a: Arg, path: &[String]) -> Arg {
    let takes_value = a.get_num_args().is_none_or(|n| n.takes_values())
        && !matches!(
            a.get_action(),
            clap::ArgAction::SetTrue
                | clap::ArgAction::SetFalse
                | clap::ArgAction::Count
                | clap::ArgAction::Help
                | clap::ArgAction::HelpShort
                | clap::ArgAction::HelpLong
                | clap::ArgAction::Version
        );
    if !takes_value {
        return a;
    }
    if let Some(values) = values(&a, path) {
        return a.value_parser(PossibleValuesParser::new(values));
    }
    if !a.get_possible_values().is_empty() || a.get_value_hint() != ValueHint::Unknown {
        return a;
    }
    let hint = if is_dir(&a) {
        ValueHint::DirPath
    } else if is_file(&a) {
        ValueHint::FilePath
    } else {
        ValueHint::Other
    };
    a.value_hint(hint)
}

/// The names offered for `a`, when they are a known list.
fn values(a: &Arg, path: &[String]) -> Option<Vec<String>> {
    let id = a.get_id().as_str();
    let under = |words: &[&str]| path.len() >= words.len() && path[..words.len()] == *words;
    if id == "sandbox" || id == "replica_of" {
        return Some(vec![SANDBOXES.to_string()]);
    }
    // `server stop NAME` and the rest name a sandbox there is; `server start NAME` a new one.
    if id == "name" && path.len() == 3 && under(&["qpslab", "server"]) {
        return (path[2] != "start").then(|| vec![SANDBOXES.to_string()]);
    }
    if id == "workload" {
        let mut names: Vec<String> = WorkloadKind::ALL
            .iter()
            .map(|k| k.name().to_string())
            .collect();
        names.push(WorkloadKind::Tpcc.name().to_string());
        return Some(names);
    }
    OPTIONS
        .iter()
        .find(|d| d.name == id && !d.choices.is_empty())
        .map(|d| d.choices.iter().map(|c| c.to_string()).collect())
}

fn is_dir(a: &Arg) -> bool {
    names(a).iter().any(|n| n == "DIR" || n == "LAB")
}

fn is_file(a: &Arg) -> bool {
    let id = a.get_id().as_str().to_ascii_lowercase();
    names(a)
        .iter()
        .any(|n| matches!(n.as_str(), "FILE" | "PATH" | "LOG" | "SPEC") || n.ends_with(".db"))
        || ["file", "path", "spec", "log", "script", "out", "db"]
            .iter()
            .any(|w| id.split('_').any(|part| part == *w))
}

fn names(a: &Arg) -> Vec<String> {
    a.get_value_names()
        .map(|v| v.iter().map(|s| s.to_string()).collect())
        .unwrap_or_default()
}

/// The script with sandbox names looked up when completing, in `shell`'s syntax, and for fish
/// the positional values clap_complete leaves out of its script (`cmd`: as [`for_completion`]
/// made it).
pub(crate) fn dynamic(shell: super::Shell, script: &str, cmd: &Command) -> String {
    use super::Shell;
    let script = match shell {
        Shell::Fish => format!("{script}{}", fish_positionals(cmd, &[])),
        _ => script.to_string(),
    };
    match shell {
        // Inside `compgen -W "..."` and the `opts="..."` lists: double quotes, so the command
        // runs when the user presses TAB.
        Shell::Bash => script.replace(SANDBOXES, &format!("$({LIST_SANDBOXES})")),
        // An action in braces is shell code zsh runs to complete.
        Shell::Zsh => script.replace(
            &format!("({SANDBOXES})"),
            &format!("{{compadd -- ${{(f)\"$({LIST_SANDBOXES})\"}}}}"),
        ),
        // fish reads a bare `?` as a wildcard (`-?`, mysql's help): quoted.
        Shell::Fish => script
            .replace(
                &format!("\"{SANDBOXES}\\t''\""),
                &format!("\"({LIST_SANDBOXES})\""),
            )
            .replace(
                &format!("\"{SANDBOXES}\""),
                &format!("\"({LIST_SANDBOXES})\""),
            )
            // fish's argparse takes no `?` option (mysql's `-?`): its long name stands for it.
            .replace(" ?/help ", " help ")
            .replace(" -s ? ", " -s '?' "),
        // Elvish and PowerShell get no sandbox names: the placeholder is dropped.
        Shell::Elvish | Shell::Powershell => script.replace(SANDBOXES, ""),
    }
}

/// fish lines offering the values of each command's positional arguments: `run`'s workload,
/// `server stop`'s sandbox.
fn fish_positionals(cmd: &Command, path: &[&str]) -> String {
    let mut out = String::new();
    if !path.is_empty() {
        let mut cond = format!("__fish_qpslab_using_subcommand {}", path[0]);
        for p in &path[1..] {
            cond += &format!("; and __fish_seen_subcommand_from {p}");
        }
        for a in cmd.get_positionals() {
            let values: Vec<String> = a
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect();
            if values.is_empty() {
                continue;
            }
            let words = if values == [SANDBOXES] {
                SANDBOXES.to_string()
            } else {
                values.join(" ")
            };
            out += &format!("complete -c qpslab -n \"{cond}\" -f -a \"{words}\"\n");
        }
    }
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let mut at = path.to_vec();
        at.push(sub.get_name());
        out += &fish_positionals(sub, &at);
    }
    out
}
