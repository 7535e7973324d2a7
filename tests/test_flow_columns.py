"""Issue 26, defect 3: a run's per-flow results come from the engine as columns (hfcsim-core
``metrics::columns``), not as one JSON object per flow. These tests pin that the columns carry the
same numbers as the JSON did: the same dicts, key order included, and the same DataFrame, dtypes
included, on small runs of each kind of result row (null metrics, a MAC's stations, ECN's extra
keys, pings, unfinished flows)."""

from __future__ import annotations

import importlib
import json

import pandas as pd
import pytest

from hfcsim import _core, scenario, simulate

sim = importlib.import_module("hfcsim.simulate")  # the module, not the function

DOCSIS_ECN = ["network.kind=docsis", "tcp.stack=linux", "network.cmts_aqm=pie", "tcp.ecn=rfc3168",
              "flows.0.bytes=200000"]

CASES = {
    "hfc default": [],
    "unfinished, time limit": ["sim.time_limit_s=0.5", "flows.1.modem=1", "flows.1.start_s=2.0"],
    "docsis MAC, three flows": ["upstream.mac=docsis", "flows.0.bytes=100000", "flows.1.modem=1",
                                "flows.1.bytes=50000", "flows.2.direction=up", "flows.2.bytes=30000"],
    "802.14, generated downloads": ["upstream.mac=ieee802.14", "modems.0.count=4", "modems.0.downloads=2",
                                    "modems.0.download_bytes=20000", "modems.0.start_spread_s=0.2"],
    "docsis with ECN and pings": [*DOCSIS_ECN, "pings.0.start_s=0.0"],
    "bottleneck": ["network.kind=bottleneck", "flows.0.bytes=100000", "flows.1.bytes=100000"],
    "atm_hfc": ["network.kind=atm_hfc", "flows.0.bytes=100000", "sim.time_limit_s=3.0"],
}


def _json_path(resolved: scenario.Scenario, seed: int) -> sim.Result:
    """The result as it came before the columns: the engine's JSON with a dict per flow."""
    return sim._parse_output(_core.run(resolved.to_json(), seed, False), resolved, seed)


@pytest.mark.parametrize("sets", CASES.values(), ids=CASES.keys())
def test_columns_give_the_json_paths_flows_and_frame(sets):
    resolved = scenario.load(None, sets)
    old = _json_path(resolved, 3)
    new = simulate(resolved, seed=3)
    assert new.flow_columns is not None and old.flow_columns is None
    assert new.flow_count == old.flow_count == len(old.flows)
    # Equal values, in the same key order, with the same Python types (True is not 1, 0.0 is not 0).
    assert [list(f.items()) for f in new.flows] == [list(f.items()) for f in old.flows]
    assert [[type(v) for v in f.values()] for f in new.flows] == [[type(v) for v in f.values()] for f in old.flows]
    assert json.dumps(new.flows) == json.dumps(old.flows)
    pd.testing.assert_frame_equal(new.to_frame(), old.to_frame(), check_dtype=True, check_exact=True)
    new_dict, old_dict = new.to_dict(trace=False), old.to_dict(trace=False)
    for d in (new_dict, old_dict):
        del d["engine"]["wall_s"]  # the run's wall-clock time
    assert new_dict == old_dict


def test_ecn_keys_are_columns_and_absent_keys_stay_absent():
    new = simulate(scenario.load(None, DOCSIS_ECN), seed=1)
    assert "ce_received" in new.flow_columns.names and "ce_received" in new.flows[0]
    off = simulate(scenario.load(None, DOCSIS_ECN[:-2] + ["flows.0.bytes=200000"]), seed=1)
    assert "ce_received" not in off.flow_columns.names and "ce_received" not in off.flows[0]


def test_a_key_absent_from_some_rows_is_left_out_of_those_dicts_and_nan_in_the_frame():
    # Two rows by hand, as the engine writes them (metrics::Column): "x" a u64 absent from row 0
    # (state 0) and 7 in row 1 (state 2); "y" an f64 null in row 0 (state 1) and 0.5 in row 1.
    raw = [("flow", "u", (0).to_bytes(8, "little") + (1).to_bytes(8, "little"), bytes([2, 2]), []),
           ("x", "u", bytes(8) + (7).to_bytes(8, "little"), bytes([0, 2]), []),
           ("y", "f", bytes(8) + bytes.fromhex("000000000000e03f"), bytes([1, 2]), []),
           ("end_reason", "s", (1).to_bytes(4, "little") + (0).to_bytes(4, "little"), bytes([2, 2]),
            ["finished", "time_limit"])]
    columns = sim.FlowColumns(raw)
    rows = [{"flow": 0, "end_reason": "time_limit", "y": None}, {"flow": 1, "end_reason": "finished", "x": 7, "y": 0.5}]
    assert columns.rows() == rows
    # The contract's metrics first (flow, end_reason), then the others in the engine's order.
    assert [list(r) for r in columns.rows()] == [["flow", "end_reason", "y"], ["flow", "end_reason", "x", "y"]]
    pd.testing.assert_frame_equal(columns.frame(), pd.DataFrame(rows), check_dtype=True)


def test_the_summary_of_more_flows_than_flow_lines_is_a_few_lines(hfcsim_cli):
    from hfcsim.cli import FLOW_LINES

    # 30 modems x 2 downloads of 100 kB: 60 flows, more than FLOW_LINES (50), in 2 s.
    assert FLOW_LINES < 60
    status, out, _ = hfcsim_cli(["run", "--set", "upstream.mac=docsis", "--set", "modems.0.count=30",
                                 "--set", "modems.0.downloads=2", "--set", "modems.0.download_bytes=100000",
                                 "--set", "sim.time_limit_s=2"])
    assert status == 0
    lines = out.splitlines()
    # A few lines, and where packets waited: at most PLACE_LINES places and their heading.
    from hfcsim.cli import PLACE_LINES

    assert len(lines) < 10 + PLACE_LINES + 1, out
    result = simulate(scenario.load(None, ["upstream.mac=docsis", "modems.0.count=30", "modems.0.downloads=2",
                                           "modems.0.download_bytes=100000", "sim.time_limit_s=2"]))
    finished = sum(f["finished"] for f in result.flows)
    assert lines[1].startswith(f"60 flows: {finished} finished, {60 - finished} still running at the time limit")
