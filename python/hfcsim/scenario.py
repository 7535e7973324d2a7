"""The scenario schema: every parameter declared once, with its unit, default, valid range and help.

Defaults, validation, the resolved JSON sent to the engine, the ``--set`` parser and ``hfcsim params``
are all derived from the one table ``PARAMS`` below (STYLE item 9; ns-3's ``AddAttribute``). A
scenario is data (DESIGN principle 4): it is validated here, once, at the boundary, and every error is
one line naming the key, the value given and what is allowed.

The defaults are the HFC network of Cohen & Ramanathan (IEEE/ACM ToN 6(1), 1998), Sec. IV.A; the
``bottleneck`` network is the single-bottleneck model of Lakshman & Madhow (IEEE/ACM ToN 5(3), 1997),
Sec. II. The ``upstream`` MAC keys and the ``modems`` groups follow Elloumi et al. (IEEE 802.14, "A
simulation-based study of TCP dynamics over HFC networks", Computer Networks 32, 2000) and Nguyen &
Armitage (DOCSIS, 2004); the ``atm_hfc`` network is Elloumi et al.'s hybrid ATM-HFC model (Fig. 2,
Tables 1-2), which has the upstream MAC and the modem groups too. A key may be valid on some networks
only (``Param.network``) and have a different default on one of them (``Param.network_defaults``).

``Scenario.to_json`` is the document the engine receives. Keys added to it after scenarios were stored
(``Param.engine_optional``) are left out while at their default, so an older scenario keeps its JSON
and its sweep hash; the engine's serde default for such a key is the same value.

Two sections are lists of tables whose keys are declared as ``<section>.*.<name>``: ``flows`` (one table
per TCP connection) and ``modems`` (one table per group of cable modems). A modem group's ``downloads``
keys are Python-side only: they expand into ordinary flows, appended after the explicit ones, and do
not reach the engine.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import os
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hfcsim import docsis, stacks
from hfcsim.errors import ScenarioError

__all__ = [
    "PARAMS",
    "Param",
    "Scenario",
    "ScenarioError",
    "apply_set",
    "load",
    "parse_set",
    "read_file",
    "resolve",
]

NETWORK_KINDS = ("hfc", "bottleneck", "atm_hfc", "docsis")
# The networks each key is valid with (Param.network; () = every network).
HFC = ("hfc",)
BOTTLENECK = ("bottleneck",)
ATM_HFC = ("atm_hfc",)
DOCSIS = ("docsis",)
CABLE = ("hfc", "atm_hfc", "docsis")  # a shared cable upstream: the upstream MAC and the modem groups
PINGABLE = ("hfc", "docsis")  # networks with a client behind each modem to ping from
# Networks younger than every engine_optional key: their documents carry every key (no stored
# scenario of theirs predates one).
NEW_KINDS = ("atm_hfc", "docsis")
SECTIONS = ("network", "upstream", "modems", "tcp", "receiver", "flows", "pings", "sim")
# Lists of tables: their keys are "<section>.*.<name>", "*" the item's index.
LIST_SECTIONS = ("modems", "flows", "pings")
FLOW = "flows.*"  # prefix of per-flow keys in PARAMS
MODEM = "modems.*"  # prefix of per-modem-group keys in PARAMS
MACS = ("fifo", "ieee802.14", "docsis")

# Simulated time is integer nanoseconds in a u64 (DESIGN principle 2): keep every duration far below
# the 584 years that fit, and every integer inside an i64.
MAX_TIME_S = 1e9
MAX_INT = 2**63 - 1


class Param:
    """One scenario parameter: the single place its name, unit, default, range and meaning live."""

    __slots__ = ("key", "type", "default", "help", "ge", "gt", "le", "lt", "choices", "optional", "network",
                 "network_defaults", "engine", "engine_optional")

    def __init__(self, key: str, type: type, default: Any, help: str, *,
                 ge: float | None = None, gt: float | None = None,
                 le: float | None = None, lt: float | None = None,
                 choices: tuple[str, ...] = (), optional: bool = False, network: tuple[str, ...] = (),
                 network_defaults: Mapping[str, Any] | None = None, engine: bool = True,
                 engine_optional: bool = False) -> None:
        self.key = key  # dotted key with the unit in its name; "flows.*.<name>" for per-flow keys
        self.type = type  # float, int, bool, str, or list (of ints; RateScheduleParam: of [time_s, bps])
        self.default = default  # None = absent (only for optional parameters)
        self.help = help
        self.ge, self.gt, self.le, self.lt = ge, gt, le, lt  # bounds: >=, >, <=, <
        self.choices = choices
        self.optional = optional  # absent / None is valid, meaning "none" or "unbounded"
        self.network = network  # the network.kinds it is valid with; () = every kind
        # A different default on some networks, e.g. {"atm_hfc": 30e6}; `default` on the others.
        self.network_defaults = dict(network_defaults or {})
        self.engine = engine  # False: consumed by Python (expanded into flows), absent from the resolved JSON
        # Added to the engine document after scenarios of its networks were stored: left out of the
        # document while at its default (the engine's serde default is the same value), so an older
        # scenario keeps its JSON and its hash (sweep.scenario_hash) and stored sweeps are not rerun.
        # Documents of networks newer than the key (NEW_KINDS) carry it always.
        self.engine_optional = engine_optional
        assert set(self.network_defaults) <= set(network or NETWORK_KINDS), key

    def applies_to(self, kind: str) -> bool:
        """Whether the key is valid with ``network.kind = kind``."""
        return not self.network or kind in self.network

    def default_for(self, kind: str) -> Any:
        """The default with ``network.kind = kind`` (a fresh list for list-valued keys)."""
        default = self.network_defaults.get(kind, self.default)
        return list(default) if isinstance(default, tuple) else default

    def __repr__(self) -> str:
        return f"Param({self.key!r})"

    @property
    def name(self) -> str:
        return self.key.rsplit(".", 1)[1]

    def allowed(self) -> str:
        """What is allowed, in words: 'a number in [0, 1)', 'one of "tahoe", "reno"', ..."""
        if self.choices:
            return "one of " + ", ".join(json.dumps(c) for c in self.choices)
        noun = {float: "a number", int: "an integer", bool: "true or false", str: "a string",
                list: "a list of integers"}[self.type]
        bounds = self.range_text()
        if self.type is list and bounds:
            noun += ", each"
        text = f"{noun} {bounds}".strip()
        return text + (" (or absent)" if self.optional else "")

    def range_text(self) -> str:
        low = f"[{_num(self.ge)}" if self.ge is not None else f"({_num(self.gt)}" if self.gt is not None else None
        high = f"{_num(self.le)}]" if self.le is not None else f"{_num(self.lt)})" if self.lt is not None else None
        if low and high:
            return f"in {low}, {high}"
        if low:
            return (">= " if low[0] == "[" else "> ") + low[1:]
        if high:
            return ("<= " if high[-1] == "]" else "< ") + high[:-1]
        return ""

    def in_range(self, x: float) -> bool:
        return ((self.ge is None or x >= self.ge) and (self.gt is None or x > self.gt)
                and (self.le is None or x <= self.le) and (self.lt is None or x < self.lt))

    def check(self, value: Any, key: str) -> Any:
        """Return ``value`` converted to this parameter's type, or raise ScenarioError naming ``key``."""
        if value is None:
            if self.optional:
                return None
            raise _error(key, value, f"must be {self.allowed()}")
        if self.type is list:
            return self._check_list(value, key)
        converted = _convert(self.type, value)
        if converted is None or (self.type is int and abs(converted) > MAX_INT):
            raise _error(key, value, f"must be {self.allowed()}")
        if self.choices and converted not in self.choices:
            raise _error(key, value, f"must be {self.allowed()}{_did_you_mean(converted, self.choices, quote=True)}")
        if self.type in (int, float) and not self.in_range(converted):
            raise _error(key, value, f"must be {self.range_text()}")
        return converted

    def _check_list(self, value: Any, key: str) -> list[int]:
        if not isinstance(value, (list, tuple)):
            raise _error(key, value, f"must be {self.allowed()}")
        items = [_convert(int, item) for item in value]
        if any(item is None or abs(item) > MAX_INT or not self.in_range(item) for item in items):
            raise _error(key, value, f"must be {self.allowed()}")
        return items


class RateScheduleParam(Param):
    """A rate that changes over time: ``[[time_s, bps], ...]``, from each ``time_s`` on the rate is ``bps``
    (before the first, the key's base rate). Times strictly increasing and > 0, rates > 0."""

    __slots__ = ()
    MAX_ENTRIES = 10_000

    def allowed(self) -> str:
        return f"a list of [time_s, bps]: time_s increasing in (0, {_num(MAX_TIME_S)}], bps > 0"

    def check(self, value: Any, key: str) -> list[list[float]]:
        if not isinstance(value, (list, tuple)):
            raise _error(key, value, f"must be {self.allowed()}")
        if len(value) > self.MAX_ENTRIES:
            raise _error(key, value, f"has {len(value)} entries: at most {self.MAX_ENTRIES} allowed")
        schedule: list[list[float]] = []
        for i, pair in enumerate(value):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise _error(key, value, f"entry {i} ({_fmt(pair)}) must be a [time_s, bps] pair")
            time_s, bps = _convert(float, pair[0]), _convert(float, pair[1])
            if time_s is None or not 0 < time_s <= MAX_TIME_S:
                raise _error(key, value, f"entry {i}: time_s = {_fmt(pair[0])} must be a number in "
                                         f"(0, {_num(MAX_TIME_S)}]")
            if bps is None or bps <= 0:
                raise _error(key, value, f"entry {i}: bps = {_fmt(pair[1])} must be a number > 0")
            if schedule and time_s <= schedule[-1][0]:
                raise _error(key, value, f"entry {i}: time_s = {_fmt(pair[0])} must be > the previous entry's "
                                         f"({_fmt(schedule[-1][0])}): times strictly increasing")
            schedule.append([time_s, bps])
        return schedule


