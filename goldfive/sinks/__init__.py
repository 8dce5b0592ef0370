"""Event sinks: where a run's ``goldfive.v1.Event`` stream goes."""

from goldfive.sinks.fanout import SINK_FAILURES, FanOut, SinkFailures, close_all, emit
from goldfive.sinks.grpc_sink import GRPCSink
from goldfive.sinks.jsonl import JSONLPersistenceSink, ReplayResult, replay_from_jsonl
from goldfive.sinks.logging_sink import LoggingSink
from goldfive.sinks.memory import InMemorySink, Missed, Subscription
from goldfive.sinks.sqlite import RunInfo, SQLitePersistenceSink, list_runs, replay_from_sqlite

__all__ = [
    "SINK_FAILURES",
    "FanOut",
    "GRPCSink",
    "InMemorySink",
    "JSONLPersistenceSink",
    "LoggingSink",
    "Missed",
    "ReplayResult",
    "RunInfo",
    "SQLitePersistenceSink",
    "SinkFailures",
    "Subscription",
    "close_all",
    "emit",
    "list_runs",
    "replay_from_jsonl",
    "replay_from_sqlite",
]
