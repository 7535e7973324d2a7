"""Issue 26 (reliability, round two): the linux timer's floor for the initial RTO (defect 5), why a
flow ended (defect 6), errors that blame the key the user set (defect 7), and the smaller ones
(defect 8). Defect 1 (Ctrl-C) is in test_output.py."""

from __future__ import annotations

import sys

import pytest

from hfcsim.cli import main
from hfcsim.errors import ScenarioError
from hfcsim.scenario import load


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def assert_one_line(status: int, err: str, start: str) -> None:
    assert status == 2, err
    assert err.count("\n") == 1 and err.startswith("hfcsim: error: " + start), err


# --- Defect 5: Linux's first RTO is TCP_TIMEOUT_INIT (1 s), never below TCP_RTO_MIN ----------------

@pytest.mark.parametrize(("tcp", "refused"), [
    ({"stack": "linux", "initial_rto_s": 1e-9}, "tcp.initial_rto_s = 1e-09: below tcp.min_rto_s = 0.2"),
    ({"stack": "linux", "initial_rto_s": 0.199}, "tcp.initial_rto_s = 0.199: below tcp.min_rto_s = 0.2"),
    ({"timer": "linux", "min_rto_s": 0.05, "initial_rto_s": 0.01},
     "tcp.initial_rto_s = 0.01: below tcp.min_rto_s = 0.05"),
    ({"stack": "linux", "initial_rto_s": 0.2}, None),
    ({"stack": "linux", "min_rto_s": 0.001, "initial_rto_s": 0.001}, None),
    ({"timer": "rfc6298", "initial_rto_s": 1e-9}, None),  # RFC 6298 (2.4) clamps it to its minimum
])
def test_the_linux_timer_refuses_an_initial_rto_below_its_floor(tcp, refused):
    if refused is None:
        load({"tcp": tcp})
    else:
        with pytest.raises(ScenarioError) as e:
            load({"tcp": tcp})
        assert str(e.value).startswith(refused), e.value
        assert "linux timer's floor" in str(e.value)


def test_the_reproduction_of_defect_5_is_one_line(capsys):
    status, out, err = run_cli(capsys, "run", "--set", "tcp.stack=linux", "--set", "tcp.initial_rto_s=1e-9",
                               "--set", "flows.0.bytes=30000")
    assert out == ""
    assert_one_line(status, err, "tcp.initial_rto_s = 1e-09: below tcp.min_rto_s = 0.2")


# --- Defect 6: why a flow did not finish --------------------------------------------------------

@pytest.mark.parametrize(("sets", "reason", "syn_timeouts", "line"), [
    (["flows.0.bytes=30000"], "finished", 0, None),
    # The CMTS holds no packet: every SYN-ACK is lost, the server gives up in the handshake.
    (["network.kind=docsis", "network.cmts_queue_bytes=1"], "gave_up", None,
     "flow 0 unfinished: gave up after {n} timeouts in the handshake; 0 of 3000000 bytes delivered"),
    # The SYN is still on its way when Net/3 gives up after 12 retransmissions (TCP_MAXRXTSHIFT).
    (["network.rtt_s=1e6", "flows.0.bytes=2000"], "gave_up", 12,
     "flow 0 unfinished: gave up after 12 timeouts in the handshake; 0 of 2000 bytes delivered"),
    (["sim.time_limit_s=0.5"], "time_limit", 0,
     "flow 0 unfinished: still running at the time limit, sim.time_limit_s = 0.5 s; "),
    (["sim.time_limit_s=5", "flows.0.start_s=10"], "not_started", 0,
     "flow 0 unfinished: never started: it starts at 10 s, the run ended at 5 s; 0 of 3000000 bytes delivered"),
])
def test_every_flow_says_why_it_ended(capsys, sets, reason, syn_timeouts, line):
    import json

    argv = [a for s in sets for a in ("--set", s)]
    status, out, err = run_cli(capsys, "run", "--json", *argv)
    assert (status, err) == (0, "")
    flow = json.loads(out)["flows"][0]
    assert flow["end_reason"] == reason and flow["finished"] == (reason == "finished")
    if syn_timeouts is not None:
        assert flow["syn_timeouts"] == syn_timeouts
    if reason == "gave_up":
        assert flow["timeouts"] == 0 and flow["syn_timeouts"] >= 5  # no longer "timeouts 0" and nothing else
    status, out, err = run_cli(capsys, "run", *argv)
    assert (status, err) == (0, "")
    unfinished = [x for x in out.splitlines() if x.startswith("flow 0 unfinished")]
    if line is None:
        assert unfinished == []
    else:
        assert len(unfinished) == 1 and unfinished[0].startswith(line.format(n=flow["syn_timeouts"])), out


