//! Where each part of a rendered report sits: what a reader meets first, what is folded.

use crate::render::{Html, MarkdownWithCharts, Renderer};
use crate::test_runs::{run, RO};
use crate::{build, ReportInput, Subject};

/// Two variants, `default` and `tuned`, in rounds: round k ran `a[k]` and `b[k]` per second.
fn study(a: &[f64], b: &[f64]) -> ReportInput {
    let mut subjects = Vec::new();
    for (k, (&ta, &tb)) in a.iter().zip(b).enumerate() {
        for (variant, t) in [("default", ta), ("tuned", tb)] {
            let mut s = Subject::lone(run(subjects.len() as i64 + 1, RO, t, 0.01));
            s.cell.variant = variant.into();
            s.cell.repeat = k as u32 + 1;
            subjects.push(s);
        }
    }
    ReportInput {
        title: "Study s".into(),
        studies: vec!["s".into()],
        subjects,
        ..Default::default()
    }
}

/// Issue 47: the placement and stability table (a row per phase) sits below the charts, folded
/// in HTML (open on demand), and below the charts in Markdown.
#[test]
fn the_placement_table_is_folded_below_the_charts() {
    let input = study(&[1000.0, 1040.0, 980.0], &[1150.0, 1110.0, 1180.0]);
    let r = build(&input).unwrap();
    let html = Html.render(&r).unwrap();
    let heading = html
        .find("<h2 id=\"placement\">")
        .expect("a placement section");
    let last_chart = html.rfind("<figure class=\"chart").expect("charts");
    assert!(last_chart < heading, "the placement table before a chart");
    let after = &html[heading..];
    let folded = after.find("<details").expect("folded");
    let table = after.find("<table>").unwrap();
    let end = after.find("</details>").unwrap();
    assert!(folded < table && table < end, "the table outside <details>");
    assert!(
        after[..table].contains("<summary>6 phases:"),
        "{}",
        &after[..table]
    );
    // One table of it in the page, none in the context section.
    let context = &html[html.find("id=\"context\"").unwrap()..heading];
    assert!(!context.contains("client placement"), "{context}");
    let md = MarkdownWithCharts { dir: "charts" }.render(&r).unwrap();
    let heading = md
        .find("## Client placement and stability per phase")
        .unwrap();
    assert!(md.rfind("](charts/").unwrap() < heading, "{md}");
    assert_eq!(md.matches("| client placement |").count(), 1, "{md}");
}
