"""One run's approval state beside the pending waiters: its rules, its policy, and the calls
rejected in each open turn (so a retry of a rejected call is asked again, and says so)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from goldfive.approvals.policy import WAIT_FOREVER, ApprovalPolicy
from goldfive.approvals.rules import Rule, RuleBook
from goldfive.approvals.store import RulesFileError, load_rules, update_rules
from goldfive.clean import json_encoder

log = logging.getLogger("goldfive.approvals")


#: ``json.dumps(..., sort_keys=True, default=str)``, its encoder made once.
_key_json = json_encoder(sort_keys=True, default=str)


def call_key(task_id: str, tool_name: str, args: Mapping[str, Any] | None) -> str:
    return _key_json([task_id, tool_name, args or {}])


class ApprovalDesk:
    def __init__(
        self,
        *,
        policy: ApprovalPolicy | None = None,
        run_rules: RuleBook | None = None,
        machine_rules_path: Path | None = None,
        use_machine_rules: bool = False,
    ) -> None:
        self.policy = policy or WAIT_FOREVER
        self.run_rules = run_rules if run_rules is not None else RuleBook("run")
        self.machine_rules_path = machine_rules_path
        self.use_machine_rules = use_machine_rules
        self._machine: RuleBook | None = None
        self._machine_stamp: tuple[int, int, int] | None = None
        self._warned = ""
        #: Per task (one open turn each): call key -> id of the rejected approval.
        self._rejected: dict[str, dict[str, str]] = {}

    # -- rules ---------------------------------------------------------------------------
    def machine_rules(self) -> RuleBook | None:
        """The saved machine rules, re-read when the file changed (a removal made elsewhere
        holds from the next call). A damaged file: no machine rules, said once in the log."""
        if not self.use_machine_rules:
            return None
        from goldfive.approvals.store import default_rules_path

        path = self.machine_rules_path or default_rules_path()
        try:
            st = path.stat()
            # Each save is a new file (atomic replace): its inode tells two saves apart even
            # within one mtime tick and at the same size.
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = (0, 0, 0)
        if stamp != self._machine_stamp or self._machine is None:
            try:
                self._machine = load_rules(path)
            except RulesFileError as exc:
                if self._warned != str(exc):
                    log.warning("%s", exc)
                    self._warned = str(exc)
                self._machine = RuleBook("machine")
            self._machine_stamp = stamp
        return self._machine

    def never_auto(self, tool: str) -> bool:
        """True when ``tool`` is marked never automatic (run or machine rules): no rule and no
        reviewer decides its calls, only a person."""
        machine = self.machine_rules()
        return tool in self.run_rules.never_auto or (machine is not None and tool in machine.never_auto)

    def match(self, tool: str, args: Mapping[str, Any]) -> Rule | None:
        machine = self.machine_rules()  # read once for both questions (it may stat a file)
        if tool in self.run_rules.never_auto or (machine is not None and tool in machine.never_auto):
            return None
        rule = self.run_rules.match(tool, args)
        if rule is None and machine is not None:
            rule = machine.match(tool, args)
        return rule

    def rules(self) -> list[Rule]:
        machine = self.machine_rules()
        return self.run_rules.rules() + (machine.rules() if machine is not None else [])

    def add_rule(self, rule: Rule) -> Rule:
        """Add to the rule's scope ("run", or "machine": saved at once)."""
        if rule.scope == "machine":
            from goldfive.approvals.store import default_rules_path

            path = self.machine_rules_path or default_rules_path()
            fresh = Rule(rule.tool, dict(rule.matchers), "", rule.author, rule.made_at_ms, "machine")
            # Under the file's lock, from the file as it is now: another process may have edited it.
            added = update_rules(lambda book: book.add(fresh), path)
            self._machine_stamp = None
            return added
        if rule.scope != "run":
            raise ValueError(f"rule scope must be 'run' or 'machine', got {rule.scope!r}")
        return self.run_rules.add(rule)

    def remove_rule(self, rule_id: str) -> Rule | None:
        removed = self.run_rules.remove(rule_id)
        if removed is not None or not rule_id.startswith("M"):
            return removed
        from goldfive.approvals.store import default_rules_path

        path = self.machine_rules_path or default_rules_path()
        removed = update_rules(lambda book: book.remove(rule_id), path)
        if removed is not None:
            self._machine_stamp = None
        return removed

    # -- denials inside a turn -------------------------------------------------------------
    def rejected_before(self, task_id: str, tool_name: str, args: Mapping[str, Any] | None) -> str:
        rejected = self._rejected.get(task_id)
        if not rejected:  # nothing rejected in this turn (the usual case): no key to make
            return ""
        return rejected.get(call_key(task_id, tool_name, args), "")

    def note_rejected(self, task_id: str, tool_name: str, args: Mapping[str, Any] | None, target_id: str) -> None:
        self._rejected.setdefault(task_id, {})[call_key(task_id, tool_name, args)] = target_id

    def end_turn(self, task_id: str) -> None:
        self._rejected.pop(task_id, None)
