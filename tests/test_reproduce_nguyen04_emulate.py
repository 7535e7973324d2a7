"""``hfcsim reproduce nguyen04 --emulate`` (issue 22): Figs. 3-7 with the host's Linux TCP beside the same
points simulated, and ``hfcsim emulate --json -- COMMAND``.

The pieces that need no root run everywhere: the emulated scenario of a recipe, the rows a run makes,
the simulated half of the pipeline, the refusals, and the JSON document of a COMMAND's run. The runs
themselves need root and /dev/net/tun (CI has both): one short point per figure, asserted in ranges.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hfcsim import emulate, reproduce
from hfcsim.cli import main
from hfcsim.papers import nguyen04 as n
from hfcsim.scenario import load
from hfcsim.simulate import simulate

KB = 1024
ROOT = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/dev/net/tun"),
                          reason="emulation needs root and /dev/net/tun")

# One short point per figure: Fig. 4 at MTU 576 (the MSS reaches the kernel), Fig. 5 at an 8 KB window
# (the clamp reaches the advertised window), Figs. 6-7 with the server's pipe below the cap (the pings
# bypass it).
TINY = n.EmulationPlan(transfer_bytes=200 * KB, t0_s=2.0, after_s=1.0, fig4_mtus=(576,), fig5_mtus=(1500,),
                       fig5_windows=(8 * KB,), fig6_caps=(2e6,), fig6_limits=(1e6,))


# ---------------------------------------------------------------------------------------------------
# Without root


@pytest.mark.parametrize("recipe, window", [
    (n.default_settings(1500), 32 * KB),  # FreeBSD's 32 KB send buffer binds before the 64 KB window
    (n.default_settings(512), 32 * KB),
    (n.scenario(576, window=8 * KB), 8 * KB),  # the 256 KB send buffer never binds
    (n.scenario(window=n.FIG6_WINDOW, ds_bps=1e6, server_limit_bps=0.4e6), 48 * KB),
])
def test_the_emulated_scenario_is_the_recipe_on_the_kernels_reno(recipe, window):
    sc, w = n.emulated_scenario(recipe)
    assert w == window
    got, was = load(sc), load(recipe)
    assert got.get("tcp.stack") == "linux" and got.get("tcp.congestion_control") == "reno"
    assert not got.get("tcp.sack") and not got.get("tcp.rack") and not got.get("tcp.tlp")
    # the recipe's settings the kernel takes per namespace or per route
    for key in ("mss_bytes", "timestamps", "window_scaling", "min_rto_s", "initial_window"):
        assert got.get(f"tcp.{key}") == was.get(f"tcp.{key}"), key
    assert got.get("tcp.min_rto_s") == 1.0  # FreeBSD 4.x's, on the route
    # The receiver asks for twice the window (the clamp holds it to the window); the sender never binds.
    assert got.get("receiver.receive_buffer_bytes") == 2 * window
    assert got.get("tcp.send_buffer_bytes") == n.SEND_BUFFER
    # the network is the recipe's
    assert got["network"] == was["network"] and got["pings"] == was["pings"] and got["flows"] == was["flows"]
    emulate.check_scenario(got, builtin=True)  # nothing the kernel cannot honour


@pytest.mark.parametrize("sc", [
    n._timeline(n.default_settings(1500), n.EMU_QUICK),  # pings before, during (5) and after
    n._timeline(n.scenario(576, window=48 * KB), n.EMU_QUICK),
    n._timeline(n.scenario(window=48 * KB, ds_bps=1e6, server_limit_bps=2.4e6), TINY),
])
def test_the_emulated_flows_ping_phases_split_the_echoes_as_the_engine_does(sc):
    # emulate.ping_phases (an emulated flow's ping_* fields) on a simulated run's echoes, with the flow's
    # scheduled start and its end, gives the engine's own per-flow fields (sim.rs ping_phases).
    r = simulate(sc, seed=1)
    f = r.flows[0]
    got = emulate.ping_phases(r.ping_rows, sc["flows"][0]["start_s"], f["end_s"])
    for key, value in got.items():
        assert value == pytest.approx(f[key], rel=1e-12), key
    assert got["ping_during_samples"] >= 1
    # and point_row takes the flow's fields, for either side
    row, pings = n.point_row(r, {n.MSS_KEY: sc["tcp"]["mss_bytes"]})
    assert all(row[k] == f[k] for k in ("ping_before_mean_s", "ping_during_max_s", "throughput_bps"))
    assert set(pings["phase"]) == {"before", "during", "after"}


def test_ping_phases_by_hand():
    # Echoes at 0, 1, 2, 3, 4 s; the flow from 1.5 s to 3.5 s: before 0 and 1, during 2 (lost) and 3,
    # after 4. Means: before (10 + 20) / 2 = 15 ms, during 100 ms (the lost one not counted), after 12 ms.
    rows = [{"sent_s": float(t), "rtt_s": rtt} for t, rtt in enumerate((0.010, 0.020, None, 0.100, 0.012))]
    assert emulate.ping_phases(rows, 1.5, 3.5) == {
        "ping_before_mean_s": pytest.approx(0.015), "ping_during_mean_s": 0.100, "ping_during_max_s": 0.100,
        "ping_after_mean_s": 0.012, "ping_during_samples": 1, "ping_lost": 1}
    # A flow that never completed: everything from its start on is during.
    got = emulate.ping_phases(rows, 1.5, None)
    assert got["ping_after_mean_s"] is None and got["ping_during_max_s"] == 0.100 and got["ping_during_samples"] == 2


def test_the_simulated_half_runs_every_emulated_figure(tmp_path):
    # The "simulated" side of --emulate on the tiny plan through the reproduction's own runner: every
    # figure's files, and the claims evaluate on one point per figure (FAIL or PASS, never a crash).
    paper = n.paper().emulation("simulated", True, TINY)
    assert [f.id for f in paper.figures] == ["3", "4", "5", "6", "7"]
    rep = reproduce._reproduce(paper, None, 1, True, tmp_path, None, None, None, n.STACK)
    for fid in ("3", "4", "5", "6", "7"):
        assert (tmp_path / "figures" / f"fig{fid}.png").stat().st_size > 0
        assert (tmp_path / "data" / f"fig{fid}.csv").stat().st_size > 0
    status = {r.claim.id: r.status for r in rep.results}
    assert status["N-overhead"] == "PASS"
    assert status["N-ratio"] == status["AQM-gain"] == "NOT-RUN"
    assert {status[c] for c in ("N-rtt-jump", "N-window-peak", "N-offered-load")} <= {"PASS", "FAIL"}


def test_the_full_and_quick_plans():
    # The full emulation: every MTU for Fig. 4, Fig. 5's and Fig. 6's --quick grids, the recipes' timeline.
    full, quick = n.EMU_FULL, n.EMU_QUICK
    assert (full.transfer_bytes, full.t0_s, full.after_s) == (n.TRANSFER_BYTES, n.T0, n.PING_AFTER_S)
    assert [len(n._points(f, full)) for f in ("4", "5", "6")] == [4, 20, 16]
    assert [len(n._points(f, quick)) for f in ("4", "5", "6")] == [4, 12, 4]
    # --quick's server limits lie below and above both caps (N-offered-load's 0.9 and 1.1 x cap)
    for cap in quick.fig6_caps:
        assert min(quick.fig6_limits) <= 0.9 * cap and max(quick.fig6_limits) >= 1.1 * cap


@pytest.mark.parametrize("argv, says", [
    (["reproduce", "cohen98", "--emulate"], "--emulate: cohen98 has no emulated figures (only nguyen04)"),
    (["reproduce", "nguyen04", "--emulate", "--stack", "linux"], "cannot run with --stack or --stacks"),
    (["reproduce", "nguyen04", "--emulate", "--stacks", "all"], "cannot run with --stack or --stacks"),
    (["reproduce", "nguyen04", "--emulate", "--runs", "3"], "takes no --runs or --jobs"),
])
def test_emulate_refusals_are_one_line(argv, says, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and says in err, err


def test_emulate_without_root_is_refused_with_emulates_line(monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["reproduce", "nguyen04", "--emulate", "--quick"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "hfcsim: error: hfcsim emulate needs root (it makes network namespaces and TUN devices)\n"


@pytest.mark.parametrize("sets, says", [
    ({"tcp": {"stack": "linux", "mss_bytes": 1461}}, "MTU is tcp.mss_bytes + tcp.header_bytes = 1501"),
    ({"tcp": {"stack": "linux", "mss_bytes": 20}}, "= 60, which must be 68-1500"),
    ({"tcp": {"stack": "linux", "mss_bytes": 536}, "flows": [{"bytes": 1000}],
      "pings": [{"ip_bytes": 600}]}, "pings.0.ip_bytes = 600: the emulated devices' MTU is 576 bytes"),
])
def test_an_mtu_the_devices_cannot_take_is_refused(sets, says):
    with pytest.raises(emulate.EmulationRefused, match=says.replace("+", r"\+").replace(".", r"\.")):
        emulate.check_scenario(load(sets), builtin=True)


def _report(balanced: bool = True) -> dict:
    return {"packets_read": {"server": 5, "client": 5}, "packets_written": {"server": 5, "client": 5},
            "packets_dropped": 0, "unclassified": 0, "held_at_end": 0, "balanced": balanced,
            "tun_tx_dropped": {"server": 0, "client": 0}, "lateness_us": {"p50": 1.0}}


@pytest.mark.parametrize("status, side, modems, pings, balanced", [
    (0, "client", 1, [], True),
    (3, "server", 2, [], True),
    (124, "client", 3, [{"ping": 0, "seq": 0, "sent_s": 0.0, "rtt_s": 0.0084}], True),
    (0, "client", 1, [{"ping": 0, "seq": 0, "sent_s": 0.0, "rtt_s": None}], False),
])
def test_a_commands_run_as_json(status, side, modems, pings, balanced):
    run = emulate.CommandRun(["iperf3", "-c", "198.18.0.1"], side, status, _report(balanced), pings, "hfcemu1s",
                             "hfcemu1c", modems, ["a warning"])
    doc = json.loads(json.dumps(run.to_dict()))
    assert doc["command"] == ["iperf3", "-c", "198.18.0.1"] and doc["side"] == side
    assert doc["exit_status"] == status
    assert doc["server"] == {"address": "198.18.0.1", "namespace": "hfcemu1s"}
    assert doc["clients"] == [{"modem": m, "address": f"198.19.0.{m + 1}"} for m in range(modems)]
    assert doc["client_namespace"] == "hfcemu1c" and doc["warnings"] == ["a warning"]
    assert doc["pings"] == pings
    checks = {c["name"]: c["ok"] for c in doc["self_checks"]}
    assert checks == {"packets balance": balanced, "TUN tx_dropped = 0": True}
    assert doc["emulator"] == _report(balanced)


# ---------------------------------------------------------------------------------------------------
# As root: real runs


@ROOT
def test_reproduce_emulated_one_short_point_per_figure(tmp_path):
    er = reproduce.reproduce_emulated(n.paper(), plan=TINY, out=tmp_path)
    for side in ("simulated", "emulated"):
        for fid in ("3", "4", "5", "6", "7"):
            assert (tmp_path / side / "figures" / f"fig{fid}.png").stat().st_size > 0
            assert (tmp_path / side / "data" / f"fig{fid}.csv").stat().st_size > 0
        assert (tmp_path / side / "report.md").exists()
    md = (tmp_path / "report.md").read_text()
    assert "| claim | the paper | simulated (`net3-rfc5681`, the recipes' stack) | emulated (the host's Linux TCP)" in md
    assert (tmp_path / "report.html").exists()
    assert "3 of 3 runs passed every self-check" in md, md
    emu, sim = er.reports["emulated"], er.reports["simulated"]
    assert [r.claim.id for r in emu.results] == [c.id for c in n.CLAIMS]
    assert {r.claim.id for r in emu.results if r.status == "NOT-RUN"} == {"N-rtt-window", "N-ratio", "N-map-pps",
                                                                         "AQM-gain"}
    import pandas as pd

    for fid, cap_bps in (("4", 2e6), ("5", 2e6), ("6", 1e6)):
        e = pd.read_csv(tmp_path / "emulated" / "data" / f"fig{fid}.csv").iloc[0]
        s = pd.read_csv(tmp_path / "simulated" / "data" / f"fig{fid}.csv").iloc[0]
        # The DS cap (or Fig. 6's 1 Mb/s pipe) counts whole frames: a 200 KB transfer with its slow start
        # reaches 80-101 % of it. Seen: 1.87-1.89 Mb/s at the 2 Mb/s cap, 0.78 Mb/s at the 1 Mb/s pipe.
        assert 0.80 * cap_bps / 1e6 <= e["rate_mbps"] <= 1.01 * cap_bps / 1e6, (fid, e["rate_mbps"])
        # Idle pings: the model's 8.4 ms; the emulated echoes 8.6-9.7 ms here (the relay's lateness, the
        # pinger's own time). Within a few ms of the simulation's.
        assert -1.0 <= e["ping_before_mean_ms"] - s["ping_before_mean_ms"] <= 4.0, (fid, e, s)
        assert bool(e["self_checks_ok"]) and e["pings_lost"] == 0
    e4 = pd.read_csv(tmp_path / "emulated" / "data" / "fig4.csv").iloc[0]
    # MTU 576 reached the kernel: 200 KB in 536-byte segments is 383 (204800 / 536 = 382.1), plus any resent.
    assert e4["tcp.mss_bytes"] == 536
    e5 = pd.read_csv(tmp_path / "emulated" / "data" / "fig5.csv").iloc[0]
    # The 8 KB window as the kernel advertised it: rounded down to whole 1460-byte segments, 5 x 1460.
    assert e5["advertised_window_bytes"] == 7300
    e6 = pd.read_csv(tmp_path / "emulated" / "data" / "fig6.csv").iloc[0]
    # The pings bypass the server's 1 Mb/s pipe, whose queue holds up to the 48 KB window (390 ms at
    # 1 Mb/s): they see the idle network (classified to the ping's path, not the flow's).
    assert e6["ping_during_max_ms"] <= e6["ping_before_mean_ms"] + 15.0, e6
    assert e4["data_segments_sent"] == 383 + e4["retransmitted_segments"], e4


@ROOT
@pytest.mark.parametrize("command, side, status", [
    (["true"], "client", 0),
    (["sh", "-c", "echo to-stderr; exit 3"], "server", 3),
    ([sys.executable, "-c", "import time; time.sleep(1.5)"], "client", 0),
])
def test_emulate_json_for_a_command(command, side, status):
    # With a ping every 0.5 s beside the command: its echoes are in the JSON; stdout is the one object.
    sets = ["--set", "tcp.stack=linux", "--set", "pings.0.interval_s=0.5", "--set", "pings.0.after_s=0.2"]
    done = subprocess.run([sys.executable, "-m", "hfcsim", "emulate", *sets, "--side", side, "--json", "--",
                           *command], capture_output=True, text=True, timeout=60)
    assert done.returncode == status, done.stderr
    doc = json.loads(done.stdout)  # one JSON object, nothing else
    assert doc["exit_status"] == status and doc["command"] == command and doc["side"] == side
    assert doc["server"]["address"] == "198.18.0.1" and doc["clients"][0]["address"] == "198.19.0.1"
    assert all(c["ok"] for c in doc["self_checks"]), doc["self_checks"]
    assert doc["pings"] and all(p["rtt_s"] is not None and 0.0 < p["rtt_s"] < 0.5 for p in doc["pings"])
    if "echo" in command[-1]:
        assert "to-stderr" in done.stderr  # the command's output went to stderr
