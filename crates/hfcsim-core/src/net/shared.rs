//! A link shared by service queues that takes the next packet from them when it can send: the
//! DOCSIS downstream channel serving the CMTS's service flows (and a FIFO upstream channel serving
//! the modems'). It has no buffer of its own: every packet waits in its service flow's queue,
//! under that flow's AQM, until the channel takes it (docs/design.md, habit 18: "a scheduler pulls"; Linux's
//! `qdisc_restart` dequeues when the device can send; CableLabs' docsis-ns3 takes from each
//! service flow's queue). A FIFO behind the service flows would hold the waiting that no AQM sees.
//!
//! # The scheduler, its rules and their sources
//! MULPI states the QoS parameters a CMTS must honour and leaves the scheduling among flows to its
//! vendor; each choice below is named.
//! - A flow may send only when its head conforms to its rate cap: the Maximum Sustained Traffic
//!   Rate and Maximum Traffic Burst, and the Peak Traffic Rate (MULPI C.2.2.7.2, C.2.2.7.3,
//!   C.2.2.7.10; shaper.rs). The bucket pays when the channel takes the packet.
//! - First, flows below their Minimum Reserved Traffic Rate (MULPI C.2.2.7.5: the CMTS reserves it
//!   for the flow): a flow whose reserved-rate bucket (filling at that rate, one largest frame deep;
//!   chosen) holds its head's bytes is served before any other, in list order. Every packet the
//!   flow sends pays that bucket while it has the bytes, so a flow served at or above its reserve
//!   holds none in hand. (Cisco's DOCSIS WFQ scheduler likewise serves a flow's reserved rate from
//!   a "CIR queue" and its excess as best effort.)
//! - The rest is shared by deficit round robin (Shreedhar & Varghese, SIGCOMM 1995) over the flows
//!   with a backlog, in bytes on the channel, each flow's quantum one largest frame times its
//!   Traffic Priority + 1 (MULPI C.2.2.7.1: 0 to 7, a higher priority SHOULD get "lower delay and
//!   higher buffering preference", the algorithm left to the vendor; chosen: Cisco's DOCSIS WFQ
//!   scheduler shares the excess bandwidth in proportion to an excess ratio of 4 x (priority + 1)
//!   by default). Flows of equal priority that can all send share the channel equally by bytes; no
//!   priority starves another. A flow that may not send yet (its cap) gives its turn away and
//!   keeps no deficit, as an empty one does.
//! - Work conserving: the channel idles only while no flow may send.
//!
//! Timing: the channel serialises one packet at a time at its rate (`wire` bytes each), so the next
//! choice is made when the last bit of the packet before has left; each packet reaches the next
//! element `delay` after its last bit, unless the channel's media loss takes it (one draw per
//! packet, in the order packets leave, from the channel's own stream).
//!
//! A pure state machine handed the time: the fabric tells it when a flow's queue receives a packet
//! (`wake`), asks when it next needs to act (`next_deadline`) and lets it act (`on_timer`).

use super::link::{Framing, Role};
use super::servicequeue::{QueueOut, ServiceQueue};
use super::shaper::TokenBucket;
use crate::rng::Stream;
use crate::time::{tx_time, Nanos, SimTime};
use std::collections::VecDeque;

/// Traffic Priority levels (MULPI C.2.2.7.1).
pub const PRIORITIES: usize = 8;

/// One service flow as the channel's scheduler sees it.
#[derive(Clone, Debug)]
pub struct Member {
    /// The flow's queue (the fabric's service queue id).
    pub queue: u32,
    /// Traffic Priority, 0-7.
    pub priority: u8,
    /// The Minimum Reserved Traffic Rate's bucket, if the flow has one.
    pub reserved: Option<TokenBucket>,
    deficit: u64,
    listed: bool,
    topped: bool,
}

impl Member {
    pub fn new(queue: u32, priority: u8, reserved: Option<TokenBucket>) -> Member {
        assert!((priority as usize) < PRIORITIES, "Traffic Priority is 0-7");
        Member { queue, priority, reserved, deficit: 0, listed: false, topped: false }
    }
}

/// What the channel did at its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedOut {
    /// Packet `tag` of member `member` left its queue; its last bit leaves the channel at `end`
    /// and it reaches the next element at `at` (`end` + the delay), unless `lost`.
    Sent { member: u32, tag: u64, end: SimTime, at: SimTime, lost: bool, waited: Nanos },
    /// A member's queue dropped packet `tag` as the channel took from it (CoDel, at dequeue).
    Dropped { member: u32, tag: u64 },
    /// A member's queue marked packet `tag` CE as it left (CoDel); its `Sent` follows.
    Marked { tag: u64 },
}

