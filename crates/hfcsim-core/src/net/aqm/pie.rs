//! PIE (RFC 8033) and DOCSIS-PIE (RFC 8034, the algorithm of DOCSIS 3.1 MULPI Annex M) as one
//! state machine: a drop probability updated every T_UPDATE from the queue delay (the control
//! path), and a random drop test for each arriving packet (the data path).
//!
//! The caller owns the queue and the clock. It calls `advance(now, qdelay)` before each enqueue
//! test (and whenever the queue changes), with `qdelay` the delay estimate of the queue as it has
//! been since its previous call; `advance` runs every update due by `now` on that value. The
//! estimate is the caller's: RFC 8033 Sec. 5.2 measures a departure rate or timestamps packets,
//! RFC 8034 divides the queued bytes by the configured service-flow rate (Maximum
//! Sustained Rate and Peak Rate, with the token bucket's state). Updates fall on the ticks
//! `created + k * t_update`, k >= 1.
//!
//! # The rules, each with its source
//!
//! Control path, every T_UPDATE (RFC 8033 Sec. 4.2; RFC 8034 Appendix A):
//! - p = alpha * (qdelay - target) + beta * (qdelay - qdelay_old), delays in seconds, alpha and
//!   beta in 1/s;
//! - auto-tuning (RFC 8033 Sec. 4.2): p is divided by 2048, 512, 128, 32, 8, 2 while drop_prob
//!   is below 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, and kept as is above; DOCSIS-PIE, whose
//!   drop_prob may exceed 1 (see below), also multiplies it by 2, 8, 32 while drop_prob is below
//!   1, below 10, and above;
//! - cap drop adjustment (RFC 8033 Sec. 5.5, used by both): once drop_prob >= 0.1, one update
//!   raises it by at most 0.02;
//! - decay (RFC 8033 Sec. 4.2): drop_prob *= 0.98 when the queue delay is 0 in this sample and
//!   the previous one (the queue idle); RFC 8034 decays when both are below LATENCY_LOW (5 ms)
//!   and instead adds 0.02 when the delay is above LATENCY_HIGH (200 ms);
//! - bounds: drop_prob in [0, 1] (RFC 8033 Sec. 4.2); in DOCSIS-PIE [0, PROB_LOW * MEAN_PKTSIZE /
//!   MIN_PKTSIZE] = [0, 13.6], because the data path scales it by packet size and caps the
//!   result at PROB_LOW (a 64-byte packet can still reach the cap);
//! - burst allowance, RFC 8033 Sec. 4.4: starts at MAX_BURST, decreases by T_UPDATE at each
//!   update, and is set back to MAX_BURST when drop_prob is 0 and both the current and the
//!   previous delay samples are below target/2;
//! - burst protection, RFC 8034 Appendix A (DOCSIS 3.1 Annex M): the allowance is 0 until the
//!   first early drop of a burst, which arms it at MAX_BURST (from "in burst" to "protecting");
//!   while it lasts, the update holds drop_prob at 0 instead of running the controller; once it
//!   has run out and the queue is quiet (as above), the state returns to "in burst", and after
//!   BURST_RESET_TIMEOUT of quiet updates to "not in burst".
//!
//! Data path, for each arriving packet (RFC 8033 Sec. 4.1, Sec. 4.4, Sec. 5.4; RFC 8034
//! Appendix A):
//! - no drop while the burst allowance is above 0;
//! - DOCSIS-PIE, "not in burst": no drop while the queue holds less than a third of the buffer
//!   (`PieConfig::buffer_bytes`); the first packet that finds more starts a burst;
//! - no drop when the last delay sample was below target/2 and drop_prob below 0.2, or when the
//!   queue holds no more than 2 * MEAN_PKTSIZE bytes ("a couple of packets");
//! - DOCSIS-PIE scales the probability by the packet's size, p = min(drop_prob * bytes /
//!   MEAN_PKTSIZE, PROB_LOW);
//! - de-randomization (RFC 8033 Sec. 5.4, optional there, off in `rfc8033()`; part of RFC 8034,
//!   on in `docsis()`): accu_prob sums the probabilities of the packets tested since the last
//!   drop (0 whenever drop_prob is 0); no drop while it is below PROB_LOW = 0.85, a certain drop
//!   at PROB_HIGH = 8.5 or above, else a coin toss with p; every drop zeroes it. In DOCSIS-PIE
//!   the packets let through by the two rules above still add to it (Annex M's order).
//!
//! Left out: ECN marking (RFC 8033 Sec. 5.1; the simulator has no ECN, so no "mark below 10 %,
//! drop above"), the departure-rate estimator (Sec. 5.2; the caller supplies the delay), turning
//! PIE off when the queue is nearly empty (Sec. 5.3, optional), and the tail drop at the buffer's
//! limit, which is the queue's. `PieConfig::max_prob` is only the bound above, not a maximum
//! drop probability at which PIE would give up.
//!
//! Sources and choices where they are silent or disagree:
//! - RFC 8033's decay condition: its Sec. 4.2 decays when both delay samples are 0; some copies
//!   of PIE pseudocode (older drafts) decay below target/2 instead. We follow "both 0", as the
//!   ns-3 model of RFC 8033 and Linux's sch_pie do, and as the caller's idle queue gives.
//! - RFC 8033 gives no number for MEAN_PKTSIZE: 1500 bytes (`PieConfig::rfc8033`).
//! - DOCSIS-PIE's rules are RFC 8034's Appendix A pseudocode (the algorithm of DOCSIS 3.1 MULPI
//!   Annex M), checked against CableLabs' docsis-ns3 model of Annex M (its classic queue);
//!   where the two order the data-path tests, Annex M's order is kept.
//! - The first update falls one T_UPDATE after `Pie::new` (the RFCs start the timer with the
//!   queue).
//!
//! Random draws: one `Stream::bernoulli(p)` per coin toss, none when the decision is certain.
//! Arithmetic: time in integer nanoseconds; the probability and the controller in f64 (the RFCs'
//! own pseudocode), so an update is bit-identical everywhere.

