//! Resource allocation and stream compaction: per-item requests -> offsets (an exclusive scan)
//! -> one buffer in which each item fills its own slice; then keeping the elements that satisfy
//! a predicate, in order. GPU when present, CPU always; results checked against each other.
//!
//! `cargo run --release --example allocate`

#[path = "common/mod.rs"]
mod common;

use monoscan::cpu::Parallel;
use monoscan::workloads::allocate;
use monoscan::Map;

fn main() -> monoscan::Result<()> {
    let gpu = common::gpu();
    let cpu = Parallel::default();
    let n = 1usize << 24;
    // Requests of 0 to 15 elements, a quarter of them zero.
    let requests: Vec<u32> = (0..n as u64)
        .map(|i| ((i * 2_654_435_761) >> 7) as u32 % 20)
        .map(|r| if r > 15 { 0 } else { r })
        .collect();

    let (a, cpu_ms) = common::timed(|| allocate::offsets(&cpu, &requests));
    let a = a?;
    println!(
        "{n} requests, {} elements in all; offsets on the cpu: {cpu_ms:.1} ms",
        a.total
    );
    let buffer = allocate::fill_slices(&a, &requests, u32::MAX, |item, slice| {
        slice.fill(item as u32)
    })?;
    let owned_right = requests.iter().enumerate().all(|(i, _)| {
        buffer[a.range(i, &requests).unwrap()]
            .iter()
            .all(|&v| v == i as u32)
    });
    common::check(
        owned_right && buffer.len() as u64 == a.total,
        "every item filled exactly its own slice",
    );
    if let Some(g) = &gpu {
        allocate::offsets(g, &requests[..100])?; // compile first
        let (got, ms) = common::timed(|| allocate::offsets(g, &requests));
        println!("offsets on the gpu (host slices, includes the copies): {ms:.1} ms");
        common::check(got? == a, "gpu offsets and total equal the cpu's");
        let d = g.stream().clone_htod(&requests)?;
        let t = monoscan::bench::Timer::new(g)
            .warmup(2)
            .reps(10)
            .time(|| g.allocation_offsets(&d).map(|_| ()))?;
        println!(
            "offsets on the gpu (device buffers, with the total read back): {:.3} ms",
            t.median_ms()
        );
    }

    let xs: Vec<i32> = (0..n as i64)
        .map(|i| ((i * 7919) % 2001 - 1000) as i32)
        .collect();
    let keep = Map::new(
        "abs_below_100",
        "(x > -100 && x < 100) ? 1u : 0u",
        |x: &i32| u32::from(x.abs() < 100),
    );
    let (kept, cpu_ms) = common::timed(|| allocate::compact(&cpu, &xs, &keep));
    let kept = kept?;
    println!("compaction kept {} of {n}; cpu: {cpu_ms:.1} ms", kept.len());
    let want: Vec<i32> = xs.iter().copied().filter(|x| x.abs() < 100).collect();
    common::check(kept == want, "cpu compaction equals a filter");
    if let Some(g) = &gpu {
        let d = g.stream().clone_htod(&xs)?;
        g.compact(&d, &keep)?; // compile first
        let ((out, count), ms) = {
            let (r, ms) = common::timed(|| g.compact(&d, &keep));
            (r?, ms)
        };
        println!("compaction on the gpu (device buffers): {ms:.2} ms, {count} kept");
        common::check(
            g.stream().clone_dtoh(&out)? == want,
            "gpu compaction equals the cpu's",
        );
    }
    Ok(())
}
