//! A session's script events: pick a script by weight, run its `\set`s, list its calls.

use super::expr::Env;
use super::{Amount, ScriptSet, Step};
use crate::rand::Rng;
use crate::workload::{Arg, Call, EventBuf};
use qpslab_core::workload::RandOptions;

/// `Call::stmt` of a `\sleep` step: the call's one argument is the pause in microseconds.
pub const SLEEP_CALL: u32 = u32::MAX;

/// One session's script state: its variables, kept from event to event as pgbench keeps a
/// client's variables, and the last evaluation failure.
#[derive(Debug)]
pub(crate) struct ScriptGen {
    vars: Vec<i64>,
    failure: Option<String>,
}

impl ScriptGen {
    pub(crate) fn new(set: &ScriptSet) -> ScriptGen {
        ScriptGen {
            vars: vec![0; set.slots],
            failure: None,
        }
    }

    /// The script failure that left the last event empty (`FILE:LINE: message`).
    pub(crate) fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Fills `out` (already cleared) with one run of a script picked by weight. On an
    /// evaluation failure `out` is left empty and [`ScriptGen::failure`] says why.
    pub(crate) fn fill(
        &mut self,
        set: &ScriptSet,
        rng: &mut Rng,
        rand: &RandOptions,
        out: &mut EventBuf,
    ) {
        let script = if set.scripts.len() == 1 {
            &set.scripts[0]
        } else {
            let mut r = rng.uniform(0, set.total_weight - 1);
            let mut pick = &set.scripts[0];
            for s in &set.scripts {
                pick = s;
                match r.checked_sub(u64::from(s.weight)) {
                    Some(rest) => r = rest,
                    None => break,
                }
            }
            pick
        };
        for step in &script.steps {
            if let Err((line, msg)) = self.step(step, rng, rand, out) {
                out.clear();
                self.failure = Some(format!("{}:{line}: {msg}", script.name));
                return;
            }
        }
    }

    fn step(
        &mut self,
        step: &Step,
        rng: &mut Rng,
        rand: &RandOptions,
        out: &mut EventBuf,
    ) -> Result<(), (u32, String)> {
        match step {
            Step::Set { line, slot, expr } => {
                let mut env = Env {
                    vars: &self.vars,
                    rng,
                    rand,
                };
                let v = expr.eval(&mut env).map_err(|e| (*line, e.to_string()))?;
                self.vars[*slot as usize] = v;
            }
            Step::Stmt { stmt, params } => {
                let start = out.args.len() as u32;
                out.args
                    .extend(params.iter().map(|&p| Arg::Int(self.vars[p as usize])));
                out.calls.push(Call {
                    stmt: *stmt,
                    args: start..out.args.len() as u32,
                });
            }
            Step::Sleep {
                line,
                amount,
                unit_us,
            } => {
                let n = match *amount {
                    Amount::Lit(v) => v,
                    Amount::Var(s) => self.vars[s as usize],
                };
                let us = n
                    .checked_mul(*unit_us)
                    .filter(|us| *us >= 0)
                    .ok_or_else(|| (*line, format!("\\sleep {n}: not a duration")))?;
                let start = out.args.len() as u32;
                out.args.push(Arg::Int(us));
                out.calls.push(Call {
                    stmt: SLEEP_CALL,
                    args: start..start + 1,
                });
            }
        }
        Ok(())
    }
}
