//! Low Latency DOCSIS's aggregate service flow queue: the dual-queue coupled AQM of RFC 9332
//! (De Schepper, Briscoe, White, 2023) as DOCSIS 3.1 MULPI specifies it (Annex N, the immediate
//! AQM and the coupled classic AQM; Annex O, the queue-delay estimates; Annex P, queue
//! protection), as a pure state machine: the caller holds the two queues and the packets, tells it
//! the time (integer ns), the bytes queued and each packet's ECN codepoint, and asks it to classify,
//! to admit, mark or drop, and which queue to serve next.
//!
//! # The rules, each with its source
//!
//! - Classifier (RFC 9332 Sec. 2.5.1.1; MULPI's default LLD classifiers): ECT(1) and CE go to the
//!   low-latency (L) queue, everything else to the classic (C) queue; optionally (`nqb_to_l`)
//!   Not-ECT packets marked NQB (DSCP 45, RFC 9956 / MULPI) too.
//! - Immediate AQM (MULPI Annex N): the L queue's delay estimate at enqueue, qdelayCoupledL =
//!   (bytes in L + this packet) * 8 / MAX_RATE (Annex O; MAX_RATE the aggregate's Maximum
//!   Sustained Rate), gives probNative on a ramp: 0 at or below MINTH, 1 at or above MAXTH, linear
//!   between. MAXTH = 1 ms and RANGE = 2^LG_RANGE ns with LG_RANGE = 19 (524.288 us), so MINTH =
//!   MAXTH - RANGE = 475.712 us; MINTH is raised to FLOOR = 2 * MAX_FRAME_SIZE * 8 / MAX_RATE
//!   (MAX_FRAME_SIZE 2000 B) on slow flows, MAXTH = MINTH + RANGE, at most 65.535 ms. (Defaults
//!   as CableLabs' docsis-ns3 model of Annex N reads them: MaxTh 1000 us, LgRange 19.)
//! - Classic base probability (MULPI Annex N, "the Classic AQM"; RFC 9332 Sec. 2.4 and its
//!   Appendix A, PI2): DOCSIS-PIE's controller (aqm/pie.rs, RFC 8034: target 10 ms, INTERVAL
//!   16 ms, alpha 0.25 /s, beta 2.5 /s, its auto-tuning, decay and burst protection) computes
//!   drop_prob from the C queue's delay, and p' = sqrt(drop_prob). The C queue's delay
//!   (qdelayCoupledC, Annex O) is its bytes over r_C = MAX_RATE - r_L, with r_L = min(weight/256
//!   * MAX_RATE, the L queue's arrival rate over the last INTERVAL).
//! - Coupling (RFC 9332 Sec. 2.4, k = 2; MULPI's AQM Coupling Factor default 20 tenths): the L
//!   queue's probability probL = max(probNative, min(k * p', 1)); the C queue drops (or marks
//!   ECN-capable packets) at drop_prob = p'^2, through DOCSIS-PIE's data path (size scaling,
//!   de-randomisation).
//! - L marking is de-randomised by Annex N's recur(): count += probL, a mark when count > 1
//!   (count -= 1). No random draw in the L queue.
//! - Scheduler (MULPI "inter-SF scheduler": weighted round robin, the L flow's Scheduling Weight
//!   default 230 of 256): a deficit round robin in bytes with quanta weight * QUANTUM / 256 for L
//!   and (256 - weight) * QUANTUM / 256 for C (QUANTUM 1500 B, docsis-ns3's DrrQuantum), so that
//!   under saturation L gets weight/256 of the bytes. An empty queue gives its turn away and
//!   keeps no deficit (DRR, Shreedhar & Varghese 1996).
//! - Queue protection (MULPI Annex P; draft-briscoe-docsis-q-protection): each microflow's bucket
//!   holds an expiry time t_exp; each L packet adds probNative * size * 2^(30 - LG_AGING) ns to it
//!   (a bucket that has expired restarts at now), at most MAX_QLSCORE = 5 s ahead. Its queuing
//!   score is t_exp - now, so it ages at one ns per ns (AGING = 2^(LG_AGING - 30) B/ns, LG_AGING
//!   = 19: 2^-11 B/ns, about 4.1 Mb/s of congestion-volume). A packet is sanctioned (sent to the
//!   C queue) when the L queue delay qdelay > CRITICALqL (default MAXTH) and qdelay * score >
//!   CRITICALqL * CRITICALqLSCORE (4000 us). Buckets: 2^BI_SIZE (BI_SIZE 5) plus one shared
//!   default, ATTEMPTS = 2 hashed tries. The microflow is the 5-tuple in Annex P; here a flow's
//!   id and its direction identify it exactly (one TCP connection per flow id), so they stand for
//!   it.
//! - L buffer (MULPI C.2.2.9.11.4, as docsis-ns3 reads it): an L packet is dropped when the L
//!   queue holds CONFIG_BUFFER_SIZE - MAX_FRAME_SIZE bytes or more; CONFIG_BUFFER_SIZE defaults to
//!   10 ms at MAX_RATE (chosen: at least 2 * MAX_FRAME_SIZE, module code).
//!
//! - A Not-ECT packet in the L queue (NQB, classified by its DSCP) is never marked or dropped by
//!   the immediate AQM: it counts in recur()'s count as any L packet, but the mark it draws cannot
//!   be set, and it is queued unmarked. CableLabs' docsis-ns3 model of Annex N does so (its Iaqm()
//!   asks the packet to be marked, which a Not-ECT packet refuses, and enqueues it), and so does
//!   Linux's sch_dualpi2 for packets a filter puts in the L queue as "low latency, low loss, no
//!   drops or marks" (DUALPI2_C_LLLL). Such a queue is kept in check by queue protection and the
//!   L buffer. (Dropping them instead, as RFC 3168 Sec. 5 would for a classic AQM, dropped up to
//!   92 % of an NQB game's packets whenever the classic queue's coupled probability was high.)
//!
//! Choices where the sources are silent:
//! - Order within an L enqueue as docsis-ns3 runs Annex N: IAQM (recur), then queue protection,
//!   then the L buffer test; a sanctioned packet takes the C queue's enqueue test.
//! - A classic ECN-capable packet (ECT(0)) that the C queue would drop is CE-marked (RFC 3168;
//!   RFC 9332 Sec. 2.5.1.1).
//!
//! Left out: the upstream's virtual-queue estimate qdelayCoupledV (Annex O, which needs the
//! MAP interval and grant rates); the proactive grant service; DSCP overwrite.

