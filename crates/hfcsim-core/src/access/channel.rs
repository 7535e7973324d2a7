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
    /// The same ratio in lowest terms, for the 64-bit path of `start`.
    num: u64,
    den: u64,
}

impl SlotClock {
    pub fn new(minislot_bytes: u32, rate_bps: u64) -> SlotClock {
        assert!(minislot_bytes > 0 && rate_bps > 0, "a slotted channel needs a size and a rate");
        let bit_ns = minislot_bytes as u128 * 8 * NANOS_PER_SEC as u128;
        let rate = rate_bps as u128;
        let g = gcd(bit_ns, rate);
        // bit_ns / g <= 65535 * 8e9 and rate / g <= 2^64 - 1: both fit 64 bits.
        SlotClock { bit_ns, rate_bps: rate, num: (bit_ns / g) as u64, den: (rate / g) as u64 }
    }

    /// When minislot `n` starts at the headend: floor(n * bit_ns / rate), in 64 bits while the
    /// product in lowest terms fits them (the same floor: the ratio is only reduced), else in 128.
    #[inline]
    pub fn start(&self, n: u64) -> SimTime {
        match n.checked_mul(self.num) {
            Some(p) => SimTime(p / self.den),
            None => SimTime((n as u128 * self.bit_ns / self.rate_bps) as u64),
        }
    }

    /// The first minislot that starts at or after `t`.
    pub fn first_at_or_after(&self, t: SimTime) -> u64 {
        // n >= t * rate / bit_ns; check the neighbour for the floor of the division.
        let n = (t.0 as u128 * self.rate_bps).div_ceil(self.bit_ns) as u64;
        debug_assert!(self.start(n) >= t && (n == 0 || self.start(n - 1) < t));
        n
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
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

/// An upstream burst profile's Reed-Solomon FEC (DOCSIS RFI 1.1, upstream burst attributes: T of
/// 0-10 bytes corrected per codeword, 2T parity bytes each, k of 16-253 information bytes per
/// codeword; DOCSIS 2.0 allows T up to 16). The last codeword is shortened: it carries what is
/// left, with its full 2T parity ("shortened last codeword" mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fec {
    /// 2T: parity bytes per codeword (0: no FEC).
    pub parity_bytes: u32,
    /// k: information bytes per codeword.
    pub codeword_bytes: u32,
}

impl Fec {
    pub const NONE: Fec = Fec { parity_bytes: 0, codeword_bytes: 1 };

    /// Parity bytes a burst of `bytes` carries.
    pub fn parity(self, bytes: u32) -> u32 {
        if self.parity_bytes == 0 {
            return 0;
        }
        bytes.div_ceil(self.codeword_bytes) * self.parity_bytes
    }
}

/// Minislots a DOCSIS burst of `frame_bytes` (MAC frames, header included) takes: with its FEC
/// parity and `burst_overhead_bytes` of preamble and guard time (DOCSIS RFI: each burst starts
/// with a preamble and ends with guard time).
pub fn burst_minislots(frame_bytes: u32, burst_overhead_bytes: u32, minislot_bytes: u32, fec: Fec) -> u32 {
    // Saturating: the scenario bounds these sizes at 16 bits (Scenario::check), this only keeps a
    // direct caller's extreme from wrapping.
    frame_bytes.saturating_add(fec.parity(frame_bytes)).saturating_add(burst_overhead_bytes).div_ceil(minislot_bytes)
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

    proptest::proptest! {
        /// The 64-bit path gives the 128-bit floor, for any size, rate and slot (up to and past
        /// where the 64-bit product overflows).
        #[test]
        fn the_fast_path_is_the_exact_floor(bytes in 1u32..=65535, rate in 1u64..=u64::MAX, n: u64) {
            let c = SlotClock::new(bytes, rate);
            let exact = (n as u128 * c.bit_ns / c.rate_bps) as u64;
            proptest::prop_assert_eq!(c.start(n), SimTime(exact));
        }
    }

    #[test]
    fn cells_and_bursts() {
        assert_eq!(aal5_cells(40), 2); // Elloumi Sec. 6.2: an ACK is two cells
        assert_eq!(aal5_cells(1024), 22); // a 1 KB MTU packet: 22 cells, 1.55 ms at 6 Mb/s
        assert_eq!(aal5_cells(32), 1);
        assert_eq!(raw_cells(48), 1);
        assert_eq!(burst_minislots(40 + 24, 12, 16, Fec::NONE), 5);
        // T = 8 (16 parity bytes per codeword), k = 100: a 64-byte ACK frame is one shortened
        // codeword, 64 + 16 + 12 = 92 bytes, 6 minislots; a 1524-byte frame is 16 codewords,
        // 1524 + 256 + 12 = 1792 bytes, 112 minislots (96 without FEC).
        let fec = Fec { parity_bytes: 16, codeword_bytes: 100 };
        assert_eq!(burst_minislots(64, 12, 16, fec), 6);
        assert_eq!(burst_minislots(1524, 12, 16, fec), 112);
        assert_eq!(burst_minislots(1524, 12, 16, Fec::NONE), 96);
        assert_eq!(fec.parity(100), 16);
        assert_eq!(fec.parity(101), 32);
        assert_eq!(minislots_per_frame(0.00227, 16, 3_000_000), 53);
        assert_eq!(minislots_per_frame(0.002, 16, 100_000_000), 1563);
    }
}
