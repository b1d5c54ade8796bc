//! Elements of every size: the staged scan and the staged reduce take elements of 1 to 128
//! bytes (power-of-two sizes in the swizzled layout, the others, and large reductions of small
//! power-of-two sizes, in the linear one, by tensor or bulk copies on sm_90), with their runs folded in one chain or several. Each size is an
//! exact, non-commutative operator (`Lanes<W, N>`: N words of lane-wise affine maps over W
//! with a shared slope), checked against the sequential reference at boundary lengths and
//! over several waves of tiles, forwards and (as one lane: the staged scan from the end) in
//! reverse, under the default tuning and under forced chains, without the TMA and in the
//! cp.async form. NVRTC compiles every size's staged modules for sm_80 and
//! sm_90 without a GPU.

mod common;

use common::gpu::{gpu, gpu_with, nvrtc, Rng};
use common::lanes;
use common::suite::{reference, Check, Mapped, OnGpu, Visit};
use common::Cmp;
use monoscan::codegen::{render, KernelSet, KernelSpec};
use monoscan::jit::{compile, Target};
use monoscan::tuning::cost::CombineCost;
use monoscan::tuning::{policy, DeviceLimits, Purpose, Tuning};
use monoscan::{Algorithm, ApproxEq, Backend, CudaOp, Element, Gpu, Monoid, Tolerance};
use std::fmt::Debug;

/// An unsigned word of the lanes.
trait Word: Copy + Debug + PartialEq + Default + Send + Sync + 'static {
    const CUDA: &'static str;
    fn mul_add(a: Self, s: Self, b: Self) -> Self;
    fn one() -> Self;
    fn draw(rng: &mut Rng) -> Self;
}

macro_rules! word {
    ($($t:ty => $c:expr),*) => {$(
        impl Word for $t {
            const CUDA: &'static str = $c;
            fn mul_add(a: Self, s: Self, b: Self) -> Self {
                a.wrapping_mul(s).wrapping_add(b)
            }
            fn one() -> Self {
                1
            }
            fn draw(rng: &mut Rng) -> Self {
                rng.below(1 << 16) as $t
            }
        }
    )*};
}
word!(u8 => "unsigned char", u16 => "unsigned short", u32 => "unsigned int", u64 => "unsigned long long");

/// N words: word 0 is a shared slope, word k > 0 the offset of lane k.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Words<W: Word, const N: usize>([W; N]);

// SAFETY: a #[repr(C)] array of plain unsigned words, valid for any bit pattern.
unsafe impl<W: Word, const N: usize> monoscan::DeviceRepr for Words<W, N> {}
// SAFETY: the C++ definition is one array of N words of W's C++ type: the same size, alignment
// and layout as the Rust array.
unsafe impl<W: Word, const N: usize> Element for Words<W, N> {
    fn cuda_name() -> String {
        format!("ms_words_{}_{N}", W::CUDA.replace(' ', "_"))
    }
    fn cuda_definition() -> String {
        let name = Self::cuda_name();
        let guard = name.to_uppercase();
        format!(
            "#ifndef {guard}\n#define {guard}\nstruct {name} {{ {} w[{N}]; }};\n#endif",
            W::CUDA
        )
    }
}

impl<W: Word, const N: usize> ApproxEq for Words<W, N> {
    fn approx_eq(&self, other: &Self, _: Tolerance) -> bool {
        self == other
    }
}

/// Lane-wise affine maps with a shared slope, composed in sequence order: exact, associative,
/// not commutative.
#[derive(Clone, Copy, Debug, Default)]
struct Lanes<W: Word, const N: usize>(std::marker::PhantomData<W>);

