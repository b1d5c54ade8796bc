//! Scans across every GPU of the host through NCCL: 2^30 i32 device-resident, on 1 GPU and on
//! all of them, then a host input streamed in chunks; checked against the CPU.
//!
//! `cargo run --release --example multi_gpu [-- LOG2_N]`

#[path = "common/mod.rs"]
mod common;

use monoscan::cpu::seq;
use monoscan::multi::{split, MultiGpu};
use monoscan::ops::Sum;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> monoscan::Result<()> {
    let log2: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(30);
    if common::gpu().is_none() {
        println!("the multi-GPU example needs GPUs; nothing to do");
        return Ok(());
    }
    let all = match MultiGpu::new(&[]) {
        Ok(m) => m,
        Err(e) => {
            println!("cannot start NCCL: {e}");
            return Ok(());
        }
    };
    let n = 1usize << log2;
    let xs: Vec<i32> = (0..n as u64)
        .map(|i| ((i * 2_654_435_761) >> 20) as i32 % 1000)
        .collect();
    let want = seq::inclusive_scan(&Sum::<i32>::new(), &xs);
    let m = Sum::<i32>::new();
    let bytes = 2.0 * 4.0 * n as f64;
    let mut rates = Vec::new();
    let counts: Vec<usize> = if all.len() > 1 {
        vec![1, all.len()]
    } else {
        vec![1]
    };
    for g in counts {
        let mg = if g == all.len() {
            None
        } else {
            Some(MultiGpu::new(&(0..g).collect::<Vec<_>>())?)
        };
        let mg = mg.as_ref().unwrap_or(&all);
        let parts: Vec<_> = split(n, g)
            .into_iter()
            .zip(mg.gpus())
            .map(|(r, d)| d.stream().clone_htod(&xs[r]))
            .collect::<Result<_, _>>()?;
        let mut outs: Vec<_> = split(n, g)
            .into_iter()
            .zip(mg.gpus())
            .map(|(r, d)| d.stream().clone_htod(&xs[r]))
            .collect::<Result<_, _>>()?;
        mg.inclusive_scan(&m, &parts, &mut outs)?; // warm-up (compiles)
        let mut times = Vec::new();
        for _ in 0..10 {
            let t = Instant::now();
            mg.inclusive_scan(&m, &parts, &mut outs)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        let ms = median(times);
        let got: Vec<i32> = outs
            .iter()
            .zip(mg.gpus())
            .flat_map(|(o, d)| d.stream().clone_dtoh(o).unwrap())
            .collect();
        common::check(
            got == want,
            &format!("{g} GPU(s): device-resident scan equals the cpu's"),
        );
        println!(
            "{g} GPU(s), 2^{log2} i32 device-resident: {ms:.3} ms wall (median of 10), {:.0} GB/s",
            bytes / ms / 1e6
        );
        rates.push(bytes / ms / 1e6);
        let t = Instant::now();
        let host = mg.inclusive_scan_host(&m, &xs, 1 << 26)?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        common::check(
            host == want,
            &format!("{g} GPU(s): host-streamed scan equals the cpu's"),
        );
        println!("{g} GPU(s), host input streamed in chunks of 2^26: {ms:.1} ms wall ({:.1} GB/s of host data)", 4.0 * n as f64 / ms / 1e6);
    }
    if rates.len() == 2 {
        println!(
            "speed-up of {} GPUs over 1 (device-resident): {:.2}x",
            all.len(),
            rates[1] / rates[0]
        );
    }
    Ok(())
}
