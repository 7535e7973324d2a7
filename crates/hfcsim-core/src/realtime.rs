//! Real-time flows (issue 37): a game session (`[[games]]`) and a voice call (`[[calls]]`) send
//! UDP-like datagrams both ways at a fixed rate, each way an independent stream, not echoes. This
//! module holds what the engine (sim.rs `realtime_tick`, `deliver_datagram`) records of one way of a
//! session, and turns it into its summary row: packets sent, received, lost and late; the one-way
//! delay's exact percentiles; RFC 3550's interarrival jitter; and, for a call, ITU-T G.107's E-model
//! R-factor and MOS (`emodel`).
//!
//! Everything here is a pure function of the times the engine hands it.

use crate::scenario::{Call, Codec, Game};
use crate::time::{secs_to_nanos, Nanos, SimTime};
use serde::Serialize;

/// How long a session keeps receiving after its last packet before it ends (chosen: 1 s; a frame or
/// a game update later than that is of no use to either, and counts as lost).
pub const GRACE: Nanos = crate::time::NANOS_PER_SEC;

/// RFC 3550 Sec. 6.4.1 / A.8: the interarrival jitter estimator. For each packet, in order of
/// arrival, D = the difference of its transit time (arrival less send time) and the previous one's;
/// J += (|D| - J) / 16. Kept in seconds (RFC 3550 counts timestamp units; the rule is the same).
#[derive(Clone, Copy, Debug, Default)]
pub struct Jitter {
    last_transit: Option<Nanos>,
    /// The estimate now, and the largest it has been, s.
    pub j: f64,
    pub max: f64,
}

impl Jitter {
    /// A packet arrived whose transit (one-way delay) was `transit`.
    pub fn on_arrival(&mut self, transit: Nanos) {
        if let Some(last) = self.last_transit {
            let d = (transit as f64 - last as f64).abs() / 1e9;
            // RFC 3550 A.8: J += (|D| - J) / 16, the gain 1/16 "gives a good noise reduction ratio".
            self.j += (d - self.j) / 16.0;
            self.max = self.max.max(self.j);
        }
        self.last_transit = Some(transit);
    }
}

/// The nearest-rank q-quantile (0 < q <= 1) of sorted, non-empty values: the ceil(q n)-th smallest,
/// at least the first (the convention of net/wait.rs `quantiles_of` and of Python's cli._quantile).
pub fn nearest_rank(sorted: &[Nanos], q: f64) -> Nanos {
    let n = sorted.len();
    let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
    sorted[rank - 1]
}

/// One way of one session while it runs.
#[derive(Clone, Debug, Default)]
pub struct Way {
    pub sent: u64,
    /// One-way delay of each packet received, in arrival order.
    pub delays: Vec<Nanos>,
    pub jitter: Jitter,
}

impl Way {
    pub fn on_arrival(&mut self, delay: Nanos) {
        self.delays.push(delay);
        self.jitter.on_arrival(delay);
    }
}

/// A session in the engine: a game's or a call's fixed-rate streams both ways.
#[derive(Clone, Debug)]
pub struct Session {
    pub modem: u32,
    pub start: SimTime,
    pub interval: Nanos,
    pub stop: Option<SimTime>,
    pub after: Nanos,
    /// IP bytes of each packet, [client -> server, server -> client].
    pub ip_bytes: [u32; 2],
    pub nqb: bool,
    /// [up (client -> server), down (server -> client)].
    pub ways: [Way; 2],
    pub call: Option<CallRules>,
    /// A game's deadline: a packet later than this one way is late.
    pub deadline: Nanos,
    /// Its last packet has been sent; it ends `GRACE` later.
    pub stopping: bool,
    pub open: bool,
}

/// What a call's row needs beyond a game's.
#[derive(Clone, Copy, Debug)]
pub struct CallRules {
    pub codec: Codec,
    pub frame: Nanos,
    pub jitter_buffer: Nanos,
}

pub use crate::scenario::{CodecSpec, RTP_UDP_IP_BYTES};

/// The IP packet of one frame of `codec`, `frame_s` long (scenario.rs `Codec::ip_bytes`).
pub fn call_ip_bytes(codec: Codec, frame_s: f64) -> u32 {
    codec.ip_bytes(frame_s)
}

