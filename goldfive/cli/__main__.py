"""``python -m goldfive.cli``: the command line without the TUI front-ends."""

from goldfive.cli import main

if __name__ == "__main__":  # pragma: no cover
    main()
