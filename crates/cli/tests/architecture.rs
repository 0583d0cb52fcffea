//! The architecture's rules, checked on the sources: within each crate the modules depend on
//! each other one way (no import circles), clap appears only in the CLI's `args` module, and no
//! source file grows past 600 lines.
//!
//! The crate root (`lib.rs`, `main.rs`) is a module like the others for circles: an item it
//! defines (`use crate::Store`) is a dependency on it, and its code's paths into a module
//! (`durable::close()`) are its dependencies; only its `mod` lines and `pub use` re-exports,
//! the crate's table of contents, are not.

mod common;

use common::sources::{rust_files as sources, workspace};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `a::b` for `src/a/b.rs` or `src/a/b/mod.rs`; `crate` for `lib.rs`/`main.rs`.
fn module_name(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    if parts.is_empty() {
        "crate".into()
    } else {
        parts.join("::")
    }
}

/// The code of a file without its unit tests (they may use anything).
fn without_tests(text: &str) -> &str {
    text.find("#[cfg(test)]\nmod tests")
        .map_or(text, |i| &text[..i])
}

/// Whether `c` may be part of an identifier.
fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths a path or `use` tree starting at `s` names, each appended to `prefix`:
/// `a::b` gives one, `{a, b::{c, d}}` three, `a::{self, b}` both `a` and `a::b`; a glob or
/// an item path (`a::f()`) ends where the path ends.
fn tree_paths(s: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    let mut i = 0;
    loop {
        let rest = &s[i..];
        if let Some(list) = rest.strip_prefix('{') {
            i += 1 + list_paths(list, &path, out);
            return i;
        }
        let end = rest.find(|c: char| !ident_char(c)).unwrap_or(rest.len());
        match &rest[..end] {
            "" => break,
            "self" => {}
            seg => path.push(seg.to_string()),
        }
        i += end;
        match s[i..].strip_prefix("::") {
            Some(_) => i += 2,
            None => break,
        }
    }
    out.push(path);
    i
}

