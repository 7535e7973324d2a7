"""Low Latency DOCSIS's keys and the game-like flow (issue 24): the network.lld_* keys are refused
unless a queue is "lld"; pings.nqb likewise; a flow's own congestion control keeps the dctcp <-> l4s
rules; the pings' one-way delays add up to their RTT; `hfcsim reproduce lld --quick` writes its files.
The one-way delays are pinned to the nanosecond in crates/hfcsim-core/tests/docsis.rs."""

import json

import pytest

from hfcsim.cli import main
from hfcsim.errors import ScenarioError
from hfcsim.scenario import load
from hfcsim.simulate import simulate

DOCSIS = ["network.kind=docsis"]
LLD = [*DOCSIS, "network.cm_aqm=lld"]


@pytest.mark.parametrize(("sets", "key", "fragment"), [
    # Each LLD key off its default, without an lld queue.
    ([*DOCSIS, "network.lld_max_th_s=0.002"], "network.lld_max_th_s", 'network.cm_aqm = "lld"'),
    ([*DOCSIS, "network.lld_lg_range=18"], "network.lld_lg_range", 'network.cm_aqm = "lld"'),
    ([*DOCSIS, "network.lld_coupling=1.5"], "network.lld_coupling", 'network.cm_aqm = "lld"'),
    ([*DOCSIS, "network.lld_weight=200"], "network.lld_weight", 'network.cm_aqm = "lld"'),
    ([*DOCSIS, "network.lld_qprotect=false"], "network.lld_qprotect", 'network.cm_aqm = "lld"'),
    ([*DOCSIS, "network.lld_qp_latency_s=0.0005"], "network.lld_qp_latency_s", 'network.cm_aqm = "lld"'),
    ([*DOCSIS, "network.lld_qp_score_s=0.002"], "network.lld_qp_score_s", 'network.cm_aqm = "lld"'),
    ([*DOCSIS, "network.cm_aqm=docsis_pie", "network.cmts_aqm=pie", "network.lld_weight=200"],
     "network.lld_weight", "lld"),
    ([*DOCSIS, "pings.0.nqb=true"], "pings.0.nqb", 'network.cm_aqm = "lld"'),
    # Queue protection's thresholds need it on.
    ([*LLD, "network.lld_qprotect=false", "network.lld_qp_score_s=0.002"], "network.lld_qp_score_s",
     "network.lld_qprotect = true"),
    ([*LLD, "network.lld_qprotect=false", "network.lld_qp_latency_s=0.0005"], "network.lld_qp_latency_s",
     "network.lld_qprotect = true"),
    # Bounds: MULPI's 16-bit microseconds, a weight of 1..255 of 256, the ramp's exponent.
    ([*LLD, "network.lld_max_th_s=0.07"], "network.lld_max_th_s", "0.065535]"),
    ([*LLD, "network.lld_weight=256"], "network.lld_weight", "255]"),
    ([*LLD, "network.lld_weight=0"], "network.lld_weight", "[1, "),
    ([*LLD, "network.lld_lg_range=27"], "network.lld_lg_range", "26]"),
    ([*LLD, "network.lld_coupling=-1"], "network.lld_coupling", "[0, "),
    # Not on the other network kinds.
    (["network.lld_weight=200"], "network.lld_weight", "docsis"),
    (["pings.0.nqb=true"], "pings.0.nqb", "docsis"),
    # The upstream's LLD has no inter-SF weight (two stations of the modem): the weight needs the CMTS's.
    ([*LLD, "network.lld_weight=200"], "network.lld_weight", "bonded"),
    # A flow's own congestion control and ECN keep RFC 8257's and RFC 9331's pairing.
    (["flows.0.congestion_control=dctcp"], "flows.0.congestion_control", 'flows.0.ecn = "l4s"'),
    (["flows.0.ecn=l4s"], "flows.0.ecn", 'flows.0.congestion_control = "dctcp"'),
    (["tcp.stack=l4s", "flows.0.congestion_control=cubic"], "flows.0.congestion_control",
     'flows.0.congestion_control = "dctcp"'),
    (["tcp.stack=l4s", "flows.0.ecn=off"], "flows.0.ecn", 'flows.0.ecn = "l4s"'),
    (["flows.0.ecn=rfc3168", "tcp.variant=tahoe"], "flows.0.ecn", "tcp.variant"),
])
def test_refusals_name_the_key(sets, key, fragment):
    with pytest.raises(ScenarioError) as e:
        load(None, sets)
    message = str(e.value)
    assert "\n" not in message and message.startswith(key) and fragment in message, message


