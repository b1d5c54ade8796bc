//! The operator as C++: every nested operator's prelude, then one struct per operator with
//! its parameters, `identity()` and `combine(a, b)`, nested operators as nested structs.

use super::engine;
use crate::error::{Error, Result};
use crate::monoid::CudaOp;
use serde::Serialize;

/// The name of the outermost operator struct in generated sources.
pub const OP_STRUCT: &str = "ms_user_op";

#[derive(Serialize)]
struct ParamCtx<'a> {
    name: &'a str,
    ctype: &'a str,
    value: &'a str,
}

#[derive(Serialize)]
struct StructCtx<'a> {
    name: &'a str,
    elem: &'a str,
    params: Vec<ParamCtx<'a>>,
    identity: &'a str,
    combine: String,
    nested: Vec<String>,
}

/// Checks what must hold before any C++ is written: nothing empty, no NUL bytes (NVRTC takes C
/// strings), identifiers that are identifiers, and no control characters (line breaks above
/// all) in the names and types that generated comments quote, where a line break would end the
/// comment and turn the rest of the name into code.
pub fn validate(op: &CudaOp) -> Result<()> {
    let what = |field: &str| format!("operator {:?}: {field}", op.name);
    if op.name.is_empty() {
        return Err(Error::invalid("an operator needs a name"));
    }
    if let Some(why) = &op.invalid {
        return Err(Error::invalid(what(&format!(
            "it has no device form: {why}"
        ))));
    }
    if op.name.chars().any(char::is_control) {
        return Err(Error::invalid(what(
            "the name contains a control character (a line break, a NUL, ...)",
        )));
    }
    if op.elem.chars().any(char::is_control) {
        return Err(Error::invalid(what(
            "the CUDA element type contains a control character",
        )));
    }
    if op.identity.trim().is_empty() {
        return Err(Error::invalid(what(
            "the CUDA identity expression is empty",
        )));
    }
    if op.combine.trim().is_empty() {
        return Err(Error::invalid(what("the CUDA combine body is empty")));
    }
    if op.elem.trim().is_empty() {
        return Err(Error::invalid(what("the CUDA element type is empty")));
    }
    let texts = [&op.name, &op.elem, &op.prelude, &op.identity, &op.combine];
    if texts.iter().any(|t| t.contains('\0')) {
        return Err(Error::invalid(what("a CUDA snippet contains a NUL byte")));
    }
    for p in &op.params {
        if !is_identifier(&p.name) {
            return Err(Error::invalid(what(&format!(
                "parameter name `{}` is not a C++ identifier",
                p.name
            ))));
        }
        if p.ctype.contains('\0') || p.value.contains('\0') {
            return Err(Error::invalid(what("a parameter contains a NUL byte")));
        }
    }
    if let Some(map) = &op.input {
        if map.name.is_empty() {
            return Err(Error::invalid(what("the input map needs a name")));
        }
        if map.name.chars().any(char::is_control) || map.in_type.chars().any(char::is_control) {
            return Err(Error::invalid(what(&format!(
                "the input map {:?} has a control character (a line break, a NUL, ...) in its \
                 name or input type",
                map.name
            ))));
        }
        if map.body.trim().is_empty() || map.in_type.trim().is_empty() {
            return Err(Error::invalid(what(
                "the input map's body or type is empty",
            )));
        }
        if [&map.body, &map.prelude, &map.in_type]
            .iter()
            .any(|t| t.contains('\0'))
        {
            return Err(Error::invalid(what("the input map contains a NUL byte")));
        }
    }
    for (alias, inner) in &op.nested {
        if !is_identifier(alias) {
            return Err(Error::invalid(what(&format!(
                "nested alias `{alias}` is not a C++ identifier"
            ))));
        }
        validate(inner)?;
    }
    Ok(())
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// All preludes (nested operators first, in declaration order), each once.
fn collect_preludes(op: &CudaOp, out: &mut Vec<String>) {
    for (_, inner) in &op.nested {
        collect_preludes(inner, out);
    }
    if !op.prelude.trim().is_empty() && !out.contains(&op.prelude) {
        out.push(op.prelude.clone());
    }
}

/// Renders `op` as `struct name`. Nested operators become nested structs with unique names
/// (`ms_nested_<k>`, numbered in rendering order) plus a `typedef` to their alias, since C++
/// forbids a member named like its enclosing class (`inner` inside `inner`).
fn render_struct(op: &CudaOp, name: &str, counter: &mut usize) -> Result<String> {
    let mut nested = Vec::new();
    for (alias, inner) in &op.nested {
        *counter += 1;
        let unique = format!("ms_nested_{counter}");
        let code = render_struct(inner, &unique, counter)?;
        nested.push(format!("{code}typedef {unique} {alias};"));
    }
    let combine = op
        .combine
        .lines()
        .map(|l| format!("        {l}"))
        .collect::<Vec<_>>()
        .join("\n");
    let ctx = StructCtx {
        name,
        elem: &op.elem,
        params: op
            .params
            .iter()
            .map(|p| ParamCtx {
                name: &p.name,
                ctype: &p.ctype,
                value: &p.value,
            })
            .collect(),
        identity: &op.identity,
        combine,
        nested,
    };
    engine::render("op_struct.cu", &ctx)
}

/// The operator's C++: preludes (marked as snippets), then the operator struct.
pub fn render(op: &CudaOp) -> Result<String> {
    let mut preludes = Vec::new();
    collect_preludes(op, &mut preludes);
    if let Some(map) = &op.input {
        if !map.prelude.trim().is_empty() && !preludes.contains(&map.prelude) {
            preludes.push(map.prelude.clone());
        }
    }
    let mut code = String::new();
    for p in preludes {
        code.push_str("// monoscan:snippet-begin prelude\n");
        code.push_str(p.trim_end());
        code.push_str("\n// monoscan:snippet-end\n");
    }
    code.push_str(&render_struct(op, OP_STRUCT, &mut 0)?);
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monoid::Monoid;
    use crate::ops::{Segmented, Sum};

    #[test]
    fn nested_operators_become_nested_structs() {
        let op = Segmented::new(Segmented::new(Sum::<i32>::new())).cuda();
        let code = render(&op).unwrap();
        assert_eq!(code.matches("typedef ms_nested_").count(), 2);
        assert!(code.contains("typedef ms_nested_1 inner;"));
        assert!(code.contains("typedef ms_nested_2 inner;"));
        assert!(code.contains("struct ms_user_op {"));
        // The flagged structs are declared once each, innermost first.
        let a = code.find("struct monoscan_flagged_int ").unwrap();
        let b = code
            .find("struct monoscan_flagged_monoscan_flagged_int ")
            .unwrap();
        assert!(a < b);
    }

    #[test]
    fn rejects_bad_identifiers_and_empty_snippets() {
        let ok = Sum::<i32>::new().cuda();
        assert!(validate(&ok).is_ok());
        assert!(validate(&ok.clone().param("2x", "int", "1")).is_err());
        assert!(validate(&ok.clone().combine_body("  ")).is_err());
        assert!(validate(&ok.identity("a\0")).is_err());
    }
}
