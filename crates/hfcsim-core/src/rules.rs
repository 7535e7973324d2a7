//! The cross-key rules that are code rather than data (schema.toml declares the others:
//! `requires`, `lt_key` / `le_key` / `ge_key`, `excludes`). Written once, here: Python calls them
//! through `_core.check`. Each refusal is one line naming the key, as `schema::refuse` writes it.

use crate::access::channel::{burst_minislots, minislots_per_frame, Fec};
use crate::scenario::{
    CongestionControlKind, Direction, EcnMode, FastRecovery, LoadBalancing, MacKind, Network, Scenario, Tcp, TimerKind,
    Variant,
};
use crate::schema::{json_text, refuse, schema, Origin};
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
    // Where the stack set one of the two and the scenario the other, the scenario's is named (issue 36,
    // defect 4: the l4s stack's Prague with tcp.ecn = "off").
    let scalable = matches!(tcp.congestion_control, CongestionControlKind::Dctcp | CongestionControlKind::Prague);
    let stack_set = |key: &str, other: &str| {
        schema().origin(&doc, key) == Origin::Stack && schema().origin(&doc, other) == Origin::Own
    };
    if scalable && tcp.ecn != EcnMode::L4s {
        let why = "DCTCP's and Prague's alpha count the CE marks their receiver's feedback echoes (RFC 8257 Sec. 3.2)";
        if stack_set("tcp.congestion_control", "tcp.ecn") {
            let what = format!(
                "the {} stack's tcp.congestion_control = {} needs tcp.ecn = \"l4s\": {why}",
                stack_name(&doc),
                json_text(get("tcp.congestion_control"))
            );
            return Err(refuse("tcp.ecn", get("tcp.ecn"), &what));
        }
        return Err(refuse(
            "tcp.congestion_control",
            get("tcp.congestion_control"),
            &format!("needs tcp.ecn = \"l4s\": {why}"),
        ));
    }
    if tcp.ecn == EcnMode::L4s && !scalable {
        let why = "a sender of ECT(1) runs a scalable congestion control (RFC 9331 Sec. 4.3)";
        if stack_set("tcp.ecn", "tcp.congestion_control") {
            let what = format!(
                "the {} stack's tcp.ecn = \"l4s\" needs tcp.congestion_control = \"dctcp\" or \"prague\": {why}",
                stack_name(&doc)
            );
            return Err(refuse("tcp.congestion_control", get("tcp.congestion_control"), &what));
        }
        let what = format!("needs tcp.congestion_control = \"dctcp\" or \"prague\": {why}");
        return Err(refuse("tcp.ecn", get("tcp.ecn"), &what));
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
    today_rules(sc, &doc)?;
    net3_rules(sc, &doc)?;
    control_rules(sc, &doc)?;
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
                let k = schema().keys.iter().find(|k| k.is(key)).unwrap();
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
            sc.games.iter().map(|g| u64::from(g.up_ip_bytes)).max().unwrap_or(0),
            sc.calls.iter().map(|c| u64::from(c.codec.ip_bytes(c.frame_s))).max().unwrap_or(0),
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
    let games = sc.games.iter().enumerate().map(|(i, g)| (format!("games.{i}.modem"), g.modem));
    let calls = sc.calls.iter().enumerate().map(|(i, c)| (format!("calls.{i}.modem"), c.modem));
    let web = sc.web.iter().enumerate().map(|(i, w)| (format!("web.{i}.modem"), w.modem));
    let video = sc.video.iter().enumerate().map(|(i, v)| (format!("video.{i}.modem"), v.modem));
    let rpm = sc.rpm.iter().enumerate().map(|(i, r)| (format!("rpm.{i}.modem"), r.modem));
    let mut all = flows.chain(pings).chain(games).chain(calls).chain(web).chain(video).chain(rpm);
    if let Some((key, modem)) = all.find(|(_, m)| !sc.modems.is_empty() && u64::from(*m) >= total) {
        let what = format!("must be < {total}, the number of modems in the modem groups (modems 0..{})", total - 1);
        return Err(refuse(&key, &modem.into(), &what));
    }
    default_buffer_rule(sc, &doc)?;
    apps_rules(sc, &doc)?;
    // On the hfc network a ping (a game, a call) borrows the routes of a flow on its modem (topology.rs).
    if let Network::Hfc(_) = &sc.network {
        let pings = sc.pings.iter().enumerate().map(|(i, p)| ("pings", i, p.modem));
        let games = sc.games.iter().enumerate().map(|(i, g)| ("games", i, g.modem));
        let calls = sc.calls.iter().enumerate().map(|(i, c)| ("calls", i, c.modem));
        if let Some((what, i, m)) =
            pings.chain(games).chain(calls).find(|(_, _, m)| !sc.flows.iter().any(|f| f.modem == *m))
        {
            return Err(refuse(
                &format!("{what}.{i}.modem"),
                &m.into(),
                "must be the modem of a flow on network.kind = \"hfc\"",
            ));
        }
    }
    Ok(())
}

