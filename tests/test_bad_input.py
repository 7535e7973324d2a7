"""Regression tests for input that once crashed (issue: bad input and extreme values). Each case gave
a traceback on the main of 2026-11-22; each must now give one line naming the key (ScenarioError,
exit 2)."""

from __future__ import annotations

import types

import pytest

import hfcsim
from hfcsim.errors import ScenarioError
from hfcsim.scenario import (APP_SECTIONS, LIST_SECTIONS, MAX_DEPTH, MAX_INT, MAX_U32, PARAM_BY_KEY, apply_set, load,
                             read_file)


def _nested(levels: int) -> dict:
    raw: dict = {}
    node = raw
    for _ in range(levels):
        node["a"] = {}
        node = node["a"]
    return raw


def _deep_list(levels: int) -> str:
    return "[" * levels + "]" * levels


def _nested_list(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


API_CASES = [
    # (raw scenario, fragments of the one-line message)
    (_nested(500), ["nested more than 16 levels deep"]),  # was RecursionError
    ({"network": {"rtt_s": _nested_list(500)}}, ["network.rtt_s.0.0", "nested more than"]),
    ({"preset": [1]}, ["preset = [1]", "must be one of"]),  # was TypeError: unhashable
    ({"preset": {"a": 1}}, ["preset", "must be one of"]),
    ({"network": types.MappingProxyType({"rtt_s": -1.0})}, ["network.rtt_s = -1"]),  # was a pickling TypeError
    ({"tcp": {"header_bytes": 64076}}, ["tcp.header_bytes = 64076", "65535 (RFC 791)"]),
    ({"tcp": {"initial_window": MAX_U32 + 1}}, ["tcp.initial_window = 4294967296", "[1, 4294967295]"]),
    ({"flows": [{"modem": MAX_U32 + 1}]}, ["flows.0.modem = 4294967296", "[0, 4294967295]"]),
    ({"flows": [{"drop_packets": [MAX_U32 + 1]}]}, ["flows.0.drop_packets", "each in [1, 4294967295]"]),
    ({"modems": [{"count": 100000, "downloads": 100}] * 2}, ["flows:", "at most 250000 in all"]),
    # One past the limit (issue 26, defect 3: about 4 KB a flow; 250,000 take about 1 GB).
    ({"modems": [{"count": 2501, "downloads": 100}]}, ["flows: 0 given and 250100 from modems.*.downloads",
                                                       "at most 250000 in all"]),
    ({"modems": [{"count": 100000}] * 11}, ["modems: 1100000 modems", "at most 1000000"]),
    # A rate below 0.5 b/s rounded to 0 in the engine, an infinitely fast link (3.08 Mb/s at 0.4 b/s).
    ({"network": {"downstream_bps": 0.4}}, ["network.downstream_bps = 0.4", ">= 1"]),
    ({"network": {"cm_lan_bps": 0.4}}, ["network.cm_lan_bps = 0.4", ">= 1"]),
    ({"network": {"kind": "bottleneck", "rate_pps": 1e-5}}, ["network.rate_pps = 1e-05", "at least 1 needed"]),
    ({"network": {"kind": "docsis", "ds_rate_bps": 1e-3}}, ["network.ds_rate_bps", ">= 1"]),  # was a panic
    ({"network": {"kind": "docsis", "downstream_bps": 1.0, "rs_k": 1, "rs_n": 1000}},
     ["network.downstream_bps = 1", "after Reed-Solomon and MPEG framing"]),
    ({"network": {"kind": "atm_hfc", "bottleneck_schedule": [[1, 0.4]]}}, ["bottleneck_schedule", "bps = 0.4"]),
    # A duration below 1 ns rounded to a 0 ns tick.
    ({"tcp": {"tick_s": 5e-324}}, ["tcp.tick_s", "[1e-9, 1e9]"]),
    ({"receiver": {"delack_tick_s": 1e-12}}, ["receiver.delack_tick_s", "1e-9"]),
]


@pytest.mark.parametrize("raw,fragments", API_CASES)
def test_api_input_gets_one_line(raw, fragments, one_line_error):
    one_line_error(raw, fragments)


def test_a_mappingproxy_runs_like_a_dict():
    proxy = hfcsim.simulate({"network": types.MappingProxyType({"rtt_s": 0.01}), "flows": [{"bytes": 10000}]})
    plain = hfcsim.simulate({"network": {"rtt_s": 0.01}, "flows": [{"bytes": 10000}]})
    assert proxy.flows == plain.flows


SET_CASES = [
    ("flows.\u00b2.bytes=5", ["flows.\u00b2.bytes", "address its items by index"]),  # was ValueError from int()
    ("flows.\u0663.bytes=5", ["flows.\u0663.bytes", "address its items by index"]),  # Arabic-Indic three
    ("network.rtt_s=" + _deep_list(600), ["--set network.rtt_s", "nested too deeply"]),  # was RecursionError
    ("network.rtt_s=" + _deep_list(20), ["network.rtt_s.0.0", "nested more than"]),
    ("preset=[1]", ["preset = [1]"]),
]


@pytest.mark.parametrize("assignment,fragments", SET_CASES)
def test_set_gets_one_line(assignment, fragments):
    with pytest.raises(ScenarioError) as info:
        load(None, [assignment])
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


FILE_CASES = [
    # (file name, content, fragments)
    ("deep.toml", "x = " + _deep_list(600) + "\n", ["nested too deeply"]),  # tomllib: RecursionError
    ("deep.json", _deep_list(100_000), ["nested too deeply"]),  # json: RecursionError
    ("shallow-enough.toml", "[network]\nrtt_s = " + _deep_list(MAX_DEPTH + 1) + "\n", ["nested more than"]),
    ("preset.toml", "preset = [1]\n", ["preset = [1]"]),
    ("binary.toml", b"\xff\xfe\x00", ["invalid TOML"]),
]


@pytest.mark.parametrize("name,content,fragments", FILE_CASES)
def test_scenario_file_gets_one_line(tmp_path, name, content, fragments):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ScenarioError) as info:
        load(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    for fragment in fragments:
        assert fragment in message


def test_an_endless_file_is_refused_without_reading_it_all():
    # /dev/zero was read whole: MemoryError (or the OOM killer) instead of one line.
    with pytest.raises(ScenarioError, match="/dev/zero: larger than 64 MB"):
        read_file("/dev/zero")


@pytest.mark.parametrize("key", [p.key for p in PARAM_BY_KEY.values() if p.type in (int, list) and p.engine])
def test_every_integer_key_at_its_largest_reaches_the_engine(key):
    # The schema states the engine's true ranges: at the largest value it allows, the engine takes the
    # document (a u32 field once got 2^63 - 1 and serde's error named no key) and runs without panic.
    p = PARAM_BY_KEY[key]
    largest = p.le if p.le is not None else p.lt - 1 if p.lt is not None else MAX_INT
    kind = p.network[0] if p.network else "hfc"
    raw = {"network": {"kind": kind}, "sim": {"time_limit_s": 0.01}}
    section, *_, name = key.split(".")
    value = [largest] if p.type is list else largest
    if section in LIST_SECTIONS:
        raw[section] = [{name: value}]
    else:
        raw.setdefault(section, {})[name] = value
    try:
        result = hfcsim.simulate(raw)
    except ScenarioError as e:  # a cross-key rule (e.g. a modem beyond the groups' count): one line
        assert "\n" not in str(e) and "engine" not in str(e), str(e)
    else:
        assert result.flows or section in APP_SECTIONS  # an application alone runs without a flow


def test_apply_set_indices_are_ascii():
    assert apply_set({}, "flows.0.bytes=5") == {"flows": [{"bytes": 5}]}


@pytest.mark.parametrize("spec,fragments", [
    ({"base": {}, "grid": {"flows.\u00b2.bytes": [1000]}}, ["grid", "flows.\u00b2.bytes"]),  # was ValueError
    ({"base": {"preset": [1]}, "grid": {"flows.0.bytes": [1000]}}, ["base", "preset = [1]"]),  # was TypeError
])
def test_sweep_spec_gets_one_line(spec, fragments):
    from hfcsim import sweep

    with pytest.raises(ScenarioError) as info:
        sweep.define(spec, runs=1)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_a_bottleneck_buffer_of_zero_serves_what_finds_the_link_idle():
    # buffer_packets = 0 dropped every packet, even on an idle link: the run never delivered a byte.
    # Now it is no waiting room: the window's first packet passes, those behind it are dropped.
    result = hfcsim.simulate({"network": {"kind": "bottleneck", "buffer_packets": 0},
                              "flows": [{"bytes": 30000}], "sim": {"time_limit_s": 600}})
    flow = result.flows[0]
    assert flow["finished"] and flow["delivered_bytes"] == 30000
    assert flow["timeouts"] > 0 or flow["fast_retransmits"] > 0 or flow["retransmitted_segments"] == 0


def test_a_flow_on_modem_65536_has_its_own_cm_buffer():
    # Routing ids were 16 bits: modem 65536 shared modem 0's buffer and LAN. A 5-packet CM buffer
    # holds one flow's 8 KB window: two flows on modems 0 and 65536 lose nothing to it, two on one
    # modem do.
    raw = {"network": {"cm_buffer_packets": 5},
           "flows": [{"modem": 0, "bytes": 200000}, {"modem": 65536, "bytes": 200000}]}
    apart = hfcsim.simulate(raw).flows
    same = hfcsim.simulate({**raw, "flows": [{"modem": 0, "bytes": 200000}, {"modem": 0, "bytes": 200000}]}).flows
    assert [f["cm_buffer_drops"] for f in apart] == [0, 0]
    assert sum(f["cm_buffer_drops"] for f in same) > 0
    # Modem 65535 is a modem like any other: its data goes down the downstream (it went up once).
    for modem in (65535, 4294967295):
        flow = hfcsim.simulate({"flows": [{"modem": modem, "bytes": 300000}]}).flows[0]
        assert flow["throughput_bps"] > 2.3e6 and flow["finished"], (modem, flow["throughput_bps"])
