"""TCP stacks as named profiles (python/hfcsim/stacks.py): what each stack sets, and who wins."""
import json

import pytest

from hfcsim import simulate, stacks
from hfcsim.describe import describe
from hfcsim.errors import ScenarioError
from hfcsim.scenario import PARAM_BY_KEY, Scenario


def test_the_default_stack_is_the_schemas_defaults():
    # So a scenario that names no stack resolves, and hashes, as before the stacks existed.
    for section, values in stacks.STACKS[stacks.DEFAULT_STACK].items():
        for name, value in values.items():
            assert PARAM_BY_KEY[f"{section}.{name}"].default == value, f"{section}.{name}"
    assert Scenario({}).to_dict() == Scenario({"tcp": {"stack": stacks.DEFAULT_STACK}}).to_dict()
    assert "stack" not in Scenario({}).to_dict()["tcp"]


@pytest.mark.parametrize("key", sorted({f"{section}.{name}" for stack in stacks.STACKS.values()
                                        for section, values in stack.items() for name in values}))
def test_every_rule_a_stack_sets_is_a_key_of_its_own(key):
    assert key.replace("flows.", "flows.*.") in PARAM_BY_KEY or key in PARAM_BY_KEY


@pytest.mark.parametrize("raw, key, expected", [
    # net3: each of its rules
    ({"tcp": {"stack": "net3"}}, "tcp.header_prediction", True),
    ({"tcp": {"stack": "net3"}}, "tcp.deflate_at_threshold", False),
    ({"tcp": {"stack": "net3"}}, "tcp.output_after_fast_retransmit", False),
    # TCPTV_MIN = 1*PR_SLOWHZ: one second of ticks
    ({"tcp": {"stack": "net3"}}, "tcp.min_rto_ticks", 2),
    ({"tcp": {"stack": "net3", "tick_s": 0.2}}, "tcp.min_rto_ticks", 5),
    ({"tcp": {"stack": "net3", "tick_s": 0.3}}, "tcp.min_rto_ticks", 4),
    ({"tcp": {"stack": "net3", "tick_s": 2.0}}, "tcp.min_rto_ticks", 1),
    ({"tcp": {"stack": "net3", "tick_s": 1e-6}}, "tcp.min_rto_ticks", 1000),
    # the default stack keeps 2 ticks whatever the tick
    ({"tcp": {"tick_s": 0.2}}, "tcp.min_rto_ticks", 2),
    ({}, "tcp.header_prediction", False),
    # an explicit key wins over the stack
    ({"tcp": {"stack": "net3", "header_prediction": False}}, "tcp.header_prediction", False),
    ({"tcp": {"stack": "net3", "tick_s": 0.2, "min_rto_ticks": 2}}, "tcp.min_rto_ticks", 2),
    # a preset wins over the stack, and the stack fills what the preset leaves
    ({"preset": "nguyen04", "tcp": {"stack": "net3"}}, "tcp.timer", "rfc6298"),
    ({"preset": "nguyen04", "tcp": {"stack": "net3"}}, "tcp.header_prediction", True),
    ({"preset": "modified-tcp", "tcp": {"stack": "net3"}}, "tcp.min_rto_ticks", 5),
    # a receiver rule of Linux's delayed ACK alone ({ true_if = { ack_rule = "linux" } }): laid with it,
    # not laid (so not refused) under another ack_rule
    ({"tcp": {"stack": "linux"}}, "receiver.ack_on_push", True),
    ({"tcp": {"stack": "linux"}}, "receiver.ack_on_read", True),
    ({"tcp": {"stack": "linux"}, "receiver": {"ack_rule": "net3"}}, "receiver.ack_on_push", False),
    ({"tcp": {"stack": "linux"}, "receiver": {"ack_rule": "freebsd"}}, "receiver.ack_on_read", False),
    ({"tcp": {"stack": "linux"}}, "receiver.linux_window", True),
    ({"tcp": {"stack": "linux"}, "receiver": {"ack_rule": "ns2"}}, "receiver.linux_window", False),
])
def test_stack_values_and_who_wins(raw, key, expected):
    assert Scenario(raw).get(key) == expected


@pytest.mark.parametrize("raw", [
    {"tcp": {"stack": "net3", "header_prediction": False}},   # explicit, equal to the schema default
    {"tcp": {"stack": "net3", "deflate_at_threshold": True}},
    {"tcp": {"stack": "net3"}},
    {"tcp": {"stack": "net3", "tick_s": 0.2}},
])
def test_documents_round_trip_when_a_key_differs_from_its_stack(raw):
    # The document leaves out a key only where resolving without it gives the same value.
    scenario = Scenario(raw)
    again = Scenario(json.loads(scenario.to_json()))
    assert again == scenario


@pytest.mark.parametrize("value, message", [
    ("net4", 'tcp.stack = "net4": must be one of'),
    (3, "tcp.stack = 3"),
])
def test_a_wrong_stack_is_one_line_naming_it(value, message):
    with pytest.raises(ScenarioError) as err:
        Scenario({"tcp": {"stack": value}})
    assert message in str(err.value) and "\n" not in str(err.value)


def test_describe_names_a_stack_other_than_the_default():
    assert "stack" not in describe(Scenario({}))
    assert describe(Scenario({"tcp": {"stack": "net3", "tick_s": 0.2}})).startswith(
        "stack net3, reno, bsd timer 200 ms tick, min RTO 1 s,")


def test_net3_drop_20_and_60_times_out_where_the_default_fast_retransmits():
    # The example, through the Python surface.
    base = {"flows": [{"bytes": 300_000, "drop_packets": [20, 60]}]}
    net3 = simulate({**base, "tcp": {"stack": "net3"}}).flows[0]
    default = simulate(base).flows[0]
    assert (net3["timeouts"], net3["fast_retransmits"]) == (1, 1)
    assert (default["timeouts"], default["fast_retransmits"]) == (0, 2)


@pytest.mark.parametrize("key, value, loss", [
    ("header_prediction", True, 0.03),
    ("deflate_at_threshold", False, 0.03),
    ("output_after_fast_retransmit", False, 0.03),
    ("recover_guard", True, 0.03),
    ("buffer_rounding", "down", 0.03),
    ("min_rto_ticks", 4, 0.03),
    ("repeat_timeout_holds_ssthresh", True, 0.10),
])
def test_each_rule_key_reaches_the_engine(key, value, loss):
    # Seeds 1-3 of a lossy download: switching the one rule changes what happens.
    def outcome(tcp):
        runs = [simulate({"network": {"downstream_loss": loss}, "tcp": tcp}, seed=s).flows[0] for s in (1, 2, 3)]
        return [(round(r["throughput_bps"]), r["timeouts"]) for r in runs]
    assert outcome({key: value}) != outcome({})
