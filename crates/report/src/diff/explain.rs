//! The differences between two sides' EXPLAIN facts, one line each:
//! `events: partitions: p2024_02 → p0,p1,…,p11 (12)`, `events: rows: 7946 → 1918`.

use qpslab_core::diff::{Pair, TableFacts};

/// Partitions listed in full up to this many; longer lists show their ends and their count.
const PARTITIONS_SHOWN: usize = 4;

/// The differences between plan A and plan B (tables paired in plan order).
pub fn differences(plans: &Pair<Vec<TableFacts>>) -> Vec<String> {
    let [a, b] = plans;
    let mut out = Vec::new();
    for i in 0..a.len().max(b.len()) {
        match (a.get(i), b.get(i)) {
            (Some(x), Some(y)) if x.table == y.table => table(x, y, &mut out),
            (x, y) => out.push(format!(
                "table {}: {} → {}",
                i + 1,
                x.map_or("-", |t| t.table.as_str()),
                y.map_or("-", |t| t.table.as_str())
            )),
        }
    }
    out
}

fn table(a: &TableFacts, b: &TableFacts, out: &mut Vec<String>) {
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let fields = [
        ("access_type", opt(&a.access_type), opt(&b.access_type)),
        ("key", opt(&a.key), opt(&b.key)),
        (
            "possible_keys",
            list(&a.possible_keys),
            list(&b.possible_keys),
        ),
        (
            "partitions",
            partitions(&a.partitions),
            partitions(&b.partitions),
        ),
        (
            "using_filesort",
            a.using_filesort.to_string(),
            b.using_filesort.to_string(),
        ),
        (
            "using_temporary",
            a.using_temporary.to_string(),
            b.using_temporary.to_string(),
        ),
    ];
    for (name, x, y) in fields {
        if x != y {
            out.push(format!("{}: {name}: {x} → {y}", a.table));
        }
    }
    let numbers = [
        ("rows", a.rows, b.rows),
        ("filtered", a.filtered, b.filtered),
        ("pages_accessed", a.pages_accessed, b.pages_accessed),
    ];
    for (name, x, y) in numbers {
        if differ(x, y) {
            out.push(format!(
                "{}: {name}: {} → {}",
                a.table,
                number(x),
                number(y)
            ));
        }
    }
}

/// Differ by more than 1% (or one side unknown).
fn differ(x: Option<f64>, y: Option<f64>) -> bool {
    match (x, y) {
        (Some(x), Some(y)) => (x - y).abs() > 0.01 * x.abs().max(y.abs()),
        (x, y) => x.is_some() != y.is_some(),
    }
}

fn number(v: Option<f64>) -> String {
    match v {
        Some(v) if v.fract() == 0.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.2}"),
        None => "-".into(),
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.join(",")
    }
}

fn partitions(v: &[String]) -> String {
    if v.len() <= PARTITIONS_SHOWN {
        return list(v);
    }
    format!("{},{},…,{} ({})", v[0], v[1], v[v.len() - 1], v.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(partitions: &[&str], access: &str, rows: f64) -> TableFacts {
        TableFacts {
            table: "events".into(),
            access_type: Some(access.into()),
            partitions: partitions.iter().map(|p| p.to_string()).collect(),
            rows: Some(rows),
            ..Default::default()
        }
    }

    #[test]
    fn differences_name_the_table_and_the_field() {
        let all: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let plans = [
            vec![events(&["p2024_02"], "ALL", 7946.0)],
            vec![events(&all, "range", 1918.0)],
        ];
        assert_eq!(
            differences(&plans),
            [
                "events: access_type: ALL → range",
                "events: partitions: p2024_02 → p0,p1,…,p11 (12)",
                "events: rows: 7946 → 1918",
            ]
        );
        let same = [plans[0].clone(), plans[0].clone()];
        assert!(differences(&same).is_empty());
    }

    #[test]
    fn a_table_missing_on_one_side_is_a_difference() {
        let plans = [vec![events(&[], "ref", 1.0)], vec![]];
        assert_eq!(differences(&plans), ["table 1: events → -"]);
    }
}
