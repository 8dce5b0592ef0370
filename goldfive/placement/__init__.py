"""Runs placed outside the hub's process: ``goldfive serve --ray ADDRESS`` makes each run
started with ``ctl start`` a Ray actor on a cluster, which connects back to the hub over
``Hub.Connect`` like any connected run.

Only :mod:`goldfive.placement.ray_placer` imports ray (the ``[ray]`` extra), and only the CLI
imports that module, when ``--ray`` is given. The rest is plain goldfive: what an actor is
told (:class:`PlacedSpec`), what it runs (:func:`run_placed`), how a run waiting for its
actor is shown (:class:`PlacedRun`) and the resources a run asks for (:class:`RayResources`).
"""

from goldfive.placement.actor import RunActor, run_placed
from goldfive.placement.pending import PENDING_PLACEMENT, PLACEMENT_FAILED, PlacedRun
from goldfive.placement.resources import RayResources, parse_resources
from goldfive.placement.spec import PlacedSpec

__all__ = ["PENDING_PLACEMENT", "PLACEMENT_FAILED", "PlacedRun", "PlacedSpec", "RayResources", "RunActor", "parse_resources", "run_placed"]
