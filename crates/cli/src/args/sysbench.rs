//! sysbench's and mysql's command lines as typed, rewritten into qpslab's before clap reads
//! them: sysbench's word order (`qpslab [OPTIONS] TESTNAME COMMAND`, and every argument when
//! the binary is called as `sysbench`), mysql's first-option habit (`qpslab --defaults-file=F
//! run ...`), and sysbench's options that qpslab has no flag for: each is given its meaning,
//! ignored with a note where it has no effect here, or refused with the reason. The options
//! that do have a meaning here are in the one option table (`db_ps_mode`, `percentile`,
//! `warmup_time`), not in this module.

use super::sysbench_meaning::{on, options, shown, Item};
use clap::{Command, CommandFactory};
use std::ffi::OsString;

/// The arguments clap is to read, and the notes to print about options left out.
#[derive(Debug, PartialEq, Eq)]
pub struct Rewritten {
    /// The arguments, `argv[0]` first.
    pub args: Vec<OsString>,
    /// One line each: an option accepted and ignored, and why.
    pub notes: Vec<String>,
    /// Called as sysbench (a link named `sysbench`, or `qpslab sysbench ...`): standard output
    /// is to be sysbench's.
    pub sysbench: bool,
}

/// sysbench's commands, in its word order after the test name (`check`: sysbench-tpcc's).
const SYSBENCH_COMMANDS: [&str; 5] = ["prepare", "run", "cleanup", "check", "help"];

/// sysbench's form, for a line called as sysbench that has no command.
const SYSBENCH_FORM: &str =
    "sysbench's form is `sysbench [OPTIONS] TESTNAME prepare|run|cleanup|help`";

/// The one line for a bare `-h`: it is the host here, as in the mysql client.
pub const BARE_H: &str =
    "-h is the server's host, as the mysql client's (-h HOST); help is --help or -?";

/// The options taking a value as the next word, long names and short letters, of every
/// command (so that `--tables 4` is not read as the word `4`).
fn value_options(cmd: &Command) -> (Vec<String>, Vec<char>) {
    let mut longs = Vec::new();
    let mut shorts = Vec::new();
    let mut stack = vec![cmd];
    while let Some(c) = stack.pop() {
        for a in c.get_arguments() {
            if a.is_positional() || a.is_require_equals_set() || !a.get_action().takes_values() {
                continue;
            }
            longs.extend(a.get_long().map(String::from));
            longs.extend(a.get_all_aliases().into_iter().flatten().map(String::from));
            shorts.extend(a.get_short());
        }
        stack.extend(c.get_subcommands());
    }
    // sysbench's deprecated names, rewritten below.
    for l in ["max-time", "max-requests", "num-threads", "tx-rate"] {
        longs.extend([l.to_string(), l.replace('-', "_")]);
    }
    (longs, shorts)
}

/// The words split into options (with their values) and other words.
fn items(words: &[String], cmd: &Command) -> Vec<Item> {
    let (longs, shorts) = value_options(cmd);
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        // A switch typed bare before sysbench's command (`--skip_trx run`) does not take it.
        let takes_next = |name: &str, i: usize| {
            i < words.len()
                && !SYSBENCH_COMMANDS.contains(&words[i].as_str())
                && longs.iter().any(|l| l == name)
        };
        if let Some(long) = w.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (long.to_string(), None),
            };
            let mut raw = vec![w.clone()];
            let value = if value.is_none() && takes_next(&name, i) {
                raw.push(words[i].clone());
                i += 1;
                Some(words[i - 1].clone())
            } else {
                value
            };
            out.push(Item::Opt { raw, name, value });
        } else if w.len() > 1 && w.starts_with('-') {
            let mut raw = vec![w.clone()];
            let short = w.chars().nth(1).filter(|_| w.chars().count() == 2);
            if short.is_some_and(|c| shorts.contains(&c)) && i < words.len() {
                raw.push(words[i].clone());
                i += 1;
            }
            out.push(Item::Opt {
                raw,
                name: w.trim_start_matches('-').to_string(),
                value: None,
            });
        } else {
            out.push(Item::Word(w.clone()));
        }
    }
    out
}

/// A sysbench test name as qpslab's workload: `/usr/share/sysbench/oltp_read_write.lua` is
/// `oltp_read_write`.
fn test_name(word: &str) -> String {
    match word.strip_suffix(".lua") {
        Some(path) => path.rsplit('/').next().unwrap_or(path).to_string(),
        None => word.to_string(),
    }
}

