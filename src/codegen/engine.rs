//! The template engine (minijinja) with the embedded templates.
//!
//! The templates use Jinja's `if`, `for`, `include` and `{{ value }}` substitution only, and no
//! escaping (this is C++, not HTML; minijinja escapes only `.html`/`.xml` names). An undefined
//! variable is an error, never an empty string, so a context that misses a field fails loudly.

use crate::error::{Error, Result};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Serde, Value};
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;
use std::sync::OnceLock;

/// Every template, by the name families and includes use: the prelude, the operator struct,
/// the shared pieces (`lib/*.cuh`) and one template per kernel family.
const TEMPLATES: [(&str, &str); 34] = [
    ("prelude.cu", include_str!("../../templates/prelude.cu")),
    ("op_struct.cu", include_str!("../../templates/op_struct.cu")),
    (
        "lib/textbook.cuh",
        include_str!("../../templates/lib/textbook.cuh"),
    ),
    (
        "lib/add_carry.cuh",
        include_str!("../../templates/lib/add_carry.cuh"),
    ),
    ("lib/tile.cuh", include_str!("../../templates/lib/tile.cuh")),
    (
        "lib/tile_scan.cuh",
        include_str!("../../templates/lib/tile_scan.cuh"),
    ),
    (
        "lib/lookback.cuh",
        include_str!("../../templates/lib/lookback.cuh"),
    ),
    (
        "lib/staging.cuh",
        include_str!("../../templates/lib/staging.cuh"),
    ),
    ("lib/tma.cuh", include_str!("../../templates/lib/tma.cuh")),
    (
        "lib/run_swizzled.cuh",
        include_str!("../../templates/lib/run_swizzled.cuh"),
    ),
    (
        "lib/run_linear.cuh",
        include_str!("../../templates/lib/run_linear.cuh"),
    ),
    (
        "lib/run_chains.cuh",
        include_str!("../../templates/lib/run_chains.cuh"),
    ),
    (
        "tree_reduce.cu",
        include_str!("../../templates/tree_reduce.cu"),
    ),
    (
        "kogge_stone.cu",
        include_str!("../../templates/kogge_stone.cu"),
    ),
    (
        "brent_kung.cu",
        include_str!("../../templates/brent_kung.cu"),
    ),
    (
        "lib/fold_last.cuh",
        include_str!("../../templates/lib/fold_last.cuh"),
    ),
    (
        "tiled_reduce.cu",
        include_str!("../../templates/tiled_reduce.cu"),
    ),
    (
        "staged_reduce.cu",
        include_str!("../../templates/staged_reduce.cu"),
    ),
    (
        "lib/tensor_copy.cuh",
        include_str!("../../templates/lib/tensor_copy.cuh"),
    ),
    (
        "lib/share_fold.cuh",
        include_str!("../../templates/lib/share_fold.cuh"),
    ),
    (
        "lib/offsets.cuh",
        include_str!("../../templates/lib/offsets.cuh"),
    ),
    (
        "lib/shares.cuh",
        include_str!("../../templates/lib/shares.cuh"),
    ),
    (
        "share_scan.cu",
        include_str!("../../templates/share_scan.cu"),
    ),
    (
        "reduce_then_scan.cu",
        include_str!("../../templates/reduce_then_scan.cu"),
    ),
    ("one_tile.cu", include_str!("../../templates/one_tile.cu")),
    (
        "single_pass.cu",
        include_str!("../../templates/single_pass.cu"),
    ),
    (
        "staged_scan.cu",
        include_str!("../../templates/staged_scan.cu"),
    ),
    (
        "select_registers.cu",
        include_str!("../../templates/select_registers.cu"),
    ),
    (
        "select_staged.cu",
        include_str!("../../templates/select_staged.cu"),
    ),
    ("row_scan.cu", include_str!("../../templates/row_scan.cu")),
    (
        "row_staged.cu",
        include_str!("../../templates/row_staged.cu"),
    ),
    (
        "column_scan.cu",
        include_str!("../../templates/column_scan.cu"),
    ),
    (
        "lanes_copy.cu",
        include_str!("../../templates/lanes_copy.cu"),
    ),
    (
        "combine_rate.cu",
        include_str!("../../templates/combine_rate.cu"),
    ),
];

fn engine() -> Result<&'static Environment<'static>> {
    static ENGINE: OnceLock<std::result::Result<Environment<'static>, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut env = Environment::new();
            env.set_undefined_behavior(UndefinedBehavior::Strict);
            // Each template's last newline stays, so an include ends its line as written.
            let syntax = SyntaxConfig::builder()
                .keep_trailing_newline(true)
                .build()
                .map_err(|e| chain(&e))?;
            env.set_syntax(syntax);
            for (name, source) in TEMPLATES {
                env.add_template(name, source).map_err(|e| chain(&e))?;
            }
            Ok(env)
        })
        .as_ref()
        .map_err(|e| Error::Template(e.clone()))
}

fn chain(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        msg.push_str(": ");
        msg.push_str(&c.to_string());
        cause = c.source();
    }
    msg
}

/// Renders the embedded template `name` with `ctx`.
pub fn render(name: &str, ctx: &impl Serialize) -> Result<String> {
    let ctx = Value::from(Serde(ctx));
    engine()?
        .get_template(name)
        .and_then(|t| t.render(ctx))
        .map_err(|e| Error::Template(chain(&e)))
}
