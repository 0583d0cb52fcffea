//! Fuzzing of study specs: TOML parse, checks, expansion into cells and each cell's plan, as
//! `qpslab lab plan/run` do them. Random specs built from the format's own keys, and the
//! shipped examples mutated, must give a spec or an error, never a panic, a hang or an
//! expansion out of proportion (see `qpslab-fuzzkit` for the long mode).

use qpslab_fuzzkit::{measure, FuzzRng, Target};
use qpslab_lab::options::OPTIONS;
use qpslab_lab::study::expand::{expand, MAX_CELLS};
use qpslab_lab::study::spec::parse;

#[global_allocator]
static ALLOC: qpslab_fuzzkit::CountingAlloc = qpslab_fuzzkit::CountingAlloc;

/// Parses, expands and plans `text` as `study::load` does; returns the number of cells.
fn load(text: &str) -> Option<usize> {
    let spec = parse("fuzz.toml", text).ok()?;
    let e = expand("fuzz.toml", &spec).ok()?;
    for c in &e.cells {
        let _ = c.options.to_plan();
    }
    Some(e.cells.len())
}

fn value(r: &mut FuzzRng) -> String {
    let words = [
        "\"2s\"",
        "\"500ms\"",
        "\"1m\"",
        "\"x\"",
        "\"\"",
        "\"on\"",
        "\"off\"",
        "\"0-3,6\"",
        "\"0-18446744073709551615\"",
        "\"3-1\"",
        "\"1G\"",
        "\"jemalloc\"",
        "\"never\"",
        "\"oltp_read_only\"",
        "\"tcp\"",
        "\"uniform\"",
        "\"special\"",
        "\"1e400s\"",
        "\"-1s\"",
        "\"NaN\"",
        "\"é\"",
        "true",
        "false",
        "0",
        "1",
        "-1",
        "2",
        "4294967295",
        "4294967296",
        "9223372036854775807",
        "0.5",
        "1e308",
        "nan",
        "inf",
        "{}",
        "[]",
    ];
    match r.below(6) {
        0 => {
            let items: Vec<String> = (0..r.below(5)).map(|_| value(r)).collect();
            format!("[{}]", items.join(", "))
        }
        1 => r.below(1 << 20).to_string(),
        _ => r.pick(&words).to_string(),
    }
}

fn key(r: &mut FuzzRng) -> String {
    let extra = [
        "name",
        "set",
        "cpus",
        "malloc",
        "basedir",
        "profile",
        "target",
        "os",
        "thp",
        "storage",
        "fs",
        "description",
        "treads",
        "",
        "a b",
        "innodb_buffer_pool_size",
        "repeats",
        "threads",
        "cpus",
        "client_cpus",
    ];
    if r.one_in(2) {
        r.pick(&OPTIONS).name.to_string()
    } else {
        r.pick(&extra).to_string()
    }
}

/// A spec assembled from the format's sections and keys, with random values.
fn random_spec(r: &mut FuzzRng) -> String {
    let mut t = String::new();
    if !r.one_in(10) {
        t.push_str(&format!(
            "name = {}\n",
            r.pick(&["\"s\"", "\"\"", "\" \"", "1"])
        ));
    }
    for _ in 0..r.below(7) {
        match r.below(6) {
            0 => t.push_str("[defaults]\n"),
            1 => t.push_str("[sweep]\n"),
            2 => {
                t.push_str("[[variant]]\n");
                t.push_str(&format!("name = \"v{}\"\n", r.below(4)));
            }
            3 => t.push_str(&format!("[factors.f{}]\n", r.below(30))),
            4 => t.push_str(&format!("[factors.f{}.l{}]\n", r.below(30), r.below(3))),
            _ => {}
        }
        for _ in 0..r.below(4) {
            t.push_str(&format!("{} = {}\n", key(r), value(r)));
        }
        if r.one_in(4) {
            let levels: Vec<String> = (0..r.below(4))
                .map(|i| format!("l{i} = {{ set = {{ x = {} }} }}", value(r)))
                .collect();
            t.push_str(&levels.join("\n"));
            t.push('\n');
        }
    }
    t
}

fn check(text: &str) {
    let started = std::time::Instant::now();
    let (cells, m) = measure(|| load(text));
    assert!(cells.unwrap_or(0) <= MAX_CELLS);
    // A cell costs some KiB; the bound follows from the limit, not from the spec.
    assert!(m.total <= 64 * 1024 * 1024 + 1024 * text.len(), "{m:?}");
    assert!(
        started.elapsed().as_secs() < 10,
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn fuzz_random_specs() {
    Target::weighted("lab_spec_random", 1_500, 0.05).run(random_spec, |t| check(t));
}

#[test]
fn fuzz_mutated_example_specs() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    // The study specs (examples/ also holds a Prometheus config and a Grafana dashboard).
    let mut examples: Vec<String> = std::fs::read_dir(dir)
        .expect("the examples directory")
        .filter_map(|e| {
            let path = e.ok()?.path();
            (path.extension()? == "toml").then_some(())?;
            std::fs::read_to_string(path).ok()
        })
        .collect();
    examples.sort();
    assert!(!examples.is_empty());
    for e in &examples {
        assert!(load(e).is_some(), "an example must load:\n{e}");
    }
    Target::weighted("lab_spec_mutated", 1_500, 0.05).run(
        |r| {
            let e = r.pick(&examples).clone();
            String::from_utf8_lossy(&r.mutate(e.as_bytes())).into_owned()
        },
        |t| check(t),
    );
}

#[test]
fn a_cpu_range_to_the_largest_number_is_an_error_not_an_exhausted_memory() {
    // `cpus = "0-18446744073709551615"` listed every number of the range.
    let e = parse(
        "s.toml",
        "name = \"s\"\n[[variant]]\nname = \"a\"\ncpus = \"0-18446744073709551615\"\n",
    )
    .unwrap_err();
    assert!(e.to_string().contains("CPU list"), "{e}");
    // Run options are checked as the spec is read.
    let spec = "name = \"s\"\n[defaults]\nclient_cpus = \"2-99999999999\"\n";
    let e = parse("s.toml", spec).unwrap_err();
    assert!(e.to_string().contains("CPU list"), "{e}");
}

#[test]
fn a_runaway_expansion_is_refused_before_it_is_built() {
    // `repeats = 4294967295`, or thirty two-level factors, expanded billions of cells.
    for text in [
        "name = \"s\"\n[defaults]\nrepeats = 4294967295\n".to_string(),
        (0..30).fold("name = \"s\"\n".to_string(), |t, i| {
            t + &format!("[factors.f{i}]\na = {{}}\nb = {{}}\n")
        }),
    ] {
        let spec = parse("s.toml", &text).unwrap();
        let (e, m) = measure(|| expand("s.toml", &spec).unwrap_err());
        assert!(e.to_string().contains("more than 100000"), "{e}");
        assert!(m.total < 1024 * 1024, "{m:?}");
    }
    let ok = "name = \"s\"\n[defaults]\nrepeats = 3\n[sweep]\nthreads = [1, 2]\n";
    assert_eq!(load(ok), Some(6));
}
