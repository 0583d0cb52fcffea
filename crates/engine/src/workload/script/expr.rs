//! `\set` expressions: integers, `+ - * / %`, unary minus, parentheses, `:variables` and
//! pgbench's functions (plus sysbench's distributions).
//!
//! Parsing resolves every variable to a slot number and checks each distribution's constant
//! parameter against pgbench's limits, so evaluation only fails on what depends on values:
//! division by zero, overflow, an empty random range.
//!
//! Parsing, evaluating and dropping an expression recurse on its tree, so its size is bounded
//! before it is parsed: parentheses nest at most [`MAX_NESTING`] deep, and an expression has
//! at most [`MAX_TOKENS`] tokens (a chain of operators is a tree as deep as it is long).

use super::dist::{self, draw, Func};
use crate::rand::Rng;
use qpslab_core::input::excerpt;
use qpslab_core::workload::RandOptions;

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Expr {
    /// An integer literal.
    Int(i64),
    /// A variable, by slot.
    Var(u32),
    /// Unary minus.
    Neg(Box<Expr>),
    /// A binary operator.
    Bin(Op, Box<Expr>, Box<Expr>),
    /// A function call.
    Call(Func, Vec<Expr>),
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// Why an evaluation failed (an error of that event, as pgbench aborts that transaction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// `/` or `%` by zero.
    #[error("division by zero")]
    DivByZero,
    /// A result outside the 64-bit integer range.
    #[error("integer out of range")]
    Overflow,
    /// `random*(lo, hi)` with `hi < lo`.
    #[error("empty range given to random")]
    EmptyRange,
}

/// What evaluation reads: the session's variables, random state and `--rand-*` options.
pub(crate) struct Env<'a> {
    pub vars: &'a [i64],
    pub rng: &'a mut Rng,
    pub rand: &'a RandOptions,
}

impl Expr {
    /// The expression's value.
    pub(crate) fn eval(&self, env: &mut Env<'_>) -> Result<i64, EvalError> {
        Ok(match self {
            Expr::Int(v) => *v,
            Expr::Var(slot) => env.vars[*slot as usize],
            Expr::Neg(e) => e.eval(env)?.checked_neg().ok_or(EvalError::Overflow)?,
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(env)?, b.eval(env)?);
                let r = match op {
                    Op::Add => a.checked_add(b),
                    Op::Sub => a.checked_sub(b),
                    Op::Mul => a.checked_mul(b),
                    Op::Div | Op::Mod if b == 0 => return Err(EvalError::DivByZero),
                    Op::Div => a.checked_div(b),
                    // i64::MIN % -1 is 0 mathematically; checked_rem refuses it.
                    Op::Mod => Some(a.checked_rem(b).unwrap_or(0)),
                };
                r.ok_or(EvalError::Overflow)?
            }
            Expr::Call(f, args) => call(*f, args, env)?,
        })
    }
}

