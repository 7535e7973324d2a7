"""hfcsim advise: recommendations on Cohen & Ramanathan's network, predictions, JSON, bad inputs."""

from __future__ import annotations

import json

import pytest

from hfcsim import advise as advise_module
from hfcsim.advise import AQM_NAMES, advise
from hfcsim.errors import ScenarioError

# The paper's network (Cohen & Ramanathan Sec. V): 25/3 Mb/s, 20 ms, 10 KB modem buffer, 10 Mb/s LAN.
# The papers' advice is for the papers' stacks: these tests name one (--stack net3-rfc5681).
PAPER = dict(downstream_bps=25e6, upstream_bps=3e6, rtt_s=0.02, cm_buffer_bytes=10240, connections=1,
             stack="net3-rfc5681")
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
    status, out, _ = hfcsim_cli(["advise", "--seeds", "3", "--stack", "net3-rfc5681"])
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


def test_the_command_runs_one_prediction_per_transfer_and_setting(hfcsim_cli, monkeypatch):
    # The work advise does, counted (not timed): before and after for each transfer size.
    import hfcsim.advise as module

    scenarios = []
    real = module._run

    def counting(scenario, seeds):
        scenarios.append((scenario, seeds))
        return real(scenario, seeds)

    monkeypatch.setattr(module, "_run", counting)
    status, _, _ = hfcsim_cli(["advise", "--downstream-loss", "0.05", "--upstream-loss", "0.1",
                               "--connections", "3", "--seeds", "4"])
    assert status == 0
    assert len(scenarios) == 2 * 2  # the default transfers 300 KB and 3 MB
    assert all(seeds == 4 for _, seeds in scenarios)


# ---------------------------------------------------------------------------------------------------
# --stack: today's advice (the default, linux) and the papers' (net3, net3-rfc5681, ns2).

TODAY = dict(downstream_bps=300e6, upstream_bps=20e6, rtt_s=0.03, cm_lan_bps=1e9, seeds=2,
             transfer_bytes=[3_000_000])


@pytest.mark.parametrize(("stack", "kept", "moot"), [
    ("linux", {"tcp.mss_bytes", "tcp.send_buffer_bytes", "ds_us_ratio", "network.aqm"},
     {"tcp.initial_window", "tcp.tick_s", "tcp.dupack_threshold"}),
    ("net3", {"tcp.mss_bytes", "tcp.send_buffer_bytes", "tcp.initial_window", "tcp.tick_s", "tcp.dupack_threshold",
              "ds_us_ratio"}, set()),
    ("net3-rfc5681", {"tcp.mss_bytes", "tcp.send_buffer_bytes", "tcp.initial_window", "tcp.tick_s",
                      "tcp.dupack_threshold", "ds_us_ratio"}, set()),
    ("ns2", {"tcp.mss_bytes", "tcp.send_buffer_bytes", "tcp.initial_window", "tcp.tick_s", "tcp.dupack_threshold",
             "ds_us_ratio"}, set()),
])
def test_each_stack_gets_its_advice_and_the_rest_says_why_not(stack, kept, moot):
    got = advise(**TODAY, stack=stack)
    assert set(got["settings"]) == kept
    assert {m["setting"] for m in got["not_applicable"]} == moot
    for m in got["not_applicable"]:
        assert m["reason"] and m["reference"] and m["papers_value"]
    for r in got["recommendations"]:
        assert r["reason"] and r["reference"]


@pytest.mark.parametrize("stack", ["linux", "net3", "ns2"])
def test_predictions_simulate_the_chosen_stack(stack, monkeypatch):
    import hfcsim.advise as module

    seen = []
    real = module._run
    monkeypatch.setattr(module, "_run", lambda scenario, seeds: seen.append(scenario) or real(scenario, seeds))
    advise(**TODAY, stack=stack)
    assert seen and all(s["tcp"]["stack"] == stack for s in seen)
    # Today's stacks keep their own timers and initial window; the papers' get the papers' keys.
    assert all(("tick_s" in s["tcp"]) == (stack != "linux") for s in seen)


