//! `qpslab tune`'s output: its progress lines, the summary, the JSON document, and the `--out`
//! file: a my.cnf `[mysqld]` section of only the settings the tuner changed and confirmed, each
//! with a comment on its measured effect; or, without a confirmed gain, a section that changes
//! nothing and says why. Pure, the file tested against a golden file.

use qpslab_tune::knobs::{Knob, Space};
use qpslab_tune::search::{describe, Config, Ended};
use qpslab_tune::{confirmation_json, ConfirmRound, Outcome, Trial};
use serde_json::json;

/// One confirmed setting.
#[derive(Clone, Debug)]
pub struct CnfSetting {
    /// The variable.
    pub name: String,
    /// Its tuned value.
    pub value: String,
    /// Its measured effect in words.
    pub effect: String,
    /// It trades crash safety for speed.
    pub durability: bool,
}

/// The file: header lines (without `# `), then the settings (none: no significant gain).
#[derive(Clone, Debug)]
pub struct Cnf {
    /// What was tuned, on which server, and the confirmation's result.
    pub header: Vec<String>,
    /// The confirmed settings.
    pub settings: Vec<CnfSetting>,
}

/// The file's text.
pub fn render(c: &Cnf) -> String {
    let mut out = String::new();
    for line in &c.header {
        out.push_str(&format!("# {line}\n"));
    }
    out.push_str("[mysqld]\n");
    if c.settings.is_empty() {
        out.push_str("# no significant gain: nothing to change\n");
    }
    for s in &c.settings {
        out.push_str(&format!("# {}\n", s.effect));
        if s.durability {
            out.push_str("# durability: trades crash safety for speed (--durability relaxed)\n");
        }
        out.push_str(&format!("{} = {}\n", s.name, s.value));
    }
    out
}

/// `knob NAME (durability): CURRENT → V1, V2`.
pub fn knob_line(k: &Knob) -> String {
    let mark = if k.durability { " (durability)" } else { "" };
    format!(
        "knob {}{mark}: {} → {}",
        k.name,
        k.current,
        k.values.join(", ")
    )
}

/// `trial 3 · rung 0 · 5 s · knob=value · 812.4 tps · best: knob=value 1630.2 tps [1580.1, 1680.3]`;
/// after the first round of the search, `round N · rung M`.
pub fn trial_line(t: &Trial) -> String {
    let round = match t.round {
        0 => String::new(),
        r => format!("round {r} · "),
    };
    let mut line = format!(
        "trial {} · {round}rung {} · {:.0} s · {} · {:.1} tps",
        t.seq,
        t.rung,
        t.secs,
        describe(t.config),
        t.tps
    );
    if let Some(best) = t.best {
        line.push_str(&format!(
            " · best: {} {:.1} tps",
            describe(best.config),
            best.tps
        ));
        if let Some((low, high)) = best.interval {
            line.push_str(&format!(" [{low:.1}, {high:.1}]"));
        }
    }
    line
}

/// `confirmation round 4 · baseline 812.4 tps · tuned 901.2 tps · +10.9% [-2.1%, +25.3%] (4
/// paired, 0 left out)`; a round with an unstable side says it is left out.
pub fn confirm_round_line(r: &ConfirmRound) -> String {
    let m = &r.measured;
    let mut line = format!(
        "confirmation round {} · baseline {:.1} tps · tuned {:.1} tps",
        r.round, m.baseline, m.tuned
    );
    if !m.stable {
        line.push_str(" · a side unstable: left out");
    }
    let paired = r.round - r.dropped;
    match r.gain {
        Some(g) => line.push_str(&format!(
            " · {:+.1}% [{:+.1}%, {:+.1}%] ({paired} paired, {} left out)",
            (g.ratio.ratio - 1.0) * 100.0,
            (g.ratio.low - 1.0) * 100.0,
            (g.ratio.high - 1.0) * 100.0,
            r.dropped
        )),
        None => line.push_str(&format!(" · {paired} paired, {} left out", r.dropped)),
    }
    line
}

/// What the summary and the cnf's header say of the session: the workload, its sessions, the
/// server and the budget.
pub struct Context<'a> {
    /// The workload's label.
    pub workload: &'a str,
    /// Its sessions.
    pub threads: u32,
    /// The server, redacted.
    pub target: &'a str,
    /// Seconds of budget.
    pub budget_s: f64,
}

