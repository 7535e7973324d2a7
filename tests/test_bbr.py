"""BBR v1 (issue 25; crates/hfcsim-core/src/tcp/bbr.rs): a ``tcp.congestion_control`` choice, and a flow's own,
accepted where Linux's internal pacing has its machinery (today's sender) and refused in one line elsewhere.
The packet paths of crates/hfcsim-core/tests/bbr.rs pin its state machine; here whole runs show the effect."""

import json

import pytest

from hfcsim.cli import main
from hfcsim.errors import ScenarioError
from hfcsim.scenario import load

# A 1000 packet/s bottleneck (11.6 Mb/s of 1448-byte payloads with timestamps), 80 ms of propagation,
# a 100-packet buffer, 1 % random loss after it; windows (4 MB) far above the path's.
LOSSY = ["network.kind=bottleneck", "network.rate_pps=1000", "network.tau_s=0.04", "network.buffer_packets=100",
         "network.loss=0.01", "tcp.stack=linux", "flows.0.bytes=10000000", "tcp.send_buffer_bytes=4000000",
         "receiver.receive_buffer_bytes=4000000"]


def sets(*pairs: str) -> list[str]:
    return [a for p in pairs for a in ("--set", p)]


def test_params_lists_the_choice(capsys):
    assert main(["params"]) == 0
    out = capsys.readouterr().out
    for key in ("tcp.congestion_control", "flows.*.congestion_control"):
        line = next(ln for ln in out.splitlines() if ln.startswith(key + " "))
        assert '"bbr"' in line, line


@pytest.mark.parametrize("pairs", [
    ['tcp.stack="linux"', 'tcp.congestion_control="bbr"'],
    ['tcp.stack="linux"', 'flows.0.congestion_control="bbr"'],
    # beside the l4s stack's Prague, a BBR download of its own, without ECN
    ['tcp.stack="l4s"', 'flows.0.congestion_control="bbr"', 'flows.0.ecn="off"'],
    # ns-2's NewReno keeps the BSD fast recovery and no header prediction: today's sender runs there, so BBR
    # does, with the ns2 timer's RTT in ticks (BBR's rate is its own) and Net/3's growth rule set aside
    ['tcp.stack="ns2"', 'tcp.variant="newreno"', 'tcp.congestion_control="bbr"', "tcp.slow_start_at_ssthresh=true"],
    # BBR v1 ignores ECN marks (it is not a scalable control): classic ECN is accepted
    ['tcp.stack="linux"', 'tcp.congestion_control="bbr"', 'tcp.ecn="rfc3168"'],
])
def test_bbr_is_accepted_where_pacing_runs(pairs):
    load(None, pairs)


@pytest.mark.parametrize(("pairs", "key"), [
    (['tcp.stack="net3"', 'tcp.congestion_control="bbr"'], "tcp.congestion_control"),
    (['tcp.stack="ns2"', 'tcp.congestion_control="bbr"'], "tcp.congestion_control"),
    (['tcp.stack="net3"', 'flows.0.congestion_control="bbr"'], "flows.0.congestion_control"),
    (['tcp.stack="linux"', 'tcp.variant="tahoe"', 'tcp.congestion_control="bbr"'], "tcp.congestion_control"),
    (['tcp.stack="linux"', 'tcp.congestion_control="bbr"', 'tcp.ecn="l4s"'], "tcp.ecn"),
    # ns-2's opencwnd rule (tcp.slow_start_at_ssthresh = false) is Net/3's growth, which BBR has none of
    (['tcp.stack="ns2"', 'tcp.variant="newreno"', 'tcp.congestion_control="bbr"'], "tcp.congestion_control"),
])
def test_bbr_is_refused_in_one_line_where_it_cannot_apply(capsys, pairs, key):
    with pytest.raises(ScenarioError) as e:
        load(None, pairs)
    message = str(e.value)
    assert "\n" not in message and message.startswith(key), message
    assert main(["run", *sets(*pairs)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and key in err, err


def throughput(capsys, cc: str) -> float:
    assert main(["run", *sets(*LOSSY, f"tcp.congestion_control={cc}"), "--json"]) == 0
    flow = json.loads(capsys.readouterr().out)["flows"][0]
    assert flow["finished"]
    return flow["throughput_bps"]


def test_bbr_keeps_the_link_through_random_loss_where_reno_and_cubic_do_not(capsys):
    # BBR v1 does not read loss as congestion (it cuts only by the segments newly lost, and only in
    # recovery's first round): at 1 % random loss it keeps near the link's 11.58 Mb/s, while CUBIC and
    # Reno, halving (x 0.7, x 0.5) every few dozen segments, hold a few Mb/s.
    bbr = throughput(capsys, "bbr")
    assert bbr > 0.85 * 1000 * 1448 * 8
    for other in ("cubic", "reno"):
        assert bbr > 2.5 * throughput(capsys, other), other


def test_emulate_passes_bbr_to_the_kernels():
    # The host allows bbr as the namespaces' default; the built-in workload sets it per socket anyway.
    # Linux's BBR asks for internal pacing itself (tcp_needs_internal_pacing), so the real kernel paces
    # it as the simulation does, with no fq qdisc: emulate accepts it.
    from hfcsim.emulate import check_scenario, kernel_settings

    sc = load(None, ['tcp.stack="linux"', 'tcp.congestion_control="bbr"'])
    check_scenario(sc, builtin=True)
    assert kernel_settings(sc)["net.ipv4.tcp_congestion_control"] == "bbr"
