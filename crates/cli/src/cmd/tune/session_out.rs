//! The end of a session: the confirmation of the search's best configuration against the
//! baseline (the proof study), and the outputs: `--out` (tuned.cnf), `--json`, the summary.

use super::bench::Bench;
use super::cnf::{self, Cnf, CnfSetting};
use super::confirm::{self, Verdict};
use super::knobs::Space;
use super::search::{describe, Config, Found};
use super::Checked;
use crate::args::TuneArgs;
use anyhow::Result;
use qpslab_sandbox::SandboxHome;
use serde_json::json;

/// What the session concluded, for the summary on stdout.
pub(super) struct Outcome {
    lines: Vec<String>,
}

impl Outcome {
    /// Prints the summary.
    pub fn print(&self) {
        for l in &self.lines {
            println!("{l}");
        }
    }
}

/// Confirms `found.best` (unless the baseline won the search) and writes the outputs.
pub(super) fn conclude(
    a: &TuneArgs,
    c: &Checked,
    b: &mut Bench,
    space: &Space,
    found: Found,
    home: &SandboxHome,
) -> Result<Outcome> {
    let best = found.best.clone();
    let verdict = if best.is_empty() {
        eprintln!("the baseline was best in the search: nothing to confirm");
        None
    } else {
        eprintln!(
            "confirming {} against the baseline: {} measurements of {} s each, interleaved",
            describe(&best),
            2 * a.repeats,
            a.trial_time
        );
        let spec = format!(
            "# proof study of qpslab tune session {}: baseline vs tuned\n# tuned: {}\n",
            b.session,
            describe(&best)
        );
        let env = qpslab_lab::study::environment(home);
        let [base, tuned] = b.confirm(&best, a.repeats, (&spec, env))?;
        confirm::judge(&base, &tuned).map(|v| (v, mean(&base), mean(&tuned)))
    };
    let significant = verdict.is_some_and(|v| v.0.significant);
    let header = header(a, c, b, verdict.map(|v| v.0));
    let settings = if significant {
        cnf_settings(space, &best, &found.alone)
    } else {
        Vec::new()
    };
    if let Some(out) = &a.out {
        let text = cnf::render(&Cnf {
            header: header.clone(),
            settings,
        });
        crate::outfile::write("--out", out, &text)?;
        eprintln!("written to {}", out.display());
    }
    if let Some(path) = &a.json {
        let doc = json_doc(b, space, &best, verdict)?;
        crate::outfile::write_json(path, &doc)?;
    }
    let mut lines = header;
    if !significant {
        lines.push("no significant gain: the server's settings are left as they were".into());
    } else {
        lines.push(format!("tuned: {}", describe(&best)));
    }
    lines.push(format!("proof study: qpslab report {}", b.session));
    Ok(Outcome { lines })
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

fn header(a: &TuneArgs, c: &Checked, b: &Bench, v: Option<Verdict>) -> Vec<String> {
    let mut h = vec![format!(
        "qpslab tune: {}, {} thread(s), {}, budget {:.0} s, session {}",
        c.plan.workload.label(),
        c.threads,
        b.target.options.describe(),
        c.budget_s,
        b.session
    )];
    h.push(match v {
        Some(v) => format!(
            "confirmed: tuned/baseline tps {:.2} [{:.2}, {:.2}] (95%, {} runs each){}",
            v.ratio.ratio,
            v.ratio.low,
            v.ratio.high,
            a.repeats,
            if v.significant {
                ""
            } else if v.ratio.low > 1.0 {
                ": no significant gain (less than the 5% a change must bring)"
            } else {
                ": no significant gain"
            }
        ),
        None => "no configuration beat the baseline in the search: no significant gain".into(),
    });
    h
}

fn cnf_settings(space: &Space, best: &Config, alone: &[(Config, f64)]) -> Vec<CnfSetting> {
    best.iter()
        .map(|(name, value)| {
            let knob = space.knobs.iter().find(|k| &k.name == name);
            let single = Config::from([(name.clone(), value.clone())]);
            let effect = match alone.iter().find(|a| a.0 == single) {
                Some((_, r)) => format!("alone in the search: tps ×{r:.2} (first rung)"),
                None => "not measured alone (part of the confirmed set)".into(),
            };
            CnfSetting {
                name: name.clone(),
                value: value.clone(),
                effect: format!("was {}; {effect}", knob.map_or("?", |k| k.current.as_str())),
                durability: knob.is_some_and(|k| k.durability),
            }
        })
        .collect()
}

fn json_doc(
    b: &Bench,
    space: &Space,
    best: &Config,
    verdict: Option<(Verdict, f64, f64)>,
) -> Result<serde_json::Value> {
    let baseline: Config = space
        .knobs
        .iter()
        .map(|k| (k.name.clone(), k.current.clone()))
        .collect();
    let durability: Vec<&str> = space
        .knobs
        .iter()
        .filter(|k| k.durability)
        .map(|k| k.name.as_str())
        .collect();
    Ok(json!({
        "session": b.session,
        "study": b.session,
        "knobs": space.knobs.iter().map(|k| &k.name).collect::<Vec<_>>(),
        "durability_knobs": durability,
        "baseline": {"settings": baseline, "tps": verdict.map(|v| v.1)},
        "best": {"settings": best, "tps": verdict.map(|v| v.2)},
        "ratio": verdict.map(|v| v.0.ratio.ratio),
        "interval": verdict.map(|v| [v.0.ratio.low, v.0.ratio.high]),
        "significant": verdict.is_some_and(|v| v.0.significant),
        "trials": b.store.tune_trials(&b.session)?,
    }))
}
