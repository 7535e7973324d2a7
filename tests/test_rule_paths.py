"""Issue 36, defects 2-5: a rule key acts on the sender path that runs, or is refused in one line naming the
key the scenario set. Table-driven, a class per test: a rule silently ignored on another path (today's
sender and the 1990s rules; a rule of one congestion control and the flows that run it), an undo that
cannot act, a misleading message. The property across every stack, flow control and path is
tests/test_fuzz.py's ``test_every_rule_key_acts_on_the_path_that_runs``."""
from __future__ import annotations

import json

import pytest

import hfcsim
from hfcsim import stacks
from hfcsim.cli import main
from hfcsim.errors import ScenarioError
from hfcsim.scenario import PARAM_BY_KEY, PARAMS, load

LOSSY = ["network.downstream_loss=0.02"]


def refusal(sets: list[str]) -> str | None:
    """The one-line refusal of ``sets`` (None: accepted)."""
    try:
        load(None, sets)
    except ScenarioError as e:
        assert "\n" not in str(e), str(e)
        return str(e)
    return None


def outcome(sets: list[str], seed: int = 3) -> str:
    result = hfcsim.simulate(load(None, sets), seed=seed).to_dict()
    del result["scenario"], result["engine"]["wall_s"]
    return json.dumps(result, sort_keys=True)


# ---------------------------------------------------------------------------------------------------
# Defect 2: today's sender (any of today's rules takes it) and the 1990s stacks' rules.

def test_the_issues_example_is_refused_not_run_with_header_prediction_unread(capsys):
    # "--seed 3 --set network.downstream_loss=0.02 --set tcp.stack=net3 --set tcp.undo=true gives the same
    # result with header prediction on and off": both are refused now, each in one line naming a key set.
    for hp in ("true", "false"):
        argv = ["run", "--seed", "3", "--set", "network.downstream_loss=0.02", "--set", "tcp.stack=net3",
                "--set", "tcp.undo=true", "--set", f"tcp.header_prediction={hp}"]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and err.startswith("hfcsim: error: tcp.undo = true: "), err


# Each of today's rules that takes the sender to today's path, under each 1990s stack: refused, naming it and
# every 1990s rule the stack sets that today's sender cannot run.
OPENERS = ["tcp.sack=true", "tcp.prr=true", "tcp.limited_transmit=true", "tcp.frto=true", "tcp.byte_counting=true",
           'tcp.congestion_control="cubic"', 'tcp.ecn="rfc3168"', 'flows.0.congestion_control="cubic"',
           'flows.0.ecn="rfc3168"']
NEEDS = {  # what each 1990s stack must give up (with tcp.variant = "newreno", its own Reno)
    "net3-rfc5681": ['tcp.variant = "newreno"'],
    "net3": ['tcp.variant = "newreno"', "tcp.header_prediction = false", "tcp.deflate_at_threshold = true",
             "tcp.output_after_fast_retransmit = true"],
    "ns2": ['tcp.variant = "newreno"', 'tcp.fast_recovery = "bsd"'],
}


@pytest.mark.parametrize("stack", list(NEEDS))
@pytest.mark.parametrize("opener", OPENERS)
def test_todays_rules_under_a_1990s_stack_are_refused_naming_them(stack, opener):
    message = refusal([f"tcp.stack={stack}", opener])
    key = opener.split("=")[0]
    assert message is not None and message.startswith(key + " = "), message
    assert "takes the sender to today's" in message
    for need in NEEDS[stack]:
        assert need in message, message


@pytest.mark.parametrize(("rule", "reason"), [
    ("tcp.header_prediction=true", "Stevens vol. 2, 28.4"),
    ("tcp.deflate_at_threshold=false", "never inflates cwnd"),
    ("tcp.output_after_fast_retransmit=false", "RFC 6675"),
    ('tcp.fast_recovery="ns2"', "dupwnd_"),
    ("tcp.recover_guard=false", "RFC 6582's guard"),
])
@pytest.mark.parametrize("stack", ["linux", "l4s"])
def test_a_1990s_rule_under_todays_stacks_is_refused_naming_it(stack, rule, reason):
    message = refusal([f"tcp.stack={stack}", rule])
    key = rule.split("=")[0]
    assert message is not None and message.startswith(key + " = "), message
    assert f"the {stack} stack's tcp.sack = true takes the sender to today's" in message and reason in message


