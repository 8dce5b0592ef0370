"""The command lists in ``goldfive --help`` and ``goldfive ctl --help`` show whole sentences."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from goldfive_tui.cli import main


@pytest.mark.parametrize("args", [["--help"], ["ctl", "--help"]])
def test_command_list_summaries_are_not_cut_off(args: list[str]) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    commands = result.output.split("Commands:", 1)[1].splitlines()
    summaries = [line.strip() for line in commands if line.strip()]
    assert len(summaries) >= 6
    cut = [line for line in summaries if line.endswith("...")]
    assert cut == [], cut
