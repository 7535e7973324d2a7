"""The upstream MAC keys (``upstream.*``) and the modem groups (``[[modems]]``): defaults, errors, --set,
the expansion of a group's downloads into flows, the example files, and the engine accepting the JSON.

Only the last tests need the compiled engine; they ask that it accepts and runs these scenarios (the
results of its request/grant MACs are tests/test_mac_results.py's).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hfcsim import simulate
from hfcsim.cli import build_parser
from hfcsim.scenario import PARAM_BY_KEY, SCHEMA, Scenario, ScenarioError, load, resolve

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"

# ---------------------------------------------------------------------------------------------------
# Defaults, written out by hand from the sources (Elloumi Table 1, Nguyen & Armitage Sec. II, DOCSIS).

UPSTREAM_DEFAULTS = [
    ("upstream.mac", "fifo"),
    ("upstream.minislot_bytes", 16),
    ("upstream.frame_s", 0.002),
    ("upstream.contention", "leftover"),
    ("upstream.contention_slots", 8),
    ("upstream.data_slot_minislots", 4),
    ("upstream.scheduler", "fcfs"),
    ("upstream.max_request", 255),
    ("upstream.piggyback", False),
    ("upstream.concatenation", False),
    ("upstream.fragmentation", False),
    ("upstream.max_burst_bytes", 1600),
    ("upstream.headend_delay_s", 0.001),
    ("upstream.backoff_start", 3),
    ("upstream.backoff_end", 10),
    ("upstream.max_retries", 16),
    ("upstream.burst_overhead_bytes", 5),
    ("upstream.frame_overhead_bytes", 24),
    ("upstream.delay_s_per_km", 5e-6),
]

MODEM_DEFAULTS = [  # of a group written as [[modems]] with no keys
    ("modems.0.count", 1),
    ("modems.0.distance_km_min", 0.0),
    ("modems.0.distance_km_max", 0.0),
    ("modems.0.queue_packets", None),
    ("modems.0.queue_bytes", None),
    ("modems.0.background_load", 0.0),
    ("modems.0.background_bytes", 48),
]

# Python-side keys: they expand into flows and are not in the resolved scenario.
DOWNLOAD_DEFAULTS = [
    ("modems.*.downloads", 0),
    ("modems.*.download_bytes", 1_000_000_000_000),
    ("modems.*.start_spread_s", 0.0),
]


@pytest.mark.parametrize(("key", "expected"), UPSTREAM_DEFAULTS)
def test_upstream_default(key, expected):
    value = Scenario().get(key)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(("key", "expected"), MODEM_DEFAULTS)
def test_modem_group_default(key, expected):
    value = Scenario({"modems": [{}]}).get(key)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(("key", "expected"), DOWNLOAD_DEFAULTS)
def test_download_key_default(key, expected):
    assert PARAM_BY_KEY[key].default == expected
    assert not PARAM_BY_KEY[key].engine


def test_no_groups_by_default_and_one_download():
    resolved = Scenario().to_dict()
    assert resolved["modems"] == []
    assert [(f["modem"], f["bytes"]) for f in resolved["flows"]] == [(0, 3_000_000)]


def test_download_keys_do_not_reach_the_engine():
    resolved = json.loads(Scenario({"modems": [{"downloads": 1, "start_spread_s": 1.0}]}).to_json())
    assert not {"downloads", "download_bytes", "start_spread_s"} & set(resolved["modems"][0])


def test_bottleneck_has_neither_upstream_nor_modems():
    resolved = Scenario({"network": {"kind": "bottleneck"}, "upstream": {}, "modems": []}).to_dict()
    assert "upstream" not in resolved and "modems" not in resolved


# ---------------------------------------------------------------------------------------------------
# Bad input: one line naming the key, the value and what is allowed.

TWO_GROUPS = [{"count": 2}, {"count": 3}]  # modems 0..4

BAD = [
    # wrong type
    ({"upstream": {"minislot_bytes": 16.0}}, ["upstream.minislot_bytes = 16.0", "must be an integer in [1, 65535]"]),
    ({"upstream": {"piggyback": "yes"}}, ["upstream.piggyback", '"yes"', "true or false"]),
    ({"upstream": {"frame_s": "2ms"}}, ["upstream.frame_s", '"2ms"', "must be a number"]),
    ({"modems": [{"count": "many"}]}, ["modems.0.count", '"many"', "must be an integer"]),
    ({"modems": [{}, {"background_load": True}]}, ["modems.1.background_load", "true", "must be a number"]),
    ({"modems": {"count": 3}}, ["modems", '{"count": 3}', "list of tables ([[modems]])"]),
    ({"upstream": 3}, ["upstream = 3", "must be a table ([upstream])"]),
    # out of range
    ({"upstream": {"minislot_bytes": 0}}, ["upstream.minislot_bytes = 0", "in [1, 65535]"]),
    ({"upstream": {"frame_s": 0}}, ["upstream.frame_s = 0", "[1e-9, 1]"]),
    ({"upstream": {"frame_s": 1.5}}, ["upstream.frame_s = 1.5", "[1e-9, 1]"]),
    ({"upstream": {"contention_slots": 0}}, ["upstream.contention_slots = 0", "in [1, 4294967295]"]),
    ({"upstream": {"data_slot_minislots": 0}}, ["upstream.data_slot_minislots = 0", "in [1, 4294967295]"]),
    ({"upstream": {"max_request": 256}}, ["upstream.max_request = 256", "[1, 255]"]),
    ({"upstream": {"max_request": 0}}, ["upstream.max_request = 0", "[1, 255]"]),
    ({"upstream": {"max_burst_bytes": 0}}, ["upstream.max_burst_bytes = 0", "in [1, 65535]"]),
    ({"upstream": {"headend_delay_s": -0.001}}, ["upstream.headend_delay_s = -0.001", "[0, 1]"]),
    ({"upstream": {"backoff_start": 16}}, ["upstream.backoff_start = 16", "[0, 15]"]),
    ({"upstream": {"backoff_end": -1}}, ["upstream.backoff_end = -1", "[0, 15]"]),
    ({"upstream": {"max_retries": 0}}, ["upstream.max_retries = 0", "[1, 1000]"]),
    ({"upstream": {"burst_overhead_bytes": -1}}, ["upstream.burst_overhead_bytes = -1", "in [0, 65535]"]),
    ({"upstream": {"frame_overhead_bytes": -1}}, ["upstream.frame_overhead_bytes = -1", "in [0, 65535]"]),
    ({"upstream": {"delay_s_per_km": -5e-6}}, ["upstream.delay_s_per_km", "[0, 1]"]),
    ({"modems": [{"count": 0}]}, ["modems.0.count = 0", "[1, 100000]"]),
    # a frame that could never grant data or resolve a collision
    ({"upstream": {"mac": "ieee802.14", "contention": "fixed", "contention_slots": 2}},
     ["upstream.contention_slots = 2", ">= 3 with ieee802.14"]),
    ({"upstream": {"mac": "docsis", "contention_slots": 47}},
     ["upstream.contention_slots = 47", "no room for data", "holds 47 minislot(s)"]),
    ({"upstream": {"mac": "ieee802.14", "frame_s": 0.00227, "contention_slots": 50}},
     ["upstream.contention_slots = 50", "holds 53 minislot(s)", "upstream.data_slot_minislots = 4"]),
    ({"modems": [{"count": 100_001}]}, ["modems.0.count = 100001", "[1, 100000]"]),
    ({"modems": [{"distance_km_max": 1001}]}, ["modems.0.distance_km_max = 1001", "[0, 1000]"]),
    ({"modems": [{"queue_packets": 0}]}, ["modems.0.queue_packets = 0", ">= 1"]),
    ({"modems": [{"queue_bytes": 0}]}, ["modems.0.queue_bytes = 0", ">= 1"]),
    ({"modems": [{"background_load": 1.0}]}, ["modems.0.background_load = 1.0", "[0, 1)"]),
    ({"modems": [{"background_bytes": 0}]}, ["modems.0.background_bytes = 0", "in [1, 65535]"]),
    ({"modems": [{"downloads": 101}]}, ["modems.0.downloads = 101", "[0, 100]"]),
    ({"modems": [{"download_bytes": 0}]}, ["modems.0.download_bytes = 0", ">= 1"]),
    ({"modems": [{"start_spread_s": -1}]}, ["modems.0.start_spread_s = -1", "[0, 1e9]"]),
    # bad choice, with a suggestion
    ({"upstream": {"mac": "802.14"}}, ["upstream.mac", '"802.14"', '"fifo", "ieee802.14", "docsis"',
                                       'did you mean "ieee802.14"?']),
    ({"upstream": {"mac": "DOCSIS"}}, ["upstream.mac", 'did you mean "docsis"?']),
    ({"upstream": {"scheduler": "round-robin"}}, ["upstream.scheduler", '"fcfs", "rr"']),
    ({"upstream": {"contention": "fixd"}}, ["upstream.contention", 'did you mean "fixed"?']),
    # relations between keys (under a MAC: set off their defaults, its keys need one, issue 26, defect 4)
    ({"upstream": {"mac": "docsis", "backoff_start": 11}},
     ["upstream.backoff_start = 11", "upstream.backoff_end (10)"]),
    ({"upstream": {"mac": "docsis", "backoff_start": 5, "backoff_end": 4}},
     ["upstream.backoff_start = 5", "upstream.backoff_end (4)"]),
    ({"upstream": {"mac": "ieee802.14"}, "modems": [{"distance_km_min": 25.0, "distance_km_max": 20.0}]},
     ["modems.0.distance_km_min = 25.0", "<= modems.0.distance_km_max (20.0)"]),
    ({"upstream": {"mac": "ieee802.14"}, "modems": [{}, {"distance_km_min": 1}]},
     ["modems.1.distance_km_min = 1", "modems.1.distance_km_max (0.0)"]),
    ({"upstream": {"mac": "docsis"}, "modems": [{"queue_packets": 64, "queue_bytes": 4096}]},
     ["modems.0.queue_bytes = 4096", "only one of modems.0.queue_packets and modems.0.queue_bytes",
      "modems.0.queue_packets = 64"]),
    ({"modems": TWO_GROUPS, "flows": [{"modem": 5}]}, ["flows.0.modem = 5", "< 5", "modems 0..4"]),
    ({"modems": TWO_GROUPS, "flows": [{}, {"modem": 7}]}, ["flows.1.modem = 7", "< 5"]),
    ({"modems": [{"count": 1}], "flows": [{"modem": 1}]}, ["flows.0.modem = 1", "< 1", "modems 0..0"]),
    ({"flows": []}, ["flows = []", "at least one flow", "modems.*.downloads"]),
    ({"modems": [{"downloads": 0}], "flows": []}, ["flows = []", "at least one flow"]),
    # only with the HFC network
    ({"network": {"kind": "bottleneck"}, "upstream": {"mac": "docsis"}},
     ["upstream.mac", '"docsis"', 'only valid with network.kind = "hfc"', '(network.kind is "bottleneck")']),
    ({"network": {"kind": "bottleneck"}, "modems": [{"count": 3}]},
     ["modems.0.count = 3", 'only valid with network.kind = "hfc"']),
    ({"network": {"kind": "bottleneck"}, "modems": [{}]}, ["modems = [{}]", 'only valid with network.kind = "hfc"']),
    # unknown keys
    ({"modems": [{"cout": 1000}]}, ["unknown key modems.0.cout = 1000", "did you mean modems.0.count?"]),
    ({"modems": [{}, {"cout": 2}]}, ["unknown key modems.1.cout", "did you mean modems.1.count?"]),
    ({"upstream": {"minislot": 16}}, ["unknown key upstream.minislot", "did you mean upstream.minislot_bytes?"]),
    ({"network": {"max_request": 32}}, ["unknown key network.max_request", "did you mean upstream.max_request?"]),
    ({"upstrem": {}}, ["unknown key upstrem", "did you mean upstream?"]),
    ({"modem": [{}]}, ["unknown key modem", "did you mean modems?"]),
]


@pytest.mark.parametrize(("raw", "fragments"), BAD)
def test_bad_mac_scenario_raises_one_line_error(raw, fragments, one_line_error):
    one_line_error(raw, fragments)


# ---------------------------------------------------------------------------------------------------
# --set, through the CLI's parser


@pytest.mark.parametrize(("argv", "key", "expected"), [
    (["--set", "modems.0.count=5"], "modems.0.count", 5),
    (["--set", "upstream.mac=ieee802.14", "--set", "modems.0.count=5", "--set", "modems.1.distance_km_max=200"],
     "modems.1.distance_km_max", 200.0),
    (["--set", "upstream.mac=ieee802.14", "--set", "modems.0.count=5", "--set", "modems.1.distance_km_max=200"],
     "modems.1.count", 1),
    (["--set", "upstream.mac=docsis"], "upstream.mac", "docsis"),
    (["--set", "upstream.mac=ieee802.14"], "upstream.mac", "ieee802.14"),
    (["--set", "upstream.mac=docsis", "--set", "upstream.piggyback=true"], "upstream.piggyback", True),
    (["--set", "modems.0.count=3", "--set", "modems.0.downloads=1"], "flows.2.modem", 2),
    ([str(SCENARIOS / "elloumi-802.14.toml"), "--set", "modems.1.count=50"], "modems.1.count", 50),
])
def test_set_through_the_cli_parser(argv, key, expected):
    args = build_parser().parse_args(["run", *argv])
    assert load(args.scenario, args.sets).get(key) == expected


@pytest.mark.parametrize(("sets", "fragment"), [
    (["modems.0.cout=5"], "unknown key modems.0.cout = 5 (did you mean modems.0.count?)"),
    (["modems.1.count=5"], "index 1 out of range: modems has 0 item(s); modems.0 adds the next one"),
    (["modems.first.count=5"], "modems is a list: address its items by index"),
    (["upstream.mac=aloha"], 'upstream.mac = "aloha": must be one of "fifo", "ieee802.14", "docsis"'),
    (["network.kind=bottleneck", "upstream.mac=docsis"], 'only valid with network.kind = "hfc"'),
])
def test_bad_set_exits_2_with_one_line(hfcsim_cli, sets, fragment):
    status, out, err = hfcsim_cli(["run", *(arg for s in sets for arg in ("--set", s))])
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and fragment in err


# ---------------------------------------------------------------------------------------------------
# A FIFO upstream (the hfc network's default MAC) has no MAC: set off their defaults, the MAC's keys and
# the modem groups' (all but count) are refused with one line, where they used to be accepted and
# ignored (issue 26, defect 4); under a MAC they are kept.

NEEDS_MAC = [  # (--set assignment, key, value kept under a MAC)
    ("modems.0.background_load=0.9", "modems.0.background_load", 0.9),
    ("modems.0.distance_km_max=1000.0", "modems.0.distance_km_max", 1000.0),
    ("modems.0.queue_packets=1", "modems.0.queue_packets", 1),
    ("upstream.max_burst_bytes=2000", "upstream.max_burst_bytes", 2000),
    ("upstream.piggyback=true", "upstream.piggyback", True),
]


def _fifo_refusal(assignment: str) -> str:
    key, value = assignment.split("=", 1)
    section, *_, name = key.split(".")
    macs = " or ".join(f'"{m}"' for m in SCHEMA[section][name]["requires"]["upstream.mac"])  # schema.toml's
    return f'{key} = {value}: needs upstream.mac = {macs} (upstream.mac is "fifo")'


@pytest.mark.parametrize(("assignment", "key", "value"), NEEDS_MAC)
@pytest.mark.parametrize("fifo", [[], ["upstream.mac=fifo"]], ids=["default-mac", "mac-fifo"])
def test_a_mac_key_under_fifo_is_refused_with_one_line(hfcsim_cli, fifo, assignment, key, value):
    with pytest.raises(ScenarioError) as info:
        load(None, [*fifo, assignment])
    assert str(info.value) == _fifo_refusal(assignment)
    status, out, err = hfcsim_cli(["run", *(arg for s in [*fifo, assignment] for arg in ("--set", s))])
    assert (status, out, err) == (2, "", f"hfcsim: error: {_fifo_refusal(assignment)}\n")


@pytest.mark.parametrize(("assignment", "key", "value"), NEEDS_MAC)
def test_a_mac_key_under_docsis_is_kept(assignment, key, value):
    scenario = load(None, ["upstream.mac=docsis", assignment])
    assert scenario.get(key) == value and type(scenario.get(key)) is type(value)


# ---------------------------------------------------------------------------------------------------
# A group's downloads become flows, after the explicit ones, in modem order.

EXPANSIONS = [
    # (raw, [(modem, bytes, start_s) of every flow])
    ({"modems": [{"count": 3, "downloads": 2, "start_spread_s": 1.5}]},
     [(0, 10**12, 0.0), (0, 10**12, 0.0), (1, 10**12, 0.5), (1, 10**12, 0.5), (2, 10**12, 1.0), (2, 10**12, 1.0)]),
    ({"modems": [{"count": 2, "downloads": 1, "download_bytes": 5000}]}, [(0, 5000, 0.0), (1, 5000, 0.0)]),
    ({"modems": [{"count": 1}, {"count": 2, "downloads": 1, "start_spread_s": 1.0}]}, [(1, 10**12, 0.0), (2, 10**12, 0.5)]),
    ({"modems": [{"count": 2, "downloads": 1}], "flows": [{"modem": 1, "bytes": 300}]},
     [(1, 300, 0.0), (0, 10**12, 0.0), (1, 10**12, 0.0)]),
    ({"modems": [{"count": 1, "downloads": 1}], "flows": []}, [(0, 10**12, 0.0)]),
    # No downloads: flows as without groups (absent = the one default download).
    ({"upstream": {"mac": "ieee802.14"}, "modems": [{"count": 200, "background_load": 0.3}]}, [(0, 3_000_000, 0.0)]),
    ({"modems": [{"count": 4}], "flows": [{"modem": 3}]}, [(3, 3_000_000, 0.0)]),
]


@pytest.mark.parametrize(("raw", "expected"), EXPANSIONS)
def test_downloads_expand_into_flows(raw, expected):
    flows = Scenario(raw).to_dict()["flows"]
    assert [(f["modem"], f["bytes"], f["start_s"]) for f in flows] == expected


def test_generated_flows_are_default_flows():
    default = Scenario().to_dict()["flows"][0]
    (flow,) = Scenario({"modems": [{"downloads": 1, "download_bytes": 3_000_000}]}).to_dict()["flows"]
    assert flow == default


def test_resolved_scenario_resolves_to_itself():
    scenario = Scenario({"modems": [{"count": 3, "downloads": 2, "start_spread_s": 1.5}]})
    assert resolve(json.loads(scenario.to_json())) == scenario  # downloads are not expanded twice


# ---------------------------------------------------------------------------------------------------
# The example files

ELLOUMI = SCENARIOS / "elloumi-802.14.toml"
DOCSIS = SCENARIOS / "docsis-1000-modems.toml"


@pytest.mark.parametrize(("path", "key", "expected"), [
    (ELLOUMI, "network.downstream_bps", 30e6),
    (ELLOUMI, "network.upstream_bps", 3e6),
    (ELLOUMI, "network.kind", "atm_hfc"),
    (ELLOUMI, "network.bottleneck_bps", 6e6),
    (ELLOUMI, "network.bottleneck_delay_s", 0.00125),
    (ELLOUMI, "network.epd_threshold_cells", 160),
    (ELLOUMI, "upstream.mac", "ieee802.14"),
    (ELLOUMI, "upstream.minislot_bytes", 16),
    (ELLOUMI, "upstream.data_slot_minislots", 4),
    (ELLOUMI, "upstream.frame_s", 0.00227),
    (ELLOUMI, "upstream.contention", "fixed"),
    (ELLOUMI, "upstream.contention_slots", 20),
    (ELLOUMI, "upstream.scheduler", "fcfs"),
    (ELLOUMI, "upstream.max_request", 32),
    (ELLOUMI, "upstream.piggyback", False),
    (ELLOUMI, "upstream.headend_delay_s", 0.001),
    (ELLOUMI, "upstream.burst_overhead_bytes", 5),
    (ELLOUMI, "upstream.delay_s_per_km", 5e-6),
    (ELLOUMI, "tcp.variant", "reno"),
    (ELLOUMI, "tcp.mss_bytes", 984),
    (ELLOUMI, "tcp.header_bytes", 40),
    (ELLOUMI, "tcp.tick_s", 0.5),
    (ELLOUMI, "tcp.send_buffer_bytes", 65536),
    (ELLOUMI, "receiver.receive_buffer_bytes", 65536),
    (ELLOUMI, "modems.0.count", 1),
    (ELLOUMI, "modems.0.distance_km_min", 100.0),
    (ELLOUMI, "modems.0.background_load", 0.0),
    (ELLOUMI, "modems.1.count", 200),
    (ELLOUMI, "modems.1.distance_km_min", 25.0),
    (ELLOUMI, "modems.1.distance_km_max", 200.0),
    (ELLOUMI, "modems.1.background_load", 0.3),
    (ELLOUMI, "modems.1.background_bytes", 48),
    (ELLOUMI, "flows.0.modem", 0),
    (ELLOUMI, "flows.0.bytes", 10**12),
    (ELLOUMI, "sim.time_limit_s", 15.0),
    (ELLOUMI, "sim.measure_from_s", 1.0),
    (ELLOUMI, "tcp.initial_ssthresh_bytes", 8192),
    (DOCSIS, "network.downstream_bps", 1e9),
    (DOCSIS, "network.upstream_bps", 100e6),
    (DOCSIS, "network.cm_lan_bps", 1e9),
    (DOCSIS, "network.rtt_s", 0.02),
    (DOCSIS, "upstream.mac", "docsis"),
    (DOCSIS, "upstream.frame_s", 0.002),
    (DOCSIS, "upstream.contention", "leftover"),
    (DOCSIS, "upstream.contention_slots", 32),
    (DOCSIS, "upstream.max_request", 255),
    (DOCSIS, "upstream.piggyback", True),
    (DOCSIS, "upstream.concatenation", True),
    (DOCSIS, "upstream.max_burst_bytes", 1600),
    (DOCSIS, "upstream.headend_delay_s", 0.0005),
    (DOCSIS, "upstream.burst_overhead_bytes", 12),
    (DOCSIS, "upstream.frame_overhead_bytes", 24),
    (DOCSIS, "modems.0.count", 1000),
    (DOCSIS, "modems.0.distance_km_min", 2.0),
    (DOCSIS, "modems.0.distance_km_max", 15.0),
    (DOCSIS, "modems.0.background_load", 0.05),
    (DOCSIS, "modems.0.background_bytes", 100),
    (DOCSIS, "flows.0.start_s", 0.0),
    (DOCSIS, "flows.500.modem", 500),
    (DOCSIS, "flows.500.start_s", 0.5),
    (DOCSIS, "flows.999.bytes", 10**12),
    (DOCSIS, "sim.time_limit_s", 60.0),
], ids=lambda v: v.name if isinstance(v, Path) else None)
def test_example_file_values(path, key, expected):
    assert load(path).get(key) == expected


@pytest.mark.parametrize(("path", "flows", "modems"), [(ELLOUMI, 1, 201), (DOCSIS, 1000, 1000)],
                         ids=["elloumi", "docsis"])
def test_example_file_sizes(path, flows, modems):
    resolved = load(path).to_dict()
    assert len(resolved["flows"]) == flows
    assert sum(group["count"] for group in resolved["modems"]) == modems


# ---------------------------------------------------------------------------------------------------
# hfcsim params


@pytest.mark.parametrize(("key", "fragments"), [
    ("upstream.mac", ['"fifo"', 'one of "fifo", "ieee802.14", "docsis"', "Elloumi"]),
    ("upstream.frame_s", ["0.002", "in [1e-9, 1]", "2.27 ms"]),
    ("upstream.max_request", ["255", "in [1, 255]"]),
    ("modems.*.count", ["1", "in [1, 100000]", '[network.kind = "hfc"]']),
    ("modems.*.queue_bytes", ["absent", ">= 1 (or absent)"]),
    ("modems.*.download_bytes", ["1000000000000", ">= 1"]),
])
def test_params_lists_the_mac_keys(hfcsim_cli, key, fragments):
    status, out, err = hfcsim_cli(["params"])
    assert (status, err) == (0, "")
    (line,) = [line for line in out.splitlines() if line.startswith(key + " ")]
    for fragment in fragments:
        assert fragment in line



@pytest.mark.parametrize(("key", "rules"), [
    ("modems.*.ack_spacing", '[needs upstream.mac = "ieee802.14"] [needs upstream.contention = "fixed"]'),
    ("upstream.max_burst_bytes", '[needs upstream.mac = "docsis"]'),
    ("tcp.rack", '[needs tcp.sack = true]'),
    ("sim.measure_from_s", "[< sim.time_limit_s]"),
    ("modems.*.distance_km_min", '[needs upstream.mac = "ieee802.14" or "docsis"] [<= modems.*.distance_km_max]'),
    ("network.cm_buffer_packets", "[not with network.cm_buffer_bytes]"),
])
def test_params_shows_a_keys_rules_against_other_keys(key, rules):
    # schema.toml's requires, lt_key / le_key / ge_key and excludes, after the networks.
    from hfcsim.scenario import param_rows

    (row,) = [row for row in param_rows() if row[0] == key]
    assert row[3].endswith(rules)


# ---------------------------------------------------------------------------------------------------
# engine: the resolved JSON parses in the engine (deny_unknown_fields) and runs, over the 802.14 MAC (its
# keys need a MAC: a FIFO upstream refuses them, issue 26, defect 4).

TINY = {
    "upstream": {"mac": "ieee802.14", "minislot_bytes": 16, "frame_s": 0.00227, "contention": "fixed",
                 "contention_slots": 20, "scheduler": "rr", "max_request": 32, "piggyback": True},
    "modems": [{"count": 1, "distance_km_min": 100, "distance_km_max": 100, "queue_packets": 64},
               {"count": 4, "distance_km_min": 25, "distance_km_max": 200, "background_load": 0.1,
                "downloads": 1, "download_bytes": 30_000, "start_spread_s": 0.1}],
    "flows": [{"bytes": 30_000, "modem": 0}],
    "sim": {"time_limit_s": 30},
}


def test_engine_accepts_the_mac_keys_and_modem_groups():  # engine
    result = simulate(TINY)
    assert result.scenario == Scenario(TINY).to_dict()
    assert [f["bytes"] for f in result.flows] == [30_000] * 5
    assert all(f["finished"] for f in result.flows)


@pytest.mark.parametrize("path", [ELLOUMI, DOCSIS], ids=["elloumi", "docsis"])
def test_engine_accepts_the_example_files(path):  # engine
    # (the Elloumi file measures from 1 s, Table 1: a shorter run measures from 0)
    result = simulate(load(path).with_set("sim.measure_from_s=0", "sim.time_limit_s=0.01"))
    assert len(result.flows) == len(result.scenario["flows"])
