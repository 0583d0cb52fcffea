//! The live actions (`qpslab run --at`) of a report's points, as it lists them. Actions a study
//! cell stored unjudged are judged here the one way `qpslab run` judges them
//! ([`qpslab_core::live::judge_actions`]).

use crate::model::Point;
use qpslab_core::live::{judge_actions, ActionRecord};
use serde::{Deserialize, Serialize};

/// A live action of one measured point, as a report lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionRow {
    /// The run.
    pub run_id: i64,
    /// The variant and the point's key (`threads=4`).
    pub point: String,
    /// The action, its outcome and its judgment.
    pub record: ActionRecord,
}

/// Every live action of `points`, in their order. Actions stored unjudged (a study cell's:
/// only `run` judges as it goes) are judged here from the phase's samples.
pub(crate) fn action_rows(points: &[Point<'_>]) -> Vec<ActionRow> {
    points
        .iter()
        .flat_map(|p| {
            let result = &p.phase.result;
            let mut records = result.actions.clone();
            if records.iter().any(|r| r.judgment.is_empty()) {
                let settle = p
                    .meta()
                    .plan
                    .live
                    .as_ref()
                    .map_or(qpslab_core::live::DEFAULT_SETTLE_AFTER_S, |l| {
                        l.settle_after_s
                    });
                judge_actions(&result.samples, &mut records, settle);
            }
            records.into_iter().map(move |record| ActionRow {
                run_id: p.subject.run.id.0,
                point: format!("{} {}", p.subject.cell.variant, p.key()),
                record,
            })
        })
        .collect()
}
