//! Issue 36: every rule key acts on the sender path that runs, or is refused naming the key the
//! scenario set. Packet scripts for the two rules today's sender used to leave unread (Nagle, and
//! Limited Transmit off with SACK), and tables of the cross-key rules (rules.rs `today_rules`,
//! `control_rules`; schema.rs `origin`).

mod common;

use common::{linux_rules, sack_ack as ack, sent, started_iw10 as started, MS, MSS, WND};
use hfcsim_core::scenario::{CongestionControlKind, Flow, Scenario};
use hfcsim_core::schema::schema;
use hfcsim_core::tcp::rto::Rto;
use hfcsim_core::tcp::sender::{Sender, SenderConfig};
use hfcsim_core::time::SimTime;
use serde_json::{json, Value};

#[test]
fn nagle_holds_the_short_last_segment_on_todays_path_too() {
    // 10 full segments and a short 11th of 500 bytes; IW 10 sends 1..10 at 0 ms. The ACK of 1 at
    // 100 ms frees room for 11 (and byte counting grows cwnd by a segment). RFC 896: a short
    // segment waits while data is outstanding, so with Nagle 11 waits for the ACK of 10.
    let run = |nagle: bool| {
        let mut cfg: SenderConfig = linux_rules();
        cfg.nagle = nagle;
        let mut s = Sender::new(cfg, 10 * MSS + 500, None, Rto::linux(200 * MS, 1000 * MS));
        let mut out = vec![];
        s.establish(SimTime(0), WND, &mut out);
        assert_eq!(sent(&mut out), (1..=10).collect::<Vec<_>>());
        ack(&mut s, &mut out, 100, 2, &[]);
        let early = sent(&mut out);
        ack(&mut s, &mut out, 110, 11, &[]);
        (early, sent(&mut out))
    };
    assert_eq!(run(false), (vec![11], vec![]));
    assert_eq!(run(true), (vec![], vec![11]));
}

#[test]
fn limited_transmit_off_keeps_the_sacked_segments_in_the_window_until_recovery() {
    // After IW 10, ACKs of 1 and 2 at 100 ms grow cwnd to 12 and send 11..14; packet 3 is lost and
    // the SACKs of 4 (101 ms) and 4-5 (102 ms) follow. With Limited Transmit (RFC 3042, as Linux's
    // pipe does it) each SACKed segment frees room: 15, then 16. Without it (RFC 6675 5 (C): a MAY)
    // cwnd covers all 12 outstanding segments, SACKed or not: nothing goes until the third SACK
    // starts recovery and resends 3.
    let run = |lt: bool| {
        let mut cfg = linux_rules();
        cfg.limited_transmit = lt;
        let (mut s, mut out) = started(cfg, 100);
        ack(&mut s, &mut out, 100, 2, &[]);
        ack(&mut s, &mut out, 100, 3, &[]);
        assert_eq!(sent(&mut out), vec![11, 12, 13, 14]);
        ack(&mut s, &mut out, 101, 3, &[(4, 4)]);
        ack(&mut s, &mut out, 102, 3, &[(4, 5)]);
        let before = sent(&mut out);
        ack(&mut s, &mut out, 103, 3, &[(4, 6)]);
        (before, sent(&mut out).first().copied())
    };
    assert_eq!(run(true), (vec![15, 16], Some(3)));
    assert_eq!(run(false), (vec![], Some(3)));
}

#[test]
fn hystart_is_a_cubic_flows_alone() {
    // Issue 36, defect 5: the stack-wide tcp.hystart reaches the flows that run CUBIC, by their own
    // congestion control or the stack's, and no other.
    let sc = Scenario::from_value(schema().with_stack(json!({}), "linux")).unwrap();
    assert!(sc.tcp.hystart);
    let flow = |cc: Option<CongestionControlKind>| Flow { congestion_control: cc, ..sc.flows[0].clone() };
    assert!(sc.tcp.for_flow(&flow(None)).is_none());
    let reno = sc.tcp.for_flow(&flow(Some(CongestionControlKind::Reno))).unwrap();
    assert!(!reno.hystart && reno.congestion_control == CongestionControlKind::Reno);
    let mut stack_reno = sc.tcp.clone();
    stack_reno.congestion_control = CongestionControlKind::Reno;
    assert!(stack_reno.for_flow(&flow(Some(CongestionControlKind::Cubic))).unwrap().hystart);
    assert!(!stack_reno.for_flow(&flow(None)).unwrap().hystart);
}

/// The refusal of `doc` under `stack` (None: accepted).
fn refusal(stack: &str, doc: Value) -> Option<String> {
    Scenario::from_value(schema().with_stack(doc, stack)).err()
}

