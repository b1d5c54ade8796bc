//! The subset check and the lowering of a function body into code that builds
//! `monoscan::translate::ir` at run time. Anything outside the subset is a `syn::Error` at its
//! span.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use std::collections::HashSet;
use syn::ext::IdentExt;
use syn::{BinOp, Expr, Lit, Member, Pat, Stmt, Type, UnOp};

/// The methods the runtime translates (on primitives); any other method is refused here.
pub const METHODS: &[&str] = &[
    "min",
    "max",
    "clamp",
    "abs",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "wrapping_neg",
    "saturating_add",
    "saturating_sub",
    "pow",
    "wrapping_pow",
    "abs_diff",
    "signum",
    "count_ones",
    "leading_zeros",
    "trailing_zeros",
    "is_positive",
    "is_negative",
    "sqrt",
    "mul_add",
    "floor",
    "ceil",
    "trunc",
    "round",
    "copysign",
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_sign_positive",
    "is_sign_negative",
];

fn ir() -> TokenStream {
    quote!(::monoscan::translate::ir)
}

fn refuse<T>(at: impl ToTokens, message: impl std::fmt::Display) -> syn::Result<T> {
    Err(syn::Error::new_spanned(
        at,
        format!("#[monoscan::operator]: {message}"),
    ))
}

/// The lowering of one function.
pub struct Lower<'a> {
    /// Names bound by parameters and `let`s, innermost scope last.
    scopes: Vec<HashSet<String>>,
    /// The operator's own helper functions (called as `Self::name(..)` or `self.name(..)`).
    helpers: &'a HashSet<String>,
}

impl<'a> Lower<'a> {
    /// A lowering with `params` in scope.
    pub fn new(params: &[String], helpers: &'a HashSet<String>) -> Self {
        Lower {
            scopes: vec![params.iter().cloned().collect()],
            helpers,
        }
    }