impl<W: Word, const N: usize> Monoid for Lanes<W, N> {
    type Elem = Words<W, N>;
    fn identity(&self) -> Self::Elem {
        let mut w = [W::default(); N];
        w[0] = W::one();
        Words(w)
    }
    fn combine(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem {
        let slope = b.0[0];
        let mut w: [W; N] = std::array::from_fn(|k| W::mul_add(a.0[k], slope, b.0[k]));
        w[0] = W::mul_add(a.0[0], slope, W::default());
        Words(w)
    }
    fn cuda(&self) -> CudaOp {
        let t = Self::Elem::cuda_name();
        let w = W::CUDA;
        CudaOp::new::<Self::Elem>(&format!("lanes_{}_{N}", w.replace(' ', "_")))
            .identity(format!("{t}{{{{(({w})1)}}}}"))
            .combine_body(format!(
                "{t} r;\n\
                 r.w[0] = ({w})((unsigned long long)a.w[0] * (unsigned long long)b.w[0]);\n\
                 for (int k = 1; k < {N}; ++k)\n\
                     r.w[k] = ({w})((unsigned long long)a.w[k] * (unsigned long long)b.w[0] + (unsigned long long)b.w[k]);\n\
                 return r;"
            ))
    }
}

fn draw<W: Word, const N: usize>(seed: u64, n: usize) -> Vec<Words<W, N>> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let mut w = [W::default(); N];
            for x in w.iter_mut() {
                *x = W::draw(&mut rng);
            }
            // Odd slopes keep the products from collapsing to zero.
            w[0] = W::mul_add(w[0], W::one(), W::one());
            Words(w)
        })
        .collect()
}

/// Lengths around the staged tile of this size: the boundaries, and several waves of tiles.
fn lengths(size: usize) -> Vec<usize> {
    let limits = DeviceLimits::for_arch(90);
    let tile = policy::tile_shape(size, &limits, &Tuning::default(), Purpose::Staged)
        .unwrap()
        .tile() as usize;
    vec![
        0,
        1,
        31,
        33,
        tile - 1,
        tile,
        tile + 1,
        3 * tile + 7,
        700 * tile + 5,
    ]
}

/// Every plain operation (reduce, inclusive and exclusive scans, in and out of place, with and
/// without a fused map) of `Lanes<W, N>` on `gpu` at every length, against the reference.
fn check_size<W: Word, const N: usize>(gpu: &Gpu, what: &str) {
    let m = Lanes::<W, N>::default();
    let size = std::mem::size_of::<Words<W, N>>();
    for (i, n) in lengths(size).into_iter().enumerate() {
        let xs = draw::<W, N>(i as u64 + 1, n);
        let init = xs.first().copied().unwrap_or_else(|| m.identity());
        let want = reference(&m, &xs, init);
        let mut check = Check {
            who: format!("{what} {size}-byte lanes"),
            m: &m,
            xs: &xs,
            init,
            want: &want,
            cmp: Cmp::Exact,
        };
        let path = OnGpu {
            gpu,
            algorithm: Algorithm::Auto,
            offset: 0,
        };
        check.path("auto", &path, Mapped::Fused);
        lanes::reverse_1d(
            gpu,
            &m,
            &xs,
            init,
            Cmp::Exact,
            &format!("{what} {size}-byte lanes"),
        );
    }
}

macro_rules! sizes {
    ($($name:ident: $w:ty, $n:expr;)*) => {
        $(
            #[test]
            fn $name() {
                if let Some(g) = gpu() {
                    check_size::<$w, $n>(g, "default");
                }
            }
        )*
        /// The staged reduce's kernels against the blocks per SM their shared memory allows,
        /// at every size: the 1- and 2-byte reduces, of small inputs (the swizzled layout) and
        /// of large ones (the linear layout from 2 bytes), keep them, and every kernel that
        /// registers hold below them is printed ([`reduce_residency`]).
        #[test]
        fn registers_keep_the_one_and_two_byte_reduces_resident() {
            let Some(g) = gpu() else { return };
            let mut misses = Vec::new();
            let (one_byte_swizzled, _) = reduce_residency::<u8, 1>(g, &mut misses);
            let (two_byte_swizzled, two_byte_linear) = reduce_residency::<u16, 1>(g, &mut misses);
            reduce_residency::<u8, 2>(g, &mut misses);
            reduce_residency::<u32, 1>(g, &mut misses);
            $(reduce_residency::<$w, $n>(g, &mut misses);)*
            for m in &misses {
                eprintln!("below its shared memory's residency: {m}");
            }
            let limits = g.info().limits;
            if limits.cc >= 90 && g.tuning().tma {
                assert!(one_byte_swizzled, "1-byte lanes: no staged reduce loaded");
                assert!(
                    two_byte_swizzled && two_byte_linear,
                    "2-byte lanes: not both layouts of the staged reduce loaded"
                );
            }
            assert!(
                !misses
                    .iter()
                    .any(|m| m.starts_with("1-byte") || m.starts_with("2-byte")),
                "{misses:?}"
            );
        }
        /// Every size's staged scan and staged reduce, in the default tuning and without the
        /// TMA, compile for sm_80 and sm_90, with a chain and with several.
        #[test]
        fn every_size_compiles() {
            if !nvrtc() {
                return;
            }
            $(compile_size(&Lanes::<$w, $n>::default().cuda());)*
        }
    };
}

