//! The Rust subset `#[monoscan::operator]` translates, as the macro hands it over: functions of
//! `let`s and a tail expression, over locals, literals, constants evaluated by Rust, field
//! accesses, indexing, operators, the translatable methods, calls to other translated
//! functions, casts, struct and array literals, and `if`/`else`.
//!
//! Types are runtime values ([`Ty`]), built from the Rust types the source names
//! (`Ty::of::<T>()`), so a generic operator's IR is built per instance.

use crate::element::{CudaInit, Element};
use crate::layout::{Layout, Primitive};

/// A type of the subset.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `bool`.
    Bool,
    /// An element type (a primitive, or a struct described by its [`Layout`]).
    Elem(Layout),
    /// `[T; N]`.
    Array(Box<Ty>, usize),
}

impl Ty {
    /// The type of the element `T`.
    pub fn of<T: Element>() -> Ty {
        Ty::Elem(T::cuda_layout())
    }

    /// `usize`, as an index: 64 bits wide on every CUDA platform.
    pub fn usize() -> Ty {
        Ty::of::<u64>()
    }

    /// `[t; n]`.
    pub fn array(t: Ty, n: usize) -> Ty {
        Ty::Array(Box::new(t), n)
    }

    /// The primitive, if this is one.
    pub fn primitive(&self) -> Option<Primitive> {
        match self {
            Ty::Elem(l) => l.as_primitive(),
            _ => None,
        }
    }

    /// The Rust spelling, for messages.
    pub fn describe(&self) -> String {
        match self {
            Ty::Bool => "bool".to_string(),
            Ty::Elem(l) => match l.as_primitive() {
                Some(p) => p.rust_name().to_string(),
                None => format!("`{}`", l.cuda_name),
            },
            Ty::Array(t, n) => format!("[{}; {n}]", t.describe()),
        }
    }
}

/// A value Rust computes when the operator is described (`i64::MIN`, `self.modulus`,
/// `T::highest()`), baked into the CUDA source as a literal.
#[derive(Clone, Debug, PartialEq)]
pub struct Const {
    /// Its type.
    pub ty: Ty,
    /// Its C++ spelling, when the type has one.
    pub cuda: Option<String>,
    /// The Rust source of the constant, for messages.
    pub source: String,
}

/// What can be a constant: elements, `bool`, `usize`, and arrays of them.
pub trait Constant {
    /// The type and the C++ spelling.
    fn constant(&self) -> (Ty, Option<String>);
}

impl<E: Element> Constant for E {
    fn constant(&self) -> (Ty, Option<String>) {
        (Ty::of::<E>(), self.cuda_literal())
    }
}

impl Constant for bool {
    fn constant(&self) -> (Ty, Option<String>) {
        (Ty::Bool, Some(self.to_string()))
    }
}

impl Constant for usize {
    fn constant(&self) -> (Ty, Option<String>) {
        (Ty::usize(), (*self as u64).cuda_literal())
    }
}

impl<X: Constant + CudaInit, const N: usize> Constant for [X; N] {
    fn constant(&self) -> (Ty, Option<String>) {
        let elem = match self.first() {
            Some(x) => x.constant().0,
            None => Ty::Bool,
        };
        (Ty::array(elem, N), self.cuda_init())
    }
}

/// An unsuffixed literal, typed by its context as Rust types it.
#[derive(Clone, Debug, PartialEq)]
pub enum Lit {
    /// An integer literal.
    Int(u128),
    /// A float literal, as Rust reads it for either width (so that neither is rounded twice).
    Float(f32, f64),
    /// `true` or `false`.
    Bool(bool),
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`.
    Neg,
    /// `!x`.
    Not,
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    /// `+`, `==`, ...
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Shl => "<<",
            Shr => ">>",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }

    /// `==`, `!=`, `<`, `<=`, `>`, `>=`.
    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
}

/// A function to call: another translated function, by name, with how to build it when it is
/// defined outside the operator (`#[monoscan::device]`).
#[derive(Clone, Debug)]
pub struct Callee {
    /// The Rust name.
    pub name: String,
    /// The function's IR, for `#[monoscan::device]` functions.
    pub build: Option<fn() -> Function>,
}

/// An expression.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A parameter or a `let`.
    Local(String),
    /// An unsuffixed literal.
    Lit(Lit),
    /// A constant Rust evaluated.
    Const(Const),
    /// `e.name` (`e.0` for tuple fields).
    Field(Box<Expr>, String),
    /// `e[i]`.
    Index(Box<Expr>, Box<Expr>),
    /// `-e`, `!e`.
    Unary(UnOp, Box<Expr>),
    /// `l op r`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e.name(args)`, one of the translatable methods.
    Method(Box<Expr>, String, Vec<Expr>),
    /// `f(args)`.
    Call(Callee, Vec<Expr>),
    /// `e as T`.
    Cast(Box<Expr>, Ty),
    /// `S { name: e, .., ..base }`: the type comes from the context; the path is for messages.
    Struct(String, Vec<(String, Expr)>, Option<Box<Expr>>),
    /// `[a, b, c]`.
    Array(Vec<Expr>),
    /// `[e; n]`.
    Repeat(Box<Expr>, usize),
    /// `if c { .. } else { .. }`.
    If(Box<Expr>, Box<Block>, Box<Block>),
    /// `{ let ..; e }`.
    Block(Box<Block>),
}