use super::pie::{Pie, PieConfig};
use crate::packet::{Ecn, Way};
use crate::rng::Stream;
use crate::time::{Nanos, SimTime, NANOS_PER_SEC};

/// Which of the aggregate's two queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// The low-latency service flow.
    L,
    /// The classic service flow.
    C,
}

/// The classifier (module comment): ECT(1) and CE to L, NQB optionally to L, the rest to C.
pub fn classify(ecn: Ecn, nqb: bool, nqb_to_l: bool) -> Lane {
    match ecn {
        Ecn::Ect1 | Ecn::Ce => Lane::L,
        _ if nqb && nqb_to_l => Lane::L,
        _ => Lane::C,
    }
}

/// Queue protection's parameters (MULPI Annex P).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QProtConfig {
    /// CRITICALqL: the L queue delay above which sanctions may happen; None = MAXTH (Annex P
    /// default).
    pub critical_ql: Option<Nanos>,
    /// CRITICALqLSCORE: 4000 us (Annex P).
    pub critical_score: Nanos,
    /// LG_AGING: 19 (Annex P): the score drains 2^(LG_AGING - 30) bytes of congestion-volume
    /// per ns.
    pub lg_aging: u32,
    /// MAX_QLSCORE: 5 s (Annex P).
    pub max_score: Nanos,
}

impl Default for QProtConfig {
    fn default() -> QProtConfig {
        QProtConfig { critical_ql: None, critical_score: 4_000_000, lg_aging: 19, max_score: 5 * NANOS_PER_SEC }
    }
}

/// The dual queue's parameters; `docsis(max_rate_bps)` gives MULPI's defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualQConfig {
    /// MAX_RATE: the aggregate's Maximum Sustained Rate, bit/s (Annex O).
    pub max_rate_bps: u64,
    /// MAXTH before the FLOOR adjustment: 1 ms.
    pub max_th: Nanos,
    /// LG_RANGE: RANGE = 2^LG_RANGE ns; 19.
    pub lg_range: u32,
    /// MAX_FRAME_SIZE: 2000 bytes (FLOOR and the L buffer test).
    pub max_frame: u32,
    /// k: 2.0.
    pub coupling: f64,
    /// The L flow's scheduling weight, of 256: 230.
    pub weight: u32,
    /// The DRR quantum, bytes: 1500.
    pub quantum: u32,
    /// CONFIG_BUFFER_SIZE of the L flow, bytes (None: 10 ms at MAX_RATE).
    pub l_buffer: Option<u64>,
    /// NQB (DSCP 45) Not-ECT packets go to L.
    pub nqb_to_l: bool,
    /// The classic controller and data path (DOCSIS-PIE; `buffer_bytes` is the C buffer).
    pub classic: PieConfig,
    /// Queue protection, or None (QPROTECT_ON off).
    pub qprot: Option<QProtConfig>,
}

