"""``hfcsim run`` on Elloumi's ATM-HFC network (network.kind = "atm_hfc") with the real engine: the lines
a time-limited run adds (what was delivered from sim.measure_from_s on, its RTT samples, the switches'
discards), checked against the run's own numbers."""

from __future__ import annotations

import json
import re

import pytest

from hfcsim.cli import main

# Fig. 2 without background traffic and the FIFO upstream: quick, and no MAC line.
BASE = ("--set", "network.kind=atm_hfc", "--set", "tcp.mss_bytes=984", "--set", "receiver.delayed_ack=false",
        "--set", "tcp.send_buffer_bytes=65536", "--set", "receiver.receive_buffer_bytes=65536",
        "--set", "flows.0.bytes=1000000000000", "--set", "sim.time_limit_s=6")


def run(capsys, *extra: str) -> tuple[str, dict]:
    assert main(["run", *BASE, *extra]) == 0
    text, _ = capsys.readouterr()
    assert main(["run", "--json", *BASE, *extra]) == 0
    out, _ = capsys.readouterr()
    return text, json.loads(out)


@pytest.mark.parametrize(("extra", "start"), [((), 0), (("--set", "sim.measure_from_s=1"), 1)])
def test_a_time_limited_run_says_what_it_delivered(capsys, extra, start):
    text, data = run(capsys, *extra)
    flow = data["flows"][0]
    end = start + flow["measured_s"]
    assert flow["measured_s"] == 6 - start
    m = re.search(rf"flow 0 from {start} s to {end:g} s: (\d+) bytes in order, ([\d.]+) Mb/s; RTT ([\d.]+) ms mean",
                  text)
    assert m, text
    assert int(m[1]) == flow["measured_bytes"]
    assert float(m[2]) == pytest.approx(8 * flow["measured_bytes"] / flow["measured_s"] / 1e6, abs=5e-4)
    assert float(m[3]) == pytest.approx(1e3 * flow["rtt_mean_s"], abs=0.05)


@pytest.mark.parametrize(("epd", "discards"), [(None, False), (40, True)])
def test_the_switch_line_counts_early_discards(capsys, epd, discards):
    extra = () if epd is None else ("--set", f"network.epd_threshold_cells={epd}")
    text, data = run(capsys, *extra)
    sw = data["engine"]["switches"]
    assert (sw["epd_packets"] > 0) == discards
    assert sw["epd_cells"] == 22 * sw["epd_packets"]  # 1 KB MTU packets: 22 cells each
    assert data["flows"][0]["epd_drops"] == sw["epd_packets"]
    assert f"switches: early packet discard {sw['epd_packets']} packets ({sw['epd_cells']} cells)" in text
    assert "atm_hfc 6 Mb/s SW1-SW2" in text
    assert ("EPD off" in text) == (epd is None)


def test_a_finished_flow_without_warm_up_adds_no_line(capsys):
    assert main(["run", "--set", "network.kind=atm_hfc"]) == 0
    text, _ = capsys.readouterr()
    assert "bytes in order" not in text
    assert "switches: early packet discard 0 packets" in text
