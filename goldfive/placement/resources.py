"""What each placed run asks of the cluster: ``--ray-resources JSON``, checked here.

``{"num_cpus": 0.1, "num_gpus": 0, "memory": 200000000, "resources": {"agents": 1}}``: every
key optional, numbers non-negative, ``resources`` a map of custom resource names to amounts.
Anything else is refused with one line naming what is accepted.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from goldfive.errors import ServeConfigError

__all__ = ["DEFAULT_NUM_CPUS", "RayResources", "parse_resources"]

#: A run mostly waits on its model: a tenth of a CPU each unless told otherwise (Ray's own
#: default for an actor is a whole CPU to place it, which would put one run per core).
DEFAULT_NUM_CPUS = 0.1
_NUMBERS = ("num_cpus", "num_gpus", "memory")
_KEYS = (*_NUMBERS, "resources")


@dataclass(frozen=True)
class RayResources:
    num_cpus: float = DEFAULT_NUM_CPUS
    num_gpus: float = 0.0
    memory: float = 0.0
    resources: dict[str, float] = field(default_factory=dict)

    def options(self) -> dict[str, Any]:
        """Keyword arguments for ``ActorClass.options``."""
        out: dict[str, Any] = {"num_cpus": self.num_cpus}
        if self.num_gpus:
            out["num_gpus"] = self.num_gpus
        if self.memory:
            out["memory"] = self.memory
        if self.resources:
            out["resources"] = dict(self.resources)
        return out

    def required(self) -> dict[str, float]:
        """As Ray names them on a node (CPU, GPU, memory, custom names)."""
        out = {"CPU": self.num_cpus, "GPU": self.num_gpus, "memory": self.memory, **self.resources}
        return {k: v for k, v in out.items() if v}


def _amount(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ServeConfigError(f"--ray-resources: {name} must be a non-negative number, got {json.dumps(value)}")
    return float(value)


def parse_resources(text: str) -> RayResources:
    """``--ray-resources``'s JSON as RayResources; ServeConfigError (one line) says what is wrong."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise ServeConfigError(f"--ray-resources is not JSON ({why}); e.g. '{{\"num_cpus\": 0.1, \"resources\": {{\"agents\": 1}}}}'") from None
    if not isinstance(data, dict):
        raise ServeConfigError(f"--ray-resources must be a JSON object with keys {', '.join(_KEYS)}")
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        raise ServeConfigError(f"--ray-resources: unknown key {unknown[0]!r}; the keys are {', '.join(_KEYS)}")
    numbers = {k: _amount(k, data[k]) for k in _NUMBERS if k in data}
    custom = data.get("resources", {})
    if not isinstance(custom, dict):
        raise ServeConfigError("--ray-resources: resources must be an object of resource names to amounts")
    extra: dict[str, float] = {}
    for name, value in custom.items():
        if not name or not isinstance(name, str) or name in ("CPU", "GPU", "memory"):
            raise ServeConfigError(f"--ray-resources: {name!r} is not a custom resource name (use num_cpus, num_gpus, memory)")
        extra[name] = _amount(f"resources[{name!r}]", value)
    return RayResources(**numbers, resources=extra)
