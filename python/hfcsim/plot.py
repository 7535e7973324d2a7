"""``hfcsim plot``: draw one metric of a sweep against one of its grid keys (issue 37, "Results").

    >>> import hfcsim
    >>> fig = hfcsim.plot_sweep("hfcsim-results/sweep-loss", x="network.downstream_loss", y="throughput_bps",
    ...                         by="tcp.send_buffer_bytes")
    >>> fig.savefig("loss.png")

The rows are a sweep's (``hfcsim.sweep``): one per flow per run, the swept keys as columns. Each grid
point becomes one point of a line: a central statistic of its runs (``stat``: mean, median, min, max or
a percentile pNN) and a shaded band (``band``: the min-max range, the 10-90 % or 25-75 % range, the 95 %
confidence interval of the mean, or none). The runs' values are every row of the point (every flow of
every seed, as ``hfcsim sweep``'s table counts them; ``flow`` picks one flow), except the metrics of a
whole run (``PLACE_RUN_METRICS``), which every flow's row repeats: those count once per run.

Axes carry units from the names' suffixes: ``_s`` in s, ms or us, ``_bps`` in b/s, kb/s, Mb/s or
Gb/s, ``_bytes`` in B, kB or MB (KiB, MiB when every value is a multiple of 1024), chosen by the
largest value shown. An axis is logarithmic when asked, or (``auto``) when its values are all positive
and span two decades or more. A grid key of strings (``tcp.variant``, ``preset``) is drawn as categories
in grid order, each point with its band as an error bar.

The figure is a ``matplotlib.figure.Figure`` made without pyplot (no global state, nothing to close);
``savefig`` draws it with the Agg renderer (PNG) or the SVG and PDF back ends.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hfcsim.errors import ScenarioError

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["BANDS", "STATS", "add_parser", "axis_unit", "plot_sweep", "read_sweep"]

#: The interval bands: name -> its words in the legend.
BANDS = {
    "p10-p90": "10-90 % of the runs",
    "p25-p75": "25-75 % of the runs (quartiles)",
    "minmax": "min-max of the runs",
    "ci95": "95 % confidence interval of the mean",
    "none": "",
}
#: Each line's marker and dash, in turn, so that lines drawn on top of each other stay visible.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
DASHES = ("-", "--", "-.", ":")
#: The central statistics (and any percentile pNN, 0 <= NN <= 100).
STATS = ("mean", "median", "min", "max")
SCALES = ("auto", "linear", "log")
FORMATS = (".png", ".svg", ".pdf")
#: chosen: an axis is logarithmic (``auto``) when its positive values span this ratio or more (two decades).
LOG_SPAN = 100.0


class _Names:
    """How the messages name each argument: ``y = "x"`` in Python, ``--y x`` on the command line."""

    def __init__(self, cli: bool) -> None:
        self.cli = cli

    def __call__(self, name: str, value: Any) -> str:
        return f"--{name} {value}" if self.cli else f"{name} = {value!r}"


# ---------------------------------------------------------------------------------------------------
# Reading a sweep's rows


def read_sweep(source: str | os.PathLike[str], runs: int | None = None,
               results: str | os.PathLike[str] | None = None) -> tuple[pd.DataFrame, str]:
    """A sweep's stored rows and its name, from what a user has of it:

    - its results folder (``hfcsim-results/NAME``, as ``hfcsim sweep --out`` names it: this version's
      ``v<version>/results.parquet``), or one version's folder in it (``.../v<version>``);
    - a ``results.parquet`` (or any Parquet of sweep rows);
    - the sweep file ``SWEEP.toml``: its grid points' runs read from the store (``results``, default
      ``hfcsim-results/<name>``), the seeds of its ``runs`` (or ``runs`` given here, as ``hfcsim sweep
      --runs`` takes it).

    Raises ScenarioError (one line) when there is nothing to read.
    """
    import pandas as pd

    from hfcsim.store import Store

    shown = os.fsdecode(os.fspath(source))
    path = Path(source)
    if path.suffix == ".toml" and path.is_file():
        from hfcsim.sweep import define

        spec = define(path, runs)
        root = Path(results) if results is not None else Path("hfcsim-results") / spec.name
        store = Store(root)
        frame = store.read(spec)
        if frame.empty:
            raise ScenarioError(f"{shown}: no runs of sweep {spec.name} stored in {store.dir} (run `hfcsim sweep "
                                f"{shown}` first{', or name its --out with --results' if results is None else ''})")
        missing = len(spec.points) - frame["scenario_hash"].nunique()
        if missing:
            raise ScenarioError(f"{shown}: {missing} of the sweep's {len(spec.points)} grid points have no runs "
                                f"stored in {store.dir} (run `hfcsim sweep {shown}` to complete it)")
        return frame, spec.name
    if results is not None:
        raise ScenarioError(f"--results {os.fsdecode(os.fspath(results))}: only with a SWEEP.toml (a folder or a "
                            "Parquet file names its rows itself)")
    if runs is not None:
        raise ScenarioError(f"--runs {runs}: only with a SWEEP.toml (a folder or a Parquet file holds the runs "
                            "its sweep stored)")
    if path.is_dir():
        if (path / "results.parquet").is_file():
            parquet = path / "results.parquet"
        else:
            store = Store(path)
            parquet = store.dir / "results.parquet"
            if not parquet.is_file():
                others = [v for v in store.other_versions() if (path / f"v{v}" / "results.parquet").is_file()]
                if others:
                    raise ScenarioError(f"{shown}: no results of this hfcsim version (v{store.version}), only of "
                                        f"{', '.join('v' + v for v in others)}: name one of those folders "
                                        f"(e.g. {path / ('v' + others[-1])}) or rerun the sweep")
                raise ScenarioError(f"{shown}: no results.parquet in this folder or in {store.dir} (a sweep's "
                                    "results folder, e.g. hfcsim-results/NAME)")
    elif path.is_file():
        parquet = path
    elif path.suffix == ".toml":
        raise ScenarioError(f"{shown}: no such sweep file")
    else:
        raise ScenarioError(f"{shown}: no such file or folder (a sweep's results folder, its results.parquet, or "
                            "its SWEEP.toml)")
    try:
        frame = pd.read_parquet(parquet)
    except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
        reason = " ".join(str(e).split())[:120]
        raise ScenarioError(f"{shown}: not a Parquet table of sweep rows ({reason})") from None
    return frame, _name_of(parquet)


def _name_of(parquet: Path) -> str:
    """The sweep's name from where its rows are: ``NAME/v<version>/results.parquet`` -> NAME."""
    parquet = parquet.resolve()
    if parquet.name == "results.parquet" and parquet.parent.name.startswith("v"):
        return parquet.parent.parent.name
    if parquet.parent.name == "parts" and parquet.parent.parent.name.startswith("v"):
        return parquet.parent.parent.parent.name
    return parquet.stem