/// `network.default_buffer` sizes only the queues no key sizes (topology.rs, scenario.rs
/// `Docsis::buffer_bytes`): on hfc the headend's (absent `network.headend_queue_bytes`) and, with a
/// request/grant MAC, each `[[modems]]` group's upstream queue without `queue_bytes` or
/// `queue_packets` (without groups the modems' queues are unbounded); on docsis each modem's CMTS
/// and CM service-flow buffers (absent `network.cmts_queue_bytes` / `_s`, `network.cm_queue_bytes` /
/// `_s`). Off its default with every one of those set, it would size nothing: refused (issue 36,
/// defect 6: a key that cannot act is refused, never ignored). At its default it is
/// indistinguishable from absent in the document, as every `requires` rule's key is.
fn default_buffer_rule(sc: &Scenario, doc: &Value) -> Result<(), String> {
    let key = "network.default_buffer";
    let kind = doc["network"]["kind"].as_str().unwrap_or_default();
    let v = &doc["network"]["default_buffer"];
    let k = schema().keys.iter().find(|k| k.is(key)).expect("network.default_buffer is in schema.toml");
    if v.is_null() || v == k.default_for(kind) {
        return Ok(());
    }
    let set = |name: &str| !doc["network"][name].is_null();
    let what = match &sc.network {
        Network::Hfc(h) => {
            let groups = sc.upstream.mac != MacKind::Fifo
                && sc.modems.iter().any(|m| m.queue_bytes.is_none() && m.queue_packets.is_none());
            if h.headend_queue_bytes.is_none() || groups {
                return Ok(());
            }
            let modems = if sc.upstream.mac == MacKind::Fifo {
                "the FIFO upstream (upstream.mac = \"fifo\") has no modem queue"
            } else if sc.modems.is_empty() {
                "without [[modems]] groups the modems' upstream queues are unbounded"
            } else {
                "every [[modems]] group sets its queue_bytes or queue_packets"
            };
            format!(
                "sizes no queue here: it sizes the headend's when network.headend_queue_bytes is absent (it is set) \
                 and, with a request/grant MAC, a [[modems]] group's queue without queue_bytes or queue_packets \
                 ({modems}); leave it out"
            )
        }
        Network::Docsis(_) => {
            let given = |side: &str| {
                [format!("network.{side}_queue_bytes"), format!("network.{side}_queue_s")]
                    .into_iter()
                    .find(|k| set(k.split_once('.').unwrap().1))
            };
            let (Some(cmts), Some(cm)) = (given("cmts"), given("cm")) else { return Ok(()) };
            format!(
                "sizes no queue here: it sizes each modem's CMTS and CM buffers when no key does, and {cmts} and \
                 {cm} both do; leave it out"
            )
        }
        _ => return Ok(()),
    };
    Err(refuse(key, v, &what))
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

/// The Low Latency DOCSIS keys (schema.toml's `network.lld_*`) and NQB echoes (`pings.*.nqb`, and
/// `games.*.nqb`, `calls.*.nqb`) act
/// only through a dual queue: off their defaults they need network.cmts_aqm or network.cm_aqm =
/// "lld". Code, not a `requires`, because either of two keys will do.
fn lld_rules(sc: &Scenario, d: &crate::scenario::Docsis, doc: &Value) -> Result<(), String> {
    use crate::scenario::AqmKind;
    // The inter-SF weight is the CMTS's downstream scheduler's, and a bonded modem's dual queue's: an
    // unbonded modem's upstream LLD is two stations whose requests the MAC grants in its own order
    // (access/serviceflow.rs), with no weight between them, so a weight set for it alone is refused.
    let unbonded_upstream =
        sc.upstream.mac != crate::scenario::MacKind::Fifo && sc.modems.iter().all(|g| g.bonded_channels <= 1);
    if d.cm_aqm == AqmKind::Lld && d.cmts_aqm != AqmKind::Lld && unbonded_upstream {
        let weight = &doc["network"]["lld_weight"];
        let k = schema().keys.iter().find(|k| k.is("network.lld_weight")).expect("in schema.toml");
        if !weight.is_null() && weight != k.default_for("docsis") {
            let what = "the upstream's Low Latency DOCSIS is two service flows of the modem, each requesting for \
                        its own queue, whose grants the MAC schedules in its own order (MULPI leaves upstream \
                        scheduling to the CMTS; the weight is not modelled there): it acts with network.cmts_aqm = \
                        \"lld\", or on bonded modems (modems.*.bonded_channels > 1)";
            return Err(refuse("network.lld_weight", weight, what));
        }
    }
    if d.cmts_aqm == AqmKind::Lld || d.cm_aqm == AqmKind::Lld {
        return Ok(());
    }
    let what = "needs network.cmts_aqm or network.cm_aqm = \"lld\" (only the Low Latency DOCSIS dual queue reads it)";
    let kind = doc["network"]["kind"].as_str().unwrap_or("docsis");
    for key in LLD_KEYS {
        let k = schema().keys.iter().find(|k| k.is(key)).expect("an LLD key is in schema.toml");
        let name = key.split_once('.').unwrap().1;
        let v = &doc["network"][name];
        if v != k.default_for(kind) {
            return Err(refuse(key, v, what));
        }
    }
    if let Some(i) = sc.pings.iter().position(|p| p.nqb) {
        return Err(refuse(&format!("pings.{i}.nqb"), &Value::Bool(true), what));
    }
    if let Some(i) = sc.games.iter().position(|g| g.nqb) {
        return Err(refuse(&format!("games.{i}.nqb"), &Value::Bool(true), what));
    }
    if let Some(i) = sc.calls.iter().position(|c| c.nqb) {
        return Err(refuse(&format!("calls.{i}.nqb"), &Value::Bool(true), what));
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

/// The document's TCP stack's name, for refusals.
fn stack_name(doc: &Value) -> String {
    json_text(&doc["tcp"]["stack"]).trim_matches('"').to_string()
}

/// A key's value in the document ("tcp.sack", "flows.0.ecn").
fn value_at<'a>(doc: &'a Value, key: &str) -> &'a Value {
    key.split('.').fold(doc, |v, part| match part.parse::<usize>() {
        Ok(i) => &v[i],
        Err(_) => &v[part],
    })
}

/// Each flow's rules (`Tcp::for_flow`: its own congestion control and ECN over the stack-wide keys).
fn flow_rules(sc: &Scenario) -> Vec<std::borrow::Cow<'_, Tcp>> {
    let mut rules: Vec<_> = sc
        .flows
        .iter()
        .map(|f| sc.tcp.for_flow(f).map_or(std::borrow::Cow::Borrowed(&sc.tcp), std::borrow::Cow::Owned))
        .collect();
    // The applications' connections run the stack's own rules.
    if !sc.web.is_empty() || !sc.video.is_empty() || !sc.rpm.is_empty() {
        rules.push(std::borrow::Cow::Borrowed(&sc.tcp));
    }
    rules
}

