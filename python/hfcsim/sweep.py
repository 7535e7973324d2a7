"""Sweeps: a base scenario x a grid of parameter values x seeds -> one tidy table of rows.

A sweep is data (docs/design.md, principle 4), written in TOML or given as a dict::

    name = "loss"                      # optional; default: the file's stem ("sweep" for a dict)
    runs = 20                          # seeds per grid point: seed0 .. seed0 + runs - 1
    seed0 = 1                          # optional, default 1
    base = "cohen-default.toml"        # a scenario file (relative to the sweep file) ...
    [base]                             # ... or an inline scenario table (absent = the defaults)
    [grid]                             # the cartesian product of these axes
    "network.downstream_loss" = [0.0, 0.01, 0.03]
    "tcp.send_buffer_bytes" = [8192, 24576]
    [zip]                              # optional: keys varied together (one axis); [[zip]] for several
    keys = ["tcp.send_buffer_bytes", "receiver.receive_buffer_bytes"]
    values = [[8192, 8192], [24576, 24576]]

Grid points are numbered in the order of ``itertools.product`` over the grid axes (as written) and
then the zip axes: the last axis varies fastest. Every point is resolved and validated before any run,
so a bad key or value fails at once, with a one-line ScenarioError naming the key and the value.

A task is (resolved scenario JSON, a batch of seeds) -> rows (``run_batch``); tasks run in this
process (``jobs=1``), on local processes (``concurrent.futures.ProcessPoolExecutor``, all cores by
default) or on a Dask distributed cluster. Each finished batch is written at once, by this process, as
one Parquet part file (``hfcsim.store``), so a sweep killed at any moment resumes where it stopped.
The table returned is always read back from the store and sorted by (grid point, seed, flow), so it is
the same whatever the executor, the batching, or how often the sweep was interrupted.

``hfcsim.sweep(...)`` is this module called as a function (the module is callable), so that
``import hfcsim.sweep`` and ``hfcsim.sweep(spec)`` do not shadow each other.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import sys
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hfcsim import scenario as _scenario
from hfcsim.errors import ScenarioError
from hfcsim.scenario import PARAM_BY_KEY, Scenario, read_file, resolve
from hfcsim.simulate import MAX_SEED, simulate

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Point",
    "SweepSpec",
    "define",
    "run_batch",
    "scenario_hash",
    "summarize",
    "sweep",
]

SPEC_KEYS = ("name", "base", "grid", "zip", "runs", "seed0")
DASK_ENV = "HFCSIM_DASK"
# A folder name's limit on nearly every file system (ext4, XFS, APFS, NTFS: 255 bytes or UTF-16 units).
NAME_MAX = 255
# Seeds per grid point, and runs in all (points x seeds), at most. Every run's rows are stored and the
# table is read back whole into pandas (one row per flow per run, ~45 columns, ~0.4 KB a row): 10^7 runs
# are ~4 GB of table, and at ~1 ms per short run hours of work on a laptop. A larger sweep is better cut
# into several (seed0 picks up where the last stopped); without a limit, runs = 10^18 died of MemoryError.
MAX_RUNS = 1_000_000
MAX_TOTAL_RUNS = 10_000_000
MAX_BATCH = 200  # seeds per task at most: bounds the work a kill -9 can lose
TASKS_PER_WORKER = 16  # aim for this many tasks per worker, for load balance and progress


# ---------------------------------------------------------------------------------------------------
# The sweep definition


@dataclass(frozen=True)
class Point:
    """One grid point: its index, the swept values (dotted key -> resolved value) and its scenario."""

    index: int
    values: dict[str, Any]
    scenario: Scenario
    document: str  # the resolved scenario JSON the engine receives
    hash: str  # scenario_hash(scenario)


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: every grid point resolved, the seeds fixed."""

    name: str
    keys: tuple[str, ...]  # swept keys, in column order (grid axes, then zip keys)
    points: tuple[Point, ...]
    runs: int
    seed0: int

    @property
    def seeds(self) -> range:
        return range(self.seed0, self.seed0 + self.runs)


