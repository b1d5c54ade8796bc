//! Cold compile, disk hit and memory hit of the kernel sets a scan and a reduce need.

use criterion::Criterion;
use monoscan::cache::{CacheConfig, KernelCache};
use monoscan::codegen::{render, KernelSet, KernelSpec};
use monoscan::jit::{compile, Target};
use monoscan::ops::{Affine, Sum};
use monoscan::tuning::{policy, DeviceLimits, Purpose, Tuning};
use monoscan::{CudaOp, Monoid};

fn sets(op: &CudaOp) -> Vec<(&'static str, KernelSet)> {
    let (limits, tuning) = (DeviceLimits::for_arch(90), Tuning::default());
    let shape = |p| policy::tile_shape(op.elem_size, &limits, &tuning, p).unwrap();
    let (sp, tiles) = (shape(Purpose::SinglePass), shape(Purpose::Tiles));
    vec![
        ("single-pass", KernelSet::SinglePass(sp)),
        ("reduce", KernelSet::TiledReduce(tiles)),
    ]
}

pub fn bench(c: &mut Criterion) {
    if let Err(e) = monoscan::jit::nvrtc() {
        eprintln!("compile benches skipped: {e}");
        return;
    }
    let target = Target::Cubin(90);
    let mut g = c.benchmark_group("compile");
    g.sample_size(10);
    for op in [Sum::<i32>::new().cuda(), Affine::<f64>::new().cuda()] {
        for (name, set) in sets(&op) {
            let spec = KernelSpec::new(set);
            g.bench_function(format!("cold/{}/{name}", op.name), |b| {
                b.iter(|| compile(&render(&op, &spec).unwrap(), &op.name, target).unwrap())
            });
            let dir = tempfile::tempdir().unwrap();
            KernelCache::new(CacheConfig::dir(dir.path()))
                .get(&op, spec, target)
                .unwrap();
            g.bench_function(format!("disk-hit/{}/{name}", op.name), |b| {
                b.iter(|| {
                    KernelCache::new(CacheConfig::dir(dir.path()))
                        .get(&op, spec, target)
                        .unwrap()
                })
            });
            let warm = KernelCache::new(CacheConfig::memory_only());
            warm.get(&op, spec, target).unwrap();
            g.bench_function(format!("memory-hit/{}/{name}", op.name), |b| {
                b.iter(|| warm.get(&op, spec, target).unwrap())
            });
        }
    }
    g.finish();
}
