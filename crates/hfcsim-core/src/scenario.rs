//! The scenario the engine runs.
//!
//! Its types are written by build.rs from schema.toml, the one declaration of every key: a struct
//! per section and per network kind, an enum per choice key. A document becomes a `Scenario` in
//! three steps: `schema::Schema::resolve` fills every absent key with its default and checks each
//! against its declaration and the cross-key rules declared as data; serde reads the result (an
//! error names the key's path); `rules::check` applies the cross-key rules that are code. Python
//! resolves and checks first with its own messages and calls the same check (`_core.check`).

use crate::schema::schema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

include!(concat!(env!("OUT_DIR"), "/schema_types.rs"));

// A voice call's codec (`calls.codec`; realtime.rs): here, beside its enum, so that the rules
// (rules.rs, the largest frame) and the engine read one table.
/// A codec's bytes and E-model values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodecSpec {
    /// Bits a second of speech.
    pub bps: u64,
    /// Look-ahead beyond the frame, s.
    pub lookahead_s: f64,
    /// ITU-T G.113 Appendix I: equipment impairment Ie, packet-loss robustness Bpl (random loss).
    pub ie: f64,
    pub bpl: f64,
}

impl Codec {
    /// ITU-T G.113 (11/2007) Appendix I, Tables I.1 and I.3: G.711 Ie 0; with the packet loss
    /// concealment of G.711 Appendix I, Bpl 25.1; without concealment (random loss), Bpl 4.3; G.729A
    /// (with VAD) Ie 11, Bpl 19.0. G.729 Sec. 2: 10 ms frames and 5 ms look-ahead; G.711: none.
    pub fn spec(self) -> CodecSpec {
        match self {
            Codec::G711 => CodecSpec { bps: 64_000, lookahead_s: 0.0, ie: 0.0, bpl: 25.1 },
            Codec::G711Noplc => CodecSpec { bps: 64_000, lookahead_s: 0.0, ie: 0.0, bpl: 4.3 },
            Codec::G729a => CodecSpec { bps: 8_000, lookahead_s: 0.005, ie: 11.0, bpl: 19.0 },
        }
    }

    /// The IP packet of one frame `frame_s` long: the codec's bytes + RTP, UDP and IP headers.
    pub fn ip_bytes(self, frame_s: f64) -> u32 {
        let payload = (self.spec().bps as f64 * frame_s / 8.0).round() as u32;
        payload + RTP_UDP_IP_BYTES
    }
}

/// RTP 12 + UDP 8 + IPv4 20 bytes (RFC 3550 Sec. 5.1, RFC 768, RFC 791): G.711's 160 bytes of 20 ms
/// make a 200-byte packet.
pub const RTP_UDP_IP_BYTES: u32 = 40;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub network: Network,
    /// The shared upstream channel's MAC (cable networks; a bottleneck's is FIFO and unused).
    pub upstream: Upstream,
    /// Groups of cable modems, numbered in group order. Empty: one modem per number that the
    /// flows use.
    pub modems: Vec<ModemGroup>,
    pub tcp: Tcp,
    pub receiver: Receiver,
    pub flows: Vec<Flow>,
    /// ICMP echo probes (Nguyen & Armitage Sec. III.A: ping once a second from the client).
    pub pings: Vec<Ping>,
    /// Game sessions: datagrams both ways at a fixed rate (issue 37; realtime.rs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub games: Vec<Game>,
    /// Voice calls: a frame each way every `frame_s` (issue 37; realtime.rs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<Call>,
    /// Web page loads (apps/web.rs).
    #[serde(default)]
    pub web: Vec<Web>,
    /// Adaptive video players (apps/video.rs).
    #[serde(default)]
    pub video: Vec<Video>,
    /// Responsiveness tests (apps/rpm.rs).
    #[serde(default)]
    pub rpm: Vec<Rpm>,
    pub sim: Sim,
}

impl Scenario {
    /// A document (absent keys take their defaults) as a checked scenario, or one line naming
    /// the key at fault.
    pub fn from_value(doc: Value) -> Result<Scenario, String> {
        let doc = schema().resolve(doc)?;
        let sc: Scenario = serde_path_to_error::deserialize(doc).map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
        crate::rules::check(&sc)?;
        Ok(sc)
    }

