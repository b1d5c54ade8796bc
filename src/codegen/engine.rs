//! The Tera engine with the embedded templates (autoescape off: this is C++, not HTML).

use crate::error::{Error, Result};
use serde::Serialize;
use std::sync::OnceLock;
use tera::{Context, Tera};

/// Every template, by the name families and includes use: the prelude, the operator struct,
/// the shared pieces (`lib/*.cuh`) and one template per kernel family.
const TEMPLATES: [(&str, &str); 21] = [
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
        "tiled_reduce.cu",
        include_str!("../../templates/tiled_reduce.cu"),
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
        "lanes_copy.cu",
        include_str!("../../templates/lanes_copy.cu"),
    ),
];

fn engine() -> Result<&'static Tera> {
    static ENGINE: OnceLock<std::result::Result<Tera, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut tera = Tera::default();
            tera.autoescape_on(vec![]);
            tera.add_raw_templates(TEMPLATES).map_err(|e| chain(&e))?;
            Ok(tera)
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
    let ctx = Context::from_serialize(ctx).map_err(|e| Error::Template(chain(&e)))?;
    engine()?
        .render(name, &ctx)
        .map_err(|e| Error::Template(chain(&e)))
}
