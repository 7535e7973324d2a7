"""The keys of the Elloumi reproduction (issue 8): ``network.kind = "atm_hfc"`` and its keys, the rate
schedule, ``tcp.initial_ssthresh_bytes``, ``modems.*.piggyback`` / ``ack_spacing``, ``sim.measure_from_s``;
the resolved document (every key for atm_hfc, the new keys only when not at their default elsewhere);
and the new outputs (``FLOW_METRICS``, ``Result.switches``).

None of these tests runs the compiled engine: the engine does not know atm_hfc yet. Runs go through a
stand-in engine that records the document it is handed.
"""

from __future__ import annotations

import json
import math

import pytest

from hfcsim import simulate
from hfcsim.cli import build_parser
from hfcsim.scenario import SCHEMA, Scenario, ScenarioError, load, resolve
from hfcsim.simulate import FLOW_METRICS, SWITCH_METRICS
from hfcsim.sweep import define, scenario_hash

ATM = {"network": {"kind": "atm_hfc"}}
BOTTLENECK = {"network": {"kind": "bottleneck"}}
I802 = {"mac": "ieee802.14", "frame_s": 0.00227, "contention": "fixed", "contention_slots": 20}  # Elloumi Table 1


def atm(**sections):
    """An atm_hfc scenario with these sections (``network`` merged into the kind)."""
    network = {"kind": "atm_hfc", **sections.pop("network", {})}
    return {"network": network, **sections}


# ---------------------------------------------------------------------------------------------------
# Defaults, written out by hand from Elloumi Fig. 2, Sec. 4 and Tables 1-2 (not from the schema table).

ATM_DEFAULTS = [
    ("network.kind", "atm_hfc"),
    ("network.downstream_bps", 30e6),  # Table 1
    ("network.upstream_bps", 3e6),  # Table 1
    ("network.downstream_loss", 0.0),
    ("network.upstream_loss", 0.0),
    ("network.source_bps", 155e6),  # Sec. 4
    ("network.bottleneck_bps", 6e6),  # Sec. 4
    ("network.bottleneck_delay_s", 0.00125),  # Sec. 4
    ("network.bottleneck_schedule", []),
    ("network.headend_bps", 155e6),
    ("network.epd_threshold_cells", None),
    ("network.switch_buffer_cells", None),
    ("network.driver_buffer_packets", 50),  # Sec. 4
    ("network.processing_s", 100e-6),  # Table 2
    ("upstream.mac", "fifo"),
    ("upstream.contention_slots", 8),
    ("tcp.initial_ssthresh_bytes", None),
    ("sim.measure_from_s", 0.0),
    ("sim.time_limit_s", 3600.0),
    ("flows.0.modem", 0),
]


@pytest.mark.parametrize(("key", "expected"), ATM_DEFAULTS)
def test_atm_hfc_default(key, expected):
    value = Scenario(ATM).get(key)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(("raw", "key", "expected"), [
    ({}, "network.downstream_bps", 25e6),  # Cohen & Ramanathan Sec. IV.A
    (ATM, "network.downstream_bps", 30e6),  # Elloumi Table 1
    ({}, "network.upstream_bps", 3e6),
    (ATM, "network.upstream_bps", 3e6),
    ({"network": {"kind": "hfc"}}, "network.downstream_bps", 25e6),
    (atm(network={"downstream_bps": 25e6}), "network.downstream_bps", 25e6),
])
def test_shared_keys_have_a_default_per_network(raw, key, expected):
    assert Scenario(raw).get(key) == expected


@pytest.mark.parametrize(("raw", "key", "expected"), [  # the new keys on every network
    ({}, "tcp.initial_ssthresh_bytes", None),
    ({}, "sim.measure_from_s", 0.0),
    (BOTTLENECK, "tcp.initial_ssthresh_bytes", None),
    (BOTTLENECK, "sim.measure_from_s", 0.0),
    ({"modems": [{}]}, "modems.0.piggyback", None),
    ({"modems": [{}]}, "modems.0.ack_spacing", "off"),
    (atm(modems=[{}]), "modems.0.piggyback", None),
    (atm(modems=[{}]), "modems.0.ack_spacing", "off"),
])
def test_new_keys_default_everywhere(raw, key, expected):
    assert Scenario(raw).get(key) == expected


# ---------------------------------------------------------------------------------------------------
# The document the engine receives: every key for atm_hfc, in the contract's shape (_core.pyi).

ATM_NETWORK_KEYS = ["kind", "downstream_bps", "upstream_bps", "downstream_loss", "upstream_loss", "source_bps",
                    "bottleneck_bps", "bottleneck_delay_s", "bottleneck_schedule", "headend_bps",
                    "epd_threshold_cells", "switch_buffer_cells", "driver_buffer_packets", "processing_s"]