def scenario_hash(scenario: Scenario) -> str:
    """sha256 of the resolved scenario as JSON with sorted keys and no spaces; the first 16 hex digits."""
    text = json.dumps(scenario.to_dict(), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _fmt(value: Any) -> str:
    return _scenario._fmt(value)


def _check_int(name: str, value: Any, low: int, high: int = MAX_SEED) -> int:
    value = _scenario.native(value)  # np.int64(5) is 5 (issue 36, defect 8)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        upper = "" if high == MAX_SEED else f", <= {high}"
        raise ScenarioError(f"{name} = {_fmt(value)}: must be an integer >= {low}{upper}{_scenario._got(int, value)}")
    return value


#: A grid or zip key that is not a dotted scenario key: the scenario's ``preset`` (a whole preset per
#: grid point; its column is named so) is the one.
PRESET = "preset"


def _check_key(key: Any, value: Any, where: str) -> str:
    """A grid or zip key must address a scenario parameter (or a whole flow or modem group, or the list)."""
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise ScenarioError(f"{where} key {_fmt(key)}: must be a dotted scenario key, e.g. tcp.variant"
                            f"{_scenario._got(str, key)}")
    # Issue 36, defect 10: a section gave "unknown key network (did you mean network?)", preset
    # "unknown key preset" though it is a scenario key.
    if key == PRESET:
        return key
    if key in _scenario.SECTIONS and key not in _scenario.LIST_SECTIONS:
        first = next(iter(_scenario._SECTION_PARAMS[key]))
        raise ScenarioError(f"{where} key {key}: a section of scenario keys, not a key: sweep its keys "
                            f"({key}.{first}, ...)")
    if key in SPEC_KEYS:
        raise ScenarioError(f"{where} key {key}: a key of the sweep itself, not of the scenario: {where} sweeps "
                            "scenario keys (tcp.variant, flows.0.bytes, preset, ...)")
    parts = key.split(".")
    in_list = parts[0] in _scenario.LIST_SECTIONS
    is_item = in_list and (len(parts) == 1 or (len(parts) == 2 and _scenario.is_index(parts[1])))
    if not is_item and _scenario._schema_key(key) not in PARAM_BY_KEY:
        index = int(parts[1]) if len(parts) > 2 and in_list and _scenario.is_index(parts[1]) else 0
        raise ScenarioError(f"{where}: {_scenario._unknown(key, value, index)}")
    return key


def _set(raw: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of ``raw`` with ``key`` set to the Python value ``value`` (as ``apply_set`` does for text)."""
    out = copy.deepcopy(raw)
    parts = key.split(".")
    node: Any = out
    for depth, part in enumerate(parts[:-1]):
        node = _scenario._child(node, part, ".".join(parts[: depth + 1]), key, value)
    _scenario._store(node, parts[-1], key, copy.deepcopy(value))
    return out


def _axes(spec: Mapping[str, Any]) -> list[tuple[tuple[str, ...], list[tuple[Any, ...]], str]]:
    """The axes: (keys, list of value tuples, where) -- one per grid key, one per zip group."""
    axes = []
    grid = spec.get("grid", {})
    if not isinstance(grid, Mapping):
        raise ScenarioError(f"grid = {_fmt(grid)}: must be a table of dotted key = [values]{_scenario._got(dict, grid)}")
    for key, values in grid.items():
        if not isinstance(values, (list, tuple)) or not values:
            raise ScenarioError(f"grid {key} = {_fmt(values)}: must be a non-empty list of values"
                                f"{_scenario._got(list, values)}")
        _check_key(key, values[0], "grid")
        axes.append(((key,), [(v,) for v in values], "grid"))
    zips = spec.get("zip", [])
    zips = [zips] if isinstance(zips, Mapping) else zips
    if not isinstance(zips, (list, tuple)):
        raise ScenarioError(f"zip = {_fmt(zips)}: must be a table {{keys = [...], values = [[...], ...]}}")
    for z in zips:
        axes.append(_zip_axis(z))
    seen: set[str] = set()
    for keys, _, where in axes:
        for key in keys:
            if key in seen:
                raise ScenarioError(f"{where} key {key}: swept twice (in grid and zip, or twice in zip)")
            seen.add(key)
    return axes


def _zip_axis(z: Any) -> tuple[tuple[str, ...], list[tuple[Any, ...]], str]:
    if not isinstance(z, Mapping) or set(z) != {"keys", "values"}:
        raise ScenarioError(f"zip = {_fmt(z)}: must be a table {{keys = [...], values = [[...], ...]}}")
    keys, rows = z["keys"], z["values"]
    if not isinstance(keys, (list, tuple)) or not keys:
        raise ScenarioError(f"zip keys = {_fmt(keys)}: must be a non-empty list of dotted keys")
    if not isinstance(rows, (list, tuple)) or not rows:
        raise ScenarioError(f"zip values = {_fmt(rows)}: must be a non-empty list of [value per key]")
    for row in rows:
        if not isinstance(row, (list, tuple)) or len(row) != len(keys):
            raise ScenarioError(f"zip values {_fmt(row)}: must be a list of {len(keys)} values "
                                f"(one per key of {_fmt(list(keys))})")
    for i, key in enumerate(keys):
        _check_key(key, rows[0][i], "zip")
    return tuple(keys), [tuple(row) for row in rows], "zip"


def _column_value(value: Any) -> Any:
    """A swept value as a table cell: scalars as they are, tables and lists as JSON text."""
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value


def define(spec_or_path: Mapping[str, Any] | str | os.PathLike[str] | SweepSpec,
           runs: int | None = None) -> SweepSpec:
    """Validate a sweep (a dict, a TOML path, or a SweepSpec) and resolve every grid point.

    ``runs`` overrides the spec's ``runs``. Raises ScenarioError (one line, naming key and value).
    """
    if isinstance(spec_or_path, SweepSpec):
        if runs is None:
            return spec_or_path
        runs = _check_runs(runs, len(spec_or_path.points))
        if spec_or_path.seed0 + runs - 1 > MAX_SEED:
            raise ScenarioError(f"seed0 = {spec_or_path.seed0}: seeds seed0 .. seed0 + runs - 1 must be <= 2^64 - 1")
        return SweepSpec(spec_or_path.name, spec_or_path.keys, spec_or_path.points, runs, spec_or_path.seed0)
    if isinstance(spec_or_path, (str, os.PathLike)):
        path = Path(spec_or_path)
        try:
            # the name as given: Path drops a trailing slash ("sweep.toml/") and makes "" the folder "."
            return _define(read_file(spec_or_path), runs, path.parent, path.stem)
        except ScenarioError as e:
            message = str(e)
            shown = os.fsdecode(os.fspath(spec_or_path))
            raise ScenarioError(message if message.startswith((shown, repr(shown))) else f"{shown}: {message}") \
                from None
    if isinstance(spec_or_path, Mapping):
        return _define(spec_or_path, runs, Path.cwd(), "sweep")
    raise ScenarioError(f"sweep = {_fmt(repr(spec_or_path))}: must be a dict, a TOML path or a SweepSpec")


def _define(spec: Mapping[str, Any], runs: int | None, here: Path, default_name: str) -> SweepSpec:
    # plain values: numpy scalars and arrays (np.linspace as a grid axis) as Python's (issue 36, defect 8)
    spec = _scenario._plain(spec, "sweep")
    for key, value in spec.items():
        if key not in SPEC_KEYS:
            hint = _scenario._did_you_mean(str(key), SPEC_KEYS)
            if not hint and str(key) in (*_scenario.SECTIONS, *PARAM_BY_KEY):
                hint = " (scenario keys go in [base], swept keys in [grid])"
            raise ScenarioError(f"unknown sweep key {key}{'' if isinstance(value, Mapping) else ' = ' + _fmt(value)}"
                                f"{hint}; a sweep has {', '.join(SPEC_KEYS)}")
    name = spec.get("name", default_name)
    if (not isinstance(name, str) or not name or "/" in name or "\0" in name or name.startswith(".")
            or len(name.encode("utf-8", "surrogatepass")) > NAME_MAX):
        shown = (_fmt(name) if not isinstance(name, str) or len(name) <= 60 else _fmt(name[:60]) + "...")
        shown = shown.replace("\0", "\\0")
        raise ScenarioError(f"name = {shown}: must be a non-empty string usable as a folder "
                            f"name (no '/', no NUL, not starting with '.', at most {NAME_MAX} bytes in UTF-8)")
    if runs is None:
        if "runs" not in spec:
            raise ScenarioError("runs: missing (set runs = N in the sweep, or pass --runs N)")
        runs = spec["runs"]
    runs = _check_runs(runs)
    seed0 = _check_int("seed0", spec.get("seed0", 1), 0)
    if seed0 + runs - 1 > MAX_SEED:
        raise ScenarioError(f"seed0 = {seed0}: seeds seed0 .. seed0 + runs - 1 must be <= 2^64 - 1")

    base = spec.get("base", {})
    if isinstance(base, (str, os.PathLike)):
        base_raw = read_file(os.path.join(here, os.fspath(base)))  # a trailing slash kept, to be refused
        where = f"base {base}"
    elif isinstance(base, Mapping):
        base_raw, where = copy.deepcopy(dict(base)), "base"
    else:
        raise ScenarioError(f"base = {_fmt(base)}: must be a scenario table or a scenario file path")
    try:
        resolve(base_raw)
    except ScenarioError as e:
        raise ScenarioError(f"{where}: {e}") from None

    axes = _axes(spec)
    # Each axis value on its own first, so an error names the one key and value at fault ...
    alone: list[Scenario] = []  # with a single axis these are the grid points themselves: kept, not redone
    for keys, rows, where in axes:
        for row in rows:
            raw = base_raw
            try:
                for key, value in zip(keys, row, strict=True):
                    raw = _set(raw, key, value)
                resolved = resolve(raw)
            except ScenarioError as e:
                raise ScenarioError(f"{where}: {e}") from None
            if len(axes) == 1:
                alone.append(resolved)
    # ... then every combination (some errors need two keys, e.g. both CM buffer bounds set).
    keys = tuple(k for axis_keys, _, _ in axes for k in axis_keys)
    points: list[Point] = []
    by_hash: dict[str, Point] = {}
    for index, combo in enumerate(itertools.product(*(rows for _, rows, _ in axes))):
        values = [v for row in combo for v in row]
        if alone:
            resolved = alone[index]
        else:
            raw = base_raw
            for key, value in zip(keys, values, strict=True):
                raw = _set(raw, key, value)
            try:
                resolved = resolve(raw)
            except ScenarioError as e:
                setting = ", ".join(f"{k} = {_fmt(v)}" for k, v in zip(keys, values, strict=True))
                raise ScenarioError(f"grid point {index} ({setting}): {e}") from None
        given = dict(zip(keys, values, strict=True))
        point = Point(index, {k: _column_value(given[k] if k == PRESET else resolved.get(k)) for k in keys},
                      resolved, resolved.to_json(), scenario_hash(resolved))
        if point.hash in by_hash:
            other = by_hash[point.hash]
            raise ScenarioError(f"grid point {index} ({_fmt(point.values)}) is the same scenario as grid point "
                                f"{other.index} ({_fmt(other.values)}): remove the duplicate value")
        by_hash[point.hash] = point
        points.append(point)
    return SweepSpec(name, keys, tuple(points), _check_runs(runs, len(points)), seed0)


def _check_runs(runs: Any, points: int = 1) -> int:
    """``runs``, if an integer in [1, MAX_RUNS] and points x runs <= MAX_TOTAL_RUNS."""
    runs = _check_int("runs", runs, 1, MAX_RUNS)
    if points * runs > MAX_TOTAL_RUNS:
        raise ScenarioError(f"runs = {runs}: {points} grid points x {runs} runs = {points * runs} runs, more than "
                            f"{MAX_TOTAL_RUNS} in one sweep; cut it into several (seed0 sets each one's first seed)")
    return runs


# ---------------------------------------------------------------------------------------------------
# Tasks and executors


def run_batch(document: str, seeds: Sequence[int]) -> list[dict[str, Any]]:
    """The task: run one resolved scenario (JSON) with each seed; one row per flow per run: the
    engine's flow metrics, ``RUN_METRICS`` and ``PLACE_RUN_METRICS`` (and, with games or calls,
    ``REALTIME_RUN_METRICS``)."""
    raw = json.loads(document)
    rows = []
    for seed in seeds:
        result = simulate(raw, seed=seed)
        echoes = sorted(((row["sent_s"], row["rtt_s"], bool(row["lost"])) for row in result.ping_rows),
                        key=lambda e: e[0])
        places = place_metrics(result.places.to_dict("records"))
        if result.game_rows or result.call_rows:  # without them, rows stay as they were
            places |= realtime_metrics(result.game_rows, result.call_rows)
        if any(result.app_rows.values()):  # likewise
            places |= app_metrics(result.app_rows)
        for flow in result.flows:
            rows.append({"seed": seed, **flow, **run_metrics(flow, echoes), **places})
        if not result.flows:
            # A run of applications alone (issue 37): one row for the run, its flow null.
            rows.append({"seed": seed, "flow": None, **places})
    return rows


#: Columns a sweep adds to each flow's row (issue 36, defect 14: a sweep of downloads that run to the
#: time limit by design, as a busy hour's do, summarised nothing, their throughput_bps being null):
#: the throughput of the bytes delivered in order from sim.measure_from_s on (measured_bytes over
#: measured_s, null when measured_s is 0), and the RTT percentiles (p50, p95, p99) and loss of the
#: run's echoes sent while the flow ran, the engine's ping_during_* window ([start_s, end_s), to the
#: end of the run if unfinished; null without an echo there, the percentiles without a reply). The
#: loss is the engine's: echoes dropped on the way (PING_COLUMNS ``lost``) over those answered or
#: dropped; one still on its way when the run ended is neither (issue 35).
RUN_METRICS = ("measured_throughput_bps", "ping_during_p50_s", "ping_during_p95_s", "ping_during_p99_s",
               "ping_during_loss")
PING_QUANTILES = {"ping_during_p50_s": 0.50, "ping_during_p95_s": 0.95, "ping_during_p99_s": 0.99}
#: Columns of the run's places (engine.places, PLACE_METRICS) on each of its rows (issue 35: every place
#: a packet waits, in sweeps too): the place with the largest p99 wait, that wait, and the drops at all
#: places (full, AQM, other). The whole table is ``hfcsim run --json``'s engine.places.
PLACE_RUN_METRICS = ("worst_place", "worst_place_wait_p99_s", "place_drops")
#: Columns of the run's applications on each of its rows (issue 37; null without them): the page loads'
#: load time p50 and p90 over the pages that loaded, and the fraction of the pages started that did not
#: load (the run ended or a connection failed first); the videos' startup p90, their rebuffering ratio
#: (time stalled over time since their start-up, summed over the videos) and their mean bitrate.
APP_RUN_METRICS = ("page_load_p50_s", "page_load_p90_s", "pages_unloaded", "video_startup_p90_s",
                   "video_rebuffer_ratio", "video_bitrate_mean_bps")
#: Every metric a sweep row carries for its whole run (each flow's row repeats it).


def run_metrics(flow: Mapping[str, Any], echoes: Sequence[tuple[float, float | None, bool]]) -> dict[str, Any]:
    """``RUN_METRICS`` of one flow, from its row and the run's echoes as (sent_s, rtt_s or None, lost),
    sorted by sent_s."""
    import bisect

    seconds = flow.get("measured_s") or 0
    out: dict[str, Any] = {"measured_throughput_bps": 8 * flow["measured_bytes"] / seconds if seconds > 0 else None}
    start, end = flow["start_s"], flow.get("end_s")
    first = bisect.bisect_left(echoes, start, key=lambda e: e[0])
    last = len(echoes) if end is None else bisect.bisect_left(echoes, end, key=lambda e: e[0])
    during = echoes[first:last]
    rtts = sorted(rtt for _, rtt, _ in during if rtt is not None)
    for name, q in PING_QUANTILES.items():
        out[name] = _quantile(rtts, q)
    lost = sum(1 for _, rtt, dropped in during if rtt is None and dropped)
    out["ping_during_loss"] = lost / (len(rtts) + lost) if rtts or lost else None
    return out


#: Columns of a run's games and calls (issue 37) on each of its rows, only when it has them: the worst
#: one-way p99 delay over the games' sessions and ways, the fraction of the games' packets lost or late
#: (over all of them), and the least R-factor and MOS over the calls' ways (null without such sessions).
REALTIME_RUN_METRICS = ("game_delay_p99_s", "game_lost_or_late", "call_r_min", "call_mos_min")
#: Every metric a sweep row carries for its whole run (each flow's row repeats it).
WHOLE_RUN_METRICS = (*PLACE_RUN_METRICS, *REALTIME_RUN_METRICS, *APP_RUN_METRICS)


def realtime_metrics(games: Sequence[Mapping[str, Any]], calls: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``REALTIME_RUN_METRICS`` of a run's game and call rows (GAME_COLUMNS, CALL_COLUMNS)."""
    p99 = [g["delay_p99_s"] for g in games if g["delay_p99_s"] is not None]
    sent = sum(g["sent"] for g in games)
    r = [c["r_factor"] for c in calls if c["r_factor"] is not None]
    mos = [c["mos"] for c in calls if c["mos"] is not None]
    return {"game_delay_p99_s": max(p99, default=None),
            "game_lost_or_late": sum(g["lost"] + g["late"] for g in games) / sent if sent else None,
            "call_r_min": min(r, default=None), "call_mos_min": min(mos, default=None)}


def place_metrics(places: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``PLACE_RUN_METRICS`` of a run's places (PLACE_METRICS rows); nulls without a place."""
    waited = [p for p in places if p.get("wait_p99_s") is not None and p["wait_p99_s"] == p["wait_p99_s"]]
    worst = max(waited, key=lambda p: p["wait_p99_s"], default=None)
    return {"worst_place": worst["name"] if worst else None,
            "worst_place_wait_p99_s": worst["wait_p99_s"] if worst else None,
            "place_drops": sum(p["drops_full"] + p["drops_aqm"] + p["drops_other"] for p in places) if places else None}


def app_metrics(app_rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """``APP_RUN_METRICS`` of a run's application rows (``Result.app_rows``)."""
    pages, videos = app_rows.get("pages") or [], app_rows.get("videos") or []
    loads = sorted(p["load_s"] for p in pages if p["load_s"] is not None)
    startups = sorted(v["startup_s"] for v in videos if v["startup_s"] is not None)
    bitrates = [v["mean_bitrate_bps"] for v in videos if v["mean_bitrate_bps"] is not None]
    # Time since start-up: from the start-up to the run's end for each video that started (its own
    # end if it finished: the rebuffering of a finished video is over too).
    played = [max(0.0, (v.get("end_s") or 0.0) - v["start_s"] - v["startup_s"]) for v in videos
              if v["startup_s"] is not None]
    watched = sum(played)
    return {
        "page_load_p50_s": _quantile(loads, 0.5),
        "page_load_p90_s": _quantile(loads, 0.9),
        "pages_unloaded": (len(pages) - len(loads)) / len(pages) if pages else None,
        "video_startup_p90_s": _quantile(startups, 0.9),
        "video_rebuffer_ratio": sum(v["rebuffer_s"] for v in videos) / watched if watched > 0 else None,
        "video_bitrate_mean_bps": sum(bitrates) / len(bitrates) if bitrates else None,
    }


def _quantile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile of sorted ``values``, interpolated linearly between the two nearest (numpy's
    default, as ``summarize`` takes them); None for no values."""
    if not values:
        return None
    h = (len(values) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (h - lo) * (values[hi] - values[lo])


@dataclass(frozen=True)
class Task:
    point: Point
    seeds: tuple[int, ...]  # contiguous


def plan(spec: SweepSpec, stored: Mapping[str, set[int]], workers: int,
         batch_size: int | None = None) -> list[Task]:
    """The tasks still to run: per grid point, the seeds not yet stored, cut into contiguous batches."""
    missing = {p.index: [s for s in spec.seeds if s not in stored.get(p.hash, ())] for p in spec.points}
    total = sum(len(m) for m in missing.values())
    if batch_size is None:
        batch_size = max(1, min(MAX_BATCH, math.ceil(total / (max(1, workers) * TASKS_PER_WORKER))))
    tasks = []
    for point in spec.points:
        seeds = missing[point.index]
        # contiguous runs of seeds (a resumed sweep may have holes), then batches of batch_size
        for _, group in itertools.groupby(enumerate(seeds), key=lambda t: t[1] - t[0]):
            run = [s for _, s in group]
            for i in range(0, len(run), batch_size):
                tasks.append(Task(point, tuple(run[i:i + batch_size])))
    return tasks


def _call_task(task: Task) -> list[dict[str, Any]]:
    # looked up at call time, so a test can replace run_batch in this process
    return sys.modules[__name__].run_batch(task.point.document, task.seeds)


def _run_local(tasks: list[Task], jobs: int) -> Iterator[tuple[Task, list[dict[str, Any]]]]:
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield task, _call_task(task)
        return
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    # spawn: workers start clean (no inherited threads or state) and import only hfcsim
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=context,
                               initializer=_die_with_parent, initargs=(os.getpid(),))
    finished = False
    try:
        pending = {pool.submit(run_batch, t.point.document, t.seeds): t for t in tasks}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()
        finished = True
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:
            _end_workers(pool)


def _end_workers(pool: Any) -> None:
    """Ctrl-C, an error, or a caller that stopped reading: end the workers now. Their batches in flight
    are not stored, and waiting for them kept a sweep up to a batch's length after Ctrl-C (issue 26:
    about 7 s). ProcessPoolExecutor has no public way to end its workers before Python 3.14
    (``terminate_workers``), so this takes them from the pool before shutting it down."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    for w in workers:
        w.terminate()
    for w in workers:
        w.join(timeout=10)
    # The pool sees its workers gone (broken) and its manager thread ends: this returns at once.
    pool.shutdown(wait=True, cancel_futures=True)


PR_SET_PDEATHSIG = 1  # linux/prctl.h
PARENT_POLL_S = 0.5


def _die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when the sweep's process dies, even by kill -9, which runs
    no cleanup (the pool's workers would otherwise run their tasks on, orphaned, for minutes, and keep
    the resource tracker alive). On Linux the kernel sends SIGKILL at once (prctl PR_SET_PDEATHSIG; the
    pool starts its workers from the main thread, which lives as long as the process); everywhere a
    daemon thread polls the parent's pid and ends the worker within PARENT_POLL_S of a change."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no libc prctl: the thread below still watches
            pass
    if os.getppid() != parent:  # the parent died before the watch began
        os._exit(1)
    import threading

    threading.Thread(target=_watch_parent, args=(parent,), name="hfcsim-watch-parent", daemon=True).start()


def _watch_parent(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)  # orphaned: reparented to init or a subreaper


def _run_dask(tasks: list[Task], client: Any) -> Iterator[tuple[Task, list[dict[str, Any]]]]:
    from distributed import as_completed

    futures = {client.submit(run_batch, t.point.document, t.seeds, pure=False): t for t in tasks}
    try:
        for future in as_completed(list(futures)):
            yield futures[future], future.result()
    finally:
        client.cancel(list(futures))


def _dask_client(dask: Any) -> tuple[Any, bool]:
    """(client, whether we own it and must close it) for an address or a distributed.Client."""
    if not isinstance(dask, str):
        return dask, False
    try:
        from distributed import Client
    except ImportError as e:
        raise ScenarioError(f"--dask {dask}: the distributed package is not installed ({e})") from None
    try:
        return Client(dask, timeout=10), True
    except (OSError, TimeoutError) as e:
        raise ScenarioError(f"--dask {dask}: cannot connect to the Dask scheduler ({' '.join(str(e).split())})") \
            from None


# ---------------------------------------------------------------------------------------------------
# Progress


def _progress(enabled: bool | None, total: int) -> Any:
    """A rich progress bar on stderr (runs, rate, ETA), or a stand-in that does nothing."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled or total == 0:
        return _NoProgress()
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, \
        TimeRemainingColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            return Text("" if task.speed is None else f"{task.speed:,.0f} runs/s", style="progress.data.speed")

    return _RichProgress(Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                                  RateColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                  console=Console(stderr=True), transient=True), total)


class _NoProgress:
    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def advance(self, n: int) -> None:
        pass


class _RichProgress:
    def __init__(self, progress: Any, total: int) -> None:
        self.progress, self.total = progress, total

    def __enter__(self) -> _RichProgress:
        self.progress.__enter__()
        self.task = self.progress.add_task("sweep", total=self.total)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def advance(self, n: int) -> None:
        self.progress.advance(self.task, n)


# ---------------------------------------------------------------------------------------------------
# The sweep


def sweep(spec_or_path: Mapping[str, Any] | str | os.PathLike[str] | SweepSpec, runs: int | None = None,
          jobs: int | None = None, dask: Any = None, out: str | os.PathLike[str] | None = None,
          progress: bool | None = None, *, batch_size: int | None = None,
          notify: Callable[[str], None] | None = None) -> pd.DataFrame:
    """Run a sweep; return its rows (one per flow per run) as a pandas DataFrame.

    spec_or_path: a sweep dict, a sweep TOML path, or a SweepSpec (see the module docstring).
    runs: seeds per grid point (overrides the spec). jobs: local worker processes (default: all cores;
    1 = in this process). dask: a Dask scheduler address ("tcp://host:port") or a distributed.Client;
    default: the HFCSIM_DASK environment variable, else local processes. out: the results folder
    (default hfcsim-results/<sweep name>); rows are stored under out/v<hfcsim version>/. progress: a
    progress bar on stderr (default: when stderr is a terminal). batch_size: seeds per task (default:
    about 16 tasks per worker, at most 200 seeds). notify: where one-line notices go (default stderr).

    Runs already stored are not run again. Columns: the swept keys, seed, flow, every flow metric,
    scenario_hash, hfcsim_version; rows sorted by (grid point, seed, flow).
    """
    from hfcsim.store import Store, prepare_dir

    spec = define(spec_or_path, runs)
    if jobs is not None:
        jobs = _check_int("jobs", jobs, 1, 4096)
    if batch_size is not None:
        batch_size = _check_int("batch_size", batch_size, 1, 10**9)
    if dask is None:
        dask = os.environ.get(DASK_ENV) or None
    from hfcsim.store import output_folder

    # "" is no folder (Path would make it ".")
    store = Store(output_folder("out", out) if out is not None else Path("hfcsim-results") / spec.name)
    prepare_dir(store.root)  # a folder that cannot be written fails now (OSError), not after the first runs
    prepare_dir(store.dir)
    notice = store.other_versions_notice()
    if notice:
        (notify or (lambda text: sys.stderr.write(f"hfcsim: note: {text}\n")))(notice)

    client, own_client = _dask_client(dask) if dask is not None else (None, False)
    try:
        if client is not None:
            workers = max(1, sum(client.nthreads().values()))
        else:
            workers = jobs or os.cpu_count() or 1
        tasks = plan(spec, store.stored(), workers, batch_size)
        results = _run_dask(tasks, client) if client is not None else _run_local(tasks, workers)
        with _progress(progress, sum(len(t.seeds) for t in tasks)) as bar:
            for task, rows in results:
                store.write_part(task.point.hash, task.seeds, _complete_rows(spec, task.point, rows, store.version),
                                 swept=spec.keys)
                bar.advance(len(task.seeds))
    finally:
        if own_client:
            client.close()
    frame = store.read(spec)
    store.write_results(frame, summarize(frame, metric=None))
    return frame


def _complete_rows(spec: SweepSpec, point: Point, rows: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    return [{**point.values, **row, "scenario_hash": point.hash, "hfcsim_version": version} for row in rows]


# ---------------------------------------------------------------------------------------------------
# Summaries

# Student's t quantile t_{0.975, df} for df = 1 .. 30 (two-sided 95 %), to 9 decimals; from any table
# of the t distribution (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2), equal to scipy.stats.t.ppf(0.975, df).
T975 = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851, 2.364624252,
        2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830, 2.160368656, 2.144786688,
        2.131449546, 2.119905299, 2.109815578, 2.100922040, 2.093024054, 2.085963447, 2.079613845,
        2.073873068, 2.068657610, 2.063898562, 2.059538553, 2.055529439, 2.051830516, 2.048407142,
        2.045229642, 2.042272456)
Z975 = 1.959963984540054  # the standard normal's 0.975 quantile


def t975(df: int) -> float:
    """Student's t 0.975 quantile with ``df`` degrees of freedom (the 95 % two-sided CI factor).

    df <= 30: the table T975. df > 30: the Cornish-Fisher expansion of t in powers of 1/df around the
    normal quantile z (Abramowitz & Stegun 26.7.5), whose error there is below 1e-6 -- far finer than a
    plain normal approximation (1.96 vs t_{0.975, 31} = 2.040). scipy is deliberately not used even when
    installed, so summaries are identical on every machine.
    """
    if df < 1:
        return math.nan
    if df <= len(T975):
        return T975[df - 1]
    z = Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


SUMMARY_STATS = ("count", "mean", "median", "p25", "p75", "ci95_low", "ci95_high")


def summary_metrics(frame: pd.DataFrame) -> list[str]:
    """The metrics ``hfcsim sweep`` summarises: the finished flows' throughput, then those of
    ``RUN_METRICS``, ``PLACE_RUN_METRICS`` and ``REALTIME_RUN_METRICS`` the rows have a value of (rows
    stored before them lack them; the ping's without pings) but the ping_during_p95_s, which the summary's p50 and p99 bracket, and the
    worst place's name."""
    return ["throughput_bps", *(m for m in (*RUN_METRICS, *WHOLE_RUN_METRICS) if m in frame.columns
                                and m not in ("ping_during_p95_s", "worst_place") and frame[m].notna().any())]
NOT_METRICS = ("seed", "flow", "scenario_hash", "hfcsim_version")


def summarize(df: pd.DataFrame, metric: str | Sequence[str] | None = "throughput_bps",
              per_flow: bool = False) -> pd.DataFrame:
    """Per grid point (and per flow if ``per_flow``) and metric: count, mean, median, p25, p75, 95 % CI.

    Grid points are told apart by ``scenario_hash`` and shown by the swept columns (every column with a
    dot in its name, and ``preset``). ``metric``: one name, several, or None for every numeric metric.
    Missing values (e.g. the throughput of an unfinished flow) are left out and not counted. Percentiles
    interpolate linearly (numpy's default). The CI is mean +- t_{0.975, n-1} * s / sqrt(n), s the sample
    standard deviation (n - 1); NaN when n < 2. One row per (grid point, [flow,] metric), in grid-point
    order.
    """
    import numpy as np
    import pandas as pd

    swept = [c for c in df.columns if "." in c or c == PRESET]
    if metric is None:
        metrics = [c for c in df.columns if c not in (*swept, *NOT_METRICS)
                   and pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]
    else:
        metrics = [metric] if isinstance(metric, str) else list(metric)
    for m in metrics:
        if m not in df.columns:
            raise KeyError(f"summarize: no metric column {m!r}")
    keys = [c for c in ("scenario_hash",) if c in df.columns] + (["flow"] if per_flow else [])
    # One group per (grid point[, flow]), in order of first appearance; NaN keys form groups too.
    if keys and len(df):
        codes = df.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    else:
        codes = np.zeros(len(df), dtype=np.intp)
    groups = int(codes.max()) + 1 if len(df) else (0 if keys else 1)
    firsts = np.full(groups, -1, dtype=np.intp)
    firsts[codes[::-1]] = np.arange(len(df) - 1, -1, -1)  # each group's first row
    head = df.iloc[firsts] if len(df) else df.iloc[[]]
    per_metric = []
    for m in metrics:
        stats = _group_stats(pd.to_numeric(df[m], errors="coerce").to_numpy(dtype=float), codes, groups)
        block = {c: head[c].to_numpy() for c in swept}
        if per_flow:
            block["flow"] = head["flow"].to_numpy()
        block["metric"] = np.full(groups, m, dtype=object)
        block.update(stats)
        if "scenario_hash" in df.columns:
            block["scenario_hash"] = head["scenario_hash"].to_numpy()
        per_metric.append(block)
    columns = [*swept, *(["flow"] if per_flow else []), "metric", *SUMMARY_STATS,
               *(["scenario_hash"] if "scenario_hash" in df.columns else [])]
    if not per_metric or groups == 0:
        return pd.DataFrame.from_records([], columns=columns)
    # Rows group-major (every metric of a point, then the next point), as records would come.
    order = np.arange(groups * len(metrics)).reshape(len(metrics), groups).T.ravel()
    data = {c: np.concatenate([b[c] for b in per_metric])[order] for c in columns}
    # Object columns (swept strings, None beside numbers, ...) get the dtype from_records infers from rows.
    objects = [c for c in columns if data[c].dtype == object]
    inferred = pd.DataFrame.from_records(list(zip(*(data[c] for c in objects))), columns=objects)
    return pd.DataFrame({c: inferred[c] if c in objects else data[c] for c in columns}, columns=columns)


def _group_stats(values: Any, codes: Any, groups: int) -> dict[str, Any]:
    """count, mean, median, p25, p75 and the 95 % CI of ``values`` (NaN left out) per group ``codes``.

    Each group's values keep their row order and numpy reduces each group as one row of a (groups of n
    values) x n matrix, which sums, takes the standard deviation and percentiles of a row exactly as
    ``np.mean`` / ``np.std`` / ``np.percentile`` of that group alone would (the same pairwise summation
    along a contiguous row): the summary is bit for bit what a loop over the groups gives, in a few
    numpy calls per distinct group size instead of some pandas calls per group and metric.
    """
    import numpy as np

    valid = ~np.isnan(values)
    kept_codes = codes[valid]
    order = np.argsort(kept_codes, kind="stable")
    kept = values[valid][order]
    count = np.bincount(kept_codes, minlength=groups)
    start = np.concatenate(([0], np.cumsum(count)[:-1])).astype(np.intp)
    mean, median, p25, p75, half = (np.full(groups, math.nan) for _ in range(5))
    for n in np.unique(count[count > 0]):
        which = np.flatnonzero(count == n)
        rows = kept[start[which][:, None] + np.arange(n)]
        mean[which] = rows.mean(axis=1)
        p25[which], median[which], p75[which] = np.percentile(rows, [25, 50, 75], axis=1)
        if n >= 2:
            half[which] = t975(int(n) - 1) * rows.std(axis=1, ddof=1) / math.sqrt(n)
    return {"count": count, "mean": mean, "median": median, "p25": p25, "p75": p75,
            "ci95_low": mean - half, "ci95_high": mean + half}


# ``hfcsim.sweep(...)``: importing this submodule makes ``hfcsim.sweep`` the module, so the module
# itself is made callable and delegates to the function of the same name.
class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> pd.DataFrame:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
