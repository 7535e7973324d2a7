//! The cross-key rules that are code rather than data (schema.toml declares the others:
//! `requires`, `lt_key` / `le_key` / `ge_key`, `excludes`). Written once, here: Python calls them
//! through `_core.check`. Each refusal is one line naming the key, as `schema::refuse` writes it.

use crate::access::channel::{burst_minislots, minislots_per_frame, Fec};
use crate::scenario::{
    CongestionControlKind, Direction, EcnMode, FastRecovery, LoadBalancing, MacKind, Network, Scenario, TimerKind,
};
use crate::schema::{json_text, refuse, schema};
use serde_json::Value;

/// The keys that fill and size a request/grant frame, in the order a refusal blames the first of
/// them that is off its default: what the frame must hold, then what sizes it.
const FRAME_KEYS: [&str; 5] = [
    "upstream.contention_slots",
    "upstream.data_slot_minislots",
    "upstream.minislot_bytes",
    "upstream.frame_s",
    "network.upstream_bps",
];

pub fn check(sc: &Scenario) -> Result<(), String> {
    let doc = serde_json::to_value(sc).expect("a scenario serialises");
    let get = |key: &str| -> &Value {
        let (section, name) = key.split_once('.').unwrap();
        &doc[section][name]
    };
    let (tcp, u) = (&sc.tcp, &sc.upstream);
    // RFC 791: an IP datagram is at most 65,535 bytes, its header included.
    let packet = u64::from(tcp.mss_bytes) + u64::from(tcp.header_bytes);
    if packet > 65535 {
        let what = format!(
            "with tcp.mss_bytes = {}, a packet of {packet} bytes: an IP datagram is at most 65535 (RFC 791)",
            tcp.mss_bytes
        );
        return Err(refuse("tcp.header_bytes", get("tcp.header_bytes"), &what));
    }
    // Linux arms the first timer with tcp_timeout_init() (TCP_TIMEOUT_INIT, 1 s; include/net/tcp.h),
    // bounded only above, by TCP_RTO_MAX; TCP_RTO_MIN enters with the first RTT sample (tcp_input.c
    // __tcp_set_rto: srtt + max(mdev, rto_min)). No Linux starts below its floor: refused, not
    // clamped (issue 26, defect 5).
    if tcp.timer == TimerKind::Linux && tcp.initial_rto_s.is_some_and(|rto| rto < tcp.min_rto_s) {
        let what = format!(
            "below tcp.min_rto_s = {}, the linux timer's floor (TCP_RTO_MIN; Linux's first RTO is TCP_TIMEOUT_INIT, 1 s)",
            json_text(get("tcp.min_rto_s"))
        );
        return Err(refuse("tcp.initial_rto_s", get("tcp.initial_rto_s"), &what));
    }
    // RFC 8257 Sec. 3.2-3.3: DCTCP's alpha counts the acknowledged bytes whose ACKs echo CE, which
    // needs the receiver's DCTCP feedback (tcp.ecn = "l4s"); RFC 9331 Sec. 4.3: a sender of ECT(1)
    // must run a scalable congestion control, DCTCP or TCP Prague here (the Prague draft: it
    // needs ECN feedback of the extent of marking).
    let scalable = matches!(tcp.congestion_control, CongestionControlKind::Dctcp | CongestionControlKind::Prague);
    if scalable && tcp.ecn != EcnMode::L4s {
        let what = "needs tcp.ecn = \"l4s\": DCTCP's and Prague's alpha count the CE marks their receiver's feedback echoes (RFC 8257 Sec. 3.2)";
        return Err(refuse("tcp.congestion_control", get("tcp.congestion_control"), what));
    }
    if tcp.ecn == EcnMode::L4s && !scalable {
        let what = "needs tcp.congestion_control = \"dctcp\" or \"prague\": a sender of ECT(1) runs a scalable congestion control (RFC 9331 Sec. 4.3)";
        return Err(refuse("tcp.ecn", get("tcp.ecn"), what));
    }
    // The same two rules for a flow's own (flows.congestion_control, flows.ecn): the refusal blames
    // the flow's own key (the rule's, else the other one it set).
    for (i, f) in sc.flows.iter().enumerate() {
        let cc = f.congestion_control.unwrap_or(tcp.congestion_control);
        let ecn = f.ecn.unwrap_or(tcp.ecn);
        let own = |name: &str| (format!("flows.{i}.{name}"), doc["flows"][i][name].clone());
        let scalable = matches!(cc, CongestionControlKind::Dctcp | CongestionControlKind::Prague);
        if scalable && ecn != EcnMode::L4s {
            let (key, v) = own(if f.congestion_control.is_some() { "congestion_control" } else { "ecn" });
            let what = format!(
                "flow {i} runs {} with ECN {}: DCTCP's and Prague's alpha count the CE marks their receiver's feedback echoes, which needs flows.{i}.ecn = \"l4s\" (RFC 8257 Sec. 3.2)",
                json_text(&serde_json::to_value(cc).unwrap()),
                json_text(&serde_json::to_value(ecn).unwrap())
            );
            return Err(refuse(&key, &v, &what));
        }
        if ecn == EcnMode::L4s && !scalable {
            let (key, v) = own(if f.ecn.is_some() { "ecn" } else { "congestion_control" });
            let what = format!(
                "flow {i} sends ECT(1) (ECN l4s) with {}: a sender of ECT(1) runs a scalable congestion control, flows.{i}.congestion_control = \"dctcp\" or \"prague\" (RFC 9331 Sec. 4.3)",
                json_text(&serde_json::to_value(cc).unwrap())
            );
            return Err(refuse(&key, &v, &what));
        }
    }
    // tcp_bbr.c bbr_init asks for pacing (SK_PACING_NEEDED): BBR runs only where Linux's internal
    // pacing does, today's sender without Net/3's header prediction or ns-2's fast recovery (the
    // same rule as tcp.pacing's `requires`). The stack's control, then each flow's own.
    let no_pacing = if tcp.header_prediction {
        Some("tcp.header_prediction = true")
    } else if tcp.fast_recovery != FastRecovery::Bsd {
        Some("tcp.fast_recovery = \"ns2\"")
    } else {
        None
    };
    if let Some(why) = no_pacing {
        let what = format!("BBR paces its segments (Linux's internal pacing), which {why} has no machinery for: needs tcp.header_prediction = false and tcp.fast_recovery = \"bsd\" (the linux stack)");
        if tcp.congestion_control == CongestionControlKind::Bbr {
            return Err(refuse("tcp.congestion_control", get("tcp.congestion_control"), &what));
        }
        for (i, f) in sc.flows.iter().enumerate() {
            if f.congestion_control == Some(CongestionControlKind::Bbr) {
                let key = format!("flows.{i}.congestion_control");
                return Err(refuse(&key, &doc["flows"][i]["congestion_control"], &what));
            }
        }
    }
    // Issue 35, a control of another era on a 1990s stack: CUBIC (or DCTCP, Prague) runs in today's
    // sender (tcp/sender/today.rs), which has neither 4.4BSD-Lite's header prediction (the net3 stack)
    // nor ns-2's Reno fast recovery (the ns2 stack); beside either the stack's own rule would be dropped
    // without a word, so refused. Under net3-rfc5681 (neither rule) it runs: CUBIC's window under
    // 4.4BSD's timers and delayed ACK is a combination a researcher may want, and `hfcsim run` notes it.
    let old_rule = if tcp.header_prediction {
        Some("tcp.header_prediction = true (4.4BSD-Lite's fast path, the net3 stack)")
    } else if tcp.fast_recovery != FastRecovery::Bsd {
        Some("tcp.fast_recovery = \"ns2\" (ns-2's Reno, the ns2 stack)")
    } else {
        None
    };
    if let Some(rule) = old_rule {
        let what = |cc: &Value| {
            format!("{} runs in today's sender, which has no {rule}: that rule would be dropped; tcp.stack = \"net3-rfc5681\" runs it with 4.4BSD's timers and delayed ACK", json_text(cc))
        };
        if tcp.congestion_control != CongestionControlKind::Reno {
            let v = get("tcp.congestion_control");
            return Err(refuse("tcp.congestion_control", v, &what(v)));
        }
        for (i, f) in sc.flows.iter().enumerate() {
            if f.congestion_control.is_some_and(|cc| cc != CongestionControlKind::Reno) {
                let v = &doc["flows"][i]["congestion_control"];
                return Err(refuse(&format!("flows.{i}.congestion_control"), v, &what(v)));
            }
        }
    }
    // RFC 7323: the option's 12 bytes come out of every segment's payload.
    if tcp.timestamps && tcp.mss_bytes <= crate::tcp::TIMESTAMP_OPTION_BYTES {
        return Err(refuse(
            "tcp.mss_bytes",
            get("tcp.mss_bytes"),
            "with tcp.timestamps it must exceed the option's 12 bytes",
        ));
    }
    let upstream_bps = match &sc.network {
        Network::Bottleneck(b) => {
            // The link serves rate_pps data packets of mss + header bytes (topology.rs): at least 1 b/s.
            let bits = b.rate_pps * packet as f64 * 8.0;
            if bits < 1.0 {
                let what = format!("is {} b/s with {packet}-byte packets: at least 1 needed", percent_g(bits));
                return Err(refuse("network.rate_pps", get("network.rate_pps"), &what));
            }
            None
        }
        Network::Docsis(d) => {
            if d.payload_bps() < 1.0 {
                let what = format!(
                    "leaves {} b/s after Reed-Solomon and MPEG framing: at least 1 needed",
                    percent_g(d.payload_bps())
                );
                return Err(refuse("network.downstream_bps", get("network.downstream_bps"), &what));
            }
            plant_rules(sc, d, &doc)?;
            Some(d.upstream_bps)
        }
        Network::Hfc(h) => Some(h.upstream_bps),
        Network::AtmHfc(a) => Some(a.upstream_bps),
    };
    // A request/grant frame must hold its contention slots and at least one data unit, or nothing is
    // ever granted; an 802.14 collision-resolution group takes 3 contention slots (Elloumi Sec. 2: "a
    // CS within the group is selected randomly in the range (0..2)"), or collided requests wait forever.
    if let (Some(bps), false) = (upstream_bps, u.mac == MacKind::Fifo) {
        let slotted = u.mac == MacKind::Ieee80214;
        if slotted && u.contention_slots < 3 {
            let what = "must be >= 3 with ieee802.14: a collision-resolution group takes 3 contention slots";
            return Err(refuse("upstream.contention_slots", get("upstream.contention_slots"), what));
        }
        let slots = minislots_per_frame(u.frame_s, u.minislot_bytes, (bps.round() as u64).max(1));
        let unit = if slotted { u.data_slot_minislots } else { 1 };
        if u64::from(u.contention_slots) + u64::from(unit) > u64::from(slots) {
            // Blame a key off its default (issue 26, defect 7), not contention_slots at its default.
            let kind = doc["network"]["kind"].as_str().unwrap();
            let off_default = |key: &&&str| {
                let k = schema().keys.iter().find(|k| k.key() == **key).unwrap();
                get(key) != k.default_for(kind)
            };
            let mut candidates = FRAME_KEYS.iter().filter(|k| slotted || **k != "upstream.data_slot_minislots");
            let key = candidates.find(off_default).unwrap_or(&"upstream.contention_slots");
            let data = if slotted {
                format!("a data slot of upstream.data_slot_minislots = {unit}")
            } else {
                "one data minislot".into()
            };
            let what = format!(
                "leaves no room for data: a frame (upstream.frame_s = {} s at network.upstream_bps = {} b/s) holds \
                 {slots} minislot(s) of {} bytes (upstream.minislot_bytes), fewer than upstream.contention_slots = {} \
                 plus {data}",
                percent_g(u.frame_s),
                percent_g(bps),
                u.minislot_bytes,
                u.contention_slots
            );
            return Err(refuse(key, get(key), &what));
        }
    }
    // DOCSIS maintenance regions (access/upstream.rs): an interval and a size, or neither; the
    // region leaves room in a MAP for its contention slots and one data minislot.
    if (u.maintenance_minislots > 0) != u.maintenance_interval_s.is_some() {
        let (key, what) = if u.maintenance_minislots > 0 {
            ("upstream.maintenance_minislots", "needs upstream.maintenance_interval_s (how often a region comes)")
        } else {
            ("upstream.maintenance_interval_s", "needs upstream.maintenance_minislots > 0 (the region's size)")
        };
        return Err(refuse(key, get(key), what));
    }
    if let (Some(bps), true) = (upstream_bps, u.maintenance_minislots > 0) {
        let slots = minislots_per_frame(u.frame_s, u.minislot_bytes, (bps.round() as u64).max(1));
        if u64::from(u.maintenance_minislots) + u64::from(u.contention_slots) + 1 > u64::from(slots) {
            let what = format!(
                "leaves no room in a MAP of {slots} minislots for upstream.contention_slots = {} and one data minislot",
                u.contention_slots
            );
            return Err(refuse("upstream.maintenance_minislots", get("upstream.maintenance_minislots"), &what));
        }
    }
    // DOCSIS: a modem requests a whole frame, or a concatenation of whole frames, in one request of
    // at most max_request minislots (RFI 1.1 Sec. 8.3.1: an 8-bit field) and sends it in one burst of
    // at most max_burst_bytes; the engine requests the head frame whatever its size, so a frame
    // that fits neither would pass both maxima (issue 26, defect 4). The largest frame is a data
    // segment (upward flows), an ACK (its header and the timestamps option, as sim.rs sizes it), an
    // echo or a background packet, each with the frame's overhead.
    if u.mac == MacKind::Docsis {
        let up_data = sc.flows.iter().any(|f| f.direction == Direction::Up);
        let ip = [
            if up_data { u64::from(tcp.mss_bytes) + u64::from(tcp.header_bytes) } else { 0 },
            u64::from(tcp.header_bytes)
                + if tcp.timestamps { u64::from(crate::tcp::TIMESTAMP_OPTION_BYTES) } else { 0 },
            sc.pings.iter().map(|p| u64::from(p.ip_bytes)).max().unwrap_or(0),
            sc.modems.iter().map(|m| u64::from(m.background_bytes)).max().unwrap_or(0),
        ];
        let frame = ip.into_iter().max().unwrap() + u64::from(u.frame_overhead_bytes);
        let fec = Fec { parity_bytes: 2 * u.fec_t_bytes, codeword_bytes: u.fec_codeword_bytes };
        let minislots = burst_minislots(frame.min(65535) as u32, u.burst_overhead_bytes, u.minislot_bytes, fec);
        if frame > u64::from(u.max_burst_bytes) {
            let what = format!("below the largest upstream frame, {frame} bytes: a modem sends a frame in one burst");
            return Err(refuse("upstream.max_burst_bytes", get("upstream.max_burst_bytes"), &what));
        }
        if minislots > u.max_request {
            let what =
                format!("below the largest upstream frame's {minislots} minislots: a modem requests a frame whole");
            return Err(refuse("upstream.max_request", get("upstream.max_request"), &what));
        }
    }
    // Several upstream channels: each a MAC of its own, each with at least one modem group on it.
    let n = u.channels;
    if let Some((i, m)) = sc.modems.iter().enumerate().find(|(_, m)| m.channel >= n) {
        return Err(refuse(
            &format!("modems.{i}.channel"),
            &m.channel.into(),
            &format!("must be < upstream.channels = {n}"),
        ));
    }
    if n > 1 && u.mac == MacKind::Fifo {
        return Err(refuse(
            "upstream.channels",
            &n.into(),
            "several channels need a MAC (upstream.mac = \"docsis\" or \"ieee802.14\")",
        ));
    }
    // A bonded group spans its channel and the next bonded_channels - 1 (access/bonding.rs).
    if let Some((i, m)) = sc.modems.iter().enumerate().find(|(_, m)| m.bonded_channels > n) {
        return Err(refuse(
            &format!("modems.{i}.bonded_channels"),
            &m.bonded_channels.into(),
            &format!("must be <= upstream.channels = {n}"),
        ));
    }
    if let Some((i, m)) = sc.modems.iter().enumerate().find(|(_, m)| m.channel + m.bonded_channels > n) {
        return Err(refuse(
            &format!("modems.{i}.bonded_channels"),
            &m.bonded_channels.into(),
            &format!("modems.{i}.channel = {} plus its bonded channels passes upstream.channels = {n}", m.channel),
        ));
    }
    let balanced = u.load_balancing != LoadBalancing::Static;
    if balanced && n == 1 {
        return Err(refuse(
            "upstream.load_balancing",
            &"count".into(),
            "balancing needs several channels (upstream.channels > 1)",
        ));
    }
    let on = |c: u32| sc.modems.iter().any(|m| (m.channel..m.channel + m.bonded_channels).contains(&c));
    if let Some(c) = (0..n).find(|c| n > 1 && !balanced && !on(*c)) {
        return Err(refuse(
            "upstream.channels",
            &n.into(),
            &format!("no modem group ([[modems]] channel = ...) is on channel {c}"),
        ));
    }
    // With modem groups the modems are exactly theirs: every flow and ping goes through one of them.
    let total: u64 = sc.modems.iter().map(|m| u64::from(m.count)).sum();
    let flows = sc.flows.iter().enumerate().map(|(i, f)| (format!("flows.{i}.modem"), f.modem));
    let pings = sc.pings.iter().enumerate().map(|(i, p)| (format!("pings.{i}.modem"), p.modem));
    if let Some((key, modem)) = flows.chain(pings).find(|(_, m)| !sc.modems.is_empty() && u64::from(*m) >= total) {
        let what = format!("must be < {total}, the number of modems in the modem groups (modems 0..{})", total - 1);
        return Err(refuse(&key, &modem.into(), &what));
    }
    // On the hfc network a ping borrows the routes of a flow on its modem (topology.rs).
    if let (Network::Hfc(_), Some((i, p))) =
        (&sc.network, sc.pings.iter().enumerate().find(|(_, p)| !sc.flows.iter().any(|f| f.modem == p.modem)))
    {
        return Err(refuse(
            &format!("pings.{i}.modem"),
            &p.modem.into(),
            "must be the modem of a flow on network.kind = \"hfc\"",
        ));
    }
    Ok(())
}