@pytest.mark.parametrize(("section", "keys"), [
    ("network", ATM_NETWORK_KEYS),
    ("tcp", ["variant", "mss_bytes", "header_bytes", "initial_window", "initial_ssthresh_bytes",
             "dupack_threshold", "timer", "tick_s", "min_rto_s", "initial_rto_s", "send_buffer_bytes",
             "sndbuf_autotuning", "tcp_wmem_default_bytes", "tcp_wmem_max_bytes", "nagle",
             "stack",
             "header_prediction", "deflate_at_threshold", "output_after_fast_retransmit", "recover_guard",
             "min_rto_ticks", "buffer_rounding", "repeat_timeout_holds_ssthresh", "fast_recovery",
             "slow_start_at_ssthresh", "congestion_control", "pacing", "byte_counting", "sack", "rack", "tlp", "prr",
             "prr_linux", "retransmit_lost_only", "limited_transmit", "reno_reordering", "frto", "dsack", "undo", "rack_reo_wnd_dsack",
             "hystart", "cubic_linux_friendliness", "timestamps", "window_scaling"]),
    ("receiver", ["delayed_ack", "delack_tick_s", "ack_rule", "receive_buffer_bytes", "ack_on_read", "ack_on_push",
                  "linux_window", "skb_truesize_bytes", "rcvbuf_autotuning", "tcp_rmem_default_bytes",
                  "tcp_rmem_max_bytes"]),
    ("sim", ["time_limit_s", "measure_from_s"]),
    ("upstream", ["mac", "minislot_bytes", "frame_s", "min_frame_s", "contention", "contention_slots",
                  "data_slot_minislots", "scheduler", "max_request", "piggyback", "concatenation", "fragmentation",
                  "max_burst_bytes", "headend_delay_s", "backoff_start", "backoff_end", "max_retries",
                  "burst_overhead_bytes", "fec_t_bytes", "fec_codeword_bytes", "frame_overhead_bytes",
                  "delay_s_per_km"]),
])
def test_atm_document_has_every_key(section, keys):
    document = json.loads(Scenario(ATM).to_json())
    assert list(document) == ["network", "upstream", "modems", "tcp", "receiver", "flows", "sim"]
    assert list(document[section]) == keys


def test_atm_document_modem_group_has_every_key():
    (group,) = json.loads(Scenario(atm(modems=[{"downloads": 1}])).to_json())["modems"]
    assert list(group) == ["count", "distance_km_min", "distance_km_max", "queue_packets", "queue_bytes",
                           "background_load", "background_bytes", "piggyback", "ack_spacing"]
    assert (group["piggyback"], group["ack_spacing"]) == (None, "off")
    # upstream.channels and modems.*.channel came after atm_hfc: left out at their default, so stored
    # sweeps keep their hashes (scenario._document).


def test_atm_document_absent_optionals_are_null():
    network = json.loads(Scenario(ATM).to_json())["network"]
    assert network["epd_threshold_cells"] is None and network["switch_buffer_cells"] is None
    assert json.loads(Scenario(atm(network={"driver_buffer_packets": None})).to_json())["network"][
        "driver_buffer_packets"] is None  # unbounded: only from JSON or a dict (TOML has no null)


# The new keys of the other networks reach the document only when they differ from their default (the
# engine's serde default), so older scenarios keep their JSON and their sweep hash.

OPTIONAL_ABSENT = [  # (raw, section, item index or None, key)
    ({}, "tcp", None, "initial_ssthresh_bytes"),
    ({}, "sim", None, "measure_from_s"),
    (BOTTLENECK, "tcp", None, "initial_ssthresh_bytes"),
    (BOTTLENECK, "sim", None, "measure_from_s"),
    ({"modems": [{}]}, "modems", 0, "piggyback"),
    ({"modems": [{}]}, "modems", 0, "ack_spacing"),
    ({"sim": {"measure_from_s": 0}}, "sim", None, "measure_from_s"),  # the default written out
    ({"tcp": {"initial_ssthresh_bytes": None}}, "tcp", None, "initial_ssthresh_bytes"),
    ({"modems": [{"piggyback": None, "ack_spacing": "off"}]}, "modems", 0, "piggyback"),
    ({"modems": [{"piggyback": None, "ack_spacing": "off"}]}, "modems", 0, "ack_spacing"),
]


def _table(document, section, index):
    return document[section] if index is None else document[section][index]


@pytest.mark.parametrize(("raw", "section", "index", "key"), OPTIONAL_ABSENT)
def test_new_keys_at_their_default_stay_out_of_older_networks_documents(raw, section, index, key):
    scenario = Scenario(raw)
    assert key not in _table(json.loads(scenario.to_json()), section, index)
    assert key not in _table(scenario.to_dict(), section, index)
    assert key in _table({section: scenario[section]}, section, index)  # Python still sees it


OPTIONAL_PRESENT = [  # (raw, section, item index or None, key, value in the document)
    ({"tcp": {"initial_ssthresh_bytes": 8192}}, "tcp", None, "initial_ssthresh_bytes", 8192),
    (BOTTLENECK | {"tcp": {"initial_ssthresh_bytes": 8192}}, "tcp", None, "initial_ssthresh_bytes", 8192),
    ({"sim": {"measure_from_s": 1}}, "sim", None, "measure_from_s", 1.0),
    # (modems.*.piggyback set needs a MAC: issue 26, defect 4)
    ({"upstream": I802, "modems": [{"piggyback": True}]}, "modems", 0, "piggyback", True),
    ({"upstream": I802, "modems": [{"piggyback": False}]}, "modems", 0, "piggyback", False),
    ({"upstream": I802, "modems": [{}, {"ack_spacing": "min"}]}, "modems", 1, "ack_spacing", "min"),
    (atm(), "tcp", None, "initial_ssthresh_bytes", None),  # atm_hfc: every key, defaults too
    (atm(), "sim", None, "measure_from_s", 0.0),
    (atm(modems=[{}]), "modems", 0, "piggyback", None),
    (atm(modems=[{}]), "modems", 0, "ack_spacing", "off"),
]


@pytest.mark.parametrize(("raw", "section", "index", "key", "expected"), OPTIONAL_PRESENT)
def test_new_keys_reach_the_document_when_set_or_on_atm_hfc(raw, section, index, key, expected):
    value = _table(json.loads(Scenario(raw).to_json()), section, index)[key]
    assert value == expected
    assert type(value) is type(expected)


