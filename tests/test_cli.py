"""The ``hfcsim`` command: in-process through ``main([...])`` and as a real subprocess.

Tests marked with the ``engine`` comment run the real compiled engine (hfcsim._core); bad-input tests
fail before the engine is reached.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hfcsim.cli import main

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys, *argv: str) -> dict:
    status, out, err = run_cli(capsys, "run", "--json", *argv)
    assert (status, err) == (0, "")
    return json.loads(out)


def run_subprocess(env, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hfcsim", *argv], capture_output=True, text=True,
                          env=env, timeout=300, check=False)


def without_wall_time(json_text: str) -> str:
    return re.sub(r'"wall_s": [-+0-9.eE]+', '"wall_s": null', json_text)


# ---------------------------------------------------------------------------------------------------
# Bad input: exit status 2, exactly one line on stderr, no traceback, nothing on stdout.

BAD_ARGV = [
    # (argv, a fragment of the one stderr line)
    (["run", "--set", "network.downstream_los=0.01"], "did you mean network.downstream_loss?"),
    (["run", "--set", "network.downstream_loss=1.5"], "network.downstream_loss = 1.5: must be in [0, 1)"),
    (["run", "--set", "network.downstream_loss=1"], "network.downstream_loss = 1: must be in [0, 1)"),
    (["run", "--set", "network.downstream_bps=-25e6"], "network.downstream_bps = -25000000.0: must be >= 1"),
    (["run", "--set", "tcp.mss_bytes=0"], "tcp.mss_bytes = 0"),
    (["run", "--set", "tcp.mss_bytes=true"], "tcp.mss_bytes = true: must be an integer"),
    (["run", "--set", "tcp.variant=vegas"], 'tcp.variant = "vegas"'),
    (["run", "--set", "flows=[]"], "at least one flow"),
    (["run", "--set", "network.cm_buffer_bytes=10240", "--set", "network.cm_buffer_packets=7"], "only one of"),
    (["run", "--set", "network.tau_s=1"], 'only valid with network.kind = "bottleneck"'),
    (["run", "--set", "tcp.variant"], "expected dotted.key=value"),
    (["run", "--set", "flows.2.bytes=300000"], "index 2 out of range"),
    (["run", "--json", "--set", "tcp.timer=freebsd"], 'tcp.timer = "freebsd"'),
    (["run", "no-such-scenario.toml"], "no-such-scenario.toml: no such scenario file"),
    (["run", "--seed", "-1"], "--seed -1"),
    (["run", "--seed", "abc"], "--seed abc: must be an integer"),
    (["run", "--seed", str(2**64)], "must be in [0, 2^64 - 1]"),
    (["run", "--bogus"], "unrecognized arguments: --bogus"),
    (["run", "a.toml", "b.toml"], "unrecognized arguments: b.toml"),
    (["bogus"], "invalid choice: 'bogus'"),
    ([], "required: COMMAND"),
    (["run", "--trace", "/no/such/dir/trace.csv"], "--trace /no/such/dir/trace.csv: cannot write"),
]


@pytest.mark.parametrize(("argv", "fragment"), BAD_ARGV)
def test_bad_input_exits_2_with_one_line(capsys, argv, fragment):
    status, out, err = run_cli(capsys, *argv)
    assert status == 2
    assert out == ""
    assert err.startswith("hfcsim: error: ")
    assert err.count("\n") == 1 and err.endswith("\n")
    assert fragment in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("text", "fragment"), [
    ("[network]\ndownstream_bps = \n", "invalid TOML"),
    ("[network]\ndownstream_bps = -1\n", "network.downstream_bps = -1: must be >= 1"),
    ("[tcp]\nvarient = 'reno'\n", "unknown key tcp.varient"),
])
def test_bad_scenario_file_exits_2_with_one_line(capsys, tmp_path, text, fragment):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    status, out, err = run_cli(capsys, "run", str(path))
    assert (status, out) == (2, "")
    assert err.startswith(f"hfcsim: error: {path}: ") and err.count("\n") == 1
    assert fragment in err


@pytest.mark.parametrize(("argv", "fragment"), [
    (["run", "--set", "network.downstream_los=0.01"], "did you mean network.downstream_loss?"),
    (["run", "--set", "tcp.variant"], "expected dotted.key=value"),
    (["run", "missing.toml"], "missing.toml: no such scenario file"),
    (["run", "--seed", "x"], "--seed x"),
])
def test_bad_input_in_a_subprocess(subprocess_env, argv, fragment):
    proc = run_subprocess(subprocess_env, *argv)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("hfcsim: error: ")
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr


def test_engine_error_exits_1_with_one_line(capsys, fake_engine):
    fake_engine(raises=RuntimeError("engine panic: index out of bounds\n  at sim.rs:1"))
    status, out, err = run_cli(capsys, "run", "--seed", "7")
    assert (status, out) == (1, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "engine panic: index out of bounds" in err and "seed 7" in err and '"variant": "reno"' in err


def test_keyboard_interrupt_exits_130_quietly(capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("hfcsim.cli.simulate", interrupted)
    assert run_cli(capsys, "run") == (130, "", "")


# ---------------------------------------------------------------------------------------------------
# Commands that do not need the engine


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["params", "--help"]])
def test_help_exits_0(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 0
    assert "usage: hfcsim" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert re.fullmatch(r"hfcsim \S+ \(engine [^)]+\)\n", capsys.readouterr().out)


def test_version_in_a_subprocess(subprocess_env):
    proc = run_subprocess(subprocess_env, "--version")
    assert proc.returncode == 0 and proc.stdout.startswith("hfcsim ") and proc.stderr == ""


@pytest.mark.parametrize("key", ["network.downstream_bps", "network.tau_s", "tcp.tick_s", "flows.*.drop_packets",
                                 "sim.time_limit_s", "upstream.mac", "upstream.delay_s_per_km", "modems.*.count",
                                 "modems.*.downloads", "modems.*.start_spread_s"])
def test_params_lists_every_key(capsys, key):
    status, out, err = run_cli(capsys, "params")
    assert (status, err) == (0, "")
    assert any(line.startswith(key + " ") for line in out.splitlines())


# ---------------------------------------------------------------------------------------------------
# engine: runs of the real compiled engine


def test_json_is_exactly_one_object(capsys):  # engine
    status, out, err = run_cli(capsys, "run", "--json")
    assert (status, err) == (0, "")
    assert out.count("\n") == 1
    result = json.loads(out)
    assert list(result) == ["seed", "scenario", "flows", "engine", "stations"]
    assert result["seed"] == 1
    assert set(result["engine"]) >= {"events", "simulated_s", "wall_s"}


def test_default_run_finishes_between_1_and_25_mbps(capsys):  # engine
    (flow,) = run_json(capsys)["flows"]
    assert flow["finished"] is True
    assert flow["bytes"] == 3_000_000
    assert 1e6 < flow["throughput_bps"] < 25e6


def test_downstream_loss_lowers_throughput_and_is_recovered(capsys):  # engine
    (lossless,) = run_json(capsys)["flows"]
    (lossy,) = run_json(capsys, "--set", "network.downstream_loss=0.01")["flows"]
    assert lossy["finished"] is True
    assert lossy["throughput_bps"] < lossless["throughput_bps"]
    assert lossy["timeouts"] + lossy["fast_retransmits"] >= 1
    assert lossy["retransmitted_segments"] >= 1 and lossy["data_lost_downstream"] >= 1


@pytest.mark.parametrize("argv", [[], ["--set", "network.downstream_loss=0.02", "--seed", "11"],
                                  [str(SCENARIOS / "three-flows-one-modem.toml")]])
def test_same_seed_gives_identical_json(capsys, argv):  # engine
    first = run_cli(capsys, "run", "--json", *argv)
    second = run_cli(capsys, "run", "--json", *argv)
    assert first[0] == second[0] == 0
    assert without_wall_time(first[1]) == without_wall_time(second[1])


def test_set_flow_bytes_is_reflected(capsys):  # engine
    result = run_json(capsys, "--set", "flows.0.bytes=300000")
    assert result["scenario"]["flows"][0]["bytes"] == 300_000
    assert result["flows"][0]["bytes"] == 300_000


def test_set_second_flow_adds_a_flow(capsys):  # engine
    result = run_json(capsys, "--set", "flows.1.bytes=100000")
    assert [f["bytes"] for f in result["flows"]] == [3_000_000, 100_000]
    assert [f["flow"] for f in result["flows"]] == [0, 1]


def test_seed_is_reported(capsys):  # engine
    assert run_json(capsys, "--seed", "42")["seed"] == 42


def test_json_scenario_is_the_resolved_scenario(capsys):  # engine
    from hfcsim.scenario import load

    path = SCENARIOS / "http-get.toml"
    assert run_json(capsys, str(path))["scenario"] == load(path).to_dict()


def test_human_output(capsys):  # engine
    status, out, err = run_cli(capsys, "run")
    assert (status, err) == (0, "")
    header, columns, row, note, waits, engine = out.splitlines()
    # Cohen's 8 KB window on a 10 Mb/s LAN and a 22 ms round trip cannot fill the path (issue 35).
    assert note.startswith("note: flow 0's window cannot fill its path: at most 8760 B")
    assert waits.startswith("waits: 3 places, none with a p99 wait of 1 ms or more nor a drop")
    assert header == ("seed 1 | reno, bsd timer 500 ms tick, delayed ACK 200 ms tick, IW 1, dupACK 3, MSS 1460 B"
                      " | hfc 25/3 Mb/s down/up, RTT 20 ms, loss 0%/0% down/up"
                      " | buffers 8192/8192 B send/receive, headend 100 ms (MULPI default), CM unbounded")
    assert columns.split() == ["flow", "bytes", "duration", "s", "throughput", "Mb/s", "timeouts", "fast",
                               "rexmits", "rexmit", "segs", "finished"]
    assert row.split()[:2] == ["0", "3000000"] and row.split()[-1] == "yes"
    assert len(row) == len(columns)  # aligned
    assert re.fullmatch(r"engine: \d+ events, [0-9.]+ simulated s, [0-9.]+ wall ms", engine)


def test_human_output_has_one_row_per_flow(capsys):  # engine
    status, out, _ = run_cli(capsys, "run", str(SCENARIOS / "three-flows-one-modem.toml"))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].endswith("CM 10240 B")
    assert [line.split()[0] for line in lines[2:5]] == ["0", "1", "2"]


def test_human_output_for_the_bottleneck(capsys):  # engine
    status, out, _ = run_cli(capsys, "run", str(SCENARIOS / "lakshman-fig1.toml"))
    assert status == 0
    assert "tahoe" in out and "bottleneck 100 pkt/s, tau 1 s, loss 0%" in out and "bottleneck 10 pkts" in out


TRACE_COLUMNS = ["time_s", "flow", "event", "seq", "ack", "cwnd", "ssthresh", "flight", "queue"]


def test_trace_csv(capsys, tmp_path):  # engine
    path = tmp_path / "trace.csv"
    status, out, err = run_cli(capsys, "run", "--set", "flows.0.bytes=30000", "--trace", str(path))
    assert (status, err) == (0, "")
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0][: len(TRACE_COLUMNS)] == TRACE_COLUMNS  # the contract's columns first
    assert len(rows) > 21  # at least one row per data packet (30000 B / 1460 B = 21 packets)
    assert f"trace: {len(rows) - 1} rows -> {path}" in out


def test_trace_with_json_keeps_stdout_one_object(capsys, tmp_path):  # engine
    path = tmp_path / "trace.csv"
    result = run_json(capsys, "--set", "flows.0.bytes=30000", "--trace", str(path))
    assert "trace" not in result
    assert path.read_text().startswith(",".join(TRACE_COLUMNS))


def test_json_in_a_subprocess(subprocess_env):  # engine
    proc = run_subprocess(subprocess_env, "run", "--json", "--set", "flows.0.bytes=300000")
    assert (proc.returncode, proc.stderr) == (0, "")
    result = json.loads(proc.stdout)
    assert list(result) == ["seed", "scenario", "flows", "engine", "stations"]
    assert result["flows"][0]["bytes"] == 300_000 and result["flows"][0]["finished"] is True


def test_subprocess_and_in_process_agree(capsys, subprocess_env):  # engine
    proc = run_subprocess(subprocess_env, "run", "--json", "--set", "network.upstream_loss=0.05")
    status, out, _ = run_cli(capsys, "run", "--json", "--set", "network.upstream_loss=0.05")
    assert proc.returncode == status == 0
    assert without_wall_time(proc.stdout) == without_wall_time(out)


def test_console_script():  # engine
    script = shutil.which("hfcsim", path=str(Path(sys.executable).parent))
    assert script is not None, "the hfcsim console script is not installed next to this Python (pip install .)"
    proc = subprocess.run([script, "run", "--json", "--set", "flows.0.bytes=30000"], capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0 and json.loads(proc.stdout)["flows"][0]["finished"] is True


@pytest.mark.parametrize("sets, interfaces", [
    ([], "interfaces 0 server, 1 modem-lan;"),
    (["--set", "upstream.mac=docsis"], "interfaces 0 server, 1 modem-lan, 2 docsis-upstream;"),
    (["--set", "upstream.mac=ieee802.14"], "interfaces 0 server, 1 modem-lan;"),  # no dissector: none
])
def test_run_pcap_names_the_capture_interfaces(tmp_path, capsys, sets, interfaces):
    path = tmp_path / "run.pcapng"
    assert main(["run", "--pcap", str(path), "--set", "flows.0.bytes=30000", *sets]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("pcap: ") and f"-> {path} ({interfaces}" in last
    assert path.stat().st_size > 0
