//! `qpslab doctor`: the machine's external parts as `qpslab_lab::doctor` finds them, one line
//! each (or JSON); exit 1 when a part a default command needs is missing.

use crate::args::{DoctorArgs, Format};
use crate::out::Output;
use qpslab_lab::doctor::{examine, ready, Finding};

/// Runs `qpslab doctor`.
pub fn doctor(a: DoctorArgs) -> anyhow::Result<()> {
    let out = Output::new(&a.output, "doctor")?;
    let findings = examine(a.basedir.as_deref());
    let ready = ready(&findings);
    out.emit(|f| match f {
        Format::Json => crate::out::json(&serde_json::json!({
            "ready": ready,
            "parts": findings,
        })),
        _ => Ok(table(&findings)),
    })?;
    if ready {
        return Ok(());
    }
    let missing: Vec<&str> = findings
        .iter()
        .filter(|f| f.required && !f.found)
        .map(|f| f.part)
        .collect();
    anyhow::bail!(
        "{} missing: default commands cannot run here (the fix is above)",
        missing.join(", ")
    )
}

/// `ok      fio               fio-3.33  (qpslab io and fileio cells)`, one line per part.
fn table(findings: &[Finding]) -> String {
    let width = findings.iter().map(|f| f.part.len()).max().unwrap_or(0);
    let mut out = String::new();
    for f in findings {
        let status = match (f.found, f.required) {
            (true, _) => "ok",
            (false, true) => "MISSING",
            (false, false) => "missing",
        };
        out.push_str(&format!(
            "{status:<8}{:<width$}  {}  ({})\n",
            f.part, f.detail, f.used_for
        ));
    }
    out
}