def test_only_the_group_that_sets_a_new_key_carries_it():
    modems = Scenario({"upstream": I802, "modems": [{}, {"piggyback": True}]}).to_dict()["modems"]
    assert "piggyback" not in modems[0] and modems[1]["piggyback"] is True


# Hashes of scenarios written before these keys existed (computed with the schema before this change):
# a stored sweep of them must not rerun. Except on hfc: issue 23's network.default_buffer gave its
# headend a finite queue by default (DOCSIS 3.1's 100 ms), which changes what a busy headend does, so
# its documents carry the key and stored hfc runs hash anew (they were 1221a31cd1687627): rerunning
# them is right. Cohen's recipe, default_buffer = "unbounded", hashes as 3db75aec65e92def.
@pytest.mark.parametrize(("raw", "expected"), [
    ({}, "cb7fd5f08be8f14c"),
    (BOTTLENECK, "bd72affcfa56cc8d"),
    ({"sim": {"measure_from_s": 0.0}, "tcp": {"initial_ssthresh_bytes": None}}, "cb7fd5f08be8f14c"),
    ({"network": {"kind": "hfc"}, "tcp": {}}, "cb7fd5f08be8f14c"),
    ({"network": {"default_buffer": "unbounded"}}, "3db75aec65e92def"),
], ids=["hfc", "bottleneck", "defaults-written-out", "kind-written-out", "cohen-recipe"])
def test_older_scenarios_keep_their_hash(raw, expected):
    assert scenario_hash(Scenario(raw)) == expected


def test_a_sweep_over_a_new_key_shows_and_tells_apart_its_default():
    spec = define({"name": "warm-up", "base": {"sim": {"time_limit_s": 15}}, "grid": {"sim.measure_from_s": [0, 1]},
                   "runs": 1})
    assert [p.values["sim.measure_from_s"] for p in spec.points] == [0.0, 1.0]
    assert spec.points[0].hash == scenario_hash(Scenario({"sim": {"time_limit_s": 15}}))
    assert spec.points[0].hash != spec.points[1].hash


def test_a_sweep_over_the_schedule_and_epd_threshold():
    spec = define({"name": "fig23", "base": ATM, "runs": 1,
                   "grid": {"network.bottleneck_schedule": [[], [[10, 2e6], [20, 2.5e6]]],
                            "network.epd_threshold_cells": [100, 160]}})
    assert [p.values["network.bottleneck_schedule"] for p in spec.points][::2] == [
        "[]", "[[10.0, 2000000.0], [20.0, 2500000.0]]"]  # lists become JSON text in the table
    assert len({p.hash for p in spec.points}) == 4


@pytest.mark.parametrize("raw", [
    ATM,
    atm(network={"bottleneck_schedule": [[10, 2e6], [20, 2.5e6]], "epd_threshold_cells": 160,
                 "switch_buffer_cells": 1000, "driver_buffer_packets": None},
        upstream=I802, modems=[{"count": 1, "piggyback": True, "ack_spacing": "min"}, {"count": 3}],
        flows=[{"modem": 0}], tcp={"initial_ssthresh_bytes": 8192}, sim={"time_limit_s": 15, "measure_from_s": 1}),
    {"tcp": {"initial_ssthresh_bytes": 8192}, "sim": {"measure_from_s": 1}, "upstream": {"mac": "ieee802.14"},
     "modems": [{"piggyback": False}, {"ack_spacing": "off"}]},
], ids=["atm-defaults", "atm-elloumi", "hfc-new-keys"])
def test_document_resolves_to_the_same_scenario(raw):
    scenario = Scenario(raw)
    again = resolve(json.loads(scenario.to_json()))
    assert again == scenario and again.to_json() == scenario.to_json()


# ---------------------------------------------------------------------------------------------------
# Values given are kept (converted to the key's type).

KEPT = [
    (atm(network={"bottleneck_schedule": [[10, 2e6], [20, 2.5e6]]}), "network.bottleneck_schedule",
     [[10.0, 2e6], [20.0, 2.5e6]]),
    (atm(network={"bottleneck_schedule": ((0.5, 1_500_000),)}), "network.bottleneck_schedule", [[0.5, 1.5e6]]),
    (atm(network={"bottleneck_schedule": [[1e9, 1]]}), "network.bottleneck_schedule", [[1e9, 1.0]]),
    (atm(network={"bottleneck_schedule": [[i + 1, 1e6] for i in range(10_000)]}),
     "network.bottleneck_schedule.9999", [10_000.0, 1e6]),
    (atm(network={"epd_threshold_cells": 160}), "network.epd_threshold_cells", 160),
    (atm(network={"epd_threshold_cells": 160, "switch_buffer_cells": 161}), "network.switch_buffer_cells", 161),
    (atm(network={"switch_buffer_cells": 1}), "network.switch_buffer_cells", 1),
    (atm(network={"epd_threshold_cells": 2**63 - 1}), "network.epd_threshold_cells", 2**63 - 1),
    (atm(network={"driver_buffer_packets": None}), "network.driver_buffer_packets", None),
    (atm(network={"driver_buffer_packets": 1}), "network.driver_buffer_packets", 1),
    (atm(network={"processing_s": 0}), "network.processing_s", 0.0),
    (atm(network={"bottleneck_delay_s": 0}), "network.bottleneck_delay_s", 0.0),
    (atm(network={"upstream_loss": 0.01}), "network.upstream_loss", 0.01),
    ({"tcp": {"initial_ssthresh_bytes": 8192}}, "tcp.initial_ssthresh_bytes", 8192),
    ({"tcp": {"initial_ssthresh_bytes": 1}}, "tcp.initial_ssthresh_bytes", 1),
    ({"sim": {"time_limit_s": 15, "measure_from_s": 1}}, "sim.measure_from_s", 1.0),
    ({"sim": {"time_limit_s": 15, "measure_from_s": 14.999}}, "sim.measure_from_s", 14.999),
    ({"upstream": I802, "modems": [{"piggyback": True}]}, "modems.0.piggyback", True),
    ({"upstream": I802, "modems": [{"ack_spacing": "max"}]}, "modems.0.ack_spacing", "max"),
    (atm(upstream=I802, modems=[{"ack_spacing": "mean"}]), "modems.0.ack_spacing", "mean"),
    (atm(modems=[{"count": 3}], flows=[{"modem": 2}]), "flows.0.modem", 2),
    (atm(upstream={"mac": "docsis", "piggyback": True}), "upstream.mac", "docsis"),
]


