//! Simulated time: integer nanoseconds, never floating point (docs/design.md, principle 2).
//!
//! Seconds as `f64` exist only at the boundary (scenario input, reported metrics); every
//! comparison and sum inside the engine is on integers, so a run is bit-identical everywhere.

use std::fmt;
use std::ops::{Add, Sub};

/// A point in simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimTime(pub u64);

/// A span of simulated time in nanoseconds.
pub type Nanos = u64;

pub const NANOS_PER_SEC: u64 = 1_000_000_000;

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    /// The first instant strictly after `self` at which a periodic clock of period `period`
    /// and phase `phase` (both ns, `phase < period`) ticks. BSD's timers are driven by such a
    /// clock (`tcp_slowtimo` every 500 ms, `tcp_fasttimo` every 200 ms; Stevens vol. 2, 25.1):
    /// a timer armed between two ticks is first looked at on the next one.
    pub fn next_tick(self, period: Nanos, phase: Nanos) -> SimTime {
        debug_assert!(phase < period);
        if self.0 < phase {
            return SimTime(phase);
        }
        let k = (self.0 - phase) / period + 1;
        SimTime(phase + k * period)
    }

    /// How many ticks of the clock (`period`, `phase`) fall in the half-open interval
    /// `(earlier, self]`.
    pub fn ticks_since(self, earlier: SimTime, period: Nanos, phase: Nanos) -> u64 {
        let count_upto = |t: u64| -> u64 {
            if t < phase {
                0
            } else {
                (t - phase) / period + 1
            }
        };
        count_upto(self.0) - count_upto(earlier.0)
    }
}

impl Add<Nanos> for SimTime {
    type Output = SimTime;
    fn add(self, rhs: Nanos) -> SimTime {
        SimTime(self.0.saturating_add(rhs))
    }
}

impl Sub for SimTime {
    type Output = Nanos;
    fn sub(self, rhs: SimTime) -> Nanos {
        self.0 - rhs.0
    }
}

impl fmt::Debug for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

/// Seconds (scenario input) to nanoseconds, rounded to the nearest nanosecond.
pub fn secs_to_nanos(secs: f64) -> Nanos {
    (secs * NANOS_PER_SEC as f64).round() as Nanos
}

/// Time to serialise `bytes` onto a link of `rate_bps`, rounded up to the next nanosecond;
/// `rate_bps == 0` means an infinitely fast link.
pub fn tx_time(bytes: u32, rate_bps: u64) -> Nanos {
    if rate_bps == 0 {
        return 0;
    }
    // Below 2^31 bytes (every packet) the bit-nanoseconds fit in 64 bits: one 64-bit division
    // instead of a 128-bit one, the same result.
    if bytes < 1 << 31 {
        return (bytes as u64 * 8 * NANOS_PER_SEC).div_ceil(rate_bps);
    }
    let bits = bytes as u128 * 8 * NANOS_PER_SEC as u128;
    bits.div_ceil(rate_bps as u128) as Nanos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_tick_is_strictly_after() {
        // period 500 ms, phase 100 ms: ticks at 0.1, 0.6, 1.1, ...
        let p = 500_000_000;
        let ph = 100_000_000;
        assert_eq!(SimTime(0).next_tick(p, ph), SimTime(100_000_000));
        assert_eq!(SimTime(100_000_000).next_tick(p, ph), SimTime(600_000_000));
        assert_eq!(SimTime(599_999_999).next_tick(p, ph), SimTime(600_000_000));
    }

    #[test]
    fn ticks_between_counts_half_open_interval() {
        let p = 500_000_000;
        let ph = 100_000_000;
        assert_eq!(SimTime(600_000_000).ticks_since(SimTime(50_000_000), p, ph), 2);
        assert_eq!(SimTime(599_000_000).ticks_since(SimTime(100_000_000), p, ph), 0);
        assert_eq!(SimTime(5).ticks_since(SimTime(5), p, ph), 0);
    }

    #[test]
    fn tx_time_rounds_up() {
        assert_eq!(tx_time(1500, 10_000_000), 1_200_000);
        assert_eq!(tx_time(40, 3_000_000), 106_667);
        assert_eq!(tx_time(1500, 0), 0);
    }

    #[test]
    fn tx_time_is_the_same_on_both_sides_of_its_64_bit_path() {
        // 2^31 - 1 bytes take the 64-bit path, 2^31 the 128-bit one; at 8 b/s a byte is a second.
        let last64 = (1u32 << 31) - 1;
        assert_eq!(tx_time(last64, 8), last64 as u64 * NANOS_PER_SEC);
        assert_eq!(tx_time(1 << 31, 8), (1u64 << 31) * NANOS_PER_SEC);
        // Rounded up alike: 2^31 bytes at 3 b/s, 2^31 * 8e9 / 3 bit-ns, is not whole.
        assert_eq!(tx_time(1 << 31, 3), ((1u128 << 31) * 8 * NANOS_PER_SEC as u128).div_ceil(3) as u64);
        assert_eq!(tx_time(last64, 3), (last64 as u64 * 8 * NANOS_PER_SEC).div_ceil(3));
    }
}
