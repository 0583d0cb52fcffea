//! Run options: declared once in [`table`], read from flags (`qpslab run`) or spec keys (a
//! study's `[defaults]`, each `[sweep]` list), resolved in one place ([`resolve`]) into the
//! engine's [`qpslab_core::RunPlan`].

mod builder;
mod client_keys;
mod def;
mod io_keys;
mod label_keys;
mod live_keys;
pub mod password;
pub mod resolve;
mod run_keys;
mod script_keys;
mod shard_keys;
mod sysbench_keys;
pub mod table;
pub mod value;
mod workload_keys;

pub use builder::{
    Origin, Resolved, AUTO_SESSION_WARMUP_S, DEFAULT_RETRIES, DEFAULT_SETTLE_MAX_S,
    DEFAULT_WARMUP_MAX_S, MAX_CONNECTIONS, MAX_LOADERS, MAX_SECONDS,
};
pub use resolve::resolve;
pub use script_keys::with_base_dir;
pub use table::{find, OptionDef, Scope, Study, OPTIONS};

use crate::error::OptionError;
use indexmap::IndexMap;
use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::fmt;
use std::sync::OnceLock;

/// How a sandbox server is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// Its Unix socket (the default).
    Socket,
    /// TCP to 127.0.0.1.
    Tcp,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Socket => "socket",
            Transport::Tcp => "tcp",
        })
    }
}

/// Every option name, for "unknown key" errors.
fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| OPTIONS.iter().map(|d| d.name).collect())
}

/// Run options as written: option name → value, in the order given; unset ones take the
/// defaults. Each value was checked on its own when read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOptions(IndexMap<&'static str, Value>);

impl RunOptions {
    /// Sets option `name` (or an alias) after checking the value on its own.
    pub fn set(&mut self, name: &str, v: Value) -> Result<(), OptionError> {
        let def = find(name).ok_or_else(|| OptionError(format!("unknown run option `{name}`")))?;
        if let Study::Exempt(why) = def.study {
            return Err(OptionError(format!("{}: not a study key: {why}", def.name)));
        }
        resolve::check(def, &v).map_err(|e| OptionError(format!("{}: {e}", def.name)))?;
        self.0.insert(def.name, v);
        Ok(())
    }

    /// The value of option `name`, if set.
    pub fn get(&self, name: &str) -> Option<&Value> {
        find(name).and_then(|d| self.0.get(d.name))
    }

    /// The options set, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &Value)> {
        self.0.iter().map(|(k, v)| (*k, v))
    }

    /// Resolves the options of one study cell, naming them as spec keys in errors (the
    /// message as text: the study runner records it as the cell's failure).
    pub fn resolve(&self) -> Result<Resolved, OptionError> {
        let r = resolve(self.iter(), Origin::Spec)?;
        if r.plan.shard.is_some() {
            return Err(OptionError(
                "shard: a study measures its cells itself; run the shards of one run with \
                 `qpslab run --shard I/N` (docs/distributed.md)"
                    .into(),
            ));
        }
        if r.plan.threads.len() > 1 {
            return Err(OptionError(format!(
                "threads: a cell runs one thread count; sweep them with [sweep] threads = [{}]",
                r.plan
                    .threads
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(r)
    }

    /// The engine's plan for these options.
    pub fn to_plan(&self) -> Result<qpslab_core::RunPlan, OptionError> {
        self.resolve().map(|r| r.plan)
    }

    /// Repeats (1 unless set; an invalid value was refused when read).
    pub fn repeats(&self) -> u32 {
        self.resolve().map_or(1, |r| r.repeats)
    }
}

impl Serialize for RunOptions {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter())
    }
}

/// `[sweep]`: options over lists of values; the cells are the cross product.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepOptions(IndexMap<&'static str, Vec<Value>>);

impl SweepOptions {
    /// The swept options in the order written, each with its values.
    pub fn axes(&self) -> Vec<(&'static str, Vec<Value>)> {
        self.0.iter().map(|(k, v)| (*k, v.clone())).collect()
    }

    /// The values of option `name`, if swept.
    pub fn get(&self, name: &str) -> Option<&Vec<Value>> {
        find(name).and_then(|d| self.0.get(d.name))
    }
}

impl Serialize for SweepOptions {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter())
    }
}

/// Reads one value of `def`, checked (a list of them when `list`).
struct Checked {
    def: &'static OptionDef,
    list: bool,
}

impl<'de> DeserializeSeed<'de> for Checked {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        let v = Value::deserialize(d)?;
        let v = if self.def.file {
            script_keys::rebase(v)
        } else {
            v
        };
        let name = self.def.name;
        let each: Vec<&Value> = match (&v, self.list) {
            (Value::Array(items), true) => items.iter().collect(),
            (_, true) => {
                return Err(de::Error::custom(format!(
                    "{name}: [sweep] takes a list of values, e.g. {name} = [{}]",
                    self.def.example
                )))
            }
            (_, false) => vec![&v],
        };
        for item in each {
            resolve::check(self.def, item)
                .map_err(|e| de::Error::custom(format!("{name}: {e}")))?;
        }
        Ok(v)
    }
}

