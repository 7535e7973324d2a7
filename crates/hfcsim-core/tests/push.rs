//! Linux's PSH and the receiver's read (`receiver.ack_on_push`, tcp/push.rs, receiver.rs), end to end:
//! issue 25's lossless deficit. Cohen's network (25 Mb/s down, 20 ms RTT) with a 1 Gb/s LAN, the linux
//! stack's Reno without SACK or timestamps, and a 5 x 1460 B receive buffer: a window-limited transfer.
//!
//! Without the rule the receiver ACKs every second segment, so of the 5 segments a window lets out
//! each round trip, the fifth waits for the next round's first to pair with (its ato, 40 ms or more,
//! is longer than the round trip): 4 segments a round trip. With it the sender marks every third
//! segment (half of 7300 B is 3650 B, tcp/push.rs), and when the held segment is a marked one the
//! read ACKs it at once: between 4 and 5 segments a round trip. The real kernel (Linux 6.18, `hfcsim
//! emulate --compare`) carried this transfer at 2.57 Mb/s, 0.91 of the 5-segment bound.

use hfcsim_core::schema::schema;
use hfcsim_core::{run, RunOptions, Scenario};
use serde_json::json;

const MSS: u64 = 1460;
const SEGMENTS: u64 = 1000;

fn cohen_linux_reno(ack_on_push: bool) -> Scenario {
    let doc = json!({
        "network": {"cm_lan_bps": 1e9},
        "tcp": {"congestion_control": "reno", "sack": false, "rack": false, "tlp": false, "prr": false,
                "timestamps": false, "send_buffer_bytes": 65536},
        "receiver": {"receive_buffer_bytes": 5 * MSS, "ack_on_push": ack_on_push},
        "flows": [{"bytes": SEGMENTS * MSS}],
    });
    Scenario::from_value(schema().with_stack(doc, "linux")).unwrap()
}

#[test]
fn the_read_acks_the_pushed_odd_segment_and_the_window_fills_more_often() {
    let duration = |push: bool| {
        let out = run(&cohen_linux_reno(push), 1, RunOptions::default());
        let f = &out.flows[0];
        assert_eq!(f.data_segments_sent, SEGMENTS, "lossless");
        (f.duration_s.unwrap(), f.acks_received)
    };
    let (without, acks_without) = duration(false);
    let (with, acks_with) = duration(true);
    // Without: one ACK per two segments after the quick ACKs.
    assert!(acks_without <= SEGMENTS / 2 + 8, "{acks_without}");
    // With: the marked odd segments get ACKs of their own, so more ACKs, and more segments a round
    // trip: faster, by at most 5/4 (every round trip carrying 5 instead of 4).
    assert!(acks_with > acks_without + SEGMENTS / 20, "{acks_with} vs {acks_without}");
    let speedup = without / with;
    assert!(speedup > 1.05 && speedup <= 1.25, "{speedup} ({without} s without, {with} s with)");
}

#[test]
fn the_linux_stack_turns_it_on_with_its_delayed_ack_only() {
    let on = schema().with_stack(json!({}), "linux");
    assert!(Scenario::from_value(on).unwrap().receiver.ack_on_push);
    // Another delayed-ACK rule under the linux stack: the read's rules are not laid (true_if), so
    // the document is not refused for keys the user never set.
    let net3 = schema().with_stack(json!({"receiver": {"ack_rule": "net3"}}), "linux");
    let r = Scenario::from_value(net3).unwrap().receiver;
    assert!(!r.ack_on_push && !r.ack_on_read);
}
