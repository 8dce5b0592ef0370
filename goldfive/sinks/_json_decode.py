"""Fast protobuf JSON-mapping decoder for replaying JSONL recordings.

``json_format.ParseDict`` decides, per field and per call, how to read each value; that costs
about 80 us per event, 8 s for a 100,000-event recording. Here those decisions are made once
per descriptor and the message is built with one constructor call from keyword arguments.
Anything this fast path does not recognise with certainty (a value of an unexpected type,
well-known types other than Timestamp, a Timestamp with an offset, two members of one oneof)
falls back to ``json_format.ParseDict``, so results and errors stay exactly json_format's.
A test pins the equality on every event kind.
"""

from __future__ import annotations

import base64
import calendar
import math
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

if TYPE_CHECKING:
    from google._upb._message import Descriptor as _UpbDescriptor

__all__ = ["parse_dict"]

_FD = FieldDescriptor
_Conv = Callable[[Any], Any]
# json name or proto name -> (proto field name, converter or None for strings, oneof name or "")
_Plan = dict[str, tuple[str, _Conv | None, str]]
_plans: dict[str, _Plan] = {}
_M = TypeVar("_M", bound=Message)


class _Fallback(Exception):
    """This value needs json_format's full treatment."""


def parse_dict(obj: dict[str, Any], message_cls: type[_M]) -> _M:
    """``json_format.ParseDict(obj, message_cls(), ignore_unknown_fields=True)``, faster."""
    try:
        return message_cls(**_kwargs(obj, message_cls.DESCRIPTOR))
    except (_Fallback, ValueError, TypeError, KeyError, OverflowError):
        return json_format.ParseDict(obj, message_cls(), ignore_unknown_fields=True)


def _kwargs(obj: Any, desc: Descriptor | _UpbDescriptor) -> dict[str, Any]:
    if type(obj) is not dict:
        raise _Fallback
    plan = _plans.get(desc.full_name)
    if plan is None:
        plan = _plans[desc.full_name] = _plan(desc)
    out: dict[str, Any] = {}
    oneof_keys = 0
    for key, value in obj.items():
        entry = plan.get(key)
        if entry is None:
            if key[:1] == "[":  # extensions: not in our schema, let json_format judge
                raise _Fallback
            continue  # unknown field: ignored, as ignore_unknown_fields does
        name, conv, oneof = entry
        if oneof:
            oneof_keys += 1
        # String fields (conv None) are type-checked by the constructor (TypeError -> fallback);
        # None there means unset, as null does in json_format.
        out[name] = value if conv is None else conv(value)
    if len(out) != len(obj) and _has_duplicates(obj, plan):
        raise _Fallback  # one field under its json and proto names: json_format's call
    if oneof_keys > 1 and _oneof_clash(obj, plan):
        raise _Fallback  # json_format reports two members of one oneof as an error
    return out


def _has_duplicates(obj: dict[str, Any], plan: _Plan) -> bool:
    names = [plan[k][0] for k in obj if k in plan]
    return len(names) != len(set(names))


def _oneof_clash(obj: dict[str, Any], plan: _Plan) -> bool:
    groups = [plan[k][2] for k in obj if k in plan and plan[k][2]]
    return len(groups) != len(set(groups))


def _plan(desc: Descriptor | _UpbDescriptor) -> _Plan:
    # upb's descriptors are instances of descriptor.Descriptor at run time (metaclass check);
    # the stubs type them apart.
    if not isinstance(desc, Descriptor):
        raise TypeError(f"not a protobuf message descriptor: {desc!r}")
    plan: _Plan = {}
    for fd in desc.fields:
        oneof = fd.containing_oneof.name if fd.containing_oneof is not None else ""
        conv = _field_conv(fd)
        entry = (fd.name, None if conv is _string else conv, oneof)
        plan[fd.json_name] = entry
        plan[fd.name] = entry
    return plan


def _field_conv(fd: FieldDescriptor) -> _Conv:
    if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
        key_fd = fd.message_type.fields_by_name["key"]
        val_fd = fd.message_type.fields_by_name["value"]
        if key_fd.cpp_type != _FD.CPPTYPE_STRING or val_fd.cpp_type != _FD.CPPTYPE_STRING or val_fd.type == _FD.TYPE_BYTES:
            return _always_fallback
        return _string_map
    conv = _scalar_conv(fd)
    if fd.is_repeated:

        def repeated(value: Any) -> list[Any]:
            if type(value) is not list:
                raise _Fallback
            return [conv(v) for v in value]

        return repeated
    return conv


