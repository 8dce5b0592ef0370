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

class HookReport(_message.Message):
    __slots__ = ("source", "session_id", "event", "cwd", "host", "pid", "tool_name", "tool_use_id", "tool_json", "text", "ask", "wait_ms")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_USE_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_JSON_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ASK_FIELD_NUMBER: _ClassVar[int]
    WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    source: str
    session_id: str
    event: str
    cwd: str
    host: str
    pid: int
    tool_name: str
    tool_use_id: str
    tool_json: str
    text: str
    ask: bool
    wait_ms: int
    def __init__(self, source: _Optional[str] = ..., session_id: _Optional[str] = ..., event: _Optional[str] = ..., cwd: _Optional[str] = ..., host: _Optional[str] = ..., pid: _Optional[int] = ..., tool_name: _Optional[str] = ..., tool_use_id: _Optional[str] = ..., tool_json: _Optional[str] = ..., text: _Optional[str] = ..., ask: _Optional[bool] = ..., wait_ms: _Optional[int] = ...) -> None: ...

class HookAnswer(_message.Message):
    __slots__ = ("run_id", "decision", "reason", "updated_input_json")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    UPDATED_INPUT_JSON_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    decision: str
    reason: str
    updated_input_json: str
    def __init__(self, run_id: _Optional[str] = ..., decision: _Optional[str] = ..., reason: _Optional[str] = ..., updated_input_json: _Optional[str] = ...) -> None: ...

class EventBatch(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_events_pb2.Event]
    def __init__(self, events: _Optional[_Iterable[_Union[_events_pb2.Event, _Mapping]]] = ...) -> None: ...

class StartRunRequest(_message.Message):
    __slots__ = ("agent", "goal", "plan_json", "speed", "budget")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    PLAN_JSON_FIELD_NUMBER: _ClassVar[int]
    SPEED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    agent: str
    goal: str
    plan_json: str
    speed: float
    budget: str
    def __init__(self, agent: _Optional[str] = ..., goal: _Optional[str] = ..., plan_json: _Optional[str] = ..., speed: _Optional[float] = ..., budget: _Optional[str] = ...) -> None: ...