def _num(x: float | None) -> str:
    text = f"{x:g}"  # 0, 1, 65495, 1e+09
    return text.replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")  # 1e9


def _convert(kind: type, value: Any) -> Any:
    """``value`` as ``kind``, or None if it is the wrong type. A bool is not a number; an int is a float."""
    if kind is bool:
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    if kind is float:
        if not isinstance(value, (int, float)):
            return None
        try:
            return float(value) if math.isfinite(value) else None
        except OverflowError:  # an int beyond any float
            return None
    if kind is int:
        return value if isinstance(value, int) else None
    if kind is str:
        return value if isinstance(value, str) else None
    raise TypeError(kind)


# The table. Order here is the order of keys in the resolved JSON and in `hfcsim params`.
PARAMS: tuple[Param, ...] = (
    Param("network.kind", str, "hfc",
          "network model: the HFC access network (Cohen & Ramanathan), one bottleneck link (Lakshman & "
          "Madhow), the hybrid ATM-HFC network of Elloumi et al. Fig. 2, or the DOCSIS testbed of Nguyen & "
          "Armitage Fig. 2 (service flows with rate caps and AQM)", choices=NETWORK_KINDS),
    # Cohen & Ramanathan Sec. IV.A: 25 Mb/s downstream, 3 Mb/s upstream, 20 ms round trip. Elloumi
    # Table 1: 30 Mb/s downstream, 3 Mb/s upstream.
    # docsis: ITU-T J.83 Annex B 64-QAM, 5.056941 Msym/s x 6 bits (hfcsim.docsis.QAM64_RAW_BPS); the
    # engine takes off Reed-Solomon and MPEG-2 (network.rs_*, network.mpeg_*). DOCSIS RFI 1.1 Sec. 4.2:
    # 16-QAM at 2.56 Msym/s upstream, 10.24 Mb/s.
    Param("network.downstream_bps", float, 25e6,
          "downstream channel rate (CMTS / headend -> cable modem), bit/s (Elloumi Table 1: 30 Mb/s; docsis: "
          "the raw rate, symbol rate x bits per symbol, less Reed-Solomon and MPEG-2 framing on the wire)",
          gt=0, network=CABLE, network_defaults={"atm_hfc": 30e6, "docsis": docsis.QAM64_RAW_BPS}),
    Param("network.upstream_bps", float, 3e6,
          "upstream channel rate (cable modem -> CMTS / headend), bit/s (Elloumi Table 1: 3 Mb/s; docsis: "
          "16-QAM at 2.56 Msym/s)", gt=0, network=CABLE, network_defaults={"docsis": 10.24e6}),
    Param("network.rtt_s", float, 0.020, "base round-trip time server <-> PC without queueing, s",
          ge=0, le=MAX_TIME_S, network=HFC),
    # Cohen & Ramanathan Sec. IV.A: media errors lose packets independently ("Poisson" loss), on the
    # downstream (data) and on the upstream (ACK) channel separately.
    Param("network.downstream_loss", float, 0.0, "probability that a downstream packet is lost",
          ge=0, lt=1, network=CABLE),
    Param("network.upstream_loss", float, 0.0, "probability that an upstream packet is lost",
          ge=0, lt=1, network=CABLE),
    # Cohen & Ramanathan Sec. V.A: Sec. IV assumed an unbounded CM buffer; Sec. V.B sizes a finite one.
    Param("network.cm_buffer_bytes", int, None, "cable modem buffer, bytes (absent = unbounded)",
          gt=0, optional=True, network=HFC),
    Param("network.cm_buffer_packets", int, None, "cable modem buffer, packets (absent = unbounded)",
          gt=0, optional=True, network=HFC),
    # Cohen & Ramanathan Sec. V.A: the CM drains to the PC over 10Base-T.
    Param("network.cm_lan_bps", float, 10e6, "cable modem -> PC LAN rate, bit/s", gt=0, network=HFC),
    # Elloumi Fig. 2: TCP source -(155 Mb/s)- SW1 -(6 Mb/s, 1.25 ms; EPD)- SW2 - headend - HFC - station.
    # Every link counts ATM cells: an IP packet of n bytes is ceil((n + 16) / 48) cells of 53 bytes
    # (LLC/SNAP 8 B + AAL5 trailer 8 B; RFC 2684, ITU-T I.363.5).
    # Nguyen & Armitage Fig. 2 (network.kind = "docsis"): server -100 Mb/s Ethernet- CMTS -DOCSIS- CM
    # -100 Mb/s Ethernet- client. Each modem has a downstream and an upstream service flow: a rate cap
    # (DOCSIS MULPI C.2.2.7.2: at most T*R/8 + B bytes in any interval T, counting Ethernet frames),
    # a buffer and a queue discipline. The constants' defaults come from hfcsim.docsis.
    Param("network.downstream_delay_s", float, 0.0,
          "one-way delay CMTS -> modem besides serialisation (propagation, interleaving), s",
          ge=0, le=MAX_TIME_S, network=DOCSIS),
    Param("network.upstream_delay_s", float, 0.0,
          "one-way delay modem -> CMTS besides the MAC and serialisation, s", ge=0, le=MAX_TIME_S,
          network=DOCSIS),
    Param("network.ethernet_bps", float, 100e6,
          "server and client Ethernet rate, bit/s (Nguyen & Armitage Sec. III.A: 100 Mb/s)", gt=0, network=DOCSIS),
    Param("network.ds_rate_bps", float, 2e6,
          "downstream service flow's Maximum Sustained Traffic Rate (the DS rate cap), bit/s of Ethernet "
          "frames (Nguyen & Armitage Sec. III.A: 2 Mb/s)", gt=0, network=DOCSIS),
    Param("network.ds_burst_bytes", int, docsis.DEFAULT_MAX_TRAFFIC_BURST_BYTES,
          "downstream Maximum Traffic Burst, bytes (DOCSIS RFI 1.1 C.2.2.5.3: 1522 when absent)",
          ge=1, network=DOCSIS),
    Param("network.ds_peak_bps", float, None,
          "downstream Peak Traffic Rate, bit/s (DOCSIS 3.0 MULPI C.2.2.7.10; absent = none)",
          gt=0, optional=True, network=DOCSIS),
    Param("network.us_rate_bps", float, 1e6,
          "upstream service flow's Maximum Sustained Traffic Rate (the US rate cap), bit/s (Nguyen & "
          "Armitage Sec. III.A: 1 Mb/s)", gt=0, network=DOCSIS),
    Param("network.us_burst_bytes", int, docsis.DEFAULT_MAX_TRAFFIC_BURST_BYTES,
          "upstream Maximum Traffic Burst, bytes (DOCSIS RFI 1.1 C.2.2.5.3: 1522 when absent)",
          ge=1, network=DOCSIS),
    Param("network.us_peak_bps", float, None, "upstream Peak Traffic Rate, bit/s (absent = none)",
          gt=0, optional=True, network=DOCSIS),
    Param("network.cmts_queue_bytes", int, None,
          "each modem's downstream buffer at the CMTS, bytes (absent, and no cmts_queue_s = unbounded)",
          ge=1, le=MAX_INT, optional=True, network=DOCSIS),
    Param("network.cmts_queue_s", float, None,
          "each modem's downstream buffer at the CMTS, s at network.ds_rate_bps", gt=0, le=MAX_TIME_S,
          optional=True, network=DOCSIS),
    Param("network.cmts_aqm", str, "droptail",
          "the CMTS downstream queue's discipline: droptail, pie (RFC 8033) or codel (RFC 8289)",
          choices=("droptail", "pie", "codel"), network=DOCSIS),
    Param("network.cm_queue_bytes", int, None,
          "each modem's upstream buffer, bytes (absent, and no cm_queue_s = unbounded)", ge=1, le=MAX_INT,
          optional=True, network=DOCSIS),
    Param("network.cm_queue_s", float, None, "each modem's upstream buffer, s at network.us_rate_bps",
          gt=0, le=MAX_TIME_S, optional=True, network=DOCSIS),
    Param("network.cm_aqm", str, "droptail",
          "the modem's upstream queue's discipline: droptail, pie (RFC 8033), docsis_pie (RFC 8034) or "
          "codel (RFC 8289)", choices=("droptail", "pie", "docsis_pie", "codel"), network=DOCSIS),
    Param("network.server_limit_bps", float, None,
          "a dummynet-like pipe on the server's outgoing TCP packets, bit/s (Nguyen & Armitage Sec. III.A: "
          "200 kb/s - 3.2 Mb/s; absent = none)", gt=0, optional=True, network=DOCSIS),
    Param("network.server_queue_bytes", int, 62 * 1024,
          "the pipe's queue, bytes (Nguyen & Armitage Sec. III.A: 62 KB)", ge=1, le=MAX_INT, network=DOCSIS),
    Param("network.pie_target_s", float, 0.015, "PIE's target queue delay, s (RFC 8033 Sec. 5.1: 15 ms)",
          gt=0, le=MAX_TIME_S, network=DOCSIS),
    Param("network.docsis_pie_target_s", float, 0.010,
          "DOCSIS-PIE's target queue delay, s (RFC 8034 Sec. 4.2: 10 ms)", gt=0, le=MAX_TIME_S, network=DOCSIS),
    Param("network.codel_target_s", float, 0.005, "CoDel's target sojourn time, s (RFC 8289 Sec. 4.4: 5 ms)",
          gt=0, le=MAX_TIME_S, network=DOCSIS),
    Param("network.codel_interval_s", float, 0.100, "CoDel's interval, s (RFC 8289 Sec. 4.5: 100 ms)",
          gt=0, le=MAX_TIME_S, network=DOCSIS),
    Param("network.ethernet_header_bytes", int, docsis.ETHERNET_HEADER_BYTES,
          "Ethernet header + FCS per frame, bytes (IEEE 802.3; Nguyen & Armitage Sec. III.C: 18)",
          ge=0, le=65535, network=DOCSIS),
    Param("network.ethernet_min_frame_bytes", int, docsis.ETHERNET_MIN_FRAME_BYTES,
          "minimum Ethernet frame, bytes (IEEE 802.3: 64)", ge=0, le=65535, network=DOCSIS),
    Param("network.ethernet_gap_bytes", int, docsis.ETHERNET_GAP_BYTES,
          "preamble and inter-frame gap per Ethernet frame on the wire, bytes (IEEE 802.3: 8 + 12)",
          ge=0, le=65535, network=DOCSIS),
    Param("network.docsis_header_bytes", int, docsis.DOCSIS_HEADER_BYTES,
          "DOCSIS MAC header per downstream frame, bytes (RFI 1.1 Sec. 6.2.1; Nguyen & Armitage: 6)",
          ge=0, le=65535, network=DOCSIS),
    Param("network.rs_n", int, docsis.RS_N, "Reed-Solomon codeword, symbols (ITU-T J.83 Annex B: 128)",
          ge=1, le=65535, network=DOCSIS),
    Param("network.rs_k", int, docsis.RS_K,
          "Reed-Solomon data symbols per codeword (ITU-T J.83 Annex B: 122); at most network.rs_n",
          ge=1, le=65535, network=DOCSIS),
    Param("network.mpeg_packet_bytes", float, docsis.MPEG_PACKET_BYTES,
          "MPEG-2 transport packet, bytes (ISO/IEC 13818-1: 188)", gt=0, le=65535, network=DOCSIS),
    Param("network.mpeg_header_bytes", float, docsis.MPEG_HEADER_BYTES,
          "MPEG-2 header per packet, mean bytes (Nguyen & Armitage Sec. III.C: 4.5)", ge=0, le=65535,
          network=DOCSIS),
    Param("network.source_bps", float, 155e6, "TCP source -> SW1 link rate, bit/s (Elloumi Sec. 4: 155 Mb/s)",
          gt=0, network=ATM_HFC),
    Param("network.bottleneck_bps", float, 6e6,
          "SW1 <-> SW2 link rate, both directions, bit/s (Elloumi Sec. 4: the 6 Mb/s bottleneck)",
          gt=0, network=ATM_HFC),
    Param("network.bottleneck_delay_s", float, 0.00125,
          "SW1 <-> SW2 propagation delay, s (Elloumi Sec. 4: 1.25 ms)", ge=0, le=MAX_TIME_S, network=ATM_HFC),
    # Elloumi Sec. 6.2, Fig. 23: 1.5 Mb/s from 0 to 10 s, 2 Mb/s from 10 s, 2.5 Mb/s from 20 s.
    RateScheduleParam("network.bottleneck_schedule", list, (),
                      "changes of the SW1 -> SW2 rate: [[time_s, bps], ...], from time_s on the rate is bps "
                      "(Elloumi Fig. 23: [[10, 2e6], [20, 2.5e6]] with bottleneck_bps = 1.5e6)",
                      network=ATM_HFC),
    # Not given by Elloumi: an ATM OC-3 link, fast enough never to limit.
    Param("network.headend_bps", float, 155e6, "SW2 <-> headend link rate, bit/s (not in the paper: 155 Mb/s)",
          gt=0, network=ATM_HFC),
    # Elloumi Sec. 5 (Figs. 4-5, 11-12, 19-21): effective throughput against the EPD threshold at SW1.
    # EPD as Romanow & Floyd (Elloumi ref. [17]) define it: when a packet's first cell arrives at a
    # queue holding more than the threshold, the whole packet is discarded.
    Param("network.epd_threshold_cells", int, None,
          "Early Packet Discard threshold of each switch output queue, cells: a packet whose first cell "
          "finds more cells queued is discarded whole (Elloumi Sec. 4, Romanow & Floyd; absent = no EPD)",
          ge=1, optional=True, network=ATM_HFC),
    # Elloumi footnote 6: the switch buffer is large enough to hold every packet EPD admits.
    Param("network.switch_buffer_cells", int, None,
          "hard limit of each switch output queue, cells; a cell beyond it is lost and the rest of its "
          "packet discarded (PPD) (absent = unbounded, Elloumi footnote 6)",
          ge=1, optional=True, network=ATM_HFC),
    Param("network.driver_buffer_packets", int, 50,
          "the TCP source's interface queue ahead of the source link, IP packets (Elloumi Sec. 4: 50; "
          "absent = unbounded)", ge=1, optional=True, network=ATM_HFC),
    Param("network.processing_s", float, 100e-6,
          "per-packet processing time at each TCP host, a FIFO server of constant service time, s "
          "(Elloumi Table 2: 100 us)", ge=0, le=1, network=ATM_HFC),
    # Lakshman & Madhow Sec. II: capacity mu packets/s, FIFO buffer of B packets, delay tau; Fig. 1
    # uses mu = 100, tau = 1 s.
    Param("network.rate_pps", float, 100.0, "bottleneck capacity mu, packets/s",
          gt=0, network=BOTTLENECK),
    Param("network.buffer_packets", int, None, "bottleneck FIFO buffer B, packets (absent = unbounded)",
          ge=0, optional=True, network=BOTTLENECK),
    Param("network.tau_s", float, 1.0,
          "propagation delay tau: every delay but service and queueing at the bottleneck, s",
          ge=0, le=MAX_TIME_S, network=BOTTLENECK),
    Param("network.loss", float, 0.0, "probability that a packet is lost after the bottleneck",
          ge=0, lt=1, network=BOTTLENECK),
    # The shared upstream channel's MAC. "fifo" is Cohen & Ramanathan's model: one FIFO link that every
    # modem's packets join at once. The others are request/grant MACs: IEEE 802.14 as simulated by
    # Elloumi et al. (Sec. 2, Table 1) and DOCSIS as Nguyen & Armitage describe it (Sec. II).
    Param("upstream.mac", str, "fifo",
          "upstream MAC: fifo = one shared FIFO link (Cohen & Ramanathan); ieee802.14 (Elloumi et al. "
          "Sec. 2) or docsis (Nguyen & Armitage Sec. II) = contention requests, headend grants",
          choices=MACS, network=CABLE, network_defaults={"docsis": "docsis"}),
    # Elloumi Table 1: contention slots of 16 bytes; a data slot is 4 of them (DS/CS size 4:1).
    Param("upstream.minislot_bytes", int, 16,
          "minislot size at the upstream rate, bytes (Elloumi Table 1: 16-byte contention slots)",
          ge=1, network=CABLE),
    # Elloumi Table 1: a frame ("cluster") of 2.27 ms; Nguyen & Armitage Sec. II: a MAP every 2 ms.
    Param("upstream.frame_s", float, 0.002,
          "allocation period: 802.14 frame (Elloumi Table 1: 2.27 ms) or DOCSIS MAP interval (Nguyen & "
          "Armitage Sec. II: 2 ms), s; the engine rounds it to whole minislots", gt=0, le=1, network=CABLE),
    # MULPI leaves a MAP's length to the CMTS; a CMTS may shorten MAPs when little is granted
    # (access/upstream.rs). Absent: every MAP is frame_s long (Nguyen & Armitage Sec. II: 2 ms).
    Param("upstream.min_frame_s", float, None,
          "DOCSIS dynamic MAPs: each MAP as long as its grants plus upstream.contention_slots request slots, "
          "at least this and at most upstream.frame_s, s (absent = every MAP upstream.frame_s long)",
          gt=0, le=1, optional=True, network=CABLE, engine_optional=True),
    Param("upstream.contention", str, "leftover",
          "contention slots per frame: fixed = upstream.contention_slots, leftover = whatever the grants "
          "leave, at least upstream.contention_slots", choices=("fixed", "leftover"), network=CABLE),
    # Elloumi Sec. 5.2: 20 contention slots per cluster.
    Param("upstream.contention_slots", int, 8,
          "contention (request) slots per frame (fixed) or their minimum (leftover) (Elloumi Sec. 5.2: 20)",
          ge=1, network=CABLE),
    # Elloumi Table 1: 64-byte data slots, each carrying one ATM cell MPDU.
    Param("upstream.data_slot_minislots", int, 4,
          "minislots per 802.14 data slot, one ATM cell MPDU (Elloumi Table 1: 64-byte data slots)",
          ge=1, network=CABLE),
    # Elloumi Sec. 2: the headend serves requests first come first served, or round robin.
    Param("upstream.scheduler", str, "fcfs",
          "headend grant scheduler (Elloumi Sec. 2): fcfs = each station's whole request before the next, "
          "rr = one data unit per station in turn", choices=("fcfs", "rr"), network=CABLE),
    # Elloumi Table 1: at most 32 data slots per request; DOCSIS requests minislots in an 8-bit field.
    Param("upstream.max_request", int, 255,
          "largest request: data slots (802.14, Elloumi Table 1: 32) or minislots (DOCSIS, 8-bit field)",
          ge=1, le=255, network=CABLE),
    Param("upstream.piggyback", bool, False,
          "requests piggybacked in granted data (Elloumi Sec. 6.1; DOCSIS piggyback request)", network=CABLE),
    Param("upstream.concatenation", bool, False,
          "DOCSIS concatenation: queued packets sent as one burst up to upstream.max_burst_bytes "
          "(Nguyen & Armitage Sec. II)", network=CABLE),
    Param("upstream.fragmentation", bool, False,
          "DOCSIS fragmentation: a grant smaller than the head packet carries a fragment of it",
          network=CABLE),
    # Nguyen & Armitage Sec. II: a maximum upstream burst of 1600 bytes.
    Param("upstream.max_burst_bytes", int, 1600,
          "DOCSIS maximum upstream burst, bytes (Nguyen & Armitage Sec. II: 1600)", ge=1, network=CABLE),
    # Elloumi Table 1: headend processing time 1 ms.
    Param("upstream.headend_delay_s", float, 0.001,
          "headend processing time: a frame or MAP leaves the headend this long after it is decided, "
          "then takes each modem's propagation delay, s (Elloumi Table 1: 1 ms)",
          ge=0, le=1, network=CABLE),
    # DOCSIS Data Backoff Start / End: after a collision a station defers a random number of
    # contention slots in [0, 2^n), n growing from start to end.
    Param("upstream.backoff_start", int, 3,
          "DOCSIS Data Backoff Start: first backoff window 2^n contention slots", ge=0, le=15, network=CABLE),
    Param("upstream.backoff_end", int, 10,
          "DOCSIS Data Backoff End: largest backoff window 2^n contention slots", ge=0, le=15, network=CABLE),
    Param("upstream.max_retries", int, 16,
          "request attempts before the request (and its packet) is discarded (DOCSIS: 16)",
          ge=1, le=1000, network=CABLE),
    # Elloumi Table 1: guard band and preamble of 5 bytes per burst.
    Param("upstream.burst_overhead_bytes", int, 5,
          "guard band and preamble per upstream burst, bytes (Elloumi Table 1: 5)", ge=0, network=CABLE),
    # DOCSIS RFI 1.1, upstream burst attributes: FEC T of 0-10 bytes (2T parity bytes per codeword; 0 =
    # no FEC; DOCSIS 2.0: up to 16) and k of 16-253 information bytes per codeword, the last shortened.
    # Nguyen & Armitage give no burst profile: off by default.
    Param("upstream.fec_t_bytes", int, 0,
          "DOCSIS burst profile FEC: bytes corrected per Reed-Solomon codeword, T (2T parity bytes each; "
          "0 = no FEC)", ge=0, le=16, network=CABLE, engine_optional=True),
    Param("upstream.fec_codeword_bytes", int, 223,
          "DOCSIS burst profile FEC: information bytes per codeword, k (the last codeword shortened)",
          ge=16, le=253, network=CABLE, engine_optional=True),
    # Nguyen & Armitage Sec. III.C: Ethernet header 18 bytes plus 6 bytes of DOCSIS overhead per IP packet.
    Param("upstream.frame_overhead_bytes", int, 24,
          "bytes added to each IP packet on the upstream (Nguyen & Armitage Sec. III.C: Ethernet 18 + DOCSIS 6)",
          ge=0, network=CABLE),
    # Elloumi Table 1: propagation 5 us/km. Bounded at 1 s/km to keep every delay far inside the clock.
    Param("upstream.delay_s_per_km", float, 5e-6,
          "one-way propagation delay per km between a modem and the headend, s/km (Elloumi Table 1: 5 us/km)",
          ge=0, le=1, network=CABLE),
    # Modem groups ([[modems]]): modems are numbered in group order, group 0 first. Elloumi Sec. 4: one
    # TCP station and N background stations at 25-200 km.
    Param("modems.*.count", int, 1, "cable modems (stations) in this group", ge=1, le=100_000, network=CABLE),
    Param("modems.*.distance_km_min", float, 0.0,
          "distance of the group's nearest modem from the headend, km (modems spread evenly over the range)",
          ge=0, le=1000, network=CABLE),
    Param("modems.*.distance_km_max", float, 0.0,
          "distance of the group's farthest modem from the headend, km (Elloumi Sec. 4: 25-200 km)",
          ge=0, le=1000, network=CABLE),
    # Elloumi Sec. 4 assumes a station's MAC buffer large enough for every ACK: unbounded by default.
    Param("modems.*.queue_packets", int, None,
          "each modem's upstream MAC queue, packets (absent = unbounded)", ge=1, optional=True, network=CABLE),
    Param("modems.*.queue_bytes", int, None,
          "each modem's upstream MAC queue, bytes (absent = unbounded)", ge=1, optional=True, network=CABLE),
    # Elloumi Sec. 4: Poisson sources of 48-byte packets offering upstream load L in total, lambda =
    # L * UR * 48 / (53 N) packets/s per station (UR the upstream rate, 53 bytes per ATM cell).
    Param("modems.*.background_load", float, 0.0,
          "upstream load the group's Poisson background sources offer together, fraction of "
          "network.upstream_bps (Elloumi Sec. 4)", ge=0, lt=1, network=CABLE),
    Param("modems.*.background_bytes", int, 48,
          "background packet size, bytes (Elloumi Sec. 4: 48, one ATM cell)", ge=1, network=CABLE),
    # Elloumi Sec. 6.1 piggybacks requests for the TCP station's ACKs only, not for the background sources.
    Param("modems.*.piggyback", bool, None,
          "requests piggybacked in granted data by the group's modems (Elloumi Sec. 6.1: the TCP "
          "station only) (absent = as upstream.piggyback)", optional=True, network=CABLE,
          engine_optional=True),
    # Elloumi Sec. 6.2, Fig. 18: the station spaces its ACKs by the shortest (min), mean or longest
    # (max) interarrival of the data packets (Figs. 19-21).
    Param("modems.*.ack_spacing", str, "off",
          "Elloumi Fig. 18 ACK spacing at the group's modems, with the interarrival filter of Sec. 6.2 "
          "(min, mean or max; off = none); upstream.mac = \"ieee802.14\" only",
          choices=("off", "min", "mean", "max"), network=CABLE, engine_optional=True),
    # Python-side only: each becomes an ordinary flow (the default flow with this modem and bytes).
    Param("modems.*.downloads", int, 0,
          "bulk downloads per modem of the group, appended as flows after the explicit ones, in modem order",
          ge=0, le=100, network=CABLE, engine=False),
    Param("modems.*.download_bytes", int, 1_000_000_000_000,
          "bytes of each generated download (default 1e12: the source always has data)",
          ge=1, network=CABLE, engine=False),
    Param("modems.*.start_spread_s", float, 0.0,
          "the group's downloads start evenly over [0, this): modem i of n at i * this / n, s",
          ge=0, le=MAX_TIME_S, network=CABLE, engine=False),
    # Cohen & Ramanathan Sec. IV.A: "all receivers and transmitters are assumed to implement TCP Reno".
    Param("tcp.variant", str, "reno", "sender congestion control", choices=("tahoe", "reno", "newreno")),
    # Cohen & Ramanathan Sec. IV.A: data packets 1460 B, ACKs 40 B. 65495 = 65535 - 40 header bytes.
    Param("tcp.mss_bytes", int, 1460, "maximum segment size (payload per packet), bytes", ge=1, le=65495),
    Param("tcp.header_bytes", int, 40, "TCP/IP header bytes per packet (an ACK is this size)", ge=0),
    Param("tcp.initial_window", int, 1, "initial congestion window, segments (Cohen Sec. VI.A: 2)",
          ge=1),
    # Elloumi Table 2: initial SSThreshold 8 KB. Net/3 starts at 65535 << 14 (the largest window with
    # the largest window scale), in effect "infinite".
    Param("tcp.initial_ssthresh_bytes", int, None,
          "initial slow-start threshold, bytes (Elloumi Table 2: 8 KB; absent = Net/3's \"infinite\" "
          "65535 << 14)", ge=1, optional=True, engine_optional=True),
    Param("tcp.dupack_threshold", int, 3,
          "duplicate ACKs that trigger fast retransmit (1 = Cohen Sec. VI.D's \"super\" fast retransmit)", ge=1),
    Param("tcp.timer", str, "bsd",
          "retransmission timer: 4.4BSD coarse ticks, RFC 6298 fine-grained, or ns2 (ns-2.35 TcpAgent: "
          "RTT in ticks, the deadline exact)",
          choices=("bsd", "rfc6298", "ns2")),
    # Cohen & Ramanathan Sec. IV.B: "a coarse granularity (500 ms) retransmission timer"; Sec. VI.C: 200 ms.
    Param("tcp.tick_s", float, 0.5, "BSD retransmission timer tick, s", gt=0, le=MAX_TIME_S),
    Param("tcp.min_rto_s", float, 1.0, "minimum retransmission timeout, s (rfc6298 timer only)",
          gt=0, le=MAX_TIME_S),
    # ns-default.tcl: rtxcur_init_ 3.0 since 2006 (6.0 before, as Net/3's 2 x TCPTV_SRTTDFLT).
    Param("tcp.initial_rto_s", float, None,
          "retransmission timeout before any RTT sample, s (rfc6298 and ns2 timers; absent = the timer's "
          "own: rfc6298 1 s, ns2 3 s; the bsd timer's 6 s is 2 x TCPTV_SRTTDFLT and takes none)",
          gt=0, le=MAX_TIME_S, optional=True, engine_optional=True),    # Cohen & Ramanathan Fig. 13: "maximum window size of 8 kb".
    Param("tcp.send_buffer_bytes", int, 8192, "sender socket buffer, bytes", gt=0),
    Param("tcp.nagle", bool, False, "Nagle's algorithm at the sender (RFC 896)"),
    # TCP stacks as named profiles (python/hfcsim/stacks.py): a stack fills the rule keys below, and
    # the receiver's and flows' keys it names, where the scenario and its preset do not set them.
    Param("tcp.stack", str, stacks.DEFAULT_STACK,
          "a named bundle of TCP rules: " + "; ".join(f"{name}: {text}" for name, text in stacks.DESCRIPTIONS.items())
          + ". A key set explicitly wins over the stack",
          choices=tuple(stacks.STACKS), engine_optional=True),
    # 4.4BSD-Lite tcp_input.c, header prediction (Stevens vol. 2, 28.4; crates/hfcsim-core/src/tcp/sender.rs).
    Param("tcp.header_prediction", bool, False,
          "4.4BSD-Lite's fast path for pure ACKs with cwnd >= the send window: it neither clears the "
          "dupACK count nor deflates cwnd, so the loss after a fast recovery ends in a timeout",
          engine_optional=True),
    Param("tcp.deflate_at_threshold", bool, True,
          "leaving fast recovery deflates cwnd to ssthresh after >= dupack_threshold dupACKs (RFC 5681); "
          "false: only after more than that many, as 4.4BSD-Lite tests it", engine_optional=True),
    Param("tcp.output_after_fast_retransmit", bool, True,
          "send new data right after the fast retransmit if the inflated cwnd allows; false: wait for the "
          "next dupACK, as 4.4BSD-Lite does", engine_optional=True),
    Param("tcp.recover_guard", bool, None,
          "no new fast retransmit until the ACKs pass the highest sequence sent at the last loss (RFC 6582 "
          "3.2 step 2, ns-2's bugFix_); absent = tahoe and newreno guard, reno does not",
          optional=True, engine_optional=True),
    # Net/3 tcp_timer.h: TCPTV_MIN = 1*PR_SLOWHZ, 2 ticks at 500 ms. Whether Cohen Sec. VI.C's 200 ms
    # kernel kept 2 ticks or 1 s (5 ticks) is unknown: the net3 stack says 1 s, net3-rfc5681 2 ticks.
    Param("tcp.min_rto_ticks", int, 2, "bsd timer: the least RTO, in ticks of tcp.tick_s (t_rttmin)",
          ge=1, le=stacks.MAX_MIN_RTO_TICKS, engine_optional=True),
    Param("tcp.buffer_rounding", str, "up",
          "socket buffer to a window of whole segments: up (Net/3 tcp_mss) or down (an ns-2 window_ in "
          "packets, floor(buffer / MSS))", choices=("up", "down"), engine_optional=True),
    Param("tcp.repeat_timeout_holds_ssthresh", bool, False,
          "a second timeout of the same segment keeps ssthresh (RFC 5681 3.1); false: every timeout halves "
          "it again, as 4.4BSD and FreeBSD 4 do", engine_optional=True),
    # ns-2.35 tcp-reno.cc RenoTcpAgent::dupack_action / recv and tcp.cc TcpAgent::slowdown.
    Param("tcp.fast_recovery", str, "bsd",
          "how fast retransmit cuts the window: bsd (Net/3: cwnd = ssthresh + dupACKs, inflated and "
          "deflated to ssthresh) or ns2 (ns-2 Reno: cwnd = half the window exactly, the inflation kept "
          "apart and only after a fast retransmit; reno only)", choices=("bsd", "ns2"), engine_optional=True),
    # ns-2.35 tcp.cc TcpAgent::opencwnd: `if (cwnd_ < ssthresh_)` slow start.
    Param("tcp.slow_start_at_ssthresh", bool, True,
          "slow start while cwnd <= ssthresh (Net/3); false: while cwnd < ssthresh (ns-2 opencwnd)",
          engine_optional=True),
    # Cohen & Ramanathan Sec. IV.A: receivers implement delayed ACK; Sec. III.B: they wait "about 200 ms"
    # (BSD fires the delayed ACK from a 200 ms tick; RFC 1122 4.2.3.2 bounds the delay at 0.5 s).
    Param("receiver.delayed_ack", bool, True, "delayed ACK per RFC 1122 (false = ACK every segment)"),
    Param("receiver.delack_tick_s", float, 0.2,
          "delayed-ACK timer tick, s (net3); with ack_rule = freebsd the callout's delay (FreeBSD 4: 100 ms)",
          gt=0, le=MAX_TIME_S),
    # Nguyen & Armitage Sec. III.B saw FreeBSD receivers ACK alternately 1 and 2 segments (d = 1.5):
    # FreeBSD 4.x's DELAY_ACK callout test and the window update on the application's read
    # (crates/hfcsim-core/src/tcp/receiver.rs).
    Param("receiver.ack_rule", str, "net3",
          "delayed-ACK code: net3 (4.4BSD-Lite: the 200 ms fast timer, an ACK every second segment) or "
          "freebsd (FreeBSD 4.x: the callout test and the read's window update; 1 and 2 segments per ACK) "
          "or ns2 (ns-2.35 DelAckSink: every second packet, or delack_tick_s after a lone one)",
          choices=("net3", "freebsd", "ns2"), engine_optional=True),
    Param("receiver.receive_buffer_bytes", int, 8192, "receiver socket buffer (advertised window), bytes",
          gt=0),
    # Cohen & Ramanathan Fig. 3: "a 3-Mb data transfer"; Sec. VI.A: FTP (server opens) vs HTTP (client opens).
    Param("flows.*.bytes", int, 3_000_000, "application bytes to transfer", gt=0),
    Param("flows.*.direction", str, "down", "down = server to PC, up = PC to server",
          choices=("down", "up")),
    Param("flows.*.opener", str, "server",
          "who opens the connection: server (FTP-style data connection) or client (HTTP-style get)",
          choices=("server", "client")),
    Param("flows.*.start_s", float, 0.0, "when the flow starts, s", ge=0, le=MAX_TIME_S),
    Param("flows.*.http_header_bytes", int, None,
          "HTTP response header written as its own segment before the data, bytes (NCSA 1.5)",
          gt=0, optional=True),
    Param("flows.*.modem", int, 0,
          "which cable modem the flow goes through (0, 1, ...; below the modems' total count if "
          "[[modems]] are given)", ge=0),
    Param("flows.*.handshake", bool, True, "model the SYN / SYN-ACK / ACK connection set-up"),
    Param("flows.*.extra_delay_s", float, 0.0,
          "extra one-way propagation delay on this flow's path before the shared links, s (Lakshman & "
          "Madhow's per-connection tau_i)", ge=0, le=MAX_TIME_S),
    Param("flows.*.send_jitter_s", float, 0.0,
          "random sender processing time per packet, uniform in [0, this), s (ns's overhead_: breaks the "
          "phase effects of deterministic drop-tail queues, Floyd & Jacobson 1992)", ge=0, le=MAX_TIME_S),
    Param("flows.*.drop_packets", list, (),
          "data packets (1-based) whose first transmission is dropped on the forward channel", ge=1),
    # Nguyen & Armitage Sec. III.A: "ICMP Echo/Response exchanges once per second from client to server
    # (using the Unix 'ping' command)". ping's default 56 data bytes: 64-byte ICMP messages, 84-byte IP.
    Param("pings.*.modem", int, 0, "the modem whose client sends the echoes", ge=0, le=2**32 - 1,
          network=PINGABLE),
    Param("pings.*.start_s", float, 0.0, "first echo, s", ge=0, le=MAX_TIME_S, network=PINGABLE),
    # At least 10 ms (chosen): every echo is kept as a row of Result.pings, so an hour's run holds at
    # most 360 000 of them. ping(8) itself allows no less than 2 ms to an unprivileged user.
    Param("pings.*.interval_s", float, 1.0, "time between echoes, s (ping: 1 s; at least 10 ms)", ge=0.01,
          le=MAX_TIME_S, network=PINGABLE),
    Param("pings.*.ip_bytes", int, 84,
          "each echo's IP packet, bytes (ping's 56 data bytes + ICMP 8 + IP 20)", ge=28, le=65535,
          network=PINGABLE),
    Param("pings.*.stop_s", float, None,
          "last echo no later than this, s (absent = until pings.*.after_s past the last TCP flow's end)",
          ge=0, le=MAX_TIME_S, optional=True, network=PINGABLE),
    Param("pings.*.after_s", float, 10.0,
          "without stop_s, keep pinging this long after the last TCP flow ends, s", ge=0, le=MAX_TIME_S,
          network=PINGABLE),
    Param("sim.time_limit_s", float, 3600.0, "simulated-time limit; flows not done by then are unfinished",
          gt=0, le=MAX_TIME_S),
    # Elloumi Table 1: "length of run prior to gathering statistics 1 s".
    Param("sim.measure_from_s", float, 0.0,
          "statistics (measured_bytes, rtt_*) count from this time on, s; below sim.time_limit_s "
          "(Elloumi Table 1: 1 s)", ge=0, le=MAX_TIME_S, engine_optional=True),
)