#[test]
fn the_stacks_rules_follow_the_flows_and_the_keys_they_need() {
    // Issue 36, defect 4: the linux stack's RACK and TLP follow its SACK (as D-SACK did), its undo its
    // D-SACK (defect 3), its rules of one control the flows that run it.
    let doc = schema().with_stack(json!({"tcp": {"sack": false}}), "linux");
    assert_eq!(
        (&doc["tcp"]["rack"], &doc["tcp"]["tlp"], &doc["tcp"]["undo"]),
        (&Value::Null, &Value::Null, &Value::Null)
    );
    assert_eq!(doc["tcp"]["reno_reordering"], json!(true));
    assert_eq!(refusal("linux", json!({"tcp": {"sack": false}})), None);
    let reno_flow = schema().with_stack(json!({"flows": [{"congestion_control": "reno"}]}), "linux");
    assert_eq!((&reno_flow["tcp"]["hystart"], &reno_flow["tcp"]["byte_counting"]), (&Value::Null, &json!(true)));
    let cubic_flow = schema().with_stack(json!({"flows": [{"congestion_control": "cubic", "ecn": "off"}]}), "l4s");
    assert_eq!((&cubic_flow["tcp"]["hystart"], &cubic_flow["tcp"]["pacing"]), (&json!(true), &Value::Null));
    let bbr = schema().with_stack(json!({"tcp": {"congestion_control": "bbr"}}), "linux");
    assert_eq!((&bbr["tcp"]["prr"], &bbr["tcp"]["prr_linux"]), (&Value::Null, &Value::Null));
}

#[test]
fn refusals_name_the_key_the_scenario_set() {
    let cases: [(&str, Value, &str); 14] = [
        // Issue 36, defect 2: today's sender, taken by a rule of today's, has none of the 1990s rules.
        ("net3", json!({"tcp": {"prr": true}}), "tcp.prr = true: takes the sender to today's"),
        ("net3", json!({"tcp": {"prr": true}}), "needs tcp.variant = \"newreno\""),
        ("net3", json!({"tcp": {"variant": "newreno", "frto": true}}), "tcp.header_prediction = false"),
        ("ns2", json!({"tcp": {"limited_transmit": true}}), "tcp.fast_recovery = \"bsd\""),
        (
            "net3-rfc5681",
            json!({"tcp": {"variant": "newreno", "recover_guard": false, "sack": true}}),
            "tcp.sack = true",
        ),
        (
            "net3",
            json!({"tcp": {"variant": "newreno"}, "flows": [{"congestion_control": "cubic"}]}),
            "flows.0.congestion_control = \"cubic\": takes the sender to today's",
        ),
        // ... and where the stack took it there, the 1990s rule the scenario set is named.
        (
            "linux",
            json!({"tcp": {"header_prediction": true}}),
            "tcp.header_prediction = true: the linux stack's tcp.sack",
        ),
        (
            "linux",
            json!({"tcp": {"recover_guard": false}}),
            "tcp.recover_guard = false: the linux stack's tcp.sack = true",
        ),
        ("linux", json!({"tcp": {"deflate_at_threshold": false}}), "tcp.deflate_at_threshold = false:"),
        // Issue 36, defect 3: the undo needs D-SACK.
        ("net3-rfc5681", json!({"tcp": {"undo": true}}), "tcp.undo = true: needs tcp.dsack = true"),
        // Issue 36, defect 4: the stack's key the scenario's needs is not the one named.
        (
            "l4s",
            json!({"tcp": {"ecn": "off"}}),
            "tcp.ecn = \"off\": the l4s stack's tcp.congestion_control = \"prague\"",
        ),
        ("l4s", json!({"tcp": {"timer": "bsd"}}), "tcp.timer = \"bsd\": the l4s stack's tcp.pacing = true"),
        // Issue 36, defect 5 and its class: a rule of one control needs a flow that runs it.
        (
            "linux",
            json!({"tcp": {"hystart": true}, "flows": [{"congestion_control": "reno"}]}),
            "tcp.hystart = true: HyStart is CUBIC's",
        ),
        (
            "linux",
            json!({"tcp": {"congestion_control": "bbr", "prr": true}}),
            "tcp.prr = true: BBR sets its own window",
        ),
    ];
    for (stack, doc, expected) in cases {
        let got = refusal(stack, doc.clone()).unwrap_or_else(|| panic!("{stack} {doc} accepted"));
        assert!(got.contains(expected) && !got.contains('\n'), "{stack} {doc}: {got}");
        let key = expected.split(" = ").next().unwrap();
        if expected.contains(" = ") && expected.contains(':') {
            assert!(got.starts_with(key), "{stack} {doc}: {got}");
        }
    }
    // Accepted: a CUBIC download of its own beside the l4s stack's Prague, with HyStart (defect 5).
    let lld = json!({"tcp": {"hystart": true}, "flows": [{"congestion_control": "cubic", "ecn": "off"}]});
    assert_eq!(refusal("l4s", lld), None);
}
