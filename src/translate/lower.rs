//! Typing and lowering: each expression gets the type Rust gives it (untyped literals take
//! their context's type, as in Rust), and its C++ spelling.
//!
//! Rust has already type-checked the source; what is left here is to find the types again
//! (fields through [`crate::layout`], literals from their context) and to refuse what has no
//! translation on this instance (a struct without a described layout, `==` on structs, a
//! user-defined method that happens to share a translated method's name).

use super::ir::{BinOp, Block, Expr, Function, Lit, Stmt, Ty, UnOp};
use super::spell;
use crate::layout::Shape;
use std::collections::HashMap;

/// Why a translation failed.
pub type Failure = String;

pub(super) type R<T> = Result<T, Failure>;

/// An array value: something indexable, a list of items, or a choice between two arrays.
#[derive(Clone, Debug)]
pub(super) enum Arr {
    Place(String),
    Items(Vec<Code>),
    Cond(String, Box<Code>, Box<Code>),
}

/// A lowered value.
#[derive(Clone, Debug)]
pub(super) enum Code {
    Value(String),
    Array(Arr),
}

/// A lowered expression and its type.
#[derive(Clone, Debug)]
pub(super) struct Typed {
    pub(super) ty: Ty,
    pub(super) code: Code,
}

/// What a helper looks like to its callers.
#[derive(Clone, Debug)]
pub struct Signature {
    /// Parameter types.
    pub params: Vec<Ty>,
    /// Return type.
    pub ret: Ty,
    /// The C++ name to call it by.
    pub cpp: String,
}

/// The C++ declaration of a variable of type `ty`: `long long x`, `short x[2][3]`.
pub fn declare(ty: &Ty, name: &str) -> String {
    let mut dims = String::new();
    let mut t = ty;
    while let Ty::Array(inner, n) = t {
        dims.push_str(&format!("[{n}]"));
        t = inner;
    }
    let base = match t {
        Ty::Bool => "bool".to_string(),
        Ty::Elem(l) => l.cuda_name.clone(),
        Ty::Array(..) => unreachable!("peeled above"),
    };
    if dims.is_empty() {
        format!("{base} {name}")
    } else {
        format!("{base} {name}{dims}")
    }
}

/// `true` for expressions whose type comes from their context alone (untyped literals and
/// what is built of them).
pub(super) fn literalish(e: &Expr) -> bool {
    match e {
        Expr::Lit(Lit::Int(_) | Lit::Float(..)) => true,
        Expr::Unary(_, x) => literalish(x),
        Expr::Binary(op, l, r) if !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or) => {
            literalish(l) && (matches!(op, BinOp::Shl | BinOp::Shr) || literalish(r))
        }
        Expr::If(_, t, f) => literalish(&t.tail) && literalish(&f.tail),
        Expr::Block(b) => literalish(&b.tail),
        _ => false,
    }
}

/// Lowers one function's body.
pub struct Lowerer<'a> {
    pub(super) helpers: &'a HashMap<String, Signature>,
    pub(super) scopes: Vec<Vec<(String, String, Ty)>>,
    names: HashMap<String, usize>,
    /// The `let`s of the function being lowered, as C++ statements.
    out: Vec<String>,
}

impl<'a> Lowerer<'a> {
    /// A lowerer whose calls resolve among `helpers`.
    pub fn new(helpers: &'a HashMap<String, Signature>) -> Self {
        Lowerer {
            helpers,
            scopes: vec![Vec::new()],
            names: HashMap::new(),
            out: Vec::new(),
        }
    }