/// The arguments rewritten (see the module's documentation), or the one line saying why a
/// command line cannot be run as typed (exit 2).
pub fn rewrite(args: Vec<OsString>) -> Result<Rewritten, String> {
    let unchanged = |args: Vec<OsString>| Rewritten {
        args,
        notes: Vec::new(),
        sysbench: false,
    };
    // Words that are not text are left to clap, which says so.
    let Some(mut words) = args
        .iter()
        .map(|a| a.to_str().map(String::from))
        .collect::<Option<Vec<String>>>()
    else {
        return Ok(unchanged(args));
    };
    if words.is_empty() {
        return Ok(unchanged(args));
    }
    let argv0 = words.remove(0);
    let tail = match words.iter().position(|w| w == "--") {
        Some(at) => words.split_off(at),
        None => Vec::new(),
    };
    if let Some(at) = words.iter().position(|w| w == "-h") {
        if words.get(at + 1).is_none_or(|next| next.starts_with('-')) {
            return Err(BARE_H.into());
        }
    }
    // `qpslab sysbench ARGS` is the link's line.
    let called = words.first().is_some_and(|w| w == "sysbench");
    if called {
        words.remove(0);
    }
    let sysbench = called
        || std::path::Path::new(&argv0)
            .file_name()
            .is_some_and(|n| n == "sysbench");
    let unchanged = |args: Vec<OsString>| Rewritten {
        sysbench,
        ..unchanged(args)
    };
    let cli = super::Cli::command();
    let items = config_file(items(&words, &cli), &cli)?;
    let is_sub = |w: &str| w == "help" || cli.get_subcommands().any(|c| c.get_name() == w);
    let first_word = items.iter().position(|i| matches!(i, Item::Word(_)));
    let word = |at: usize| match &items[at] {
        Item::Word(w) => w.clone(),
        Item::Opt { .. } => String::new(),
    };
    // The command's position, and the test's when it comes before the command.
    let (at, test) = match first_word {
        None if !sysbench => return Ok(unchanged(args)),
        Some(at) if !sysbench && is_sub(&word(at)) => (at, None),
        _ => match sysbench_order(&items) {
            Some((command, test)) => (command, Some(test)),
            None if sysbench && first_word.is_none() => {
                return Ok(unchanged(sysbench_meta(&items, argv0)));
            }
            None if sysbench => return Err(SYSBENCH_FORM.into()),
            // Not sysbench's order either: clap says what is wrong.
            None => return Ok(unchanged(args)),
        },
    };
    let command = word(at);
    // Options of qpslab's own before the command (`-q run`) stay there.
    let prefix = match test {
        None if items[..at].iter().all(|i| global(i, &cli)) => at,
        _ => 0,
    };
    let test_item = test.map(|t| match &items[t] {
        Item::Word(w) => test_name(w),
        Item::Opt { value, .. } => test_name(value.as_deref().unwrap_or_default()),
    });
    let test_item = match test_item {
        Some(t) => Some(legacy_test(&t, &items)?),
        None => None,
    };
    let rest: Vec<Item> = items
        .iter()
        .enumerate()
        .filter(|(i, _)| *i >= prefix && *i != at && Some(*i) != test)
        .map(|(_, item)| item.clone())
        .collect();
    let (command, help) = match command.as_str() {
        "help" if test_item.is_some() => ("run".to_string(), true),
        _ => (command, false),
    };
    let mut notes = Vec::new();
    let rest = if SYSBENCH_COMMANDS.contains(&command.as_str()) {
        options(rest, &command, &mut notes)?
    } else {
        rest
    };
    let (command, test_item, mut rest) = match test.and(test_item.as_deref()) {
        Some("fileio") => fileio(&command, rest)?,
        Some("tpcc") => (command.clone(), test_item, tpcc(&command, rest, &mut notes)),
        Some(t @ ("cpu" | "memory" | "threads" | "mutex")) => {
            return Err(format!(
                "sysbench's {t} test measures the machine, not a database server: qpslab has \
                 no such test"
            ))
        }
        _ => (command, test_item, rest),
    };
    // sysbench prints no interval lines unless --report-interval asks for them.
    let asks = |i: &Item| {
        matches!(
            i.key().as_deref(),
            Some("report_interval" | "no_live_lines")
        )
    };
    let runs = command == "run" || (command == "io" && test_item.is_some());
    if sysbench && runs && !rest.iter().any(asks) {
        rest.push(Item::Opt {
            raw: vec!["--no-live-lines".into()],
            name: "no_live_lines".into(),
            value: None,
        });
    }
    // sysbench prepares with its one default thread unless --threads says otherwise.
    let threads = |i: &Item| i.key().as_deref() == Some("threads");
    if sysbench && command == "prepare" && !rest.iter().any(threads) {
        rest.push(Item::Opt {
            raw: vec!["--threads=1".into()],
            name: "threads".into(),
            value: Some("1".into()),
        });
    }
    let mut out: Vec<OsString> = vec![argv0.into()];
    for item in &items[..prefix] {
        if let Item::Opt { raw, .. } = item {
            out.extend(raw.iter().map(OsString::from));
        }
    }
    out.push(command.into());
    out.extend(test_item.map(OsString::from));
    for item in rest {
        match item {
            Item::Word(w) => out.push(w.into()),
            Item::Opt { raw, .. } => out.extend(raw.into_iter().map(OsString::from)),
        }
    }
    if help {
        out.push("--help".into());
    }
    out.extend(tail.into_iter().map(OsString::from));
    Ok(Rewritten {
        args: out,
        notes,
        sysbench,
    })
}

