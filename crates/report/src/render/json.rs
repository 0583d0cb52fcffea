//! The report's data as pretty JSON (charts are left out: they are pictures of this data).

use super::Renderer;
use crate::error::Error;
use crate::report::Report;

/// JSON renderer.
pub struct Json;

impl Renderer for Json {
    fn render(&self, report: &Report) -> Result<String, Error> {
        let mut v = serde_json::to_value(report)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("format".into(), "qpslab-report".into());
            o.insert("version".into(), 1.into());
        }
        Ok(serde_json::to_string_pretty(&v)? + "\n")
    }
}