@pytest.mark.parametrize(("sets", "key"), [
    # The Net/3 rules belong to Reno's fast recovery (schema.toml requires): Tahoe has none, NewReno leaves
    # on its full ACK, ns-2 never inflates cwnd.
    (["tcp.variant=tahoe", "tcp.header_prediction=true"], "tcp.header_prediction"),
    (["tcp.variant=tahoe", "tcp.deflate_at_threshold=false"], "tcp.deflate_at_threshold"),
    (["tcp.variant=tahoe", "tcp.output_after_fast_retransmit=false"], "tcp.output_after_fast_retransmit"),
    (["tcp.variant=newreno", "tcp.deflate_at_threshold=false"], "tcp.deflate_at_threshold"),
    (["tcp.stack=ns2", "tcp.header_prediction=true"], "tcp.header_prediction"),
    (["tcp.stack=ns2", "tcp.deflate_at_threshold=false"], "tcp.deflate_at_threshold"),
    # Pacing's rate is cwnd / srtt, which the tick timers do not keep in time (tcp/rto.rs).
    (["tcp.stack=ns2", "tcp.variant=newreno", "tcp.sack=true", "tcp.pacing=true"], "tcp.pacing"),
    (["tcp.stack=l4s", "tcp.timer=bsd"], "tcp.timer"),
])
def test_a_rule_of_another_recovery_or_timer_is_refused(sets, key):
    message = refusal(sets)
    assert message is not None and message.startswith(key + " = "), message


@pytest.mark.parametrize("stack", ["net3", "ns2"])
@pytest.mark.parametrize("variant", ["tahoe", "newreno"])
def test_a_1990s_stack_follows_its_variant(stack, variant):
    # 4.4BSD-Lite's rules are Reno's: under Tahoe or NewReno the net3 stack leaves them, and runs.
    assert refusal([f"tcp.stack={stack}", f"tcp.variant={variant}", *LOSSY]) is None


@pytest.mark.parametrize("stack", ["linux", "l4s"])
def test_todays_stacks_keep_renos_recovery_as_they_keep_tahoes(stack):
    # Linux has neither (today's sender is NewReno's and RFC 6675's): tcp.variant = "reno" keeps Net/3's
    # Reno with the stack's timers, ACKs and initial window, as Tahoe does, and acts.
    sc = load(None, [f"tcp.stack={stack}", "tcp.variant=reno"])
    assert not any(sc.get(f"tcp.{k}") for k in ("sack", "prr", "limited_transmit", "frto", "undo", "pacing"))
    assert (sc.get("tcp.congestion_control"), sc.get("tcp.ecn"), sc.get("tcp.timer")) == ("reno", "off", "linux")
    assert outcome([f"tcp.stack={stack}", "tcp.variant=reno", *LOSSY]) != outcome(
        [f"tcp.stack={stack}", "tcp.variant=reno", "tcp.variant=newreno", "tcp.sack=false", "tcp.prr=false",
         "tcp.limited_transmit=false", "tcp.frto=false", "tcp.congestion_control=reno", "tcp.ecn=off",
         "tcp.pacing=false", "tcp.byte_counting=false", "tcp.reno_reordering=false", *LOSSY])


# ---------------------------------------------------------------------------------------------------
# Defect 3: the undo needs D-SACK (the only witness the model has; Eifel's timestamps are not modelled).

def test_undo_without_dsack_is_refused_and_the_linux_stack_follows_its_dsack():
    assert refusal(["tcp.undo=true"]).startswith("tcp.undo = true: needs tcp.dsack = true")
    sc = load(None, ["tcp.stack=linux", "tcp.sack=false"])
    assert (sc.get("tcp.undo"), sc.get("tcp.dsack"), sc.get("tcp.rack"), sc.get("tcp.tlp")) == (False,) * 4
    assert load(None, ["tcp.stack=linux"]).get("tcp.undo") is True


def test_undo_with_dsack_acts():
    # Reordering beyond RACK's window: spurious recoveries, undone on their D-SACKs.
    sets = ["tcp.stack=linux", "tcp.rack_reo_wnd_dsack=false", "flows.0.reorder_jitter_s=0.01",
            "tcp.send_buffer_bytes=1000000", "receiver.receive_buffer_bytes=1000000", "flows.0.bytes=1000000"]
    on = hfcsim.simulate(load(None, sets), seed=1).flows[0]
    assert on["undos"] > 0
    assert outcome(sets) != outcome([*sets, "tcp.undo=false"])


# ---------------------------------------------------------------------------------------------------
# Defect 4: a refusal names the key the scenario set. For each stack, variant and flow control, each rule key
# set off its value alone: accepted, or refused naming a key the scenario set.

RULE_KEYS = [p for p in PARAMS if p.key.startswith("tcp.") and p.key != "tcp.stack" and (
    p.type is bool or p.choices or p.key == "tcp.recover_guard")]


def _others(p, current):
    if p.key == "tcp.recover_guard":
        return [True, False]
    if p.type is bool:
        return [not current]
    if p.choices:
        return [c for c in p.choices if c != current]
    return [current * 2]


@pytest.mark.parametrize("stack", list(stacks.STACKS))
@pytest.mark.parametrize("extra", [[], ["tcp.variant=tahoe"], ["tcp.variant=reno"], ["tcp.variant=newreno"],
                                   ["tcp.variant=newreno", 'flows.0.congestion_control="cubic"'],
                                   ["tcp.variant=newreno", 'flows.0.congestion_control="bbr"', 'flows.0.ecn="off"']],
                         ids=["own", "tahoe", "reno", "newreno", "flow-cubic", "flow-bbr"])