/// The trees of a braced list `a, b::c, {d}}` (after its `{`), each appended to `prefix`;
/// returns the bytes read, through the closing `}`.
fn list_paths(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut i = 0;
    loop {
        i += s[i..].len() - s[i..].trim_start().len();
        match s[i..].chars().next() {
            None => return i,
            Some('}') => return i + 1,
            Some(',') => i += 1,
            Some(c) if ident_char(c) || c == '{' || c == '*' => {
                let n = tree_paths(&s[i..], prefix.to_vec(), out);
                // past `as y` or a glob's `*`, to the next item
                i += n + s[i + n..].find([',', '}']).unwrap_or(s.len() - i - n);
            }
            Some(_) => i += s[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
}

/// The items the crate root defines or re-exports, each with the module it belongs to:
/// `crate` for a `struct`, `fn`, ... written in the root itself, the defining module for a
/// `pub use a::b::Item` (so `use crate::Item` depends on `a::b`, not on the root).
fn root_items(text: &str, known: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in without_tests(text).lines() {
        if let Some(name) = item_name(line) {
            out.insert(name.to_string(), "crate".to_string());
        }
    }
    for (at, _) in text.match_indices("pub use ") {
        let mut paths = Vec::new();
        tree_paths(&text[at + "pub use ".len()..], Vec::new(), &mut paths);
        for mut path in paths {
            if path.first().is_some_and(|p| p == "crate" || p == "self") {
                path.remove(0);
            }
            let Some(name) = path.last().cloned() else {
                continue;
            };
            let module = (1..path.len())
                .rev()
                .map(|k| path[..k].join("::"))
                .find(|cand| known.contains(cand));
            if let Some(module) = module {
                out.entry(name).or_insert(module);
            }
        }
    }
    out
}

/// The name of the item a line begins, if it begins one at the top level (an item inside a
/// function or an `impl` is indented): `pub(crate) const fn f(` gives `f`.
fn item_name(line: &str) -> Option<&str> {
    let kinds = [
        "struct",
        "enum",
        "fn",
        "const",
        "static",
        "trait",
        "type",
        "union",
        "macro_rules!",
    ];
    let qualifiers = ["pub", "async", "unsafe", "extern", "\"C\"", "const"];
    let mut words = line
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '<' | ':' | ';' | '{'))
        .peekable();
    loop {
        let w = words.next()?;
        if w.is_empty() && line.starts_with(char::is_whitespace) {
            return None;
        }
        // `const fn f`: the kind is `fn`; `pub(crate)`: `crate` is a qualifier's part
        let more = words.peek().is_some_and(|n| kinds.contains(n));
        if kinds.contains(&w) && !(w == "const" && more) {
            return words.find(|n| !n.is_empty());
        }
        if !(qualifiers.contains(&w) || w.is_empty() || w == "crate" || w == "super") {
            return None;
        }
    }
}

/// The code of `text`: comment lines (doc comments included: a link to an item is not a use
/// of it) become empty lines.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The crate root's text without its table of contents: its `pub use` re-exports (and
/// `pub(crate) use`), which list the modules' items rather than use them.
fn without_reexports(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("pub") {
        let after = rest[at..].trim_start_matches("pub");
        let after = match after.strip_prefix('(') {
            Some(a) => a.split_once(')').map_or(a, |(_, r)| r),
            None => after,
        };
        let reexport = after.trim_start().starts_with("use ")
            && (at == 0 || !ident_char(rest[..at].chars().next_back().unwrap_or(' ')));
        if reexport {
            out.push_str(&rest[..at]);
            rest = rest[at..].split_once(';').map_or("", |(_, r)| r);
        } else {
            out.push_str(&rest[..at + 3]);
            rest = &rest[at + 3..];
        }
    }
    out.push_str(rest);
    out
}

/// The modules `text` (module `m`) refers to, among `known`: `crate::`, `super::` and
/// `self::` paths in `use` trees (braced and nested lists included) and in code, not
/// counting a module's own ancestors or descendants. A path to an item of the crate root
/// (`crate::Store`, from a top-level module `super::Store`) refers to the module `root`
/// says it belongs to; the root itself (`m` is `crate`) also refers to the modules its code
/// names directly (`durable::f()`), its re-exports aside.
fn references(
    m: &str,
    text: &str,
    known: &BTreeSet<String>,
    root: &BTreeMap<String, String>,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |path: &[String]| {
        let module = (1..=path.len())
            .rev()
            .map(|k| path[..k].join("::"))
            .find(|cand| known.contains(cand))
            .or_else(|| path.first().and_then(|item| root.get(item)).cloned());
        if let Some(cand) = module {
            let related = cand == m
                || m.starts_with(&format!("{cand}::"))
                || cand.starts_with(&format!("{m}::"));
            if !related {
                out.insert(cand);
            }
        }
    };
    let own: Vec<String> = if m == "crate" {
        Vec::new()
    } else {
        m.split("::").map(String::from).collect()
    };
    let code = without_comments(text);
    let code = if m == "crate" {
        without_reexports(&code)
    } else {
        code
    };
    let text = code.as_str();
    for (i, _) in text.match_indices("::") {
        // the first `::` of a path: its root is the word before it
        let head = &text[..i];
        let root_at = head.trim_end_matches(ident_char).len();
        let before = head[..root_at].chars().next_back();
        if matches!(before, Some(':' | '$')) {
            continue;
        }
        let word = &head[root_at..];
        let (mut base, from) = match word {
            "crate" => (Vec::new(), i + 2),
            "self" => (own.clone(), i + 2),
            "super" => (own[..own.len().saturating_sub(1)].to_vec(), i + 2),
            // the root names its own modules without `self::`
            _ if m == "crate" && known.contains(word) => (Vec::new(), root_at),
            _ => continue,
        };
        if word == "super" && own.is_empty() {
            continue;
        }
        let mut rest = &text[from..];
        // `super::super::x`: one level up per `super`
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        let mut paths = Vec::new();
        tree_paths(rest, base, &mut paths);
        for p in &paths {
            add(p);
        }
    }
    out
}

/// The `#[path]` attributes of `text` (file `file`), each as the file it names and whether it
/// is the one accepted use: unit tests beside their module, `#[cfg(test)] #[path =
/// "NAME_tests.rs"] mod tests;` in `NAME.rs`. Any other hides a module under a name its file
/// does not have (a file split only to stay under the line cap, a module pulled in twice).
fn path_attributes(file: &Path, text: &str) -> Vec<(PathBuf, bool)> {
    let stem = file.file_stem().unwrap().to_string_lossy();
    let dir = file.parent().unwrap();
    let mut out = Vec::new();
    for (i, _) in text.match_indices("#[path") {
        let attr = &text[i..];
        let named = attr
            .split('"')
            .nth(1)
            .filter(|_| attr.find('"') < attr.find(']'))
            .unwrap_or("");
        let after = attr[attr.find(']').map_or(0, |j| j + 1)..].trim_start();
        let test_idiom = text[..i].trim_end().ends_with("#[cfg(test)]")
            && named == format!("{stem}_tests.rs")
            && after.starts_with("mod tests;");
        out.push((dir.join(named), test_idiom));
    }
    out
}

/// The strongly connected components of more than one module (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in &self.g[v] {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).unwrap();
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    comp.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.out.push(comp);
                }
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

fn crates() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(_, p)| p.join("src").is_dir())
        .collect();
    out.sort();
    out
}

