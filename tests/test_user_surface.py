"""Issue 36 ("Reliability, round three"): the user-surface defects, a table per class.

- a key that cannot act (defect 6: network.default_buffer with every buffer it could size set);
- paths (defects 7 and 9): every path argument, empty, naming a folder, a folder, a missing or
  unwritable one, in the CLI and the Python API, refused in one line before any run;
- numpy input (defect 8) and a refusal naming the type it got;
- misleading messages (defect 10: sweep axes; reproduce --help; no suggestion of what was typed);
- the advice's reasoning (defect 13), on made-up predictions: every sentence follows from its figures;
- sweep summaries of flows that run to the time limit (defect 14);
- the LLD study's round trip (defect 11), DOCSIS-PIE's third-of-the-buffer rule told by hfcsim run.
(The zombie emulation's liveness check is tested in crates/hfcsim-emu/src/netns.rs.)
"""

from __future__ import annotations

import json
import os
import pathlib
import re

import numpy as np
import pytest

import hfcsim
from hfcsim import advise as advise_module
from hfcsim.cli import main
from hfcsim.errors import ScenarioError
from hfcsim.scenario import LIST_SECTIONS, PARAM_BY_KEY, SECTIONS, Scenario, load
from hfcsim.simulate import simulate, simulate_pcap, simulate_trace_csv


def run_cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def one_line(status, err, *fragments):
    assert status == 2, err
    assert err.startswith("hfcsim: error: ") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


# ---------------------------------------------------------------------------------------------------
# Defect 6: network.default_buffer with nothing to size


HFC_MAC = {"upstream": {"mac": "docsis"}}
DEFAULT_BUFFER_CASES = [
    # (raw scenario, refused): default_buffer off its default ("unbounded") ...
    # hfc: it sizes the headend queue (headend_queue_bytes absent) and, with a request/grant MAC, each
    # modem group's queue without queue_bytes or queue_packets (topology.rs)
    ({"network": {"default_buffer": "unbounded", "headend_queue_bytes": 100000}}, True),  # FIFO upstream
    ({"network": {"default_buffer": "unbounded", "headend_queue_bytes": 100000}, **HFC_MAC}, True),  # no groups
    ({"network": {"default_buffer": "unbounded", "headend_queue_bytes": 100000}, **HFC_MAC,
      "modems": [{"count": 2, "queue_bytes": 5000}, {"count": 1, "queue_packets": 4}]}, True),
    ({"network": {"default_buffer": "unbounded", "headend_queue_bytes": 100000},
      "upstream": {"mac": "ieee802.14"}, "modems": [{"count": 2, "queue_packets": 4}]}, True),
    ({"network": {"default_buffer": "unbounded", "headend_queue_bytes": 100000}, **HFC_MAC,
      "modems": [{"count": 2, "queue_bytes": 5000}, {"count": 1}]}, False),  # the second group's queue
    ({"network": {"default_buffer": "unbounded"}}, False),  # the headend's queue
    ({"network": {"default_buffer": "unbounded"}, **HFC_MAC, "modems": [{"count": 2, "queue_bytes": 5000}]}, False),
    ({"network": {"default_buffer": "mulpi", "headend_queue_bytes": 100000}}, False),  # at its default: as absent
    # docsis: each modem's CMTS and CM service-flow buffers
    ({"network": {"kind": "docsis", "default_buffer": "unbounded", "cmts_queue_bytes": 20000,
                  "cm_queue_bytes": 20000}}, True),
    ({"network": {"kind": "docsis", "default_buffer": "unbounded", "cmts_queue_s": 0.05, "cm_queue_bytes": 20000}},
     True),
    ({"network": {"kind": "docsis", "default_buffer": "unbounded", "cmts_queue_bytes": 20000, "cm_queue_s": 0.05}},
     True),
    ({"network": {"kind": "docsis", "default_buffer": "unbounded", "cmts_queue_s": 0.05, "cm_queue_s": 0.05}}, True),
    # a preset's value is the scenario's like any other (as every cross-key rule reads it)
    ({"preset": "nguyen04", "network": {"cmts_queue_bytes": 20000, "cm_queue_bytes": 20000}}, True),
    ({"network": {"kind": "docsis", "default_buffer": "unbounded", "cmts_queue_bytes": 20000}}, False),
    ({"network": {"kind": "docsis", "default_buffer": "unbounded", "cm_queue_s": 0.05}}, False),
    ({"preset": "nguyen04", "network": {"cmts_queue_s": 0.05}}, False),
    ({"network": {"kind": "docsis", "cmts_queue_bytes": 20000, "cm_queue_bytes": 20000}}, False),
]


@pytest.mark.parametrize(("raw", "refused"), DEFAULT_BUFFER_CASES)
def test_default_buffer_with_nothing_to_size_is_refused(raw, refused, one_line_error):
    if not refused:
        Scenario(raw)
        return
    message = one_line_error(raw, ['network.default_buffer = "unbounded": sizes no queue here'])
    assert "leave it out" in message