def test_today_buffers_come_from_the_loaded_bandwidth_delay_product():
    # 300 Mb/s x (30 ms + serialisation + 20 ms of queueing accepted) is about 1250 packets of 1500 B.
    got = advise(**TODAY)
    buffer = got["settings"]["tcp.send_buffer_bytes"]
    assert 1245 * 1460 <= buffer <= 1260 * 1460
    (p,) = got["predictions"]
    assert p["after"]["mean_bps"] > 2 * p["before"]["mean_bps"]  # 128 KB of Linux's default buffer: window-bound


def test_today_ds_us_ratio_counts_todays_acks():
    # An ACK every 2 segments, 52 B with timestamps: a higher bound than the papers' 1.5 and 40 B.
    today = advise(**TODAY)["settings"]["ds_us_ratio"]
    papers = advise(**TODAY, stack="net3")["settings"]["ds_us_ratio"]
    assert today > papers


def test_stack_flag_errors_are_one_line(hfcsim_cli):
    status, out, err = hfcsim_cli(["advise", "--stack", "windows"])
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--stack" in err and "windows" in err


def test_human_output_lists_what_no_longer_applies(hfcsim_cli):
    status, out, _ = hfcsim_cli(["advise", "--downstream-bps", "300e6", "--upstream-bps", "20e6", "--seeds", "1",
                                 "--transfer-bytes", "300000"])
    assert status == 0
    assert "TCP stack: linux" in out
    assert out.index("recommended settings") < out.index("no longer apply") < out.index("predicted throughput")
    assert "moot: today's stacks start with 10 segments" in out


# ---------------------------------------------------------------------------------------------------
# DOCSIS service flow (Nguyen & Armitage 2004): the paper's testbed, Sec. III.A: DS cap 2 Mb/s, US cap
# 1 Mb/s, idle ping RTT 13 ms, MTU 1500. The default window 65535 B holds floor(65535 / 1460) = 44
# segments = 44 x 1518 = 66792 B of frames; the cap carries 3250 B in 13 ms, so 63542 B queue at the
# CMTS, 254.168 ms: 267.168 ms under load.

TESTBED = dict(rtt_s=0.013, ds_cap_bps=2e6, us_cap_bps=1e6, seeds=1, transfer_bytes=[30000], stack="net3-rfc5681")
PAYLOAD = 2e6 * 1460 / 1518  # the cap in payload terms


def _rec(got, setting):
    return next(r for r in got["recommendations"] if r["setting"] == setting)


@pytest.mark.parametrize(("inputs", "window"), [
    # 13 + 20 ms: 2e6 * 0.033 / 8 = 8250 B / 1518 = 5.43 -> 5 segments
    ({}, 7300),
    # target 10 ms: 5750 / 1518 = 3.79 -> 3 segments (= the knee, 3250 / 1518 = 2.14 -> 3)
    ({"queue_target_s": 0.010}, 4380),
    # target 3 ms: 4000 / 1518 = 2.6 -> 2 segments, below the knee: the knee's 3
    ({"queue_target_s": 0.003}, 4380),
    # a half-second target: 2e6 * 0.513 / 8 = 128250 B / 1518 = 84.5 -> 84 segments
    ({"queue_target_s": 0.5}, 84 * 1460),
    # PIE already there: the window is sized from PIE's 15 ms, 7000 / 1518 = 4.6 -> 4 segments
    ({"aqm": "pie"}, 5840),
    # CoDel's 5 ms: 4500 / 1518 = 2.96 -> 2, below the knee: 3
    ({"aqm": "codel"}, 4380),
    ({"modem_buffer_bytes": 16000}, 7300),
    ({"window_bytes": 8192}, 7300),
    # MTU 576: MSS 536, frames 594 B: 8250 / 594 = 13.9 -> 13 segments
    ({"mtu_bytes": 576}, 13 * 536),
    # 10 Mb/s on a 25 Mb/s channel: 1e7 * 0.033 / 8 = 41250 B / 1518 = 27.2 -> 27 segments
    ({"ds_cap_bps": 10e6, "us_cap_bps": 2e6}, 27 * 1460),
    # 20 Mb/s: 82500 / 1518 = 54.3 -> 54 segments, 78840 B: more than 65535, window scaling
    ({"ds_cap_bps": 20e6, "us_cap_bps": 2e6}, 54 * 1460),
])
def test_docsis_window_from_the_loaded_rtt(inputs, window):
    got = advise(**{**TESTBED, **inputs})
    assert got["settings"]["receiver.receive_buffer_bytes"] == window
    assert ("RFC 7323" in _rec(got, "receiver.receive_buffer_bytes")["reason"]) == (window > 65535)


