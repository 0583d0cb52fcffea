//! The items a walk reads in tokens: functions with their parameters, structs with their
//! fields, the calls in a body and the names a body binds.

use super::tokens::{close, ident, split_args, Tok};
use std::collections::{BTreeMap, BTreeSet};

/// A function of the workspace.
#[derive(Debug)]
pub struct Func {
    pub krate: String,
    pub module: String,
    pub owner: Option<String>,
    pub trait_impl: Option<String>,
    pub name: String,
    /// The parameters' names, `self` included.
    pub params: Vec<String>,
    /// The functions its file imports by name: name -> the module it comes from.
    pub imports: BTreeMap<String, String>,
    /// The identifiers in each parameter's type.
    pub param_types: Vec<BTreeSet<String>>,
    pub body: Vec<Tok>,
}

impl Func {
    pub fn label(&self) -> String {
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

/// The last plain identifier of a type in `t` (`Foo<'a, T>` -> `Foo`, `&mut a::Bar` -> `Bar`).
pub fn type_name(t: &[Tok]) -> Option<String> {
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
pub fn functions(t: &[Tok], krate: &str, module: &str, out: &mut Vec<Func>) {
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
                    imports: BTreeMap::new(),
                    param_types,
                    body: t[j..end].to_vec(),
                });
                i = end;
            }
            _ => i += 1,
        }
    }
}

/// A parameter's name: `self` for any form of it, else the last identifier before its `:`.
pub fn param_type(p: &[Tok]) -> BTreeSet<String> {
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
pub fn structs(t: &[Tok], out: &mut BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>) {
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

pub fn param_name(p: &[Tok]) -> String {
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
pub struct Call {
    pub name: String,
    pub qualifier: Option<String>,
    pub method: bool,
    pub receiver: Option<String>,
    pub args: Vec<Vec<Tok>>,
    /// Where the call is in the body.
    pub at: usize,
}

pub fn calls(body: &[Tok]) -> Vec<Call> {
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
pub fn carries(t: &[Tok], tracked: &BTreeSet<String>) -> bool {
    t.iter()
        .any(|x| ident(Some(x)).is_some_and(|s| tracked.contains(s)))
}

/// The names a body binds from tracked values before token `upto` (`let PAT = EXPR;` and
/// `for PAT in EXPR` where EXPR names a tracked value), added to `tracked`.
pub fn bind(body: &[Tok], upto: usize, tracked: &mut BTreeSet<String>) {
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
            // The expression: to the `;` (a `let`) or the loop's `{` (a `for`) outside any
            // group, so a struct literal counts whole.
            let end = if keyword == Some("let") { ';' } else { '{' };
            let mut k = j + 1;
            while k < body.len() && body[k] != Tok::Punct(end) {
                k = match body[k] {
                    Tok::Punct('(' | '[') => close(body, k),
                    Tok::Punct('{') => close(body, k),
                    _ => k + 1,
                };
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

/// The names a file imports from a module: `use a::b::f;` and `use a::b::{f, g};` give f and g
/// from `b` (a name imported as a module, `use a::b;`, is `b` from `a`).
pub fn imports(t: &[Tok]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for i in 0..t.len() {
        if ident(t.get(i)) != Some("use") {
            continue;
        }
        let mut path: Vec<String> = Vec::new();
        let mut j = i + 1;
        while j < t.len() {
            match &t[j] {
                Tok::Ident(s) => path.push(s.clone()),
                Tok::Punct(':') => {}
                Tok::Punct('{') => {
                    let end = close(t, j);
                    let from = path.last().cloned().unwrap_or_default();
                    for item in split_args(&t[j + 1..end - 1]) {
                        if let [Tok::Ident(name)] = item {
                            out.insert(name.clone(), from.clone());
                        }
                    }
                    break;
                }
                _ => {
                    if path.len() >= 2 {
                        let name = path[path.len() - 1].clone();
                        out.insert(name, path[path.len() - 2].clone());
                    }
                    break;
                }
            }
            j += 1;
        }
    }
    out
}
