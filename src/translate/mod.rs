//! The operator translator behind `#[monoscan::operator]`: a restricted Rust `combine` (and
//! the functions it calls) in, the [`CudaOp`] snippet out, with Rust's semantics on the device.
//!
//! The attribute macro checks the syntax (anything outside the subset is a compile error at
//! its span) and writes a `cuda()` that builds the function's [IR](ir) and calls [`operator`].
//! Types are looked up here, at run time, through each element's [`crate::layout::Layout`], so
//! a generic operator translates per instance; the identity is not translated at all but
//! evaluated by Rust and baked in as a literal ([`crate::Element::cuda_literal`]), so it is
//! the host's identity bit for bit.
//!
//! What cannot be translated for an instance (a field access on a type without a described
//! layout, say) makes the operator [`CudaOp::invalid`], which rendering reports as
//! [`crate::Error::InvalidArgument`] with the reason.

mod compound;
pub mod ir;
mod lower;
mod spell;

pub use spell::METHODS;

use crate::element::Element;
use crate::monoid::CudaOp;
use ir::{Block, Expr, Function, Ty};
use lower::{declare, Lowerer, Signature};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// The C++ helpers for Rust's semantics (`templates/lib/rust_ops.cuh`).
/// The helper library every translated operator's prelude starts with (Rust's integer and float
/// semantics as device functions). The cost estimate ([`crate::tuning::cost`]) weighs the calls
/// of it that a combine makes, not the library itself.
pub(crate) const RUST_OPS: &str = include_str!("../../templates/lib/rust_ops.cuh");

/// Stands for the helpers' namespace until its name (a hash of the helpers) is known.
const NAMESPACE: &str = "MS_FN_NAMESPACE";

/// The [`CudaOp`] of an operator over `E` named `name`, with `identity` baked in and
/// `combine` (calling `helpers` and `#[monoscan::device]` functions) translated; an
/// [invalid](CudaOp::invalid) one, with the reason, when the translation fails.
pub fn operator<E: Element>(
    name: &str,
    identity: &E,
    combine: Function,
    helpers: Vec<Function>,
) -> CudaOp {
    match translate::<E>(identity, &combine, helpers) {
        Ok((identity, body, prelude)) => CudaOp::new::<E>(name)
            .prelude(prelude)
            .identity(identity)
            .combine_body(body),
        Err(why) => {
            let mut op = CudaOp::new::<E>(name);
            op.invalid = Some(format!(
                "#[monoscan::operator] cannot translate `{name}`: {why}"
            ));
            op
        }
    }
}

/// The identity literal, the combine body and the prelude.
fn translate<E: Element>(
    identity: &E,
    combine: &Function,
    helpers: Vec<Function>,
) -> Result<(String, String, String), String> {
    let identity = identity.cuda_literal().ok_or_else(|| {
        format!(
            "the element type `{}` cannot spell its identity as a C++ literal (derive Element, \
             or implement `Element::cuda_literal`)",
            E::cuda_name()
        )
    })?;
    let elem = Ty::of::<E>();
    if combine.params.len() != 2
        || combine.params.iter().any(|(_, t)| *t != elem)
        || combine.ret != elem
    {
        return Err(format!(
            "`combine` must take two `{}` and return one",
            E::cuda_name()
        ));
    }
    let helpers = all_helpers(combine, helpers)?;
    let mut signatures = HashMap::new();
    for f in &helpers {
        signatures.insert(
            f.name.clone(),
            Signature {
                params: f.params.iter().map(|(_, t)| t.clone()).collect(),
                ret: f.ret.clone(),
                cpp: format!("{NAMESPACE}::f_{}", f.name),
            },
        );
    }
    let mut declarations = Vec::new();
    let mut definitions = Vec::new();
    for f in &helpers {
        let params: Vec<String> = f.params.iter().map(|(n, _)| format!("l_{n}")).collect();
        let signature = format!(
            "static __device__ inline {} f_{}({})",
            declare(&f.ret, "").trim_end(),
            f.name,
            f.params
                .iter()
                .zip(&params)
                .map(|((_, t), p)| match t {
                    Ty::Array(..) => format!("const {}", declare(t, &format!("(&{p})"))),
                    _ => format!("const {}", declare(t, p)),
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        let body = Lowerer::new(&signatures)
            .function(f, &params)
            .map_err(|e| format!("in `{}`: {e}", f.name))?;
        declarations.push(format!("{signature};"));
        definitions.push(format!("{signature} {{\n{}\n}}", indent(&body)));
    }
    let body = Lowerer::new(&signatures)
        .function(combine, &["a".to_string(), "b".to_string()])
        .map_err(|e| format!("in `combine`: {e}"))?;
    let mut prelude = RUST_OPS.trim_end().to_string();
    let mut body = body;
    if !helpers.is_empty() {
        let text = format!(
            "namespace {NAMESPACE} {{\n{}\n{}\n}}",
            declarations.join("\n"),
            definitions.join("\n")
        );
        let digest = Sha256::digest(text.as_bytes());
        let hash: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
        let namespace = format!("ms_fn_{hash}");
        prelude.push('\n');
        prelude.push_str(&text.replace(NAMESPACE, &namespace));
        body = body.replace(NAMESPACE, &namespace);
    }
    Ok((identity, body, prelude))
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The operator's own helpers and every `#[monoscan::device]` function reachable from them
/// or from `combine`, each once (by name).
fn all_helpers(combine: &Function, own: Vec<Function>) -> Result<Vec<Function>, String> {
    let mut out: Vec<Function> = own;
    let mut k = 0;
    let mut pending = Vec::new();
    calls_in_block(&combine.body, &mut pending);
    loop {
        while let Some((name, build)) = pending.pop() {
            if out.iter().any(|f| f.name == name) {
                continue;
            }
            let f = build();
            if f.name != name {
                return Err(format!("`{name}` was built as `{}`", f.name));
            }
            out.push(f);
        }
        if k >= out.len() {
            break;
        }
        let f = out[k].clone();
        calls_in_block(&f.body, &mut pending);
        k += 1;
    }
    Ok(out)
}

/// `#[monoscan::device]` functions called, by name, with their builders.
type Callees = Vec<(String, fn() -> Function)>;

fn calls_in_block(b: &Block, out: &mut Callees) {
    for s in &b.stmts {
        calls(&s.init, out);
    }
    calls(&b.tail, out);
}

fn calls(e: &Expr, out: &mut Callees) {
    match e {
        Expr::Local(_) | Expr::Lit(_) | Expr::Const(_) => {}
        Expr::Field(x, _) | Expr::Unary(_, x) | Expr::Cast(x, _) | Expr::Repeat(x, _) => {
            calls(x, out)
        }
        Expr::Index(x, y) | Expr::Binary(_, x, y) => {
            calls(x, out);
            calls(y, out);
        }
        Expr::Method(x, _, args) => {
            calls(x, out);
            args.iter().for_each(|a| calls(a, out));
        }
        Expr::Call(callee, args) => {
            if let Some(build) = callee.build {
                out.push((callee.name.clone(), build));
            }
            args.iter().for_each(|a| calls(a, out));
        }
        Expr::Struct(_, fields, base) => {
            fields.iter().for_each(|(_, x)| calls(x, out));
            if let Some(b) = base {
                calls(b, out);
            }
        }
        Expr::Array(items) => items.iter().for_each(|a| calls(a, out)),
        Expr::If(c, t, f) => {
            calls(c, out);
            calls_in_block(t, out);
            calls_in_block(f, out);
        }
        Expr::Block(b) => calls_in_block(b, out),
    }
}

#[cfg(test)]
mod tests;