# ---------------------------------------------------------------------------------------------------
# Columns: grid keys and metrics


def grid_keys(frame: pd.DataFrame) -> list[str]:
    """The swept columns, as ``hfcsim.sweep.summarize`` tells them: dotted scenario keys, and ``preset``."""
    from hfcsim.sweep import PRESET

    return [c for c in frame.columns if "." in c or c == PRESET]


def metrics(frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(the numeric metric columns, the other metric columns) of sweep rows."""
    import pandas as pd

    from hfcsim.sweep import NOT_METRICS

    swept = set(grid_keys(frame))
    numeric, other = [], []
    for c in frame.columns:
        if c in swept or c in NOT_METRICS:
            continue
        s = frame[c]
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            # a column of None only (a metric no run had) is object: numeric if every value is None
            (numeric if s.dtype == object and s.isna().all() else other).append(c)
        else:
            numeric.append(c)
    return numeric, other


def _run_metrics() -> tuple[str, ...]:
    from hfcsim.sweep import WHOLE_RUN_METRICS

    return WHOLE_RUN_METRICS


def _unknown(what: str, given: str, known: Sequence[str], names: _Names, option: str) -> ScenarioError:
    from hfcsim.scenario import _did_you_mean

    hint = _did_you_mean(given, known)
    return ScenarioError(f"{names(option, given)}: {what}{hint}; the sweep's are {', '.join(known) or 'none'}")


# ---------------------------------------------------------------------------------------------------
# Units


_PREFIXES = {
    "_s": ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")),
    "_bps": ((1e9, "Gb/s"), (1e6, "Mb/s"), (1e3, "kb/s"), (1.0, "b/s")),
    "_bytes": ((1e6, "MB"), (1e3, "kB"), (1.0, "B")),
}
_BINARY = ((2.0**20, "MiB"), (2.0**10, "KiB"), (1.0, "B"))


def axis_unit(name: str, values: Sequence[float]) -> tuple[float, str]:
    """(the factor the values are divided by, the unit) of an axis drawing ``name``'s ``values``.

    From the name's suffix: ``_s`` seconds, ``_bps`` bits per second, ``_bytes`` (or a last part
    ``bytes``, as ``flows.0.bytes``) bytes; the largest
    prefix that leaves the largest value shown at 1 or more (chosen: 0.25 s is drawn as 250 ms,
    2.5e7 b/s as 25 Mb/s). Bytes that are all whole multiples of 1024 (socket buffers, 8192 and 24576)
    take KiB and MiB (8 and 24 KiB), others kB and MB. Without a known suffix: (1, "").
    """
    finite = [abs(float(v)) for v in values if v is not None and math.isfinite(float(v))]
    top = max(finite, default=0.0)
    last = name.rsplit(".", 1)[-1]  # flows.0.bytes and the metric bytes are bytes too
    for suffix, units in _PREFIXES.items():
        if last.endswith(suffix) or last == suffix[1:]:
            if suffix == "_bytes" and finite and all(v % 1024 == 0 for v in finite) and top >= 1024:
                units = _BINARY
            if top == 0:
                return units[-1] if suffix != "_s" else units[0]
            for factor, unit in units:
                if top >= factor:
                    return factor, unit
            return units[-1]
    return 1.0, ""


def _label(name: str, unit: str) -> str:
    return f"{name} ({unit})" if unit else name


# ---------------------------------------------------------------------------------------------------
# Statistics


def _stat_value(values: Any, stat: str) -> float:
    import numpy as np

    if stat == "mean":
        return float(np.mean(values))
    if stat == "median":
        return float(np.percentile(values, 50))
    if stat == "min":
        return float(np.min(values))
    if stat == "max":
        return float(np.max(values))
    return float(np.percentile(values, float(stat[1:])))  # pNN, linear interpolation (numpy's default)


def _band_values(values: Any, band: str) -> tuple[float, float]:
    import numpy as np

    from hfcsim.sweep import t975

    if band == "minmax":
        return float(np.min(values)), float(np.max(values))
    if band == "ci95":  # as hfcsim.sweep.summarize: mean +- t_{0.975, n-1} s / sqrt(n); none for n < 2
        n = len(values)
        if n < 2:
            return math.nan, math.nan
        half = t975(n - 1) * float(np.std(values, ddof=1)) / math.sqrt(n)
        mean = float(np.mean(values))
        return mean - half, mean + half
    low, high = (10, 90) if band == "p10-p90" else (25, 75)
    lo, hi = np.percentile(values, [low, high])
    return float(lo), float(hi)


def _stat_words(stat: str) -> str:
    if stat in ("mean", "median"):
        return stat
    if stat in ("min", "max"):
        return {"min": "minimum", "max": "maximum"}[stat]
    return f"{stat[1:]}th percentile"


_STAT = re.compile(r"^p(100|[0-9]{1,2})(\.[0-9]+)?$")


def check_stat(stat: Any, names: _Names | None = None) -> str:
    names = names or _Names(False)
    if isinstance(stat, str) and (stat in STATS or (_STAT.match(stat) and float(stat[1:]) <= 100)):
        return stat
    raise ScenarioError(f"{names('stat', stat)}: must be mean, median, min, max or a percentile p0 .. p100 "
                        "(e.g. p90)")


# ---------------------------------------------------------------------------------------------------
# Selecting the points


def _matches(column: Any, text: Any) -> Any:
    """Rows whose value of ``column`` is ``text``: equal as written, or as numbers."""
    import numpy as np

    as_text = column.map(lambda v: _cell_text(v))
    hit = as_text == str(text)
    try:
        number = float(text)
    except (TypeError, ValueError):
        return hit
    values = np.array([_as_float(v) for v in column], dtype=float)
    return hit | (values == number)


def _as_float(v: Any) -> float:
    if isinstance(v, bool) or v is None:
        return math.nan
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _cell_text(v: Any) -> str:
    """A swept value as a person writes it: 0.01, 8192, reno, true, none."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:g}" if float(f"{v:g}") == v else repr(v)
    if hasattr(v, "item"):  # a numpy scalar
        return _cell_text(v.item())
    return str(v)


