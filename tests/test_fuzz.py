"""The fuzz suite: every key the schema declares (``scenario.PARAMS``), fuzzed through the three ways
in (a scenario file with ``hfcsim run``, ``--set``, and ``simulate()``), with valid extremes and
hostile values: wrong types, NaN, +-inf, -0.0, bounds +- one, huge integers, unicode, deep nesting,
unknown keys and out-of-range list indices.

The property: a run ends with sane results (exit 0), or with one line naming what is wrong (exit 2,
``ScenarioError``). Never a traceback, an engine panic, an engine that rejects what the schema
accepted, or a silent stall. Strategies are built from PARAMS itself, so a key added later is
fuzzed with no new test.

The last tests (``test_every_key_changes_the_run_or_is_refused``) are not drawn: for each network kind
and MAC, every key set off its value in a small run changes some output or is refused (issue 26,
defect 4).

Cases: 300 per way in, derandomised, in CI (or the profile's ``max_examples`` if larger). Before a release run 10,000 each: ``pytest tests/test_fuzz.py --hypothesis-profile=long``.
Each run has a wall-clock budget (``BUDGET_S``): a run still going when it runs out was making
progress (the engine checks for interrupts between events), so it is not a hang, and is stopped.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import re
import signal
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import hfcsim
from hfcsim import cli
from hfcsim.errors import EngineError, ScenarioError
from hfcsim.simulate import _run_engine
from hfcsim.scenario import (CABLE, LIST_SECTIONS, MACS, MAX_INT, NETWORK_KINDS, PARAM_BY_KEY, PARAMS, SCHEMA,
                             SECTIONS, Param, RateScheduleParam, load)

BUDGET_S = 3.0
FUZZ = settings(max_examples=max(300, settings.default.max_examples), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                       HealthCheck.filter_too_much])
# Keys that say how long a run is: kept short, or a case would simulate hours.
RUN_LENGTH = ("sim.time_limit_s",)
KEYWORD = re.compile(r"\b(" + "|".join([*SECTIONS, "preset", "scenario", "value", "--set"]) + r")\b")


# ---------------------------------------------------------------------------------------------------
# Values from a Param: valid ones (extremes included) and hostile ones.


def _int_bounds(p: Param) -> tuple[int, int]:
    low = p.ge if p.ge is not None else math.floor(p.gt) + 1 if p.gt is not None else -MAX_INT
    high = p.le if p.le is not None else math.ceil(p.lt) - 1 if p.lt is not None else MAX_INT
    return int(math.ceil(low)), int(high)


def _float_bounds(p: Param) -> tuple[float | None, float | None]:
    return (p.ge if p.ge is not None else p.gt), (p.le if p.le is not None else p.lt)


def _near_default(p: Param) -> st.SearchStrategy[Any]:
    """Values near the default: most runs should be ordinary ones with one key pushed."""
    default = p.default
    if p.type is float and isinstance(default, (int, float)) and default:
        return st.sampled_from([default * f for f in (0.5, 1.0, 2.0)]).filter(p.in_range)
    return st.just(default)


def valid(p: Param) -> st.SearchStrategy[Any]:
    """Values the schema accepts for ``p`` (within one key; cross-key rules may still refuse them)."""
    if isinstance(p, RateScheduleParam):
        return st.lists(st.tuples(st.floats(1e-3, 1e3), st.floats(1.0, 1e9)), max_size=4).map(
            lambda pairs: [[t, bps] for t, bps in sorted({t: bps for t, bps in pairs}.items())])
    if p.choices:
        base: st.SearchStrategy[Any] = st.sampled_from(p.choices)
    elif p.type is bool:
        base = st.booleans()
    elif p.type is int:
        low, high = _int_bounds(p)
        edges = [v for v in (low, low + 1, high - 1, high) if low <= v <= high]
        base = st.one_of(st.sampled_from(edges), st.integers(low, min(high, low + 100)), st.integers(low, high))
    elif p.type is float:
        low, high = _float_bounds(p)
        full = st.floats(low, high, exclude_min=p.gt is not None, exclude_max=p.lt is not None,
                         allow_nan=False, allow_infinity=False)
        edges = [v for v in (low, high, 0.0, -0.0, 5e-324, 1e-9, 1.0) if v is not None and p.in_range(v)]
        base = st.one_of(full, st.sampled_from(edges), _near_default(p)) if edges else st.one_of(full, _near_default(p))
    elif p.type is list:
        low, high = _int_bounds(p)
        base = st.lists(st.one_of(st.integers(low, min(high, low + 50)), st.sampled_from([low, high])), max_size=5)
    else:
        base = st.text(max_size=10)
    base = st.one_of(_near_default(p), base) if p.default is not None else base
    return st.one_of(st.none(), base) if p.optional else base


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


HOSTILE_ANY = [math.nan, math.inf, -math.inf, 2**64, -(2**64), 10**400, "", "x" * 300, "é😀\x00", {"a": 1},
               [], _deep(40), True]


def hostile(p: Param) -> st.SearchStrategy[Any]:
    """Values the schema should refuse for ``p``, each with one line naming the key."""
    out: list[Any] = list(HOSTILE_ANY)
    if not p.optional:
        out.append(None)
    if p.type is int:
        low, high = _int_bounds(p)
        out += [low - 1, high + 1, 1.5, float(max(low, 0)), "1"]
    elif p.type is float:
        low, high = _float_bounds(p)
        if low is not None:
            out.append(low if p.gt is not None else math.nextafter(low, -math.inf))
        if high is not None:
            out.append(high if p.lt is not None else math.nextafter(high, math.inf))
        out += ["1.0", [1.0]]
    elif p.type is bool:
        out += [1, 0, "true", 1.0]
    elif p.type is str:
        out += [1, 1.5] + ([c.upper() + "x" for c in p.choices[:1]])
    elif p.type is list:
        low, high = _int_bounds(p)
        out += [5, [1.5], [True], [low - 1], [high + 1], [[1]], "1,2"]
    if p.type is bool:  # True is valid for a bool
        out.remove(True)
    return st.sampled_from(out)


# ---------------------------------------------------------------------------------------------------
# Scenarios: a network kind, a few keys set (mostly valid), sometimes a stray key or a wrong index.


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    """A raw scenario and the (dotted key, value) assignments it was built from, in order."""
    kind = draw(st.sampled_from(NETWORK_KINDS))
    assignments: list[tuple[str, Any]] = [("network.kind", kind)]
    params = [p for p in PARAMS if p.applies_to(kind) and p.key != "network.kind" and p.key not in RUN_LENGTH]
    # Half the cases with some keys of other networks, which must be refused.
    # One case in five with any key, those of other networks too, which must be refused.
    pool = params if draw(st.integers(0, 4)) else [p for p in PARAMS if p.key != "network.kind"]
    drawn = draw(st.lists(st.sampled_from(pool), max_size=5, unique_by=lambda p: p.key))
    for p in drawn:
        bad = draw(st.integers(0, 9)) == 0  # one key in ten hostile
        value = draw(hostile(p) if bad else valid(p))
        key = p.key.replace("*", str(draw(st.integers(0, 1))))
        assignments.append((key, value))
    # The upstream's MAC keys and the modem groups' (all but count) need a request/grant MAC (schema.toml
    # `requires`; a FIFO upstream refuses them, issue 26, defect 4): with one of them, a MAC they take,
    # but one case in ten, which must be refused under FIFO.
    needs = [set(macs) for p in drawn if p.applies_to(kind) for macs in [_requires(p).get("upstream.mac")] if macs]
    if needs and "upstream.mac" not in {p.key for p in drawn} and draw(st.integers(0, 9)) < 9:
        macs = set.intersection(*needs) or set.union(*needs)
        assignments.append(("upstream.mac", draw(st.sampled_from(sorted(macs)))))
    if draw(st.integers(0, 14)) == 0:  # a stray key: unknown, or an index past the end
        assignments.append(draw(st.sampled_from([
            ("network.no_such_key", 1), ("flows.5.bytes", 1000), ("tcp", 3), ("flows.x.bytes", 1),
            ("flows.\u00b2.bytes", 1), ("nosection.key", 1), ("preset", [1]), ("preset", "no-such"),
            ("tcp.mss_bytes.x", 1), ("flows", {"bytes": 1})])))
    assignments.append(("sim.time_limit_s", draw(st.sampled_from([0.5, 2.0, 10.0]))))
    raw: dict[str, Any] = {}
    for key, value in assignments:
        with contextlib.suppress(ScenarioError, TypeError, IndexError, ValueError):
            _place(raw, key, value)
    return raw, assignments


def _requires(p: Param) -> dict[str, list[Any]]:
    """schema.toml's ``requires`` of ``p``: set off its default, each named key must hold one of these."""
    section, name = p.key.split(".")[0], p.name
    return SCHEMA[section][name].get("requires", {})