/// The keys that put flow `i` on today's sender (`Tcp::today`), as the document names them (a flow's
/// own congestion control and ECN by its flows.N key).
fn today_keys(sc: &Scenario, i: usize, ft: &Tcp) -> Vec<String> {
    let f = &sc.flows[i];
    let mut keys: Vec<String> = [
        ("sack", ft.sack),
        ("rack", ft.rack),
        ("tlp", ft.tlp),
        ("prr", ft.prr),
        ("limited_transmit", ft.limited_transmit),
        ("reno_reordering", ft.reno_reordering),
        ("frto", ft.frto),
        ("undo", ft.undo),
        ("byte_counting", ft.byte_counting),
    ]
    .into_iter()
    .filter(|(_, on)| *on)
    .map(|(name, _)| format!("tcp.{name}"))
    .collect();
    let own = |name: &str, set: bool| if set { format!("flows.{i}.{name}") } else { format!("tcp.{name}") };
    if ft.congestion_control != CongestionControlKind::Reno {
        keys.push(own("congestion_control", f.congestion_control.is_some()));
    }
    if ft.ecn != EcnMode::Off {
        keys.push(own("ecn", f.ecn.is_some()));
    }
    if ft.pacing {
        keys.push("tcp.pacing".into());
    }
    keys
}