def _is_numeric_axis(values: Sequence[Any]) -> bool:
    return bool(values) and all(not isinstance(v, (bool, str)) and v is not None and math.isfinite(_as_float(v))
                                for v in values)


def _distinct(column: Any) -> list[Any]:
    """A column's distinct values in order of first appearance (grid order); numbers sorted."""
    seen: dict[str, Any] = {}
    for v in column:
        v = v.item() if hasattr(v, "item") else v
        seen.setdefault(_cell_text(v), v)
    values = list(seen.values())
    if _is_numeric_axis(values):
        values.sort(key=float)
    return values


# ---------------------------------------------------------------------------------------------------
# The figure


def plot_sweep(rows_or_path: pd.DataFrame | str | os.PathLike[str], x: str, y: str, by: str | None = None, *,
               stat: str = "median", band: str = "p10-p90", where: Mapping[str, Any] | None = None,
               flow: int | None = None, xscale: str = "auto", yscale: str = "auto", title: str | None = None,
               name: str | None = None) -> Figure:
    """Draw metric ``y`` of a sweep against its grid key ``x``, one line per value of grid key ``by``.

    ``rows_or_path``: the DataFrame ``hfcsim.sweep(...)`` returns, or what ``read_sweep`` reads (a results
    folder, a ``results.parquet``, a ``SWEEP.toml``). Each grid point is drawn as ``stat`` (mean, median,
    min, max, pNN) of its runs with a shaded ``band`` (``p10-p90``, ``p25-p75``, ``minmax``, ``ci95``,
    ``none``) around it; the legend says which. ``where`` fixes other grid keys ({key: value}) when they
    vary too; ``flow`` draws one flow of each run instead of all. ``xscale`` / ``yscale``: ``auto`` (log
    when the values are positive and span two decades or more), ``linear`` or ``log``. ``title`` replaces
    the title naming the sweep (``name``, default the folder's or file's).

    Returns the matplotlib Figure. Raises ScenarioError (one line) for an unknown or non-numeric metric,
    an unknown grid key (each naming the available ones), or points the keys given do not tell apart.
    """
    return _draw(rows_or_path, x, y, by, stat=stat, band=band, where=where, flow=flow, xscale=xscale,
                 yscale=yscale, title=title, name=name)[0]