use super::Verdict;
use crate::rng::Stream;
use crate::time::{Nanos, SimTime, NANOS_PER_SEC};

/// Which RFC's rules where the two differ (module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieVariant {
    /// RFC 8033: burst allowance from the start, reset when the queue is quiet.
    Rfc8033,
    /// RFC 8034: burst protection armed by the first drop, controller frozen while it lasts,
    /// drops scaled by packet size, drop_prob up to `max_prob` > 1.
    Docsis,
}

/// PIE's parameters. The constructors give each RFC's defaults; a scenario may change the
/// public fields (e.g. `target`, or `buffer_bytes` for DOCSIS-PIE).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieConfig {
    pub variant: PieVariant,
    /// QDELAY_REF (RFC 8033) / LATENCY_TARGET (RFC 8034).
    pub target: Nanos,
    /// T_UPDATE (RFC 8033) / INTERVAL (RFC 8034): the period of the drop-probability update.
    pub t_update: Nanos,
    /// Weight of the delay's distance from target, in 1/s.
    pub alpha: f64,
    /// Weight of the delay's change since the previous update, in 1/s.
    pub beta: f64,
    /// MAX_BURST: how long after a burst starts no early drop happens.
    pub max_burst: Nanos,
    /// MEAN_PKTSIZE in bytes: "a couple of packets" is 2 of these; DOCSIS-PIE scales by it.
    pub mean_pkt_bytes: u64,
    /// Upper bound of drop_prob (module comment, "bounds").
    pub max_prob: f64,
    /// RFC 8033 Sec. 5.5: at most +0.02 per update once drop_prob >= 0.1.
    pub cap_drop_adjustment: bool,
    /// drop_prob decays by 0.98 when this and the previous delay sample are both below this:
    /// 1 ns for RFC 8033 (both exactly 0), LATENCY_LOW = 5 ms for RFC 8034.
    pub decay_below: Nanos,
    /// RFC 8034's LATENCY_HIGH: drop_prob += 0.02 when the delay is above it. None in RFC 8033.
    pub high_delay: Option<Nanos>,
    /// De-randomization (RFC 8033 Sec. 5.4) on or off.
    pub derandomize: bool,
    /// PROB_LOW: no drop while the accumulated probability is below it; DOCSIS-PIE also caps a
    /// packet's scaled probability at it.
    pub prob_low: f64,
    /// PROB_HIGH: a certain drop once the accumulated probability reaches it.
    pub prob_high: f64,
    /// BURST_RESET_TIMEOUT (DOCSIS-PIE): quiet time after which a new burst is protected again.
    pub burst_reset_timeout: Nanos,
    /// DOCSIS-PIE's BUFFER_SIZE in bytes: no drop outside a burst while the queue holds less than
    /// a third of it. None: unknown, the rule is off (every packet may start a burst).
    pub buffer_bytes: Option<u64>,
    /// ECN (RFC 8033 Sec. 5.1): an ECN-capable packet PIE would drop is marked CE instead while
    /// drop_prob is at most this (`mark_ecnth`, 10%). None: every such packet is dropped.
    pub mark_ecn_th: Option<f64>,
}

const MS: Nanos = 1_000_000;

impl PieConfig {
    /// RFC 8033's defaults.
    pub fn rfc8033() -> PieConfig {
        PieConfig {
            variant: PieVariant::Rfc8033,
            // RFC 8033 Sec. 4.2 QDELAY_REF = 15 ms.
            target: 15 * MS,
            // Sec. 4.2 T_UPDATE = 15 ms.
            t_update: 15 * MS,
            // Sec. 4.2 alpha = 0.125 Hz, beta = 1.25 Hz.
            alpha: 0.125,
            beta: 1.25,
            // Sec. 4.4 MAX_BURST = 150 ms.
            max_burst: 150 * MS,
            // Sec. 4.1 names MEAN_PKTSIZE without a number we could find; 1500 bytes, the
            // Ethernet MTU (Linux's sch_pie uses 2 * MTU for the same test).
            mean_pkt_bytes: 1500,
            // Sec. 4.2: drop_prob bounded to [0, 1].
            max_prob: 1.0,
            // Sec. 5.5 (in the Sec. 4.2 pseudocode too).
            cap_drop_adjustment: true,
            // Sec. 4.2: decay when current and previous delay are both 0.
            decay_below: 1,
            high_delay: None,
            // Sec. 5.4 is optional ("Section 5 ... optional design elements"): off here.
            derandomize: false,
            // Sec. 5.4: 0.85 and 8.5, used only if `derandomize` is switched on.
            prob_low: 0.85,
            prob_high: 8.5,
            burst_reset_timeout: 0,
            buffer_bytes: None,
            // Sec. 5.1: mark_ecnth = 10%; "<=" as Linux's sch_pie (`prob <= MAX_PROB / 10`).
            mark_ecn_th: Some(0.1),
        }
    }

    /// RFC 8034's defaults (DOCSIS 3.1 MULPI Annex M). `buffer_bytes` is the service flow's
    /// buffer, the caller's to set.
    pub fn docsis() -> PieConfig {
        PieConfig {
            variant: PieVariant::Docsis,
            // RFC 8034 Appendix A: LATENCY_TARGET = 10 ms (the DOCSIS default
            // Target Latency).
            target: 10 * MS,
            // Appendix A: INTERVAL = 16 ms.
            t_update: 16 * MS,
            // Appendix A: A = 0.25 Hz, B = 2.5 Hz.
            alpha: 0.25,
            beta: 2.5,
            // Appendix A: MAX_BURST = 142 ms.
            max_burst: 142 * MS,
            // Appendix A: MEAN_PKTSIZE = 1024 bytes.
            mean_pkt_bytes: 1024,
            // Appendix A: PROB_LOW * MEAN_PKTSIZE / MIN_PKTSIZE = 0.85 * 1024 / 64 = 13.6.
            max_prob: 0.85 * 1024.0 / 64.0,
            cap_drop_adjustment: true,
            // Appendix A: LATENCY_LOW = 5 ms, LATENCY_HIGH = 200 ms.
            decay_below: 5 * MS,
            high_delay: Some(200 * MS),
            // Appendix A: de-randomized, PROB_LOW = 0.85, PROB_HIGH = 8.5.
            derandomize: true,
            prob_low: 0.85,
            prob_high: 8.5,
            // Appendix A: BURST_RESET_TIMEOUT = 1 s.
            burst_reset_timeout: 1000 * MS,
            buffer_bytes: None,
            // Chosen: RFC 8034's Appendix A pseudocode (DOCSIS 3.1 Annex M) only drops, and we
            // found no marking rule for DOCSIS-PIE in it; so DOCSIS-PIE drops ECN-capable
            // packets too (the L4S queue of Low Latency DOCSIS is where a DOCSIS AQM marks).
            mark_ecn_th: None,
        }
    }
}