sizes! {
    bytes_3: u8, 3;
    bytes_5: u8, 5;
    bytes_6: u16, 3;
    bytes_7: u8, 7;
    bytes_8: u32, 2;
    bytes_12: u32, 3;
    bytes_16: u32, 4;
    bytes_20: u32, 5;
    bytes_24: u64, 3;
    bytes_32: u64, 4;
    bytes_40: u32, 10;
    bytes_48: u32, 12;
    bytes_56: u64, 7;
    bytes_64: u64, 8;
    bytes_96: u32, 24;
    bytes_128: u64, 16;
}

fn compile_size(op: &CudaOp) {
    let size = op.elem_size;
    for cc in [80, 90] {
        let limits = DeviceLimits::for_arch(cc);
        for tuning in [
            Tuning::default(),
            Tuning {
                tma: false,
                ..Tuning::default()
            },
            Tuning {
                chains: Some(2),
                ..Tuning::default()
            },
        ] {
            // The linear layout the staged reduce takes for large inputs of small sizes.
            let cost = CombineCost::of(op);
            let mut linear = policy::reduce_shape(size, &cost, u64::MAX, &limits, &tuning).unwrap();
            if linear.linear && size.is_power_of_two() {
                linear.chains = policy::chains(&cost, &tuning, &linear, size);
                let set = KernelSet::StagedReduce(linear);
                let rendered = render(op, &KernelSpec::new(set))
                    .unwrap_or_else(|e| panic!("{} {}: {e}", op.name, set.name()));
                compile(&rendered, &op.name, Target::Cubin(cc))
                    .unwrap_or_else(|e| panic!("{} {} on sm_{cc}: {e}", op.name, set.name()));
            }
            // The shorter runs small reductions take.
            if let Some(mut small) =
                policy::small_reduce_shape(size, &cost, 64 << 10, &limits, &tuning).unwrap()
            {
                small.chains = policy::chains(&cost, &tuning, &small, size);
                let set = KernelSet::StagedReduce(small);
                let rendered = render(op, &KernelSpec::new(set))
                    .unwrap_or_else(|e| panic!("{} {}: {e}", op.name, set.name()));
                compile(&rendered, &op.name, Target::Cubin(cc))
                    .unwrap_or_else(|e| panic!("{} {} on sm_{cc}: {e}", op.name, set.name()));
            }
            for purpose in [Purpose::Staged, Purpose::StagedReduce] {
                let mut shape = policy::tile_shape(size, &limits, &tuning, purpose).unwrap();
                assert!(shape.staged, "{size} bytes on sm_{cc}: {shape:?}");
                shape.chains = policy::chains(&CombineCost::of(op), &tuning, &shape, size);
                let sets = match purpose {
                    Purpose::Staged => {
                        vec![
                            KernelSet::StagedScan(shape),
                            KernelSet::StagedScanReverse(shape),
                        ]
                    }
                    _ => vec![KernelSet::StagedReduce(shape)],
                };
                for set in sets {
                    let spec = KernelSpec::new(set);
                    let rendered = render(op, &spec)
                        .unwrap_or_else(|e| panic!("{} {}: {e}", op.name, set.name()));
                    compile(&rendered, &op.name, Target::Cubin(cc))
                        .unwrap_or_else(|e| panic!("{} {} on sm_{cc}: {e}", op.name, set.name()));
                }
            }
        }
    }
}