impl Session {
    pub fn game(g: &Game) -> Session {
        Session {
            modem: g.modem,
            start: SimTime(secs_to_nanos(g.start_s)),
            interval: secs_to_nanos(1.0 / g.rate_hz).max(1),
            stop: g.stop_s.map(|s| SimTime(secs_to_nanos(s))),
            after: secs_to_nanos(g.after_s),
            ip_bytes: [g.up_ip_bytes, g.down_ip_bytes],
            nqb: g.nqb,
            ways: Default::default(),
            call: None,
            deadline: secs_to_nanos(g.deadline_s),
            stopping: false,
            open: true,
        }
    }

    pub fn call(c: &Call) -> Session {
        let bytes = call_ip_bytes(c.codec, c.frame_s);
        let frame = secs_to_nanos(c.frame_s).max(1);
        Session {
            modem: c.modem,
            start: SimTime(secs_to_nanos(c.start_s)),
            interval: frame,
            stop: c.stop_s.map(|s| SimTime(secs_to_nanos(s))),
            after: secs_to_nanos(c.after_s),
            ip_bytes: [bytes, bytes],
            nqb: c.nqb,
            ways: Default::default(),
            call: Some(CallRules { codec: c.codec, frame, jitter_buffer: secs_to_nanos(c.jitter_buffer_s) }),
            deadline: 0,
            stopping: false,
            open: true,
        }
    }

    /// Its rows, up then down: a game's, or a call's with the E-model's.
    pub fn rows(&self, index: u32) -> [WayRecord; 2] {
        [0, 1].map(|w| self.row(index, w))
    }

    fn row(&self, index: u32, w: usize) -> WayRecord {
        let way = &self.ways[w];
        let mut sorted = way.delays.clone();
        sorted.sort_unstable();
        let s = |ns: Nanos| ns as f64 / 1e9;
        let received = sorted.len() as u64;
        let min = sorted.first().copied();
        // A game's packet is late past its deadline; a call's frame past its playout point: its send
        // time + the lowest one-way delay that way + the jitter buffer (chosen: a fixed playout delay
        // set, as by an oracle, by the fastest frame; a late frame is not played).
        let limit = match self.call {
            None => Some(self.deadline),
            Some(c) => min.map(|m| m + c.jitter_buffer),
        };
        let late = limit.map_or(0, |l| sorted.iter().filter(|&&d| d > l).count() as u64);
        let q = |p: f64| (!sorted.is_empty()).then(|| s(nearest_rank(&sorted, p)));
        let mean = (!sorted.is_empty()).then(|| sorted.iter().map(|&d| d as f64).sum::<f64>() / received as f64 / 1e9);
        let lost = way.sent - received;
        let (mut r_factor, mut mos, mut mouth_to_ear_s) = (None, None, None);
        if let (Some(c), Some(min)) = (self.call, min) {
            let spec = c.codec.spec();
            // Mouth to ear: the fixed playout delay (the lowest one-way delay + the jitter buffer)
            // + packetisation (one frame) + the codec's look-ahead (chosen; G.107 Ta, ms).
            let ta = s(min + c.jitter_buffer + c.frame) + spec.lookahead_s;
            // G.107 Ppl: the percentage of frames not played, lost or late.
            let ppl = 100.0 * (lost + late) as f64 / way.sent as f64;
            let r = emodel::r_factor(1e3 * ta, spec.ie, spec.bpl, ppl);
            r_factor = Some(r);
            mos = Some(emodel::mos(r));
            mouth_to_ear_s = Some(ta);
        }
        WayRecord {
            session: index,
            modem: self.modem,
            direction: if w == 0 { "up" } else { "down" },
            sent: way.sent,
            received,
            lost,
            late,
            delay_min_s: min.map(s),
            delay_p50_s: q(0.5),
            delay_p90_s: q(0.9),
            delay_p99_s: q(0.99),
            delay_max_s: sorted.last().copied().map(s),
            delay_mean_s: mean,
            jitter_s: way.jitter.j,
            jitter_max_s: way.jitter.max,
            mouth_to_ear_s,
            r_factor,
            mos,
        }
    }
}

