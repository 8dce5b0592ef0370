import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ControlKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTROL_KIND_UNSPECIFIED: _ClassVar[ControlKind]
    CONTROL_KIND_PAUSE: _ClassVar[ControlKind]
    CONTROL_KIND_RESUME: _ClassVar[ControlKind]
    CONTROL_KIND_CANCEL: _ClassVar[ControlKind]
    CONTROL_KIND_REWIND_TO: _ClassVar[ControlKind]
    CONTROL_KIND_STEER: _ClassVar[ControlKind]
    CONTROL_KIND_APPROVE: _ClassVar[ControlKind]
    CONTROL_KIND_REJECT: _ClassVar[ControlKind]
    CONTROL_KIND_STATUS_QUERY: _ClassVar[ControlKind]
    CONTROL_KIND_INTERCEPT_TRANSFER: _ClassVar[ControlKind]
    CONTROL_KIND_INJECT_MESSAGE: _ClassVar[ControlKind]
    CONTROL_KIND_GOLDFIVE_STEER: _ClassVar[ControlKind]
    CONTROL_KIND_GOLDFIVE_PAUSE_ESCALATE: _ClassVar[ControlKind]
    CONTROL_KIND_ANSWER: _ClassVar[ControlKind]
    CONTROL_KIND_STEER_QUEUE: _ClassVar[ControlKind]
    CONTROL_KIND_GUIDANCE: _ClassVar[ControlKind]
    CONTROL_KIND_BUDGET: _ClassVar[ControlKind]

