//! Issue 45: statements are read in the connection's client character set, as the server reads
//! them. On the shared MariaDB server, in every multibyte character set a client can use, hostile
//! statements (a two-byte character whose trail byte is `\` or `` ` `` before a quote, and random
//! ones made of such pieces) run with the session in a read-only transaction; wherever the server
//! read a hidden `SESSION tx_read_only=0`, the classifier must judge the statement at least a
//! write: in the character set, after the log's `SET NAMES`, where the character set is not
//! known, and read back from a slow log and a general log through replay's own loader.

use qpslab_core::ConnectOptions;
use qpslab_sqllog::{Classifier, Dialect, Effect, LogType};
use qpslab_traffic::replay::{source, Reading, Sessions};
use qpslab_wire::Conn;
use std::path::Path;

/// The clause a reading may hide: it makes the session's transactions writable (harmless here:
/// each probe starts read-only and is checked after).
const HIDDEN: &[u8] = b"SESSION tx_read_only=0";

/// Statements whose reading turns on a two-byte character: for every byte 0x80..=0xff as a
/// lead, with a trail byte `\` before a string's quote, `` ` `` inside a quoted name and after
/// a bare one.
fn probes() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for lead in 0x80..=0xffu8 {
        let with = |parts: &[&[u8]]| parts.concat();
        out.push(with(&[
            b"SET @s='",
            &[lead, b'\\'],
            b"', ",
            HIDDEN,
            b" -- '",
        ]));
        out.push(with(&[
            b"SET @s=\"",
            &[lead, b'\\'],
            b"\", ",
            HIDDEN,
            b" -- \"",
        ]));
        out.push(with(&[
            b"SET @`",
            &[lead, b'`'],
            b"=1, ",
            HIDDEN,
            b" -- `=1",
        ]));
        out.push(with(&[
            b"SET @r",
            &[lead, b'`'],
            b"=1, ",
            HIDDEN,
            b" -- `=1",
        ]));
        out.push(with(&[
            b"SET @s='",
            &[lead, b'\\', b'\\'],
            b"', ",
            HIDDEN,
            b" -- '",
        ]));
    }
    out
}

/// Random statements of hostile pieces (a fixed seed: the same ones every run).
fn random_probes(n: usize, seed: u64) -> Vec<Vec<u8>> {
    const PIECES: [&[u8]; 24] = [
        b"'", b"\"", b"`", b"\\", b"\x81", b"\xa1", b"\xbf", b"\xe0", b"\xfc", b"\x80", b"\xff",
        b"\x5c", b"\x60", b"@", b"a", b" ", b"1", b", ", b" -- ", b"#", b"/*", b"*/", HIDDEN,
        b"=1",
    ];
    let mut x = seed;
    let mut next = move |k: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % k as u64) as usize
    };
    (0..n)
        .map(|_| {
            let mut s = b"SET @a=".to_vec();
            for _ in 0..2 + next(10) {
                s.extend_from_slice(PIECES[next(PIECES.len())]);
            }
            s.extend_from_slice(b", ");
            s.extend_from_slice(HIDDEN);
            for _ in 0..next(4) {
                s.extend_from_slice(PIECES[next(PIECES.len())]);
            }
            s
        })
        .collect()
}

/// The client character sets the server has whose characters take more than one byte (ucs2,
/// utf16 and utf32 cannot be a client's).
fn multibyte_charsets(c: &mut Conn) -> Vec<String> {
    c.query(
        "SELECT CHARACTER_SET_NAME FROM information_schema.CHARACTER_SETS WHERE MAXLEN > 1 \
         AND CHARACTER_SET_NAME NOT IN ('ucs2', 'utf16', 'utf16le', 'utf32') ORDER BY 1",
    )
    .unwrap()
    .rows
    .into_iter()
    .filter_map(|r| r.into_iter().next().flatten())
    .collect()
}

/// Whether the server, with the session in `cs`, read `sql`'s hidden clause (ran it).
fn server_runs_hidden(opts: &ConnectOptions, c: &mut Conn, cs: &str, sql: &[u8]) -> bool {
    c.execute("SET SESSION tx_read_only=1").unwrap();
    if c.query_bytes(sql).is_err() {
        // A syntax error runs nothing; a lost connection is opened again for the next probe.
        if c.ping().is_err() {
            *c = Conn::connect(opts).unwrap();
            c.execute(&format!("SET NAMES {cs}")).unwrap();
        }
        return false;
    }
    c.query("SELECT @@tx_read_only").unwrap().first_value() == Some("0")
}