def test_the_end_reason_is_a_column_of_the_frame():
    import hfcsim

    r = hfcsim.simulate({"flows": [{"bytes": 30000}, {"bytes": 30000, "start_s": 10}], "sim": {"time_limit_s": 5}})
    frame = r.to_frame()
    assert list(frame["end_reason"]) == ["finished", "not_started"]
    assert list(frame["syn_timeouts"]) == [0, 0]


# --- Defect 7: a refusal names the key the user set ----------------------------------------------

@pytest.mark.parametrize(("argv", "start", "also"), [
    (["run", "--set", "upstream.mac=docsis", "--set", "upstream.minislot_bytes=65535"],
     "upstream.minislot_bytes = 65535: leaves no room for data", "upstream.contention_slots = 8"),
    (["run", "--set", "upstream.mac=ieee802.14", "--set", "upstream.data_slot_minislots=1000"],
     "upstream.data_slot_minislots = 1000: leaves no room for data", "holds 47 minislot(s)"),
    (["run", "--set", "upstream.mac=docsis", "--set", "upstream.frame_s=1e-5"],
     "upstream.frame_s = 1e-05: leaves no room for data", "holds 1 minislot(s)"),
    (["run", "--set", "upstream.mac=docsis", "--set", "network.upstream_bps=1000"],
     "network.upstream_bps = 1000.0: leaves no room for data", "upstream.contention_slots = 8"),
    (["run", "--set", "upstream.mac=docsis", "--set", "upstream.contention_slots=47"],
     "upstream.contention_slots = 47: leaves no room for data", "holds 47 minislot(s)"),
    (["advise", "--mtu-bytes", "41"], "mtu_bytes = 41: must be an integer >= 53", "timestamps"),
    (["advise", "--mtu-bytes", "40", "--stack", "net3"], "mtu_bytes = 40: must be an integer >= 41", ""),
    (["reproduce", "cohen98", "--stacks", "all,linux"], "--stacks all,linux: all stands alone", "known: "),
])
def test_a_refusal_blames_the_key_the_user_set(capsys, argv, start, also):
    status, out, err = run_cli(capsys, *argv)
    assert out == ""
    assert_one_line(status, err, start)
    assert also in err


# --- Defect 8: the smaller ones --------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    # A UTF-8 byte-order mark before the first statement (some editors write one): read as TOML.
    (b"\xef\xbb\xbf[sim]\ntime_limit_s = 100\n", None),
    (b"\xef\xbb\xbfflows = [{bytes = 30000}]\n", None),
    # TOML dates and times are echoed as TOML writes them, not as Python reprs.
    (b"flows = [{bytes = 1979-05-27T07:32:00Z}]\n", "flows.0.bytes = 1979-05-27T07:32:00+00:00: "),
    (b"flows = [{bytes = 1979-05-27}]\n", "flows.0.bytes = 1979-05-27: "),
    (b"flows = [{bytes = 07:32:00}]\n", "flows.0.bytes = 07:32:00: "),
])
def test_toml_files_with_a_bom_and_dates(capsys, tmp_path, text, expected):
    path = tmp_path / "s.toml"
    path.write_bytes(text)
    status, out, err = run_cli(capsys, "run", str(path), "--json")
    if expected is None:
        assert (status, err) == (0, ""), err
    else:
        assert out == ""
        assert_one_line(status, err, f"{path}: {expected}")
        assert "datetime" not in err


@pytest.mark.parametrize("argv", [
    ["reproduce", "cohen98", "--out", ""],
    ["reproduce", "cohen98", "--out", " "],
    ["sweep", "scenarios/sweeps/sweep-loss.toml", "--out", ""],
    ["compare", "--out", ""],
])
def test_an_empty_out_is_refused_not_the_current_folder(capsys, tmp_path, monkeypatch, argv):
    import os

    here = os.getcwd()
    monkeypatch.chdir(tmp_path)
    argv = [os.path.join(here, a) if a.startswith("scenarios/") else a for a in argv]
    status, out, err = run_cli(capsys, *argv)
    assert out == ""
    assert_one_line(status, err, "argument --out: --out ")
    assert "empty folder name" in err
    assert list(tmp_path.iterdir()) == []


def test_an_out_with_missing_parents_is_created_with_them(capsys, tmp_path):
    # Decided (issue 26, defect 8): --out a/b/c makes a, b and c, as mkdir -p; the help says so.
    sweep = tmp_path / "one.toml"
    sweep.write_text('name = "one"\nruns = 1\n[base]\nflows = [{bytes = 20000}]\n'
                     '[grid]\n"network.downstream_loss" = [0.0]\n')
    out = tmp_path / "a" / "b" / "c"
    status, _, err = run_cli(capsys, "sweep", str(sweep), "--out", str(out), "--json")
    assert (status, err) == (0, "")
    assert out.is_dir() and any(out.iterdir())
    blocked = tmp_path / "file"
    blocked.write_text("")
    status, _, err = run_cli(capsys, "sweep", str(sweep), "--out", str(blocked / "x"), "--json")
    assert_one_line(status, err, f"--out {blocked / 'x'}")


