//! The change points of series read from stdin, one series a line (values separated by spaces);
//! one line out per series with the indexes found. For bench/changepoint_false_alarms.py.
//!
//! ```text
//! cargo run --release -p qpslab-stats --example changepoints -- [SIGNIFICANCE [PERMUTATIONS]]
//! ```

use qpslab_stats::changepoint::{detect, Options};
use std::io::{BufRead, Write};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts = Options::default();
    if let Some(s) = args.first() {
        opts.significance = s.parse().expect("SIGNIFICANCE is a number");
    }
    if let Some(r) = args.get(1) {
        opts.permutations = r.parse().expect("PERMUTATIONS is a count");
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin reads");
        let xs: Vec<f64> = line
            .split_whitespace()
            .map(|v| v.parse().expect("values are numbers"))
            .collect();
        let found = match detect(&xs, &opts) {
            Ok(found) => found,
            Err(e) => {
                eprintln!("changepoints: {e}");
                std::process::exit(2);
            }
        };
        let indexes: Vec<String> = found.iter().map(|c| c.index.to_string()).collect();
        writeln!(out, "{}", indexes.join(" ")).expect("stdout writes");
    }
}
