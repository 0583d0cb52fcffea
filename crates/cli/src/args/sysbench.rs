//! sysbench's and mysql's command lines as typed, rewritten into qpslab's before clap reads
//! them: sysbench's word order (`qpslab [OPTIONS] TESTNAME COMMAND`, and every argument when
//! the binary is called as `sysbench`), mysql's first-option habit (`qpslab --defaults-file=F
//! run ...`), and sysbench's options that qpslab has no flag for: each is given its meaning,
//! ignored with a note where it has no effect here, or refused with the reason. The options
//! that do have a meaning here are in the one option table (`db_ps_mode`, `percentile`,
//! `warmup_time`), not in this module.

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

/// One argument, or an option with the value it was given with.
#[derive(Clone, Debug)]
enum Item {
    /// A word that is not an option.
    Word(String),
    /// An option: its words as typed, its name (dashes and underscores as typed, without the
    /// leading dashes) and its value, if any.
    Opt {
        raw: Vec<String>,
        name: String,
        value: Option<String>,
    },
}

impl Item {
    /// sysbench's key of an option: underscores for dashes (`table_size`).
    fn key(&self) -> Option<String> {
        match self {
            Item::Opt { name, .. } => Some(name.replace('-', "_")),
            Item::Word(_) => None,
        }
    }
}

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

/// What sysbench does with the option, under qpslab.
enum Meaning {
    /// Kept as typed (qpslab has the flag).
    Keep,
    /// Given as this qpslab option instead.
    As(&'static str, Option<String>),
    /// Left out, with the note said.
    Ignore(String),
    /// Left out with no note: it asks for what qpslab does anyway.
    Drop,
}

/// sysbench's options rewritten for `command` (prepare, run, cleanup).
fn options(items: Vec<Item>, command: &str, notes: &mut Vec<String>) -> Result<Vec<Item>, String> {
    let has = |key: &str| {
        items.iter().any(|i| {
            i.key().as_deref() == Some(key)
                && matches!(i, Item::Opt { value: Some(v), .. } if v.trim() != "0")
        })
    };
    let events_given = has("events") || has("max_requests");
    let mut out = Vec::new();
    let mut left_out = Vec::new();
    for item in items {
        let Item::Opt { name, value, .. } = &item else {
            out.push(item);
            continue;
        };
        let key = name.replace('-', "_");
        let meaning = meaning(&key, value.as_deref(), events_given)
            .map_err(|why| format!("--{name}{}: {why}", shown(value)))?;
        // Renamed first (`--max-time` is `--time`), then left out where the command has no
        // use for it (sysbench reads every option for every command).
        let (item, key) = match meaning {
            Meaning::Keep => (item.clone(), key),
            Meaning::As(to, v) => (
                Item::Opt {
                    raw: vec![match &v {
                        Some(v) => format!("--{}={v}", to.replace('_', "-")),
                        None => format!("--{}", to.replace('_', "-")),
                    }],
                    name: to.to_string(),
                    value: v,
                },
                to.to_string(),
            ),
            Meaning::Ignore(why) => {
                notes.push(format!("--{name}{} ignored: {why}", shown(value)));
                continue;
            }
            Meaning::Drop => continue,
        };
        if unused_by(command, &key) {
            left_out.push(format!("--{}", key.replace('_', "-")));
            continue;
        }
        out.push(item);
    }
    if !left_out.is_empty() {
        notes.push(format!(
            "{} ignored: {}",
            left_out.join(", "),
            if command == "cleanup" {
                "cleanup drops every table of the workload qpslab created, whatever their number"
            } else if command == "check" {
                "check reads the tables as they are"
            } else {
                "prepare takes the workload's options and --threads, not the run's"
            }
        ));
    }
    Ok(out)
}

/// ` =VALUE` as typed, for messages.
fn shown(value: &Option<String>) -> String {
    value.as_ref().map_or(String::new(), |v| format!("={v}"))
}

/// Whether `command` has no use for the table option `key` (sysbench accepts every option
/// with every command; qpslab's `prepare` and `cleanup` take fewer).
fn unused_by(command: &str, key: &str) -> bool {
    use qpslab_lab::options::{find, Scope};
    if key == "histogram" || key == "no_live_lines" {
        return command != "run";
    }
    let Some(def) = find(key) else {
        return false;
    };
    match command {
        "prepare" => def.scope == Scope::Run && def.name != "threads",
        "cleanup" | "check" => {
            matches!(def.scope, Scope::Run | Scope::Workload) && !def.positional()
        }
        _ => false,
    }
}

/// A switch's value as sysbench reads it: bare is on.
fn on(value: Option<&str>) -> Result<bool, String> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None | Some("on" | "true" | "yes" | "1") => Ok(true),
        Some("off" | "false" | "no" | "0") => Ok(false),
        Some(_) => Err("expects on or off".into()),
    }
}

