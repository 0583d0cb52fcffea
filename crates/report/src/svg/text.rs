//! Text measured before it is placed: the advance widths of DejaVu Sans (the first font the
//! charts ask for, and the one the PNG renderer finds on a Linux host), so a legend wraps and a
//! title is shortened before it would leave its chart. A character outside the table counts as
//! a full em, and bold text as 10% wider, so the estimate errs on the wide side: a narrower
//! fallback font (Liberation Sans, Arial) only leaves more room.

/// Advance widths of the printable ASCII characters (32..=126) in thousandths of an em,
/// read from DejaVuSans.ttf's `hmtx` table.
const ASCII: [u16; 95] = [
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636,
    636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632,
    575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685,
    611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579,
    278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
];

/// The advance width of `c`, in thousandths of an em.
fn advance(c: char) -> u16 {
    match c {
        ' '..='~' => ASCII[c as usize - 32],
        '·' => 318,
        '–' => 500,
        '→' | '×' | '±' | '−' => 838,
        _ => 1000,
    }
}

/// The width of `s` drawn at `size` px, in px.
pub fn width(s: &str, size: f64) -> f64 {
    s.chars().map(|c| f64::from(advance(c))).sum::<f64>() * size / 1000.0
}

/// The width of `s` drawn in bold at `size` px.
pub fn bold_width(s: &str, size: f64) -> f64 {
    width(s, size) * 1.1
}

/// `s` as drawn at `size` px within `room` px: whole when it fits, else cut and ended with `…`.
pub fn fit(s: &str, size: f64, room: f64) -> String {
    if width(s, size) <= room {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = width("…", size);
    for c in s.chars() {
        used += f64::from(advance(c)) * size / 1000.0;
        if used > room {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

/// The names shortened by dropping the parts (between ` · `) every one of them has, and those
/// common parts joined with commas (empty when nothing is common, or when there is a single
/// name: a lone name is kept whole). A name left with no part of its own is kept whole.
pub fn drop_common(names: &[String]) -> (Vec<String>, String) {
    const SEP: &str = " · ";
    let split: Vec<Vec<&str>> = names.iter().map(|n| n.split(SEP).collect()).collect();
    let Some(first) = split.first() else {
        return (Vec::new(), String::new());
    };
    if split.len() < 2 {
        return (names.to_vec(), String::new());
    }
    let common: Vec<&str> = first
        .iter()
        .copied()
        .filter(|w| split.iter().all(|s| s.contains(w)))
        .collect();
    let short = split
        .iter()
        .zip(names)
        .map(|(parts, name)| {
            let rest: Vec<&str> = parts
                .iter()
                .copied()
                .filter(|w| !common.contains(w))
                .collect();
            if rest.is_empty() {
                name.clone()
            } else {
                rest.join(SEP)
            }
        })
        .collect();
    (short, common.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_font() {
        // "i" is under half an "m"; twelve digits at 10 px are 76.3 px.
        assert!(width("i", 10.0) * 2.0 < width("m", 10.0));
        assert!((width("012345678901", 10.0) - 76.32).abs() < 0.01);
        assert!(bold_width("abc", 12.0) > width("abc", 12.0));
    }

    #[test]
    fn fit_cuts_with_an_ellipsis_within_the_room() {
        assert_eq!(fit("short", 12.0, 100.0), "short");
        let cut = fit("baseline workload=oltp_read_only", 12.0, 80.0);
        assert!(cut.ends_with('…') && width(&cut, 12.0) <= 80.0, "{cut}");
    }

    #[test]
    fn common_parts_are_dropped_and_said_once() {
        let names: Vec<String> = [
            "run 1 · oltp_read_only · (stable)",
            "run 2 · oltp_read_only · (stable)",
        ]
        .map(String::from)
        .into();
        let (short, common) = drop_common(&names);
        assert_eq!(short, ["run 1", "run 2"]);
        assert_eq!(common, "oltp_read_only, (stable)");
        let one = vec!["baseline · x".to_string()];
        assert_eq!(drop_common(&one), (one.clone(), String::new()));
        let same: Vec<String> = ["a · x", "a · x"].map(String::from).into();
        assert_eq!(drop_common(&same).0, same);
    }
}