/// Evaluates `f` on `args`.
fn call(f: Func, args: &[Expr], env: &mut Env<'_>) -> Result<i64, EvalError> {
    match f {
        Func::Abs => args[0].eval(env)?.checked_abs().ok_or(EvalError::Overflow),
        Func::Least | Func::Greatest => {
            let mut best = args[0].eval(env)?;
            for a in &args[1..] {
                let v = a.eval(env)?;
                best = if f == Func::Least {
                    best.min(v)
                } else {
                    best.max(v)
                };
            }
            Ok(best)
        }
        _ => {
            let (lo, hi) = (args[0].eval(env)?, args[1].eval(env)?);
            if hi < lo {
                return Err(EvalError::EmptyRange);
            }
            // The offset of the draw from `lo`; `hi - lo` fits in u64 for any i64 pair.
            let span = hi.abs_diff(lo);
            let off = draw(f, span, env.rng, env.rand);
            Ok(lo.wrapping_add(off.min(span) as i64))
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Num(f64),
    Var(String),
    Ident(String),
    Sym(u8),
}

/// How deep parentheses (a function's included) may nest in an expression.
pub(crate) const MAX_NESTING: usize = 64;
/// How many tokens an expression may have.
pub(crate) const MAX_TOKENS: usize = 1024;

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut depth = 0usize;
    while i < b.len() {
        let c = b[i];
        // Checked as the tokens come, so neither a deep nesting nor a long expression is
        // ever held whole.
        match c {
            b'(' if depth == MAX_NESTING => {
                return Err(format!("nesting deeper than {MAX_NESTING}"))
            }
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if out.len() == MAX_TOKENS {
            return Err(format!("an expression longer than {MAX_TOKENS} tokens"));
        }
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            let t = &s[start..i];
            out.push(if t.contains('.') {
                Tok::Num(
                    t.parse()
                        .map_err(|_| format!("bad number '{}'", excerpt(t)))?,
                )
            } else {
                Tok::Int(
                    t.parse()
                        .map_err(|_| format!("integer '{}' out of range", excerpt(t)))?,
                )
            });
        } else if c == b':' || c.is_ascii_alphabetic() || c == b'_' {
            let start = i + usize::from(c == b':');
            i = start;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let name = s[start..i].to_string();
            if name.is_empty() {
                return Err("':' must be followed by a variable name".into());
            }
            out.push(if c == b':' {
                Tok::Var(name)
            } else {
                Tok::Ident(name)
            });
        } else if b"+-*/%(),".contains(&c) {
            out.push(Tok::Sym(c));
            i += 1;
        } else {
            return Err(format!(
                "unexpected character '{}'",
                &s[i..].chars().next().unwrap_or('?')
            ));
        }
    }
    Ok(out)
}

/// Parses `text`; `var` maps a variable name to its slot or says why it cannot be used.
pub(crate) fn parse(
    text: &str,
    var: &mut dyn FnMut(&str) -> Result<u32, String>,
) -> Result<Expr, String> {
    let toks = tokenize(text)?;
    if toks.is_empty() {
        return Err("missing expression".into());
    }
    let mut p = Parser { toks, pos: 0, var };
    let e = p.sum()?;
    match p.toks.get(p.pos) {
        None => Ok(e),
        Some(t) => Err(format!("unexpected {} after the expression", show(t))),
    }
}

fn show(t: &Tok) -> String {
    match t {
        Tok::Int(v) => format!("'{v}'"),
        Tok::Num(v) => format!("'{v}'"),
        Tok::Var(n) => format!("':{}'", excerpt(n)),
        Tok::Ident(n) => format!("'{}'", excerpt(n)),
        Tok::Sym(c) => format!("'{}'", *c as char),
    }
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    var: &'a mut dyn FnMut(&str) -> Result<u32, String>,
}

impl Parser<'_> {
    fn eat(&mut self, c: u8) -> bool {
        let hit = self.toks.get(self.pos) == Some(&Tok::Sym(c));
        self.pos += usize::from(hit);
        hit
    }

    fn sum(&mut self) -> Result<Expr, String> {
        let mut e = self.product()?;
        loop {
            let op = if self.eat(b'+') {
                Op::Add
            } else if self.eat(b'-') {
                Op::Sub
            } else {
                return Ok(e);
            };
            e = Expr::Bin(op, Box::new(e), Box::new(self.product()?));
        }
    }

    fn product(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        loop {
            let op = if self.eat(b'*') {
                Op::Mul
            } else if self.eat(b'/') {
                Op::Div
            } else if self.eat(b'%') {
                Op::Mod
            } else {
                return Ok(e);
            };
            e = Expr::Bin(op, Box::new(e), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        // A loop, not recursion: `- - - 1` nests no parentheses.
        let mut minuses = 0usize;
        while self.eat(b'-') {
            minuses += 1;
        }
        let mut e = self.primary()?;
        for _ in 0..minuses {
            e = match e {
                Expr::Int(v) => Expr::Int(-v),
                e => Expr::Neg(Box::new(e)),
            };
        }
        Ok(e)
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let Some(t) = self.toks.get(self.pos).cloned() else {
            return Err("the expression ends too early".into());
        };
        self.pos += 1;
        match t {
            Tok::Int(v) => Ok(Expr::Int(v)),
            Tok::Var(n) => Ok(Expr::Var((self.var)(&n)?)),
            Tok::Sym(b'(') => {
                let e = self.sum()?;
                self.close()?;
                Ok(e)
            }
            Tok::Ident(name) => self.call(&name),
            Tok::Num(v) => Err(format!(
                "'{v}': only a distribution's parameter may be a decimal number"
            )),
            t => Err(format!("unexpected {}", show(&t))),
        }
    }

    fn close(&mut self) -> Result<(), String> {
        if self.eat(b')') {
            Ok(())
        } else {
            Err("missing ')'".into())
        }
    }

    fn call(&mut self, name: &str) -> Result<Expr, String> {
        let shaped = dist::shaped(name);
        let Some(arity) = dist::arity(name) else {
            return Err(format!("unknown function '{}'", excerpt(name)));
        };
        if !self.eat(b'(') {
            return Err(format!("'{name}' must be followed by '('"));
        }
        let mut args = Vec::new();
        let mut param = None;
        loop {
            if shaped && args.len() == 2 {
                param = Some(self.constant(name)?);
            } else {
                args.push(self.sum()?);
            }
            if !self.eat(b',') {
                break;
            }
        }
        self.close()?;
        let given = args.len() + usize::from(param.is_some());
        if !arity.contains(&given) {
            return Err(format!("{name}() takes {}", dist::arity_text(name)));
        }
        let f = dist::func(name, param)?;
        Ok(Expr::Call(f, args))
    }

    /// A distribution's shape parameter: a constant number.
    fn constant(&mut self, name: &str) -> Result<f64, String> {
        let neg = self.eat(b'-');
        let v = match self.toks.get(self.pos) {
            Some(Tok::Int(v)) => *v as f64,
            Some(Tok::Num(v)) => *v,
            _ => {
                return Err(format!(
                    "{name}()'s third argument must be a constant number"
                ))
            }
        };
        self.pos += 1;
        Ok(if neg { -v } else { v })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_str(s: &str, vars: &[i64]) -> Result<i64, EvalError> {
        let names = ["a", "b"];
        let e = parse(s, &mut |n| {
            names
                .iter()
                .position(|x| *x == n)
                .map(|p| p as u32)
                .ok_or_else(|| format!("unknown variable ':{n}'"))
        })
        .unwrap();
        let mut rng = Rng::new(1);
        let rand = RandOptions::default();
        e.eval(&mut Env {
            vars,
            rng: &mut rng,
            rand: &rand,
        })
    }

    fn parse_err(s: &str) -> String {
        parse(s, &mut |n| Err(format!("unknown variable ':{n}'"))).unwrap_err()
    }

    #[test]
    fn arithmetic_follows_precedence_and_truncates_like_c() {
        assert_eq!(eval_str("1 + 2 * 3", &[]), Ok(7));
        assert_eq!(eval_str("(1 + 2) * 3", &[]), Ok(9));
        assert_eq!(eval_str("-7 / 2", &[]), Ok(-3));
        assert_eq!(eval_str("-7 % 3", &[]), Ok(-1));
        assert_eq!(eval_str("- -4 - 1", &[]), Ok(3));
        assert_eq!(eval_str(":a * 10 + :b", &[4, 2]), Ok(42));
        assert_eq!(
            eval_str("abs(-5) + least(3, :a, 9) + greatest(1, 2)", &[1, 0]),
            Ok(8)
        );
    }

    #[test]
    fn runtime_failures_are_errors() {
        assert_eq!(eval_str("1 / (:a - 1)", &[1, 0]), Err(EvalError::DivByZero));
        assert_eq!(eval_str("5 % 0", &[]), Err(EvalError::DivByZero));
        assert_eq!(
            eval_str("9223372036854775807 + 1", &[]),
            Err(EvalError::Overflow)
        );
        assert_eq!(eval_str("random(5, 1)", &[]), Err(EvalError::EmptyRange));
    }

    #[test]
    fn syntax_errors_say_what_is_wrong() {
        assert!(parse_err("1 +").contains("ends too early"));
        assert!(parse_err("(1").contains("missing ')'"));
        assert!(parse_err("1 2").contains("unexpected '2'"));
        assert!(parse_err(":nope + 1").contains("unknown variable ':nope'"));
        assert!(parse_err("rand(1, 2)").contains("unknown function 'rand'"));
        assert!(parse_err("random(1)").contains("random() takes 2 arguments"));
        assert!(parse_err("1.5 + 1").contains("decimal"));
        assert!(parse_err("random_gaussian(1, 10, 1.5)").contains("at least 2"));
        assert!(parse_err("random_zipfian(1, 10, 1)").contains("1.001"));
        assert!(parse_err("random_exponential(1, 10, 0)").contains("greater than 0"));
        assert!(parse_err("1 $ 2").contains("unexpected character '$'"));
    }

    #[test]
    fn extreme_ranges_stay_inside() {
        let mut rng = Rng::new(3);
        let rand = RandOptions::default();
        for f in [
            Func::Random,
            Func::Exponential(1.0),
            Func::Gaussian(2.0),
            Func::Zipfian(1.5),
        ] {
            let args = [Expr::Int(i64::MIN), Expr::Int(i64::MAX)];
            let mut env = Env {
                vars: &[],
                rng: &mut rng,
                rand: &rand,
            };
            call(f, &args, &mut env).unwrap();
        }
    }
}