/// Issue 36, defect 2: today's sender (tcp/sender/today.rs), which any of today's rules takes
/// (`Tcp::today`), has none of the 1990s stacks' recovery rules, so a flow on it needs each at the
/// value it behaves as; none is accepted and left unread. One refusal names all a stack set; it names
/// the key the scenario set (issue 36, defect 4): the rule of today's that took the sender there, or
/// else the 1990s rule.
fn today_rules(sc: &Scenario, doc: &Value) -> Result<(), String> {
    let origin = |key: &str| schema().origin(doc, key);
    // The 1990s rules are stack-wide: no flow's own key changes them.
    let ft = &sc.tcp;
    // (key, the value today's sender behaves as, why in a few words, why in full)
    let mut conflicts: Vec<(&str, &str, &str, &str)> = Vec::new();
    if ft.variant != Variant::Newreno {
        conflicts.push((
            "tcp.variant",
            "\"newreno\"",
            "Linux recovers as NewReno, RFC 6582, and by RFC 6675 with SACK",
            "today's sender recovers as Linux does: NewReno's partial ACKs without SACK (RFC 6582; \
                 tcp_mark_head_lost) and RFC 6675 with it, no Tahoe or Reno",
        ));
    }
    if ft.header_prediction {
        conflicts.push((
            "tcp.header_prediction",
            "false",
            "its quirk is Net/3's dupACK count and inflated cwnd",
            "4.4BSD-Lite's header prediction (Stevens vol. 2, 28.4) leaves Net/3's dupACK count and \
                 inflated cwnd behind, and today's sender keeps neither (RFC 6675's pipe)",
        ));
    }
    if !ft.deflate_at_threshold {
        conflicts.push((
            "tcp.deflate_at_threshold",
            "true",
            "RFC 6675's pipe inflates nothing",
            "today's sender never inflates cwnd (RFC 6675's pipe): its recovery ends with cwnd = ssthresh \
                 (Linux tcp_end_cwnd_reduction), with nothing to deflate",
        ));
    }
    if !ft.output_after_fast_retransmit {
        conflicts.push((
            "tcp.output_after_fast_retransmit",
            "true",
            "RFC 6675 sends what the window allows at once",
            "today's sender sends on the ACK that starts recovery what RFC 6675 (or PRR, RFC 6937) \
                 allows, not 4.4BSD-Lite's one retransmission",
        ));
    }
    if ft.fast_recovery != FastRecovery::Bsd {
        conflicts.push((
            "tcp.fast_recovery",
            "\"bsd\"",
            "ns-2's dupwnd_ is not RFC 6675's pipe",
            "ns-2 RenoTcpAgent's halving with dupwnd_ apart is not today's recovery (RFC 6675)",
        ));
    }
    if ft.recover_guard == Some(false) {
        conflicts.push((
            "tcp.recover_guard",
            "true (or absent)",
            "recovery is held to its recovery point",
            "today's sender always holds recovery to its recovery point (RFC 6675 5 (A)) and, after an \
                 RTO, its loss state until snd_una passes the highest sequence sent (Linux \
                 tcp_process_loss): RFC 6582's guard",
        ));
    }
    if conflicts.is_empty() {
        return Ok(());
    }
    // The first flow on today's sender (a million flows: issue 26, defect 3; most share the stack's).
    let own = |f: &crate::scenario::Flow| sc.tcp.for_flow(f);
    let today = sc.flows.iter().enumerate().find_map(|(i, f)| match own(f) {
        Some(t) => t.today().then_some((i, Some(t))),
        None => sc.tcp.today().then_some((i, None)),
    });
    if let Some((i, t)) = today {
        let ft = t.as_ref().unwrap_or(&sc.tcp);
        let keys = today_keys(sc, i, ft);
        let flow = if sc.flows.len() > 1 { format!(" (flow {i})") } else { String::new() };
        // A 1990s rule the scenario set, under a rule of today's it did not: that rule is named.
        let opener = keys.iter().find(|k| origin(k) == Origin::Own);
        if let (None, Some((key, want, _, why))) = (opener, conflicts.iter().find(|c| origin(c.0) == Origin::Own)) {
            let by = &keys[0];
            let whose =
                if origin(by) == Origin::Stack { format!("the {} stack's ", stack_name(doc)) } else { String::new() };
            let what = format!(
                "{whose}{by} = {} takes the sender to today's{flow}, where {why}: needs {key} = {want}",
                json_text(value_at(doc, by))
            );
            return Err(refuse(key, value_at(doc, key), &what));
        }
        let by = opener.unwrap_or(&keys[0]);
        let needs: Vec<String> =
            conflicts.iter().map(|(k, want, short, _)| format!("{k} = {want} ({short})")).collect();
        let whose = match conflicts.iter().any(|c| origin(c.0) == Origin::Stack) {
            true => format!("the {} stack's 1990s rules", stack_name(doc)),
            false => "these 1990s rules".into(),
        };
        let what = format!(
            "takes the sender to today's{flow} (tcp/sender/today.rs: Linux's recovery), which has none of \
             {whose}: needs {}",
            needs.join(", ")
        );
        return Err(refuse(by, value_at(doc, by), &what));
    }
    Ok(())
}

