"""The ``goldfive`` command line."""

from __future__ import annotations

import click

from goldfive import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="goldfive")
def main() -> None:
    """Steer an LLM agent while it runs."""


from goldfive import cli_local  # noqa: E402  (registers run, replay)

cli_local.register(main)


from goldfive import cli_demo  # noqa: E402  (registers demo)

cli_demo.register(main)


from goldfive import cli_remote  # noqa: E402  (registers serve, attach, ctl)

cli_remote.register(main)


if __name__ == "__main__":  # pragma: no cover
    main()