#[test]
fn no_crate_has_an_import_circle() {
    let mut found = Vec::new();
    let mut modules = 0;
    for (name, dir) in crates() {
        let src = dir.join("src");
        let texts: Vec<(PathBuf, String)> = sources(&src)
            .into_iter()
            .map(|f| {
                let text = std::fs::read_to_string(&f).unwrap();
                (f, text)
            })
            .collect();
        // unit-test files beside their module are test code, like `mod tests` inline
        let tests: BTreeSet<PathBuf> = texts
            .iter()
            .flat_map(|(f, text)| path_attributes(f, text))
            .filter_map(|(named, test_idiom)| test_idiom.then_some(named))
            .collect();
        let files: BTreeMap<String, String> = texts
            .into_iter()
            .filter(|(f, _)| !tests.contains(f))
            .map(|(f, text)| (module_name(&src, &f), text))
            .collect();
        let known: BTreeSet<String> = files.keys().cloned().collect();
        let root = files
            .get("crate")
            .map_or_else(BTreeMap::new, |text| root_items(text, &known));
        let graph: BTreeMap<String, BTreeSet<String>> = files
            .iter()
            .map(|(m, text)| (m.clone(), references(m, without_tests(text), &known, &root)))
            .collect();
        modules += graph.len();
        found.extend(
            circles(&graph)
                .into_iter()
                .map(|c| format!("{name}: {c:?}")),
        );
    }
    assert!(modules > 100, "only {modules} modules read");
    assert!(found.is_empty(), "import circles: {found:#?}");
}

#[test]
fn the_checker_sees_a_circle() {
    let known: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", "use crate::b::X;"),
        ("b", "fn f() { crate::a::g() }"),
        ("c", "use crate::a;"),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), references(m, t, &known, &BTreeMap::new())))
    .collect();
    assert_eq!(
        circles(&graph),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
}

#[test]
fn the_checker_sees_braced_nested_and_relative_imports() {
    let known: BTreeSet<String> = ["a", "a::x", "b", "c", "d", "e", "f", "g"]
        .map(String::from)
        .into();
    let seen = |m: &str, text: &str| -> Vec<String> {
        references(m, text, &known, &BTreeMap::new())
            .into_iter()
            .collect()
    };
    assert_eq!(seen("b", "use crate::{c, d};"), ["c", "d"]);
    assert_eq!(
        seen(
            "b",
            "use crate::{\n    a::{x::{Y, Z}, W},\n    c::T as U,\n    e::*,\n};"
        ),
        ["a", "a::x", "c", "e"]
    );
    assert_eq!(seen("b", "use crate::a::{self, Q};"), ["a"]);
    assert_eq!(seen("a::x", "use super::super::{f, g::H};"), ["f", "g"]);
    assert_eq!(
        seen("a::x", "use super::Y; fn f() { super::super::c::g() }"),
        ["c"]
    );
    assert_eq!(
        seen("b", "let v = crate::d::f::<u8>(); $crate::e::m!();"),
        ["d"]
    );
    // a module's own ancestors and descendants are not circles
    assert_eq!(
        seen("a", "use self::x::Y; use crate::a::x;"),
        Vec::<String>::new()
    );

    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", "use crate::{b, c};"),
        ("a::x", "use crate::b::{X, Y};"),
        ("b", "use crate::{\n    d::{E, F},\n};"),
        ("c", ""),
        ("d", "use super::a::x::Z;"),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), references(m, t, &known, &BTreeMap::new())))
    .collect();
    assert_eq!(
        circles(&graph),
        vec![vec!["a::x".to_string(), "b".to_string(), "d".to_string()]]
    );
}

#[test]
fn the_checker_sees_the_crate_roots_items() {
    let known: BTreeSet<String> = ["crate", "durable", "model", "model::id"]
        .map(String::from)
        .into();
    let lib = "//! A store.\nmod durable;\nmod model;\npub use durable::PhaseHandle;\n\
        pub use model::{id::RunId, Meta as M};\nuse std::io;\n\n/// The store.\n\
        pub struct Store {\n    conn: u8,\n}\n\nimpl Store {\n    pub fn open() -> Store {\n\
        durable::close_dead_runs();\n        Store { conn: 0 }\n    }\n}\n\n\
        pub(crate) const fn cap() -> u8 {\n    1\n}\nconst LIMIT: u8 = 1;\n";
    let root = root_items(lib, &known);
    let items: Vec<(&str, &str)> = root.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    assert_eq!(
        items,
        [
            ("LIMIT", "crate"),
            ("Meta", "model"),
            ("PhaseHandle", "durable"),
            ("RunId", "model::id"),
            ("Store", "crate"),
            ("cap", "crate"),
        ]
    );
    let seen = |m: &str, text: &str| -> Vec<String> {
        references(m, text, &known, &root).into_iter().collect()
    };
    assert_eq!(seen("durable", "use crate::Store;"), ["crate"]);
    assert_eq!(
        seen("durable", "use crate::{RunId, LIMIT};"),
        ["crate", "model::id"]
    );
    assert_eq!(seen("durable", "fn f() { super::cap() }"), ["crate"]);
    assert_eq!(seen("model::id", "use super::super::Store;"), ["crate"]);
    assert_eq!(
        seen("durable", "use crate::PhaseHandle;"),
        Vec::<String>::new()
    );
    // the root's code names its modules; its `mod` lines and re-exports do not count
    assert_eq!(seen("crate", lib), ["durable"]);
    assert_eq!(
        seen(
            "crate",
            "mod model;\npub use model::M;\npub(crate) use model::id::{RunId};"
        ),
        Vec::<String>::new()
    );

    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("crate", lib),
        ("durable", "use crate::Store;"),
        ("model", "use crate::PhaseHandle;"),
        ("model::id", ""),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), references(m, t, &known, &root)))
    .collect();
    assert_eq!(
        circles(&graph),
        vec![vec!["crate".to_string(), "durable".to_string()]]
    );
}

