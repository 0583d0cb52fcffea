//! What each sysbench option means under qpslab, for `sysbench`'s command lines
//! ([`super::sysbench::rewrite`]): kept (qpslab has the flag), given as another option
//! (sysbench's older names, sysbench-tpcc's, 0.4/0.5's), left out with a note where it changes
//! nothing here, or refused with the reason.

/// One argument, or an option with the value it was given with.
#[derive(Clone, Debug)]
pub(super) enum Item {
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
    pub(super) fn key(&self) -> Option<String> {
        match self {
            Item::Opt { name, .. } => Some(name.replace('-', "_")),
            Item::Word(_) => None,
        }
    }
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
pub(super) fn options(
    items: Vec<Item>,
    command: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Item>, String> {
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
pub(super) fn shown(value: &Option<String>) -> String {
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
pub(super) fn on(value: Option<&str>) -> Result<bool, String> {
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
        "trx_level" => match v.and_then(qpslab_core::plan::Isolation::parse) {
            Some(level) => Ok(Meaning::As("isolation", Some(level.name().into()))),
            None => Err("expects RR, RC, SER or RU".into()),
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
