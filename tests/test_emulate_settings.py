"""``hfcsim emulate``'s sysctls and refusals, read from the scenario alone (no root, no namespaces):
each tcp rule key the kernel can honour becomes its sysctl, and one it cannot turn off is refused in
one line (python/hfcsim/emulate.py ``kernel_settings``, ``check_scenario``)."""

from __future__ import annotations

import pytest

from hfcsim.emulate import EmulationRefused, check_scenario, kernel_settings
from hfcsim.scenario import load

LINUX = ['tcp.stack="linux"']


@pytest.mark.parametrize(("sets", "expected"), [
    # The linux stack as shipped: Linux's defaults (ip-sysctl.rst: tcp_sack 1, tcp_dsack 1, tcp_frto 2,
    # tcp_recovery 1).
    ([], {"net.ipv4.tcp_sack": "1", "net.ipv4.tcp_dsack": "1", "net.ipv4.tcp_frto": "2",
          "net.ipv4.tcp_recovery": "1", "net.ipv4.tcp_timestamps": "1", "net.ipv4.tcp_congestion_control": "cubic"}),
    (["tcp.dsack=false"], {"net.ipv4.tcp_dsack": "0", "net.ipv4.tcp_recovery": "3"}),
    (["tcp.frto=false"], {"net.ipv4.tcp_frto": "0"}),
    # RACK's reordering window kept static: TCP_RACK_STATIC_REO_WND (0x2) beside RACK (0x1).
    (["tcp.rack_reo_wnd_dsack=false"], {"net.ipv4.tcp_recovery": "3", "net.ipv4.tcp_dsack": "1"}),
    # Without SACK there are no D-SACKs, and no RACK.
    (["tcp.sack=false", "tcp.rack=false", "tcp.tlp=false"],
     {"net.ipv4.tcp_sack": "0", "net.ipv4.tcp_dsack": "0", "net.ipv4.tcp_recovery": "2"}),
    (['tcp.congestion_control="reno"', "tcp.timestamps=false"],
     {"net.ipv4.tcp_congestion_control": "reno", "net.ipv4.tcp_timestamps": "0"}),
    # ip-sysctl.rst tcp_early_retrans: 3 (the default) enables the tail loss probe, 0 disables it.
    ([], {"net.ipv4.tcp_early_retrans": "3"}),
    (["tcp.tlp=false"], {"net.ipv4.tcp_early_retrans": "0"}),
])
def test_kernel_settings_follow_the_tcp_keys(sets, expected):
    settings = kernel_settings(load(None, LINUX + sets))
    assert {k: settings[k] for k in expected} == expected


@pytest.mark.parametrize(("sets", "message"), [
    (["tcp.undo=false"], r"^tcp\.undo = false: the kernel always undoes spurious recoveries .*, so emulate requires "
                         r"tcp\.undo = true$"),
    (["tcp.sack=false", "tcp.rack=false", "tcp.tlp=false", "tcp.reno_reordering=false"],
     r"^tcp\.reno_reordering = false: without SACK the kernel always counts duplicate ACKs"),
    # Rules Linux always runs, whatever the scenario says (no sysctl): refused, never ignored.
    (["tcp.prr=false"], r"^tcp\.prr = false: Linux always reduces its window in recovery by PRR .* requires tcp\.prr = true$"),
    (["tcp.sack=false", "tcp.rack=false", "tcp.tlp=false", "tcp.prr=false"], r"^tcp\.prr = false: "),
    (["tcp.limited_transmit=false"], r"^tcp\.limited_transmit = false: "),
    (['tcp.variant="tahoe"'], r'^tcp\.variant = "tahoe": the kernel recovers as Linux does .* requires tcp\.variant = "newreno"$'),
    (['tcp.variant="reno"'], r'^tcp\.variant = "reno": '),
    (["tcp.dupack_threshold=2"], r"^tcp\.dupack_threshold = 2: the kernel runs Linux's own rule here .* requires "
                                 r"tcp\.dupack_threshold = 3$"),
    (["tcp.initial_rto_s=3.0"], r"^tcp\.initial_rto_s = 3\.0: the kernel's first RTO is Linux's TCP_TIMEOUT_INIT"),
    (["tcp.nagle=true"], r"^tcp\.nagle = true: the sockets keep Linux's Nagle, Minshall's variant"),
    (["receiver.ack_on_push=false"], r"^receiver\.ack_on_push = false: from Linux 6\.6 the kernel always ACKs"),
    (['receiver.ack_rule="net3"'], r'^receiver\.ack_rule = "net3": the kernel\'s receiver ACKs as Linux does'),
    (["receiver.delack_tick_s=0.2"], r"^receiver\.delack_tick_s = 0\.2: the kernel's delayed-ACK timeout"),
    (["tcp.retransmit_lost_only=false"], r"^tcp\.retransmit_lost_only = false: the kernel retransmits only segments "
                                         r"marked lost .* requires tcp\.retransmit_lost_only = true$"),
    (["tcp.prr_linux=false"], r"^tcp\.prr_linux = false: the kernel's PRR is always Linux's"),
    (["tcp.cubic_linux_friendliness=false"], r"^tcp\.cubic_linux_friendliness = false: the kernel's CUBIC always"),
])
def test_rules_the_kernel_cannot_turn_off_are_refused_in_one_line(sets, message):
    with pytest.raises(EmulationRefused, match=message) as e:
        check_scenario(load(None, LINUX + sets), builtin=True)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(("host", "sets", "refused"), [
    (True, [], False),
    (True, ["tcp.hystart=false"], True),
    (False, [], True),  # the linux stack's CUBIC has HyStart; this host's tcp_cubic has it off
    (False, ["tcp.hystart=false"], False),
    (False, ['tcp.congestion_control="reno"'], False),  # HyStart is CUBIC's alone
])
def test_hystart_must_be_the_hosts(monkeypatch, host, sets, refused):
    import hfcsim.emulate as emulate
    monkeypatch.setattr(emulate, "_host_hystart", lambda: host)
    if refused:
        with pytest.raises(EmulationRefused, match=r"^tcp\.hystart = (true|false): CUBIC's HyStart is the host's"):
            check_scenario(load(None, LINUX + sets), builtin=True)
    else:
        check_scenario(load(None, LINUX + sets), builtin=True)


def test_the_linux_stack_as_shipped_is_accepted():
    check_scenario(load(None, LINUX), builtin=True)
    check_scenario(load(None, LINUX + ["tcp.sack=false", "tcp.rack=false", "tcp.tlp=false"]), builtin=True)