class StartRunResponse(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class ListWaitingRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class WaitingItem(_message.Message):
    __slots__ = ("run_id", "kind", "target_id", "task_id", "tool_name", "args_json", "prompt", "since", "sequence", "options", "free_text")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    FREE_TEXT_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    kind: str
    target_id: str
    task_id: str
    tool_name: str
    args_json: str
    prompt: str
    since: _timestamp_pb2.Timestamp
    sequence: int
    options: _containers.RepeatedScalarFieldContainer[str]
    free_text: bool
    def __init__(self, run_id: _Optional[str] = ..., kind: _Optional[str] = ..., target_id: _Optional[str] = ..., task_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., args_json: _Optional[str] = ..., prompt: _Optional[str] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., sequence: _Optional[int] = ..., options: _Optional[_Iterable[str]] = ..., free_text: _Optional[bool] = ...) -> None: ...

class ListWaitingResponse(_message.Message):
    __slots__ = ("items",)
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[WaitingItem]
    def __init__(self, items: _Optional[_Iterable[_Union[WaitingItem, _Mapping]]] = ...) -> None: ...

class RunnerMessage(_message.Message):
    __slots__ = ("hello", "events", "ack")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    ACK_FIELD_NUMBER: _ClassVar[int]
    hello: RunnerHello
    events: EventBatch
    ack: _control_pb2.ControlAck
    def __init__(self, hello: _Optional[_Union[RunnerHello, _Mapping]] = ..., events: _Optional[_Union[EventBatch, _Mapping]] = ..., ack: _Optional[_Union[_control_pb2.ControlAck, _Mapping]] = ...) -> None: ...

class RunnerHello(_message.Message):
    __slots__ = ("run_id", "host", "pid", "resume_after", "goal_summary", "take_over")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    RESUME_AFTER_FIELD_NUMBER: _ClassVar[int]
    GOAL_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TAKE_OVER_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    host: str
    pid: int
    resume_after: int
    goal_summary: str
    take_over: bool
    def __init__(self, run_id: _Optional[str] = ..., host: _Optional[str] = ..., pid: _Optional[int] = ..., resume_after: _Optional[int] = ..., goal_summary: _Optional[str] = ..., take_over: _Optional[bool] = ...) -> None: ...

class HubMessage(_message.Message):
    __slots__ = ("welcome", "control", "confirmed_sequence", "goodbye")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    CONTROL_FIELD_NUMBER: _ClassVar[int]
    CONFIRMED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    GOODBYE_FIELD_NUMBER: _ClassVar[int]
    welcome: HubWelcome
    control: _control_pb2.ControlEvent
    confirmed_sequence: int
    goodbye: str
    def __init__(self, welcome: _Optional[_Union[HubWelcome, _Mapping]] = ..., control: _Optional[_Union[_control_pb2.ControlEvent, _Mapping]] = ..., confirmed_sequence: _Optional[int] = ..., goodbye: _Optional[str] = ...) -> None: ...

class RunnerFrame(_message.Message):
    __slots__ = ("parts",)
    PARTS_FIELD_NUMBER: _ClassVar[int]
    parts: _containers.RepeatedCompositeFieldContainer[RunnerPart]
    def __init__(self, parts: _Optional[_Iterable[_Union[RunnerPart, _Mapping]]] = ...) -> None: ...

class RunnerPart(_message.Message):
    __slots__ = ("lane", "message", "done", "cancelled")
    LANE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    lane: int
    message: RunnerMessage
    done: bool
    cancelled: bool
    def __init__(self, lane: _Optional[int] = ..., message: _Optional[_Union[RunnerMessage, _Mapping]] = ..., done: _Optional[bool] = ..., cancelled: _Optional[bool] = ...) -> None: ...

class HubFrame(_message.Message):
    __slots__ = ("parts", "acks_key")
    PARTS_FIELD_NUMBER: _ClassVar[int]
    ACKS_KEY_FIELD_NUMBER: _ClassVar[int]
    parts: _containers.RepeatedCompositeFieldContainer[HubPart]
    acks_key: str
    def __init__(self, parts: _Optional[_Iterable[_Union[HubPart, _Mapping]]] = ..., acks_key: _Optional[str] = ...) -> None: ...

class ShareAcksResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class HubPart(_message.Message):
    __slots__ = ("lane", "message", "ended", "code", "detail")
    LANE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ENDED_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    lane: int
    message: HubMessage
    ended: bool
    code: int
    detail: str
    def __init__(self, lane: _Optional[int] = ..., message: _Optional[_Union[HubMessage, _Mapping]] = ..., ended: _Optional[bool] = ..., code: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...

class HubWelcome(_message.Message):
    __slots__ = ("stored_through",)
    STORED_THROUGH_FIELD_NUMBER: _ClassVar[int]
    stored_through: int
    def __init__(self, stored_through: _Optional[int] = ...) -> None: ...

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
    __slots__ = ("include_archived",)
    INCLUDE_ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    include_archived: bool
    def __init__(self, include_archived: _Optional[bool] = ...) -> None: ...

class MarkRunRequest(_message.Message):
    __slots__ = ("run_id", "mark", "undo")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    MARK_FIELD_NUMBER: _ClassVar[int]
    UNDO_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    mark: str
    undo: bool
    def __init__(self, run_id: _Optional[str] = ..., mark: _Optional[str] = ..., undo: _Optional[bool] = ...) -> None: ...

class RunSummary(_message.Message):
    __slots__ = ("run_id", "state", "tasks_completed", "tasks_total", "started_at", "goal_summary", "damaged_events", "history_error", "write_error", "unwritten_events", "dropped_events", "origin", "host", "pid", "connection", "needs_you", "needs_you_since", "current_task", "waiting_approvals", "hub", "owner", "usage", "budget", "acknowledged_by", "archived_by", "queued_steers", "standing_guidance")
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
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    HOST_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    CONNECTION_FIELD_NUMBER: _ClassVar[int]
    NEEDS_YOU_FIELD_NUMBER: _ClassVar[int]
    NEEDS_YOU_SINCE_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TASK_FIELD_NUMBER: _ClassVar[int]
    WAITING_APPROVALS_FIELD_NUMBER: _ClassVar[int]
    HUB_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    ACKNOWLEDGED_BY_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_BY_FIELD_NUMBER: _ClassVar[int]
    QUEUED_STEERS_FIELD_NUMBER: _ClassVar[int]
    STANDING_GUIDANCE_FIELD_NUMBER: _ClassVar[int]
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
    origin: str
    host: str
    pid: int
    connection: str
    needs_you: str
    needs_you_since: _timestamp_pb2.Timestamp
    current_task: str
    waiting_approvals: int
    hub: str
    owner: str
    usage: _events_pb2.UsageTotals
    budget: str
    acknowledged_by: str
    archived_by: str
    queued_steers: int
    standing_guidance: int
    def __init__(self, run_id: _Optional[str] = ..., state: _Optional[str] = ..., tasks_completed: _Optional[int] = ..., tasks_total: _Optional[int] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., goal_summary: _Optional[str] = ..., damaged_events: _Optional[int] = ..., history_error: _Optional[str] = ..., write_error: _Optional[str] = ..., unwritten_events: _Optional[int] = ..., dropped_events: _Optional[int] = ..., origin: _Optional[str] = ..., host: _Optional[str] = ..., pid: _Optional[int] = ..., connection: _Optional[str] = ..., needs_you: _Optional[str] = ..., needs_you_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., current_task: _Optional[str] = ..., waiting_approvals: _Optional[int] = ..., hub: _Optional[str] = ..., owner: _Optional[str] = ..., usage: _Optional[_Union[_events_pb2.UsageTotals, _Mapping]] = ..., budget: _Optional[str] = ..., acknowledged_by: _Optional[str] = ..., archived_by: _Optional[str] = ..., queued_steers: _Optional[int] = ..., standing_guidance: _Optional[int] = ...) -> None: ...

class ListRunsResponse(_message.Message):
    __slots__ = ("runs", "hub_warning")
    RUNS_FIELD_NUMBER: _ClassVar[int]
    HUB_WARNING_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[RunSummary]
    hub_warning: str
    def __init__(self, runs: _Optional[_Iterable[_Union[RunSummary, _Mapping]]] = ..., hub_warning: _Optional[str] = ...) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class RunSnapshot(_message.Message):
    __slots__ = ("summary", "plan", "pending_approvals", "paused", "last_sequence", "hub_warning", "task_usage", "steer_queue", "guidance")
    class TaskUsageEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _events_pb2.UsageTotals
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_events_pb2.UsageTotals, _Mapping]] = ...) -> None: ...
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    PENDING_APPROVALS_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    HUB_WARNING_FIELD_NUMBER: _ClassVar[int]
    TASK_USAGE_FIELD_NUMBER: _ClassVar[int]
    STEER_QUEUE_FIELD_NUMBER: _ClassVar[int]
    GUIDANCE_FIELD_NUMBER: _ClassVar[int]
    summary: RunSummary
    plan: _types_pb2.Plan
    pending_approvals: _containers.RepeatedCompositeFieldContainer[_events_pb2.ApprovalRequested]
    paused: bool
    last_sequence: int
    hub_warning: str
    task_usage: _containers.MessageMap[str, _events_pb2.UsageTotals]
    steer_queue: _containers.RepeatedCompositeFieldContainer[_events_pb2.SteeringNote]
    guidance: _containers.RepeatedCompositeFieldContainer[_events_pb2.SteeringNote]
    def __init__(self, summary: _Optional[_Union[RunSummary, _Mapping]] = ..., plan: _Optional[_Union[_types_pb2.Plan, _Mapping]] = ..., pending_approvals: _Optional[_Iterable[_Union[_events_pb2.ApprovalRequested, _Mapping]]] = ..., paused: _Optional[bool] = ..., last_sequence: _Optional[int] = ..., hub_warning: _Optional[str] = ..., task_usage: _Optional[_Mapping[str, _events_pb2.UsageTotals]] = ..., steer_queue: _Optional[_Iterable[_Union[_events_pb2.SteeringNote, _Mapping]]] = ..., guidance: _Optional[_Iterable[_Union[_events_pb2.SteeringNote, _Mapping]]] = ...) -> None: ...
