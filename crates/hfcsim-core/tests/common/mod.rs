//! Shared scenario builders for the integration tests.
#![allow(dead_code)]

use hfcsim_core::scenario::{Network, Variant};
use hfcsim_core::Scenario;

pub const MSS: u64 = 1460;

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

/// Lakshman & Madhow's bottleneck: mu = 100 packets/s, tau = 1 s, B packets, Tahoe, 1000-byte
/// packets, an ACK per packet, windows limited only by the network.
pub fn bottleneck(buffer_packets: u64, bytes: u64) -> Scenario {
    let mut sc = Scenario::cohen_default();
    sc.network = Network::Bottleneck { rate_pps: 100.0, buffer_packets: Some(buffer_packets), tau_s: 1.0, loss: 0.0 };
    sc.tcp.variant = Variant::Tahoe;
    sc.tcp.mss_bytes = 1000;
    sc.tcp.send_buffer_bytes = 100_000_000;
    sc.receiver.receive_buffer_bytes = 100_000_000;
    sc.receiver.delayed_ack = false;
    sc.flows[0].bytes = bytes;
    sc.flows[0].handshake = false;
    sc
}