/// Issue 23's plant keys on the docsis kind: an interleaver J.83 Annex B has, and a management
/// overhead that leaves the downstream a rate.
fn plant_rules(sc: &Scenario, d: &crate::scenario::Docsis, doc: &Value) -> Result<(), String> {
    use crate::access::plant::{interleave_allowed, mgmt_overhead_bps};
    let get = |key: &str| -> &Value {
        let (section, name) = key.split_once('.').unwrap();
        &doc[section][name]
    };
    match (d.interleave_i, d.interleave_j) {
        (Some(i), Some(j)) if !interleave_allowed(i, j) => {
            let what = format!(
                "with network.interleave_j = {j}: ITU-T J.83 Annex B allows I = 128 with J = 1-8, or (I, J) = (64, 2), \
                 (32, 4), (16, 8), (8, 16)"
            );
            return Err(refuse("network.interleave_i", get("network.interleave_i"), &what));
        }
        (Some(_), None) => {
            return Err(refuse("network.interleave_i", get("network.interleave_i"), "needs network.interleave_j"));
        }
        (None, Some(_)) => {
            return Err(refuse("network.interleave_j", get("network.interleave_j"), "needs network.interleave_i"));
        }
        _ => {}
    }
    if d.interleave_qam != 64 && d.interleave_qam != 256 {
        return Err(refuse(
            "network.interleave_qam",
            get("network.interleave_qam"),
            "must be 64 or 256 (ITU-T J.83 Annex B)",
        ));
    }
    if d.interleave_qam != 64 && d.interleave_i.is_none() {
        let what = "needs network.interleave_i: only the interleaver's latency reads it";
        return Err(refuse("network.interleave_qam", get("network.interleave_qam"), what));
    }
    if d.ds_mgmt_overhead && sc.upstream.mac == MacKind::Docsis {
        let u = &sc.upstream;
        let bps = (d.upstream_bps.round() as u64).max(1);
        let map_s =
            minislots_per_frame(u.frame_s, u.minislot_bytes, bps) as f64 * u.minislot_bytes as f64 * 8.0 / bps as f64;
        let left = d.payload_bps() - mgmt_overhead_bps(d.docsis_header_bytes, u.channels, map_s);
        if left < 1.0 {
            let what = format!(
                "leaves {} b/s of downstream after the MAPs, UCDs and SYNCs: at least 1 needed",
                percent_g(left)
            );
            return Err(refuse("network.ds_mgmt_overhead", get("network.ds_mgmt_overhead"), &what));
        }
    }
    lld_rules(sc, d, doc)
}

