"""A process editing the machine's saved approval rules (tests/approvals/test_rules_file_lock.py and the
chaos suite), as a hub and local runs sharing a data directory do.

``python -m tests.rules_worker GO RULES SEED REMOVE ADDS``: waits at the start gate ``GO``,
then removes the rules whose ids are in ``REMOVE`` (comma-separated) and adds ``ADDS`` rules of
its own, interleaved in an order drawn from ``SEED``, each through an ApprovalDesk
(``add_rule`` / ``remove_rule`` on scope "machine"). Prints ``added ID TOOL`` and ``removed
ID`` for each, so the test knows what the file must hold after.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from tests.start_gate import wait_at_gate


def main(go: str, rules: str, seed: str, remove: str, adds: str) -> int:
    from goldfive.approvals.desk import ApprovalDesk
    from goldfive.approvals.rules import Matcher, MatchKind, Rule

    desk = ApprovalDesk(machine_rules_path=Path(rules), use_machine_rules=True)
    ops: list[tuple[str, str]] = [("rm", r) for r in remove.split(",") if r] + [("add", str(i)) for i in range(int(adds))]
    random.Random(int(seed)).shuffle(ops)
    wait_at_gate(go)
    for op, arg in ops:
        if op == "rm":
            removed = desk.remove_rule(arg)
            print(f"removed {arg}" if removed is not None else f"missing {arg}", flush=True)
        else:
            tool = f"tool-{os.getpid()}-{arg}"
            made = desk.add_rule(Rule(tool, {"path": Matcher(MatchKind.PATH_UNDER, "/srv")}, scope="machine"))
            print(f"added {made.id} {tool}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
