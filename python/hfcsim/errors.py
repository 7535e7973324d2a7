"""The two exceptions a user of hfcsim can see, both carrying a one-line message, and how such a message
names the type of a value it refuses (:func:`type_name`)."""

from __future__ import annotations

import datetime
from typing import Any


class ScenarioError(ValueError):
    """A scenario (or a ``--set`` override) is not valid.

    The message is one line naming the key, the value given and what is allowed, e.g.
    ``network.downstream_loss = 1.5: must be in [0, 1)``.
    """


class EngineError(RuntimeError):
    """The engine failed on a valid scenario (a bug in hfcsim: please report it).

    The message names the seed and the resolved scenario JSON, so the run can be replayed.
    """


def type_name(value: Any) -> str:
    """The type of ``value`` as a refusal names it: ``str``, ``float``, ``None``, ``numpy.complex128``;
    a TOML date, time or date-time by its TOML name (issue 26, defect 8: no Python names for them)."""
    if value is None:
        return "None"
    for kind, name in ((datetime.datetime, "date-time"), (datetime.date, "date"), (datetime.time, "time")):
        if isinstance(value, kind):
            return name
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__.split('.')[0]}.{t.__qualname__}"