def test_a_refusal_names_a_key_the_scenario_set(stack, extra):
    base = [f"tcp.stack={stack}", *extra]
    first = refusal(base)
    if first is not None:  # the combination itself: it names one of its own keys
        assert first.split(" = ")[0] in {s.split("=")[0] for s in extra}, first
        return
    sc = load(None, base)
    own = {s.split("=")[0] for s in extra}
    for p in RULE_KEYS:
        for value in _others(p, sc.get(p.key)):
            message = refusal([*base, f"{p.key}={json.dumps(value)}"])
            if message is not None:
                assert message.split(" = ")[0] in own | {p.key}, (base, p.key, value, message)


# ---------------------------------------------------------------------------------------------------
# Defect 5: a rule of one congestion control is judged per flow (a flow's own congestion control wins).

@pytest.mark.parametrize(("sets", "refused"), [
    # the only flow runs Reno: HyStart has no flow (the issue's example), and the linux stack lays none
    (["tcp.variant=newreno", "tcp.congestion_control=cubic", "flows.0.congestion_control=reno", "tcp.hystart=true"],
     "tcp.hystart"),
    (["tcp.stack=linux", "flows.0.congestion_control=reno", "tcp.hystart=true"], "tcp.hystart"),
    (["tcp.stack=linux", "flows.0.congestion_control=reno", "tcp.cubic_linux_friendliness=true"],
     "tcp.cubic_linux_friendliness"),
    # the LLD study's CUBIC download beside the l4s stack's Prague may have HyStart
    (["tcp.stack=l4s", "flows.0.congestion_control=cubic", "flows.0.ecn=off", "tcp.hystart=true"], None),
    (["tcp.variant=newreno", "flows.0.congestion_control=cubic", "tcp.hystart=true"], None),
    # the class: byte counting is Reno's, PRR not BBR's, pacing not BBR's nor beside Prague's own
    (["tcp.stack=linux", "tcp.byte_counting=true"], "tcp.byte_counting"),
    (["tcp.stack=linux", "tcp.congestion_control=bbr", "tcp.prr=true"], "tcp.prr"),
    (["tcp.stack=linux", "tcp.congestion_control=bbr", "tcp.pacing=true"], "tcp.pacing"),
    (["tcp.stack=l4s", "flows.0.congestion_control=cubic", "flows.0.ecn=off", "tcp.pacing=true"], "tcp.pacing"),
    (["tcp.stack=linux", "tcp.congestion_control=cubic", "tcp.slow_start_at_ssthresh=false"],
     "tcp.slow_start_at_ssthresh"),
    # a stack-wide control every flow overrides applies to none
    (["tcp.stack=linux", "tcp.congestion_control=reno", "flows.0.congestion_control=cubic"], "tcp.congestion_control"),
])
def test_a_rule_of_one_control_needs_a_flow_that_runs_it(sets, refused):
    message = refusal(sets)
    if refused is None:
        assert message is None, message
    else:
        assert message is not None and message.startswith(refused + " = "), message


def test_the_linux_stack_lays_its_rules_of_one_control_for_the_flows_that_run_it():
    reno = load(None, ["tcp.stack=linux", "flows.0.congestion_control=reno"])
    assert (reno.get("tcp.hystart"), reno.get("tcp.cubic_linux_friendliness"), reno.get("tcp.byte_counting")) == (
        False, False, True)
    both = load(None, ["tcp.stack=linux", "flows.0.congestion_control=reno", "flows.1.bytes=100000"])
    assert (both.get("tcp.hystart"), both.get("tcp.byte_counting")) == (True, True)
    lld = load(None, ["tcp.stack=l4s", "flows.0.congestion_control=cubic", "flows.0.ecn=off"])
    assert (lld.get("tcp.hystart"), lld.get("tcp.pacing")) == (True, False)
    assert load(None, ["tcp.stack=linux", "tcp.congestion_control=bbr"]).get("tcp.prr") is False


def test_hystart_acts_on_a_cubic_flow_beside_the_l4s_stack():
    sets = ["tcp.stack=l4s", "flows.0.congestion_control=cubic", "flows.0.ecn=off", "network.downstream_loss=0.0",
            "network.default_buffer=unbounded", "tcp.send_buffer_bytes=262144", "receiver.receive_buffer_bytes=262144",
            "flows.0.bytes=3000000"]
    assert outcome(sets) != outcome([*sets, "tcp.hystart=false"])


def test_every_stack_is_whole_under_every_variant():
    # A stack's own values never conflict (so that a refusal always has a key the scenario set to name).
    for stack in stacks.STACKS:
        for variant in PARAM_BY_KEY["tcp.variant"].choices:
            message = refusal([f"tcp.stack={stack}", f"tcp.variant={variant}"])
            assert message is None or message.startswith("tcp.variant = "), message