/// `let name: ty = init;`.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// The bound name.
    pub name: String,
    /// The annotation, if any.
    pub ty: Option<Ty>,
    /// The initialiser.
    pub init: Expr,
}

/// `{ stmts; tail }`.
#[derive(Clone, Debug)]
pub struct Block {
    /// The `let`s.
    pub stmts: Vec<Stmt>,
    /// The value.
    pub tail: Expr,
}

/// A translated function: `combine`, or a helper it calls.
#[derive(Clone, Debug)]
pub struct Function {
    /// The Rust name.
    pub name: String,
    /// Parameters and their types (references taken off).
    pub params: Vec<(String, Ty)>,
    /// The return type.
    pub ret: Ty,
    /// The body.
    pub body: Block,
}

// Constructors for the code `#[monoscan::operator]` generates (short, so that expansions stay
// readable).
impl Expr {
    /// A local.
    pub fn local(name: &str) -> Expr {
        Expr::Local(name.to_string())
    }
    /// An unsuffixed integer literal.
    pub fn int(v: u128) -> Expr {
        Expr::Lit(Lit::Int(v))
    }
    /// An unsuffixed float literal, read at both widths.
    pub fn float(v32: f32, v64: f64) -> Expr {
        Expr::Lit(Lit::Float(v32, v64))
    }
    /// A `bool` literal.
    pub fn bool(v: bool) -> Expr {
        Expr::Lit(Lit::Bool(v))
    }
    /// A constant.
    pub fn constant<C: Constant>(value: &C, source: &str) -> Expr {
        let (ty, cuda) = value.constant();
        Expr::Const(Const {
            ty,
            cuda,
            source: source.to_string(),
        })
    }
    /// `self.name`.
    pub fn field(self, name: &str) -> Expr {
        Expr::Field(Box::new(self), name.to_string())
    }
    /// `self[i]`.
    pub fn index(self, i: Expr) -> Expr {
        Expr::Index(Box::new(self), Box::new(i))
    }
    /// `op self`.
    pub fn unary(op: UnOp, e: Expr) -> Expr {
        Expr::Unary(op, Box::new(e))
    }
    /// `l op r`.
    pub fn binary(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary(op, Box::new(l), Box::new(r))
    }
    /// `self.name(args)`.
    pub fn method(self, name: &str, args: Vec<Expr>) -> Expr {
        Expr::Method(Box::new(self), name.to_string(), args)
    }
    /// `name(args)`, a helper of the same operator.
    pub fn call(name: &str, args: Vec<Expr>) -> Expr {
        Expr::Call(
            Callee {
                name: name.to_string(),
                build: None,
            },
            args,
        )
    }
    /// `name(args)`, a `#[monoscan::device]` function.
    pub fn call_device(name: &str, build: fn() -> Function, args: Vec<Expr>) -> Expr {
        Expr::Call(
            Callee {
                name: name.to_string(),
                build: Some(build),
            },
            args,
        )
    }
    /// `self as ty`.
    pub fn cast(self, ty: Ty) -> Expr {
        Expr::Cast(Box::new(self), ty)
    }
    /// A struct literal.
    pub fn structure(path: &str, fields: Vec<(&str, Expr)>, base: Option<Expr>) -> Expr {
        Expr::Struct(
            path.to_string(),
            fields
                .into_iter()
                .map(|(n, e)| (n.to_string(), e))
                .collect(),
            base.map(Box::new),
        )
    }
    /// `[e; n]`.
    pub fn repeat(e: Expr, n: usize) -> Expr {
        Expr::Repeat(Box::new(e), n)
    }
    /// `if c { t } else { f }`.
    pub fn cond(c: Expr, t: Block, f: Block) -> Expr {
        Expr::If(Box::new(c), Box::new(t), Box::new(f))
    }
    /// A block.
    pub fn block(b: Block) -> Expr {
        Expr::Block(Box::new(b))
    }
}

impl Block {
    /// `{ stmts; tail }`.
    pub fn new(stmts: Vec<Stmt>, tail: Expr) -> Block {
        Block { stmts, tail }
    }
}

impl Stmt {
    /// `let name: ty = init;`.
    pub fn new(name: &str, ty: Option<Ty>, init: Expr) -> Stmt {
        Stmt {
            name: name.to_string(),
            ty,
            init,
        }
    }
}

impl Function {
    /// A function.
    pub fn new(name: &str, params: Vec<(&str, Ty)>, ret: Ty, body: Block) -> Function {
        Function {
            name: name.to_string(),
            params: params
                .into_iter()
                .map(|(n, t)| (n.to_string(), t))
                .collect(),
            ret,
            body,
        }
    }
}