/// The header lines: what was tuned, how the budget was split, why the search ended, the
/// confirmation's result and why it stopped (its rounds, those left out, its interval).
pub fn header(c: &Context, o: &Outcome) -> Vec<String> {
    let mut h = vec![format!(
        "qpslab tune: {}, {} thread(s), {}, budget {:.0} s, session {}",
        c.workload, c.threads, c.target, c.budget_s, o.session
    )];
    h.push(format!("budget: {}", o.shares.words()));
    h.push(o.ended.words());
    match &o.confirmed {
        Some(c) => {
            h.push(c.verdict_line());
            h.push(c.stop_words());
        }
        None => {
            h.push("no configuration beat the baseline in the search: nothing to confirm".into())
        }
    }
    h
}

/// The summary on stdout: the header, the conclusion, and where the proof study is.
pub fn summary(c: &Context, o: &Outcome) -> Vec<String> {
    let mut lines = header(c, o);
    if !o.significant() {
        lines.push("no significant gain: the server's settings are left as they were".into());
    } else {
        lines.push(format!("tuned: {}", describe(o.reported())));
        lines.extend(minimized_lines(o));
    }
    lines.push(format!("proof study: qpslab report {}", o.session));
    lines
}

/// How the confirmed set was reduced: each change rechecked and what became of it, and what
/// the budget left unchecked; nothing for a set of one change.
pub fn minimized_lines(o: &Outcome) -> Vec<String> {
    let Some(m) = &o.minimized else {
        return Vec::new();
    };
    let mut lines = vec![format!(
        "the smallest set that keeps the gain: {} of the {} confirmed change(s), each removed \
         and rechecked in turn",
        m.kept.len(),
        o.best.len()
    )];
    lines.extend(m.removals.iter().map(|r| format!("  {}", r.words())));
    lines.extend(m.unchecked.iter().map(|u| format!("  {u}")));
    lines
}

