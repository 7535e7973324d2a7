"""schema.toml, the one declaration of every key: what it names exists, and a key declared there
reaches every side (Python's validation, the engine's document, the engine's check, the run)."""

from __future__ import annotations

import json
import re

import pytest

from hfcsim import _core, stacks
from hfcsim.describe import describe
from hfcsim.errors import ScenarioError
from hfcsim.scenario import PARAM_BY_KEY, SCHEMA, SECTIONS, load
from hfcsim.simulate import simulate

CROSS_KEY_FIELDS = ("lt_key", "le_key", "ge_key", "excludes")


def _declared() -> list[tuple[str, dict]]:
    return [(p.key, SCHEMA[p.key.split(".")[0]][p.name]) for p in PARAM_BY_KEY.values()]


@pytest.mark.parametrize(("key", "decl"), _declared(), ids=[k for k, _ in _declared()])
def test_every_key_the_declaration_names_is_declared(key: str, decl: dict) -> None:
    named = [decl[f] for f in CROSS_KEY_FIELDS if f in decl] + list(decl.get("requires", {}))
    for other in named:
        assert other in PARAM_BY_KEY, f"{key} names {other}"
    for other, allowed in decl.get("requires", {}).items():
        choices = PARAM_BY_KEY[other].choices or (True, False)
        assert set(allowed) <= set(choices), f"{key} requires {other} in {allowed}"
    if "enum" in decl:
        assert decl["enum"] in SCHEMA["enums"], key


@pytest.mark.parametrize("stack", list(stacks.STACKS))
def test_every_value_a_stack_sets_is_a_valid_value_of_its_key(stack: str) -> None:
    tables = [stacks.STACKS[stack], *stacks.WHEN[stack].values()]
    for table in tables:
        for section, values in table.items():
            assert section in SECTIONS
            for name, value in values.items():
                p = PARAM_BY_KEY[f"{section}.*.{name}" if section == "flows" else f"{section}.{name}"]
                if not isinstance(value, dict):  # { seconds = S } is resolved against tcp.tick_s
                    assert p.check(value, p.key) == value


# network.headend_queue_bytes, a key added as the schema takes one: its declaration in schema.toml,
# its behaviour in topology.rs, and these tests (with crates/hfcsim-core/tests/headend_queue.rs).
@pytest.mark.parametrize(("sets", "error"), [
    (["network.headend_queue_bytes=30000"], None),
    (["network.headend_queue_bytes=0"], "network.headend_queue_bytes = 0: must be >= 1"),
    (["network.kind=docsis", "network.headend_queue_bytes=30000"],
     'network.headend_queue_bytes = 30000: only valid with network.kind = "hfc" (network.kind is "docsis")'),
])
def test_headend_queue_bytes_is_checked_where_it_applies(sets: list[str], error: str | None) -> None:
    if error is None:
        assert load(None, sets).get("network.headend_queue_bytes") == 30000
    else:
        with pytest.raises(ScenarioError, match="^" + error.replace("(", r"\(").replace(")", r"\)") + "$"):
            load(None, sets)


def test_headend_queue_bytes_is_left_out_of_documents_at_its_default_and_reaches_the_engine() -> None:
    assert "headend_queue_bytes" not in json.loads(load(None).to_json())["network"]
    # Ten 64 KB windows on ten modems overfill a 30,000-byte headend queue (headend_queue.rs).
    sets = ["tcp.send_buffer_bytes=65536", "receiver.receive_buffer_bytes=65536",
            *(f"flows.{i}.modem={i}" for i in range(10))]
    unbounded = simulate(load(None, [*sets, 'network.default_buffer="unbounded"']), seed=1)
    bounded = simulate(load(None, [*sets, "network.headend_queue_bytes=30000"]), seed=1)
    drops = [sum(f["queue_drops"] for f in r.flows) for r in (unbounded, bounded)]
    assert drops[0] == 0 < drops[1]
    assert max(f["rtt_mean_s"] for f in bounded.flows) < 0.035 < 0.100 < min(f["rtt_mean_s"] for f in unbounded.flows)


@pytest.mark.parametrize(("sets", "shown"), [
    (['network.default_buffer="unbounded"'], "CM unbounded"),
    ([], "headend 100 ms (MULPI default), CM unbounded"),
    (["network.headend_queue_bytes=30000"], "headend 30000 B, CM unbounded"),
])
def test_the_run_summary_shows_a_bounded_headend_queue(sets: list[str], shown: str) -> None:
    text = describe(load(None, sets))
    assert text.endswith(shown) and ("headend" in text) == (shown != "CM unbounded")


def test_the_engine_refuses_a_document_python_would_refuse() -> None:
    # A caller that skips Python gets the same one-line refusal from the engine's own check.
    doc = json.loads(load(None).to_json())
    doc["tcp"]["rack"] = True
    with pytest.raises(ValueError, match=r"^tcp\.rack = true: needs tcp\.sack = true \(tcp\.sack is false\)$"):
        _core.check(json.dumps(doc))
    with pytest.raises(ScenarioError, match=r"^tcp\.rack = true: needs tcp\.sack = true"):
        load(None, ["tcp.rack=true"])


# Issue 23's plant delays (crates/hfcsim-core/tests/plant_delays.rs pins their timelines): each key is
# refused off the docsis kind or without the DOCSIS MAC, and its cross-key rules (rules.rs) in one line.
DOCSIS = ["network.kind=docsis"]
INTERLEAVER = [*DOCSIS, "network.interleave_i=8", "network.interleave_j=16"]
MAINTENANCE = [*DOCSIS, "upstream.maintenance_interval_s=1", "upstream.maintenance_minislots=4"]


