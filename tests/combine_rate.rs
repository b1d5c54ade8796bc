//! The combine-rate kernel (`templates/combine_rate.cu`), behind `monoscan::bench::combine_rate`:
//! it compiles in every shape for every representative class and some built-in operators, in
//! both combine forms, for the oldest and the newest architecture (NVRTC, no GPU); every round
//! of its loop holds one combine per chain, which the compiler does not collapse (read in the
//! PTX of a sum, the combine a compiler would most readily strength-reduce); and on a GPU it
//! measures a finite, positive rate in the form the operator's scans use, the fastest of its
//! shapes, lower for an expensive combine than for a cheap one. NVRTC tests skip without NVRTC
//! (fail instead under MONOSCAN_REQUIRE_NVRTC=1), GPU tests without a GPU
//! (MONOSCAN_REQUIRE_GPU=1).

mod common;

use common::gpu::{gpu, nvrtc};
use monoscan::bench::{self, classes, classes::Class, Timer};
use monoscan::codegen::{render, CombineForm, Entry, KernelSet, KernelSpec};
use monoscan::jit::{compile, Target};
use monoscan::ops::{Affine, MatMulMod, Sum};
use monoscan::tuning::plan::Plan;
use monoscan::tuning::{DeviceLimits, Tuning};
use monoscan::{CudaOp, Monoid};

/// Every class, and built-ins of 4, 16 and 16 bytes (a cheap sum, an f64 affine map, a matrix
/// product with 64-bit remainders).
fn ops() -> Vec<CudaOp> {
    let mut ops: Vec<CudaOp> = classes::all().into_iter().map(|d| d.cuda).collect();
    ops.extend([
        Sum::<i32>::new().cuda(),
        Affine::<f64>::new().cuda(),
        MatMulMod::default().cuda(),
    ]);
    ops
}

fn rate_set(chains: u32) -> KernelSet {
    KernelSet::CombineRate { block: 256, chains }
}

fn build(op: &CudaOp, set: KernelSet, form: CombineForm, target: Target) -> Vec<u8> {
    let rendered = render(op, &KernelSpec::new(set).with_combine(form)).unwrap();
    let what = format!("{} {} {form} for {target:?}", op.name, set.name());
    let out = compile(&rendered, "combine rate", target).unwrap_or_else(|e| panic!("{what}: {e}"));
    let symbol = rendered.symbol(Entry::CombineRate, false);
    let needle = match target {
        Target::Ptx(_) => format!(".entry {symbol}("),
        Target::Cubin(_) => format!(".text.{symbol}\0"),
    };
    assert!(
        out.image
            .windows(needle.len())
            .any(|w| w == needle.as_bytes()),
        "{what} lacks {symbol}"
    );
    out.image
}

#[test]
fn the_shapes_keep_chain_state_within_64_registers() {
    let chains = |size| -> Vec<u32> {
        KernelSet::combine_rate_shapes(size)
            .into_iter()
            .map(|s| match s {
                KernelSet::CombineRate { block, chains } => {
                    assert_eq!(block, 256);
                    chains
                }
                other => panic!("{other:?}"),
            })
            .collect()
    };
    for (size, want) in [
        (4, vec![1, 2, 4, 8]),
        (24, vec![1, 2, 4, 8]),
        (32, vec![1, 2, 4, 8]),
        (48, vec![1, 2, 4]),
        (64, vec![1, 2, 4]),
    ] {
        assert_eq!(chains(size), want, "{size}");
    }
    // The module carries its shape in its name, and the plan's combine form.
    let lse = classes::LogSumExp.cuda();
    let plan = Plan::new(&lse, DeviceLimits::for_arch(90), &Tuning::default());
    assert_eq!(
        plan.spec(rate_set(8)).name(),
        "combine-rate-b256x8 outlined"
    );
    assert_eq!(rate_set(4).entries(), [Entry::Fill, Entry::CombineRate]);
}

#[test]
fn every_class_compiles_in_every_shape_and_both_forms() {
    if !nvrtc() {
        return;
    }
    for op in ops() {
        for set in KernelSet::combine_rate_shapes(op.elem_size) {
            for form in [CombineForm::Inline, CombineForm::Outlined] {
                for target in [Target::Cubin(75), Target::Cubin(90)] {
                    build(&op, set, form, target);
                }
            }
        }
    }
}

/// The loops of the kernel's PTX that read the shared-memory pool: (loads, instructions).
fn pool_loops(ptx: &str) -> Vec<(usize, Vec<String>)> {
    let lines: Vec<&str> = ptx.lines().map(str::trim).collect();
    let mut loops = Vec::new();
    for (end, line) in lines.iter().enumerate() {
        // A backward branch `@%p bra $L__BB0_7;` to a label defined above it closes a loop.
        let Some(target) = line
            .split("bra")
            .nth(1)
            .map(|t| t.trim().trim_end_matches(';'))
        else {
            continue;
        };
        let Some(start) = lines[..end].iter().position(|l| *l == format!("{target}:")) else {
            continue;
        };
        let body: Vec<String> = lines[start..=end].iter().map(|s| s.to_string()).collect();
        let loads = body.iter().filter(|l| l.starts_with("ld.shared")).count();
        if loads > 0 {
            loops.push((loads, body));
        }
    }
    loops
}

