//! Fuzzing of the text a user hands qpslab: option files (`--defaults-file`) and DSNs.
//! Random and mutated inputs must give a value or an error, never a panic; values written
//! with the format's own quoting and escaping must parse back to themselves; a DSN's
//! password never shows in its Display or Debug form. See `qpslab-fuzzkit` for the long mode.

use qpslab_core::dsn::{Dsn, Endpoint};
use qpslab_core::optfile::parse_client_options;
use qpslab_fuzzkit::{FuzzRng, Target};

/// A string over an alphabet rich in the formats' special characters.
fn text(r: &mut FuzzRng, max: usize) -> String {
    const ALPHABET: [&str; 30] = [
        "a",
        "b",
        "Z",
        "0",
        "9",
        " ",
        "\t",
        "=",
        "#",
        ";",
        "!",
        "[",
        "]",
        "\"",
        "'",
        "\\",
        "_",
        "-",
        ":",
        "@",
        "/",
        "?",
        "&",
        "%",
        "%4",
        "+",
        ".",
        "é",
        "\u{1F600}",
        "\r",
    ];
    (0..r.len(max)).map(|_| *r.pick(&ALPHABET)).collect()
}

/// A value quoted as a my.cnf writer would: backslashes and the quote escaped.
fn quote(v: &str, q: char) -> String {
    let body = v.replace('\\', "\\\\").replace(q, &format!("\\{q}"));
    format!("{q}{body}{q}")
}

fn option_line(r: &mut FuzzRng) -> String {
    match r.below(9) {
        0 => format!(
            "[{}]",
            r.pick(&["client", "mysql", "mysqld", " Client ", "qpslab"])
        ),
        1 => format!("[{}", text(r, 8)),
        2 => format!("!include {}", text(r, 12)),
        3 => format!("!includedir {}", text(r, 12)),
        4 => format!("{} {}", r.pick(&["#", ";"]), text(r, 20)),
        5 => format!(
            "{} = {}",
            text(r, 8),
            quote(&text(r, 16), *r.pick(&['"', '\'']))
        ),
        _ => text(r, 30),
    }
}

#[test]
fn fuzz_option_files() {
    Target::new("core_optfile_random", 20_000).run(
        |r| {
            let lines: Vec<String> = (0..r.below(10)).map(|_| option_line(r)).collect();
            let eol = if r.one_in(4) { "\r\n" } else { "\n" };
            lines.join(eol)
        },
        |t| {
            if let Ok(o) = parse_client_options(t) {
                assert!(o.keys().all(|k| !k.contains('_') && k.trim() == k), "{o:?}");
            }
        },
    );
}

#[test]
fn fuzz_option_values_round_trip() {
    Target::new("core_optfile_round_trip", 20_000).run(
        |r| {
            let pairs: Vec<(String, String, char)> = (0..=r.below(5))
                .map(|i| {
                    let v = text(r, 20).replace(['\r', '\n'], "");
                    (format!("key_{i}"), v, *r.pick(&['"', '\'']))
                })
                .collect();
            pairs
        },
        |pairs| {
            let mut t = String::from("[client]\n");
            for (k, v, q) in pairs {
                t.push_str(&format!("{k} = {}\n", quote(v, *q)));
            }
            let o = parse_client_options(&t).unwrap();
            for (k, v, _) in pairs {
                assert_eq!(&o[&k.replace('_', "-")], v, "in {t:?}");
            }
        },
    );
}

/// Percent-encodes every byte that is not unreserved in a URL.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[test]
fn fuzz_dsns_round_trip() {
    Target::new("core_dsn_round_trip", 20_000).run(
        |r| {
            let user = text(r, 12);
            let password = format!("Pw{}", r.u64());
            let db = text(r, 12);
            let host = r
                .pick(&["127.0.0.1", "db.example", "[::1]", "h-1"])
                .to_string();
            let port = 1 + r.below(65535) as u16;
            (user, password, host, port, db)
        },
        |(user, password, host, port, db)| {
            let url = format!(
                "mysql://{}:{}@{host}:{port}/{}",
                encode(user),
                encode(password),
                encode(db)
            );
            let d: Dsn = url.parse().unwrap();
            let o = d.options();
            assert_eq!(&o.user, user);
            assert_eq!(o.password.expose(), password);
            assert_eq!(o.database.as_deref().unwrap_or(""), db);
            let want_host = host.trim_start_matches('[').trim_end_matches(']');
            let want = Endpoint::Tcp {
                host: want_host.into(),
                port: *port,
            };
            assert_eq!(o.endpoint, want);
            let shown = format!("{d} {d:?} {}", o.describe());
            assert!(!shown.contains(password.as_str()), "{shown}");
        },
    );
}

#[test]
fn fuzz_dsns_random() {
    Target::new("core_dsn_random", 30_000).run(
        |r| {
            let prefix = r.pick(&["mysql://", "mariadb://", "", "mysql:/"]);
            let mut s = format!("{prefix}{}", text(r, 40));
            if r.one_in(3) {
                let q: [&str; 6] = ["socket=", "ssl-mode=", "ssl_ca=", "x=", "&", "="];
                s.push('?');
                for _ in 0..=r.below(3) {
                    let k = *r.pick(&q);
                    s.push_str(k);
                    s.push_str(&text(r, 8));
                }
            }
            s
        },
        |s| {
            if let Ok(d) = s.parse::<Dsn>() {
                // What is shown must not depend on the password (the password itself may
                // happen to spell the host, as "😀" did).
                let mut other = d.options().clone();
                other.password = Default::default();
                let blank = Dsn(other);
                assert_eq!(format!("{d} {d:?}"), format!("{blank} {blank:?}"));
            }
        },
    );
}

#[test]
fn fuzz_percent_escapes() {
    Target::new("core_dsn_percent_escapes", 5_000).run(
        |r| text(r, 3),
        |esc| {
            let url = format!("mysql://u@h/db%{esc}");
            let hex = esc.len() >= 2 && esc.bytes().take(2).all(|b| b.is_ascii_hexdigit());
            let utf8 = !hex || u8::from_str_radix(&esc[..2], 16).is_ok_and(|b| b < 0x80);
            // One escape: a second '%' ("%0b%4") would be judged on its own.
            let one = !esc.get(2..).unwrap_or("").contains('%');
            let parsed = url.parse::<Dsn>();
            if one {
                assert_eq!(parsed.is_ok(), hex && utf8, "{url}: {parsed:?}");
            }
        },
    );
}

#[test]
fn a_percent_escape_with_a_sign_is_refused() {
    // Found by core_dsn_percent_escapes: "%+1" decoded as 0x01 (from_str_radix takes a sign).
    assert!("mysql://u@h/db%+1".parse::<Dsn>().is_err());
    assert!("mysql://u%2B1@h/db".parse::<Dsn>().is_ok());
}
