//! Fused input maps: scans and reductions whose input type differs from the monoid's element
//! type, the map applied as the kernels load each element, so the input is read once.

use crate::element::Element;
use crate::monoid::CudaMap;
use std::marker::PhantomData;
use std::sync::Arc;

/// A map's host side over a run of inputs, into as many outputs.
type MapRun<In, Out> = dyn Fn(&[In], &mut [Out]) + Send + Sync;

/// A map from `In` to `Out`, given once for the host (a closure) and once for the device (a
/// CUDA snippet over `const In& x`), like a [`crate::Monoid`]'s two sides.
///
/// ```
/// use monoscan::{Backend, Map, cpu::Sequential, ops::Sum};
/// // Flags (u8) to counts (u32): the exclusive scan is the compaction offsets.
/// let count = Map::new("flag_count", "x != 0 ? 1u : 0u", |x: &u8| u32::from(*x != 0));
/// let flags = [1u8, 0, 1, 1, 0];
/// let (offsets, total) = Sequential.map_exclusive_scan_total(&Sum::<u32>::new(), &count, &flags, 0).unwrap();
/// assert_eq!(offsets, [0, 1, 1, 2, 3]);
/// assert_eq!(total, 3);
/// ```
pub struct Map<In, Out> {
    name: String,
    body: String,
    prelude: String,
    host: Arc<dyn Fn(&In) -> Out + Send + Sync>,
    /// The host side over a run: one call maps a whole slice in a loop compiled for the
    /// closure, where `host` costs a call through a pointer per element.
    host_run: Arc<MapRun<In, Out>>,
    _types: PhantomData<fn(In) -> Out>,
}

impl<In, Out> Clone for Map<In, Out> {
    fn clone(&self) -> Self {
        Map {
            name: self.name.clone(),
            body: self.body.clone(),
            prelude: self.prelude.clone(),
            host: self.host.clone(),
            host_run: self.host_run.clone(),
            _types: PhantomData,
        }
    }
}

impl<In: Element, Out: Element> Map<In, Out> {
    /// A map whose device side is the expression `cuda_expr` over `x` (of `In`'s C++ type)
    /// and whose host side is `host`.
    pub fn new(
        name: impl Into<String>,
        cuda_expr: &str,
        host: impl Fn(&In) -> Out + Send + Sync + 'static,
    ) -> Self {
        let host = Arc::new(host);
        let each = host.clone();
        Map {
            name: name.into(),
            body: format!("return ({cuda_expr});"),
            prelude: String::new(),
            host,
            host_run: Arc::new(move |xs: &[In], out: &mut [Out]| {
                for (o, x) in out.iter_mut().zip(xs) {
                    *o = each(x);
                }
            }),
            _types: PhantomData,
        }
    }

    /// Replaces the device side by a function body over `x` that returns `Out`.
    pub fn body(mut self, cuda_body: impl Into<String>) -> Self {
        self.body = cuda_body.into();
        self
    }

    /// C++ definitions the device side needs.
    pub fn prelude(mut self, code: impl Into<String>) -> Self {
        self.prelude = code.into();
        self
    }

    /// The host side.
    pub fn apply(&self, x: &In) -> Out {
        (self.host)(x)
    }

    /// The host side over a run: `out[i] = apply(&xs[i])` for every `i` both hold, in one
    /// call (the CPU backends map contiguous runs so).
    pub(crate) fn apply_run(&self, xs: &[In], out: &mut [Out]) {
        (self.host_run)(xs, out)
    }

    /// The device side, for code generation.
    ///
    /// (For a selection map, see [`Map::as_selection`].)
    pub fn cuda(&self) -> CudaMap {
        let mut prelude = In::cuda_definition();
        if !self.prelude.is_empty() {
            prelude.push('\n');
            prelude.push_str(&self.prelude);
        }
        CudaMap {
            name: self.name.clone(),
            in_type: In::cuda_name(),
            in_size: std::mem::size_of::<In>(),
            in_align: std::mem::align_of::<In>(),
            in_layout: In::cuda_layout(),
            prelude,
            body: self.body.clone(),
        }
    }
}

impl<In: Element> Map<In, u32> {
    /// The selection this map stands for: 1 where it returns nonzero, else 0 (on the host and on
    /// the device alike). Compaction scans these counts, so any nonzero "keep" value works.
    pub fn as_selection(&self) -> Map<In, u32> {
        let host = self.host.clone();
        let run = self.host_run.clone();
        Map {
            name: format!("{}_selected", self.name),
            body: format!(
                "auto ms_keep = [&]() -> unsigned int {{\n{}\n}};\nreturn ms_keep() != 0u ? 1u : 0u;",
                self.body
            ),
            prelude: self.prelude.clone(),
            host: Arc::new(move |x: &In| u32::from(host(x) != 0)),
            host_run: Arc::new(move |xs: &[In], out: &mut [u32]| {
                run(xs, out);
                for o in out.iter_mut().take(xs.len()) {
                    *o = u32::from(*o != 0);
                }
            }),
            _types: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The run form maps as the closure does, over every element both slices hold, and a
    /// selection's run form gives its 0/1 counts.
    #[test]
    fn runs_map_as_each_element_does() {
        let m = Map::new("minus_two", "x - 2", |x: &u32| x.wrapping_sub(2));
        let xs: Vec<u32> = (0..300).collect();
        let mut out = vec![7u32; 301];
        m.apply_run(&xs, &mut out);
        assert!(xs.iter().zip(&out).all(|(x, o)| *o == m.apply(x)));
        assert_eq!(out[300], 7, "past the inputs");
        let keep = m.as_selection();
        let mut short = vec![7u32; 5];
        keep.apply_run(&xs, &mut short);
        assert_eq!(short, [1, 1, 0, 1, 1]);
        assert!(xs
            .iter()
            .take(5)
            .zip(&short)
            .all(|(x, o)| *o == keep.apply(x)));
    }
}
