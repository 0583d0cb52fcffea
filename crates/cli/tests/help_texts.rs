//! Numbers in help texts are the constants they describe: each is read back from `--help`
//! and compared with the library's constant, so changing one without the other fails here.

mod common;
use common::*;

/// `qpslab ARGS --help` as printed.
fn help_text(args: &[&str]) -> String {
    let out = Scratch::new().run(&[args, &["--help"]].concat());
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Words joined by single spaces (clap wraps to the terminal).
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `qpslab ARGS --help`, as [`words`].
fn help(args: &[&str]) -> String {
    words(&help_text(args))
}

/// The entry of `--option` in a help text: its line and the indented lines below it, up to
/// the next option's line.
fn option_help(help: &str, option: &str) -> String {
    let is_option = |l: &str| {
        let t = l.trim_start();
        t.starts_with('-') && l.len() - t.len() < 10
    };
    let lines: Vec<&str> = help.lines().collect();
    let start = lines
        .iter()
        .position(|l| is_option(l) && l.contains(&format!("{option} <")))
        .unwrap_or_else(|| panic!("no {option} in {help}"));
    let end = lines[start + 1..]
        .iter()
        .position(|l| is_option(l))
        .map_or(lines.len(), |i| start + 1 + i);
    words(&lines[start..end].join("\n"))
}

/// The number right after `phrase` in `text` (`at least 8` → 8).
fn number_after(text: &str, phrase: &str) -> f64 {
    let at = text
        .find(phrase)
        .unwrap_or_else(|| panic!("no '{phrase}' in: {text}"));
    let digits: String = text[at + phrase.len()..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after '{phrase}' in: {text}"))
}

#[test]
fn diff_rounds_are_the_constants_the_rounds_obey() {
    let h = help_text(&["diff"]);
    let repeats = &option_help(&h, "--repeats");
    let min = qpslab_traffic::diff::MIN_ROUNDS as f64;
    assert_eq!(number_after(repeats, "at least "), min, "{repeats}");
    let pct = qpslab_traffic::diff::PRECISION_PCT;
    assert_eq!(number_after(repeats, "within ±"), pct, "{repeats}");
    let max_time = &option_help(&h, "--max-time-per-class");
    assert_eq!(
        number_after(max_time, "after the first "),
        min,
        "{max_time}"
    );
}

#[test]
fn tune_states_the_least_gain_and_the_fewest_repeats() {
    let h = help(&["tune"]);
    let gain = (qpslab_tune::confirm::MIN_GAIN - 1.0) * 100.0;
    let said = number_after(&h, "the ratio is at least ");
    assert!((said - gain).abs() < 0.5, "{said} against {gain}: {h}");
    assert!(h.contains(&format!("{said}% above the baseline")), "{h}");
    let level = number_after(&h, "written to --out only when the ");
    assert_eq!(level, qpslab_tune::confirm::LEVEL * 100.0, "{h}");
    let repeats = &option_help(&help_text(&["tune"]), "--repeats");
    let min = f64::from(qpslab_tune::confirm::MIN_REPEATS);
    assert_eq!(number_after(repeats, "at least "), min, "{repeats}");
    assert_eq!(number_after(repeats, "[default: "), min, "{repeats}");
}

#[test]
fn tune_has_no_flag_that_does_nothing() {
    assert!(!help(&["tune"]).contains("--apply-dynamic-only"));
    let out = Scratch::new().run(&["tune", "--budget", "1m", "--apply-dynamic-only"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn capture_quotes_no_measurement_of_some_machine() {
    let h = help(&["capture"]);
    assert!(
        h.contains("Logging every statement costs throughput"),
        "{h}"
    );
    for machine_specific in ["2-core", "this machine", "bench/RESULTS.md", "26%"] {
        assert!(!h.contains(machine_specific), "{machine_specific}: {h}");
    }
}