def test_the_out_help_says_missing_parents_are_made(capsys):
    for argv in (["sweep", "--help"], ["reproduce", "--help"], ["compare", "--help"]):
        with pytest.raises(SystemExit):
            run_cli(capsys, *argv)
        assert "created with its missing parents" in " ".join(capsys.readouterr().out.split())


def test_a_sweep_says_how_many_flows_finished_and_why_not(capsys, tmp_path):
    spec = tmp_path / "never.toml"
    spec.write_text('name = "never"\nruns = 2\n[base]\nsim.time_limit_s = 0.2\n'
                    '[grid]\n"flows.0.bytes" = [3000, 3000000]\n')
    status, out, err = run_cli(capsys, "sweep", str(spec), "--out", str(tmp_path / "out"), "--jobs", "1")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split()[-1] == "finished"
    assert lines[1].split()[0] == "3000" and lines[1].split()[-1] == "2/2"
    assert lines[2].split()[:2] == ["3000000", "0"] and lines[2].split()[-1] == "0/2"
    assert lines[3] == "flows.0.bytes = 3000000: 2 of 2 flows unfinished (2 time_limit)"


@pytest.mark.parametrize(("sets", "note"), [
    (["network.cm_buffer_bytes=1000"], "note: network.cm_buffer_bytes = 1000 B is below one full-size packet (1500 B"),
    (["network.kind=docsis", "network.cmts_queue_bytes=1"], "note: network.cmts_queue_bytes = 1 B is below"),
    (["network.kind=docsis", "network.cm_queue_bytes=100"], "note: network.cm_queue_bytes = 100 B is below"),
    (["network.kind=docsis", "network.server_queue_bytes=1499"], "note: network.server_queue_bytes = 1499 B"),
    (["network.kind=docsis", "network.cmts_queue_bytes=1500"], None),
    (["network.cm_buffer_bytes=600", "tcp.mss_bytes=536"], None),
    (["flows.0.bytes=3000"], None),
])
def test_a_buffer_below_one_packet_is_told(capsys, sets, note):
    argv = [a for s in sets for a in ("--set", s)]
    status, out, err = run_cli(capsys, "run", *argv, "--set", "sim.time_limit_s=5")
    assert (status, err) == (0, "")
    notes = [line for line in out.splitlines() if line.startswith("note: network.")]
    assert notes == ([] if note is None else [notes[0]])
    if note is not None:
        assert notes[0].startswith(note) and notes[0].endswith("no full-size packet fits")


def test_ctrl_c_on_a_sweep_ends_its_batches_in_flight(tmp_path, subprocess_env):
    # Issue 26, defect 8: Ctrl-C on a sweep took ~7 s, the pool waiting for the batches in flight
    # (unstored anyway). Each batch here is one run of 10^6 simulated s (~270 M packets), minutes of
    # engine time: the sweep must end long before one could finish, with 130 and nothing stored.
    import signal
    import subprocess
    import time

    sweep = tmp_path / "long.toml"
    sweep.write_text('name = "long"\nruns = 2\n[base]\nsim = {time_limit_s = 1000000.0}\n'
                     'flows = [{bytes = 1000000000000}]\n[grid]\n"network.downstream_loss" = [0.0]\n')
    proc = subprocess.Popen([sys.executable, "-m", "hfcsim", "sweep", str(sweep), "--jobs", "2", "--json",
                             "--out", str(tmp_path / "out")], env=subprocess_env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(5)  # the two workers spawned and running (or still starting: either way it must end now)
    assert proc.poll() is None
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert time.monotonic() - sent < 30, "the sweep waited for its batches"


@pytest.mark.parametrize(("sets", "lines"), [
    # Every flow still running at the time limit (a busy hour's downloads, by design): one line for all.
    (["sim.time_limit_s=0.5", "flows.1.bytes=3000000", "flows.2.bytes=3000000"],
     ["flows 0-2 unfinished: all still running at the time limit, sim.time_limit_s = 0.5 s; "]),
    # One of them finished: each unfinished flow has its own line.
    (["sim.time_limit_s=0.5", "flows.1.bytes=3000"],
     ["flow 0 unfinished: still running at the time limit, sim.time_limit_s = 0.5 s; "]),
])
def test_flows_all_at_the_time_limit_share_one_line(capsys, sets, lines):
    status, out, err = run_cli(capsys, "run", *[a for s in sets for a in ("--set", s)])
    assert (status, err) == (0, "")
    unfinished = [x for x in out.splitlines() if "unfinished" in x]
    assert len(unfinished) == len(lines) and all(u.startswith(p) for u, p in zip(unfinished, lines)), out
