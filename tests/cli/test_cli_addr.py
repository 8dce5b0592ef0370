"""``ctl`` and ``attach`` with an ADDR that has no port: one line naming the expected shape."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from goldfive.cli import main


@pytest.mark.parametrize(
    ("args", "prefix"),
    [(["ctl", "localhost", "runs"], "goldfive ctl"), (["attach", "localhost"], "goldfive attach"), (["ctl", ":7531", "runs"], "goldfive ctl")],
)
def test_an_addr_without_host_or_port_is_one_line_and_exit_2(args: list[str], prefix: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"{prefix}: error: ADDR"), lines
    assert "must be HOST:PORT" in lines[0]


def test_subcommand_help_works_with_the_literal_addr_placeholder() -> None:
    # click's own hint says "Try 'goldfive ctl ADDR status --help'": that must show the help.
    result = CliRunner().invoke(main, ["ctl", "ADDR", "status", "--help"])
    assert result.exit_code == 0, result.output
    assert "ctl ADDR status [OPTIONS] RUN" in result.output
