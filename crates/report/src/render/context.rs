//! The context section's tables and the stability lines beside comparisons, for every format.

use crate::charts::verdict_word;
use crate::report::Report;

/// A table whose header is built from the report (variant names).
pub(crate) type OwnedTable = (Vec<String>, Vec<Vec<String>>);

/// One part of the context section: an optional heading (with its HTML id), then a table or,
/// when there is nothing to list, a sentence.
pub(crate) struct Part {
    /// The heading's id and text (none: the section's first table).
    pub heading: Option<(&'static str, &'static str)>,
    /// The table.
    pub table: OwnedTable,
    /// Said instead of an empty table.
    pub when_empty: &'static str,
}

/// The context section's parts in order: provenance, the shared facts, the differences (with
/// more than one setup). The client's placement per phase ([`placement`]) comes after the
/// charts.
pub(crate) fn parts(r: &Report) -> Vec<Part> {
    let mut out = vec![
        Part {
            heading: None,
            table: provenance_table(r),
            when_empty: "",
        },
        Part {
            heading: Some(("what-ran", "What ran and on what")),
            table: common_table(r),
            when_empty: "nothing is known of the setup",
        },
    ];
    if let Some(table) = differences_table(r) {
        out.push(Part {
            heading: Some(("setup-differences", "Differences between setups")),
            table,
            when_empty: "none: the setups share every fact above",
        });
    }
    out
}

/// Where the client ran each phase, how busy its loops were, and each phase's verdict: a row
/// per phase (74 for a study of a few dozen cells), so every format places it below the charts
/// and HTML folds it, open on demand; `None` when no phase was measured.
pub(crate) fn placement(r: &Report) -> Option<Part> {
    let table = placement_table(r);
    (!table.1.is_empty()).then_some(Part {
        heading: Some(("placement", PLACEMENT_HEADING)),
        table,
        when_empty: "",
    })
}

/// The placement table's heading.
const PLACEMENT_HEADING: &str = "Client placement and stability per phase";

fn head(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// Which qpslab, command, dates and runs.
fn provenance_table(r: &Report) -> OwnedTable {
    let rows = r
        .context
        .provenance
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    (head(&["", "value"]), rows)
}

/// The facts every setup shares: group, fact, value.
fn common_table(r: &Report) -> OwnedTable {
    let rows = r
        .context
        .common()
        .map(|f| {
            vec![
                f.group.clone(),
                f.name.clone(),
                f.values.first().cloned().unwrap_or_default(),
            ]
        })
        .collect();
    (head(&["about", "fact", "value"]), rows)
}

/// The facts that differ: group, fact, one value per variant; `None` with a single setup.
fn differences_table(r: &Report) -> Option<OwnedTable> {
    if r.context.variants.len() < 2 {
        return None;
    }
    let mut h = head(&["about", "fact"]);
    h.extend(r.context.variants.iter().cloned());
    let rows = r
        .context
        .differences()
        .map(|f| {
            let mut row = vec![f.group.clone(), f.name.clone()];
            row.extend(f.values.iter().cloned());
            row
        })
        .collect();
    Some((h, rows))
}

/// Where the client ran each phase, how busy its loops were, and the phase's verdict.
fn placement_table(r: &Report) -> OwnedTable {
    let rows = r
        .context
        .placement
        .iter()
        .map(|p| {
            vec![
                p.variant.clone(),
                p.key.clone(),
                p.repeat.to_string(),
                p.placement.clone(),
                p.busy.clone(),
                p.waited.clone(),
                p.stability.clone(),
            ]
        })
        .collect();
    (
        head(&[
            "variant",
            "at",
            "repeat",
            "client placement",
            "loop busy",
            "loop waited",
            "stability",
        ]),
        rows,
    )
}

/// `stability: bp8m: 4 stable; bp1g: 3 stable, 1 client-bound` for the phases of two variants
/// at one point, or `None` when none was measured there.
pub(crate) fn stability_line(r: &Report, variants: [&str; 2], key: &str) -> Option<String> {
    let parts: Vec<String> = variants
        .iter()
        .filter_map(|v| {
            let mut counts: Vec<(&str, usize)> = Vec::new();
            for x in r.results.iter().filter(|x| x.variant == *v && x.key == key) {
                let w = verdict_word(x.stability.as_ref());
                match counts.iter_mut().find(|(k, _)| *k == w) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((w, 1)),
                }
            }
            (!counts.is_empty()).then(|| {
                let c: Vec<String> = counts.iter().map(|(w, n)| format!("{n} {w}")).collect();
                format!("{v}: {}", c.join(", "))
            })
        })
        .collect();
    (!parts.is_empty()).then(|| format!("stability: {}", parts.join("; ")))
}
