//! The same series given to qpslab's change point detection and to Apache Otava's (from PyPI,
//! driven by `otava_peer.py` beside this file): both must find the same change points.
//!
//! Otava is found as `import otava` in `python3`; when that fails, the test installs it the way
//! CI does (`python3 -m pip install apache-otava`) and skips, saying so loudly, only if it still
//! cannot be imported. Otava's E-divisive (`compute_change_points_orig`, the method qpslab
//! follows) must give the same indexes; Otava's default t-test variant must find every change
//! qpslab finds, and finds more on the same data: the difference docs/history.md explains.

use qpslab_stats::changepoint::{detect, Options};
use std::io::Write;
use std::process::{Command, Stdio};

/// Seeded normal noise: xorshift and Box–Muller, the same on every machine.
struct Normals(u64);

impl Normals {
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn next(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// Pieces of (level, runs) joined, with normal noise of `cv` × level.
fn series(seed: u64, cv: f64, pieces: &[(f64, usize)]) -> Vec<f64> {
    let mut rng = Normals(seed);
    pieces
        .iter()
        .flat_map(|&(level, len)| {
            (0..len)
                .map(|_| level * (1.0 + cv * rng.next()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The series both are given: a step up, a step down and back (the buffer pool), three
/// levels, and flat ones, each under several noise seeds.
fn cases() -> Vec<(String, Vec<f64>)> {
    let mut out = Vec::new();
    for seed in 1..=5u64 {
        let mut add = |name: &str, cv, pieces: &[(f64, usize)]| {
            out.push((
                format!("{name} (noise seed {seed})"),
                series(seed, cv, pieces),
            ));
        };
        add("step up 20%", 0.01, &[(1000.0, 15), (1200.0, 15)]);
        add(
            "down 15% and back",
            0.03,
            &[(1000.0, 12), (850.0, 8), (1000.0, 10)],
        );
        add(
            "three levels",
            0.02,
            &[(1000.0, 20), (1100.0, 20), (950.0, 20)],
        );
        add("flat", 0.03, &[(1000.0, 30)]);
    }
    out
}

fn otava_imports() -> bool {
    Command::new("python3")
        .args(["-c", "import otava.analysis"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A line on the test process's own stderr, which the test harness does not capture (its
/// capture takes only `eprintln!`): a skip must show in CI's log even when the test passes.
fn loud(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Otava importable, installing it from PyPI the way CI does when it is not.
fn find_otava() -> bool {
    if otava_imports() {
        return true;
    }
    loud("otava_peer: `import otava` failed; installing apache-otava from PyPI");
    for extra in [&[][..], &["--break-system-packages"][..]] {
        let _ = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "apache-otava"])
            .args(extra)
            .status();
        if otava_imports() {
            return true;
        }
    }
    false
}

/// Otava's change point indexes for each series, by `otava_peer.py ARGS`.
fn otava(args: &[&str], all: &[Vec<f64>]) -> Vec<Vec<usize>> {
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/otava_peer.py");
    let mut child = Command::new("python3")
        .arg(driver)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut input = String::new();
    for xs in all {
        let line: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
        input.push_str(&line.join(" "));
        input.push('\n');
    }
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "otava_peer.py {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<Vec<usize>> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split_whitespace().map(|i| i.parse().unwrap()).collect())
        .collect();
    assert_eq!(lines.len(), all.len(), "one line per series");
    lines
}

fn ours(xs: &[f64], opts: &Options) -> Vec<usize> {
    detect(xs, opts).unwrap().iter().map(|c| c.index).collect()
}

#[test]
fn otava_finds_the_same_change_points() {
    if !find_otava() {
        loud(
            "\n*** SKIPPED otava_peer: python3 cannot import otava, even after \
             `python3 -m pip install apache-otava`: qpslab's change points were NOT compared \
             with Apache Otava's ***\n",
        );
        return;
    }
    let cases = cases();
    let all: Vec<Vec<f64>> = cases.iter().map(|(_, xs)| xs.clone()).collect();
    let opts = Options::default();
    let edivisive = otava(&["edivisive", "0.01", "1"], &all);
    let ttest = otava(&["ttest", "0.01", "50"], &all);
    let mut report = String::new();
    for (((name, xs), e), t) in cases.iter().zip(&edivisive).zip(&ttest) {
        report.push_str(&format!(
            "{name}: qpslab {:?}, otava e-divisive {e:?}, otava t-test {t:?}\n",
            ours(xs, &opts)
        ));
    }
    eprintln!("{report}");
    for (((name, xs), e), t) in cases.iter().zip(&edivisive).zip(&ttest) {
        let mine = ours(xs, &opts);
        // The same method: the same change points.
        assert_eq!(&mine, e, "{name}: Otava's E-divisive differs\n{report}");
        // Otava's default tests each candidate by a t-test at the best split, not by
        // permutations: it finds every change we find, and more (docs/history.md says why).
        assert!(
            mine.iter().all(|i| t.contains(i)),
            "{name}: Otava's t-test variant misses one of ours\n{report}"
        );
    }
}
