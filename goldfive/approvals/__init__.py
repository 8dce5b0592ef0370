"""Approvals a person can trust and delegate: rules for "always", timeout policies, the
ledger of who decided, and edited arguments checked before they run.

The run side lives in ``goldfive.run.approvals`` (``request_approval``); every adapter asks
through it, so all of this applies to every framework without changes to the adapter.
"""

from goldfive.approvals.arguments import arguments_problem
from goldfive.approvals.ledger import LedgerEntry, Outcome, format_entry, ledger_of
from goldfive.approvals.policy import ApprovalPolicy, ApprovalReminders, OnTimeout
from goldfive.approvals.reviewer import Reviewer
from goldfive.approvals.rules import Matcher, MatchKind, Rule, RuleBook, is_under
from goldfive.approvals.store import RulesFileError, default_rules_path, load_rules, save_rules, update_rules

__all__ = [
    "ApprovalPolicy",
    "ApprovalReminders",
    "LedgerEntry",
    "MatchKind",
    "Matcher",
    "OnTimeout",
    "Outcome",
    "Reviewer",
    "Rule",
    "RuleBook",
    "RulesFileError",
    "arguments_problem",
    "default_rules_path",
    "format_entry",
    "is_under",
    "ledger_of",
    "load_rules",
    "save_rules",
    "update_rules",
]
