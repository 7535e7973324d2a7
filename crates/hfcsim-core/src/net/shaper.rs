//! The DOCSIS rate cap: a token bucket that delays (never drops) what exceeds it.
//!
//! Rules and their sources:
//! - DOCSIS MULPI Annex C.2.2.7.2 (RFI 1.1 C.2.2.5.2), Maximum Sustained Traffic Rate R and
//!   C.2.2.7.3 (C.2.2.5.3), Maximum Traffic Burst B: over any interval T the bytes forwarded are at
//!   most T * R / 8 + B. A bucket of depth B fills at R and a frame leaves only when the bucket
//!   holds its bytes, which it takes. The bucket starts full.
//! - Which bytes count (the same Annex): the MAC frame "from the byte following the MAC header HCS
//!   to the end of the CRC", the Ethernet frame. The caller passes that size
//!   (`hfcsim.docsis.ethernet_frame_bytes`, handed down as a frame overhead).
//! - Peak Traffic Rate (MULPI C.2.2.7.10, DOCSIS 3.0): a second bucket of rate P whose depth is
//!   one maximum frame, 1522 bytes; a frame must conform to both.
//! - A frame larger than the depth (chosen; the spec requires B >= 1522 so it does not happen
//!   with its values): it leaves when the bucket is full and leaves it in debt, so the long-run
//!   rate is still R.
//!
//! Arithmetic is exact: tokens are kept in bit-nanoseconds (R b/s for dt ns gives R * dt), so a
//! conforming time is the first nanosecond at which the bucket holds enough.

use crate::time::{SimTime, NANOS_PER_SEC};

/// Bit-nanoseconds in one byte.
const BYTE: i128 = 8 * NANOS_PER_SEC as i128;

/// Depth of the peak-rate bucket: MULPI C.2.2.7.10, "the token bucket size is 1522 bytes".
pub const PEAK_BURST_BYTES: u64 = 1522;

/// One bucket: rate, depth and the tokens it held at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bucket {
    rate_bps: u64,
    depth: i128,
    tokens: i128,
    at: SimTime,
}

impl Bucket {
    fn new(rate_bps: u64, depth_bytes: u64) -> Bucket {
        assert!(rate_bps > 0, "a token bucket needs a positive rate");
        let depth = depth_bytes.max(1) as i128 * BYTE;
        Bucket { rate_bps, depth, tokens: depth, at: SimTime::ZERO }
    }

    /// Tokens at `t` (>= `at`), capped at the depth.
    fn tokens_at(&self, t: SimTime) -> i128 {
        let filled = self.rate_bps as i128 * (t.0.saturating_sub(self.at.0)) as i128;
        (self.tokens + filled).min(self.depth)
    }

    /// First time >= `now` at which the bucket holds `need` (at most its depth).
    fn conforms_at(&self, now: SimTime, need: i128) -> SimTime {
        let need = need.min(self.depth);
        let have = self.tokens_at(now.max(self.at));
        let start = now.max(self.at);
        if have >= need {
            return start;
        }
        let wait = ((need - have) as u128).div_ceil(self.rate_bps as u128);
        start + u64::try_from(wait).unwrap_or(u64::MAX)
    }

    fn take(&mut self, at: SimTime, need: i128) {
        self.tokens = self.tokens_at(at.max(self.at)) - need;
        self.at = at.max(self.at);
    }
}

/// A service flow's rate cap: the sustained-rate bucket and an optional peak-rate bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    sustained: Bucket,
    peak: Option<Bucket>,
}

impl TokenBucket {
    /// Rate `rate_bps` with a burst of `burst_bytes`, and optionally a peak rate (its bucket one
    /// maximum frame deep). Both start full.
    ///
    /// # Panics
    /// If a rate is 0.
    pub fn new(rate_bps: u64, burst_bytes: u64, peak_bps: Option<u64>) -> TokenBucket {
        TokenBucket {
            sustained: Bucket::new(rate_bps, burst_bytes),
            peak: peak_bps.map(|p| Bucket::new(p, PEAK_BURST_BYTES)),
        }
    }

    /// The sustained rate R (b/s).
    pub fn rate_bps(&self) -> u64 {
        self.sustained.rate_bps
    }

    /// The earliest time >= `now` at which a frame of `bytes` conforms to every bucket.
    pub fn conforms_at(&self, now: SimTime, bytes: u64) -> SimTime {
        let need = bytes as i128 * BYTE;
        let t = self.sustained.conforms_at(now, need);
        match &self.peak {
            Some(p) => {
                // Both buckets only fill, so the later of the two times suits both.
                t.max(p.conforms_at(now, need))
            }
            None => t,
        }
    }

