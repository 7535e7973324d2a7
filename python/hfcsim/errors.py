"""The two exceptions a user of hfcsim can see. Both carry a one-line message."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario (or a ``--set`` override) is not valid.

    The message is one line naming the key, the value given and what is allowed, e.g.
    ``network.downstream_loss = 1.5: must be in [0, 1)``.
    """


class EngineError(RuntimeError):
    """The engine failed on a valid scenario (a bug in hfcsim: please report it).

    The message names the seed and the resolved scenario JSON, so the run can be replayed.
    """
