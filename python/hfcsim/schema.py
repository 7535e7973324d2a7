"""The scenario schema as the engine declares it: crates/hfcsim-core/schema.toml, every key once, with
the TCP stack profiles and the presets (read from the engine, ``hfcsim._core.schema()``). The scenario
module builds its keys from it, the stacks module its profiles."""

from __future__ import annotations

import json
import tomllib
from typing import Any

from hfcsim import _core

SCHEMA: dict[str, Any] = tomllib.loads(_core.schema())
# Each preset whole, as the engine resolves it (a preset's ``base`` laid under its own values), and
# apart its notes: ``description``, ``base`` and ``sources`` (key -> where its value comes from).
_PRESETS = json.loads(_core.presets())
SCHEMA["presets"] = _PRESETS["presets"]
PRESET_NOTES: dict[str, dict[str, Any]] = _PRESETS["notes"]
