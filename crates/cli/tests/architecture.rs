//! The architecture's rules, checked on the sources: within each crate the modules depend on
//! each other one way (no import circles), clap appears only in the CLI's `args` module, and no
//! source file grows past 600 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file below `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(sources(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

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

/// The modules `text` (module `m`) refers to, among `known`: `crate::x::y` paths and
/// `super::x` paths, not counting a module's own parent or children.
fn references(m: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |path: Vec<&str>| {
        for k in (1..=path.len()).rev() {
            let cand = path[..k].join("::");
            if known.contains(&cand) {
                let related = cand == m
                    || m.starts_with(&format!("{cand}::"))
                    || cand.starts_with(&format!("{m}::"));
                if !related {
                    out.insert(cand);
                }
                return;
            }
        }
    };
    let ident = |s: &str| -> Vec<String> {
        let mut segs = Vec::new();
        let mut rest = s;
        loop {
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if end == 0 {
                break;
            }
            segs.push(rest[..end].to_string());
            match rest[end..].strip_prefix("::") {
                Some(r) => rest = r,
                None => break,
            }
        }
        segs
    };
    for (i, _) in text.match_indices("crate::") {
        let segs = ident(&text[i + 7..]);
        add(segs.iter().map(String::as_str).collect());
    }
    let parent: Vec<&str> = m.split("::").collect();
    let parent = &parent[..parent.len().saturating_sub(1)];
    for (i, _) in text.match_indices("super::") {
        let segs = ident(&text[i + 7..]);
        let mut path: Vec<&str> = parent.to_vec();
        path.extend(segs.iter().take(1).map(String::as_str));
        if m != "crate" {
            add(path);
        }
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
        let files: BTreeMap<String, String> = sources(&src)
            .into_iter()
            .map(|f| (module_name(&src, &f), std::fs::read_to_string(&f).unwrap()))
            .collect();
        let known: BTreeSet<String> = files.keys().cloned().collect();
        let graph: BTreeMap<String, BTreeSet<String>> = files
            .iter()
            .map(|(m, text)| (m.clone(), references(m, without_tests(text), &known)))
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
    .map(|(m, t)| (m.to_string(), references(m, t, &known)))
    .collect();
    assert_eq!(
        circles(&graph),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
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
