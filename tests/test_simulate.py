"""The Python API: ``hfcsim.simulate`` and ``Result``.

Tests of results run the real compiled engine; only the error-mapping tests use a stand-in engine.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import hfcsim
from hfcsim import EngineError, Result, Scenario, ScenarioError, simulate

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

# The per-flow metrics of the engine contract (python/hfcsim/_core.pyi) and of issue 2 item 6, written
# out again here: results list them first, in this order (the engine may add more after them).
FLOW_METRICS = ["flow", "bytes", "delivered_bytes", "start_s", "end_s", "duration_s", "throughput_bps",
                "finished", "timeouts", "fast_retransmits", "retransmitted_segments", "data_segments_sent",
                "acks_received", "data_lost_downstream", "acks_lost_upstream", "cm_buffer_drops", "queue_drops",
                "first_ack_delay_s"]
TRACE_COLUMNS = ["time_s", "flow", "event", "seq", "ack", "cwnd", "ssthresh", "flight", "queue", "time_ns"]


def leading(names, n):
    return list(names)[:n]
SMALL = {"flows": [{"bytes": 30_000}]}


def test_public_api():
    assert set(hfcsim.__all__) >= {"simulate", "Scenario", "ScenarioError", "EngineError", "load_scenario",
                                   "__version__"}
    assert isinstance(hfcsim.__version__, str) and hfcsim.__version__


def test_import_is_light(subprocess_env):
    # `hfcsim run` must start fast: importing hfcsim and its CLI loads neither pandas nor numpy. It loads
    # the engine (about 1 ms), whose schema.toml the scenario keys are read from.
    code = "import sys, hfcsim.cli; print(sorted(m for m in ('pandas', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=subprocess_env).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("seed", [-1, 2**64, True, 1.5, "1"])
def test_bad_seed_is_a_scenario_error(seed):
    with pytest.raises(ScenarioError, match="seed"):
        simulate(SMALL, seed=seed)


def test_bad_scenario_fails_before_the_engine(fake_engine):
    fake_engine(raises=AssertionError("the engine must not be called"))
    with pytest.raises(ScenarioError, match=r"tcp\.variant"):
        simulate({"tcp": {"variant": "vegas"}})


# ---------------------------------------------------------------------------------------------------
# How engine failures reach the user (stand-in engine)


def test_engine_panic_becomes_engine_error_with_seed_and_scenario(fake_engine):
    fake_engine(raises=RuntimeError("engine panic: attempt to subtract with overflow"))
    with pytest.raises(EngineError) as info:
        simulate(SMALL, seed=7)
    message = str(info.value)
    assert "\n" not in message
    assert "attempt to subtract with overflow" in message and "seed 7" in message
    assert Scenario(SMALL).to_json() in message  # the run can be replayed from the message


def test_engine_value_error_becomes_scenario_error(fake_engine):
    fake_engine(raises=ValueError("unknown field `foo` at line 1 column 5"))
    with pytest.raises(ScenarioError, match="engine rejected the scenario: unknown field `foo`"):
        simulate(SMALL)


@pytest.mark.parametrize("output", ["not json", "{}", '{"flows": []}', "[1, 2]", '{"flows": [1], "engine": {}}',
                                    '{"flows": [], "engine": {}, "trace": [1]}', '{"flows": [], "engine": 3}'])
def test_malformed_engine_output_is_an_engine_error(fake_engine, output):
    fake_engine(returns=output)
    with pytest.raises(EngineError, match="malformed output"):
        simulate(SMALL, seed=3)


def test_results_list_contract_columns_first(fake_engine):
    flow = dict(sorted((dict.fromkeys(FLOW_METRICS, 0) | {"a_new_metric": 0}).items()))  # engine order: sorted
    trace = {name: [1] for name in sorted([*TRACE_COLUMNS, "a_new_column"])}
    fake_engine(returns={"flows": [flow], "engine": {"events": 1, "simulated_s": 0.1, "wall_s": 0.0},
                         "trace": trace})
    result = simulate(SMALL, trace=True)
    assert list(result.flows[0]) == [*FLOW_METRICS, "a_new_metric"]
    assert list(result.trace_columns) == [*TRACE_COLUMNS, "a_new_column"]


def test_result_from_stand_in_engine(fake_engine):
    flow = dict.fromkeys(FLOW_METRICS, 0) | {"flow": 0, "bytes": 30_000, "finished": True}
    fake_engine(returns={"flows": [flow], "engine": {"events": 1, "simulated_s": 0.1, "wall_s": 0.0},
                         "trace": None})
    result = simulate(SMALL, seed=5)
    assert result.to_dict() == {"seed": 5, "scenario": Scenario(SMALL).to_dict(), "flows": [flow],
                                "engine": {"events": 1, "simulated_s": 0.1, "wall_s": 0.0}, "stations": []}
    assert result.trace is None
    assert result.mac is None and len(result.stations) == 0


# ---------------------------------------------------------------------------------------------------
# The real engine


def test_default_simulation():  # engine
    result = simulate()
    assert isinstance(result, Result) and result.seed == 1
    assert result.scenario == Scenario().to_dict()
    (flow,) = result.flows
    assert leading(flow, len(FLOW_METRICS)) == FLOW_METRICS
    assert flow["finished"] and 1e6 < flow["throughput_bps"] < 25e6
    assert flow["throughput_bps"] == pytest.approx(8 * flow["bytes"] / flow["duration_s"])
    assert result.trace is None


@pytest.mark.parametrize("source", [
    SCENARIOS / "http-get.toml",
    str(SCENARIOS / "http-get.toml"),
    {"flows": [{"bytes": 300_000, "opener": "client", "http_header_bytes": 200}]},
    Scenario({"flows": [{"bytes": 300_000, "opener": "client", "http_header_bytes": 200}]}),
], ids=["path", "str", "dict", "Scenario"])
def test_every_kind_of_source_gives_the_same_run(source):  # engine
    expected = simulate(SCENARIOS / "http-get.toml", seed=3)
    result = simulate(source, seed=3)
    assert result.scenario == expected.scenario
    assert result.flows == expected.flows


def test_to_frame_has_one_row_per_flow_and_the_seed():  # engine
    frame = simulate(SCENARIOS / "three-flows-one-modem.toml", seed=9).to_frame()
    assert leading(frame.columns, 1 + len(FLOW_METRICS)) == ["seed", *FLOW_METRICS]
    assert list(frame["flow"]) == [0, 1, 2] and set(frame["seed"]) == {9}


def test_trace_is_a_table():  # engine
    result = simulate(SMALL, trace=True)
    assert leading(result.trace.columns, len(TRACE_COLUMNS)) == TRACE_COLUMNS
    assert len(result.trace) > 0
    assert "trace" in result.to_dict() and "trace" not in result.to_dict(trace=False)
    assert json.loads(result.to_json())["trace"] == result.trace_columns


ALWAYS_HAS_DATA = 10**12  # a flow this long never finishes: its source always has data (Elloumi Sec. 4)


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.toml")), ids=lambda p: p.name)
def test_every_example_scenario_runs_to_completion(path):  # engine
    scenario = hfcsim.load_scenario(path)
    endless = any(flow["bytes"] >= ALWAYS_HAS_DATA for flow in scenario["flows"])
    if endless:  # run long enough for every flow (started within the first second) to deliver data
        scenario = scenario.with_set("sim.measure_from_s=0", "sim.time_limit_s=2")
    result = simulate(scenario)
    assert len(result.flows) == len(result.scenario["flows"])
    assert all(flow["finished"] for flow in result.flows if flow["bytes"] < ALWAYS_HAS_DATA)
    assert all(flow["delivered_bytes"] > 0 for flow in result.flows)


def test_another_seed_gives_another_loss_pattern():  # engine
    lossy = {"network": {"downstream_loss": 0.02}}
    assert simulate(lossy, seed=1).flows != simulate(lossy, seed=2).flows
    assert simulate(lossy, seed=1).flows == simulate(lossy, seed=1).flows


@pytest.mark.parametrize(("drops", "at_least"), [([], 0), ([5], 1), ([5, 6, 7], 1)])
def test_chosen_drops_are_retransmitted(drops, at_least):  # engine
    (flow,) = simulate({"flows": [{"bytes": 100_000, "drop_packets": drops}]}).flows
    assert flow["finished"]
    assert flow["retransmitted_segments"] >= len(drops) and flow["timeouts"] + flow["fast_retransmits"] >= at_least