@pytest.mark.parametrize(("raw", "key", "expected"), KEPT)
def test_given_values_are_kept(raw, key, expected):
    value = Scenario(raw).get(key)
    assert value == expected
    assert type(value) is type(expected)


def test_modem_downloads_expand_on_atm_hfc():
    raw = atm(modems=[{"count": 1}, {"count": 2, "downloads": 1, "download_bytes": 5000}])
    flows = Scenario(raw).to_dict()["flows"]
    assert [(f["modem"], f["bytes"]) for f in flows] == [(1, 5000), (2, 5000)]


# ---------------------------------------------------------------------------------------------------
# Bad input: ScenarioError, one line, naming the key (and the value, and what is allowed).

SCHEDULE = "network.bottleneck_schedule"

BAD = [
    # atm_hfc network keys: type and range
    (atm(network={"source_bps": 0}), ["network.source_bps = 0", ">= 1"]),
    (atm(network={"source_bps": "fast"}), ["network.source_bps", '"fast"', "must be a number"]),
    (atm(network={"bottleneck_bps": -6e6}), ["network.bottleneck_bps", ">= 1"]),
    (atm(network={"bottleneck_bps": math.inf}), ["network.bottleneck_bps", "Infinity", "must be a number"]),
    (atm(network={"bottleneck_delay_s": -0.001}), ["network.bottleneck_delay_s = -0.001", "[0, 1e9]"]),
    (atm(network={"headend_bps": 0}), ["network.headend_bps = 0", ">= 1"]),
    (atm(network={"headend_bps": True}), ["network.headend_bps = true", "must be a number"]),
    (atm(network={"epd_threshold_cells": 0}), ["network.epd_threshold_cells = 0", ">= 1"]),
    (atm(network={"epd_threshold_cells": 160.0}), ["network.epd_threshold_cells = 160.0", "must be an integer"]),
    (atm(network={"epd_threshold_cells": 2**64}), ["network.epd_threshold_cells", "must be an integer"]),
    (atm(network={"switch_buffer_cells": 0}), ["network.switch_buffer_cells = 0", ">= 1"]),
    (atm(network={"switch_buffer_cells": 2**63}), ["network.switch_buffer_cells", "must be an integer"]),
    (atm(network={"driver_buffer_packets": 0}), ["network.driver_buffer_packets = 0", ">= 1"]),
    (atm(network={"driver_buffer_packets": "50"}), ["network.driver_buffer_packets", '"50"', "an integer"]),
    (atm(network={"processing_s": -1e-6}), ["network.processing_s", "[0, 1]"]),
    (atm(network={"processing_s": 2}), ["network.processing_s = 2", "[0, 1]"]),
    (atm(network={"downstream_bps": 0}), ["network.downstream_bps = 0", ">= 1"]),
    (atm(network={"downstream_loss": 1.0}), ["network.downstream_loss = 1.0", "[0, 1)"]),
    (atm(network={"upstream_loss": -0.1}), ["network.upstream_loss = -0.1", "[0, 1)"]),
    # the rate schedule
    (atm(network={"bottleneck_schedule": 3}), [f"{SCHEDULE} = 3:", "a list of [time_s, bps]"]),
    (atm(network={"bottleneck_schedule": None}), [f"{SCHEDULE} = null:", "a list of [time_s, bps]"]),
    (atm(network={"bottleneck_schedule": "[[10, 2e6]]"}), [SCHEDULE, "a list of [time_s, bps]"]),
    (atm(network={"bottleneck_schedule": [10, 2e6]}), [SCHEDULE, "entry 0 (10) must be a [time_s, bps] pair"]),
    (atm(network={"bottleneck_schedule": [[10]]}), [SCHEDULE, "entry 0 ([10]) must be a [time_s, bps] pair"]),
    (atm(network={"bottleneck_schedule": [[10, 2e6, 3]]}), [SCHEDULE, "entry 0", "must be a [time_s, bps] pair"]),
    (atm(network={"bottleneck_schedule": [{"time_s": 10, "bps": 2e6}]}), [SCHEDULE, "entry 0", "[time_s, bps] pair"]),
    (atm(network={"bottleneck_schedule": [[0, 2e6]]}), [SCHEDULE, "entry 0: time_s = 0 must be a number in (0, 1e9]"]),
    (atm(network={"bottleneck_schedule": [[-1, 2e6]]}), [SCHEDULE, "entry 0: time_s = -1", "(0, 1e9]"]),
    (atm(network={"bottleneck_schedule": [[2e9, 2e6]]}), [SCHEDULE, "time_s = 2000000000.0", "(0, 1e9]"]),
    (atm(network={"bottleneck_schedule": [[math.nan, 2e6]]}), [SCHEDULE, "time_s = NaN"]),
    (atm(network={"bottleneck_schedule": [[math.inf, 2e6]]}), [SCHEDULE, "time_s = Infinity"]),
    (atm(network={"bottleneck_schedule": [[True, 2e6]]}), [SCHEDULE, "time_s = true"]),
    (atm(network={"bottleneck_schedule": [["10", 2e6]]}), [SCHEDULE, 'time_s = "10"']),
    (atm(network={"bottleneck_schedule": [[10, 0]]}), [SCHEDULE, "entry 0: bps = 0 must be a number >= 1"]),
    (atm(network={"bottleneck_schedule": [[10, -2e6]]}), [SCHEDULE, "bps = -2000000.0", ">= 1"]),
    (atm(network={"bottleneck_schedule": [[10, math.nan]]}), [SCHEDULE, "bps = NaN"]),
    (atm(network={"bottleneck_schedule": [[10, math.inf]]}), [SCHEDULE, "bps = Infinity"]),
    (atm(network={"bottleneck_schedule": [[10, "fast"]]}), [SCHEDULE, 'bps = "fast"']),
    (atm(network={"bottleneck_schedule": [[10, 2e6], [10, 2.5e6]]}),
     [SCHEDULE, "entry 1: time_s = 10 must be > the previous entry's (10.0)", "strictly increasing"]),
    (atm(network={"bottleneck_schedule": [[20, 2e6], [10, 2.5e6]]}), [SCHEDULE, "entry 1: time_s = 10", "(20.0)"]),
    (atm(network={"bottleneck_schedule": [[i + 1, 1e6] for i in range(10_001)]}),
     [SCHEDULE, "has 10001 entries: at most 10000 allowed"]),
    # tcp.initial_ssthresh_bytes, on every network
    ({"tcp": {"initial_ssthresh_bytes": 0}}, ["tcp.initial_ssthresh_bytes = 0", ">= 1"]),
    ({"tcp": {"initial_ssthresh_bytes": -8192}}, ["tcp.initial_ssthresh_bytes = -8192", ">= 1"]),
    ({"tcp": {"initial_ssthresh_bytes": 8192.0}}, ["tcp.initial_ssthresh_bytes = 8192.0", "must be an integer"]),
    ({"tcp": {"initial_ssthresh_bytes": "8 KB"}}, ["tcp.initial_ssthresh_bytes", '"8 KB"', "an integer"]),
    ({"tcp": {"initial_ssthresh_bytes": 2**63}}, ["tcp.initial_ssthresh_bytes", "must be an integer"]),
    (atm(tcp={"initial_ssthresh_bytes": 0}), ["tcp.initial_ssthresh_bytes = 0", ">= 1"]),
    (BOTTLENECK | {"tcp": {"initial_ssthresh_bytes": True}}, ["tcp.initial_ssthresh_bytes = true"]),
    # modems.*.piggyback and ack_spacing
    ({"modems": [{"piggyback": "yes"}]}, ["modems.0.piggyback", '"yes"', "true or false (or absent)"]),
    ({"modems": [{}, {"piggyback": 1}]}, ["modems.1.piggyback = 1", "true or false"]),
    ({"modems": [{"ack_spacing": "minimum"}]},
     ["modems.0.ack_spacing", '"minimum"', 'one of "off", "min", "mean", "max"']),
    ({"modems": [{"ack_spacing": "MIN"}]}, ["modems.0.ack_spacing", 'did you mean "min"?']),
    ({"modems": [{"ack_spacing": True}]}, ["modems.0.ack_spacing = true"]),
    # sim.measure_from_s
    ({"sim": {"measure_from_s": -1}}, ["sim.measure_from_s = -1", "[0, 1e9]"]),
    ({"sim": {"measure_from_s": math.nan}}, ["sim.measure_from_s = NaN"]),
    ({"sim": {"measure_from_s": "1s"}}, ["sim.measure_from_s", '"1s"', "must be a number"]),
    (atm(sim={"measure_from_s": None}), ["sim.measure_from_s = null"]),
]