def _place(raw: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` in the raw dict as a TOML file would (lists of tables grow to reach the index)."""
    parts = key.split(".")
    node: Any = raw
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            index = int(part)
            while len(node) <= index:
                node.append({})
            node = node[index]
        else:
            default = [] if part in LIST_SECTIONS and i == 0 else {}
            node = node.setdefault(part, default)
        if not isinstance(node, (dict, list)):
            raise TypeError(key)
    if isinstance(node, list):
        index = int(parts[-1])
        while len(node) <= index:
            node.append({})
        node[index] = value
    else:
        node[parts[-1]] = value


# ---------------------------------------------------------------------------------------------------
# Checks.


_ENGINE_CALLER = _run_engine.__code__


class _OverBudget(KeyboardInterrupt):
    """The run's wall-clock budget ran out (raised by SIGALRM; the engine polls signals)."""


@contextlib.contextmanager
def _budget(seconds: float = BUDGET_S):
    fired = []

    def alarm(signum: int, frame: Any) -> None:
        # Python runs a handler at the next bytecode of whatever Python code is running: a gc
        # callback (where an exception is only "unraisable"), or between open() and its `with`
        # (leaving a file to the finaliser). Raise only while the engine runs, which polls signals
        # from the frame that called it; anywhere else, try again shortly.
        if frame is None or frame.f_code is not _ENGINE_CALLER:
            signal.setitimer(signal.ITIMER_REAL, 0.01)
            return
        fired.append(True)
        raise _OverBudget()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def check_one_line(message: str) -> None:
    assert message and "\n" not in message.strip() and "Traceback" not in message, message
    assert KEYWORD.search(message) or re.search(r"\w+\.\w+", message), f"names no key: {message}"
    assert "engine rejected" not in message, f"the schema accepted what the engine refuses: {message}"


def check_sessions(rows: list[dict[str, Any]]) -> None:
    """Games' and calls' rows (issue 37): received <= sent, lost and late within them, no metric
    negative or NaN (tests/test_realtime.py draws whole sessions)."""
    for row in rows:
        assert 0 <= row["received"] <= row["sent"] and row["lost"] == row["sent"] - row["received"], row
        assert 0 <= row["late"] <= row["received"], row
        for name, value in row.items():
            if isinstance(value, float):
                assert not math.isnan(value) and value >= 0, (name, row)


def check_sane(scenario: dict[str, Any], flows: list[dict[str, Any]], engine: dict[str, Any]) -> None:
    """What accepted input must give: bytes delivered <= bytes, finished flows complete, rates
    finite and within the bottleneck, and no flow left unfinished while the run stopped early."""
    network, limit = scenario["network"], scenario["sim"]["time_limit_s"]
    for flow, f in zip(scenario["flows"], flows, strict=True):
        assert 0 <= f["delivered_bytes"] <= f["bytes"], f
        if f["finished"]:
            assert f["delivered_bytes"] == f["bytes"], f
        throughput = f["throughput_bps"]
        if throughput is not None:
            assert math.isfinite(throughput) and throughput >= 0, f
            cap = _path_rate(network, flow, scenario["tcp"], scenario.get("modems") or [])
            assert cap is None or throughput <= cap * (1 + 1e-9), (f, cap)
        assert (f["end_reason"] == "finished") == f["finished"], f
        if not f["finished"] and flow["start_s"] < limit:
            # Unfinished: the run reached its time limit, or TCP gave up (Net/3: TCP_MAXRXTSHIFT), in
            # the handshake or after; its end reason says which (issue 26, defect 6).
            assert f["end_reason"] in ("time_limit", "gave_up", "not_started"), f
            assert engine["simulated_s"] >= limit * (1 - 1e-9) or f["end_reason"] != "time_limit", (
                f"flow {f['flow']} unfinished, but the run stopped at {engine['simulated_s']} s < {limit} s")


def _path_rate(network: dict[str, Any], flow: dict[str, Any], tcp: dict[str, Any],
               modems: list[dict[str, Any]]) -> float | None:
    """The slowest rate on the flow's data path where it is one number (payload bits/s), else None. A
    bonded modem's upstream is its channels together (modems.*.bonded_channels)."""
    if network["kind"] == "hfc":
        bonded = max((g.get("bonded_channels", 1) for g in modems), default=1)
        channel = network["downstream_bps"] if flow["direction"] == "down" else network["upstream_bps"] * bonded
        return min(channel, network["cm_lan_bps"])
    if network["kind"] == "bottleneck":
        return network["rate_pps"] * tcp["mss_bytes"] * 8
    return None


def _run_api(raw: dict[str, Any]) -> None:
    try:
        with _budget() as fired:
            result = hfcsim.simulate(raw)
    except ScenarioError as e:
        event("refused")
        event(re.sub(r"-?\d[\d.e+-]*|\"[^\"]*\"", "#", str(e))[:70])  # messages by kind
        check_one_line(str(e))
        return
    except KeyboardInterrupt:
        event("over budget")
        assert fired, "KeyboardInterrupt without the budget running out"
        return
    except EngineError as e:
        pytest.fail(f"engine error on accepted input: {e}")
    event("ran")
    check_sane({section: result.scenario[section] for section in ("network", "tcp", "flows", "sim")},
               result.flows, result.engine)
    check_sessions(result.game_rows + result.call_rows)


def _run_cli(argv: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _budget() as fired:
            status = cli.main(argv)
    except KeyboardInterrupt:  # the budget ran out outside cli.main, which handles its own
        assert fired, "KeyboardInterrupt without the budget running out"
        event("over budget")
        return
    event({0: "ran", 2: "refused", cli.EXIT_INTERRUPTED: "over budget"}.get(status, f"exit {status}"))
    if status == cli.EXIT_INTERRUPTED:
        assert fired, "exit 130 without the budget running out"
        return
    assert status in (0, 2), f"exit {status}: {err.getvalue()}"
    if status == 2:
        lines = err.getvalue().splitlines()
        assert len(lines) == 1 and lines[0].startswith("hfcsim: error: "), err.getvalue()
        check_one_line(lines[0])
        return
    result = json.loads(out.getvalue())
    check_sane(result["scenario"], result["flows"], result["engine"])
    check_sessions(result.get("games", []) + result.get("calls", []))


def _toml(value: Any) -> str:
    """A value as a TOML literal for ``--set`` (None has none: it goes as the bare word)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return "None"


# ---------------------------------------------------------------------------------------------------
# The three ways in.


@FUZZ
@given(case=scenarios())
def test_fuzz_simulate(case):
    raw, _ = case
    _run_api(raw)


@FUZZ
@given(case=scenarios())
def test_fuzz_set(case):
    _, assignments = case
    argv = ["run", "--json"]
    for key, value in assignments:
        argv += ["--set", f"{key}={_toml(value)}"]
    _run_cli(argv)


@FUZZ
@given(case=scenarios())
def test_fuzz_scenario_file(case, tmp_path_factory):
    raw, _ = case
    path = tmp_path_factory.mktemp("fuzz") / "scenario.json"
    path.write_text(json.dumps(raw))  # NaN and inf as JSON's usual extensions, which Python reads
    _run_cli(["run", str(path), "--json"])


# ---------------------------------------------------------------------------------------------------
# Every key acts (issue 26, defect 4: a key either changes the run or is refused with one line). For
# each network kind and MAC, every key the schema accepts there, set off its value in a small run,
# changes some output (anything in the result but the scenario's echo and the wall-clock time) or is
# refused with one line.
#
# A deterministic sample, not drawn: one or a few values per key (ACT_VALUES, else twice and half the
# run's value, the other choices, the other bool, small values for an absent one), each tried in one or
# more small runs (ACT_CONTEXTS: what else a key needs before it can act, e.g. PIE's target under PIE, a
# background packet size under a background load, a window beyond 64 KB for window scaling). A key acts
# if one of its values changes one of its runs. About 2,400 runs of a few ms each: ~11 s on one core.
# The keys found to change nothing are ACT_NONE's, each with the reason: the test fails when one acts
# again (remove it there) or when another stops acting.
#
# Its limits: the default TCP stack only (the rule keys under every stack, variant and flow control are
# test_every_rule_key_acts_on_the_path_that_runs's, below; tcp.min_rto_s, refused under the bsd timer, is
# set here under rfc6298), and a key acts if it acts in one of its runs (DOCSIS's max_burst_bytes and
# max_request change nothing without concatenation, even below one packet: set here with it).

ACT_COMBOS = [("bottleneck", None)] + [(kind, mac) for kind in NETWORK_KINDS if kind in CABLE for mac in MACS]
ACT_SKIP = {  # the keys that name the case, and those no short run provokes
    "network.kind": "names the case",
    "upstream.mac": "names the case",
    # a second timeout of the same segment after a large window: 1 seed in 20 of a lossy run; Rust's
    # tcp/newreno_tests.rs and tests/today.rs pin it
    "tcp.repeat_timeout_holds_ssthresh": "rare",
}


def _act_base(kind: str, mac: str | None) -> list[str]:
    """The run a key is set in: a lossy 300 kB download and a 100 kB upload through modem 0 in 10 s; on
    a cable network a second modem group (with a background load under a MAC), a ping, a game and a call."""
    sets = [f"network.kind={kind}", "flows.0.bytes=300000", 'flows.1.direction="up"', "flows.1.bytes=100000",
            "sim.time_limit_s=10"]
    if kind == "bottleneck":
        sets += ["network.loss=0.02", "network.tau_s=0.05", "network.rate_pps=1000", "network.buffer_packets=30"]
    else:
        sets += [f'upstream.mac="{mac}"', "network.downstream_loss=0.02", "network.upstream_loss=0.01",
                 "modems.0.count=1", "modems.1.count=2"]
        sets += ["modems.1.background_load=0.1"] if mac != "fifo" else []
    if PARAM_BY_KEY["pings.*.modem"].applies_to(kind):
        sets += ["pings.0.modem=0", "pings.0.interval_s=0.5"]
    if PARAM_BY_KEY["games.*.modem"].applies_to(kind):  # issue 37: a game and a call beside the ping
        sets += ["games.0.modem=0", "calls.0.modem=0"]
    return sets


def _loss(kind: str, p: float) -> list[str]:
    return [f"network.loss={p}"] if kind == "bottleneck" else [f"network.downstream_loss={p}"]


_BIG = ["tcp.send_buffer_bytes=262144", "receiver.receive_buffer_bytes=262144", "flows.0.bytes=3000000"]
# Each network's AQM queue, and what builds a queue there: on hfc a LAN slower than the downstream (under a
# request/grant MAC the ACKs' access delay keeps the downstream below 10 Mb/s), on the bottleneck room.
_AQM = {"hfc": ["network.cm_buffer_aqm", "network.cm_lan_bps=1000000"],
        "bottleneck": ["network.bottleneck_aqm", "network.buffer_packets=300"], "docsis": ["network.cmts_aqm"]}


def _aqm(kind: str, name: str) -> list[str]:
    key, *queue = _AQM[kind]
    return _BIG + _loss(kind, 0.0) + [f'{key}="{name}"', *queue]


_CONTEXT = {  # name -> sets added to the base run, by network kind
    "plain": lambda kind: [],
    # a window beyond 64 KB, with and without losses: recovery and window scaling
    "big-loss": lambda kind: _BIG + _loss(kind, 0.02),
    "big-loss5": lambda kind: _BIG + _loss(kind, 0.05),
    "big-burst": lambda kind: _BIG + _loss(kind, 0.0) + [
        "flows.0.drop_packets=[" + ", ".join(str(i) for i in range(40, 56)) + "]"],
    "wide": lambda kind: _BIG + _loss(kind, 0.0) + ["flows.0.extra_delay_s=0.2"],
    # a large receive buffer and no send buffer set: the send buffer limits the window, so that Linux's
    # growth of it (tcp.sndbuf_autotuning, which an explicit send buffer refuses) shows
    "sndbuf": lambda kind: ["receiver.receive_buffer_bytes=262144", "flows.0.bytes=3000000"] + _loss(kind, 0.0),
    "wide-loss": lambda kind: _BIG + _loss(kind, 0.01) + ["flows.0.extra_delay_s=0.2"],
    "long-loss": lambda kind: _loss(kind, 0.1) + ["flows.0.bytes=3000000", "sim.time_limit_s=30"],
    "rfc6298": lambda kind: _BIG + _loss(kind, 0.05) + ['tcp.timer="rfc6298"'],
    # a queue under each AQM, and the dummynet pipe
    "big": lambda kind: _BIG + _loss(kind, 0.0),
    "pie": lambda kind: _aqm(kind, "pie"),
    "codel": lambda kind: _aqm(kind, "codel"),
    # an unbounded modem queue: within MULPI's default 100 ms the drop-tail limit acts before the target
    "docsis_pie": lambda kind: _BIG + _loss(kind, 0.0) + ['network.cm_aqm="docsis_pie"', "flows.1.bytes=3000000",
                                                          'network.default_buffer="unbounded"'],
    # more in flight than 100 ms of the downstream: 256 KB windows over 2 Mb/s (docsis: its 2 Mb/s cap)
    "buffer": lambda kind: _BIG + _loss(kind, 0.0) + (["network.downstream_bps=2000000"] if kind == "hfc" else []),
    "pipe": lambda kind: _BIG + _loss(kind, 0.0) + ["network.server_limit_bps=2000000"],
    # the TCP source's interface queue fills only behind a source link slower than the bottleneck
    "driver": lambda kind: _BIG + _loss(kind, 0.0) + ["network.source_bps=1000000"],
    # what a modem group's key needs: a background load of its own, downloads, two modems, distance
    "background": lambda kind: ["modems.0.background_load=0.1"],
    "downloads": lambda kind: ["modems.0.downloads=1"],
    "spread": lambda kind: ["modems.0.count=2", "modems.0.downloads=1"],
    "far": lambda kind: ["modems.0.distance_km_min=100.0", "modems.0.distance_km_max=100.0"],
    # what a MAC key needs: FEC, fixed contention, concatenation, many stations (collisions, and
    # several requests waiting for the scheduler: DOCSIS's one packet per request without
    # concatenation leaves fcfs and rr the same order)
    "fec": lambda kind: ["upstream.fec_t_bytes=8"],
    "fixed": lambda kind: ['upstream.contention="fixed"'],
    "concatenation": lambda kind: ["upstream.concatenation=true"],
    "crowd": lambda kind: ["upstream.concatenation=true", "modems.1.count=20", "modems.1.background_load=0.6"],
    # two upstream channels: group 1 on the second (for a bond over both), or group 0 bonding both (so
    # that static and balanced assignments are both valid and differ)
    "two-channels": lambda kind: ["upstream.channels=2", "modems.1.channel=1"],
    "bonded-pair": lambda kind: ["upstream.channels=2", "modems.0.bonded_channels=2"],
    # HyStart is CUBIC's: a queue to find before a loss (a window beyond the path's 62 KB; on docsis the
    # MULPI default buffer drops in slow start, below HyStart's 16 segments)
    "cubic": lambda kind: _BIG + _loss(kind, 0.0) + ['tcp.variant="newreno"', 'tcp.congestion_control="cubic"'] + (
        ['network.default_buffer="unbounded"'] if kind == "docsis" else []),
    # CUBIC's Reno-friendly estimate acts after a cut, in congestion avoidance
    "cubic-loss": lambda kind: _BIG + _loss(kind, 0.02) + ['tcp.variant="newreno"', 'tcp.congestion_control="cubic"'],
    # Linux's read-time window update acts where a held segment leaves at most half the window offered
    "read": lambda kind: ['receiver.ack_rule="linux"', "receiver.receive_buffer_bytes=2920"],
    # Linux's PSH acts where a window of an odd number of segments leaves one held each round trip
    "push": lambda kind: ['receiver.ack_rule="linux"', "receiver.receive_buffer_bytes=7300"],
    # Linux's window acts on a window-limited transfer (7,240 B and growing, against the buffer's 7,300);
    # a segment's memory where the rule is on
    "lwin": lambda kind: ['receiver.ack_rule="linux"', "receiver.receive_buffer_bytes=7300"],
    "truesize": lambda kind: ['receiver.ack_rule="linux"', "receiver.linux_window=true",
                              "receiver.receive_buffer_bytes=7300"],
    # the downstream scheduler's keys act where flows contend for the channel: four downloads, each
    # through a 20 Mb/s cap on a 5 Mb/s channel, group 1 with its own priority
    "contend": lambda kind: _BIG + _loss(kind, 0.0) + [
        "network.downstream_bps=5e6", "network.ds_rate_bps=20e6", "modems.0.downloads=1", "modems.0.download_bytes=3000000", "modems.1.downloads=1",
        "modems.1.download_bytes=3000000", "modems.1.ds_priority=0"],
    # a flow's own control or ECN takes it to today's sender, which recovers as NewReno (issue 36)
    "newreno": lambda kind: ['tcp.variant="newreno"'],
    # an application already there (issue 37): setting one of its keys must change its run, not create it
    "web": lambda kind: ["web.0.modem=0", "web.0.objects=[30000, 30000, 30000]", "web.0.subobjects=[20000]",
                         "web.0.hosts=2", "web.0.pages=2", "web.0.think_s=0.5"],
    # HTTP/1.1 with more objects on one host than its connections
    "web1": lambda kind: ["web.0.modem=0", "web.0.http=1", "web.0.objects=[20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000]"],
    "web-profile": lambda kind: ["web.0.modem=0"],
    # a video whose player reaches the ladder's top (its own buffer target there), or never does
    # (Net/3's 8 KB windows over the lossy base carry about 2 Mb/s: a ladder below that fills the buffer)
    "video": lambda kind: ["video.0.modem=0", "video.0.duration_s=60", "video.0.bitrates_bps=[100000, 200000, 400000]"]
    + _loss(kind, 0.0),
    "video-mid": lambda kind: ["video.0.modem=0", "video.0.duration_s=60", "video.0.bitrates_bps=[100000, 200000, 500000000]"],
    "video-ladder": lambda kind: ["video.0.modem=0", "video.0.duration_s=60"],
    "bba": lambda kind: ["video.0.modem=0", "video.0.duration_s=60", "video.0.bitrates_bps=[100000, 200000, 400000]",
                         'video.0.abr="bba"'],
    # a responsiveness test within the 10 s run: a short idle phase, load and probes
    "rpm": lambda kind: ["rpm.0.modem=0", "rpm.0.idle_s=0.5", "rpm.0.duration_s=4", "rpm.0.warmup_s=1",
                         "rpm.0.probe_interval_s=0.2"],
    # a modem group's mix: enough modems for a fraction to pick some
    "mix": lambda kind: ["modems.0.count=10"],
    "mix-web": lambda kind: ["modems.0.count=4", "modems.0.web=1.0"],
}
# Loss recovery's keys act on some loss patterns only: several runs, so that an unrelated change in the
# engine does not leave one with none.
_RECOVERY = ["plain", "big-loss", "big-loss5", "big-burst", "wide-loss", "long-loss"]
ACT_CONTEXTS = {
    "network.pie_target_s": ["pie"], "network.codel_target_s": ["codel"], "network.codel_interval_s": ["codel"],
    "network.docsis_pie_target_s": ["docsis_pie"], "network.server_queue_bytes": ["pipe"],
    "network.default_buffer": ["buffer"],
    "network.driver_buffer_packets": ["driver"], "network.buffer_packets": ["plain", "big"],
    "modems.*.background_bytes": ["background"], "modems.*.download_bytes": ["downloads"],
    "modems.*.start_spread_s": ["spread"], "upstream.delay_s_per_km": ["far"],
    "upstream.fec_codeword_bytes": ["fec"], "upstream.contention_slots": ["plain", "fixed"],
    "upstream.max_burst_bytes": ["concatenation"], "upstream.max_request": ["plain", "concatenation"],
    "upstream.fragmentation": ["concatenation", "crowd"], "upstream.scheduler": ["plain", "crowd"],
    "upstream.backoff_end": ["crowd"], "upstream.max_retries": ["crowd"],
    "modems.*.bonded_channels": ["two-channels"], "upstream.load_balancing": ["bonded-pair"],
    "tcp.window_scaling": ["wide"], "tcp.sndbuf_autotuning": ["sndbuf"], "tcp.min_rto_s": ["rfc6298"], "receiver.ack_on_read": ["read"],
    "receiver.ack_on_push": ["push"], "receiver.linux_window": ["lwin"], "receiver.skb_truesize_bytes": ["truesize"],
    "tcp.hystart": ["cubic"], "tcp.cubic_linux_friendliness": ["cubic-loss"], "tcp.prr_linux": _RECOVERY,
    **{key: ["contend"] for key in ("network.ds_priority", "network.ds_min_rate_bps", "modems.*.ds_priority",
                                    "modems.*.ds_min_rate_bps")},
    "tcp.retransmit_lost_only": _RECOVERY, "flows.*.congestion_control": ["newreno"], "flows.*.ecn": ["newreno"],
    **{f"tcp.{name}": _RECOVERY for name in ("deflate_at_threshold", "fast_recovery", "output_after_fast_retransmit",
                                             "recover_guard", "min_rto_ticks", "nagle")},
    **{p.key: ["web"] for p in PARAMS if p.key.startswith("web.")},
    "web.*.connections_per_host": ["web1"], "web.*.profile": ["web-profile"],
    **{p.key: ["video"] for p in PARAMS if p.key.startswith("video.")},
    "video.*.buffer_s": ["video-mid"], "video.*.ladder": ["video-ladder"],
    "video.*.bba_reservoir_s": ["bba"], "video.*.bba_cushion_s": ["bba"],
    **{f"modems.*.{name}": ["mix"] for name in ("mix", "web", "video")}, "modems.*.page_profile": ["mix-web"],
    **{p.key: ["rpm"] for p in PARAMS if p.key.startswith("rpm.")},
}
ACT_VALUES = {  # where twice or half the run's value would not reach the key's effect
    # a safety factor small enough to pick another bitrate; a ladder the schema accepts
    "video.*.safety": [0.01], "video.*.bitrates_bps": [[500000, 2000000]],
    # a top target the buffer reaches within the run (docsis's 2 Mb/s cap fills 30 s of video slowly)
    "video.*.top_buffer_s": [20.0], "video.*.buffer_s": [4.0],
    # a deadline below the game's one-way delays (an idle hfc path's are a few ms: 25 and 100 ms pass them all)
    "games.*.deadline_s": [0.0005],
    # a reserved rate above the contending flows' fair share of the 5 Mb/s channel, below their cap
    "network.ds_min_rate_bps": [3e6], "modems.*.ds_min_rate_bps": [3e6],
    "network.cmts_queue_s": [0.001], "network.cm_queue_s": [0.001], "network.driver_buffer_packets": [1, 5],
    "network.pie_target_s": [0.003, 0.05], "network.codel_target_s": [0.001, 0.05],
    "network.codel_interval_s": [0.01, 0.5], "network.docsis_pie_target_s": [0.002, 0.05],
    "network.server_queue_bytes": [5000],
    "sim.time_limit_s": [1.0], "upstream.max_request": [1, 64], "upstream.max_burst_bytes": [3200, 800],
    "upstream.max_retries": [1], "upstream.backoff_end": [3, 15],
}


def _act_values(p: Param, current: Any) -> list[Any]:
    if p.key in ACT_VALUES:
        return ACT_VALUES[p.key]
    if p.type is bool:
        return [v for v in (True, False) if v != current]
    if p.choices:
        return [c for c in p.choices if c != current]
    if isinstance(p, RateScheduleParam):
        return [[[1.0, 2e6]]]
    if p.type is list:
        return [[1, 5]]
    candidates = [current * 2, current / 2] if current else [1, 0.1, 10, 100, 1000]
    values = []
    for c in candidates:
        c = int(round(c)) if p.type is int else float(c)
        if c != current and p.in_range(c) and c not in values:
            values.append(c)
    return values[:2]


def _outcome(sets: list[str]) -> str | None:
    """The run's output as text (None if refused: with one line naming a key)."""
    try:
        scenario = load(None, sets)
    except ScenarioError as e:
        check_one_line(str(e))
        return None
    result = hfcsim.simulate(scenario, seed=1).to_dict()
    del result["scenario"], result["engine"]["wall_s"]
    return json.dumps(result, sort_keys=True)


def _acts(kind: str, mac: str | None, p: Param) -> bool:
    """Whether ``p`` (of group, flow or ping 0) changes one of its runs, or is refused at every value."""
    key = p.key.replace("*", "0")
    accepted = False
    for name in ACT_CONTEXTS.get(p.key, ["plain"]):
        base = _act_base(kind, mac) + _CONTEXT[name](kind)
        before = _outcome(base)
        if before is None:  # the context itself is refused (a MAC's key under another MAC): the plain run
            assert mac != "docsis", f"{name} is refused on {kind} under {mac}"
            base = _act_base(kind, mac)
            before = _outcome(base)
        assert before is not None, base
        current = load(None, base).get(key) if p.engine else p.default_for(kind)
        for value in _act_values(p, current):
            after = _outcome([*base, f"{key}={json.dumps(value)}"])
            if after is not None:
                accepted = True
                if after != before:
                    return True
    return not accepted


def _under(*macs: str | None) -> Any:
    return lambda kind, mac: mac in macs


# Keys accepted where they change nothing (a key one MAC alone reads requires it, schema.toml). Each is
# key -> (the cases, by (kind, mac), where it changes nothing; why).
ACT_NONE: dict[str, tuple[Any, str]] = {
    # Not a defect: a FIFO upstream has no stations, and an idle modem changes nothing; count numbers the
    # modems flows and pings may name.
    "modems.*.count": (_under("fifo"), "an idle modem under FIFO"),
    "modems.*.distance_km_max": (_under("ieee802.14", "docsis"),
                                 "a one-modem group sits at distance_km_min (topology.rs)"),
}


@pytest.mark.parametrize(("kind", "mac"), ACT_COMBOS, ids=[f"{k}-{m}" if m else k for k, m in ACT_COMBOS])
def test_every_key_changes_the_run_or_is_refused(kind, mac):
    silent = sorted(p.key for p in PARAMS if p.applies_to(kind) and p.key not in ACT_SKIP and not _acts(kind, mac, p))
    known = sorted(key for key, (cases, _) in ACT_NONE.items() if cases(kind, mac))
    assert silent == known


# ---------------------------------------------------------------------------------------------------
# Every rule key acts on the path that runs (issue 36): the property above, for every TCP stack, tcp.variant,
# SACK or not, and a first flow's own congestion control (the second runs the stack's), and so for every
# sender path: the Net/3 path (Tahoe, Reno or NewReno; Net/3's or ns-2's fast recovery) and today's
# (tcp/sender/today.rs, with each control; RFC 6675 with SACK, NewReno and Linux's duplicate-ACK count
# without). Each rule key (the tcp switches and choices the stacks set, and tcp.recover_guard against the
# variant's own) set off its value alone changes some output or is refused with one line: none is accepted
# and left unread on the path its flows run. A base the rules refuse is skipped (its refusal names a key it
# set: tests/test_rule_paths.py). The timers' numbers are not sender rules: under another timer they change
# nothing (tcp.tick_s under linux), as the default stack's test above notes. About 10,000 runs of two
# downloads, a minute of one core; outcomes are cached.

RULE_KEYS = [p for p in PARAMS if p.key.startswith("tcp.") and p.key != "tcp.stack" and (
    p.type is bool or p.choices or p.key == "tcp.recover_guard")]
RULE_CONTROLS = [None, "reno", "cubic", "dctcp", "prague", "bbr"]
_TWO = ["flows.0.bytes=300000", "flows.1.bytes=300000", "sim.time_limit_s=10", "network.downstream_loss=0.02",
        "network.upstream_loss=0.01"]
_BIG2 = ["tcp.send_buffer_bytes=262144", "receiver.receive_buffer_bytes=262144", "flows.0.bytes=3000000",
         "flows.1.bytes=3000000"]
# Where each kind of rule acts: recovery under random and burst losses, the timers and their repeats, slow
# start into a queue (HyStart), reordering and its D-SACKs, spurious timeouts (lost ACKs: F-RTO outside
# recovery), CE marks (CoDel on the modem's LAN: DCTCP's and Prague's own cuts), a receiver-limited window.
RULE_CONTEXTS = [
    [],
    # a window of a few segments the receiver limits (SO_RCVBUF 5,840 B): 4.4BSD-Lite's header prediction
    # takes its fast path only when cwnd >= the peer's window, which today's autotuned buffers never give
    ["receiver.receive_buffer_bytes=5840"],
    ["network.downstream_loss=0.05", "network.upstream_loss=0.5", "sim.time_limit_s=30"],
    _BIG2 + ["network.downstream_loss=0.0", 'network.cm_buffer_aqm="codel"', "network.cm_lan_bps=1000000"],
    _BIG2,
    _BIG2 + ["network.downstream_loss=0.0", "flows.0.drop_packets=[" + ", ".join(map(str, range(40, 56))) + "]",
             "flows.1.drop_packets=[" + ", ".join(map(str, range(30, 46))) + "]"],
    ["network.downstream_loss=0.1", "sim.time_limit_s=30"],
    ["network.downstream_loss=0.3", "sim.time_limit_s=60", "flows.0.bytes=100000", "flows.1.bytes=100000"],
    _BIG2 + ["network.downstream_loss=0.0"],
    _BIG2 + ["network.downstream_loss=0.0", "flows.0.reorder_jitter_s=0.01", "flows.1.reorder_jitter_s=0.01"],
    _BIG2 + ["network.downstream_loss=0.01", "flows.0.reorder_jitter_s=0.005", "flows.1.reorder_jitter_s=0.005"],
]
# Keys no context here provokes on some path, each with where and why (the test fails when one acts).
RULE_RARE = {
    # a second timeout of the same segment after a window above 2 segments; tcp/newreno_tests.rs and
    # tests/today.rs pin it on both paths
    "tcp.repeat_timeout_holds_ssthresh": "rare",
}
_RULE_CACHE: dict[tuple[str, ...], str | None] = {}


def _rule_outcome(sets: list[str]) -> str | None:
    key = tuple(sets)
    if key not in _RULE_CACHE:
        _RULE_CACHE[key] = _outcome(sets)
    return _RULE_CACHE[key]


def _rule_values(p: Param, sc: Any) -> list[Any]:
    current = sc.get(p.key)
    if p.key == "tcp.recover_guard":  # absent is the variant's own: Reno none, Tahoe and NewReno guard
        return [not (current if current is not None else sc.get("tcp.variant") != "reno")]
    if p.type is bool:
        return [not current]
    if p.choices:
        return [c for c in p.choices if c != current]
    return [current * 2]


def _rule_bases(stack: str) -> list[list[str]]:
    """The stack under each variant, with SACK and without, and with each control of flow 0, where its
    rules accept them, once each."""
    bases, seen = [], set()
    for variant, sack in itertools.product((None, "tahoe", "reno", "newreno"), ([], ["tcp.sack=false"])):
        for cc in RULE_CONTROLS:
            sets = [f'tcp.stack="{stack}"'] + ([f'tcp.variant="{variant}"'] if variant else []) + sack
            if cc:
                sets += [f'flows.0.congestion_control="{cc}"',
                         f'flows.0.ecn="{"l4s" if cc in ("dctcp", "prague") else "off"}"']
            try:
                doc = load(None, _TWO + sets).to_json()
            except ScenarioError:
                continue
            if doc not in seen:
                seen.add(doc)
                bases.append(sets)
    return bases


@pytest.mark.parametrize("stack", sorted(SCHEMA["stacks"]))
def test_every_rule_key_acts_on_the_path_that_runs(stack):
    silent = []
    for head in _rule_bases(stack):
        for p in RULE_KEYS:
            if p.key in RULE_RARE:
                continue
            accepted = acted = False
            for context in RULE_CONTEXTS:
                base = _TWO + head + context
                before = _rule_outcome(base)
                if before is None:
                    continue
                for value in _rule_values(p, load(None, base)):
                    after = _rule_outcome([*base, f"{p.key}={json.dumps(value)}"])
                    accepted |= after is not None
                    acted |= after is not None and after != before
                if acted:
                    break
            if accepted and not acted:
                silent.append((" ".join(head), p.key))
    assert silent == []
