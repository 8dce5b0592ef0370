"""The hub's limits, defined once for every boundary that checks them."""

#: Seconds a runner may be gone before its run shows INTERRUPTED (``serve --interrupt-after``).
DEFAULT_INTERRUPT_AFTER = 60.0
#: The longest run id a runner may register.
MAX_RUN_ID = 128
