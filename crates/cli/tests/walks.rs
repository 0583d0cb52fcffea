//! The walks in docs/ARCHITECTURE.md, computed from the sources: following one option of a
//! command from its CLI entry to where the work is done, as a reader would, and counting the
//! times the reading climbs back up to a crate above the one it was in (a return to the caller
//! to go on, or a callback into an observer). The docs show this test's output; regenerate
//! them with `UPDATE_GOLDEN=1 cargo test -p qpslab --test walks` and review the diff.
//!
//! How calls are found (a reading aid, not a compiler): every function of every crate's `src`,
//! without unit tests; in a function's body, each call `f(`, `X::f(` or `.f(`; a call goes to
//! the functions of that name in the caller's crate or the crates it depends on (a path call
//! to the one whose type or module is `X`; a method call also to implementations, in any crate,
//! of a trait the caller's crates declare: the callbacks), and is followed when the callee's
//! body names the option. A call with more than four such candidates is too ambiguous to
//! follow and is skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Punct(char),
}

/// Identifiers and punctuation, without comments, strings and character literals.
fn tokens(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (ch == 'r' || ch == 'b')
            && matches!(c.get(i + 1), Some('#') | Some('"'))
            && (ch == 'r' || c.get(i + 1) == Some(&'"'))
            && !(i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_'))
        {
            // r"..", r#".."#, b"..": skip the literal.
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(Tok::Ident(ch.to_string()));
                i += 1;
                continue;
            }
            j += 1;
            let raw = ch == 'r';
            loop {
                match c.get(j) {
                    None => break,
                    Some('\\') if !raw => j += 2,
                    Some('"') if (j + 1..=j + hashes).all(|k| c.get(k) == Some(&'#')) => {
                        j += 1 + hashes;
                        break;
                    }
                    _ => j += 1,
                }
            }
            i = j;
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if ch == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if c.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(c[s..i].iter().collect()));
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '.') {
                if c[i] == '.' && !c.get(i + 1).is_some_and(char::is_ascii_digit) {
                    break;
                }
                i += 1;
            }
        } else if ch.is_whitespace() {
            i += 1;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// A function of the workspace.
#[derive(Debug)]
struct Func {
    krate: String,
    module: String,
    owner: Option<String>,
    trait_impl: Option<String>,
    name: String,
    /// The parameters' names, `self` included.
    params: Vec<String>,
    /// The identifiers in each parameter's type.
    param_types: Vec<BTreeSet<String>>,
    body: Vec<Tok>,
}

impl Func {
    fn label(&self) -> String {
        let owner = self
            .owner
            .as_ref()
            .map_or(String::new(), |o| format!("{o}::"));
        let module = if self.module.is_empty() {
            String::new()
        } else {
            format!("{}::", self.module)
        };
        format!("{}::{module}{owner}{}", self.krate, self.name)
    }
}

/// The index of the token after the group that opens at `open` (`{`, `(`, `[` or `<`).
fn close(t: &[Tok], open: usize) -> usize {
    let (o, c) = match t[open] {
        Tok::Punct('(') => ('(', ')'),
        Tok::Punct('[') => ('[', ']'),
        _ => ('{', '}'),
    };
    let mut depth = 0;
    let mut i = open;
    while i < t.len() {
        match t[i] {
            Tok::Punct(x) if x == o => depth += 1,
            Tok::Punct(x) if x == c => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    t.len()
}

/// The last plain identifier of a type in `t` (`Foo<'a, T>` -> `Foo`, `&mut a::Bar` -> `Bar`).
fn type_name(t: &[Tok]) -> Option<String> {
    let mut depth = 0;
    let mut last = None;
    for tok in t {
        match tok {
            Tok::Punct('<') => depth += 1,
            Tok::Punct('>') => depth -= 1,
            Tok::Ident(s) if depth == 0 && !matches!(s.as_str(), "mut" | "dyn" | "impl") => {
                last = Some(s.clone())
            }
            _ => {}
        }
    }
    last
}

/// Every function in `t`, with the type and trait of the `impl` block it is in.
fn functions(t: &[Tok], krate: &str, module: &str, out: &mut Vec<Func>) {
    let mut i = 0;
    while i < t.len() {
        match ident(t.get(i)) {
            Some("impl") | Some("trait") => {
                let is_trait = ident(t.get(i)) == Some("trait");
                let mut j = i + 1;
                while j < t.len() && t[j] != Tok::Punct('{') && t[j] != Tok::Punct(';') {
                    j += 1;
                }
                if j >= t.len() || t[j] == Tok::Punct(';') {
                    i = j + 1;
                    continue;
                }
                let header = &t[i + 1..j];
                let header = match header.iter().position(|x| ident(Some(x)) == Some("where")) {
                    Some(w) => &header[..w],
                    None => header,
                };
                let (owner, trait_impl) = if is_trait {
                    (type_name(&header[..1.min(header.len())]), None)
                } else {
                    match header.iter().position(|x| ident(Some(x)) == Some("for")) {
                        Some(f) => (type_name(&header[f + 1..]), type_name(&header[..f])),
                        None => (type_name(header), None),
                    }
                };
                let end = close(t, j);
                let mut inner = Vec::new();
                functions(&t[j + 1..end - 1], krate, module, &mut inner);
                for mut f in inner {
                    f.owner = f.owner.or(owner.clone());
                    f.trait_impl = f.trait_impl.or(trait_impl.clone());
                    out.push(f);
                }
                i = end;
            }
            Some("fn") => {
                let Some(name) = ident(t.get(i + 1)).map(str::to_string) else {
                    i += 1;
                    continue;
                };
                // The body: the first `{` outside the signature's parentheses, or none (`;`).
                let mut j = i + 2;
                while j < t.len() {
                    match t[j] {
                        Tok::Punct('(') | Tok::Punct('[') => j = close(t, j),
                        Tok::Punct('{') | Tok::Punct(';') => break,
                        _ => j += 1,
                    }
                }
                if j >= t.len() || t[j] == Tok::Punct(';') {
                    i = j + 1;
                    continue;
                }
                let end = close(t, j);
                let signature: Vec<&[Tok]> = t[i + 2..j]
                    .iter()
                    .position(|x| *x == Tok::Punct('('))
                    .map(|p| {
                        let open = i + 2 + p;
                        split_args(&t[open + 1..close(t, open) - 1])
                    })
                    .unwrap_or_default();
                let params = signature.iter().map(|a| param_name(a)).collect();
                let param_types = signature.iter().map(|a| param_type(a)).collect();
                out.push(Func {
                    krate: krate.to_string(),
                    module: module.to_string(),
                    owner: None,
                    trait_impl: None,
                    name,
                    params,
                    param_types,
                    body: t[j..end].to_vec(),
                });
                i = end;
            }
            _ => i += 1,
        }
    }
}

/// The arguments of a call or the parameters of a signature, split at top-level commas.
fn split_args(t: &[Tok]) -> Vec<&[Tok]> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, tok) in t.iter().enumerate() {
        match tok {
            Tok::Punct('(' | '[' | '{' | '<') => depth += 1,
            Tok::Punct(')' | ']' | '}' | '>') => depth -= 1,
            Tok::Punct(',') if depth == 0 => {
                out.push(&t[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < t.len() {
        out.push(&t[start..]);
    }
    out
}

/// A parameter's name: `self` for any form of it, else the last identifier before its `:`.
fn param_type(p: &[Tok]) -> BTreeSet<String> {
    let colon = p
        .iter()
        .position(|x| *x == Tok::Punct(':'))
        .unwrap_or(p.len());
    p[colon..]
        .iter()
        .filter_map(|x| ident(Some(x)).map(str::to_string))
        .collect()
}

/// The structs of `t`: name -> (field names, the identifiers of the fields' types).
fn structs(t: &[Tok], out: &mut BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>) {
    for i in 0..t.len() {
        if ident(t.get(i)) != Some("struct") {
            continue;
        }
        let Some(name) = ident(t.get(i + 1)) else {
            continue;
        };
        let mut j = i + 2;
        while j < t.len() && !matches!(t[j], Tok::Punct('{') | Tok::Punct(';') | Tok::Punct('(')) {
            j += 1;
        }
        if j >= t.len() || t[j] == Tok::Punct(';') {
            continue;
        }
        let end = close(t, j);
        let entry = out.entry(name.to_string()).or_default();
        for field in split_args(&t[j + 1..end - 1]) {
            // `#[attr] pub name: Type` (or a tuple struct's `Type`).
            let body: Vec<Tok> = field
                .iter()
                .skip_while(|x| **x == Tok::Punct('#'))
                .cloned()
                .collect();
            if let Some(c) = body.iter().position(|x| *x == Tok::Punct(':')) {
                if let Some(n) = ident(c.checked_sub(1).and_then(|k| body.get(k))) {
                    entry.0.insert(n.to_string());
                }
            }
            entry.1.extend(param_type(&body));
            entry.1.extend(
                body.iter()
                    .filter_map(|x| ident(Some(x)).map(str::to_string)),
            );
        }
    }
}

fn param_name(p: &[Tok]) -> String {
    let colon = p
        .iter()
        .position(|x| *x == Tok::Punct(':'))
        .unwrap_or(p.len());
    p[..colon]
        .iter()
        .rev()
        .find_map(|x| ident(Some(x)).filter(|s| *s != "mut"))
        .unwrap_or("_")
        .to_string()
}

/// A call in a body: the name called, its path qualifier (`X` of `X::f(`), whether it is a
/// method call (`.f(`), its receiver's tokens and its arguments.
struct Call {
    name: String,
    qualifier: Option<String>,
    method: bool,
    receiver: Option<String>,
    args: Vec<Vec<Tok>>,
    /// Where the call is in the body.
    at: usize,
}

fn calls(body: &[Tok]) -> Vec<Call> {
    let mut out = Vec::new();
    for i in 0..body.len().saturating_sub(1) {
        let (Some(name), Tok::Punct('(')) = (ident(body.get(i)), &body[i + 1]) else {
            continue;
        };
        if matches!(
            name,
            "if" | "while" | "match" | "for" | "return" | "in" | "move"
        ) {
            continue;
        }
        let before = i.checked_sub(1).map(|k| &body[k]);
        let method = before == Some(&Tok::Punct('.'));
        let qualifier =
            (i >= 3 && body[i - 1] == Tok::Punct(':') && body[i - 2] == Tok::Punct(':'))
                .then(|| ident(body.get(i - 3)).map(str::to_string))
                .flatten();
        let receiver = method
            .then(|| i.checked_sub(2).and_then(|k| ident(body.get(k))))
            .flatten()
            .map(str::to_string);
        let end = close(body, i + 1);
        let args = split_args(&body[i + 2..end - 1])
            .into_iter()
            .map(<[Tok]>::to_vec)
            .collect();
        out.push(Call {
            name: name.to_string(),
            qualifier,
            method,
            receiver,
            args,
            at: i,
        });
    }
    out
}

/// Whether `t` names one of `tracked`.
fn carries(t: &[Tok], tracked: &BTreeSet<String>) -> bool {
    t.iter()
        .any(|x| ident(Some(x)).is_some_and(|s| tracked.contains(s)))
}

/// The names a body binds from tracked values before token `upto` (`let PAT = EXPR;` and
/// `for PAT in EXPR` where EXPR names a tracked value), added to `tracked`.
fn bind(body: &[Tok], upto: usize, tracked: &mut BTreeSet<String>) {
    let mut i = 0;
    while i < upto.min(body.len()) {
        let keyword = ident(body.get(i));
        if matches!(keyword, Some("let") | Some("for")) {
            let stop = if keyword == Some("let") { '=' } else { ' ' };
            let mut j = i + 1;
            while j < body.len()
                && body[j] != Tok::Punct(stop)
                && ident(body.get(j)) != Some("in")
                && body[j] != Tok::Punct(';')
            {
                j += 1;
            }
            let mut k = j + 1;
            while k < body.len() && body[k] != Tok::Punct(';') && body[k] != Tok::Punct('{') {
                k += 1;
            }
            if j < body.len() && carries(&body[j..k.min(body.len())], tracked) {
                for x in &body[i + 1..j] {
                    if let Some(name) = ident(Some(x)).filter(|s| *s != "mut") {
                        tracked.insert(name.to_string());
                    }
                }
            }
            i = j;
        }
        i += 1;
    }
}

/// The workspace's crates: package name -> (source dir, the qpslab crates it depends on).
fn crates() -> BTreeMap<String, (PathBuf, BTreeSet<String>)> {
    let mut out = BTreeMap::new();
    let dir = workspace().join("crates");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let Ok(manifest) = std::fs::read_to_string(e.path().join("Cargo.toml")) else {
            continue;
        };
        // `[package]`'s name and `[dependencies]`' qpslab crates, read line by line.
        let (mut section, mut name, mut deps) = ("", String::new(), BTreeSet::new());
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line;
            } else if section == "[package]" && line.starts_with("name") {
                name = line.split('"').nth(1).unwrap_or_default().replace('-', "_");
            } else if section == "[dependencies]" && line.starts_with("qpslab-") {
                let dep = line.split([' ', '=', '.']).next().unwrap_or_default();
                deps.insert(dep.replace('-', "_"));
            }
        }
        if name == "qpslab_fuzzkit" {
            continue;
        }
        out.insert(name, (e.path().join("src"), deps));
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

struct Workspace {
    funcs: Vec<Func>,
    /// crate -> every crate below it (transitively).
    below: BTreeMap<String, BTreeSet<String>>,
    /// Trait name -> the crate that declares it.
    traits: BTreeMap<String, String>,
    /// Every struct: name -> (field names, the identifiers of the fields' types).
    structs: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>,
}

impl Workspace {
    fn load() -> Workspace {
        let crates = crates();
        let mut below: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        fn walk(
            c: &str,
            crates: &BTreeMap<String, (PathBuf, BTreeSet<String>)>,
            acc: &mut BTreeSet<String>,
        ) {
            for d in crates.get(c).map(|x| &x.1).into_iter().flatten() {
                if acc.insert(d.clone()) {
                    walk(d, crates, acc);
                }
            }
        }
        for c in crates.keys() {
            let mut acc = BTreeSet::new();
            walk(c, &crates, &mut acc);
            below.insert(c.clone(), acc);
        }
        let (mut funcs, mut traits, mut all_structs) =
            (Vec::new(), BTreeMap::new(), BTreeMap::new());
        for (krate, (src, _)) in &crates {
            let mut files = Vec::new();
            sources(src, &mut files);
            files.sort();
            for file in files {
                let text = std::fs::read_to_string(&file).unwrap();
                let text = text
                    .find("#[cfg(test)]\nmod tests")
                    .map_or(text.as_str(), |i| &text[..i]);
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
                let toks = tokens(text);
                for w in toks.windows(2) {
                    if let (Some("trait"), Some(name)) = (ident(Some(&w[0])), ident(Some(&w[1]))) {
                        traits.insert(name.to_string(), krate.clone());
                    }
                }
                structs(&toks, &mut all_structs);
                functions(&toks, krate, &parts.join("::"), &mut funcs);
            }
        }
        Workspace {
            funcs,
            below,
            traits,
            structs: all_structs,
        }
    }

    fn reaches(&self, from: &str, to: &str) -> bool {
        from == to || self.below[from].contains(to)
    }

    /// The functions a call in `caller` may reach.
    fn callees(&self, caller: &Func, call: &Call) -> Vec<usize> {
        let found: Vec<usize> = (0..self.funcs.len())
            .filter(|&k| {
                let f = &self.funcs[k];
                if f.name != call.name {
                    return false;
                }
                let callback = call.method
                    && f.trait_impl
                        .as_ref()
                        .and_then(|t| self.traits.get(t))
                        .is_some_and(|declared| self.reaches(&caller.krate, declared));
                if !self.reaches(&caller.krate, &f.krate) && !callback {
                    return false;
                }
                if call.method {
                    return f.owner.is_some();
                }
                match call.qualifier.as_deref() {
                    None => f.owner.is_none() && f.krate == caller.krate,
                    Some("Self") => f.owner == caller.owner && f.krate == caller.krate,
                    Some("self" | "super" | "crate") => {
                        f.owner.is_none() && f.krate == caller.krate
                    }
                    Some(q) => {
                        f.owner.as_deref() == Some(q)
                            || f.module.rsplit("::").next() == Some(q)
                            || (f.module.is_empty() && f.krate == q && f.owner.is_none())
                    }
                }
            })
            .collect();
        if found.len() > 4 {
            Vec::new()
        } else {
            found
        }
    }

    /// The walk of the option `word` from the function `name` in `krate`'s `module`, whose
    /// first parameter holds the command's arguments: each function the value reaches (by
    /// its name, or in a value built from it and passed on), as indented lines, and the
    /// climbs back up that reading makes.
    fn walk(&self, krate: &str, module: &str, name: &str, word: &str) -> (Vec<String>, usize) {
        let entry = (0..self.funcs.len())
            .find(|&k| {
                let f = &self.funcs[k];
                f.krate == krate && f.module == module && f.name == name
            })
            .unwrap_or_else(|| panic!("no function {krate}::{module}::{name}"));
        let first = self.funcs[entry]
            .params
            .first()
            .cloned()
            .unwrap_or_default();
        let mut seen = BTreeSet::from([entry]);
        let mut lines = Vec::new();
        let mut trail = Vec::new();
        let tracked = BTreeSet::from([first, word.to_string()]);
        // The command's arguments hold the option, whatever clap generates for it.
        let holders = self.holders(word, &self.funcs[entry].param_types[0]);
        self.visit(
            entry,
            (word, &holders),
            tracked,
            0,
            (&mut seen, &mut lines, &mut trail),
        );
        trail.dedup();
        let climbs = trail
            .windows(2)
            .filter(|w| w[0] != w[1] && self.reaches(&w[1], &w[0]))
            .count();
        (lines, climbs)
    }

    /// The structs that hold the option: those with a field named `word`, and those with a
    /// field of such a type, to a fixed point.
    fn holders(&self, word: &str, args: &BTreeSet<String>) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = self
            .structs
            .iter()
            .filter(|(_, (fields, _))| fields.contains(word))
            .map(|(n, _)| n.clone())
            .chain(
                args.iter()
                    .filter(|t| self.structs.contains_key(*t))
                    .cloned(),
            )
            .collect();
        loop {
            let more: Vec<String> = self
                .structs
                .iter()
                .filter(|(n, (_, types))| {
                    !out.contains(*n) && types.iter().any(|t| out.contains(t))
                })
                .map(|(n, _)| n.clone())
                .collect();
            if more.is_empty() {
                return out;
            }
            out.extend(more);
        }
    }

    fn visit(
        &self,
        k: usize,
        (word, holders): (&str, &BTreeSet<String>),
        mut tracked: BTreeSet<String>,
        depth: usize,
        (seen, lines, trail): (&mut BTreeSet<usize>, &mut Vec<String>, &mut Vec<String>),
    ) {
        let f = &self.funcs[k];
        lines.push(format!("{}{}", "  ".repeat(depth), f.label()));
        trail.push(f.krate.clone());
        if depth >= 12 || lines.len() >= 80 {
            return;
        }
        for call in calls(&f.body) {
            bind(&f.body, call.at, &mut tracked);
            let by_receiver = call.receiver.as_ref().is_some_and(|r| tracked.contains(r));
            let by_arg: Vec<usize> = (0..call.args.len())
                .filter(|&a| carries(&call.args[a], &tracked))
                .collect();
            if !by_receiver && by_arg.is_empty() {
                continue;
            }
            for c in self.callees(f, &call) {
                let callee = &self.funcs[c];
                // The callee's parameters that receive the option: by its name, or in a value
                // of a type that holds it. A method's `self` comes first.
                let shift =
                    usize::from(callee.params.first().is_some_and(|p| p == "self") && call.method);
                let holds = |p: usize| {
                    callee
                        .param_types
                        .get(p)
                        .is_some_and(|t| t.iter().any(|x| holders.contains(x)))
                };
                let mut inner: BTreeSet<String> = by_arg
                    .iter()
                    .map(|&a| a + shift)
                    .filter(|&p| {
                        holds(p)
                            || carries(&call.args[p - shift], &BTreeSet::from([word.to_string()]))
                    })
                    .filter_map(|p| callee.params.get(p).cloned())
                    .collect();
                if by_receiver
                    && shift == 1
                    && callee.owner.as_ref().is_some_and(|o| holders.contains(o))
                {
                    inner.insert("self".into());
                }
                let names = callee
                    .body
                    .iter()
                    .any(|t| matches!(t, Tok::Ident(s) if s == word));
                if inner.is_empty() && !names {
                    continue;
                }
                if !seen.insert(c) {
                    continue;
                }
                inner.insert(word.to_string());
                self.visit(c, (word, holders), inner, depth + 1, (seen, lines, trail));
                // Back in this function to read on.
                trail.push(f.krate.clone());
            }
        }
    }
}

/// The docs' text for one walk.
fn section(title: &str, lines: &[String], climbs: usize) -> String {
    format!(
        "{title}: {} stops, {climbs} climb(s) back up.\n\n```text\n{}\n```\n",
        lines.len(),
        lines.join("\n")
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
        "budget",
        4,
    ),
];

#[test]
fn the_documented_walks_are_the_codes() {
    let ws = Workspace::load();
    let mut text = String::new();
    for (title, krate, module, name, word, most) in WALKS {
        let (lines, climbs) = ws.walk(krate, module, name, word);
        assert!(
            lines.len() > 2,
            "{title}: the walk found no callee naming `{word}`:\n{lines:?}"
        );
        assert!(
            climbs <= most,
            "{title}: {climbs} climbs back up (at most {most}):\n{}",
            lines.join("\n")
        );
        text.push_str(&section(title, &lines, climbs));
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
