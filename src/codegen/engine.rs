//! The Tera engine with the embedded templates (autoescape off: this is C++, not HTML).

use crate::error::{Error, Result};
use serde::Serialize;
use std::sync::OnceLock;
use tera::{Context, Tera};

const TEMPLATES: [(&str, &str); 4] = [
    ("prelude.cu", include_str!("../../templates/prelude.cu")),
    ("op_struct.cu", include_str!("../../templates/op_struct.cu")),
    ("textbook.cu", include_str!("../../templates/textbook.cu")),
    ("tiled.cu", include_str!("../../templates/tiled.cu")),
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
