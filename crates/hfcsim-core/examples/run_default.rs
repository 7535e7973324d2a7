//! `cargo run --release --example run_default [loss] [seed]`: the Cohen default download.
use hfcsim_core::{run, RunOptions, Scenario};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut sc = Scenario::cohen_default();
    if let Some(loss) = args.get(1).and_then(|a| a.parse::<f64>().ok()) {
        if let hfcsim_core::scenario::Network::Hfc { downstream_loss, .. } = &mut sc.network {
            *downstream_loss = loss;
        }
    }
    let seed = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1);
    let out = run(&sc, seed, RunOptions::default());
    println!("{:#?}", out.flows[0]);
    println!("{:?}", out.engine);
}
