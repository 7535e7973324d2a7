"""receiver.linux_window and receiver.skb_truesize_bytes (Linux's receive window, tcp/linux_window.rs):
refused where they cannot apply, one line naming the key, exit 2; emulate's --compare simulates the
scenario's own buffer as SO_RCVBUF under the rule. No root needed."""
from __future__ import annotations

import pytest

from hfcsim import emulate
from hfcsim.cli import main
from hfcsim.scenario import Scenario
from hfcsim.simulate import Result


@pytest.mark.parametrize(("sets", "fragment"), [
    # Linux's window is chosen when Linux's receiver reads and ACKs: another delayed-ACK code refuses it.
    (["receiver.linux_window=true"], "receiver.linux_window"),
    (["tcp.stack=\"linux\"", "receiver.ack_rule=\"net3\"", "receiver.linux_window=true"], "receiver.linux_window"),
    # A segment's memory means nothing to the buffer's window.
    (["receiver.skb_truesize_bytes=4352"], "receiver.skb_truesize_bytes"),
    (["tcp.stack=\"linux\"", "receiver.linux_window=false", "receiver.skb_truesize_bytes=4352"],
     "receiver.skb_truesize_bytes"),
    (["tcp.stack=\"linux\"", "receiver.skb_truesize_bytes=0"], "receiver.skb_truesize_bytes"),
])
def test_the_keys_are_refused_where_they_cannot_apply(capsys, sets, fragment):
    argv = ["run"]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and fragment in err, err


def test_emulate_refuses_the_window_off_in_one_line():
    # The kernel's window comes from its memory; a run cannot switch that off.
    sc = Scenario({"tcp": {"stack": "linux"}, "receiver": {"linux_window": False}})
    with pytest.raises(emulate.EmulationRefused) as e:
        emulate.check_scenario(sc, builtin=True)
    assert "receiver.linux_window" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(("buffer", "advertised"), [(7300, 8688), (7300, None), (23360, 28960)])
def test_compare_simulates_the_scenarios_own_buffer(buffer, advertised):
    # Before the rule the simulation took the largest window the kernel advertised as its buffer; now
    # the SO_RCVBUF the emulated receiver asked for, which the rule turns into Linux's windows.
    sc = Scenario({"tcp": {"stack": "linux"}, "receiver": {"receive_buffer_bytes": buffer}})
    flows = [{"flow": 0, "advertised_window_bytes": advertised}]
    emulated = Result(1, sc, flows, {})
    sim_sc, notes = emulate.simulation_side(sc, emulated)
    assert sim_sc.get("receiver.receive_buffer_bytes") == buffer
    assert sim_sc.get("receiver.linux_window") is True
    assert any(f"receiver.receive_buffer_bytes = {buffer}, the SO_RCVBUF" in n for n in notes), notes
    assert any(f"the kernel last advertised {advertised}" in n for n in notes) == (advertised is not None)


def test_the_linux_stack_lays_the_rule_over_its_ack_code_only():
    assert Scenario({"tcp": {"stack": "linux"}}).get("receiver.linux_window") is True
    assert Scenario({"tcp": {"stack": "l4s"}}).get("receiver.linux_window") is True
    assert Scenario({"tcp": {"stack": "linux"}, "receiver": {"ack_rule": "net3"}}).get("receiver.linux_window") is False
    for stack in ("net3", "net3-rfc5681", "ns2"):
        assert Scenario({"tcp": {"stack": stack}}).get("receiver.linux_window") is False