impl DualQConfig {
    pub fn docsis(max_rate_bps: u64) -> DualQConfig {
        DualQConfig {
            max_rate_bps,
            max_th: 1_000_000,
            lg_range: 19,
            max_frame: 2000,
            coupling: 2.0,
            weight: 230,
            quantum: 1500,
            l_buffer: None,
            nqb_to_l: false,
            classic: PieConfig::docsis(),
            qprot: Some(QProtConfig::default()),
        }
    }
}

/// What the L queue's enqueue test decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LVerdict {
    /// Join the L queue; `mark`: set CE.
    Queue { mark: bool },
    /// Dropped: the L buffer is full.
    Full,
    /// Queue protection sends it to the C queue (the caller then runs `enqueue_c`); `mark` as
    /// the IAQM decided.
    Sanction { mark: bool },
}

/// What the C queue's enqueue test decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CVerdict {
    Queue,
    /// Join, CE-marked (an ECN-capable packet the AQM would drop).
    Mark,
    Drop,
}

/// Counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DualQStats {
    /// Packets classified to L (before sanctions) and to C.
    pub l_packets: u64,
    pub c_packets: u64,
    pub l_marks: u64,
    pub c_marks: u64,
    /// L packets dropped by the L buffer.
    pub l_drops: u64,
    /// Not-ECT (NQB) L packets the immediate AQM would have marked, queued unmarked.
    pub l_unmarkable: u64,
    /// C packets dropped by the classic AQM.
    pub c_drops: u64,
    pub sanctions: u64,
    /// Packets served from each queue, and the sum and maximum of their sojourn times.
    pub l_served: u64,
    pub c_served: u64,
    pub l_sojourn_sum: u64,
    pub c_sojourn_sum: u64,
    pub l_sojourn_max: u64,
    pub c_sojourn_max: u64,
}

/// The scheduler's state (a value, so that a pick can be looked at without being taken).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drr {
    /// Whose turn: true = L.
    l_turn: bool,
    /// Whether the current turn has had its quantum.
    topped: bool,
    /// Deficits in 1/256 bytes.
    deficit_l: u64,
    deficit_c: u64,
}

/// Queue protection's bucket count: 2^BI_SIZE, BI_SIZE = 5 (Annex P), plus the default bucket.
const BI_SIZE: u32 = 5;
const NBUCKETS: usize = 1 << BI_SIZE;
const ATTEMPTS: u32 = 2;

#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    /// The microflow that owns it: 1 + key, 0 = none.
    id: u64,
    /// t_exp, ns.
    exp: u64,
}

/// The dual queue's state (module comment).
pub struct DualQ {
    cfg: DualQConfig,
    min_th: Nanos,
    max_th: Nanos,
    pie: Pie,
    /// recur()'s count.
    count: f64,
    /// Bits that joined L since the last classic update (interval_BitsL).
    bits_l: u64,
    sched: Drr,
    buckets: [Bucket; NBUCKETS + 1],
    pub stats: DualQStats,
    /// The departure rate measured by the queue that holds it, if it measures (`set_measured_rate`).
    measured_rate: Option<u64>,
}

/// A microflow's key: the flow id and its direction (module comment).
pub fn uflow(flow: u32, way: Way) -> u64 {
    ((flow as u64) << 1) | (way == Way::Reverse) as u64
}

/// The microflow hash of Annex P (a fixed mix: the simulator's flows have no 5-tuple to hash).
fn hash32(key: u64) -> u32 {
    let mut z = key.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) as u32
}

