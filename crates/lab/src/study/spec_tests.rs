//! Tests of spec parsing and checking.

use super::*;

#[test]
fn unknown_keys_name_line_and_nearest_key() {
    let text =
        "name = \"s\"\n[defaults]\nworkload = \"oltp_read_only\"\n[sweep]\ntreads = [1, 2]\n";
    let e = parse("s.toml", text).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, SpecError::UnknownKey { line: 5, .. }), "{m}");
    assert!(
        m.contains("`treads`") && m.contains("did you mean `threads`") && m.contains("[sweep]"),
        "{m}"
    );

    let e = parse(
        "s.toml",
        "name = \"s\"\n\n[[variant]]\nname = \"a\"\nsett = {}\n",
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("line 5") && e.to_string().contains("`set`"),
        "{e}"
    );

    let e = parse("s.toml", "nmae = \"s\"\n").unwrap_err();
    assert!(e.to_string().contains("did you mean `name`"), "{e}");
}

#[test]
fn wrong_types_name_their_line() {
    let e = parse("s.toml", "name = \"s\"\n[sweep]\nthreads = [1, \"two\"]\n").unwrap_err();
    assert!(matches!(e, SpecError::Invalid { line: 3, .. }), "{e}");
    let e = parse("s.toml", "name = \"s\"\n[defaults]\nrepeats = \"x\"\n").unwrap_err();
    assert!(e.to_string().contains("line 3"), "{e}");
    let e = parse(
        "s.toml",
        "name = \"s\"\n[[variant]]\nname = \"a\"\ncpus = \"z\"\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("CPU list"), "{e}");
}

#[test]
fn factor_levels_keep_spec_order_and_merge() {
    let s = parse(
        "s.toml",
        "name = \"f\"\n[factors.config]\nstock = {}\ntuned = { set = { a = 1 } }\n[factors.malloc]\nsystem = {}\njemalloc = { malloc = \"jemalloc\" }\n",
    )
    .unwrap();
    assert_eq!(
        factor_list(&s),
        vec![
            (
                "config".to_string(),
                vec!["stock".to_string(), "tuned".to_string()]
            ),
            (
                "malloc".to_string(),
                vec!["system".to_string(), "jemalloc".to_string()]
            )
        ]
    );
    let merged = Setup::default()
        .with(&s.factors["config"]["tuned"])
        .with(&s.factors["malloc"]["jemalloc"]);
    assert_eq!(merged.set["a"].render(), "1");
    assert_eq!(merged.malloc.as_deref(), Some("jemalloc"));
}

#[test]
fn a_variants_my_cnf_is_also_read_under_its_old_key_profile() {
    let new = parse(
        "s",
        "name = \"m\"\n[[variant]]\nname = \"v\"\nmy_cnf = \"a.cnf\"\n",
    )
    .unwrap();
    let old = parse(
        "s",
        "name = \"m\"\n[[variant]]\nname = \"v\"\nprofile = \"a.cnf\"\n",
    )
    .unwrap();
    assert_eq!(
        new.variant[0].my_cnf.as_deref(),
        Some(std::path::Path::new("a.cnf"))
    );
    assert_eq!(new, old);
}

#[test]
fn targets_are_parsed_and_never_serialized_with_their_password() {
    let text =
        "name = \"t\"\n[[variant]]\nname = \"ext\"\ntarget = \"mysql://u:s3cr3t@db:3307/x\"\n";
    let with = parse("s", text).unwrap();
    let t = with.variant[0].target.as_ref().unwrap();
    assert_eq!(t.0.options().password.expose(), "s3cr3t");
    let shown = format!("{with:?} {}", normalized(&with));
    assert!(!shown.contains("s3cr3t"), "{shown}");
    let stored = redacted_text(&with, text);
    assert!(!stored.contains("s3cr3t") && stored.contains("mysql://u@db:3307/x"));
    // What resume compares: the spec from the file against the stored one.
    let without = parse("s", &stored).unwrap();
    assert!(differences(&normalized(&with), &normalized(&without)).is_empty());
    // An escaped password escapes the text redaction: the spec is re-serialized instead.
    let escaped = text.replace("u:s3cr3t", "u\\u003as3cr3t");
    let stored = redacted_text(&parse("s", &escaped).unwrap(), &escaped);
    assert!(
        !stored.contains("s3") && stored.contains("mysql://u@db:3307/x"),
        "{stored}"
    );
    let e = parse(
        "s",
        "name = \"t\"\n[[variant]]\nname = \"x\"\ntarget = \"pg://h\"\n",
    );
    assert!(e.unwrap_err().to_string().contains("line 4"));
    let e = parse(
        "s",
        "name = \"t\"\n[[variant]]\nname = \"x\"\npassword_file = \"/p\"\n",
    );
    assert!(e.unwrap_err().to_string().contains("password_file"));
}

#[test]
fn differences_name_what_changed() {
    let a = parse("s", "name = \"s\"\n[sweep]\nthreads = [1, 2]\n").unwrap();
    let b = parse(
        "s",
        "name = \"s\"\n# a comment\n[sweep]\nthreads = [1, 4]\n",
    )
    .unwrap();
    let c = parse("s", "name = \"s\"\n\n[sweep]\nthreads = [1, 2]\n").unwrap();
    assert_eq!(
        differences(&normalized(&a), &normalized(&b)),
        ["sweep.threads"]
    );
    assert!(differences(&normalized(&a), &normalized(&c)).is_empty());
    assert_eq!(spec_hash(&a), spec_hash(&c));
    assert_ne!(spec_hash(&a), spec_hash(&b));
}

#[test]
fn only_a_regular_file_within_the_limit_is_read() {
    let e = load(std::path::Path::new("/dev/zero")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "study spec /dev/zero is a character device, not a regular file"
    );
    let d = tempfile::tempdir().unwrap();
    let big = d.path().join("big.toml");
    let text = format!("name = \"s\"\n{}", "# padding\n".repeat(500_000));
    std::fs::write(&big, text).unwrap();
    let e = load(&big).unwrap_err().to_string();
    assert!(
        e.ends_with("big.toml is larger than 4 MiB, the limit for a study spec"),
        "{e}"
    );
}

#[test]
fn precision_and_budget_make_a_study_run_rounds_until_precise() {
    let spec = parse(
        "s.toml",
        "name = \"s\"\nprecision = \"2.5%\"\nbudget = \"10m\"\nmax_repeats = 8\n",
    )
    .unwrap();
    let r = spec.stop_rule().unwrap();
    assert!(r.adaptive());
    assert_eq!(r.precision_pct, Some(2.5));
    assert_eq!(r.budget_s, Some(600.0));
    assert_eq!((r.min_rounds, r.max_rounds), (3, 8));
    assert_eq!(r.metric, "tps");
    // Every round the study may run is expanded.
    assert_eq!(spec.rounds(), 8);
    // A budget alone aims at ±5%.
    let spec = parse(
        "s.toml",
        "name = \"s\"\nbudget = 300\nprecision_metric = \"p99\"\n",
    )
    .unwrap();
    let r = spec.stop_rule().unwrap();
    assert_eq!((r.precision_pct, r.budget_s), (Some(5.0), Some(300.0)));
    assert_eq!((r.metric.as_str(), r.max_rounds), ("p99", 20));
    assert_eq!(r.look_every, 0);
    // Planned looks go to every report through the rule.
    let spec = parse(
        "s.toml",
        "name = \"s\"\nbudget = 300\nlook_every = 5\nmax_repeats = 35\n",
    )
    .unwrap();
    let seq = spec.stop_rule().unwrap().sequential();
    assert_eq!(seq.look_every, 5);
    assert_eq!(seq.looks().unwrap().looks(), [5, 10, 15, 20, 25, 30, 35]);
}

#[test]
fn repeats_keeps_meaning_exactly_n() {
    let spec = parse("s.toml", "name = \"s\"\n[defaults]\nrepeats = 3\n").unwrap();
    let r = spec.stop_rule().unwrap();
    assert!(!r.adaptive());
    assert_eq!((r.min_rounds, r.max_rounds, spec.rounds()), (3, 3, 3));
    // Beside the other stopping keys, as the docs write it.
    let top = parse("s.toml", "name = \"s\"\nrepeats = 3\n").unwrap();
    assert_eq!(top.stop_rule().unwrap(), r);
    let both = parse(
        "s.toml",
        "name = \"s\"\nrepeats = 3\n[defaults]\nrepeats = 4\n",
    );
    assert!(both.unwrap_err().to_string().contains("repeats"));
    let bad = parse("s.toml", "name = \"s\"\nrepeats = 0\n");
    assert!(bad.unwrap_err().to_string().contains("repeats"));
}

#[test]
fn stopping_keys_that_contradict_are_refused_by_name() {
    for (text, needle) in [
        (
            "precision = \"5%\"\n[defaults]\nrepeats = 3\n",
            "repeats = N",
        ),
        ("precision = \"0%\"\n", "precision"),
        ("precision = \"five\"\n", "precision"),
        ("budget = \"soon\"\n", "budget"),
        ("budget = -1\n", "budget"),
        (
            "precision = 5\nprecision_metric = \"p42\"\n",
            "precision_metric",
        ),
        ("precision = 5\nmin_repeats = 2\n", "min_repeats"),
        (
            "precision = 5\nmin_repeats = 5\nmax_repeats = 4\n",
            "max_repeats",
        ),
        ("max_repeats = 4\n", "need precision or budget"),
        ("look_every = 5\n", "look_every need precision or budget"),
        (
            "precision = 5\nlook_every = 2\n",
            "look_every: looks need at least 3",
        ),
        (
            "precision = 5\nlook_every = 0\n",
            "look_every: looks need at least 3",
        ),
        (
            "precision = 5\nlook_every = 25\n",
            "look_every (25) is more than max_repeats (20)",
        ),
        (
            "precision = 5\nlook_every = 3\nmax_repeats = 300\n",
            "look_every: a look every 3 rounds up to 300 is 100 looks",
        ),
    ] {
        let e = parse("s.toml", &format!("name = \"s\"\n{text}")).unwrap_err();
        assert!(e.to_string().contains(needle), "{text}: {e}");
    }
}
