"""The scenario schema as the engine declares it: crates/hfcsim-core/schema.toml, every key once, with
the TCP stack profiles and the presets (read from the engine, ``hfcsim._core.schema()``). The scenario
module builds its keys from it, the stacks module its profiles."""

from __future__ import annotations

import tomllib
from typing import Any

from hfcsim import _core

SCHEMA: dict[str, Any] = tomllib.loads(_core.schema())
