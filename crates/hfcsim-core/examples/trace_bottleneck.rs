use hfcsim_core::scenario::{Network, Variant};
use hfcsim_core::{run, RunOptions, Scenario};
fn main() {
    let b: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let bytes: u64 = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(60_000);
    let mut sc = Scenario::cohen_default();
    sc.network = Network::Bottleneck { rate_pps: 100.0, buffer_packets: Some(b), tau_s: 1.0, loss: 0.0 };
    sc.tcp.variant = Variant::Tahoe;
    sc.tcp.mss_bytes = 1000;
    sc.tcp.send_buffer_bytes = 100_000_000;
    sc.receiver.receive_buffer_bytes = 100_000_000;
    sc.receiver.delayed_ack = false;
    sc.flows[0].bytes = bytes;
    sc.flows[0].handshake = false;
    let out = run(&sc, 1, RunOptions { trace: true });
    let t = out.trace.unwrap();
    for i in 0..t.len() {
        if ["ack", "timeout", "fast_retransmit", "drop", "enqueue"].contains(&t.event[i]) {
            println!("{:>10.3} {:<16} seq={:>4} ack={:>4} cwnd={:>7.2} ssthresh={:>9.2} q={}", t.time_s[i], t.event[i],
                if t.seq[i] >= 0 { t.seq[i] / 1000 + 1 } else { -1 }, if t.ack[i] >= 0 { t.ack[i] / 1000 } else { -1 },
                t.cwnd[i] as f64 / 1000.0, t.ssthresh[i] as f64 / 1000.0, t.queue[i]);
        }
    }
    println!("{:?}", out.flows[0]);
}