# The AQM is chosen on the simulated predictions (seeds 1..3 of the nguyen04 testbed, 13 ms idle): drop-tail
# and the 65535 B window hold ~240 ms of queue; PIE ~13 ms at ~5 % of the throughput (timeouts), CoDel ~14 ms at
# none. Pinned here, where the margins are wide, so that a change to the engine that moves them shows.
@pytest.mark.parametrize(("inputs", "aqm"), [
    ({}, "codel"),                           # both meet 13 + 20 ms: CoDel has the more throughput
    ({"queue_target_s": 0.5}, "droptail"),   # 240 ms of queue is within 500 ms: nothing to change
    ({"aqm": "pie"}, "pie"),                 # already within the target
    ({"aqm": "codel"}, "codel"),
    ({"modem_buffer_bytes": 16000}, "codel"),  # 16000 B: ~40 ms of queue, > 20 ms
    ({"window_bytes": 8192}, "droptail"),    # 5 x 1518 - 3250 = 4340 B, ~17 ms: no AQM needed
    # ~113 ms of queue; both meet the target, PIE with 1.89 Mb/s against CoDel's 1.87 since the plant's
    # delays (issue 23): a narrow margin, pinned so that a change that moves it shows
    ({"window_bytes": 32768}, "pie"),
])
def test_docsis_aqm_choice(inputs, aqm):
    got = advise(**{**TESTBED, **inputs})
    assert got["settings"]["network.cmts_aqm"] == aqm
    assert _rec(got, "network.cmts_aqm")["text"] == AQM_NAMES[aqm]


@pytest.mark.parametrize("inputs", [
    {}, {"queue_target_s": 0.010}, {"queue_target_s": 0.3}, {"queue_target_s": 0.5}, {"aqm": "pie"},
    {"modem_buffer_bytes": 16000}, {"window_bytes": 8192}, {"window_bytes": 16384}, {"window_bytes": 32768},
])
def test_docsis_aqm_recommended_iff_queueing_exceeds_target(inputs):
    got = advise(**{**TESTBED, **inputs})
    x, r = got["inputs"], _rec(got, "network.cmts_aqm")
    queueing = r["before"]["ping_rtt_s"] - got["docsis"]["idle_rtt_s"]
    # and an option takes enough off the RTT to count (issue 36: "brings it to 94.2 ms" from 94.2 ms)
    needed = advise_module._gain_needed(r["before"]["ping_rtt_s"])
    target = got["docsis"]["idle_rtt_s"] + x["queue_target_s"]
    shortens = any(o["ping_rtt_s"] <= max(target, r["before"]["ping_rtt_s"] - needed)
                   for o in r.get("options", {}).values())
    assert (r["value"] != x["aqm"]) == (queueing > x["queue_target_s"] and shortens)
    if r["value"] != x["aqm"]:
        options = r["options"]
        assert r["after"] == options[r["value"]]
        meets = [n for n in options if options[n]["ping_rtt_s"] - got["docsis"]["idle_rtt_s"] <= x["queue_target_s"]]
        if meets:  # the most throughput among those that meet the target
            assert r["value"] in meets
            assert all(options[r["value"]]["throughput_bps"] >= options[n]["throughput_bps"] for n in meets)
        else:  # none does: the lowest RTT
            assert options[r["value"]]["ping_rtt_s"] == min(o["ping_rtt_s"] for o in options.values())
    else:
        assert r["after"] == r["before"] and ("options" not in r or not shortens)


