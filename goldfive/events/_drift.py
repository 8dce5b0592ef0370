"""The event of a drift the steerer or the watchdog found."""

from __future__ import annotations

from goldfive import conv
from goldfive.clean import clean_text
from goldfive.events._envelope import _MAX_MS, _MIN_MS, _stamp
from goldfive.pb.goldfive.v1 import events_pb2 as pb
from goldfive.types import DriftEvent, Session

#: conv's maps of a DriftKind and a DriftSeverity to their protobuf values.
_DRIFT_KINDS = conv._DRIFT_TO_PB
_SEVERITIES = conv._SEV_TO_PB


def drift_detected(session: Session, drift: DriftEvent) -> pb.Event:
    ev = pb.Event()
    d = ev.drift_detected
    # Every STATUS_QUERY makes one: ASCII text (nearly all) is set without a call of clean_text.
    value = drift.id
    d.id = value if value.__class__ is str and value.isascii() else clean_text(value)
    # A known kind and severity (nearly all) looked up here, the rest through conv's check.
    kind, severity = drift.kind, drift.severity
    d.kind = _DRIFT_KINDS[kind] if kind in _DRIFT_KINDS else conv.drift_kind_to_pb(kind)
    d.severity = _SEVERITIES[severity] if severity in _SEVERITIES else conv.drift_severity_to_pb(severity)
    value = drift.detail
    d.detail = value if value.__class__ is str and value.isascii() else clean_text(value)
    value = drift.task_id or session.current_task_id
    d.current_task_id = value if value.__class__ is str and value.isascii() else clean_text(value)
    value = drift.annotation_id
    if value != "":
        d.annotation_id = value if value.__class__ is str and value.isascii() else clean_text(value)
    for item in drift.evidence:
        e = d.evidence.add()
        e.at.FromMilliseconds(min(max(item.at_ms, _MIN_MS), _MAX_MS))
        e.what = clean_text(item.what)
        e.tool_name = clean_text(item.tool_name)
        e.call_id = clean_text(item.call_id)
        e.args_json = clean_text(item.args_json)
        e.text = clean_text(item.text)
        e.sequence = max(item.sequence, 0)
    return _stamp(session, ev)
