//! How long packets waited at one place, and what each arrival found there: the counters every
//! buffer of the network keeps (a link's queue, a service flow's queue, a modem's request queue),
//! so that a run says where its packets waited (docs/model/run.md: the `waits:` line).
//!
//! Percentiles come from a log-linear histogram: a value v > 0 falls in the bucket of its octave
//! (2^e <= v < 2^(e+1)) split into `SUB` equal parts, so a bucket is at most 1/SUB = 3.1 % of its
//! value wide; a percentile is reported as its bucket's midpoint, within 1.6 % of the exact order
//! statistic (the nearest-rank percentile of the recorded values). Zero, the most common wait,
//! is counted apart and costs no histogram. Buckets are allocated only over the range of values
//! seen, so a place that never queues holds no histogram at all.

use crate::time::Nanos;

/// Sub-buckets per octave (a power of two).
const SUB_BITS: u32 = 5;
const SUB: u64 = 1 << SUB_BITS;

/// A histogram of non-negative integers (module comment).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogHist {
    zeros: u64,
    /// Bucket index of `counts[0]`.
    first: u32,
    counts: Vec<u64>,
}

/// The bucket of `v` > 0: values below 2 * SUB are their own bucket, above they share.
#[inline]
fn bucket(v: u64) -> u32 {
    if v < 2 * SUB {
        return v as u32;
    }
    let e = 63 - v.leading_zeros(); // 2^e <= v
    let shift = e - SUB_BITS;
    // Octave e >= SUB_BITS + 1 starts at bucket (e - SUB_BITS + 1) * SUB.
    ((e - SUB_BITS + 1) as u64 * SUB + ((v >> shift) - SUB)) as u32
}

/// The values of bucket `b`: [low, high).
fn bounds(b: u32) -> (u64, u64) {
    let b = b as u64;
    if b < 2 * SUB {
        return (b, b + 1);
    }
    let e = b / SUB + SUB_BITS as u64 - 1;
    let shift = e - SUB_BITS as u64;
    let low = (SUB + b % SUB) << shift;
    (low, low + (1 << shift))
}

impl LogHist {
    #[inline]
    pub fn record(&mut self, v: u64) {
        if v == 0 {
            self.zeros += 1;
            return;
        }
        // The common case, a bucket within the range already held: one subtraction (a bucket below
        // `first` wraps to an index past the end) and one bounds check.
        let b = bucket(v);
        match self.counts.get_mut(b.wrapping_sub(self.first) as usize) {
            Some(c) => *c += 1,
            None => self.grow_and_record(b),
        }
    }

    /// A bucket outside the range held: widen the range to it.
    #[cold]
    #[inline(never)]
    fn grow_and_record(&mut self, b: u32) {
        if self.counts.is_empty() {
            self.first = b;
            self.counts.push(0);
        } else if b < self.first {
            let grow = (self.first - b) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = b;
        } else if (b - self.first) as usize >= self.counts.len() {
            self.counts.resize((b - self.first) as usize + 1, 0);
        }
        self.counts[(b - self.first) as usize] += 1;
    }

    pub fn count(&self) -> u64 {
        self.zeros + self.counts.iter().sum::<u64>()
    }

    /// The nearest-rank q-quantile (0 < q <= 1), as its bucket's midpoint (0 exactly for zeros);
    /// None without values.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        self.quantiles([q])[0]
    }

    /// Several nearest-rank quantiles in one pass over the buckets, `qs` ascending.
    pub fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [Option<u64>; N] {
        self.quantiles_of(self.count(), qs)
    }

    /// `quantiles`, the histogram's count `n` known (no pass to count it).
    pub fn quantiles_of<const N: usize>(&self, n: u64, qs: [f64; N]) -> [Option<u64>; N] {
        debug_assert_eq!(n, self.count());
        let mut out = [None; N];
        if n == 0 {
            return out;
        }
        // Nearest rank: the ceil(q * n)-th smallest value, at least the first.
        let ranks = qs.map(|q| ((q * n as f64).ceil() as u64).clamp(1, n));
        let mut k = 0;
        while k < N && ranks[k] <= self.zeros {
            out[k] = Some(0);
            k += 1;
        }
        let mut seen = self.zeros;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            while k < N && seen >= ranks[k] {
                let (low, high) = bounds(self.first + i as u32);
                out[k] = Some(low + (high - 1 - low) / 2);
                k += 1;
            }
            if k == N {
                break;
            }
        }
        out
    }

    /// Add another histogram's counts.
    pub fn merge(&mut self, o: &LogHist) {
        self.zeros += o.zeros;
        if o.counts.is_empty() {
            return;
        }
        let last = o.first + o.counts.len() as u32 - 1;
        if self.counts.is_empty() {
            self.first = o.first;
            self.counts = o.counts.clone();
            return;
        }
        if o.first < self.first {
            let grow = (self.first - o.first) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = o.first;
        }
        if (last - self.first) as usize >= self.counts.len() {
            self.counts.resize((last - self.first) as usize + 1, 0);
        }
        for (i, &c) in o.counts.iter().enumerate() {
            self.counts[(o.first + i as u32 - self.first) as usize] += c;
        }
    }
}

