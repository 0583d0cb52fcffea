//! The classifier against issue 45's charset trick: in gbk, big5, sjis and cp932 the trail byte
//! of a two-byte character may be `\` or `` ` ``, which the server reads as part of the
//! character. Each case is read in the session's character set, followed through what the log
//! sets; where it is not known, the worst reading wins.

use super::*;
use Effect::*;

/// A classifier for a MariaDB 10.11 session in client character set `cs` (None: not known).
fn on(cs: Option<&str>) -> Classifier {
    Classifier::new(Dialect::new(Some(101100), true)).with_charset(cs)
}

/// `head`, then `tail`'s bytes: a statement whose string ends in a two-byte character.
fn bytes(head: &[u8], tail: &str) -> Vec<u8> {
    [head, tail.as_bytes()].concat()
}

/// A lead byte of each character set whose characters may end in 0x5c.
const LEADS: [(&str, u8); 5] = [
    ("gbk", 0xbf),
    ("big5", 0xa1),
    ("sjis", 0x81),
    ("cp932", 0xe0),
    ("gb18030", 0x81),
];

#[test]
fn issue_45_a_trail_byte_0x5c_does_not_escape_the_quote() {
    for (cs, lead) in LEADS {
        let rw = bytes(
            &[b'S', b'E', b'T', b' ', b'@', b'a', b'=', b'\'', lead, 0x5c],
            "', SESSION tx_read_only=0 -- '",
        );
        let global = bytes(
            &[b'S', b'E', b'T', b' ', b'@', b'a', b'=', b'\'', lead, 0x5c],
            "', @@GLOBAL.max_connections=7 -- '",
        );
        // In the character set: the string closes at the quote after the character.
        assert_eq!(on(Some(cs)).classify(&rw).effect, Write, "{cs}");
        assert_eq!(on(Some(cs)).classify(&global).effect, Admin, "{cs}");
        // In utf8mb4 0x5c escapes the quote: one string assignment.
        assert_eq!(
            on(Some("utf8mb4")).classify(&global).effect,
            Session,
            "{cs}"
        );
        // Not known: the worst reading.
        assert_eq!(on(None).classify(&global).effect, Admin, "{cs}");
        assert_eq!(classify(&global).effect, Admin, "{cs}");
    }
}

#[test]
fn issue_45_the_session_follows_set_names_and_its_spellings() {
    let hostile = bytes(b"SELECT '\xbf\x5c', 1 FROM DUAL; SHUTDOWN -- '", "");
    for set in [
        "SET NAMES gbk",
        "SET NAMES 'gbk'",
        "SET CHARACTER SET gbk",
        "SET CHARSET gbk",
        "SET character_set_client = gbk",
        "SET @@character_set_client='gbk'",
        "SET @@session.character_set_client := gbk",
        "SET SESSION character_set_client = gbk, sql_mode = ''",
    ] {
        let mut c = on(Some("utf8mb4"));
        assert_eq!(c.classify(&hostile).effect, Read, "before {set}");
        assert_eq!(c.classify(set).effect, Session, "{set}");
        assert_eq!(c.classify(&hostile).effect, Admin, "after {set}");
        // And back.
        c.classify("SET NAMES utf8mb4");
        assert_eq!(c.classify(&hostile).effect, Read, "after {set} and back");
    }
    // A value that cannot be known, or a SET that may not run whole: every reading.
    for set in [
        "SET NAMES DEFAULT",
        "SET character_set_client = @cs",
        "SET character_set_client = 28",
        "SET NAMES klingon",
        "SET NAMES gbk, @a = (SELECT 1 FROM t)",
        // A collation of another character set fails the SET: the session may keep its own.
        "SET NAMES gbk COLLATE gbk_bin",
        "SET NAMES gbk COLLATE latin1_bin",
        "SELECT 1; SET NAMES gbk",
    ] {
        let mut c = on(Some("utf8mb4"));
        c.classify(set);
        assert_eq!(c.classify(&hostile).effect, Admin, "after {set}");
    }
    // After a SET that may have failed, a statement is read both ways: in gbk it hides the
    // clause that utf8mb4 reads.
    let mut c = on(Some("utf8mb4"));
    c.classify("SET NAMES gbk COLLATE latin1_bin");
    let other_way = bytes(b"SET @s='\xbf\x5c\x5c', SESSION tx_read_only=0 -- '", "");
    assert_eq!(c.classify(&other_way).effect, Write);
    // The session's own start: a known character set reads alike without a SET.
    assert_eq!(on(Some("gbk")).classify(&hostile).effect, Admin);
    assert_eq!(on(Some("latin1")).classify(&hostile).effect, Read);
    // SET GLOBAL changes new sessions, not this one.
    let mut c = on(Some("utf8mb4"));
    assert_eq!(
        c.classify("SET GLOBAL character_set_client = gbk").effect,
        Admin
    );
    assert_eq!(c.classify(&hostile).effect, Read);
}

#[test]
fn issue_45_set_statement_reads_its_statement_in_its_character_set() {
    // The server may read the statement in the session's character set or the one it sets:
    // both readings are judged.
    let mut c = on(Some("utf8mb4"));
    let sql = bytes(
        b"SET STATEMENT character_set_client=gbk FOR SELECT '\xbf\x5c', db.f_del() -- '",
        "",
    );
    assert_eq!(c.classify(&sql).effect, Write);
    // The session itself stays in utf8mb4.
    let hostile = bytes(b"SELECT '\xbf\x5c', 1; SHUTDOWN -- '", "");
    assert_eq!(c.classify(&hostile).effect, Read);
}

#[test]
fn issue_45_a_trail_byte_0x60_does_not_close_a_quoted_name() {
    // In gbk `0xbf 0x60` is a character: the name runs to the last backquote...
    let name = bytes(b"SELECT 1 AS `\xbf\x60, 2; SHUTDOWN -- `", "");
    assert_eq!(on(Some("gbk")).classify(&name).effect, Read);
    // ...and outside quotes it is a letter, where utf8mb4 would open a quoted name.
    let bare = bytes(b"SELECT 1 AS a\xbf\x60; SHUTDOWN -- `", "");
    assert_eq!(on(Some("gbk")).classify(&bare).effect, Admin);
    assert_eq!(on(Some("utf8mb4")).classify(&bare).effect, Read);
    assert_eq!(on(None).classify(&bare).effect, Admin);
    // In utf8mb4 the backquote closes the name: the SHUTDOWN runs.
    assert_eq!(on(Some("utf8mb4")).classify(&name).effect, Admin);
    assert_eq!(on(None).classify(&name).effect, Admin);
}

#[test]
fn issue_45_text_with_no_byte_read_two_ways_costs_one_reading() {
    // UTF-8 text whose multibyte characters never precede an ASCII byte, and ASCII text, read
    // alike in every character set: known or not, the verdict is the same.
    for sql in [
        "SELECT 'héllo', `naïve` FROM t",
        "SELECT c FROM sbtest1 WHERE id=1",
    ] {
        assert_eq!(on(None).classify(sql).effect, Read, "{sql}");
        assert_eq!(on(Some("gbk")).classify(sql).effect, Read, "{sql}");
    }
    // A long log line of such text is judged, not refused as too complex.
    let long = format!("SELECT '{}' FROM t", "é".repeat(200_000));
    assert_eq!(on(None).with_sql_mode(None).classify(&long).effect, Read);
}
