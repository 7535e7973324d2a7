//! Criterion benchmarks of whole runs: `cargo bench -p hfcsim-core`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use hfcsim_core::scenario::Network;
use hfcsim_core::{run, RunOptions, Scenario};
use std::hint::black_box;

fn lossy_3mb(c: &mut Criterion) {
    let mut sc = Scenario::cohen_default();
    if let Network::Hfc(h) = &mut sc.network {
        h.downstream_loss = 0.01;
    }
    let mut g = c.benchmark_group("cohen_default");
    g.throughput(Throughput::Elements(2055));
    g.bench_function("3MB_1pct_loss", |b| {
        let mut seed = 0;
        b.iter(|| {
            seed += 1;
            black_box(run(&sc, seed, RunOptions::default()))
        })
    });
    g.finish();
}

fn big_transfer(c: &mut Criterion) {
    let mut sc = Scenario::cohen_default();
    sc.tcp.send_buffer_bytes = 65_536;
    sc.receiver.receive_buffer_bytes = 65_536;
    sc.flows[0].bytes = 30_000_000;
    let mut g = c.benchmark_group("big_transfer");
    g.sample_size(20);
    g.throughput(Throughput::Elements(30_000_000 / 1460 + 1));
    g.bench_function("30MB_64KB_lossless", |b| b.iter(|| black_box(run(&sc, 1, RunOptions::default()))));
    g.finish();
}

criterion_group!(benches, lossy_3mb, big_transfer);
criterion_main!(benches);
