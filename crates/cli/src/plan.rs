//! From what the user typed to what the libraries take: the run plan (through the one option
//! table and its resolver in `qpslab_lab::options`), the sandbox spec, output paths. Every
//! check that can fail on user input happens here or in that resolver, with one clear line
//! (the checks against a server's own limits are `qpslab_lab::run::ready`'s).

use crate::args::{Given, RunArgs, WorkloadFlags};
use crate::error::user;
use anyhow::Result;
use qpslab_core::WorkloadOptions;
use qpslab_lab::options::{resolve, Origin, Resolved, MAX_LOADERS};
use qpslab_sandbox::SandboxSpec;
use serde_json::Value;

/// Checks a count of loader connections.
pub fn loader_threads(flag: &str, n: u32) -> Result<u32> {
    if n == 0 || u64::from(n) > MAX_LOADERS {
        return Err(user(format!(
            "{flag} must be between 1 and {MAX_LOADERS} (got {n})"
        )));
    }
    Ok(n)
}

/// Parses repeated `--set name=value` into pairs.
pub fn parse_settings(items: &[String]) -> Result<Vec<(String, String)>> {
    items
        .iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(user(format!(
                "--set '{s}': expected NAME=VALUE, e.g. innodb_buffer_pool_size=1G"
            ))),
        })
        .collect()
}

/// The sandbox spec shared by `server start` and the embedded default: `--set` in the CLI's
/// `NAME=VALUE` form, the rest checked by [`SandboxSpec::build`].
pub fn sandbox_spec(
    name: &str,
    settings: &[String],
    cpus: Option<&str>,
    malloc: Option<&str>,
    basedir: Option<&std::path::Path>,
) -> Result<SandboxSpec> {
    let settings = parse_settings(settings)?;
    Ok(SandboxSpec::build(name, &settings, cpus, malloc, basedir)?)
}

/// Resolves options given as flags (names as in the option table) into a plan.
pub(crate) fn resolve_flags(given: &Given) -> Result<Resolved> {
    let values: Vec<(&str, Value)> = given
        .0
        .iter()
        .map(|(n, v)| (*n, Value::String(v.clone())))
        .collect();
    resolve(values.iter().map(|(n, v)| (*n, v)), Origin::Flags).map_err(user)
}

/// The workload options of `prepare`: sysbench's defaults, overridden by what was given.
pub fn workload_options(w: &WorkloadFlags) -> Result<WorkloadOptions> {
    Ok(resolve_flags(&w.0)?.plan.workload)
}

/// Builds the run plan of `qpslab run`, its seed resolved (0: from the clock) so the stored
/// plan holds the seed actually used and the run can be repeated exactly.
pub fn run_plan(a: &RunArgs) -> Result<Resolved> {
    crate::db::check(&a.db.db)?;
    crate::out::Output::new(&a.output, "run")?;
    let mut r = resolve_flags(&a.options.0)?;
    qpslab_lab::run::exec::resolve_seed(&mut r.plan);
    qpslab_lab::shard::settle_plan(&mut r.plan).map_err(|e| user(e.to_string()))?;
    Ok(r)
}

