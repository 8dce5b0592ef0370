"""Reaching a person away from the terminal: notices they can act on, one-time signed links,
the phone pages those links open, who may decide what.

* :mod:`goldfive.phone.routes`: ``--notify-cmd`` / ``--escalate-cmd`` with filters; each notice
  carries the link of its item.
* :mod:`goldfive.phone.links`: the links, signed with a key the hub keeps; what was used.
* :mod:`goldfive.phone.items`: the kinds of item a page decides (approvals and questions, budget pauses;
  one class per kind).
* :mod:`goldfive.phone.pages`: the HTML; :mod:`goldfive.phone.server`: ``serve --http``
  (aiohttp, the ``[http]`` extra; nothing else here needs it).
"""

from goldfive.phone.items import KINDS, Action, ApprovalKind, BudgetKind, Field, Item, ItemKind
from goldfive.phone.links import Link, LinkBook, LinkProblem
from goldfive.phone.routes import NoticeDispatch, NoticeFilter, NoticeRoute

__all__ = [
    "KINDS",
    "Action",
    "ApprovalKind",
    "BudgetKind",
    "Field",
    "Item",
    "ItemKind",
    "Link",
    "LinkBook",
    "LinkProblem",
    "NoticeDispatch",
    "NoticeFilter",
    "NoticeRoute",
]
