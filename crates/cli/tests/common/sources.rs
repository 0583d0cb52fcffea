//! The workspace's sources as the architecture tests read them: each file of a crate's `src/`
//! with its comments and string contents blanked and its test code (`#[cfg(test)]` items, and
//! the files such an item declares) left out.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The workspace's root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file below `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The code of `src/` below `dir` outside test code: each file with its text as
/// [`code_of`] gives it, less the files a `#[cfg(test)] mod name;` declares.
pub fn code_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let files = rust_files(dir);
    let mut test_files = BTreeSet::new();
    let mut out = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let (code, test_mods) = split_tests(&blank(&text));
        let here = module_dir(f);
        for m in test_mods {
            test_files.insert(here.join(format!("{m}.rs")));
            test_files.insert(here.join(&m));
        }
        out.push((f.clone(), code));
    }
    // A test module's file, or any file in its folder.
    out.retain(|(f, _)| !test_files.iter().any(|t| f.starts_with(t)));
    out
}

/// The folder where the files of `file`'s child modules live.
fn module_dir(file: &Path) -> PathBuf {
    let dir = file.parent().unwrap().to_path_buf();
    match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib" | "main") => dir,
        Some(stem) => dir.join(stem),
        None => dir,
    }
}

/// `text`'s code outside test code, comments and string contents blanked.
pub fn code_of(text: &str) -> String {
    split_tests(&blank(text)).0
}

/// A blanked character: a space, or the line break it was (lines keep their numbers).
fn keep(out: &mut String, ch: char) {
    out.push(if ch == '\n' { '\n' } else { ' ' });
}

/// Blanks the string or character literal opening at `c[start]` (its quotes kept, its
/// escapes honoured) into `out`; returns the index after its closing quote.
fn quoted(c: &[char], start: usize, out: &mut String) -> usize {
    let quote = c[start];
    out.push(quote);
    let mut i = start + 1;
    while i < c.len() && c[i] != quote {
        if c[i] == '\\' {
            keep(out, c[i]);
            i += 1;
        }
        if i < c.len() {
            keep(out, c[i]);
            i += 1;
        }
    }
    if i < c.len() {
        out.push(quote);
        i += 1;
    }
    i
}

/// `text` with comments and the contents of string and character literals replaced by
/// spaces (line breaks kept), so that what is left is code.
pub fn blank(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                keep(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    keep(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if c[i] == 'r'
            && (next == Some('"') || next == Some('#'))
            && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_'))
        {
            let mut j = i + 1;
            while c.get(j) == Some(&'#') {
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let hashes = j - i - 1;
            out.extend(&c[i..=j]);
            i = j + 1;
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
                    out.extend(&c[i..=i + hashes]);
                    i += hashes + 1;
                    break;
                }
                keep(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '"' {
            i = quoted(&c, i, &mut out);
        } else if c[i] == '\'' && (next == Some('\\') || c.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\u{..}'); a lifetime ('a) is code.
            i = quoted(&c, i, &mut out);
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// `code` (already [`blank`]ed) without its `#[cfg(test)]` items, and the names of the
/// modules such an item declares in a file of their own (`#[cfg(test)] mod name;`).
pub fn split_tests(code: &str) -> (String, Vec<String>) {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut mods = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(MARK) {
        out.push_str(&rest[..at]);
        let item = &rest[at + MARK.len()..];
        let semi = item.find(';');
        let brace = item.find('{');
        let end = match (semi, brace) {
            (Some(s), b) if b.is_none_or(|b| s < b) => {
                let decl: Vec<&str> = item[..s].split_whitespace().collect();
                if let Some(p) = decl.iter().position(|w| *w == "mod") {
                    if let Some(name) = decl.get(p + 1) {
                        mods.push(name.to_string());
                    }
                }
                s + 1
            }
            (_, Some(b)) => {
                let mut depth = 0;
                let mut end = item.len();
                for (k, ch) in item[b..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            _ => item.len(),
        };
        // Keep the line count: the items' lines become empty.
        out.extend(
            rest[at..at + MARK.len() + end]
                .chars()
                .filter(|c| *c == '\n'),
        );
        rest = &item[end..];
    }
    out.push_str(rest);
    (out, mods)
}