PARAM_BY_KEY: dict[str, Param] = {p.key: p for p in PARAMS}
OPTIONAL_PARAMS: tuple[Param, ...] = tuple(p for p in PARAMS if p.engine_optional)


def _params_of(section: str) -> list[Param]:
    prefix = f"{section}.*" if section in LIST_SECTIONS else section
    return [p for p in PARAMS if p.key.rsplit(".", 1)[0] == prefix]


# ---------------------------------------------------------------------------------------------------
# Errors: one line, naming the key, the value given, and what is allowed.


def _fmt(value: Any) -> str:
    """A value as the user would write it (TOML/JSON-like), shortened to keep the message one line."""
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _error(key: str, value: Any, what: str) -> ScenarioError:
    return ScenarioError(f"{key} = {_fmt(value)}: {what}")


def _did_you_mean(word: str, candidates: Iterable[str], quote: bool = False) -> str:
    candidates = list(candidates)
    same_but_case = [c for c in candidates if c.lower() == word.lower()]  # "DOCSIS" -> "docsis"
    match = same_but_case or difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    if not match:
        return ""
    return f" (did you mean {json.dumps(match[0]) if quote else match[0]}?)"


def _all_keys(index: int = 0) -> list[str]:
    return [p.key.replace("*", str(index)) for p in PARAMS]