/// sysbench 0.4's and 0.5's test names (`--test=oltp`, `--test=tests/db/select.lua`) as
/// sysbench 1.0's: `oltp` is `oltp_read_write`, or `oltp_read_only` with `--oltp-read-only`,
/// or `oltp_point_select` with `--oltp-test-mode=simple`; 1.0's names pass as they are.
fn legacy_test(name: &str, items: &[Item]) -> Result<String, String> {
    let value = |key: &str| {
        items.iter().find_map(|i| match i {
            Item::Opt { value, .. } if i.key().as_deref() == Some(key) => {
                Some(value.clone().unwrap_or_else(|| "on".into()))
            }
            _ => None,
        })
    };
    let oltp = match value("oltp_test_mode").as_deref() {
        None | Some("complex") => match value("oltp_read_only").map(|v| on(Some(&v))) {
            Some(Ok(true)) => "oltp_read_only",
            Some(Err(why)) => return Err(format!("--oltp-read-only: {why}")),
            _ => "oltp_read_write",
        },
        Some("simple") => "oltp_point_select",
        Some(mode) => {
            return Err(format!(
                "--oltp-test-mode={mode}: sysbench 1.0 has no such mode; its tests are \
                 oltp_read_write (complex), oltp_point_select (simple), oltp_update_index, \
                 oltp_insert and the others of `qpslab run --help`"
            ))
        }
    };
    Ok(match name {
        "oltp" | "parallel_prepare" => oltp,
        "select" | "oltp_simple" => "oltp_point_select",
        "insert" => "oltp_insert",
        "delete" => "oltp_delete",
        "update_index" => "oltp_update_index",
        "update_non_index" => "oltp_update_non_index",
        other => other,
    }
    .to_string())
}

/// Whether `item` is an option of qpslab's own, before any command (`-q`, `--version`).
fn global(item: &Item, cli: &Command) -> bool {
    let Item::Opt { raw, .. } = item else {
        return false;
    };
    let typed = raw[0].split('=').next().unwrap_or_default();
    cli.get_arguments().any(|a| {
        a.get_long().is_some_and(|l| typed == format!("--{l}"))
            || a.get_short().is_some_and(|c| typed == format!("-{c}"))
    })
}

