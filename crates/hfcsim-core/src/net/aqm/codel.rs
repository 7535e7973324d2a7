//! CoDel (RFC 8289): drops at dequeue, from the time the packet at the head has spent in the
//! queue (its sojourn time).
//!
//! The rules, as RFC 8289 Sec. 5's pseudocode (`dodequeue`, `dequeue`, `control_law`) has them:
//! - a dequeued packet is "above" when its sojourn time is at least TARGET and more than
//!   MAXPACKET bytes stay queued after it (Sec. 5.4: below one MTU the queue cannot be smaller,
//!   so a slow link is not starved); otherwise `first_above_time` is cleared;
//! - the first "above" packet sets `first_above_time = now + INTERVAL`; a packet dequeued "above"
//!   at or after that time may be dropped (`ok_to_drop`; Sec. 5.4);
//! - not dropping and `ok_to_drop`: drop the packet, take the next, enter the dropping state,
//!   with `count = 1`, or `count = count - lastcount` if that is more than 1 and the last
//!   dropping state was recent, `now - drop_next < 16 * INTERVAL` (Sec. 5.5, "the Linux
//!   version"); `drop_next = now + INTERVAL / sqrt(count)`; `lastcount = count`;
//! - dropping: a packet that is not `ok_to_drop` ends the state; while `now >= drop_next` and
//!   still dropping, drop the packet, `count += 1`, take the next, and if that one is still
//!   `ok_to_drop` set `drop_next = drop_next + INTERVAL / sqrt(count)` (Sec. 5.6, the control law:
//!   from the previous drop time, not from now), else leave the state;
//! - an empty queue clears `first_above_time` (and so ends the dropping state at once).
//!
//! Arithmetic: time in integer nanoseconds. The control law's INTERVAL / sqrt(count) is computed
//! in f64 (IEEE 754 sqrt and division are correctly rounded, so the result is the same on every
//! platform) and rounded to the nearest nanosecond: 100 ms, 70 710 678, 57 735 027, 50 000 000,
//! 44 721 360 ns for count 1 to 5. Linux's fixed-point reciprocal square root differs from these
//! by a few nanoseconds.
//!
//! Left out: ECN marking (the simulator has no ECN); Linux's learning of MAXPACKET from the
//! largest packet seen (here a constant, `CodelConfig::max_packet_bytes`).

use crate::time::{Nanos, SimTime};

/// CoDel's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelConfig {
    /// TARGET: the acceptable standing queue delay.
    pub target: Nanos,
    /// INTERVAL: how long the delay must stay above TARGET before a drop; the control law's base.
    pub interval: Nanos,
    /// MAXPACKET in bytes: no drop while at most this many bytes stay queued.
    pub max_packet_bytes: u64,
}

impl CodelConfig {
    /// RFC 8289's defaults.
    pub fn rfc8289() -> CodelConfig {
        CodelConfig {
            // RFC 8289 Sec. 4.4 / 5.1: TARGET = 5 ms.
            target: 5_000_000,
            // Sec. 4.3 / 5.1: INTERVAL = 100 ms.
            interval: 100_000_000,
            // Sec. 5.4: maxpacket is "the maximum packet size ... an MTU". 1500 bytes, the IP MTU
            // of Ethernet: this simulator's queues count packets in IP bytes (Packet::size),
            // so one full-size packet is 1500 of them.
            max_packet_bytes: 1500,
        }
    }
}

/// A CoDel instance (module comment).
#[derive(Clone, Debug)]
pub struct Codel {
    cfg: CodelConfig,
    first_above_time: Option<SimTime>,
    drop_next: SimTime,
    count: u32,
    lastcount: u32,
    dropping: bool,
}

/// CoDel's decision on one departing packet (`Codel::judge`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judgement {
    Keep,
    Drop,
    /// An ECN-capable packet marked CE where it would have been dropped (RFC 8289 Sec. 5).
    Mark,
}

/// One `dodequeue`: the head taken, and whether CoDel may drop it.
struct Head<P> {
    item: Option<P>,
    ok_to_drop: bool,
}

