import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from goldfive.pb.goldfive.v1 import control_pb2 as _control_pb2
from goldfive.pb.goldfive.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Event(_message.Message):
    __slots__ = ("event_id", "run_id", "sequence", "emitted_at", "session_id", "run_started", "goal_derived", "plan_submitted", "plan_revised", "task_started", "task_progress", "task_completed", "task_failed", "task_blocked", "task_cancelled", "drift_detected", "run_completed", "run_aborted", "conversation_started", "conversation_ended", "approval_requested", "approval_granted", "approval_rejected", "task_transitioned", "control_received", "control_acked", "message_parked", "message_delivered", "message_returned", "invocation_abandoned", "run_resumed", "agent_step", "approval_decided", "approval_expiring", "recording_failed", "usage_recorded", "approval_reminded", "approval_escalated", "question_asked", "question_answered", "steer_queued", "steer_queue_changed", "guidance_added", "guidance_removed", "approval_reviewed", "budget_warning", "budget_reached", "budget_changed", "recording_schema")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    EMITTED_AT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_STARTED_FIELD_NUMBER: _ClassVar[int]
    GOAL_DERIVED_FIELD_NUMBER: _ClassVar[int]
    PLAN_SUBMITTED_FIELD_NUMBER: _ClassVar[int]
    PLAN_REVISED_FIELD_NUMBER: _ClassVar[int]
    TASK_STARTED_FIELD_NUMBER: _ClassVar[int]
    TASK_PROGRESS_FIELD_NUMBER: _ClassVar[int]
    TASK_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    TASK_FAILED_FIELD_NUMBER: _ClassVar[int]
    TASK_BLOCKED_FIELD_NUMBER: _ClassVar[int]
    TASK_CANCELLED_FIELD_NUMBER: _ClassVar[int]
    DRIFT_DETECTED_FIELD_NUMBER: _ClassVar[int]
    RUN_COMPLETED_FIELD_NUMBER: _ClassVar[int]
    RUN_ABORTED_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_STARTED_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ENDED_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_REQUESTED_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_GRANTED_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_REJECTED_FIELD_NUMBER: _ClassVar[int]
    TASK_TRANSITIONED_FIELD_NUMBER: _ClassVar[int]
    CONTROL_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    CONTROL_ACKED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_PARKED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_DELIVERED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_RETURNED_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_ABANDONED_FIELD_NUMBER: _ClassVar[int]
    RUN_RESUMED_FIELD_NUMBER: _ClassVar[int]
    AGENT_STEP_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_DECIDED_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_EXPIRING_FIELD_NUMBER: _ClassVar[int]
    RECORDING_FAILED_FIELD_NUMBER: _ClassVar[int]
    USAGE_RECORDED_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_REMINDED_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_ESCALATED_FIELD_NUMBER: _ClassVar[int]
    QUESTION_ASKED_FIELD_NUMBER: _ClassVar[int]
    QUESTION_ANSWERED_FIELD_NUMBER: _ClassVar[int]
    STEER_QUEUED_FIELD_NUMBER: _ClassVar[int]
    STEER_QUEUE_CHANGED_FIELD_NUMBER: _ClassVar[int]
    GUIDANCE_ADDED_FIELD_NUMBER: _ClassVar[int]
    GUIDANCE_REMOVED_FIELD_NUMBER: _ClassVar[int]
    APPROVAL_REVIEWED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_WARNING_FIELD_NUMBER: _ClassVar[int]
    BUDGET_REACHED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_CHANGED_FIELD_NUMBER: _ClassVar[int]
    RECORDING_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    run_id: str
    sequence: int
    emitted_at: _timestamp_pb2.Timestamp
    session_id: str
    run_started: RunStarted
    goal_derived: GoalDerived
    plan_submitted: PlanSubmitted
    plan_revised: PlanRevised
    task_started: TaskStarted
    task_progress: TaskProgress
    task_completed: TaskCompleted
    task_failed: TaskFailed
    task_blocked: TaskBlocked
    task_cancelled: TaskCancelled
    drift_detected: DriftDetected
    run_completed: RunCompleted
    run_aborted: RunAborted
    conversation_started: ConversationStarted
    conversation_ended: ConversationEnded
    approval_requested: ApprovalRequested
    approval_granted: ApprovalGranted
    approval_rejected: ApprovalRejected
    task_transitioned: TaskTransitioned
    control_received: ControlReceived
    control_acked: ControlAcked
    message_parked: MessageParked
    message_delivered: MessageDelivered
    message_returned: MessageReturned
    invocation_abandoned: InvocationAbandoned
    run_resumed: RunResumed
    agent_step: AgentStep
    approval_decided: ApprovalDecided
    approval_expiring: ApprovalExpiring
    recording_failed: RecordingFailed
    usage_recorded: UsageRecorded
    approval_reminded: ApprovalReminded
    approval_escalated: ApprovalEscalated
    question_asked: QuestionAsked
    question_answered: QuestionAnswered
    steer_queued: SteerQueued
    steer_queue_changed: SteerQueueChanged
    guidance_added: GuidanceAdded
    guidance_removed: GuidanceRemoved
    approval_reviewed: ApprovalReviewed
    budget_warning: BudgetWarning
    budget_reached: BudgetReached
    budget_changed: BudgetChanged
    recording_schema: int
    def __init__(self, event_id: _Optional[str] = ..., run_id: _Optional[str] = ..., sequence: _Optional[int] = ..., emitted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., session_id: _Optional[str] = ..., run_started: _Optional[_Union[RunStarted, _Mapping]] = ..., goal_derived: _Optional[_Union[GoalDerived, _Mapping]] = ..., plan_submitted: _Optional[_Union[PlanSubmitted, _Mapping]] = ..., plan_revised: _Optional[_Union[PlanRevised, _Mapping]] = ..., task_started: _Optional[_Union[TaskStarted, _Mapping]] = ..., task_progress: _Optional[_Union[TaskProgress, _Mapping]] = ..., task_completed: _Optional[_Union[TaskCompleted, _Mapping]] = ..., task_failed: _Optional[_Union[TaskFailed, _Mapping]] = ..., task_blocked: _Optional[_Union[TaskBlocked, _Mapping]] = ..., task_cancelled: _Optional[_Union[TaskCancelled, _Mapping]] = ..., drift_detected: _Optional[_Union[DriftDetected, _Mapping]] = ..., run_completed: _Optional[_Union[RunCompleted, _Mapping]] = ..., run_aborted: _Optional[_Union[RunAborted, _Mapping]] = ..., conversation_started: _Optional[_Union[ConversationStarted, _Mapping]] = ..., conversation_ended: _Optional[_Union[ConversationEnded, _Mapping]] = ..., approval_requested: _Optional[_Union[ApprovalRequested, _Mapping]] = ..., approval_granted: _Optional[_Union[ApprovalGranted, _Mapping]] = ..., approval_rejected: _Optional[_Union[ApprovalRejected, _Mapping]] = ..., task_transitioned: _Optional[_Union[TaskTransitioned, _Mapping]] = ..., control_received: _Optional[_Union[ControlReceived, _Mapping]] = ..., control_acked: _Optional[_Union[ControlAcked, _Mapping]] = ..., message_parked: _Optional[_Union[MessageParked, _Mapping]] = ..., message_delivered: _Optional[_Union[MessageDelivered, _Mapping]] = ..., message_returned: _Optional[_Union[MessageReturned, _Mapping]] = ..., invocation_abandoned: _Optional[_Union[InvocationAbandoned, _Mapping]] = ..., run_resumed: _Optional[_Union[RunResumed, _Mapping]] = ..., agent_step: _Optional[_Union[AgentStep, _Mapping]] = ..., approval_decided: _Optional[_Union[ApprovalDecided, _Mapping]] = ..., approval_expiring: _Optional[_Union[ApprovalExpiring, _Mapping]] = ..., recording_failed: _Optional[_Union[RecordingFailed, _Mapping]] = ..., usage_recorded: _Optional[_Union[UsageRecorded, _Mapping]] = ..., approval_reminded: _Optional[_Union[ApprovalReminded, _Mapping]] = ..., approval_escalated: _Optional[_Union[ApprovalEscalated, _Mapping]] = ..., question_asked: _Optional[_Union[QuestionAsked, _Mapping]] = ..., question_answered: _Optional[_Union[QuestionAnswered, _Mapping]] = ..., steer_queued: _Optional[_Union[SteerQueued, _Mapping]] = ..., steer_queue_changed: _Optional[_Union[SteerQueueChanged, _Mapping]] = ..., guidance_added: _Optional[_Union[GuidanceAdded, _Mapping]] = ..., guidance_removed: _Optional[_Union[GuidanceRemoved, _Mapping]] = ..., approval_reviewed: _Optional[_Union[ApprovalReviewed, _Mapping]] = ..., budget_warning: _Optional[_Union[BudgetWarning, _Mapping]] = ..., budget_reached: _Optional[_Union[BudgetReached, _Mapping]] = ..., budget_changed: _Optional[_Union[BudgetChanged, _Mapping]] = ..., recording_schema: _Optional[int] = ...) -> None: ...

