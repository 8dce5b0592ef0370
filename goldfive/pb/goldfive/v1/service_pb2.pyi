import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from goldfive.pb.goldfive.v1 import control_pb2 as _control_pb2
from goldfive.pb.goldfive.v1 import events_pb2 as _events_pb2
from goldfive.pb.goldfive.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StreamEventsResponse(_message.Message):
    __slots__ = ("received", "error")
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    received: int
    error: str
    def __init__(self, received: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...

class SubscribeRequest(_message.Message):
    __slots__ = ("run_id", "after_sequence")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    after_sequence: int
    def __init__(self, run_id: _Optional[str] = ..., after_sequence: _Optional[int] = ...) -> None: ...

class SendControlRequest(_message.Message):
    __slots__ = ("run_id", "control")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CONTROL_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    control: _control_pb2.ControlEvent
    def __init__(self, run_id: _Optional[str] = ..., control: _Optional[_Union[_control_pb2.ControlEvent, _Mapping]] = ...) -> None: ...

class ListRunsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RunSummary(_message.Message):
    __slots__ = ("run_id", "state", "tasks_completed", "tasks_total", "started_at", "goal_summary", "damaged_events", "history_error", "write_error", "unwritten_events", "dropped_events")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TASKS_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    TASKS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    GOAL_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    DAMAGED_EVENTS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_ERROR_FIELD_NUMBER: _ClassVar[int]
    WRITE_ERROR_FIELD_NUMBER: _ClassVar[int]
    UNWRITTEN_EVENTS_FIELD_NUMBER: _ClassVar[int]
    DROPPED_EVENTS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    state: str
    tasks_completed: int
    tasks_total: int
    started_at: _timestamp_pb2.Timestamp
    goal_summary: str
    damaged_events: int
    history_error: str
    write_error: str
    unwritten_events: int
    dropped_events: int
    def __init__(self, run_id: _Optional[str] = ..., state: _Optional[str] = ..., tasks_completed: _Optional[int] = ..., tasks_total: _Optional[int] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., goal_summary: _Optional[str] = ..., damaged_events: _Optional[int] = ..., history_error: _Optional[str] = ..., write_error: _Optional[str] = ..., unwritten_events: _Optional[int] = ..., dropped_events: _Optional[int] = ...) -> None: ...

class ListRunsResponse(_message.Message):
    __slots__ = ("runs",)
    RUNS_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[RunSummary]
    def __init__(self, runs: _Optional[_Iterable[_Union[RunSummary, _Mapping]]] = ...) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class RunSnapshot(_message.Message):
    __slots__ = ("summary", "plan", "pending_approvals", "paused", "last_sequence")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    PENDING_APPROVALS_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    summary: RunSummary
    plan: _types_pb2.Plan
    pending_approvals: _containers.RepeatedCompositeFieldContainer[_events_pb2.ApprovalRequested]
    paused: bool
    last_sequence: int
    def __init__(self, summary: _Optional[_Union[RunSummary, _Mapping]] = ..., plan: _Optional[_Union[_types_pb2.Plan, _Mapping]] = ..., pending_approvals: _Optional[_Iterable[_Union[_events_pb2.ApprovalRequested, _Mapping]]] = ..., paused: _Optional[bool] = ..., last_sequence: _Optional[int] = ...) -> None: ...