def test_docsis_before_after_on_the_testbed():
    # the analytic values beside the simulated ones, worked by hand (the header comment above)
    got = advise(**TESTBED)
    w, ratio, aqm = (_rec(got, s) for s in ("receiver.receive_buffer_bytes", "ds_us_ratio", "network.cmts_aqm"))
    for r in (w, ratio, aqm):
        assert r["before"]["analytic_ping_rtt_s"] == pytest.approx(0.013 + 63542 * 8 / 2e6)
        assert r["before"]["analytic_throughput_bps"] == pytest.approx(PAYLOAD)
        assert r["before"]["window_bytes"] == 65535 and r["before"]["aqm"] == "droptail"
    # the window: 5 x 1518 - 3250 = 4340 B queued, 17.36 ms, and still the full cap
    assert w["after"]["analytic_ping_rtt_s"] == pytest.approx(0.013 + 4340 * 8 / 2e6)
    assert w["after"]["analytic_throughput_bps"] == pytest.approx(PAYLOAD)
    assert w["after"]["window_bytes"] == 7300
    # rule (1) holds (2 <= 35.6): after = before
    assert ratio["ok"] is True and ratio["after"] == ratio["before"]
    # PIE, analytic: the queue near 15 ms, Reno's sawtooth costs half a percent (models.nguyen: 0.9953); CoDel's
    # 5 ms is less than the one 1518 B frame it keeps, 6.072 ms at 2 Mb/s
    pie, codel = aqm["options"]["pie"], aqm["options"]["codel"]
    assert pie["analytic_ping_rtt_s"] == pytest.approx(0.028)
    assert pie["analytic_throughput_bps"] == pytest.approx(PAYLOAD * 0.9953, rel=1e-4)
    assert codel["analytic_ping_rtt_s"] == pytest.approx(0.013 + 1518 * 8 / 2e6)
    assert aqm["after"] == aqm["options"][aqm["value"]] and aqm["after"]["aqm"] == aqm["value"]


def test_docsis_simulations_are_deterministic():
    one, two = advise(**TESTBED), advise(**TESTBED)
    for setting in ("receiver.receive_buffer_bytes", "ds_us_ratio", "network.cmts_aqm"):
        assert _rec(one, setting)["before"] == _rec(two, setting)["before"]
        assert _rec(one, setting)["after"] == _rec(two, setting)["after"]
    assert one["docsis"] == two["docsis"]


def test_docsis_simulated_testbed_matches_the_paper_roughly():
    # Fig. 3/4: 2 Mb/s cap, a large window: ~1.9 Mb/s of payload and over 100 ms of ping under load
    got = advise(**TESTBED)
    before = _rec(got, "network.cmts_aqm")["before"]
    assert before["source"] == "simulated"
    assert got["docsis"]["idle_rtt_s"] == pytest.approx(0.013, abs=0.0005)  # calibrated to rtt_s
    assert 1.85e6 < before["throughput_bps"] <= PAYLOAD
    assert before["ping_rtt_s"] > 0.1
    w = _rec(got, "receiver.receive_buffer_bytes")["after"]
    assert w["throughput_bps"] > 0.97 * before["throughput_bps"] and w["ping_rtt_s"] < 0.013 + 0.020


@pytest.mark.parametrize(("inputs", "limit", "given", "ok", "us_after"), [
    ({}, 1518 * 1.5 / 64, 2.0, True, 1e6),
    # no US cap: the 3 Mb/s upstream channel carries the ACKs
    ({"us_cap_bps": None}, 1518 * 1.5 / 64, 2e6 / 3e6, True, 3e6),
    # 32 kb/s: 62.5 > 35.58; the US cap to raise to: 2e6 / 35.578 = 56.2 kb/s -> 57 kb/s
    ({"us_cap_bps": 32e3}, 1518 * 1.5 / 64, 62.5, False, 57e3),
    # MTU 512: 530 * 1.5 / 64 = 12.42; 2e6 / 128e3 = 15.6 too high -> 2e6 / 12.42 = 161 kb/s
    ({"us_cap_bps": 128e3, "mtu_bytes": 512}, 530 * 1.5 / 64, 15.625, False, 162e3),
])
def test_docsis_ratio_uses_the_caps(inputs, limit, given, ok, us_after):
    got = advise(**{**TESTBED, **inputs})
    r = _rec(got, "ds_us_ratio")
    assert r["value"] == pytest.approx(limit)
    assert r["given"] == pytest.approx(given)
    assert r["ok"] is ok
    assert r["us_cap_bps"] == pytest.approx(us_after)
    assert r["after"]["us_cap_bps"] == pytest.approx(us_after)
    assert r["after"]["limited_by"] == "ds_cap"