    fn is_local(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(name))
    }

    /// Whether `e` uses no parameter or `let`: Rust can then evaluate it when the operator is
    /// described, and the device gets its value.
    fn closed(&self, e: &Expr) -> bool {
        struct Finder<'b, 'c> {
            lower: &'b Lower<'c>,
            found: bool,
        }
        impl Finder<'_, '_> {
            fn tokens(&mut self, t: TokenStream) {
                let mut prev_dot = false;
                for tt in t {
                    match tt {
                        proc_macro2::TokenTree::Ident(i) => {
                            // A field named like a local (`x.a` with a local `a`) is no use.
                            if !prev_dot && self.lower.is_local(&i.unraw().to_string()) {
                                self.found = true;
                            }
                            prev_dot = false;
                        }
                        proc_macro2::TokenTree::Group(g) => {
                            self.tokens(g.stream());
                            prev_dot = false;
                        }
                        proc_macro2::TokenTree::Punct(p) => prev_dot = p.as_char() == '.',
                        proc_macro2::TokenTree::Literal(_) => prev_dot = false,
                    }
                }
            }
        }
        let mut f = Finder {
            lower: self,
            found: false,
        };
        f.tokens(e.to_token_stream());
        !f.found
    }

    fn constant(&self, e: &Expr) -> TokenStream {
        let ir = ir();
        let source = e.to_token_stream().to_string();
        quote!(#ir::Expr::constant(&(#e), #source))
    }

    /// The IR of a block.
    pub fn block(&mut self, b: &syn::Block) -> syn::Result<TokenStream> {
        let ir = ir();
        self.scopes.push(HashSet::new());
        let mut stmts = Vec::new();
        let mut tail = None;
        for (k, s) in b.stmts.iter().enumerate() {
            let last = k + 1 == b.stmts.len();
            match s {
                Stmt::Local(local) => stmts.push(self.local(local)?),
                Stmt::Expr(e, None) if last => tail = Some(self.expr(e)?),
                Stmt::Expr(e, Some(_)) if last => {
                    return refuse(
                        e,
                        "a block must end in a value (no trailing `;`, no `return`)",
                    )
                }
                Stmt::Expr(e, _) => {
                    return refuse(
                        e,
                        "a statement without `let` has no effect in the subset: only `let`s \
                         and a final value",
                    )
                }
                Stmt::Item(i) => return refuse(i, "items inside a translated function"),
                Stmt::Macro(m) => return refuse(m, "macros have no translation"),
            }
        }
        self.scopes.pop();
        let Some(tail) = tail else {
            return refuse(
                b,
                "a block must end in a value (no trailing `;`, no `return`)",
            );
        };
        Ok(quote!(#ir::Block::new(::std::vec![#(#stmts),*], #tail)))
    }

    fn local(&mut self, local: &syn::Local) -> syn::Result<TokenStream> {
        let ir = ir();
        let (pat, ty) = match &local.pat {
            Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
            p => (p, None),
        };
        let Pat::Ident(id) = pat else {
            return refuse(
                pat,
                "only `let name = ..;` and `let name: T = ..;` bindings",
            );
        };
        if id.by_ref.is_some() || id.mutability.is_some() || id.subpat.is_some() {
            return refuse(pat, "bindings are immutable values: no `mut`, `ref` or `@`");
        }
        let Some(init) = &local.init else {
            return refuse(local, "a `let` needs a value");
        };
        if let Some((e, _)) = &init.diverge {
            return refuse(e, "`let ... else` has no translation");
        }
        if ty.is_none() && literal_only(&init.expr) {
            return refuse(
                &init.expr,
                "annotate the type of a `let` bound to a literal (`let x: i64 = 0;`): its type \
                 comes from later uses, which the translation does not follow",
            );
        }
        let value = self.expr(&init.expr)?;
        let name = id.ident.unraw().to_string();
        self.scopes
            .last_mut()
            .expect("a scope is open")
            .insert(name.clone());
        let ty = match ty {
            Some(t) => {
                let t = ty_tokens(t)?;
                quote!(::core::option::Option::Some(#t))
            }
            None => quote!(::core::option::Option::None),
        };
        Ok(quote!(#ir::Stmt::new(#name, #ty, #value)))
    }

    fn branch(&mut self, e: &Expr) -> syn::Result<TokenStream> {
        let ir = ir();
        match e {
            Expr::Block(b) if b.label.is_none() => self.block(&b.block),
            Expr::If(_) => {
                let value = self.expr(e)?;
                Ok(quote!(#ir::Block::new(::std::vec![], #value)))
            }
            other => refuse(other, "an `else` must be a block or another `if`"),
        }
    }

    /// The IR of an expression.
    pub fn expr(&mut self, e: &Expr) -> syn::Result<TokenStream> {
        let ir = ir();
        match e {
            Expr::Paren(p) => return self.expr(&p.expr),
            Expr::Group(g) => return self.expr(&g.expr),
            Expr::Lit(l) => return literal(&l.lit),
            Expr::Path(_)
            | Expr::Field(_)
            | Expr::Index(_)
            | Expr::MethodCall(_)
            | Expr::Call(_)
                if self.closed(e) && !uses_self_helper(e, self.helpers) =>
            {
                if let Expr::Path(p) = e {
                    if p.path.is_ident("self") {
                        return refuse(e, "`self` is no value of the subset; use its fields");
                    }
                }
                return Ok(self.constant(e));
            }
            _ => {}
        }
        Ok(match e {
            Expr::Path(p) => {
                let name = p
                    .path
                    .get_ident()
                    .expect("a path that is not closed names a local")
                    .unraw()
                    .to_string();
                quote!(#ir::Expr::local(#name))
            }
            Expr::Reference(r) => {
                if r.mutability.is_some() {
                    return refuse(e, "`&mut` has no translation");
                }
                self.expr(&r.expr)?
            }
            Expr::Unary(u) => {
                let x = self.expr(&u.expr)?;
                match u.op {
                    UnOp::Deref(_) => x,
                    UnOp::Not(_) => quote!(#ir::Expr::unary(#ir::UnOp::Not, #x)),
                    UnOp::Neg(_) => quote!(#ir::Expr::unary(#ir::UnOp::Neg, #x)),
                    _ => return refuse(e, "this unary operator has no translation"),
                }
            }
            Expr::Binary(b) => {
                let op = binop(&b.op).ok_or_else(|| {
                    syn::Error::new_spanned(
                        b.op,
                        "#[monoscan::operator]: assignments have no translation (values are \
                         immutable; bind a new `let`)",
                    )
                })?;
                let (l, r) = (self.expr(&b.left)?, self.expr(&b.right)?);
                quote!(#ir::Expr::binary(#ir::BinOp::#op, #l, #r))
            }
            Expr::Field(f) => {
                let base = self.expr(&f.base)?;
                let name = match &f.member {
                    Member::Named(i) => i.unraw().to_string(),
                    Member::Unnamed(i) => i.index.to_string(),
                };
                quote!(#base.field(#name))
            }
            Expr::Index(i) => {
                let (base, index) = (self.expr(&i.expr)?, self.expr(&i.index)?);
                quote!(#base.index(#index))
            }
            Expr::MethodCall(m) => {
                if m.turbofish.is_some() {
                    return refuse(e, "turbofish (`::<..>`) on a method has no translation");
                }
                let name = m.method.unraw().to_string();
                let own = is_self(&m.receiver) && self.helpers.contains(&name);
                if !own && !METHODS.contains(&name.as_str()) {
                    return refuse(
                        &m.method,
                        format!(
                            "the method `{name}` has no translation; translated methods: {}; \
                             or call a function of the operator (`Self::f(..)`) or a \
                             #[monoscan::device] function",
                            METHODS.join(", ")
                        ),
                    );
                }
                let args = m
                    .args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<syn::Result<Vec<_>>>()?;
                if own {
                    quote!(#ir::Expr::call(#name, ::std::vec![#(#args),*]))
                } else {
                    let recv = self.expr(&m.receiver)?;
                    quote!(#recv.method(#name, ::std::vec![#(#args),*]))
                }
            }
            Expr::Call(c) => self.call(c)?,
            Expr::Cast(c) => {
                let x = self.expr(&c.expr)?;
                let t = ty_tokens(&c.ty)?;
                quote!(#x.cast(#t))
            }
            Expr::Struct(s) => {
                if s.qself.is_some() {
                    return refuse(e, "a qualified struct path has no translation");
                }
                let path = s.path.to_token_stream().to_string().replace(' ', "");
                let mut fields = Vec::new();
                for f in &s.fields {
                    let name = match &f.member {
                        Member::Named(i) => i.unraw().to_string(),
                        Member::Unnamed(i) => i.index.to_string(),
                    };
                    let v = self.expr(&f.expr)?;
                    fields.push(quote!((#name, #v)));
                }
                let base = match &s.rest {
                    Some(r) => {
                        let r = self.expr(r)?;
                        quote!(::core::option::Option::Some(#r))
                    }
                    None if s.dot2_token.is_some() => {
                        return refuse(e, "`..` without a base has no translation")
                    }
                    None => quote!(::core::option::Option::None),
                };
                quote!(#ir::Expr::structure(#path, ::std::vec![#(#fields),*], #base))
            }
            Expr::Array(a) => {
                let items = a
                    .elems
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<syn::Result<Vec<_>>>()?;
                quote!(#ir::Expr::Array(::std::vec![#(#items),*]))
            }
            Expr::Repeat(r) => {
                let x = self.expr(&r.expr)?;
                let len = &r.len;
                quote!(#ir::Expr::repeat(#x, (#len) as usize))
            }
            Expr::If(i) => {
                if let Expr::Let(_) = &*i.cond {
                    return refuse(&i.cond, "`if let` has no translation");
                }
                let c = self.expr(&i.cond)?;
                let t = self.block(&i.then_branch)?;
                let Some((_, other)) = &i.else_branch else {
                    return refuse(e, "an `if` needs an `else`: it must have a value");
                };
                let f = self.branch(other)?;
                quote!(#ir::Expr::cond(#c, #t, #f))
            }
            Expr::Block(b) if b.label.is_none() => {
                let b = self.block(&b.block)?;
                quote!(#ir::Expr::block(#b))
            }
            other => return refuse(other, format!("{} has no translation", describe(other))),
        })
    }

    fn call(&mut self, c: &syn::ExprCall) -> syn::Result<TokenStream> {
        let ir = ir();
        let Expr::Path(p) = &*c.func else {
            return refuse(&c.func, "only calls of named functions are translated");
        };
        let args = c
            .args
            .iter()
            .map(|a| self.expr(a))
            .collect::<syn::Result<Vec<_>>>()?;
        let segments: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        let last = p.path.segments.last().expect("a path has a segment");
        let name = last.ident.unraw().to_string();
        if segments.len() == 2 && segments[0] == "Self" && self.helpers.contains(&name) {
            return Ok(quote!(#ir::Expr::call(#name, ::std::vec![#(#args),*])));
        }
        if segments.len() == 2 && segments[0] == "Self" && !METHODS.contains(&name.as_str()) {
            return refuse(
                &c.func,
                format!(
                    "`Self::{name}` is not a function of this operator: functions of the \
                     operator are translated in the inherent form (`#[monoscan::operator] impl \
                     X {{ fn identity .. fn combine .. fn {name} .. }}`); free functions with \
                     #[monoscan::device]"
                ),
            );
        }
        if (segments.len() >= 2 || p.qself.is_some()) && METHODS.contains(&name.as_str()) {
            // `i64::max(a, b)`, `<T as Float>::min(x, y)`: the method on the first argument.
            let mut args = args.into_iter();
            let Some(recv) = args.next() else {
                return refuse(c, format!("`{name}` needs a receiver"));
            };
            return Ok(quote!(#recv.method(#name, ::std::vec![#(#args),*])));
        }
        if p.qself.is_some() || !last.arguments.is_empty() {
            return refuse(
                &c.func,
                "generic arguments on a called function have no translation",
            );
        }
        // A #[monoscan::device] function: its IR comes from the function it writes beside it.
        let mut builder = p.path.clone();
        let seg = builder.segments.last_mut().expect("a path has a segment");
        seg.ident = format_ident!("__monoscan_device_{}", seg.ident.unraw());
        Ok(quote!(#ir::Expr::call_device(#name, #builder, ::std::vec![#(#args),*])))
    }
}

fn is_self(e: &Expr) -> bool {
    match e {
        Expr::Path(p) => p.path.is_ident("self"),
        Expr::Paren(p) => is_self(&p.expr),
        Expr::Reference(r) => is_self(&r.expr),
        _ => false,
    }
}

/// Whether `e` calls one of the operator's own functions (which are translated, not
/// evaluated, even with constant arguments).
fn uses_self_helper(e: &Expr, helpers: &HashSet<String>) -> bool {
    match e {
        Expr::MethodCall(m) => {
            (is_self(&m.receiver) && helpers.contains(&m.method.unraw().to_string()))
                || m.args.iter().any(|a| uses_self_helper(a, helpers))
        }
        Expr::Call(c) => {
            let own = matches!(&*c.func, Expr::Path(p)
                if p.path.segments.len() == 2
                    && p.path.segments[0].ident == "Self"
                    && helpers.contains(&p.path.segments[1].ident.unraw().to_string()));
            own || c.args.iter().any(|a| uses_self_helper(a, helpers))
        }
        Expr::Field(f) => uses_self_helper(&f.base, helpers),
        Expr::Index(i) => uses_self_helper(&i.expr, helpers) || uses_self_helper(&i.index, helpers),
        Expr::Paren(p) => uses_self_helper(&p.expr, helpers),
        _ => false,
    }
}

/// Whether `e` is made of unsuffixed literals only (its type comes from its context).
fn literal_only(e: &Expr) -> bool {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.suffix().is_empty(),
            Lit::Float(f) => f.suffix().is_empty(),
            _ => false,
        },
        Expr::Paren(p) => literal_only(&p.expr),
        Expr::Unary(u) => literal_only(&u.expr),
        Expr::Binary(b) => literal_only(&b.left) && literal_only(&b.right),
        _ => false,
    }
}

fn literal(l: &Lit) -> syn::Result<TokenStream> {
    let ir = ir();
    Ok(match l {
        Lit::Int(i) if i.suffix().is_empty() => {
            let v: u128 = i.base10_parse()?;
            quote!(#ir::Expr::int(#v))
        }
        Lit::Float(f) if f.suffix().is_empty() => {
            // Rust reads the literal at the width its context gives it; both readings, exactly
            // (as bits, so that an f32 reading out of range is no literal the compiler rejects).
            let digits = f.base10_digits();
            let (Ok(v32), Ok(v64)) = (digits.parse::<f32>(), digits.parse::<f64>()) else {
                return refuse(f, "a float literal that does not parse");
            };
            let (b32, b64) = (v32.to_bits(), v64.to_bits());
            quote!(#ir::Expr::float(
                ::core::primitive::f32::from_bits(#b32),
                ::core::primitive::f64::from_bits(#b64),
            ))
        }
        Lit::Int(_) | Lit::Float(_) => {
            let source = l.to_token_stream().to_string();
            quote!(#ir::Expr::constant(&(#l), #source))
        }
        Lit::Bool(b) => {
            let v = b.value;
            quote!(#ir::Expr::bool(#v))
        }
        other => return refuse(other, "only number and `bool` literals are translated"),
    })
}

fn binop(op: &BinOp) -> Option<proc_macro2::Ident> {
    let name = match op {
        BinOp::Add(_) => "Add",
        BinOp::Sub(_) => "Sub",
        BinOp::Mul(_) => "Mul",
        BinOp::Div(_) => "Div",
        BinOp::Rem(_) => "Rem",
        BinOp::And(_) => "And",
        BinOp::Or(_) => "Or",
        BinOp::BitXor(_) => "BitXor",
        BinOp::BitAnd(_) => "BitAnd",
        BinOp::BitOr(_) => "BitOr",
        BinOp::Shl(_) => "Shl",
        BinOp::Shr(_) => "Shr",
        BinOp::Eq(_) => "Eq",
        BinOp::Lt(_) => "Lt",
        BinOp::Le(_) => "Le",
        BinOp::Ne(_) => "Ne",
        BinOp::Ge(_) => "Ge",
        BinOp::Gt(_) => "Gt",
        _ => return None,
    };
    Some(format_ident!("{name}"))
}

/// The IR type of a written Rust type (references taken off).
pub fn ty_tokens(t: &Type) -> syn::Result<TokenStream> {
    let ir = ir();
    Ok(match t {
        Type::Reference(r) => {
            if r.mutability.is_some() {
                return refuse(t, "`&mut` parameters have no translation");
            }
            ty_tokens(&r.elem)?
        }
        Type::Paren(p) => ty_tokens(&p.elem)?,
        Type::Group(g) => ty_tokens(&g.elem)?,
        Type::Array(a) => {
            let inner = ty_tokens(&a.elem)?;
            let len = &a.len;
            quote!(#ir::Ty::array(#inner, (#len) as usize))
        }
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("bool") => quote!(#ir::Ty::Bool),
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("usize") => quote!(#ir::Ty::usize()),
        Type::Path(_) => quote!(#ir::Ty::of::<#t>()),
        other => {
            return refuse(
                other,
                "this type has no translation: use elements, arrays of them, `bool` or `usize`",
            )
        }
    })
}

fn describe(e: &Expr) -> &'static str {
    match e {
        Expr::Assign(_) => "an assignment",
        Expr::Async(_) | Expr::Await(_) => "async code",
        Expr::Break(_) | Expr::Continue(_) | Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {
            "a loop"
        }
        Expr::Closure(_) => "a closure",
        Expr::Macro(_) => "a macro",
        Expr::Match(_) => "`match` (use `if`/`else`)",
        Expr::Range(_) => "a range",
        Expr::Return(_) => "`return` (end the function with its value)",
        Expr::Try(_) => "`?`",
        Expr::Tuple(_) => "a tuple (use a struct element)",
        Expr::Unsafe(_) => "an `unsafe` block",
        Expr::Let(_) => "`let` in an expression",
        _ => "this expression",
    }
}