/// One place's waits (sojourn in its buffer, ns) and occupancies (bytes an arrival found there).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WaitStats {
    /// Packets that left the buffer (served), and the sum and largest of their waits.
    pub served: u64,
    pub wait_sum: u128,
    pub wait_max: Nanos,
    pub waits: LogHist,
    /// Bytes held when each packet arrived (before it joined), and the most any arrival found.
    pub found: LogHist,
    pub found_max: u64,
    /// Packets that arrived.
    pub arrivals: u64,
}

impl WaitStats {
    /// A packet arrives and finds `held` bytes.
    #[inline]
    pub fn arrival(&mut self, held: u64) {
        self.arrivals += 1;
        self.found.record(held);
        if held > self.found_max {
            self.found_max = held;
        }
    }

    /// A packet leaves after waiting `wait` ns.
    #[inline]
    pub fn served(&mut self, wait: Nanos) {
        self.served += 1;
        self.wait_sum += wait as u128;
        if wait > self.wait_max {
            self.wait_max = wait;
        }
        self.waits.record(wait);
    }

    pub fn merge(&mut self, o: &WaitStats) {
        self.served += o.served;
        self.wait_sum += o.wait_sum;
        self.wait_max = self.wait_max.max(o.wait_max);
        self.waits.merge(&o.waits);
        self.found.merge(&o.found);
        self.found_max = self.found_max.max(o.found_max);
        self.arrivals += o.arrivals;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_are_exact_below_64_and_about_3_percent_wide_above() {
        for v in 1..64 {
            assert_eq!(bounds(bucket(v)), (v, v + 1));
        }
        // 64 = 2^6: octave 6, width 2^(6-5) = 2.
        assert_eq!(bounds(bucket(64)), (64, 66));
        assert_eq!(bounds(bucket(65)), (64, 66));
        assert_eq!(bounds(bucket(127)), (126, 128));
        assert_eq!(bounds(bucket(128)), (128, 132));
        // 1 s in ns: 2^29 <= 1e9 < 2^30, width 2^24 = 16.8 ms.
        let (lo, hi) = bounds(bucket(1_000_000_000));
        assert!(lo <= 1_000_000_000 && 1_000_000_000 < hi && hi - lo == 1 << 24);
    }

    #[test]
    fn quantiles_by_nearest_rank() {
        let mut h = LogHist::default();
        for v in [0, 0, 5, 10, 20] {
            h.record(v);
        }
        // Ranks: p20 -> 1st (0), p50 -> 3rd (5), p80 -> 4th (10), p100 -> 5th (20).
        assert_eq!(h.quantile(0.2), Some(0));
        assert_eq!(h.quantile(0.5), Some(5));
        assert_eq!(h.quantile(0.8), Some(10));
        assert_eq!(h.quantile(1.0), Some(20));
        assert_eq!(LogHist::default().quantile(0.5), None);
    }

    proptest! {
        /// Every quantile is within half a bucket (1.6 %) of the exact nearest-rank order statistic,
        /// and merging two histograms is recording both sets.
        #[test]
        fn quantiles_are_within_a_bucket(values in proptest::collection::vec(0u64..5_000_000_000, 1..300),
                                         more in proptest::collection::vec(0u64..5_000_000_000, 0..100),
                                         q in 0.01f64..1.0) {
            let mut h = LogHist::default();
            for &v in &values { h.record(v); }
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
            let exact = sorted[rank - 1];
            let got = h.quantile(q).unwrap();
            prop_assert!((got as f64 - exact as f64).abs() <= exact as f64 / 64.0 + 0.5, "{} vs {}", got, exact);
            let mut a = h.clone();
            let mut b = LogHist::default();
            for &v in &more { b.record(v); }
            a.merge(&b);
            let mut both = h.clone();
            for &v in &more { both.record(v); }
            prop_assert_eq!(a.count(), both.count());
            for q in [0.1, 0.5, 0.9, 0.99, 1.0] {
                prop_assert_eq!(a.quantile(q), both.quantile(q));
            }
        }
    }
}