class ControlAckResult(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTROL_ACK_RESULT_UNSPECIFIED: _ClassVar[ControlAckResult]
    CONTROL_ACK_RESULT_SUCCESS: _ClassVar[ControlAckResult]
    CONTROL_ACK_RESULT_FAILURE: _ClassVar[ControlAckResult]
    CONTROL_ACK_RESULT_UNSUPPORTED: _ClassVar[ControlAckResult]

class ControlAppliedAs(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTROL_APPLIED_AS_UNSPECIFIED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_PAUSED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_RESUMED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_CANCELLED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_REPLANNED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_QUEUED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_NOTED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_DUPLICATE: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_REWOUND: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_DECIDED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_INJECTED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_STATUS: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_INTERCEPT_SET: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_RESTARTED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_RULES: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_UNCHANGED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_REFUSED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_ANSWERED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_QUEUED_LATER: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_STANDING: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_QUEUE_CHANGED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_WITHDRAWN: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_QUEUE_LISTED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_GUIDANCE_LISTED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_GUIDANCE_REMOVED: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_MADE_STANDING: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_BUDGET_SET: _ClassVar[ControlAppliedAs]
    CONTROL_APPLIED_AS_BUDGET_SET_RESUMED: _ClassVar[ControlAppliedAs]
CONTROL_KIND_UNSPECIFIED: ControlKind
CONTROL_KIND_PAUSE: ControlKind
CONTROL_KIND_RESUME: ControlKind
CONTROL_KIND_CANCEL: ControlKind
CONTROL_KIND_REWIND_TO: ControlKind
CONTROL_KIND_STEER: ControlKind
CONTROL_KIND_APPROVE: ControlKind
CONTROL_KIND_REJECT: ControlKind
CONTROL_KIND_STATUS_QUERY: ControlKind
CONTROL_KIND_INTERCEPT_TRANSFER: ControlKind
CONTROL_KIND_INJECT_MESSAGE: ControlKind
CONTROL_KIND_GOLDFIVE_STEER: ControlKind
CONTROL_KIND_GOLDFIVE_PAUSE_ESCALATE: ControlKind
CONTROL_KIND_ANSWER: ControlKind
CONTROL_KIND_STEER_QUEUE: ControlKind
CONTROL_KIND_GUIDANCE: ControlKind
CONTROL_KIND_BUDGET: ControlKind
CONTROL_ACK_RESULT_UNSPECIFIED: ControlAckResult
CONTROL_ACK_RESULT_SUCCESS: ControlAckResult
CONTROL_ACK_RESULT_FAILURE: ControlAckResult
CONTROL_ACK_RESULT_UNSUPPORTED: ControlAckResult
CONTROL_APPLIED_AS_UNSPECIFIED: ControlAppliedAs
CONTROL_APPLIED_AS_PAUSED: ControlAppliedAs
CONTROL_APPLIED_AS_RESUMED: ControlAppliedAs
CONTROL_APPLIED_AS_CANCELLED: ControlAppliedAs
CONTROL_APPLIED_AS_REPLANNED: ControlAppliedAs
CONTROL_APPLIED_AS_QUEUED: ControlAppliedAs
CONTROL_APPLIED_AS_NOTED: ControlAppliedAs
CONTROL_APPLIED_AS_DUPLICATE: ControlAppliedAs
CONTROL_APPLIED_AS_REWOUND: ControlAppliedAs
CONTROL_APPLIED_AS_DECIDED: ControlAppliedAs
CONTROL_APPLIED_AS_INJECTED: ControlAppliedAs
CONTROL_APPLIED_AS_STATUS: ControlAppliedAs
CONTROL_APPLIED_AS_INTERCEPT_SET: ControlAppliedAs
CONTROL_APPLIED_AS_RESTARTED: ControlAppliedAs
CONTROL_APPLIED_AS_RULES: ControlAppliedAs
CONTROL_APPLIED_AS_UNCHANGED: ControlAppliedAs
CONTROL_APPLIED_AS_REFUSED: ControlAppliedAs
CONTROL_APPLIED_AS_ANSWERED: ControlAppliedAs
CONTROL_APPLIED_AS_QUEUED_LATER: ControlAppliedAs
CONTROL_APPLIED_AS_STANDING: ControlAppliedAs
CONTROL_APPLIED_AS_QUEUE_CHANGED: ControlAppliedAs
CONTROL_APPLIED_AS_WITHDRAWN: ControlAppliedAs
CONTROL_APPLIED_AS_QUEUE_LISTED: ControlAppliedAs
CONTROL_APPLIED_AS_GUIDANCE_LISTED: ControlAppliedAs
CONTROL_APPLIED_AS_GUIDANCE_REMOVED: ControlAppliedAs
CONTROL_APPLIED_AS_MADE_STANDING: ControlAppliedAs
CONTROL_APPLIED_AS_BUDGET_SET: ControlAppliedAs
CONTROL_APPLIED_AS_BUDGET_SET_RESUMED: ControlAppliedAs

class ControlTarget(_message.Message):
    __slots__ = ("agent_id", "task_id", "tool_call_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    task_id: str
    tool_call_id: str
    def __init__(self, agent_id: _Optional[str] = ..., task_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ...) -> None: ...

class SteerPayload(_message.Message):
    __slots__ = ("note", "suggested_action", "author", "annotation_id")
    NOTE_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_ACTION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    ANNOTATION_ID_FIELD_NUMBER: _ClassVar[int]
    note: str
    suggested_action: str
    author: str
    annotation_id: str
    def __init__(self, note: _Optional[str] = ..., suggested_action: _Optional[str] = ..., author: _Optional[str] = ..., annotation_id: _Optional[str] = ...) -> None: ...

class RewindPayload(_message.Message):
    __slots__ = ("task_id",)
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    def __init__(self, task_id: _Optional[str] = ...) -> None: ...

class ApprovePayload(_message.Message):
    __slots__ = ("target_id", "detail", "arguments_json")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    detail: str
    arguments_json: str
    def __init__(self, target_id: _Optional[str] = ..., detail: _Optional[str] = ..., arguments_json: _Optional[str] = ...) -> None: ...

class RejectPayload(_message.Message):
    __slots__ = ("target_id", "detail")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    detail: str
    def __init__(self, target_id: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class InjectMessagePayload(_message.Message):
    __slots__ = ("role", "text")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    role: str
    text: str
    def __init__(self, role: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class ControlEvent(_message.Message):
    __slots__ = ("id", "issued_at", "target", "kind", "steer", "rewind", "approve", "reject", "inject_message", "cancel_reason", "intercept_enabled", "custom_kind", "extra_json")
    ID_FIELD_NUMBER: _ClassVar[int]
    ISSUED_AT_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STEER_FIELD_NUMBER: _ClassVar[int]
    REWIND_FIELD_NUMBER: _ClassVar[int]
    APPROVE_FIELD_NUMBER: _ClassVar[int]
    REJECT_FIELD_NUMBER: _ClassVar[int]
    INJECT_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CANCEL_REASON_FIELD_NUMBER: _ClassVar[int]
    INTERCEPT_ENABLED_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_KIND_FIELD_NUMBER: _ClassVar[int]
    EXTRA_JSON_FIELD_NUMBER: _ClassVar[int]
    id: str
    issued_at: _timestamp_pb2.Timestamp
    target: ControlTarget
    kind: ControlKind
    steer: SteerPayload
    rewind: RewindPayload
    approve: ApprovePayload
    reject: RejectPayload
    inject_message: InjectMessagePayload
    cancel_reason: str
    intercept_enabled: bool
    custom_kind: str
    extra_json: str
    def __init__(self, id: _Optional[str] = ..., issued_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., target: _Optional[_Union[ControlTarget, _Mapping]] = ..., kind: _Optional[_Union[ControlKind, str]] = ..., steer: _Optional[_Union[SteerPayload, _Mapping]] = ..., rewind: _Optional[_Union[RewindPayload, _Mapping]] = ..., approve: _Optional[_Union[ApprovePayload, _Mapping]] = ..., reject: _Optional[_Union[RejectPayload, _Mapping]] = ..., inject_message: _Optional[_Union[InjectMessagePayload, _Mapping]] = ..., cancel_reason: _Optional[str] = ..., intercept_enabled: _Optional[bool] = ..., custom_kind: _Optional[str] = ..., extra_json: _Optional[str] = ...) -> None: ...

class ControlAck(_message.Message):
    __slots__ = ("control_id", "result", "detail", "acked_at", "applied_as")
    CONTROL_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    ACKED_AT_FIELD_NUMBER: _ClassVar[int]
    APPLIED_AS_FIELD_NUMBER: _ClassVar[int]
    control_id: str
    result: ControlAckResult
    detail: str
    acked_at: _timestamp_pb2.Timestamp
    applied_as: ControlAppliedAs
    def __init__(self, control_id: _Optional[str] = ..., result: _Optional[_Union[ControlAckResult, str]] = ..., detail: _Optional[str] = ..., acked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., applied_as: _Optional[_Union[ControlAppliedAs, str]] = ...) -> None: ...