/// The Low Latency DOCSIS keys (schema.toml's `network.lld_*`) and NQB echoes (`pings.*.nqb`) act
/// only through a dual queue: off their defaults they need network.cmts_aqm or network.cm_aqm =
/// "lld". Code, not a `requires`, because either of two keys will do.
fn lld_rules(sc: &Scenario, d: &crate::scenario::Docsis, doc: &Value) -> Result<(), String> {
    use crate::scenario::AqmKind;
    if d.cmts_aqm == AqmKind::Lld || d.cm_aqm == AqmKind::Lld {
        return Ok(());
    }
    let what = "needs network.cmts_aqm or network.cm_aqm = \"lld\" (only the Low Latency DOCSIS dual queue reads it)";
    let kind = doc["network"]["kind"].as_str().unwrap_or("docsis");
    for key in LLD_KEYS {
        let k = schema().keys.iter().find(|k| k.key() == key).expect("an LLD key is in schema.toml");
        let name = key.split_once('.').unwrap().1;
        let v = &doc["network"][name];
        if v != k.default_for(kind) {
            return Err(refuse(key, v, what));
        }
    }
    if let Some(i) = sc.pings.iter().position(|p| p.nqb) {
        return Err(refuse(&format!("pings.{i}.nqb"), &Value::Bool(true), what));
    }
    Ok(())
}