def test_docsis_ratio_too_high_predicts_ack_clocked_download():
    # 32 kb/s US cap: 32000 / 512 B x 1.5 = 93.75 segments/s, 1.095 Mb/s of payload; the window's
    # 44 - 93.75 x 0.013 = 42.78 segments wait as ACKs at the modem: 456.3 ms more on the ping
    got = advise(**{**TESTBED, "us_cap_bps": 32e3})
    before, after = _rec(got, "ds_us_ratio")["before"], _rec(got, "ds_us_ratio")["after"]
    assert before["limited_by"] == "ack_clock"
    assert before["analytic_throughput_bps"] == pytest.approx(93.75 * 1460 * 8)
    assert before["analytic_ping_rtt_s"] == pytest.approx(0.013 + (44 - 93.75 * 0.013) / 93.75)
    assert after["analytic_throughput_bps"] == pytest.approx(PAYLOAD)
    assert "raise the US cap to >= 0.057 Mb/s" in _rec(got, "ds_us_ratio")["reason"]


def test_docsis_recommendations_have_reason_reference_and_predictions():
    got = advise(**TESTBED)
    docsis_recs = [r for r in got["recommendations"] if "before" in r]
    assert [r["setting"] for r in docsis_recs] == ["receiver.receive_buffer_bytes", "ds_us_ratio", "network.cmts_aqm",
                                                   "lld"]
    docsis_recs = docsis_recs[:3]  # the papers' three; LLD's is ours (test_lld_advice)
    for r in docsis_recs:
        assert r["reason"] and "\n" not in r["reason"]
        assert "Nguyen & Armitage 2004, Sec" in r["reference"]
        for side in ("before", "after"):
            assert set(r[side]) >= {"window_bytes", "us_cap_bps", "aqm", "throughput_bps", "ping_rtt_s",
                                    "limited_by", "source", "analytic_throughput_bps", "analytic_ping_rtt_s"}
            assert r[side]["throughput_bps"] > 0 and r[side]["ping_rtt_s"] >= 0.013


def test_no_docsis_inputs_no_docsis_recommendations():
    got = advise(**PAPER, seeds=2, transfer_bytes=[30000])
    assert not any("before" in r for r in got["recommendations"])
    assert all(got["inputs"][k] is None for k in ("ds_cap_bps", "us_cap_bps", "modem_buffer_bytes", "aqm",
                                                   "queue_target_s", "window_bytes"))


def test_docsis_human_output(hfcsim_cli):
    # the testbed's 64 KB window, worked by hand above (today's default is larger: test_user_surface.py)
    status, out, err = hfcsim_cli(["advise", "--seeds", "1", "--rtt-s", "0.013", "--ds-cap-bps", "2e6",
                                   "--us-cap-bps", "1e6", "--transfer-bytes", "30000", "--window-bytes", "65535"])
    assert status == 0 and err == ""
    assert "DOCSIS service flow: DS cap 2 Mb/s, US cap 1 Mb/s, CMTS buffer unbounded (drop-tail)" in out
    assert "7300 B (5 x 1460 B)" in out
    assert "<= 35.6 (given 2.0: ok)" in out
    table = out[out.index("predicted bulk download"):]
    assert "idle ping RTT 13.0 ms" in table
    row = next(line for line in table.splitlines() if line.lstrip().startswith("receive window")).split()
    # simulated, then the analytic value in brackets: 1.924 Mb/s both sides; 267.2 ms -> 30.4 ms
    assert [row[3], row[5], row[8], row[11]] == ["(1.924)", "(1.924)", "(267.2)", "(30.4)"]
    assert 1.85 < float(row[2]) <= 1.924 and float(row[6]) > 100 and float(row[9]) < 33


def test_docsis_json(hfcsim_cli):
    status, out, _ = hfcsim_cli(["advise", "--json", "--seeds", "1", "--rtt-s", "0.013", "--ds-cap-bps", "2e6",
                                 "--aqm", "codel", "--modem-buffer-bytes", "20000", "--queue-target-s", "0.01",
                                 "--window-bytes", "32768", "--transfer-bytes", "30000"])
    assert status == 0
    data = json.loads(out)
    assert {k: data["inputs"][k] for k in ("ds_cap_bps", "us_cap_bps", "modem_buffer_bytes", "aqm",
                                           "queue_target_s", "window_bytes")} == {
        "ds_cap_bps": 2e6, "us_cap_bps": None, "modem_buffer_bytes": 20000, "aqm": "codel",
        "queue_target_s": 0.01, "window_bytes": 32768}
    # CoDel already there holds ~11 ms of queue, beyond the 10 ms target, and PIE would do worse: keep CoDel
    rec = next(r for r in data["recommendations"] if r["setting"] == "network.cmts_aqm")
    assert data["settings"]["network.cmts_aqm"] == "codel"
    assert "keep CoDel" in rec["reason"]