@pytest.mark.parametrize(("raw", "fragments"), BAD)
def test_bad_value_raises_one_line_error(raw, fragments, one_line_error):
    one_line_error(raw, fragments)


# Rules between keys.
CROSS = [
    # EPD acts below the switch buffer's hard limit
    (atm(network={"epd_threshold_cells": 500, "switch_buffer_cells": 400}),
     ["network.epd_threshold_cells = 500", "must be < network.switch_buffer_cells (400)", "EPD never triggers"]),
    (atm(network={"epd_threshold_cells": 400, "switch_buffer_cells": 400}),
     ["network.epd_threshold_cells = 400", "network.switch_buffer_cells (400)"]),
    # statistics start before the end of the run
    ({"sim": {"time_limit_s": 15, "measure_from_s": 15}},
     ["sim.measure_from_s = 15", "must be < sim.time_limit_s (15.0)"]),
    ({"sim": {"measure_from_s": 4000}}, ["sim.measure_from_s = 4000", "must be < sim.time_limit_s (3600.0)"]),
    (atm(sim={"time_limit_s": 1, "measure_from_s": 2}), ["sim.measure_from_s = 2", "sim.time_limit_s (1.0)"]),
    # ACK spacing needs the 802.14 MAC (Elloumi Fig. 18)
    ({"modems": [{"ack_spacing": "min"}]},
     ["modems.0.ack_spacing = \"min\"", 'needs upstream.mac = "ieee802.14"', '(upstream.mac is "fifo")']),
    ({"upstream": {"mac": "docsis"}, "modems": [{}, {"ack_spacing": "mean"}]},
     ["modems.1.ack_spacing = \"mean\"", 'needs upstream.mac = "ieee802.14"', '(upstream.mac is "docsis")']),
    (atm(modems=[{"ack_spacing": "max"}]), ["modems.0.ack_spacing = \"max\"", '(upstream.mac is "fifo")']),
    # the MAC's own rules hold on atm_hfc too
    (atm(upstream={"mac": "ieee802.14", "contention": "fixed", "contention_slots": 2}),
     ["upstream.contention_slots = 2", ">= 3 with ieee802.14"]),
    (atm(upstream={"mac": "docsis", "contention_slots": 47}), ["upstream.contention_slots = 47", "no room for data"]),
    # (with a MAC: the MAC's keys need one, issue 26, defect 4)
    (atm(upstream={"mac": "docsis", "backoff_start": 11}),
     ["upstream.backoff_start = 11", "upstream.backoff_end (10)"]),
    (atm(upstream=I802, modems=[{"distance_km_min": 25.0, "distance_km_max": 20.0}]),
     ["modems.0.distance_km_min = 25.0", "<= modems.0.distance_km_max (20.0)"]),
    (atm(upstream=I802, modems=[{"queue_packets": 64, "queue_bytes": 4096}]),
     ["modems.0.queue_bytes = 4096", "only one of"]),
    (atm(modems=[{"count": 2}, {"count": 3}], flows=[{"modem": 5}]), ["flows.0.modem = 5", "< 5", "modems 0..4"]),
    (atm(modems=[{"downloads": 0}], flows=[]), ["flows = []", "at least one flow"]),
]