/// One row of `Output::games` or `Output::calls`: one way of one session. Delays are of the packets
/// received (null without any); `lost` = sent but not received by the session's end (dropped, or
/// still on the way `GRACE` after its last packet or when the run ended); `late` = received past the
/// game's deadline or the call's playout point. Jitter: RFC 3550's estimate at the end, and its most.
/// `mouth_to_ear_s`, `r_factor` and `mos`: calls only (ITU-T G.107), null without a frame received.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WayRecord {
    pub session: u32,
    pub modem: u32,
    pub direction: &'static str,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub late: u64,
    pub delay_min_s: Option<f64>,
    pub delay_p50_s: Option<f64>,
    pub delay_p90_s: Option<f64>,
    pub delay_p99_s: Option<f64>,
    pub delay_max_s: Option<f64>,
    pub delay_mean_s: Option<f64>,
    pub jitter_s: f64,
    pub jitter_max_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mouth_to_ear_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r_factor: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mos: Option<f64>,
}

/// ITU-T G.107 (06/2015), the E-model: R = Ro - Is - Id - Ie,eff + A (Sec. 7.1), every parameter but
/// the delay and the codec's impairment at its default (Table 1: SLR 8, RLR 2, STMR 15, LSTR 18,
/// Ds = Dr = 3, TELR 65, WEPL 110, qdu 1, Nc -70, Nfor -64, Ps = Pr = 35 dB(A), A 0, BurstR 1).
/// With every default, R = 93.2 (Ro 94.77, Is 1.41, Idle 0.15) and MOS 4.41.
pub mod emodel {
    // G.107 Table 1 defaults.
    const SLR: f64 = 8.0;
    const RLR: f64 = 2.0;
    const STMR: f64 = 15.0;
    const LSTR: f64 = 18.0;
    const DS: f64 = 3.0;
    const TELR: f64 = 65.0;
    const WEPL: f64 = 110.0;
    const QDU: f64 = 1.0;
    const NC: f64 = -70.0;
    const NFOR: f64 = -64.0;
    const PS: f64 = 35.0;
    const PR: f64 = 35.0;
    const A: f64 = 0.0;
    /// Random loss (G.107 Sec. 7.5: BurstR = 1 when packet loss is random).
    const BURST_R: f64 = 1.0;

    fn lg(x: f64) -> f64 {
        x.log10()
    }

    /// G.107 7.2: the total noise No, dBm0p (eqs 7-2 to 7-5).
    pub fn no() -> f64 {
        let olr = SLR + RLR;
        let nos = PS - SLR - DS - 100.0 + 0.004 * (PS - olr - DS - 14.0).powi(2);
        let pre = PR + 10.0 * lg(1.0 + 10f64.powf((10.0 - LSTR) / 10.0));
        let nor = RLR - 121.0 + pre + 0.008 * (pre - 35.0).powi(2);
        let nfo = NFOR + RLR;
        10.0 * lg(10f64.powf(NC / 10.0) + 10f64.powf(nos / 10.0) + 10f64.powf(nor / 10.0) + 10f64.powf(nfo / 10.0))
    }

    /// G.107 7.2: Ro = 15 - 1.5 (SLR + No).
    pub fn ro() -> f64 {
        15.0 - 1.5 * (SLR + no())
    }

    /// G.107 7.3: Is = Iolr + Ist + Iq, with the echo path's one-way delay `t_ms` (STMRo).
    pub fn is(t_ms: f64) -> f64 {
        let no = no();
        let olr = SLR + RLR;
        let xolr = olr + 0.2 * (64.0 + no - RLR);
        let iolr = 20.0 * ((1.0 + (xolr / 8.0).powi(8)).powf(1.0 / 8.0) - xolr / 8.0);
        let stmro = -10.0 * lg(10f64.powf(-STMR / 10.0) + (-t_ms / 4.0).exp() * 10f64.powf(-TELR / 10.0));
        let ist = 12.0 * (1.0 + ((stmro - 13.0) / 6.0).powi(8)).powf(1.0 / 8.0)
            - 28.0 * (1.0 + ((stmro + 1.0) / 19.4).powi(35)).powf(1.0 / 35.0)
            - 13.0 * (1.0 + ((stmro - 3.0) / 33.0).powi(13)).powf(1.0 / 13.0)
            + 29.0;
        let q = 37.0 - 15.0 * lg(QDU);
        let g = 1.07 + 0.258 * q + 0.0602 * q * q;
        let z = 46.0 / 30.0 - g / 40.0;
        let y = (ro() - 100.0) / 15.0 + 46.0 / 8.4 - g / 9.0;
        let iq = 15.0 * lg(1.0 + 10f64.powf(y) + 10f64.powf(z));
        iolr + ist + iq
    }

