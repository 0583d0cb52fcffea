//! What a report or a comparison is about, read from the results store: runs by id, repeats
//! of one setup (`3,5,7`), a study's finished cells, or one variant of a study
//! (`STUDY/VARIANT`), placed in the design as [`Subject`]s.

use crate::spec_setups::SetupDef;
use crate::{Error, FactorDef, ReportInput, Subject};
use qpslab_store::{CellStatus, RunId, Store};

/// The report input of `qpslab report ITEM...`: each item a run id, comma-separated run ids
/// (one setup's repeats) or a study name; titled after what it holds.
pub fn report_input(store: &Store, items: &[String]) -> Result<ReportInput, Error> {
    let mut input = ReportInput::default();
    let mut runs = Vec::new();
    for item in items {
        if item.split(',').all(is_run_id) {
            input.subjects.extend(side(store, item)?);
            runs.push(item.clone());
        } else {
            let (subjects, factors, setups) = study_subjects(store, item, None)?;
            input.subjects.extend(subjects);
            input.factors.extend(factors);
            for s in setups {
                if !input.setups.iter().any(|x| x.name == s.name) {
                    input.setups.push(s);
                }
            }
            input.studies.push(item.clone());
        }
    }
    input.title = match (input.studies.is_empty(), runs.is_empty()) {
        (false, true) => format!("Study {}", input.studies.join(", ")),
        (true, _) => format!(
            "Run{} {}",
            if runs.len() > 1 { "s" } else { "" },
            runs.join(", ")
        ),
        (false, false) => format!(
            "Study {} and runs {}",
            input.studies.join(", "),
            runs.join(", ")
        ),
    };
    Ok(input)
}

/// A side of `compare`: a run id, repeats of one setup as comma-separated run ids
/// (`3,5,7`: their run-to-run variation then sets the interval), or STUDY/VARIANT.
pub fn side(store: &Store, spec: &str) -> Result<Vec<Subject>, Error> {
    if spec.split(',').all(is_run_id) {
        let mut out = Vec::new();
        for (i, id) in spec.split(',').enumerate() {
            let mut s = run_subject(store, id)?;
            s.cell.variant = if spec.contains(',') {
                format!("runs {spec}")
            } else {
                format!("run {spec}")
            };
            s.cell.repeat = u32::try_from(i + 1).unwrap_or(u32::MAX);
            out.push(s);
        }
        return Ok(out);
    }
    let Some((study, variant)) = spec.split_once('/') else {
        return Err(Error::Subject(format!(
            "'{spec}' is neither a run id nor STUDY/VARIANT"
        )));
    };
    Ok(study_subjects(store, study, Some(variant))?.0)
}

fn is_run_id(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn run_subject(store: &Store, id: &str) -> Result<Subject, Error> {
    let id: i64 = id
        .parse()
        .map_err(|_| Error::Subject(format!("'{id}' is not a run id")))?;
    let run = store.load_run(RunId(id)).map_err(|e| match e {
        qpslab_store::Error::RunNotFound(_) => Error::Subject(format!(
            "no run {id} in the results store (see qpslab show)"
        )),
        e => e.into(),
    })?;
    if run.phases.is_empty() {
        return Err(Error::Subject(format!("run {id} has no measured phase")));
    }
    Ok(Subject::lone(run))
}

/// A study's subjects, factors and setups.
type StudyParts = (Vec<Subject>, Vec<FactorDef>, Vec<SetupDef>);

/// The finished cells of `study` (only those of `variant` when given) as subjects, the
/// study's factors, and its setups as its spec states them.
fn study_subjects(store: &Store, study: &str, variant: Option<&str>) -> Result<StudyParts, Error> {
    let record = store.study_by_name(study).map_err(|e| match e {
        qpslab_store::Error::StudyNotFound(_) => Error::Subject(format!(
            "no run or study named '{study}' in the results store (see qpslab show, qpslab lab show)"
        )),
        e => e.into(),
    })?;
    let mut out = Vec::new();
    for rec in store.study_cells(record.id)? {
        if variant.is_some_and(|v| v != rec.cell.variant) {
            continue;
        }
        let (CellStatus::Done, Some(run_id)) = (rec.status, rec.run_id) else {
            continue;
        };
        let run = store.load_run(run_id)?;
        let mut cell = rec.cell;
        if variant.is_some() {
            cell.variant = format!("{study}/{}", cell.variant);
        }
        out.push(Subject { run, cell });
    }
    if out.is_empty() {
        return Err(Error::Subject(match variant {
            Some(v) => format!("study '{study}' has no finished cell of variant '{v}'"),
            None => format!("study '{study}' has no finished cell yet"),
        }));
    }
    let factors = record
        .factors
        .into_iter()
        .map(|f| FactorDef {
            name: f.name,
            levels: f.levels,
        })
        .collect();
    Ok((out, factors, crate::spec_setups::setups(&record.spec_toml)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use qpslab_core::fault::Blame;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(&dir.path().join("results.db")).unwrap();
        (dir, s)
    }

    fn user_error(r: Result<impl std::fmt::Debug, Error>) -> String {
        let e = r.unwrap_err();
        assert!(e.is_user_error(), "{e:?}");
        e.to_string()
    }

    #[test]
    fn unknown_names_are_the_users_mistake_with_one_clear_line() {
        let (_dir, s) = store();
        assert_eq!(
            user_error(side(&s, "7")),
            "no run 7 in the results store (see qpslab show)"
        );
        assert_eq!(
            user_error(side(&s, "nostudy")),
            "'nostudy' is neither a run id nor STUDY/VARIANT"
        );
        assert_eq!(
            user_error(side(&s, "nostudy/a")),
            "no run or study named 'nostudy' in the results store (see qpslab show, qpslab lab show)"
        );
        assert_eq!(
            user_error(report_input(&s, &["3,x".to_string()])),
            "no run or study named '3,x' in the results store (see qpslab show, qpslab lab show)"
        );
        assert_eq!(
            user_error(report_input(&s, &["3,5".to_string()])),
            "no run 3 in the results store (see qpslab show)"
        );
    }
}
