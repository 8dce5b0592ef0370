"""Regenerate goldfive/pb from proto/ (the only way generated code changes).

    python scripts/gen_proto.py            # write goldfive/pb
    python scripts/gen_proto.py --out DIR  # write elsewhere (the staleness test uses this)

protoc writes imports as ``from goldfive.v1 import x_pb2``; they are rewritten to
``goldfive.pb.goldfive.v1`` so the generated package lives inside ours.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
DEFAULT_OUT = ROOT / "goldfive" / "pb"
_IMPORT = re.compile(r"^from goldfive\.v1 import ", re.MULTILINE)


def generate(out: Path) -> list[Path]:
    from grpc_tools import protoc
    import grpc_tools

    protos = sorted(PROTO_ROOT.glob("goldfive/v1/*.proto"))
    include = Path(grpc_tools.__file__).parent / "_proto"
    out.mkdir(parents=True, exist_ok=True)
    args = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out}",
        f"--pyi_out={out}",
        f"--grpc_python_out={out}",
        *[str(p) for p in protos],
    ]
    if protoc.main(args) != 0:
        raise SystemExit("protoc failed")
    written: list[Path] = []
    for pkg in (out / "goldfive", out / "goldfive" / "v1"):
        init = pkg / "__init__.py"
        init.write_text("")
        written.append(init)
    for path in sorted((out / "goldfive" / "v1").iterdir()):
        if path.suffix in {".py", ".pyi"} and path.name != "__init__.py":
            path.write_text(_IMPORT.sub("from goldfive.pb.goldfive.v1 import ", path.read_text()))
            written.append(path)
    (out / "__init__.py").write_text('"""Generated protobuf code. Never edit; run scripts/gen_proto.py."""\n')
    written.append(out / "__init__.py")
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ns = parser.parse_args()
    for path in generate(ns.out):
        print(path.relative_to(ns.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
