"""Fleet: several hubs serving one fleet of runs from one PostgreSQL database.

A hub started with ``goldfive serve --db postgresql://...`` joins the fleet of every hub on that
database. Its part in the fleet is a few jobs, a module each, every one calling the store's
methods (``goldfive.store.fleet.FleetStore`` for the fleet's rows and notifications, the
EventLog for events) and never SQL:

- **Membership** (``membership``): hubs write a heartbeat into ``goldfive_hubs``; a hub not seen
  for ``dead_after`` seconds is taken as gone and its runs show DISCONNECTED (then
  INTERRUPTED) until their runners reconnect elsewhere.
- **Ownership** (``ownership``): ``goldfive_run_owners`` says which hub each run's runner is
  connected to; a hub that takes a run (a runner connects, or reconnects after its hub died)
  writes itself there and every hub hears of it; the hub that had it says goodbye to a runner
  still on its stream.
- **Following** (``following``): the events of the runs connected to (or hosted by) this hub
  are written to the shared ``goldfive_events`` table, and each write announces how far each
  run is stored. Every hub follows: a run whose runner is connected to another hub is served
  here too, its summary folded, its history read from the database (``HostedRun.archive``)
  and its new events fetched as they are announced. Any hub lists every run and streams any.
- **Routing** (``routing``): a control for a run connected to another hub is a row in
  ``goldfive_controls`` plus a notification to the owning hub, which sends it down the
  runner's stream and writes back the run's ack.
- **Takeover** (``takeover``): the runs a gone hub hosted in its process go on in another hub
  (or are placed on the cluster again), one hub taking each under its lock.
- **Listening** (``listener``): the notifications of the other hubs, each handed to its job.

``Fleet`` (``fleet``) builds the jobs and starts their loops; ``FleetRecorder`` (``recorder``)
records this hub's runs.

When the database cannot be reached the hub is *degraded*: it keeps serving its live runs from
memory, keeps their events (its runners keep everything the hub has not confirmed), writes them
when the database is back, and says so (``ListRuns.hub_warning``: ``ctl runs``, the runs screen).
"""

from goldfive.hub.fleet.fleet import Fleet
from goldfive.hub.fleet.recorder import FleetRecorder
from goldfive.store.postgres_fleet import OWNERS_CHANNEL

__all__ = ["Fleet", "FleetRecorder", "OWNERS_CHANNEL"]
