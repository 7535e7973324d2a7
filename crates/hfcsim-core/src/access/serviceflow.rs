//! A modem's upstream service flow on a request/grant channel: its queue is the station's own,
//! the queue the modem requests from, so the flow's buffer, its AQM and its rate cap all see every
//! packet waiting for a grant. No queue sits behind the flow's (docs/design.md, habit 18: "a scheduler pulls";
//! DOCSIS MULPI: a modem requests bandwidth for what its service flow holds, and CableLabs'
//! docsis-ns3 keeps one queue per flow, from which the grants are filled).
//!
//! Rules and their sources:
//! - Buffer: the flow's (MULPI C.1.2.17's 100 ms at its rate by default, or the scenario's),
//!   counting every packet the station holds, requested or not; an arrival that does not fit is
//!   dropped (tail drop).
//! - Rate cap (MULPI C.2.2.7.2-3, C.2.2.7.10; shaper.rs): the modem requests only what its token
//!   bucket allows, as docsis-ns3's modem shapes each request by its tokens (CmNetDevice
//!   ShapeRequest): packets leave the bucket in order, each `ready` when the bucket holds its
//!   Ethernet frame, and a request covers only packets that are ready. (The CMTS could also police
//!   the grants; with the modem shaping its requests there is nothing left for it to cut.)
//! - AQM at enqueue: PIE and DOCSIS-PIE (RFC 8033, RFC 8034; aqm/pie.rs) with the queue's delay
//!   estimated as the modem can, its bytes over the configured rate (RFC 8034 Sec. 4.2; docsis-ns3's
//!   ExpectedDelay counts the bytes already requested too). Where the channel gives the modem less
//!   than its rate, the estimate is short by that ratio: the modem cannot see its grants coming.
//! - AQM at dequeue: CoDel (RFC 8289) decides as a packet leaves the queue, when the modem takes
//!   it for the burst of a grant it has received, from its sojourn since it arrived (codel.rs
//!   `judge`); a packet it drops has been requested and granted, so its bytes still go in the
//!   burst (chosen: the modem fills its grant with what it requested) and it is not delivered.
//!   PIE's periodic update runs on the queue as it was up to each arrival and each departure.
//! - Low Latency DOCSIS (MULPI Annex N-P; aqm/dualq.rs): the aggregate's two service flows are two
//!   stations of the modem, each requesting for its own queue (MULPI: each service flow has its
//!   own SID and requests). The classic station holds the flow and its dual queue; a packet the
//!   classifier puts in the low-latency queue joins the L station. The aggregate's rate cap shapes
//!   the classic flow; low-latency packets are not held for it but pay it (docsis-ns3's modem
//!   shapes only the classic requests, the CMTS keeping the aggregate's rate). The CMTS's
//!   inter-flow weight is not modelled: the two flows' requests are granted in the grant
//!   scheduler's order (chosen; MULPI leaves upstream scheduling to the CMTS's vendor).

use crate::net::aqm::codel::Judgement;
use crate::net::aqm::dualq::{classify, CVerdict, LVerdict, Lane};
use crate::net::aqm::{Codel, DualQ, Pie, Verdict};
use crate::net::servicequeue::{LldInput, QueueDrop, QueueStats};
use crate::net::shaper::TokenBucket;
use crate::net::Framing;
use crate::packet::Ecn;
use crate::rng::Stream;
use crate::time::{Nanos, SimTime, NANOS_PER_SEC};

/// The flow's AQM.
pub enum FlowAqm {
    DropTail,
    /// PIE or DOCSIS-PIE (by its configuration), at enqueue.
    Pie(Box<Pie>),
    /// CoDel, as packets leave in a burst.
    Codel(Box<Codel>),
    /// LLD's dual queue; `l` is the low-latency station (set by the channel).
    Lld {
        dq: Box<DualQ>,
        l: u32,
    },
}

/// A modem's upstream service flow (module comment).
pub struct ServiceFlow {
    pub name: String,
    /// Its rate cap, counting `counted` bytes of each packet (MULPI C.2.2.7.2: its Ethernet frame).
    bucket: Option<TokenBucket>,
    counted: Framing,
    pub aqm: FlowAqm,
    rng: Stream,
    /// When the last packet queued became ready (the bucket's order).
    last_ready: SimTime,
    pub stats: QueueStats,
}

/// Where an arriving packet goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Into the classic (or only) queue, ready to be requested at `ready`; `mark`: set CE.
    Queue {
        ready: SimTime,
        mark: bool,
    },
    /// Into the low-latency station's queue, ready now; `mark`: set CE.
    LowLatency {
        mark: bool,
    },
    Drop(QueueDrop),
}

impl ServiceFlow {
    pub fn new(name: String, bucket: Option<TokenBucket>, counted: Framing, aqm: FlowAqm, rng: Stream) -> ServiceFlow {
        ServiceFlow { name, bucket, counted, aqm, rng, last_ready: SimTime::ZERO, stats: QueueStats::default() }
    }

    /// The low-latency station of an LLD flow.
    pub fn low_latency(&self) -> Option<u32> {
        match &self.aqm {
            FlowAqm::Lld { l, .. } => Some(*l),
            _ => None,
        }
    }