/// Reads an option's name, so that an unknown one is an error at its own place in the file.
struct Key<'a> {
    list: bool,
    seen: &'a IndexMap<&'static str, Value>,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = &'static OptionDef;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<&'static OptionDef, D::Error> {
        let key = String::deserialize(d)?;
        let def = find(&key).ok_or_else(|| de::Error::unknown_field(&key, names()))?;
        if let Study::Exempt(why) = def.study {
            return Err(de::Error::custom(format!(
                "{}: not a study key: {why}",
                def.name
            )));
        }
        if self.seen.contains_key(def.name) {
            return Err(de::Error::custom(format!(
                "{} is given twice ({} is another name for it)",
                def.name,
                def.alias.unwrap_or(def.name)
            )));
        }
        if self.list && !def.sweepable {
            return Err(de::Error::custom(format!(
                "{}: is set once, in [defaults]",
                def.name
            )));
        }
        Ok(def)
    }
}

/// Reads a table of options, one checked value (or list) per key.
struct OptionsVisitor {
    list: bool,
}

impl<'de> Visitor<'de> for OptionsVisitor {
    type Value = IndexMap<&'static str, Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table of run options")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = IndexMap::new();
        while let Some(def) = map.next_key_seed(Key {
            list: self.list,
            seen: &out,
        })? {
            let v = map.next_value_seed(Checked {
                def,
                list: self.list,
            })?;
            out.insert(def.name, v);
        }
        Ok(out)
    }
}

impl<'de> Deserialize<'de> for RunOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RunOptions, D::Error> {
        d.deserialize_map(OptionsVisitor { list: false })
            .map(RunOptions)
    }
}

impl<'de> Deserialize<'de> for SweepOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SweepOptions, D::Error> {
        let m = d.deserialize_map(OptionsVisitor { list: true })?;
        let m = m
            .into_iter()
            .map(|(k, v)| match v {
                Value::Array(items) => (k, items),
                other => (k, vec![other]),
            })
            .collect();
        Ok(SweepOptions(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Deserialize)]
    struct Doc {
        #[serde(default)]
        defaults: RunOptions,
        #[serde(default)]
        sweep: SweepOptions,
    }

    #[test]
    fn spec_keys_check_their_values() {
        let d: Doc = toml::from_str(
            "[defaults]\nduration = \"3s\"\nworkload = \"oltp_point_select\"\n[sweep]\nthreads = [1, 4]\n",
        )
        .unwrap();
        let r = d.defaults.resolve().unwrap();
        assert_eq!(r.plan.stop.time_s, Some(3.0));
        assert_eq!(d.defaults.get("time"), Some(&json!("3s")));
        assert_eq!(d.sweep.axes(), vec![("threads", vec![json!(1), json!(4)])]);
        for bad in [
            "[defaults]\ntables = 0\n",
            "[defaults]\nwarmup = \"sometimes\"\n",
            "[sweep]\nthreads = 4\n",
            "[sweep]\nrepeats = [1, 2]\n",
            "[defaults]\nduration = \"2s\"\ntime = \"3s\"\n",
            "[defaults]\nthread = 4\n",
        ] {
            assert!(toml::from_str::<Doc>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn defaults_differ_only_in_warmup() {
        let spec = RunOptions::default().resolve().unwrap();
        let flags = resolve([], Origin::Flags).unwrap();
        assert!(spec.plan.warmup_auto.is_some());
        assert!(flags.plan.warmup_auto.is_none());
        assert_eq!(spec.plan.stop, flags.plan.stop);
        assert_eq!(spec.plan.settle, flags.plan.settle);
        assert_eq!(spec.retries, DEFAULT_RETRIES);
    }

    #[test]
    fn tpcc_runs_without_the_linger_nap_unless_asked() {
        let linger = |spec: &str| {
            let d: Doc = toml::from_str(spec).unwrap();
            d.defaults.resolve().unwrap().plan.engine.linger_us
        };
        let default = qpslab_core::plan::DEFAULT_LINGER_US;
        assert_eq!(linger("[defaults]\nworkload = \"tpcc\"\n"), 0);
        assert_eq!(
            linger("[defaults]\nworkload = \"tpcc\"\nlinger_us = 200\n"),
            200
        );
        assert_eq!(
            linger("[defaults]\nworkload = \"oltp_read_write\"\n"),
            default
        );
        assert_eq!(
            linger("[defaults]\nworkload = \"oltp_read_write\"\nlinger_us = 0\n"),
            0
        );
    }

    #[test]
    fn a_pipeline_needs_events_that_are_transactions() {
        let resolve = |body: &str| {
            let d: Doc = toml::from_str(&format!("[defaults]\npipeline = \"on\"\n{body}")).unwrap();
            d.defaults
                .resolve()
                .map(|r| r.plan.pipeline)
                .map_err(|e| e.0)
        };
        for ok in [
            "tpcc",
            "oltp_read_only",
            "oltp_read_write",
            "oltp_write_only",
        ] {
            assert_eq!(resolve(&format!("workload = \"{ok}\"")), Ok(true), "{ok}");
        }
        for refused in ["oltp_point_select", "oltp_insert", "oltp_update_index"] {
            let e = resolve(&format!("workload = \"{refused}\"")).unwrap_err();
            assert!(e.contains(&format!("not {refused}")), "{e}");
        }
        let e = resolve("workload = \"oltp_read_write\"\nskip_trx = true").unwrap_err();
        assert!(e.contains("oltp_read_write with skip_trx"), "{e}");
    }
}
