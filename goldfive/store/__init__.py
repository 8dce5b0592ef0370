"""Reading recorded runs back from SQLite: on demand, by sequence range, surviving damage.

A damaged row (a payload that is not the Event its key says) is skipped and counted; damaged
pages end a run's readable history with a reason; ``check_database`` runs SQLite's own check.
"""

from goldfive.store.history import SUMMARY_KINDS, RunHistory, RunRecord, check_database, recorded_runs

__all__ = ["RunHistory", "RunRecord", "SUMMARY_KINDS", "check_database", "recorded_runs"]