    /// The queue's delay as the modem estimates it: `bytes` over the configured rate (module comment).
    fn estimate(&self, bytes: u64) -> Nanos {
        match &self.bucket {
            Some(b) => (bytes as u128 * 8 * NANOS_PER_SEC as u128 / b.rate_bps() as u128) as Nanos,
            None => 0,
        }
    }

    /// A packet of `size` IP bytes arrives at `now`; the station holds `held` bytes (the classic
    /// station for LLD), the low-latency station `l_held`, and `fits(held)` says whether the packet
    /// fits the buffer. Returns where it goes.
    pub fn admit(
        &mut self,
        now: SimTime,
        size: u32,
        input: LldInput,
        held: u64,
        l_held: u64,
        fits: impl Fn() -> bool,
    ) -> Admit {
        let counted = self.counted.wire(size) as u64;
        let estimate = self.estimate(held);
        let mut mark = false;
        match &mut self.aqm {
            FlowAqm::DropTail | FlowAqm::Codel(_) => {}
            FlowAqm::Pie(p) => {
                p.advance(now, estimate);
                match p.on_enqueue(now, held, size, input.ecn.capable(), &mut self.rng) {
                    Verdict::Keep => {}
                    Verdict::Mark => mark = true,
                    Verdict::Drop => {
                        self.stats.drops_aqm += 1;
                        return Admit::Drop(QueueDrop::Aqm);
                    }
                }
            }
            FlowAqm::Lld { dq, .. } => {
                dq.advance(now, held);
                if classify(input.ecn, input.nqb, dq.config().nqb_to_l) == Lane::L {
                    match dq.enqueue_l(now, input.uflow, input.ecn, size, l_held) {
                        LVerdict::Queue { mark } => {
                            // Not held for the cap, but it pays the aggregate's (module comment).
                            if let Some(b) = self.bucket.as_mut() {
                                b.take(now, counted);
                            }
                            if mark {
                                self.stats.marks_aqm += 1;
                            }
                            self.note_max(held + l_held + size as u64);
                            return Admit::LowLatency { mark };
                        }
                        LVerdict::Full => {
                            self.stats.drops_full += 1;
                            return Admit::Drop(QueueDrop::Full);
                        }
                        // Annex P: a sanctioned packet joins the classic queue.
                        LVerdict::Sanction { mark: m } => mark = m && input.ecn != Ecn::NotEct,
                    }
                }
                match dq.enqueue_c(now, input.ecn, size, held, &mut self.rng) {
                    CVerdict::Drop => {
                        self.stats.drops_aqm += 1;
                        return Admit::Drop(QueueDrop::Aqm);
                    }
                    CVerdict::Mark => mark = true,
                    CVerdict::Queue => {}
                }
            }
        }
        if !fits() {
            self.stats.drops_full += 1;
            return Admit::Drop(QueueDrop::Full);
        }
        if mark {
            self.stats.marks_aqm += 1;
        }
        self.note_max(held + l_held + size as u64);
        // The bucket in the packets' order: each is ready when the bucket holds its frame.
        let ready = match self.bucket.as_mut() {
            Some(b) => {
                let t = b.conforms_at(now.max(self.last_ready), counted);
                b.take(t, counted);
                t
            }
            None => now,
        };
        self.last_ready = ready;
        Admit::Queue { ready, mark }
    }

    fn note_max(&mut self, bytes: u64) {
        self.stats.max_bytes = self.stats.max_bytes.max(bytes);
    }

    /// A packet of `size` IP bytes leaves the queue at `at` (when the modem, holding the grant
    /// for it, takes it for its burst), having arrived at `enqueued`; `held` bytes stay behind. Whether it is delivered, marked or dropped by CoDel
    /// (module comment).
    pub fn depart(&mut self, at: SimTime, enqueued: SimTime, size: u32, ect: bool, held: u64) -> Delivery {
        // PIE's and the dual queue's updates run on the queue as it was until now.
        let before = self.estimate(held + size as u64);
        let verdict = match &mut self.aqm {
            FlowAqm::Codel(c) => c.judge(at, at.0.saturating_sub(enqueued.0), held, ect),
            FlowAqm::Pie(p) => {
                p.advance(at, before);
                Judgement::Keep
            }
            FlowAqm::Lld { dq, .. } => {
                dq.advance(at, held + size as u64);
                Judgement::Keep
            }
            FlowAqm::DropTail => Judgement::Keep,
        };
        match verdict {
            Judgement::Keep => {
                self.stats.sent += 1;
                Delivery::Deliver
            }
            Judgement::Mark => {
                self.stats.sent += 1;
                self.stats.marks_aqm += 1;
                Delivery::Mark
            }
            Judgement::Drop => {
                self.stats.drops_aqm += 1;
                Delivery::Drop
            }
        }
    }
}