def _unknown(key: str, value: Any, index: int = 0) -> ScenarioError:
    """``index``: the list item (flow or modem group) the key was found in, for the suggestion."""
    candidates = [*SECTIONS, *_all_keys(index)]
    # The right name in the wrong table (network.mss_bytes -> tcp.mss_bytes) beats a near spelling.
    leaf = key.rsplit(".", 1)[-1]
    moved = [c for c in candidates if c.rsplit(".", 1)[-1] == leaf]
    # A misspelt section ("modem" for "modems") beats a key of the same name inside a section.
    section = _did_you_mean(key, SECTIONS) if "." not in key else ""
    hint = section or (f" (did you mean {moved[0]}?)" if moved else _did_you_mean(key, candidates))
    shown = "" if isinstance(value, Mapping) else f" = {_fmt(value)}"
    return ScenarioError(f"unknown key {key}{shown}{hint}")


# ---------------------------------------------------------------------------------------------------
# Resolution: raw dict (from TOML, JSON, Python) -> every key present, typed and in range.


# Named presets: ``preset = "NAME"`` at the top of a scenario fills these values under whatever the
# scenario sets itself (explicit keys win). The preset name itself does not reach the engine.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    # Cohen & Ramanathan Sec. VI, Figs. 17-18: the server-side "modified TCP": an initial window of 2
    # (VI.A), a 200 ms retransmission-timer tick (VI.C) and fast retransmit on the first dupACK (VI.D).
    "modified-tcp": {"tcp": {"initial_window": 2, "tick_s": 0.2, "dupack_threshold": 1}},
    # Nguyen & Armitage Sec. III.A-B: the DOCSIS testbed (network.kind = "docsis", its defaults: DS cap
    # 2 Mb/s, US cap 1 Mb/s, 100 Mb/s Ethernet) with FreeBSD hosts: NewReno, delayed ACK by FreeBSD
    # 4.x's rule (tcp_delacktime 100 ms), FreeBSD 4.x's default socket buffers (tcp_usrreq.c:
    # tcp_sendspace = 32 KB, tcp_recvspace = 64 KB) and a fine-grained timer with FreeBSD's 1 s minimum
    # (TCPTV_MIN = hz). A DOCSIS 1.1 modem requests by piggyback and concatenates (RFI 1.1 Sec. 6.2.5,
    # 6.2.6); N-map-pps switches both off.
    "nguyen04": {
        "network": {"kind": "docsis"},
        "upstream": {"mac": "docsis", "piggyback": True, "concatenation": True},
        "tcp": {"variant": "newreno", "timer": "rfc6298", "min_rto_s": 1.0, "send_buffer_bytes": 32768},
        "receiver": {"ack_rule": "freebsd", "delack_tick_s": 0.1, "receive_buffer_bytes": 65536},
    },
}


