//! Reading the workspace's sources for the walks of `walks.rs`.

mod items;
mod tokens;

pub use items::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
pub use tokens::*;

/// The workspace's crates: package name -> (source dir, the qpslab crates it depends on).
pub fn crates() -> BTreeMap<String, (PathBuf, BTreeSet<String>)> {
    let mut out = BTreeMap::new();
    let dir = super::workspace().join("crates");
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

pub fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The names an option goes by in the code: `budget|budget_s`.
fn words(word: &str) -> BTreeSet<String> {
    word.split('|').map(str::to_string).collect()
}

/// One option's walk: the functions it reaches in reading order (indented by depth), the calls
/// that climb to a crate above the caller's (callbacks; returns do not count), and the calls
/// from the command's own crate (on a path that has not left it) down into the libraries.
pub struct Walk {
    pub lines: Vec<String>,
    pub climbs: Vec<String>,
    pub calls_down: usize,
}

/// What a walk counts as it goes.
#[derive(Default)]
pub struct Tally {
    climbs: Vec<String>,
    calls_down: usize,
}

pub struct Workspace {
    pub funcs: Vec<Func>,
    /// crate -> every crate below it (transitively).
    pub below: BTreeMap<String, BTreeSet<String>>,
    /// Trait name -> the crate that declares it.
    pub traits: BTreeMap<String, String>,
    /// Every struct: name -> (field names, the identifiers of the fields' types).
    pub structs: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>,
}

impl Workspace {
    pub fn load() -> Workspace {
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
                let first = funcs.len();
                functions(&toks, krate, &parts.join("::"), &mut funcs);
                let imported = imports(&toks);
                for f in &mut funcs[first..] {
                    f.imports = imported.clone();
                }
            }
        }
        Workspace {
            funcs,
            below,
            traits,
            structs: all_structs,
        }
    }

    pub fn reaches(&self, from: &str, to: &str) -> bool {
        from == to || self.below[from].contains(to)
    }

    /// The functions a call in `caller` may reach.
    pub fn callees(&self, caller: &Func, call: &Call) -> Vec<usize> {
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
                    // A name the caller's file imports (`use a::b::f;`) is `b`'s; else the
                    // caller's crate's.
                    None => match caller.imports.get(&call.name) {
                        Some(from) => f.owner.is_none() && f.module.split("::").any(|m| m == from),
                        None => f.owner.is_none() && f.krate == caller.krate,
                    },
                    Some("Self") => f.owner == caller.owner && f.krate == caller.krate,
                    Some("self" | "super" | "crate") => {
                        f.owner.is_none() && f.krate == caller.krate
                    }
                    Some(q) => {
                        f.owner.as_deref() == Some(q)
                            || f.module.split("::").any(|m| m == q)
                            || (f.krate == q && f.owner.is_none())
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

    /// The walk of the option `word` (its names in the code, `|`-separated) from the function `name` in `krate`'s `module`, whose
    /// first parameter holds the command's arguments: each function the value reaches (by
    /// its name, or in a value built from it and passed on), as indented lines, and the
    /// climbs back up that reading makes.
    pub fn walk(&self, krate: &str, module: &str, name: &str, word: &str) -> Walk {
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
        let mut tally = Tally::default();
        let mut tracked = words(word);
        tracked.insert(first);
        // The command's arguments hold the option, whatever clap generates for it.
        let holders = self.holders(word, &self.funcs[entry].param_types[0]);
        self.visit(
            entry,
            (word, &holders, true),
            tracked,
            0,
            (&mut seen, &mut lines, &mut tally),
        );
        Walk {
            lines,
            climbs: tally.climbs,
            calls_down: tally.calls_down,
        }
    }

    /// The structs that hold the option: those with a field named `word`, and those with a
    /// field of such a type, to a fixed point.
    pub fn holders(&self, word: &str, args: &BTreeSet<String>) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = self
            .structs
            .iter()
            .filter(|(_, (fields, _))| !fields.is_disjoint(&words(word)))
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

    pub fn visit(
        &self,
        k: usize,
        (word, holders, in_cli): (&str, &BTreeSet<String>, bool),
        mut tracked: BTreeSet<String>,
        depth: usize,
        (seen, lines, tally): (&mut BTreeSet<usize>, &mut Vec<String>, &mut Tally),
    ) {
        let f = &self.funcs[k];
        lines.push(format!("{}{}", "  ".repeat(depth), f.label()));
        if depth >= 12 || lines.len() >= 150 {
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
                    .filter(|&p| holds(p) || carries(&call.args[p - shift], &words(word)))
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
                    .any(|t| matches!(t, Tok::Ident(s) if words(word).contains(s)));
                if inner.is_empty() && !names {
                    continue;
                }
                if !seen.insert(c) {
                    continue;
                }
                inner.extend(words(word));
                if callee.krate != f.krate && self.reaches(&callee.krate, &f.krate) {
                    tally.climbs.push(callee.label());
                }
                if in_cli && callee.krate != f.krate {
                    tally.calls_down += 1;
                }
                // Still in the command's crate, on a path that never left it.
                let still = in_cli && callee.krate == f.krate;
                self.visit(
                    c,
                    (word, holders, still),
                    inner,
                    depth + 1,
                    (seen, lines, tally),
                );
            }
        }
    }
}
