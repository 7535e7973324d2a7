//! Captures of whole runs (capture/): every packet recorded at both ends, DOCSIS bursts with every
//! request, the same bytes written twice, and recording that changes nothing it records.

use hfcsim_core::capture::write_pcapng;
use hfcsim_core::scenario::Direction;
use hfcsim_core::sim::{run, RunOptions};
use hfcsim_core::Scenario;

#[test]
fn a_run_records_each_packet_at_both_ends() {
    let mut sc = Scenario::cohen_default();
    sc.flows[0].bytes = 30_000;
    sc.flows[0].drop_packets = vec![5];
    assert!(run(&sc, 1, RunOptions::default()).capture.is_none());
    let out = run(&sc, 1, RunOptions { pcap: true, ..Default::default() });
    let cap = out.capture.expect("capture on");
    let f = &out.flows[0];
    let sent = |data: bool| cap.iter().filter(|c| c.sent && c.pkt.is_data() == data).count() as u64;
    let got = |data: bool| cap.iter().filter(|c| !c.sent && c.pkt.is_data() == data).count() as u64;
    // Every data segment sent, first transmissions and retransmissions; all but the drop arrive.
    assert_eq!(sent(true), f.data_segments_sent + f.retransmitted_segments);
    assert_eq!(got(true), sent(true) - 1);
    // The sender gets every ACK but the last (the run ends when the receiver has it all), and
    // the handshake's SYN-ACK.
    assert_eq!(got(false), f.acks_received + 2);
    assert!(cap.windows(2).all(|w| w[0].t <= w[1].t), "time order");
    let mut file = Vec::new();
    let w = write_pcapng(&sc, &cap, None, 0, &mut file).unwrap();
    assert_eq!(w.packets, cap.len() as u64);
    // Only the SYN and SYN-ACK carry options the model does not count (MSS and window scale:
    // 8 bytes).
    assert_eq!(w.resized, 2);
    // pcapng (draft-ietf-opsawg-pcapng 4.1): a section header block, byte-order magic.
    assert_eq!(&file[..4], &[0x0a, 0x0d, 0x0d, 0x0a]);
    assert_eq!(&file[8..12], &0x1a2b_3c4du32.to_le_bytes());
}

/// A DOCSIS run with several packets queued at the modem (an upload and a download, bursts of
/// up to 4000 B):
/// the capture's third interface holds every request the MAC counted.
fn docsis_upload() -> Scenario {
    let mut sc = Scenario::cohen_default();
    sc.upstream.mac = hfcsim_core::scenario::MacKind::Docsis;
    sc.upstream.piggyback = true;
    sc.upstream.concatenation = true;
    sc.upstream.max_burst_bytes = 4000;
    sc.flows[0].bytes = 100_000;
    // And a download beside it, whose ACKs queue behind the upload's data.
    let mut down = sc.flows[0].clone();
    down.direction = Direction::Down;
    sc.flows[0].direction = Direction::Up;
    sc.flows.push(down);
    sc
}

#[test]
fn docsis_bursts_hold_every_request_and_write_the_same_bytes_twice() {
    let sc = docsis_upload();
    assert!(run(&sc, 1, RunOptions::default()).bursts.is_none());
    let write = || {
        let out = run(&sc, 1, RunOptions { pcap: true, ..Default::default() });
        let bursts = out.bursts.expect("a DOCSIS upstream");
        let mac = out.engine.mac.expect("a MAC");
        let contention = bursts.iter().filter(|b| b.pkts.is_empty()).count() as u64;
        let with_request = bursts.iter().filter(|b| b.request.is_some()).count() as u64;
        assert_eq!(with_request, mac.requests);
        assert!(contention >= mac.requests - mac.piggybacked_requests);
        assert!(bursts.iter().any(|b| b.pkts.len() > 1), "a concatenation");
        assert!(bursts.iter().any(|b| !b.pkts.is_empty() && b.request.is_some()), "a piggyback EH");
        let mut file = Vec::new();
        let cap = out.capture.expect("capture on");
        let w = write_pcapng(&sc, &cap, Some(&bursts), 0, &mut file).unwrap();
        assert_eq!(w.docsis_frames, bursts.len() as u64);
        assert_eq!(w.packets, (cap.len() + bursts.len()) as u64);
        file
    };
    assert_eq!(write(), write());
}

#[test]
fn capturing_the_upstream_changes_nothing_it_captures() {
    let sc = docsis_upload();
    let off = run(&sc, 3, RunOptions::default());
    let on = run(&sc, 3, RunOptions { pcap: true, ..Default::default() });
    assert_eq!(off.engine.mac, on.engine.mac);
    assert_eq!(off.engine.events, on.engine.events);
    assert_eq!(format!("{:?}", off.flows), format!("{:?}", on.flows));
    assert_eq!(format!("{:?}", off.stations), format!("{:?}", on.stations));
}
