"""ECN end to end (issue 24): ``tcp.ecn`` at both TCP ends, PIE and CoDel marking instead of dropping.
The packet scripts of crates/hfcsim-core/tests/ecn.rs and the AQM unit tests pin the rules by hand; here
whole runs show the effect and the refusals are one line naming the key."""

import json

import pytest

from hfcsim.cli import main
from hfcsim.errors import ScenarioError
from hfcsim.scenario import load

# A download through the CMTS's service flow, capped at 5 Mb/s, with a window (200 kB) far above the
# path's: the CMTS queue builds, and its AQM acts.
DOCSIS = ["--set", "network.kind=docsis", "--set", "tcp.stack=linux", "--set", "network.ds_rate_bps=5000000",
          "--set", "tcp.send_buffer_bytes=200000", "--set", "receiver.receive_buffer_bytes=200000",
          "--set", "flows.0.bytes=5000000"]


def run(capsys, *argv: str) -> dict:
    assert main(["run", *argv, "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return json.loads(out)


@pytest.mark.parametrize("aqm", ["pie", "codel"])
def test_ecn_turns_aqm_drops_into_marks(capsys, aqm):
    off = run(capsys, *DOCSIS, "--set", f"network.cmts_aqm={aqm}")
    on = run(capsys, *DOCSIS, "--set", f"network.cmts_aqm={aqm}", "--set", "tcp.ecn=rfc3168")
    f_off, f_on = off["flows"][0], on["flows"][0]
    q_off, q_on = off["engine"]["queues"][0], on["engine"]["queues"][0]
    assert q_off["name"] == q_on["name"] == "cmts_ds_modem0"
    # Without ECN the AQM drops, marks nothing, and the flow reports no ECN counters.
    assert q_off["drops_aqm"] > 0 and "marks_aqm" not in q_off
    assert "ce_received" not in f_off and "ecn_reductions" not in f_off
    # With it the AQM marks (PIE only while its drop probability is at most 10%, RFC 8033 Sec. 5.1;
    # CoDel always, RFC 8289 Sec. 5) and drops fewer; every mark reaches the receiver (ACKs are never
    # ECN-capable, so only data is marked), and the sender cuts at most once per CE.
    assert q_on["marks_aqm"] > 0
    assert q_on["drops_aqm"] < q_off["drops_aqm"]
    assert f_on["ce_received"] == q_on["marks_aqm"]
    assert 0 < f_on["ecn_reductions"] <= f_on["ce_received"]
    assert f_on["retransmitted_segments"] < f_off["retransmitted_segments"]


def test_dctcp_runs_with_the_scalable_mode(capsys):
    on = run(capsys, *DOCSIS, "--set", "network.cmts_aqm=codel", "--set", "tcp.ecn=l4s",
             "--set", "tcp.congestion_control=dctcp")
    f, q = on["flows"][0], on["engine"]["queues"][0]
    assert f["finished"] and q["marks_aqm"] == f["ce_received"] > 0
    assert q["drops_aqm"] == 0 and f["ecn_reductions"] > 0


def test_the_summary_names_marks_and_reductions(capsys):
    assert main(["run", *DOCSIS, "--set", "network.cmts_aqm=pie", "--set", "tcp.ecn=rfc3168"]) == 0
    out = capsys.readouterr().out
    assert "marked CE" in out and "flow 0 ECN: " in out and "window reductions for ECN-Echo" in out


@pytest.mark.parametrize(("sets", "key"), [
    (["tcp.congestion_control=dctcp"], "tcp.congestion_control"),
    (["tcp.ecn=l4s"], "tcp.ecn"),
    (["tcp.ecn=l4s", "tcp.congestion_control=cubic"], "tcp.ecn"),
    (["tcp.ecn=rfc3168", "tcp.variant=tahoe"], "tcp.ecn"),
    (["tcp.ecn=rfc3168", "tcp.stack=ns2"], "tcp.ecn"),
])
def test_refusals_name_the_key(sets, key):
    with pytest.raises(ScenarioError) as e:
        load(None, sets)
    message = str(e.value)
    assert "\n" not in message and message.startswith(key)


@pytest.mark.parametrize("ecn", ["rfc3168", "l4s"])
def test_emulate_refuses_ecn_it_cannot_carry(ecn):
    # The emulated queues see a real packet's size only: its ECN bits would be neither read nor marked,
    # so an AQM would drop where the simulation marks. Refused in one line, not ignored.
    from hfcsim.emulate import EmulationRefused, check_scenario, kernel_settings

    sets = ["tcp.stack=\"linux\"", f"tcp.ecn=\"{ecn}\""] + (['tcp.congestion_control="dctcp"'] if ecn == "l4s" else [])
    with pytest.raises(EmulationRefused, match=rf'^tcp\.ecn = "{ecn}": the emulated queues do not read'):
        check_scenario(load(None, sets), builtin=True)
    assert kernel_settings(load(None, ['tcp.stack="linux"']))["net.ipv4.tcp_ecn"] == "0"


def test_emulate_refuses_pacing_the_kernels_do_not_do():
    # tcp.pacing models Linux's internal pacing; the emulated namespaces have no fq qdisc and CUBIC does
    # not ask for pacing, so the real kernels would send unpaced. Refused in one line, not ignored.
    from hfcsim.emulate import EmulationRefused, check_scenario

    with pytest.raises(EmulationRefused, match=r"^tcp\.pacing = true: the emulated kernels do not pace"):
        check_scenario(load(None, ['tcp.stack="linux"', "tcp.pacing=true"]), builtin=False)
    check_scenario(load(None, ['tcp.stack="linux"']), builtin=False)  # the default passes