    /// A frame of `bytes` leaves at `at` (no earlier than `conforms_at`): every bucket pays.
    pub fn take(&mut self, at: SimTime, bytes: u64) {
        let need = bytes as i128 * BYTE;
        self.sustained.take(at, need);
        if let Some(p) = self.peak.as_mut() {
            p.take(at, need);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    /// Send `frames` frames of `bytes` as early as the bucket allows from t = 0; their times.
    fn send_all(tb: &mut TokenBucket, frames: usize, bytes: u64) -> Vec<u64> {
        let mut t = SimTime::ZERO;
        (0..frames)
            .map(|_| {
                t = tb.conforms_at(t, bytes);
                tb.take(t, bytes);
                t.0
            })
            .collect()
    }

    #[test]
    fn a_burst_of_b_then_rate_r() {
        // R = 1 Mb/s, B = 3000 B, frames of 1500 B: two leave at once (the burst), then one every
        // 1500 * 8 / 1e6 = 12 ms.
        let mut tb = TokenBucket::new(1_000_000, 3000, None);
        assert_eq!(send_all(&mut tb, 5, 1500), vec![0, 0, 12 * MS, 24 * MS, 36 * MS]);
    }

    #[test]
    fn an_idle_bucket_refills_to_its_depth_only() {
        let mut tb = TokenBucket::new(1_000_000, 3000, None);
        send_all(&mut tb, 2, 1500);
        // Idle for a second: the bucket holds 3000 B again, not 125 000.
        let t = SimTime(1000 * MS);
        for _ in 0..2 {
            assert_eq!(tb.conforms_at(t, 1500), t);
            tb.take(t, 1500);
        }
        assert_eq!(tb.conforms_at(t, 1500), t + 12 * MS);
    }

    #[test]
    fn conforming_time_is_rounded_up_to_the_nanosecond() {
        // 64-byte frames at 3 Mb/s: 512 bits take 170 666.67 ns, so the wait is 170 667 ns.
        let mut tb = TokenBucket::new(3_000_000, 64, None);
        assert_eq!(send_all(&mut tb, 3, 64), vec![0, 170_667, 341_334]);
    }

    #[test]
    fn a_peak_rate_spaces_out_the_burst() {
        // R = 1 Mb/s, B = 6000 B, P = 10 Mb/s (bucket 1522 B): 1500-byte frames leave 1.2 ms
        // apart while the sustained bucket lasts, then at R.
        let mut tb = TokenBucket::new(1_000_000, 6000, Some(10_000_000));
        let t = send_all(&mut tb, 6, 1500);
        // The peak bucket starts full (1522 B): the first frame at 0 leaves 22 B, so the second
        // waits for 1478 B at 10 Mb/s, 1.1824 ms; after that one frame per 1.2 ms.
        assert_eq!(&t[..4], &[0, 1_182_400, 2_382_400, 3_582_400]);
        // The sustained bucket: 6000 B + 125 B/ms must cover 7500 B for the 5th frame, at 12 ms,
        // and 9000 B for the 6th, at 24 ms.
        assert_eq!(t[4], 12 * MS);
        assert_eq!(t[5], 24 * MS);
    }

    #[test]
    fn a_frame_larger_than_the_burst_waits_for_a_full_bucket_and_leaves_a_debt() {
        let mut tb = TokenBucket::new(1_000_000, 1000, None);
        // 2000 B: leaves when the bucket is full (at once), then the debt of 1000 B plus the next
        // 1000 B take 16 ms to earn.
        assert_eq!(send_all(&mut tb, 2, 2000), vec![0, 16 * MS]);
    }

    proptest! {
        /// MULPI C.2.2.7.2: in every interval [t_i, t_j] the bytes sent are at most
        /// (t_j - t_i) * R / 8 + B.
        #[test]
        fn never_more_than_t_r_over_8_plus_b(
            rate in 10_000u64..100_000_000,
            burst in 1522u64..20_000,
            sizes in prop::collection::vec(64u64..1522, 1..60),
            gaps in prop::collection::vec(0u64..5_000_000, 60),
        ) {
            let mut tb = TokenBucket::new(rate, burst, None);
            let mut t = SimTime::ZERO;
            let mut sent = Vec::new();
            for (i, &b) in sizes.iter().enumerate() {
                t = tb.conforms_at(t + gaps[i], b);
                tb.take(t, b);
                sent.push((t.0, b));
            }
            for i in 0..sent.len() {
                let mut bytes = 0u128;
                for j in i..sent.len() {
                    bytes += sent[j].1 as u128;
                    let allowed = (sent[j].0 - sent[i].0) as u128 * rate as u128 + burst as u128 * 8 * 1_000_000_000;
                    prop_assert!(bytes * 8 * 1_000_000_000 <= allowed);
                }
            }
        }
    }
}
