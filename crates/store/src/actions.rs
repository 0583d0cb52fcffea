//! Live actions of a phase (`run --at`): one row per action with its outcome and judgment,
//! written with the phase and rewritten once the actions are judged.

use crate::db::{params, Conn, Tx};
use crate::error::Error;
use crate::model::RunId;
use crate::Store;
use qpslab_core::live::ActionRecord;

/// Replaces the action rows of phase `phase_id` with `records`.
pub(crate) fn write_actions(
    tx: &Tx<'_>,
    phase_id: i64,
    records: &[ActionRecord],
) -> Result<(), Error> {
    tx.execute("DELETE FROM phase_actions WHERE phase_id = ?1", [phase_id])?;
    let mut st = tx.prepare(
        "INSERT INTO phase_actions (phase_id, seq, at_s, action, outcome, took_ms, judgment,
                                    record_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for (seq, r) in records.iter().enumerate() {
        st.execute(params![
            phase_id,
            seq as i64,
            r.at_s,
            r.action,
            r.outcome,
            r.took_ms,
            r.judgment,
            serde_json::to_string(r)?
        ])?;
    }
    Ok(())
}

/// The action rows of phase `phase_id`, in order.
pub(crate) fn load_actions(conn: &Conn, phase_id: i64) -> Result<Vec<ActionRecord>, Error> {
    let mut st =
        conn.prepare("SELECT record_json FROM phase_actions WHERE phase_id = ?1 ORDER BY seq")?;
    let rows = st.query_map([phase_id], |r| r.get::<_, String>(0))?;
    let mut out = Vec::new();
    for json in rows {
        out.push(serde_json::from_str(&json?)?);
    }
    Ok(out)
}

impl Store {
    /// Stores the judged `records` of phase `seq` (from 1) of run `run` in place of those
    /// written with the phase.
    pub fn record_actions(
        &mut self,
        run: RunId,
        seq: u32,
        records: &[ActionRecord],
    ) -> Result<(), Error> {
        let tx = self.conn.transaction()?;
        let phase_id: i64 = tx.query_row(
            "SELECT id FROM phases WHERE run_id = ?1 AND seq = ?2",
            params![run.0, seq],
            |r| r.get(0),
        )?;
        write_actions(&tx, phase_id, records)?;
        tx.commit()?;
        Ok(())
    }
}
