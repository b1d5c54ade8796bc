//! `C` neighbouring lanes as one element: the scan of a tensor along an outer axis whose lanes
//! are `C` contiguous columns (element `k` of lane `j` at `k * C + j`) is one 1-D scan of
//! vectors of `C` values under the lane-wise operator, so it runs as the 1-D kernels run, with
//! every load and store coalesced and no transposition.

use crate::element::{ident_fragment, Element};
use crate::layout::{FieldLayout, Layout};
use crate::monoid::{CudaOp, Monoid};
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// `C` values of `T`, one per lane.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Lanes<T, const C: usize>(pub(crate) [T; C]);

// SAFETY: `#[repr(C)]` of one array of `T`, matching the C++ struct of `cuda_definition`.
unsafe impl<T: DeviceRepr, const C: usize> DeviceRepr for Lanes<T, C> {}

// SAFETY: all-zero bits are a valid array wherever they are a valid `T`.
unsafe impl<T: ValidAsZeroBits, const C: usize> ValidAsZeroBits for Lanes<T, C> {}

// SAFETY: the definition declares one array `v` of `C` values of `T`'s C++ type: the same size,
// alignment and layout as the Rust array.
unsafe impl<T: Element, const C: usize> Element for Lanes<T, C> {
    fn cuda_name() -> String {
        format!("monoscan_lanes_{}_{C}", ident_fragment(&T::cuda_name()))
    }
    fn cuda_definition() -> String {
        let name = Self::cuda_name();
        let own = crate::__private::guarded_definition(
            &name,
            &format!("struct {name} {{ {} v[{C}]; }};", T::cuda_name()),
        );
        crate::element::nested_definition(&T::cuda_definition(), &own)
    }
    fn cuda_layout() -> Layout {
        Layout::structure::<Self>(vec![FieldLayout::new::<T>("0", "v", 0, &[C])])
    }
}

/// The lane-wise operator: `M` in each of `C` lanes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Lanewise<'a, M, const C: usize>(pub(crate) &'a M);

impl<M: Monoid, const C: usize> Monoid for Lanewise<'_, M, C> {
    type Elem = Lanes<M::Elem, C>;
    fn identity(&self) -> Self::Elem {
        Lanes([self.0.identity(); C])
    }
    fn combine(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem {
        Lanes(std::array::from_fn(|k| self.0.combine(&a.0[k], &b.0[k])))
    }
    fn cuda(&self) -> CudaOp {
        let inner = self.0.cuda();
        let elem = Self::Elem::cuda_name();
        let identity = vec!["inner::identity()"; C].join(", ");
        CudaOp::new::<Self::Elem>(format!("lanes{C}_{}", inner.name))
            .nest("inner", inner)
            .identity(format!("{elem}{{{{{identity}}}}}"))
            .combine_body(format!(
                "{elem} r;\n\
                 #pragma unroll\n\
                 for (int k = 0; k < {C}; ++k) r.v[k] = inner::combine(a.v[k], b.v[k]);\n\
                 return r;"
            ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Affine, AffineMap, Sum};

    #[test]
    fn lanes_combine_independently_and_in_order() {
        let affine = Affine::<f64>::new();
        let m = Lanewise::<_, 2>(&affine);
        let a = Lanes([AffineMap::new(2.0, 1.0), AffineMap::new(1.0, 5.0)]);
        let b = Lanes([AffineMap::new(3.0, 0.0), AffineMap::new(1.0, 1.0)]);
        let ab = m.combine(&a, &b);
        assert_eq!(ab.0[0], affine.combine(&a.0[0], &b.0[0]));
        assert_eq!(ab.0[1], affine.combine(&a.0[1], &b.0[1]));
        assert_ne!(ab, m.combine(&b, &a));
        assert_eq!(m.combine(&m.identity(), &a), a);
        let sum = Sum::<f32>::new();
        let op = Lanewise::<_, 4>(&sum).cuda();
        assert!(op.invalid.is_none());
        assert_eq!(op.elem_size, 16);
        assert!(Lanes::<f32, 4>::cuda_definition()
            .contains("struct monoscan_lanes_float_4 { float v[4]; };"));
    }

    /// The staged scan of 32 lanes of f32 (128-byte rows) and of 2 lanes of affine maps
    /// compiles for sm_90 (NVRTC, no GPU; skipped without NVRTC unless
    /// MONOSCAN_REQUIRE_NVRTC=1).
    #[test]
    fn lanewise_staged_scans_compile() {
        use crate::codegen::{render, KernelSet, KernelSpec};
        use crate::jit::{compile, nvrtc, Target};
        use crate::tuning::{policy, DeviceLimits, Purpose, Tuning};
        if let Err(e) = nvrtc() {
            let required = std::env::var("MONOSCAN_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "MONOSCAN_REQUIRE_NVRTC=1 but NVRTC is missing: {e}"
            );
            eprintln!("skipped: {e}");
            return;
        }
        let sum = Sum::<f32>::new();
        let affine = Affine::<f64>::new();
        let limits = DeviceLimits::for_arch(90);
        for op in [
            Lanewise::<_, 32>(&sum).cuda(),
            Lanewise::<_, 2>(&affine).cuda(),
        ] {
            let shape =
                policy::tile_shape(op.elem_size, &limits, &Tuning::default(), Purpose::Staged)
                    .unwrap();
            assert!(shape.staged, "{}", op.name);
            let set = KernelSet::StagedScan(shape);
            let rendered = render(&op, &KernelSpec::new(set)).unwrap();
            compile(&rendered, &set.name(), Target::Cubin(90))
                .unwrap_or_else(|e| panic!("{}: {e}", op.name));
        }
    }
}
