//! Lowering of the compound forms: method and function calls, struct literals, `if`/`else`.

use super::ir::{Block, Callee, Expr, Ty};
use super::lower::{literalish, Arr, Code, Lowerer, Typed, R};
use super::spell;
use crate::layout::Shape;

impl Lowerer<'_> {
    pub(super) fn method(&mut self, recv: &Expr, name: &str, args: &[Expr]) -> R<Typed> {
        let r = self.expr(recv, None)?;
        let Some(p) = r.ty.primitive() else {
            return Err(format!(
                "`.{name}(..)` on a value of type {}: only the methods of primitives are \
                 translated ({})",
                r.ty.describe(),
                spell::METHODS
            ));
        };
        let Some(sig) = spell::method_sig(p, name) else {
            return Err(format!(
                "`{}::{name}` is not translated; translated methods: {}",
                p.rust_name(),
                spell::METHODS
            ));
        };
        if sig.args.len() != args.len() {
            return Err(format!("`{name}` takes {} arguments", sig.args.len()));
        }
        let mut values = Vec::new();
        for (a, ty) in args.iter().zip(&sig.args) {
            let t = self.expr(a, Some(ty))?;
            values.push(self.value(&t)?);
        }
        Ok(Typed {
            code: Code::Value(spell::method(p, name, &self.value(&r)?, &values)),
            ty: sig.ret,
        })
    }

    pub(super) fn call(&mut self, callee: &Callee, args: &[Expr]) -> R<Typed> {
        let Some(sig) = self.helpers.get(&callee.name).cloned() else {
            return Err(format!("`{}` is not a translated function", callee.name));
        };
        if sig.params.len() != args.len() {
            return Err(format!(
                "`{}` takes {} arguments",
                callee.name,
                sig.params.len()
            ));
        }
        let mut values = Vec::new();
        for (a, ty) in args.iter().zip(&sig.params) {
            let t = self.expr(a, Some(ty))?;
            values.push(Self::init(&t.code, ty));
        }
        Ok(Typed {
            code: Code::Value(format!("{}({})", sig.cpp, values.join(", "))),
            ty: sig.ret,
        })
    }

    pub(super) fn structure(
        &mut self,
        path: &str,
        given: &[(String, Expr)],
        base: Option<&Expr>,
        expected: Option<&Ty>,
    ) -> R<Typed> {
        let Some(ty @ Ty::Elem(layout)) = expected else {
            return Err(format!(
                "cannot tell the type of the struct literal `{path} {{ .. }}` here: give it one \
                 (`let x: {path}<..> = ..`), or use it where the type is known"
            ));
        };
        let Shape::Struct(fields) = &layout.shape else {
            return Err(format!(
                "the struct literal `{path} {{ .. }}` is of type `{}`, whose layout does not \
                 describe its fields",
                layout.cuda_name
            ));
        };
        for (name, _) in given {
            if !fields.iter().any(|f| &f.name == name) {
                return Err(format!("`{}` has no field `{name}`", layout.cuda_name));
            }
        }
        let base = match base {
            Some(b) => {
                let t = self.expr(b, Some(ty))?;
                Some(self.value(&t)?)
            }
            None => None,
        };
        let mut items = Vec::new();
        for f in fields {
            let mut fty = Ty::Elem(f.ty.clone());
            for d in f.dims.iter().rev() {
                fty = Ty::array(fty, *d);
            }
            match given.iter().find(|(n, _)| n == &f.name) {
                Some((_, e)) => {
                    let t = self.expr(e, Some(&fty))?;
                    items.push(Self::init(&t.code, &fty));
                }
                None => match &base {
                    Some(_) => {
                        let place = format!("ms_base.{}", f.cuda_name);
                        let code = match fty {
                            Ty::Array(..) => Code::Array(Arr::Place(place)),
                            _ => Code::Value(place),
                        };
                        items.push(Self::init(&code, &fty));
                    }
                    None => return Err(format!("the field `{}` is missing", f.name)),
                },
            }
        }
        let value = format!("{}{{{}}}", layout.cuda_name, items.join(", "));
        let code = match base {
            Some(b) => format!(
                "([&]() -> {t} {{ const {t} ms_base = {b}; return {value}; }}())",
                t = layout.cuda_name
            ),
            None => value,
        };
        Ok(Typed {
            ty: ty.clone(),
            code: Code::Value(code),
        })
    }

    pub(super) fn conditional(
        &mut self,
        c: &Expr,
        t: &Block,
        f: &Block,
        expected: Option<&Ty>,
    ) -> R<Typed> {
        let ct = self.expr(c, Some(&Ty::Bool))?;
        if ct.ty != Ty::Bool {
            return Err(format!("an `if` condition of type {}", ct.ty.describe()));
        }
        let cond = self.value(&ct)?;
        let (then, other) = if literalish(&t.tail) && !literalish(&f.tail) {
            let other = self.branch(f, expected)?;
            (self.branch(t, Some(&other.ty))?, other)
        } else {
            let then = self.branch(t, expected)?;
            let ty = then.ty.clone();
            (then, self.branch(f, Some(&ty))?)
        };
        if then.ty != other.ty {
            return Err(format!(
                "`if` branches of types {} and {}",
                then.ty.describe(),
                other.ty.describe()
            ));
        }
        let code = match (&then.code, &other.code) {
            (Code::Value(x), Code::Value(y)) => Code::Value(format!("(({cond}) ? ({x}) : ({y}))")),
            (x, y) => Code::Array(Arr::Cond(cond, Box::new(x.clone()), Box::new(y.clone()))),
        };
        Ok(Typed { ty: then.ty, code })
    }

    fn branch(&mut self, b: &Block, expected: Option<&Ty>) -> R<Typed> {
        self.scopes.push(Vec::new());
        let r = self.nested_block(b, expected);
        self.scopes.pop();
        r
    }
}
