//! Formulas of the event tables: `fp64.256 = FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE * 4`.
//!
//! The right-hand side is arithmetic (`+ - * /`, parentheses) over numbers, event
//! names and the set's constants (such as the SVE vector length `VL`). Values stay
//! exact integers while they can: counts above 2^53 must not lose digits to f64.

use std::collections::BTreeMap;
use std::fmt;

/// A number: exact while integer arithmetic suffices, else approximate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    Exact(i128),
    Approx(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Exact(n) => n as f64,
            Num::Approx(x) => x,
        }
    }

    /// Rounded to a count; negative values (a subtraction of counters gone wrong) give `None`.
    pub fn to_count(self) -> Option<u64> {
        match self {
            Num::Exact(n) => u64::try_from(n).ok(),
            Num::Approx(x) if x >= -0.5 && x.is_finite() => Some(x.round() as u64),
            Num::Approx(_) => None,
        }
    }

    /// `self op rhs`, exact when both are exact and the result is an integer.
    pub fn apply(self, op: Op, rhs: Num) -> Num {
        use Num::{Approx, Exact};
        match (self, rhs) {
            (Exact(a), Exact(b)) => {
                let exact = match op {
                    Op::Add => a.checked_add(b),
                    Op::Sub => a.checked_sub(b),
                    Op::Mul => a.checked_mul(b),
                    Op::Div => (b != 0 && a % b == 0).then(|| a / b),
                };
                exact.map_or_else(|| Approx(op.f64(a as f64, b as f64)), Exact)
            }
            (a, b) => Approx(op.f64(a.as_f64(), b.as_f64())),
        }
    }
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::Exact(n) => write!(f, "{n}"),
            Num::Approx(x) => write!(f, "{x}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

impl Op {
    fn f64(self, a: f64, b: f64) -> f64 {
        match self {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Div => a / b,
        }
    }

    fn symbol(self) -> char {
        match self {
            Op::Add => '+',
            Op::Sub => '-',
            Op::Mul => '*',
            Op::Div => '/',
        }
    }
}

/// A parsed right-hand side.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(Num),
    /// An event name or a constant of the set.
    Name(String),
    Bin(Box<Expr>, Op, Box<Expr>),
}

impl Expr {
    /// Every name the expression refers to.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Expr::Num(_) => {}
            Expr::Name(n) => out.push(n),
            Expr::Bin(a, _, b) => {
                a.collect(out);
                b.collect(out);
            }
        }
    }

    /// Evaluates with `lookup` giving each name's value; `None` if any name is unknown.
    pub fn eval(&self, lookup: &dyn Fn(&str) -> Option<Num>) -> Option<Num> {
        match self {
            Expr::Num(n) => Some(*n),
            Expr::Name(n) => lookup(n),
            Expr::Bin(a, op, b) => Some(a.eval(lookup)?.apply(*op, b.eval(lookup)?)),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Num(Num::Exact(n)) => write!(f, "{n}"),
            Expr::Num(Num::Approx(x)) => write!(f, "{x}"),
            Expr::Name(n) => f.write_str(n),
            Expr::Bin(a, op, b) => {
                let paren = |e: &Expr, f: &mut fmt::Formatter<'_>, tight: bool| match e {
                    Expr::Bin(_, inner, _) if tight && matches!(inner, Op::Add | Op::Sub) => {
                        write!(f, "({e})")
                    }
                    _ => write!(f, "{e}"),
                };
                let tight = matches!(op, Op::Mul | Op::Div);
                paren(a, f, tight)?;
                write!(f, " {} ", op.symbol())?;
                // The right operand of - and / keeps its parentheses whatever it is.
                match (op, b.as_ref()) {
                    (Op::Sub | Op::Div, Expr::Bin(..)) => write!(f, "({b})"),
                    _ => paren(b, f, tight),
                }
            }
        }
    }
}

/// `key = expression`, one line of a table's `flop`, `info` or DRAM `formulas`.
#[derive(Debug, Clone, PartialEq)]
pub struct Formula {
    pub key: String,
    pub expr: Expr,
}

impl fmt::Display for Formula {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}", self.key, self.expr)
    }
}

