"""The checks the analytic models share: each parameter as a number of the kind the formula needs, or a
``ValueError`` naming the parameter and the value (``rtt_s = -1: must be > 0``); and a result as a float
for a scalar input, an array otherwise."""

from __future__ import annotations

import math

import numpy as np


def _fmt(value: object) -> str:
    return repr(value) if not isinstance(value, float) else f"{value:g}"


def _require(name: str, value: float, ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(f"{name} = {_fmt(value)}: {what}")


def _finite(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} = {value!r}: must be a number") from None
    _require(name, value, math.isfinite(v), "must be finite")
    return v


def _positive(name: str, value: float) -> float:
    v = _finite(name, value)
    _require(name, value, v > 0, "must be > 0")
    return v


def _non_negative(name: str, value: float) -> float:
    v = _finite(name, value)
    _require(name, value, v >= 0, "must be >= 0")
    return v


def _positive_int(name: str, value: int) -> int:
    _require(name, value, isinstance(value, (int, np.integer)) and not isinstance(value, bool)
             and value >= 1, "must be an integer >= 1")
    return int(value)


def _loss_array(name: str, value, *, allow_zero: bool = False,
                allow_one: bool = False) -> np.ndarray:
    """``value`` as a float array of probabilities, checked element-wise."""
    arr = np.asarray(value, dtype=float)
    bad = ~np.isfinite(arr)
    bad |= (arr < 0) if allow_zero else (arr <= 0)
    bad |= (arr > 1) if allow_one else (arr >= 1)
    if bad.any():
        first = arr[bad].flat[0] if arr.ndim else float(arr)
        lo = "[0" if allow_zero else "(0"
        hi = "1]" if allow_one else "1)"
        raise ValueError(f"{name} = {_fmt(float(first))}: must be in {lo}, {hi}")
    return arr


def _out(arr: np.ndarray, like) -> float | np.ndarray:
    """Return a Python float for scalar input, an array otherwise."""
    return float(arr) if np.ndim(like) == 0 else arr