/// The meaning of sysbench's option `key` here (an `Err` is the reason it is refused).
fn meaning(key: &str, value: Option<&str>, events_given: bool) -> Result<Meaning, String> {
    let v = value.map(str::trim);
    let no_effect = |what: &str| Ok(Meaning::Ignore(what.to_string()));
    match key {
        "db_driver" => match v {
            Some("mysql") => no_effect("qpslab speaks the MySQL protocol only"),
            Some("help") | None => Err("qpslab's one driver is mysql".into()),
            Some(_) => {
                Err("qpslab measures MySQL-family servers only (sysbench's mysql driver)".into())
            }
        },
        // sysbench's deprecated names.
        "max_time" => match meaning("time", v, events_given)? {
            Meaning::Keep => Ok(Meaning::As("time", v.map(String::from))),
            m => Ok(m),
        },
        "max_requests" => match v {
            Some("0") => Ok(Meaning::Drop),
            _ => Ok(Meaning::As("events", v.map(String::from))),
        },
        "num_threads" => Ok(Meaning::As("threads", v.map(String::from))),
        // sysbench 0.4's and 0.5's names, as 1.0's; the test's own (read only, test mode)
        // chose the test (`legacy_test`).
        "oltp_read_only" | "oltp_test_mode" => Ok(Meaning::Drop),
        "oltp_tables_count" => Ok(Meaning::As("tables", v.map(String::from))),
        "oltp_dist_type" => Ok(Meaning::As("rand_type", v.map(String::from))),
        "mysql_table_engine" => Ok(Meaning::As("mysql_storage_engine", v.map(String::from))),
        "mysql_engine_trx" => no_effect(
            "sysbench 1.0 dropped it: the server says whether the engine has transactions",
        ),
        "oltp_table_name" => Err("sysbench 1.0 names its tables sbtest1..N (--tables N); \
                                  it has no --table-name"
            .into()),
        _ if key.starts_with("oltp_") => match qpslab_lab::options::find(&key[5..]) {
            Some(d) => Ok(Meaning::As(d.name, v.map(String::from))),
            None => Err(format!(
                "a sysbench 0.4/0.5 option; sysbench 1.0 has no --{}",
                key[5..].replace('_', "-")
            )),
        },
        "tx_rate" => Ok(Meaning::As("rate", v.map(String::from))),
        // sysbench's 0: no limit. A phase needs one of the two limits.
        "time" if v == Some("0") => match events_given {
            true => Ok(Meaning::Drop),
            false => Err("no time limit needs --events N (the phase must end)".into()),
        },
        "events" if v == Some("0") => Ok(Meaning::Drop),
        // sysbench's 0: no interval lines; qpslab still measures its intervals (the stability
        // verdict reads them) at the default one.
        "report_interval" if v == Some("0") => Ok(Meaning::As("no_live_lines", None)),
        "histogram" => Ok(Meaning::As(
            "histogram",
            Some(if on(v)? { "on" } else { "off" }.into()),
        )),
        // Percona's sysbench-tpcc (tpcc.lua): its options on qpslab's TPC-C.
        "scale" => Ok(Meaning::As("warehouses", v.map(String::from))),
        "use_fk" => Ok(Meaning::As(
            "foreign_keys",
            Some(if on(v)? { "on" } else { "off" }.into()),
        )),
        "trx_level" => match v.map(str::to_ascii_uppercase).as_deref() {
            Some("RR" | "RC" | "SER" | "RU") => no_effect(
                "qpslab's TPC-C runs at the server's isolation level (its \
                 transaction_isolation; --set transaction_isolation=... on a sandbox)",
            ),
            _ => Err("expects RR, RC, SER or RU".into()),
        },
        "enable_purge" => no_effect("qpslab's TPC-C has no purge transaction (sysbench-tpcc's)"),
        "force_pk" => no_effect("qpslab's TPC-C tables always have their primary keys"),
        "enable_pp" | "enable_sparse" => {
            no_effect("qpslab's TPC-C tables are not partitioned or sparse")
        }
        "mysql_ssl" => Ok(Meaning::As(
            "ssl_mode",
            Some(if on(v)? { "REQUIRED" } else { "DISABLED" }.into()),
        )),
        "mysql_host" | "mysql_port" | "mysql_socket" if v.is_some_and(|v| v.contains(',')) => {
            Err("qpslab measures one server: give one".into())
        }
        "mysql_dry_run" => match on(v)? {
            true => Err("qpslab has no dry run: every statement goes to the server".into()),
            false => Ok(Meaning::Drop),
        },
        "mysql_compression" => match on(v)? {
            true => Err("qpslab's client does not compress the protocol".into()),
            false => Ok(Meaning::Drop),
        },
        "verbosity" => no_effect("qpslab's verbosity is -q / -v"),
        "thread_init_timeout" => no_effect("qpslab opens every session before the phase starts"),
        "forced_shutdown" => {
            no_effect("qpslab stops a phase at its limit, waiting at most for replies in flight")
        }
        "db_debug" | "debug" | "mysql_debug" => no_effect("qpslab's detail is -v"),
        "thread_stack_size" => no_effect("qpslab's sessions are not threads"),
        "validate" => no_effect("qpslab's checks are `qpslab check`"),
        "mysql_ssl_cipher" => no_effect("the TLS library chooses the cipher"),
        "report_checkpoints" => {
            no_effect("qpslab stores every interval's figures instead (qpslab show)")
        }
        "pgsql_variant" | "pgsql_host" | "pgsql_port" | "pgsql_user" | "pgsql_password"
        | "pgsql_db" => no_effect("PostgreSQL's options: qpslab measures MySQL-family servers"),
        // sysbench's switches typed bare (`--skip_trx`) are on.
        _ if v.is_none() => match qpslab_lab::options::find(key) {
            Some(d) if d.choices.contains(&"on") => Ok(Meaning::As(d.name, Some("on".into()))),
            _ => Ok(Meaning::Keep),
        },
        _ => Ok(Meaning::Keep),
    }
}

#[cfg(test)]
#[path = "sysbench_tests.rs"]
mod tests;
