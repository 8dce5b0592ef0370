"""``goldfive ctl ADDR ...``: inspect and control runs served by ``goldfive serve``, for scripts.

Exit codes: 0 when the ack is SUCCESS (or a query succeeded), 1 when the ack is FAILURE or
UNSUPPORTED, 2 for usage errors and for calls the server refused or could not take
(unreachable, unauthenticated, unknown run, invalid control): one line on stderr, no traceback.
RUN is always given explicitly: the full id or a unique prefix of at least 4 characters
(``goldfive ctl ADDR runs`` lists them).

One module per part: the group and its options (``group``), the queries (``runs``), the
controls (``controls``), approvals and rules (``approvals``), the hub's ``start`` and
``waiting`` (``hub``), a person's marks on a run (``marks``: ack-failure, archive). Importing the package registers every subcommand on ``ctl``.
"""

from goldfive.cli.ctl import approvals, controls, hub, marks, runs  # noqa: F401  (each registers its subcommands)
from goldfive.cli.ctl.group import EXIT_ERROR, EXIT_FAILURE, addr_problem, client_cert_problem, ctl

__all__ = ["EXIT_ERROR", "EXIT_FAILURE", "addr_problem", "client_cert_problem", "ctl"]
