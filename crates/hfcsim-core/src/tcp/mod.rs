//! TCP's endpoints, each a pure state machine handed the time (it owns no clock and no
//! scheduler): the data sender, the data receiver, and the rules they are built from. They stand
//! on `crate::packet` for the header fields they set and read (the ECN codepoints, the TCP flags)
//! and import nothing of the network (`net/`) or the MACs (`access/`): `sim.rs` makes packets of
//! what they send and `fabric.rs` carries them.
//!
//! - `sender.rs`: the sender. Two paths of loss recovery: 4.4BSD's (Net/3, Stevens vol. 2) with
//!   Tahoe, Reno and NewReno (RFC 5681, RFC 6582), the 1990s stacks the papers ran; and today's
//!   (`sender/today.rs`, the `linux` and `l4s` profiles): SACK with RFC 6675's pipe, RACK-TLP,
//!   PRR, F-RTO, D-SACK, Linux's undo, ECN and pacing, taken whenever a scenario turns one of
//!   today's rules on. `sender/persist.rs`: the persist timer (Net/3's and Linux's probe timer);
//! - congestion control as a hook (`cc.rs`, dispatched by `controller.rs`): Reno, CUBIC
//!   (`cubic.rs`, with Linux's HyStart, `hystart.rs`), DCTCP (`dctcp.rs`), TCP Prague
//!   (`prague.rs`) and BBR v1 (`bbr.rs`, with the delivery-rate samples of `rate.rs`);
//! - recovery's parts: the per-segment record (`segs.rs`), the SACK scoreboard (`sack.rs`, RFC
//!   6675), RACK-TLP (`rack.rs`, RFC 8985), PRR (`prr.rs`, RFC 6937), pacing (`pacing.rs`), the
//!   segments a Linux sender marks with PSH (`push.rs`);
//! - `rto.rs`: the retransmission timers (Net/3's coarse timer, RFC 6298, ns-2's, Linux's);
//! - `receiver.rs`: the receiver, cumulative ACKs, out-of-order buffering, SACK blocks and the
//!   delayed-ACK rules of Net/3, FreeBSD 4, ns-2 and Linux; `linux_window.rs`: Linux's receive
//!   window;
//! - `newreno_tests.rs`: NewReno with the RFC 6298 timer as packet scripts.

pub mod bbr;
pub mod cc;
pub mod controller;
pub mod cubic;
pub mod dctcp;
pub mod hystart;
pub mod linux_window;
pub mod pacing;
pub mod prague;
pub mod prr;
pub mod push;
pub mod rack;
pub mod rate;
pub mod receiver;
pub mod rto;
pub mod sack;
pub mod segs;
pub mod sender;

#[cfg(test)]
mod newreno_tests;

/// RFC 7323 2.3: the largest window a header can advertise, 65,535 << 14 (scale factor 14).
pub const MAX_SCALED_WINDOW: u64 = 65_535 << 14;

/// RFC 7323 3: the timestamps option, 10 bytes, padded to 12 (Linux TCPOLEN_TSTAMP_ALIGNED).
pub const TIMESTAMP_OPTION_BYTES: u32 = 12;

/// RFC 3168 Sec. 6.1.1, the ECN-setup handshake, as both ends run it: the flags of the SYN
/// (`syn_ack` false) or SYN-ACK this end sends in `mode`, given whether the peer's SYN asked for
/// ECN (`agreed`): an ECN-setup SYN carries ECE and CWR, an ECN-setup SYN-ACK ECE alone.
pub fn ecn_setup_flags(mode: crate::scenario::EcnMode, syn_ack: bool, agreed: bool) -> u8 {
    use crate::packet::tcp_flags::{CWR, ECE};
    match (mode, syn_ack) {
        (crate::scenario::EcnMode::Off, _) => 0,
        (_, false) => ECE | CWR,
        (_, true) if agreed => ECE,
        (_, true) => 0,
    }
}

/// RFC 3168 Sec. 6.1.1: whether ECN is on after the peer's SYN or SYN-ACK arrived with `flags`:
/// this end asks for it (`mode`) and the peer's segment is an ECN-setup one.
pub fn ecn_setup_agreed(mode: crate::scenario::EcnMode, flags: u8, syn_ack: bool) -> bool {
    use crate::packet::tcp_flags::{CWR, ECE};
    let want = if syn_ack { ECE } else { ECE | CWR };
    mode != crate::scenario::EcnMode::Off && flags & (ECE | CWR) == want
}

/// The congestion state recorded with every trace row (bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcState {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub flight: u64,
    pub snd_una: u64,
}

/// `tcp.buffer_rounding`: Net/3's `tcp_mss` rounds a buffer up to whole segments; an ns-2 user
/// sets `window_` in packets, floor(buffer / MSS), and Linux's `tcp_select_initial_window`
/// (net/ipv4/tcp_output.c) rounds the offered space down to a multiple of the MSS.
pub use crate::scenario::BufferRounding;

/// Net/3 `tcp_mss`: a socket buffer smaller than the MSS lowers the MSS to it; a larger one is
/// rounded up to a whole number of segments (Stevens vol. 2, 27.5). `BufferRounding::Down` is the
/// window an ns-2 user sets in packets (`window_`), floor(buffer / MSS), and Linux's (`rounddown(space,
/// mss)`): never more than the buffer. Returns (mss, buffer).
pub fn round_buffer(mss: u64, buffer: u64, rounding: BufferRounding) -> (u64, u64) {
    if buffer < mss {
        (buffer, buffer)
    } else if rounding == BufferRounding::Down {
        (mss, buffer / mss * mss)
    } else {
        (mss, buffer.div_ceil(mss) * mss)
    }
}

#[cfg(test)]
mod tests {
    use super::round_buffer;
    use super::BufferRounding::{Down, Up};

    #[test]
    fn socket_buffers_round_up_to_whole_segments() {
        assert_eq!(round_buffer(1460, 8192, Up), (1460, 8760));
        assert_eq!(round_buffer(1460, 16384, Up), (1460, 17520));
        assert_eq!(round_buffer(536, 8192, Up), (536, 8576));
        assert_eq!(round_buffer(1460, 1000, Up), (1000, 1000));
    }

    #[test]
    fn ns2_windows_are_whole_packets_rounded_down() {
        // Cohen's 8 KB is 5 packets of 1460 B in ns-2 (window_ 5), 24 KB is 16.
        assert_eq!(round_buffer(1460, 8192, Down), (1460, 7300));
        assert_eq!(round_buffer(1460, 24576, Down), (1460, 23360));
        assert_eq!(round_buffer(1460, 8760, Down), (1460, 8760));
        assert_eq!(round_buffer(1460, 1000, Down), (1000, 1000));
    }
}