    /// As `from_value`, from JSON text.
    pub fn from_json(text: &str) -> Result<Scenario, String> {
        Scenario::from_value(serde_json::from_str(text).map_err(|e| format!("scenario: invalid JSON: {e}"))?)
    }

    /// The checks of `from_value`, on a scenario built in Rust.
    pub fn check(&self) -> Result<(), String> {
        Scenario::from_value(serde_json::to_value(self).expect("a scenario serialises")).map(|_| ())
    }

    /// Every key at its default on a network kind (one default flow).
    pub fn defaults(kind: &str) -> Scenario {
        Scenario::from_value(json!({"network": {"kind": kind}})).expect("the schema's defaults are valid")
    }

    /// Cohen & Ramanathan's HFC network (Sec. IV.A): the hfc kind's defaults with their unbounded
    /// headend (`network.default_buffer = "unbounded"`, as their recipe has it).
    pub fn cohen_default() -> Scenario {
        Scenario::from_value(json!({"network": {"kind": "hfc", "default_buffer": "unbounded"}}))
            .expect("the schema's defaults are valid")
    }

    /// Nguyen & Armitage's testbed as `preset = "nguyen04"` (schema.toml) has it.
    pub fn nguyen_default() -> Scenario {
        Scenario::from_value(schema().with_preset(json!({}), "nguyen04")).expect("the preset is valid")
    }
}

impl Tcp {
    /// The rules flow `f`'s sender runs, where they differ from these (None: the same): its own
    /// congestion control and ECN (`flows.*.congestion_control`, `flows.*.ecn`) over the stack-wide
    /// keys. Pacing that comes with the stack's Prague is Prague's own (tcp_prague.c prague_init asks
    /// for SK_PACING_NEEDED): a flow of another control beside it sends unpaced, as a Linux CUBIC
    /// socket does without the fq qdisc; otherwise the stack's pacing holds. HyStart is CUBIC's
    /// (tcp_cubic.c): a flow of another control has none (issue 36, defect 5).
    pub fn for_flow(&self, f: &Flow) -> Option<Tcp> {
        let cc = f.congestion_control.unwrap_or(self.congestion_control);
        let hystart = self.hystart && cc == CongestionControlKind::Cubic;
        if f.congestion_control.is_none() && f.ecn.is_none() && hystart == self.hystart {
            return None;
        }
        let prague_pacing = self.congestion_control == CongestionControlKind::Prague;
        Some(Tcp {
            congestion_control: cc,
            ecn: f.ecn.unwrap_or(self.ecn),
            pacing: self.pacing && (cc == CongestionControlKind::Prague || !prague_pacing),
            hystart,
            ..self.clone()
        })
    }
}

impl Docsis {
    /// Nguyen & Armitage's network (Sec. III.A) as `preset = "nguyen04"` has it.
    pub fn nguyen_default() -> Docsis {
        match Scenario::nguyen_default().network {
            Network::Docsis(d) => d,
            _ => unreachable!(),
        }
    }

    /// Bits per second the downstream channel has for DOCSIS frames: the raw rate less
    /// Reed-Solomon's parity and MPEG-2's headers (Nguyen & Armitage Sec. III.C; the formula of
    /// `hfcsim.docsis.downstream_payload_bps`).
    pub fn payload_bps(&self) -> f64 {
        self.downstream_bps * self.rs_k as f64 / self.rs_n as f64 * (self.mpeg_packet_bytes - self.mpeg_header_bytes)
            / self.mpeg_packet_bytes
    }

    /// The downstream interleaver's latency, s (ITU-T J.83 Annex B; access/plant.rs): 0 without
    /// one. Scenario::check refuses a pair or modulation J.83 B lacks.
    pub fn interleave_s(&self) -> f64 {
        match (self.interleave_i, self.interleave_j) {
            (Some(i), Some(j)) => crate::access::plant::interleaver_latency_s(i, j, self.interleave_qam).unwrap_or(0.0),
            _ => 0.0,
        }
    }

