"""PlacedSpec: everything a placed run's process needs to build the run and reach its hub."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PlacedSpec"]


@dataclass(frozen=True)
class PlacedSpec:
    """A StartRun request's run (the same fields: ``agent``, ``goal``, ``plan_json``,
    ``speed``), the run id the hub chose, and the hub it reports to.

    ``connect_token`` is what the run connects with (a runner token when the hub has one);
    ``read_token`` reads the run's history back after a restart (the Runs service, which a
    runner token may not call). ``search_dir`` is where MODULE:FUNCTION is imported from (the
    hub's working directory: the same path must hold the module on every node)."""

    run_id: str
    hub: str
    agent: str
    goal: str = ""
    plan_json: str = ""
    speed: float = 0.0
    search_dir: str = ""
    connect_token: str = ""
    read_token: str = ""
    #: The run's own budget from the start ("tokens=50000,usd=2"; "" none), given to a new
    #: run only: a run continued from its history keeps the budget recorded there.
    budget: str = ""
    budget_author: str = ""

    def __repr__(self) -> str:  # never the tokens, in Ray's logs or a traceback
        return f"PlacedSpec(run_id={self.run_id!r}, hub={self.hub!r}, agent={self.agent!r})"
