//! Shared scenario builders for the integration tests.
#![allow(dead_code)]

use hfcsim_core::scenario::{AqmKind, Bottleneck, Network, Variant};
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Action, Out, Sender, SenderConfig};
use hfcsim_core::time::SimTime;
use hfcsim_core::Scenario;

pub const MSS: u64 = 1460;
pub const MS: u64 = 1_000_000;
/// The advertised window of the packet scripts: large enough never to limit them.
pub const WND: u64 = 64 * MSS;

/// Packet numbers (from 1) of the segments sent, new or retransmitted, in `out`; clears `out`.
pub fn sent(out: &mut Vec<Out>) -> Vec<u64> {
    let v = out
        .iter()
        .filter_map(|o| match o.action {
            Action::Segment { seq, .. } => Some(seq / MSS + 1),
            _ => None,
        })
        .collect();
    out.clear();
    v
}

/// Cohen & Ramanathan Fig. 16's starting point: a sender in congestion avoidance with cwnd = 8
/// packets (ssthresh 8), packets 1..10 acknowledged earlier, that has just sent 11..18.
pub fn sender_with_window_of_eight(variant: Variant, dupack_threshold: u32) -> (Sender, Vec<Out>) {
    let mut cfg = SenderConfig::reno(MSS, WND);
    cfg.variant = variant;
    cfg.dupack_threshold = dupack_threshold;
    cfg.recover_guard = variant != Variant::Reno;
    let mut s = Sender::new(cfg, 100 * MSS, None, Rto::bsd(500 * MS, 0));
    let mut out = vec![];
    s.establish(SimTime(0), WND, &mut out);
    out.clear();
    s.snd_una = 10 * MSS;
    s.snd_nxt = 10 * MSS;
    s.snd_max = 10 * MSS;
    s.cwnd = 8 * MSS;
    s.ssthresh = 8 * MSS;
    s.output(SimTime(0), &mut out);
    assert_eq!(sent(&mut out), (11..=18).collect::<Vec<_>>());
    (s, out)
}

/// The receiver's cumulative "ACK n" (it expects packet n next) arrives at `t_ms`.
pub fn ack(s: &mut Sender, out: &mut Vec<Out>, t_ms: u64, packet: u64) {
    s.on_ack(SimTime(t_ms * MS), (packet - 1) * MSS, WND, out);
}

/// Cohen's HFC network, one download without handshake, ACK every segment, a window of
/// `window` segments.
pub fn hfc(window: u64, bytes: u64) -> Scenario {
    let mut sc = Scenario::cohen_default();
    sc.tcp.send_buffer_bytes = window * MSS;
    sc.receiver.receive_buffer_bytes = window * MSS;
    sc.receiver.delayed_ack = false;
    sc.flows[0].bytes = bytes;
    sc.flows[0].handshake = false;
    sc
}

/// The bottleneck network's keys at their defaults (the AQMs' RFC parameters among them).
pub fn bottleneck_network() -> Bottleneck {
    let Network::Bottleneck(b) = Scenario::defaults("bottleneck").network else { unreachable!() };
    b
}

/// Lakshman & Madhow's bottleneck: mu = 100 packets/s, tau = 1 s, B packets, Tahoe, 1000-byte
/// packets, an ACK per packet, windows limited only by the network.
pub fn bottleneck(buffer_packets: u64, bytes: u64) -> Scenario {
    let mut sc = Scenario::cohen_default();
    sc.network = Network::Bottleneck(Bottleneck {
        rate_pps: 100.0,
        buffer_packets: Some(buffer_packets),
        tau_s: 1.0,
        loss: 0.0,
        bottleneck_aqm: AqmKind::Droptail,
        ..bottleneck_network()
    });
    sc.tcp.variant = Variant::Tahoe;
    sc.tcp.mss_bytes = 1000;
    sc.tcp.send_buffer_bytes = 100_000_000;
    sc.receiver.receive_buffer_bytes = 100_000_000;
    sc.receiver.delayed_ack = false;
    sc.flows[0].bytes = bytes;
    sc.flows[0].handshake = false;
    sc
}

/// The linux stack's sender rules the packet scripts share (IW 10, SACK, Limited Transmit, byte
/// counting, the repeated timeout holding ssthresh); each script turns on the rules it tests.
pub fn linux_rules() -> SenderConfig {
    let mut cfg = SenderConfig::reno(MSS, WND);
    cfg.initial_window = 10;
    cfg.sack = true;
    cfg.limited_transmit = true;
    cfg.byte_counting = true;
    cfg.repeat_timeout_holds_ssthresh = true;
    cfg
}

/// A sender of `total` packets that has sent packets 1..=10 (IW 10) at t = 0.
pub fn started_iw10(cfg: SenderConfig, total: u64) -> (Sender, Vec<Out>) {
    let mut s = Sender::new(cfg, total * MSS, None, Rto::linux(200 * MS, 1000 * MS));
    let mut out = vec![];
    s.establish(SimTime(0), WND, &mut out);
    assert_eq!(sent(&mut out), (1..=10).collect::<Vec<_>>());
    (s, out)
}

/// An ACK at `t_ms` expecting packet `next`, SACKing packets `sacked` (inclusive ranges; a first
/// range below `next`, or inside the second, is a D-SACK).
pub fn sack_ack(s: &mut Sender, out: &mut Vec<Out>, t_ms: u64, next: u64, sacked: &[(u64, u64)]) {
    let blocks: Vec<(u64, u64)> = sacked.iter().map(|&(a, b)| ((a - 1) * MSS, b * MSS)).collect();
    s.on_ack_sack(SimTime(t_ms * MS), (next - 1) * MSS, WND, &blocks, out);
}

/// Fast retransmissions among `out`'s actions.
pub fn fast_retransmits(out: &[Out]) -> usize {
    out.iter().filter(|o| matches!(o.action, Action::FastRetransmit { .. })).count()
}

/// The opening the SACK scripts share, after IW 10: ACKs 2 and 3 at 100 ms, then packet 3 missing:
/// two dupACKs, SACKing 4 at 101 ms and 4-5 at 102 ms.
pub fn acks_2_3_then_sacks_of_4_and_4_5(s: &mut Sender, out: &mut Vec<Out>) {
    sack_ack(s, out, 100, 2, &[]);
    sack_ack(s, out, 100, 3, &[]);
    sack_ack(s, out, 101, 3, &[(4, 4)]);
    sack_ack(s, out, 102, 3, &[(4, 5)]);
}