    /// A service flow's buffer given in bytes or in seconds at `rate_bps` (at least one byte), or
    /// else `network.default_buffer`'s at the lower of `rate_bps` and its peak rate (MULPI C.1.2.17),
    /// holding at least one `packet`.
    pub fn buffer_bytes(
        &self,
        bytes: Option<u64>,
        secs: Option<f64>,
        rate_bps: f64,
        peak_bps: Option<f64>,
        packet: u32,
    ) -> Option<u64> {
        bytes
            .or_else(|| secs.map(|s| seconds_at(s, rate_bps)))
            .or_else(|| self.default_buffer.bytes(peak_bps.map_or(rate_bps, |p| p.min(rate_bps)), packet))
    }
}

/// `secs` of a queue draining at `rate_bps`, in bytes (at least one).
fn seconds_at(secs: f64, rate_bps: f64) -> u64 {
    ((secs * rate_bps / 8.0).round() as u64).max(1)
}

impl DefaultBuffer {
    /// DOCSIS 3.1 MULPI C.1.2.17: the Default Upstream Target Buffer Configuration, 100 ms.
    pub const MULPI_S: f64 = 0.1;

    /// The buffer of a queue no key sizes, draining at `rate_bps`: bytes, or None (unbounded). It
    /// holds at least one `packet` (a full data packet; chosen: MULPI sets no floor, and a buffer
    /// below one packet, at a rate under 120 kb/s, would pass no full-size packet at all).
    pub fn bytes(self, rate_bps: f64, packet: u32) -> Option<u64> {
        match self {
            DefaultBuffer::Mulpi => Some(seconds_at(DefaultBuffer::MULPI_S, rate_bps).max(packet as u64)),
            DefaultBuffer::Unbounded => None,
        }
    }
}

