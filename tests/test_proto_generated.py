"""The committed generated code in goldfive/pb is what scripts/gen_proto.py produces now."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "goldfive" / "pb"


def _gen_proto() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_gen_proto_under_test", ROOT / "scripts" / "gen_proto.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_generated_code_is_up_to_date_with_the_protos(tmp_path: Path) -> None:
    written = _gen_proto().generate(out=tmp_path)
    assert written, "gen_proto.generate() wrote nothing"
    fresh, committed = _tree(tmp_path), _tree(COMMITTED)
    hint = "goldfive/pb is stale: run `python scripts/gen_proto.py` and commit the result"
    missing = sorted(set(fresh) - set(committed))
    assert not missing, f"{hint}; not committed: {missing}"
    stale = [name for name in sorted(fresh) if fresh[name] != committed[name]]
    assert not stale, f"{hint}; differs from a fresh generation: {stale}"
    leftover = sorted(set(committed) - set(fresh))
    assert not leftover, f"{hint}; files no proto generates any more: {leftover}"


def test_generated_modules_import_under_the_goldfive_pb_path() -> None:
    events_pb2 = importlib.import_module("goldfive.pb.goldfive.v1.events_pb2")
    assert events_pb2.Event.DESCRIPTOR.full_name == "goldfive.v1.Event"
    # The rewritten imports point inside our package, not at a top-level `goldfive.v1`.
    assert "goldfive.v1" not in sys.modules
    importlib.import_module("goldfive.pb.goldfive.v1.service_pb2_grpc")
