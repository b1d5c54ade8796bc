//! An application with its own cudarc (`dynamic-linking`) that hands its stream and its device
//! buffers to monoscan: a half-precision scan (f16 input, f32 accumulation) on the device,
//! checked against monoscan's CPU backend.

use cudarc::driver::CudaContext;
use monoscan::cache::KernelCache;
use monoscan::cpu::Parallel;
use monoscan::half::f16;
use monoscan::inputs::widen_f16;
use monoscan::ops::Sum;
use monoscan::{Backend, Gpu};

fn main() -> monoscan::Result<()> {
    // The application's own context and stream, from its own cudarc.
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?;
    // monoscan runs on that stream: the same cudarc types, so the same crate.
    let gpu = Gpu::from_stream(stream.clone(), KernelCache::global())?;

    // Integer-valued halves: their f32 prefix sums are exact in any grouping, so the device
    // and the CPU agree bit for bit.
    let n = (1 << 20) + 3;
    let xs: Vec<f16> = (0..n)
        .map(|i| f16::from_f32(((i * 7919) % 2001) as f32 - 1000.0))
        .collect();
    let input = stream.clone_htod(&xs)?;
    let mut out = stream.alloc_zeros::<f32>(n)?;
    let sum = Sum::<f32>::new();
    gpu.scanner(&sum)
        .mapped(&widen_f16())
        .inclusive(&input, &mut out)?;
    let on_device = stream.clone_dtoh(&out)?;
    let on_cpu = Parallel::default().map_inclusive_scan(&sum, &widen_f16(), &xs)?;
    let same = on_device == on_cpu;
    println!(
        "cudarc (dynamic-linking) + monoscan on {}: f16 -> f32 inclusive scan of {n}: last {} on the device, {} on the CPU: {}",
        gpu.describe(),
        on_device[n - 1],
        on_cpu[n - 1],
        if same { "equal" } else { "DIFFERENT" }
    );
    if !same {
        std::process::exit(1);
    }
    Ok(())
}