/// Builds the plan of the run options `given` (as `run`'s, seed resolved), for commands that
/// measure the workload their own way (`tune`).
pub fn options_plan(given: &Given) -> Result<Resolved> {
    let mut r = resolve_flags(given)?;
    qpslab_lab::run::exec::resolve_seed(&mut r.plan);
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings() {
        let s = parse_settings(&["a=1".into(), "b = x=y".into()]).unwrap();
        assert_eq!(
            s,
            vec![("a".into(), "1".into()), ("b".into(), "x=y".into())]
        );
        assert!(parse_settings(&["novalue".into()]).is_err());
    }

    /// `run`'s arguments that say where to run and what to write, not how to measure: the
    /// only ones a study spec does not take as `[defaults]`/`[sweep]` keys (a study has
    /// variants for servers and its own store).
    const NOT_RUN_OPTIONS: &[&str] = &[
        // A replica to watch and the rate search: a study's setup has `replica = {...}`.
        "replica",
        "rate_search",
        "max_lag",
        "target",
        "host",
        "port",
        "socket",
        "sandbox",
        "user",
        "password",
        "database",
        "defaults_file",
        "defaults_extra_file",
        "no_defaults",
        "password_file",
        "ssl_mode",
        "ssl_ca",
        // How long to wait for the target: a study's sandboxes are its own.
        "connect_timeout",
        "read_timeout",
        "settings",
        "server_cpus",
        "malloc",
        // A setup key too: `instrument_waits = true`.
        "instrument_waits",
        "basedir",
        "keep",
        // A sandbox's thread placement: in a study it is a setup's `pin` table, as `set` and
        // `cpus` are setup keys.
        "pin",
        "db",
        // Where the results go may be the server measured (docs/store.md): not a measurement
        // option; a study's store is `lab run --db`.
        "db_on_target",
        "home",
        // Output (`--format`, `--export-*`, the older `--json PATH`): not a measurement option.
        "format",
        "export_json",
        "export_csv",
        "export_md",
        "json",
        // A directory for `run`; a study has the switch `perf_profile` (its files go to the lab).
        "profile",
        // The live endpoint: `lab run --metrics-addr` serves a study's cells.
        "metrics_addr",
        "no_live_lines",
        "help",
    ];

    /// `qpslab run WORKLOAD ARGS...` resolved (no positional workload when it is empty:
    /// `--script` replaces it).
    fn cli_plan(workload: &str, args: &[String]) -> Resolved {
        use clap::Parser;
        let argv: Vec<String> = ["qpslab", "run", workload]
            .into_iter()
            .filter(|a| !a.is_empty())
            .map(String::from)
            .collect();
        let cli = crate::args::Cli::try_parse_from(argv.iter().chain(args))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        match cli.command {
            crate::args::Command::Run(a) => {
                run_plan(&a).unwrap_or_else(|e| panic!("{args:?}: {e}"))
            }
            _ => unreachable!(),
        }
    }

    fn spec_plans(body: &str) -> Vec<Resolved> {
        let text = format!("name = \"keys\"\n{body}");
        let spec = qpslab_lab::study::spec::parse("keys.toml", &text)
            .unwrap_or_else(|e| panic!("{body}: {e}"));
        let cells = qpslab_lab::study::expand::expand("keys.toml", &spec)
            .unwrap()
            .cells;
        cells
            .iter()
            .map(|c| {
                c.options
                    .resolve()
                    .unwrap_or_else(|e| panic!("{body}: {e}"))
            })
            .collect()
    }

    /// Whether the spec `[defaults]` with `key = "value"` resolves, or why not.
    fn spec_takes(key: &str, value: &str) -> Result<(), String> {
        let text = format!("name = \"keys\"\n[defaults]\n{key} = \"{value}\"\n");
        let spec = qpslab_lab::study::spec::parse("keys.toml", &text).map_err(|e| e.to_string())?;
        let cells = qpslab_lab::study::expand::expand("keys.toml", &spec)
            .map_err(|e| e.to_string())?
            .cells;
        cells
            .iter()
            .try_for_each(|c| c.options.resolve().map(drop).map_err(|e| e.to_string()))
    }

    /// Every workload and run option of `qpslab run --help` is a study key, in `[defaults]` and
    /// in `[sweep]`, and means the same there: the plans are equal. The list comes from the CLI
    /// definition, so an option added to `run` alone fails here.
    #[test]
    fn every_run_option_is_a_study_key() {
        use clap::CommandFactory;
        use qpslab_lab::options::{Scope, Study};
        let cmd = crate::args::Cli::command();
        let run = cmd.find_subcommand("run").unwrap();
        // First every offender at once: an option of `run` that is neither a key a study
        // takes nor marked in the option table as one that makes no sense in a study.
        let offenders: Vec<String> = run
            .get_arguments()
            .map(|a| a.get_id().as_str())
            .filter(|id| !NOT_RUN_OPTIONS.contains(id))
            .filter_map(|id| match qpslab_lab::options::find(id) {
                None => Some(format!("{id}: not in the option table")),
                Some(def) if matches!(def.study, Study::Exempt(why) if why.len() > 20) => None,
                Some(def) => spec_takes(def.name, def.example)
                    .err()
                    .map(|e| format!("{id}: a study refuses it ({e})")),
            })
            .collect();
        assert!(
            offenders.is_empty(),
            "`run` options that are neither a study key nor exempt with a reason in the \
             option table:\n  {}",
            offenders.join("\n  ")
        );
        let mut checked = 0;
        for arg in run.get_arguments() {
            let id = arg.get_id().as_str();
            if NOT_RUN_OPTIONS.contains(&id) {
                continue;
            }
            let def = qpslab_lab::options::find(id)
                .unwrap_or_else(|| panic!("`run` has --{id}, which is not in the option table"));
            if def.study != Study::Key {
                continue;
            }
            if def.scope == Scope::Study {
                // A flag declared with `run`'s own arguments (the connection's
                // `--max-allowed-packet`): the key gives what the flag's parser gives.
                assert_eq!(def.name, "max_allowed_packet", "--{id}: which flag is it?");
                let flag = qpslab_lab::request::target::max_allowed_packet(
                    "--max-allowed-packet",
                    def.example,
                )
                .unwrap();
                for got in [
                    spec_plans(&format!("[defaults]\n{id} = \"{}\"\n", def.example)),
                    spec_plans(&format!("[sweep]\n{id} = [\"{}\"]\n", def.example)),
                ] {
                    assert_eq!(got[0].max_allowed_packet, Some(flag), "{id}");
                }
                checked += 1;
                continue;
            }
            // The one default that differs on purpose (studies warm up until flat) and the
            // clock seed are pinned on both sides.
            let mut flags = vec![];
            let mut keys = String::new();
            // Options that only act with another one get it.
            let warmup = if def.name == "warmup_max" {
                "auto"
            } else {
                "0"
            };
            let rate = if def.name == "rate_arrival" {
                "100"
            } else {
                "0"
            };
            // TPC-C's run options act on tpcc only, a think-time scale in spec mode only.
            let tpcc = ["mode", "think_scale", "check"].contains(&def.name);
            let workload = if tpcc { "tpcc" } else { "oltp_read_only" };
            let mut pinned = vec![
                ("warmup", warmup),
                ("rate", rate),
                ("rand_seed", "7"),
                ("workload", workload),
            ];
            if def.name == "think_scale" {
                pinned.push(("mode", "spec"));
            }
            for (name, v) in pinned {
                if name != def.name {
                    if name != "workload" {
                        flags.extend([format!("--{}", name.replace('_', "-")), v.to_string()]);
                    }
                    keys.push_str(&format!("{name} = \"{v}\"\n"));
                }
            }
            if def.positional() {
                flags.clear();
                flags
                    .extend(["--warmup", "0", "--rate", "0", "--rand-seed", "7"].map(String::from));
            }
            let want = if def.positional() {
                cli_plan(def.example, &flags)
            } else {
                let mut f = flags.clone();
                f.extend([def.flag(), def.example.to_string()]);
                // `--script` is given instead of the workload (the spec may name both: the
                // script runs, the default workload stays in the plan on both sides).
                let workload = if def.name == "script" { "" } else { workload };
                cli_plan(workload, &f)
            };
            let defaults = spec_plans(&format!(
                "[defaults]\n{keys}{} = \"{}\"\n",
                def.name, def.example
            ));
            let swept = spec_plans(&format!(
                "[defaults]\n{keys}[sweep]\n{} = [\"{}\"]\n",
                def.name, def.example
            ));
            for got in [&defaults[0], &swept[0]] {
                assert_eq!(
                    got.plan, want.plan,
                    "{}: the study key and the flag differ",
                    def.name
                );
                assert_eq!(got.prepare_threads, want.prepare_threads, "{}", def.name);
            }
            assert_ne!(
                want,
                cli_plan(workload, &flags),
                "{}: the example changes nothing",
                def.name
            );
            checked += 1;
        }
        assert!(checked >= 40, "only {checked} options checked");
    }
}
