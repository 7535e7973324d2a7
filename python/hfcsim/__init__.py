"""hfcsim: a simulator of TCP over hybrid fibre-coax (cable) access networks.

    >>> import hfcsim
    >>> result = hfcsim.simulate({"network": {"downstream_loss": 0.01}}, seed=1)
    >>> result.to_frame()  # one row per flow

The engine is compiled Rust (``hfcsim._core``); it is loaded on the first ``simulate`` call.
"""

from __future__ import annotations

from hfcsim.errors import EngineError, ScenarioError
from hfcsim.scenario import Scenario
from hfcsim.scenario import load as load_scenario
from hfcsim.simulate import Result, simulate



def __getattr__(name: str) -> str:
    # __version__ is looked up on first use: importlib.metadata costs ~30 ms of `hfcsim run` start-up.
    if name == "__version__":
        from hfcsim._version import version

        value = version()
        globals()["__version__"] = value
        return value
    if name == "sweep":  # the callable module hfcsim.sweep (pandas is imported only when it runs)
        return __import__("hfcsim.sweep", fromlist=["sweep"])
    if name == "plot_sweep":  # matplotlib is imported only when a figure is drawn
        from hfcsim.plot import plot_sweep

        return plot_sweep
    raise AttributeError(f"module 'hfcsim' has no attribute {name!r}")

__all__ = [
    "EngineError",
    "Result",
    "Scenario",
    "ScenarioError",
    "__version__",
    "load_scenario",
    "plot_sweep",
    "simulate",
]
