//! Seeded random streams, one per component (docs/design.md, principle 2).
//!
//! A stream is derived from `(run seed, component id)` by SplitMix64 mixing, so adding a
//! component never shifts another component's randomness, and no stream ever falls back to
//! operating-system entropy.

use rand_core::Rng;
use rand_pcg::Pcg64Mcg;

/// Component ids: stable numbers naming who draws from a stream.
pub mod component {
    /// Media loss on link `i` (in topology order).
    pub const fn link_loss(i: u64) -> u64 {
        0x1000 + i
    }
    /// Sender processing-time jitter of flow `i`.
    pub const fn flow_jitter(i: u64) -> u64 {
        0x3000 + i
    }
    /// Reordering delay of flow `i`'s access path (`flows.*.reorder_jitter_s`).
    pub const fn flow_reorder(i: u64) -> u64 {
        0x5_0000_0000 + i
    }
    /// Timer phases of host `i` (0 = the server, 1 + m = the PC behind modem m).
    pub const fn host_clock(i: u64) -> u64 {
        0x2000 + i
    }
    /// Contention choices (802.14 slot picks, DOCSIS backoff draws) of upstream station `i`.
    pub const fn mac_station(i: u64) -> u64 {
        0x1_0000_0000 + i
    }
    /// Poisson background arrivals at upstream station `i`.
    pub const fn mac_background(i: u64) -> u64 {
        0x2_0000_0000 + i
    }
    /// Link `i` of an ATM-HFC network beyond its two channels (topology::atm_hfc): lossless, so
    /// never drawn from today, but named so that a loss added later stays independent.
    pub const fn atm_link(i: u64) -> u64 {
        0x3_0000_0000 + i
    }
    /// Service queue `i` of a DOCSIS network (AQM draws): 2m and 2m + 1 for modem m's downstream
    /// and upstream service flows.
    pub const fn service_queue(i: u64) -> u64 {
        0x4_0000_0000 + i
    }
    /// Contention choices of sub-station `sub` (1..) of bonded upstream station `i` (access/bonding.rs;
    /// sub-station 0 draws from `mac_station(i)`).
    pub const fn mac_bonded(i: u64, sub: u64) -> u64 {
        0x6_0000_0000 + (sub << 24) + i
    }
    /// Poisson background arrivals of sub-station `sub` of bonded station `i` (never drawn: the
    /// background load goes on the first channel), named so it stays independent.
    pub const fn mac_bonded_background(i: u64, sub: u64) -> u64 {
        0x7_0000_0000 + (sub << 24) + i
    }
    /// Link `i` of a DOCSIS network beyond its channels and CM-LAN links (Ethernet, the pipe, and
    /// the FIFO upstream channel, whose media loss draws from it).
    pub const fn docsis_link(i: u64) -> u64 {
        0x9_0000_0000 + i
    }
    /// Contention choices of the low-latency service flow's station of modem `i` (LLD on the
    /// docsis kind, access/serviceflow.rs).
    pub const fn mac_low_latency(i: u64) -> u64 {
        0xA_0000_0000 + i
    }
    /// BBR's gain-cycle phases of flow `i` (tcp/bbr.rs, `bbr_reset_probe_bw_mode`).
    pub const fn bbr_cycle(i: u64) -> u64 {
        0x8_0000_0000 + i
    }
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// An independent pseudo-random stream (PCG 64-bit MCG).
#[derive(Clone, Debug)]
pub struct Stream(Pcg64Mcg);

impl Stream {
    pub fn new(seed: u64, component: u64) -> Stream {
        let hi = splitmix64(seed ^ splitmix64(component));
        let lo = splitmix64(hi ^ component.rotate_left(17));
        Stream(Pcg64Mcg::new(((hi as u128) << 64) | lo as u128 | 1))
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`; draws nothing when `p == 0` so a lossless link costs nothing.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        ((self.0.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Stream::new(7, 1).below(1 << 40)).collect();
        let mut s = Stream::new(7, 1);
        let b: Vec<u64> = (0..4).map(|_| s.below(1 << 40)).collect();
        assert_eq!(a[0], b[0]);
        let mut other = Stream::new(7, 2);
        let mut same = Stream::new(7, 1);
        assert_ne!(other.below(1 << 40), same.below(1 << 40));
        let mut reseeded = Stream::new(8, 1);
        let mut orig = Stream::new(7, 1);
        assert_ne!(reseeded.below(1 << 40), orig.below(1 << 40));
    }

    #[test]
    fn bernoulli_rate_is_close() {
        let mut s = Stream::new(1, 1);
        let n = 200_000;
        let hits = (0..n).filter(|_| s.bernoulli(0.01)).count();
        assert!((hits as f64 / n as f64 - 0.01).abs() < 0.002, "{hits}");
        assert!(!Stream::new(1, 1).bernoulli(0.0));
    }
}