/// ns-2's fast recovery is Reno's; 4.4BSD-Lite's fast-recovery rules (sender.rs) belong to Reno's fast
/// recovery on the Net/3 path:
/// Tahoe has none (its fast retransmit goes back to snd_una in slow start), NewReno leaves on its
/// full ACK with cwnd = ssthresh (RFC 6582 3.2 step 3), and ns-2's (RenoTcpAgent) never inflates cwnd,
/// keeping dupwnd_ apart, and has no header prediction. After `today_rules`, so that a flow on today's
/// sender hears of that first. The scenario's key is named: the rule, or else the variant or the fast
/// recovery that leaves it nothing to act on.
fn net3_rules(sc: &Scenario, doc: &Value) -> Result<(), String> {
    let t = &sc.tcp;
    let reno_fr = |variants: &[Variant]| variants.contains(&t.variant) && t.fast_recovery == FastRecovery::Bsd;
    let rules: [(&str, bool, bool, &str); 4] = [
        (
            "tcp.fast_recovery",
            t.fast_recovery != FastRecovery::Bsd,
            t.variant == Variant::Reno,
            "ns-2's fast recovery is RenoTcpAgent's (tcp-reno.cc): needs tcp.variant = \"reno\"",
        ),
        (
            "tcp.header_prediction",
            t.header_prediction,
            reno_fr(&[Variant::Reno, Variant::Newreno]),
            "4.4BSD-Lite's header prediction leaves fast recovery's dupACK count and inflated cwnd behind \
             (Stevens vol. 2, 28.4): needs Net/3's fast recovery, tcp.variant = \"reno\" or \"newreno\" with \
             tcp.fast_recovery = \"bsd\"",
        ),
        (
            "tcp.deflate_at_threshold",
            !t.deflate_at_threshold,
            reno_fr(&[Variant::Reno]),
            "the test is Reno's exit from Net/3's fast recovery (4.4BSD-Lite tcp_input): needs tcp.variant = \
             \"reno\" with tcp.fast_recovery = \"bsd\" (Tahoe has no fast recovery, NewReno's full ACK \
             deflates to ssthresh, RFC 6582 3.2 step 3, and ns-2 never inflates cwnd)",
        ),
        (
            "tcp.output_after_fast_retransmit",
            !t.output_after_fast_retransmit,
            t.variant != Variant::Tahoe,
            "Tahoe's fast retransmit goes back to snd_una in slow start, with no fast recovery to wait in: \
             needs tcp.variant = \"reno\" or \"newreno\"",
        ),
    ];
    for (key, set, acts, why) in rules {
        if !set || acts {
            continue;
        }
        if schema().origin(doc, key) == Origin::Stack {
            for other in ["tcp.variant", "tcp.fast_recovery"].iter().filter(|o| **o != key) {
                if schema().origin(doc, other) == Origin::Own {
                    let what =
                        format!("the {} stack's {key} = {}: {why}", stack_name(doc), json_text(value_at(doc, key)));
                    return Err(refuse(other, value_at(doc, other), &what));
                }
            }
        }
        return Err(refuse(key, value_at(doc, key), why));
    }
    Ok(())
}