@pytest.mark.parametrize(("raw", "fragments"), CROSS)
def test_cross_key_rule_raises_one_line_error(raw, fragments, one_line_error):
    one_line_error(raw, fragments)


# Keys of one network are errors on the others, naming the key and the networks it is valid with.
HFC_ONLY = [("network.rtt_s", 0.02), ("network.cm_buffer_bytes", 10240), ("network.cm_buffer_packets", 7),
            ("network.cm_lan_bps", 10e6)]
BOTTLENECK_ONLY = [("network.rate_pps", 100.0), ("network.buffer_packets", 10), ("network.tau_s", 1.0),
                   ("network.loss", 0.01)]
ATM_ONLY = [("network.source_bps", 155e6), ("network.bottleneck_bps", 6e6), ("network.bottleneck_delay_s", 0.00125),
            ("network.bottleneck_schedule", [[10, 2e6]]), ("network.headend_bps", 155e6),
            ("network.epd_threshold_cells", 160), ("network.switch_buffer_cells", 1000),
            ("network.driver_buffer_packets", 50), ("network.processing_s", 100e-6)]
CABLE_ONLY = [("network.downstream_bps", 30e6), ("network.upstream_bps", 3e6), ("network.downstream_loss", 0.01),
              ("network.upstream_loss", 0.01), ("upstream.mac", "ieee802.14"), ("upstream.piggyback", True),
              ("modems.0.count", 3), ("modems.0.piggyback", True), ("modems.0.ack_spacing", "off")]


def _raw(kind, key, value):
    section, *rest = key.split(".")
    if section == "modems":
        return {"network": {"kind": kind}, "modems": [{rest[1]: value}]}
    table = {rest[0]: value}
    return {"network": {"kind": kind, **table}} if section == "network" else {"network": {"kind": kind}, section: table}


WRONG_NETWORK = (
    [("atm_hfc", key, value, 'network.kind = "hfc"') for key, value in HFC_ONLY]
    + [("atm_hfc", key, value, 'network.kind = "bottleneck"') for key, value in BOTTLENECK_ONLY]
    + [(kind, key, value, 'network.kind = "atm_hfc"') for kind in ("hfc", "bottleneck") for key, value in ATM_ONLY]
    + [("bottleneck", key, value, 'network.kind = "hfc" or "atm_hfc" or "docsis"') for key, value in CABLE_ONLY]
)