@pytest.mark.parametrize(("argv", "name"), [
    (["--ds-cap-bps", "0"], "ds_cap_bps"),
    (["--ds-cap-bps", "-2e6"], "--ds-cap-bps"),
    (["--ds-cap-bps", "30e6"], "ds_cap_bps"),                 # above the 25 Mb/s channel
    (["--ds-cap-bps", "abc"], "--ds-cap-bps"),
    (["--ds-cap-bps", "2e6", "--us-cap-bps", "0"], "us_cap_bps"),
    (["--ds-cap-bps", "2e6", "--us-cap-bps", "4e6"], "us_cap_bps"),  # above the 3 Mb/s channel
    (["--us-cap-bps", "1e6"], "us_cap_bps"),                 # needs --ds-cap-bps
    (["--aqm", "pie"], "aqm"),                               # needs --ds-cap-bps
    (["--window-bytes", "8192"], "window_bytes"),            # needs --ds-cap-bps
    (["--ds-cap-bps", "2e6", "--aqm", "red"], "--aqm"),
    (["--ds-cap-bps", "2e6", "--queue-target-s", "0"], "queue_target_s"),
    (["--ds-cap-bps", "2e6", "--queue-target-s", "-0.01"], "queue_target_s"),
    (["--ds-cap-bps", "2e6", "--modem-buffer-bytes", "1000"], "modem_buffer_bytes"),  # < one 1518 B frame
    (["--ds-cap-bps", "2e6", "--modem-buffer-bytes", "1.5"], "--modem-buffer-bytes"),
    (["--ds-cap-bps", "2e6", "--window-bytes", "0"], "window_bytes"),
    (["--ds-cap-bps", "2e6", "--window-bytes", "2e9"], "window_bytes"),  # > 2^30, RFC 7323
])
def test_docsis_bad_inputs_exit_2_with_one_line(hfcsim_cli, argv, name):
    status, out, err = hfcsim_cli(["advise", "--seeds", "1", *argv])
    assert status == 2
    assert out == ""
    assert err.startswith("hfcsim: error: ") and err.count("\n") == 1
    assert name in err


@pytest.mark.parametrize(("inputs", "message"), [
    ({"ds_cap_bps": 0}, "ds_cap_bps = 0: must be > 0"),
    ({"ds_cap_bps": 3e7}, "ds_cap_bps = 3e+07: must be <= downstream_bps = 2.5e+07"),
    ({"modem_buffer_bytes": 16000}, "modem_buffer_bytes = 16000: needs ds_cap_bps"),
    ({"ds_cap_bps": 2e6, "aqm": "red"}, "aqm = 'red': must be one of droptail, pie, docsis_pie, codel"),
    ({"ds_cap_bps": 2e6, "modem_buffer_bytes": 64, "mtu_bytes": 576}, "modem_buffer_bytes = 64: must be >= 594"),
])
def test_docsis_python_api_errors(inputs, message):
    with pytest.raises(ScenarioError, match="^" + message.replace("+", r"\+")):
        advise(**inputs)