@pytest.mark.parametrize("sets", [
    [*LLD, "network.cmts_aqm=lld", "network.lld_max_th_s=0.002", "network.lld_lg_range=18",
     "network.lld_coupling=1.5", "network.lld_weight=200", "network.lld_qp_latency_s=0.0005",
     "network.lld_qp_score_s=0.002"],
    [*LLD, "network.lld_weight=200", "modems.0.count=1", "modems.0.bonded_channels=2", "upstream.channels=2"],
    [*DOCSIS, "network.cmts_aqm=lld", "network.lld_qprotect=false", "pings.0.nqb=true"],
    ["tcp.stack=l4s", "flows.0.congestion_control=cubic", "flows.0.ecn=off"],
    ["tcp.variant=newreno", "flows.0.congestion_control=dctcp", "flows.0.ecn=l4s"],
])
def test_accepted(sets):
    load(None, sets)


def test_one_way_delays_add_up_to_the_rtt_in_json_and_frame(capsys):
    sets = ["--set", "network.kind=docsis", "--set", "pings.0.interval_s=0.5", "--set", "flows.0.bytes=200000"]
    assert main(["run", *sets, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["pings"]
    assert rows and all(set(r) >= {"rtt_s", "up_s", "down_s"} for r in rows)
    for r in rows:
        if r["rtt_s"] is not None:
            assert r["up_s"] > 0 and r["down_s"] > 0
            assert r["up_s"] + r["down_s"] == pytest.approx(r["rtt_s"], abs=1e-9)
    frame = simulate(load(None, [s for s in sets if s != "--set"])).pings
    from hfcsim.simulate import PING_COLUMNS, PING_DELAY_PARTS

    assert list(frame.columns) == list(PING_COLUMNS)
    assert (frame["up_s"] + frame["down_s"] - frame["rtt_s"]).abs().max() < 1e-9
    # Each way's parts add up to its one-way delay (fabric.rs Leg).
    for way in ("up", "down"):
        parts = sum(frame[f"{way}_{part}_s"] for part in PING_DELAY_PARTS)
        assert (parts - frame[f"{way}_s"]).abs().max() < 1e-9


def test_nqb_echoes_skip_a_classic_queue_the_downloads_fill():
    # Two CUBIC downloads fill the CMTS's 100 ms drop-tail buffer... and under LLD the NQB echoes take
    # the low-latency queue beside them: their downstream delay drops by an order of magnitude.
    from hfcsim.papers import lld

    down = {}
    for aqm in ("droptail", "lld"):
        sc = lld.scenario(aqm, 1, 3.0)
        sc["flows"][0].update(congestion_control="cubic", ecn="off")
        p = simulate(sc).pings
        down[aqm] = p[p["sent_s"] >= 1.0]["down_s"].quantile(0.99)
    assert down["lld"] * 10 < down["droptail"], down


def test_reproduce_lld_quick_writes_its_files(capsys, tmp_path, monkeypatch):
    from hfcsim.papers import lld

    monkeypatch.setattr(lld, "QUICK_S", 2.0)  # the files, not the numbers: two simulated seconds a run
    assert main(["reproduce", "lld", "--quick", "--runs", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "LLD-ll-p99" in out
    for name in ("report.md", "report.html", "figures/figdelay.png", "figures/figthroughput.png",
                 "data/figruns.csv", "data/figdelay.csv", "data/figthroughput.csv"):
        assert (tmp_path / name).stat().st_size > 0, name
    md = (tmp_path / "report.md").read_text()
    assert "our own study, not from a seed paper" in md.lower()
    assert "RFC 9330" in md and "| LLD-sharing |" in md


def test_a_classic_flow_beside_the_l4s_stack_sends_unpaced():
    # The l4s stack's pacing is Prague's own (tcp_prague.c prague_init): a flow of its own CUBIC runs as
    # the stack's CUBIC with tcp.pacing off, and not as a paced CUBIC.
    base = ['network.kind="docsis"', 'tcp.stack="l4s"', "flows.0.bytes=2000000", "sim.time_limit_s=20",
            "network.ds_rate_bps=50e6", "tcp.send_buffer_bytes=1000000", "receiver.receive_buffer_bytes=1000000"]
    own = simulate(load(None, base + ['flows.0.congestion_control="cubic"', 'flows.0.ecn="off"'])).flows[0]

    def stack_wide(pacing):
        return simulate(load(None, base + ['tcp.congestion_control="cubic"', 'tcp.ecn="off"',
                                           f"tcp.pacing={str(pacing).lower()}"])).flows[0]

    assert own == stack_wide(False)
    assert own["rtt_mean_s"] != stack_wide(True)["rtt_mean_s"]  # pacing would show (its RTT samples)


def _nqb_and_classic_down(weight):
    """The downstream one-way delays (ms, p50 and p99) and losses of an NQB ping and a classic one beside a
    CUBIC download that keeps the classic queue busy, under the CMTS's LLD with ``network.lld_weight``."""
    sets = ["preset=docsis31", "tcp.stack=linux", "network.ds_rate_bps=100e6", "network.us_rate_bps=20e6",
            "network.cmts_aqm=lld", f"network.lld_weight={weight}", "flows.0.bytes=1000000000000",
            "sim.time_limit_s=6", "pings.0.interval_s=0.02", "pings.0.nqb=true", "pings.0.ip_bytes=100",
            "pings.1.interval_s=0.02", "pings.1.ip_bytes=100"]
    r = simulate(load(None, sets), seed=4)
    out = []
    for ping in (0, 1):
        p = r.pings[(r.pings["ping"] == ping) & (r.pings["sent_s"] >= 1.0)]
        d = p["down_s"].dropna() * 1e3
        out.append((d.quantile(0.5), d.quantile(0.99), int(p["lost"].sum())))
    return out


def test_a_weight_of_one_serves_the_low_latency_queue_its_share_and_loses_nothing():
    # Issue 36, defect 12: at lld_weight = 1 NQB pings saw 125 ms p50 and lost 64 of 151, because the dual
    # queue judged the low-latency queue's delay at the full rate cap. The weight is MULPI's inter-SF
    # weight: with both queues busy the L queue gets 1/256 of the 100 Mb/s, about 390 kb/s, so a 100-byte
    # echo (about 140 bytes framed, 2.9 ms at that share) waits a few ms, never the classic queue's tens,
    # and the AQM, judging the delay at the rate it measures the queue drain (net/aqm/dualq.rs), drops
    # nothing (a Not-ECT NQB packet is never dropped there).
    (nqb_p50, nqb_p99, nqb_lost), (classic_p50, _, _) = _nqb_and_classic_down(1)
    assert nqb_lost == 0
    assert 0.5 < nqb_p50 <= nqb_p99 < 5.0 < classic_p50, (nqb_p50, nqb_p99, classic_p50)
    # MULPI's 230 of 256 serves it at once: the weight acts.
    (fast_p50, fast_p99, fast_lost), _ = _nqb_and_classic_down(230)
    assert fast_lost == 0 and fast_p99 < 0.5 < nqb_p50, (fast_p50, fast_p99)
