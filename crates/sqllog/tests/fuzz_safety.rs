//! Fuzzing of the statement classifier: random bytes and random SQL made of hostile pieces never
//! panic, and a reading left open (unknown version, flavor or `sql_mode`) is never judged less
//! harmful than any reading it covers. See `qpslab-fuzzkit` for the long mode.

use qpslab_fuzzkit::{FuzzRng, Target};
use qpslab_sqllog::{classify, Classifier, Dialect};

/// Servers whose readings the unknown dialect must cover.
const DIALECTS: [(u32, bool); 5] = [
    (101100, true),
    (100000, true),
    (50500, true),
    (80036, false),
    (50744, false),
];

/// `sql_mode`s whose readings an unknown mode must cover.
const MODES: [&str; 4] = [
    "",
    "NO_BACKSLASH_ESCAPES",
    "ANSI_QUOTES",
    "ANSI,NO_BACKSLASH_ESCAPES",
];

fn covers(sql: &str) {
    let any = Classifier::new(Dialect::UNKNOWN)
        .with_sql_mode(None)
        .peek(sql);
    assert!(any.effect >= classify(sql).effect, "{sql:?}");
    for (version, mariadb) in DIALECTS {
        for mode in MODES {
            let one = Classifier::new(Dialect::new(Some(version), mariadb))
                .with_sql_mode(Some(mode))
                .peek(sql);
            assert!(
                any.effect >= one.effect,
                "{sql:?}: {any:?} unknown, {one:?} on {version} {mode}"
            );
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    Target::new("safety_random", 3000).run(
        |r| r.bytes(400),
        |b| {
            let sql = String::from_utf8_lossy(b);
            let mut c = Classifier::new(Dialect::new(Some(101100), true));
            let _ = (classify(&sql), c.classify(&sql), c.classify(&sql));
        },
    );
}

#[test]
fn an_open_reading_is_judged_at_least_as_harmful_as_each_it_covers() {
    const PIECES: [&str; 40] = [
        "select ",
        "SELECT 1",
        " ",
        "\n",
        ";",
        "'",
        "\"",
        "`",
        "\\",
        "''",
        "/*",
        "*/",
        "/*!",
        "/*!999999 ",
        "/*!50700 ",
        "/*!40101 ",
        "/*M!",
        "/*M!100000 ",
        "/*m!",
        "/*!? ",
        "-- ",
        "--",
        "#",
        "explain ",
        "delete from t",
        "update t set v=0",
        "shutdown",
        "drop ",
        "temporary ",
        "table t",
        " into outfile '/x'",
        "db.f()",
        "mysql.user",
        "SET sql_mode='NO_BACKSLASH_ESCAPES'",
        "SET sql_mode='ANSI'",
        "set sql_mode=@m",
        "SET STATEMENT sql_mode='ANSI' FOR ",
        "use mysql",
        "(",
        "é",
    ];
    let gen = |r: &mut FuzzRng| {
        (0..r.below(16))
            .map(|_| *r.pick(&PIECES))
            .collect::<String>()
    };
    Target::new("safety_cover", 1500).run(gen, |sql| covers(sql));
}