impl DualQ {
    pub fn new(cfg: DualQConfig, now: SimTime) -> DualQ {
        assert!(cfg.weight > 0 && cfg.weight < 256, "the L weight is in 1..=255");
        let range: Nanos = 1 << cfg.lg_range;
        // Annex N: FLOOR = 2 MTU at MAX_RATE, at most 65.535 ms.
        let floor = if cfg.max_rate_bps == 0 {
            0
        } else {
            ((2 * cfg.max_frame as u128 * 8 * NANOS_PER_SEC as u128 / cfg.max_rate_bps as u128) as Nanos)
                .min(65_535_000)
        };
        let min_th = cfg.max_th.saturating_sub(range).max(floor);
        let max_th = (min_th + range).min(65_535_000);
        DualQ {
            cfg,
            min_th,
            max_th,
            pie: Pie::new(cfg.classic, now),
            count: 0.0,
            bits_l: 0,
            sched: Drr::default(),
            buckets: [Bucket::default(); NBUCKETS + 1],
            stats: DualQStats::default(),
            measured_rate: None,
        }
    }

    pub fn config(&self) -> &DualQConfig {
        &self.cfg
    }

    /// MINTH and MAXTH after the FLOOR adjustment.
    pub fn thresholds(&self) -> (Nanos, Nanos) {
        (self.min_th, self.max_th)
    }

    /// The immediate AQM's ramp: probNative at an L queue delay.
    pub fn ramp(&self, qdelay: Nanos) -> f64 {
        if qdelay >= self.max_th {
            1.0
        } else if qdelay > self.min_th {
            (qdelay - self.min_th) as f64 / (self.max_th - self.min_th) as f64
        } else {
            0.0
        }
    }

    /// drop_prob = p'^2, the classic AQM's probability (DOCSIS-PIE's, before size scaling).
    pub fn classic_prob(&self) -> f64 {
        self.pie.drop_prob()
    }

    /// p', the base probability.
    pub fn base_prob(&self) -> f64 {
        self.pie.drop_prob().sqrt()
    }

    /// probCL = min(k * p', 1), the coupled L probability.
    pub fn coupled_prob(&self) -> f64 {
        (self.cfg.coupling * self.base_prob()).min(1.0)
    }

    /// The rate the delay estimates divide by: the measured one if there is one, else MAX_RATE.
    fn estimate_rate(&self) -> u64 {
        self.measured_rate.unwrap_or(self.cfg.max_rate_bps)
    }

    /// A delay at MAX_RATE (or the measured rate, `set_measured_rate`), ns.
    fn at_max_rate(&self, bytes: u64) -> Nanos {
        let rate = self.estimate_rate();
        if rate == 0 {
            return 0;
        }
        (bytes as u128 * 8 * NANOS_PER_SEC as u128 / rate as u128) as Nanos
    }

    /// qdelayCoupledC (Annex O): C bytes over r_C = MAX_RATE - r_L (integer bit/s, so that a
    /// hand-worked delay is exact).
    pub fn classic_delay(&self, c_bytes: u64) -> Nanos {
        let max = self.estimate_rate() as u128;
        let by_weight = self.cfg.weight as u128 * max / 256;
        let arrived = self.bits_l as u128 * NANOS_PER_SEC as u128 / self.cfg.classic.t_update as u128;
        let r_c = max - by_weight.min(arrived);
        if r_c == 0 {
            return 0;
        }
        (c_bytes as u128 * 8 * NANOS_PER_SEC as u128 / r_c) as Nanos
    }

    /// Run the classic updates due by `now` (call before every change of the queues), with
    /// `c_bytes` the C queue's bytes since the previous call.
    pub fn advance(&mut self, now: SimTime, c_bytes: u64) {
        let t = self.pie.next_update();
        if t > now {
            return;
        }
        // The first update due sees the L arrivals since the last one; the rest none, so they all
        // see one delay and PIE may run them at once (its skip of unchanged updates).
        self.pie.advance(t, self.classic_delay(c_bytes));
        self.bits_l = 0;
        self.pie.advance(now, self.classic_delay(c_bytes));
    }

    /// A queue that measures its departure rate (RFC 8033 Sec. 5.2; pie.rs `DepartureRate`) uses it
    /// as MAX_RATE in Annex O's delay estimates (`classic_delay`, the L queue's), from the first
    /// measurement on; the thresholds (FLOOR, MAXTH) and the L buffer stay MAX_RATE's.
    pub fn set_measured_rate(&mut self, rate_bps: Option<u64>) {
        self.measured_rate = rate_bps;
    }

    /// Annex N's recur(): de-randomised marking.
    fn recur(&mut self, p: f64) -> bool {
        self.count += p;
        if self.count > 1.0 {
            self.count -= 1.0;
            true
        } else {
            false
        }
    }

