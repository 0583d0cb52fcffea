//! Live actions' options: `at` (`--at TIME:ACTION`, repeatable; a spec gives a list) and
//! `settle_after` (the window after an action that neither segment of its judgment uses).

use super::builder::Builder;
use super::def::{bounded_seconds, def, seconds_text, OptionDef, Scope};
use super::value::text;
use qpslab_core::live::LiveAction;
use serde_json::Value;

/// The live options, in the order `run --help` lists them.
pub(crate) static LIVE: &[OptionDef] = &[
    OptionDef {
        repeatable: true,
        ..def(
            "at",
            Scope::Run,
            "TIME:ACTION",
            "Change the server at TIME of each measured phase (from its start, after warm-up): \
             `set NAME=VALUE` (SET GLOBAL, restored when the phase ends), `sql STATEMENT` or \
             `pin CLASS=CPUS` (thread placement, undone when the phase ends); \
             repeat it for several actions, each judged before against after",
            "2s:set innodb_buffer_pool_size=512M",
            apply_at,
            |b| {
                let texts: Vec<String> = b.actions.iter().map(LiveAction::to_string).collect();
                texts.join(", ")
            },
        )
    },
    def(
        "settle_after",
        Scope::Run,
        "S",
        "Seconds after an --at action that its judgment leaves out (the server settling)",
        "2",
        |b, v| {
            b.settle_after_s = bounded_seconds(v)?;
            Ok(())
        },
        |b| seconds_text(b.settle_after_s),
    ),
];

/// `at = "8s:set x=1"` (or a repeated flag) adds an action; a list sets them all.
fn apply_at(b: &mut Builder, v: &Value) -> Result<(), String> {
    let items = match v {
        Value::Array(items) => {
            b.actions.clear();
            items.iter().map(text).collect::<Result<Vec<_>, _>>()?
        }
        _ => vec![text(v)?],
    };
    for item in items {
        b.actions
            .push(LiveAction::parse(&item).map_err(|e| e.to_string())?);
    }
    b.actions.sort_by(|x, y| x.at_s.total_cmp(&y.at_s));
    Ok(())
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
    fn actions_are_sorted_and_settle_after_kept() {
        let p = plan(&[
            ("time", json!("20")),
            ("at", json!("12s:sql FLUSH TABLES")),
            ("at", json!("8s:set innodb_buffer_pool_size=512M")),
            ("settle_after", json!("3")),
        ])
        .unwrap();
        let live = p.live.unwrap();
        assert_eq!(live.actions[0].at_s, 8.0);
        assert_eq!(live.actions[1].at_s, 12.0);
        assert_eq!(live.settle_after_s, 3.0);
        let spec = plan(&[("at", json!(["1:sql SELECT 1", "2:sql SELECT 2"]))]).unwrap();
        assert_eq!(spec.live.unwrap().actions.len(), 2);
        assert_eq!(plan(&[]).unwrap().live, None);
    }

    #[test]
    fn an_action_past_the_phase_or_malformed_is_refused() {
        let e = plan(&[("time", json!("5")), ("at", json!("5s:sql SELECT 1"))]).unwrap_err();
        assert!(e.contains("not inside the 5 s measured phase"), "{e}");
        let e = plan(&[("at", json!("8s:set innodb_buffer_pool_size"))]).unwrap_err();
        assert!(e.starts_with("--at: ") && e.contains("NAME=VALUE"), "{e}");
        assert!(plan(&[("events", json!("10")), ("at", json!("99:sql SELECT 1"))]).is_ok());
    }
}
