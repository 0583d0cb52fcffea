//! What the user says of a run rather than how it is measured: `label` (`--label KEY=VALUE`,
//! repeatable; a spec gives a list or a table) and `series` (`--series NAME`). Both are stored
//! in the run's plan and read by `qpslab history` (docs/history.md): labels tell the runs of a
//! series apart and may order them (`--by label:KEY`); a series name groups runs the user
//! says belong together. Neither changes the work measured.

use super::builder::Builder;
use super::def::{def, OptionDef, Scope};
use super::value::text;
use serde_json::Value;

/// The longest label key, value or series name, in characters.
const MAX_LEN: usize = 200;

/// The label options, in the order `run --help` lists them.
pub(crate) static LABEL: &[OptionDef] = &[
    OptionDef {
        repeatable: true,
        ..def(
            "label",
            Scope::Run,
            "KEY=VALUE",
            "A label stored with the run (repeatable): --label commit=abc123 --label \
             build=1234; `qpslab history --by label:KEY` orders a series by it",
            "build=42",
            apply_label,
            |b| {
                let pairs: Vec<String> = b
                    .plan
                    .labels
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                pairs.join(",")
            },
        )
    },
    def(
        "series",
        Scope::Run,
        "NAME",
        "The series the run belongs to in `qpslab history` (default: the series of its \
         workload, dataset, sessions and run options on this host)",
        "nightly",
        |b, v| {
            b.plan.series = Some(name(&text(v)?, "a series name")?);
            Ok(())
        },
        |b| b.plan.series.clone().unwrap_or_else(|| "none".into()),
    ),
];

/// `label = "k=v"` (or a repeated flag) adds a label; a list of them, or a table `{ k = "v" }`,
/// sets them all.
fn apply_label(b: &mut Builder, v: &Value) -> Result<(), String> {
    let pairs: Vec<(String, String)> = match v {
        Value::Array(items) => {
            b.plan.labels.clear();
            items
                .iter()
                .map(|i| pair(&text(i)?))
                .collect::<Result<_, String>>()?
        }
        Value::Object(m) => {
            b.plan.labels.clear();
            m.iter()
                .map(|(k, v)| Ok((k.clone(), text(v)?)))
                .collect::<Result<_, String>>()?
        }
        _ => vec![pair(&text(v)?)?],
    };
    for (k, v) in pairs {
        let k = name(&k, "a label's key")?;
        if v.is_empty() || v.len() > MAX_LEN || v.chars().any(char::is_control) {
            return Err(format!(
                "{k}: a label's value is 1 to {MAX_LEN} printable characters, not '{v}'"
            ));
        }
        b.plan.labels.insert(k, v);
    }
    Ok(())
}

/// `KEY=VALUE` split at its first `=`.
fn pair(t: &str) -> Result<(String, String), String> {
    let (k, v) = t
        .split_once('=')
        .ok_or_else(|| format!("expects KEY=VALUE (build=1234), not '{t}'"))?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

/// `t` when it is a name: letters, digits, `_`, `-`, `.`, at most [`MAX_LEN`].
fn name(t: &str, what: &str) -> Result<String, String> {
    let ok = !t.is_empty()
        && t.len() <= MAX_LEN
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(t.to_string())
    } else {
        Err(format!(
            "{what} is 1 to {MAX_LEN} letters, digits, '_', '-' or '.', not '{t}'"
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::options::builder::Origin;
    use crate::options::resolve::resolve;
    use serde_json::{json, Value};

    fn plan(pairs: &[(&str, Value)], origin: Origin) -> Result<qpslab_core::RunPlan, String> {
        resolve(pairs.iter().map(|(k, v)| (*k, v)), origin)
            .map(|r| r.plan)
            .map_err(String::from)
    }

    #[test]
    fn labels_from_flags_a_list_or_a_table() {
        let p = plan(
            &[
                ("label", json!("build=12")),
                ("label", json!("commit=abc=def")),
                ("series", json!("nightly")),
            ],
            Origin::Flags,
        )
        .unwrap();
        assert_eq!(p.labels["build"], "12");
        assert_eq!(p.labels["commit"], "abc=def");
        assert_eq!(p.series.as_deref(), Some("nightly"));
        let p = plan(&[("label", json!(["a=1", "b=2"]))], Origin::Spec).unwrap();
        assert_eq!(p.labels.len(), 2);
        let p = plan(&[("label", json!({"build": 7}))], Origin::Spec).unwrap();
        assert_eq!(p.labels["build"], "7");
        assert!(plan(&[], Origin::Flags).unwrap().labels.is_empty());
    }

    #[test]
    fn malformed_labels_and_names_are_refused() {
        let e = plan(&[("label", json!("build"))], Origin::Flags).unwrap_err();
        assert!(e.starts_with("--label: ") && e.contains("KEY=VALUE"), "{e}");
        let e = plan(&[("label", json!("a b=1"))], Origin::Flags).unwrap_err();
        assert!(e.contains("label's key"), "{e}");
        let e = plan(&[("label", json!("build="))], Origin::Flags).unwrap_err();
        assert!(e.contains("label's value"), "{e}");
        let e = plan(&[("series", json!("night ly"))], Origin::Spec).unwrap_err();
        assert!(e.starts_with("series: "), "{e}");
    }

    #[test]
    fn labels_stay_out_of_a_plan_stored_without_them() {
        let p = plan(&[], Origin::Flags).unwrap();
        let text = serde_json::to_string(&p).unwrap();
        assert!(
            !text.contains("labels") && !text.contains("series"),
            "{text}"
        );
    }
}