/// sysbench's `fileio ... prepare|run|cleanup` as `qpslab io --prepare`, `qpslab io MODE
/// --prepared` (`--file-test-mode`'s value) and `qpslab io --cleanup`: the test files live from
/// prepare to cleanup, as sysbench's do. `qpslab io MODE` alone (no `sysbench` word order)
/// keeps its all-in-one form. sysbench's defaults for the files (128 files, 2G) stand where
/// the line gives none, so that prepare, run and cleanup agree on them.
fn fileio(command: &str, rest: Vec<Item>) -> Result<(String, Option<String>, Vec<Item>), String> {
    let is_mode = |i: &Item| i.key().as_deref() == Some("file_test_mode");
    let flag = |name: &str, value: Option<&str>| Item::Opt {
        raw: vec![match value {
            Some(v) => format!("--{name}={v}"),
            None => format!("--{name}"),
        }],
        name: name.into(),
        value: value.map(String::from),
    };
    let mut rest: Vec<Item> = rest;
    for (key, default) in [("file_num", "128"), ("file_total_size", "2G")] {
        if !rest.iter().any(|i| i.key().as_deref() == Some(key)) {
            rest.push(flag(&key.replace('_', "-"), Some(default)));
        }
    }
    let mode = rest.iter().find_map(|i| match i {
        Item::Opt { value: Some(v), .. } if is_mode(i) => Some(v.clone()),
        _ => None,
    });
    let mut rest: Vec<Item> = rest.into_iter().filter(|i| !is_mode(i)).collect();
    match command {
        "prepare" | "cleanup" => {
            rest.push(flag(command, None));
            Ok(("io".into(), None, rest))
        }
        "run" => {
            let mode = mode.ok_or("sysbench's fileio test needs --file-test-mode=MODE")?;
            rest.push(flag("prepared", None));
            Ok(("io".into(), Some(mode), rest))
        }
        _ => Err(format!(
            "fileio {command}: sysbench's fileio commands are prepare, run and cleanup"
        )),
    }
}

/// sysbench-tpcc's `tpcc.lua` line, once its options have their meaning: `--tables` (its sets
/// of tables; qpslab's TPC-C loads one) left out with a note unless 1, and its run in stress
/// mode (sysbench-tpcc has no keying or think times) unless `--mode` says otherwise.
fn tpcc(command: &str, rest: Vec<Item>, notes: &mut Vec<String>) -> Vec<Item> {
    let mut out = Vec::new();
    for item in rest {
        match (&item, item.key().as_deref()) {
            (Item::Opt { value, .. }, Some("tables")) => {
                if value.as_deref().map(str::trim) != Some("1") {
                    notes.push(format!(
                        "--tables{} ignored: qpslab's TPC-C loads one set of tables, --scale \
                         warehouses in it",
                        shown(value)
                    ));
                }
            }
            _ => out.push(item),
        }
    }
    if command == "run" && !out.iter().any(|i| i.key().as_deref() == Some("mode")) {
        out.push(Item::Opt {
            raw: vec!["--mode=stress".into()],
            name: "mode".into(),
            value: Some("stress".into()),
        });
    }
    out
}

/// sysbench's order: the test (`--test=NAME` as sysbench 0.5 wrote it, else the first word),
/// then one of its commands; options anywhere. `(command's position, test's position)`.
fn sysbench_order(items: &[Item]) -> Option<(usize, usize)> {
    let test = items
        .iter()
        .position(|i| i.key().as_deref() == Some("test"))
        .or_else(|| items.iter().position(|i| matches!(i, Item::Word(_))))?;
    let command = items
        .iter()
        .enumerate()
        .skip(test + 1)
        .find_map(|(at, i)| match i {
            Item::Word(w) if SYSBENCH_COMMANDS.contains(&w.as_str()) => Some(at),
            _ => None,
        })?;
    Some((command, test))
}

/// `sysbench --version` and `sysbench --help` (no test named).
fn sysbench_meta(items: &[Item], argv0: String) -> Vec<OsString> {
    let version = items.iter().any(|i| i.key().as_deref() == Some("version"));
    let flag = if version { "--version" } else { "--help" };
    vec![argv0.into(), flag.into()]
}

/// sysbench's `--config-file=FILE`: one option a line (`threads=4`, `# comments`), read as
/// if typed first.
fn config_file(items: Vec<Item>, cli: &Command) -> Result<Vec<Item>, String> {
    let mut out = Vec::new();
    for item in items {
        match (item.key().as_deref(), &item) {
            (Some("config_file"), Item::Opt { value: Some(f), .. }) => {
                let text = std::fs::read_to_string(f)
                    .map_err(|e| format!("--config-file={f}: cannot read it: {e}"))?;
                let words: Vec<String> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(|l| format!("--{l}"))
                    .collect();
                out.extend(self::items(&words, cli));
            }
            _ => out.push(item),
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "sysbench_tests.rs"]
mod tests;