/// Counters of one shared link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SharedStats {
    pub sent: u64,
    pub lost: u64,
    /// Bytes on the wire, and the time the transmitter was busy.
    pub wire_bytes: u64,
    pub busy: Nanos,
}

/// The link and its scheduler (module comment).
pub struct SharedLink {
    pub name: String,
    pub role: Role,
    rate_bps: u64,
    /// A packet's bytes on the channel.
    wire: Framing,
    pub delay: Nanos,
    loss: f64,
    rng: Stream,
    quantum: u64,
    members: Vec<Member>,
    /// The flows with a backlog, in round-robin order (member indexes).
    list: VecDeque<u32>,
    any_reserved: bool,
    /// When the transmitter is free.
    free_at: SimTime,
    /// When the channel must act next (None: no flow has a backlog).
    next: Option<SimTime>,
    pub stats: SharedStats,
    scratch: Vec<QueueOut>,
}

impl SharedLink {
    /// A channel of `rate_bps` (> 0) whose packets take `wire` bytes, `delay` of propagation and a
    /// media loss of `loss` drawn from `rng`, serving `members`; the DRR quantum is `quantum` wire
    /// bytes, at least the largest packet's.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        role: Role,
        rate_bps: u64,
        wire: Framing,
        delay: Nanos,
        loss: f64,
        rng: Stream,
        quantum: u32,
        members: Vec<Member>,
    ) -> SharedLink {
        assert!(rate_bps > 0, "a shared link needs a rate");
        let any_reserved = members.iter().any(|m| m.reserved.is_some());
        SharedLink {
            name,
            role,
            rate_bps,
            wire,
            delay,
            loss,
            rng,
            quantum: quantum.max(1) as u64,
            members,
            list: VecDeque::new(),
            any_reserved,
            free_at: SimTime::ZERO,
            next: None,
            stats: SharedStats::default(),
            scratch: Vec::new(),
        }
    }

    /// The channel's rate, b/s.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// Member `m`'s queue has received a packet at `now`.
    pub fn wake(&mut self, now: SimTime, m: u32, queues: &[ServiceQueue]) {
        let mem = &mut self.members[m as usize];
        if !mem.listed {
            mem.listed = true;
            mem.deficit = 0;
            mem.topped = false;
            self.list.push_back(m);
        }
        let q = &queues[mem.queue as usize];
        if let Some(t) = q.head_ready(now.max(self.free_at)) {
            if self.next.is_none_or(|n| t < n) {
                self.next = Some(t);
            }
        }
    }

    /// When the channel must act next.
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.next
    }

    fn ready(&self, m: u32, now: SimTime, queues: &[ServiceQueue]) -> bool {
        queues[self.members[m as usize].queue as usize].head_ready(now).is_some_and(|t| t <= now)
    }

    /// A member below its reserved rate that may send now, in list order.
    fn reserved_pick(&self, now: SimTime, queues: &[ServiceQueue]) -> Option<u32> {
        self.list.iter().copied().find(|&m| {
            let mem = &self.members[m as usize];
            let Some(r) = &mem.reserved else { return false };
            let Some(size) = queues[mem.queue as usize].head_size() else { return false };
            self.ready(m, now, queues) && r.conforms_at(now, self.wire.wire(size) as u64) <= now
        })
    }

    /// Deficit round robin, each flow's quantum weighted by its priority: the member to serve now,
    /// or None.
    fn drr_pick(&mut self, now: SimTime, queues: &[ServiceQueue]) -> Option<u32> {
        let n = self.list.len();
        // Each member is looked at at most twice: once to top up its deficit, once after.
        for _ in 0..=2 * n {
            let &m = self.list.front()?;
            let ready = self.ready(m, now, queues);
            let mem = &mut self.members[m as usize];
            let size = queues[mem.queue as usize].head_size().map(|s| self.wire.wire(s) as u64);
            let Some(size) = size.filter(|_| ready) else {
                // It may not send (its cap): its turn goes to the next, with no deficit kept.
                mem.deficit = 0;
                mem.topped = false;
                self.list.rotate_left(1);
                continue;
            };
            if !mem.topped {
                mem.deficit += self.quantum * (mem.priority as u64 + 1);
                mem.topped = true;
            }
            if size <= mem.deficit {
                mem.deficit -= size;
                return Some(m);
            }
            mem.topped = false;
            self.list.rotate_left(1);
        }
        None
    }

    /// Act at `now`: if the transmitter is free, take the next packet and start sending it.
    pub fn on_timer(&mut self, now: SimTime, queues: &mut [ServiceQueue], out: &mut Vec<SharedOut>) {
        if self.next.is_none_or(|t| t > now) {
            return;
        }
        if self.free_at > now {
            self.next = Some(self.free_at);
            return;
        }
        loop {
            let picked = if self.any_reserved { self.reserved_pick(now, queues) } else { None };
            let Some(m) = picked.or_else(|| self.drr_pick(now, queues)) else {
                // Nobody may send now: wake when the first cap allows.
                self.next = self.earliest(now, queues);
                return;
            };
            let qid = self.members[m as usize].queue as usize;
            let mut qout = std::mem::take(&mut self.scratch);
            let served = queues[qid].serve(now, &mut qout);
            for o in qout.drain(..) {
                out.push(match o {
                    QueueOut::Dropped { tag } => SharedOut::Dropped { member: m, tag },
                    QueueOut::Marked { tag } => SharedOut::Marked { tag },
                    QueueOut::Sent { .. } => unreachable!("serve sends nothing"),
                });
            }
            self.scratch = qout;
            if queues[qid].head_size().is_none() {
                self.unlist(m);
            }
            let Some((tag, size, waited)) = served else { continue };
            let wire = self.wire.wire(size);
            // Every packet of the flow counts toward its reserved rate, however it was chosen, while
            // the bucket has the bytes (a flow served above its reserve keeps none in hand).
            if let Some(r) = self.members[m as usize].reserved.as_mut() {
                if r.conforms_at(now, wire as u64) <= now {
                    r.take(now, wire as u64);
                }
            }
            let tx = tx_time(wire, self.rate_bps);
            let end = now + tx;
            self.free_at = end;
            let lost = self.rng.bernoulli(self.loss);
            self.stats.sent += 1;
            self.stats.lost += lost as u64;
            self.stats.wire_bytes += wire as u64;
            self.stats.busy += tx;
            out.push(SharedOut::Sent { member: m, tag, end, at: end + self.delay, lost, waited });
            self.next = (!self.list.is_empty()).then_some(end);
            return;
        }
    }

    /// Member `m`'s queue is empty: it leaves its level's list.
    fn unlist(&mut self, m: u32) {
        let mem = &mut self.members[m as usize];
        mem.listed = false;
        mem.deficit = 0;
        mem.topped = false;
        if let Some(i) = self.list.iter().position(|&x| x == m) {
            self.list.remove(i);
        }
    }

    /// The first time after `now` a listed member may send.
    fn earliest(&self, now: SimTime, queues: &[ServiceQueue]) -> Option<SimTime> {
        self.list.iter().filter_map(|&m| queues[self.members[m as usize].queue as usize].head_ready(now)).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::QueueLimit;
    use crate::net::servicequeue::Aqm;

    const MS: u64 = 1_000_000;
    const US: u64 = 1_000;

    fn queue(cap: Option<TokenBucket>) -> ServiceQueue {
        ServiceQueue::new(
            "q".into(),
            Role::DownstreamChannel,
            QueueLimit::Unbounded,
            cap,
            Framing::NONE,
            0,
            Framing::NONE,
            0,
            Aqm::DropTail,
            Stream::new(1, 1),
        )
        .pulled()
    }

    /// An 8 Mb/s channel (1000 B in 1 ms), 1 ms of propagation, a 1000-byte quantum.
    fn channel(members: Vec<Member>) -> SharedLink {
        SharedLink::new(
            "ch".into(),
            Role::DownstreamChannel,
            8_000_000,
            Framing::NONE,
            MS,
            0.0,
            Stream::new(1, 2),
            1000,
            members,
        )
    }

    /// Drive the channel: `arrivals` are (time, member, tag, size); returns (tag, arrival beyond).
    fn run(
        ch: &mut SharedLink,
        queues: &mut [ServiceQueue],
        mut arrivals: Vec<(u64, u32, u64, u32)>,
    ) -> Vec<(u64, u64)> {
        arrivals.reverse();
        let mut got = Vec::new();
        loop {
            let a = arrivals.last().map(|a| a.0);
            let d = ch.next_deadline().map(|t| t.0);
            let now = match (a, d) {
                (None, None) => return got,
                (Some(a), Some(d)) => a.min(d),
                (Some(a), None) => a,
                (None, Some(d)) => d,
            };
            while arrivals.last().is_some_and(|a| a.0 == now) {
                let (t, m, tag, size) = arrivals.pop().unwrap();
                let q = ch.members()[m as usize].queue as usize;
                queues[q].enqueue(SimTime(t), tag, size).unwrap();
                ch.wake(SimTime(t), m, queues);
            }
            let mut out = Vec::new();
            ch.on_timer(SimTime(now), queues, &mut out);
            for o in out {
                if let SharedOut::Sent { tag, at, lost: false, .. } = o {
                    got.push((tag, at.0));
                }
            }
        }
    }

    #[test]
    fn deficit_round_robin_on_a_hand_worked_timeline() {
        // A: three 1000-B packets at 0; B: one 500-B packet at 0.5 ms.
        // 0: A1 (0-1 ms, beyond at 2). 1 ms: A has spent its quantum, B's turn: B1 (1-1.5 ms, at
        // 2.5). 1.5 ms: A, a new quantum: A2 (1.5-2.5, at 3.5). 2.5 ms: A alone: A3 (2.5-3.5, at
        // 4.5). The channel never idles while a packet waits.
        let mut queues = vec![queue(None), queue(None)];
        let mut ch = channel(vec![Member::new(0, 0, None), Member::new(1, 0, None)]);
        let got =
            run(&mut ch, &mut queues, vec![(0, 0, 1, 1000), (0, 0, 2, 1000), (0, 0, 3, 1000), (500 * US, 1, 10, 500)]);
        assert_eq!(got, vec![(1, 2 * MS), (10, 2500 * US), (2, 3500 * US), (3, 4500 * US)]);
        assert_eq!(ch.stats.busy, 3500 * US);
        // B waited 0.5 ms behind A1; A3 waited 2.5 ms.
        assert_eq!((queues[1].waits.wait_max, queues[0].waits.wait_max), (500 * US, 2500 * US));
    }

    #[test]
    fn a_capped_flow_gives_its_turn_away_and_the_channel_wakes_for_it() {
        // A capped at 1 Mb/s with a 1000-B burst: A1 at 0 takes the bucket; A2 conforms 8 ms later.
        // B's packet at 2 ms goes at once (A may not send); the channel then idles until 8 ms.
        let mut queues = vec![queue(Some(TokenBucket::new(1_000_000, 1000, None))), queue(None)];
        let mut ch = channel(vec![Member::new(0, 0, None), Member::new(1, 0, None)]);
        let got = run(&mut ch, &mut queues, vec![(0, 0, 1, 1000), (0, 0, 2, 1000), (2 * MS, 1, 10, 1000)]);
        assert_eq!(got, vec![(1, 2 * MS), (10, 4 * MS), (2, 10 * MS)]);
    }

    #[test]
    fn priority_weights_the_share_and_a_reserved_rate_goes_first() {
        // Priority 3 against priority 0, both backlogged with 1000-B packets: quanta 4000 and 1000 B,
        // so each round H sends four packets to L's one: H H H H L H H H H L ...
        let mut queues = vec![queue(None), queue(None)];
        let mut ch = channel(vec![Member::new(0, 0, None), Member::new(1, 3, None)]);
        let mut arrivals = Vec::new();
        for k in 0..8 {
            arrivals.push((0, 0, k, 1000));
            arrivals.push((0, 1, 100 + k, 1000));
        }
        let got = run(&mut ch, &mut queues, arrivals);
        let order: Vec<u64> = got.iter().map(|g| g.0).take(10).collect();
        assert_eq!(order, vec![0, 100, 101, 102, 103, 1, 104, 105, 106, 107]);
        // A reserved rate goes before the round robin while its bucket holds the head's bytes (full
        // at the start, one 1000-B packet deep; 1 Mb/s refills it in 8 ms): R's first packet, then
        // the round robin from its start (H first: its quantum is four packets), R's second when the
        // round robin comes to it.
        let mut queues = vec![queue(None), queue(None)];
        let reserve = Some(TokenBucket::new(1_000_000, 1000, None));
        let mut ch = channel(vec![Member::new(0, 3, None), Member::new(1, 0, reserve)]);
        let arrivals = vec![(0, 0, 10, 1000), (0, 0, 11, 1000), (0, 1, 1, 1000), (0, 1, 2, 1000)];
        let got = run(&mut ch, &mut queues, arrivals);
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), vec![1, 10, 11, 2]);
    }

    #[test]
    fn equal_backlogged_flows_share_by_bytes() {
        // Three flows, one of 1500-B packets and two of 500-B ones, all backlogged: over 30 ms of
        // channel each gets a third of the bytes, within one quantum.
        let mut queues = vec![queue(None), queue(None), queue(None)];
        let mut ch = channel((0..3).map(|q| Member::new(q, 0, None)).collect());
        let mut arrivals = Vec::new();
        for k in 0..40 {
            arrivals.push((0, 0, 1000 + k, 1000));
            arrivals.push((0, 1, 2000 + k, 500));
            arrivals.push((0, 2, 3000 + k, 500));
        }
        let got = run(&mut ch, &mut queues, arrivals);
        let mut bytes = [0u64; 3];
        for (tag, at) in got {
            if at <= 31 * MS {
                bytes[(tag / 1000 - 1) as usize] += if tag < 2000 { 1000 } else { 500 };
            }
        }
        for b in bytes {
            assert!((9000..=11000).contains(&b), "{bytes:?}");
        }
    }
}
