//! Why a flow ended (issue 26, defect 6): every flow reports `end_reason`, and timeouts in the
//! handshake are counted (`syn_timeouts`), so a connection that gives up before its first byte no
//! longer shows `timeouts 0` and nothing else.

use hfcsim_core::metrics::{EndReason, FlowMetrics};
use hfcsim_core::scenario::{Network, Scenario};
use hfcsim_core::{run, RunOptions};

fn lossy(mut sc: Scenario, loss: f64) -> Scenario {
    let Network::Hfc(h) = &mut sc.network else { panic!("an hfc network") };
    (h.downstream_loss, h.upstream_loss) = (loss, loss);
    sc
}

fn flow(sc: &Scenario) -> FlowMetrics {
    sc.check().unwrap();
    run(sc, 1, RunOptions::default()).flows.remove(0)
}

#[test]
fn a_connection_that_gives_up_in_the_handshake_counts_its_syn_timeouts() {
    // (Almost) every packet lost: Net/3 retransmits the server's SYN TCP_MAXRXTSHIFT = 12 times (tcp_timer.c)
    // and drops the connection at the 13th expiry, as it does with data (timeouts counts those).
    let mut sc = lossy(Scenario::cohen_default(), 0.999_999);
    sc.sim.time_limit_s = 1e5;
    let f = flow(&sc);
    assert_eq!((f.finished, f.end_reason, f.timeouts, f.syn_timeouts), (false, EndReason::GaveUp, 0, 12));
}

#[test]
fn every_flow_says_why_it_ended() {
    let sc = Scenario::cohen_default();
    let f = flow(&sc);
    assert_eq!((f.finished, f.end_reason, f.syn_timeouts), (true, EndReason::Finished, 0));

    let mut short = sc.clone();
    short.sim.time_limit_s = 0.5;
    let f = flow(&short);
    assert_eq!((f.finished, f.end_reason), (false, EndReason::TimeLimit));

    let mut late = sc.clone();
    late.sim.time_limit_s = 5.0;
    late.flows[0].start_s = 10.0;
    let f = flow(&late);
    assert_eq!((f.finished, f.end_reason, f.delivered_bytes), (false, EndReason::NotStarted, 0));

    // The JSON names the reason in snake case.
    let json = serde_json::to_value(&f).unwrap();
    assert_eq!((json["end_reason"].as_str(), json["syn_timeouts"].as_u64()), (Some("not_started"), Some(0)));
}
