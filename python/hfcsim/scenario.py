"""The scenario schema: every parameter declared once, with its unit, default, valid range and help.

Defaults, validation, the resolved JSON sent to the engine, the ``--set`` parser and ``hfcsim params``
are all derived from the one table ``PARAMS`` below (STYLE item 9; ns-3's ``AddAttribute``). A
scenario is data (DESIGN principle 4): it is validated here, once, at the boundary, and every error is
one line naming the key, the value given and what is allowed.

The defaults are the HFC network of Cohen & Ramanathan (IEEE/ACM ToN 6(1), 1998), Sec. IV.A; the
``bottleneck`` network is the single-bottleneck model of Lakshman & Madhow (IEEE/ACM ToN 5(3), 1997),
Sec. II.
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

NETWORK_KINDS = ("hfc", "bottleneck")
SECTIONS = ("network", "tcp", "receiver", "flows", "sim")
FLOW = "flows.*"  # prefix of per-flow keys in PARAMS; "*" stands for the flow's index

# Simulated time is integer nanoseconds in a u64 (DESIGN principle 2): keep every duration far below
# the 584 years that fit, and every integer inside an i64.
MAX_TIME_S = 1e9
MAX_INT = 2**63 - 1


class Param:
    """One scenario parameter: the single place its name, unit, default, range and meaning live."""

    __slots__ = ("key", "type", "default", "help", "ge", "gt", "le", "lt", "choices", "optional", "network")

    def __init__(self, key: str, type: type, default: Any, help: str, *,
                 ge: float | None = None, gt: float | None = None,
                 le: float | None = None, lt: float | None = None,
                 choices: tuple[str, ...] = (), optional: bool = False, network: str | None = None) -> None:
        self.key = key  # dotted key with the unit in its name; "flows.*.<name>" for per-flow keys
        self.type = type  # float, int, bool, str, or list (a list of ints)
        self.default = default  # None = absent (only for optional parameters)
        self.help = help
        self.ge, self.gt, self.le, self.lt = ge, gt, le, lt  # bounds: >=, >, <=, <
        self.choices = choices
        self.optional = optional  # absent / None is valid, meaning "none" or "unbounded"
        self.network = network  # only valid with this network.kind

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
          "network model: the HFC access network (Cohen & Ramanathan) or one bottleneck link "
          "(Lakshman & Madhow)", choices=NETWORK_KINDS),
    # Cohen & Ramanathan Sec. IV.A: 25 Mb/s downstream, 3 Mb/s upstream, 20 ms round trip.
    Param("network.downstream_bps", float, 25e6, "downstream channel rate (CMTS -> cable modem), bit/s",
          gt=0, network="hfc"),
    Param("network.upstream_bps", float, 3e6, "upstream channel rate (cable modem -> CMTS), bit/s",
          gt=0, network="hfc"),
    Param("network.rtt_s", float, 0.020, "base round-trip time server <-> PC without queueing, s",
          ge=0, le=MAX_TIME_S, network="hfc"),
    # Cohen & Ramanathan Sec. IV.A: media errors lose packets independently ("Poisson" loss), on the
    # downstream (data) and on the upstream (ACK) channel separately.
    Param("network.downstream_loss", float, 0.0, "probability that a downstream packet is lost",
          ge=0, lt=1, network="hfc"),
    Param("network.upstream_loss", float, 0.0, "probability that an upstream packet is lost",
          ge=0, lt=1, network="hfc"),
    # Cohen & Ramanathan Sec. V.A: Sec. IV assumed an unbounded CM buffer; Sec. V.B sizes a finite one.
    Param("network.cm_buffer_bytes", int, None, "cable modem buffer, bytes (absent = unbounded)",
          gt=0, optional=True, network="hfc"),
    Param("network.cm_buffer_packets", int, None, "cable modem buffer, packets (absent = unbounded)",
          gt=0, optional=True, network="hfc"),
    # Cohen & Ramanathan Sec. V.A: the CM drains to the PC over 10Base-T.
    Param("network.cm_lan_bps", float, 10e6, "cable modem -> PC LAN rate, bit/s", gt=0, network="hfc"),
    # Lakshman & Madhow Sec. II: capacity mu packets/s, FIFO buffer of B packets, delay tau; Fig. 1
    # uses mu = 100, tau = 1 s.
    Param("network.rate_pps", float, 100.0, "bottleneck capacity mu, packets/s",
          gt=0, network="bottleneck"),
    Param("network.buffer_packets", int, None, "bottleneck FIFO buffer B, packets (absent = unbounded)",
          ge=0, optional=True, network="bottleneck"),
    Param("network.tau_s", float, 1.0,
          "propagation delay tau: every delay but service and queueing at the bottleneck, s",
          ge=0, le=MAX_TIME_S, network="bottleneck"),
    Param("network.loss", float, 0.0, "probability that a packet is lost after the bottleneck",
          ge=0, lt=1, network="bottleneck"),
    # Cohen & Ramanathan Sec. IV.A: "all receivers and transmitters are assumed to implement TCP Reno".
    Param("tcp.variant", str, "reno", "sender congestion control", choices=("tahoe", "reno", "newreno")),
    # Cohen & Ramanathan Sec. IV.A: data packets 1460 B, ACKs 40 B. 65495 = 65535 - 40 header bytes.
    Param("tcp.mss_bytes", int, 1460, "maximum segment size (payload per packet), bytes", ge=1, le=65495),
    Param("tcp.header_bytes", int, 40, "TCP/IP header bytes per packet (an ACK is this size)", ge=0),
    Param("tcp.initial_window", int, 1, "initial congestion window, segments (Cohen Sec. VI.A: 2)",
          ge=1),
    Param("tcp.dupack_threshold", int, 3,
          "duplicate ACKs that trigger fast retransmit (1 = Cohen Sec. VI.D's \"super\" fast retransmit)", ge=1),
    Param("tcp.timer", str, "bsd",
          "retransmission timer: 4.4BSD coarse ticks, or RFC 6298 fine-grained",
          choices=("bsd", "rfc6298")),
    # Cohen & Ramanathan Sec. IV.B: "a coarse granularity (500 ms) retransmission timer"; Sec. VI.C: 200 ms.
    Param("tcp.tick_s", float, 0.5, "BSD retransmission timer tick, s", gt=0, le=MAX_TIME_S),
    Param("tcp.min_rto_s", float, 1.0, "minimum retransmission timeout, s (rfc6298 timer only)",
          gt=0, le=MAX_TIME_S),
    # Cohen & Ramanathan Fig. 13: "maximum window size of 8 kb".
    Param("tcp.send_buffer_bytes", int, 8192, "sender socket buffer, bytes", gt=0),
    Param("tcp.nagle", bool, False, "Nagle's algorithm at the sender (RFC 896)"),
    # Cohen & Ramanathan Sec. IV.A: receivers implement delayed ACK; Sec. III.B: they wait "about 200 ms"
    # (BSD fires the delayed ACK from a 200 ms tick; RFC 1122 4.2.3.2 bounds the delay at 0.5 s).
    Param("receiver.delayed_ack", bool, True, "delayed ACK per RFC 1122 (false = ACK every segment)"),
    Param("receiver.delack_tick_s", float, 0.2, "delayed-ACK timer tick, s", gt=0, le=MAX_TIME_S),
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
    Param("flows.*.modem", int, 0, "which cable modem the flow goes through (0, 1, ...)", ge=0),
    Param("flows.*.handshake", bool, True, "model the SYN / SYN-ACK / ACK connection set-up"),
    Param("flows.*.extra_delay_s", float, 0.0,
          "extra one-way propagation delay on this flow's path before the shared links, s (Lakshman & "
          "Madhow's per-connection tau_i)", ge=0, le=MAX_TIME_S),
    Param("flows.*.send_jitter_s", float, 0.0,
          "random sender processing time per packet, uniform in [0, this), s (ns's overhead_: breaks the "
          "phase effects of deterministic drop-tail queues, Floyd & Jacobson 1992)", ge=0, le=MAX_TIME_S),
    Param("flows.*.drop_packets", list, (),
          "data packets (1-based) whose first transmission is dropped on the forward channel", ge=1),
    Param("sim.time_limit_s", float, 3600.0, "simulated-time limit; flows not done by then are unfinished",
          gt=0, le=MAX_TIME_S),
)

PARAM_BY_KEY: dict[str, Param] = {p.key: p for p in PARAMS}


def _params_of(section: str) -> list[Param]:
    prefix = FLOW if section == "flows" else section
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
    match = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    if not match:
        return ""
    return f" (did you mean {json.dumps(match[0]) if quote else match[0]}?)"


def _all_keys(flow_index: int = 0) -> list[str]:
    return [p.key.replace("*", str(flow_index)) for p in PARAMS]


def _unknown(key: str, value: Any, flow_index: int = 0) -> ScenarioError:
    candidates = [*SECTIONS, *_all_keys(flow_index)]
    # The right name in the wrong table (network.mss_bytes -> tcp.mss_bytes) beats a near spelling.
    leaf = key.rsplit(".", 1)[-1]
    moved = [c for c in candidates if c.rsplit(".", 1)[-1] == leaf]
    hint = f" (did you mean {moved[0]}?)" if moved else _did_you_mean(key, candidates)
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
    resolved = {
        "network": _resolve_table(_section(raw, "network"), "network", kind),
        "tcp": _resolve_table(_section(raw, "tcp"), "tcp", kind),
        "receiver": _resolve_table(_section(raw, "receiver"), "receiver", kind),
        "flows": _resolve_flows(raw.get("flows", [{}]), kind),
        "sim": _resolve_table(_section(raw, "sim"), "sim", kind),
    }
    _check_cm_buffer(resolved["network"])
    return resolved


def _section(raw: Mapping[str, Any], section: str) -> Mapping[str, Any]:
    table = raw.get(section, {})
    if not isinstance(table, Mapping):
        raise ScenarioError(f"{section} = {_fmt(table)}: must be a table ([{section}])")
    return table


def _network_kind(raw: Mapping[str, Any]) -> str:
    network = _section(raw, "network")
    return PARAM_BY_KEY["network.kind"].check(network.get("kind", "hfc"), "network.kind")


def _resolve_table(table: Mapping[str, Any], section: str, kind: str, prefix: str | None = None,
                   flow_index: int = 0) -> dict[str, Any]:
    """Check the keys a user wrote in one table, then fill every key of this section from defaults.

    ``prefix`` names the table in messages: the section, or ``flows.<flow_index>`` for a flow.
    """
    prefix = prefix or section
    params = {p.name: p for p in _params_of(section)}
    for name, value in table.items():
        key = f"{prefix}.{name}"
        param = params.get(name)
        if param is None:
            raise _unknown(key, value, flow_index)
        if param.network not in (None, kind):
            raise _error(key, value, f'only valid with network.kind = "{param.network}" '
                                     f'(network.kind is "{kind}")')
    return {name: p.check(table.get(name, _default(p)), f"{prefix}.{name}")
            for name, p in params.items() if p.network in (None, kind)}


def _default(param: Param) -> Any:
    return list(param.default) if param.type is list else param.default


def _resolve_flows(flows: Any, kind: str) -> list[dict[str, Any]]:
    if not isinstance(flows, (list, tuple)) or not all(isinstance(f, Mapping) for f in flows):
        raise ScenarioError(f"flows = {_fmt(flows)}: must be a list of tables ([[flows]])")
    if not flows:
        raise ScenarioError("flows = []: at least one flow is required")
    return [_resolve_table(flow, "flows", kind, prefix=f"flows.{i}", flow_index=i) for i, flow in enumerate(flows)]


def _check_cm_buffer(network: dict[str, Any]) -> None:
    # A cable modem buffer is bounded in bytes or in packets, not both.
    if network.get("cm_buffer_bytes") is not None and network.get("cm_buffer_packets") is not None:
        raise _error("network.cm_buffer_packets", network["cm_buffer_packets"],
                     "only one of network.cm_buffer_bytes and network.cm_buffer_packets may be set "
                     f"(network.cm_buffer_bytes = {network['cm_buffer_bytes']})")


# ---------------------------------------------------------------------------------------------------
# The resolved scenario.


class Scenario:
    """A resolved, validated scenario: every key present, as the engine receives it.

    ``Scenario(raw)`` fills defaults and validates ``raw`` (a dict as written in TOML); it raises
    ScenarioError on bad input. Instances are immutable: accessors return copies.
    """

    __slots__ = ("_data",)

    def __init__(self, raw: Mapping[str, Any] | Scenario | None = None) -> None:
        if isinstance(raw, Scenario):
            raw = raw._data
        self._data = _resolve_dict({} if raw is None else raw)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self._data)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self._data, indent=indent, allow_nan=False)

    def __getitem__(self, section: str) -> Any:
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
    """Fill defaults into ``raw`` and validate it (flows missing -> one default flow)."""
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
    """The table or list at ``path``, created if absent (flows absent = one default flow)."""
    if isinstance(node, list):
        index = _index(node, part, path, key, value)
        if index == len(node):
            node.append({})
        child = node[index]
    else:
        if part not in node or node[part] is None:
            if _schema_key(path) in PARAM_BY_KEY:  # e.g. tcp.mss_bytes.x: a parameter is not a table
                raise _error(key, value, f"{path} is a value, not a table")
            node[part] = [{}] if path == "flows" else {}
        child = node[part]
    if not isinstance(child, (dict, list)):
        raise _error(key, value, f"{path} is a value, not a table")
    return child


def _schema_key(path: str) -> str:
    """``flows.2.bytes`` -> ``flows.*.bytes``, the key of its parameter in PARAMS."""
    parts = path.split(".")
    if len(parts) > 1 and parts[0] == "flows" and parts[1].isdigit():
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
        default = "absent" if p.default is None else _fmt(_default(p))
        network = f' [network.kind = "{p.network}"]' if p.network else ""
        rows.append((p.key, default, p.allowed(), p.help + network))
    return rows
