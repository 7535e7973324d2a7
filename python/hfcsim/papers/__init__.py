"""One module per paper: its figures as recipes and its claims as checks (see hfcsim.reproduce), and the
registry of the papers ``hfcsim reproduce`` knows.

The papers stand on :mod:`hfcsim.reproduce` (the recipe types and the runner's helpers) and the runner
imports none of them: the registry lives here, beside the papers, so that nothing imports in a circle.
``hfcsim reproduce PAPER`` looks the paper up here and hands it to the runner.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hfcsim.reproduce import Paper

#: The papers ``hfcsim reproduce`` knows, by key: each the module ``hfcsim.papers.KEY`` (listed here once,
#: so that ``hfcsim reproduce --help`` names them all without importing them; issue 36: it left out lld).
PAPERS = ("cohen98", "lakshman97", "elloumi", "nguyen04", "lld", "busy-hour")


def papers() -> dict[str, Callable[[], Paper]]:
    """The papers ``hfcsim reproduce`` knows, by key."""
    return {key: importlib.import_module(f"hfcsim.papers.{key.replace('-', '_')}").paper for key in PAPERS}


def emulated() -> list[str]:
    """The keys of the papers with emulated figures (``hfcsim reproduce PAPER --emulate``)."""
    return [key for key, paper in papers().items() if paper().emulation is not None]