    /// The L queue's enqueue test for a packet of `size` bytes of microflow `key` with `ecn`,
    /// `l_bytes` already in L (call `advance` first).
    pub fn enqueue_l(&mut self, now: SimTime, key: u64, ecn: Ecn, size: u32, l_bytes: u64) -> LVerdict {
        let qdelay = self.at_max_rate(l_bytes + size as u64);
        self.enqueue_l_at(now, key, ecn, size, l_bytes, qdelay)
    }

    /// `enqueue_l` with the L queue's delay `qdelay` given (a queue that measures it: the waiting
    /// time of its head) instead of Annex O's bytes at MAX_RATE.
    pub fn enqueue_l_at(
        &mut self,
        now: SimTime,
        key: u64,
        ecn: Ecn,
        size: u32,
        l_bytes: u64,
        qdelay: Nanos,
    ) -> LVerdict {
        self.stats.l_packets += 1;
        let native = self.ramp(qdelay);
        let prob_l = native.max(self.coupled_prob());
        let mark = self.recur(prob_l);
        if let Some(qp) = self.cfg.qprot {
            if self.qprotect(&qp, now, key, size, qdelay, native) {
                self.stats.sanctions += 1;
                return LVerdict::Sanction { mark };
            }
        }
        // A Not-ECT (NQB) packet cannot carry the mark: it is queued unmarked (module comment).
        let mark = if mark && ecn == Ecn::NotEct {
            self.stats.l_unmarkable += 1;
            false
        } else {
            mark
        };
        // CONFIG_BUFFER_SIZE: 10 ms at MAX_RATE by default, and (chosen: docsis-ns3 refuses a
        // smaller one) at least 2 * MAX_FRAME_SIZE, so that a frame always fits an empty queue.
        let buffer =
            self.cfg.l_buffer.unwrap_or_else(|| (self.cfg.max_rate_bps / 8 / 100).max(2 * self.cfg.max_frame as u64));
        if l_bytes + self.cfg.max_frame as u64 >= buffer {
            self.stats.l_drops += 1;
            return LVerdict::Full;
        }
        self.bits_l += size as u64 * 8;
        if mark {
            self.stats.l_marks += 1;
        }
        LVerdict::Queue { mark }
    }

    /// The C queue's enqueue test (DOCSIS-PIE's data path at drop_prob = p'^2), `c_bytes` already
    /// in C.
    pub fn enqueue_c(&mut self, now: SimTime, ecn: Ecn, size: u32, c_bytes: u64, rng: &mut Stream) -> CVerdict {
        self.stats.c_packets += 1;
        if !self.pie.drop_on_enqueue(now, c_bytes, size, rng) {
            CVerdict::Queue
        } else if ecn == Ecn::NotEct {
            self.stats.c_drops += 1;
            CVerdict::Drop
        } else {
            self.stats.c_marks += 1;
            CVerdict::Mark
        }
    }

    /// Annex P's pick_bucket: the microflow's own bucket among ATTEMPTS hashed ones, else the
    /// first expired one tried, else the shared default bucket; a bucket that has expired
    /// restarts at now.
    fn pick_bucket(&mut self, now: u64, key: u64) -> usize {
        let id = key + 1;
        let mut h32 = hash32(key);
        let mut spare = NBUCKETS;
        for _ in 0..ATTEMPTS {
            let h = (h32 as usize) & (NBUCKETS - 1);
            let b = &mut self.buckets[h];
            if b.id == id {
                b.exp = b.exp.max(now);
                return h;
            }
            if spare == NBUCKETS && b.exp <= now {
                spare = h;
            }
            h32 >>= BI_SIZE;
        }
        let b = &mut self.buckets[spare];
        b.exp = b.exp.max(now);
        b.id = id;
        spare
    }

    /// Annex P's qprotect: fill the microflow's bucket and say whether to sanction.
    fn qprotect(&mut self, qp: &QProtConfig, now: SimTime, key: u64, size: u32, qdelay: Nanos, native: f64) -> bool {
        let now = now.0;
        let b = self.pick_bucket(now, key);
        // Annex P fill_bucket: probNative * size / AGING, AGING = 2^(LG_AGING - 30) B/ns.
        let add = (native * size as f64 * (1u64 << (30 - qp.lg_aging)) as f64) as u64;
        let bucket = &mut self.buckets[b];
        bucket.exp = (bucket.exp + add).min(now + qp.max_score);
        let score = bucket.exp - now;
        let critical = qp.critical_ql.unwrap_or(self.max_th);
        qdelay > critical && qdelay as u128 * score as u128 > critical as u128 * qp.critical_score as u128
    }

