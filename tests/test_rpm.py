"""The responsiveness test (``[[rpm]]``, draft-ietf-ippm-responsiveness-09) and ``hfcsim rpm``.

The engine's hand-worked pieces (the trimmed mean, the RPM formula, a self probe's place in the stream,
RPM = 60 / RTT on a path whose queues stay empty) are in crates/hfcsim-core/src/apps/rpm.rs and
tests/rpm.rs; here: the physics under load on a DOCSIS plant (drop-tail against AQM), the table and
its columns, the CLI, and bad input (one line naming the key, exit 2).
"""

import json
import math

import pytest

import hfcsim
from hfcsim.cli import main, rpm_scenario
from hfcsim.errors import ScenarioError
from hfcsim.scenario import resolve
from hfcsim.simulate import RPM_COLUMNS

AQM = ["--set", "network.cmts_aqm=pie", "--set", "network.cm_aqm=docsis_pie"]


def _rpm(argv):
    """The rpm row of `hfcsim rpm ARGV --json`."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["rpm", *argv, "--json"]) == 0
    rows = json.loads(out.getvalue())["apps"]["rpm"]
    assert len(rows) == 1
    return rows[0]


def test_under_load_drop_tail_rpm_falls_far_below_idle_and_aqm_lifts_it():
    # A DOCSIS 3.0 plant (300/20 Mb/s, MULPI's 100 ms buffers), today's Linux at both ends, downloads
    # and uploads at once: the drop-tail queues fill, and every probe waits behind them.
    tail = _rpm(["docsis30"])
    assert tail["rpm"] < tail["idle_rpm"] / 4, tail
    # Its probes on new connections wait for the full queues: well above the idle round trip.
    assert tail["tcp_f_s"] > 5 * tail["idle_rtt_s"], tail
    # PIE at the CMTS and DOCSIS-PIE at the modem keep the queues short: higher RPM at about the same load.
    pie = _rpm(["docsis30", *AQM])
    assert pie["rpm"] > 1.3 * tail["rpm"], (pie, tail)
    assert pie["tcp_f_s"] < 0.7 * tail["tcp_f_s"], (pie, tail)
    assert pie["goodput_down_bps"] > 0.5 * tail["goodput_down_bps"], (pie, tail)


def test_the_result_table_has_its_columns_and_one_row_per_test():
    r = hfcsim.simulate(rpm_scenario("docsis31", ["rpm.0.duration_s=6", "rpm.0.warmup_s=3"]))
    frame = r.rpm
    assert list(frame.columns) == list(RPM_COLUMNS)
    assert len(frame) == 1
    row = frame.iloc[0]
    assert (row.test, row.modem, row.connections, bool(row.failed)) == (0, 0, 8, False)
    # 10 pairs of probes a second over the 3 s counted; 10 idle ones in the first second.
    assert row.idle_probes == 10 and 25 <= row.foreign_probes <= 30 and 25 <= row.self_probes <= 30
    assert math.isclose(row.idle_rpm, 60 / row.idle_rtt_s)
    # The draft's formula from the table's own trimmed means.
    foreign = 60 / ((row.tcp_f_s + row.tls_f_s + row.http_f_s) / 3)
    assert math.isclose(row.rpm, (foreign + 60 / row.http_l_s) / 2)


def test_hfcsim_run_prints_the_rpm_line(capsys):
    assert main(["run", "--set", "preset=docsis31", "--set", "flows=[]", "--set", "rpm.0.duration_s=4",
                 "--set", "rpm.0.warmup_s=2"]) == 0
    out = capsys.readouterr().out
    assert "rpm 0 (modem 0): " in out and " RPM under working conditions, idle " in out, out


def test_hfcsim_rpm_prints_its_report(capsys):
    assert main(["rpm", "docsis31", "--set", "rpm.0.duration_s=4", "--set", "rpm.0.warmup_s=2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("responsiveness (draft-ietf-ippm-responsiveness-09), modem 0, network docsis, "
                          "stack linux\n"), out
    assert "RPM under working conditions: " in out and "load-generating connections" in out


@pytest.mark.parametrize(("source", "sets", "modem", "expect"), [
    (None, [], 0, {"network.kind": "docsis", "tcp.stack": "linux", "flows": 0}),
    ("docsis30", [], 0, {"network.ds_rate_bps": 300e6, "tcp.stack": "linux", "flows": 0}),
    ("docsis30", ["tcp.stack=net3"], 0, {"tcp.stack": "net3"}),
    ("docsis30", ["modems=[{count = 3}]"], 2, {"rpm.0.modem": 2}),
])
def test_the_scenario_hfcsim_rpm_runs(source, sets, modem, expect):
    sc = rpm_scenario(source, sets, modem)
    assert len(sc["rpm"]) == 1
    for key, value in expect.items():
        if key == "flows":
            assert len(sc["flows"]) == value
        elif key.startswith("rpm.0."):
            assert sc["rpm"][0][key.split(".")[-1]] == value
        else:
            assert sc.get(key) == value, key


def test_a_scenario_file_keeps_its_flows(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('preset = "docsis31"\n[[flows]]\nbytes = 1000000\n')
    sc = rpm_scenario(str(path))
    assert len(sc["flows"]) == 1 and len(sc["rpm"]) == 1


def test_a_scenario_with_its_own_tests_runs_them_as_they_are(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('preset = "docsis31"\n[[rpm]]\nmodem = 1\nduration_s = 3\nwarmup_s = 1\n'
                    '[[rpm]]\nmodem = 2\nstart_s = 4\nduration_s = 3\nwarmup_s = 1\n')
    sc = rpm_scenario(str(path))
    assert [t["modem"] for t in sc["rpm"]] == [1, 2]
    assert main(["rpm", str(path)]) == 0
    out = capsys.readouterr().out
    assert "), modem 1, network docsis" in out and "), test 1, modem 2, network docsis" in out, out
    assert main(["rpm", str(path), "--modem", "0"]) == 2
    assert "--modem 0: the scenario has its own [[rpm]]" in capsys.readouterr().err


ERRORS = [
    ({"network": {"kind": "bottleneck"}, "rpm": [{}]}, "rpm"),
    ({"rpm": [{"connections": 0}]}, "rpm.0.connections"),
    ({"rpm": [{"connections": 65}]}, "rpm.0.connections"),
    ({"rpm": [{"duration_s": 0}]}, "rpm.0.duration_s"),
    ({"rpm": [{"duration_s": 4, "warmup_s": 4}]}, "rpm.0.warmup_s"),
    ({"rpm": [{"probe_interval_s": 0}]}, "rpm.0.probe_interval_s"),
    ({"rpm": [{"idle_s": 0}]}, "rpm.0.idle_s"),
    ({"rpm": [{"tls_round_trips": 3}]}, "rpm.0.tls_round_trips"),
    ({"rpm": [{"request_bytes": 0}]}, "rpm.0.request_bytes"),
    ({"rpm": [{"probes": 5}]}, "rpm.0.probes"),
    ({"network": {"kind": "docsis"}, "modems": [{"count": 2}], "rpm": [{"modem": 2}]}, "rpm.0.modem"),
]


@pytest.mark.parametrize(("raw", "key"), ERRORS)
def test_bad_rpm_input_names_its_key(raw, key):
    with pytest.raises(ScenarioError) as e:
        resolve(raw)
    assert str(e.value).startswith((key, f"unknown key {key} ")), str(e.value)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(("argv", "key"), [
    (["rpm", "--set", "rpm.0.connections=0"], "rpm.0.connections"),
    (["rpm", "--set", "rpm.0.warmup_s=20"], "rpm.0.warmup_s"),
    (["rpm", "--set", "rpm.0.colour=red"], "rpm.0.colour"),
    (["rpm", "--set", "modems=[{count = 2}]", "--modem", "3"], "rpm.0.modem"),
    (["rpm", "--modem", "-1"], "--modem"),
    (["rpm", "no-such-file.toml"], "no-such-file.toml"),
    (["rpm", "--set", "network.kind=bottleneck"], "rpm"),
])
def test_the_rpm_cli_exits_2_with_one_line_naming_the_key(capsys, argv, key):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("hfcsim: error: "), err
    assert key in err, err
