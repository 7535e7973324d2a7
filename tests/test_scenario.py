"""The scenario schema: defaults, the resolved shape sent to the engine, errors, --set, example files.

None of these tests needs the compiled engine.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import hfcsim
from hfcsim import docsis
from hfcsim import stacks
from hfcsim.scenario import (CABLE, MAX_INT, MAX_TIME_S, MODEM, NETWORK_KINDS, PARAM_BY_KEY, PARAMS, SCHEMA,
                             Param, RateScheduleParam, Scenario, ScenarioError, _schema_key, apply_set, load,
                             parse_value, resolve)

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

# ---------------------------------------------------------------------------------------------------
# Defaults: the Cohen & Ramanathan HFC network (Sec. IV.A), written out by hand, not from the table.

HFC_DEFAULTS = [
    ("network.kind", "hfc"),
    ("network.downstream_bps", 25e6),
    ("network.upstream_bps", 3e6),
    ("network.rtt_s", 0.020),
    ("network.downstream_loss", 0.0),
    ("network.upstream_loss", 0.0),
    ("network.cm_buffer_bytes", None),
    ("network.cm_buffer_packets", None),
    ("network.cm_lan_bps", 10e6),
    ("tcp.variant", "reno"),
    ("tcp.mss_bytes", 1460),
    ("tcp.header_bytes", 40),
    ("tcp.initial_window", 1),
    ("tcp.dupack_threshold", 3),
    ("tcp.timer", "bsd"),
    ("tcp.tick_s", 0.5),
    ("tcp.min_rto_s", 1.0),
    ("tcp.send_buffer_bytes", 8192),
    ("tcp.nagle", False),
    ("receiver.delayed_ack", True),
    ("receiver.delack_tick_s", 0.2),
    ("receiver.receive_buffer_bytes", 8192),
    ("flows.0.bytes", 3_000_000),
    ("flows.0.direction", "down"),
    ("flows.0.opener", "server"),
    ("flows.0.start_s", 0.0),
    ("flows.0.http_header_bytes", None),
    ("flows.0.modem", 0),
    ("flows.0.handshake", True),
    ("flows.0.drop_packets", []),
    ("flows.0.extra_delay_s", 0.0),
    ("flows.0.send_jitter_s", 0.0),
    ("sim.time_limit_s", 3600.0),
]

BOTTLENECK_DEFAULTS = [
    ("network.kind", "bottleneck"),
    ("network.rate_pps", 100.0),
    ("network.buffer_packets", None),
    ("network.tau_s", 1.0),
    ("network.loss", 0.0),
]


@pytest.mark.parametrize(("key", "expected"), HFC_DEFAULTS)
def test_hfc_default(key, expected):
    value = Scenario().get(key)
    assert value == expected
    assert type(value) is type(expected)  # 25e6 is a float in the JSON, 1460 an int


@pytest.mark.parametrize(("key", "expected"), BOTTLENECK_DEFAULTS)
def test_bottleneck_default(key, expected):
    value = Scenario({"network": {"kind": "bottleneck"}}).get(key)
    assert value == expected
    assert type(value) is type(expected)


# The resolved JSON's shape, copied from the contract in python/hfcsim/_core.pyi.
CONTRACT_KEYS = [
    ("hfc", "network", ["kind", "downstream_bps", "upstream_bps", "rtt_s", "downstream_loss",
                        "upstream_loss", "cm_buffer_bytes", "cm_buffer_packets", "cm_lan_bps", "default_buffer"]),
    ("bottleneck", "network", ["kind", "rate_pps", "buffer_packets", "tau_s", "loss"]),
    ("hfc", "tcp", ["variant", "mss_bytes", "header_bytes", "initial_window", "dupack_threshold", "timer",
                    "tick_s", "min_rto_s", "send_buffer_bytes", "nagle"]),
    ("hfc", "receiver", ["delayed_ack", "delack_tick_s", "receive_buffer_bytes"]),
    ("hfc", "sim", ["time_limit_s"]),
    ("hfc", "upstream", ["mac", "minislot_bytes", "frame_s", "contention", "contention_slots",
                         "data_slot_minislots", "scheduler", "max_request", "piggyback", "concatenation",
                         "fragmentation", "max_burst_bytes", "headend_delay_s", "backoff_start", "backoff_end",
                         "max_retries", "burst_overhead_bytes", "frame_overhead_bytes", "delay_s_per_km"]),
]

# The upstream MAC and the modem groups exist only on the HFC network.
TOP_LEVEL = {"hfc": ["network", "upstream", "modems", "tcp", "receiver", "flows", "sim"],
             "bottleneck": ["network", "tcp", "receiver", "flows", "sim"]}


@pytest.mark.parametrize(("kind", "section", "keys"), CONTRACT_KEYS)
def test_resolved_sections_match_engine_contract(kind, section, keys):
    resolved = Scenario({"network": {"kind": kind}}).to_dict()
    assert list(resolved) == TOP_LEVEL[kind]
    assert list(resolved[section]) == keys


def test_resolved_modem_group_matches_engine_contract():
    (group,) = Scenario({"modems": [{}]}).to_dict()["modems"]
    assert list(group) == ["count", "distance_km_min", "distance_km_max", "queue_packets", "queue_bytes",
                           "background_load", "background_bytes"]


@pytest.mark.parametrize("kind", ["hfc", "bottleneck"])
def test_resolved_flow_matches_engine_contract(kind):
    (flow,) = Scenario({"network": {"kind": kind}}).to_dict()["flows"]
    assert list(flow) == ["bytes", "direction", "opener", "start_s", "http_header_bytes", "modem",
                          "handshake", "extra_delay_s", "send_jitter_s", "drop_packets"]


def test_absent_optionals_are_null_in_json():
    network = json.loads(Scenario().to_json())["network"]
    assert network["cm_buffer_bytes"] is None and network["cm_buffer_packets"] is None


@pytest.mark.parametrize(("raw", "key", "expected"), [
    ({"network": {"downstream_bps": 10_000_000}}, "network.downstream_bps", 10e6),  # int for a float
    ({"tcp": {"variant": "tahoe"}}, "tcp.variant", "tahoe"),
    ({"flows": [{"bytes": 300_000}]}, "flows.0.bytes", 300_000),
    ({"flows": [{}, {"opener": "client"}]}, "flows.1.opener", "client"),
    ({"flows": [{}, {"opener": "client"}]}, "flows.1.bytes", 3_000_000),
    ({"network": {"cm_buffer_packets": 7}}, "network.cm_buffer_packets", 7),
    ({"network": {"cm_buffer_bytes": None}}, "network.cm_buffer_bytes", None),
    ({"network": {"kind": "bottleneck", "buffer_packets": 0}}, "network.buffer_packets", 0),
    ({"flows": [{"drop_packets": [11, 14]}]}, "flows.0.drop_packets", [11, 14]),
    ({"tcp": {"mss_bytes": 65495}}, "tcp.mss_bytes", 65495),
    ({"network": {"downstream_loss": 0.999}}, "network.downstream_loss", 0.999),
])
def test_given_values_are_kept(raw, key, expected):
    value = Scenario(raw).get(key)
    assert value == expected
    assert type(value) is type(expected)


def test_int_for_float_becomes_float():
    assert isinstance(Scenario({"sim": {"time_limit_s": 10}}).get("sim.time_limit_s"), float)


# ---------------------------------------------------------------------------------------------------
# Bad input: ScenarioError, one line, naming the key and the value given (and what is allowed).

BAD_SCENARIOS = [
    # (raw scenario, fragments the message must contain)
    ({"network": {"downstream_los": 0.01}},
     ["unknown key network.downstream_los", "0.01", "did you mean network.downstream_loss?"]),
    ({"tcp": {"mss": 1460}}, ["unknown key tcp.mss", "1460", "did you mean tcp.mss_bytes?"]),
    ({"network": {"mss_bytes": 536}}, ["unknown key network.mss_bytes", "536", "did you mean tcp.mss_bytes?"]),
    ({"flows": [{"byts": 10}]}, ["unknown key flows.0.byts", "10", "did you mean flows.0.bytes?"]),
    ({"netwrk": {}}, ["unknown key netwrk", "did you mean network?"]),
    ({"seed": 3}, ["unknown key seed", "3"]),
    ({"network": {"downstream_bps": "fast"}}, ["network.downstream_bps", '"fast"', "must be a number"]),
    ({"tcp": {"mss_bytes": 1460.0}}, ["tcp.mss_bytes", "1460.0", "must be an integer"]),
    ({"tcp": {"mss_bytes": True}}, ["tcp.mss_bytes", "true", "must be an integer"]),
    ({"network": {"downstream_bps": True}}, ["network.downstream_bps", "true", "must be a number"]),
    ({"receiver": {"delayed_ack": 1}}, ["receiver.delayed_ack", "1", "true or false"]),
    ({"receiver": {"delayed_ack": "yes"}}, ["receiver.delayed_ack", '"yes"', "true or false"]),
    ({"network": {"downstream_bps": -25e6}}, ["network.downstream_bps", "-25000000.0", ">= 1"]),
    ({"network": {"upstream_bps": 0}}, ["network.upstream_bps", "0", ">= 1"]),
    ({"network": {"kind": "bottleneck", "rate_pps": -1}}, ["network.rate_pps", "-1", "> 0"]),
    ({"network": {"downstream_loss": 1.0}}, ["network.downstream_loss", "1.0", "[0, 1)"]),
    ({"network": {"downstream_loss": 1.5}}, ["network.downstream_loss", "1.5", "[0, 1)"]),
    ({"network": {"upstream_loss": -0.1}}, ["network.upstream_loss", "-0.1", "[0, 1)"]),
    ({"network": {"downstream_loss": math.nan}}, ["network.downstream_loss", "NaN"]),
    ({"network": {"rtt_s": math.inf}}, ["network.rtt_s", "Infinity"]),
    ({"network": {"downstream_bps": 10**400}}, ["network.downstream_bps", "must be a number"]),
    ({"tcp": {"mss_bytes": 0}}, ["tcp.mss_bytes", "0", "[1, 65495]"]),
    ({"tcp": {"mss_bytes": 65496}}, ["tcp.mss_bytes", "65496", "[1, 65495]"]),
    ({"tcp": {"initial_window": 0}}, ["tcp.initial_window", "0", "[1, 4294967295]"]),
    ({"tcp": {"dupack_threshold": 0}}, ["tcp.dupack_threshold", "0", "[1, 4294967295]"]),
    ({"tcp": {"tick_s": 0}}, ["tcp.tick_s", "0", "[1e-9, 1e9]"]),
    ({"tcp": {"send_buffer_bytes": 0}}, ["tcp.send_buffer_bytes", "0", "> 0"]),
    ({"tcp": {"send_buffer_bytes": 2**70}}, ["tcp.send_buffer_bytes", "must be an integer"]),
    ({"tcp": {"variant": "vegas"}}, ["tcp.variant", '"vegas"', '"tahoe", "reno", "newreno"']),
    ({"tcp": {"variant": "Reno"}}, ["tcp.variant", '"Reno"', 'did you mean "reno"?']),
    ({"tcp": {"timer": "freebsd"}}, ["tcp.timer", '"freebsd"', '"bsd", "rfc6298"']),
    ({"network": {"kind": "dsl"}}, ["network.kind", '"dsl"', '"hfc", "bottleneck"']),
    ({"flows": []}, ["flows", "[]", "at least one flow"]),
    ({"flows": {"bytes": 5}}, ["flows", '{"bytes": 5}', "list of tables"]),
    ({"flows": [{"bytes": 0}]}, ["flows.0.bytes", "0", "> 0"]),
    ({"flows": [{}, {"bytes": -5}]}, ["flows.1.bytes", "-5", "> 0"]),
    ({"flows": [{"direction": "sideways"}]}, ["flows.0.direction", '"sideways"', '"down", "up"']),
    ({"flows": [{"opener": "both"}]}, ["flows.0.opener", '"both"', '"server", "client"']),
    ({"flows": [{"start_s": -1.0}]}, ["flows.0.start_s", "-1.0", "[0, 1e9]"]),
    ({"flows": [{"http_header_bytes": 0}]}, ["flows.0.http_header_bytes", "0", "(0, 4294967295]"]),
    ({"flows": [{"modem": -1}]}, ["flows.0.modem", "-1", "[0, 4294967295]"]),
    ({"flows": [{"drop_packets": [0]}]}, ["flows.0.drop_packets", "[0]", "each in [1, 4294967295]"]),
    ({"flows": [{"drop_packets": 11}]}, ["flows.0.drop_packets", "11", "list of integers"]),
    ({"flows": [{"drop_packets": [1.5]}]}, ["flows.0.drop_packets", "[1.5]", "list of integers"]),
    ({"sim": {"time_limit_s": 0}}, ["sim.time_limit_s", "0", "[1e-9, 1e9]"]),
    ({"network": {"cm_buffer_bytes": 10240, "cm_buffer_packets": 7}},
     ["network.cm_buffer_packets", "7", "only one of", "network.cm_buffer_bytes = 10240"]),
    ({"network": {"cm_buffer_bytes": 0}}, ["network.cm_buffer_bytes", "0", "> 0"]),
    ({"network": {"tau_s": 1.0}}, ["network.tau_s", "1.0", 'only valid with network.kind = "bottleneck"']),
    ({"network": {"kind": "bottleneck", "downstream_loss": 0.01}},
     ["network.downstream_loss", "0.01", 'only valid with network.kind = "hfc"']),
    ({"network": {"kind": "bottleneck", "buffer_packets": -1}}, ["network.buffer_packets", "-1", ">= 0"]),
    ({"tcp": "reno"}, ["tcp", '"reno"', "must be a table"]),
    ({"tcp": {"nagle": None}}, ["tcp.nagle", "null", "true or false"]),
]


@pytest.mark.parametrize(("raw", "fragments"), BAD_SCENARIOS)
def test_bad_scenario_raises_one_line_error(raw, fragments, one_line_error):
    one_line_error(raw, fragments)


def test_scenario_error_is_a_value_error():
    assert issubclass(hfcsim.ScenarioError, ValueError)


# ---------------------------------------------------------------------------------------------------
# --set dotted.key=value


@pytest.mark.parametrize(("text", "expected"), [
    ("true", True),
    ("false", False),
    ("0.01", 0.01),
    ("1e-2", 0.01),
    ("25e6", 25e6),
    ("300000", 300000),
    ("300_000", 300000),
    ('"reno"', "reno"),
    ("'reno'", "reno"),
    ("reno", "reno"),  # a bare word is a string
    ("new reno", "new reno"),
    ("[11, 14]", [11, 14]),
    ("{ bytes = 5 }", {"bytes": 5}),
    ("True", "True"),  # TOML booleans are lower case; this stays a string (and fails a bool key)
])
def test_parse_value(text, expected):
    value = parse_value(text)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(("raw", "assignment", "key", "expected"), [
    ({}, "network.downstream_loss=0.01", "network.downstream_loss", 0.01),
    ({}, "tcp.variant=tahoe", "tcp.variant", "tahoe"),
    ({}, 'tcp.variant="newreno"', "tcp.variant", "newreno"),
    ({}, " tcp.nagle = true ", "tcp.nagle", True),
    ({}, "receiver.delayed_ack=false", "receiver.delayed_ack", False),
    ({}, "flows.0.bytes=300000", "flows.0.bytes", 300000),
    ({"flows": [{"bytes": 5}]}, "flows.0.opener=client", "flows.0.bytes", 5),  # rest of flow 0 kept
    ({"flows": [{"bytes": 5}]}, "flows.0.opener=client", "flows.0.opener", "client"),
    ({}, "flows.1.bytes=1000", "flows.1.bytes", 1000),  # flows absent = one flow; 1 is the next
    ({}, "flows.1.bytes=1000", "flows.0.bytes", 3_000_000),
    ({}, "flows.1.bytes=1000", "flows.1.direction", "down"),  # new flow from defaults
    ({}, "flows.0.drop_packets=[11, 14]", "flows.0.drop_packets", [11, 14]),
    ({}, "network.cm_buffer_bytes=10240", "network.cm_buffer_bytes", 10240),
    ({}, "network.kind=bottleneck", "network.rate_pps", 100.0),
    ({"tcp": {"variant": "tahoe"}}, "tcp.mss_bytes=536", "tcp.variant", "tahoe"),
    ({}, "sim.time_limit_s=60", "sim.time_limit_s", 60.0),
    ({}, "network.upstream_bps=1_500_000", "network.upstream_bps", 1.5e6),
    ({}, "flows.0.http_header_bytes=200", "flows.0.http_header_bytes", 200),
])
def test_apply_set(raw, assignment, key, expected):
    assert resolve(apply_set(raw, assignment)).get(key) == expected


def test_apply_set_appends_then_addresses_the_new_flow():
    raw = apply_set(apply_set({}, "flows.1.bytes=1000"), "flows.2.opener=client")
    assert [f["bytes"] for f in resolve(raw).to_dict()["flows"]] == [3_000_000, 1000, 3_000_000]


def test_apply_set_does_not_modify_its_input():
    raw = {"flows": [{"bytes": 5}]}
    apply_set(raw, "flows.0.bytes=7")
    assert raw == {"flows": [{"bytes": 5}]}


def test_apply_set_on_a_scenario_object():
    scenario = Scenario({"tcp": {"variant": "tahoe"}})
    assert scenario.with_set("tcp.mss_bytes=536").get("tcp.mss_bytes") == 536
    assert scenario.get("tcp.mss_bytes") == 1460  # unchanged


BAD_SETS = [
    # (assignments, fragments of the message)
    (["tcp.variant"], ["tcp.variant", "expected dotted.key=value"]),
    (["=reno"], ["=reno", "expected dotted.key=value"]),
    (["tcp..variant=reno"], ["tcp..variant=reno", "expected dotted.key=value"]),
    (["tcp.variant="], ["tcp.variant", "missing value"]),
    (["flows.2.bytes=300000"], ["flows.2.bytes", "300000", "index 2 out of range", "flows.1"]),
    (["flows.1.bytes=1", "flows.3.bytes=300000"], ["flows.3.bytes", "300000", "index 3 out of range"]),
    (["flows.first.bytes=300000"], ["flows.first.bytes", "300000", "index"]),
    (["tcp.variant=vegas"], ["tcp.variant", '"vegas"', '"tahoe", "reno", "newreno"']),
    (["tcp.nagle=True"], ["tcp.nagle", '"True"', "true or false"]),
    (["flows.0.bytes=300k"], ["flows.0.bytes", '"300k"', "must be an integer"]),
    (["network.downstream_los=0.01"], ["network.downstream_los", "0.01", "did you mean network.downstream_loss?"]),
    (["network.downstream_loss=1.5"], ["network.downstream_loss", "1.5", "[0, 1)"]),
    (["network.tau_s=2"], ["network.tau_s", "2", 'only valid with network.kind = "bottleneck"']),
    (["tcp.mss_bytes.x=1"], ["tcp.mss_bytes.x", "1", "not a table"]),
    (["flows.0.bytes.x=1"], ["flows.0.bytes.x", "1", "not a table"]),
    (["flows.0.drop_packets=[3]", "flows.0.drop_packets.1=5", "flows.0.drop_packets.1.x=1"],
     ["flows.0.drop_packets.1.x", "1", "not a table"]),
    (["tcp.mss_bytes=0"], ["tcp.mss_bytes", "0", "[1, 65495]"]),
]


@pytest.mark.parametrize(("assignments", "fragments"), BAD_SETS)
def test_bad_set_raises_one_line_error(assignments, fragments):
    with pytest.raises(ScenarioError) as info:
        load(None, assignments)
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


# ---------------------------------------------------------------------------------------------------
# Files


SCENARIO_FILES = sorted(SCENARIOS.glob("*.toml"))


def test_the_example_scenarios_exist():
    names = {p.name for p in SCENARIO_FILES}
    assert {"cohen-default.toml", "cohen-lossy.toml", "http-get.toml", "three-flows-one-modem.toml",
            "lakshman-fig1.toml"} <= names


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.name)
def test_every_example_scenario_validates(path):
    assert isinstance(load(path), Scenario)
    assert isinstance(load(str(path)), Scenario)


@pytest.mark.parametrize(("name", "key", "expected"), [
    ("cohen-lossy.toml", "network.downstream_loss", 0.01),
    ("http-get.toml", "flows.0.opener", "client"),
    ("http-get.toml", "flows.0.http_header_bytes", 200),
    ("three-flows-one-modem.toml", "network.cm_buffer_bytes", 10240),
    ("three-flows-one-modem.toml", "flows.2.bytes", 300_000),
    ("three-flows-one-modem.toml", "flows.2.modem", 0),
    ("lakshman-fig1.toml", "network.kind", "bottleneck"),
    ("lakshman-fig1.toml", "network.rate_pps", 100.0),
    ("lakshman-fig1.toml", "network.tau_s", 1.0),
    ("lakshman-fig1.toml", "network.buffer_packets", 10),
    ("lakshman-fig1.toml", "tcp.variant", "tahoe"),
    ("lakshman-fig1.toml", "tcp.mss_bytes", 1000),
    ("lakshman-fig1.toml", "tcp.timer", "bsd"),
    ("lakshman-fig1.toml", "tcp.send_buffer_bytes", 1_000_000),
    ("lakshman-fig1.toml", "receiver.receive_buffer_bytes", 1_000_000),
    ("lakshman-fig1.toml", "receiver.delayed_ack", False),
    ("lakshman-fig1.toml", "flows.0.handshake", False),
    ("lakshman-fig1.toml", "flows.0.bytes", 20_000_000),
])
def test_example_scenario_values(name, key, expected):
    assert load(SCENARIOS / name).get(key) == expected


def test_cohen_default_file_is_the_defaults_but_its_unbounded_headend():
    assert load(SCENARIOS / "cohen-default.toml") == Scenario({"network": {"default_buffer": "unbounded"}})


def test_three_flows_file_has_three_flows():
    assert len(load(SCENARIOS / "three-flows-one-modem.toml").to_dict()["flows"]) == 3


@pytest.mark.parametrize(("text", "fragments"), [
    ("[network]\ndownstream_bps = \n", ["bad.toml", "invalid TOML", "line 2"]),
    ("[tcp\nvariant = 'reno'\n", ["bad.toml", "invalid TOML"]),
    ("[tcp]\nvariant = 'reno'\nvariant = 'tahoe'\n", ["bad.toml", "invalid TOML"]),
])
def test_toml_syntax_error_is_one_line_scenario_error(tmp_path, text, fragments):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as info:
        load(path)
    assert "\n" not in str(info.value)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_an_error_in_a_file_names_the_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("[tcp]\nmss_bytes = 0\n")
    with pytest.raises(ScenarioError, match=r"s\.toml: tcp\.mss_bytes = 0: must be in \[1, 65495\]$"):
        load(path)


def test_missing_file_is_a_scenario_error(tmp_path):
    with pytest.raises(ScenarioError, match=r"no-such\.toml: no such scenario file"):
        load(tmp_path / "no-such.toml")


def test_toml_file_with_sets(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[tcp]\nvariant = "tahoe"\n\n[[flows]]\nbytes = 1000\n')
    scenario = load(path, ["flows.0.bytes=2000", "tcp.dupack_threshold=1"])
    assert (scenario.get("tcp.variant"), scenario.get("flows.0.bytes"), scenario.get("tcp.dupack_threshold")) == (
        "tahoe", 2000, 1)


def test_json_file(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(Scenario({"tcp": {"variant": "newreno"}}).to_json())
    assert load(path).get("tcp.variant") == "newreno"


@pytest.mark.parametrize("source", [42, 1.5, ["flows"]])
def test_load_rejects_other_types(source):
    with pytest.raises(ScenarioError, match="must be a dict, a TOML path or a Scenario"):
        load(source)


# ---------------------------------------------------------------------------------------------------
# The Scenario object


def test_scenario_is_immutable_through_its_accessors():
    scenario = Scenario()
    scenario.to_dict()["tcp"]["variant"] = "tahoe"
    scenario["tcp"]["variant"] = "tahoe"
    assert scenario.get("tcp.variant") == "reno"


def test_scenario_of_a_scenario_is_equal():
    scenario = Scenario({"tcp": {"variant": "tahoe"}})
    assert Scenario(scenario) == scenario


def test_resolve_and_load_return_a_scenario_unchanged():
    scenario = Scenario({"tcp": {"variant": "tahoe"}})
    assert resolve(scenario) is scenario
    assert load(scenario) is scenario


# ---------------------------------------------------------------------------------------------------
# Property: any valid scenario resolves, keeps what was given, and round-trips through JSON unchanged.
# Strategies are derived from the schema table, so a new parameter is covered automatically.


def _bound(param: Param) -> tuple[float | None, float | None]:
    low = param.ge if param.ge is not None else param.gt
    high = param.le if param.le is not None else param.lt
    return low, high


def _value(param: Param) -> st.SearchStrategy:
    low, high = _bound(param)
    if isinstance(param, RateScheduleParam):  # [[time_s, bps], ...], times strictly increasing
        time = st.floats(min_value=0, max_value=MAX_TIME_S, exclude_min=True) | st.integers(1, 1000)
        rate = st.floats(min_value=1, allow_infinity=False) | st.integers(1, 10**9)
        return st.lists(st.tuples(time, rate), max_size=5, unique_by=lambda pair: float(pair[0])).map(
            lambda pairs: [list(pair) for pair in sorted(pairs)])
    if param.choices:
        values = st.sampled_from(param.choices)
    elif param.type is bool:
        values = st.booleans()
    elif param.type is float:
        values = st.floats(min_value=low, max_value=high, exclude_min=param.gt is not None,
                           exclude_max=param.lt is not None, allow_nan=False, allow_infinity=False)
        if high is None or high >= 1000:  # an int is fine for a float
            values = values | st.integers(min_value=math.ceil(low or 0) + 1, max_value=1000)
    elif param.type is int:
        values = st.integers(min_value=int(low) + (param.gt is not None) if low is not None else None,
                             max_value=int(high) if high is not None else MAX_INT)
    else:  # list of ints
        values = st.lists(st.integers(min_value=int(low), max_value=10**9), max_size=5)
    return st.none() | values if param.optional else values


def _table(params: list[Param]) -> st.SearchStrategy:
    return st.fixed_dictionaries({}, optional={p.name: _value(p) for p in params})


def _params(prefix: str, kind: str) -> list[Param]:
    # Python-only keys (a modem group's downloads) expand into flows and are not kept as given.
    return [p for p in PARAMS if p.key.rsplit(".", 1)[0] == prefix and p.applies_to(kind)
            and p.key != "network.kind" and p.engine]


def _ordered(table, low, high, low_default, high_default):
    """``table`` with ``low`` <= ``high`` (drawn values swapped into order, defaults made explicit)."""
    a, b = table.get(low, low_default), table.get(high, high_default)
    return {**table, low: min(a, b), high: max(a, b)} if a > b else table


def _valid_network(network):
    if network.get("cm_buffer_bytes") is not None and network.get("cm_buffer_packets") is not None:
        network = {**network, "cm_buffer_packets": None}  # at most one CM buffer bound
    threshold, buffer = network.get("epd_threshold_cells"), network.get("switch_buffer_cells")
    if threshold is not None and buffer is not None and threshold >= buffer:
        network = {**network, "epd_threshold_cells": None}  # EPD below the switch buffer's limit
    for name in ("cmts_queue", "cm_queue"):  # a service flow's buffer in bytes or in seconds, not both
        if network.get(f"{name}_bytes") is not None and network.get(f"{name}_s") is not None:
            network = {**network, f"{name}_s": None}
    network = _ordered(network, "rs_k", "rs_n", 122, 128)  # Reed-Solomon: data symbols <= codeword
    reserve, rate = network.get("ds_min_rate_bps"), network.get("ds_rate_bps", PARAM_BY_KEY["network.ds_rate_bps"].default)
    if reserve is not None and reserve > rate:  # a reserved rate no higher than the cap (schema le_key)
        network = {**network, "ds_min_rate_bps": None}
    header, packet = network.get("mpeg_header_bytes", 4.5), network.get("mpeg_packet_bytes", 188.0)
    if header >= packet:  # an MPEG-2 header smaller than its packet
        network = {**network, "mpeg_header_bytes": 0.0}
    return network


def _valid_sim(sim):
    limit = sim.get("time_limit_s", PARAM_BY_KEY["sim.time_limit_s"].default)
    if sim.get("measure_from_s", 0.0) >= limit:
        sim = {**sim, "measure_from_s": limit / 2}  # statistics start before the end of the run
    return sim


def _valid_group(group):
    group = _ordered(group, "distance_km_min", "distance_km_max", 0.0, 0.0)
    reserve, rate = group.get("ds_min_rate_bps"), group.get("ds_rate_bps")
    if reserve is not None and rate is not None and reserve > rate:  # schema le_key
        group = {**group, "ds_min_rate_bps": None}
    if group.get("queue_packets") is not None and group.get("queue_bytes") is not None:
        group = {**group, "queue_bytes": None}  # at most one queue limit
    return group


@st.composite
def raw_scenarios(draw):
    kind = draw(st.sampled_from(NETWORK_KINDS))
    network = draw(_table(_params("network", kind)).map(_valid_network))
    if kind != "hfc" or draw(st.booleans()):
        network["kind"] = kind
    raw = {"network": network}
    for section in ("tcp", "receiver", "sim"):
        table = draw(_table(_params(section, kind)))
        if section == "sim":
            table = _valid_sim(table)
        if section == "tcp":
            table = _valid_tcp(table)
        if section == "receiver" and table.get("ack_rule") != "linux":
            # Linux's read rules need Linux's delayed ACK (schema.toml requires): a stack may give it,
            # but only the table's own ack_rule is known here.
            table = {k: v for k, v in table.items() if k not in ("ack_on_read", "ack_on_push", "linux_window")}
        if section == "receiver" and table.get("linux_window") is not True:
            # A segment's memory needs Linux's window, known here only from the table's own key.
            table.pop("skb_truesize_bytes", None)
            table.pop("rcvbuf_autotuning", None)  # so does the buffer's autotuning
        if section == "receiver" and table.get("rcvbuf_autotuning") is True:
            table.pop("receive_buffer_bytes", None)  # SO_RCVBUF locks the buffer: not beside autotuning
        if section == "receiver" and table.get("rcvbuf_autotuning") is not True:
            # tcp_rmem's values need the autotuning, known here only from the table's own key.
            table.pop("tcp_rmem_default_bytes", None)
            table.pop("tcp_rmem_max_bytes", None)
        if table or draw(st.booleans()):
            raw[section] = table
    if kind in CABLE and draw(st.booleans()):
        raw["upstream"] = draw(_table(_params("upstream", kind)).map(
            lambda u: _ordered(u, "backoff_start", "backoff_end", 3, 10)))
    if kind in CABLE and draw(st.booleans()):
        raw["modems"] = draw(st.lists(_table(_params("modems.*", kind)).map(_valid_group), min_size=1, max_size=3))
    if draw(st.integers(0, 3)) < 3:  # else the keys that need another MAC are dropped (_valid_requires)
        raw = _with_a_mac_they_need(draw, raw, kind)
    if draw(st.booleans()):
        raw["flows"] = draw(st.lists(_table(_params("flows.*", kind)), min_size=1, max_size=4))
        if raw.get("modems"):  # with groups, a flow's modem must be one of theirs
            total = sum(group.get("count", 1) for group in raw["modems"])
            raw["flows"] = [{**f, "modem": f["modem"] % total} if "modem" in f else f for f in raw["flows"]]
    # Each rule's fix may break another's (a rate dropped leaves a frame too short for its contention
    # slots): the whole chain again, until nothing changes.
    for _ in range(10):
        fixed = _valid_requires(_valid_burst(_valid_requires(_valid_frame(raw, kind), kind), kind), kind)
        fixed = _valid_default_buffer(_valid_lld(_valid_plant(_valid_channels(_valid_rates(_valid_min_frame(
            fixed, kind)), kind), kind)), kind)
        if fixed == raw:
            return raw
        raw = fixed
    raise AssertionError(f"the validity rules do not settle: {raw}")


def _valid_default_buffer(raw, kind):
    """``raw`` within rules.rs default_buffer_rule: network.default_buffer off its default only where a queue
    is left for it to size (hfc: the headend's, or with a MAC a modem group's without a limit; docsis: the
    CMTS's or the modem's); else dropped (issue 36, defect 6)."""
    network = raw.get("network", {})
    if network.get("default_buffer", PARAM_BY_KEY["network.default_buffer"].default) == "mulpi":
        return raw
    set_ = lambda name: network.get(name) is not None  # noqa: E731
    if kind == "hfc":
        mac = raw.get("upstream", {}).get("mac", PARAM_BY_KEY["upstream.mac"].default_for(kind))
        groups = mac != "fifo" and any(g.get("queue_bytes") is None and g.get("queue_packets") is None
                                       for g in raw.get("modems", []))
        sized = set_("headend_queue_bytes") and not groups
    else:
        sized = all(set_(f"{side}_queue_bytes") or set_(f"{side}_queue_s") for side in ("cmts", "cm"))
    if not sized:
        return raw
    return {**raw, "network": {k: v for k, v in network.items() if k != "default_buffer"}}


def _valid_lld(raw):
    """``raw`` within issue 24's rules (rules.rs lld_rules and the per-flow pairing): the network.lld_* keys
    and pings.*.nqb only with an lld queue, queue protection's thresholds only with it on; a flow's own
    congestion_control and ecn are dropped (their pairing with the stack is tests/test_lld.py's)."""
    network = raw.get("network", {})
    if "lld" not in (network.get("cmts_aqm"), network.get("cm_aqm")):
        network = {k: v for k, v in network.items() if not k.startswith("lld_")}
        if raw.get("pings"):
            raw = {**raw, "pings": [{k: v for k, v in p.items() if k != "nqb"} for p in raw["pings"]]}
    if network.get("lld_qprotect") is False:
        network = {k: v for k, v in network.items() if not k.startswith("lld_qp_")}
    if "network" in raw:
        raw = {**raw, "network": network}
    if raw.get("flows"):
        raw = {**raw, "flows": [{k: v for k, v in f.items() if k not in ("congestion_control", "ecn")}
                                for f in raw["flows"]]}
    return raw


INTERLEAVE_PAIRS = {(128, j) for j in range(1, 9)} | {(64, 2), (32, 4), (16, 8), (8, 16)}


def _valid_plant(raw, kind):
    """``raw`` within the engine's rules on issue 23's plant keys (rules.rs): an interleaver J.83 Annex B
    has, its modulation 64 or 256 only with one, a maintenance region with its interval and room in a MAP,
    and a downstream left after the management messages. Dropped keys take their defaults."""
    network, upstream = raw.get("network", {}), raw.get("upstream", {})
    if (network.get("interleave_i"), network.get("interleave_j")) not in INTERLEAVE_PAIRS:
        network = {k: v for k, v in network.items() if k not in ("interleave_i", "interleave_j")}
    if network.get("interleave_qam", 64) not in (64, 256) or "interleave_i" not in network:
        network = {k: v for k, v in network.items() if k != "interleave_qam"}
    if network.get("ds_mgmt_overhead"):
        network = {k: v for k, v in network.items() if k != "ds_mgmt_overhead"}  # can leave no rate: dropped
    raw = {**raw, "network": network}
    maintenance = ("maintenance_interval_s", "maintenance_minislots")
    if any(k in upstream for k in maintenance):
        minislots = upstream.get("maintenance_minislots", 0)
        room = True
        if minislots and not _frame_breaks(raw, kind):
            merged = {p.name: p.default_for(kind) for p in _params("upstream", kind)} | upstream
            rate = network.get("upstream_bps", PARAM_BY_KEY["network.upstream_bps"].default_for(kind))
            slots = min(max(1, round(merged["frame_s"] * rate / (8 * merged["minislot_bytes"]))), 2**32 - 1)
            room = minislots + merged["contention_slots"] + 1 <= slots
        if not (minislots and upstream.get("maintenance_interval_s") is not None and room):
            raw = {**raw, "upstream": {k: v for k, v in upstream.items() if k not in maintenance}}
    return raw


BURST_KEYS = ("max_burst_bytes", "max_request", "frame_overhead_bytes", "burst_overhead_bytes", "fec_t_bytes",
              "minislot_bytes")


def _valid_burst(raw, kind):
    """``raw`` whose largest upstream frame fits one DOCSIS request and burst (rules.rs: a data segment when a
    flow goes up, an ACK with the timestamps option, a background packet, with the frame's overhead): else
    without the keys that size them, and, if still too large, with the FIFO upstream."""
    def value(section, name, table):
        return table.get(name, PARAM_BY_KEY[f"{section}.{name}"].default_for(kind))

    def fits(raw):
        upstream = raw.get("upstream", {})
        if kind not in CABLE or value("upstream", "mac", upstream) != "docsis":
            return True
        tcp = raw.get("tcp", {})
        stack = tcp.get("stack", stacks.DEFAULT_STACK)
        resolved = {"variant": value("tcp", "variant", tcp), "tick_s": value("tcp", "tick_s", tcp)}
        timestamps = tcp.get("timestamps", stacks.rule(stack, "tcp", "timestamps", resolved))
        header = value("tcp", "header_bytes", tcp)
        ip = [header + (12 if timestamps else 0)]
        if any(f.get("direction") == "up" for f in raw.get("flows", [])):
            ip.append(value("tcp", "mss_bytes", tcp) + header)
        ip += [g.get("background_bytes", 48) for g in raw.get("modems", [])]
        frame = max(ip) + value("upstream", "frame_overhead_bytes", upstream)
        t, k = value("upstream", "fec_t_bytes", upstream), value("upstream", "fec_codeword_bytes", upstream)
        parity = 2 * t * -(-frame // k) if t else 0
        minislots = -(-(frame + parity + value("upstream", "burst_overhead_bytes", upstream))
                      // value("upstream", "minislot_bytes", upstream))
        return frame <= value("upstream", "max_burst_bytes", upstream) and minislots <= value(
            "upstream", "max_request", upstream)

    if fits(raw):
        return raw
    raw = {**raw, "upstream": {k: v for k, v in raw.get("upstream", {}).items() if k not in BURST_KEYS}}
    return raw if fits(raw) else {**raw, "upstream": {**raw["upstream"], "mac": "fifo"}}


def _requires(key: str) -> dict[str, list]:
    """schema.toml's ``requires`` of a key ("modems.*.x" or "upstream.x"): set off its default, each named
    key must hold one of the listed values (the engine's cross-key rule, schema.rs)."""
    section, name = key.split(".")[0], key.rsplit(".", 1)[1]
    return SCHEMA[section][name].get("requires", {})


def _cable_tables(raw):
    """(prefix in PARAMS, table) of the upstream and of each modem group ``raw`` writes."""
    return [("upstream", raw.get("upstream", {}))] + [(MODEM, group) for group in raw.get("modems", [])]


def _current(raw, kind, name, group):
    """The value of required key ``name`` ("upstream.x" or "modems.*.x", the same group's) in ``raw``."""
    section, rest = name.split(".", 1)
    table = group if section == "modems" else raw.get(section, {})
    leaf = rest.removeprefix("*.")
    return table.get(leaf, PARAM_BY_KEY[name].default_for(kind))


def _with_a_mac_they_need(draw, raw, kind):
    """``raw`` with an upstream.mac drawn from those its MAC keys need when its own MAC does not do: the
    upstream's MAC keys and the modem groups' (all but count) need a request/grant MAC (schema.toml
    ``requires``; a FIFO upstream refuses them, issue 26, defect 4)."""
    if kind not in CABLE:
        return raw
    mac = raw.get("upstream", {}).get("mac", PARAM_BY_KEY["upstream.mac"].default_for(kind))
    needs = [set(_requires(key)["upstream.mac"]) for prefix, table in _cable_tables(raw)
             for name, value in table.items() for key in [f"{prefix}.{name}"]
             if "upstream.mac" in _requires(key) and value != PARAM_BY_KEY[key].default_for(kind)]
    if not needs or all(mac in macs for macs in needs):
        return raw
    macs = set.intersection(*needs) or set.union(*needs)  # none fits all: _valid_requires drops the others
    return {**raw, "upstream": {**raw.get("upstream", {}), "mac": draw(st.sampled_from(sorted(macs)))}}


def _valid_requires(raw, kind):
    """``raw`` without the upstream and modem-group keys set off their default whose ``requires`` it does not
    meet (the MAC keys under a FIFO upstream; ACK spacing but under 802.14 with fixed contention):
    dropped, they take their defaults. Until none is left: a key dropped may be one another requires."""
    def met(prefix, name, value, group):
        return value == PARAM_BY_KEY[f"{prefix}.{name}"].default_for(kind) or all(
            _current(raw, kind, other, group) in allowed for other, allowed in _requires(f"{prefix}.{name}").items())

    while True:
        kept = {**raw}
        if "upstream" in raw:
            kept["upstream"] = {n: v for n, v in raw["upstream"].items() if met("upstream", n, v, {})}
        if "modems" in raw:
            kept["modems"] = [{n: v for n, v in g.items() if met(MODEM, n, v, g)} for g in raw["modems"]]
        if kept == raw:
            return raw
        raw = kept


def _valid_channels(raw, kind):
    """``raw`` without upstream.channels, upstream.load_balancing, modems.*.channel and
    modems.*.bonded_channels unless they meet the engine's rules (rules.rs): one channel, or several
    under a MAC with a modem group on each (a bonded group on its channel and the next
    bonded_channels - 1) unless the CMTS balances them; a bonded group within the channels;
    balancing with several channels."""
    upstream, groups = raw.get("upstream", {}), raw.get("modems", [])
    n = upstream.get("channels", 1)
    spans = [(group.get("channel", 0), group.get("bonded_channels", 1)) for group in groups]
    used = {c for first, k in spans for c in range(first, first + k)}
    mac = upstream.get("mac", PARAM_BY_KEY["upstream.mac"].default_for(kind))
    balanced = upstream.get("load_balancing", "static") != "static"
    if all(first + k <= n for first, k in spans) and (
            (n == 1 and not balanced) or (mac != "fifo" and n > 1 and (balanced or used == set(range(n))))):
        return raw
    drop = ("channels", "load_balancing")
    raw = {**raw, "upstream": {k: v for k, v in upstream.items() if k not in drop}} if "upstream" in raw else raw
    if groups:
        raw = {**raw, "modems": [{k: v for k, v in group.items() if k not in ("channel", "bonded_channels")}
                                 for group in groups]}
    return raw


def _valid_rates(raw):
    """``raw`` without a bottleneck rate_pps or a DOCSIS downstream that is below 1 b/s on the wire
    (the engine's rules, rules.rs): dropped, they take their defaults."""
    network, tcp = raw.get("network", {}), raw.get("tcp", {})
    packet = tcp.get("mss_bytes", 1460) + tcp.get("header_bytes", 40)
    if "rate_pps" in network and network["rate_pps"] * packet * 8 < 1:
        raw = {**raw, "network": {k: v for k, v in network.items() if k != "rate_pps"}}
    network = raw.get("network", {})
    if network.get("kind") == "docsis":
        payload = docsis.downstream_payload_bps(
            network.get("downstream_bps", PARAM_BY_KEY["network.downstream_bps"].default_for("docsis")),
            rs_n=network.get("rs_n", docsis.RS_N), rs_k=network.get("rs_k", docsis.RS_K),
            mpeg_packet_bytes=network.get("mpeg_packet_bytes", docsis.MPEG_PACKET_BYTES),
            mpeg_header_bytes=network.get("mpeg_header_bytes", docsis.MPEG_HEADER_BYTES))
        if payload < 1:
            drop = {"downstream_bps", "rs_n", "rs_k", "mpeg_packet_bytes", "mpeg_header_bytes"}
            raw = {**raw, "network": {k: v for k, v in network.items() if k not in drop}}
    return raw


TODAY_KEYS = ("sack", "rack", "tlp", "prr", "limited_transmit", "reno_reordering", "frto", "undo", "byte_counting")


def _tcp_conflict(tcp):
    """The keys of the first of the engine's rules on TCP keys that table ``tcp`` breaks (schema.toml
    ``requires``; rules.rs: the first timeout, today's sender and its 1990s rules, the scalable controls
    with their ECN, the rules of one control), judged on the values resolved under its stack; empty if
    none."""
    from hfcsim.scenario import _resolve_dict

    r = _resolve_dict({"tcp": tcp})["tcp"]
    for name, value in r.items():  # schema.toml requires, in the file's order
        requires = SCHEMA["tcp"][name].get("requires", {}) if isinstance(SCHEMA["tcp"][name], dict) else {}
        if value != PARAM_BY_KEY[f"tcp.{name}"].default:
            for other, allowed in requires.items():
                if r[other.split(".")[1]] not in allowed:
                    return {name, other.split(".")[1]}
    if r["timer"] == "linux" and r["initial_rto_s"] is not None and r["initial_rto_s"] < r["min_rto_s"]:
        return {"initial_rto_s", "min_rto_s", "timer"}
    if r["timestamps"] and r["mss_bytes"] <= 12 or r["mss_bytes"] + r["header_bytes"] > 65535:
        return {"timestamps", "mss_bytes", "header_bytes"}
    cc, ecn = r["congestion_control"], r["ecn"]
    if (cc in ("dctcp", "prague")) != (ecn == "l4s"):
        return {"congestion_control", "ecn"}
    today = any(r[k] for k in TODAY_KEYS) or cc != "reno" or ecn != "off" or r["pacing"]
    conflicts = {"variant": r["variant"] != "newreno", "header_prediction": r["header_prediction"],
                 "deflate_at_threshold": not r["deflate_at_threshold"],
                 "output_after_fast_retransmit": not r["output_after_fast_retransmit"],
                 "fast_recovery": r["fast_recovery"] != "bsd", "recover_guard": r["recover_guard"] is False}
    if today and any(conflicts.values()):
        return {k for k, on in conflicts.items() if on} | {*TODAY_KEYS, "congestion_control", "ecn", "pacing"}
    reno, bsd = r["variant"] == "reno", r["fast_recovery"] == "bsd"  # rules.rs net3_rules
    for name, broken in (("fast_recovery", not bsd and not reno),
                         ("header_prediction", r["header_prediction"] and not (bsd and r["variant"] != "tahoe")),
                         ("deflate_at_threshold", not r["deflate_at_threshold"] and not (bsd and reno)),
                         ("output_after_fast_retransmit",
                          not r["output_after_fast_retransmit"] and r["variant"] == "tahoe")):
        if broken:
            return {name, "variant", "fast_recovery"}
    acts = {"hystart": cc == "cubic", "cubic_linux_friendliness": cc == "cubic", "byte_counting": cc == "reno",
            "prr": cc != "bbr", "pacing": cc != "bbr",
            "slow_start_at_ssthresh": not today or (cc == "reno" and not r["byte_counting"])}
    for name, ok in acts.items():
        if (r[name] if name != "slow_start_at_ssthresh" else not r[name]) and not ok:
            return {name, "congestion_control", "byte_counting", *TODAY_KEYS, "ecn", "pacing"}
    return set()


def _valid_tcp(tcp):
    """``tcp`` within the engine's rules on TCP keys (_tcp_conflict): on a conflict the table's own keys
    involved go, leaving the stack's consistent ones, until none is left (with none of its own left, the
    default stack)."""
    while conflict := _tcp_conflict(tcp):
        own = {k: v for k, v in tcp.items() if k not in conflict}
        own = own if own != tcp else {k: v for k, v in tcp.items() if k != "stack"}
        assert own != tcp, f"a stack's own rules conflict: {tcp} {conflict}"
        tcp = own
    return tcp


def _valid_min_frame(raw, kind):
    """``raw`` without upstream.min_frame_s unless the MAC is DOCSIS and it is at most frame_s."""
    upstream = raw.get("upstream", {})
    if upstream.get("min_frame_s") is None:
        return raw
    mac = upstream.get("mac", PARAM_BY_KEY["upstream.mac"].default_for(kind))
    frame = upstream.get("frame_s", PARAM_BY_KEY["upstream.frame_s"].default)
    if mac == "docsis" and upstream["min_frame_s"] <= frame:
        return raw
    return {**raw, "upstream": {k: v for k, v in upstream.items() if k != "min_frame_s"}}


def _valid_frame(raw, kind):
    """``raw`` within the engine's cross-key rule on a request/grant frame (rules.rs: room for the contention
    slots and a data unit, 3 slots with 802.14): if it breaks it, without the frame's keys, then without
    network.upstream_bps (a few b/s), and at last with the FIFO upstream (whose MAC keys _valid_requires
    then drops: a FIFO upstream refuses them). Dropped keys take their defaults."""
    if not _frame_breaks(raw, kind):
        return raw
    frame_keys = ("frame_s", "minislot_bytes", "contention_slots", "data_slot_minislots")
    raw = {**raw, "upstream": {k: v for k, v in raw.get("upstream", {}).items() if k not in frame_keys}}
    if not _frame_breaks(raw, kind):
        return raw
    raw = {**raw, "network": {k: v for k, v in raw["network"].items() if k != "upstream_bps"}}
    return {**raw, "upstream": {**raw["upstream"], "mac": "fifo"}} if _frame_breaks(raw, kind) else raw


def _frame_breaks(raw, kind):
    upstream = {p.name: p.default_for(kind) for p in _params("upstream", kind)} | raw.get("upstream", {})
    if not upstream or upstream["mac"] == "fifo":  # no cable upstream on this network, or no frames
        return False
    rate = raw["network"].get("upstream_bps", PARAM_BY_KEY["network.upstream_bps"].default_for(kind))
    # The engine holds the rate as a u64 (a rate past it saturates), then as f64 again.
    rate = float(min(int(rate), 2**64 - 1))
    # Minislots per frame: frame_s at the upstream rate, to the nearest, in a u32 (access/channel.rs
    # minislots_per_frame).
    slots = min(max(1, round(upstream["frame_s"] * rate / (8 * upstream["minislot_bytes"]))), 2**32 - 1)
    unit = upstream["data_slot_minislots"] if upstream["mac"] == "ieee802.14" else 1
    return upstream["contention_slots"] + unit > slots or (upstream["mac"] == "ieee802.14"
                                                           and upstream["contention_slots"] < 3)


def _given(raw):
    for section, table in raw.items():
        rows = enumerate(table) if section in ("flows", "modems") else [(None, table)]
        for index, entries in rows:
            for name, value in entries.items():
                yield ".".join(str(p) for p in (section, index, name) if p is not None), value


@settings(max_examples=200, deadline=None)
@given(raw_scenarios())
def test_any_resolved_scenario_round_trips_through_json(raw):
    scenario = resolve(raw)
    document = scenario.to_json()
    again = resolve(json.loads(document))
    assert again == scenario
    assert again.to_json() == document
    assert json.loads(document) == scenario.to_dict()


@settings(max_examples=200, deadline=None)
@given(raw_scenarios())
def test_resolution_keeps_every_given_value(raw):
    scenario = resolve(raw)
    for key, value in _given(raw):
        assert scenario.get(key) == value


def _as_sets(raw):
    """``raw`` written as --set KEY=VALUE overrides (a JSON literal is a TOML literal here)."""
    kind = raw["network"].get("kind")
    sets = [f"network.kind={kind}"] if kind else []
    sets += [f"{key}={json.dumps(value)}"
             for key, value in _given({k: v for k, v in raw.items() if k not in ("flows", "modems")})
             if value is not None and key != "network.kind"]
    for i, group in enumerate(raw.get("modems", [])):
        sets.append(f"modems.{i}.count={group.get('count', 1)}")  # creates group i, even an empty one
        sets += [f"modems.{i}.{name}={json.dumps(value)}" for name, value in group.items() if value is not None]
    for i, flow in enumerate(raw.get("flows", [])):
        sets.append(f"flows.{i}.modem={flow.get('modem', 0)}")  # creates flow i, even an empty one
        sets += [f"flows.{i}.{name}={json.dumps(value)}" for name, value in flow.items() if value is not None]
    return sets


def _null_not_default(raw):
    """Whether ``raw`` sets a key to null whose default (or its stack's value) is not null
    (network.driver_buffer_packets, tcp.recover_guard under ns2): TOML has no null, so no --set can write it."""
    stack = raw.get("tcp", {}).get("stack", stacks.DEFAULT_STACK)

    def absent(key):  # what resolution gives the key when --set leaves it out: the stack's, else the default
        section, name = _schema_key(key).split(".")[0], _schema_key(key).rsplit(".", 1)[1]
        return stacks.STACKS[stack].get(section, {}).get(name, PARAM_BY_KEY[_schema_key(key)].default)
    return any(value is None and absent(key) is not None for key, value in _given(raw))


@settings(max_examples=100, deadline=None)
@given(raw_scenarios())
def test_set_reproduces_any_scenario_from_the_defaults(raw):
    assume(not _null_not_default(raw))
    assert load(None, _as_sets(raw)) == resolve(raw)
