"""The ns2 stack (python/hfcsim/stacks.py): its keys, the initial-RTO key, and bad values. ns-2 itself is
not needed (tools/ns2_side_by_side.py compares with it)."""
from __future__ import annotations

import pytest

import hfcsim
from hfcsim import ScenarioError, load_scenario


@pytest.mark.parametrize(("key", "expected"), [
    ("tcp.timer", "ns2"),
    ("tcp.buffer_rounding", "down"),
    ("tcp.recover_guard", True),
    ("tcp.header_prediction", False),
    ("tcp.fast_recovery", "ns2"),
    ("tcp.slow_start_at_ssthresh", False),
    ("tcp.output_after_fast_retransmit", True),
    ("tcp.initial_rto_s", None),
    ("receiver.ack_rule", "ns2"),
    ("receiver.delack_tick_s", 0.1),
    ("flows.0.handshake", False),
])
def test_ns2_profile_keys(key: str, expected: object) -> None:
    assert load_scenario({"tcp": {"stack": "ns2"}}).get(key) == expected


@pytest.mark.parametrize(("key", "value"), [
    ("tcp.fast_recovery", "bsd"),
    ("receiver.delack_tick_s", 0.2),
    ("flows.0.handshake", True),
])
def test_an_explicit_key_wins_over_the_ns2_stack(key: str, value: object) -> None:
    section, rest = key.split(".", 1)
    raw: dict = {"tcp": {"stack": "ns2"}}
    if section == "flows":
        raw["flows"] = [{rest.split(".", 1)[1]: value}]
    else:
        raw.setdefault(section, {})[rest] = value
    assert load_scenario(raw).get(key) == value


@pytest.mark.parametrize(("timer", "initial", "first_timeout_s"), [
    # A one-packet transfer whose packet is dropped: the first retransmission comes one initial RTO
    # after t = 0 (no handshake), so the transfer ends that much later than a loss-free one.
    ("ns2", None, 3.0),
    ("ns2", 6.0, 6.0),
    ("rfc6298", 2.0, 2.0),
])
def test_initial_rto_delays_the_first_retransmission(timer: str, initial: float | None,
                                                     first_timeout_s: float) -> None:
    tcp = {"stack": "ns2", "timer": timer} | ({} if initial is None else {"initial_rto_s": initial})
    lossless = hfcsim.simulate({"tcp": tcp, "flows": [{"bytes": 1460}]}).flows[0]["duration_s"]
    lost = hfcsim.simulate({"tcp": tcp, "flows": [{"bytes": 1460, "drop_packets": [1]}]}).flows[0]
    assert lost["timeouts"] == 1
    assert lost["duration_s"] - lossless == pytest.approx(first_timeout_s, abs=1e-6)


@pytest.mark.parametrize(("raw", "names"), [
    ({"tcp": {"initial_rto_s": 3.0}}, "tcp.initial_rto_s"),  # the bsd timer takes none
    ({"tcp": {"timer": "ns2", "initial_rto_s": 0}}, "tcp.initial_rto_s"),
    ({"tcp": {"timer": "ns2", "initial_rto_s": 2e9}}, "tcp.initial_rto_s"),
    ({"tcp": {"timer": "ns3"}}, "tcp.timer"),
    ({"tcp": {"fast_recovery": "ns3"}}, "tcp.fast_recovery"),
    ({"tcp": {"fast_recovery": "ns2", "variant": "newreno"}}, "tcp.fast_recovery"),
    ({"tcp": {"slow_start_at_ssthresh": "maybe"}}, "tcp.slow_start_at_ssthresh"),
    ({"receiver": {"ack_rule": "ns3"}}, "receiver.ack_rule"),
])
def test_bad_values_give_one_line_naming_the_key(raw: dict, names: str) -> None:
    with pytest.raises(ScenarioError) as e:
        load_scenario(raw)
    message = str(e.value)
    assert "\n" not in message
    assert message.startswith(names)


@pytest.mark.parametrize(("variant", "expected"), [("reno", "ns2"), ("tahoe", "bsd"), ("newreno", "bsd")])
def test_ns2_fast_recovery_belongs_to_reno(variant: str, expected: str) -> None:
    # Lakshman's recipes run Tahoe and NewReno under every stack: the ns2 stack must accept them.
    assert load_scenario({"tcp": {"stack": "ns2", "variant": variant}}).get("tcp.fast_recovery") == expected