/// DOCSIS-PIE's burst protection (RFC 8034 Annex M).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Burst {
    /// NOT_IN_BURST (Annex M: "inactive").
    Outside,
    /// IN_BURST: drops allowed; the next drop arms the allowance.
    Inside,
    /// IN_BURST_PROTECTING: the allowance runs.
    Protecting,
}

/// What one update reads and writes: if an update leaves it unchanged, so will every later
/// update on the same delay, and `advance` skips them.
#[derive(Clone, Copy, Debug, PartialEq)]
struct ControlState {
    drop_prob: f64,
    qdelay_old: Nanos,
    burst_allowance: Nanos,
    burst: Burst,
    burst_reset: Nanos,
}

/// A PIE or DOCSIS-PIE instance (module comment).
#[derive(Clone, Debug)]
pub struct Pie {
    cfg: PieConfig,
    s: ControlState,
    accu_prob: f64,
    next_update: SimTime,
    /// Updates run one by one (tests check that a long idle gap costs few).
    steps: u64,
}

fn secs(ns: Nanos) -> f64 {
    ns as f64 / NANOS_PER_SEC as f64
}

impl Pie {
    pub fn new(cfg: PieConfig, now: SimTime) -> Pie {
        assert!(cfg.t_update > 0, "PIE needs T_UPDATE > 0");
        let burst_allowance = match cfg.variant {
            // RFC 8033 Sec. 4.4: burst_allowance is initialised to MAX_BURST.
            PieVariant::Rfc8033 => cfg.max_burst,
            // RFC 8034 Annex M: armed by the first drop of a burst.
            PieVariant::Docsis => 0,
        };
        Pie {
            cfg,
            s: ControlState { drop_prob: 0.0, qdelay_old: 0, burst_allowance, burst: Burst::Outside, burst_reset: 0 },
            accu_prob: 0.0,
            next_update: now + cfg.t_update,
            steps: 0,
        }
    }

    pub fn config(&self) -> &PieConfig {
        &self.cfg
    }

    /// Run every periodic update due up to and including `now`, with `qdelay` the queue-delay
    /// estimate, which the caller guarantees is constant since its previous call (the queue did
    /// not change between calls). Updates run one at a time until one leaves the state unchanged
    /// (e.g. drop_prob and both delay samples 0 after an idle spell); the rest are then skipped
    /// at once, which gives the same state exactly.
    pub fn advance(&mut self, now: SimTime, qdelay: Nanos) {
        let t = self.cfg.t_update;
        while self.next_update <= now {
            let before = self.s;
            self.update(qdelay);
            self.steps += 1;
            self.next_update = self.next_update + t;
            if self.s == before && self.next_update <= now {
                let k = (now - self.next_update) / t + 1;
                self.next_update = SimTime(self.next_update.0 + k * t);
            }
        }
    }

    /// One drop-probability update (module comment, "control path").
    fn update(&mut self, qdelay: Nanos) {
        let c = &self.cfg;
        let s = &mut self.s;
        let docsis = c.variant == PieVariant::Docsis;
        if docsis && s.burst_allowance > 0 {
            // RFC 8034 Annex M: no drops while the burst is protected, so no control either.
            s.drop_prob = 0.0;
        } else {
            // RFC 8033 Sec. 4.2: the PI controller.
            let mut p = c.alpha * (secs(qdelay) - secs(c.target)) + c.beta * (secs(qdelay) - secs(s.qdelay_old));
            // RFC 8033 Sec. 4.2: auto-tune alpha and beta by drop_prob's magnitude; RFC 8034
            // continues the table above 0.1 since its drop_prob goes beyond 1.
            let d = s.drop_prob;
            p /= if d < 0.000_001 {
                2048.0
            } else if d < 0.000_01 {
                512.0
            } else if d < 0.000_1 {
                128.0
            } else if d < 0.001 {
                32.0
            } else if d < 0.01 {
                8.0
            } else if d < 0.1 {
                2.0
            } else if !docsis {
                1.0
            } else if d < 1.0 {
                0.5
            } else if d < 10.0 {
                0.125
            } else {
                0.031_25
            };
            // RFC 8033 Sec. 5.5: cap drop adjustment.
            if c.cap_drop_adjustment && d >= 0.1 && p > 0.02 {
                p = 0.02;
            }
            let mut prob = d + p;
            if qdelay < c.decay_below && s.qdelay_old < c.decay_below {
                // RFC 8033 Sec. 4.2 (RFC 8034: below LATENCY_LOW): decay when the queue is idle.
                prob *= 0.98;
            } else if c.high_delay.is_some_and(|h| qdelay > h) {
                // RFC 8034 Annex M: above LATENCY_HIGH, a step up.
                prob += 0.02;
            }
            // RFC 8033 Sec. 4.2: bound drop_prob (RFC 8034: by PROB_LOW * MEAN / MIN_PKTSIZE).
            s.drop_prob = if prob > 0.0 { prob.min(c.max_prob) } else { 0.0 };
        }
        // RFC 8033 Sec. 4.4: the allowance runs down by T_UPDATE at each update.
        s.burst_allowance = s.burst_allowance.saturating_sub(c.t_update);
        // "Congestion gone": both samples below target/2 and drop_prob 0 (RFC 8033 Sec. 4.4).
        let quiet = 2 * qdelay < c.target && 2 * s.qdelay_old < c.target && s.drop_prob == 0.0;
        match c.variant {
            PieVariant::Rfc8033 => {
                if quiet {
                    s.burst_allowance = c.max_burst;
                }
            }
            PieVariant::Docsis => {
                // RFC 8034 Annex M: back to "in burst" once protection is over and the queue
                // quiet; "not in burst" after BURST_RESET_TIMEOUT of quiet updates.
                if quiet && s.burst_allowance == 0 {
                    match s.burst {
                        Burst::Protecting => {
                            s.burst = Burst::Inside;
                            s.burst_reset = 0;
                        }
                        Burst::Inside => {
                            s.burst_reset += c.t_update;
                            if s.burst_reset > c.burst_reset_timeout {
                                s.burst_reset = 0;
                                s.burst = Burst::Outside;
                            }
                        }
                        Burst::Outside => {}
                    }
                } else if s.burst == Burst::Inside {
                    s.burst_reset = 0;
                }
            }
        }
        s.qdelay_old = qdelay;
    }

