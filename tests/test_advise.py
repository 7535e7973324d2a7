"""hfcsim advise: recommendations on Cohen & Ramanathan's network, predictions, JSON, bad inputs."""

from __future__ import annotations

import json
import time

import pytest

from hfcsim.advise import advise
from hfcsim.errors import ScenarioError

# The paper's network (Cohen & Ramanathan Sec. V): 25/3 Mb/s, 20 ms, 10 KB modem buffer, 10 Mb/s LAN.
PAPER = dict(downstream_bps=25e6, upstream_bps=3e6, rtt_s=0.02, cm_buffer_bytes=10240, connections=1)
FEW = 8  # seeds for tests that only look at the recommendations


@pytest.mark.parametrize(("setting", "expected"), [
    ("tcp.send_buffer_bytes", 17520),  # Cohen Sec. V.B rule, whole MSS: 12 x 1460
    ("tcp.initial_window", 2),          # Sec. VI.A
    ("tcp.tick_s", 0.2),                # Sec. VI.C
    ("tcp.dupack_threshold", 1),        # Sec. VI.D
    ("tcp.mss_bytes", 1460),            # no ACK loss: the MTU's MSS
])
def test_paper_network_gets_the_papers_recommendations(setting, expected):
    assert advise(**PAPER, seeds=FEW)["settings"][setting] == expected


@pytest.mark.parametrize(("connections", "expected"), [(1, 17520), (2, 8760), (3, 5840)])
def test_more_connections_per_modem_smaller_buffer(connections, expected):
    # (C/f + 1)/n with C = 10240/1500 packets, f = 0.6: 12.38, 6.19, 4.13 -> 12, 6, 4 segments.
    got = advise(**{**PAPER, "connections": connections}, seeds=FEW, transfer_bytes=[30000])
    assert got["settings"]["tcp.send_buffer_bytes"] == expected


@pytest.mark.parametrize(("upstream_loss", "mss"), [(0.0, 1460), (0.05, 1460), (0.10, 536), (0.2, 536)])
def test_small_mss_under_heavy_ack_loss(upstream_loss, mss):
    got = advise(**PAPER, upstream_loss=upstream_loss, seeds=2, transfer_bytes=[30000])
    assert got["settings"]["tcp.mss_bytes"] == mss
    # the buffer is whole segments of the recommended MSS
    assert got["settings"]["tcp.send_buffer_bytes"] % mss == 0


@pytest.mark.parametrize(("downstream_bps", "upstream_bps", "ok"), [
    (25e6, 3e6, True),      # 8.3 <= 32.7 (MTU 1500, d = 1.5: 1524 * 1.5 / 70 = 32.66)
    (30e6, 1e6, True),      # 30 <= 32.66
    (38e6, 0.5e6, False),   # 76 > 32.66
])
def test_ds_us_ratio_checked_against_nguyen_rule(downstream_bps, upstream_bps, ok):
    got = advise(**{**PAPER, "downstream_bps": downstream_bps, "upstream_bps": upstream_bps},
                 seeds=2, transfer_bytes=[30000])
    rec = next(r for r in got["recommendations"] if r["setting"] == "ds_us_ratio")
    assert rec["value"] == pytest.approx((1500 + 18 + 6) * 1.5 / 70)
    assert rec["ok"] is ok


def test_every_recommendation_has_reason_and_reference():
    got = advise(**PAPER, seeds=2, transfer_bytes=[30000])
    assert {r["setting"] for r in got["recommendations"]} == {
        "tcp.mss_bytes", "tcp.send_buffer_bytes", "tcp.initial_window", "tcp.tick_s", "tcp.dupack_threshold",
        "ds_us_ratio"}
    for r in got["recommendations"]:
        assert r["reason"] and "\n" not in r["reason"]
        assert "Sec." in r["reference"]
        assert ("Cohen" in r["reference"]) or ("Nguyen" in r["reference"])


@pytest.mark.parametrize("size", [3_000_000])
def test_after_beats_before_at_one_percent_loss(size):
    got = advise(**PAPER, downstream_loss=0.01, transfer_bytes=[size], seeds=30)
    (p,) = got["predictions"]
    assert p["after"]["mean_bps"] >= p["before"]["mean_bps"]
    assert p["after"]["timeouts_mean"] <= p["before"]["timeouts_mean"]


def test_json_schema(hfcsim_cli):
    status, out, err = hfcsim_cli(["advise", "--json", "--seeds", "5"])
    assert status == 0 and err == ""
    assert out.count("\n") == 1
    data = json.loads(out)
    assert set(data) >= {"inputs", "recommendations", "settings", "before", "after", "predictions", "seeds"}
    assert data["inputs"]["transfer_bytes"] == [300000, 3000000]
    assert [p["transfer_bytes"] for p in data["predictions"]] == [300000, 3000000]
    for p in data["predictions"]:
        for side in ("before", "after"):
            assert set(p[side]) == {"mean_bps", "median_bps", "flows", "finished", "timeouts_mean"}
            assert p[side]["flows"] == 5
            assert p[side]["mean_bps"] > 0
        assert p["ratio"] == pytest.approx(p["after"]["mean_bps"] / p["before"]["mean_bps"])
    for r in data["recommendations"]:
        assert set(r) >= {"setting", "value", "text", "reason", "reference"}


def test_human_output_has_settings_then_before_after(hfcsim_cli):
    status, out, _ = hfcsim_cli(["advise", "--seeds", "3"])
    assert status == 0
    assert out.index("recommended settings") < out.index("predicted throughput")
    assert "17520 B (12 x 1460 B)" in out
    assert "Cohen & Ramanathan 1998, Sec. V.B" in out


@pytest.mark.parametrize("argv", [
    ["--downstream-bps", "-25e6"],
    ["--upstream-bps", "0"],
    ["--downstream-loss", "1"],
    ["--upstream-loss", "1.5"],
    ["--downstream-loss", "-0.1"],
    ["--cm-buffer-bytes", "0"],
    ["--cm-buffer-bytes", "-10"],
    ["--connections", "0"],
    ["--rtt-s", "-0.02"],
    ["--transfer-bytes", "0"],
    ["--transfer-bytes", "abc"],
    ["--mtu-bytes", "40"],
    ["--connections", "1.5"],
])
def test_bad_inputs_exit_2_with_one_line(hfcsim_cli, argv):
    status, out, err = hfcsim_cli(["advise", *argv])
    assert status == 2
    assert out == ""
    assert err.startswith("hfcsim: error: ") and err.count("\n") == 1


@pytest.mark.parametrize(("inputs", "name"), [
    ({"downstream_bps": -1}, "downstream_bps"),
    ({"cm_buffer_bytes": 0}, "cm_buffer_bytes"),
    ({"connections": 0}, "connections"),
    ({"upstream_loss": 1.0}, "upstream_loss"),
    ({"no_such_input": 1}, "no_such_input"),
])
def test_python_api_errors_name_the_input(inputs, name):
    with pytest.raises(ScenarioError, match=name):
        advise(**inputs)


def test_default_command_is_fast(hfcsim_cli):
    started = time.perf_counter()
    status, _, _ = hfcsim_cli(["advise", "--downstream-loss", "0.05", "--upstream-loss", "0.1",
                                                  "--connections", "3"])
    assert status == 0
    assert time.perf_counter() - started < 10