    /// A microflow's queuing score at `now`, ns (0 if it holds no bucket).
    pub fn score(&self, now: SimTime, key: u64) -> Nanos {
        self.buckets.iter().find(|b| b.id == key + 1).map_or(0, |b| b.exp.saturating_sub(now.0))
    }

    /// Which queue the scheduler serves next, given the heads' sizes, and the scheduler's state
    /// after it; `commit` takes it.
    pub fn pick(&self, head_l: Option<u32>, head_c: Option<u32>) -> Option<(Lane, Drr)> {
        let mut s = self.sched;
        match (head_l, head_c) {
            (None, None) => return None,
            // One queue busy: it is served; the idle one keeps no deficit (DRR).
            (Some(_), None) => {
                s.deficit_c = 0;
                s.deficit_l = 0;
                s.l_turn = true;
                s.topped = true;
                return Some((Lane::L, s));
            }
            (None, Some(_)) => {
                s.deficit_l = 0;
                s.deficit_c = 0;
                s.l_turn = false;
                s.topped = true;
                return Some((Lane::C, s));
            }
            _ => {}
        }
        let w = self.cfg.weight as u64;
        let q = self.cfg.quantum as u64;
        loop {
            let (deficit, size, quantum) = if s.l_turn {
                (&mut s.deficit_l, head_l.unwrap() as u64 * 256, w * q)
            } else {
                (&mut s.deficit_c, head_c.unwrap() as u64 * 256, (256 - w) * q)
            };
            if !s.topped {
                *deficit += quantum;
                s.topped = true;
            }
            if size <= *deficit {
                *deficit -= size;
                return Some((if s.l_turn { Lane::L } else { Lane::C }, s));
            }
            s.l_turn = !s.l_turn;
            s.topped = false;
        }
    }