/// What happens to a packet as it leaves (`ServiceFlow::depart`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    Deliver,
    /// Delivered CE-marked (CoDel on an ECN-capable packet).
    Mark,
    Drop,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::aqm::dualq::{uflow, DualQConfig};
    use crate::net::aqm::PieConfig;
    use crate::packet::Way;

    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;

    fn plain() -> LldInput {
        LldInput::default()
    }

    #[test]
    fn the_cap_decides_when_each_packet_may_be_requested_in_order() {
        // 8 Mb/s (1 B/us), a 1522-B burst, full at 0; three 1000-B packets at 0 and one at 5 ms.
        // #1 ready at 0 (522 B left); #2 needs 478 B more: 478 us; #3 then 1000 B: 1478 us; #4 at
        // 5 ms finds 1522 B again (capped): at once.
        let mut f = ServiceFlow::new(
            "f".into(),
            Some(TokenBucket::new(8_000_000, 1522, None)),
            Framing::NONE,
            FlowAqm::DropTail,
            Stream::new(1, 1),
        );
        let ready = |a| match a {
            Admit::Queue { ready, .. } => ready.0,
            other => panic!("{other:?}"),
        };
        assert_eq!(ready(f.admit(SimTime(0), 1000, plain(), 0, 0, || true)), 0);
        assert_eq!(ready(f.admit(SimTime(0), 1000, plain(), 1000, 0, || true)), 478 * US);
        assert_eq!(ready(f.admit(SimTime(0), 1000, plain(), 2000, 0, || true)), 1478 * US);
        assert_eq!(ready(f.admit(SimTime(5 * MS), 1000, plain(), 0, 0, || true)), 5 * MS);
        // A packet the buffer has no room for is dropped, and pays nothing.
        assert_eq!(f.admit(SimTime(5 * MS), 1000, plain(), 0, 0, || false), Admit::Drop(QueueDrop::Full));
        assert_eq!(ready(f.admit(SimTime(5 * MS), 522, plain(), 0, 0, || true)), 5 * MS);
        assert_eq!((f.stats.drops_full, f.stats.max_bytes), (1, 3000));
    }

    #[test]
    fn docsis_pie_reads_the_whole_queue_at_the_configured_rate() {
        // DOCSIS-PIE (RFC 8034) at 8 Mb/s: 100 KB held is an estimated 100 ms, far above the 10 ms
        // target, so the controller's drop probability grows at each 16 ms update; the packets
        // already requested count as much as the others (docsis-ns3's ExpectedDelay).
        let pie = Pie::new(PieConfig::docsis(), SimTime::ZERO);
        let mut f = ServiceFlow::new(
            "f".into(),
            Some(TokenBucket::new(8_000_000, 1522, None)),
            Framing::NONE,
            FlowAqm::Pie(Box::new(pie)),
            Stream::new(1, 1),
        );
        assert_eq!(f.estimate(100_000), 100 * MS);
        let mut drops = 0;
        for k in 0..400u64 {
            if matches!(f.admit(SimTime(k * MS), 1500, plain(), 100_000, 0, || true), Admit::Drop(QueueDrop::Aqm)) {
                drops += 1;
            }
        }
        assert!(drops > 0 && f.stats.drops_aqm == drops);
        let FlowAqm::Pie(p) = &f.aqm else { unreachable!() };
        assert!(p.drop_prob() > 0.005, "{}", p.drop_prob());
    }

    #[test]
    fn lld_sends_ect1_and_nqb_to_the_low_latency_station_unheld_by_the_cap() {
        // Two classic 1500-B packets take the 1522-B bucket's tokens and more; an NQB echo and an
        // ECT(1) packet then go to the L station at once (not held for the cap), and pay it.
        let mut cfg = DualQConfig::docsis(8_000_000);
        cfg.nqb_to_l = true;
        let dq = DualQ::new(cfg, SimTime::ZERO);
        let mut f = ServiceFlow::new(
            "f".into(),
            Some(TokenBucket::new(8_000_000, 1522, None)),
            Framing::NONE,
            FlowAqm::Lld { dq: Box::new(dq), l: 7 },
            Stream::new(1, 1),
        );
        assert_eq!(f.low_latency(), Some(7));
        assert!(matches!(f.admit(SimTime(0), 1500, plain(), 0, 0, || true), Admit::Queue { .. }));
        assert!(
            matches!(f.admit(SimTime(0), 1500, plain(), 1500, 0, || true), Admit::Queue { ready, .. } if ready.0 == 1478 * US)
        );
        let nqb = LldInput { ecn: Ecn::NotEct, nqb: true, uflow: uflow(9, Way::Forward) };
        assert_eq!(f.admit(SimTime(10 * US), 100, nqb, 3000, 0, || true), Admit::LowLatency { mark: false });
        let l4s = LldInput { ecn: Ecn::Ect1, nqb: false, uflow: uflow(3, Way::Forward) };
        assert!(matches!(f.admit(SimTime(20 * US), 100, l4s, 3000, 100, || true), Admit::LowLatency { .. }));
        // The next classic packet waits for the tokens the L packets took too: 1478 us + 1500 us
        // + 200 us.
        assert!(
            matches!(f.admit(SimTime(30 * US), 1500, plain(), 3000, 200, || true), Admit::Queue { ready, .. } if ready.0 == (1478 + 1500 + 200) * US)
        );
    }
}
