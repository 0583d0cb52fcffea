//! A study cell's identity: where one measured run sits in a study's design.
//!
//! The lab expands a spec into these, the store keeps them (with each cell's status and run),
//! and reports place every run they read by one. A run measured on its own is a cell of its own
//! ([`Cell::lone`]).
//!
//! ```
//! use qpslab_core::cell::Cell;
//! let c = Cell::lone("run 7");
//! assert_eq!((c.variant.as_str(), c.repeat), ("run 7", 1));
//! assert!(c.params.is_empty());
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One cell of a study: a variant (with its factor levels) at one point of the sweep, one
/// repeat of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Execution order within the study, from 1.
    pub seq: u32,
    /// Unique within the study, e.g. `bp1g/threads=8/r2`.
    pub label: String,
    /// The variant's name (for factorial studies, the levels joined, e.g. `tuned+je`).
    pub variant: String,
    /// `{"factor": "level"}` for factorial studies, empty otherwise.
    pub levels: BTreeMap<String, String>,
    /// The swept settings of this cell, e.g. `{"threads": 8}`.
    pub params: BTreeMap<String, serde_json::Value>,
    /// Which repeat this is, from 1.
    pub repeat: u32,
}

impl Cell {
    /// A run that belongs to no study: its own variant, labelled by it, no factor levels, no
    /// swept settings, repeat 1.
    pub fn lone(variant: impl Into<String>) -> Cell {
        let variant = variant.into();
        Cell {
            seq: 1,
            label: variant.clone(),
            variant,
            levels: BTreeMap::new(),
            params: BTreeMap::new(),
            repeat: 1,
        }
    }
}