impl Formula {
    pub fn parse(line: &str) -> Result<Formula, String> {
        let (key, rhs) = line
            .split_once('=')
            .ok_or_else(|| format!("`{line}` is not `key = expression`"))?;
        let key = key.trim();
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(format!("`{key}` is not a formula key"));
        }
        Ok(Formula {
            key: key.to_string(),
            expr: parse_expr(rhs).map_err(|e| format!("`{line}`: {e}"))?,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Num(Num),
    Name(String),
    Op(Op),
    Open,
    Close,
}

fn tokenize(s: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let word = |i: &mut usize, ok: &dyn Fn(char) -> bool| {
        let start = *i;
        while *i < chars.len() && ok(chars[*i]) {
            *i += 1;
        }
        chars[start..*i].iter().collect::<String>()
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => i += 1,
            '+' | '-' | '*' | '/' => {
                out.push(Token::Op(match c {
                    '+' => Op::Add,
                    '-' => Op::Sub,
                    '*' => Op::Mul,
                    _ => Op::Div,
                }));
                i += 1;
            }
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            // Event names may contain digits after a dot: FP_ARITH_INST_RETIRED.128B_PACKED_DOUBLE.
            c if c.is_ascii_alphabetic() || c == '_' => {
                out.push(Token::Name(word(&mut i, &|c| {
                    c.is_ascii_alphanumeric() || c == '_' || c == '.'
                })));
            }
            c if c.is_ascii_digit() => {
                let text = word(&mut i, &|c| c.is_ascii_alphanumeric() || c == '.');
                let num = if let Some(hex) = text.strip_prefix("0x") {
                    i128::from_str_radix(hex, 16).ok().map(Num::Exact)
                } else if let Ok(n) = text.parse::<i128>() {
                    Some(Num::Exact(n))
                } else {
                    text.parse::<f64>().ok().map(Num::Approx)
                };
                out.push(Token::Num(
                    num.ok_or_else(|| format!("`{text}` is not a number"))?,
                ));
            }
            other => return Err(format!("unexpected `{other}`")),
        }
    }
    Ok(out)
}

/// Parses an expression with the usual precedence (`*` `/` over `+` `-`, left to right).
pub fn parse_expr(s: &str) -> Result<Expr, String> {
    let tokens = tokenize(s)?;
    let mut pos = 0;
    let e = parse_sum(&tokens, &mut pos)?;
    if pos != tokens.len() {
        return Err(format!("unexpected {:?}", tokens[pos]));
    }
    Ok(e)
}

fn parse_sum(t: &[Token], pos: &mut usize) -> Result<Expr, String> {
    let mut lhs = parse_product(t, pos)?;
    while let Some(Token::Op(op @ (Op::Add | Op::Sub))) = t.get(*pos) {
        *pos += 1;
        lhs = Expr::Bin(Box::new(lhs), *op, Box::new(parse_product(t, pos)?));
    }
    Ok(lhs)
}

fn parse_product(t: &[Token], pos: &mut usize) -> Result<Expr, String> {
    let mut lhs = parse_atom(t, pos)?;
    while let Some(Token::Op(op @ (Op::Mul | Op::Div))) = t.get(*pos) {
        *pos += 1;
        lhs = Expr::Bin(Box::new(lhs), *op, Box::new(parse_atom(t, pos)?));
    }
    Ok(lhs)
}

fn parse_atom(t: &[Token], pos: &mut usize) -> Result<Expr, String> {
    let tok = t.get(*pos).ok_or("the expression ends early")?;
    *pos += 1;
    match tok {
        Token::Num(n) => Ok(Expr::Num(*n)),
        Token::Name(n) => Ok(Expr::Name(n.clone())),
        Token::Open => {
            let e = parse_sum(t, pos)?;
            match t.get(*pos) {
                Some(Token::Close) => {
                    *pos += 1;
                    Ok(e)
                }
                _ => Err("missing `)`".into()),
            }
        }
        other => Err(format!("unexpected {other:?}")),
    }
}

/// Evaluates `expr` with event values and constants from maps (a helper for callers and tests).
pub fn eval_with(expr: &Expr, values: &BTreeMap<String, Num>) -> Option<Num> {
    expr.eval(&|n| values.get(n).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_names_and_exactness() {
        let f = Formula::parse(
            "fp64.256 = FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE * 4 + X - (A - B) * 2",
        )
        .unwrap();
        assert_eq!(f.key, "fp64.256");
        let vals: BTreeMap<String, Num> = [
            ("FP_ARITH_INST_RETIRED.256B_PACKED_DOUBLE", 1000),
            ("X", 7),
            ("A", 10),
            ("B", 4),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), Num::Exact(v)))
        .collect();
        // 1000*4 + 7 - (10-4)*2 = 3995
        assert_eq!(eval_with(&f.expr, &vals), Some(Num::Exact(3995)));
        assert_eq!(Formula::parse(&f.to_string()).unwrap(), f);
    }

    #[test]
    fn division_stays_exact_when_it_divides() {
        let e = parse_expr("S * VL / 128").unwrap();
        let vals: BTreeMap<String, Num> = [("S", Num::Exact(3)), ("VL", Num::Exact(512))]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        assert_eq!(eval_with(&e, &vals), Some(Num::Exact(12)));
        assert_eq!(
            eval_with(&parse_expr("7 / 2").unwrap(), &BTreeMap::new()),
            Some(Num::Approx(3.5))
        );
    }

    #[test]
    fn big_counts_do_not_lose_digits() {
        let e = parse_expr("A * 16").unwrap();
        let vals = [("A".to_string(), Num::Exact((1 << 60) + 1))]
            .into_iter()
            .collect();
        assert_eq!(
            eval_with(&e, &vals).unwrap().to_count(),
            None,
            "2^64 overflows u64"
        );
        let vals = [("A".to_string(), Num::Exact((1 << 55) + 1))]
            .into_iter()
            .collect();
        assert_eq!(
            eval_with(&e, &vals).unwrap().to_count(),
            Some(((1u64 << 55) + 1) * 16)
        );
    }

    #[test]
    fn errors() {
        assert!(Formula::parse("x").is_err());
        assert!(parse_expr("A * ").is_err());
        assert!(parse_expr("(A + B").is_err());
        assert!(parse_expr("A $ B").is_err());
        assert_eq!(
            eval_with(&parse_expr("A + 1").unwrap(), &BTreeMap::new()),
            None
        );
    }
}
