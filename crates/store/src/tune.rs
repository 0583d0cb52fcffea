//! The trial history of `qpslab tune`: every configuration a tune session measured, in order.
//! The search's short trials are rows only; the confirmation's measurements are also runs of
//! the session's proof study, and their rows point at them.

use crate::db::params;
use crate::error::Error;
use crate::model::{unix_now, RunId};
use crate::Store;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One measured configuration of a tune session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TuneTrial {
    /// From 1, in the order measured.
    pub seq: u32,
    /// What the trial was for: `rung 0`, `random`, `confirm baseline`, `confirm tuned`...
    pub phase: String,
    /// The variables changed from the baseline, and their values (empty: the baseline).
    pub settings: BTreeMap<String, String>,
    /// Transactions per second measured.
    pub tps: f64,
    /// Seconds measured.
    pub duration_s: f64,
    /// The run the trial was stored as, if it was.
    pub run_id: Option<RunId>,
}

impl Store {
    /// Appends `trial` to the history of tune session `session`.
    pub fn record_tune_trial(&mut self, session: &str, trial: &TuneTrial) -> Result<(), Error> {
        self.conn.execute(
            "INSERT INTO tune_trials (session, seq, phase, settings_json, tps, duration_s,
                                      run_id, recorded_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                session,
                trial.seq,
                trial.phase,
                serde_json::to_string(&trial.settings)?,
                trial.tps,
                trial.duration_s,
                trial.run_id.map(|r| r.0),
                unix_now(),
            ],
        )?;
        Ok(())
    }

    /// The trials of tune session `session`, in order.
    pub fn tune_trials(&self, session: &str) -> Result<Vec<TuneTrial>, Error> {
        let mut st = self.conn.prepare(
            "SELECT seq, phase, settings_json, tps, duration_s, run_id FROM tune_trials
             WHERE session = ?1 ORDER BY seq",
        )?;
        let rows = st.query_map([session], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, f64>(3)?,
                r.get::<_, f64>(4)?,
                r.get::<_, Option<i64>>(5)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, phase, settings, tps, duration_s, run_id) = row?;
            out.push(TuneTrial {
                seq,
                phase,
                settings: serde_json::from_str(&settings)?,
                tps,
                duration_s,
                run_id: run_id.map(RunId),
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trials_come_back_in_order_per_session() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("t.db")).unwrap();
        let mut t = TuneTrial {
            seq: 1,
            phase: "rung 0".into(),
            settings: BTreeMap::from([("innodb_buffer_pool_size".into(), "1G".into())]),
            tps: 120.5,
            duration_s: 5.0,
            run_id: None,
        };
        store.record_tune_trial("tune-a", &t).unwrap();
        t.seq = 2;
        t.settings.clear();
        store.record_tune_trial("tune-a", &t).unwrap();
        store.record_tune_trial("tune-b", &t).unwrap();
        let got = store.tune_trials("tune-a").unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].settings["innodb_buffer_pool_size"], "1G");
        assert!(got[1].settings.is_empty());
        assert!(
            store.record_tune_trial("tune-a", &t).is_err(),
            "seq is unique"
        );
    }
}
