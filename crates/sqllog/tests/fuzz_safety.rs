//! Fuzzing of the statement classifier: random bytes and random SQL made of hostile pieces never
//! panic, and a reading left open (unknown version, flavor, `sql_mode` or client character set)
//! is never judged less harmful than any reading it covers. See `qpslab-fuzzkit` for the long
//! mode; `crates/cli/tests/replay_charsets.rs` holds the same property against a real server.

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

/// Client character sets whose readings an unknown one must cover: one of each way of splitting
/// bytes into characters, and names of the same ways.
const CHARSETS: [&str; 7] = [
    "utf8mb4", "latin1", "gbk", "big5", "sjis", "cp932", "gb18030",
];

fn covers(sql: &[u8]) {
    let any = Classifier::new(Dialect::UNKNOWN)
        .with_sql_mode(None)
        .peek(sql);
    assert!(any.effect >= classify(sql).effect, "{sql:?}");
    for (version, mariadb) in DIALECTS {
        for mode in MODES {
            for cs in CHARSETS {
                let one = Classifier::new(Dialect::new(Some(version), mariadb))
                    .with_sql_mode(Some(mode))
                    .with_charset(Some(cs))
                    .peek(sql);
                assert!(
                    any.effect >= one.effect,
                    "{sql:?}: {any:?} unknown, {one:?} on {version} {mode} {cs}"
                );
            }
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    Target::new("safety_random", 3000).run(
        |r| r.bytes(400),
        |b| {
            let mut c = Classifier::new(Dialect::new(Some(101100), true));
            let _ = (classify(b), c.classify(b), c.classify(b));
        },
    );
}

#[test]
fn an_open_reading_is_judged_at_least_as_harmful_as_each_it_covers() {
    const PIECES: [&[u8]; 52] = [
        b"select ",
        b"SELECT 1",
        b" ",
        b"\n",
        b";",
        b"'",
        b"\"",
        b"`",
        b"\\",
        b"''",
        b"/*",
        b"*/",
        b"/*!",
        b"/*!999999 ",
        b"/*!50700 ",
        b"/*!40101 ",
        b"/*M!",
        b"/*M!100000 ",
        b"/*m!",
        b"/*!? ",
        b"-- ",
        b"--",
        b"#",
        b"explain ",
        b"delete from t",
        b"update t set v=0",
        b"shutdown",
        b"drop ",
        b"temporary ",
        b"table t",
        b" into outfile '/x'",
        b"db.f()",
        b"mysql.user",
        b"SET sql_mode='NO_BACKSLASH_ESCAPES'",
        b"SET sql_mode='ANSI'",
        b"set sql_mode=@m",
        b"SET STATEMENT sql_mode='ANSI' FOR ",
        b"use mysql",
        b"(",
        b"\xc3\xa9",
        b"\xbf",
        b"\x81",
        b"\xa1",
        b"\xe0",
        b"\xf9",
        b"\xfd",
        b"SET NAMES gbk",
        b"SET NAMES 'big5'",
        b"SET CHARACTER SET sjis",
        b"SET character_set_client=@cs",
        b"SET NAMES utf8mb4",
        b"SET STATEMENT character_set_client=cp932 FOR ",
    ];
    let gen = |r: &mut FuzzRng| {
        (0..r.below(16))
            .flat_map(|_| r.pick(&PIECES).to_vec())
            .collect::<Vec<u8>>()
    };
    Target::new("safety_cover", 1500).run(gen, |sql| covers(sql));
}