impl Codel {
    pub fn new(cfg: CodelConfig) -> Codel {
        assert!(cfg.interval > 0, "CoDel needs INTERVAL > 0");
        Codel { cfg, first_above_time: None, drop_next: SimTime::ZERO, count: 0, lastcount: 0, dropping: false }
    }

    pub fn config(&self) -> &CodelConfig {
        &self.cfg
    }

    /// RFC 8289 Sec. 5.6: the next drop time, INTERVAL / sqrt(count) after `t` (module comment).
    fn control_law(&self, t: SimTime, count: u32) -> SimTime {
        let step = (self.cfg.interval as f64 / (count.max(1) as f64).sqrt()).round() as Nanos;
        t + step
    }

    /// RFC 8289 Sec. 5.4, `dodequeue`.
    fn dodequeue<P>(&mut self, now: SimTime, pop: &mut impl FnMut() -> Option<(P, Nanos, u64)>) -> Head<P> {
        let Some((item, sojourn, bytes_left)) = pop() else {
            // Queue empty: it cannot be above TARGET.
            self.first_above_time = None;
            return Head { item: None, ok_to_drop: false };
        };
        let mut ok_to_drop = false;
        if sojourn < self.cfg.target || bytes_left <= self.cfg.max_packet_bytes {
            // Went below: stay below for at least INTERVAL.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                // Just went above: if still above at first_above_time, it is OK to drop.
                None => self.first_above_time = Some(now + self.cfg.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        Head { item: Some(item), ok_to_drop }
    }

    /// RFC 8289 dequeue at `now`: `pop` hands out the queue's head (the item, its sojourn time,
    /// the bytes left queued after it is taken), None when empty. Heads CoDel drops are pushed
    /// to `dropped`; returns the item to send, if any.
    pub fn dequeue<P>(
        &mut self,
        now: SimTime,
        pop: impl FnMut() -> Option<(P, Nanos, u64)>,
        dropped: &mut Vec<P>,
    ) -> Option<P> {
        self.dequeue_ecn(now, pop, |_| false, dropped).0
    }

    /// `dequeue` with ECN (RFC 8289 Sec. 5: "mark instead of drop"): where CoDel would drop an
    /// ECN-capable head (`ect`) it marks it and sends it, and its drop loop ends there, the mark
    /// counting as the drop (`count`, `drop_next` move on as for one; Linux `codel_dequeue` does
    /// the same). Returns the item to send and whether it is to be marked CE.
    pub fn dequeue_ecn<P>(
        &mut self,
        now: SimTime,
        mut pop: impl FnMut() -> Option<(P, Nanos, u64)>,
        ect: impl Fn(&P) -> bool,
        dropped: &mut Vec<P>,
    ) -> (Option<P>, bool) {
        let mut r = self.dodequeue(now, &mut pop);
        let mut marked = false;
        if self.dropping {
            if !r.ok_to_drop {
                // Sojourn time below TARGET: leave the dropping state.
                self.dropping = false;
            }
            // Sec. 5.5: time for the next drop(s); a large backlog may need several now.
            while self.dropping && now >= self.drop_next {
                self.count = self.count.saturating_add(1);
                if r.item.as_ref().is_some_and(&ect) {
                    marked = true;
                    self.drop_next = self.control_law(self.drop_next, self.count);
                    break;
                }
                dropped.extend(r.item.take());
                r = self.dodequeue(now, &mut pop);
                if !r.ok_to_drop {
                    self.dropping = false;
                } else {
                    // Sec. 5.6: from the previous drop time.
                    self.drop_next = self.control_law(self.drop_next, self.count);
                }
            }
        } else if r.ok_to_drop {
            // Sojourn time above TARGET for INTERVAL: drop (or mark) and enter the dropping state.
            if r.item.as_ref().is_some_and(&ect) {
                marked = true;
            } else {
                dropped.extend(r.item.take());
                r = self.dodequeue(now, &mut pop);
            }
            self.dropping = true;
            // Sec. 5.5: if the last dropping state was recent, start from the drop rate that
            // controlled the queue then. (drop_next may lie after now: that counts as recent.)
            let delta = self.count.wrapping_sub(self.lastcount);
            self.count = 1;
            if delta > 1 && now.0.saturating_sub(self.drop_next.0) < 16 * self.cfg.interval {
                self.count = delta;
            }
            self.drop_next = self.control_law(now, self.count);
            self.lastcount = self.count;
        }
        (r.item, marked)
    }

    /// RFC 8289's dequeue for a queue whose packets leave one by one in transmissions it does not
    /// choose (a DOCSIS modem's grants, access/serviceflow.rs): the packet leaving at `now` after
    /// `sojourn`, `bytes_left` staying behind it, is judged alone, and the drop loop's "take the
    /// next packet" is the next call. The rules and the control law are `dequeue`'s; a drop
    /// advances `drop_next` at once (the RFC advances it once the next packet is known still to
    /// be above target, which the next call checks).
    pub fn judge(&mut self, now: SimTime, sojourn: Nanos, bytes_left: u64, ect: bool) -> Judgement {
        let mut once = Some(((), sojourn, bytes_left));
        let r = self.dodequeue(now, &mut || once.take());
        let drop = if ect { Judgement::Mark } else { Judgement::Drop };
        if self.dropping {
            if !r.ok_to_drop {
                self.dropping = false;
                return Judgement::Keep;
            }
            if now >= self.drop_next {
                self.count = self.count.saturating_add(1);
                self.drop_next = self.control_law(self.drop_next, self.count);
                return drop;
            }
            return Judgement::Keep;
        }
        if !r.ok_to_drop {
            return Judgement::Keep;
        }
        self.dropping = true;
        // Sec. 5.5, as in `dequeue`.
        let delta = self.count.wrapping_sub(self.lastcount);
        self.count = 1;
        if delta > 1 && now.0.saturating_sub(self.drop_next.0) < 16 * self.cfg.interval {
            self.count = delta;
        }
        self.drop_next = self.control_law(now, self.count);
        self.lastcount = self.count;
        drop
    }

    /// Drops in the current (or last) dropping state, as RFC 8289's `count`.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Whether CoDel is in its dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// When the next drop is due while dropping (RFC 8289's `drop_next`).
    pub fn drop_next(&self) -> SimTime {
        self.drop_next
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: Nanos = 1_000_000;
    const NONE: Vec<u32> = Vec::new();

    /// A queue that never runs dry: every head has the same sojourn time and leaves `left`
    /// bytes behind. Items are numbered in order.
    struct Standing {
        next: u32,
        sojourn: Nanos,
        left: u64,
    }

    impl Standing {
        fn new(sojourn: Nanos) -> Standing {
            Standing { next: 0, sojourn, left: 100_000 }
        }

        /// One CoDel dequeue at `t` ns: (sent item, items dropped).
        fn deq(&mut self, c: &mut Codel, t: Nanos) -> (Option<u32>, Vec<u32>) {
            let mut dropped = Vec::new();
            let (sojourn, left) = (self.sojourn, self.left);
            let next = &mut self.next;
            let sent = c.dequeue(
                SimTime(t),
                || {
                    *next += 1;
                    Some((*next - 1, sojourn, left))
                },
                &mut dropped,
            );
            (sent, dropped)
        }
    }

    #[test]
    fn control_law_steps_in_nanoseconds() {
        let c = Codel::new(CodelConfig::rfc8289());
        let steps: Vec<Nanos> = (1..=5).map(|n| c.control_law(SimTime::ZERO, n).0).collect();
        // 100 ms / sqrt(n): 100, 70.710678118..., 57.735026918..., 50, 44.721359549... ms.
        assert_eq!(steps, [100_000_000, 70_710_678, 57_735_027, 50_000_000, 44_721_360]);
    }

    #[test]
    fn standing_queue_timeline() {
        // Sojourn 10 ms > TARGET 5 ms at every dequeue, 100 kB behind the head.
        let mut c = Codel::new(CodelConfig::rfc8289());
        let mut q = Standing::new(10 * MS);
        // t = 0: first above; first_above_time = 100 ms. Sent, no drop.
        assert_eq!(q.deq(&mut c, 0), (Some(0), NONE));
        // Up to 1 ns before 100 ms: still no drop.
        assert_eq!(q.deq(&mut c, 50 * MS), (Some(1), NONE));
        assert_eq!(q.deq(&mut c, 100 * MS - 1), (Some(2), NONE));
        assert!(!c.dropping());
        // t = 100 ms: first drop; count 1, drop_next = 200 ms.
        assert_eq!(q.deq(&mut c, 100 * MS), (Some(4), vec![3]));
        assert!(c.dropping());
        assert_eq!((c.count(), c.drop_next()), (1, SimTime(200 * MS)));
        // Between drops nothing is dropped.
        assert_eq!(q.deq(&mut c, 200 * MS - 1), (Some(5), NONE));
        // The drops then come at drop_next += 100 ms / sqrt(count):
        // 200 ms (count 2, next +70 710 678), 270 710 678 (count 3, next +57 735 027),
        // 328 445 705 (count 4, next +50 000 000), 378 445 705 (count 5, next +44 721 360),
        // 423 167 065.
        let drops = [200_000_000, 270_710_678, 328_445_705, 378_445_705, 423_167_065];
        for (k, &t) in drops.iter().enumerate() {
            assert_eq!(q.deq(&mut c, t - 1).1, NONE, "just before drop {}", k + 2);
            let (_, d) = q.deq(&mut c, t);
            assert_eq!(d.len(), 1, "drop {} at {t}", k + 2);
            assert_eq!(c.count(), k as u32 + 2);
        }
        assert_eq!(c.drop_next(), SimTime(423_167_065 + 40_824_829));
        // A dequeue long after drop_next catches up: several drops at once, each drop_next
        // from the previous one, until drop_next passes now.
        let (_, d) = q.deq(&mut c, 600 * MS);
        // count 7 -> next 463 991 894 + 37 796 447 = 501 788 341; count 8 -> + 35 355 339 =
        // 537 143 680; count 9 -> + 33 333 333 = 570 477 013; count 10 -> + 31 622 777 =
        // 602 099 790 > 600 ms: stop. Drops at 463 991 894, 501.8, 537.1, 570.5 ms: 4.
        assert_eq!(d.len(), 4);
        assert_eq!((c.count(), c.drop_next()), (10, SimTime(602_099_790)));
    }

    #[test]
    fn leaves_dropping_when_sojourn_below_target() {
        let mut c = Codel::new(CodelConfig::rfc8289());
        let mut q = Standing::new(10 * MS);
        q.deq(&mut c, 0);
        q.deq(&mut c, 100 * MS);
        assert!(c.dropping());
        // A head at 4 ms (< 5 ms): leave the state, no drop even though drop_next has passed.
        q.sojourn = 4 * MS;
        assert_eq!(q.deq(&mut c, 250 * MS).1, NONE);
        assert!(!c.dropping());
        // Above again: a fresh INTERVAL must pass first.
        q.sojourn = 10 * MS;
        assert_eq!(q.deq(&mut c, 260 * MS).1, NONE);
        assert_eq!(q.deq(&mut c, 360 * MS - 1).1, NONE);
        assert_eq!(q.deq(&mut c, 360 * MS).1.len(), 1);
    }

    #[test]
    fn empty_queue_ends_dropping() {
        let mut c = Codel::new(CodelConfig::rfc8289());
        let mut q = Standing::new(10 * MS);
        q.deq(&mut c, 0);
        q.deq(&mut c, 100 * MS);
        assert!(c.dropping());
        let mut dropped: Vec<u32> = Vec::new();
        assert_eq!(c.dequeue(SimTime(150 * MS), || None, &mut dropped), None);
        assert!(!c.dropping());
        assert!(dropped.is_empty());
    }

    #[test]
    fn count_is_reused_when_dropping_again_within_16_intervals() {
        let mut c = Codel::new(CodelConfig::rfc8289());
        let mut q = Standing::new(10 * MS);
        q.deq(&mut c, 0);
        // Enter at 100 ms (count 1, lastcount 1) and drop at 200, 270.7, 328.4, 378.4 ms:
        // count 5.
        for t in [100 * MS, 200 * MS, 270_710_678, 328_445_705, 378_445_705] {
            assert_eq!(q.deq(&mut c, t).1.len(), 1);
        }
        assert_eq!(c.count(), 5);
        // Below target at 400 ms: out. drop_next is 423 167 065.
        q.sojourn = MS;
        q.deq(&mut c, 400 * MS);
        // Above at 500 ms, ok to drop at 600 ms: 600 ms - drop_next < 1.6 s, so count =
        // count - lastcount = 5 - 1 = 4, and drop_next = 600 ms + 100 ms / sqrt(4) = 650 ms.
        q.sojourn = 10 * MS;
        q.deq(&mut c, 500 * MS);
        assert_eq!(q.deq(&mut c, 600 * MS).1.len(), 1);
        assert_eq!((c.count(), c.drop_next()), (4, SimTime(650 * MS)));
        // Two more drops, at 650 ms (count 5, next + 44 721 360) and 694 721 360 (count 6,
        // next + 40 824 829 = 735 546 189); out at 700 ms. delta = 6 - lastcount 4 = 2.
        assert_eq!(q.deq(&mut c, 650 * MS).1.len(), 1);
        assert_eq!(q.deq(&mut c, 694_721_360).1.len(), 1);
        q.sojourn = MS;
        q.deq(&mut c, 700 * MS);
        assert_eq!((c.count(), c.drop_next()), (6, SimTime(735_546_189)));
        // Back 1 ns less than 16 intervals after drop_next: count = delta = 2, next drop
        // 100 ms / sqrt(2) later. Exactly 16 intervals after: count starts again at 1.
        let recent = 735_546_189 + 16 * 100 * MS - 1;
        for (t0, count, next) in [(recent, 2, recent + 70_710_678), (recent + 1, 1, recent + 1 + 100 * MS)] {
            let mut c = c.clone();
            let mut q = Standing::new(10 * MS);
            q.deq(&mut c, t0 - 100 * MS);
            assert_eq!(q.deq(&mut c, t0).1.len(), 1);
            assert_eq!((c.count(), c.drop_next()), (count, SimTime(next)), "entering at {t0}");
        }
    }

    #[test]
    fn count_of_one_more_drop_is_not_reused() {
        // delta = count - lastcount must be above 1: a state with one extra drop (count 2,
        // lastcount 1) restarts at 1.
        let mut c = Codel::new(CodelConfig::rfc8289());
        let mut q = Standing::new(10 * MS);
        q.deq(&mut c, 0);
        q.deq(&mut c, 100 * MS);
        q.deq(&mut c, 200 * MS);
        assert_eq!(c.count(), 2);
        q.sojourn = MS;
        q.deq(&mut c, 210 * MS);
        q.sojourn = 10 * MS;
        q.deq(&mut c, 220 * MS);
        assert_eq!(q.deq(&mut c, 320 * MS).1.len(), 1);
        assert_eq!(c.count(), 1);
    }

    #[test]
    fn no_drop_with_at_most_maxpacket_left() {
        let mut c = Codel::new(CodelConfig::rfc8289());
        let mut q = Standing::new(50 * MS);
        q.left = 1500;
        for t in (0..2000 * MS).step_by(10 * MS as usize) {
            assert_eq!(q.deq(&mut c, t).1, NONE, "t = {t}");
        }
        assert!(!c.dropping());
        // One byte more: dropping after INTERVAL from the first such head.
        q.left = 1501;
        assert_eq!(q.deq(&mut c, 2000 * MS).1, NONE);
        assert_eq!(q.deq(&mut c, 2100 * MS).1.len(), 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

        #[test]
        fn never_drops_below_target(
            // (time step, sojourn < TARGET, bytes left, heads available)
            steps in proptest::collection::vec(
                (0u64..300_000_000, 0u64..5_000_000, 0u64..1_000_000, 0usize..4),
                1..200,
            ),
        ) {
            let mut c = Codel::new(CodelConfig::rfc8289());
            let mut now = 0;
            for (dt, sojourn, left, heads) in steps {
                now += dt;
                let mut dropped = Vec::new();
                let mut n = heads;
                let _ = c.dequeue(SimTime(now), || (n > 0).then(|| { n -= 1; ((), sojourn, left) }), &mut dropped);
                prop_assert!(dropped.is_empty());
                prop_assert!(!c.dropping());
            }
        }
    }
}