    /// Take a pick: the scheduler's state, and the served packet's sojourn time.
    pub fn commit(&mut self, lane: Lane, state: Drr, sojourn: Nanos) {
        self.sched = state;
        let st = &mut self.stats;
        match lane {
            Lane::L => {
                st.l_served += 1;
                st.l_sojourn_sum += sojourn;
                st.l_sojourn_max = st.l_sojourn_max.max(sojourn);
            }
            Lane::C => {
                st.c_served += 1;
                st.c_sojourn_sum += sojourn;
                st.c_sojourn_max = st.c_sojourn_max.max(sojourn);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Nanos = 1_000;
    const MS: Nanos = 1_000_000;
    /// 8 Gb/s: one byte is one ns at MAX_RATE, so a byte count is a delay.
    const GIG8: u64 = 8_000_000_000;

    fn dq(rate: u64) -> DualQ {
        DualQ::new(DualQConfig::docsis(rate), SimTime::ZERO)
    }

    #[test]
    fn the_classifier_sends_ect1_and_ce_to_l() {
        assert_eq!(classify(Ecn::Ect1, false, false), Lane::L);
        assert_eq!(classify(Ecn::Ce, false, false), Lane::L);
        assert_eq!(classify(Ecn::Ect0, false, false), Lane::C);
        assert_eq!(classify(Ecn::NotEct, false, false), Lane::C);
        // NQB (DSCP 45) only when the option is on.
        assert_eq!(classify(Ecn::NotEct, true, false), Lane::C);
        assert_eq!(classify(Ecn::NotEct, true, true), Lane::L);
    }

    #[test]
    fn the_ramp_at_chosen_delays() {
        // 8 Gb/s: FLOOR = 2 * 2000 * 8 / 8e9 s = 4 us < MAXTH - RANGE = 1 000 000 - 524 288 =
        // 475 712 ns, so MINTH = 475.712 us, MAXTH = 1 ms.
        let q = dq(GIG8);
        assert_eq!(q.thresholds(), (475_712, 1_000_000));
        assert_eq!(q.ramp(400 * US), 0.0); // below MINTH
        assert_eq!(q.ramp(475_712), 0.0); // at MINTH: not above it
        assert_eq!(q.ramp(475_712 + 262_144), 0.5); // half the range: 262 144 / 524 288
        assert_eq!(q.ramp(475_712 + 131_072), 0.25);
        assert_eq!(q.ramp(MS), 1.0); // MAXTH
        assert_eq!(q.ramp(3 * MS), 1.0); // above MINTH + RANGE
                                         // 10 Mb/s: FLOOR = 32 000 bits / 1e7 = 3.2 ms > 475.712 us: MINTH = 3.2 ms, MAXTH =
                                         // 3.2 ms + 524.288 us.
        assert_eq!(dq(10_000_000).thresholds(), (3_200_000, 3_724_288));
    }

    /// Two updates at a constant 20 ms classic delay (module comment; RFC 8034 Appendix A).
    fn two_updates() -> (DualQ, f64) {
        let mut q = dq(GIG8);
        // 20 000 000 bytes in C, no L arrivals: r_C = MAX_RATE, qdelayC = 20 ms exactly.
        assert_eq!(q.classic_delay(20_000_000), 20 * MS);
        q.advance(SimTime(32 * MS), 20_000_000);
        // 16 ms: p = 0.25 * (0.02 - 0.01) + 2.5 * (0.02 - 0) = 0.0525; drop_prob 0 < 1e-6: / 2048.
        // 32 ms: p = 0.25 * 0.01 + 2.5 * 0 = 0.0025; drop_prob 2.56e-5 < 1e-4: / 128.
        // Neither sample below LATENCY_LOW (5 ms) nor above LATENCY_HIGH (200 ms).
        let p1 = (0.25 * (0.02 - 0.01) + 2.5 * (0.02 - 0.0)) / 2048.0;
        let d = p1 + (0.25 * (0.02 - 0.01) + 2.5 * 0.0) / 128.0; // qdelay - qdelay_old = 0
        (q, d)
    }

    #[test]
    fn the_base_probability_after_hand_worked_updates() {
        let (q, d) = two_updates();
        assert_eq!(q.classic_prob(), d);
        assert_eq!(q.base_prob(), d.sqrt());
        // 0.0525 / 2048 + 0.0025 / 128 = 2.5634765625e-5 + 1.953125e-5 = 4.5166015625e-5
        assert!((d - 4.516_601_562_5e-5).abs() < 1e-18);
    }

    #[test]
    fn the_coupling_k_p_and_p_squared() {
        let (q, d) = two_updates();
        let p = d.sqrt(); // p' = 0.0067206...
        assert_eq!(q.coupled_prob(), 2.0 * p); // L: k * p', k = 2
        assert_eq!(q.classic_prob(), d); // C: p'^2
        assert!((q.classic_prob() - p * p).abs() < 1e-18);
        // Far above target drop_prob passes 0.25, and k * p' is capped at 1.
        let mut hot = dq(GIG8);
        hot.advance(SimTime(2000 * MS), 300_000_000); // 300 ms: +0.02 a step above LATENCY_HIGH
        assert!(hot.classic_prob() > 0.25);
        assert_eq!(hot.coupled_prob(), 1.0);
    }

    #[test]
    fn the_l_marking_is_max_of_ramp_and_coupling_derandomised() {
        // probNative 0.5 (L at MINTH + RANGE/2 = 737 856 B at 1 B/ns), probCL 0: recur's count
        // goes 0.5, 1.0 (not > 1), 1.5 -> mark (0.5), 1.0, 1.5 -> mark...
        let mut q = dq(GIG8);
        let marks: Vec<bool> = (0..6)
            .map(|_| matches!(q.enqueue_l(SimTime::ZERO, 0, Ecn::Ect1, 1000, 736_856), LVerdict::Queue { mark: true }))
            .collect();
        assert_eq!(marks, vec![false, false, true, false, true, false]);
        assert_eq!(q.stats.l_marks, 2);
        // A Not-ECT (NQB) packet the ramp would mark is queued unmarked, never dropped: at MAXTH
        // probNative = 1, so the count (0.5 + 1 = 1.5) passes 1 and is spent.
        assert_eq!(q.enqueue_l(SimTime::ZERO, 0, Ecn::NotEct, 1000, MS - 1000), LVerdict::Queue { mark: false });
        assert_eq!((q.stats.l_unmarkable, q.stats.l_drops, q.stats.l_marks), (1, 0, 2));
    }

    #[test]
    fn nqb_packets_are_never_dropped_by_the_coupling() {
        // The classic queue far above target drives k * p' to 1: every L packet draws a mark.
        // Not-ECT NQB packets take none and are all queued (issue: up to 92 % of a game's echoes
        // were dropped here); ECT(1) packets are all marked.
        let mut q = dq(GIG8);
        q.advance(SimTime(2000 * MS), 300_000_000);
        assert_eq!(q.coupled_prob(), 1.0);
        for i in 0..100 {
            let v = q.enqueue_l(SimTime(2000 * MS), uflow(i, Way::Forward), Ecn::NotEct, 100, 0);
            assert_eq!(v, LVerdict::Queue { mark: false });
        }
        assert_eq!(q.enqueue_l(SimTime(2000 * MS), 7, Ecn::Ect1, 100, 0), LVerdict::Queue { mark: true });
        // Every packet but the first draws a mark (recur's count reaches 1, then passes it).
        assert_eq!((q.stats.l_drops, q.stats.l_unmarkable), (0, 99));
    }

    #[test]
    fn queue_protection_sanctions_the_flow_over_its_score_and_no_other() {
        // 1 B/ns; qdelay 1.5 ms (1 500 000 B with the packet) > CRITICALqL = MAXTH = 1 ms, so
        // probNative = 1 and each 1000-B packet adds 1 * 1000 * 2^(30 - 19) = 2 048 000 ns.
        // Sanction when 1.5 ms * score > 1 ms * 4 ms, i.e. score > 2.667 ms.
        let mut q = dq(GIG8);
        let (a, b) = (uflow(1, Way::Forward), uflow(2, Way::Forward));
        let l = 1_500_000 - 1000;
        let v1 = q.enqueue_l(SimTime::ZERO, a, Ecn::Ect1, 1000, l); // A: score 2.048 ms
        assert!(matches!(v1, LVerdict::Queue { .. }));
        let v2 = q.enqueue_l(SimTime::ZERO, a, Ecn::Ect1, 1000, l); // A: 4.096 ms -> sanction
        assert!(matches!(v2, LVerdict::Sanction { .. }));
        let v3 = q.enqueue_l(SimTime::ZERO, b, Ecn::Ect1, 1000, l); // B: its own 2.048 ms
        assert!(matches!(v3, LVerdict::Queue { .. }));
        assert_eq!((q.score(SimTime::ZERO, a), q.score(SimTime::ZERO, b)), (4_096_000, 2_048_000));
        assert_eq!(q.stats.sanctions, 1);
        // The score ages one ns per ns: 1 ms later A holds 3.096 ms, B 1.048 ms.
        assert_eq!(q.score(SimTime(MS), a), 3_096_000);
        assert_eq!(q.score(SimTime(MS), b), 1_048_000);
        // Below CRITICALqL nobody is sanctioned whatever the score (and below MINTH nothing is
        // added): A at 0.4 ms of L queue.
        let v = q.enqueue_l(SimTime(MS), a, Ecn::Ect1, 1000, 399_000);
        assert!(matches!(v, LVerdict::Queue { .. }));
        assert_eq!(q.score(SimTime(MS), a), 3_096_000);
        // At 5 ms A's bucket has expired (4.096 ms): it starts again at now, 2.048 ms, no sanction.
        let v = q.enqueue_l(SimTime(5 * MS), a, Ecn::Ect1, 1000, l);
        assert!(matches!(v, LVerdict::Queue { .. }));
        assert_eq!(q.score(SimTime(5 * MS), a), 2_048_000);
        assert_eq!(q.stats.sanctions, 1);
    }

    #[test]
    fn the_scheduler_gives_l_its_weight_under_saturation() {
        // Quanta per round: L 230 * 1500 / 256 = 1347.66 B, C 26 * 1500 / 256 = 152.34 B, one
        // 1500-B packet's worth in all. After r rounds L has sent floor(230 r / 256) packets and
        // C floor(26 r / 256): at r = 255, 229 + 25 = 254; at r = 256, 230 + 26 = 256. So the
        // first 256 picks are exactly 230 L and 26 C.
        let mut q = dq(GIG8);
        let mut n_l = 0;
        for _ in 0..256 {
            let (lane, s) = q.pick(Some(1500), Some(1500)).unwrap();
            q.commit(lane, s, 0);
            n_l += (lane == Lane::L) as u32;
        }
        assert_eq!((n_l, 256 - n_l), (230, 26));
        // One queue alone is served whatever its weight.
        assert_eq!(q.pick(None, Some(1500)).map(|p| p.0), Some(Lane::C));
        assert_eq!(q.pick(Some(1500), None).map(|p| p.0), Some(Lane::L));
        assert_eq!(q.pick(None, None), None);
    }
}