    /// Enqueue test for an arriving packet, ECN-capable if `ect` (call advance first): keep it,
    /// mark it CE, or drop it. RFC 8033 Sec. 5.1: "if ecn_capable && drop_prob <= mark_ecnth" the
    /// packet PIE chose to drop is marked instead (the de-randomization's accumulator is reset
    /// either way, as for the drop it replaces).
    pub fn on_enqueue(&mut self, now: SimTime, queue_bytes: u64, bytes: u32, ect: bool, rng: &mut Stream) -> Verdict {
        if !self.drop_on_enqueue(now, queue_bytes, bytes, rng) {
            return Verdict::Keep;
        }
        match self.cfg.mark_ecn_th {
            Some(th) if ect && self.s.drop_prob <= th => Verdict::Mark,
            _ => Verdict::Drop,
        }
    }

    /// Enqueue test for an arriving packet of `bytes` with `queue_bytes` already queued (call
    /// advance first): true to drop it (module comment, "data path").
    pub fn drop_on_enqueue(&mut self, now: SimTime, queue_bytes: u64, bytes: u32, rng: &mut Stream) -> bool {
        debug_assert!(now < self.next_update, "Pie::advance(now) must run before the enqueue test");
        let c = self.cfg;
        // RFC 8033 Sec. 4.4 / RFC 8034: no early drop while the burst allowance lasts.
        if self.s.burst_allowance > 0 {
            return false;
        }
        // RFC 8033 Sec. 4.1: keep PIE work conserving.
        let low_delay = 2 * self.s.qdelay_old < c.target && self.s.drop_prob < 0.2;
        let short_queue = queue_bytes <= 2 * c.mean_pkt_bytes;
        let p = match c.variant {
            PieVariant::Rfc8033 => {
                if low_delay || short_queue {
                    return false;
                }
                if self.s.drop_prob == 0.0 {
                    // RFC 8033 Sec. 5.4.
                    self.accu_prob = 0.0;
                }
                self.s.drop_prob
            }
            PieVariant::Docsis => {
                if self.s.drop_prob == 0.0 {
                    self.accu_prob = 0.0;
                }
                if self.s.burst == Burst::Outside {
                    // RFC 8034 Annex M: outside a burst, a queue under a third of the buffer is
                    // left alone; a fuller one starts a burst.
                    if c.buffer_bytes.is_some_and(|b| 3 * queue_bytes < b) {
                        return false;
                    }
                    self.s.burst = Burst::Inside;
                }
                // RFC 8034 Appendix A: scale by packet size, at most PROB_LOW.
                let p = (self.s.drop_prob * bytes as f64 / c.mean_pkt_bytes as f64).min(c.prob_low);
                if c.derandomize {
                    self.accu_prob += p;
                }
                if low_delay || short_queue {
                    return false;
                }
                p
            }
        };
        let drop = if c.derandomize {
            if c.variant == PieVariant::Rfc8033 {
                self.accu_prob += p;
            }
            // RFC 8033 Sec. 5.4: de-randomization.
            if self.accu_prob < c.prob_low {
                false
            } else if self.accu_prob >= c.prob_high {
                true
            } else {
                rng.bernoulli(p)
            }
        } else {
            rng.bernoulli(p)
        };
        if drop {
            self.accu_prob = 0.0;
            if self.s.burst == Burst::Inside && c.variant == PieVariant::Docsis {
                // RFC 8034 Annex M: the first drop of a burst arms its protection.
                self.s.burst = Burst::Protecting;
                self.s.burst_allowance = c.max_burst;
            }
        }
        drop
    }

    /// The RFC's drop_prob: in [0, 1] for RFC 8033; in [0, 13.6] for DOCSIS-PIE, whose enqueue
    /// test scales it by packet size and caps the result at PROB_LOW.
    pub fn drop_prob(&self) -> f64 {
        self.s.drop_prob
    }