/// Rules of one congestion control or one sender, judged per flow (issue 36, defect 5): each acts on
/// the flows that run it, and one set where no flow does is refused. Where the stack set it, the
/// scenario's key that left it no flow is named.
fn control_rules(sc: &Scenario, doc: &Value) -> Result<(), String> {
    use CongestionControlKind::{Bbr, Cubic, Reno};
    let flows = flow_rules(sc);
    let t = &sc.tcp;
    type Acts = fn(&Tcp) -> bool;
    let rules: [(&str, bool, Acts, &str); 6] = [
        (
            "tcp.hystart",
            t.hystart,
            |f| f.congestion_control == Cubic,
            "HyStart is CUBIC's slow-start exit (tcp_cubic.c hystart_update), and no flow runs cubic \
             (tcp.congestion_control, or a flow's own flows.N.congestion_control)",
        ),
        (
            "tcp.cubic_linux_friendliness",
            t.cubic_linux_friendliness,
            |f| f.congestion_control == Cubic,
            "it is CUBIC's Reno-friendly estimate (tcp_cubic.c bictcp_update), and no flow runs cubic \
             (tcp.congestion_control, or a flow's own flows.N.congestion_control)",
        ),
        (
            "tcp.byte_counting",
            t.byte_counting,
            |f| f.congestion_control == Reno,
            "byte counting is Reno's growth (tcp/cc.rs; Linux tcp_reno_cong_avoid); CUBIC, DCTCP and Prague \
             count bytes as Linux's tcp_slow_start always does and BBR's window is its model's, and no flow \
             runs reno",
        ),
        (
            "tcp.prr",
            t.prr,
            |f| f.congestion_control != Bbr,
            "BBR sets its own window in recovery (a cong_control: Linux runs no tcp_cwnd_reduction for it, \
             tcp_bbr.c bbr_set_cwnd), and no flow runs another control",
        ),
        (
            "tcp.pacing",
            t.pacing,
            |f| f.pacing && f.congestion_control != Bbr,
            "BBR paces itself whatever tcp.pacing says (tcp_bbr.c bbr_init), and under \
             tcp.congestion_control = \"prague\" the pacing is Prague's own, of its flows alone: it paces no flow",
        ),
        (
            "tcp.slow_start_at_ssthresh",
            !t.slow_start_at_ssthresh,
            |f| !f.today() || (f.congestion_control == Reno && !f.byte_counting),
            "which side of ssthresh slow start ends on is Net/3's per-ACK growth (ns-2 opencwnd), and no flow \
             grows so: today's controls and byte counting slow-start while cwnd < ssthresh already (Linux \
             tcp_in_slow_start)",
        ),
    ];
    for (key, set, acts, why) in rules {
        if !set || flows.iter().any(|f| acts(f)) {
            continue;
        }
        if schema().origin(doc, key) == Origin::Stack {
            // The scenario's congestion control left the stack's rule no flow: it is named.
            let own = (0..sc.flows.len())
                .map(|i| format!("flows.{i}.congestion_control"))
                .chain(["tcp.congestion_control".to_string(), "tcp.variant".to_string()])
                .find(|k| !value_at(doc, k).is_null() && schema().origin(doc, k) == Origin::Own);
            if let Some(own) = own {
                let what = format!(
                    "the {} stack's {key} = {} acts on no flow: {why}",
                    stack_name(doc),
                    json_text(value_at(doc, key))
                );
                return Err(refuse(&own, value_at(doc, &own), &what));
            }
        }
        return Err(refuse(key, value_at(doc, key), why));
    }
    // A stack-wide control or ECN that every flow overrides applies to none.
    for name in ["congestion_control", "ecn"] {
        let key = format!("tcp.{name}");
        let apps = !sc.web.is_empty() || !sc.video.is_empty() || !sc.rpm.is_empty();
        let every = !apps
            && sc.flows.iter().all(|f| if name == "ecn" { f.ecn.is_some() } else { f.congestion_control.is_some() });
        if every && schema().origin(doc, &key) == Origin::Own {
            let what = format!("applies to no flow: every flow sets its own (flows.N.{name})");
            return Err(refuse(&key, value_at(doc, &key), &what));
        }
    }
    Ok(())
}

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

