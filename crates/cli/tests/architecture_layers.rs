//! The lab's folders are layered: each of `crates/lab/src`'s folders and files (but the crate
//! root, `lib.rs`) imports only from itself or from one below it in [`LAB_LAYERS`], the order
//! docs/ARCHITECTURE.md states. A `crate::X` path, in a `use` or inline, outside test code, is
//! an import of `X`; so is a path that climbs to the crate root with `super::`.

mod common;

use common::sources::{code_files, code_of, workspace};
use std::path::Path;

/// The lab's folders and files, lowest first: what each may import from is at or before it.
const LAB_LAYERS: &[&str] = &[
    "error", "options", "server", "shard", "run", "dataset", "study", "request", "doctor",
];

/// Imports up the layers that are known and owed a fix, each `(file, to, why)`: the test fails
/// on any other, and on one of these once it is gone (then take it off this list).
const OWED: &[(&str, &str, &str)] = &[];

/// The line of docs/ARCHITECTURE.md that states the order, after this text.
const DOC_MARK: &str = "the lab's folders, lowest first:";

/// The folder or file of `crates/lab/src` that `rel` (a path relative to it) is part of.
fn unit_of(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// How deep `rel`'s module is (`study/plan.rs`, `study::plan`: 2; `study/mod.rs`: 1).
fn module_depth(rel: &Path) -> usize {
    let n = rel.components().count();
    match rel.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib") => n - 1,
        _ => n,
    }
}

/// Each top-level module of the crate that `code` (already without comments, strings and test
/// code) imports, with its line: `crate::X`, `crate::{X, Y::..}`, and `super::…::X` that climbs
/// `depth` levels to the root.
fn imports(code: &str, depth: usize) -> Vec<(String, usize)> {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut push_names = |after: &str, at: usize| {
        let after = after.trim_start();
        if let Some(list) = after.strip_prefix('{') {
            // The names: each entry's first identifier.
            let mut d = 0;
            let mut entry = String::new();
            let mut names = Vec::new();
            for c in list.chars() {
                match c {
                    '{' => d += 1,
                    '}' if d == 0 => break,
                    '}' => d -= 1,
                    ',' if d == 0 => {
                        names.push(std::mem::take(&mut entry));
                        continue;
                    }
                    _ => {}
                }
                entry.push(c);
            }
            names.push(entry);
            for n in names {
                let name: String = n.trim_start().chars().take_while(|c| ident(*c)).collect();
                if !name.is_empty() && name != "self" {
                    out.push((name, line_of(at)));
                }
            }
        } else {
            let name: String = after.chars().take_while(|c| ident(*c)).collect();
            if !name.is_empty() {
                out.push((name, line_of(at)));
            }
        }
    };
    for (at, _) in code.match_indices("crate::") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| ident(c) || c == '$') {
            continue;
        }
        push_names(&code[at + "crate::".len()..], at);
    }
    if depth > 0 {
        let climb = "super::".repeat(depth);
        for (at, _) in code.match_indices(&climb) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| ident(c) || c == ':') {
                continue;
            }
            let after = &code[at + climb.len()..];
            if after.starts_with("super::") {
                continue;
            }
            push_names(after, at);
        }
    }
    out
}

/// Each import of a layer above the importing one: `file:line: from → to`.
fn upward(order: &[&str], unit: &str, file: &str, code: &str, depth: usize) -> Vec<String> {
    let rank = |u: &str| order.iter().position(|o| *o == u);
    let Some(mine) = rank(unit) else {
        return Vec::new();
    };
    imports(code, depth)
        .into_iter()
        .filter(|(to, _)| rank(to).is_some_and(|r| r > mine))
        .map(|(to, line)| format!("{file}:{line}: {unit} → {to}"))
        .collect()
}

#[test]
fn every_lab_import_points_down_the_layers() {
    let src = workspace().join("crates/lab/src");
    let mut units: Vec<String> = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .map(|e| unit_of(Path::new(&e.file_name())))
        .filter(|u| u != "lib")
        .collect();
    units.sort();
    let mut listed: Vec<String> = LAB_LAYERS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(
        units, listed,
        "every folder and file of crates/lab/src has its layer"
    );
    let mut found = Vec::new();
    let mut owed_seen = Vec::new();
    for (file, code) in code_files(&src) {
        let rel = file.strip_prefix(&src).unwrap();
        let name = format!("crates/lab/src/{}", rel.display());
        for up in upward(LAB_LAYERS, &unit_of(rel), &name, &code, module_depth(rel)) {
            let owed = OWED.iter().find(|(f, to, _)| {
                up.starts_with(&format!("{f}:")) && up.ends_with(&format!("→ {to}"))
            });
            match owed {
                Some((f, _, _)) => owed_seen.push(*f),
                None => found.push(up),
            }
        }
    }
    for (file, to, _) in OWED {
        assert!(
            owed_seen.contains(file),
            "{file} no longer imports {to}: take it off OWED"
        );
    }
    assert!(
        found.is_empty(),
        "imports that point up the lab's layers ({}):\n{}",
        LAB_LAYERS.join(" → "),
        found.join("\n")
    );
}

#[test]
fn the_architecture_doc_states_the_same_order() {
    let doc = std::fs::read_to_string(workspace().join("docs/ARCHITECTURE.md")).unwrap();
    let line = doc
        .lines()
        .find(|l| l.contains(DOC_MARK))
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has no line with `{DOC_MARK}`"));
    let stated = line[line.find(DOC_MARK).unwrap() + DOC_MARK.len()..]
        .split('`')
        .nth(1)
        .unwrap_or_default();
    assert_eq!(stated, LAB_LAYERS.join(" → "), "{line}");
}

#[test]
fn the_checker_sees_braced_inline_and_climbing_imports() {
    let order = ["low", "mid", "high"];
    let code = code_of(
        "use crate::low::A;\n\
         use crate::{high::B, low};\n\
         fn f() { crate::high::g(); }\n\
         use super::super::high::C;\n\
         use super::sibling::D;\n\
         use crate::mid::{E, F};\n",
    );
    assert_eq!(
        upward(&order, "mid", "m.rs", &code, 2),
        [
            "m.rs:2: mid → high",
            "m.rs:3: mid → high",
            "m.rs:4: mid → high"
        ]
    );
}

#[test]
fn the_checker_ignores_test_code_comments_strings_and_the_root() {
    let order = ["low", "high"];
    let code = code_of(
        "//! Uses [`crate::high`] in a comment.\n\
         use crate::low::A;\n\
         fn f() -> &'static str { \"crate::high::x\" }\n\
         /* crate::high::y */\n\
         macro_rules! m { () => { $crate::high::z() } }\n\
         #[cfg(test)]\nmod tests {\n    use crate::high::T;\n}\n",
    );
    assert_eq!(
        upward(&order, "low", "l.rs", &code, 1),
        Vec::<String>::new()
    );
    // The crate root may use every folder: it is no layer.
    let root = code_of("use crate::high::A;\n");
    assert_eq!(
        upward(&order, "lib", "lib.rs", &root, 0),
        Vec::<String>::new()
    );
}
