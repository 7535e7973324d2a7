"""hfcsim's version, the installed package's, looked up on first use: importlib.metadata costs ~30 ms of
`hfcsim run` start-up. ``hfcsim.__version__`` and the results store (its ``v<version>`` folders) read it
here, so the store need not import the package's top."""

from __future__ import annotations

_VERSION: str | None = None


def version() -> str:
    global _VERSION
    if _VERSION is None:
        from importlib.metadata import PackageNotFoundError
        from importlib.metadata import version as installed

        try:
            _VERSION = installed("hfcsim")
        except PackageNotFoundError:  # a source tree that was never installed
            _VERSION = "0+unknown"
    return _VERSION