impl Flow {
    /// An FTP-style download of `bytes` from the server through modem 0 (the default flow).
    pub fn download(bytes: u64) -> Flow {
        Flow { bytes, ..Scenario::cohen_default().flows.remove(0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(doc: Value) -> String {
        Scenario::from_value(doc).unwrap_err()
    }

    #[test]
    fn absent_keys_take_the_schema_defaults_per_network_kind() {
        let sc = Scenario::cohen_default();
        let Network::Hfc(h) = &sc.network else { panic!("hfc") };
        assert_eq!((h.downstream_bps, h.upstream_bps, h.rtt_s, h.cm_buffer_aqm), (25e6, 3e6, 0.020, AqmKind::Droptail));
        assert_eq!((sc.upstream.mac, sc.tcp.variant, sc.tcp.mss_bytes), (MacKind::Fifo, Variant::Reno, 1460));
        assert_eq!(sc.flows.len(), 1);
        let Network::AtmHfc(a) = Scenario::defaults("atm_hfc").network else { panic!("atm_hfc") };
        assert_eq!(a.downstream_bps, 30e6);
        let sc = Scenario::defaults("docsis");
        assert_eq!(sc.upstream.mac, MacKind::Docsis);
        let Network::Docsis(d) = sc.network else { panic!("docsis") };
        assert_eq!((d.rs_n, d.rs_k, d.downstream_bps), (128, 122, 5.056941e6 * 6.0));
    }

    #[test]
    fn the_preset_lays_its_values_under_the_document() {
        let sc = Scenario::nguyen_default();
        assert!(matches!(sc.network, Network::Docsis(_)));
        assert_eq!(
            (sc.upstream.piggyback, sc.tcp.variant, sc.receiver.ack_rule),
            (true, Variant::Newreno, AckRule::Freebsd)
        );
    }

    #[test]
    fn refusals_name_the_key() {
        let cases = [
            (json!({"tcp": {"mss": 1}}), "unknown key tcp.mss"),
            (json!({"network": {"kind": "dsl"}}), "network.kind = \"dsl\": must be one of \"hfc\", \"bottleneck\", \"atm_hfc\", \"docsis\""),
            (json!({"network": {"loss": 0.1}}), "network.loss = 0.1: only valid with network.kind = \"bottleneck\" (network.kind is \"hfc\")"),
            (json!({"tcp": {"mss_bytes": 0}}), "tcp.mss_bytes = 0: must be an integer in [1, 65495]"),
            (json!({"network": {"downstream_loss": 1.0}}), "network.downstream_loss = 1.0: must be a number in [0, 1)"),
            (json!({"tcp": {"rack": true}}), "tcp.rack = true: needs tcp.sack = true (tcp.sack is false)"),
            (json!({"tcp": {"sack": true, "variant": "tahoe"}}),
             "tcp.sack = true: takes the sender to today's (tcp/sender/today.rs: Linux's recovery), which has none of \
              these 1990s rules: needs tcp.variant = \"newreno\" (Linux recovers as NewReno, RFC 6582, and by RFC 6675 \
              with SACK)"),
            (json!({"sim": {"measure_from_s": 5.0, "time_limit_s": 5.0}}), "sim.measure_from_s = 5.0: must be < sim.time_limit_s (5.0)"),
            (json!({"network": {"cm_buffer_bytes": 9000, "cm_buffer_packets": 6}}),
             "network.cm_buffer_packets = 6: only one of network.cm_buffer_bytes and network.cm_buffer_packets may be set (network.cm_buffer_bytes = 9000)"),
            (json!({"upstream": {"mac": "docsis"}, "modems": [{"distance_km_min": 5.0, "distance_km_max": 1.0}]}),
             "modems.0.distance_km_min = 5.0: must be <= modems.0.distance_km_max (1.0)"),
            // Issue 26, defect 4: a FIFO upstream has no MAC, and would ignore the MAC's keys.
            (json!({"modems": [{"background_load": 0.9}]}),
             "modems.0.background_load = 0.9: needs upstream.mac = \"ieee802.14\" or \"docsis\" (upstream.mac is \"fifo\")"),
            (json!({"upstream": {"max_burst_bytes": 2000}}),
             "upstream.max_burst_bytes = 2000: needs upstream.mac = \"docsis\" (upstream.mac is \"fifo\")"),
            (json!({"flows": []}), "flows = []: at least one flow or application ([[web]], [[video]], [[rpm]]) is required"),
            // Issue 26, defect 4: a request or burst that cannot hold one frame.
            (json!({"upstream": {"mac": "docsis", "max_request": 1}}),
             "upstream.max_request = 1: below the largest upstream frame's 5 minislots: a modem requests a frame whole"),
            (json!({"upstream": {"mac": "docsis", "max_burst_bytes": 1000}, "flows": [{"direction": "up"}]}),
             "upstream.max_burst_bytes = 1000: below the largest upstream frame, 1524 bytes: a modem sends a frame in one burst"),
            (json!({"network": {"kind": "bottleneck"}, "pings": [{}]}),
             "pings: only valid with network.kind = \"hfc\" or \"docsis\" (network.kind is \"bottleneck\")"),
            (json!({"tcp": {"timer": "linux", "min_rto_s": 0.2, "initial_rto_s": 1e-9}}),
             "tcp.initial_rto_s = 1e-09: below tcp.min_rto_s = 0.2, the linux timer's floor (TCP_RTO_MIN; Linux's first RTO is TCP_TIMEOUT_INIT, 1 s)"),
        ];
        for (doc, message) in cases {
            assert_eq!(refusal(doc), message);
        }
    }

    #[test]
    fn a_typed_scenario_is_checked_as_its_document() {
        let mut sc = Scenario::cohen_default();
        sc.upstream.mac = MacKind::Docsis;
        sc.upstream.minislot_bytes = 65535;
        assert_eq!(
            sc.check().unwrap_err(),
            "upstream.minislot_bytes = 65535: leaves no room for data: a frame (upstream.frame_s = 0.002 s at \
             network.upstream_bps = 3e+06 b/s) holds 1 minislot(s) of 65535 bytes (upstream.minislot_bytes), \
             fewer than upstream.contention_slots = 8 plus one data minislot"
        );
        // A document round-trips: serialised and read again, the same scenario.
        let sc = Scenario::nguyen_default();
        assert_eq!(Scenario::from_value(serde_json::to_value(&sc).unwrap()).unwrap(), sc);
    }
}
