//! Errors are typed: no public function of a library crate (every crate but the CLI and the
//! fuzz kit) returns `Result<_, String>`. A caller cannot tell one `String` failure from another
//! nor say whose fault it is; a typed error carries its blame and its message.

mod common;

use common::sources::{code_files, code_of, workspace};

/// The crates that are programs or test tools, not libraries.
const NOT_LIBRARIES: &[&str] = &["cli", "fuzzkit"];

/// Each `pub fn` of `code` (already without comments, strings and test code) whose return type
/// names `Result<_, String>`: its name and line (1-based).
fn string_results(code: &str) -> Vec<(String, usize)> {
    let words: Vec<(usize, &str)> = code
        .match_indices(|c: char| !(c.is_alphanumeric() || c == '_'))
        .fold((0, Vec::new()), |(start, mut v), (i, sep)| {
            if i > start {
                v.push((start, &code[start..i]));
            }
            (i + sep.len(), v)
        })
        .1;
    let mut out = Vec::new();
    for (k, &(at, w)) in words.iter().enumerate() {
        if w != "pub" {
            continue;
        }
        // `pub` right before the qualifiers and `fn`; `pub(crate)` and the like are not public.
        let after = code[at + 3..].trim_start();
        if after.starts_with('(') {
            continue;
        }
        let fn_at = words[k + 1..]
            .iter()
            .take(4)
            .position(|(_, w)| *w == "fn")
            .filter(|&p| {
                words[k + 1..k + 1 + p]
                    .iter()
                    .all(|(_, q)| matches!(*q, "const" | "async" | "unsafe" | "extern" | "C"))
            });
        let Some(p) = fn_at else { continue };
        let (name_at, name) = words[k + 2 + p];
        let sig = &code[name_at..];
        let sig = &sig[..sig.find(['{', ';']).unwrap_or(sig.len())];
        if let Some(ret) = return_type(sig) {
            if names_string_result(&ret) {
                out.push((name.to_string(), code[..at].matches('\n').count() + 1));
            }
        }
    }
    out
}

/// The return type of the signature `sig` (from the function's name to its body), all
/// whitespace removed; `None` when it returns nothing.
fn return_type(sig: &str) -> Option<String> {
    // The parameters: the first `(` outside the generics, to its matching `)`.
    let mut angle = 0i32;
    let mut open = None;
    let b = sig.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'<' => angle += 1,
            b'>' if i > 0 && b[i - 1] != b'-' => angle -= 1,
            b'(' if angle == 0 => {
                open = Some(i);
                break;
            }
            _ => {}
        }
    }
    let mut depth = 0;
    let mut close = None;
    for (i, c) in sig.char_indices().skip(open?) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let ret = sig[close? + 1..].trim_start().strip_prefix("->")?;
    let ret = match ret.find("where") {
        Some(w) if ret[..w].ends_with(char::is_whitespace) => &ret[..w],
        _ => ret,
    };
    Some(ret.split_whitespace().collect())
}

/// Whether a `Result<_, String>` appears in the type `ty` (no whitespace).
fn names_string_result(ty: &str) -> bool {
    let mut rest = ty;
    while let Some(at) = rest.find("Result<") {
        let args = &rest[at + "Result<".len()..];
        let (mut depth, mut end) = (0i32, args.len());
        for (i, c) in args.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => {
                    end = i;
                    break;
                }
                '>' | ')' | ']' => depth -= 1,
                _ => {}
            }
        }
        // The arguments without a trailing comma; the error type after the last comma outside
        // brackets.
        let inner = args[..end].strip_suffix(',').unwrap_or(&args[..end]);
        let mut depth = 0i32;
        let mut last_comma = None;
        for (i, c) in inner.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => last_comma = Some(i),
                _ => {}
            }
        }
        end = inner.len();
        if let Some(comma) = last_comma {
            let err = args[comma + 1..end].trim_start_matches("::");
            if matches!(
                err,
                "String" | "std::string::String" | "alloc::string::String"
            ) {
                return true;
            }
        }
        rest = args;
    }
    false
}

#[test]
fn no_library_function_returns_a_string_error() {
    let crates = workspace().join("crates");
    let mut found = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&crates)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    names.sort();
    for dir in names {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        if NOT_LIBRARIES.contains(&name.as_str()) || !dir.join("src").is_dir() {
            continue;
        }
        for (file, code) in code_files(&dir.join("src")) {
            for (f, line) in string_results(&code) {
                let rel = file.strip_prefix(&crates).unwrap().display().to_string();
                found.push(format!("crates/{rel}:{line}: pub fn {f}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "public functions of library crates that return Result<_, String> (give each a typed \
         error):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_sees_a_string_error_over_several_lines() {
    let code = code_of(
        "pub fn one(a: u8) -> Result<u8, String> { Ok(a) }\n\
         pub fn two(\n    a: &str,\n    b: u8,\n) -> Result<\n    Vec<u8>,\n    String,\n> {\n    todo()\n}\n\
         impl X {\n    pub const fn three<T: Into<u8>>(t: T) -> std::result::Result<(), std::string::String> { x }\n}\n\
         pub fn nested() -> Option<Result<u8, String>> { None }\n",
    );
    let names: Vec<_> = string_results(&code).into_iter().collect();
    assert_eq!(
        names,
        [
            ("one".to_string(), 1),
            ("two".to_string(), 2),
            ("three".to_string(), 12),
            ("nested".to_string(), 14)
        ]
    );
}

#[test]
fn the_checker_ignores_private_functions_typed_errors_and_test_code() {
    let code = code_of(
        "fn private() -> Result<u8, String> { x }\n\
         pub(crate) fn in_crate() -> Result<u8, String> { x }\n\
         pub fn typed() -> Result<Vec<String>, Error> { x }\n\
         pub fn takes(f: impl Fn() -> Result<(), String>) -> Vec<String> { x }\n\
         pub fn alias() -> io::Result<String> { x }\n\
         // pub fn commented() -> Result<u8, String> {}\n\
         pub fn text() -> &'static str { \"pub fn s() -> Result<u8, String> {}\" }\n\
         #[cfg(test)]\nmod tests {\n    pub fn helper() -> Result<u8, String> { x }\n}\n\
         #[cfg(test)]\npub fn test_only() -> Result<u8, String> { x }\n",
    );
    assert_eq!(string_results(&code), Vec::<(String, usize)>::new());
}
