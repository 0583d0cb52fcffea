//! The walks in docs/ARCHITECTURE.md, computed from the sources: following one option of a
//! command from its CLI entry to where the work is done, as a reader would, and counting the
//! times the reading climbs back up to a crate above the one it was in (a return to the caller
//! to go on, or a callback into an observer). The docs show this test's output; regenerate
//! them with `UPDATE_GOLDEN=1 cargo test -p qpslab --test walks` and review the diff.
//!
//! How a walk is read (a reading aid, not a compiler): every function of every crate's `src`,
//! without unit tests; in a function's body, each call `f(`, `X::f(` or `.f(`, which goes to the
//! functions of that name in the caller's crate or the crates it depends on (a path call to the
//! one whose type or module is `X`; a method call also to implementations, in any crate, of a
//! trait the caller's crates declare: the callbacks); a call with more than four candidates is
//! too ambiguous and is skipped. A call is followed when it passes the option on: an argument
//! (or the receiver) names the command's arguments, the option, or a name bound from them
//! (`let`, `for`), and the callee either names the option or takes that argument as a type that
//! holds it (a struct with a field of the option's name, or with a field of such a type).

mod walker;

use std::path::{Path, PathBuf};
use walker::*;

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The docs' text for one walk.
fn section(title: &str, w: &Walk) -> String {
    let climbs = if w.climbs.is_empty() {
        String::new()
    } else {
        format!(": {}", w.climbs.join(", "))
    };
    format!(
        "{title}: {} stops; {} call(s) from the CLI down into the libraries; {} climb(s) back \
         up{climbs}.\n\n```text\n{}\n```\n",
        w.lines.len(),
        w.calls_down,
        w.climbs.len(),
        w.lines.join("\n")
    )
}

const WALKS: [(&str, &str, &str, &str, &str, usize); 2] = [
    (
        "`qpslab run --threads`",
        "qpslab",
        "cmd::run",
        "run",
        "threads",
        4,
    ),
    (
        "`qpslab tune --budget`",
        "qpslab",
        "cmd::tune",
        "tune",
        "budget|budget_s",
        4,
    ),
];

#[test]
fn the_documented_walks_are_the_codes() {
    let ws = Workspace::load();
    let mut text = String::new();
    for (title, krate, module, name, word, most) in WALKS {
        let w = ws.walk(krate, module, name, word);
        assert!(
            w.lines.len() > 2,
            "{title}: the walk found no callee naming `{word}`:\n{:?}",
            w.lines
        );
        assert!(
            w.climbs.len() <= most,
            "{title}: {} climbs back up (at most {most}): {:?}\n{}",
            w.climbs.len(),
            w.climbs,
            w.lines.join("\n")
        );
        text.push_str(&section(title, &w));
        text.push('\n');
    }
    let docs = workspace().join("docs/ARCHITECTURE.md");
    let doc = std::fs::read_to_string(&docs).unwrap();
    let (start, end) = ("<!-- walks: begin -->\n", "<!-- walks: end -->");
    let (Some(a), Some(b)) = (doc.find(start), doc.find(end)) else {
        panic!("docs/ARCHITECTURE.md has no `{start}` ... `{end}` section");
    };
    let current = &doc[a + start.len()..b];
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let new = format!("{}{text}{}", &doc[..a + start.len()], &doc[b..]);
        std::fs::write(&docs, new).unwrap();
    } else {
        assert_eq!(
            current, text,
            "docs/ARCHITECTURE.md's walks are stale: UPDATE_GOLDEN=1 cargo test -p qpslab --test walks"
        );
    }
}

#[test]
fn tokens_skip_strings_comments_and_lifetimes() {
    let t = tokens("fn a<'x>(s: &'x str) { f(\"g(\"); /* h( */ r#\"i(\"#; 'j'; k(); }");
    let names: Vec<&str> = t.iter().filter_map(|x| ident(Some(x))).collect();
    assert_eq!(names, ["fn", "a", "s", "str", "f", "k"]);
}

#[test]
fn functions_know_their_impl() {
    let t = tokens(
        "impl<'a> Observer for Printer<'a> { fn phase(&mut self) { go(1) } }\n\
         impl Foo { fn new() -> Self { Self::make() } }\nfn free() {}",
    );
    let mut out = Vec::new();
    functions(&t, "c", "m", &mut out);
    let got: Vec<_> = out
        .iter()
        .map(|f| (f.name.as_str(), f.owner.as_deref(), f.trait_impl.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("phase", Some("Printer"), Some("Observer")),
            ("new", Some("Foo"), None),
            ("free", None, None)
        ]
    );
    let c = calls(&out[1].body);
    assert_eq!(c.len(), 1);
    assert_eq!(
        (c[0].name.as_str(), c[0].qualifier.as_deref(), c[0].method),
        ("make", Some("Self"), false)
    );
}