/// The keys `lld_rules` holds to a dual queue, in the order a refusal blames the first off its default.
const LLD_KEYS: [&str; 7] = [
    "network.lld_max_th_s",
    "network.lld_lg_range",
    "network.lld_coupling",
    "network.lld_weight",
    "network.lld_qprotect",
    "network.lld_qp_latency_s",
    "network.lld_qp_score_s",
];

/// A number as C's `%g` (and Python's `:g`) writes it: 6 significant digits, an exponent below
/// 1e-4 and from 1e6 on (3e+06, 0.002, 2.5e-05).
fn percent_g(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let exp = x.abs().log10().floor() as i32;
    let exp = if format!("{:.5e}", x.abs()).ends_with(&format!("e{}", exp + 1)) { exp + 1 } else { exp };
    if (-4..6).contains(&exp) {
        let text = format!("{:.*}", (5 - exp).max(0) as usize, x);
        let text = if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.') } else { &text };
        text.to_string()
    } else {
        let mantissa = format!("{:.5}", x / 10f64.powi(exp));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn percent_g_writes_numbers_as_c_does() {
        for (x, text) in [
            (3e6, "3e+06"),
            (0.002, "0.002"),
            (10.24e6, "1.024e+07"),
            (2.5e-5, "2.5e-05"),
            (1.0, "1"),
            (999999.5, "1e+06"),
            (123456.0, "123456"),
            (0.5, "0.5"),
        ] {
            assert_eq!(super::percent_g(x), text, "{x}");
        }
    }
}
