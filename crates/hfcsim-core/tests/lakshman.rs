//! Claims L-table1 and L-wpipe (Lakshman & Madhow 1997, Sec. III, Table I and eq. 1) on the
//! single-bottleneck model: mu = 100 packets/s, tau = 1 s, so T = tau + 1/mu = 1.01 s.

mod common;

use hfcsim_core::metrics::Trace;
use hfcsim_core::{run, RunOptions};

const MSS: i64 = 1000;
const T_NS: u64 = 1_010_000_000;
const SERVICE_NS: u64 = 10_000_000;

fn trace(buffer: u64, bytes: u64) -> Trace {
    run(&common::bottleneck(buffer, bytes), 1, RunOptions { trace: true, ..Default::default() }).trace.unwrap()
}

/// (time ns, packet number) of every packet released into the bottleneck, with the window
/// (packets) after the ACK that released it and the queue length (waiting + in service) after
/// it joined.
fn releases(t: &Trace) -> Vec<(u64, i64, u64, i64)> {
    (0..t.len())
        .filter(|&i| t.event[i] == "enqueue")
        .map(|i| (t.time_ns[i], t.seq[i] / MSS + 1, t.cwnd[i] / MSS as u64, t.queue[i]))
        .collect()
}

#[test]
fn table_one_slow_start_evolution() {
    // Table I, row by row: (time, window after the ACK, packets released, queue length after
    // the release). The printed table's last two queue entries are the corrected ones it gives
    // below the rows (4 and 5), which are also what eq. (3) says.
    let m = SERVICE_NS;
    let expected: Vec<(u64, u64, Vec<i64>, i64)> = vec![
        (0, 1, vec![1], 1),
        (T_NS, 2, vec![2, 3], 2),
        (2 * T_NS, 3, vec![4, 5], 2),
        (2 * T_NS + m, 4, vec![6, 7], 3),
        (3 * T_NS, 5, vec![8, 9], 2),
        (3 * T_NS + m, 6, vec![10, 11], 3),
        (3 * T_NS + 2 * m, 7, vec![12, 13], 4),
        (3 * T_NS + 3 * m, 8, vec![14, 15], 5),
        (4 * T_NS, 9, vec![16, 17], 2),
    ];
    let rel = releases(&trace(1000, 200_000));
    for (time, window, packets, queue) in expected {
        let rows: Vec<_> = rel.iter().filter(|r| r.0 == time).collect();
        let got: Vec<i64> = rows.iter().map(|r| r.1).collect();
        assert_eq!(got, packets, "packets released at {time} ns");
        assert!(rows.iter().all(|r| r.2 == window), "window at {time} ns: {rows:?}");
        assert_eq!(rows.last().unwrap().3, queue, "queue at {time} ns");
    }
}

#[test]
fn equations_two_and_three_hold_through_the_slow_start() {
    // Eqs. (2), (3): at table time (n+1)T + m/mu, W = 2^n + m + 1 and Q = m + 2 for
    // 0 <= m <= 2^n - 1, while (2^n - 1)/mu < T and the buffer does not overflow.
    let rel = releases(&trace(1000, 400_000));
    for n in 0..=6u32 {
        for m in 0..(1u64 << n) {
            let time = (n as u64 + 1) * T_NS + m * SERVICE_NS;
            let rows: Vec<_> = rel.iter().filter(|r| r.0 == time).collect();
            assert_eq!(rows.len(), 2, "two packets per ACK at n={n} m={m}");
            assert_eq!(rows[0].2, (1 << n) + m + 1, "W at n={n} m={m}");
            assert_eq!(rows[1].3, m as i64 + 2, "Q at n={n} m={m}");
        }
    }
}

fn first_drop_window(buffer: u64, bytes: u64) -> u64 {
    let t = trace(buffer, bytes);
    let i = (0..t.len()).find(|&i| t.event[i] == "drop").expect("the buffer overflows");
    t.cwnd[i] / MSS as u64
}

#[test]
fn first_overflow_at_w_pipe_plus_one() {
    // beta = 0.8: B = 80, W_pipe = mu*tau + B + 1 = 181 (Fig. 2). Slow start alone would
    // overflow at 2^7 + 80 = 208 > 181, so the first drop is the packet that makes the window
    // W_pipe + 1 = 182.
    assert_eq!(first_drop_window(80, 3_000_000), 182);
    // B = 100: W_pipe = 201 < W_b = 2^7 + 100 = 228, so again the pipe overflows first: 202.
    assert_eq!(first_drop_window(100, 3_000_000), 202);
}

#[test]
fn congestion_avoidance_peaks_at_w_pipe() {
    // beta = 0.1 (Fig. 1): every cycle's avoidance phase overflows at W_pipe + 1 = 112.
    let t = trace(10, 12_000_000);
    let mut bursts = vec![];
    let mut last = 0u64;
    for i in 0..t.len() {
        if t.event[i] == "drop" {
            if t.time_ns[i] > last + 2_000_000_000 {
                bursts.push(t.cwnd[i] / MSS as u64);
            }
            last = t.time_ns[i];
        }
    }
    // Bursts alternate: slow-start overflow, then avoidance overflow at 112.
    assert!(bursts.len() >= 3, "{bursts:?}");
    assert_eq!(bursts[1], 112, "{bursts:?}");
}

#[test]
fn each_connection_has_its_own_propagation_delay() {
    // Sec. II: connection i sees T_i = tau_i + 1/mu. Two flows share the bottleneck (tau = 0.1 s)
    // with extra delays 0 and 0.4 s, so tau_1 = 0.1 s and tau_2 = 0.5 s: their first ACKs return at
    // T_1 = 0.11 s and T_2 = 0.51 s (the second flow's packet reaches the bottleneck at 0.4 s, when
    // the first one's has long left).
    let mut sc = common::bottleneck(1000, 10_000);
    if let hfcsim_core::scenario::Network::Bottleneck(b) = &mut sc.network {
        b.tau_s = 0.1;
    }
    let mut second = sc.flows[0].clone();
    second.extra_delay_s = 0.4;
    sc.flows.push(second);
    let t = run(&sc, 1, RunOptions { trace: true, ..Default::default() }).trace.unwrap();
    let first_ack = |flow: i64| (0..t.len()).find(|&i| t.flow[i] == flow && t.event[i] == "ack").map(|i| t.time_ns[i]);
    assert_eq!(first_ack(0), Some(110_000_000));
    assert_eq!(first_ack(1), Some(510_000_000));
}