fn assert_at_least_write(v: qpslab_sqllog::Verdict, how: &str, cs: &str, sql: &[u8]) {
    assert!(
        v.effect >= Effect::Write,
        "{cs}, {how}: the server ran the hidden clause of {sql:?}, judged {v:?}"
    );
}

#[test]
fn issue_45_every_multibyte_charset_is_read_as_the_server_reads_it() {
    let opts = qpslab_sandbox::testing::shared_server().connect_options();
    let mut c = Conn::connect(&opts).expect("connect");
    let dialect = Dialect::of_server(c.server_version());
    let charsets = multibyte_charsets(&mut c);
    for cs in ["gbk", "big5", "sjis", "cp932", "utf8mb4"] {
        assert!(charsets.iter().any(|c| c == cs), "{cs} not in {charsets:?}");
    }
    let mut all = probes();
    all.extend(random_probes(400, 0x45));
    let dir = tempfile::tempdir().unwrap();
    for cs in &charsets {
        c.execute(&format!("SET NAMES {cs}")).unwrap();
        let ran: Vec<&Vec<u8>> = all
            .iter()
            .filter(|sql| server_runs_hidden(&opts, &mut c, cs, sql))
            .collect();
        for sql in &ran {
            let known = Classifier::new(dialect)
                .with_charset(Some(cs))
                .classify(sql);
            assert_at_least_write(known, "known", cs, sql);
            let mut followed = Classifier::new(dialect).with_charset(Some("utf8mb4"));
            followed.classify(format!("SET NAMES {cs}"));
            assert_at_least_write(followed.classify(sql), "after SET NAMES", cs, sql);
            let unknown = Classifier::new(Dialect::UNKNOWN).classify(sql);
            assert_at_least_write(unknown, "not known", cs, sql);
        }
        // The trick works where the issue found it: the test has teeth there.
        if ["gbk", "big5", "sjis", "cp932"].contains(&cs.as_str()) {
            assert!(
                ran.len() > 100,
                "{cs}: only {} probes ran the clause",
                ran.len()
            );
        }
        for kind in [LogType::Slow, LogType::General] {
            let path = dir.path().join(format!("{cs}-{kind:?}.log"));
            write_log(&path, kind, cs, &ran);
            let mut loaded = source::load(&path, kind).unwrap().log;
            // As replay judges it once the target is reached: sessions start in utf8mb4 and
            // follow the log's SET NAMES.
            let target = Reading::of(&mut Conn::connect(&opts).unwrap()).unwrap();
            loaded.classify_for(&[target], Sessions::Kept);
            let judged: Vec<_> = loaded
                .stmts
                .iter()
                .filter(|s| !s.sql.starts_with(b"SET NAMES "))
                .collect();
            assert_eq!(
                judged.len(),
                ran.len(),
                "{cs} {kind:?}: statements read back"
            );
            for s in judged {
                assert_at_least_write(s.verdict, &format!("{kind:?} log"), cs, &s.sql);
            }
        }
    }
}

/// A MariaDB 10.11 log of `kind` with one connection per statement, each `SET NAMES cs` then
/// the statement, its bytes as they are.
fn write_log(path: &Path, kind: LogType, cs: &str, stmts: &[&Vec<u8>]) {
    let mut out: Vec<u8> = b"/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1 (Debian 12). \
        started with:\nTcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n\
        Time\t\t    Id Command\tArgument\n"
        .to_vec();
    for (i, sql) in stmts.iter().enumerate() {
        let thread = 10 + i;
        for text in [format!("SET NAMES {cs}").into_bytes(), sql.to_vec()] {
            match kind {
                LogType::Slow => {
                    out.extend_from_slice(
                        format!(
                            "# Time: 261123  4:25:10\n# User@Host: app[app] @ localhost []\n\
                             # Thread_id: {thread}  Schema: shop  QC_hit: No\n\
                             # Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: 0  \
                             Rows_examined: 0\nSET timestamp=1795407949;\n"
                        )
                        .as_bytes(),
                    );
                    out.extend_from_slice(&text);
                    out.extend_from_slice(b";\n");
                }
                LogType::General => {
                    out.extend_from_slice(format!("\t\t{thread:>6} Query\t").as_bytes());
                    out.extend_from_slice(&text);
                    out.push(b'\n');
                }
            }
        }
    }
    std::fs::write(path, out).unwrap();
}