def _draw(rows_or_path: Any, x: str, y: str, by: str | None, *, stat: str, band: str,
          where: Mapping[str, Any] | None, flow: int | None, xscale: str, yscale: str, title: str | None,
          name: str | None, _cli: bool = False) -> tuple[Figure, dict[str, Any]]:
    """``plot_sweep``'s work: the Figure and what it shows (lines, points, the statistic's words)."""
    import numpy as np
    import pandas as pd

    names = _Names(_cli)
    if isinstance(rows_or_path, pd.DataFrame):
        frame, found = rows_or_path, "sweep"
    else:
        frame, found = read_sweep(rows_or_path)
    name = name or found
    stat = check_stat(stat, names)
    if band not in BANDS:
        raise ScenarioError(f"{names('band', band)}: must be one of {', '.join(BANDS)}")
    for option, scale in (("xscale", xscale), ("yscale", yscale)):
        if scale not in SCALES:
            raise ScenarioError(f"{names(option, scale)}: must be one of {', '.join(SCALES)}")

    keys = grid_keys(frame)
    numeric, other = metrics(frame)
    for option, key in (("x", x), ("by", by)):
        if key is not None and key not in keys:
            what = "a metric, not a grid key" if key in numeric or key in other else "not a grid key of the sweep"
            raise _unknown(what, key, keys, names, option)
    if by is not None and by == x:
        raise ScenarioError(f"{names('by', by)}: the same key as --x" if _cli else f"by = {by!r}: the same key as x")
    if y not in numeric:
        if y in other:
            raise ScenarioError(f"{names('y', y)}: not a numeric metric (its values are "
                                f"{_kind(frame[y])}); the sweep's numeric metrics are "
                                f"{', '.join(m for m in numeric if frame[m].notna().any())}")
        what = "a grid key, not a metric" if y in keys else "not a metric of the sweep"
        raise _unknown(what, y, [m for m in numeric if frame[m].notna().any()], names, "y")

    rows = frame
    for key, value in (where or {}).items():
        if key not in keys:
            raise _unknown("not a grid key of the sweep", key, keys, names, "where")
        hit = _matches(rows[key], value)
        if not hit.any():
            shown = ", ".join(_cell_text(v) for v in _distinct(rows[key]))
            raise ScenarioError(f"{names('where', f'{key}={value}')}: no run has it ({key}: {shown})")
        rows = rows[hit.to_numpy()]
    if flow is not None:
        if "flow" not in rows.columns or not (rows["flow"] == flow).any():
            have = sorted(int(f) for f in rows["flow"].unique()) if "flow" in rows.columns else []
            raise ScenarioError(f"{names('flow', flow)}: no such flow (the runs have flows "
                                f"{', '.join(map(str, have)) or 'none'})")
        rows = rows[(rows["flow"] == flow).to_numpy()]
    if y in _run_metrics() and "seed" in rows.columns:
        # a whole run's metric is on every flow's row: once per run
        point_cols = [*keys, "seed"] if "scenario_hash" not in rows.columns else ["scenario_hash", "seed"]
        rows = rows.drop_duplicates(point_cols, keep="first")

    # Every (by, x) pair must be one grid point: another key varying within one would mix points in one
    # statistic. A key that varies with them (a zip axis's other keys) is no trouble.
    shown_keys = [k for k in (x, by) if k is not None]
    as_text = pd.DataFrame({k: rows[k].map(_cell_text) for k in keys})
    others = [k for k in keys if k not in shown_keys]
    within = as_text.groupby(shown_keys, sort=False)[others].nunique().max() if others and len(rows) else None
    rest = [k for k in others if within is not None and within[k] > 1]
    if rest:
        wheres = " ".join(f"--where {k}={_cell_text(_distinct(rows[k])[0])}" for k in rest) if _cli else \
            "where={" + ", ".join(f"{k!r}: {_distinct(rows[k])[0]!r}" for k in rest) + "}"
        more = f"name it with {'--by' if _cli else 'by'}, or " if by is None and len(rest) == 1 else ""
        raise ScenarioError(f"grid key{'s' if len(rest) > 1 else ''} {', '.join(rest)} also var"
                            f"{'y' if len(rest) > 1 else 'ies'} across the points drawn: {more}fix "
                            f"{'them' if len(rest) > 1 else 'it'} ({wheres})")

    xs = _distinct(rows[x])
    lines = _distinct(rows[by]) if by is not None else [None]
    x_text = rows[x].map(_cell_text).to_numpy()
    by_text = rows[by].map(_cell_text).to_numpy() if by is not None else None
    values = pd.to_numeric(rows[y], errors="coerce").to_numpy(dtype=float)

    # (line, x) -> central, low, high, count
    table: dict[tuple[int, int], tuple[float, float, float, int]] = {}
    counts = []
    runs_per_point = []
    for li, line in enumerate(lines):
        in_line = np.ones(len(rows), bool) if line is None else by_text == _cell_text(line)
        for xi, xv in enumerate(xs):
            at = in_line & (x_text == _cell_text(xv))
            if not at.any():
                continue
            runs_per_point.append(int(rows.loc[at, "seed"].nunique()) if "seed" in rows.columns else int(at.sum()))
            v = values[at]
            v = v[~np.isnan(v)]
            counts.append(len(v))
            if len(v) == 0:
                table[li, xi] = (math.nan, math.nan, math.nan, 0)
                continue
            low, high = _band_values(v, band) if band != "none" else (math.nan, math.nan)
            table[li, xi] = (_stat_value(v, stat), low, high, len(v))
    if not table or all(c == 0 for c in counts):
        raise ScenarioError(f"{names('y', y)}: no run has a value of it at the points drawn (e.g. the throughput of "
                            "flows that never finished: try measured_throughput_bps)")

    # Units and scales
    numeric_x = _is_numeric_axis(xs)
    shown_y = [v for (c, lo, hi, _) in table.values() for v in (c, lo, hi) if math.isfinite(v)]
    y_factor, y_unit = axis_unit(y, shown_y)
    x_factor, x_unit = axis_unit(x, [float(v) for v in xs]) if numeric_x else (1.0, "")
    if not numeric_x and xscale == "log":
        raise ScenarioError(f"{names('xscale', 'log')}: {x} is not numeric ({', '.join(_cell_text(v) for v in xs)})")
    x_log = numeric_x and _log(xscale, [float(v) for v in xs], x, names, "xscale")
    y_log = _log(yscale, shown_y, y, names, "yscale")

    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
    ax = fig.add_subplot()
    colors = _colors(lines, fig)
    by_factor, by_unit = axis_unit(by, [float(v) for v in lines]) if by is not None and _is_numeric_axis(lines) \
        else (1.0, "")
    width = 0.5 / max(1, len(lines))  # categories: each line's points side by side within a category
    for li, line in enumerate(lines):
        have = [xi for xi in range(len(xs)) if (li, xi) in table]
        if not have:
            continue
        central = np.array([table[li, xi][0] for xi in have]) / y_factor
        low = np.array([table[li, xi][1] for xi in have]) / y_factor
        high = np.array([table[li, xi][2] for xi in have]) / y_factor
        label = None if line is None else _value_text(line, by_factor)
        color = colors[li]
        if numeric_x:
            pos = np.array([float(xs[xi]) for xi in have]) / x_factor
            ax.plot(pos, central, marker=MARKERS[li % len(MARKERS)], markersize=6, linewidth=2,
                    linestyle=DASHES[li % len(DASHES)], color=color, label=label, zorder=3 + 0.01 * li)
            if band != "none":
                ax.fill_between(pos, low, high, color=color, alpha=0.18, linewidth=0, zorder=2)
        else:
            pos = np.array(have, dtype=float) + (li - (len(lines) - 1) / 2) * width
            err = None if band == "none" else np.vstack([np.where(np.isnan(low), 0, central - low),
                                                         np.where(np.isnan(high), 0, high - central)])
            if err is not None:  # the band as a wide, pale bar behind each point
                ax.errorbar(pos, central, yerr=err, fmt="none", ecolor=(*color[:3], 0.35), elinewidth=8, capsize=0,
                            zorder=2)
            ax.plot(pos, central, marker=MARKERS[li % len(MARKERS)], markersize=7, linestyle="none", color=color,
                    label=label, zorder=3)

    # Axes
    ax.set_xlabel(_label(x, x_unit))
    ax.set_ylabel(_label(y, y_unit))
    if x_log:
        ax.set_xscale("log")
    if y_log:
        ax.set_yscale("log")
    if numeric_x:
        ticks = [float(v) / x_factor for v in xs]
        if len(ticks) <= 12:  # the grid's own values as ticks: the points a person looks for
            ax.xaxis.set_major_locator(FixedLocator(ticks))
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_locator(NullLocator())
        if not x_log:
            span = max(ticks) - min(ticks) or abs(ticks[0]) or 1.0
            ax.set_xlim(min(ticks) - 0.04 * span, max(ticks) + 0.04 * span)
    else:
        ax.set_xticks(range(len(xs)), [_cell_text(v) for v in xs])
        ax.set_xlim(-0.6, len(xs) - 0.4)
    if not y_log:
        top = max((v / y_factor for v in shown_y), default=1.0)
        bottom = min((v / y_factor for v in shown_y), default=0.0)
        if bottom >= 0 and (top <= 0 or bottom <= 0.5 * top):  # a quantity from zero: its axis starts at 0
            ax.set_ylim(bottom=0, top=top * 1.06 if top > 0 else 1)
    ax.grid(True, which="major", color="0.88", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)

    # Title and legend: what the lines are, what the band is, how many runs a point has
    n_low, n_high = min(runs_per_point), max(runs_per_point)
    n_text = f"{n_low}" if n_low == n_high else f"{n_low}-{n_high}"
    per = "seed" if n_high == 1 else "seeds"
    several_flows = "flow" in rows.columns and rows.groupby(
        [c for c in ("scenario_hash", "seed") if c in rows.columns] or [x])["flow"].nunique().max() > 1
    sample = f"{n_text} {per} per point" + (", every flow of each" if several_flows and y not in _run_metrics()
                                            else "")
    # the title over the axes' left edge, and under it, smaller, what each point is
    if title is None:  # chosen: past 60 characters (about the axes' width at this size) on two lines
        title = f"{name}: {y} against {x}"
        if len(title) > 60:
            title = f"{name}: {y}\nagainst {x}"
    ax.set_title(title, loc="left", fontsize=12.5, fontweight="bold", pad=20)
    ax.text(0, 1.015, f"{_stat_words(stat)} of {sample}", transform=ax.transAxes, ha="left", va="bottom",
            fontsize=9.5, color="0.35")
    handles, labels = ax.get_legend_handles_labels()
    if band != "none":
        handles.append(Patch(facecolor="0.6", alpha=0.35 if numeric_x else 0.9, linewidth=0))
        labels.append(f"band: {BANDS[band]}")
    if handles:
        legend_title = _label(by, by_unit) if by is not None else None
        # beside the axes, never over a line
        ax.legend(handles, labels, title=legend_title, frameon=False, fontsize=9, title_fontsize=9,
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), alignment="left")
    missing = sum(1 for c in counts if c == 0)
    if missing:
        ax.annotate(f"{missing} point{'s' if missing > 1 else ''} without a value of {y} not drawn",
                    (0, 0), xycoords="figure fraction", xytext=(6, 4), textcoords="offset points", fontsize=8,
                    color="0.4")
    drawn = len({li for li, _ in table})
    return fig, {"lines": drawn, "points": len(table), "sample": f"{_stat_words(stat)} of {sample}"}


