//! Run one resolved scenario document (JSON, as `Scenario.to_json()` writes it) and print its events,
//! simulated and wall-clock seconds: the driver of docs/performance.md's scale figures, and a target for
//! callgrind, where `hfcsim run` would also count Python.
//! `cargo run --release -p hfcsim-core --example run_json -- SCENARIO.json [SEED]`

use hfcsim_core::{run, RunOptions, Scenario};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: run_json SCENARIO.json [SEED]");
    let seed = args.next().map_or(1, |s| s.parse().expect("SEED is an integer"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let sc = Scenario::from_json(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let t0 = Instant::now();
    let out = run(&sc, seed, RunOptions::default());
    let wall = t0.elapsed().as_secs_f64();
    let simulated = out.engine.simulated_s;
    println!(
        "{path}: {} events, {simulated:.3} simulated s in {wall:.3} s wall: {:.1} x real time",
        out.engine.events,
        simulated / wall
    );
}