class RunStarted(_message.Message):
    __slots__ = ("run_id", "goal_summary", "started_at", "user_input", "launch_json")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    GOAL_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    USER_INPUT_FIELD_NUMBER: _ClassVar[int]
    LAUNCH_JSON_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    goal_summary: str
    started_at: _timestamp_pb2.Timestamp
    user_input: str
    launch_json: str
    def __init__(self, run_id: _Optional[str] = ..., goal_summary: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., user_input: _Optional[str] = ..., launch_json: _Optional[str] = ...) -> None: ...

class RunResumed(_message.Message):
    __slots__ = ("resumed_after_sequence", "resume_count", "interrupted_task_ids", "pending_approval_ids", "paused", "undelivered_message_ids", "unreadable_rows", "detail")
    RESUMED_AFTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    RESUME_COUNT_FIELD_NUMBER: _ClassVar[int]
    INTERRUPTED_TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    PENDING_APPROVAL_IDS_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    UNDELIVERED_MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_ROWS_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    resumed_after_sequence: int
    resume_count: int
    interrupted_task_ids: _containers.RepeatedScalarFieldContainer[str]
    pending_approval_ids: _containers.RepeatedScalarFieldContainer[str]
    paused: bool
    undelivered_message_ids: _containers.RepeatedScalarFieldContainer[str]
    unreadable_rows: int
    detail: str
    def __init__(self, resumed_after_sequence: _Optional[int] = ..., resume_count: _Optional[int] = ..., interrupted_task_ids: _Optional[_Iterable[str]] = ..., pending_approval_ids: _Optional[_Iterable[str]] = ..., paused: _Optional[bool] = ..., undelivered_message_ids: _Optional[_Iterable[str]] = ..., unreadable_rows: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...

class GoalDerived(_message.Message):
    __slots__ = ("goals",)
    GOALS_FIELD_NUMBER: _ClassVar[int]
    goals: _containers.RepeatedCompositeFieldContainer[_types_pb2.Goal]
    def __init__(self, goals: _Optional[_Iterable[_Union[_types_pb2.Goal, _Mapping]]] = ...) -> None: ...

class PlanSubmitted(_message.Message):
    __slots__ = ("plan",)
    PLAN_FIELD_NUMBER: _ClassVar[int]
    plan: _types_pb2.Plan
    def __init__(self, plan: _Optional[_Union[_types_pb2.Plan, _Mapping]] = ...) -> None: ...

class PlanRevisionDiff(_message.Message):
    __slots__ = ("added_task_ids", "removed_task_ids", "modified_task_ids", "added_edges", "removed_edges")
    ADDED_TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    REMOVED_TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    ADDED_EDGES_FIELD_NUMBER: _ClassVar[int]
    REMOVED_EDGES_FIELD_NUMBER: _ClassVar[int]
    added_task_ids: _containers.RepeatedScalarFieldContainer[str]
    removed_task_ids: _containers.RepeatedScalarFieldContainer[str]
    modified_task_ids: _containers.RepeatedScalarFieldContainer[str]
    added_edges: _containers.RepeatedCompositeFieldContainer[_types_pb2.TaskEdge]
    removed_edges: _containers.RepeatedCompositeFieldContainer[_types_pb2.TaskEdge]
    def __init__(self, added_task_ids: _Optional[_Iterable[str]] = ..., removed_task_ids: _Optional[_Iterable[str]] = ..., modified_task_ids: _Optional[_Iterable[str]] = ..., added_edges: _Optional[_Iterable[_Union[_types_pb2.TaskEdge, _Mapping]]] = ..., removed_edges: _Optional[_Iterable[_Union[_types_pb2.TaskEdge, _Mapping]]] = ...) -> None: ...

class PlanRevised(_message.Message):
    __slots__ = ("plan", "drift_kind", "severity", "reason", "revision_index", "diff", "drift_id")
    PLAN_FIELD_NUMBER: _ClassVar[int]
    DRIFT_KIND_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REVISION_INDEX_FIELD_NUMBER: _ClassVar[int]
    DIFF_FIELD_NUMBER: _ClassVar[int]
    DRIFT_ID_FIELD_NUMBER: _ClassVar[int]
    plan: _types_pb2.Plan
    drift_kind: _types_pb2.DriftKind
    severity: _types_pb2.DriftSeverity
    reason: str
    revision_index: int
    diff: PlanRevisionDiff
    drift_id: str
    def __init__(self, plan: _Optional[_Union[_types_pb2.Plan, _Mapping]] = ..., drift_kind: _Optional[_Union[_types_pb2.DriftKind, str]] = ..., severity: _Optional[_Union[_types_pb2.DriftSeverity, str]] = ..., reason: _Optional[str] = ..., revision_index: _Optional[int] = ..., diff: _Optional[_Union[PlanRevisionDiff, _Mapping]] = ..., drift_id: _Optional[str] = ...) -> None: ...

class TaskStarted(_message.Message):
    __slots__ = ("task_id", "detail", "assignee_agent_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    ASSIGNEE_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    detail: str
    assignee_agent_id: str
    def __init__(self, task_id: _Optional[str] = ..., detail: _Optional[str] = ..., assignee_agent_id: _Optional[str] = ...) -> None: ...

class TaskProgress(_message.Message):
    __slots__ = ("task_id", "fraction", "detail")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    FRACTION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    fraction: float
    detail: str
    def __init__(self, task_id: _Optional[str] = ..., fraction: _Optional[float] = ..., detail: _Optional[str] = ...) -> None: ...

class TaskCompleted(_message.Message):
    __slots__ = ("task_id", "result_summary")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    result_summary: str
    def __init__(self, task_id: _Optional[str] = ..., result_summary: _Optional[str] = ...) -> None: ...

class TaskFailed(_message.Message):
    __slots__ = ("task_id", "reason", "recoverable")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RECOVERABLE_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    reason: str
    recoverable: bool
    def __init__(self, task_id: _Optional[str] = ..., reason: _Optional[str] = ..., recoverable: _Optional[bool] = ...) -> None: ...

class TaskBlocked(_message.Message):
    __slots__ = ("task_id", "blocker")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    BLOCKER_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    blocker: str
    def __init__(self, task_id: _Optional[str] = ..., blocker: _Optional[str] = ...) -> None: ...

class TaskCancelled(_message.Message):
    __slots__ = ("task_id", "reason")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    reason: str
    def __init__(self, task_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class TaskTransitioned(_message.Message):
    __slots__ = ("task_id", "from_status_name", "to_status_name", "from_status", "to_status", "reason")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_STATUS_NAME_FIELD_NUMBER: _ClassVar[int]
    TO_STATUS_NAME_FIELD_NUMBER: _ClassVar[int]
    FROM_STATUS_FIELD_NUMBER: _ClassVar[int]
    TO_STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    from_status_name: str
    to_status_name: str
    from_status: _types_pb2.TaskStatus
    to_status: _types_pb2.TaskStatus
    reason: str
    def __init__(self, task_id: _Optional[str] = ..., from_status_name: _Optional[str] = ..., to_status_name: _Optional[str] = ..., from_status: _Optional[_Union[_types_pb2.TaskStatus, str]] = ..., to_status: _Optional[_Union[_types_pb2.TaskStatus, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class DriftDetected(_message.Message):
    __slots__ = ("kind", "severity", "detail", "current_task_id", "annotation_id", "id", "evidence")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TASK_ID_FIELD_NUMBER: _ClassVar[int]
    ANNOTATION_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    kind: _types_pb2.DriftKind
    severity: _types_pb2.DriftSeverity
    detail: str
    current_task_id: str
    annotation_id: str
    id: str
    evidence: _containers.RepeatedCompositeFieldContainer[DriftEvidence]
    def __init__(self, kind: _Optional[_Union[_types_pb2.DriftKind, str]] = ..., severity: _Optional[_Union[_types_pb2.DriftSeverity, str]] = ..., detail: _Optional[str] = ..., current_task_id: _Optional[str] = ..., annotation_id: _Optional[str] = ..., id: _Optional[str] = ..., evidence: _Optional[_Iterable[_Union[DriftEvidence, _Mapping]]] = ...) -> None: ...

class RunCompleted(_message.Message):
    __slots__ = ("outcome_summary",)
    OUTCOME_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    outcome_summary: str
    def __init__(self, outcome_summary: _Optional[str] = ...) -> None: ...

class RunAborted(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class ConversationStarted(_message.Message):
    __slots__ = ("lane", "started_at", "input")
    LANE_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    lane: str
    started_at: _timestamp_pb2.Timestamp
    input: str
    def __init__(self, lane: _Optional[str] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., input: _Optional[str] = ...) -> None: ...

class ConversationEnded(_message.Message):
    __slots__ = ("lane", "reason")
    LANE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    lane: str
    reason: str
    def __init__(self, lane: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ApprovalRequested(_message.Message):
    __slots__ = ("target_id", "kind", "prompt", "task_id", "metadata", "tool_name", "args_json", "timeout_ms", "on_timeout", "retry_of", "parameters_json", "review", "review_reason", "under_review")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    ON_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    RETRY_OF_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_JSON_FIELD_NUMBER: _ClassVar[int]
    REVIEW_FIELD_NUMBER: _ClassVar[int]
    REVIEW_REASON_FIELD_NUMBER: _ClassVar[int]
    UNDER_REVIEW_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    kind: str
    prompt: str
    task_id: str
    metadata: _containers.ScalarMap[str, str]
    tool_name: str
    args_json: str
    timeout_ms: int
    on_timeout: str
    retry_of: str
    parameters_json: str
    review: str
    review_reason: str
    under_review: bool
    def __init__(self, target_id: _Optional[str] = ..., kind: _Optional[str] = ..., prompt: _Optional[str] = ..., task_id: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., tool_name: _Optional[str] = ..., args_json: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., on_timeout: _Optional[str] = ..., retry_of: _Optional[str] = ..., parameters_json: _Optional[str] = ..., review: _Optional[str] = ..., review_reason: _Optional[str] = ..., under_review: _Optional[bool] = ...) -> None: ...

class ApprovalGranted(_message.Message):
    __slots__ = ("target_id", "detail", "arguments_json", "rule_id")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_JSON_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    detail: str
    arguments_json: str
    rule_id: str
    def __init__(self, target_id: _Optional[str] = ..., detail: _Optional[str] = ..., arguments_json: _Optional[str] = ..., rule_id: _Optional[str] = ...) -> None: ...

class ApprovalRejected(_message.Message):
    __slots__ = ("target_id", "detail", "timed_out")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    detail: str
    timed_out: bool
    def __init__(self, target_id: _Optional[str] = ..., detail: _Optional[str] = ..., timed_out: _Optional[bool] = ...) -> None: ...

class ApprovalDecided(_message.Message):
    __slots__ = ("target_id", "outcome", "author", "client", "kind", "task_id", "tool_name", "requested_args_json", "ran_args_json", "reason", "rule_id", "rule_author", "rule_made_at_ms", "control_id", "hub_check")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    RAN_ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    RULE_AUTHOR_FIELD_NUMBER: _ClassVar[int]
    RULE_MADE_AT_MS_FIELD_NUMBER: _ClassVar[int]
    CONTROL_ID_FIELD_NUMBER: _ClassVar[int]
    HUB_CHECK_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    outcome: str
    author: str
    client: str
    kind: str
    task_id: str
    tool_name: str
    requested_args_json: str
    ran_args_json: str
    reason: str
    rule_id: str
    rule_author: str
    rule_made_at_ms: int
    control_id: str
    hub_check: str
    def __init__(self, target_id: _Optional[str] = ..., outcome: _Optional[str] = ..., author: _Optional[str] = ..., client: _Optional[str] = ..., kind: _Optional[str] = ..., task_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., requested_args_json: _Optional[str] = ..., ran_args_json: _Optional[str] = ..., reason: _Optional[str] = ..., rule_id: _Optional[str] = ..., rule_author: _Optional[str] = ..., rule_made_at_ms: _Optional[int] = ..., control_id: _Optional[str] = ..., hub_check: _Optional[str] = ...) -> None: ...

class ApprovalExpiring(_message.Message):
    __slots__ = ("target_id", "ms_left", "on_timeout")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    MS_LEFT_FIELD_NUMBER: _ClassVar[int]
    ON_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    ms_left: int
    on_timeout: str
    def __init__(self, target_id: _Optional[str] = ..., ms_left: _Optional[int] = ..., on_timeout: _Optional[str] = ...) -> None: ...

class ApprovalReminded(_message.Message):
    __slots__ = ("target_id", "waited_ms", "reminder")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    WAITED_MS_FIELD_NUMBER: _ClassVar[int]
    REMINDER_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    waited_ms: int
    reminder: int
    def __init__(self, target_id: _Optional[str] = ..., waited_ms: _Optional[int] = ..., reminder: _Optional[int] = ...) -> None: ...

class ApprovalEscalated(_message.Message):
    __slots__ = ("target_id", "waited_ms", "why")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    WAITED_MS_FIELD_NUMBER: _ClassVar[int]
    WHY_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    waited_ms: int
    why: str
    def __init__(self, target_id: _Optional[str] = ..., waited_ms: _Optional[int] = ..., why: _Optional[str] = ...) -> None: ...

class ApprovalReviewed(_message.Message):
    __slots__ = ("target_id", "decision", "reason", "error", "grace_ms", "model")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    decision: str
    reason: str
    error: str
    grace_ms: int
    model: str
    def __init__(self, target_id: _Optional[str] = ..., decision: _Optional[str] = ..., reason: _Optional[str] = ..., error: _Optional[str] = ..., grace_ms: _Optional[int] = ..., model: _Optional[str] = ...) -> None: ...

class QuestionAsked(_message.Message):
    __slots__ = ("target_id", "task_id", "prompt", "options", "free_text", "timeout_ms", "on_timeout")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    FREE_TEXT_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    ON_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    task_id: str
    prompt: str
    options: _containers.RepeatedScalarFieldContainer[str]
    free_text: bool
    timeout_ms: int
    on_timeout: str
    def __init__(self, target_id: _Optional[str] = ..., task_id: _Optional[str] = ..., prompt: _Optional[str] = ..., options: _Optional[_Iterable[str]] = ..., free_text: _Optional[bool] = ..., timeout_ms: _Optional[int] = ..., on_timeout: _Optional[str] = ...) -> None: ...

class QuestionAnswered(_message.Message):
    __slots__ = ("target_id", "outcome", "text", "option", "author", "client")
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    OPTION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    target_id: str
    outcome: str
    text: str
    option: str
    author: str
    client: str
    def __init__(self, target_id: _Optional[str] = ..., outcome: _Optional[str] = ..., text: _Optional[str] = ..., option: _Optional[str] = ..., author: _Optional[str] = ..., client: _Optional[str] = ...) -> None: ...

class RecordingFailed(_message.Message):
    __slots__ = ("detail", "failed_at_sequence")
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    FAILED_AT_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    detail: str
    failed_at_sequence: int
    def __init__(self, detail: _Optional[str] = ..., failed_at_sequence: _Optional[int] = ...) -> None: ...

class BudgetLimits(_message.Message):
    __slots__ = ("tokens", "usd", "model_calls", "tool_calls", "seconds")
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    USD_FIELD_NUMBER: _ClassVar[int]
    MODEL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    tokens: int
    usd: float
    model_calls: int
    tool_calls: int
    seconds: float
    def __init__(self, tokens: _Optional[int] = ..., usd: _Optional[float] = ..., model_calls: _Optional[int] = ..., tool_calls: _Optional[int] = ..., seconds: _Optional[float] = ...) -> None: ...

class BudgetWarning(_message.Message):
    __slots__ = ("limit", "used", "allowed", "detail")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    limit: str
    used: float
    allowed: float
    detail: str
    def __init__(self, limit: _Optional[str] = ..., used: _Optional[float] = ..., allowed: _Optional[float] = ..., detail: _Optional[str] = ...) -> None: ...

class BudgetReached(_message.Message):
    __slots__ = ("limit", "used", "allowed", "detail", "where", "task_id")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    USED_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    WHERE_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    limit: str
    used: float
    allowed: float
    detail: str
    where: str
    task_id: str
    def __init__(self, limit: _Optional[str] = ..., used: _Optional[float] = ..., allowed: _Optional[float] = ..., detail: _Optional[str] = ..., where: _Optional[str] = ..., task_id: _Optional[str] = ...) -> None: ...

class BudgetChanged(_message.Message):
    __slots__ = ("budget", "author", "control_id", "detail")
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    CONTROL_ID_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    budget: BudgetLimits
    author: str
    control_id: str
    detail: str
    def __init__(self, budget: _Optional[_Union[BudgetLimits, _Mapping]] = ..., author: _Optional[str] = ..., control_id: _Optional[str] = ..., detail: _Optional[str] = ...) -> None: ...

class ControlReceived(_message.Message):
    __slots__ = ("control", "kind", "author")
    CONTROL_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    control: _control_pb2.ControlEvent
    kind: str
    author: str
    def __init__(self, control: _Optional[_Union[_control_pb2.ControlEvent, _Mapping]] = ..., kind: _Optional[str] = ..., author: _Optional[str] = ...) -> None: ...

class ControlAcked(_message.Message):
    __slots__ = ("ack", "kind")
    ACK_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    ack: _control_pb2.ControlAck
    kind: str
    def __init__(self, ack: _Optional[_Union[_control_pb2.ControlAck, _Mapping]] = ..., kind: _Optional[str] = ...) -> None: ...

class MessageParked(_message.Message):
    __slots__ = ("message_id", "lane", "role", "text", "control_id")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    LANE_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONTROL_ID_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    lane: str
    role: str
    text: str
    control_id: str
    def __init__(self, message_id: _Optional[str] = ..., lane: _Optional[str] = ..., role: _Optional[str] = ..., text: _Optional[str] = ..., control_id: _Optional[str] = ...) -> None: ...

class MessageDelivered(_message.Message):
    __slots__ = ("message_id", "lane", "via")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    LANE_FIELD_NUMBER: _ClassVar[int]
    VIA_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    lane: str
    via: str
    def __init__(self, message_id: _Optional[str] = ..., lane: _Optional[str] = ..., via: _Optional[str] = ...) -> None: ...

class MessageReturned(_message.Message):
    __slots__ = ("message_id", "lane")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    LANE_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    lane: str
    def __init__(self, message_id: _Optional[str] = ..., lane: _Optional[str] = ...) -> None: ...

class AgentStep(_message.Message):
    __slots__ = ("task_id", "step", "framework", "tool_name", "call_id", "args_json", "text", "outcome", "duration_ms")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    FRAMEWORK_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    step: str
    framework: str
    tool_name: str
    call_id: str
    args_json: str
    text: str
    outcome: str
    duration_ms: int
    def __init__(self, task_id: _Optional[str] = ..., step: _Optional[str] = ..., framework: _Optional[str] = ..., tool_name: _Optional[str] = ..., call_id: _Optional[str] = ..., args_json: _Optional[str] = ..., text: _Optional[str] = ..., outcome: _Optional[str] = ..., duration_ms: _Optional[int] = ...) -> None: ...

class InvocationAbandoned(_message.Message):
    __slots__ = ("task_id", "grace_s", "reason")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    GRACE_S_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    grace_s: float
    reason: str
    def __init__(self, task_id: _Optional[str] = ..., grace_s: _Optional[float] = ..., reason: _Optional[str] = ...) -> None: ...

class UsageRecorded(_message.Message):
    __slots__ = ("task_id", "purpose", "model", "input_tokens", "output_tokens", "cached_tokens", "cost_usd", "source", "cost_source", "response_id", "duration_ms", "otel_trace_id", "otel_span_id")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    COST_SOURCE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    OTEL_TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    OTEL_SPAN_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    purpose: str
    model: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float
    source: str
    cost_source: str
    response_id: str
    duration_ms: int
    otel_trace_id: str
    otel_span_id: str
    def __init__(self, task_id: _Optional[str] = ..., purpose: _Optional[str] = ..., model: _Optional[str] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cached_tokens: _Optional[int] = ..., cost_usd: _Optional[float] = ..., source: _Optional[str] = ..., cost_source: _Optional[str] = ..., response_id: _Optional[str] = ..., duration_ms: _Optional[int] = ..., otel_trace_id: _Optional[str] = ..., otel_span_id: _Optional[str] = ...) -> None: ...

class UsageTotals(_message.Message):
    __slots__ = ("calls", "input_tokens", "output_tokens", "cached_tokens", "cost_usd", "unpriced_calls")
    CALLS_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_USD_FIELD_NUMBER: _ClassVar[int]
    UNPRICED_CALLS_FIELD_NUMBER: _ClassVar[int]
    calls: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float
    unpriced_calls: int
    def __init__(self, calls: _Optional[int] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cached_tokens: _Optional[int] = ..., cost_usd: _Optional[float] = ..., unpriced_calls: _Optional[int] = ...) -> None: ...

class DriftEvidence(_message.Message):
    __slots__ = ("at", "what", "tool_name", "call_id", "args_json", "text", "sequence")
    AT_FIELD_NUMBER: _ClassVar[int]
    WHAT_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    at: _timestamp_pb2.Timestamp
    what: str
    tool_name: str
    call_id: str
    args_json: str
    text: str
    sequence: int
    def __init__(self, at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., what: _Optional[str] = ..., tool_name: _Optional[str] = ..., call_id: _Optional[str] = ..., args_json: _Optional[str] = ..., text: _Optional[str] = ..., sequence: _Optional[int] = ...) -> None: ...

class SteeringNote(_message.Message):
    __slots__ = ("id", "text", "author", "client", "control_id", "held", "added_at")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    CLIENT_FIELD_NUMBER: _ClassVar[int]
    CONTROL_ID_FIELD_NUMBER: _ClassVar[int]
    HELD_FIELD_NUMBER: _ClassVar[int]
    ADDED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    author: str
    client: str
    control_id: str
    held: bool
    added_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., author: _Optional[str] = ..., client: _Optional[str] = ..., control_id: _Optional[str] = ..., held: _Optional[bool] = ..., added_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SteerQueued(_message.Message):
    __slots__ = ("note",)
    NOTE_FIELD_NUMBER: _ClassVar[int]
    note: SteeringNote
    def __init__(self, note: _Optional[_Union[SteeringNote, _Mapping]] = ...) -> None: ...

class SteerQueueChanged(_message.Message):
    __slots__ = ("note_id", "op", "text", "author", "control_id", "order")
    NOTE_ID_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    CONTROL_ID_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    note_id: str
    op: str
    text: str
    author: str
    control_id: str
    order: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, note_id: _Optional[str] = ..., op: _Optional[str] = ..., text: _Optional[str] = ..., author: _Optional[str] = ..., control_id: _Optional[str] = ..., order: _Optional[_Iterable[str]] = ...) -> None: ...

class GuidanceAdded(_message.Message):
    __slots__ = ("note", "made_from")
    NOTE_FIELD_NUMBER: _ClassVar[int]
    MADE_FROM_FIELD_NUMBER: _ClassVar[int]
    note: SteeringNote
    made_from: str
    def __init__(self, note: _Optional[_Union[SteeringNote, _Mapping]] = ..., made_from: _Optional[str] = ...) -> None: ...

class GuidanceRemoved(_message.Message):
    __slots__ = ("guidance_id", "author", "control_id")
    GUIDANCE_ID_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    CONTROL_ID_FIELD_NUMBER: _ClassVar[int]
    guidance_id: str
    author: str
    control_id: str
    def __init__(self, guidance_id: _Optional[str] = ..., author: _Optional[str] = ..., control_id: _Optional[str] = ...) -> None: ...