def test_default_buffer_refusal_exits_2_naming_the_key(capsys):
    status, _, err = run_cli(capsys, "run", "--set", "network.kind=docsis", "--set", "network.default_buffer=unbounded",
                             "--set", "network.cmts_queue_bytes=20000", "--set", "network.cm_queue_s=0.05")
    one_line(status, err, "network.default_buffer", "network.cmts_queue_bytes", "network.cm_queue_s")


# ---------------------------------------------------------------------------------------------------
# Defects 7 and 9: paths


def _unwritable_folder(tmp_path):
    """A folder no file can be made in: a read-only one, or for root (whom modes do not stop) sysfs."""
    if os.geteuid() == 0:
        return pathlib.Path("/sys")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    return folder


# (what, the path relative to tmp_path, or a callable of tmp_path, the fragment of the message)
FILE_PATHS = [
    ("empty", "", "an empty file name"),
    ("spaces", " ", "an empty file name"),
    ("trailing slash", "cap.out/", "names a folder, not a file (it ends in '/')"),
    ("dot", "cap.out/.", "its last part is '.'"),
    ("dot-dot", "..", "its last part is '..'"),
    ("a folder", lambda t: t, "Is a directory"),
    ("missing folder", lambda t: t / "no" / "such" / "cap.out", "no folder"),
    ("a file as folder", lambda t: t / "plain" / "cap.out", "is not a folder"),
    ("unwritable", lambda t: _unwritable_folder(t) / "hfcsim-test-cap.out", "cannot write"),
]
# Every option that names a file to write: (argv before the path, the option).
FILE_OPTIONS = [(["run", "--set", "flows.0.bytes=3000"], "--pcap"), (["run", "--set", "flows.0.bytes=3000"], "--trace"),
                (["emulate", "--set", "tcp.stack=linux"], "--pcap")]


def _path(tmp_path, given):
    (tmp_path / "plain").write_text("")
    return str(given(tmp_path)) if callable(given) else given


@pytest.mark.parametrize(("argv", "option"), FILE_OPTIONS, ids=lambda v: v if isinstance(v, str) else v[0])
@pytest.mark.parametrize(("what", "given", "fragment"), FILE_PATHS, ids=[p[0] for p in FILE_PATHS])
def test_every_output_file_option_refuses_a_bad_path(capsys, tmp_path, monkeypatch, argv, option, what, given,
                                                     fragment):
    import hfcsim.emulate

    def never(*args, **kwargs):
        raise AssertionError("the emulation started")

    for name in ("emulate", "run_command", "compare", "session"):
        monkeypatch.setattr(hfcsim.emulate, name, never)
    monkeypatch.chdir(tmp_path)
    path = _path(tmp_path, given)
    before = sorted(p.name for p in tmp_path.iterdir())
    status, out, err = run_cli(capsys, *argv, f"{option}={path}")
    one_line(status, err, option, fragment)
    assert out == "" and ".tmp" not in err  # no run, and never the hidden temporary file's name
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


FOLDER_PATHS = [
    ("empty", "", "an empty folder name"),
    ("a file", lambda t: t / "plain", "not a folder"),
    ("a file as parent", lambda t: t / "plain" / "out", "--out"),
    ("unwritable", lambda t: _unwritable_folder(t) / "hfcsim-test-out", "cannot"),
]
FOLDER_COMMANDS = [["sweep", "SWEEP"], ["reproduce", "lld", "--quick"], ["compare", "--runs", "1", "--loss", "0.01"]]


@pytest.mark.parametrize("argv", FOLDER_COMMANDS, ids=lambda a: a[0])
@pytest.mark.parametrize(("what", "given", "fragment"), FOLDER_PATHS, ids=[p[0] for p in FOLDER_PATHS])
def test_every_out_folder_refuses_a_bad_path(capsys, tmp_path, argv, what, given, fragment):
    sweep = tmp_path / "s.toml"
    sweep.write_text('runs = 1\n[grid]\n"flows.0.bytes" = [3000]\n')
    argv = [str(sweep) if a == "SWEEP" else a for a in argv]
    status, out, err = run_cli(capsys, *argv, f"--out={_path(tmp_path, given)}")
    one_line(status, err, "--out", fragment)
    assert out == ""


@pytest.mark.parametrize(("argv", "fragment"), [
    (["run", ""], "'': not a scenario file: an empty file name"),
    (["run", "SCENARIO/"], "names a folder, not a file (it ends in '/')"),
    (["run", "SCENARIO/."], "its last part is '.'"),
    (["sweep", ""], "'': not a scenario file: an empty file name"),
    (["sweep", "SCENARIO/"], "it ends in '/'"),
    (["compare", "SCENARIO/"], "it ends in '/'"),
])
def test_a_scenario_path_naming_a_folder_is_refused(capsys, tmp_path, argv, fragment):
    # Path("s.toml/") is s.toml: the file was read as if the slash were not there.
    scenario = tmp_path / "s.toml"
    scenario.write_text("[network]\n")
    status, _, err = run_cli(capsys, *[a.replace("SCENARIO", str(scenario)) for a in argv])
    one_line(status, err, fragment)


