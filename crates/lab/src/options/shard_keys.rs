//! The shard options: `shard` (`--shard I/N|auto`), `shards` (the count under a launcher that
//! gives only the index), `shard_group` (the key the shards of one run share) and
//! `shard_timeout` (the longest wait for the others). They fill the plan's
//! [`qpslab_core::shard::ShardSpec`]; the launcher's environment is read when the run starts
//! (`crate::shard`), never here.

use super::builder::Builder;
use super::def::{def, positive_seconds, seconds_text, OptionDef, Scope, Study, U32};
use super::value::{int, text};
use qpslab_core::shard::{self, ShardSpec};

/// The shard options, in the order `run --help` lists them.
pub(crate) static SHARD: &[OptionDef] = &[
    OptionDef {
        sweepable: false,
        study: Study::Exempt(
            "a study's cells run on one client host, one process each; sharding a run over several processes or hosts is `run`'s multi-host mode",
        ),
        ..def(
            "shard",
            Scope::Run,
            "I/N|auto",
            "Measure shard I of N (0-based) of a run that N processes share against one server, \
             its share of --threads and --rate; `auto` reads I and N from Slurm, Open MPI or a \
             Kubernetes Indexed Job (docs/distributed.md); merge the shards with `qpslab merge`",
            "1/3",
            |b, v| {
                let (index, count) = shard::parse(&text(v)?).map_err(|e| e.to_string())?;
                let s = spec(b);
                s.index = index;
                if count.is_some() {
                    s.count = count;
                }
                Ok(())
            },
            |b| match b.plan.shard.as_ref().map(|s| (s.index, s.count)) {
                Some((Some(i), Some(n))) => format!("{i}/{n}"),
                Some((None, _)) => "auto".into(),
                _ => "0/1".into(),
            },
        )
    },
    OptionDef {
        sweepable: false,
        study: Study::Exempt(
            "the shard count of `run --shard auto`: a study's cells run on one client host, never sharded",
        ),
        ..def(
            "shards",
            Scope::Run,
            "N",
            "The number of shards when the launcher gives only the index (a Kubernetes Indexed \
             Job's completions)",
            "3",
            |b, v| {
                let n = int(v, 1, U32)? as u32;
                spec(b).count = Some(n);
                Ok(())
            },
            |b| match b.plan.shard.as_ref().and_then(|s| s.count) {
                Some(n) => n.to_string(),
                None => "1".into(),
            },
        )
    },
    OptionDef {
        sweepable: false,
        study: Study::Exempt(
            "the key the shards of one `run` meet under: a study's cells run on one client host, never sharded",
        ),
        ..def(
            "shard_group",
            Scope::Run,
            "NAME",
            "The key the shards of one run share to meet on the server (default: the launcher's \
             job id and a hash of the plan)",
            "nightly-1",
            |b, v| {
                let g = text(v)?;
                if g.is_empty() || g.len() > 64 {
                    return Err(format!("must be 1 to 64 characters, not `{g}`"));
                }
                spec(b).group = Some(g);
                Ok(())
            },
            |b| {
                b.plan
                    .shard
                    .as_ref()
                    .and_then(|s| s.group.clone())
                    .unwrap_or_else(|| "derived".into())
            },
        )
    },
    OptionDef {
        sweepable: false,
        study: Study::Exempt(
            "how long the shards of one `run` wait for each other: a study's cells run on one client host, never sharded",
        ),
        ..def(
            "shard_timeout",
            Scope::Run,
            "S",
            "The longest a shard waits for the others (the dataset, each phase's start); a shard \
             missing then fails the run, named (default: derived from settling and warm-up)",
            "90",
            |b, v| {
                spec(b).timeout_s = Some(positive_seconds(v)?);
                Ok(())
            },
            |b| {
                b.plan
                    .shard
                    .as_ref()
                    .and_then(|s| s.timeout_s)
                    .map_or_else(|| "derived".into(), seconds_text)
            },
        )
    },
];

/// The plan's shard spec, made when the first shard option is read.
fn spec(b: &mut Builder) -> &mut ShardSpec {
    b.plan.shard.get_or_insert_with(ShardSpec::default)
}

#[cfg(test)]
mod tests {
    use crate::options::builder::Origin;
    use crate::options::resolve::resolve;
    use serde_json::{json, Value};

    fn plan(pairs: &[(&str, Value)]) -> Result<qpslab_core::RunPlan, String> {
        resolve(pairs.iter().map(|(k, v)| (*k, v)), Origin::Flags)
            .map(|r| r.plan)
            .map_err(String::from)
    }

    #[test]
    fn shard_options_fill_the_spec() {
        let p = plan(&[("shard", json!("1/3")), ("shard_group", json!("g"))]).unwrap();
        let s = p.shard.unwrap();
        assert_eq!(
            (s.index, s.count, s.group.as_deref()),
            (Some(1), Some(3), Some("g"))
        );
        let p = plan(&[("shard", json!("auto")), ("shards", json!("4"))]).unwrap();
        let s = p.shard.unwrap();
        assert_eq!((s.index, s.count), (None, Some(4)));
        assert!(plan(&[]).unwrap().shard.is_none());
        let e = plan(&[("shard", json!("3/3"))]).unwrap_err();
        assert!(e.starts_with("--shard:"), "{e}");
        assert!(plan(&[("shard_timeout", json!("0"))]).is_err());
    }

    #[test]
    fn a_study_cell_is_not_a_shard() {
        for key in ["shard", "shards", "shard_group", "shard_timeout"] {
            let def = crate::options::find(key).unwrap();
            let mut o = crate::options::RunOptions::default();
            let e = o.set(key, json!(def.example)).unwrap_err().0;
            assert!(e.starts_with(&format!("{key}: not a study key: ")), "{e}");
            assert!(e.contains("one client host"), "{e}");
        }
    }
}
