"""TCP stacks as named profiles: ``tcp.stack = "NAME"`` sets a bundle of TCP rules at once.

Each rule is also a scenario key of its own (``hfcsim params``), so one rule can be switched to see
its effect. A scenario's own keys win over its preset's, and a preset's over the stack's; the schema's
defaults fill the rest. The stacks:

- ``net3-rfc5681`` (the default): hfcsim's TCP before the profiles existed. 4.4BSD's timers, delayed
  ACK and ACK processing, with fast recovery's exit as RFC 5681 3.2 step 6 has it: cwnd deflates
  on the first new ACK after the fast retransmit, and duplicate ACKs are counted afresh after it.
  4.4BSD-Lite's header prediction, below, is left out. Later BSDs (FreeBSD 2.x on) behave so.
- ``net3``: literal 4.4BSD-Lite (``tcp_input.c``, Stevens vol. 2, chs. 28-29). The header-prediction
  fast path takes pure ACKs with cwnd >= the send window and neither clears ``t_dupacks`` nor
  deflates cwnd; deflation tests ``t_dupacks > tcprexmtthresh``; the fast retransmit is not followed
  by a second ``tcp_output``; the minimum RTO is TCPTV_MIN = ``1*PR_SLOWHZ``, one second of slow
  ticks (2 at 500 ms, 5 at 200 ms).
- ``ns2``: ns-2.35's ``Agent/TCP/Reno`` with a ``TCPSink/DelAck`` receiver, as a 1998 user of ns
  configured it (Cohen & Ramanathan Sec. IV ran ns): a window of whole packets (``window_``,
  floor(buffer / MSS)); no header prediction; ``bugFix_`` (no second fast retransmit until
  ``recover_`` is passed); ``slowdown()`` halves cwnd exactly and the inflation ``dupwnd_`` is kept
  apart (``fast_recovery = ns2``); ``opencwnd()`` slow-starts only while cwnd < ssthresh; the ns2 timer
  (RTT samples in ticks from a per-agent ``boot_time_``, srtt/rttvar in 1/8 and 1/4 ticks, at least 2
  ticks, 3 s initially, the deadline exact); the DelAck sink's timer fires ``interval_`` (100 ms, the
  mean delay of BSD's 200 ms heartbeat) after a lone in-order packet; no SYN exchange (one-way TCP).
  Checked against ns-2.35 itself: docs/ns2-side-by-side.md, tools/ns2_side_by_side.py.

A profile is a dict of sections ({"tcp": {...}, "receiver": {...}, "flows": {...}}, the last applied
to every flow). A value may be a function of the tcp keys resolved before it (``net3``'s minimum RTO
depends on ``tcp.tick_s``).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

DEFAULT_STACK = "net3-rfc5681"

#: Net/3 tcp_timer.h: ``#define TCPTV_MIN (1*PR_SLOWHZ)``, one second's worth of slow ticks.
TCPTV_MIN_S = 1.0
#: The largest ``tcp.min_rto_ticks``.
MAX_MIN_RTO_TICKS = 1000


def _net3_min_rto_ticks(tcp: Mapping[str, Any]) -> int:
    """TCPTV_MIN in ticks of ``tcp.tick_s``: a kernel whose slow timer ticks every 200 ms
    (PR_SLOWHZ = 5) keeps a 1 s minimum, 5 ticks. A tick that does not divide a second rounds up;
    a tick under 1 ms gets the key's largest value, 1000 ticks (no BSD kernel ticked so fast)."""
    ticks = min(TCPTV_MIN_S / tcp["tick_s"], MAX_MIN_RTO_TICKS)  # a tiny tick: a huge (or infinite) count
    return max(1, math.ceil(ticks - 1e-9))


def _ns2_fast_recovery(tcp: Mapping[str, Any]) -> str:
    """RenoTcpAgent's fast recovery belongs to Reno. ns-2's Tahoe (TcpAgent) has none, and the Tahoe and
    NewReno of the ns2 stack keep hfcsim's (go-back-N; RFC 6582)."""
    return "ns2" if tcp["variant"] == "reno" else "bsd"


def _unless_tahoe(today: Any, tahoe: Any) -> Callable[[Mapping[str, Any]], Any]:
    """A linux rule's value: today's, or Net/3's with tcp.variant = "tahoe" (which today's recovery,
    RFC 6675 with PRR, does not model)."""
    return lambda tcp: tahoe if tcp["variant"] == "tahoe" else today