#[test]
fn every_round_combines_every_chain() {
    if !nvrtc() {
        return;
    }
    // A sum of u32 is one `add.s32` per combine. Were the chains collapsed into a closed form
    // (one running sum of the samples added to each seed at the end), or any combine hoisted,
    // a round would hold fewer adds than chains.
    let op = Sum::<u32>::new().cuda();
    for chains in [2, 8] {
        let ptx = build(&op, rate_set(chains), CombineForm::Inline, Target::Ptx(90));
        let ptx = String::from_utf8(ptx).unwrap();
        let loops = pool_loops(&ptx);
        assert!(!loops.is_empty(), "no loop reads the pool:\n{ptx}");
        for (loads, body) in &loops {
            let adds = body.iter().filter(|l| l.starts_with("add.s32")).count();
            assert!(
                adds >= chains as usize * loads,
                "{adds} adds for {loads} rounds of {chains} chains:\n{}",
                body.join("\n")
            );
        }
    }
    // The outlined form calls the combine once per chain and round.
    let lse = classes::LogSumExp.cuda();
    let ptx = build(&lse, rate_set(8), CombineForm::Outlined, Target::Ptx(90));
    let ptx = String::from_utf8(ptx).unwrap();
    let loops = pool_loops(&ptx);
    assert!(!loops.is_empty(), "no loop reads the pool:\n{ptx}");
    for (loads, body) in loops {
        let calls = body.iter().filter(|l| l.starts_with("call")).count();
        assert_eq!(calls, 8 * loads, "{}", body.join("\n"));
    }
}

#[test]
fn the_rate_is_finite_and_positive_and_follows_the_combine_cost() {
    let Some(gpu) = gpu() else { return };
    let timer = Timer::new(gpu).reps(5);
    let sum = Sum::<i32>::new();
    let samples: Vec<i32> = (1..=4096).collect();
    let cheap = bench::combine_rate(&timer, &sum, &samples).unwrap();
    let lse = classes::LogSumExp;
    let expensive = bench::combine_rate(&timer, &lse, &lse.generate(4096, 1)).unwrap();
    for r in [&cheap, &expensive] {
        println!("{r}");
        assert!(r.per_second.is_finite() && r.per_second > 0.0, "{r:?}");
        assert!(r.ms > 0.0 && r.rounds >= 1, "{r:?}");
        let threads = u64::from(r.blocks) * u64::from(r.threads_per_block);
        let chains = u64::from(r.chains);
        assert_eq!(
            r.combines,
            threads * (chains * r.rounds + chains - 1),
            "{r:?}"
        );
        assert!(r.blocks >= gpu.info().sm_count, "{r:?}");
        // Every shape measured; the rate is the fastest of them.
        assert_eq!(
            r.shapes.len(),
            KernelSet::combine_rate_shapes(8).len(),
            "{r:?}"
        );
        let fastest = r.shapes.iter().map(|s| s.1).fold(0.0, f64::max);
        assert_eq!(r.per_second, fastest, "{r:?}");
        assert!(r.shapes.contains(&(r.chains, r.per_second)), "{r:?}");
    }
    // The forms of the operators' scans: a sum inlined, log-sum-exp outlined.
    assert_eq!(cheap.combine, CombineForm::Inline);
    assert_eq!(expensive.combine, CombineForm::Outlined);
    // An exp and a log1p in f64 per combine against one integer add: far slower.
    assert!(
        cheap.per_second > 4.0 * expensive.per_second,
        "{cheap} vs {expensive}"
    );
    // Refused without samples.
    assert!(bench::combine_rate(&timer, &sum, &[]).is_err());
}

#[test]
fn every_class_has_a_rate_on_the_gpu() {
    let Some(gpu) = gpu() else { return };
    struct Rates<'a>(Timer<'a>);
    impl classes::Visit for Rates<'_> {
        type Error = monoscan::Error;
        fn visit<C: Class>(&mut self, class: &C) -> monoscan::Result<()> {
            let r = bench::combine_rate(&self.0, class, &class.generate(1000, 3))?;
            println!("{}: {r}", C::NAME);
            assert!(
                r.per_second.is_finite() && r.per_second > 0.0,
                "{}: {r:?}",
                C::NAME
            );
            Ok(())
        }
    }
    classes::visit_all(&mut Rates(Timer::new(gpu).reps(3))).unwrap();
}