@pytest.mark.parametrize(("inputs", "transfer", "interval", "ethernet", "burst"), [
    # 2 Mb/s: the cap passes 2e6 * 1460 / 1518 = 1.9236 Mb/s of payload; 10 s of it (2.4 MB) is less than the
    # paper's 8 MB, which takes 34.9 s: 34.9 / 30 pings = 1.16 s -> 1 s. The ACKs of one 2 ms MAP at the cap:
    # 2e6 / (8 x 1518) / 1.5 x 0.002 = 0.22, x 70 B DOCSIS frames x 2 = 30.7 B: the testbed's 1600 B do.
    ({"ds_cap_bps": 2e6}, 2048 * 4096, 1.0, 100e6, 1600),
    # 300 Mb/s on a 1 Gb/s channel: 10 s of 288.5 Mb/s = 360.7 MB, 10 s / 30 = 0.33 -> 0.2 s; Ethernet 10 x
    # 1 Gb/s; 300e6 / (8 x 1518) / 1.5 x 0.002 = 32.94 ACKs x 70 B x 2 = 4611.3 -> 4612 B
    ({"downstream_bps": 1e9, "upstream_bps": 30e6, "ds_cap_bps": 300e6, "us_cap_bps": 20e6},
     int(300e6 * 1460 / 1518 * 10 / 8), 0.2, 10e9, 4612),
    # 16 kb/s: 8 MB would take 4361 s; 600 s of 15389 b/s = 1154150 B; 600 s / 30 = 20 -> 1 s
    ({"ds_cap_bps": 16e3}, int(16e3 * 1460 / 1518 * 600 / 8), 1.0, 100e6, 1600),
])
def test_docsis_simulated_transfer_pings_and_testbed(inputs, transfer, interval, ethernet, burst):
    from hfcsim.advise import _check, _DocsisPredictor

    predict = _DocsisPredictor(_check({**TESTBED, **inputs}))
    assert predict.transfer_bytes == transfer
    assert predict.ping_interval_s == interval
    assert predict.ethernet_bps == ethernet
    assert predict.max_burst_bytes == burst
    # one calibration run: the one-way delays make the idle ping RTT the 13 ms asked for
    assert predict.idle_zero_s + 2 * predict.delay_s == pytest.approx(0.013)
    s = predict.scenario(7300, 1e6, "codel")
    assert s["network"]["ethernet_bps"] == ethernet and s["upstream"]["max_burst_bytes"] == burst
    assert s["tcp"]["send_buffer_bytes"] == s["receiver"]["receive_buffer_bytes"] == 7300
    assert s["network"]["cmts_aqm"] == "codel" and s["flows"][0]["bytes"] == transfer


def test_docsis_pie_at_the_cmts_is_simulated_as_pie_with_its_target(hfcsim_cli):
    from hfcsim.advise import _check, _DocsisPredictor

    s = _DocsisPredictor(_check({**TESTBED, "aqm": "docsis_pie"})).scenario(7300, 1e6, "docsis_pie")
    # the engine has DOCSIS-PIE at the modem only (cm_aqm): PIE at the CMTS with RFC 8034's 10 ms
    assert s["network"]["cmts_aqm"] == "pie" and s["network"]["pie_target_s"] == 0.010
    status, out, _ = hfcsim_cli(["advise", "--seeds", "1", "--rtt-s", "0.013", "--ds-cap-bps", "2e6",
                                 "--aqm", "docsis_pie", "--transfer-bytes", "30000"])
    assert status == 0 and "DOCSIS-PIE at the CMTS simulated as PIE with its 10 ms target" in out


@pytest.mark.parametrize(("window", "pays"), [(None, True), (4000, False)])
def test_lld_advice(window, pays):
    # Low Latency DOCSIS's advice (ours): the testbed's 64 KB window keeps about 240 ms queued at the CMTS
    # behind a 2 Mb/s cap, which an NQB ping under LLD skips (back to about the 13 ms idle RTT); a 4000 B
    # window queues about 1.5 ms, of which LLD takes less than the 1 ms-and-10 % it must buy (advise.LLD_GAIN_S,
    # _SHARE). The reason gives the waits it compares (issue 36: "already short" was said of 94 ms too).
    got = advise(**(TESTBED if window is None else {**TESTBED, "window_bytes": window}))
    r = _rec(got, "lld")
    before, after = r["before"], r["after"]
    assert after["aqm"] == "lld" and before["aqm"] == "droptail"
    assert r["value"] is pays and r["text"] == ("worth it" if pays else "buys little here")
    assert "\n" not in r["reason"] and r["reason"].startswith("with LLD's dual queue")
    idle = got["docsis"]["idle_rtt_s"]
    assert after["ping_rtt_s"] < idle + 0.002  # the NQB ping's queue is under 2 ms
    if pays:
        assert before["ping_rtt_s"] > idle + 0.1 and "worth it for games and calls" in r["reason"]
        assert after["throughput_bps"] >= (1 - advise_module.LLD_COST_SHARE) * before["throughput_bps"]
    else:
        assert before["ping_rtt_s"] - after["ping_rtt_s"] < advise_module.LLD_GAIN_S + 0.0005
        assert "less than the 1.5 ms that counts" in r["reason"]
        assert "the ping waits 1.5 ms above idle with drop-tail, 0.64 ms under LLD" in r["reason"]