def _kind(column: Any) -> str:
    import pandas as pd

    if pd.api.types.is_bool_dtype(column):
        return "true/false"
    shown = [_cell_text(v) for v in column.dropna().unique()[:3]]
    return "text, e.g. " + ", ".join(shown) if shown else "text"


def _value_text(value: Any, factor: float) -> str:
    if factor != 1.0 and not isinstance(value, (bool, str)) and value is not None:
        return f"{float(value) / factor:g}"
    return _cell_text(value)


def _log(scale: str, values: Sequence[float], key: str, names: _Names, option: str) -> bool:
    positive = [v for v in values if math.isfinite(v)]
    if scale == "log":
        bad = [v for v in positive if v <= 0]
        if bad:
            raise ScenarioError(f"{names(option, 'log')}: {key} has {_cell_text(min(bad))}, which a log axis "
                                "cannot show")
        return True
    if scale == "linear" or not positive:
        return False
    return min(positive) > 0 and max(positive) / min(positive) >= LOG_SPAN


def _colors(lines: Sequence[Any], fig: Any) -> list[Any]:
    """One colour per line: ordered values (numbers) along viridis' dark-to-green part, others tab10."""
    import matplotlib

    if len(lines) > 1 and _is_numeric_axis(lines):
        cmap = matplotlib.colormaps["viridis"]
        return [cmap(0.05 + 0.7 * i / (len(lines) - 1)) for i in range(len(lines))]
    cmap = matplotlib.colormaps["tab10" if len(lines) <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(len(lines))]