    /// G.107 7.4, talker echo: Idte from the echo path's mean one-way delay `t_ms` and TELR.
    pub fn idte(t_ms: f64) -> f64 {
        let roe = -1.5 * (no() - RLR);
        let terv = TELR - 40.0 * lg((1.0 + t_ms / 10.0) / (1.0 + t_ms / 150.0)) + 6.0 * (-0.3 * t_ms * t_ms).exp();
        let re = 80.0 + 2.5 * (terv - 14.0);
        ((roe - re) / 2.0 + ((roe - re).powi(2) / 4.0 + 100.0).sqrt() - 1.0) * (1.0 - (-t_ms).exp())
    }

    /// G.107 7.4, listener echo: Idle from the round trip `tr_ms` and WEPL.
    pub fn idle(tr_ms: f64) -> f64 {
        let rle = 10.5 * (WEPL + 7.0) * (tr_ms + 1.0).powf(-0.25);
        let ro = ro();
        (ro - rle) / 2.0 + ((ro - rle).powi(2) / 4.0 + 169.0).sqrt()
    }

    /// G.107 7.4, too-long absolute delay `ta_ms` (mT = 100 ms, sT = 1, the defaults): 0 up to 100 ms,
    /// else Idd = 25 {(1 + X^6)^(1/6) - 3 (1 + (X/3)^6)^(1/6) + 2}, X = lg(Ta/100) / lg 2.
    pub fn idd(ta_ms: f64) -> f64 {
        if ta_ms <= 100.0 {
            return 0.0;
        }
        let x = lg(ta_ms / 100.0) / lg(2.0);
        25.0 * ((1.0 + x.powi(6)).powf(1.0 / 6.0) - 3.0 * (1.0 + (x / 3.0).powi(6)).powf(1.0 / 6.0) + 2.0)
    }

    /// G.107 7.5: Ie,eff = Ie + (95 - Ie) Ppl / (Ppl / BurstR + Bpl), Ppl in percent.
    pub fn ie_eff(ie: f64, bpl: f64, ppl: f64) -> f64 {
        ie + (95.0 - ie) * ppl / (ppl / BURST_R + bpl)
    }

    /// R for a mouth-to-ear delay `ta_ms`, a codec's Ie and Bpl, and Ppl % of frames lost. The echo
    /// path's delays (chosen, for a call whose ends cancel echo as a packet network's do): its mean
    /// one-way delay T = Ta and the listener-echo round trip Tr = 2 Ta.
    pub fn r_factor(ta_ms: f64, ie: f64, bpl: f64, ppl: f64) -> f64 {
        let id = idte(ta_ms) + idle(2.0 * ta_ms) + idd(ta_ms);
        ro() - is(ta_ms) - id - ie_eff(ie, bpl, ppl) + A
    }

    /// G.107 Annex B (B-4): MOS from R: 1 below 0, 4.5 above 100, else
    /// 1 + 0.035 R + R (R - 60) (100 - R) 7e-6.
    pub fn mos(r: f64) -> f64 {
        if r < 0.0 {
            1.0
        } else if r > 100.0 {
            4.5
        } else {
            1.0 + 0.035 * r + r * (r - 60.0) * (100.0 - r) * 7e-6
        }
    }
}

