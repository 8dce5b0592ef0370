"""Typed controls: one frozen class per control kind's payload, decoded once where a control
enters a run (``decode``), and ``AppliedAs``, what an ack says the control was applied as.

``goldfive.control`` keeps the spec's surface (``ControlMessage(kind, payload: dict)``,
``ControlAck``, ``ControlChannel``); this package is what the run, the views and clients read
the payload through.
"""

from goldfive.control import AppliedAs
from goldfive.controls.payloads import (
    PAYLOAD_TYPES,
    RULES_VERB,
    Always,
    ApprovalRules,
    Approve,
    BudgetSet,
    Cancel,
    Control,
    ControlPayload,
    Custom,
    GoldfivePauseEscalate,
    GoldfiveSteer,
    Inject,
    InterceptTransfer,
    Pause,
    Reject,
    Resume,
    Rewind,
    StatusQuery,
    Steer,
    decode,
    decode_payload,
    message,
)
from goldfive.errors import ControlPayloadError

__all__ = [
    "PAYLOAD_TYPES",
    "RULES_VERB",
    "Always",
    "AppliedAs",
    "ApprovalRules",
    "Approve",
    "BudgetSet",
    "Cancel",
    "Control",
    "ControlPayload",
    "ControlPayloadError",
    "Custom",
    "GoldfivePauseEscalate",
    "GoldfiveSteer",
    "Inject",
    "InterceptTransfer",
    "Pause",
    "Reject",
    "Resume",
    "Rewind",
    "StatusQuery",
    "Steer",
    "decode",
    "decode_payload",
    "message",
]
