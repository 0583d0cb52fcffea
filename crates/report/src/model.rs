//! What a report is made from: stored runs, each placed in a study's design (variant, factor
//! levels, swept settings, repeat) or standing alone.

use qpslab_core::cell::Cell;
use qpslab_store::{RunMeta, StoredPhase, StoredRun};
use serde_json::Value;
use std::collections::BTreeMap;

/// One stored run and where it sits in the design.
#[derive(Clone, Debug)]
pub struct Subject {
    /// The run, with its phases.
    pub run: StoredRun,
    /// Its study cell: the variant it measures (a study's variant name, or `run N` for a lone
    /// run), factor levels, swept settings (empty for a lone run, whose sweep is its phases'
    /// thread counts) and repeat.
    pub cell: Cell,
}

impl Subject {
    /// A lone run, its own variant.
    pub fn lone(run: StoredRun) -> Subject {
        Subject {
            cell: Cell::lone(format!("run {}", run.id)),
            run,
        }
    }
}

/// A factor of a factorial study and its levels, the first being the baseline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FactorDef {
    /// The factor's name.
    pub name: String,
    /// Level names in spec order.
    pub levels: Vec<String>,
}

/// Everything a report is built from.
#[derive(Clone, Debug, Default)]
pub struct ReportInput {
    /// The report's title.
    pub title: String,
    /// Study names reported on (empty for lone runs).
    pub studies: Vec<String>,
    /// Factors of factorial studies (empty otherwise).
    pub factors: Vec<FactorDef>,
    /// The runs. The first variant seen is the baseline of comparisons.
    pub subjects: Vec<Subject>,
    /// The studies' setups (`[[variant]]`s) as their specs state them, in spec order (empty
    /// for lone runs).
    pub setups: Vec<crate::spec_setups::SetupDef>,
}

/// One measured phase in the design: the unit every statistic is computed over.
#[derive(Clone, Copy, Debug)]
pub struct Point<'a> {
    /// The subject it belongs to.
    pub subject: &'a Subject,
    /// The phase.
    pub phase: &'a StoredPhase,
}

impl<'a> Point<'a> {
    /// The run's meta.
    pub fn meta(&self) -> &'a RunMeta {
        &self.subject.run.meta
    }

    /// Sessions of the phase.
    pub fn threads(&self) -> u32 {
        self.phase.result.threads
    }

    /// The swept settings that identify this point within its variant: the cell's params
    /// (`threads` from the phase when the cell has none), as `name=value` text.
    pub fn key(&self) -> String {
        let mut parts: BTreeMap<String, String> = self
            .subject
            .cell
            .params
            .iter()
            .map(|(k, v)| (k.clone(), value_text(v)))
            .collect();
        parts
            .entry("threads".into())
            .or_insert_with(|| self.threads().to_string());
        parts
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Every point of the input, in input order.
pub fn points(input: &ReportInput) -> Vec<Point<'_>> {
    input
        .subjects
        .iter()
        .flat_map(|s| {
            s.run
                .phases
                .iter()
                .map(move |phase| Point { subject: s, phase })
        })
        .collect()
}

/// Variant names in order of first appearance.
pub fn variants(input: &ReportInput) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in &input.subjects {
        if !out.contains(&s.cell.variant) {
            out.push(s.cell.variant.clone());
        }
    }
    out
}

/// A JSON value as a setting's text: strings unquoted.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
