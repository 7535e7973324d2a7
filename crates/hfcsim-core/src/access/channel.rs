//! The upstream channel's clock and what a packet costs on it.
//!
//! The upstream is cut into minislots (IEEE 802.14 draft, Elloumi et al. Sec. 2, Fig. 1; DOCSIS
//! RFI, "minislot"). Ranging makes every station's burst arrive at the headend exactly in the
//! minislots it was given, so all MAC timing is kept in the headend's time: minislot `n` starts
//! at `floor(n * minislot_bits * 1e9 / rate)` ns. Computing each start from `n` (never by adding
//! a rounded slot length) keeps the clock exact over any run length.

use crate::time::{SimTime, NANOS_PER_SEC};

/// ATM cells of one IP packet in AAL5 (net/atm.rs); here for the MAC, which counts them.
pub use crate::net::atm::aal5_cells;

/// The minislot clock of one upstream channel.
#[derive(Clone, Copy, Debug)]
pub struct SlotClock {
    /// Minislot length in bit-nanoseconds (bits x 1e9); divided by the rate it gives ns.
    bit_ns: u128,
    rate_bps: u128,
}

impl SlotClock {
    pub fn new(minislot_bytes: u32, rate_bps: u64) -> SlotClock {
        assert!(minislot_bytes > 0 && rate_bps > 0, "a slotted channel needs a size and a rate");
        SlotClock { bit_ns: minislot_bytes as u128 * 8 * NANOS_PER_SEC as u128, rate_bps: rate_bps as u128 }
    }

    /// When minislot `n` starts at the headend.
    pub fn start(&self, n: u64) -> SimTime {
        SimTime((n as u128 * self.bit_ns / self.rate_bps) as u64)
    }

    /// The first minislot that starts at or after `t`.
    pub fn first_at_or_after(&self, t: SimTime) -> u64 {
        // n >= t * rate / bit_ns; check the neighbour for the floor of the division.
        let n = (t.0 as u128 * self.rate_bps).div_ceil(self.bit_ns) as u64;
        debug_assert!(self.start(n) >= t && (n == 0 || self.start(n - 1) < t));
        n
    }
}

/// Minislots in one frame (802.14) or MAP (DOCSIS) of `frame_s` seconds: the nearest whole number,
/// at least one.
pub fn minislots_per_frame(frame_s: f64, minislot_bytes: u32, rate_bps: u64) -> u32 {
    let n = (frame_s * rate_bps as f64 / (8.0 * minislot_bytes as f64)).round();
    n.clamp(1.0, u32::MAX as f64) as u32
}

/// Cells carrying `bytes` of raw cell payload (Elloumi et al. Sec. 4: background sources send
/// 48-byte packets, one cell each).
pub fn raw_cells(bytes: u32) -> u32 {
    bytes.div_ceil(48).max(1)
}

/// Minislots a DOCSIS burst of `frame_bytes` (MAC frames, header included) takes, with
/// `burst_overhead_bytes` of preamble and guard time (DOCSIS RFI: each burst starts with a preamble
/// and ends with guard time; its FEC is not modelled).
pub fn burst_minislots(frame_bytes: u32, burst_overhead_bytes: u32, minislot_bytes: u32) -> u32 {
    (frame_bytes + burst_overhead_bytes).div_ceil(minislot_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minislot_starts_are_exact_at_3_mbps() {
        // 16 bytes at 3 Mb/s = 42 666.67 ns: starts are floors of exact multiples.
        let c = SlotClock::new(16, 3_000_000);
        assert_eq!(c.start(0), SimTime(0));
        assert_eq!(c.start(1), SimTime(42_666));
        assert_eq!(c.start(3), SimTime(128_000));
        assert_eq!(c.start(3_000_000), SimTime(128_000_000_000));
        for t in [0u64, 1, 42_666, 42_667, 128_000, 999_999_999] {
            let n = c.first_at_or_after(SimTime(t));
            assert!(c.start(n) >= SimTime(t) && (n == 0 || c.start(n - 1) < SimTime(t)), "{t}");
        }
    }

    #[test]
    fn cells_and_bursts() {
        assert_eq!(aal5_cells(40), 2); // Elloumi Sec. 6.2: an ACK is two cells
        assert_eq!(aal5_cells(1024), 22); // a 1 KB MTU packet: 22 cells, 1.55 ms at 6 Mb/s
        assert_eq!(aal5_cells(32), 1);
        assert_eq!(raw_cells(48), 1);
        assert_eq!(burst_minislots(40 + 24, 12, 16), 5);
        assert_eq!(minislots_per_frame(0.00227, 16, 3_000_000), 53);
        assert_eq!(minislots_per_frame(0.002, 16, 100_000_000), 1563);
    }
}