/// The applications' rules that are code (apps/).
fn apps_rules(sc: &Scenario, doc: &Value) -> Result<(), String> {
    for (i, w) in sc.web.iter().enumerate() {
        let item = &doc["web"][i];
        // A named page is the whole page: its own keys would be ignored.
        if w.profile.is_some() {
            for key in ["document_bytes", "objects", "subobjects", "hosts"] {
                let schema = crate::schema::schema();
                let default = schema.key_named(&format!("web.*.{key}")).map(|k| k.default_for("hfc"));
                if Some(&item[key]) != default {
                    return Err(refuse(
                        &format!("web.{i}.{key}"),
                        &item[key],
                        &format!("cannot be given with web.{i}.profile, which sets the whole page"),
                    ));
                }
            }
        }
        if w.objects.is_empty() && !w.subobjects.is_empty() {
            return Err(refuse(
                &format!("web.{i}.subobjects"),
                &item["subobjects"],
                "needs objects to be found in (web.*.objects is empty)",
            ));
        }
    }
    for (i, v) in sc.video.iter().enumerate() {
        if let Some(b) = &v.bitrates_bps {
            if b.is_empty() || b.windows(2).any(|w| w[0] >= w[1]) {
                return Err(refuse(
                    &format!("video.{i}.bitrates_bps"),
                    &doc["video"][i]["bitrates_bps"],
                    "must be one or more bitrates in increasing order",
                ));
            }
        }
    }
    Ok(())
}
