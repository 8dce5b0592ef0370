"""The names users import (DESIGN section 2) stay where they are."""

import importlib

import goldfive

DESIGN_ROOT_NAMES = """Runner ControlChannel ControlMessage ControlKind ControlAck AckResult SequentialExecutor
ParallelDAGExecutor DefaultSteerer PassthroughGoalDeriver LiteralGoalDeriver LLMGoalDeriver PassthroughPlanner
StaticPlanner LLMPlanner CallableAdapter InMemorySink LoggingSink JSONLPersistenceSink SQLitePersistenceSink
Goal Plan Task TaskEdge TaskStatus Session DriftKind DriftSeverity ExecutionOutcome InvocationResult
ReportingToolSpec wrap quickstart GoldfiveError
GoalDeriver Planner Executor Steerer AgentAdapter EventSink""".split()

MODULE_NAMES = {
    "goldfive.control": ["ControlChannel", "ControlMessage", "ControlKind", "ControlAck", "AckResult"],
    "goldfive.conv": ["to_pb_control_event", "from_pb_control_event", "to_pb_control_ack", "from_pb_control_ack"],
    "goldfive.executors._control": ["dispatch_control", "drain_controls", "ControlOutcome"],
    "goldfive.executors": ["SequentialExecutor", "ParallelDAGExecutor"],
    "goldfive.executors.sequential": ["SequentialExecutor"],
    "goldfive.adapters.callable": ["CallableAdapter"],
    "goldfive.planner": ["StaticPlanner", "PassthroughPlanner", "LLMPlanner"],
    "goldfive.types": ["Goal", "Plan", "Task", "TaskEdge", "TaskStatus", "Session", "DriftEvent", "DriftKind", "DriftSeverity"],
    "goldfive.results": ["ExecutionOutcome", "InvocationResult"],
    "goldfive.protocols": ["GoalDeriver", "Planner", "Executor", "Steerer", "AgentAdapter", "EventSink"],
}


def test_root_exports_every_name_the_design_promises():
    missing = [n for n in DESIGN_ROOT_NAMES if not hasattr(goldfive, n) or n not in goldfive.__all__]
    assert missing == []


def test_root_all_is_sorted_and_importable():
    assert goldfive.__all__ == sorted(goldfive.__all__)
    for name in goldfive.__all__:
        assert hasattr(goldfive, name), name


def test_spec_module_paths_resolve():
    for module, names in MODULE_NAMES.items():
        mod = importlib.import_module(module)
        for name in names:
            assert hasattr(mod, name), f"{module}.{name}"


def test_every_error_derives_from_goldfive_error():
    import goldfive.errors as errors

    classes = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, Exception)]
    assert len(classes) > 5
    assert all(issubclass(c, goldfive.GoldfiveError) for c in classes)


def test_the_six_protocols_are_the_same_at_the_root_and_in_goldfive_protocols():
    import goldfive.protocols

    for name in ("GoalDeriver", "Planner", "Executor", "Steerer", "AgentAdapter", "EventSink"):
        assert getattr(goldfive, name) is getattr(goldfive.protocols, name)


def test_spec_planner_path_reexports_the_same_classes_as_the_root():
    import goldfive.planner
    import goldfive.planners.static

    assert goldfive.planner.StaticPlanner is goldfive.planners.static.StaticPlanner is goldfive.StaticPlanner
    assert goldfive.planner.PassthroughPlanner is goldfive.planners.static.PassthroughPlanner
    assert goldfive.planner.LLMPlanner is goldfive.LLMPlanner


#: What ``goldfive.events`` offered as one module (before it became a package): every factory and
#: value a user reaches as ``events.X`` or ``from goldfive.events import X``.
EVENTS_NAMES = """AGENT_STEPS Event agent_step approval_decided approval_escalated approval_expiring approval_granted
approval_rejected approval_reminded approval_requested approval_reviewed budget_changed budget_from_pb budget_limits
budget_reached budget_warning clean_text control_acked control_received conversation_ended conversation_started
drift_detected goal_derived guidance_added guidance_removed invocation_abandoned kind_of message_delivered
message_parked message_returned plan_diff plan_revised plan_submitted question_answered question_asked recording_failed
run_aborted run_completed run_resumed run_started steer_queue_changed steer_queued task_blocked task_cancelled
task_completed task_event task_failed task_progress task_started task_transitioned text_replacements
usage_recorded""".split()


def test_goldfive_events_exports_every_factory_in_a_sorted_all() -> None:
    import goldfive.events

    assert goldfive.events.__all__ == sorted(goldfive.events.__all__) == EVENTS_NAMES
    for name in EVENTS_NAMES:
        assert getattr(goldfive.events, name) is not None, name