Value = Any | Callable[[Mapping[str, Any]], Any]

STACKS: dict[str, dict[str, dict[str, Value]]] = {
    DEFAULT_STACK: {
        "tcp": {"timer": "bsd", "header_prediction": False, "deflate_at_threshold": True,
                "output_after_fast_retransmit": True, "min_rto_ticks": 2, "buffer_rounding": "up"},
        "receiver": {"ack_rule": "net3"},
    },
    "net3": {
        "tcp": {"timer": "bsd", "header_prediction": True, "deflate_at_threshold": False,
                "output_after_fast_retransmit": False, "min_rto_ticks": _net3_min_rto_ticks, "buffer_rounding": "up"},
        "receiver": {"ack_rule": "net3"},
    },
    "ns2": {
        "tcp": {"timer": "ns2", "header_prediction": False, "deflate_at_threshold": True,
                "output_after_fast_retransmit": True, "recover_guard": True, "min_rto_ticks": 2,
                "buffer_rounding": "down", "fast_recovery": _ns2_fast_recovery, "slow_start_at_ssthresh": False},
        # ns-default.tcl: `Agent/TCPSink/DelAck set interval_ 100ms`.
        "receiver": {"ack_rule": "ns2", "delack_tick_s": 0.1},
        "flows": {"handshake": False},
    },
    "linux": {
        # Linux's defaults today (net/ipv4/tcp_*.c, sysctls as shipped), read from the sources:
        # CUBIC (tcp_congestion_control), SACK (tcp_sack), RACK-TLP (tcp_recovery = 1,
        # tcp_early_retrans = 3), PRR, the timestamps option (tcp_timestamps), window scaling, IW
        # 10 (RFC 6928, TCP_INIT_CWND), the linux timer (TCP_RTO_MIN 200 ms, TCP_TIMEOUT_INIT 1 s),
        # byte counting, Limited Transmit through the pipe, RFC 5681's fast-recovery exit and held
        # ssthresh on a repeated timeout; NewReno partial ACKs when SACK is off (RFC 6582).
        # Linux has no Tahoe: a scenario that asks for it (Lakshman & Madhow's) keeps Tahoe's
        # recovery and window growth, with Linux's timers, ACKs and initial window.
        "tcp": {"timer": "linux", "min_rto_s": 0.2, "initial_window": 10, "variant": "newreno",
                "congestion_control": _unless_tahoe("cubic", "reno"), "byte_counting": _unless_tahoe(True, False),
                "sack": _unless_tahoe(True, False), "rack": _unless_tahoe(True, False),
                "tlp": _unless_tahoe(True, False), "prr": _unless_tahoe(True, False),
                "limited_transmit": _unless_tahoe(True, False), "timestamps": True, "window_scaling": True,
                "header_prediction": False, "deflate_at_threshold": True, "output_after_fast_retransmit": True,
                "repeat_timeout_holds_ssthresh": True, "min_rto_ticks": 2, "buffer_rounding": "up"},
        # Quick-ACK mode, then every second segment or ato from TCP_ATO_MIN = HZ/25 (40 ms).
        "receiver": {"ack_rule": "linux", "delack_tick_s": 0.04},
    },
}

#: One line per stack, for ``hfcsim params`` and reports.
DESCRIPTIONS: dict[str, str] = {
    DEFAULT_STACK: "4.4BSD timers and ACK processing with RFC 5681's fast-recovery exit, no header "
                   "prediction (hfcsim before stacks; later BSDs)",
    "net3": "literal 4.4BSD-Lite: header prediction, deflation on t_dupacks > 3, no output after the "
            "fast retransmit, TCPTV_MIN = 1 s",
    "ns2": "ns-2.35 Agent/TCP/Reno + TCPSink/DelAck: windows in whole packets, bugFix_, cwnd halved "
           "exactly, exact timer deadlines, RTT in ticks, 3 s initial RTO, no SYN exchange",
    "linux": "today's Linux: CUBIC, SACK with RACK-TLP and PRR, IW 10, timestamps, Linux's RTO (200 ms "
             "minimum) and delayed ACK (quick ACKs, 40 ms)",
}


def profile(stack: str, section: str) -> dict[str, Value]:
    """The defaults a stack gives one section (empty for a section it leaves alone)."""
    return dict(STACKS[stack].get(section, {}))
