//! Fuzzing of the log reader and the fingerprints: random bytes and mutated real logs, read as
//! slow and as general logs, must give entries, skips or `UnknownFormat`, never a panic, a
//! hang or an allocation out of proportion to the input; every fingerprint must be folded
//! (lowercase, one space between tokens, no trailing `;`). See `qpslab-fuzzkit` for the long
//! mode.

use qpslab_fuzzkit::{measure, FuzzRng, Target};
use qpslab_sqllog::{classify, fingerprint, kind_of_fingerprint, LogError, LogReader, LogType};

#[global_allocator]
static ALLOC: qpslab_fuzzkit::CountingAlloc = qpslab_fuzzkit::CountingAlloc;

const FIXTURES: [&[u8]; 5] = [
    include_bytes!("data/mariadb-10.11-slow.log"),
    include_bytes!("data/mariadb-10.11-general.log"),
    include_bytes!("data/mysql-8.0-slow.log"),
    include_bytes!("data/mysql-5.7-slow.log"),
    include_bytes!("data/mysql-8.0-general.log"),
];

/// The fingerprint of `sql` has no capital, no whitespace but single spaces between tokens,
/// no trailing `;`.
fn assert_folded(sql: &[u8]) {
    let fp = fingerprint(sql);
    let bad = fp
        .bytes()
        .any(|b| b.is_ascii_uppercase() || matches!(b, b'\n' | b'\t' | b'\r'))
        || fp.contains("  ")
        || fp.starts_with(' ')
        || fp.ends_with([' ', ';']);
    assert!(!bad, "fingerprint {fp:?} of {sql:?} is not folded");
    // The safety classifier reads any text without panicking, the fingerprint too.
    let _ = (classify(sql), kind_of_fingerprint(&fp));
}

/// Reads everything; returns (entries, skipped) or the format error.
fn read(input: &[u8], kind: LogType) -> Result<(u64, u64), LogError> {
    let mut r = LogReader::new(input, kind)?;
    let mut n = 0;
    for e in r.by_ref() {
        let e = e?;
        assert_folded(&e.sql);
        n += 1;
    }
    assert_eq!(r.bytes_read(), input.len() as u64);
    Ok((n, r.skipped()))
}

fn check(input: &[u8]) {
    let lines = input.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
    for kind in [LogType::Slow, LogType::General] {
        let (got, used) = measure(|| read(input, kind));
        match got {
            Ok((entries, skipped)) => assert!(
                entries + skipped <= lines,
                "{entries} + {skipped} > {lines}"
            ),
            Err(LogError::UnknownFormat(why)) => {
                assert!(!why.contains('\n') && why.chars().count() < 200)
            }
            Err(e) => panic!("unexpected error {e}"),
        }
        assert!(
            used.largest <= (64 << 10) + 8 * input.len(),
            "allocated {} for {} bytes",
            used.largest,
            input.len()
        );
    }
}

#[test]
fn random_bytes() {
    Target::new("sqllog_random", 3000).run(|r| r.bytes(600), |b| check(b));
}

#[test]
fn mutated_logs() {
    let gen = |r: &mut FuzzRng| {
        let base = *r.pick(&FIXTURES);
        let mut v = r.mutate(base);
        for _ in 0..r.below(3) {
            v = r.mutate(&v);
        }
        v
    };
    Target::new("sqllog_mutated", 1500).run(gen, |b| check(b));
}

#[test]
fn random_sql_is_folded() {
    const PIECES: [&str; 33] = [
        "select ",
        "SELECT",
        " ",
        "\n",
        ";",
        "'",
        "\"",
        "`",
        "\\",
        "1",
        "0x1f",
        ".5",
        "-",
        "+",
        "e",
        "(",
        ")",
        ",",
        " in ",
        "values",
        "/*",
        "*/",
        "-- ",
        "#",
        "limit ?",
        "/*!",
        "/*M!",
        "@@",
        "@",
        "shutdown",
        "set ",
        "prepare s from ",
        "é",
    ];
    let gen = |r: &mut FuzzRng| {
        (0..r.below(40))
            .map(|_| *r.pick(&PIECES))
            .collect::<String>()
    };
    Target::new("sqllog_fingerprint", 5000).run(gen, |sql| assert_folded(sql.as_bytes()));
}
