use hfcsim_core::{run, RunOptions, Scenario};
fn main() {
    let thr: u32 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let mut sc = Scenario::cohen_default();
    let w: u64 = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(8); sc.tcp.send_buffer_bytes = w * 1460;
    sc.receiver.receive_buffer_bytes = w * 1460;
    sc.receiver.delayed_ack = false;
    sc.tcp.dupack_threshold = thr;
    sc.flows[0].bytes = 30 * 1460;
    sc.flows[0].handshake = false;
    sc.flows[0].drop_packets = vec![11, 14];
    let out = run(&sc, 1, RunOptions { trace: true });
    let t = out.trace.unwrap();
    for i in 0..t.len() {
        if t.event[i] == "enqueue" { continue; }
        println!("{:>10.6} {:<16} seq={:>3} ack={:>3} cwnd={:>5.2} ssthresh={:>6.2} flight={}", t.time_s[i], t.event[i],
            if t.seq[i] >= 0 { t.seq[i] / 1460 + 1 } else { -1 }, if t.ack[i] >= 0 { t.ack[i] / 1460 + 1 } else { -1 },
            t.cwnd[i] as f64 / 1460.0, t.ssthresh[i] as f64 / 1460.0, t.flight[i] / 1460);
    }
    println!("{:?}", out.flows[0]);
}