def test_a_sweep_base_path_naming_a_folder_is_refused(tmp_path):
    (tmp_path / "base.toml").write_text("[network]\n")
    (tmp_path / "s.toml").write_text('runs = 1\nbase = "base.toml/"\n[grid]\n"flows.0.bytes" = [3000]\n')
    with pytest.raises(ScenarioError, match="it ends in '/'"):
        hfcsim.sweep.define(tmp_path / "s.toml")


API_WRITERS = {
    "simulate_pcap": lambda path: simulate_pcap({"flows": [{"bytes": 3000}]}, path),
    "simulate_pcap trace_csv": lambda path: simulate_pcap({"flows": [{"bytes": 3000}]}, "ok.pcapng", trace_csv=path),
    "simulate_trace_csv": lambda path: simulate_trace_csv({"flows": [{"bytes": 3000}]}, path),
}


@pytest.mark.parametrize("writer", API_WRITERS)
@pytest.mark.parametrize(("what", "given", "fragment"), FILE_PATHS, ids=[p[0] for p in FILE_PATHS])
def test_the_python_writers_check_the_path_before_running(tmp_path, monkeypatch, writer, what, given, fragment):
    # Defect 9: simulate_pcap into a missing folder ran, then raised a raw FileNotFoundError naming its
    # hidden temporary file. Now: one OSError naming the path given, before the engine runs.
    import sys

    def never(*args, **kwargs):
        raise AssertionError("the engine ran")

    monkeypatch.setattr(sys.modules["hfcsim.simulate"], "_run_engine", never)
    monkeypatch.chdir(tmp_path)
    path = _path(tmp_path, given)
    with pytest.raises(OSError) as info:
        API_WRITERS[writer](path)
    assert info.value.filename == path and ".tmp" not in str(info.value)
    if "cannot" not in fragment:
        assert fragment in str(info.value)
    assert not (tmp_path / "ok.pcapng").exists()


@pytest.mark.parametrize(("call", "name"), [
    (lambda: simulate_pcap({}, 3), "path = 3"),
    (lambda: simulate_trace_csv({}, None), "path = None"),
    (lambda: simulate_pcap({}, "x.pcapng", trace_csv=1.5), "trace_csv = 1.5"),
    (lambda: hfcsim.sweep({"runs": 1, "grid": {"flows.0.bytes": [3000]}}, out=7), "out = 7"),
    (lambda: load(12), "scenario = "),
])
def test_a_path_of_the_wrong_type_is_named_with_its_type(call, name):
    with pytest.raises(ScenarioError) as info:
        call()
    assert name in str(info.value) and "(got " in str(info.value)