@pytest.mark.parametrize(("kind", "key", "value", "valid_with"), WRONG_NETWORK)
def test_key_of_another_network_is_rejected(kind, key, value, valid_with):
    with pytest.raises(ScenarioError) as info:
        resolve(_raw(kind, key, value))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{key} = ") and f"only valid with {valid_with} (network.kind is \"{kind}\")" in message


@pytest.mark.parametrize(("kind", "key", "value"), [
    ("atm_hfc", key, value) for key, value in CABLE_ONLY] + [("hfc", key, value) for key, value in CABLE_ONLY])
def test_cable_keys_are_valid_on_both_cable_networks(kind, key, value):
    raw = _raw(kind, key, value)
    if _needs_mac(key):  # set off its default, a MAC key needs a MAC (schema.toml `requires`; issue 26, defect 4)
        raw["upstream"] = {**raw.get("upstream", {}), "mac": "ieee802.14"}
    assert Scenario(raw).get(key) == value


def _needs_mac(key):
    """Whether schema.toml says ``key`` (dotted, a list item's by index) needs some upstream.mac."""
    section, *rest = key.split(".")
    return "upstream.mac" in SCHEMA[section][rest[-1]].get("requires", {})


def test_empty_modem_group_on_bottleneck_names_both_cable_networks():
    with pytest.raises(ScenarioError, match=r'^modems = \[\{\}\]: only valid with network.kind = "hfc" or "atm_hfc" or "docsis"'):
        resolve(BOTTLENECK | {"modems": [{}]})


# ---------------------------------------------------------------------------------------------------
# The schedule through --set (TOML literals) and TOML files.

SCHEDULE_SETS = [
    ("[[10,2e6],[20,2.5e6]]", [[10.0, 2e6], [20.0, 2.5e6]]),
    ("[[10, 2e6], [20, 2.5e6]]", [[10.0, 2e6], [20.0, 2.5e6]]),
    ("[[0.5, 1_500_000]]", [[0.5, 1.5e6]]),
    ("[]", []),
]


@pytest.mark.parametrize(("text", "expected"), SCHEDULE_SETS)
def test_schedule_through_set(text, expected):
    scenario = load(None, ["network.kind=atm_hfc", f"network.bottleneck_schedule={text}"])
    assert scenario.get("network.bottleneck_schedule") == expected


@pytest.mark.parametrize(("text", "expected"), SCHEDULE_SETS)
def test_schedule_through_the_cli_parser(text, expected):
    args = build_parser().parse_args(["run", "--set", "network.kind=atm_hfc", "--set",
                                      f"network.bottleneck_schedule={text}"])
    assert load(args.scenario, args.sets).get("network.bottleneck_schedule") == expected


def test_schedule_and_new_keys_in_a_toml_file(tmp_path):
    path = tmp_path / "elloumi-atm.toml"
    path.write_text('[network]\nkind = "atm_hfc"\nbottleneck_bps = 1.5e6\n'
                    "bottleneck_schedule = [[10, 2e6], [20, 2.5e6]]  # Elloumi Fig. 23\n"
                    "epd_threshold_cells = 100\n\n"
                    '[upstream]\nmac = "ieee802.14"\nframe_s = 0.00227\ncontention = "fixed"\ncontention_slots = 20\n\n'
                    '[[modems]]\npiggyback = true\nack_spacing = "min"\n\n'
                    "[tcp]\ninitial_ssthresh_bytes = 8192\n\n[sim]\ntime_limit_s = 30\nmeasure_from_s = 1\n")
    scenario = load(path)
    assert scenario.get("network.bottleneck_schedule") == [[10.0, 2e6], [20.0, 2.5e6]]
    assert (scenario.get("modems.0.piggyback"), scenario.get("modems.0.ack_spacing")) == (True, "min")
    assert (scenario.get("tcp.initial_ssthresh_bytes"), scenario.get("sim.measure_from_s")) == (8192, 1.0)


BAD_CLI = [
    # (--set assignments, fragment of the one stderr line)
    (["network.kind=atm_hfc", "network.bottleneck_schedule=[[10,2e6],[5,2.5e6]]"],
     "network.bottleneck_schedule = [[10, 2000000.0], [5, 2500000.0]]: entry 1: time_s = 5 must be >"),
    (["network.kind=atm_hfc", "network.bottleneck_schedule=[10,2e6]"], "entry 0 (10) must be a [time_s, bps] pair"),
    (["network.kind=atm_hfc", "network.bottleneck_schedule=[[10]]"], "must be a [time_s, bps] pair"),
    (["network.kind=atm_hfc", "network.bottleneck_schedule=[[0,2e6]]"], "entry 0: time_s = 0"),
    (["network.kind=atm_hfc", "network.bottleneck_schedule=[[10,0]]"], "entry 0: bps = 0 must be a number >= 1"),
    (["network.kind=atm_hfc", "network.bottleneck_schedule=[[10,2e6],[20"], "network.bottleneck_schedule"),
    (["network.kind=atm_hfc", "network.bottleneck_schedule=2e6"], "network.bottleneck_schedule = 2000000.0"),
    (["network.bottleneck_schedule=[[10,2e6]]"], 'only valid with network.kind = "atm_hfc" (network.kind is "hfc")'),
    (["network.kind=atm_hfc", "network.rtt_s=0.02"], 'network.rtt_s = 0.02: only valid with network.kind = "hfc"'),
    (["network.kind=atm_hfc", "network.epd_threshold_cells=200", "network.switch_buffer_cells=100"],
     "must be < network.switch_buffer_cells (100)"),
    (["sim.measure_from_s=4000"], "sim.measure_from_s = 4000.0: must be < sim.time_limit_s (3600.0)"),
    (["tcp.initial_ssthresh_bytes=0"], "tcp.initial_ssthresh_bytes = 0"),
    (["modems.0.ack_spacing=min"], 'needs upstream.mac = "ieee802.14"'),
    (["network.kind=atm"], 'network.kind = "atm": must be one of "hfc", "bottleneck", "atm_hfc"'),
]


@pytest.mark.parametrize(("sets", "fragment"), BAD_CLI)
def test_bad_set_exits_2_with_one_line(hfcsim_cli, sets, fragment):
    status, out, err = hfcsim_cli(["run", *(arg for s in sets for arg in ("--set", s))])
    assert (status, out) == (2, "")
    assert err.startswith("hfcsim: error: ") and err.count("\n") == 1
    assert fragment in err and "Traceback" not in err


# ---------------------------------------------------------------------------------------------------
# What the engine is handed, and what it returns (a stand-in engine that records its document).

FLOW = {"flow": 0, "bytes": 30_000, "delivered_bytes": 30_000, "finished": True, "measured_bytes": 25_000,
        "measured_s": 1.0, "rtt_samples": 3, "rtt_mean_s": 0.01, "rtt_max_s": 0.02, "rtt_std_s": 0.005,
        "station": 0, "station_requests": 7, "station_piggybacked_requests": 2, "epd_drops": 1}
SWITCHES = {"partial_cells": 4, "partial_packets": 1, "epd_cells": 42, "epd_packets": 2}  # engine order: any


@pytest.fixture
def recording_engine(fake_engine):
    """The conftest stand-in engine returning ``output``; gives the list of documents it is handed."""
    return lambda output: fake_engine(returns=output).documents


def _output(switches=None):
    engine = {"events": 1, "simulated_s": 1.0, "wall_s": 0.0}
    if switches is not None:
        engine["switches"] = switches
    return {"flows": [dict(sorted(FLOW.items()))], "engine": engine}  # the engine's order: sorted


def test_flow_metrics_list_the_new_columns_in_contract_order():
    assert FLOW_METRICS[-19:-9] == ("measured_bytes", "measured_s", "rtt_samples", "rtt_mean_s", "rtt_max_s",
                                     "rtt_std_s", "station", "station_requests", "station_piggybacked_requests",
                                     "epd_drops")
    assert SWITCH_METRICS == ("epd_packets", "epd_cells", "partial_packets", "partial_cells")


def test_result_lists_the_new_flow_metrics_in_contract_order(recording_engine):
    recording_engine(_output(SWITCHES))
    (flow,) = simulate(ATM).flows
    assert list(flow) == [name for name in FLOW_METRICS if name in FLOW]


def test_result_switches_in_contract_order(recording_engine):
    recording_engine(_output(SWITCHES))
    switches = simulate(ATM).switches
    assert list(switches) == list(SWITCH_METRICS) and switches == SWITCHES


@pytest.mark.parametrize("switches", [None, "absent"])
def test_result_switches_is_none_without_atm_switches(recording_engine, switches):
    output = _output()
    if switches is None:
        output["engine"]["switches"] = None
    recording_engine(output)
    assert simulate({}).switches is None


def test_the_engine_gets_the_whole_atm_document(recording_engine):
    documents = recording_engine(_output(SWITCHES))
    raw = atm(network={"bottleneck_schedule": [[10, 2e6]]}, sim={"time_limit_s": 15})
    simulate(raw)
    (document,) = documents
    assert document == Scenario(raw).to_dict()
    assert list(document["network"]) == ATM_NETWORK_KEYS
    assert document["network"]["bottleneck_schedule"] == [[10.0, 2e6]]
    assert (document["tcp"]["initial_ssthresh_bytes"], document["sim"]["measure_from_s"]) == (None, 0.0)


def test_the_engine_gets_no_new_key_at_its_default_on_hfc(recording_engine):
    documents = recording_engine(_output())
    simulate({"modems": [{}]})
    (document,) = documents
    assert "initial_ssthresh_bytes" not in document["tcp"] and "measure_from_s" not in document["sim"]
    assert not {"piggyback", "ack_spacing"} & set(document["modems"][0])


def test_set_reaches_the_engine_through_the_cli(hfcsim_cli, recording_engine):
    documents = recording_engine(_output(SWITCHES))
    status, out, err = hfcsim_cli(["run", "--json", "--set", "network.kind=atm_hfc",
                                   "--set", "network.bottleneck_schedule=[[10,2e6],[20,2.5e6]]",
                                   "--set", "sim.measure_from_s=1"])
    assert (status, err) == (0, "")
    (document,) = documents
    assert document["network"]["bottleneck_schedule"] == [[10.0, 2e6], [20.0, 2.5e6]]
    assert document["sim"]["measure_from_s"] == 1.0
    result = json.loads(out)
    assert result["scenario"] == document and result["engine"]["switches"] == SWITCHES


# ---------------------------------------------------------------------------------------------------
# hfcsim params


@pytest.mark.parametrize(("key", "fragments"), [
    ("network.kind", ['"atm_hfc"', "Elloumi"]),
    ("network.downstream_bps", ["25000000.0 (atm_hfc: 30000000.0)", '[network.kind = "atm_hfc"]']),
    ("network.bottleneck_schedule", ["[]", "a list of [time_s, bps]", "Fig. 23", '[network.kind = "atm_hfc"]']),
    ("network.epd_threshold_cells", ["absent", ">= 1 (or absent)", '[network.kind = "atm_hfc"]']),
    ("network.driver_buffer_packets", ["50", ">= 1 (or absent)", "Sec. 4"]),
    ("network.processing_s", ["0.0001", "Table 2"]),
    ("network.rtt_s", ['[network.kind = "hfc"]']),
    ("tcp.initial_ssthresh_bytes", ["absent", ">= 1 (or absent)", "Table 2: 8 KB"]),
    ("modems.*.piggyback", ["absent", "true or false (or absent)", "Sec. 6.1"]),
    ("modems.*.ack_spacing", ['"off"', 'one of "off", "min", "mean", "max"', "Fig. 18"]),
    ("sim.measure_from_s", ["0.0", "in [0, 1e9]", "Table 1: 1 s"]),
])
def test_params_lists_the_new_keys(hfcsim_cli, key, fragments):
    status, out, err = hfcsim_cli(["params"])
    assert (status, err) == (0, "")
    (line,) = [line for line in out.splitlines() if line.startswith(key + " ")]
    for fragment in fragments:
        assert fragment in line
    if key.startswith("network.") and key != "network.kind":
        assert "network.kind =" in line  # every network key says which networks it is valid with