# ---------------------------------------------------------------------------------------------------
# hfcsim plot


def _where(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"--where {text}: must be KEY=VALUE, e.g. tcp.variant=reno")
    return key.strip(), value.strip()


def _image(text: str) -> str:
    from hfcsim.store import name_problem

    problem = name_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"--out {text!r}: {problem}")
    if Path(text).suffix.lower() not in FORMATS:
        raise argparse.ArgumentTypeError(f"--out {text}: must end in {', '.join(FORMATS)} (the image's format)")
    return text


def add_parser(subparsers: Any) -> None:
    """Declare ``hfcsim plot`` on ``subparsers``."""
    from hfcsim.argtypes import folder, positive

    p = subparsers.add_parser(
        "plot", help="draw a metric of a sweep against a grid key (PNG, SVG or PDF)",
        description="Draw one metric of a sweep's runs against one of its grid keys, one line per value of "
                    "another (--by): each grid point's runs as a central statistic (--stat) and a shaded band "
                    "(--band), axes in the metric's units (s as ms, b/s as Mb/s, ...), logarithmic when the "
                    "values span two decades or more. SWEEP is the sweep's results folder (hfcsim-results/"
                    "NAME, as hfcsim sweep prints it), its results.parquet, or its SWEEP.toml (its runs read "
                    "from the store).",
        epilog="examples:\n"
               "  hfcsim sweep scenarios/sweeps/sweep-loss.toml --runs 5\n"
               "  hfcsim plot hfcsim-results/sweep-loss --x network.downstream_loss --y throughput_bps \\\n"
               "      --by tcp.send_buffer_bytes\n"
               "  hfcsim plot scenarios/sweeps/sweep-loss.toml --runs 5 --x network.downstream_loss \\\n"
               "      --y rtt_mean_s --where tcp.send_buffer_bytes=24576 --stat mean --band ci95 --out rtt.svg",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", metavar="SWEEP",
                   help="the sweep's results folder (hfcsim-results/NAME), a results.parquet, or the SWEEP.toml")
    p.add_argument("--x", required=True, metavar="KEY", help="the grid key along the x axis")
    p.add_argument("--y", required=True, metavar="METRIC",
                   help="the metric drawn, a numeric column of the rows (throughput_bps, rtt_mean_s, "
                        "measured_throughput_bps, ping_during_p99_s, worst_place_wait_p99_s, ...)")
    p.add_argument("--by", metavar="KEY", help="another grid key: one line per value")
    p.add_argument("--where", dest="where", action="append", default=[], type=_where, metavar="KEY=VALUE",
                   help="draw only the points where grid key KEY is VALUE (repeatable), for a sweep of more keys "
                        "than --x and --by")
    p.add_argument("--flow", type=int, metavar="N",
                   help="draw flow N of each run (default: every flow's row counts, as hfcsim sweep's table)")
    p.add_argument("--stat", default="median", metavar="STAT",
                   help="the point drawn: mean, median, min, max or a percentile pNN of the runs (default median)")
    p.add_argument("--band", choices=tuple(BANDS), default="p10-p90",
                   help="the shaded band: 10-90 %% or 25-75 %% of the runs, min-max, the mean's 95 %% confidence "
                        "interval, or none (default p10-p90)")
    p.add_argument("--xscale", choices=SCALES, default="auto",
                   help="x axis: auto (log when positive and spanning two decades or more), linear or log")
    p.add_argument("--yscale", choices=SCALES, default="auto", help="y axis, as --xscale")
    p.add_argument("--runs", type=positive("--runs"), metavar="N",
                   help="with a SWEEP.toml: the seeds of a sweep run with --runs N (overrides its runs)")
    p.add_argument("--results", type=folder("--results"), metavar="DIR",
                   help="with a SWEEP.toml: where the sweep stored its runs, its --out (default hfcsim-results/NAME)")
    p.add_argument("--title", metavar="TEXT", help="the figure's title (default: the sweep's name, metric and key)")
    p.add_argument("--out", type=_image, metavar="FILE.png",
                   help="the image to write: .png, .svg or .pdf (default NAME-METRIC-vs-KEY.png here)")
    p.set_defaults(func=_cmd_plot)


def _cmd_plot(args: argparse.Namespace) -> int:
    from hfcsim.store import atomic_path, os_reason

    frame, name = read_sweep(args.sweep, args.runs, args.results)
    fig, info = _draw(frame, args.x, args.y, args.by, stat=args.stat, band=args.band, where=dict(args.where),
                      flow=args.flow, xscale=args.xscale, yscale=args.yscale, title=args.title, name=name, _cli=True)
    out = args.out or f"{name}-{args.y}-vs-{args.x}.png"
    try:
        with atomic_path(out, args.held) as temp:
            fig.savefig(temp, format=Path(out).suffix.lower()[1:] or "png", dpi=150)
    except OSError as e:
        raise ScenarioError(f"--out {out}: cannot write ({os_reason(e)})") from None
    lines = info["lines"]
    sys.stdout.write(f"{args.y} against {args.x}{f' by {args.by}' if args.by else ''}: {lines} "
                     f"line{'s' if lines > 1 else ''}, {info['points']} points, {info['sample']}, band: "
                     f"{BANDS[args.band] or 'none'} -> {out}\n")
    return 0