@pytest.mark.parametrize("call", [
    lambda t: hfcsim.sweep({"runs": 1, "grid": {"flows.0.bytes": [3000]}}, out="", jobs=1),
    lambda t: __import__("hfcsim.compare").compare.compare({"flows": [{"bytes": 3000}]}, losses=[0.01], runs=1, out=""),
])
def test_an_empty_out_folder_is_refused_in_python(tmp_path, monkeypatch, call):
    # Path("") is the current folder: sweep(out="") wrote into it, compare(out="") into ./runs.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OSError, match="an empty folder name"):
        call(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_pathlib_paths_are_taken_everywhere(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text("[[flows]]\nbytes = 30000\n")
    result, packets, rows = simulate_pcap(scenario, tmp_path / "c.pcapng", trace_csv=tmp_path / "t.csv")
    assert packets > 0 and rows > 0 and (tmp_path / "c.pcapng").stat().st_size > 0
    traced = simulate(scenario, trace=True)
    assert traced.write_trace_csv(tmp_path / "u.csv") == rows
    sweep = tmp_path / "w.toml"
    sweep.write_text('runs = 1\n[grid]\n"flows.0.bytes" = [3000]\n')
    assert len(hfcsim.sweep(sweep, out=tmp_path / "out", jobs=1)) == 1


# ---------------------------------------------------------------------------------------------------
# Defect 8: numpy values; a refusal names the type


NUMPY_CASES = [
    # (raw with numpy values, the same scenario as plain Python: the same document)
    ({"flows": [{"bytes": np.int64(30000)}]}, {"flows": [{"bytes": 30000}]}),
    ({"flows": [{"bytes": np.uint32(30000), "modem": np.int8(0)}]}, {"flows": [{"bytes": 30000, "modem": 0}]}),
    ({"network": {"downstream_loss": np.float32(0.01)}}, {"network": {"downstream_loss": 0.01}}),
    ({"network": {"downstream_loss": np.float16(0.5)}}, {"network": {"downstream_loss": 0.5}}),
    ({"network": {"upstream_loss": np.float64(0.02)}}, {"network": {"upstream_loss": 0.02}}),
    ({"network": {"rtt_s": np.array(0.03)}}, {"network": {"rtt_s": 0.03}}),  # a 0-d array
    ({"network": {"rtt_s": np.int64(1)}}, {"network": {"rtt_s": 1}}),  # an integer where a float goes
    ({"tcp": {"sack": np.bool_(True), "variant": "newreno"}}, {"tcp": {"sack": True, "variant": "newreno"}}),
    ({"tcp": {"variant": np.str_("tahoe")}}, {"tcp": {"variant": "tahoe"}}),
    ({"flows": [{"bytes": 300000, "drop_packets": np.array([3, 5], dtype=np.int32)}]},
     {"flows": [{"bytes": 300000, "drop_packets": [3, 5]}]}),
    ({"network": {"kind": "atm_hfc", "bottleneck_schedule": np.array([[1.0, 5e6], [2.0, 6e6]])}},
     {"network": {"kind": "atm_hfc", "bottleneck_schedule": [[1.0, 5e6], [2.0, 6e6]]}}),
    ({"flows": np.array([{"bytes": 30000}])}, {"flows": [{"bytes": 30000}]}),
]


@pytest.mark.parametrize(("raw", "plain"), NUMPY_CASES)
def test_numpy_values_are_taken_as_python_values(raw, plain):
    assert Scenario(raw).to_json() == Scenario(plain).to_json()


@pytest.mark.parametrize("seed", [np.int64(3), np.uint64(3), np.int8(3), np.array(3)])
def test_numpy_seeds_and_snap_payload(seed, tmp_path):
    assert simulate({"flows": [{"bytes": 30000}]}, seed=seed).seed == 3
    _, packets, _ = simulate_pcap({"flows": [{"bytes": 30000}]}, tmp_path / "c.pcapng", seed=seed,
                                  snap_payload=np.int16(10))
    assert packets > 0


def test_numpy_in_a_sweep_and_its_arguments(tmp_path):
    spec = hfcsim.sweep.define({"grid": {"network.downstream_loss": np.linspace(0, 0.02, 3),
                                         "flows.0.bytes": np.array([3000, 6000])},
                                "runs": np.int64(2), "seed0": np.uint8(1)}, runs=np.int32(1))
    assert [p.values for p in spec.points][:2] == [{"network.downstream_loss": 0.0, "flows.0.bytes": 3000},
                                                   {"network.downstream_loss": 0.0, "flows.0.bytes": 6000}]
    assert spec.runs == 1 and len(spec.points) == 6
    frame = hfcsim.sweep(spec, out=tmp_path, jobs=np.int64(1), batch_size=np.int16(1))
    assert len(frame) == 6


def test_numpy_in_advise_and_compare():
    from hfcsim.advise import _check
    from hfcsim.compare import compare

    x = _check({"transfer_bytes": np.array([30000, 60000]), "seeds": np.int64(2), "rtt_s": np.float32(0.02),
                "connections": np.uint8(2)})
    assert (x["transfer_bytes"], x["seeds"], x["rtt_s"], x["connections"]) == ([30000, 60000], 2, 0.02, 2)
    frame = compare({"flows": [{"bytes": 30000}]}, losses=np.array([0.01]), runs=np.int64(1))
    assert len(frame) == 1


REFUSALS = [
    # (raw, the message): the key, the value and, for a value of the wrong type, the type it got
    ({"flows": [{"bytes": np.float64(30000.0)}]}, "flows.0.bytes = 30000.0: must be an integer > 0 (got float)"),
    ({"flows": [{"bytes": 30000.0}]}, "flows.0.bytes = 30000.0: must be an integer > 0 (got float)"),
    ({"flows": [{"bytes": np.float32(1.5)}]}, "flows.0.bytes = 1.5: must be an integer > 0 (got float)"),
    ({"flows": [{"bytes": "3"}]}, 'flows.0.bytes = "3": must be an integer > 0 (got str)'),
    ({"flows": [{"bytes": None}]}, "flows.0.bytes = null: must be an integer > 0 (got None)"),
    ({"flows": [{"bytes": np.bool_(True)}]}, "flows.0.bytes = true: must be an integer > 0 (got bool)"),
    ({"network": {"downstream_loss": np.float32("nan")}}, "network.downstream_loss = NaN: must be a number in [0, 1)"),
    ({"network": {"downstream_loss": np.complex128(1)}}, "network.downstream_loss = np.complex128(1+0j): must be a number in "
                                                         "[0, 1) (got numpy.complex128)"),
    ({"network": {"downstream_loss": "0.01"}}, "(got str)"),
    ({"tcp": {"sack": np.int64(1)}}, "tcp.sack = 1: must be true or false (got int)"),
    ({"tcp": {"variant": 3}}, "(got int)"),
    ({"flows": [{"bytes": 300000, "drop_packets": [3, "x"]}]}, "(item 1: got str)"),
    ({"flows": [{"bytes": 300000, "drop_packets": 3}]}, "(got int)"),
    ({"network": 5}, "network = 5: must be a table ([network]) (got int)"),
    ({"flows": [3]}, "(item 0: got int)"),
    ({"preset": 3}, "preset = 3: must be one of"),
]


@pytest.mark.parametrize(("raw", "fragment"), REFUSALS)
def test_a_refusal_names_the_key_and_the_type_it_got(raw, fragment, one_line_error):
    one_line_error(raw, [fragment])


@pytest.mark.parametrize(("call", "fragment"), [
    (lambda: simulate({}, seed=3.0), "seed = 3.0: must be an integer in [0, 2^64 - 1] (got float)"),
    (lambda: simulate({}, seed="3"), "(got str)"),
    (lambda: simulate_pcap({}, "c.pcapng", snap_payload=1.0), "snap_payload = 1.0"),
    (lambda: hfcsim.sweep.define({"grid": {"flows.0.bytes": [3000]}, "runs": "2"}), "runs = \"2\""),
    (lambda: hfcsim.sweep.define({"grid": {"flows.0.bytes": 3000}, "runs": 1}), "(got int)"),
    (lambda: advise_module.advise(seeds="3"), "seeds = '3': must be a number (got str)"),
])
def test_the_api_arguments_name_the_type_they_got(call, fragment):
    with pytest.raises(ScenarioError) as info:
        call()
    assert fragment in str(info.value) and "(got " in str(info.value)


# ---------------------------------------------------------------------------------------------------
# Defect 10: misleading messages


@pytest.mark.parametrize("section", [s for s in SECTIONS if s not in LIST_SECTIONS])
@pytest.mark.parametrize("where", ["grid", "zip"])
def test_a_section_as_a_sweep_axis_is_called_a_section(section, where):
    axis = {"grid": {section: [{}]}} if where == "grid" else {"zip": {"keys": [section], "values": [[{}]]}}
    with pytest.raises(ScenarioError) as info:
        hfcsim.sweep.define({**axis, "runs": 1})
    message = str(info.value)
    assert f"{where} key {section}: a section of scenario keys, not a key" in message
    assert f"did you mean {section}?" not in message


@pytest.mark.parametrize("key", ["runs", "name", "seed0", "base", "grid", "zip"])
def test_a_sweep_key_as_an_axis_is_called_one(key):
    with pytest.raises(ScenarioError, match=f"grid key {key}: a key of the sweep itself"):
        hfcsim.sweep.define({"grid": {key: [1]}, "runs": 1})


@pytest.mark.parametrize("key", [p.key.replace("*", "0") for p in PARAM_BY_KEY.values()])
def test_no_key_below_a_value_is_suggested_the_value(key):
    # "tcp.variant.x" got "(did you mean tcp.variant?)": the key it is below, not a misspelling
    with pytest.raises(ScenarioError) as info:
        hfcsim.sweep.define({"grid": {f"{key}.x": [1]}, "runs": 1})
    assert f"{key} is a value, not a table" in str(info.value)


@pytest.mark.parametrize(("raw", "typed"), [
    ({"network": {"network": 1}}, "network"),
    ({"tcp": {"tcp": 1}}, "tcp"),
    ({"flows": [{"flows": 1}]}, "flows"),
    ({"sim": {"sim": {}}}, "sim"),
])
def test_no_suggestion_is_the_table_the_key_is_in(raw, typed):
    with pytest.raises(ScenarioError) as info:
        Scenario(raw)
    assert f"did you mean {typed}?" not in str(info.value)


def test_preset_is_a_sweep_axis(tmp_path):
    spec = hfcsim.sweep.define({"grid": {"preset": ["docsis30", "docsis31"]}, "runs": 1,
                                "base": {"flows": [{"bytes": 30000}]}})
    assert [p.values for p in spec.points] == [{"preset": "docsis30"}, {"preset": "docsis31"}]
    assert spec.points[0].scenario.get("network.ds_rate_bps") == 300e6
    frame = hfcsim.sweep(spec, out=tmp_path, jobs=1)
    assert list(frame["preset"]) == ["docsis30", "docsis31"]
    summary = hfcsim.sweep.summarize(frame)
    assert list(summary.loc[summary["metric"] == "throughput_bps", "preset"]) == ["docsis30", "docsis31"]
    with pytest.raises(ScenarioError, match='grid: preset = "docsis99": must be one of'):
        hfcsim.sweep.define({"grid": {"preset": ["docsis99"]}, "runs": 1})


def test_reproduce_help_names_every_paper(capsys):
    from hfcsim.papers import PAPERS, papers

    with pytest.raises(SystemExit):
        main(["reproduce", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert set(papers()) == set(PAPERS)
    for key in papers():
        assert re.search(rf"\b{key}\b", text), key


# ---------------------------------------------------------------------------------------------------
# Defect 13: the advice's reasoning, on made-up predictions (the figures change with the engine)


def _p(rtt_ms, mbps=1.9, aqm="droptail"):
    return {"ping_rtt_s": rtt_ms / 1e3, "throughput_bps": mbps * 1e6, "aqm": aqm}


def _numbers_ms(text):
    return [float(v) for v in re.findall(r"(\d+(?:\.\d+)?) ms", text)]


AQM_CASES = [
    # (the given AQM's ping RTT under load, options' (RTT, Mb/s), idle, target, the choice, phrases in, phrases out)
    # the issue's: PIE "brought" 94.2 ms to 94.2 ms
    (94.2, {"pie": (94.2, 1.9), "codel": (94.3, 1.9)}, 15.0, 20.0, "droptail",
     ["keep drop-tail", "none meets the 20.0 ms target"], ["brings"]),
    (94.2, {"pie": (90.0, 1.9), "codel": (93.0, 1.9)}, 15.0, 20.0, "droptail",  # 4.2 ms off: less than 10 %
     ["keep drop-tail"], ["brings", "so the lowest RTT"]),
    (250.0, {"pie": (28.0, 1.80), "codel": (26.0, 1.85)}, 15.0, 20.0, "codel",
     ["brings it to 26.0 ms", "at 2.6% of the throughput"], ["keep"]),
    (250.0, {"pie": (60.0, 1.9), "codel": (70.0, 1.9)}, 15.0, 20.0, "pie",
     ["brings it to 60.0 ms", "none meets the 20.0 ms target, so the lowest RTT"], ["keep"]),
    # meets the target by little: the target is what was asked for
    (36.0, {"pie": (34.0, 1.9), "codel": (35.5, 1.8)}, 15.0, 20.0, "pie", ["brings it to 34.0 ms"], ["keep"]),
]


@pytest.mark.parametrize(("before", "options", "idle", "target", "choice", "has", "lacks"), AQM_CASES)
def test_aqm_advice_follows_from_its_figures(before, options, idle, target, choice, has, lacks):
    opts = {n: _p(r, m, n) for n, (r, m) in options.items()}
    got, reason = advise_module._aqm_advice("droptail", _p(before), opts, idle / 1e3, target / 1e3)
    assert got == choice
    for phrase in has:
        assert phrase in reason, (phrase, reason)
    for phrase in lacks:
        assert phrase not in reason, (phrase, reason)
    assert f"ping RTT under load is {before:.1f} ms, {before - idle:.1f} ms above the idle {idle:.1f} ms" in reason
    if "brings it to" in reason:  # to a figure below the one it started from
        to = float(re.search(r"brings it to (\d+\.\d+) ms", reason)[1])
        assert to == options[got][0] and to < before


LLD_CASES = [
    # (before, under LLD, idle, Mb/s before, Mb/s under LLD, worth it, phrases in, phrases out)
    # the issue's: "already short" was said of 94 ms against a 15 ms idle round trip
    (94.0, 93.0, 15.0, 1.9, 1.9, False, ["the ping waits 79.0 ms above idle with drop-tail, 78.0 ms under LLD"],
     ["already short"]),
    (15.5, 15.2, 15.0, 1.9, 1.9, False, ["the queue under load is already short, 0.5 ms above idle"], []),
    (250.0, 16.0, 15.0, 1.9, 1.88, True, ["worth it for games and calls"], ["already short", "less than"]),
    (250.0, 16.0, 15.0, 1.9, 1.7, False, ["at 10.5% of the download's throughput, more than 5%"], ["already short"]),
]


@pytest.mark.parametrize(("before", "lld", "idle", "rate", "rate_lld", "pays", "has", "lacks"), LLD_CASES)
def test_lld_advice_follows_from_its_figures(before, lld, idle, rate, rate_lld, pays, has, lacks):
    x = {"aqm": "droptail"}
    r = advise_module._recommend_lld(x, _p(before, rate), _p(lld, rate_lld, "lld"), idle / 1e3)
    assert r["value"] is pays
    for phrase in has:
        assert phrase in r["reason"], (phrase, r["reason"])
    for phrase in lacks:
        assert phrase not in r["reason"], (phrase, r["reason"])


def test_the_ratio_advice_claims_only_what_it_shows():
    # "the ACKs ... wait at the modem (252.5 ms ping RTT under load)" was said of a queue at the CMTS
    x = {"ds_cap_bps": 2e6, "us_cap_bps": 50e3, "upstream_bps": 3e6, "mtu_bytes": 1500}
    reason = advise_module._ratio_reason(x, 35.6, 57e3, _p(252.5, 1.906))
    assert "wait at the modem" not in reason and "252.5" not in reason
    assert "predicted with these caps: 1.906 Mb/s of the 2 Mb/s cap" in reason


@pytest.mark.parametrize(("argv", "runs"), [(["--seeds", "5"], 5), (["--seeds", "1"], 1), ([], 3)])
def test_the_docsis_predictions_run_and_say_the_seeds_asked_for(capsys, argv, runs):
    status, out, _ = run_cli(capsys, "advise", "--ds-cap-bps", "2e6", "--rtt-s", "0.015", "--transfer-bytes", "30000",
                             "--stack", "net3-rfc5681", *argv)
    assert status == 0
    assert f"simulated: mean of {runs} seeded run(s)" in out


@pytest.mark.parametrize(("stack", "window"), [("linux", 3145728), ("l4s", 3145728), ("net3", 65535),
                                               ("net3-rfc5681", 65535), ("ns2", 65535)])
def test_the_default_window_is_the_stacks_and_stated(capsys, stack, window):
    # a 64 KB window for every stack kept a fast cap from filling: LLD looked useless for a modern stack
    x = advise_module._check({"ds_cap_bps": 2e6, "stack": stack})
    assert x["window_bytes"] == window == advise_module.default_window_bytes(stack)
    with pytest.raises(SystemExit):
        main(["advise", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"default {advise_module.TODAY_WINDOW_BYTES} with today's stacks" in text
    assert f"{advise_module.PAPER_WINDOW_BYTES} with the papers'" in text


def test_with_todays_window_a_fast_cap_fills_and_lld_pays():
    # 100 Mb/s cap: the old default (65535 B) held the download near 32 Mb/s, so no queue, and LLD "bought
    # little"; Linux's window fills the cap and queues at the CMTS, which an NQB ping skips
    got = advise_module.advise(downstream_bps=1e9, upstream_bps=30e6, ds_cap_bps=100e6, rtt_s=0.015, seeds=1,
                               transfer_bytes=[30000])
    lld = next(r for r in got["recommendations"] if r["setting"] == "lld")
    assert lld["before"]["throughput_bps"] > 0.9 * 100e6 * 1460 / 1518
    assert lld["value"] is True


# ---------------------------------------------------------------------------------------------------
# Defect 14: sweep summaries of flows that run to the time limit


BUSY = ('name = "busy"\nruns = 2\n[base]\nsim = { time_limit_s = 3.0, measure_from_s = 1.0 }\n'
        'flows = [{ bytes = 1000000000 }]\npings = [{ modem = 0, interval_s = 0.1 }]\n'
        '[grid]\n"network.downstream_loss" = [0.0, 0.01]\n')


def test_a_busy_hour_sweep_summarises_its_unfinished_flows(capsys, tmp_path):
    spec = tmp_path / "busy.toml"
    spec.write_text(BUSY)
    status, out, err = run_cli(capsys, "sweep", spec, "--out", tmp_path / "out", "--jobs", "1")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    header = lines[0].split()
    for label in ("measured", "ping", "p50", "p99", "loss", "finished"):
        assert label in header
    for line in lines[1:3]:
        cells = line.split()
        assert cells[1] == "0" and cells[-1] == "0/2"  # no flow finished ...
        measured, p50, p99, loss = cells[7:11]
        assert 1.0 < float(measured) < 3.1 and 20.0 <= float(p50) <= float(p99) < 40.0 and loss.endswith("%")
    from hfcsim.store import Store

    frame = Store(tmp_path / "out").read(hfcsim.sweep.define(spec))
    for column in hfcsim.sweep.RUN_METRICS:
        assert frame[column].notna().all(), column  # ... and every run's row has these
    status, out, _ = run_cli(capsys, "sweep", spec, "--out", tmp_path / "out", "--json")
    metrics = {r["metric"] for r in json.loads(out)["summary"]}
    assert metrics == {"throughput_bps", "measured_throughput_bps", "ping_during_p50_s", "ping_during_p99_s",
                       "ping_during_loss", "worst_place_wait_p99_s", "place_drops"}
    for column in hfcsim.sweep.PLACE_RUN_METRICS:
        assert frame[column].notna().all(), column  # the busy hour's places: a queue waited in, its drops


RUN_METRIC_CASES = [
    # (flow's start_s, end_s, echoes (sent_s, rtt_s or None, lost), expected p50, p99, loss)
    (0.0, None, [(0.0, 0.010, False), (1.0, 0.020, False), (2.0, 0.030, False)], 0.020, 0.0298, 0.0),
    (0.5, 2.0, [(0.0, 0.010, False), (1.0, 0.020, False), (1.5, None, True), (2.0, 0.030, False)], 0.020, 0.020, 0.5),
    # an echo neither answered nor dropped was on its way when the run ended: not lost (issue 35)
    (0.0, None, [(0.0, 0.010, False), (1.0, None, True), (2.0, 0.030, False), (3.0, None, False)], 0.020, 0.0298,
     1 / 3),
    (0.0, None, [(0.0, 0.010, False), (1.0, None, False)], 0.010, 0.010, 0.0),
    (0.0, None, [(0.0, None, True)], None, None, 1.0),
    (5.0, None, [(0.0, 0.010, False)], None, None, None),
]


@pytest.mark.parametrize(("start", "end", "echoes", "p50", "p99", "loss"), RUN_METRIC_CASES)
def test_run_metrics_by_hand(start, end, echoes, p50, p99, loss):
    flow = {"start_s": start, "end_s": end, "measured_bytes": 1000, "measured_s": 2.0}
    got = hfcsim.sweep.run_metrics(flow, echoes)
    assert got["measured_throughput_bps"] == 4000.0
    assert got["ping_during_p50_s"] == pytest.approx(p50)
    assert got["ping_during_p99_s"] == pytest.approx(p99)
    assert got["ping_during_loss"] == pytest.approx(loss)
    assert hfcsim.sweep.run_metrics({**flow, "measured_s": 0.0}, [])["measured_throughput_bps"] is None


# ---------------------------------------------------------------------------------------------------
# Defect 11: the LLD study's round trip; DOCSIS-PIE's third of the buffer


def test_the_lld_study_says_the_round_trip_it_runs():
    from hfcsim.papers import lld

    def rtt(extra):
        sc = lld.scenario("lld", 1, 3.0)
        for f in sc["flows"]:
            f["extra_delay_s"] = extra
        return simulate(sc, seed=1).flows[0]["rtt_mean_s"]

    # flows.*.extra_delay_s delays the data direction only: the round trip grows by it, not twice it
    assert rtt(lld.SERVER_DELAY_S) - rtt(0.0) == pytest.approx(lld.SERVER_DELAY_S, abs=0.002)
    notes = " ".join(lld.NOTES)
    # The study's page in the docs (it was README's section "Low Latency DOCSIS for a game-like flow").
    page = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "papers" / "lld.md").read_text()
    for text in (notes, page, pathlib.Path(lld.__file__).read_text()):
        assert "20 ms of base RTT" not in text and "from a server 10 ms away" not in text
    assert "10 ms further in round-trip time" in notes and "10 ms further in\nround-trip time" in page
    assert "round trip grows by this much, not twice it" in PARAM_BY_KEY["flows.*.extra_delay_s"].help


DOCSIS_UPLOAD = ["--set", "network.kind=docsis", "--set", "network.us_rate_bps=5e5", "--set", "flows.0.direction=up",
                 "--set", "flows.0.bytes=600000", "--set", "tcp.send_buffer_bytes=2000000", "--set",
                 "receiver.receive_buffer_bytes=2000000", "--set", "sim.time_limit_s=30"]


@pytest.mark.parametrize(("sets", "note"), [
    (["network.cm_aqm=docsis_pie", "network.cm_queue_bytes=6000000"],
     "note: DOCSIS-PIE at cm_us_modem0 dropped nothing: the queue held up to"),
    (["network.cm_aqm=lld", "network.cm_queue_s=100"], "note: LLD's classic queue (DOCSIS-PIE) at cm_us_modem0"),
    (["network.cm_aqm=docsis_pie", "network.cm_queue_bytes=60000"], None),  # a third is 20 KB: it drops
    (["network.cm_aqm=droptail", "network.cm_queue_bytes=6000000"], None),
    (["network.cm_aqm=pie", "network.cm_queue_bytes=6000000"], None),  # RFC 8033 PIE has no such rule
])
def test_run_says_when_a_large_buffer_kept_docsis_pie_from_dropping(capsys, sets, note):
    argv = [a for s in sets for a in ("--set", s)]
    status, out, err = run_cli(capsys, "run", *DOCSIS_UPLOAD, *argv)
    assert (status, err) == (0, "")
    notes = [line for line in out.splitlines() if "DOCSIS-PIE" in line]
    if note is None:
        assert notes == []
    else:
        assert len(notes) == 1 and notes[0].startswith(note) and "RFC 8034 Annex M" in notes[0]
    help_text = PARAM_BY_KEY["network.cm_queue_bytes"].help
    assert "a third" in help_text and "RFC 8034 Annex M" in help_text


@pytest.mark.parametrize("sets", [["network.cm_queue_s=0.05"], ["network.cm_queue_bytes=9000"], [],
                                  ["network.us_peak_bps=4e5"]])
def test_the_notes_buffer_is_the_engines(sets):
    # a drop-tail upload fills the CM buffer: the engine's limit is within one packet above its peak
    from hfcsim.cli import _service_flow_buffer

    raw = load(None, [*DOCSIS_UPLOAD[1::2], *sets])
    result = simulate(raw)
    queue = next(q for q in result.queues if q["name"] == "cm_us_modem0")
    buffer, _ = _service_flow_buffer(raw["network"], "cm", "us")
    assert queue["drops_full"] > 0 and queue["max_bytes"] <= buffer < queue["max_bytes"] + 1500


def test_the_docsis_pie_note_sizes_the_buffer_at_the_modems_own_tier(capsys):
    # A group's own tier (modems.*.us_rate_bps) sizes its flows' buffers (the engine's rule): 100 s at
    # 0.5 Mb/s is 6,250,000 B, not 100 s at the network's 50 Mb/s.
    sets = [*DOCSIS_UPLOAD, "--set", "network.us_rate_bps=5e7", "--set", "modems.0.us_rate_bps=5e5",
            "--set", "network.cm_aqm=docsis_pie", "--set", "network.cm_queue_s=100"]
    status, out, err = run_cli(capsys, "run", *sets)
    assert (status, err) == (0, "")
    notes = [line for line in out.splitlines() if "DOCSIS-PIE" in line]
    assert len(notes) == 1 and "its 6250000 B buffer (network.cm_queue_s)" in notes[0], notes