#[cfg(test)]
mod tests {
    use super::emodel::*;
    use super::*;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} vs {b}");
    }

    #[test]
    fn defaults_give_r_93_2_and_mos_4_41() {
        // G.107 7.7: "the default values ... result in a very high quality with a rating factor of
        // R = 93.2". By hand: No = -61.18 dBm0p, Ro = 15 + 1.5 * 53.18 = 94.77; Is = 1.41;
        // Idle at Tr = 0: Rle = 10.5 * 117 = 1228.5, (94.77 - 1228.5)/2 + sqrt(...^2/4 + 169) = 0.149.
        close(no(), -61.18, 0.005);
        close(ro(), 94.77, 0.005);
        close(is(0.0), 1.41, 0.005);
        close(idte(0.0), 0.0, 1e-12);
        close(idle(0.0), 0.149, 0.0005);
        let r = r_factor(0.0, 0.0, 25.1, 0.0);
        close(r, 93.2, 0.01);
        // MOS = 1 + 0.035 * 93.206 + 93.206 * 33.206 * 6.794 * 7e-6 = 1 + 3.2622 + 0.1472 = 4.409.
        close(mos(r), 4.41, 0.005);
    }

    #[test]
    fn idd_at_150_ms_by_hand() {
        // X = lg 1.5 / lg 2 = 0.58496; X^6 = 0.040010; (1.040010)^(1/6) = 1.006560;
        // (X/3)^6 = 5.488e-5, (1 + that)^(1/6) = 1.0000091; 25 (1.006560 - 3.0000274 + 2) = 0.1633.
        close(idd(150.0), 0.1633, 0.0005);
        assert_eq!(idd(100.0), 0.0);
        // Ta = 200 ms: X = 1; 25 ((2)^(1/6) - 3 (1 + 1/729)^(1/6) + 2) = 25 (1.122462 - 3.000686 + 2) = 3.044.
        close(idd(200.0), 3.044, 0.001);
    }

    #[test]
    fn ie_eff_and_mos_by_hand() {
        // G.711 with PLC, 1 % random loss: 95 * 1 / (1 + 25.1) = 3.640.
        close(ie_eff(0.0, 25.1, 1.0), 3.640, 0.0005);
        // G.729A, no loss: Ie alone.
        close(ie_eff(11.0, 19.0, 0.0), 11.0, 1e-12);
        assert_eq!((mos(-5.0), mos(120.0)), (1.0, 4.5));
        // R = 50: 1 + 1.75 + 50 * -10 * 50 * 7e-6 = 2.575.
        close(mos(50.0), 2.575, 1e-9);
    }

    #[test]
    fn delay_lowers_r_monotonically() {
        let mut last = f64::INFINITY;
        for ta in [0.0, 50.0, 100.0, 150.0, 200.0, 300.0, 400.0] {
            let r = r_factor(ta, 0.0, 25.1, 0.0);
            assert!(r < last, "{ta} ms: {r}");
            last = r;
        }
    }

    #[test]
    fn g711_at_20_ms_is_a_200_byte_packet() {
        assert_eq!(call_ip_bytes(Codec::G711, 0.02), 200);
        assert_eq!(call_ip_bytes(Codec::G729a, 0.02), 60);
    }

    #[test]
    fn jitter_of_an_alternating_delay_by_hand() {
        // Delays 10, 14, 10, 14 ... ms: every |D| is 4 ms, so J_n = 4 (1 - (15/16)^n) ms after the
        // n-th difference (J_0 = 0), approaching 4 ms.
        let mut j = Jitter::default();
        for k in 0..33 {
            j.on_arrival(if k % 2 == 0 { 10_000_000 } else { 14_000_000 });
        }
        let want = 0.004 * (1.0 - (15.0f64 / 16.0).powi(32));
        close(j.j, want, 1e-15);
        close(j.max, want, 1e-15);
        // One difference alone: 4 ms / 16 = 0.25 ms.
        let mut one = Jitter::default();
        one.on_arrival(10_000_000);
        one.on_arrival(14_000_000);
        close(one.j, 0.00025, 1e-15);
        // Constant delay: no jitter.
        let mut flat = Jitter::default();
        for _ in 0..10 {
            flat.on_arrival(7_000_000);
        }
        assert_eq!((flat.j, flat.max), (0.0, 0.0));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<Nanos> = (1..=10).collect();
        assert_eq!([0.5, 0.9, 0.99, 1.0].map(|q| nearest_rank(&v, q)), [5, 9, 10, 10]);
        assert_eq!(nearest_rank(&[7], 0.01), 7);
    }
}