#[test]
fn no_module_hides_behind_a_path_attribute() {
    let mut tricks = Vec::new();
    for (_, dir) in crates() {
        for f in sources(&dir.join("src")) {
            let text = std::fs::read_to_string(&f).unwrap();
            for (named, test_idiom) in path_attributes(&f, &text) {
                if !test_idiom {
                    tricks.push(format!("{} -> {}", f.display(), named.display()));
                }
            }
        }
    }
    assert!(tricks.is_empty(), "#[path] modules: {tricks:#?}");
}

#[test]
fn the_checker_sees_a_path_trick() {
    let f = Path::new("src/study.rs");
    let seen = |text: &str| path_attributes(f, text);
    assert_eq!(
        seen("#[cfg(test)]\n#[path = \"study_tests.rs\"]\nmod tests;"),
        [(PathBuf::from("src/study_tests.rs"), true)]
    );
    for trick in [
        "#[path = \"study_io.rs\"]\nmod io_cell;",
        "#[cfg(test)]\n#[path = \"other_tests.rs\"]\nmod tests;",
        "#[cfg(test)]\n#[path = \"study_tests.rs\"]\nmod more;",
        "#[path=\"x/y.rs\"] pub mod y;",
    ] {
        assert!(seen(trick).iter().all(|(_, ok)| !ok), "{trick}");
        assert_eq!(seen(trick).len(), 1, "{trick}");
    }
}

#[test]
fn clap_only_in_the_cli_arguments() {
    let args = workspace().join("crates/cli/src/args");
    let mut offenders = Vec::new();
    for (_, dir) in crates() {
        for f in sources(&dir.join("src")) {
            let text = std::fs::read_to_string(&f).unwrap();
            // `main.rs` calls `Cli::parse`; unit tests may read the CLI definition.
            if without_tests(&text).contains("clap::")
                && !f.starts_with(&args)
                && !f.ends_with("cli/src/main.rs")
            {
                offenders.push(f.display().to_string());
            }
        }
    }
    assert!(offenders.is_empty(), "clap outside args: {offenders:?}");
}

/// Whether `text` (a source file without its tests) opens a server connection of its own.
fn opens_a_connection(text: &str) -> bool {
    let text = without_comments(without_tests(text));
    ["Conn::connect", "Conn::open", "mysql::Conn", "mysql::Pool"]
        .iter()
        .any(|c| text.contains(c))
}

#[test]
fn the_cli_opens_no_server_connection() {
    // The CLI parses, calls and prints: what reaches a server is a library's, with its error's
    // blame.
    let offenders: Vec<String> = sources(&workspace().join("crates/cli/src"))
        .into_iter()
        .filter(|f| opens_a_connection(&std::fs::read_to_string(f).unwrap()))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "connections in the CLI: {offenders:?}"
    );
}

#[test]
fn the_checker_sees_a_connection() {
    assert!(opens_a_connection(
        "fn f() { let c = qpslab_wire::Conn::connect(&o)?; }"
    ));
    assert!(!opens_a_connection(
        "// qpslab_wire::Conn::connect is the library's\nfn f() {}"
    ));
    assert!(!opens_a_connection(
        "fn f() {}\n#[cfg(test)]\nmod tests { fn t() { Conn::connect(&o); } }"
    ));
}

#[test]
fn no_source_file_over_600_lines() {
    let mut long = Vec::new();
    for (_, dir) in crates() {
        for f in sources(&dir.join("src")) {
            let lines = std::fs::read_to_string(&f).unwrap().lines().count();
            if lines > 600 {
                long.push(format!("{} ({lines})", f.display()));
            }
        }
    }
    assert!(long.is_empty(), "over 600 lines: {long:?}");
}