/// The `--out` file of the session.
pub fn cnf(c: &Context, o: &Outcome) -> Cnf {
    let settings = if o.significant() {
        cnf_settings(&o.space, o.reported(), &o.alone)
    } else {
        Vec::new()
    };
    let mut header = header(c, o);
    header.extend(
        minimized_lines(o)
            .iter()
            .map(|l| l.trim_start().to_string()),
    );
    Cnf { header, settings }
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

/// The `--json` document: knobs, baseline and best with their tps, the ratio and its
/// interval, whether it is significant, the confirmation (rounds, those left out, why it
/// stopped), the budget's split, and every trial.
pub fn json_doc(o: &Outcome) -> serde_json::Value {
    let space = &o.space;
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
    let v = o.confirmed;
    let verdict = v.and_then(|c| c.verdict);
    json!({
        "session": o.session,
        "study": o.session,
        "knobs": space.knobs.iter().map(|k| &k.name).collect::<Vec<_>>(),
        "durability_knobs": durability,
        "baseline": {"settings": baseline, "tps": v.map(|v| v.baseline_tps)},
        "best": {"settings": o.best, "tps": v.map(|v| v.tuned_tps)},
        "ratio": verdict.map(|v| v.ratio.ratio),
        "interval": verdict.map(|v| [v.ratio.low, v.ratio.high]),
        "significant": o.significant(),
        "confirmation": v.as_ref().map(confirmation_json),
        "budget": {
            "budget_s": o.shares.budget_s,
            "search_s": o.shares.search_s,
            "confirm_s": o.shares.confirm_s,
            "recheck_s": o.shares.recheck_s,
            "words": o.shares.words(),
        },
        "minimal": o.minimized.as_ref().map(|m| &m.kept),
        "rechecks": o.minimized.as_ref().map(|m| m.removals.iter().map(|r| json!({
            "variable": r.name,
            "value": r.value,
            "without_ratio": r.without.map(|x| x.ratio),
            "without_interval": r.without.map(|x| [x.low, x.high]),
            "dropped": r.dropped,
        })).collect::<Vec<_>>()),
        "not_rechecked": o.minimized.as_ref().and_then(|m| m.unchecked.clone()),
        "search": {
            "ended": o.ended.key(),
            "measured": match o.ended {
                Ended::Converged { measured } | Ended::Budget { measured, .. } => measured,
            },
            "candidates": match o.ended {
                Ended::Converged { measured } => measured,
                Ended::Budget { candidates, .. } => candidates,
            },
            "words": o.ended.words(),
        },
        "trials": o.trials,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::tests::golden;
    use qpslab_tune::Best;

    #[test]
    fn progress_lines() {
        let pool = Config::from([("innodb_buffer_pool_size".into(), "512M".into())]);
        let mut t = Trial {
            seq: 3,
            round: 0,
            rung: 1,
            secs: 10.0,
            config: &Config::new(),
            tps: 812.44,
            best: None,
        };
        assert_eq!(
            trial_line(&t),
            "trial 3 · rung 1 · 10 s · baseline · 812.4 tps"
        );
        t.best = Some(Best {
            config: &pool,
            tps: 1630.22,
            interval: Some((1580.11, 1680.31)),
        });
        assert_eq!(
            trial_line(&t),
            "trial 3 · rung 1 · 10 s · baseline · 812.4 tps · best: \
             innodb_buffer_pool_size=512M 1630.2 tps [1580.1, 1680.3]"
        );
        t.round = 2;
        assert!(trial_line(&t).starts_with("trial 3 · round 2 · rung 1 · 10 s"));
        let k = Knob {
            name: "sync_binlog".into(),
            current: "1".into(),
            values: vec!["0".into()],
            durability: true,
        };
        assert_eq!(knob_line(&k), "knob sync_binlog (durability): 1 → 0");
        let mut r = ConfirmRound {
            round: 2,
            measured: qpslab_tune::confirm::Round {
                baseline: 812.44,
                tuned: 901.25,
                stable: false,
                seconds: 9.0,
            },
            gain: None,
            dropped: 1,
        };
        assert_eq!(
            confirm_round_line(&r),
            "confirmation round 2 · baseline 812.4 tps · tuned 901.2 tps · a side unstable: \
             left out · 1 paired, 1 left out"
        );
        r.round = 4;
        r.measured.stable = true;
        r.gain = Some(qpslab_tune::confirm::Gain {
            ratio: qpslab_tune::confirm::Ratio {
                ratio: 1.109,
                low: 0.979,
                high: 1.253,
                se_log: 0.05,
                df: 2.0,
            },
            significant: false,
        });
        assert_eq!(
            confirm_round_line(&r),
            "confirmation round 4 · baseline 812.4 tps · tuned 901.2 tps · \
             +10.9% [-2.1%, +25.3%] (3 paired, 1 left out)"
        );
    }

    /// A session whose confirmation found `ratio [low, high]`.
    fn outcome(best: &str, ratio: Option<(f64, f64, f64)>) -> Outcome {
        let best: Config = match best {
            "" => Config::new(),
            v => Config::from([("innodb_buffer_pool_size".into(), v.into())]),
        };
        let confirmed = ratio.map(|(ratio, low, high)| qpslab_tune::Confirmed {
            verdict: Some(qpslab_tune::confirm::Gain {
                ratio: qpslab_tune::confirm::Ratio {
                    ratio,
                    low,
                    high,
                    se_log: 0.1,
                    df: 2.0,
                },
                significant: low > 1.0 && ratio >= qpslab_tune::confirm::MIN_GAIN,
            }),
            baseline_tps: 100.0,
            tuned_tps: 100.0 * ratio,
            rounds: 7,
            dropped: 1,
            stopped: match low > 1.0 || high < qpslab_tune::confirm::MIN_GAIN {
                true => qpslab_tune::confirm::Stopped::Decided,
                false => qpslab_tune::confirm::Stopped::Budget,
            },
            share_s: 60.0,
            seconds: 56.0,
        });
        Outcome {
            session: "tune-1".into(),
            space: Space::default(),
            best,
            alone: Vec::new(),
            ended: Ended::Budget {
                measured: 5,
                candidates: 12,
            },
            confirmed,
            shares: qpslab_tune::budget::Shares::split(120.0, 18.0, 24.0, true),
            minimized: None,
            trials: Vec::new(),
        }
    }

    #[test]
    fn the_summary_never_pairs_confirmed_with_no_gain() {
        let c = Context {
            workload: "oltp_read_only",
            threads: 2,
            target: "sandbox s",
            budget_s: 120.0,
        };
        let noise = summary(&c, &outcome("256M", Some((1.26, 0.95, 1.67))));
        assert_eq!(
            noise[1],
            "budget: search 48 s, confirmation 48 s, rechecks 24 s of a 120 s budget"
        );
        assert_eq!(
            noise[2],
            "the budget ended the search after 5 of 12 candidates"
        );
        assert_eq!(
            noise[3],
            "not confirmed: no gain beyond the noise (+26.0% [-5.0%, +67.0%]) \
             (tuned over baseline tps, 95% anytime-valid, 6 of 7 rounds paired)"
        );
        assert_eq!(
            noise[4],
            "the budget ended the confirmation after 7 rounds, undecided \
             (1 left out for an unstable side)"
        );
        let gain = summary(&c, &outcome("256M", Some((1.5, 1.2, 1.8))));
        assert!(gain[3].starts_with("confirmed: +50.0% [+20.0%, +80.0%]"));
        assert!(gain[4].starts_with("the confirmation decided after 7 rounds"));
        assert_eq!(gain[5], "tuned: innodb_buffer_pool_size=256M");
        // The JSON document and --out's header say the same.
        let doc = json_doc(&outcome("256M", Some((1.26, 0.95, 1.67))));
        let confirmation = &doc["confirmation"];
        assert_eq!(confirmation["rounds"], 7);
        assert_eq!(confirmation["dropped"], 1);
        assert_eq!(confirmation["stopped"], "budget");
        assert_eq!(confirmation["words"], noise[4].as_str());
        assert_eq!(doc["interval"][0], 0.95);
        assert_eq!(doc["budget"]["confirm_s"], 48.0);
        let file = render(&cnf(&c, &outcome("256M", Some((1.26, 0.95, 1.67)))));
        assert!(file.contains(&format!("# {}\n", noise[4])), "{file}");
        assert!(file.contains("# budget: search 48 s"), "{file}");
        // A set of two, reduced to one.
        let mut two = outcome("256M", Some((1.5, 1.2, 1.8)));
        two.best.insert("innodb_io_capacity".into(), "2000".into());
        two.minimized = Some(qpslab_tune::Minimized {
            kept: outcome("256M", None).best,
            removals: vec![qpslab_tune::Removal {
                name: "innodb_io_capacity".into(),
                value: "2000".into(),
                without: Some(qpslab_tune::confirm::Ratio {
                    ratio: 0.99,
                    low: 0.92,
                    high: 1.06,
                    se_log: 0.1,
                    df: 2.0,
                }),
                dropped: true,
            }],
            unchecked: None,
        });
        let lines = summary(&c, &two);
        assert_eq!(lines[5], "tuned: innodb_buffer_pool_size=256M");
        assert!(lines[6].starts_with("the smallest set that keeps the gain: 1 of the 2"));
        assert!(lines[7].starts_with("  dropped innodb_io_capacity=2000: without it -1.0%"));
        let file = render(&cnf(&c, &two));
        assert!(!file.contains("innodb_io_capacity ="), "{file}");
        assert!(
            file.contains("\ninnodb_buffer_pool_size = 256M\n"),
            "{file}"
        );
        assert_eq!(json_doc(&two)["rechecks"][0]["dropped"], true);
        let none = summary(&c, &outcome("", None));
        assert!(none[3].contains("nothing to confirm"), "{none:?}");
        let doc = json_doc(&outcome("", None));
        assert_eq!(doc["search"]["ended"], "budget");
        assert_eq!(doc["search"]["candidates"], 12);
        for lines in [noise, gain, none] {
            for l in &lines {
                let pairs = l.contains("confirmed") && l.contains("no gain");
                assert!(!pairs || l.starts_with("not confirmed"), "{l}");
            }
        }
    }

    #[test]
    fn tuned_cnf_golden() {
        // The header is the summary's own (what was tuned, the budget's split, how the search
        // and the confirmation ended), so the file never words the verdict differently.
        let ctx = Context {
            workload: "oltp_read_only",
            threads: 4,
            target: "sandbox s",
            budget_s: 120.0,
        };
        let c = Cnf {
            header: header(&ctx, &outcome("512M", Some((3.12, 2.80, 3.47)))),
            settings: vec![
                CnfSetting {
                    name: "innodb_buffer_pool_size".into(),
                    value: "512M".into(),
                    effect: "was 8M; alone in the search: tps ×3.05 (rung 0)".into(),
                    durability: false,
                },
                CnfSetting {
                    name: "innodb_flush_log_at_trx_commit".into(),
                    value: "2".into(),
                    effect: "was 1; not measured alone (part of the confirmed set)".into(),
                    durability: true,
                },
            ],
        };
        golden("tune.cnf", &render(&c));
        let none = Cnf {
            header: vec!["qpslab tune: no significant gain".into()],
            settings: vec![],
        };
        golden("tune_none.cnf", &render(&none));
    }
}