    /// The body of `f` as C++ statements ending in `return`, its parameters bound to the C++
    /// names `cpp_params`.
    pub fn function(mut self, f: &Function, cpp_params: &[String]) -> R<String> {
        for ((name, ty), cpp) in f.params.iter().zip(cpp_params) {
            self.names.insert(cpp.clone(), 1);
            self.scopes[0].push((name.clone(), cpp.clone(), ty.clone()));
        }
        if let Ty::Array(..) = f.ret {
            return Err(format!(
                "`{}` returns an array, which C++ functions cannot return",
                f.name
            ));
        }
        let value = self.block_value(&f.body, Some(&f.ret))?;
        let mut body = std::mem::take(&mut self.out);
        body.push(format!("return {};", self.value(&value)?));
        Ok(body.join("\n"))
    }

    pub(super) fn fresh(&mut self, rust: &str) -> String {
        let base = if rust.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            format!("l_{rust}")
        } else {
            "l".to_string()
        };
        let k = self.names.entry(base.clone()).or_insert(0);
        *k += 1;
        if *k == 1 {
            base
        } else {
            format!("{base}_{k}")
        }
    }

    fn lookup(&self, name: &str) -> R<(String, Ty)> {
        for scope in self.scopes.iter().rev() {
            if let Some((_, cpp, ty)) = scope.iter().rev().find(|(n, _, _)| n == name) {
                return Ok((cpp.clone(), ty.clone()));
            }
        }
        Err(format!(
            "`{name}` is not a parameter or a `let` of the function"
        ))
    }

    /// The scalar or struct value of `t` as C++.
    pub(super) fn value(&self, t: &Typed) -> R<String> {
        match &t.code {
            Code::Value(s) => Ok(s.clone()),
            Code::Array(_) => Err(format!(
                "an array ({}) is used as a single value",
                t.ty.describe()
            )),
        }
    }

    /// A C++ initialiser of type `ty`: the value, or `{..}` for arrays.
    pub(super) fn init(code: &Code, ty: &Ty) -> String {
        match (code, ty) {
            (Code::Value(s), _) => s.clone(),
            (Code::Array(_), Ty::Array(inner, n)) => {
                let items: Vec<String> = (0..*n)
                    .map(|i| Self::init(&Self::element(code, inner, i), inner))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            (Code::Array(_), _) => unreachable!("array code always has an array type"),
        }
    }

    /// Element `i` of an array value whose elements are of type `inner`.
    pub(super) fn element(code: &Code, inner: &Ty, i: usize) -> Code {
        let wrap = |s: String| match inner {
            Ty::Array(..) => Code::Array(Arr::Place(s)),
            _ => Code::Value(s),
        };
        match code {
            Code::Array(Arr::Place(p)) => wrap(format!("{p}[{i}]")),
            Code::Array(Arr::Items(items)) => items[i].clone(),
            Code::Array(Arr::Cond(c, t, f)) => {
                let (t, f) = (Self::element(t, inner, i), Self::element(f, inner, i));
                match (t, f) {
                    (Code::Value(t), Code::Value(f)) => {
                        Code::Value(format!("(({c}) ? ({t}) : ({f}))"))
                    }
                    (t, f) => Code::Array(Arr::Cond(c.clone(), Box::new(t), Box::new(f))),
                }
            }
            Code::Value(v) => Code::Value(v.clone()),
        }
    }

    /// Lowers `b`'s `let`s into `self.out` and returns its tail.
    fn block_value(&mut self, b: &Block, expected: Option<&Ty>) -> R<Typed> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        self.expr(&b.tail, expected)
    }

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        let t = self.expr(&s.init, s.ty.as_ref())?;
        let ty = s.ty.clone().unwrap_or_else(|| t.ty.clone());
        let cpp = self.fresh(&s.name);
        let init = match &ty {
            Ty::Array(..) => Self::init(&t.code, &ty),
            _ => self.value(&t)?,
        };
        self.out
            .push(format!("const {} = {init};", declare(&ty, &cpp)));
        self.scopes
            .last_mut()
            .expect("a scope is open")
            .push((s.name.clone(), cpp, ty));
        Ok(())
    }

    /// A block in value position: its tail alone, or, with `let`s, a lambda called at once.
    pub(super) fn nested_block(&mut self, b: &Block, expected: Option<&Ty>) -> R<Typed> {
        if b.stmts.is_empty() {
            return self.expr(&b.tail, expected);
        }
        let outer = std::mem::take(&mut self.out);
        self.scopes.push(Vec::new());
        let tail = self.block_value(b, expected);
        self.scopes.pop();
        let inner = std::mem::replace(&mut self.out, outer);
        let tail = tail?;
        if let Ty::Array(..) = tail.ty {
            return Err("a block with `let`s cannot produce an array here".to_string());
        }
        let ret = declare(&tail.ty, "").trim_end().to_string();
        Ok(Typed {
            code: Code::Value(format!(
                "([&]() -> {ret} {{ {} return {}; }}())",
                inner.join(" "),
                self.value(&tail)?
            )),
            ty: tail.ty,
        })
    }

    pub(super) fn expr(&mut self, e: &Expr, expected: Option<&Ty>) -> R<Typed> {
        match e {
            Expr::Local(name) => {
                let (cpp, ty) = self.lookup(name)?;
                let code = match ty {
                    Ty::Array(..) => Code::Array(Arr::Place(cpp)),
                    _ => Code::Value(cpp),
                };
                Ok(Typed { ty, code })
            }
            Expr::Lit(lit) => self.literal(lit, expected, false),
            Expr::Const(c) => {
                let Some(cuda) = &c.cuda else {
                    return Err(format!(
                        "the constant `{}` is of type {}, which has no C++ literal (implement \
                         `Element::cuda_literal`)",
                        c.source,
                        c.ty.describe()
                    ));
                };
                let code = match &c.ty {
                    Ty::Array(..) => {
                        let cpp = self.fresh("const");
                        self.out
                            .push(format!("const {} = {cuda};", declare(&c.ty, &cpp)));
                        Code::Array(Arr::Place(cpp))
                    }
                    _ => Code::Value(cuda.clone()),
                };
                Ok(Typed {
                    ty: c.ty.clone(),
                    code,
                })
            }
            Expr::Field(base, name) => {
                let b = self.expr(base, None)?;
                let Ty::Elem(layout) = &b.ty else {
                    return Err(format!("`.{name}` on a value of type {}", b.ty.describe()));
                };
                let Shape::Struct(fields) = &layout.shape else {
                    return Err(format!(
                        "`.{name}` on `{}`, whose layout does not describe its fields \
                         (derive Element, or implement `Element::cuda_layout`)",
                        layout.cuda_name
                    ));
                };
                let Some(f) = fields.iter().find(|f| &f.name == name) else {
                    return Err(format!("`{}` has no field `{name}`", layout.cuda_name));
                };
                let mut ty = Ty::Elem(f.ty.clone());
                for d in f.dims.iter().rev() {
                    ty = Ty::array(ty, *d);
                }
                let place = format!("({}).{}", self.value(&b)?, f.cuda_name);
                let code = match ty {
                    Ty::Array(..) => Code::Array(Arr::Place(place)),
                    _ => Code::Value(place),
                };
                Ok(Typed { ty, code })
            }
            Expr::Index(base, index) => {
                let b = self.expr(base, None)?;
                let Ty::Array(inner, n) = &b.ty else {
                    return Err(format!("indexing a value of type {}", b.ty.describe()));
                };
                if *n == 0 {
                    return Err("indexing an empty array".into());
                }
                // A literal index in range is used as it is; any other is checked, as Rust
                // checks it (where Rust panics, the device reads the last element rather than
                // memory outside the array: `ms_rs_index`).
                let in_range = matches!(&**index, Expr::Lit(Lit::Int(v)) if *v < *n as u128);
                let i = self.expr(index, Some(&Ty::usize()))?;
                if i.ty.primitive().is_none_or(|p| p.is_float()) {
                    return Err(format!("an index of type {}", i.ty.describe()));
                }
                let i = match self.value(&i)? {
                    i if in_range => i,
                    i => format!("ms_rs_index((unsigned long long)({i}), {n}ull)"),
                };
                let inner = (**inner).clone();
                if let Code::Array(Arr::Place(p)) = &b.code {
                    let s = format!("{p}[{i}]");
                    let code = match inner {
                        Ty::Array(..) => Code::Array(Arr::Place(s)),
                        _ => Code::Value(s),
                    };
                    return Ok(Typed { ty: inner, code });
                }
                if let Ty::Array(..) = inner {
                    return Err("indexing a nested array that is not a variable or a field".into());
                }
                let arr = Ty::array(inner.clone(), *n);
                Ok(Typed {
                    code: Code::Value(format!(
                        "([&]() {{ const {} = {}; return ms_a[{i}]; }}())",
                        declare(&arr, "ms_a"),
                        Self::init(&b.code, &arr)
                    )),
                    ty: inner,
                })
            }
            Expr::Unary(op, x) => self.unary(*op, x, expected),
            Expr::Binary(op, l, r) => self.binary(*op, l, r, expected),
            Expr::Method(recv, name, args) => self.method(recv, name, args),
            Expr::Call(callee, args) => self.call(callee, args),
            Expr::Cast(x, to) => {
                let t = self.expr(x, None)?;
                let code = spell::cast(&t.ty, to, &self.value(&t)?).ok_or_else(|| {
                    format!("no cast from {} to {}", t.ty.describe(), to.describe())
                })?;
                Ok(Typed {
                    ty: to.clone(),
                    code: Code::Value(code),
                })
            }
            Expr::Struct(path, fields, base) => {
                self.structure(path, fields, base.as_deref(), expected)
            }
            Expr::Array(items) => {
                let inner_expected = match expected {
                    Some(Ty::Array(inner, _)) => Some((**inner).clone()),
                    _ => None,
                };
                let mut inner = inner_expected;
                if inner.is_none() {
                    if let Some(first) = items.iter().find(|x| !literalish(x)) {
                        inner = Some(self.probe_type(first)?);
                    }
                }
                let mut codes = Vec::new();
                let mut ty = inner.clone();
                for x in items {
                    let t = self.expr(x, ty.as_ref())?;
                    ty.get_or_insert(t.ty.clone());
                    codes.push(t.code);
                }
                let inner = ty.ok_or("an empty array literal with no type from its context")?;
                Ok(Typed {
                    ty: Ty::array(inner, items.len()),
                    code: Code::Array(Arr::Items(codes)),
                })
            }
            Expr::Repeat(x, n) => {
                let inner = match expected {
                    Some(Ty::Array(inner, _)) => Some((**inner).clone()),
                    _ => None,
                };
                let t = self.expr(x, inner.as_ref())?;
                Ok(Typed {
                    ty: Ty::array(t.ty.clone(), *n),
                    code: Code::Array(Arr::Items(vec![t.code; *n])),
                })
            }
            Expr::If(c, t, f) => self.conditional(c, t, f, expected),
            Expr::Block(b) => {
                self.scopes.push(Vec::new());
                let r = self.nested_block(b, expected);
                self.scopes.pop();
                r
            }
        }
    }

    /// The type of `e`, without keeping its lowering (for arrays typed by a later item).
    fn probe_type(&mut self, e: &Expr) -> R<Ty> {
        let out = self.out.len();
        let t = self.expr(e, None)?;
        self.out.truncate(out);
        Ok(t.ty)
    }

    fn literal(&mut self, lit: &Lit, expected: Option<&Ty>, negative: bool) -> R<Typed> {
        let p = expected.and_then(Ty::primitive);
        let (ty, code) = match lit {
            Lit::Bool(b) => (Ty::Bool, b.to_string()),
            Lit::Int(v) => {
                let p = match p {
                    Some(p) if !p.is_float() => p,
                    _ => crate::layout::Primitive::I32,
                };
                (spell::prim(p), spell::int_literal(p, *v, negative))
            }
            Lit::Float(v32, v64) => {
                let p = match p {
                    Some(p) if p.is_float() => p,
                    _ => crate::layout::Primitive::F64,
                };
                let code = if p == crate::layout::Primitive::F32 {
                    crate::literal::f32(if negative { -v32 } else { *v32 })
                } else {
                    crate::literal::f64(if negative { -v64 } else { *v64 })
                };
                (spell::prim(p), code)
            }
        };
        Ok(Typed {
            ty,
            code: Code::Value(code),
        })
    }

    fn unary(&mut self, op: UnOp, x: &Expr, expected: Option<&Ty>) -> R<Typed> {
        if let (UnOp::Neg, Expr::Lit(lit @ (Lit::Int(_) | Lit::Float(..)))) = (op, x) {
            return self.literal(lit, expected, true);
        }
        let t = self.expr(x, expected)?;
        let v = self.value(&t)?;
        let code = match (op, &t.ty) {
            (UnOp::Not, Ty::Bool) => format!("(!({v}))"),
            (UnOp::Not, ty) if ty.primitive().is_some_and(|p| !p.is_float()) => {
                spell::not(ty.primitive().expect("checked"), &v)
            }
            (UnOp::Neg, ty) if ty.primitive().is_some() => {
                spell::neg(ty.primitive().expect("checked"), &v)
            }
            _ => {
                let sym = if op == UnOp::Neg { "-" } else { "!" };
                return Err(format!("`{sym}` on a value of type {}", t.ty.describe()));
            }
        };
        Ok(Typed {
            ty: t.ty,
            code: Code::Value(code),
        })
    }

    /// Lowers two operands of one type: the one that fixes the type first.
    fn operands(&mut self, l: &Expr, r: &Expr, expected: Option<&Ty>) -> R<(Typed, Typed)> {
        if literalish(l) && !literalish(r) {
            let r = self.expr(r, expected)?;
            let l = self.expr(l, Some(&r.ty))?;
            Ok((l, r))
        } else {
            let l = self.expr(l, expected)?;
            let r = self.expr(r, Some(&l.ty))?;
            Ok((l, r))
        }
    }

    fn binary(&mut self, op: BinOp, l: &Expr, r: &Expr, expected: Option<&Ty>) -> R<Typed> {
        use BinOp::*;
        let (lt, rt) = match op {
            And | Or => (
                self.expr(l, Some(&Ty::Bool))?,
                self.expr(r, Some(&Ty::Bool))?,
            ),
            Shl | Shr => (self.expr(l, expected)?, self.expr(r, None)?),
            _ if op.is_comparison() => self.operands(l, r, None)?,
            _ => self.operands(l, r, expected)?,
        };
        let (x, y) = (self.value(&lt)?, self.value(&rt)?);
        let refuse = || {
            Err(format!(
                "`{}` on values of types {} and {}",
                op.symbol(),
                lt.ty.describe(),
                rt.ty.describe()
            ))
        };
        if lt.ty == Ty::Bool && rt.ty == Ty::Bool {
            return match spell::binary_bool(op, &x, &y) {
                Some(code) => Ok(Typed {
                    ty: Ty::Bool,
                    code: Code::Value(code),
                }),
                None => refuse(),
            };
        }
        let (Some(p), Some(q)) = (lt.ty.primitive(), rt.ty.primitive()) else {
            return refuse();
        };
        let shift = matches!(op, Shl | Shr);
        if matches!(op, And | Or)
            || (shift && (p.is_float() || q.is_float()))
            || (!shift && p != q)
            || (p.is_float() && matches!(op, BitAnd | BitOr | BitXor))
        {
            return refuse();
        }
        let ty = if op.is_comparison() {
            Ty::Bool
        } else {
            lt.ty.clone()
        };
        Ok(Typed {
            ty,
            code: Code::Value(spell::binary(op, p, &x, &y)),
        })
    }
}