def _always_fallback(value: Any) -> Any:
    raise _Fallback


def _string_map(value: Any) -> dict[str, str]:
    if type(value) is not dict or any(type(v) is not str for v in value.values()):
        raise _Fallback
    return value


def _scalar_conv(fd: FieldDescriptor) -> _Conv:
    cpp = fd.cpp_type
    if cpp == _FD.CPPTYPE_MESSAGE:
        sub = fd.message_type
        assert sub is not None  # always set on message fields
        if sub.full_name == "google.protobuf.Timestamp":
            return _timestamp
        if sub.full_name.startswith("google.protobuf."):
            return _always_fallback
        return lambda v: _kwargs(v, sub)
    if cpp == _FD.CPPTYPE_ENUM:
        assert fd.enum_type is not None  # always set on enum fields
        by_name = {v.name: v.number for v in fd.enum_type.values}
        return lambda v: _enum(v, by_name)
    if cpp == _FD.CPPTYPE_STRING:
        return _bytes if fd.type == _FD.TYPE_BYTES else _string
    if cpp == _FD.CPPTYPE_BOOL:
        return _bool
    if cpp in (_FD.CPPTYPE_INT64, _FD.CPPTYPE_UINT64, _FD.CPPTYPE_INT32, _FD.CPPTYPE_UINT32):
        return _integer
    return _float32 if cpp == _FD.CPPTYPE_FLOAT else _floating


_FLOAT32_MAX = 3.4028234663852886e38


def _float32(value: Any) -> float:
    number = _floating(value)
    if abs(number) > _FLOAT32_MAX:
        raise _Fallback  # json_format refuses it as out of range
    return number


def _enum(value: Any, by_name: dict[str, int]) -> int:
    if type(value) is str:
        number = by_name.get(value)
        if number is None:
            raise _Fallback
        return number
    if type(value) is int:
        return value
    raise _Fallback


def _string(value: Any) -> str:
    if type(value) is not str:
        raise _Fallback
    return value


def _bytes(value: Any) -> bytes:
    if type(value) is not str:
        raise _Fallback
    return base64.b64decode(value.encode("utf-8"), validate=False)


def _bool(value: Any) -> bool:
    if type(value) is not bool:
        raise _Fallback
    return value


def _integer(value: Any) -> int:
    if type(value) is int:
        return value
    if type(value) is str and value.lstrip("-").isdigit() and value.isascii():
        return int(value)
    raise _Fallback  # floats like 1.0, exponents: json_format's rules


def _floating(value: Any) -> float:
    t = type(value)
    if t is float or t is int:
        if t is float and math.isinf(value):
            raise _Fallback  # out-of-range checks for float32 fields
        return float(value)
    raise _Fallback  # "NaN", "Infinity" and numeric strings


_last_prefix = ""
_last_seconds = 0


def _timestamp(value: Any) -> dict[str, int]:
    """RFC 3339 with a "Z" suffix, as the encoder writes it; offsets go to json_format."""
    global _last_prefix, _last_seconds
    if type(value) is not str or len(value) < 20 or value[-1] != "Z" or value[10] != "T":
        raise _Fallback
    prefix = value[:19]
    if prefix == _last_prefix:  # events come in bursts within one second
        seconds = _last_seconds
    else:
        if prefix[4] != "-" or prefix[7] != "-" or prefix[13] != ":" or prefix[16] != ":":
            raise _Fallback
        parts = (prefix[0:4], prefix[5:7], prefix[8:10], prefix[11:13], prefix[14:16], prefix[17:19])
        if not all(p.isdigit() and p.isascii() for p in parts):
            raise _Fallback
        y, mo, d, h, mi, s = (int(p) for p in parts)
        if not (y >= 1 and 1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1] and h < 24 and mi < 60 and s < 60):
            raise _Fallback
        seconds = calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0))
        _last_prefix, _last_seconds = prefix, seconds
    frac = value[19:-1]
    nanos = 0
    if frac:
        digits = frac[1:]
        if frac[0] != "." or not digits or len(digits) > 9 or not (digits.isdigit() and digits.isascii()):
            raise _Fallback
        nanos = int(digits.ljust(9, "0"))
    return {"seconds": seconds, "nanos": nanos}
