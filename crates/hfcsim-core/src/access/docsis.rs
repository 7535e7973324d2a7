//! The DOCSIS MAC's own rules (DOCSIS RFI 1.1 / MULPI; Nguyen & Armitage Sec. II): a request asks
//! for the minislots of one packet's frame, or of several concatenated up to the maximum burst and
//! the largest request; a collision is inferred, not announced, and the modem backs off over a
//! window growing from 2^backoff_start to 2^backoff_end (backoff.rs), discarding the request
//! after `max_retries`; grants may carry a fragment of the head packet when fragmentation is on.

use super::backoff::Backoff;
use super::channel::burst_minislots;
use super::rules::{GrantAt, MacRules};
use super::state::{Contend, Contending, DocsisReq, MacOut, Station};
use super::tree::{CsGroup, RqStack};
use super::MacConfig;
use crate::time::SimTime;

pub(super) struct Docsis;

impl MacRules for Docsis {
    #[inline]
    fn units(&self, cfg: &MacConfig, ip_bytes: u32, _background: bool) -> u32 {
        // Nguyen & Armitage Sec. III.C: each IP packet goes as an Ethernet frame with a DOCSIS header.
        ip_bytes + cfg.frame_overhead_bytes
    }

    #[inline]
    fn unit_minislots(&self, _cfg: &MacConfig) -> u32 {
        1
    }

    fn partial_grants(&self, cfg: &MacConfig) -> bool {
        cfg.fragmentation
    }

    fn merge_grants(&self) -> bool {
        false
    }

    fn on_collision(&self, _rq: &mut RqStack) -> u32 {
        0
    }

    fn contention_groups(&self, _rq: &mut RqStack, contention: u32, groups: &mut Vec<CsGroup>) {
        // One request region: every modem with a request defers over all of it.
        if contention > 0 {
            groups.push(CsGroup { rq: 0, first: 0, count: contention });
        }
    }

    #[inline]
    fn waiting(&self, st: &Station) -> bool {
        !st.docsis_reqs.is_empty()
    }

    fn enter_contention(&self, st: &mut Station, cfg: &MacConfig) -> Contend {
        st.backoff = Backoff::start(cfg.backoff_start, &mut st.rng);
        Contend::Deferring
    }

    fn feedback(&self) -> bool {
        false
    }

    fn retry(&self, st: &mut Station, _req: &Contending, _rq: u32, cfg: &MacConfig) -> Option<Contend> {
        st.backoff.collided(cfg.backoff_end, cfg.max_retries, &mut st.rng).then_some(Contend::Deferring)
    }

    fn given_up_packets(&self, st: &mut Station) -> u32 {
        st.docsis_reqs.pop_front().map_or(0, |q| q.packets)
    }

    fn forget(&self, st: &mut Station, _units: u32) {
        st.covered = 0;
        st.covered_items = 0;
    }

    #[inline]
    fn request(&self, st: &mut Station, cfg: &MacConfig, id: u64, tx: SimTime) -> Option<u32> {
        // The packets after those already requested: one, or several concatenated up to the
        // maximum burst and the maximum request.
        let first = st.covered_items;
        // A bonded modem's burst is a segment, with its header (bonding.rs); 0 otherwise.
        let header = st.cfg.segment_header_bytes;
        let mut bytes = 0u32;
        let mut packets = 0u32;
        for item in st.queue.range(first..st.seen.max(first)) {
            let more = bytes + item.left;
            let ms = burst_minislots(more + header, cfg.burst_overhead_bytes, cfg.minislot_bytes, cfg.fec);
            if packets > 0 && (!cfg.concatenation || more > cfg.max_burst_bytes || ms > cfg.max_request) {
                break;
            }
            bytes = more;
            packets += 1;
        }
        if packets == 0 {
            return None;
        }
        let end = first + packets as usize;
        for item in st.queue.range_mut(first..end) {
            item.requested = tx;
        }
        st.marked = (st.popped + first as u64, st.popped + end as u64);
        st.covered_items = end;
        let minislots = burst_minislots(bytes + header, cfg.burst_overhead_bytes, cfg.minislot_bytes, cfg.fec);
        st.docsis_reqs.push_back(DocsisReq { id, packets, frame_bytes: bytes, minislots, granted: 0 });
        st.covered += bytes as u64;
        Some(minislots)
    }

    #[inline]
    fn send(&self, st: &mut Station, _cfg: &MacConfig, at: GrantAt, out: &mut Vec<MacOut>) -> SimTime {
        let GrantAt { clock, start_minislot, received: r, grant: g } = at;
        // The grant is for request `g.id`; packets leave in FIFO order, so a request is delivered
        // once it and every older one are wholly granted.
        let burst_start = clock.start(start_minislot);
        let burst_end = clock.start(start_minislot + g.units as u64);
        if let Some(q) = st.docsis_reqs.iter_mut().find(|q| q.id == g.id) {
            q.granted += g.units;
        }
        while st.docsis_reqs.front().is_some_and(|q| q.granted >= q.minislots) {
            let req = st.docsis_reqs.pop_front().expect("front");
            for _ in 0..req.packets {
                let mut item = st.queue.pop_front().expect("a granted packet is queued");
                st.popped += 1;
                st.seen -= 1;
                item.granted = r;
                st.visible -= item.left as u64;
                st.delivered(item, burst_start, burst_end, out);
            }
            st.covered -= req.frame_bytes as u64;
            st.covered_items -= req.packets as usize;
        }
        burst_end
    }
}
