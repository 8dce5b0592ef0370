"""The wire format is goldfive v1's: a reader built from v1's .proto files (restated in
tests/fixtures/v1_reader, compiled here into a descriptor pool of its own) reads our events
right, and every field we share with v1 has v1's number and type."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc_tools
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet
from grpc_tools import protoc

from goldfive import compat, events
from goldfive.pb.goldfive.v1 import control_pb2, events_pb2, service_pb2, types_pb2
from goldfive.types import DriftEvent, DriftKind, DriftSeverity, Plan, Session, Task, TaskEdge, TaskStatus

V1_DIR = Path(__file__).parent / "fixtures" / "v1_reader"
OURS = [types_pb2.DESCRIPTOR, control_pb2.DESCRIPTOR, events_pb2.DESCRIPTOR, service_pb2.DESCRIPTOR]


class V1:
    def __init__(self, files: descriptor_pb2.FileDescriptorSet) -> None:
        self.files = [f for f in files.file if f.package == "goldfive.v1"]
        self.pool = descriptor_pool.DescriptorPool()
        for f in files.file:
            self.pool.Add(f)
        self.Event: Any = message_factory.GetMessageClass(self.pool.FindMessageTypeByName("goldfive.v1.Event"))

    def read(self, data: bytes) -> Any:
        return self.Event.FromString(data)


@pytest.fixture(scope="module")
def v1(tmp_path_factory: pytest.TempPathFactory) -> V1:
    out = tmp_path_factory.mktemp("v1") / "v1.pb"
    include = Path(grpc_tools.__file__).parent / "_proto"
    protos = sorted(str(p) for p in (V1_DIR / "goldfive" / "v1").glob("*.proto"))
    args = ["protoc", f"-I{V1_DIR}", f"-I{include}", f"--descriptor_set_out={out}", "--include_imports", *protos]
    assert protoc.main(args) == 0
    return V1(descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()))


# -- the schema -----------------------------------------------------------------------------


def _ours(full_name: str) -> Descriptor | EnumDescriptor | None:
    for f in OURS:
        short = full_name.removeprefix("goldfive.v1.")
        if short in f.message_types_by_name:
            return f.message_types_by_name[short]
        if short in f.enum_types_by_name:
            return f.enum_types_by_name[short]
    return None


def _shape(fd: FieldDescriptor) -> tuple[Any, ...]:
    sub = fd.message_type.full_name if fd.message_type else fd.enum_type.full_name if fd.enum_type else ""
    return (fd.type, fd.is_repeated, sub)


#: Fields at v1's number and type under another name here: the same meaning (a lane is the
#: conversation, the drift a revision answers is its trigger), a name this project had first.
SAME_MEANING = {
    ("PlanRevised", "drift_id"): "trigger_event_id",
    ("TaskCompleted", "result_summary"): "summary",
    ("ConversationStarted", "lane"): "conversation_id",
    ("ConversationEnded", "lane"): "conversation_id",
    ("TaskTransitioned", "from_status_name"): "from_status",
    ("TaskTransitioned", "to_status_name"): "to_status",
}


def test_every_field_and_enum_value_we_share_with_v1_has_its_number_and_type(v1: V1) -> None:
    problems: list[str] = []
    for f in v1.files:
        for msg in f.message_type:
            name = f"goldfive.v1.{msg.name}"
            ours = _ours(name)
            if not isinstance(ours, Descriptor):
                continue  # a message only v1 has
            theirs = v1.pool.FindMessageTypeByName(name)
            reserved = [range(r.start, r.end) for r in msg.reserved_range]
            for fd in ours.fields:
                v1_fd = theirs.fields_by_number.get(fd.number)
                if v1_fd is not None:
                    if _shape(fd) != _shape(v1_fd):
                        problems.append(f"{name}.{fd.name} = {fd.number}: {_shape(fd)}, v1 has {v1_fd.name} {_shape(v1_fd)}")
                    elif SAME_MEANING.get((msg.name, fd.name), fd.name) != v1_fd.name:
                        problems.append(f"{name}.{fd.name} = {fd.number}: v1 reads it as {v1_fd.name}")
                elif fd.number < 100 or any(fd.number in r for r in reserved):
                    problems.append(f"{name}.{fd.name} = {fd.number}: a number v1 uses or keeps; ours take 100 and up")
        for enum in f.enum_type:
            name = f"goldfive.v1.{enum.name}"
            ours_enum = _ours(name)
            if not isinstance(ours_enum, EnumDescriptor):
                continue
            v1_values = {v.number: v.name for v in enum.value}
            for value in ours_enum.values:
                if value.number in v1_values and v1_values[value.number] != value.name:
                    problems.append(f"{name}: {value.number} is {value.name}, v1 has {v1_values[value.number]}")
                elif value.number not in v1_values and value.number < 100:
                    problems.append(f"{name}.{value.name} = {value.number}: not v1's; ours take 100 and up")
    assert problems == []


def test_the_v1_reader_restates_every_message_we_share() -> None:
    """Guard against a shared message missing from the v1 copy (it would go unchecked)."""
    restated = {p.stem for p in (V1_DIR / "goldfive" / "v1").glob("*.proto")}
    assert restated == {"types", "events", "control", "service"}


# -- a v1 reader on our bytes ---------------------------------------------------------------

MS = 1_800_000_000_000


def _session() -> Session:
    return Session(run_id="run-v1", session_id="sess", clock=lambda: MS)


OLD = Plan(tasks=[Task("a", "A"), Task("b", "B")], edges=[TaskEdge("a", "b")], id="p0")
NEW = Plan(tasks=[Task("a", "A"), Task("c", "C")], edges=[TaskEdge("a", "c")], id="p1", revision_index=1,
           revision_kind="CUSTOM", revision_severity="CRITICAL", revision_reason="the detail")  # fmt: skip


def _both_ways(ev: events_pb2.Event) -> list[bytes]:
    """As sent on the wire, and as stored in a recording."""
    return [ev.SerializeToString(), compat.recorded_bytes(ev)]


def _no_misread(msg: Message) -> None:
    """Nothing v1 defines was skipped for a wrong wire type: only our own numbers are unknown."""
    unknown = sorted({f.field_number for f in UnknownFieldSet(msg)})
    assert all(n >= 100 for n in unknown), unknown
    for fd, value in msg.ListFields():
        if fd.message_type is not None and not fd.message_type.GetOptions().map_entry:
            for sub in value if fd.is_repeated else [value]:
                _no_misread(sub)


def test_a_v1_reader_reads_run_started_drift_and_progress(v1: V1) -> None:
    s = _session()
    started = events.run_started(s, goal_summary="the goal", user_input="raw input")
    drift = events.drift_detected(s, DriftEvent(DriftKind.CUSTOM, DriftSeverity.CRITICAL, "odd", "a", "ann", id="d1"))
    half = events.task_progress(s, "a", detail="half", fraction=0.5)
    none = events.task_progress(s, "a", detail="busy")
    for data in _both_ways(started):
        r = v1.read(data)
        _no_misread(r)
        assert (r.run_id, r.run_started.run_id, r.run_started.goal_summary) == ("run-v1", "run-v1", "the goal")
        assert r.run_started.started_at.ToMilliseconds() == MS
    for data in _both_ways(drift):
        d = v1.read(data).drift_detected
        _no_misread(d)
        assert (d.kind, d.severity) == (types_pb2.DRIFT_KIND_CUSTOM, types_pb2.DRIFT_SEVERITY_CRITICAL) == (25, 3)
        assert (d.detail, d.current_task_id, d.annotation_id, d.id) == ("odd", "a", "ann", "d1")
    assert v1.read(half.SerializeToString()).task_progress.fraction == 0.5
    assert v1.read(none.SerializeToString()).task_progress.fraction == 0.0  # v1: 0 when none


def test_a_v1_reader_reads_plan_revisions_tasks_and_transitions(v1: V1) -> None:
    s = _session()
    revised = events.plan_revised(s, OLD, NEW, drift_id="d1")
    started = events.task_started(s, "a", "agent-7")
    completed = events.task_completed(s, "a", "it is done")
    moved = events.task_transitioned(s, "b", TaskStatus.PENDING, TaskStatus.NOT_NEEDED, "skipped")
    for data in _both_ways(revised):
        p = v1.read(data).plan_revised
        _no_misread(p)
        assert (p.plan.id, p.plan.revision_index, p.trigger_event_id) == ("p1", 1, "d1")
        assert (p.drift_kind, p.severity, p.reason, p.revision_index) == (
            types_pb2.DRIFT_KIND_CUSTOM, types_pb2.DRIFT_SEVERITY_CRITICAL, "the detail", 1)
        assert (list(p.diff.added_task_ids), list(p.diff.removed_task_ids)) == (["c"], ["b"])
    t = v1.read(started.SerializeToString()).task_started
    assert (t.task_id, t.detail) == ("a", "")  # the assignee is not read as a detail
    assert v1.read(completed.SerializeToString()).task_completed.summary == "it is done"
    tr = v1.read(moved.SerializeToString()).task_transitioned
    _no_misread(tr)
    assert (tr.task_id, tr.from_status, tr.to_status, tr.source) == ("b", "PENDING", "NOT_NEEDED", "")


def test_a_v1_reader_reads_conversations_and_approvals(v1: V1) -> None:
    s = _session()
    opened = events.conversation_started(s, "lane-a", "first input")
    closed = events.conversation_ended(s, "lane-a", "task done")
    asked = events.approval_requested(s, target_id="call-1", kind="tool", prompt="charge?", task_id="a",
                                      tool_name="charge", args={"amount": 5}, timeout_ms=1000, metadata={"k": "v"})  # fmt: skip
    c = v1.read(opened.SerializeToString()).conversation_started
    _no_misread(c)
    assert (c.conversation_id, c.started_at.ToMilliseconds()) == ("lane-a", MS)
    e = v1.read(closed.SerializeToString()).conversation_ended
    assert (e.conversation_id, e.turn_count, e.reason) == ("lane-a", 0, "task done")
    for data in _both_ways(asked):
        a = v1.read(data).approval_requested
        _no_misread(a)
        assert (a.target_id, a.kind, a.prompt, a.task_id) == ("call-1", "tool", "charge?", "a")
        assert a.metadata["k"] == "v" and a.metadata["tool_name"] == "charge"
        assert json.loads(a.metadata["args_json"]) == {"amount": 5}


def test_events_a_v1_writer_sends_read_right_here(v1: V1) -> None:
    """The other direction (a v1 runner streaming to our ingress): v1's bytes, our reader."""
    ev = v1.Event(run_id="r", sequence=3)
    ev.drift_detected.kind = 26
    ev.drift_detected.severity = 2
    ev.drift_detected.detail = "looping"
    ev.drift_detected.id = "d7"
    ev.drift_detected.current_agent_id = "agent"  # v1 only: kept as an unknown field
    ours = events_pb2.Event.FromString(ev.SerializeToString()).drift_detected
    assert (ours.kind, ours.severity, ours.detail, ours.id) == (types_pb2.DRIFT_KIND_LOOPING_TOOL_CALL, 2, "looping", "d7")
    progress = v1.Event(run_id="r")
    progress.task_progress.fraction = 0.25
    assert events_pb2.Event.FromString(progress.SerializeToString()).task_progress.fraction == 0.25