/// The other forms of the staged kernels, on GPUs of their own: several chains, no TMA (the
/// cp.async form on sm_90).
#[test]
fn forced_forms() {
    for (what, tuning) in [
        (
            "two chains",
            Tuning {
                chains: Some(2),
                ..Tuning::default()
            },
        ),
        (
            "no tma",
            Tuning {
                tma: false,
                ..Tuning::default()
            },
        ),
    ] {
        let Some(g) = gpu_with(tuning) else {
            return;
        };
        check_size::<u32, 3>(&g, what);
        check_size::<u64, 3>(&g, what);
        check_size::<u64, 8>(&g, what);
        check_size::<u8, 5>(&g, what);
    }
}

/// Reductions of at least [`policy::LINEAR_REDUCE_MIN_BYTES`] of cheap combines of 2, 8 and
/// 16 bytes run the staged reduce in the linear layout (on sm_90 with the TMA), those of 1 byte
/// in the swizzled one: exact against the sequential fold, with a partial last tile and a grid
/// of several tiles per block.
#[test]
fn large_reductions_in_either_layout() {
    let Some(g) = gpu() else { return };
    reduce_large::<u8, 1>(g);
    reduce_large::<u16, 1>(g);
    reduce_large::<u32, 2>(g);
    reduce_large::<u32, 4>(g);
}

fn reduce_large<W: Word, const N: usize>(gpu: &Gpu) {
    let m = Lanes::<W, N>::default();
    let size = std::mem::size_of::<Words<W, N>>();
    let bytes = policy::LINEAR_REDUCE_MIN_BYTES;
    let cost = CombineCost::of(&m.cuda());
    // On sm_90 with the TMA the linear form from 2 bytes; elsewhere the swizzled one, checked
    // the same.
    let linear = policy::reduce_linear(size, &cost, bytes, &gpu.info().limits, gpu.tuning());
    assert_eq!(
        linear,
        size > 1 && gpu.info().limits.cc >= 90 && gpu.tuning().tma
    );
    let n = (bytes / size as u64) as usize + 4099;
    let xs = draw::<W, N>(size as u64, n);
    let want = xs.iter().fold(m.identity(), |a, x| m.combine(&a, x));
    let got = gpu.reduce(&m, &xs).unwrap();
    assert_eq!(got, want, "{size}-byte lanes, {n} elements");
}

/// Adds to `misses` every staged reduce of `Lanes<W, N>`, as loaded for a small input (the
/// swizzled layout where the size allows it) and for one of
/// [`policy::LINEAR_REDUCE_MIN_BYTES`] (the linear layout of cheap sizes from 2 bytes on sm_90), that
/// the driver's occupancy of the compiled kernel holds below the blocks per SM the device's
/// shared memory allows it; returns which layouts were loaded: (swizzled, linear). A run whose
/// last, partial tile checks every item in the unrolled fold kept 1-byte elements at 255
/// registers and one block per SM where two fit, in either layout.
fn reduce_residency<W: Word, const N: usize>(gpu: &Gpu, misses: &mut Vec<String>) -> (bool, bool) {
    let m = Lanes::<W, N>::default();
    let size = std::mem::size_of::<Words<W, N>>();
    let limits = gpu.info().limits;
    let (mut swizzled, mut linear) = (false, false);
    for bytes in [1 << 22, policy::LINEAR_REDUCE_MIN_BYTES] {
        let scanner = gpu.scanner(&m);
        scanner.prepare_for(bytes / size as u64).unwrap();
        let kernels = scanner.kernel_info().unwrap();
        for k in kernels
            .iter()
            .filter(|k| k.name.ends_with(" reduce_staged"))
        {
            linear |= k.name.contains("linear");
            swizzled |= !k.name.contains("linear");
            let by_smem = limits.blocks_per_sm(k.threads, k.dynamic_shared_bytes as usize);
            if k.blocks_per_sm < by_smem {
                misses.push(format!(
                    "{size}-byte lanes: {} holds {} blocks per SM at {} registers, its shared memory {by_smem}",
                    k.name, k.blocks_per_sm, k.registers
                ));
            }
        }
    }
    (swizzled, linear)
}
