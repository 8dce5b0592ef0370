"""goldfive: wrap an agent with an explicit plan, a task state machine, drift detection
and live steering. This module only re-exports."""

from goldfive.adapters.callable import CallableAdapter
from goldfive.adapters.llm_agent import LLMAgentAdapter
from goldfive.budget import Budget, BudgetError
from goldfive.control import AckResult, ControlAck, ControlChannel, ControlKind, ControlMessage
from goldfive.errors import (
    ChannelClosedError,
    LLMError,
    PlannerError,
    RemoteError,
    ServeConfigError,
    ConversionError,
    GoldfiveError,
    InvalidTransitionError,
    PlanValidationError,
    UnknownTaskError,
)
from goldfive.executors import ParallelDAGExecutor, SequentialExecutor
from goldfive.goals import LiteralGoalDeriver, PassthroughGoalDeriver
from goldfive.llm import CallLLM, ChatModel, ChatResult, OpenAICompatClient, ScriptedModel, ToolCall
from goldfive.planners import LLMGoalDeriver, LLMPlanner, PassthroughPlanner, StaticPlanner
from goldfive.protocols import AgentAdapter, EventSink, Executor, GoalDeriver, Planner, Steerer
from goldfive.quick import quickstart, wrap
from goldfive.results import ExecutionOutcome, InvocationResult
from goldfive.runner import Runner
from goldfive.run import RuntimeConfig, read_injected
from goldfive.sinks import (
    GRPCSink,
    InMemorySink,
    JSONLPersistenceSink,
    LoggingSink,
    SQLitePersistenceSink,
    replay_from_jsonl,
    replay_from_sqlite,
)
from goldfive.steerer import DefaultSteerer
from goldfive.run.tools import ReportingToolSpec
from goldfive.run.user_tools import UserTool
from goldfive.types import (
    DriftEvent,
    DriftKind,
    DriftSeverity,
    Goal,
    Plan,
    Session,
    Task,
    TaskEdge,
    TaskStatus,
)

__version__ = "0.1.0"

__all__ = [
    "AckResult",
    "AgentAdapter",
    "Budget",
    "BudgetError",
    "CallLLM",
    "CallableAdapter",
    "ChannelClosedError",
    "ChatModel",
    "ChatResult",
    "ControlAck",
    "ControlChannel",
    "ControlKind",
    "ControlMessage",
    "ConversionError",
    "DefaultSteerer",
    "DriftEvent",
    "DriftKind",
    "DriftSeverity",
    "EventSink",
    "ExecutionOutcome",
    "Executor",
    "GRPCSink",
    "Goal",
    "GoalDeriver",
    "GoldfiveError",
    "InMemorySink",
    "InvalidTransitionError",
    "InvocationResult",
    "JSONLPersistenceSink",
    "LLMAgentAdapter",
    "LLMError",
    "LLMGoalDeriver",
    "LLMPlanner",
    "LiteralGoalDeriver",
    "LoggingSink",
    "OpenAICompatClient",
    "ParallelDAGExecutor",
    "PassthroughGoalDeriver",
    "PassthroughPlanner",
    "Plan",
    "PlanValidationError",
    "Planner",
    "PlannerError",
    "RemoteError",
    "ReportingToolSpec",
    "Runner",
    "RuntimeConfig",
    "SQLitePersistenceSink",
    "ScriptedModel",
    "SequentialExecutor",
    "ServeConfigError",
    "Session",
    "StaticPlanner",
    "Steerer",
    "Task",
    "TaskEdge",
    "TaskStatus",
    "ToolCall",
    "UnknownTaskError",
    "UserTool",
    "__version__",
    "quickstart",
    "read_injected",
    "replay_from_jsonl",
    "replay_from_sqlite",
    "wrap",
]