    /// The instant of the next periodic update.
    pub fn next_update(&self) -> SimTime {
        self.next_update
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const T: Nanos = 15 * MS;

    fn at(ns: Nanos) -> SimTime {
        SimTime(ns)
    }

    /// drop_prob after each update at 15, 30, 45, ... ms of a PIE created at 0 that sees `q[k]`
    /// during the k-th period.
    fn run(cfg: PieConfig, q: &[Nanos]) -> (Pie, Vec<f64>) {
        let mut pie = Pie::new(cfg, SimTime::ZERO);
        let out = q
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                pie.advance(at((k as u64 + 1) * cfg.t_update), d);
                pie.drop_prob()
            })
            .collect();
        (pie, out)
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-15 + 1e-12 * want.abs()
    }

    #[test]
    fn rfc8033_update_by_hand() {
        // RFC 8033 defaults: target 15 ms, alpha 0.125/s, beta 1.25/s, T_UPDATE 15 ms.
        // 1: q 0, old 0: p = 0.125 * (0 - 0.015) = -0.001875 -> /2048 -> bounded to 0.
        // 2: q 30 ms, old 0: p = 0.125 * 0.015 + 1.25 * 0.030 = 0.039375; drop_prob 0 < 1e-6:
        //    /2048 = 1.922607421875e-5.
        // 3: q 30, old 30: p = 0.001875; drop_prob in [1e-5, 1e-4): /128 = 1.46484375e-5;
        //    drop_prob = 3.387451171875e-5.
        // 4..8: +1.46484375e-5 each while drop_prob < 1e-4: 4.852294921875e-5,
        //    6.317138671875e-5, 7.781982421875e-5, 9.246826171875e-5, 1.0711669921875e-4.
        // 9: drop_prob in [1e-4, 1e-3): 0.001875 / 32 = 5.859375e-5 -> 1.6571044921875e-4.
        let q = [0, 30 * MS, 30 * MS, 30 * MS, 30 * MS, 30 * MS, 30 * MS, 30 * MS, 30 * MS];
        let want = [
            0.0,
            1.922607421875e-5,
            3.387451171875e-5,
            4.852294921875e-5,
            6.317138671875e-5,
            7.781982421875e-5,
            9.246826171875e-5,
            1.0711669921875e-4,
            1.6571044921875e-4,
        ];
        let (_, got) = run(PieConfig::rfc8033(), &q);
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(close(*g, w), "update {}: {g} != {w}", k + 1);
        }
    }

    #[test]
    fn rfc8033_large_p_is_unscaled_and_capped() {
        let mut pie = Pie::new(PieConfig::rfc8033(), SimTime::ZERO);
        // drop_prob 0.05 (< 0.1): p is halved. q 20 ms, old 20 ms: p = 0.125 * 0.005 =
        // 0.000625 -> /2 = 0.0003125 -> 0.0503125.
        pie.s.drop_prob = 0.05;
        pie.s.qdelay_old = 20 * MS;
        pie.advance(at(T), 20 * MS);
        assert!(close(pie.drop_prob(), 0.0503125), "{}", pie.drop_prob());
        // drop_prob 0.15 (>= 0.1): not scaled; q 30 ms after old 0: p = 0.039375 > 0.02, capped
        // (Sec. 5.5) -> 0.17.
        pie.s.drop_prob = 0.15;
        pie.s.qdelay_old = 0;
        pie.advance(at(2 * T), 30 * MS);
        assert!(close(pie.drop_prob(), 0.17), "{}", pie.drop_prob());
        // A small step, unscaled: q 16 ms, old 16 ms: p = 0.125 * 0.001 = 0.000125 -> 0.170125.
        pie.s.qdelay_old = 16 * MS;
        pie.advance(at(3 * T), 16 * MS);
        assert!(close(pie.drop_prob(), 0.170125), "{}", pie.drop_prob());
        // Bounded at 1.
        pie.s.drop_prob = 0.995;
        pie.advance(at(4 * T), 200 * MS);
        assert_eq!(pie.drop_prob(), 1.0);
    }

    #[test]
    fn rfc8033_decays_only_when_idle() {
        let mut pie = Pie::new(PieConfig::rfc8033(), SimTime::ZERO);
        // drop_prob 0.5, q 0, old 0: p = -0.001875 (unscaled) -> 0.498125, * 0.98 = 0.4881625.
        pie.s.drop_prob = 0.5;
        pie.advance(at(T), 0);
        assert!(close(pie.drop_prob(), 0.4881625), "{}", pie.drop_prob());
        // q 1 ns: not idle, no decay: 0.4881625 + 0.125 * (1e-9 - 0.015) + 1.25 * 1e-9.
        pie.advance(at(2 * T), 1);
        let want = 0.4881625 + 0.125 * (1e-9 - 0.015) + 1.25 * 1e-9;
        assert!(close(pie.drop_prob(), want), "{} != {want}", pie.drop_prob());
    }

    #[test]
    fn rfc8033_burst_allowance_lets_the_first_max_burst_through() {
        let mut rng = Stream::new(1, 1);
        let mut pie = Pie::new(PieConfig::rfc8033(), SimTime::ZERO);
        pie.s.drop_prob = 0.5;
        // A standing 100 ms queue from t = 0: the allowance (150 ms) falls by 15 ms an update
        // and reaches 0 at the 10th, t = 150 ms. Packets every 1 ms, 100 kB queued.
        let mut first_drop = None;
        for t in (0..300 * MS).step_by(MS as usize) {
            pie.advance(at(t), 100 * MS);
            if pie.drop_on_enqueue(at(t), 100_000, 1500, &mut rng) {
                first_drop.get_or_insert(t);
            }
            if t < 150 * MS {
                assert!(pie.s.burst_allowance > 0, "t = {t}");
            }
        }
        let first = first_drop.expect("drops after the allowance");
        assert!(first >= 150 * MS, "dropped at {first} ns, inside the burst allowance");
        // Quiet again (delay 0, drop_prob driven to 0): the allowance is back to MAX_BURST.
        pie.s.drop_prob = 0.0;
        pie.advance(at(400 * MS), 0);
        assert_eq!(pie.s.burst_allowance, 150 * MS);
    }

    #[test]
    fn rfc8033_marks_an_ecn_capable_packet_below_ten_percent() {
        // De-randomized, the accumulated probability at PROB_HIGH: PIE surely chooses the packet
        // (Sec. 5.4), and a 100 ms delay and 100 kB queued keep the work-conserving tests away.
        let mut rng = Stream::new(3, 1);
        let mut pie = Pie::new(PieConfig { derandomize: true, ..PieConfig::rfc8033() }, SimTime::ZERO);
        pie.s.burst_allowance = 0;
        pie.s.qdelay_old = 100 * MS;
        let mut verdict = |pie: &mut Pie, p: f64, ect: bool| {
            pie.s.drop_prob = p;
            pie.accu_prob = 8.5;
            let v = pie.on_enqueue(at(0), 100_000, 1500, ect, &mut rng);
            assert_eq!(pie.accu_prob, 0.0, "a mark resets the accumulator as the drop it replaces");
            v
        };
        // Sec. 5.1: drop_prob 5% <= mark_ecnth = 10%: an ECT packet is marked, a Not-ECT dropped.
        assert_eq!(verdict(&mut pie, 0.05, true), Verdict::Mark);
        assert_eq!(verdict(&mut pie, 0.05, false), Verdict::Drop);
        // At the threshold still marked; above it dropped, ECN-capable or not.
        assert_eq!(verdict(&mut pie, 0.1, true), Verdict::Mark);
        assert_eq!(verdict(&mut pie, 0.2, true), Verdict::Drop);
        // Not chosen (accumulator below PROB_LOW): kept either way.
        pie.s.drop_prob = 0.05;
        pie.accu_prob = 0.0;
        assert_eq!(pie.on_enqueue(at(0), 100_000, 1500, true, &mut rng), Verdict::Keep);
        // DOCSIS-PIE has no marking (module comment, choice): the chosen ECT packet is dropped.
        let mut docsis = Pie::new(PieConfig::docsis(), SimTime::ZERO);
        docsis.s.qdelay_old = 100 * MS;
        docsis.s.drop_prob = 0.05;
        docsis.accu_prob = 8.5;
        assert_eq!(docsis.on_enqueue(at(0), 100_000, 1500, true, &mut rng), Verdict::Drop);
    }

    #[test]
    fn rfc8033_no_drop_when_delay_low_and_p_small_or_queue_short() {
        let mut rng = Stream::new(2, 1);
        let mut pie = Pie::new(PieConfig::rfc8033(), SimTime::ZERO);
        pie.s.burst_allowance = 0;
        let mut drops = |pie: &mut Pie, old: Nanos, p: f64, queue: u64| {
            pie.s.qdelay_old = old;
            pie.s.drop_prob = p;
            (0..2000).filter(|_| pie.drop_on_enqueue(at(0), queue, 1500, &mut rng)).count()
        };
        // Sec. 4.1: qdelay_old 7 ms < 7.5 ms and p 0.19 < 0.2: never.
        assert_eq!(drops(&mut pie, 7 * MS, 0.19, 100_000), 0);
        // Either condition false: about 19 % / 20 %.
        let n = drops(&mut pie, 8 * MS, 0.19, 100_000);
        assert!((300..470).contains(&n), "{n}");
        let n = drops(&mut pie, 7 * MS, 0.2, 100_000);
        assert!((320..480).contains(&n), "{n}");
        // Queue of at most 2 * MEAN_PKTSIZE = 3000 bytes: never; 3001: drops.
        assert_eq!(drops(&mut pie, 50 * MS, 0.9, 3000), 0);
        assert!(drops(&mut pie, 50 * MS, 0.9, 3001) > 1500);
    }

    #[test]
    fn rfc8033_derandomization_when_switched_on() {
        let cfg = PieConfig { derandomize: true, ..PieConfig::rfc8033() };
        let mut pie = Pie::new(cfg, SimTime::ZERO);
        pie.s.burst_allowance = 0;
        pie.s.qdelay_old = 50 * MS;
        pie.s.drop_prob = 0.1;
        let mut rng = Stream::new(3, 1);
        // accu_prob 0.1, 0.2, ..., 0.8 < 0.85: the first 8 packets pass whatever the coin.
        for k in 0..8 {
            assert!(!pie.drop_on_enqueue(at(0), 100_000, 1500, &mut rng), "packet {k}");
        }
        // accu_prob at 8.45 + 0.1 >= 8.5: a certain drop, and accu_prob starts again.
        pie.accu_prob = 8.45;
        assert!(pie.drop_on_enqueue(at(0), 100_000, 1500, &mut rng));
        assert_eq!(pie.accu_prob, 0.0);
    }

    #[test]
    fn long_idle_gap_is_cheap_and_exact() {
        // A PIE at drop_prob 0.3 whose queue empties: one call over 10 s gives what 667 calls,
        // one per update, give.
        let mut one = Pie::new(PieConfig::rfc8033(), SimTime::ZERO);
        one.s.drop_prob = 0.3;
        one.s.qdelay_old = 40 * MS;
        let mut each = one.clone();
        one.advance(at(10_000 * MS), 0);
        for k in 1..=666 {
            each.advance(at(k * T), 0);
        }
        each.advance(at(10_000 * MS), 0);
        assert_eq!(one.drop_prob(), 0.0);
        assert_eq!(one.s, each.s);
        assert_eq!(one.next_update(), each.next_update());
        assert_eq!(one.next_update(), at(10_005 * MS));
        // A gap of 30 years (6.3e10 updates) once quiet: a handful of steps.
        let steps = one.steps;
        one.advance(at(1_000_000_000 * NANOS_PER_SEC), 0);
        assert!(one.steps - steps <= 2, "{} steps", one.steps - steps);
        // (Ticks every 15 ms: the last by 1e9 s is at 1e9 s - 10 ms.)
        assert_eq!(one.next_update(), at(1_000_000_000 * NANOS_PER_SEC + 5 * MS));
        // From drop_prob 1, the decay to 0 takes a few hundred steps, not millions.
        let mut hot = Pie::new(PieConfig::rfc8033(), SimTime::ZERO);
        hot.s.drop_prob = 1.0;
        hot.advance(at(3600 * NANOS_PER_SEC), 0);
        assert_eq!(hot.drop_prob(), 0.0);
        assert!(hot.steps < 2000, "{} steps", hot.steps);
    }

    #[test]
    fn docsis_defaults() {
        let c = PieConfig::docsis();
        assert_eq!(c.variant, PieVariant::Docsis);
        assert_eq!((c.target, c.t_update, c.max_burst), (10 * MS, 16 * MS, 142 * MS));
        assert_eq!((c.alpha, c.beta), (0.25, 2.5));
        assert_eq!(c.mean_pkt_bytes, 1024);
        assert!(close(c.max_prob, 13.6));
        assert_eq!((c.decay_below, c.high_delay), (5 * MS, Some(200 * MS)));
        assert!(c.derandomize);
        assert_eq!((c.prob_low, c.prob_high, c.burst_reset_timeout), (0.85, 8.5, 1000 * MS));
        let r = PieConfig::rfc8033();
        assert_eq!((r.target, r.t_update, r.max_burst, r.alpha, r.beta), (15 * MS, 15 * MS, 150 * MS, 0.125, 1.25));
    }

    #[test]
    fn docsis_update_by_hand() {
        // A = 0.25, B = 2.5, target 10 ms, INTERVAL 16 ms.
        // 1: q 30 ms, old 0: p = 0.25 * 0.02 + 2.5 * 0.03 = 0.08 -> /2048 = 3.90625e-5.
        // 2: q 30, old 30: p = 0.005 -> /128 = 3.90625e-5 -> 7.8125e-5.
        // 3: q 4 ms, old 30: p = 0.25 * (-0.006) + 2.5 * (-0.026) = -0.0665 -> /128 ->
        //    negative -> 0.
        let (pie, got) = run(PieConfig::docsis(), &[30 * MS, 30 * MS, 4 * MS]);
        assert!(close(got[0], 3.90625e-5), "{}", got[0]);
        assert!(close(got[1], 7.8125e-5), "{}", got[1]);
        assert_eq!(got[2], 0.0);
        assert_eq!(pie.s.qdelay_old, 4 * MS);
    }

    #[test]
    fn docsis_p_goes_past_one_with_its_own_table() {
        let mut pie = Pie::new(PieConfig::docsis(), SimTime::ZERO);
        // drop_prob 0.5 (< 1: p * 2), q 12 ms, old 12 ms: p = 0.25 * 0.002 = 0.0005 -> 0.001.
        pie.s.drop_prob = 0.5;
        pie.s.qdelay_old = 12 * MS;
        pie.advance(at(16 * MS), 12 * MS);
        assert!(close(pie.drop_prob(), 0.501), "{}", pie.drop_prob());
        // drop_prob 2 (< 10: p * 8): 2 + 0.004.
        pie.s.drop_prob = 2.0;
        pie.advance(at(32 * MS), 12 * MS);
        assert!(close(pie.drop_prob(), 2.004), "{}", pie.drop_prob());
        // drop_prob 12 (p * 32 = 0.016, under the 0.02 cap): 12.016.
        pie.s.drop_prob = 12.0;
        pie.advance(at(48 * MS), 12 * MS);
        assert!(close(pie.drop_prob(), 12.016), "{}", pie.drop_prob());
        // Above LATENCY_HIGH (200 ms): capped step 0.02 plus the 0.02 step; bounded at 13.6.
        pie.s.drop_prob = 5.0;
        pie.s.qdelay_old = 250 * MS;
        pie.advance(at(64 * MS), 250 * MS);
        assert!(close(pie.drop_prob(), 5.04), "{}", pie.drop_prob());
        pie.s.drop_prob = 13.59;
        pie.advance(at(80 * MS), 250 * MS);
        assert!(close(pie.drop_prob(), 13.6), "{}", pie.drop_prob());
        // Decay below LATENCY_LOW (both 4 ms; RFC 8033 would need 0): drop_prob 2, p =
        // 0.25 * (-0.006) * 8 = -0.012 -> 1.988 * 0.98 = 1.94824.
        pie.s.drop_prob = 2.0;
        pie.s.qdelay_old = 4 * MS;
        pie.advance(at(96 * MS), 4 * MS);
        assert!(close(pie.drop_prob(), 1.94824), "{}", pie.drop_prob());
    }

    #[test]
    fn docsis_scales_by_packet_size_and_derandomizes() {
        let mut pie = Pie::new(PieConfig::docsis(), SimTime::ZERO);
        pie.s.qdelay_old = 50 * MS;
        pie.s.burst = Burst::Inside;
        let mut rng = Stream::new(4, 1);
        // drop_prob 0.05: a 1024-byte packet counts 0.05, a 64-byte one 0.003125; the first 16
        // full-size packets (accu 0.8 < 0.85) pass whatever the coin, as do 271 small ones.
        // (drop_prob < 0.2 would let all pass by Sec. 4.1, so the delay is high here.)
        pie.s.drop_prob = 0.05;
        for k in 0..16 {
            assert!(!pie.drop_on_enqueue(at(0), 100_000, 1024, &mut rng), "packet {k}");
        }
        assert!(close(pie.accu_prob, 0.8), "{}", pie.accu_prob);
        pie.accu_prob = 0.0;
        for k in 0..271 {
            assert!(!pie.drop_on_enqueue(at(0), 100_000, 64, &mut rng), "small packet {k}");
        }
        assert!(close(pie.accu_prob, 271.0 * 0.003125), "{}", pie.accu_prob);
        // A packet's probability is capped at PROB_LOW: drop_prob 13.6, 1500 bytes -> 0.85.
        pie.s.drop_prob = 13.6;
        pie.accu_prob = 0.0;
        pie.s.burst = Burst::Protecting; // no arming of the allowance in this step
        let _ = pie.drop_on_enqueue(at(0), 100_000, 1500, &mut rng);
        assert!(pie.accu_prob == 0.0 || close(pie.accu_prob, 0.85), "{}", pie.accu_prob);
        // PROB_HIGH: a certain drop.
        pie.accu_prob = 8.0;
        assert!(pie.drop_on_enqueue(at(0), 100_000, 1024, &mut rng));
        assert_eq!(pie.accu_prob, 0.0);
    }

    #[test]
    fn docsis_burst_protection_starts_at_the_first_drop() {
        let cfg = PieConfig { buffer_bytes: Some(30_000), ..PieConfig::docsis() };
        let mut pie = Pie::new(cfg, SimTime::ZERO);
        let mut rng = Stream::new(5, 1);
        assert_eq!(pie.s.burst_allowance, 0, "RFC 8034: no allowance before a burst");
        pie.s.drop_prob = 5.0;
        pie.s.qdelay_old = 50 * MS;
        // Not in a burst and under a third of the buffer (10 000 bytes): no drop, no burst.
        assert!(!pie.drop_on_enqueue(at(0), 9_999, 1024, &mut rng));
        assert_eq!(pie.s.burst, Burst::Outside);
        // 10 000 bytes: a burst starts; at p 0.85 a drop comes within a few packets.
        let mut n = 0;
        while !pie.drop_on_enqueue(at(0), 10_000, 1024, &mut rng) {
            n += 1;
            assert!(n < 20);
        }
        assert_eq!(pie.s.burst, Burst::Protecting);
        assert_eq!(pie.s.burst_allowance, 142 * MS);
        // Protected: no drop, and the controller holds drop_prob at 0, for 9 updates (142 ms
        // falls by 16 ms: 126, 110, ..., 14, 0 at the 9th, t = 144 ms).
        for k in 1..=9u64 {
            assert!(!pie.drop_on_enqueue(at(k * 16 * MS - 1), 100_000, 1024, &mut rng));
            pie.advance(at(k * 16 * MS), 300 * MS);
            assert_eq!(pie.drop_prob(), 0.0, "update {k}");
        }
        assert_eq!(pie.s.burst_allowance, 0);
        // The 10th update runs the controller: q 300 ms = old: p = 0.25 * 0.29 / 2048, plus 0.02
        // above LATENCY_HIGH.
        pie.advance(at(160 * MS), 300 * MS);
        assert!(close(pie.drop_prob(), 0.25 * 0.29 / 2048.0 + 0.02), "{}", pie.drop_prob());
        // Quiet: drop_prob back to 0 and the queue empty: "in burst" at once, "not in burst"
        // after more than 1 s of quiet updates (63 of 16 ms = 1008 ms).
        pie.s.drop_prob = 0.0;
        pie.s.qdelay_old = 0;
        pie.advance(at(176 * MS), 0);
        assert_eq!(pie.s.burst, Burst::Inside);
        pie.advance(at(176 * MS + 62 * 16 * MS), 0);
        assert_eq!(pie.s.burst, Burst::Inside);
        pie.advance(at(176 * MS + 63 * 16 * MS), 0);
        assert_eq!(pie.s.burst, Burst::Outside);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

        #[test]
        fn drop_prob_stays_in_bounds(
            docsis in any::<bool>(),
            // (time step, queue delay, bytes queued, packet bytes)
            steps in proptest::collection::vec(
                (0u64..100_000_000, 0u64..2_000_000_000, 0u64..200_000, 40u32..1600),
                1..120,
            ),
        ) {
            let cfg = if docsis {
                PieConfig { buffer_bytes: Some(60_000), ..PieConfig::docsis() }
            } else {
                PieConfig::rfc8033()
            };
            let mut pie = Pie::new(cfg, SimTime::ZERO);
            let mut rng = Stream::new(9, 9);
            let mut now = SimTime::ZERO;
            for (dt, qdelay, queue, bytes) in steps {
                now = now + dt;
                pie.advance(now, qdelay);
                let _ = pie.drop_on_enqueue(now, queue, bytes, &mut rng);
                let p = pie.drop_prob();
                prop_assert!((0.0..=cfg.max_prob).contains(&p), "{p}");
                if !docsis {
                    prop_assert!((0.0..=1.0).contains(&p), "{p}");
                }
            }
        }
    }
}