@pytest.mark.parametrize(("sets", "error"), [
    (INTERLEAVER, None),
    ([*INTERLEAVER, "network.interleave_qam=256"], None),
    ([*DOCSIS, "network.cmts_forward_s=0.0001", "network.cm_forward_s=0.0001"], None),
    ([*DOCSIS, "upstream.map_processing_s=0.0002"], None),
    (MAINTENANCE, None),
    ([*DOCSIS, "network.ds_mgmt_overhead=true"], None),
    (["network.interleave_i=8"], 'network.interleave_i = 8: only valid with network.kind = "docsis" (network.kind is "hfc")'),
    (["network.kind=atm_hfc", "network.interleave_j=16"],
     'network.interleave_j = 16: only valid with network.kind = "docsis" (network.kind is "atm_hfc")'),
    (["network.interleave_qam=256"],
     'network.interleave_qam = 256: only valid with network.kind = "docsis" (network.kind is "hfc")'),
    (["network.cmts_forward_s=0.001"],
     'network.cmts_forward_s = 0.001: only valid with network.kind = "docsis" (network.kind is "hfc")'),
    (["network.kind=bottleneck", "network.cm_forward_s=0.001"],
     'network.cm_forward_s = 0.001: only valid with network.kind = "docsis" (network.kind is "bottleneck")'),
    (["network.ds_mgmt_overhead=true"],
     'network.ds_mgmt_overhead = true: only valid with network.kind = "docsis" (network.kind is "hfc")'),
    ([*DOCSIS, "upstream.mac=fifo", "network.ds_mgmt_overhead=true"],
     'network.ds_mgmt_overhead = true: needs upstream.mac = "docsis" (upstream.mac is "fifo")'),
    ([*DOCSIS, "upstream.mac=fifo", "upstream.map_processing_s=0.0002"],
     'upstream.map_processing_s = 0.0002: needs upstream.mac = "docsis" (upstream.mac is "fifo")'),
    (["upstream.mac=ieee802.14", "upstream.maintenance_minislots=4"],
     'upstream.maintenance_minislots = 4: needs upstream.mac = "docsis" (upstream.mac is "ieee802.14")'),
    (["upstream.maintenance_interval_s=1"],
     'upstream.maintenance_interval_s = 1.0: needs upstream.mac = "docsis" (upstream.mac is "fifo")'),
    ([*DOCSIS, "network.interleave_i=8"], "network.interleave_i = 8: needs network.interleave_j"),
    ([*DOCSIS, "network.interleave_j=16"], "network.interleave_j = 16: needs network.interleave_i"),
    ([*DOCSIS, "network.interleave_i=8", "network.interleave_j=8"],
     "network.interleave_i = 8: with network.interleave_j = 8: ITU-T J.83 Annex B allows I = 128 with J = 1-8, "
     "or (I, J) = (64, 2), (32, 4), (16, 8), (8, 16)"),
    ([*INTERLEAVER, "network.interleave_qam=128"],
     "network.interleave_qam = 128: must be 64 or 256 (ITU-T J.83 Annex B)"),
    ([*DOCSIS, "network.interleave_qam=256"],
     "network.interleave_qam = 256: needs network.interleave_i: only the interleaver's latency reads it"),
    ([*DOCSIS, "upstream.maintenance_minislots=4"],
     "upstream.maintenance_minislots = 4: needs upstream.maintenance_interval_s (how often a region comes)"),
    ([*DOCSIS, "upstream.maintenance_interval_s=1"],
     "upstream.maintenance_interval_s = 1.0: needs upstream.maintenance_minislots > 0 (the region's size)"),
    ([*MAINTENANCE, "upstream.maintenance_minislots=152"],
     "upstream.maintenance_minislots = 152: leaves no room in a MAP of 160 minislots for "
     "upstream.contention_slots = 8 and one data minislot"),
])
def test_plant_delay_keys_are_checked_where_they_apply(sets: list[str], error: str | None) -> None:
    if error is None:
        load(None, sets)
    else:
        with pytest.raises(ScenarioError, match="^" + re.escape(error) + "$"):
            load(None, sets)


def test_plant_delay_keys_are_left_out_of_documents_at_their_defaults() -> None:
    doc = json.loads(load(None, DOCSIS).to_json())
    plant = {"interleave_i", "interleave_j", "interleave_qam", "cmts_forward_s", "cm_forward_s", "ds_mgmt_overhead",
             "map_processing_s", "maintenance_interval_s", "maintenance_minislots"}
    assert not plant & (set(doc["network"]) | set(doc["upstream"]))
    assert json.loads(load(None, INTERLEAVER).to_json())["network"]["interleave_j"] == 16


def test_the_management_overhead_must_leave_the_downstream_a_rate() -> None:
    # 100 kb/s raw leaves about 93 kb/s of payload, below the 218 kb/s of one channel's 2 ms MAPs.
    with pytest.raises(ScenarioError, match=r"^network\.ds_mgmt_overhead = true: leaves -\S+ b/s of downstream after "
                                            r"the MAPs, UCDs and SYNCs: at least 1 needed$"):
        load(None, [*DOCSIS, "network.downstream_bps=100000", "network.ds_mgmt_overhead=true"])