def _apply_preset(raw: Mapping[str, Any]) -> dict[str, Any]:
    raw = dict(raw)
    name = raw.pop("preset", None)
    if name is None:
        return raw
    if name not in PRESETS:
        raise _error("preset", name, "must be one of " + ", ".join(json.dumps(p) for p in PRESETS)
                     + _did_you_mean(str(name), PRESETS, quote=True))
    for section, values in PRESETS[name].items():
        table = raw.get(section, {})
        if not isinstance(table, Mapping):
            break  # reported by the section's own validation
        raw[section] = {**values, **table}
    return raw


def _resolve_dict(raw: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise ScenarioError(f"scenario = {_fmt(raw)}: must be a table (a dict)")
    raw = _apply_preset(raw)
    for name, value in raw.items():
        if name not in SECTIONS:
            raise _unknown(str(name), value)
    kind = _network_kind(raw)
    stack = _stack(raw)
    resolved: dict[str, Any] = {"network": _resolve_table(_section(raw, "network"), "network", kind)}
    # The upstream MAC and the modem groups exist only on the cable networks (hfc, atm_hfc): a
    # bottleneck scenario's JSON has neither (the engine's serde defaults stand in: FIFO, no groups).
    upstream = _resolve_table(_section(raw, "upstream"), "upstream", kind)
    groups = _resolve_modems(raw.get("modems", []), kind)
    if kind in CABLE:
        _check_backoff(upstream)
        _check_frame(upstream, resolved["network"])
        _check_ack_spacing(upstream, groups)
        resolved["upstream"] = upstream
        resolved["modems"] = [{name: value for name, value in group.items() if PARAM_BY_KEY[f"{MODEM}.{name}"].engine}
                              for group in groups]
    resolved |= {
        "tcp": _resolve_table(_section(raw, "tcp"), "tcp", kind, defaults=stacks.profile(stack, "tcp")),
        "receiver": _resolve_table(_section(raw, "receiver"), "receiver", kind,
                                   defaults=stacks.profile(stack, "receiver")),
        "flows": _resolve_flows(raw.get("flows"), kind, groups, stacks.profile(stack, "flows")),
        "pings": _resolve_pings(raw.get("pings", []), kind),
        "sim": _resolve_table(_section(raw, "sim"), "sim", kind),
    }
    _check_tcp(resolved["tcp"])
    _check_cm_buffer(resolved["network"])
    _check_switch_buffer(resolved["network"])
    _check_measure_from(resolved["sim"])
    _check_flow_modems(resolved["flows"], groups)
    _check_docsis(resolved["network"])
    _check_pings(resolved["pings"], resolved["flows"], groups, kind)
    return resolved


def _document(resolved: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON document the engine receives (and sweeps hash): a copy of ``resolved`` without the
    ``engine_optional`` keys that are at their default, except on a network in NEW_KINDS or with a
    TCP stack other than the default."""
    out = copy.deepcopy(dict(resolved))
    if not out.get("pings"):
        out.pop("pings", None)  # absent = none: the documents of scenarios without pings are unchanged
    # A stack other than the default sets keys to values other than their defaults: its documents
    # carry every key, so the engine (which knows no stacks) gets each rule and the document
    # resolves again to the same scenario even where a key is set back to its schema default.
    if out["network"]["kind"] in NEW_KINDS or out["tcp"]["stack"] != stacks.DEFAULT_STACK:
        return out
    for p in OPTIONAL_PARAMS:
        section, name = p.key.split(".")[0], p.name
        # A bottleneck scenario has no upstream section to trim.
        tables = out.get(section, []) if section in LIST_SECTIONS else [out[section]] if section in out else []
        for table in tables:
            if name in table and table[name] == p.default:
                del table[name]
    return out


def _stack(raw: Mapping[str, Any]) -> str:
    """The scenario's ``tcp.stack`` (after its preset), checked: its profile fills the defaults below."""
    tcp = _section(raw, "tcp")
    return PARAM_BY_KEY["tcp.stack"].check(tcp.get("stack", stacks.DEFAULT_STACK), "tcp.stack")


def _section(raw: Mapping[str, Any], section: str) -> Mapping[str, Any]:
    table = raw.get(section, {})
    if not isinstance(table, Mapping):
        raise ScenarioError(f"{section} = {_fmt(table)}: must be a table ([{section}])")
    return table


def _network_kind(raw: Mapping[str, Any]) -> str:
    network = _section(raw, "network")
    return PARAM_BY_KEY["network.kind"].check(network.get("kind", "hfc"), "network.kind")


def _kinds(kinds: tuple[str, ...]) -> str:
    """'network.kind = "hfc"', 'network.kind = "hfc" or "atm_hfc"'."""
    return "network.kind = " + " or ".join(f'"{k}"' for k in kinds)


def _resolve_table(table: Mapping[str, Any], section: str, kind: str, prefix: str | None = None,
                   index: int = 0, defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Check the keys a user wrote in one table, then fill every key of this section from defaults.

    ``prefix`` names the table in messages: the section, or ``flows.<index>`` / ``modems.<index>`` for an
    item of a list section. ``defaults`` (a TCP stack's profile) come before the schema's; a callable
    one is given the keys resolved so far (in PARAMS order).
    """
    prefix = prefix or section
    params = {p.name: p for p in _params_of(section)}
    for name, value in table.items():
        key = f"{prefix}.{name}"
        param = params.get(name)
        if param is None:
            raise _unknown(key, value, index)
        if not param.applies_to(kind):
            raise _error(key, value, f'only valid with {_kinds(param.network)} (network.kind is "{kind}")')
    defaults = defaults or {}
    resolved: dict[str, Any] = {}
    for name, p in params.items():
        if not p.applies_to(kind):
            continue
        if name in table:
            value = table[name]
        elif name in defaults:
            value = defaults[name](resolved) if callable(defaults[name]) else defaults[name]
        else:
            value = p.default_for(kind)
        resolved[name] = p.check(value, f"{prefix}.{name}")
    return resolved


def _list_of_tables(items: Any, section: str) -> list[Mapping[str, Any]]:
    if not isinstance(items, (list, tuple)) or not all(isinstance(item, Mapping) for item in items):
        raise ScenarioError(f"{section} = {_fmt(items)}: must be a list of tables ([[{section}]])")
    return list(items)


def _resolve_flows(flows: Any, kind: str, groups: list[dict[str, Any]],
                   defaults: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The explicit flows, then the downloads the modem groups generate.

    Flows absent: one default flow (the Cohen download) unless the modem groups generate downloads, in
    which case the flows are those downloads alone: a group's ``downloads`` says which transfers the
    scenario has, and a hidden extra 3 MB download on modem 0 would surprise. ``flows = []`` is allowed
    only when the groups generate at least one download.
    """
    generated = _generated_flows(groups)
    if flows is None:
        flows = [] if generated else [{}]
    flows = _list_of_tables(flows, "flows")
    if not flows and not generated:
        raise ScenarioError("flows = []: at least one flow is required (or modems.*.downloads >= 1)")
    explicit = [_resolve_table(flow, "flows", kind, prefix=f"flows.{i}", index=i, defaults=defaults)
                for i, flow in enumerate(flows)]
    return explicit + [_resolve_table(flow, "flows", kind, prefix=f"flows.{len(explicit) + i}", index=i,
                                      defaults=defaults)
                       for i, flow in enumerate(generated)]


def _resolve_modems(groups: Any, kind: str) -> list[dict[str, Any]]:
    """Every modem group with every key, download keys included (they are dropped from the JSON later)."""
    groups = _list_of_tables(groups, "modems")
    resolved = [_resolve_table(group, "modems", kind, prefix=f"modems.{i}", index=i) for i, group in enumerate(groups)]
    if groups and kind not in CABLE:  # only empty groups get here: a key in one has been reported already
        raise _error("modems", groups, f'only valid with {_kinds(CABLE)} (network.kind is "{kind}")')
    for i, group in enumerate(resolved):
        if group["distance_km_min"] > group["distance_km_max"]:
            raise _error(f"modems.{i}.distance_km_min", group["distance_km_min"],
                         f"must be <= modems.{i}.distance_km_max ({_fmt(group['distance_km_max'])})")
        # A station's MAC queue is bounded in packets or in bytes, not both (as the CM buffer).
        if group["queue_packets"] is not None and group["queue_bytes"] is not None:
            raise _error(f"modems.{i}.queue_bytes", group["queue_bytes"],
                         f"only one of modems.{i}.queue_packets and modems.{i}.queue_bytes may be set "
                         f"(modems.{i}.queue_packets = {group['queue_packets']})")
    return resolved


def _resolve_pings(pings: Any, kind: str) -> list[dict[str, Any]]:
    pings = _list_of_tables(pings, "pings")
    if pings and kind not in PINGABLE:
        raise _error("pings", pings, f'only valid with {_kinds(PINGABLE)} (network.kind is "{kind}")')
    return [_resolve_table(ping, "pings", kind, prefix=f"pings.{i}", index=i) for i, ping in enumerate(pings)]


def _check_pings(pings: list[dict[str, Any]], flows: list[dict[str, Any]], groups: list[dict[str, Any]],
                 kind: str) -> None:
    for i, ping in enumerate(pings):
        if ping["stop_s"] is not None and ping["stop_s"] < ping["start_s"]:
            raise _error(f"pings.{i}.stop_s", ping["stop_s"], f"must be >= pings.{i}.start_s ({_fmt(ping['start_s'])})")
        # On the hfc network a ping borrows the routes of a flow on its modem (topology.rs).
        if kind == "hfc" and not any(flow["modem"] == ping["modem"] for flow in flows):
            raise _error(f"pings.{i}.modem", ping["modem"], "must be the modem of a flow on network.kind = \"hfc\"")
        total = sum(group["count"] for group in groups)
        if groups and ping["modem"] >= total:
            raise _error(f"pings.{i}.modem", ping["modem"],
                         f"must be < {total}, the number of modems in the modem groups (modems 0..{total - 1})")


def _check_docsis(network: dict[str, Any]) -> None:
    if network["kind"] != "docsis":
        return
    for name in ("cmts_queue", "cm_queue"):
        if network[f"{name}_bytes"] is not None and network[f"{name}_s"] is not None:
            raise _error(f"network.{name}_s", network[f"{name}_s"],
                         f"only one of network.{name}_bytes and network.{name}_s may be set "
                         f"(network.{name}_bytes = {network[f'{name}_bytes']})")
    if network["rs_k"] > network["rs_n"]:
        raise _error("network.rs_k", network["rs_k"], f"must be <= network.rs_n ({network['rs_n']})")
    if network["mpeg_header_bytes"] >= network["mpeg_packet_bytes"]:
        raise _error("network.mpeg_header_bytes", network["mpeg_header_bytes"],
                     f"must be < network.mpeg_packet_bytes ({_fmt(network['mpeg_packet_bytes'])})")


def _generated_flows(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each modem's ``downloads`` as raw flows, in modem order: the default flow through that modem,
    ``bytes = download_bytes``, started at i * start_spread_s / n for modem i of the group's n."""
    flows = []
    first = 0  # the group's first modem number
    for group in groups:
        n = group["count"]
        for i in range(n if group["downloads"] else 0):
            start = i * group["start_spread_s"] / n
            flows += [{"modem": first + i, "bytes": group["download_bytes"], "start_s": start}] * group["downloads"]
        first += n
    return flows


def _check_backoff(upstream: dict[str, Any]) -> None:
    # DOCSIS: the backoff window grows from 2^start to 2^end contention slots.
    if upstream["backoff_start"] > upstream["backoff_end"]:
        raise _error("upstream.backoff_start", upstream["backoff_start"],
                     f"must be <= upstream.backoff_end ({upstream['backoff_end']})")


def frame_minislots(upstream: Mapping[str, Any], upstream_bps: float) -> int:
    """Minislots in one 802.14 frame or DOCSIS MAP: frame_s at the upstream rate, to the nearest whole
    minislot, at least one (the engine's rule, access/channel.rs ``minislots_per_frame``)."""
    return max(1, round(upstream["frame_s"] * upstream_bps / (8 * upstream["minislot_bytes"])))


def _check_frame(upstream: dict[str, Any], network: dict[str, Any]) -> None:
    # A request/grant frame must hold its contention slots and at least one data unit, or nothing is
    # ever granted; an 802.14 collision-resolution group takes 3 contention slots (Elloumi Sec. 2:
    # "a CS within the group is selected randomly in the range (0..2)"), or collided requests wait
    # forever.
    shortest = upstream["min_frame_s"]
    if shortest is not None and upstream["mac"] != "docsis":
        raise _error("upstream.min_frame_s", shortest, f'dynamic MAPs need upstream.mac = "docsis" '
                     f'(upstream.mac is "{upstream["mac"]}")')
    if shortest is not None and shortest > upstream["frame_s"]:
        raise _error("upstream.min_frame_s", shortest, f"must be <= upstream.frame_s ({_fmt(upstream['frame_s'])})")
    if upstream["mac"] == "fifo":
        return
    slots = frame_minislots(upstream, network["upstream_bps"])
    unit = upstream["data_slot_minislots"] if upstream["mac"] == "ieee802.14" else 1
    if upstream["mac"] == "ieee802.14" and upstream["contention_slots"] < 3:
        raise _error("upstream.contention_slots", upstream["contention_slots"],
                     "must be >= 3 with ieee802.14: a collision-resolution group takes 3 contention slots")
    if upstream["contention_slots"] + unit > slots:
        raise _error("upstream.contention_slots", upstream["contention_slots"],
                     f"leaves no room for data: a frame of upstream.frame_s = {upstream['frame_s']:g} s is {slots} "
                     f"minislots at {network['upstream_bps']:g} b/s, and a data unit takes {unit}")


def _check_flow_modems(flows: list[dict[str, Any]], groups: list[dict[str, Any]]) -> None:
    """With modem groups, the modems are exactly theirs: every flow must go through one of them."""
    if not groups:
        return  # no groups: the engine makes one modem per number the flows use
    total = sum(group["count"] for group in groups)
    for i, flow in enumerate(flows):
        if flow["modem"] >= total:
            raise _error(f"flows.{i}.modem", flow["modem"],
                         f"must be < {total}, the number of modems in the modem groups (modems 0..{total - 1})")


def _check_ack_spacing(upstream: dict[str, Any], groups: list[dict[str, Any]]) -> None:
    # Elloumi Sec. 6.2: the ACK-spacing algorithm (Fig. 18) paces the station's requests for its ACKs'
    # data slots: it is defined for the 802.14 MAC.
    for i, group in enumerate(groups):
        if group["ack_spacing"] != "off" and upstream["mac"] != "ieee802.14":
            raise _error(f"modems.{i}.ack_spacing", group["ack_spacing"],
                         f'needs upstream.mac = "ieee802.14" (upstream.mac is "{upstream["mac"]}"): '
                         "Elloumi's ACK spacing (Fig. 18) is defined for the 802.14 MAC")
        # Its paced grants sit at known data slots after a fixed contention region (access/spacing.rs).
        if group["ack_spacing"] != "off" and upstream["contention"] != "fixed":
            raise _error(f"modems.{i}.ack_spacing", group["ack_spacing"],
                         f'needs upstream.contention = "fixed" (upstream.contention is "{upstream["contention"]}")')


def _check_switch_buffer(network: dict[str, Any]) -> None:
    # EPD (Romanow & Floyd) discards a packet whose first cell finds the queue above the threshold; a
    # queue never holds more than its hard limit, so a threshold at or above it would never act.
    threshold, buffer = network.get("epd_threshold_cells"), network.get("switch_buffer_cells")
    if threshold is not None and buffer is not None and threshold >= buffer:
        raise _error("network.epd_threshold_cells", threshold,
                     f"must be < network.switch_buffer_cells ({buffer}), or EPD never triggers")


def _check_measure_from(sim: dict[str, Any]) -> None:
    # Statistics gathered from measure_from_s to the end of the run: that interval must not be empty.
    if sim["measure_from_s"] >= sim["time_limit_s"]:
        raise _error("sim.measure_from_s", sim["measure_from_s"],
                     f"must be < sim.time_limit_s ({_fmt(sim['time_limit_s'])})")


def _check_tcp(tcp: dict[str, Any]) -> None:
    if tcp["initial_rto_s"] is not None and tcp["timer"] == "bsd":
        raise _error("tcp.initial_rto_s", tcp["initial_rto_s"],
                     'not with tcp.timer = "bsd" (its 6 s is 2 x TCPTV_SRTTDFLT); use "rfc6298" or "ns2"')
    if tcp["fast_recovery"] == "ns2" and tcp["variant"] != "reno":
        raise _error("tcp.fast_recovery", "ns2", f'only with tcp.variant = "reno" (ns-2\'s RenoTcpAgent; '
                                                 f'tcp.variant is "{tcp["variant"]}")')


def _check_cm_buffer(network: dict[str, Any]) -> None:
    # A cable modem buffer is bounded in bytes or in packets, not both.
    if network.get("cm_buffer_bytes") is not None and network.get("cm_buffer_packets") is not None:
        raise _error("network.cm_buffer_packets", network["cm_buffer_packets"],
                     "only one of network.cm_buffer_bytes and network.cm_buffer_packets may be set "
                     f"(network.cm_buffer_bytes = {network['cm_buffer_bytes']})")


# ---------------------------------------------------------------------------------------------------
# The resolved scenario.


class Scenario:
    """A resolved, validated scenario: every key present.

    ``Scenario(raw)`` fills defaults and validates ``raw`` (a dict as written in TOML); it raises
    ScenarioError on bad input. Instances are immutable: accessors return copies. ``get`` and
    ``scenario[section]`` see every key; ``to_dict`` and ``to_json`` give the document the engine
    receives, which leaves out the ``engine_optional`` keys at their default (see ``Param``).
    """

    __slots__ = ("_data",)
    _data: dict[str, Any]  # every key, as resolved (the engine's document is _document(_data))

    def __init__(self, raw: Mapping[str, Any] | Scenario | None = None) -> None:
        if isinstance(raw, Scenario):
            raw = raw._data
        self._data = _resolve_dict({} if raw is None else raw)

    def to_dict(self) -> dict[str, Any]:
        """The engine's document as a dict (what ``to_json`` writes)."""
        return _document(self._data)

    def to_json(self, indent: int | None = None) -> str:
        """The engine's document: every key but the ``engine_optional`` ones at their default."""
        return json.dumps(_document(self._data), indent=indent, allow_nan=False)

    def __getitem__(self, section: str) -> Any:
        """A section with every key, e.g. ``scenario["tcp"]``."""
        return copy.deepcopy(self._data[section])

    def get(self, key: str) -> Any:
        """A value by dotted key, e.g. ``get("tcp.variant")`` or ``get("flows.0.bytes")``."""
        node: Any = self._data
        for part in key.split("."):
            node = node[int(part)] if isinstance(node, list) else node[part]
        return copy.deepcopy(node)

    def with_set(self, *assignments: str) -> Scenario:
        """A new scenario with ``dotted.key=value`` overrides applied (as ``--set``)."""
        return load(self, assignments)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self._data == other._data

    def __hash__(self) -> int:
        return hash(self.to_json())

    def __repr__(self) -> str:
        return f"Scenario({self.to_json()})"


def resolve(raw: Mapping[str, Any] | Scenario) -> Scenario:
    """Fill defaults into ``raw`` and validate it (flows missing -> one default flow, or the modem groups'
    downloads if they have any)."""
    return raw if isinstance(raw, Scenario) else Scenario(raw)


def read_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The raw (unvalidated) table in a TOML file (or a JSON file, by its .json suffix)."""
    path = Path(path)
    is_json = path.suffix.lower() == ".json"
    try:
        with path.open("rb") as f:
            return json.load(f) if is_json else tomllib.load(f)
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such scenario file") from None
    except IsADirectoryError:
        raise ScenarioError(f"{path}: is a directory, not a scenario file") from None
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read scenario file ({e.strerror})") from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ScenarioError(f"{path}: invalid {'JSON' if is_json else 'TOML'}: {_one_line(e)}") from None


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split())


def _read(source: Any) -> dict[str, Any]:
    if source is None:
        return {}
    if isinstance(source, Scenario):
        return source.to_dict()
    if isinstance(source, Mapping):
        return copy.deepcopy(dict(source))
    if isinstance(source, (str, os.PathLike)):
        return read_file(source)
    raise ScenarioError(f"scenario = {_fmt(repr(source))}: must be a dict, a TOML path or a Scenario")


def load(source: Mapping[str, Any] | str | os.PathLike[str] | Scenario | None = None,
         sets: Iterable[str] = ()) -> Scenario:
    """A Scenario from a dict, a TOML path, a Scenario or None (the defaults), with ``--set`` overrides."""
    sets = list(sets)
    if isinstance(source, Scenario) and not sets:
        return source
    raw = _read(source)
    for assignment in sets:
        raw = apply_set(raw, assignment)
    try:
        return resolve(raw)
    except ScenarioError as e:
        if isinstance(source, (str, os.PathLike)) and not sets:  # the error is in the file: name it
            raise ScenarioError(f"{source}: {e}") from None
        raise


# ---------------------------------------------------------------------------------------------------
# --set dotted.key=value


def parse_value(text: str) -> Any:
    """A ``--set`` value: a TOML literal if it parses as one (true, 0.01, "reno", [11, 14]), else the
    bare text as a string (so ``tcp.variant=tahoe`` works without quotes)."""
    if "\n" not in text:
        try:
            parsed = tomllib.loads(f"v = {text}")
        except tomllib.TOMLDecodeError:
            pass
        else:
            if len(parsed) == 1:
                return parsed["v"]
    return text


def parse_set(assignment: str) -> tuple[str, Any]:
    """``"flows.0.bytes=300000"`` -> ``("flows.0.bytes", 300000)``."""
    key, sep, text = assignment.partition("=")
    key, text = key.strip(), text.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ScenarioError(f"--set {assignment}: expected dotted.key=value (e.g. tcp.variant=tahoe)")
    if not text:
        raise ScenarioError(f"--set {assignment}: missing value after '=' for {key}")
    return key, parse_value(text)


def apply_set(raw: Mapping[str, Any] | Scenario, assignment: str) -> dict[str, Any]:
    """A copy of the raw scenario ``raw`` with one ``dotted.key=value`` override applied.

    Dots address nested tables, integers address list items (``flows.0.bytes=300000``); the index one
    past the end appends a new item with default values (``flows.1.bytes=...`` on a one-flow
    scenario). Key names are checked later, by ``resolve``, with a suggestion for a misspelt key.
    """
    key, value = parse_set(assignment)
    out = _read(raw)
    parts = key.split(".")
    node: Any = out
    for depth, part in enumerate(parts[:-1]):
        node = _child(node, part, ".".join(parts[: depth + 1]), key, value)
    _store(node, parts[-1], key, value)
    return out


def _child(node: Any, part: str, path: str, key: str, value: Any) -> Any:
    """The table or list at ``path``, created if absent (flows absent = one default flow; modems absent =
    no groups)."""
    if isinstance(node, list):
        index = _index(node, part, path, key, value)
        if index == len(node):
            node.append({})
        child = node[index]
    else:
        if part not in node or node[part] is None:
            if _schema_key(path) in PARAM_BY_KEY:  # e.g. tcp.mss_bytes.x: a parameter is not a table
                raise _error(key, value, f"{path} is a value, not a table")
            node[part] = [{}] if path == "flows" else [] if path in LIST_SECTIONS else {}
        child = node[part]
    if not isinstance(child, (dict, list)):
        raise _error(key, value, f"{path} is a value, not a table")
    return child


def _schema_key(path: str) -> str:
    """``flows.2.bytes`` -> ``flows.*.bytes`` (and ``modems.1.count`` -> ``modems.*.count``), the key of
    its parameter in PARAMS."""
    parts = path.split(".")
    if len(parts) > 1 and parts[0] in LIST_SECTIONS and parts[1].isdigit():
        parts[1] = "*"
    return ".".join(parts)


def _store(node: Any, part: str, key: str, value: Any) -> None:
    if isinstance(node, list):
        index = _index(node, part, key, key, value)
        if index == len(node):
            node.append(value)
        else:
            node[index] = value
    else:
        node[part] = value


def _index(items: list[Any], part: str, path: str, key: str, value: Any) -> int:
    where = path.rsplit(".", 1)[0]
    if not part.isdigit():
        raise _error(key, value, f"{where} is a list: address its items by index ({where}.0, {where}.1, ...)")
    index = int(part)
    if index > len(items):
        raise _error(key, value, f"index {index} out of range: {where} has {len(items)} item(s); "
                                 f"{where}.{len(items)} adds the next one")
    return index


# ---------------------------------------------------------------------------------------------------
# The table as text, for `hfcsim params`.


def param_rows() -> list[tuple[str, str, str, str]]:
    """(key, default, allowed, help) for every parameter, in table order."""
    rows = []
    for p in PARAMS:
        default = " ".join([_default_text(p.default)] + [f"({kind}: {_default_text(value)})"
                                                          for kind, value in p.network_defaults.items()])
        network = " or ".join(f'[network.kind = "{kind}"]' for kind in p.network)
        rows.append((p.key, default, p.allowed(), f"{p.help} {network}".rstrip()))
    return rows


def _default_text(default: Any) -> str:
    return "absent" if default is None else _fmt(list(default) if isinstance(default, tuple) else default)