/// A queue's departure rate, measured (RFC 8033 Sec. 5.2, "departure rate estimation", as Linux's
/// sch_pie does it with `dq_rate_estimator`: net/sched/pie.c `pie_process_dequeue`): a measurement
/// cycle starts at a departure that leaves at least DQ_THRESHOLD (16 KB) queued, counts the bytes
/// that leave until DQ_THRESHOLD have, and its rate joins an average of weight 1/8 (the first cycle
/// sets it); the next cycle starts at once if the queue still holds the threshold. The queue's delay
/// is then its bytes over that rate (Little's law, RFC 8033 Sec. 4.3).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DepartureRate {
    /// The current cycle's start and bytes counted; None between cycles.
    cycle: Option<(SimTime, u64)>,
    /// The average rate, bytes per ns (0: none measured yet).
    avg: f64,
}

/// RFC 8033 Sec. 5.2's DQ_THRESHOLD (Linux's QUEUE_THRESHOLD): 16 KB.
pub const DQ_THRESHOLD: u64 = 16_384;

impl DepartureRate {
    /// A packet of `bytes` leaves at `now`, `backlog` bytes staying queued.
    pub fn on_departure(&mut self, now: SimTime, bytes: u32, backlog: u64) {
        if self.cycle.is_none() && backlog >= DQ_THRESHOLD {
            self.cycle = Some((now, 0));
        }
        let Some((start, count)) = self.cycle.as_mut() else { return };
        *count += bytes as u64;
        if *count < DQ_THRESHOLD || now == *start {
            return;
        }
        let rate = *count as f64 / (now - *start) as f64;
        self.avg = if self.avg == 0.0 { rate } else { self.avg - self.avg / 8.0 + rate / 8.0 };
        self.cycle = (backlog >= DQ_THRESHOLD).then_some((now, 0));
    }

    /// The average rate, b/s; None before the first cycle has ended.
    pub fn rate_bps(&self) -> Option<u64> {
        (self.avg > 0.0).then(|| (self.avg * 8e9).round() as u64).filter(|&r| r > 0)
    }

    /// The delay of `bytes` at the measured rate; None before the first cycle has ended.
    pub fn delay(&self, bytes: u64) -> Option<Nanos> {
        (self.avg > 0.0).then(|| (bytes as f64 / self.avg).round() as Nanos)
    }
}
