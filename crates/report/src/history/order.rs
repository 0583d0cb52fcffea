//! The x axis of a history: the order of a series' points and the text each is shown with.
//!
//! `time` orders runs by when they started; `server_version` by the server's version read as
//! numbers (`10.11.6` before `11.4.2`); `label:KEY` by a label every run carries, read as
//! numbers (`build=12`) or as dotted versions (`v1.2.10` after `v1.2.9`). Runs at one place
//! on the axis (one version measured several times) keep the order they started in. Values
//! that are neither, or a run without the label, cannot be ordered: the user's error, naming
//! what is there.

use super::HistoryError;
use qpslab_store::StoredRun;
use std::cmp::Ordering;
use std::fmt;

/// The x axis asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum By {
    /// When each run started.
    Time,
    /// The server's version.
    ServerVersion,
    /// A label's value.
    Label(String),
}

impl By {
    /// `time`, `server_version` or `label:KEY`.
    pub fn parse(t: &str) -> Result<By, HistoryError> {
        match t {
            "time" => Ok(By::Time),
            "server_version" => Ok(By::ServerVersion),
            _ => match t.strip_prefix("label:") {
                Some(k) if !k.is_empty() => Ok(By::Label(k.to_string())),
                _ => Err(HistoryError::Bad(format!(
                    "--by: time, server_version or label:KEY (label:build), not '{t}'"
                ))),
            },
        }
    }
}

impl fmt::Display for By {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            By::Time => f.write_str("time"),
            By::ServerVersion => f.write_str("server_version"),
            By::Label(k) => write!(f, "label:{k}"),
        }
    }
}

/// A place on the axis that sorts.
#[derive(Clone, Debug, PartialEq)]
enum Place {
    Number(f64),
    Version(Vec<u64>),
}

impl Place {
    fn cmp(&self, o: &Place) -> Ordering {
        match (self, o) {
            (Place::Number(a), Place::Number(b)) => a.total_cmp(b),
            (Place::Version(a), Place::Version(b)) => a.cmp(b),
            // One axis reads all its values one way (see `places`).
            _ => Ordering::Equal,
        }
    }
}

/// `10.11.6-MariaDB-0+deb12u1` → `[10, 11, 6]`; `v1.2` → `[1, 2]`; none when `t` does not start
/// with a dotted number.
fn version(t: &str) -> Option<Vec<u64>> {
    let t = t.strip_prefix(['v', 'V']).unwrap_or(t);
    let head: &str = t
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .unwrap_or("");
    let parts: Option<Vec<u64>> = head.split('.').map(|p| p.parse().ok()).collect();
    parts.filter(|p| !p.is_empty())
}

/// `(run index, phase index, x text)` of `members` in axis order.
pub(super) fn order(
    runs: &[StoredRun],
    members: &[(usize, usize)],
    by: &By,
) -> Result<Vec<(usize, usize, String)>, HistoryError> {
    let texts: Vec<String> = members
        .iter()
        .map(|(i, _)| text(&runs[*i], by))
        .collect::<Result<_, _>>()?;
    let places = places(&texts, by)?;
    let mut idx: Vec<usize> = (0..members.len()).collect();
    let started = |k: usize| runs[members[k].0].meta.started_at;
    idx.sort_by(|a, b| {
        let by_place = match &places {
            Some(p) => p[*a].cmp(&p[*b]),
            None => Ordering::Equal,
        };
        by_place
            .then(started(*a).total_cmp(&started(*b)))
            .then(runs[members[*a].0].id.0.cmp(&runs[members[*b].0].id.0))
    });
    Ok(idx
        .into_iter()
        .map(|k| (members[k].0, members[k].1, texts[k].clone()))
        .collect())
}

/// The x text of `run`: its start (`2026-12-08 02:33:10`), version or label.
fn text(run: &StoredRun, by: &By) -> Result<String, HistoryError> {
    Ok(match by {
        By::Time => qpslab_store::iso8601_utc(run.meta.started_at)
            .replace('T', " ")
            .trim_end_matches('Z')
            .to_string(),
        By::ServerVersion => run.meta.server.version.clone(),
        By::Label(k) => match run.meta.plan.labels.get(k) {
            Some(v) => v.clone(),
            None => {
                let keys: Vec<&str> = run.meta.plan.labels.keys().map(String::as_str).collect();
                return Err(HistoryError::Unordered(format!(
                    "run {} has no label {k} (its labels: {}); label every run of the series \
                     (run --label {k}=VALUE), or order by time (--by time)",
                    run.id.0,
                    if keys.is_empty() {
                        "none".to_string()
                    } else {
                        keys.join(", ")
                    }
                )));
            }
        },
    })
}

/// Where each text lies on the axis (none for time: runs are then ordered by their start).
fn places(texts: &[String], by: &By) -> Result<Option<Vec<Place>>, HistoryError> {
    if *by == By::Time {
        return Ok(None);
    }
    let numbers: Option<Vec<Place>> = texts
        .iter()
        .map(|t| {
            t.parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .map(Place::Number)
        })
        .collect();
    if *by != By::ServerVersion {
        if let Some(n) = numbers {
            return Ok(Some(n));
        }
    }
    let versions: Option<Vec<Place>> = texts
        .iter()
        .map(|t| version(t).map(Place::Version))
        .collect();
    versions.map(Some).ok_or_else(|| {
        let mut odd: Vec<&str> = texts
            .iter()
            .filter(|t| version(t).is_none())
            .map(String::as_str)
            .collect();
        odd.dedup();
        odd.truncate(5);
        HistoryError::Unordered(format!(
            "{by} cannot be ordered: {} {} neither a number nor a version (values there: {}); \
             order by time (--by time)",
            odd.join(", "),
            if odd.len() == 1 { "is" } else { "are" },
            sample(texts)
        ))
    })
}

/// Up to 6 distinct values of `texts`, in order met.
fn sample(texts: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for t in texts {
        if !seen.contains(&t.as_str()) {
            seen.push(t);
        }
    }
    let more = seen.len() > 6;
    seen.truncate(6);
    seen.join(", ") + if more { ", ..." } else { "" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_as_numbers() {
        assert_eq!(version("10.11.6-MariaDB-0+deb12u1"), Some(vec![10, 11, 6]));
        assert_eq!(version("v1.2"), Some(vec![1, 2]));
        assert_eq!(version("abc123"), None);
        assert!(version("1.2.10") > version("1.2.9"));
        assert_eq!(By::parse("label:build").unwrap(), By::Label("build".into()));
        assert!(By::parse("label:").is_err());
        assert!(By::parse("commit").is_err());
    }

    #[test]
    fn labels_order_as_numbers_or_versions_or_not_at_all() {
        let by = By::Label("build".into());
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let p = places(&t(&["10", "9", "2.5"]), &by).unwrap().unwrap();
        assert_eq!(p[1].cmp(&p[0]), Ordering::Less);
        let p = places(&t(&["1.2.10", "1.2.9"]), &by).unwrap().unwrap();
        assert_eq!(p[1].cmp(&p[0]), Ordering::Less);
        let e = places(&t(&["abc123", "def456", "7"]), &by)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("label:build cannot be ordered: abc123, def456 are neither")
                && e.contains("values there: abc123, def456, 7"),
            "{e}"
        );
    }
}
