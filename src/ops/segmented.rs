//! Lifting any monoid to segments: restart at flagged elements.

use crate::element::{guarded_definition, ident_fragment, nested_definition, CudaInit, Element};
use crate::layout::{FieldLayout, Layout};
use crate::monoid::{CudaOp, Monoid};
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// A value with a segment-head flag (nonzero: a new segment starts here).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Flagged<T> {
    /// The value.
    pub value: T,
    /// Nonzero where a segment starts.
    pub flag: u32,
}

impl<T> Flagged<T> {
    /// An element that starts a new segment.
    pub fn head(value: T) -> Self {
        Flagged { value, flag: 1 }
    }

    /// An element that continues the current segment.
    pub fn tail(value: T) -> Self {
        Flagged { value, flag: 0 }
    }

    /// `head(value)` if `is_head`, else `tail(value)`.
    pub fn new(value: T, is_head: bool) -> Self {
        Flagged {
            value,
            flag: u32::from(is_head),
        }
    }
}

// SAFETY: `#[repr(C)]` of `T` and `u32`, matching the C++ struct of `cuda_definition`.
unsafe impl<T: DeviceRepr> DeviceRepr for Flagged<T> {}

// SAFETY: all-zero bits are a valid `Flagged<T>` wherever they are a valid `T` (the other fields
// are integers).
unsafe impl<T: ValidAsZeroBits> ValidAsZeroBits for Flagged<T> {}

// SAFETY: the definition declares `value` of `T`'s C++ type, then `unsigned int flag`.
unsafe impl<T: Element> Element for Flagged<T> {
    fn cuda_name() -> String {
        format!("monoscan_flagged_{}", ident_fragment(&T::cuda_name()))
    }
    fn cuda_definition() -> String {
        let name = Self::cuda_name();
        let inner = T::cuda_definition();
        let own = guarded_definition(
            &name,
            &format!(
                "struct {name} {{ {} value; unsigned int flag; }};",
                T::cuda_name()
            ),
        );
        nested_definition(&inner, &own)
    }
    fn cuda_layout() -> Layout {
        Layout::structure::<Self>(vec![
            FieldLayout::new::<T>("value", "value", std::mem::offset_of!(Self, value), &[]),
            FieldLayout::new::<u32>("flag", "flag", std::mem::offset_of!(Self, flag), &[]),
        ])
    }
    fn cuda_literal(&self) -> Option<String> {
        Some(format!(
            "{}{{{}, {}}}",
            Self::cuda_name(),
            self.value.cuda_init()?,
            self.flag.cuda_init()?
        ))
    }
}

/// The segmented lifting of a monoid `M`:
/// `(f1, v1) ⊕ (f2, v2) = (f1 | f2, f2 ? v2 : v1 ⊕ v2)`, identity `(0, e)`.
///
/// A scan under `Segmented<M>` is a scan under `M` that restarts at every flagged element.
/// Associative whenever `M` is (and never commutative), and generated for any `M`, CUDA side
/// included; nesting (`Segmented<Segmented<M>>`) works too.
///
/// ```
/// use monoscan::{ops::{Flagged, Segmented, Sum}, Backend, cpu::Sequential};
/// let seg = Segmented::new(Sum::<i32>::new());
/// let xs = [Flagged::head(1), Flagged::tail(2), Flagged::head(3), Flagged::tail(4)];
/// let ys = Sequential.inclusive_scan(&seg, &xs).unwrap();
/// let values: Vec<i32> = ys.iter().map(|y| y.value).collect();
/// assert_eq!(values, [1, 3, 3, 7]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Segmented<M>(pub M);

impl<M> Segmented<M> {
    /// Lifts `inner`.
    pub fn new(inner: M) -> Self {
        Segmented(inner)
    }

    /// The lifted operator.
    pub fn inner(&self) -> &M {
        &self.0
    }
}

impl<M: Monoid> Monoid for Segmented<M> {
    type Elem = Flagged<M::Elem>;
    fn identity(&self) -> Self::Elem {
        Flagged::tail(self.0.identity())
    }
    fn combine(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem {
        Flagged {
            value: if b.flag != 0 {
                b.value
            } else {
                self.0.combine(&a.value, &b.value)
            },
            flag: a.flag | b.flag,
        }
    }
    fn cuda(&self) -> CudaOp {
        let inner = self.0.cuda();
        let elem = Flagged::<M::Elem>::cuda_name();
        CudaOp::new::<Flagged<M::Elem>>(format!("seg_{}", inner.name))
            .nest("inner", inner)
            .identity(format!("{elem}{{inner::identity(), 0u}}"))
            .combine_body(format!(
                "{elem} r;\n\
                 r.value = b.flag ? b.value : inner::combine(a.value, b.value);\n\
                 r.flag = a.flag | b.flag;\n\
                 return r;"
            ))
    }
}
